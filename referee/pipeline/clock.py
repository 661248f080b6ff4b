"""The clock: what is due (starts, deadlines, reminders) and doing it, in batches.

One place decides what "due" means (:func:`start_due_by`, :func:`deadline_due_by`); the
scheduler's jobs and the poll only ring the bell. A batch of matches is one transaction
without savepoints; a bug in one match rolls its batch back, that match is left as it was
(logged; retried next tick) and the batch is redone without it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Select, bindparam, func, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from referee.games.base import GameError
from referee.pipeline import BATCH, batch_work
from referee.match import opensteps
from referee.match.book import MATCH_CONTEXT, MatchBook
from referee.match.notices import Notices, PressError
from referee.store.db import Store
from referee.season.frame import WAITING, Waiting
from referee.store.models import Inbound, Match

__all__ = ["Clock", "deadline_due_by", "start_due_by", "utc"]

log = logging.getLogger("referee")


class _Abandoned(Exception):
    """A batch is rolled back because one of its matches failed; it is redone without it."""


class Clock:
    def __init__(self, store: Store, book: MatchBook, notices: Notices):
        self.store = store
        self.book = book
        self.notices = notices
        self.broken: set[int] = set()  # matches whose work failed in this tick: left open, logged
        self.start_failures = 0  # matches whose start failed in this tick (Match.problem says why)

    def new_tick(self) -> None:
        self.broken = set()
        self.start_failures = 0

    # ------------------------------------------------------------------ what is due

    def next_times(self, now: datetime) -> tuple[datetime | None, datetime | None, datetime | None]:
        """The earliest pending mail arrival, match start and deadline, each at or before ``now``:
        one statement, built once (:data:`_NEXT_TIMES`), unless a match failed in this tick."""
        with self.store.unit_of_work() as session:
            if not self.broken:
                mail, start, deadline = session.execute(_NEXT_TIMES, {"now": now}).one()
                return utc(mail), utc(start), utc(deadline)
            mail = session.scalar(
                select(func.min(Inbound.received_at)).where(Inbound.status == "pending", Inbound.received_at <= now)
            )
            start = session.scalar(self.workable(select(func.min(Match.starts_at)).where(*start_due_by(now))))
            deadline = session.scalar(self.workable(select(func.min(Match.deadline)).where(*deadline_due_by(now))))
        return utc(mail), utc(start), utc(deadline)

    def workable(self, query: Select) -> Select:
        """``query`` without the matches that failed in this tick (left for the next)."""
        return query.where(Match.id.not_in(self.broken)) if self.broken else query

    # ------------------------------------------------------------------ doing it

    def start_due(self, now: datetime) -> int:
        """Start every scheduled match whose start has come; each player gets the first mail."""

        def start(session: Session, match: Match) -> int:
            try:
                self.book.start(session, match)
            except (StaleDataError, IntegrityError, OperationalError):
                raise  # another process, or the database: the next tick re-checks
            except Exception as exc:  # the game refused the seats or options: the organizer's to fix
                if match.status != "scheduled":
                    raise  # failed after the start changed the match: rolled back, and logged
                self._start_failed(match, exc)
                return 0
            self.notices.announce_step(session, match, match.starts_at, first=True)
            return 1

        return self.in_batches(
            select(Match).where(*start_due_by(now)).order_by(Match.starts_at, Match.id), "starting", start
        )

    def _start_failed(self, match: Match, exc: Exception) -> None:
        """A match that cannot start stays scheduled with the reason (``Match.problem``, shown
        by ``referee status``), logged in one line; it is not tried again until the next
        season load (``referee.seasons``), the organizer's fix."""
        if isinstance(exc, Waiting):  # not a failure: the season frame starts it when it may
            match.problem = f"{WAITING}{exc}"[:2000]
            log.info("match %s waits %s", match.key, exc)
            return
        reason = str(exc) if isinstance(exc, GameError) else f"{type(exc).__name__}: {exc}"
        match.problem = f"could not start: {reason}"[:2000]
        self.start_failures += 1
        log.error("match %s could not start: %s (fix the season file and load it again)", match.key, reason)
        log.debug("match %s: the start failed", match.key, exc_info=exc)

    def close_due(self, now: datetime, match_id: int | None = None) -> int:
        """Close every step whose deadline has passed as of ``now`` (idempotent)."""
        query = select(Match).where(*deadline_due_by(now))
        if match_id is not None:
            query = query.where(Match.id == match_id)
        return self.in_batches(
            query.order_by(Match.deadline, Match.id),
            "closing its step",
            lambda session, match: self.close_until(session, match, now),
        )

    def close_until(self, session: Session, match: Match, until: datetime) -> int:
        """Close every step of ``match`` whose deadline is at or before ``until``, telling the
        players after each (the mail shows that step's results and the step it opened)."""
        closed = 0
        while self.book.close_due(match, until):
            before = [entry.key for entry in opensteps.listed(match)]
            at = self.book.close_step(session, match)
            for player, why in self.book.abandon(session, match, at):  # missed too many steps in a row
                self.notices.tell(
                    session, match, at, "abandoned", about=player, forfeiter=_name(match, player), reason=why
                )
            self.notices.announce_step(session, match, at, since=before)
            closed += 1
        return closed

    def send_reminders(self, now: datetime) -> int:
        """Remind players who still owe a submission, once per configured offset."""
        return self.in_batches(
            select(Match)
            .where(Match.status == "running", Match.remind_at <= now, Match.deadline > now)
            .order_by(Match.remind_at),
            "sending reminders",
            lambda session, match: self.notices.remind(session, match, now),
        )

    def in_batches(self, query: Select, doing: str, work: Callable[[Session, Match], int]) -> int:
        """Run ``work`` on every match ``query`` finds, a batch of matches per transaction.

        ``work`` must move each match out of ``query``'s reach, or the loop would not end.
        """
        total = 0
        while True:
            done = 0
            try:
                # no autoflush: the writes of a batch go out together at commit (the ledger
                # balances its work reads are kept current in memory: referee.store.balances)
                with batch_work(), self.store.unit_of_work(autoflush=False) as session:
                    matches = session.scalars(self.workable(query).limit(BATCH).options(*MATCH_CONTEXT)).all()
                    if not matches:
                        return total
                    self.book.preload_balances(session, matches)
                    self.notices.defer(session, 2 * len(matches))  # the batch's mails, made together
                    for match in matches:
                        with self._isolated(match, doing):
                            done += work(session, match)
                    try:
                        self.notices.made(session)
                    except PressError as exc:
                        self._abandon(exc, doing)
            except _Abandoned:
                continue  # rolled back; the failing match is in self.broken
            total += done

    @contextmanager
    def _isolated(self, match: Match, doing: str) -> Iterator[None]:
        """Turn a bug while working on one match into a rollback of its batch, without it."""
        try:
            yield
        except (StaleDataError, IntegrityError, OperationalError):
            raise  # another process got there first: roll back; the next tick re-checks
        except PressError as exc:  # a mail of this batch, made at a flush: its match's fault
            self._abandon(exc, doing, match)
        except Exception as exc:
            log.exception("match %s: %s failed; left as it was", match.key, doing)
            self.broken.add(match.id)
            raise _Abandoned from exc

    def _abandon(self, exc: PressError, doing: str, match: Match | None = None) -> None:
        """A mail of the batch could not be made: its match (else ``match``, the one being
        worked on) is left as it was, logged, and the batch redone without it."""
        match_id, key = exc.match_id, exc.match_key
        if match_id is None and match is not None:
            match_id, key = match.id, match.key
        if match_id is None:
            raise exc  # a mail about no match, outside any match's work: the tick logs it
        log.error("match %s: %s failed, a mail could not be made; left as it was", key, doing, exc_info=exc)
        self.broken.add(match_id)
        raise _Abandoned from exc


