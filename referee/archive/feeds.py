"""The archive's Atom feeds: one per match (all its closed rounds) and one per season (its
latest closed rounds of every match), written with :func:`referee.archive.atom.feed`, each
round told in the words of :func:`referee.archive.texts.round_text`.

A season's feed must stay cheap to rebuild when one round of ten thousand matches closes.
Its rounds are found by :func:`latest`, which reads matches latest change first and stops
as soon as no further match can hold a newer round; and what each match's rounds say is
kept between builds (:class:`RoundCache`, in the manifest), keyed by the fingerprint of
the match's pages, so an unchanged match is not replayed to be told again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from referee.archive import atom
from referee.archive.model import MatchRounds, MatchStamp, SeasonHeader
from referee.archive.pages import Links, Paths
from referee.bidi import isolate_names
from referee.archive.texts import round_text

__all__ = [
    "FeedSite",
    "RoundCache",
    "ToldRound",
    "feed_authority",
    "latest",
    "match_feed",
    "season_feed",
    "told",
]


@dataclass(frozen=True)
class ToldRound:
    """A closed round as its feed entry tells it."""

    match: str  # the match's key
    number: int
    closed_at: datetime
    title: str
    text: str

    def stored(self) -> list[Any]:
        return [self.number, self.closed_at.isoformat(), self.title, self.text]

    @classmethod
    def restored(cls, match: str, data: Sequence[Any]) -> ToldRound:
        number, closed_at, title, text = data
        return cls(match, int(number), datetime.fromisoformat(closed_at), str(title), str(text))


def text_context(header: SeasonHeader, played: MatchRounds) -> dict[str, Any]:
    """The context :func:`referee.archive.texts.round_text` reads: public data only."""
    row = played.row
    return {
        "match": {"id": row.key, "title": row.game_title, "game": row.game, "season": header.name},
        "players": [{"id": p.key, "name": p.name} for p in row.players],
        "view": played.view,
    }


def told(header: SeasonHeader, played: MatchRounds) -> list[ToldRound]:
    """Every closed round of a match, told."""
    context = text_context(header, played)
    out = []
    for r in played.rounds:
        title, text = round_text(played.row.game, context, r)
        out.append(ToldRound(played.row.key, r.number, r.closed_at, title, text))
    return out


# ---------------------------------------------------------------------------- the latest rounds


def candidates(stamps: Iterable[MatchStamp]) -> list[MatchStamp]:
    """The matches that may have closed rounds, latest change first (ties: the later id)."""
    return sorted((s for s in stamps if s.last_change is not None), key=lambda s: (s.last_change, s.id), reverse=True)


def latest(
    stamps: Iterable[MatchStamp], rounds_of: Callable[[list[MatchStamp]], Mapping[str, list[ToldRound]]], limit: int
) -> list[ToldRound]:
    """The ``limit`` latest closed rounds of these matches, newest first.

    Matches are asked for (``rounds_of``, a chunk at a time) latest change first; no round of
    a match closed after its last change, so once ``limit`` rounds closed at or after the
    next match's last change, no later match can enter. A tie goes to the match asked for
    first, so the answer does not depend on where the chunks fall."""
    ordered = candidates(stamps)
    found: list[tuple[tuple[Any, ...], ToldRound]] = []
    for start in range(0, len(ordered), 20):
        chunk = ordered[start : start + 20]
        if len(found) >= limit and found[limit - 1][0][0] >= chunk[0].last_change:
            break
        given = rounds_of(chunk)
        for order, stamp in enumerate(chunk, start):
            found += [((r.closed_at, -order, r.number), r) for r in given[stamp.key]]
        found.sort(key=lambda item: item[0], reverse=True)
        del found[limit:]
    return [r for _, r in found]


class RoundCache:
    """The told rounds of the matches the season feeds showed at the last build, each with the
    fingerprint of that match's pages then: the same fingerprint, the same rounds."""

    def __init__(self, stored: Mapping[str, Any] | None = None):
        self._rounds: dict[str, tuple[str, list[ToldRound]]] = {}
        for key, entry in (stored or {}).items():
            try:
                self._rounds[key] = (entry["fingerprint"], [ToldRound.restored(key, r) for r in entry["rounds"]])
            except (KeyError, TypeError, ValueError):
                continue  # a damaged entry is told again

    def get(self, key: str, fingerprint: str) -> list[ToldRound] | None:
        found = self._rounds.get(key)
        return found[1] if found is not None and found[0] == fingerprint else None

    def put(self, key: str, fingerprint: str, rounds: list[ToldRound]) -> None:
        self._rounds[key] = (fingerprint, rounds)

    def stored(self, keys: Iterable[str]) -> dict[str, Any]:
        """What to keep for the next build: these matches' entries."""
        return {
            key: {"fingerprint": self._rounds[key][0], "rounds": [r.stored() for r in self._rounds[key][1]]}
            for key in sorted(set(keys))
            if key in self._rounds
        }


