"""Rendering the archive's pages, feeds and chain files from the page model
(:mod:`referee.archive.model`): where each file lives in the site, the links between them,
and the Jinja environment of ``templates/archive/``.

Every address in the site is relative (``../../index.html``), so the folder reads the same
from ``file://``, from any web root and from any sub-folder of one. A key (season, player,
match) becomes a path segment through :func:`segment`, which lets through only
``[A-Za-z0-9._-]`` and escapes the rest, so no key can name a file outside its folder.

Rendering is a pure function of the model: the same inputs give the same bytes (nothing
here reads the clock), which is what lets an incremental build skip or keep a page.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import cache
from typing import Any

import orjson
from jinja2 import Environment
from markupsafe import Markup

from referee.archive.charts import line_chart, number
from referee.bidi import isolate_names
from referee.archive.model import (
    FSI,
    PDI,
    MatchPage,
    PlayerPage,
    SchedulePage,
    SeasonHeader,
    SeasonPage,
)
from referee.archive.rounds import Round
from referee.games import GAMES, accounts
from referee.render import environment
from referee.timefmt import iso, local_time

__all__ = [
    "FSI",
    "PDI",
    "Links",
    "Paths",
    "render_chain",
    "render_index",
    "render_match",
    "render_match_pages",
    "match_parts",
    "round_page",
    "render_player",
    "render_schedule",
    "render_season",
    "render_style",
    "json_file",
    "segment",
    "site_environment",
]

_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def segment(key: str) -> str:
    """``key`` as one path segment: letters, digits, ``.``, ``_`` and ``-`` as they are,
    every other character (and a leading ``.``, which would hide the file or climb a
    folder) as ``~`` and its UTF-8 bytes in hex. Two keys never give the same segment."""
    out = []
    for i, ch in enumerate(key):
        if ch in _SAFE and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.extend(f"~{byte:02X}" for byte in ch.encode("utf-8", "surrogatepass"))
    return "".join(out) or "~"


# ---------------------------------------------------------------------------- where files live

# A long match is split (phone first, no page taller than about 8,000 px at 1280 px): its
# page holds the summary, the result, the charts and an index; its rounds, ledger, event
# log and sealed moves are on pages of their own, a few rounds (or rows) a page. A round's
# page depends on its game and number only, so a feed links to it without rendering the
# match, and a round never moves to another page as the match goes on.
PARTS = ("rounds", "ledger", "events", "seals")
ROUNDS_PER_PAGE = 5  # a game sets its own (archive_rounds_per_page) where its rounds are long
LEDGER_LINES_PER_PAGE = 100
EVENTS_PER_PAGE = 60
SEALS_PER_PAGE = 25


def rounds_per_page(game: str) -> int:
    return int(getattr(GAMES.get(game), "archive_rounds_per_page", ROUNDS_PER_PAGE))


def round_page(game: str, number: int) -> int:
    """The page (1-based) of round ``number`` (1-based) of a match of ``game``."""
    return (max(number, 1) - 1) // rounds_per_page(game) + 1


class Paths:
    """Where each file of the site lives, relative to the site's folder (POSIX)."""

    INDEX = "index.html"
    GUIDE = "players.html"  # "For players": how to play by mail
    STYLE = "style.css"
    MANIFEST = ".archive.json"

    @staticmethod
    def in_season(season: str, rest: str) -> str:
        return f"seasons/{segment(season)}/{rest}"

    @classmethod
    def season(cls, season: str) -> str:
        return cls.in_season(season, "index.html")

    @classmethod
    def season_feed(cls, season: str) -> str:
        return cls.in_season(season, "feed.atom")

    @classmethod
    def schedule(cls, season: str, number: int) -> str:
        return cls.in_season(season, f"schedule/page-{number}.html")

    @classmethod
    def player(cls, season: str, player: str) -> str:
        return cls.in_season(season, f"players/{segment(player)}.html")

    @classmethod
    def player_calendar(cls, season: str, player: str) -> str:
        """The player's upcoming deadlines as an iCalendar file (referee.mail.calendar)."""
        return cls.in_season(season, f"players/{segment(player)}.ics")

    @classmethod
    def match(cls, season: str, match: str, name: str = "index.html") -> str:
        return cls.in_season(season, f"matches/{segment(match)}/{name}")

    @classmethod
    def match_part(cls, season: str, match: str, kind: str, number: int) -> str:
        """A page of a long match's parts (:data:`PARTS`): ``rounds-2.html``, ``events-1.html``."""
        return cls.match(season, match, f"{kind}-{number}.html")

    @classmethod
    def round(cls, season: str, match: str, game: str, number: int) -> tuple[str, str]:
        """The page and the fragment of a match's round ``number`` (1-based)."""
        return cls.match_part(season, match, "rounds", round_page(game, number)), f"round-{number}"

    @classmethod
    def match_feed(cls, season: str, match: str) -> str:
        return cls.match(season, match, "feed.atom")

    @classmethod
    def chain(cls, season: str, match: str) -> str:
        return cls.match(season, match, "chain.json")


