"""A fault that comes back every cycle (the database or the outbox disk full, the mail server
away), logged so that an organizer reads the log and knows what is going on, without a
traceback a cycle: once with its cause and traceback when it begins (or its cause changes),
then one line a minute with how often it came back meanwhile, then once when it clears.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

__all__ = ["RepeatedFault"]

EVERY = timedelta(minutes=1)


class RepeatedFault:
    """The faults of one job (``what``: "the cycle", "building the archive", ...)."""

    def __init__(self, what: str, log: logging.Logger, clock: Callable[[], datetime], every: timedelta = EVERY):
        self.what = what
        self.log = log
        self.clock = clock
        self.every = every
        self.cause: str | None = None  # the fault under way, None when the job works
        self.since: datetime | None = None
        self.total = 0  # failures since it began
        self.unreported = 0  # failures since the last line
        self.reported: datetime | None = None

    def failed(self, exc: BaseException, hint: str = "") -> None:
        """One more failure of the job (call from its ``except``)."""
        now = self.clock()
        cause = f"{type(exc).__name__}: {exc}"[:500]
        if cause != self.cause:  # a new fault (or a new cause): its traceback, once
            self.cause, self.since, self.total, self.unreported, self.reported = cause, now, 1, 0, now
            self.log.error("%s failed: %s%s", self.what, cause, f"; {hint}" if hint else "", exc_info=exc)
            return
        self.total += 1
        self.unreported += 1
        if self.reported is None or now - self.reported >= self.every:
            self.log.warning(
                "%s still failing: %d more times since %s (%d since %s): %s",
                self.what,
                self.unreported,
                f"{self.reported:%H:%M:%S} UTC" if self.reported else "then",
                self.total,
                f"{self.since:%Y-%m-%d %H:%M:%S} UTC" if self.since else "?",
                cause,
            )
            self.unreported, self.reported = 0, now

    def succeeded(self) -> None:
        """The job worked (call after it did): a fault under way has cleared."""
        if self.cause is None:
            return
        self.log.info(
            "%s works again: it failed %d times from %s to %s (%s)",
            self.what,
            self.total,
            f"{self.since:%Y-%m-%d %H:%M:%S} UTC" if self.since else "?",
            f"{self.clock():%Y-%m-%d %H:%M:%S} UTC",
            self.cause,
        )
        self.cause, self.since, self.total, self.unreported, self.reported = None, None, 0, 0, None
