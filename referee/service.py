"""The one place that joins rules, mail and storage.

Every change to a match happens inside one unit of work that also writes its events,
its ledger entries and the mail it causes (into the outbox). Nothing here reads the
clock: every entry point takes ``now``; every effect is stamped with the instant it
belongs to (a mail's arrival time, a step's deadline), never with when we got to it.

Flow of one mail (``tick``):  maildir new/ -> ``ingest`` (inbound row committed, then the
file moves to cur/) -> ``process_inbound`` (guards, sender check, parse, apply; receipt
or error into the outbox; inbound row marked, all in one transaction) -> ``flush_outbox``.

Flow of a deadline: ``close_due`` (apply_timeout, events, ledger, results mails, next
step opened at the deadline, so the schedule never drifts) -> ``flush_outbox``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from sqlalchemy import Select, func, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, joinedload, selectinload
from sqlalchemy.orm.exc import StaleDataError

from referee.config import ServiceConfig
from referee.games import GAMES
from referee.games.base import SEASON_CHIPS, Game, GameError, State
from referee.mail import tokens
from referee.mail.compose import compose, make_message_id
from referee.mail.parse import Headers
from referee.pipeline.ingest import Ingest, InboxTransport
from referee.pipeline.judge import Judge
from referee.render import render_mail
from referee.store.balances import Balances
from referee.store.db import Store
from referee.store.models import Event, Inbound, LedgerEntry, Match, Outbox, Player, Seat
from referee.timefmt import duration, iso, local_time

log = logging.getLogger("referee")

BATCH = 200
# Everything a mail about a match needs, loaded with the match instead of one query at a time.
MATCH_CONTEXT = (selectinload(Match.seats).joinedload(Seat.player), joinedload(Match.season))
RETRY_DELAYS = (60, 300, 900, 3600, 3 * 3600, 6 * 3600, 12 * 3600)  # seconds between delivery attempts


class _Abandoned(Exception):
    """A batch is rolled back because one of its matches failed; it is redone without it."""


class OutboxTransport(Protocol):
    def deliver(self, recipient: str, data: bytes, key: str, *, durable: bool = True) -> Any: ...

    def sync(self) -> None:
        """Make every delivery made with ``durable=False`` durable."""


@dataclass
class TickReport:
    ingested: int = 0
    started: int = 0
    accepted: int = 0
    rejected: int = 0
    ignored: int = 0
    failed: int = 0
    closed: int = 0
    reminders: int = 0
    sent: int = 0
    send_errors: int = 0

    def merge(self, other: TickReport) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)

    def summary(self) -> str:
        parts = [f"{name} {value}" for name, value in asdict(self).items() if value]
        return ", ".join(parts) or "nothing to do"


def replay(game: Game, match: Match, events: Sequence[Event]) -> State:
    """Rebuild a match's state from its seed, options and event log."""
    players = [seat.player.key for seat in match.seats]
    state = game.initial_state(match.seed, players, match.options)
    for ev in events:
        if ev.kind == "move":
            state = game.apply_move(state, ev.player, ev.payload["move"]).state
        elif ev.kind == "timeout":
            if "balances" in ev.payload:
                state = game.with_balances(state, ev.payload["balances"])
            state = game.apply_timeout(state)
    return state