@dataclass(frozen=True)
class Links:
    """The addresses a page links to, relative to the page itself."""

    here: str  # this page's path in the site
    season_key: str | None = None

    def to(self, path: str) -> str:
        return posixpath.relpath(path, posixpath.dirname(self.here) or ".")

    def index(self) -> str:
        return self.to(Paths.INDEX)

    def guide(self) -> str:
        return self.to(Paths.GUIDE)

    def style(self) -> str:
        return self.to(Paths.STYLE)

    def season(self, key: str | None = None) -> str:
        return self.to(Paths.season(key or self._season))

    def season_feed(self, key: str | None = None) -> str:
        return self.to(Paths.season_feed(key or self._season))

    def schedule(self, number: int) -> str:
        return self.to(Paths.schedule(self._season, number))

    def player(self, key: str) -> str:
        return self.to(Paths.player(self._season, key))

    def player_calendar(self, key: str) -> str:
        return self.to(Paths.player_calendar(self._season, key))

    def match(self, key: str) -> str:
        return self.to(Paths.match(self._season, key))

    def match_feed(self, key: str) -> str:
        return self.to(Paths.match_feed(self._season, key))

    def match_part(self, key: str, kind: str, number: int) -> str:
        return self.to(Paths.match_part(self._season, key, kind, number))

    def round(self, key: str, game: str, number: int) -> str:
        path, fragment = Paths.round(self._season, key, game, number)
        return f"{self.to(path)}#{fragment}"

    def chain(self, key: str) -> str:
        return self.to(Paths.chain(self._season, key))

    @property
    def _season(self) -> str:
        if self.season_key is None:
            raise ValueError(f"{self.here} belongs to no season")
        return self.season_key


# ---------------------------------------------------------------------------- the environment


def when(at: datetime | str | None, tz: str = "UTC") -> Markup:
    """``<time datetime="2026-12-01T18:00:00Z">Tue 1 Dec 2026, 18:00 UTC</time>``, the time
    as the mails write it (in ``tz``, UTC beside it); a dash for none. A filter, not a
    macro: a match page shows a time on every ledger line. An ISO 8601 string (an event
    record of :func:`referee.archive.chain.public_events`) is read first."""
    if at is None or at == "":
        return Markup("&ndash;")
    if isinstance(at, str):
        at = datetime.fromisoformat(at.replace("Z", "+00:00"))
        if at.tzinfo is None:
            at = at.replace(tzinfo=timezone.utc)
    return Markup('<time datetime="{}">{}</time>').format(iso(at), local_time(at, tz))


def bdi(text: Any) -> Markup:
    """Player-supplied text (a name) isolated: ``<bdi>`` keeps a right-to-left override in
    it from reversing the rest of the line."""
    return Markup("<bdi>{}</bdi>").format(text)


def named(text: str, names: Mapping[str, str]) -> Markup:
    """``text`` (a result's reason, as the engine wrote it) with every player id that stands
    as a word of its own written as the player's name (isolated, :func:`bdi`); the rest
    escaped. A name already in the text is isolated too. The accounts that are no players
    (the pot, the house) are left as the text has them."""
    if not text:
        return Markup("")
    known = accounts()
    people = {key: name for key, name in names.items() if key and name and key not in known}
    words = {**people, **{name: name for name in people.values()}}
    pattern = re.compile(
        r"(?<![\w@.-])(" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + r")(?![\w@-])"
    )
    out, last = Markup(""), 0
    for found in pattern.finditer(text) if words else ():
        out += text[last : found.start()] + bdi(words[found.group(1)])
        last = found.end()
    return out + text[last:]


