"""Showing UTC instants to people, each in their own time zone."""

from __future__ import annotations

import functools
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo


def local_time(dt: datetime, tz: str) -> str:
    """``Tue 1 Dec 2026, 19:00 CET (18:00 UTC)``; plain UTC when the zone is UTC."""
    return _local_time(dt.astimezone(timezone.utc), tz)


@functools.lru_cache(maxsize=4096)  # matches that share a deadline, players who share a zone
def _local_time(utc: datetime, tz: str) -> str:
    local = utc.astimezone(ZoneInfo(tz))
    text = f"{local:%a} {local.day} {local:%b %Y, %H:%M} {local.tzname()}"
    if local.utcoffset() != timedelta(0) or local.tzname() not in ("UTC", "GMT"):
        text += f" ({utc:%H:%M} UTC)"
    return text


def duration(td: timedelta) -> str:
    """``1 day 2 hours``, ``45 minutes``, ``30 seconds``."""
    total = int(td.total_seconds())
    if total <= 0:
        return "no time"
    parts = []
    for size, name in ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
        n, total = divmod(total, size)
        if n:
            parts.append(f"{n} {name}{'' if n == 1 else 's'}")
        if len(parts) == 2:
            break
    return " ".join(parts)


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