class Referee:
    def __init__(
        self,
        store: Store,
        config: ServiceConfig,
        inbox: InboxTransport | None = None,
        outbox: OutboxTransport | None = None,
    ):
        self.store = store
        self.config = config
        self.inbox = inbox
        self.outbox = outbox
        self.own_addresses = (config.mail.address,)
        self._broken: set[int] = set()  # matches whose close failed in this tick: left open, logged
        self.loop_value = config.mail.domain

    @classmethod
    def with_maildirs(cls, store: Store, config: ServiceConfig) -> Referee:
        """The referee on the embedded transport, as ``referee.toml`` configures it."""
        from referee.mail.maildir import MaildirInbox, MaildirOutbox

        return cls(
            store,
            config,
            inbox=MaildirInbox(config.mail.inbox),
            outbox=MaildirOutbox(config.mail.outbox, per_address=config.mail.per_address),
        )

    # ------------------------------------------------------------------ the whole cycle

    def tick(self, now: datetime) -> TickReport:
        """Everything due as of ``now``: mail in, then mail, starts and deadlines in time order,
        then reminders and mail out.

        Time order matters across matches too: a match that starts at T brings the season
        balance after every settlement before T, and a mail is judged before the deadline
        that follows its arrival. At the same instant a deadline comes before a start.
        """
        report = TickReport()
        last_event = self._last_event_id()
        self._broken = set()
        report.ingested = self.ingest(now)
        while True:
            t_mail, t_start, t_deadline = self._next_times(now)
            if t_start is None and t_deadline is None:
                report.merge(self.process_inbound(now))
                break
            boundary = min(t for t in (t_start, t_deadline) if t is not None)
            if t_mail is not None and t_mail < boundary:
                report.merge(self.process_inbound(now, before=boundary))
            elif t_deadline is not None and t_deadline <= boundary:
                self.close_due(t_deadline)
            else:
                report.started += self.start_due(boundary)
        report.closed = self._closes_since(last_event)
        report.reminders = self.send_reminders(now)
        sent, errors = self.flush_outbox(now)
        report.sent, report.send_errors = sent, errors
        self._clean_tmp(now)
        return report

    def _clean_tmp(self, now: datetime) -> None:
        """Leftovers of interrupted deliveries in the Maildirs' tmp/ go after a day (Maildir's rule)."""
        for transport in (self.inbox, self.outbox):
            clean = getattr(transport, "clean_tmp", None)
            if clean is None:
                continue
            try:
                removed = clean(now)
            except OSError as exc:
                log.warning("cleaning tmp/ of %s failed: %s", getattr(transport, "path", transport), exc)
                continue
            if removed:
                log.info("removed %d stale file(s) from tmp/ of %s", removed, getattr(transport, "path", transport))

    def _last_event_id(self) -> int:
        with self.store.unit_of_work() as session:
            return session.scalar(select(func.coalesce(func.max(Event.id), 0)))

    def _closes_since(self, event_id: int) -> int:
        """Steps closed (committed) since ``event_id``: also those a late-processed mail closed."""
        with self.store.unit_of_work() as session:
            return session.scalar(
                select(func.count()).select_from(Event).where(Event.id > event_id, Event.kind == "timeout")
            )

    def _next_times(self, now: datetime) -> tuple[datetime | None, datetime | None, datetime | None]:
        """The earliest pending mail arrival, match start and deadline, each at or before ``now``."""
        with self.store.unit_of_work() as session:
            mail = session.scalar(
                select(func.min(Inbound.received_at)).where(Inbound.status == "pending", Inbound.received_at <= now)
            )
            start = session.scalar(self._workable(select(func.min(Match.starts_at)).where(*start_due_by(now))))
            deadline = session.scalar(self._workable(select(func.min(Match.deadline)).where(*deadline_due_by(now))))
        return tuple(utc(t) for t in (mail, start, deadline))  # type: ignore[return-value]

    # ------------------------------------------------------------------ inbound

    def ingest(self, now: datetime) -> int:
        """Copy delivered mail into the database, then mark it processed at the transport
        (:mod:`referee.pipeline.ingest`). Never raises for a file or a mail."""
        if self.inbox is None:
            return 0
        return Ingest(self.store, self.inbox).run(now).stored

    def process_inbound(self, now: datetime, *, before: datetime | None = None) -> TickReport:
        """Judge pending mail that arrived by ``now`` (and before ``before``), in arrival order
        (:mod:`referee.pipeline.judge`)."""
        return Judge(self).process(now, before=before)

    # ------------------------------------------------------------------ starting and closing steps

    def start_due(self, now: datetime) -> int:
        """Start every scheduled match whose start has come."""
        return self._in_batches(
            select(Match).where(*start_due_by(now)).order_by(Match.starts_at, Match.id),
            "starting",
            self._start,
        )

    def _start(self, session: Session, match: Match) -> int:
        game = GAMES[match.game]
        players = [seat.player.key for seat in match.seats]
        # every chip in a match comes from the season ledger (a season file cannot set chips)
        balances = self.balances(session)
        options = {**match.options, "chips": {p: balances.get(match.season_id, p) for p in players}}
        match.options = options
        state = game.initial_state(match.seed, players, options)
        match.status = "running"
        self._log_event(session, match, "start", None, {"options": options}, match.starts_at)
        self._save_state(session, match, game, state, match.starts_at)
        log.info("match %s started at %s", match.key, iso(match.starts_at))
        self._announce_step(session, match, match.starts_at, first=True)
        return 1

    def close_due(self, now: datetime, match_id: int | None = None) -> int:
        """Close every step whose deadline has passed as of ``now`` (idempotent)."""
        query = select(Match).where(*deadline_due_by(now))
        if match_id is not None:
            query = query.where(Match.id == match_id)
        return self._in_batches(
            query.order_by(Match.deadline, Match.id),
            "closing its step",
            lambda session, match: self._close_until(session, match, now),
        )

    def _in_batches(self, query: Select, doing: str, work: Callable[[Session, Match], int]) -> int:
        """Run ``work`` on every match ``query`` finds, a batch of matches per transaction.

        A batch has no savepoints, so its writes go to the database together. If ``work``
        fails on one match (a bug), the batch is rolled back, that match is left as it was
        (logged; retried next tick) and the batch is redone without it. ``work`` must move
        each match out of ``query``'s reach, or the loop would not end.
        """
        total = 0
        while True:
            done = 0
            try:
                # no autoflush: the writes of a batch go out together at commit (the ledger
                # balances its work reads are kept current in memory: referee.store.balances)
                with self.store.unit_of_work(autoflush=False) as session:
                    matches = session.scalars(self._workable(query).limit(BATCH).options(*MATCH_CONTEXT)).all()
                    if not matches:
                        return total
                    self.preload_balances(session, matches)
                    for match in matches:
                        with self._isolated(match, doing):
                            done += work(session, match)
            except _Abandoned:
                continue  # rolled back; the failing match is in self._broken
            total += done

    def _workable(self, query: Select) -> Select:
        """``query`` without the matches that failed in this tick (left for the next)."""
        return query.where(Match.id.not_in(self._broken)) if self._broken else query

    @contextmanager
    def _isolated(self, match: Match, doing: str) -> Iterator[None]:
        """Turn a bug while working on one match into a rollback of its batch, without it."""
        try:
            yield
        except (StaleDataError, IntegrityError, OperationalError):
            raise  # another process got there first: roll back; the next tick re-checks
        except Exception as exc:
            log.exception("match %s: %s failed; left as it was", match.key, doing)
            self._broken.add(match.id)
            raise _Abandoned from exc

    def _close_until(self, session: Session, match: Match, until: datetime) -> int:
        """Close every step whose deadline is at or before ``until``.

        A step closes at its deadline, so a mail that arrives exactly then is late.
        """
        closed = 0
        while match.status == "running" and match.deadline is not None and match.deadline <= until:
            self._close_step(session, match)
            closed += 1
        return closed

    def _close_step(self, session: Session, match: Match) -> None:
        game = GAMES[match.game]
        at = match.deadline
        step_key = match.step_key
        step = game.step(match.state)
        missing = game.awaiting(match.state)
        # The settlement is judged against what each player holds in the season right now
        # (other matches settle too): the ledger's balance, recorded for replays.
        live = self.balances(session)
        balances = {seat.player.key: live.get(match.season_id, seat.player.key) for seat in match.seats}
        state = game.apply_timeout(game.with_balances(match.state, balances))
        after = game.step(state)
        if after is not None and after.key == step_key:
            # a deadline must move the match on, or its deadline would stay due forever
            raise GameError(f"{game.name}: apply_timeout left step {step_key} open")
        self._log_event(
            session,
            match,
            "timeout",
            None,
            {"missing": list(missing), "title": step.title, "balances": balances},
            at,
            step_key=step_key,
        )
        self._save_state(session, match, game, state, at)
        log.info(
            "match %s: %s closed at its deadline %s%s",
            match.key,
            step_key,
            iso(at),
            f" (no submission from {', '.join(missing)})" if missing else "",
        )
        self._announce_step(session, match, at)

    def _save_state(self, session: Session, match: Match, game: Game, state: State, at: datetime) -> None:
        """Store the new state, copy new chip movements into the ledger, and (re)open the step."""
        old = match.state or {"transfers": []}
        balances = self.balances(session)
        for seq, t in enumerate(state["transfers"][len(old["transfers"]) :], start=len(old["transfers"])):
            if t.get("currency", SEASON_CHIPS) != SEASON_CHIPS:
                continue  # a match's own chips stay in its state; the season ledger holds season chips
            entry = LedgerEntry(
                season_id=match.season_id,
                match_id=match.id,
                seq=seq,
                from_account=t["from"],
                to_account=t["to"],
                amount=t["amount"],
                reason=t["reason"],
                step_key=t.get("step"),
                at=at,
            )
            session.add(entry)
            balances.post(entry)
        match.state = state
        step = game.step(state)
        if step is None:
            if match.status != "finished":
                result = game.result(state)
                match.status, match.finished_at = "finished", at
                match.result = asdict(result) if result else None
                match.step_key = match.step_kind = match.deadline = match.remind_at = None
                log.info("match %s finished at %s: %s", match.key, iso(at), result.reason if result else "")
            return
        if step.key != match.step_key:
            match.step_key, match.step_kind, match.step_opened_at = step.key, step.kind, at
            match.deadline = at + timedelta(seconds=match.timing["steps"][step.kind])
            match.remind_at = next_reminder(match, after=at)

    def _announce_step(self, session: Session, match: Match, at: datetime, *, first: bool = False) -> None:
        """The mail every player gets when a step opens: what happened, what to do now, by when.

        The first one of a match starts each player's mail thread for it.
        """
        step = match.step_key or "final"
        for seat in match.seats:
            self._mail_player(
                session,
                "step",
                match,
                seat.player,
                dedupe=f"step:{match.key}:{step}:{seat.player.key}",
                at=at,
                thread_root=first,
            )

    # ------------------------------------------------------------------ reminders

    def send_reminders(self, now: datetime) -> int:
        """Remind players who still owe a submission, once per configured offset."""
        return self._in_batches(
            select(Match)
            .where(Match.status == "running", Match.remind_at <= now, Match.deadline > now)
            .order_by(Match.remind_at),
            "sending reminders",
            lambda session, match: self._remind(session, match, now),
        )

    def _remind(self, session: Session, match: Match, now: datetime) -> int:
        game = GAMES[match.game]
        offset = int((match.deadline - match.remind_at).total_seconds())
        sent = 0
        for seat in match.seats:
            if seat.player.key in game.awaiting(match.state):
                self._mail_player(
                    session,
                    "reminder",
                    match,
                    seat.player,
                    at=now,
                    dedupe=f"reminder:{match.key}:{match.step_key}:{seat.player.key}:{offset}",
                    extra={"left": duration(match.deadline - now)},
                )
                sent += 1
        match.remind_at = next_reminder(match, after=now)
        return sent

    # ------------------------------------------------------------------ outbound

    def flush_outbox(self, now: datetime) -> tuple[int, int]:
        """Deliver due outbox mail; failures are retried with growing delays, then marked failed."""
        if self.outbox is None:
            return 0, 0
        sent = errors = 0
        while True:
            with self.store.unit_of_work() as session:
                rows = session.scalars(
                    select(Outbox)
                    .where(Outbox.status == "pending", Outbox.next_attempt_at <= now)
                    .order_by(Outbox.id)
                    .limit(BATCH)
                ).all()
                if not rows:
                    return sent, errors
                for row in rows:
                    row.attempts += 1
                    try:
                        self.outbox.deliver(row.to_addr, row.message, row.dedupe_key, durable=False)
                    except Exception as exc:
                        errors += 1
                        row.last_error = f"{type(exc).__name__}: {exc}"[:2000]
                        if row.attempts >= self.config.outbox_max_attempts:
                            row.status = "failed"
                            log.error(
                                "outbox %s to %s: giving up after %d attempts: %s",
                                row.id,
                                row.to_addr,
                                row.attempts,
                                row.last_error,
                            )
                        else:
                            delay = RETRY_DELAYS[min(row.attempts - 1, len(RETRY_DELAYS) - 1)]
                            row.next_attempt_at = now + timedelta(seconds=delay)
                            log.warning(
                                "outbox %s to %s: attempt %d failed (%s); retry at %s",
                                row.id,
                                row.to_addr,
                                row.attempts,
                                row.last_error,
                                iso(row.next_attempt_at),
                            )
                        continue
                    row.status, row.sent_at = "sent", now
                    sent += 1
                self.outbox.sync()  # the batch is durable at the transport before it is marked sent

    # ------------------------------------------------------------------ composing mail

    def _mail_player(
        self,
        session: Session,
        kind: str,
        match: Match | None,
        player: Player,
        *,
        dedupe: str,
        at: datetime,
        reply_to_mail: Headers | None = None,
        extra: dict[str, Any] | None = None,
        thread_root: bool = False,
        inbound_id: int | None = None,
    ) -> None:
        """Render, compose and put one mail in the outbox. Each mail is written once: its
        dedupe key is unique in the outbox, and the transaction that writes it is the one
        that moves the match or the inbound mail on, so it cannot come round again."""
        context = self._context(match, player)
        context.update(extra or {})
        game_name = match.game if match is not None else "common"
        rendered = render_mail(game_name, kind, context)
        domain = self.config.mail.domain
        message_id = make_message_id(dedupe, domain)
        references: list[str] = []
        if match is not None:
            root = make_message_id(f"thread:{match.key}:{player.key}", domain)
            if thread_root:
                message_id = root
            else:
                references.append(root)
        in_reply_to = None
        if reply_to_mail is not None and reply_to_mail.message_id:
            in_reply_to = reply_to_mail.message_id
            references.extend(reply_to_mail.references)  # compose keeps each id once and trims the chain
            references.append(reply_to_mail.message_id)
        data = compose(
            from_addr=self.config.mail.address,
            from_name=self.config.mail.name,
            to_addr=player.email,
            to_name=player.name,
            reply_to=context.get("reply_to"),
            subject=rendered.subject,
            text=rendered.text,
            message_id=message_id,
            date=at,
            in_reply_to=in_reply_to,
            references=references,
            auto_submitted="auto-replied" if reply_to_mail is not None else "auto-generated",
            loop_value=self.loop_value,
        )
        session.add(
            Outbox(
                dedupe_key=dedupe,
                message_id=message_id,
                kind=kind,
                match_id=match.id if match else None,
                step_key=match.step_key if match else None,
                to_addr=player.email,
                inbound_id=inbound_id,
                message=data,
                status="pending",
                attempts=0,
                next_attempt_at=at,
                created_at=at,
            )
        )

    def _context(self, match: Match | None, player: Player) -> dict[str, Any]:
        ctx: dict[str, Any] = {
            "player": person(player),
            "match": None,
            "opponent": None,
            "players": [],
            "view": None,
            "form": None,
            "step": None,
            "deadline": None,
            "result": None,
            "reply_to": None,
        }
        if match is None:
            return ctx
        game = GAMES[match.game]
        seat = next(s for s in match.seats if s.player_id == player.id)
        others = [person(s.player) for s in match.seats if s.player_id != player.id]
        state = match.state
        step = game.step(state) if state is not None else None
        token = tokens.make_token(self.config.secret, seat.id, match.key, player.key)
        ctx.update(
            {
                "match": {"id": match.key, "title": game.title, "game": game.name, "season": match.season.name},
                "opponent": others[0] if len(others) == 1 else None,
                "players": [person(s.player) for s in match.seats],
                "view": game.view(state, player.key) if state is not None else None,
                "form": game.form(state, player.key) if step is not None else None,
                "step": {"key": step.key, "kind": step.kind, "title": step.title} if step else None,
                "deadline": local_time(match.deadline, player.timezone) if step and match.deadline else None,
                "result": match.result if match.status == "finished" else None,
                "reply_to": tokens.reply_address(self.config.mail.local, self.config.mail.domain, token),
            }
        )
        return ctx

    def _log_event(
        self,
        session: Session,
        match: Match,
        kind: str,
        player: str | None,
        payload: dict[str, Any],
        at: datetime,
        *,
        step_key: str | None = None,
        inbound_id: int | None = None,
    ) -> None:
        match.last_event_seq = seq = match.last_event_seq + 1
        session.add(
            Event(
                match_id=match.id,
                seq=seq,
                kind=kind,
                player=player,
                payload=payload,
                at=at,
                step_key=step_key or match.step_key,
                inbound_id=inbound_id,
            )
        )

    @staticmethod
    def balances(session: Session) -> Balances:
        """The live season balances of this unit of work (:mod:`referee.store.balances`)."""
        found = session.info.get("balances")
        if found is None:
            found = session.info["balances"] = Balances(session)
        return found

    def preload_balances(self, session: Session, matches: Sequence[Match]) -> None:
        """Read the balances of every player of ``matches`` at once, for a batch."""
        self.balances(session).preload((m.season_id, seat.player.key) for m in matches for seat in m.seats)


# ---------------------------------------------------------------------- helpers


def start_due_by(now: datetime) -> tuple[Any, ...]:
    """Where-clauses: scheduled matches whose start has come by ``now``."""
    return (Match.status == "scheduled", Match.starts_at <= now)


def deadline_due_by(now: datetime) -> tuple[Any, ...]:
    """Where-clauses: running matches whose deadline has passed by ``now``."""
    return (Match.status == "running", Match.deadline <= now)


def utc(value: datetime | None) -> datetime | None:
    """Aggregates (min, max) bypass the column type: make them aware UTC again."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=timezone.utc)


def person(player: Player) -> dict[str, str]:
    return {"id": player.key, "name": player.name, "email": player.email, "timezone": player.timezone}


def next_reminder(match: Match, *, after: datetime) -> datetime | None:
    """The earliest reminder instant for the open step that is still ahead of ``after``."""
    if match.deadline is None:
        return None
    for offset in sorted(match.timing.get("reminders", []), reverse=True):
        at = match.deadline - timedelta(seconds=offset)
        if at > after and at > (match.step_opened_at or after):
            return at
    return None