def _name(match: Match, key: str) -> str:
    return next((seat.player.name for seat in match.seats if seat.player.key == key), key)


def start_due_by(now: Any) -> tuple[Any, ...]:
    """Where-clauses: scheduled matches whose start has come by ``now`` (an instant, or a bound
    parameter for one)."""
    return (Match.status == "scheduled", Match.starts_at <= now, Match.problem.is_(None))


def deadline_due_by(now: Any) -> tuple[Any, ...]:
    """Where-clauses: running matches whose deadline has passed by ``now``."""
    return (Match.status == "running", Match.deadline <= now)


# The instant a stage asks about, as a bound parameter of the statements the stages build
# once at import (executed with ``{"now": ...}``; the delivery's too): SQLAlchemy then finds
# their compiled form without building and hashing them again at every tick.
NOW = bindparam("now")

# Clock.next_times's question, asked at every tick: built once, with the instant as a bound
# parameter, so that SQLAlchemy finds its compiled form without building and hashing the
# statement again (a statement object keeps its cache key); one round trip for the three.
_NEXT_TIMES = select(
    select(func.min(Inbound.received_at))
    .where(Inbound.status == "pending", Inbound.received_at <= NOW)
    .scalar_subquery(),
    select(func.min(Match.starts_at)).where(*start_due_by(NOW)).scalar_subquery(),
    select(func.min(Match.deadline)).where(*deadline_due_by(NOW)).scalar_subquery(),
)


def utc(value: datetime | None) -> datetime | None:
    """Aggregates (min, max) bypass the column type: make them aware UTC again."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=timezone.utc)
