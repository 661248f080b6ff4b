"""Delivery: outbox rows -> the transport, whose answer decides what happens to each row.

Per batch of due rows: the mails go to the transport (:class:`~referee.mail.transport.MailSender`),
up to its ``concurrency`` at once; then the transport makes them durable (``sync``); then
one transaction records what became of each:

* **sent**: marked sent (only now: a crash before this delivers it again at the next cycle,
  see the claims below, and the Maildir transport keeps one copy per dedupe key);
* a **temporary** failure (a 4xx reply, a connection lost, a full disk; also a bug in the
  transport): tried again after a growing delay (``RETRY_DELAYS``), up to the configured
  number of attempts, then given up (status ``failed``);
* a **permanent** failure (a 5xx reply): recorded as ``failed`` at once, with the
  server's answer, and never sent again; it is a hard bounce of its recipient too
  (:meth:`referee.pipeline.bounce_book.BounceBook.refused`, in the same transaction).

**Causes.** A temporary failure is recorded with its cause (``fail_cause``: the transport's
:data:`~referee.mail.transport.CAUSES`, else ``other``) and its time (``failed_at``). The
``disk`` (an outbox Maildir that cannot be written) and the ``server`` (an SMTP server away,
or refusing every mail for now) fail for every mail alike, so mail waiting for them does not
wait for its own retry time once they work again: after the first success that follows a
failure of one of them (a cause is *down* while its latest failure is later than the latest
success), every mail waiting for that cause is sent in the same flush. While a cause is down
and no mail of it is due, its oldest waiting mail is tried once a minute (``PROBE_EVERY``),
so that its end is noticed. Such an extra attempt (a probe, or a retry because the cause
cleared) does not count against the mail's attempts, nor move its own retry time. A
refusal of one recipient (``recipient``) and anything else (``other``) keep their own backoff.

**Step mails.** A step mail (kind ``step``: the mail that opens a step with its deadline)
is never put off past its step's deadline: its retry time is at most half the time left
(and at least ``SOONEST_RETRY`` ahead), and it is not given up while its deadline is ahead.
Its deadline is kept in the row (``deadline``, as delivery last found it), for ``referee
status``, which lists a step mail still undelivered once its deadline has passed.

**Mail that comes too late for the time it names.** Every mail about a step names the step's
deadline as a time still to come when it is written (the notices write it in the row's
``deadline``: :func:`referee.match.notices._promised`; a mail written once that deadline had
passed names none and says the step has closed). A mail not delivered before that deadline
(the disk full, the server away, a process down) would promise a time that has passed, so
when a claim finds the deadline past:

* a **reminder** is not sent at all: it is marked ``expired`` (with why, in ``last_error``),
  in the claim's own transaction, and logged; ``referee status`` counts it among the mail out
  ("expired"). A reminder that can no longer be heeded is no news; the step's own mails
  (its close, the next step) are.
* **any other mail** (a step mail with the results of the step before, a receipt, an error
  reply) still goes, as plain text with a note at its top that it comes late and that the step
  it speaks of has closed (:func:`referee.mail.compose.with_late_note`, no HTML part nor
  calendar event), ``Delivered late:`` before its subject. The note is written into the row
  in the claim's transaction, so a retry sends the same bytes, a reply is read against what
  the player got, and the archive's mbox holds it as sent.

Nothing is lost: a mail is sent or marked, never both and never neither, each once.

**Claims.** A batch is claimed before it is sent (:meth:`Delivery._due`), so several
processes on one database, or two flushes at once, send each mail once. A claim names its
holder (``claimed_by``: a :func:`referee.store.lease.holder`, held as the decide lease is,
for as long as the flush runs); a claim whose holder has ended (its process killed, or its
flush ended without recording the batch) is taken over at once by the next flush, and a
claim whose holder is alive is never taken. On PostgreSQL the rows are locked as they are
claimed (``FOR UPDATE SKIP LOCKED``: two claimers never wait for each other, nor take the
same rows); on SQLite the transaction holds the write lock from its start.

**Logs.** The failures of a flush are folded per cause (:class:`DeliveryFaults`): a WARNING
when a cause begins, then a line a minute with a count while it goes on, then an INFO line
when the disk or the server works again; each mail's own attempt is at DEBUG. A mail given
up or refused for good is an ERROR of its own.

Each mail leaves with the envelope sender of its own row, its signed bounce address
(:func:`referee.mail.bounces.bounce_address`), so that a bounce that comes back later names it.

With a DKIM key configured (``[dkim]``), each mail is signed as it is handed to the transport
(:class:`referee.mail.dkim.DkimSigner`, in a worker thread: RSA in Python is CPU work), at
every attempt, on a copy: the outbox row keeps the message as it was composed. A mail that
cannot be signed (a bug) is a temporary failure, like a transport's bug: it is not sent
unsigned.

The database work runs in a worker thread so that the event loop, which carries the
transport's connections, stays free.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, bindparam, func, or_, select, update
from sqlalchemy.orm import load_only

from referee.mail.compose import with_late_note
from referee.mail.transport import MailSender, OutboundMail, SendResult
from referee.match import opensteps
from referee.pipeline import BATCH
from referee.pipeline.clock import NOW
from referee.store import lease
from referee.store.db import Store
from referee.store.models import Match, Outbox
from referee.timefmt import iso

if TYPE_CHECKING:
    from referee.mail.dkim import DkimSigner
    from referee.pipeline.bounce_book import BounceBook

__all__ = ["Delivery", "DeliveryFaults", "PROBE_EVERY", "RETRY_DELAYS", "TRANSPORT_WIDE"]

log = logging.getLogger("referee")

RETRY_DELAYS = (60, 300, 900, 3600, 3 * 3600, 6 * 3600, 12 * 3600)  # seconds between delivery attempts
ERROR_LIMIT = 2000  # characters of a failure kept in last_error
TRANSPORT_WIDE = ("disk", "server")  # causes that fail every mail alike: their mail goes once they work
PROBE_EVERY = timedelta(seconds=RETRY_DELAYS[0])  # while one of them is down, a waiting mail tried this often
SOONEST_RETRY = timedelta(seconds=RETRY_DELAYS[0])  # a step mail's retry, brought before its deadline
FOLD_EVERY = timedelta(minutes=1)  # a cause still failing: a line this often (scheduler.faults' rule)
CAUSE_NAMES = {"disk": "the outbox disk", "server": "the mail server"}
CAUSE_WORDS = {
    "disk": "the outbox disk cannot be written",
    "server": "the mail server cannot take mail",
    "recipient": "refused for now by the recipient's server",
    "other": "failed",
}

_TABLE = Outbox.__table__
_MARK_SENT = (
    update(_TABLE)
    .where(_TABLE.c.id == bindparam("b_id"), _TABLE.c.status == "pending", _TABLE.c.claimed_by == bindparam("b_holder"))
    # a success clears the error of an earlier attempt (status shows only what still fails)
    .values(
        status="sent",
        sent_at=bindparam("b_at"),
        attempts=bindparam("b_attempts"),
        last_error=None,
        fail_cause=None,
        failed_at=None,
        claimed_by=None,
    )
)
_COLUMNS = (
    Outbox.id,
    Outbox.to_addr,
    Outbox.message,
    Outbox.dedupe_key,
    Outbox.attempts,
    Outbox.match_id,
    Outbox.kind,
    Outbox.step_key,
    Outbox.deadline,
    Outbox.next_attempt_at,
    Outbox.fail_cause,
    Outbox.claimed_by,
)
# The questions of every flush, built once with the instant as a bound parameter (SQLAlchemy
# then finds their compiled form without building and hashing them again); the claim's own
# query is built here for its usual case: no ended holder's claims to take over, no cause
# that worked again in this flush.
_ANY_PENDING = select(Outbox.id).where(Outbox.status == "pending").limit(1)
_LATEST_FAILURES = (
    select(Outbox.fail_cause, func.max(Outbox.failed_at))
    .where(Outbox.status == "pending", Outbox.fail_cause.in_(TRANSPORT_WIDE), Outbox.failed_at < NOW)
    .group_by(Outbox.fail_cause)
)
_LATEST_SUCCESS = select(func.max(Outbox.sent_at)).where(Outbox.sent_at < NOW)
_HOLDERS = select(Outbox.claimed_by).where(Outbox.status == "pending", Outbox.claimed_by.is_not(None)).distinct()
_CLAIM = (
    select(*_COLUMNS)
    .where(Outbox.status == "pending", Outbox.claimed_by.is_(None), Outbox.next_attempt_at <= NOW)
    .order_by(Outbox.id)
    .limit(BATCH)
)
_CLAIM_LOCKING = _CLAIM.with_for_update(skip_locked=True)  # PostgreSQL: rows another claim holds are passed
# the open steps of the matches a batch's step mails are about (their deadlines)
_STEP_MATCHES = (
    select(Match)
    .where(Match.id.in_(bindparam("ids", expanding=True)))
    .options(load_only(*(getattr(Match, name) for name in opensteps.LISTED_COLUMNS)))
)


@dataclass
class _Claimed:
    """A claimed row, as delivery needs it."""

    id: int
    to_addr: str
    message: bytes
    dedupe_key: str
    attempts: int
    match_id: int | None
    kind: str
    deadline: datetime | None  # a step mail's step deadline
    extra: bool  # a probe, or a retry because its cause cleared: not counted, its retry time kept
    fail_cause: str | None


@dataclass
class _Run:
    """One flush: its instant, its claim holder (taken at its first claim), the disk or server
    down as it began (cause -> its latest failure), the causes that worked again in it, and
    what failed in it."""

    now: datetime
    holder: lease.Holder | None = None
    down: dict[str, datetime] | None = None
    cleared: set[str] = field(default_factory=set)
    probed: bool = False
    sent: int = 0
    expired: int = 0  # reminders not sent: their deadline passed before they could go
    late: int = 0  # mails given the note that they come after the deadline they name
    failures: dict[str, list[str]] = field(default_factory=dict)  # cause -> details, in order
    taken_over: int = 0


class Delivery:
    def __init__(
        self,
        store: Store,
        sender: MailSender,
        max_attempts: int,
        envelope_sender: str,
        *,
        bounce_address: Callable[[int], str] | None = None,
        bounces: BounceBook | None = None,
        signer: DkimSigner | None = None,
        faults: DeliveryFaults | None = None,
    ):
        """``envelope_sender``: every mail's, unless ``bounce_address`` gives each row's own
        (from its outbox id); ``bounces`` records the transport's permanent refusals;
        ``signer`` DKIM-signs every mail as it is sent; ``faults``: the log's fold of the
        failures (by default the one kept for ``sender``, across flushes)."""
        self.store = store
        self.sender = sender
        self.max_attempts = max_attempts
        self.envelope_sender = envelope_sender
        self.bounce_address = bounce_address
        self.bounces = bounces
        self.signer = signer
        self.faults = faults if faults is not None else faults_for(sender)

    async def flush(self, now: datetime) -> tuple[int, int]:
        """Deliver due outbox mail; returns (sent, failed attempts)."""
        run = _Run(now)
        errors = 0
        try:
            while True:
                rows = await asyncio.to_thread(self._due, run)
                if rows is None:
                    break
                if not rows:
                    continue  # every mail claimed came too late to send: the next batch
                results = await self._send_all(rows)
                await self.sender.sync()  # the batch is durable at the transport before it is marked sent
                done, failed, refused = self._outcomes(rows, results, run)
                assert run.holder is not None  # taken by the claim
                await asyncio.to_thread(self._record, done, failed, refused, now, run.holder.key)
                run.sent += len(done)
                errors += len(failed)
                if done and run.down:  # the first success after the disk or the server failed
                    run.cleared |= set(run.down)
        finally:
            if run.holder is not None:
                run.holder.release()  # the claims end with their holder, however the flush ends
        if run.failures or self.faults.active():
            waiting = await asyncio.to_thread(self._waiting)
            self.faults.flushed(run, waiting)
        if run.expired or run.late:  # the mails were each logged at INFO; this is the flush's line
            said = [f"{run.expired} reminder(s) not sent, their deadline had passed"] if run.expired else []
            if run.late:
                said.append(f"{run.late} mail(s) past the deadline they name, given a note that they come late")
            log.warning("outbox: %s", "; ".join(said))
        return run.sent, errors

    # ------------------------------------------------------------------ claiming

    def _due(self, run: _Run) -> list[_Claimed] | None:
        """Claim a batch of due mail, naming this flush's holder in it: another process (or
        another flush) does not send it too while the holder lives; what becomes of each mail
        then sets the row for good. Due: mail whose retry time has come; mail waiting for a
        cause that worked again in this flush; at the flush's first claim, a probe of each
        cause down for ``PROBE_EVERY``; and mail claimed by a holder that has ended. A mail
        whose deadline has passed is marked or noted (:meth:`_too_late`). None when nothing
        was due."""
        now = run.now
        with self.store.unit_of_work() as session:
            if session.scalar(_ANY_PENDING) is None:
                # nothing waits (the outbox after every flush that sent it all): no mail is due,
                # no cause is down for waiting mail, and no claim names a holder
                run.down = {} if run.down is None else run.down
                return None
            postgresql = session.get_bind().dialect.name == "postgresql"
            if run.down is None:
                run.down = self._down(session, now)
            ended = self._ended(session, run)
            claimable = Outbox.claimed_by.is_(None)
            if ended:
                claimable = or_(claimable, Outbox.claimed_by.in_(sorted(ended)))
            wanted = [Outbox.next_attempt_at <= now]
            wanted += [and_(Outbox.fail_cause == cause, Outbox.failed_at < now) for cause in sorted(run.cleared)]
            base = select(*_COLUMNS).where(Outbox.status == "pending", claimable)
            if ended or run.cleared:
                query = base.where(or_(*wanted)).order_by(Outbox.id).limit(BATCH)
                if postgresql:
                    query = query.with_for_update(skip_locked=True)
                rows = list(session.execute(query).all())
            else:  # the usual case, asked with the statement built once
                rows = list(session.execute(_CLAIM_LOCKING if postgresql else _CLAIM, {"now": now}).all())
            if not run.probed:
                run.probed = True
                rows += self._probes(session, run, base, rows, postgresql)
            if not rows:
                return None
            if run.holder is None:
                run.holder = lease.holder(self.store)
            ids = [row.id for row in rows]
            session.execute(update(_TABLE).where(_TABLE.c.id.in_(ids)).values(claimed_by=run.holder.key))
            taken = sum(1 for row in rows if row.claimed_by is not None)
            if taken:
                run.taken_over += taken
                log.info(
                    "outbox: %d mail(s) claimed by a sender that has ended (a process stopped mid-send) sent now", taken
                )
            deadlines = self._deadlines(session, rows)
            if deadlines:
                session.connection().execute(
                    update(_TABLE).where(_TABLE.c.id == bindparam("b_id")).values(deadline=bindparam("b_deadline")),
                    [{"b_id": key, "b_deadline": at} for key, at in deadlines.items()],
                )
            expired, noted = self._too_late(session, rows, deadlines, run)
            return [
                _Claimed(
                    row.id,
                    row.to_addr,
                    noted.get(row.id, row.message),
                    row.dedupe_key,
                    row.attempts,
                    row.match_id,
                    row.kind,
                    deadlines.get(row.id, row.deadline),
                    row.next_attempt_at > now,
                    row.fail_cause,
                )
                for row in rows
                if row.id not in expired
            ]

    def _too_late(
        self, session: Any, rows: list[Any], deadlines: dict[int, datetime], run: _Run
    ) -> tuple[set[int], dict[int, bytes]]:
        """The claimed mails whose deadline (the time they name as still to come) has passed
        (see the module docstring): the reminders, marked ``expired`` and not sent (their
        ids); every other mail's message with the late note, written into its row (outbox
        id -> message). In the claim's transaction."""
        expired: list[dict[str, Any]] = []
        noted: dict[int, bytes] = {}
        for row in rows:
            deadline = deadlines.get(row.id, row.deadline)
            if deadline is None or deadline > run.now:
                continue
            passed = f"{deadline:%Y-%m-%d %H:%M:%S} UTC"
            if row.kind == "reminder":
                why = f"not sent: its deadline passed at {passed} before it could be delivered"
                expired.append({"b_id": row.id, "b_error": why})
                log.info("outbox %s: reminder to %s for %s %s", row.id, row.to_addr, row.step_key, why)
                continue
            message = with_late_note(row.message)
            if message != row.message:
                noted[row.id] = message
                log.info(
                    "outbox %s: %s mail to %s for %s: its deadline passed at %s; it goes with a note that it is late",
                    row.id,
                    row.kind,
                    row.to_addr,
                    row.step_key,
                    passed,
                )
        connection = session.connection()
        if expired:
            connection.execute(
                update(_TABLE)
                .where(_TABLE.c.id == bindparam("b_id"))
                .values(
                    status="expired",
                    last_error=bindparam("b_error"),
                    claimed_by=None,
                    fail_cause=None,
                    failed_at=None,
                ),
                expired,
            )
        if noted:
            connection.execute(
                update(_TABLE)
                .where(_TABLE.c.id == bindparam("b_id"))
                .values(message=bindparam("b_message"), shown=None),  # read from the new message
                [{"b_id": key, "b_message": message} for key, message in noted.items()],
            )
        run.expired += len(expired)
        run.late += len(noted)
        return {values["b_id"] for values in expired}, noted

    def _down(self, session: Any, now: datetime) -> dict[str, datetime]:
        """The disk or the server failing as this flush begins: the cause of waiting mail
        whose latest failure is later than the latest success (cause -> that failure)."""
        latest = dict(session.execute(_LATEST_FAILURES, {"now": now}).all())
        if not latest:
            return {}
        success = session.scalar(_LATEST_SUCCESS, {"now": now})
        return {cause: at for cause, at in latest.items() if at is not None and (success is None or at > success)}

    def _ended(self, session: Any, run: _Run) -> set[int]:
        """The holders named by claims in the outbox that have ended (not this flush's own)."""
        holders = set(session.scalars(_HOLDERS))
        if run.holder is not None:
            holders.discard(run.holder.key)
        return lease.gone(self.store, holders)

    def _probes(self, session: Any, run: _Run, base: Any, rows: list[Any], postgresql: bool) -> list[Any]:
        """For each cause down whose latest failure is ``PROBE_EVERY`` old, with no mail of
        it in the batch already: its oldest waiting mail, to see whether it works again."""
        found: list[Any] = []
        for cause, latest in sorted((run.down or {}).items()):
            if run.now - latest < PROBE_EVERY or any(row.fail_cause == cause for row in rows):
                continue
            query = base.where(Outbox.fail_cause == cause, Outbox.failed_at < run.now).order_by(Outbox.id).limit(1)
            if postgresql:
                query = query.with_for_update(skip_locked=True)
            probe = session.execute(query).first()
            if probe is not None and all(probe.id != row.id for row in rows):
                found.append(probe)
        return found

    def _deadlines(self, session: Any, rows: list[Any]) -> dict[int, datetime]:
        """The deadline of the step each step mail opens, while that step is open (outbox id ->
        deadline); the one kept in the row stands for a step no longer open."""
        steps = [row for row in rows if row.kind == "step" and row.match_id is not None and row.step_key]
        if not steps:
            return {}
        ids = sorted({row.match_id for row in steps})
        matches = {match.id: match for match in session.scalars(_STEP_MATCHES, {"ids": ids})}
        found: dict[int, datetime] = {}
        for row in steps:
            match = matches.get(row.match_id)
            if match is None:
                continue
            for step in opensteps.listed(match):
                if step.key == row.step_key and step.deadline is not None:
                    found[row.id] = step.deadline
        return found

    # ------------------------------------------------------------------ sending

    async def _send_all(self, rows: list[_Claimed]) -> list[SendResult]:
        mails = [OutboundMail(row.dedupe_key, self._envelope(row.id), (row.to_addr,), row.message) for row in rows]
        limit = max(1, self.sender.concurrency)
        if limit == 1:  # one at a time, in order (no tasks to make)
            return [await self._send(mail) for mail in mails]
        gate = asyncio.Semaphore(limit)

        async def gated(mail: OutboundMail) -> SendResult:
            async with gate:
                return await self._send(mail)

        return list(await asyncio.gather(*(gated(mail) for mail in mails)))

    def _envelope(self, outbox_id: int) -> str:
        """The envelope sender of a row: its bounce address, else the configured one."""
        return self.envelope_sender if self.bounce_address is None else self.bounce_address(outbox_id)

    async def _send(self, mail: OutboundMail) -> SendResult:
        if self.signer is not None:
            try:
                mail = await asyncio.to_thread(self.signer.sign_mail, mail)
            except Exception as exc:  # a bug: the mail is not sent unsigned, but tried again
                log.exception("outbox: DKIM signing failed on %s", mail.key)
                return SendResult.every(mail, "temporary", f"DKIM signing failed: {type(exc).__name__}: {exc}")
        try:
            return await self.sender.send(mail)
        except Exception as exc:  # a transport's bug: nothing is lost, the mail is tried again
            log.exception("outbox: the transport failed on %s", mail.key)
            return SendResult.every(mail, "temporary", f"{type(exc).__name__}: {exc}")

    # ------------------------------------------------------------------ recording

    def _outcomes(
        self, rows: list[_Claimed], results: list[SendResult], run: _Run
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        done: list[dict[str, Any]] = []
        failed: list[dict[str, Any]] = []
        refused: list[dict[str, Any]] = []  # the permanent failures: bounces of their recipients
        for row, result in zip(rows, results, strict=True):
            if result.outcome == "sent":
                done.append({"b_id": row.id, "b_attempts": row.attempts + 1, "b_at": run.now})
            else:
                values = self._failed(row, result, run.now)
                failed.append(values)
                if result.outcome == "temporary":
                    run.failures.setdefault(values["fail_cause"], []).append(values["last_error"])
                if result.outcome == "permanent":
                    reply = result.recipients.get(row.to_addr, ("permanent", ""))[1]
                    refused.append(
                        {
                            "outbox_id": row.id,
                            "to_addr": row.to_addr,
                            "match_id": row.match_id,
                            "detail": reply or result.detail,
                        }
                    )
        return done, failed, refused

    def _record(
        self,
        done: list[dict[str, Any]],
        failed: list[dict[str, Any]],
        refused: list[dict[str, Any]] | None,
        now: datetime,
        holder: int,
    ) -> None:
        """What became of a batch, in one transaction; each row only while this flush's
        holder still claims it."""
        with self.store.unit_of_work() as session:
            connection = session.connection()
            if done:
                connection.execute(_MARK_SENT, [{**values, "b_holder": holder} for values in done])
            for values in failed:
                row_id = values.pop("id")
                connection.execute(
                    update(_TABLE)
                    .where(_TABLE.c.id == row_id, _TABLE.c.claimed_by == holder)
                    .values(**values, claimed_by=None)
                )
            if refused and self.bounces is not None:
                self.bounces.refused(session, refused, now)

    def _failed(self, row: _Claimed, result: SendResult, now: datetime) -> dict[str, Any]:
        """What a failed attempt changes in the row: the error and its cause, and the next
        attempt or the end."""
        last_error = (result.detail or result.outcome)[:ERROR_LIMIT]
        cause = result.cause or "other"
        values: dict[str, Any] = {"id": row.id, "last_error": last_error, "fail_cause": cause, "failed_at": now}
        attempts = row.attempts + 1
        if result.outcome == "permanent":
            values.update(status="failed", attempts=attempts)
            log.error("outbox %s to %s: refused for good, not sent again: %s", row.id, row.to_addr, last_error)
            return values
        if row.extra:  # a probe, or a retry because its cause cleared: its own schedule stands
            log.debug("outbox %s to %s: extra attempt failed (%s: %s)", row.id, row.to_addr, cause, last_error)
            return values
        values["attempts"] = attempts
        step_ahead = row.kind == "step" and row.deadline is not None and row.deadline > now
        if attempts >= self.max_attempts and not step_ahead:
            values["status"] = "failed"
            log.error("outbox %s to %s: giving up after %d attempts: %s", row.id, row.to_addr, attempts, last_error)
            return values
        retry = now + timedelta(seconds=RETRY_DELAYS[min(attempts - 1, len(RETRY_DELAYS) - 1)])
        if step_ahead:
            assert row.deadline is not None
            retry = min(retry, now + max(SOONEST_RETRY, (row.deadline - now) / 2))
        values["next_attempt_at"] = retry
        log.debug(
            "outbox %s to %s: attempt %d failed (%s: %s); retry at %s",
            row.id,
            row.to_addr,
            attempts,
            cause,
            last_error,
            iso(retry),
        )
        return values

    def _waiting(self) -> dict[str, int]:
        """Mail waiting for another attempt, by the cause of its last failure."""
        with self.store.unit_of_work() as session:
            return dict(
                session.execute(
                    select(Outbox.fail_cause, func.count())
                    .where(Outbox.status == "pending", Outbox.fail_cause.is_not(None))
                    .group_by(Outbox.fail_cause)
                ).all()
            )


# --------------------------------------------------------------------------- the log's fold


@dataclass
class _Fault:
    since: datetime
    reported: datetime
    total: int
    unreported: int = 0
    example: str = ""


class DeliveryFaults:
    """The outbox's failures folded per cause, so that a fault of every cycle (a full disk, a
    server away) is not a line per mail per cycle: scheduler.faults.RepeatedFault's rule for
    many mails at once. When a cause begins failing: one WARNING with how many mails failed,
    an example and how many wait; while it goes on: a line a minute (``every``) with how many
    more attempts failed; when the disk or the server works again: one INFO line. A cause of
    single mails (a recipient's refusal, other errors) that has not failed for a minute is
    forgotten quietly (those mails wait for their own retry times)."""

    def __init__(self, logger: logging.Logger = log, every: timedelta = FOLD_EVERY):
        self.log = logger
        self.every = every
        self.faults: dict[str, _Fault] = {}

    def active(self) -> bool:
        return bool(self.faults)

    def flushed(self, run: _Run, waiting: dict[str, int]) -> None:
        """What one flush did (``run``), and the mail waiting after it by cause."""
        now = run.now
        for cause in sorted(set(run.failures) | set(self.faults)):
            details = run.failures.get(cause, [])
            words = CAUSE_WORDS.get(cause, cause)
            fault = self.faults.get(cause)
            if details and fault is None:
                self.faults[cause] = _Fault(now, now, len(details), 0, details[0])
                self.log.warning(
                    "outbox: %d mail(s) not delivered, %s: %s; %d waiting (%s)",
                    len(details),
                    words,
                    details[0],
                    waiting.get(cause, 0),
                    "sent as soon as it works again"
                    if cause in TRANSPORT_WIDE
                    else "each tried again at its own retry time",
                )
            elif details and fault is not None:
                fault.total += len(details)
                fault.unreported += len(details)
                fault.example = details[-1]
                if now - fault.reported >= self.every:
                    self.log.warning(
                        "outbox: still not delivered, %s: %d more failed attempts since %s (%d since %s);"
                        " %d mail(s) waiting: %s",
                        words,
                        fault.unreported,
                        f"{fault.reported:%H:%M:%S} UTC",
                        fault.total,
                        f"{fault.since:%Y-%m-%d %H:%M:%S} UTC",
                        waiting.get(cause, 0),
                        fault.example,
                    )
                    fault.unreported, fault.reported = 0, now
            elif fault is not None and cause in TRANSPORT_WIDE and run.sent:
                del self.faults[cause]
                self.log.info(
                    "outbox: %s works again after %d failed attempts from %s to %s; %d mail(s) sent now,"
                    " %d still waiting for it",
                    CAUSE_NAMES[cause],
                    fault.total,
                    f"{fault.since:%Y-%m-%d %H:%M:%S} UTC",
                    f"{now:%Y-%m-%d %H:%M:%S} UTC",
                    run.sent,
                    waiting.get(cause, 0),
                )
            elif fault is not None and cause not in TRANSPORT_WIDE and now - fault.reported >= self.every:
                del self.faults[cause]


_FAULTS: weakref.WeakKeyDictionary[Any, DeliveryFaults] = weakref.WeakKeyDictionary()


def faults_for(sender: Any) -> DeliveryFaults:
    """The fold of ``sender``'s failures, kept across flushes while the sender lives (a
    ``Delivery`` is made per flush; the transport lasts as long as its process's referee)."""
    try:
        found = _FAULTS.get(sender)
        if found is None:
            found = _FAULTS[sender] = DeliveryFaults()
        return found
    except TypeError:  # a sender that cannot be referred to weakly: a fold per flush
        return DeliveryFaults()
