"""Deadlines as iCalendar events (RFC 5545), for step mails and the players' feeds.

A deadline is an event that ends at the deadline (it starts :data:`LEAD` before, so that
a calendar shows a block of time to answer in, with an alarm an hour before the end). Its
``UID`` names the match, the step and the player, so a later mail about the same step
(the organizer extended it, or resumed the match) updates the same event: its ``SEQUENCE``
is the match's event number when it was written, which only grows, and grows with every
change of a deadline (each is an event of the match). Times are written in the player's
time zone (``DTSTART;TZID=...`` with a ``VTIMEZONE`` built from the zone database, giving
the zone's offsets and transitions around the deadline), or in UTC (``...Z``) for a player
in UTC or in a zone we cannot name.

Pure and deterministic: the same deadline gives the same bytes (``DTSTAMP`` is the
instant the mail is dated, given by the caller). No third-party package: the service
writes iCalendar, the tests read it back with ``icalendar``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["Deadline", "calendar", "deadline_event", "player_calendar", "uid_of"]

LEAD = timedelta(minutes=30)  # the event's length: it ends at the deadline
ALARM = "-PT1H"  # relative to the end: an hour before the deadline
PRODID = "-//referee//play-by-email deadlines//EN"
CRLF = "\r\n"
UID_DOMAIN = "referee.deadlines"
CALENDAR_NAME = "Play-by-email deadlines"  # the feed's name (no player-supplied text: it is published)
_UTC_NAMES = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "UCT", "Zulu", "Etc/Zulu", "GMT", "Etc/GMT", "Universal"})


@dataclass(frozen=True)
class Deadline:
    """One deadline of one player: a step of a match they must answer by ``at``."""

    season: str  # the season's key
    match: str  # the match's key (unique in the service)
    step: str  # the step's key
    player: str  # the player's key
    at: datetime  # the deadline, timezone-aware
    summary: str  # e.g. "Deadline: Indian Poker m1, Hand 1, turn 1"
    description: str = ""
    url: str | None = None  # the match in the archive, when it is published
    sequence: int = 0  # the match's event number when written (grows when the deadline moves)


def uid_of(season: str, match: str, step: str, player: str) -> str:
    """The event's UID: the same for every mail about this step of this match to this player,
    and in the player's feed (``referee calendar``, the archive's ``deadlines.ics``)."""
    safe = ".".join(re.sub(r"[^A-Za-z0-9_-]+", "_", part) for part in (season, match, step, player))
    return f"deadline.{safe}@{UID_DOMAIN}"


def calendar(deadlines: Sequence[Deadline], tz: str, *, stamp: datetime, name: str = "") -> str:
    """A ``VCALENDAR`` (``METHOD:PUBLISH``) of ``deadlines``, with times in ``tz`` (a zone
    of the zone database, else UTC), as text with CRLF line ends, folded at 75 octets."""
    zone = _zone(tz)
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", f"PRODID:{PRODID}", "CALSCALE:GREGORIAN", "METHOD:PUBLISH"]
    if name:
        lines.append(f"X-WR-CALNAME:{_text(name)}")
    if zone is not None and deadlines:
        lines.append(f"X-WR-TIMEZONE:{tz}")
        lines += _vtimezone(tz, zone, tuple(sorted(d.at.astimezone(timezone.utc) for d in deadlines)))
    for d in deadlines:
        lines += deadline_event(d, tz, stamp=stamp)
    lines.append("END:VCALENDAR")
    return "".join(_fold(line) + CRLF for line in lines)


def deadline_event(d: Deadline, tz: str, *, stamp: datetime) -> list[str]:
    """The ``VEVENT`` of one deadline, as unfolded content lines."""
    zone = _zone(tz)
    lines = [
        "BEGIN:VEVENT",
        f"UID:{uid_of(d.season, d.match, d.step, d.player)}",
        f"SEQUENCE:{max(0, int(d.sequence))}",
        f"DTSTAMP:{_utc(stamp)}",
        _when("DTSTART", d.at - LEAD, tz, zone),
        _when("DTEND", d.at, tz, zone),
        f"SUMMARY:{_text(d.summary)}",
    ]
    if d.description:
        lines.append(f"DESCRIPTION:{_text(d.description)}")
    if d.url:
        lines.append(f"URL:{d.url}")
    lines += [
        "TRANSP:TRANSPARENT",
        "STATUS:CONFIRMED",
        "BEGIN:VALARM",
        "ACTION:DISPLAY",
        f"DESCRIPTION:{_text(d.summary)}",
        f"TRIGGER;RELATED=END:{ALARM}",
        "END:VALARM",
        "END:VEVENT",
    ]
    return lines


# ---------------------------------------------------------------------- a player's feed


def player_calendar(session, season_id: int, player_key: str, now: datetime) -> bytes:  # type: ignore[no-untyped-def]
    """Every upcoming deadline (after ``now``) of ``player_key`` in the season: each open
    step of a running match in which the player must act, as an ``.ics`` file (UTF-8, CRLF).
    Empty of events (but a valid calendar) when there is none."""
    from sqlalchemy import select

    from referee.games import GAMES
    from referee.games.base import open_steps
    from referee.match import opensteps
    from referee.store.models import Match, Player, Seat

    player = session.scalar(select(Player).where(Player.season_id == season_id, Player.key == player_key))
    if player is None:
        raise KeyError(f"no player {player_key!r} in this season")
    matches = session.scalars(
        select(Match)
        .join(Seat, Seat.match_id == Match.id)
        .where(Seat.player_id == player.id, Match.status == "running")
        .order_by(Match.id)
    )
    deadlines: list[Deadline] = []
    for match in matches:
        game = GAMES[match.game]
        if match.state is None:
            continue
        steps = {s.key: s for s in open_steps(game, match.state)}
        for entry in opensteps.listed(match):
            step = steps.get(entry.key)
            if step is None or entry.deadline is None or entry.deadline <= now or player.key not in step.players:
                continue
            deadlines.append(
                Deadline(
                    season=match.season.key,
                    match=match.key,
                    step=step.key,
                    player=player.key,
                    at=entry.deadline,
                    summary=summary(game.title, match.key, step.title),
                    description=f"Send your move for {step.title} of {game.title} match {match.key} by mail.",
                    url=None,
                    sequence=match.last_event_seq,
                )
            )
    deadlines.sort(key=lambda d: (d.at, d.match, d.step))
    text = calendar(deadlines, player.zone, stamp=now, name=CALENDAR_NAME)
    return text.encode("utf-8")


def summary(title: str, match: str, step: str) -> str:
    return f"Deadline: {title} {match}, {step}"


# ---------------------------------------------------------------------- content lines


def _zone(tz: str) -> ZoneInfo | None:
    """The zone of the zone database named ``tz``; None for UTC (written as ``...Z``) or a
    name the database does not know."""
    if not tz or tz in _UTC_NAMES:
        return None
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _utc(at: datetime) -> str:
    return at.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _when(name: str, at: datetime, tz: str, zone: ZoneInfo | None) -> str:
    if zone is None:
        return f"{name}:{_utc(at)}"
    return f"{name};TZID={tz}:{at.astimezone(zone).strftime('%Y%m%dT%H%M%S')}"


def _text(value: str) -> str:
    """A TEXT value (RFC 5545 3.3.11): backslash, semicolon, comma and line ends escaped;
    other control characters dropped."""
    value = value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
    value = value.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return _CONTROLS.sub("", value)


_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f]")  # below a space, but the tab


def _fold(line: str) -> str:
    """A content line folded at 75 octets (RFC 5545 3.1), never inside a UTF-8 sequence."""
    if line.isascii():  # a character is an octet
        if len(line) <= 75:
            return line
        return (CRLF + " ").join([line[:75]] + [line[i : i + 74] for i in range(75, len(line), 74)])
    data = line.encode("utf-8")
    if len(data) <= 75:
        return line
    out: list[str] = []
    chunk, size, limit = [], 0, 75
    for ch in line:
        n = len(ch.encode("utf-8"))
        if size + n > limit:
            out.append("".join(chunk))
            chunk, size, limit = [], 0, 74  # a continuation line starts with a space
        chunk.append(ch)
        size += n
    out.append("".join(chunk))
    return (CRLF + " ").join(out)


# ---------------------------------------------------------------------- VTIMEZONE


@lru_cache(maxsize=1024)
def _vtimezone(tz: str, zone: ZoneInfo, times: tuple[datetime, ...]) -> tuple[str, ...]:
    """A ``VTIMEZONE`` for ``tz`` that covers ``times`` (UTC, sorted): the offset in force a
    year before the first of them, then each transition (from the zone database) up to a
    year after the last, as ``STANDARD``/``DAYLIGHT`` observances that each start at their
    transition. Remembered: the mails of one close share their deadline."""
    start, end = times[0] - timedelta(days=366), times[-1] + timedelta(days=366)
    lines = ["BEGIN:VTIMEZONE", f"TZID:{tz}"]
    first = start.astimezone(zone)
    lines += _observance(first, first.utcoffset(), datetime(1970, 1, 1))
    for before, after in _transitions(zone, start, end):
        local_start = after.astimezone(zone)
        # DTSTART is the local time of the onset, in the offset in force before it
        onset = (after.astimezone(timezone.utc) + before.utcoffset()).replace(tzinfo=None)  # type: ignore[operator]
        lines += _observance(local_start, before.utcoffset(), onset)
    lines.append("END:VTIMEZONE")
    return tuple(lines)


def _observance(local: datetime, offset_from: timedelta | None, onset: datetime) -> list[str]:
    kind = "DAYLIGHT" if local.dst() else "STANDARD"
    out = [
        f"BEGIN:{kind}",
        f"DTSTART:{onset.strftime('%Y%m%dT%H%M%S')}",
        f"TZOFFSETFROM:{_offset(offset_from or timedelta())}",
        f"TZOFFSETTO:{_offset(local.utcoffset() or timedelta())}",
    ]
    name = local.tzname()
    if name:
        out.append(f"TZNAME:{_text(name)}")
    out.append(f"END:{kind}")
    return out


def _offset(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    sign = "-" if seconds < 0 else "+"
    seconds = abs(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours:02d}{minutes:02d}" + (f"{secs:02d}" if secs else "")


def _transitions(zone: ZoneInfo, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The zone's transitions after ``start`` up to ``end`` (UTC): (the last instant
    before, the first instant after) each, both aware in ``zone``. Read from the
    transitions of each calendar year (UTC) they span, found once per zone and year."""
    out: list[tuple[datetime, datetime]] = []
    for year in range(start.year, end.year + 1):
        out += [pair for pair in _year_transitions(zone, year) if start < pair[1] <= end]
    return out


