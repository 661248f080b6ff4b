"""A crash at any point loses nothing and applies nothing twice: each test stops the
service at one point (an exception standing for the crash) and runs it again."""

from __future__ import annotations

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