def step_title(key: str | None, game: str | None = None) -> str:
    """A step's title as the game's mails name it (``h3-main-bet1-2`` of MatchJack ->
    ``Hand 3, Main table, betting round 1, turn 2``: ``GameType.step_titles``); the match's
    start event is "The start"; a key the game does not title is "a step of the match"
    (never the key); empty for no step."""
    if not key:
        return ""
    if key == "start":
        return "The start"
    found = GAMES.get(game) if game else None
    for pattern, title in getattr(getattr(found, "game_type", None), "step_titles", ()):
        matched = re.fullmatch(pattern, key)
        if matched:
            return title.format(*matched.groups())
    return "a step of the match"


# the currencies as headings and labels name them
CURRENCIES = {"chips": "Chips", "stack": "Chips in the match", "garnets": "Garnets", "cols": "CoLs"}


def currency(code: str) -> str:
    """A currency's label: ``cols`` -> ``CoLs``; an unknown one with a capital."""
    return CURRENCIES.get(code, code.replace("_", " ").capitalize())


def names_of(header: SeasonHeader) -> dict[str, str]:
    """Account -> what a reader calls it: the season's players by name, the house, the pot."""
    return {**accounts(), **header.names}


def entry_series(
    rounds: Sequence[Round], field: str, players: Iterable[Any], label: str | None = None
) -> dict[str, list[tuple[str, float]]]:
    """A chart's series from the rounds' public history entries: per player (a MatchRow's
    PlayerRef, or a mail context's ``{"id", "name"}``), ``entry[field][player]`` of every
    round that has it, against the round number (or ``entry[label]``). The game's charts
    template picks the fields (e.g. Stationary Roulette's ``points`` and ``chips``)."""
    series: dict[str, list[tuple[str, float]]] = {}
    for player in players:
        key = player["id"] if isinstance(player, Mapping) else player.key
        name = player["name"] if isinstance(player, Mapping) else player.name
        name = isolate_names(name, [name])  # a chart's text holds no <bdi>
        name = name if name not in series else f"{name} ({key})"
        series[name] = [
            (str(r.entry[label]) if label else str(r.number), float(r.entry[field][key]))
            for r in rounds
            if isinstance(r.entry.get(field), Mapping) and isinstance(r.entry[field].get(key), (int, float))
        ]
    return series


@cache
def site_environment() -> Environment:
    """The mail templates' environment (StrictUndefined; autoescape for .html and .xml)
    overlaid with what the archive's templates call: charts, series, times."""
    env = environment().overlay()
    env.globals = {
        **environment().globals,
        "line_chart": line_chart,
        "entry_series": entry_series,
    }
    env.filters = {
        **environment().filters,
        "when": when,
        "number": number,
        "bdi": bdi,
        "named": named,
        "step_title": step_title,
        "currency": currency,
    }
    return env


def _render(template: str, links: Links, **context: Any) -> bytes:
    return site_environment().get_template(template).render(links=links, **context).encode("utf-8")


# ---------------------------------------------------------------------------- pages


def render_style() -> bytes:
    return site_environment().get_template("archive/style.css").render().encode("utf-8")


def render_guide() -> bytes:
    """ "For players": how to play by mail (the same for every site)."""
    return _render("archive/guide.html", Links(Paths.GUIDE))


def render_index(seasons: Sequence[tuple[SeasonHeader, int]]) -> bytes:
    """The list of seasons, each with how many matches it has."""
    return _render("archive/index.html", Links(Paths.INDEX), seasons=seasons)


def render_season(page: SeasonPage) -> bytes:
    links = Links(Paths.season(page.season.key), page.season.key)
    return _render("archive/season.html", links, page=page, season=page.season, names=names_of(page.season))


def render_schedule(page: SchedulePage) -> bytes:
    links = Links(Paths.schedule(page.season.key, page.number), page.season.key)
    return _render("archive/schedule.html", links, page=page, season=page.season, names=names_of(page.season))


def render_player(page: PlayerPage) -> bytes:
    links = Links(Paths.player(page.season.key, page.player.key), page.season.key)
    return _render("archive/player.html", links, page=page, season=page.season, names=names_of(page.season))


def render_match(page: MatchPage, told: Sequence[Any]) -> bytes:
    """A match's page alone (its summary, result, charts and the index of its other pages);
    ``told``: its rounds told (:func:`referee.archive.feeds.told`)."""
    return render_match_pages(page, told)[0][1]


