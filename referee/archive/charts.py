"""Inline SVG line charts for the archive pages, written here (no chart library).

A chart is a pure function of its data: the same series give the same bytes, so an
unchanged page stays byte-identical and is not rewritten. Every chart

* is an ``<svg role="img">`` whose ``<title>`` names it and whose ``<desc>`` sums the data
  up in words (first, last, lowest and highest value per series), for screen readers and
  for a reader whose browser draws no SVG;
* scales with the page (a ``viewBox``, ``width="100%"``) and needs no JavaScript;
* tells its series apart by colour AND by marker shape AND by dash pattern, so it reads in
  black and white and for colour-blind readers (the colours have at least 3:1 contrast on
  white, WCAG's rule for graphics);
* escapes every label (player names come from organizers' files).

The result is :class:`markupsafe.Markup`: every piece of text in it was escaped here, so a
template prints it as it is.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

__all__ = ["Series", "line_chart", "nice_ticks"]

Series = Mapping[str, Sequence[tuple[str, float]]]  # name -> [(x label, value)], in x order

# Okabe-Ito's colour-blind-safe hues, darkened where needed for 3:1 contrast on white
COLOURS = ("#0072B2", "#D55E00", "#007A5A", "#A3478F", "#333333", "#8C6D00", "#5A5AA8", "#B22222")
DASHES = ("", "7 4", "2 3", "9 3 2 3", "4 2", "12 4", "1 3", "6 2 1 2")
MARKERS = ("circle", "square", "triangle", "diamond", "triangle-down", "cross", "plus", "bar")

# Phone first: the picture is drawn 480 units wide with 15-unit text, so that on a phone
# (390 px, the chart about 358 px wide) its text is still 11 px; a desktop page caps the
# figure's width (style.css), so the text is not huge there either.
WIDTH = 480
FONT = 15  # the text's size in the picture's units: >= 11 px once scaled to 358 px wide
MIN_PX = 11  # the smallest text on a 390 px wide phone
PLOT_HEIGHT = 220
LEFT, RIGHT, TOP = 72, 20, 16
LEGEND_ROW = 26
MAX_X_LABELS = 8  # x labels shown at most; the others are left out evenly
MAX_MARKERS = 40  # markers drawn per series at most (every k-th point beyond that)
LEGEND_NAME = 28  # characters of a series name the legend shows


@dataclass(frozen=True)
class Style:
    colour: str
    dash: str
    marker: str


def style(i: int) -> Style:
    """The i-th series' look: no two of the first 64 share colour and marker."""
    n = len(COLOURS)
    return Style(COLOURS[i % n], DASHES[(i + i // n) % n], MARKERS[(i + i // n) % n])


def line_chart(
    series: Series,
    *,
    title: str,
    x_label: str,
    y_label: str,
    chart_id: str | None = None,
) -> Markup:
    """An SVG line chart of ``series`` (name -> [(x label, value)]). The x axis is the x
    labels in the order they first appear; each series is drawn where it has values."""
    named = [(str(name), [(str(x), float(v)) for x, v in points]) for name, points in series.items()]
    named = [(name, points) for name, points in named if points]
    ident = chart_id or "chart-" + hashlib.sha256(repr((title, named)).encode()).hexdigest()[:10]
    xs = _x_axis(named)
    legend_rows = _legend_rows([name for name, _ in named])
    height = TOP + PLOT_HEIGHT + 62 + LEGEND_ROW * len(legend_rows)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {WIDTH} {height}" '
        f'width="100%" preserveAspectRatio="xMidYMid meet" aria-labelledby="{ident}-title {ident}-desc">',
        f'<title id="{ident}-title">{escape(title)}</title>',
        f'<desc id="{ident}-desc">{escape(describe(named, xs, x_label, y_label))}</desc>',
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>',
    ]
    if not named:
        out.append(_text(WIDTH / 2, TOP + PLOT_HEIGHT / 2, "No data yet.", anchor="middle"))
        out.append("</svg>")
        return Markup("".join(out))
    values = [v for _, points in named for _, v in points]
    ticks = nice_ticks(min(values), max(values))
    frame = _Frame(len(xs), ticks[0], ticks[-1])
    out += _axes(frame, xs, ticks, x_label, y_label)
    index = {x: i for i, x in enumerate(xs)}
    for i, (_, points) in enumerate(named):
        out += _line(frame, style(i), [(index[x], v) for x, v in points])
    out += _legend(legend_rows, TOP + PLOT_HEIGHT + 62)
    out.append("</svg>")
    return Markup("".join(out))


def describe(named: list[tuple[str, list[tuple[str, float]]]], xs: list[str], x_label: str, y_label: str) -> str:
    """The data in words: what the axes are and, per series, where it starts, ends, and its range."""
    if not named:
        return "No data yet."
    span = xs[0] if len(xs) == 1 else f"{xs[0]} to {xs[-1]}"
    parts = [f"{y_label} by {x_label.lower()}, {span} ({len(xs)} point{'s' if len(xs) != 1 else ''})."]
    for name, points in named:
        values = [v for _, v in points]
        first, last = points[0], points[-1]
        if len(points) == 1:
            parts.append(f"{name}: {number(first[1])} at {first[0]}.")
            continue
        parts.append(
            f"{name}: {number(first[1])} at {first[0]}, {number(last[1])} at {last[0]}; "
            f"lowest {number(min(values))}, highest {number(max(values))}."
        )
    return " ".join(parts)


def number(value: float) -> str:
    """``12``, ``-3``, ``0.5``: whole numbers without a fraction, others to two places."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` evenly spaced round values (steps of 1, 2 or 5 x 10^k) that cover
    ``low``..``high``; a flat range is widened by one unit each way."""
    if high < low:
        low, high = high, low
    if math.isclose(low, high):
        low, high = low - 1, high + 1
    raw = (high - low) / max(count - 1, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.floor(low / step) * step
    last = math.ceil(high / step) * step
    n = round((last - first) / step)
    return [round(first + k * step, 10) for k in range(n + 1)]


# ---------------------------------------------------------------------------- drawing


@dataclass(frozen=True)
class _Frame:
    """Where the plot area is, and how data maps into it."""

    n_x: int
    y_low: float
    y_high: float

    def x(self, i: float) -> float:
        width = WIDTH - LEFT - RIGHT
        if self.n_x == 1:
            return LEFT + width / 2
        return LEFT + width * i / (self.n_x - 1)

    def y(self, value: float) -> float:
        return TOP + PLOT_HEIGHT * (self.y_high - value) / (self.y_high - self.y_low)


def _x_axis(named: list[tuple[str, list[tuple[str, float]]]]) -> list[str]:
    seen: dict[str, None] = {}
    for _, points in named:
        for x, _ in points:
            seen.setdefault(x, None)
    return list(seen)


def _every(n: int, most: int) -> int:
    """The stride that keeps at most ``most`` of ``n`` items."""
    return max(1, math.ceil(n / most))


def _f(value: float) -> str:
    """A coordinate, to a tenth of a unit (of a WIDTH-wide picture)."""
    return f"{value:.1f}"


def _text(x: float, y: float, text: str, *, anchor: str = "start", extra: str = "") -> str:
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" font-size="{FONT}" fill="#1a1a1a"{extra}>'
        f"{escape(text)}</text>"
    )


def _axes(frame: _Frame, xs: list[str], ticks: list[float], x_label: str, y_label: str) -> list[str]:
    bottom, right = TOP + PLOT_HEIGHT, WIDTH - RIGHT
    out = []
    for tick in ticks:
        y = frame.y(tick)
        colour = "#6b6b6b" if tick == 0 and ticks[0] < 0 else "#d0d4d9"  # the zero line stands out
        out.append(f'<line x1="{LEFT}" y1="{_f(y)}" x2="{right}" y2="{_f(y)}" stroke="{colour}" stroke-width="1"/>')
        out.append(_text(LEFT - 6, y + 5, number(tick), anchor="end"))
    out.append(f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="#1a1a1a" stroke-width="1"/>')
    out.append(f'<line x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#1a1a1a" stroke-width="1"/>')
    for i in _labelled(len(xs)):
        x = frame.x(i)
        out.append(f'<line x1="{_f(x)}" y1="{bottom}" x2="{_f(x)}" y2="{bottom + 4}" stroke="#1a1a1a"/>')
        last = i == len(xs) - 1 and len(xs) > 1  # the last label ends at its tick, inside the chart
        out.append(_text(x + (4 if last else 0), bottom + 21, xs[i], anchor="end" if last else "middle"))
    out.append(_text(LEFT + (right - LEFT) / 2, bottom + 44, x_label, anchor="middle", extra=' font-weight="bold"'))
    mid = TOP + PLOT_HEIGHT / 2
    out.append(
        _text(16, mid, y_label, anchor="middle", extra=f' font-weight="bold" transform="rotate(-90 16 {_f(mid)})"')
    )
    return out


def _labelled(n: int) -> list[int]:
    """The x positions that get a label: evenly spaced, at most MAX_X_LABELS, the first and
    the last always (the one before the last left out when it would crowd it)."""
    stride = _every(n, MAX_X_LABELS)
    shown = list(range(0, n, stride))
    if shown[-1] != n - 1:
        if n - 1 - shown[-1] < stride / 2 and len(shown) > 1:
            shown.pop()
        shown.append(n - 1)
    return shown


def _line(frame: _Frame, look: Style, points: list[tuple[int, float]]) -> list[str]:
    coords = [(frame.x(i), frame.y(v)) for i, v in points]
    out = []
    if len(coords) > 1:
        path = " ".join(f"{_f(x)},{_f(y)}" for x, y in coords)
        dash = f' stroke-dasharray="{look.dash}"' if look.dash else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{look.colour}" stroke-width="2"{dash}/>')
    stride = _every(len(coords), MAX_MARKERS)
    for k in range(0, len(coords), stride):
        out.append(_marker(look, *coords[k]))
    if (len(coords) - 1) % stride:  # the last point always shows where the series ends
        out.append(_marker(look, *coords[-1]))
    return out


def _marker(look: Style, x: float, y: float, r: float = 4.0) -> str:
    """A marker of ``look``'s shape centred on (x, y)."""
    c, paint = look.colour, f'fill="{look.colour}" stroke="{look.colour}"'
    shapes = {
        "circle": f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}" {paint}/>',
        "square": f'<rect x="{_f(x - r)}" y="{_f(y - r)}" width="{_f(2 * r)}" height="{_f(2 * r)}" {paint}/>',
        "triangle": _polygon(((x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)), paint),
        "triangle-down": _polygon(((x, y + r + 1), (x + r + 1, y - r), (x - r - 1, y - r)), paint),
        "diamond": _polygon(((x, y - r - 1), (x + r + 1, y), (x, y + r + 1), (x - r - 1, y)), paint),
        "cross": (
            f'<path d="M{_f(x - r)},{_f(y - r)}L{_f(x + r)},{_f(y + r)}'
            f'M{_f(x - r)},{_f(y + r)}L{_f(x + r)},{_f(y - r)}" stroke="{c}" stroke-width="2.5" fill="none"/>'
        ),
        "plus": (
            f'<path d="M{_f(x - r - 1)},{_f(y)}H{_f(x + r + 1)}M{_f(x)},{_f(y - r - 1)}V{_f(y + r + 1)}"'
            f' stroke="{c}" stroke-width="2.5" fill="none"/>'
        ),
        "bar": f'<rect x="{_f(x - 1.5)}" y="{_f(y - r - 1)}" width="3" height="{_f(2 * r + 2)}" {paint}/>',
    }
    return shapes[look.marker]


def _polygon(corners: tuple[tuple[float, float], ...], paint: str) -> str:
    return f'<polygon points="{" ".join(f"{_f(x)},{_f(y)}" for x, y in corners)}" {paint}/>'


def _legend_rows(names: list[str]) -> list[list[tuple[int, str]]]:
    """The legend's entries, (series index, shown name), laid out in rows that fit the width."""
    rows: list[list[tuple[int, str]]] = []
    used = WIDTH  # start a new row at once
    for i, name in enumerate(names):
        shown = name if len(name) <= LEGEND_NAME else name[: LEGEND_NAME - 1] + "\u2026"
        width = _entry_width(shown)
        if used + width > WIDTH - RIGHT:
            rows.append([])
            used = LEFT
        rows[-1].append((i, shown))
        used += width
    return rows


def _entry_width(shown: str) -> float:
    return 44 + 0.6 * FONT * len(shown) + 16


def _legend(rows: list[list[tuple[int, str]]], top: float) -> list[str]:
    out = []
    for r, row in enumerate(rows):
        y = top + r * LEGEND_ROW + 8
        x = float(LEFT)
        for i, shown in row:
            look = style(i)
            dash = f' stroke-dasharray="{look.dash}"' if look.dash else ""
            out.append(
                f'<line x1="{_f(x)}" y1="{_f(y)}" x2="{_f(x + 36)}" y2="{_f(y)}" stroke="{look.colour}" '
                f'stroke-width="2"{dash}/>'
            )
            out.append(_marker(look, x + 18, y))
            out.append(_text(x + 44, y + 5, shown))
            x += _entry_width(shown)
    return out
