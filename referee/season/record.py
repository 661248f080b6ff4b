"""The season's record: the organizer's commands that concern the season rather than one
match (``referee adjust``, ``referee announce`` to a season), each an event in the season's
own hash chain (:class:`referee.store.models.SeasonEvent`), chained as a match's events are
(:mod:`referee.archive.chain`, under the key ``season:<season key>``, which no match key can
be: a key has no colon). A command about one match is an event in that match's chain.

``referee archive verify`` recomputes these chains with the matches'; ``referee status`` and
the archive's season page list them, in words (:func:`record_lines`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.archive import chain
from referee.store.models import Season, SeasonEvent
from referee.timefmt import duration, local_time

__all__ = ["CONTROLS", "chain_key", "control_record", "log_season_event", "season_events", "sentence"]

# the events of a match that came from outside its rules (the organizer, the abandonment rule)
CONTROLS = ("cancel", "pause", "resume", "extend", "forfeit", "substitute", "announce")


def chain_key(season: Season) -> str:
    return f"season:{season.key}"


def log_season_event(session: Session, season: Season, kind: str, payload: dict[str, Any], at: datetime) -> None:
    """Append one event to the season's chain (a second writer at once fails on the unique
    (season, seq): its unit of work rolls back and changes nothing)."""
    last = session.execute(
        select(SeasonEvent.seq, SeasonEvent.hash)
        .where(SeasonEvent.season_id == season.id)
        .order_by(SeasonEvent.seq.desc())
        .limit(1)
    ).first()
    seq, previous = (last[0] + 1, last[1]) if last else (1, chain.GENESIS)
    row = {"seq": seq, "kind": kind, "step_key": None, "player": None, "payload": payload, "at": at}
    digest, hashed = chain.stamp(previous, chain_key(season), row)
    session.add(
        SeasonEvent(season_id=season.id, seq=seq, kind=kind, payload=payload, at=at, digest=digest, hash=hashed)
    )
    session.flush()


def season_events(session: Session, season_id: int) -> list[SeasonEvent]:
    return list(
        session.scalars(select(SeasonEvent).where(SeasonEvent.season_id == season_id).order_by(SeasonEvent.seq))
    )


def sentence(event: SeasonEvent, names: dict[str, str]) -> str:
    """One season event in words (names, never ids); an announcement's text is for the
    players it went to, so the public record says only that it went out."""
    p = event.payload or {}
    if event.kind == "adjust":
        who = names.get(p.get("player", ""), p.get("player", ""))
        amount = int(p.get("amount", 0))
        return f"The organizer adjusted {who}'s {p.get('currency')} by {amount:+d}: {p.get('reason')}."
    if event.kind == "announce":
        return f"The organizer mailed an announcement to the {p.get('told', 0)} players of the season."
    return f"{event.kind}: {p}"


def control_record(events: Sequence[Any], names: dict[str, str]) -> list[tuple[datetime, str]]:
    """The match's record of what came from outside its rules, in words: the organizer's
    controls (``referee cancel``, ``pause``, ``resume``, ``extend``, ``forfeit``,
    ``substitute``) and the abandonment rule's forfeits. Their payloads hide nothing of the
    game (a reason, a time), so a running match shows them too."""
    out: list[tuple[datetime, str]] = []
    for ev in events:
        p = ev.payload or {}
        who = names.get(ev.player or "", ev.player or "")
        if ev.kind == "cancel":
            text = f"The organizer cancelled the match: {p.get('reason')}."
        elif ev.kind == "pause":
            text = f"The organizer paused the match: {p.get('reason')}."
        elif ev.kind == "resume":
            gone = duration(timedelta(seconds=float(p.get("paused_seconds") or 0)))
            text = f"The organizer resumed the match; its deadlines moved on by {gone}."
        elif ev.kind == "extend":
            more = duration(timedelta(seconds=float(p.get("seconds") or 0)))
            try:
                until = local_time(datetime.fromisoformat(str(p.get("deadline")).replace("Z", "+00:00")), "UTC")
            except ValueError:
                until = str(p.get("deadline"))
            text = f"The organizer gave {more} more time: the deadline is now {until}."
        elif ev.kind == "forfeit":
            if p.get("by") == "rule":
                text = f"{who} forfeits by the abandonment rule: {p.get('reason')}."
            else:
                text = f"The organizer recorded a forfeit by {who}: {p.get('reason')}."
        elif ev.kind == "announce":
            text = f"The organizer mailed an announcement to the {p.get('told', 0)} players of the match."
        elif ev.kind == "substitute":
            old, new = names.get(p.get("old"), p.get("old")), p.get("name") or names.get(p.get("new"), p.get("new"))
            text = f"The organizer handed {old}'s seat to {new}: {p.get('reason')}."
        else:
            continue
        out.append((ev.at, text))
    return out
