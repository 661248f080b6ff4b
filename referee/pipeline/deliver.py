"""Delivery: outbox rows -> the transport; failures retried with growing delays.

A mail is marked sent only once its batch is durable at the transport
(``OutboxTransport.sync``); a crash before that delivers it again, and the transport
keeps one copy per dedupe key.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import select

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
        """Deliver due outbox mail; returns (sent, failed attempts)."""
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
                        self._failed(row, exc, now)
                        continue
                    row.status, row.sent_at = "sent", now
                    sent += 1
                self.outbox.sync()  # the batch is durable at the transport before it is marked sent

    def _failed(self, row: Outbox, exc: Exception, now: datetime) -> None:
        row.last_error = f"{type(exc).__name__}: {exc}"[:2000]
        if row.attempts >= self.max_attempts:
            row.status = "failed"
            log.error(
                "outbox %s to %s: giving up after %d attempts: %s", row.id, row.to_addr, row.attempts, row.last_error
            )
            return
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
