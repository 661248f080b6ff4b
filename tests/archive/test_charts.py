"""The archive's inline SVG line charts: pure, accessible, escaped, and drawn for any data."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from markupsafe import Markup

from referee.archive.charts import COLOURS, LEFT, MARKERS, MIN_PX, RIGHT, WIDTH, line_chart, nice_ticks, style

SVG = "{http://www.w3.org/2000/svg}"


def chart(series, **kw) -> ET.Element:
    svg = line_chart(series, title=kw.pop("title", "Points"), x_label="Round", y_label="Points", **kw)
    assert isinstance(svg, Markup)
    return ET.fromstring(str(svg))  # well-formed XML, or this raises


def texts(root: ET.Element) -> list[str]:
    return [t.text for t in root.iter(f"{SVG}text")]


def test_a_chart_names_itself_and_sums_its_data_up_in_words():
    root = chart({"Alice": [("0", 0), ("1", 25), ("2", 40)], "Bob": [("0", 0), ("1", 30), ("2", 10)]})
    assert root.get("role") == "img"
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title.text == "Points"
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert desc.text == (
        "Points by round, 0 to 2 (3 points). Alice: 0 at 0, 40 at 2; lowest 0, highest 40. "
        "Bob: 0 at 0, 10 at 2; lowest 0, highest 30."
    )
    # it scales with the page, and has axis labels and a legend
    assert root.get("width") == "100%" and root.get("viewBox").startswith(f"0 0 {WIDTH} ")
    assert {"Round", "Points", "Alice", "Bob"} <= set(texts(root))


def test_text_stays_readable_on_a_phone():
    """Scaled to a 390 px phone (the chart about 358 px wide inside the page's margins), no
    text of the chart is smaller than 11 px."""
    root = chart({"Alice": [(str(i), i) for i in range(40)], "Bob": [(str(i), -i) for i in range(40)]})
    width = float(root.get("viewBox").split()[2])
    sizes = [float(t.get("font-size")) for t in root.iter(f"{SVG}text")]
    assert sizes and min(sizes) * 358 / width >= MIN_PX


def test_series_differ_in_colour_marker_and_dash_not_colour_alone():
    looks = [style(i) for i in range(64)]
    assert len({(s.colour, s.marker) for s in looks}) == 64
    assert all(style(i).marker != style(i + 1).marker for i in range(len(MARKERS) - 1))
    assert all(style(i).dash != style(i + 1).dash for i in range(len(MARKERS) - 1))
    root = chart({"A": [("1", 1), ("2", 2)], "B": [("1", 2), ("2", 1)]})
    lines = root.findall(f"{SVG}polyline")
    assert [line.get("stroke") for line in lines] == list(COLOURS[:2])
    assert lines[0].get("stroke-dasharray") is None and lines[1].get("stroke-dasharray")
    # A's markers are circles, B's squares (the legend repeats each once)
    assert len(root.findall(f"{SVG}circle")) == 3 and len(root.findall(f"{SVG}rect")) == 1 + 3


def test_labels_are_escaped():
    evil = "<script>alert(1)</script> & \"'"
    svg = str(line_chart({evil: [(evil, 1), ("2", 2)]}, title=evil, x_label=evil, y_label="y"))
    assert "<script>" not in svg
    root = ET.fromstring(svg)
    assert root.find(f"{SVG}title").text == evil
    assert evil in texts(root)


def test_no_data_is_said_so():
    for series in ({}, {"Alice": []}):
        root = chart(series)
        assert root.find(f"{SVG}desc").text == "No data yet."
        assert "No data yet." in texts(root)
        assert root.find(f"{SVG}polyline") is None


def test_one_point_is_a_marker_in_the_middle():
    root = chart({"Alice": [("1", 7)]})
    assert root.find(f"{SVG}polyline") is None
    [circle, _legend] = root.findall(f"{SVG}circle")
    assert float(circle.get("cx")) == pytest.approx(LEFT + (WIDTH - LEFT - RIGHT) / 2)
    assert "Alice: 7 at 1." in root.find(f"{SVG}desc").text


def test_equal_values_get_a_range_and_negative_values_a_zero_line():
    flat = chart({"A": [("1", 5), ("2", 5), ("3", 5)]})
    assert {"4", "5", "6"} <= set(texts(flat))
    below = chart({"A": [("1", -30), ("2", 12)]})
    ticks = set(texts(below))
    assert {"-40", "-20", "0", "20"} <= ticks
    assert any(line.get("stroke") == "#6b6b6b" for line in below.findall(f"{SVG}line"))  # the zero line


def test_many_points_keep_the_axis_and_markers_readable():
    points = [(str(i), i * (-1) ** i) for i in range(1000)]
    root = chart({"A": points, "B": points[::-1]})
    labels = [t for t in texts(root) if re.fullmatch(r"\d+", t or "") and int(t) < 1000]
    x_labels = [t for t in labels if t not in {"0"}]
    assert 5 <= len(x_labels) <= 12 and "999" in labels
    assert len(root.findall(f"{SVG}circle")) <= 45  # markers thinned out, the line stays whole
    assert len(root.find(f"{SVG}polyline").get("points").split()) == 1000


def test_series_may_cover_different_x_values():
    root = chart({"A": [("1", 1), ("2", 2)], "B": [("2", 5), ("3", 6)]})
    assert "Points by round, 1 to 3 (3 points)." in root.find(f"{SVG}desc").text


def test_the_same_data_gives_the_same_bytes():
    series = {"A": [("1", 1.5), ("2", 2)]}
    assert line_chart(series, title="t", x_label="x", y_label="y") == line_chart(
        dict(series), title="t", x_label="x", y_label="y"
    )


@pytest.mark.parametrize(
    "low, high, ticks",
    [(0, 463, [0, 200, 400, 600]), (-30, 12, [-40, -20, 0, 20]), (5, 5, [4, 4.5, 5, 5.5, 6]), (0, 1, [0, 0.5, 1])],
)
def test_nice_ticks(low, high, ticks):
    assert nice_ticks(low, high) == ticks
