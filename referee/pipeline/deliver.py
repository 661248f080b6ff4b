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
  server's answer, and never sent again.

A batch is claimed before it is sent (:meth:`Delivery._due`), so several processes on one
database, or two flushes at once, send each mail once. The database work runs in a worker
thread so that the event loop, which carries the transport's connections, stays free.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, select, update

from referee.mail.transport import MailSender, OutboundMail, SendResult
from referee.pipeline import BATCH
from referee.store.db import Store
from referee.store.models import Outbox
from referee.timefmt import iso

__all__ = ["Delivery", "RETRY_DELAYS"]

log = logging.getLogger("referee")

RETRY_DELAYS = (60, 300, 900, 3600, 3 * 3600, 6 * 3600, 12 * 3600)  # seconds between delivery attempts
ERROR_LIMIT = 2000  # characters of a failure kept in last_error
CLAIM_LEASE = timedelta(minutes=15)  # a claimed batch is sent again after this if its sender died

_TABLE = Outbox.__table__
_MARK_SENT = (
    update(_TABLE)
    .where(_TABLE.c.id == bindparam("b_id"), _TABLE.c.status == "pending")
    .values(status="sent", sent_at=bindparam("b_at"), attempts=bindparam("b_attempts"))
)


class Delivery:
    def __init__(self, store: Store, sender: MailSender, max_attempts: int, envelope_sender: str):
        self.store = store
        self.sender = sender
        self.max_attempts = max_attempts
        self.envelope_sender = envelope_sender

    async def flush(self, now: datetime) -> tuple[int, int]:
        """Deliver due outbox mail; returns (sent, failed attempts)."""
        sent = errors = 0
        while True:
            rows = await asyncio.to_thread(self._due, now)
            if not rows:
                return sent, errors
            results = await self._send_all(rows)
            await self.sender.sync()  # the batch is durable at the transport before it is marked sent
            done, failed = self._outcomes(rows, results, now)
            await asyncio.to_thread(self._record, done, failed)
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
                select(Outbox.id, Outbox.to_addr, Outbox.message, Outbox.dedupe_key, Outbox.attempts)
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
        mails = [OutboundMail(row.dedupe_key, self.envelope_sender, (row.to_addr,), row.message) for row in rows]
        limit = max(1, self.sender.concurrency)
        if limit == 1:  # one at a time, in order (no tasks to make)
            return [await self._send(mail) for mail in mails]
        gate = asyncio.Semaphore(limit)

        async def gated(mail: OutboundMail) -> SendResult:
            async with gate:
                return await self._send(mail)

        return list(await asyncio.gather(*(gated(mail) for mail in mails)))

    async def _send(self, mail: OutboundMail) -> SendResult:
        try:
            return await self.sender.send(mail)
        except Exception as exc:  # a transport's bug: nothing is lost, the mail is tried again
            log.exception("outbox: the transport failed on %s", mail.key)
            return SendResult.every(mail, "temporary", f"{type(exc).__name__}: {exc}")

    def _outcomes(
        self, rows: list[Any], results: list[SendResult], now: datetime
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        done: list[dict[str, Any]] = []
        failed: list[dict[str, Any]] = []
        for row, result in zip(rows, results, strict=True):
            attempts = row.attempts + 1
            if result.outcome == "sent":
                done.append({"b_id": row.id, "b_attempts": attempts, "b_at": now})
            else:
                failed.append(self._failed(row, attempts, result, now))
        return done, failed

    def _record(self, done: list[dict[str, Any]], failed: list[dict[str, Any]]) -> None:
        with self.store.unit_of_work() as session:
            connection = session.connection()
            if done:
                connection.execute(_MARK_SENT, done)
            for values in failed:
                connection.execute(update(_TABLE).where(_TABLE.c.id == values.pop("id")).values(**values))

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
