"""A crash at any point loses nothing and applies nothing twice: each test stops the
service at one point (an exception standing for the crash) and runs it again."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from referee.store.models import Event, Inbound, Outbox

from .harness import START, World

ROULETTE = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0"


class Crash(BaseException):
    """Stands for the process dying: not an Exception, so nothing catches it."""


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}")
    w.tick(START)
    yield w
    w.store.dispose()


def counts(world: World) -> tuple[int, int, int]:
    with world.store.unit_of_work() as session:
        return (
            session.scalar(select(func.count()).select_from(Inbound)),
            session.scalar(select(func.count()).select_from(Event).where(Event.kind == "move")),
            session.scalar(select(func.count()).select_from(Outbox).where(Outbox.kind == "receipt")),
        )


def test_crash_after_storing_a_mail_before_moving_its_file(world, monkeypatch):
    world.send("alice", ROULETTE, START + timedelta(hours=1))

    def crash(item):
        raise Crash

    monkeypatch.setattr(world.inbox, "mark_processed", crash)
    with pytest.raises(Crash):
        world.tick(START + timedelta(hours=1))
    monkeypatch.undo()
    world.tick(START + timedelta(hours=2))  # the file is still in new/: found again, stored once
    assert counts(world) == (1, 1, 1)


def test_crash_while_processing_a_mail(world, monkeypatch):
    world.send("alice", ROULETTE, START + timedelta(hours=1))
    real = world.referee.book.save_state

    def crash(*args, **kwargs):
        real(*args, **kwargs)
        raise Crash

    monkeypatch.setattr(world.referee.book, "save_state", crash)
    with pytest.raises(Crash):
        world.tick(START + timedelta(hours=1))
    assert counts(world) == (1, 0, 0)  # stored, nothing applied
    monkeypatch.undo()
    world.tick(START + timedelta(hours=2))
    assert counts(world) == (1, 1, 1)


def test_crash_after_delivering_before_marking_sent(world, monkeypatch):
    world.send("alice", ROULETTE, START + timedelta(hours=1))

    def crash():
        raise Crash

    monkeypatch.setattr(world.outbox, "sync", crash)
    with pytest.raises(Crash):
        world.tick(START + timedelta(hours=1))
    monkeypatch.undo()
    world.tick(START + timedelta(hours=2))  # delivered again: the Maildir keeps one file per mail
    receipts = [m for m in world.client("alice").all() if "Received:" in m.subject]
    assert len(receipts) == 1
    with world.store.unit_of_work() as session:
        assert set(session.scalars(select(Outbox.status))) == {"sent"}


def _stale(folder, name: str, at):
    """A file an interrupted delivery left in ``folder``/tmp, last touched at ``at``."""
    path = folder / "tmp" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"half a mail")
    os.utime(path, (at.timestamp(), at.timestamp()))
    return path


def test_leftovers_of_interrupted_deliveries_go_on_a_quiet_tick_and_at_least_daily(world):
    outbox = world.config.mail.outbox / "alice@example.test"
    old = START - timedelta(days=2)
    first = _stale(outbox, "1.M1P1Q1.host", old)
    inbox_leftover = _stale(world.config.mail.inbox, "2.M1P1Q1.host", old)
    world.send("alice", ROULETTE, START + timedelta(hours=1))
    world.tick(START + timedelta(hours=1))  # a tick with mail to judge: not the moment
    assert first.exists() and inbox_leftover.exists()
    world.tick(START + timedelta(hours=1, minutes=1))  # nothing to do: tmp/ is looked at
    assert not first.exists() and not inbox_leftover.exists()
    second = _stale(outbox, "3.M1P1Q1.host", old)
    world.tick(START + timedelta(hours=1, minutes=30))  # quiet, but looked at less than an hour ago
    assert second.exists()
    world.tick(START + timedelta(hours=2, minutes=2))  # quiet, an hour later
    assert not second.exists()
    # a referee that is never quiet still looks once a day
    third = _stale(outbox, "4.M1P1Q1.host", old)
    busy = START + timedelta(hours=3)
    for hours in (0, 12, 23):
        world.send("alice", ROULETTE, busy + timedelta(hours=hours))
        world.tick(busy + timedelta(hours=hours))
        assert third.exists()
    world.send("alice", ROULETTE, START + timedelta(days=1, hours=3))
    world.tick(START + timedelta(days=1, hours=3))
    assert not third.exists()
