"""Issue 22, calendar deadlines: the step mail's iCalendar event, parsed back with
``icalendar``.

A step mail that sets a deadline for its reader carries an ``.ics`` attachment
(``application/ics``, ``METHOD:PUBLISH``; not ``text/calendar``, which mutt quotes in
replies): one event that ends at the deadline, in the reader's time zone (with its
``VTIMEZONE``), or in UTC; its UID names the match, the step and the player; when the
organizer extends the step, the mail that says so carries the same event, moved, its
SEQUENCE raised. ``referee.mail.calendar.player_calendar`` (``referee calendar``, the
archive's feed) gives the same events.
"""

from __future__ import annotations

import email
import email.policy
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import icalendar
import pytest
from sqlalchemy import select

from referee.mail.calendar import Deadline, calendar, player_calendar, uid_of
from referee.season.controls import Controls
from referee.store.models import Match, Outbox, Player
from tests.migrated import migrated_sqlite
from tests.service.harness import SEASON, START, World

HOUR = timedelta(hours=1)
ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo")


def _world(tmp_path, zone: str) -> World:
    season = {
        **SEASON,
        "players": [
            {**SEASON["players"][0], "timezone": zone},
            {**SEASON["players"][1], "timezone": "UTC"},
        ],
        "matches": [{**SEASON["matches"][0], "game": "indian-poker", "options": {"dmo": "alice"}}],
    }
    url = migrated_sqlite(tmp_path / "referee.db")
    return World(tmp_path / "world", url, season)


def _events(raw: bytes) -> list[tuple[icalendar.Calendar, icalendar.Event]]:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    out = []
    for part in msg.walk():
        if part.get_filename() == "deadline.ics":
            assert part.get_content_type() == "application/ics"
            assert part.get_content_disposition() == "attachment"
            cal = icalendar.Calendar.from_ical(part.get_payload(decode=True))
            assert str(cal["METHOD"]) == "PUBLISH"
            out += [(cal, ev) for ev in cal.walk("VEVENT")]
    return out


def _rows(world: World, **where) -> list[Outbox]:
    with world.store.unit_of_work() as session:
        query = select(Outbox).order_by(Outbox.id)
        for key, value in where.items():
            query = query.where(getattr(Outbox, key) == value)
        return list(session.scalars(query))


def _match(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


@pytest.mark.parametrize("zone", ZONES)
def test_the_step_mail_carries_the_deadline_in_the_players_zone(tmp_path, zone):
    world = _world(tmp_path, zone)
    world.tick(START)
    match = _match(world)
    deadline = match.deadline
    acting = [r for r in _rows(world, kind="step") if r.form]
    waiting = [r for r in _rows(world, kind="step") if not r.form]
    assert acting and waiting
    assert all(not _events(r.message) for r in waiting)  # nothing to answer: no deadline of theirs
    (row,) = acting
    ((cal, event),) = _events(row.message)
    player = "alice" if row.to_addr.startswith("alice") else "bob"
    player_zone = zone if player == "alice" else "UTC"
    assert str(cal["METHOD"]) == "PUBLISH" and str(cal["VERSION"]) == "2.0"
    assert str(event["UID"]) == uid_of("test", "m1", row.step_key, player)
    end = event["DTEND"].dt
    assert end == deadline  # the same instant
    if player_zone == "UTC":
        assert end.utcoffset() == timedelta(0)
    else:
        assert event["DTEND"].params["TZID"] == zone
        assert [tz["TZID"] for tz in cal.walk("VTIMEZONE")] == [zone]
        local = deadline.astimezone(ZoneInfo(zone))
        assert (end.year, end.month, end.day, end.hour, end.minute) == (
            local.year,
            local.month,
            local.day,
            local.hour,
            local.minute,
        )
        assert end.utcoffset() == local.utcoffset()
    assert event["DTSTART"].dt < end


@pytest.mark.parametrize("zone", ZONES)
def test_the_event_in_three_zones_is_the_same_instant(zone):
    """Winter and summer time alike: the deadline read back is the instant written."""
    for at in (datetime(2026, 12, 9, 18, 0, tzinfo=timezone.utc), datetime(2027, 7, 1, 6, 30, tzinfo=timezone.utc)):
        d = Deadline("s1", "m1", "round-1", "alice", at, "Deadline: Stationary Roulette m1, Round 1", sequence=3)
        cal = icalendar.Calendar.from_ical(calendar([d], zone, stamp=at - HOUR))
        (event,) = cal.walk("VEVENT")
        assert event["DTEND"].dt == at
        assert event["DTEND"].dt.utcoffset() == at.astimezone(ZoneInfo(zone)).utcoffset()
        assert event["DTEND"].params["TZID"] == zone
        assert event["SEQUENCE"] == 3
        assert str(event["SUMMARY"]) == "Deadline: Stationary Roulette m1, Round 1"
    text = calendar([d], zone, stamp=at)
    assert all(len(line.encode()) <= 75 for line in text.split("\r\n"))
    assert text.endswith("END:VCALENDAR\r\n") and "\n" not in text.replace("\r\n", "")


def test_an_extension_moves_the_event_and_raises_its_sequence(tmp_path):
    world = _world(tmp_path, "Europe/Berlin")
    world.tick(START)
    (step_row,) = [r for r in _rows(world, kind="step") if r.form]
    ((_, before),) = _events(step_row.message)
    Controls(world.store, world.referee.book, world.referee.notices).extend("m1", None, 12 * HOUR, START + HOUR)
    told = [r for r in _rows(world, kind="organizer") if r.to_addr == step_row.to_addr]
    assert told
    ((_, after),) = _events(told[-1].message)
    assert str(after["UID"]) == str(before["UID"])
    assert after["SEQUENCE"] > before["SEQUENCE"]
    assert after["DTEND"].dt == before["DTEND"].dt + 12 * HOUR == _match(world).deadline
    # the player's feed says the same
    player = "alice" if step_row.to_addr.startswith("alice") else "bob"
    with world.store.unit_of_work() as session:
        season_id = session.scalar(select(Player.season_id).where(Player.key == player))
        feed = icalendar.Calendar.from_ical(player_calendar(session, season_id, player, START + 2 * HOUR))
    (event,) = feed.walk("VEVENT")
    assert str(event["UID"]) == str(after["UID"])
    assert event["DTEND"].dt == after["DTEND"].dt
    assert event["SEQUENCE"] >= after["SEQUENCE"]
    # after the deadline, nothing is upcoming
    with world.store.unit_of_work() as session:
        late = icalendar.Calendar.from_ical(player_calendar(session, season_id, player, START + 30 * 24 * HOUR))
    assert late.walk("VEVENT") == []


def test_referee_calendar_writes_the_players_upcoming_deadlines(tmp_path):
    from referee.cli import main

    world = _world(tmp_path, "Asia/Tokyo")
    world.tick(START)
    (row,) = [r for r in _rows(world, kind="step") if r.form]
    player = "alice" if row.to_addr.startswith("alice") else "bob"
    out = tmp_path / "deadlines.ics"
    config = str(world.dir / "referee.toml")
    assert main(["--config", config, "calendar", player, str(out), "--now", (START + HOUR).isoformat()]) == 0
    (event,) = icalendar.Calendar.from_ical(out.read_bytes()).walk("VEVENT")
    assert event["DTEND"].dt == _match(world).deadline
    ((_, mailed),) = _events(row.message)
    assert str(event["UID"]) == str(mailed["UID"])  # the mail's event and the feed's are one
    assert main(["--config", config, "calendar", "nobody", str(out)]) == 2
