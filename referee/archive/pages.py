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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

import orjson
from jinja2 import Environment
from markupsafe import Markup

from referee.archive.charts import line_chart, number
from referee.archive.model import (
    ACCOUNTS,
    MatchPage,
    PlayerPage,
    SchedulePage,
    SeasonHeader,
    SeasonPage,
)
from referee.archive.rounds import Round
from referee.render import environment
from referee.timefmt import iso, local_time

__all__ = [
    "Links",
    "Paths",
    "render_chain",
    "render_index",
    "render_match",
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


class Paths:
    """Where each file of the site lives, relative to the site's folder (POSIX)."""

    INDEX = "index.html"
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
    def match(cls, season: str, match: str, name: str = "index.html") -> str:
        return cls.in_season(season, f"matches/{segment(match)}/{name}")

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

    def match(self, key: str) -> str:
        return self.to(Paths.match(self._season, key))

    def match_feed(self, key: str) -> str:
        return self.to(Paths.match_feed(self._season, key))

    def chain(self, key: str) -> str:
        return self.to(Paths.chain(self._season, key))

    @property
    def _season(self) -> str:
        if self.season_key is None:
            raise ValueError(f"{self.here} belongs to no season")
        return self.season_key


# ---------------------------------------------------------------------------- the environment


def when(at: datetime | None, tz: str = "UTC") -> Markup:
    """``<time datetime="2026-12-01T18:00:00Z">Tue 1 Dec 2026, 18:00 UTC</time>``, the time
    as the mails write it (in ``tz``, UTC beside it); a dash for none. A filter, not a
    macro: a match page shows a time on every ledger line."""
    if at is None:
        return Markup("&ndash;")
    return Markup('<time datetime="{}">{}</time>').format(iso(at), local_time(at, tz))


def names_of(header: SeasonHeader) -> dict[str, str]:
    """Account -> what a reader calls it: the season's players by name, the house, the pot."""
    return {**ACCOUNTS, **header.names}


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
    env.filters = {**environment().filters, "when": when, "number": number}
    return env


def _render(template: str, links: Links, **context: Any) -> bytes:
    return site_environment().get_template(template).render(links=links, **context).encode("utf-8")


# ---------------------------------------------------------------------------- pages


def render_style() -> bytes:
    return site_environment().get_template("archive/style.css").render().encode("utf-8")


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
    """A match's page; ``told``: its rounds told (:func:`referee.archive.feeds.told`), so
    the page says each round in the words of its feed entry."""
    links = Links(Paths.match(page.season.key, page.key), page.season.key)
    prefix = f"{page.row.game_title} {page.key}: "  # a feed entry's title names the match; the page does already
    return _render(
        "archive/match.html",
        links,
        page=page,
        season=page.season,
        match=page.row,
        names=names_of(page.season),
        texts=[(r.title.removeprefix(prefix), r.text) for r in told],
        players=page.row.players,
    )


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
