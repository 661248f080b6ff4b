"""Delivery: outbox rows -> the transport, whose answer decides what happens to each row.

Per batch of due rows: the mails go to the transport (:class:`~referee.mail.transport.MailSender`),
up to its ``concurrency`` at once; then the transport makes them durable (``sync``); then
one transaction records what became of each:

* **sent**: marked sent (only now: a crash before this delivers it again once the batch's
  claim has run out, and the Maildir transport keeps one copy per dedupe key);
* a **temporary** failure (a 4xx reply, a connection lost, a full disk; also a bug in the
  transport): tried again after a growing delay (``RETRY_DELAYS``), up to the configured
  number of attempts, then given up (status ``failed``);
* a **permanent** failure (a 5xx reply): recorded as ``failed`` at once, with the
  server's answer, and never sent again; it is a hard bounce of its recipient too
  (:meth:`referee.pipeline.bounce_book.BounceBook.refused`, in the same transaction).

Each mail leaves with the envelope sender of its own row, its signed bounce address
(:func:`referee.mail.bounces.bounce_address`), so that a bounce that comes back later names it.

With a DKIM key configured (``[dkim]``), each mail is signed as it is handed to the transport
(:class:`referee.mail.dkim.DkimSigner`, in a worker thread: RSA in Python is CPU work), at
every attempt, on a copy: the outbox row keeps the message as it was composed. A mail that
cannot be signed (a bug) is a temporary failure, like a transport's bug: it is not sent
unsigned.

A batch is claimed before it is sent (:meth:`Delivery._due`), so several processes on one
database, or two flushes at once, send each mail once. The database work runs in a worker
thread so that the event loop, which carries the transport's connections, stays free.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, select, update

from referee.mail.transport import MailSender, OutboundMail, SendResult
from referee.pipeline import BATCH
from referee.store.db import Store
from referee.store.models import Outbox
from referee.timefmt import iso

if TYPE_CHECKING:
    from referee.mail.dkim import DkimSigner
    from referee.pipeline.bounce_book import BounceBook

__all__ = ["Delivery", "RETRY_DELAYS"]

log = logging.getLogger("referee")

RETRY_DELAYS = (60, 300, 900, 3600, 3 * 3600, 6 * 3600, 12 * 3600)  # seconds between delivery attempts
ERROR_LIMIT = 2000  # characters of a failure kept in last_error
CLAIM_LEASE = timedelta(minutes=15)  # a claimed batch is sent again after this if its sender died

_TABLE = Outbox.__table__
_MARK_SENT = (
    update(_TABLE)
    .where(_TABLE.c.id == bindparam("b_id"), _TABLE.c.status == "pending")
    # a success clears the error of an earlier attempt (status shows only what still fails)
    .values(status="sent", sent_at=bindparam("b_at"), attempts=bindparam("b_attempts"), last_error=None)
)


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
    ):
        """``envelope_sender``: every mail's, unless ``bounce_address`` gives each row's own
        (from its outbox id); ``bounces`` records the transport's permanent refusals;
        ``signer`` DKIM-signs every mail as it is sent."""
        self.store = store
        self.sender = sender
        self.max_attempts = max_attempts
        self.envelope_sender = envelope_sender
        self.bounce_address = bounce_address
        self.bounces = bounces
        self.signer = signer

    async def flush(self, now: datetime) -> tuple[int, int]:
        """Deliver due outbox mail; returns (sent, failed attempts)."""
        sent = errors = 0
        while True:
            rows = await asyncio.to_thread(self._due, now)
            if not rows:
                return sent, errors
            results = await self._send_all(rows)
            await self.sender.sync()  # the batch is durable at the transport before it is marked sent
            done, failed, refused = self._outcomes(rows, results, now)
            await asyncio.to_thread(self._record, done, failed, refused, now)
            sent += len(done)
            errors += len(failed)

    def _due(self, now: datetime) -> list[Any]:
        """Claim a batch of due mail: its next attempt is put ``CLAIM_LEASE`` ahead in the
        same transaction, so that another process (or another flush) does not send it too;
        what becomes of each mail then sets the row for good. A process that dies while
        sending leaves its batch to be sent again once the lease is over. On PostgreSQL
        the rows are locked as they are claimed (``FOR UPDATE SKIP LOCKED``: two claimers
        never wait for each other, nor take the same rows); on SQLite the transaction
        holds the write lock from its start."""
        with self.store.unit_of_work() as session:
            query = (
                select(Outbox.id, Outbox.to_addr, Outbox.message, Outbox.dedupe_key, Outbox.attempts, Outbox.match_id)
                .where(Outbox.status == "pending", Outbox.next_attempt_at <= now)
                .order_by(Outbox.id)
                .limit(BATCH)
            )
            if session.get_bind().dialect.name == "postgresql":
                query = query.with_for_update(skip_locked=True)
            rows = list(session.execute(query).all())
            if rows:
                session.execute(
                    update(_TABLE)
                    .where(_TABLE.c.id.in_([row.id for row in rows]))
                    .values(next_attempt_at=now + CLAIM_LEASE)
                )
            return rows

    async def _send_all(self, rows: list[Any]) -> list[SendResult]:
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

    def _outcomes(
        self, rows: list[Any], results: list[SendResult], now: datetime
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        done: list[dict[str, Any]] = []
        failed: list[dict[str, Any]] = []
        refused: list[dict[str, Any]] = []  # the permanent failures: bounces of their recipients
        for row, result in zip(rows, results, strict=True):
            attempts = row.attempts + 1
            if result.outcome == "sent":
                done.append({"b_id": row.id, "b_attempts": attempts, "b_at": now})
            else:
                failed.append(self._failed(row, attempts, result, now))
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
        refused: list[dict[str, Any]] | None = None,
        now: datetime | None = None,
    ) -> None:
        with self.store.unit_of_work() as session:
            connection = session.connection()
            if done:
                connection.execute(_MARK_SENT, done)
            for values in failed:
                connection.execute(update(_TABLE).where(_TABLE.c.id == values.pop("id")).values(**values))
            if refused and self.bounces is not None and now is not None:
                self.bounces.refused(session, refused, now)

    def _failed(self, row: Any, attempts: int, result: SendResult, now: datetime) -> dict[str, Any]:
        """What a failed attempt changes in the row: the error, and the next attempt or the end."""
        last_error = (result.detail or result.outcome)[:ERROR_LIMIT]
        values: dict[str, Any] = {"id": row.id, "attempts": attempts, "last_error": last_error}
        if result.outcome == "permanent":
            values["status"] = "failed"
            log.error("outbox %s to %s: refused for good, not sent again: %s", row.id, row.to_addr, last_error)
            return values
        if attempts >= self.max_attempts:
            values["status"] = "failed"
            log.error("outbox %s to %s: giving up after %d attempts: %s", row.id, row.to_addr, attempts, last_error)
            return values
        delay = RETRY_DELAYS[min(attempts - 1, len(RETRY_DELAYS) - 1)]
        values["next_attempt_at"] = now + timedelta(seconds=delay)
        log.warning(
            "outbox %s to %s: attempt %d failed (%s); retry at %s",
            row.id,
            row.to_addr,
            attempts,
            last_error,
            iso(values["next_attempt_at"]),
        )
        return values
