"""Showing UTC instants to people, each in their own time zone."""

from __future__ import annotations

import functools
from datetime import datetime, timedelta, timezone


def local_time(dt: datetime, tz: str) -> str:
    """``Tue 1 Dec 2026, 19:00 CET (18:00 UTC)``; plain UTC when the zone is UTC."""
    return _local_time(dt.astimezone(timezone.utc), tz)


@functools.lru_cache(maxsize=4096)  # matches that share a deadline, players who share a zone
def _local_time(utc: datetime, tz: str, clock: str = "%H:%M") -> str:
    """``utc`` in ``tz``, its time of day written by the strftime ``clock``."""
    from zoneinfo import ZoneInfo  # here: `referee status` rarely shows a local time

    local = utc.astimezone(ZoneInfo(tz))
    text = f"{local:%a} {local.day} {local:%b %Y}, {local.strftime(clock)} {local.tzname()}"
    if local.utcoffset() != timedelta(0) or local.tzname() not in ("UTC", "GMT"):
        text += f" ({utc.strftime(clock)} UTC)"
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


def exact_time(dt: datetime, tz: str) -> str:
    """:func:`local_time`, with the seconds when the instant is not on a whole minute
    (``Tue 1 Dec 2026, 12:57:30 CET (11:57:30 UTC)``): a deadline or a start, which a
    season's step lengths ("45s") and a turn opened at a mail's arrival put at any second.
    A fraction of a second is cut, never rounded up: the time shown is never later than
    the instant."""
    utc = dt.astimezone(timezone.utc)
    if utc.second == 0 and utc.microsecond == 0:
        return local_time(utc, tz)
    return _local_time(utc.replace(microsecond=0), tz, "%H:%M:%S")