# ---------------------------------------------------------------------------- the documents


@dataclass(frozen=True)
class FeedSite:
    """What a feed needs to know of the site: its public address, if any, and the authority
    its ids are minted under."""

    base_url: str | None
    authority: str

    def href(self, links: Links, path: str, fragment: str = "") -> str:
        """``path``'s address for a feed: absolute under ``base_url``, else relative to the feed."""
        tail = f"#{fragment}" if fragment else ""
        return (self.base_url + path if self.base_url else links.to(path)) + tail


def feed_authority(base_url: str | None, created: datetime) -> str:
    """The tag URI authority of a season's ids (RFC 4151): the host the site is published
    at, dated by the season's creation, so the ids stay the same for as long as it is;
    ``referee.invalid`` for a site without ``base_url`` (set it before publishing feeds)."""
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    return f"{host or 'referee.invalid'},{created.astimezone(timezone.utc):%Y-%m-%d}"


def _entry(
    site: FeedSite, links: Links, season: str, r: ToldRound, game: str | None, names: Iterable[str] = ()
) -> atom.FeedEntry:
    """One round's entry, linking to the round on its page of the match (its match's page
    when the game is not known); ``names`` (the players') isolated in its title and text."""
    names = list(names)
    page, fragment = Paths.round(season, r.match, game, r.number) if game else (Paths.match(season, r.match), "")
    return atom.FeedEntry(
        id=atom.tag_uri(site.authority, season, r.match, f"round-{r.number}"),
        title=isolate_names(r.title, names),
        updated=r.closed_at,
        text=isolate_names(r.text, names),
        link=site.href(links, page, fragment or f"round-{r.number}"),
    )


def match_feed(site: FeedSite, header: SeasonHeader, played: MatchRounds, rounds: Sequence[ToldRound]) -> bytes:
    """A match's feed: every closed round, newest first."""
    row = played.row
    path = Paths.match_feed(header.key, row.key)
    links = Links(path, header.key)
    names = [p.name for p in row.players]
    entries = [_entry(site, links, header.key, r, row.game, names) for r in reversed(rounds)]
    return atom.feed(
        feed_id=atom.tag_uri(site.authority, header.key, row.key),
        title=f"{row.game_title} {row.key} ({isolate_names(header.name, [header.name])})",
        self_href=site.href(links, path),
        alternate_href=site.href(links, Paths.match(header.key, row.key)),
        updated=max((e.updated for e in entries), default=row.starts_at),
        entries=entries,
    )


def season_feed(
    site: FeedSite, header: SeasonHeader, rounds: Sequence[ToldRound], games: Mapping[str, str] | None = None
) -> bytes:
    """A season's feed: its latest closed rounds, newest first (:func:`latest`); ``games``:
    each match's game (where its rounds' pages are)."""
    path = Paths.season_feed(header.key)
    links = Links(path, header.key)
    names = [name for _, name, _ in header.players]
    entries = [_entry(site, links, header.key, r, (games or {}).get(r.match), names) for r in rounds]
    return atom.feed(
        feed_id=atom.tag_uri(site.authority, header.key),
        title=f"{isolate_names(header.name, [header.name])}: results",
        self_href=site.href(links, path),
        alternate_href=site.href(links, Paths.season(header.key)),
        updated=max((e.updated for e in entries), default=header.created_at),
        entries=entries,
    )
