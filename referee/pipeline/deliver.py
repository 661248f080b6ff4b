"""Delivery: outbox rows -> the transport; failures retried with growing delays.

A mail is marked sent only once its batch is durable at the transport
(``OutboxTransport.sync``); a crash before that delivers it again, and the transport
keeps one copy per dedupe key.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import bindparam, select, update

from referee.pipeline import BATCH
from referee.store.db import Store
from referee.store.models import Outbox
from referee.timefmt import iso

__all__ = ["Delivery", "OutboxTransport", "RETRY_DELAYS"]

log = logging.getLogger("referee")

RETRY_DELAYS = (60, 300, 900, 3600, 3 * 3600, 6 * 3600, 12 * 3600)  # seconds between delivery attempts


class OutboxTransport(Protocol):
    def deliver(self, recipient: str, data: bytes, key: str, *, durable: bool = True) -> Any: ...

    def sync(self) -> None:
        """Make every delivery made with ``durable=False`` durable."""


class Delivery:
    def __init__(self, store: Store, outbox: OutboxTransport, max_attempts: int):
        self.store = store
        self.outbox = outbox
        self.max_attempts = max_attempts

    def flush(self, now: datetime) -> tuple[int, int]:
        """Deliver due outbox mail; returns (sent, failed attempts).

        Per batch: one SELECT of what is due, the deliveries, one sync of the transport,
        then one executemany UPDATE of the rows sent (and one UPDATE per failure)."""
        sent = errors = 0
        table = Outbox.__table__
        mark_sent = (
            update(table)
            .where(table.c.id == bindparam("b_id"))
            .values(status="sent", sent_at=now, attempts=bindparam("b_attempts"))
        )
        while True:
            with self.store.unit_of_work() as session:
                rows = session.execute(
                    select(Outbox.id, Outbox.to_addr, Outbox.message, Outbox.dedupe_key, Outbox.attempts)
                    .where(Outbox.status == "pending", Outbox.next_attempt_at <= now)
                    .order_by(Outbox.id)
                    .limit(BATCH)
                ).all()
                if not rows:
                    return sent, errors
                done: list[dict[str, Any]] = []
                failed: list[dict[str, Any]] = []
                for row in rows:
                    attempts = row.attempts + 1
                    try:
                        self.outbox.deliver(row.to_addr, row.message, row.dedupe_key, durable=False)
                    except Exception as exc:
                        errors += 1
                        failed.append(self._failed(row, attempts, exc, now))
                        continue
                    done.append({"b_id": row.id, "b_attempts": attempts})
                    sent += 1
                self.outbox.sync()  # the batch is durable at the transport before it is marked sent
                connection = session.connection()
                if done:
                    connection.execute(mark_sent, done)
                for values in failed:
                    connection.execute(update(table).where(table.c.id == values.pop("id")).values(**values))

    def _failed(self, row: Any, attempts: int, exc: Exception, now: datetime) -> dict[str, Any]:
        """What a failed attempt changes in the row: the error, and the next attempt or the end."""
        last_error = f"{type(exc).__name__}: {exc}"[:2000]
        values: dict[str, Any] = {"id": row.id, "attempts": attempts, "last_error": last_error}
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