@lru_cache(maxsize=4096)
def _year_transitions(zone: ZoneInfo, year: int) -> tuple[tuple[datetime, datetime], ...]:
    """The zone's transitions whose first instant after falls in ``year`` (UTC; after its
    first instant, up to and including the next year's): found day by day, then to the
    second by bisection. Remembered: a step mail's calendar costs a lookup, not a scan of
    two years of days (the zone database does not change while the process runs)."""
    out = []
    step = timedelta(days=1)
    t = datetime(year, 1, 1, tzinfo=timezone.utc)
    end = datetime(year + 1, 1, 1, tzinfo=timezone.utc)
    key = _state(zone, t)
    while t < end:
        u = t + step
        k = _state(zone, u)
        if k != key:
            lo, hi = t, u
            while hi - lo > timedelta(seconds=1):
                mid = lo + (hi - lo) / 2
                mid = mid.replace(microsecond=0)
                if mid <= lo:
                    break
                if _state(zone, mid) == key:
                    lo = mid
                else:
                    hi = mid
            out.append((hi.astimezone(zone) - timedelta(seconds=1), hi.astimezone(zone)))
            key = k
        t = u
    return tuple(out)


def _state(zone: ZoneInfo, at: datetime) -> tuple[timedelta | None, timedelta | None, str | None]:
    local = at.astimezone(zone)
    return local.utcoffset(), local.dst(), local.tzname()
