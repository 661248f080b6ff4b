"""Checks a reader or an organizer can run: ``referee archive verify`` and ``referee replay``.

* :func:`verify_database` recomputes every match's hash chain from its stored events and
  compares the end with the head kept on the match: an event changed, removed or
  reordered in the database shows as the first event where the chain breaks.
* :func:`verify_site` recomputes the chains a built site publishes (each match's
  ``chain.json``) and compares each record with the database: a page that was edited, or a
  database that no longer says what was published, shows as the first event that differs.
* :func:`replay_match` rebuilds a match from its seed, options and event log and compares
  the result with the stored state (and result).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.archive.chain import GENESIS, Break, first_break, instant
from referee.games import GAMES
from referee.match.book import MATCH_CONTEXT, replay
from referee.store.db import Store, json_dumps
from referee.season.record import chain_key, season_events
from referee.store.models import Event, Match, Season

__all__ = ["ChainCheck", "ReplayCheck", "replay_match", "verify_database", "verify_site"]


@dataclass(frozen=True)
class ChainCheck:
    match: str
    source: str  # "database" or the chain.json file checked
    events: int
    problem: Break | None

    @property
    def ok(self) -> bool:
        return self.problem is None

    def __str__(self) -> str:
        where = "" if self.source == "database" else f" ({self.source})"
        if self.ok:
            return f"ok: {self.match}{where}: {self.events} events, the chain holds"
        return f"BROKEN: {self.match}{where}: {self.problem}"


def _events(session: Session, match: Match) -> list[Event]:
    return list(session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)))


def _records(events: list[Event]) -> Iterator[dict[str, Any]]:
    for ev in events:
        yield {
            "seq": ev.seq,
            "kind": ev.kind,
            "step": ev.step_key,
            "player": ev.player,
            "at": ev.at,
            "payload": ev.payload,
            "digest": ev.digest,
            "hash": ev.hash,
        }


def _matches(session: Session, match_key: str | None) -> list[Match]:
    query = select(Match).order_by(Match.id)
    if match_key is not None:
        query = query.where(Match.key == match_key)
    found = list(session.scalars(query))
    if match_key is not None and not found:
        raise LookupError(f"no match {match_key!r} in the database")
    return found


def verify_database(store: Store, match_key: str | None = None) -> list[ChainCheck]:
    """Every match's chain (or one match's), recomputed from its events in the database."""
    checks = []
    with store.unit_of_work() as session:
        for match in _matches(session, match_key):
            events = _events(session, match)
            problem = first_break(match.key, _records(events))
            head = events[-1].hash if events else GENESIS
            if problem is None and head != match.last_event_hash:
                problem = Break(len(events), "the chain ends in another hash than the head the match keeps")
            checks.append(ChainCheck(match.key, "database", len(events), problem))
        if match_key is None:
            checks.extend(_season_checks(session))
    return checks


def _season_checks(session: Session) -> list[ChainCheck]:
    """Each season's own chain (:mod:`referee.season.record`), recomputed (a season with no
    such event has none to check)."""
    checks = []
    for season in session.scalars(select(Season).order_by(Season.id)):
        events = season_events(session, season.id)
        if not events:
            continue
        records = [
            {
                "seq": e.seq,
                "kind": e.kind,
                "step": None,
                "player": None,
                "at": e.at,
                "payload": e.payload,
                "digest": e.digest,
                "hash": e.hash,
            }
            for e in events
        ]
        problem = first_break(chain_key(season), records)
        checks.append(ChainCheck(chain_key(season), "database", len(events), problem))
    return checks


def verify_site(store: Store, site: Path) -> list[ChainCheck]:
    """Every ``chain.json`` of a built site: its chain recomputed from what it shows, then
    compared record by record with the database."""
    checks = []
    files = sorted(site.rglob("chain.json"))
    if not files:
        raise LookupError(f"{site} holds no chain.json: is it a site built by `referee archive build`?")
    with store.unit_of_work() as session:
        for path in files:
            source = str(path.relative_to(site))
            try:
                key, records = _read_chain_file(path)
            except (OSError, ValueError) as exc:
                checks.append(ChainCheck(path.parent.name, source, 0, Break(0, f"cannot be read: {exc}")))
                continue
            problem = first_break(key, records)
            if problem is None:
                problem = _differs_from_database(session, key, records)
            checks.append(ChainCheck(key, source, len(records), problem))
    return checks


def _read_chain_file(path: Path) -> tuple[str, list[dict[str, Any]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return path.parent.name, data
    if isinstance(data, dict) and isinstance(data.get("events"), list):
        return str(data.get("match") or path.parent.name), data["events"]
    raise ValueError("not a list of chain records")


def _differs_from_database(session: Session, key: str, records: list[dict[str, Any]]) -> Break | None:
    match = session.scalars(select(Match).where(Match.key == key)).first()
    if match is None:
        return Break(records[0]["seq"] if records else 0, "the database has no such match")
    stored = {ev.seq: ev for ev in _events(session, match)}
    for record in records:
        ev = stored.get(record["seq"])
        if ev is None:
            return Break(record["seq"], "the database has no such event")
        if (record["digest"], record["hash"]) != (ev.digest, ev.hash):
            return Break(record["seq"], "the site and the database disagree on this event")
        if record.get("payload") is not None and record["payload"] != ev.payload:
            return Break(record["seq"], "the site shows another payload than the database holds")
        if (record["kind"], record["step"], record["player"], record["at"]) != (
            ev.kind,
            ev.step_key,
            ev.player,
            instant(ev.at),
        ):
            return Break(record["seq"], "the site shows another kind, step, player or instant")
    return None


@dataclass(frozen=True)
class ReplayCheck:
    match: str
    events: int
    differences: list[str]  # paths into the state (or "result") that differ, first ones first

    @property
    def ok(self) -> bool:
        return not self.differences

    def __str__(self) -> str:
        if self.ok:
            return f"ok: {self.match}: rebuilt from its seed and {self.events} events, equal to what is stored"
        shown = ", ".join(self.differences[:5]) + (" ..." if len(self.differences) > 5 else "")
        return f"DIFFERS: {self.match}: the rebuilt match differs from the stored one at {shown}"


def replay_match(store: Store, match_key: str) -> ReplayCheck:
    """Rebuild ``match_key`` from its seed, options and events; compare with the stored state."""
    with store.unit_of_work() as session:
        match = session.scalars(select(Match).options(*MATCH_CONTEXT).where(Match.key == match_key)).first()
        if match is None:
            raise LookupError(f"no match {match_key!r} in the database")
        events = _events(session, match)
        if match.state is None:
            return ReplayCheck(match.key, len(events), [] if not events else ["state (none stored, events exist)"])
        game = GAMES[match.game]
        rebuilt = replay(game, match, events)
        differences = list(_differences(_as_stored(rebuilt), match.state, "state"))
        result = game.result(rebuilt)
        if match.status == "finished" and (result is None or _as_stored(asdict(result)) != match.result):
            differences.append("result")
        return ReplayCheck(match.key, len(events), differences)


def _as_stored(value: Any) -> Any:
    """A value as a JSON column gives it back (tuples become lists, keys strings)."""
    return json.loads(json_dumps(value))


def _differences(a: Any, b: Any, path: str) -> Iterator[str]:
    """The paths where two plain-data values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                yield f"{path}.{key}"
            else:
                yield from _differences(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            yield f"{path} (length {len(a)} != {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=False)):  # the lengths were told above
            yield from _differences(x, y, f"{path}[{i}]")
    elif a != b:
        yield path
