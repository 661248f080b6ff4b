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
    runner = ServiceRunner(world.referee, poll_seconds=3600)  # the poll would never come in time
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
    runner = ServiceRunner(world.referee, poll_seconds=3600)
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