def _chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _ledger_pages(ledger: Sequence[Any]) -> list[list[Any]]:
    """The ledger's histories on pages of at most :data:`LEDGER_LINES_PER_PAGE` lines; a
    longer history is cut into pieces (each its own table, with the same caption)."""
    pieces = [
        replace(h, lines=list(chunk)) for h in ledger for chunk in (_chunks(h.lines, LEDGER_LINES_PER_PAGE) or [[]])
    ]
    out: list[list[Any]] = []
    lines = LEDGER_LINES_PER_PAGE + 1
    for piece in pieces:
        n = max(len(piece.lines), 1)
        if lines + n > LEDGER_LINES_PER_PAGE:
            out.append([])
            lines = 0
        out[-1].append(piece)
        lines += n
    return out


def match_parts(page: MatchPage) -> dict[str, list[Any]]:
    """A match's parts (:data:`PARTS`), each as its pages' contents: the rounds, ledger
    histories, events and seals shown on each. A part with nothing to show has no page."""
    return {
        "rounds": [list(c) for c in _chunks(page.rounds, rounds_per_page(page.row.game))],
        "ledger": _ledger_pages(page.ledger),
        "events": [list(c) for c in _chunks(page.chain, EVENTS_PER_PAGE)],
        "seals": [list(c) for c in _chunks(page.seals, SEALS_PER_PAGE)],
    }


def _part_label(kind: str, shown: Sequence[Any]) -> str:
    """What the index and the pager call a page of a part: the rounds or events on it."""
    if kind == "rounds":
        first, last = shown[0].number, shown[-1].number
    elif kind == "events":
        first, last = shown[0]["seq"], shown[-1]["seq"]
    else:
        return ""
    return str(first) if first == last else f"{first}\u2013{last}"


def render_match_pages(page: MatchPage, told: Sequence[Any]) -> list[tuple[str, bytes]]:
    """A match's pages, each ``(path, bytes)``: first its own page (the summary, the result,
    the charts and an index), then a page per few rounds (:func:`round_page`), and the
    ledger, the event log and the sealed moves on pages of their own. ``told``: its rounds
    told (:func:`referee.archive.feeds.told`), so a page says each round in the words of
    its feed entry."""
    season = page.season.key
    prefix = f"{page.row.game_title} {page.key}: "  # a feed entry's title names the match; the page does already
    texts = [(r.title.removeprefix(prefix), r.text) for r in told]
    parts = match_parts(page)
    counts = {kind: len(contents) for kind, contents in parts.items()}
    toc = {
        kind: [(n, _part_label(kind, shown)) for n, shown in enumerate(contents, 1)] for kind, contents in parts.items()
    }
    first_round = {id(r): i for i, r in enumerate(page.rounds)}

    def one(path: str, part: str, n: int, shown: Sequence[Any]) -> tuple[str, bytes]:
        rounds = shown if part == "rounds" else []
        start = first_round[id(rounds[0])] if rounds else 0
        return path, _render(
            "archive/match.html",
            Links(path, season),
            page=page,
            season=page.season,
            match=page.row,
            names=names_of(page.season),
            texts=texts[start : start + len(rounds)] if part == "rounds" else texts,
            players=page.row.players,
            part=part,
            part_number=n,
            parts=counts,
            toc=toc,
            round_pages=parts["rounds"],
            all_texts=texts,
            shown_rounds=rounds,
            shown_ledger=shown if part == "ledger" else [],
            shown_chain=shown if part == "events" else [],
            shown_seals=shown if part == "seals" else [],
        )

    out = [one(Paths.match(season, page.key), "summary", 0, [])]
    for kind, contents in parts.items():
        for n, shown in enumerate(contents, 1):
            out.append(one(Paths.match_part(season, page.key, kind, n), kind, n, shown))
    return out


def render_chain(page: MatchPage) -> bytes:
    """``chain.json``: the match and the chain records it may show, which ``referee archive
    verify --site`` recomputes."""
    data = {"match": page.key, "season": page.season.key, "head": page.chain_head, "events": page.chain}
    return json_file(data, indent=True)


_JSON_MARKUP = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def json_file(data: Any, *, indent: bool) -> bytes:
    """A JSON file of the site: keys sorted (the same data, the same bytes), and ``<``, ``>``
    and ``&`` written as escapes (the same strings to a JSON reader), so that no player's
    text can ever read as markup, whatever a browser makes of the file."""
    try:
        text = orjson.dumps(data, option=orjson.OPT_SORT_KEYS | (orjson.OPT_INDENT_2 if indent else 0)).decode()
    except TypeError:  # orjson.JSONEncodeError is one: an integer beyond 64 bits
        text = json.dumps(data, indent=2 if indent else None, sort_keys=True, ensure_ascii=False)
    return (text.translate(_JSON_MARKUP) + "\n").encode()
