"""issue 23: a fault that repeats every cycle is logged once with its cause, then a line a
minute with a count, then once when it clears (scheduler.faults), instead of an ERROR with a
traceback every cycle (1,850 lines for 90 s of a full disk)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

from scheduler.faults import RepeatedFault

T0 = datetime(2026, 12, 4, 12, 0, tzinfo=timezone.utc)


def test_a_fault_of_every_cycle_is_logged_once_then_a_line_a_minute_then_when_it_clears(caplog):
    now = [T0]
    fault = RepeatedFault("the cycle", logging.getLogger("referee.test"), lambda: now[0])
    caplog.set_level(logging.INFO, logger="referee.test")
    full = OSError(28, "No space left on device")
    for second in range(0, 90, 1):  # a cycle a second for 90 s
        now[0] = T0 + timedelta(seconds=second)
        fault.failed(full, "the next poll retries")
    now[0] = T0 + timedelta(seconds=95)
    fault.succeeded()
    fault.succeeded()  # nothing more: it cleared once
    records = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in records] == ["ERROR", "WARNING", "INFO"], records
    assert "the cycle failed: OSError: [Errno 28] No space left on device; the next poll retries" in records[0][1]
    assert caplog.records[0].exc_info is not None  # the traceback, once
    assert "still failing: 60 more times" in records[1][1]
    assert "works again: it failed 90 times" in records[2][1]


def test_a_new_cause_is_logged_at_once():
    now = [T0]
    seen: list[str] = []

    class Log:
        def error(self, msg, *args, **kwargs):
            seen.append("ERROR " + msg % args)

        def warning(self, msg, *args, **kwargs):
            seen.append("WARNING " + msg % args)

        def info(self, msg, *args, **kwargs):
            seen.append("INFO " + msg % args)

    fault = RepeatedFault("the cycle", Log(), lambda: now[0])  # type: ignore[arg-type]
    fault.failed(OSError("disk full"))
    fault.failed(ConnectionError("database away"))
    assert [line.split(":")[0] for line in seen] == ["ERROR the cycle failed", "ERROR the cycle failed"]
    assert "ConnectionError: database away" in seen[1]
