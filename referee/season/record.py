"""The season's record: the organizer's commands that concern the season rather than one
match (``referee adjust``, ``referee announce`` to a season), each an event in the season's
own hash chain (:class:`referee.store.models.SeasonEvent`), chained as a match's events are
(:mod:`referee.archive.chain`, under the key ``season:<season key>``, which no match key can
be: a key has no colon). A command about one match is an event in that match's chain.

``referee archive verify`` recomputes these chains with the matches'; ``referee status`` and
the archive's season page list them, in words (:mod:`referee.season.words`, re-exported here).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.archive import chain
from referee.season.words import CONTROLS, control_record, sentence
from referee.store.models import Season, SeasonEvent

__all__ = ["CONTROLS", "chain_key", "control_record", "log_season_event", "season_events", "sentence"]


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
