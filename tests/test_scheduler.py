"""The scheduler on a real event loop and the real clock: deadlines close on time through
their own jobs (not only through polling), and a restart catches up what fell due."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

from sqlalchemy import select

from referee.store.models import Match
from scheduler.runner import ServiceRunner, upcoming_instants

from .service.harness import SEASON, World


def season_starting(at: datetime) -> dict:
    season = {**SEASON, "matches": [dict(SEASON["matches"][0])]}
    season["matches"][0].update(start=at.isoformat(), phase_length="2s", reminders=[])
    return season


def match_state(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


async def test_deadline_jobs_fire_on_time_without_polling(tmp_path):
    now = datetime.now(timezone.utc)
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}", season_starting(now + timedelta(seconds=1)))
    runner = ServiceRunner(world.referee, poll_seconds=3600, grace_seconds=0)  # the poll would never come in time
    task = asyncio.create_task(runner.run())
    try:
        await asyncio.sleep(4.5)  # start at +1 s, round 0 closes at +3 s, round 1 at +5 s
        match = match_state(world)
        assert match.status == "running"
        assert match.state["round"] == 1
        assert len(world.client("alice").all()) == 2  # the start prompt and round 0's results
    finally:
        runner.stop()
        await asyncio.wait_for(task, 10)
    world.store.dispose()


async def test_restart_catches_up_everything_that_fell_due(tmp_path):
    start = datetime.now(timezone.utc) - timedelta(seconds=7)  # the service was down for 7 s: 3 closes due
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}", season_starting(start))
    runner = ServiceRunner(world.referee, poll_seconds=3600, grace_seconds=0)
    task = asyncio.create_task(runner.run())
    try:
        await asyncio.sleep(0.8)
        match = match_state(world)
        assert match.state["round"] == 3
        assert match.deadline == start + timedelta(seconds=8)  # on schedule, not "now + 2 s"
        assert upcoming_instants(world.referee, datetime.now(timezone.utc))[0] == match.deadline
    finally:
        runner.stop()
        await asyncio.wait_for(task, 10)
    world.store.dispose()


async def test_a_mail_still_being_delivered_at_the_deadline_counts(tmp_path):
    """The MTA stamps the mail just before the deadline but finishes delivering it just after:
    working `grace` seconds behind the clock, the referee still sees it in time."""
    start = datetime.now(timezone.utc) + timedelta(seconds=0.5)
    deadline = start + timedelta(seconds=2)
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}", season_starting(start))
    runner = ServiceRunner(world.referee, poll_seconds=3600, grace_seconds=1.5)
    task = asyncio.create_task(runner.run())
    try:
        await asyncio.sleep((deadline - datetime.now(timezone.utc)).total_seconds() + 0.3)
        assert world.client("alice").all(), "the start prompt went out"
        world.send(
            "alice", "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0", deadline - timedelta(seconds=0.1)
        )  # stamped before the deadline, visible after it
        await asyncio.sleep(2.0)
        match = match_state(world)
        assert match.state["history"][0]["prepared"]["alice"] is True
    finally:
        runner.stop()
        await asyncio.wait_for(task, 10)
    world.store.dispose()
