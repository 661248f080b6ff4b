"""The scheduler on a real event loop and the real clock: deadlines close on time through
their own jobs (not only through polling), and a restart catches up what fell due.

Robust on a slow or loaded machine: every test waits for the state it expects (polling
every 50 ms, for up to 30 s) instead of sleeping a fixed time, and wherever a test needs
something *not* to have happened yet, the time scale leaves minutes of slack.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import select

from referee.store.models import Match
from scheduler.runner import ServiceRunner, upcoming_instants

from .service.harness import SEASON, World

WAIT_SECONDS = 30.0
POLL_SECONDS = 0.05


def season_starting(at: datetime, phase: str) -> dict:
    season = {**SEASON, "matches": [dict(SEASON["matches"][0])]}
    season["matches"][0].update(start=at.isoformat(), phase_length=phase, reminders=[])
    return season


def match_state(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


async def wait_for(what: str, probe: Callable[[], Any], timeout: float = WAIT_SECONDS) -> Any:
    """``probe()`` (run in a thread: it may read the database) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = await asyncio.to_thread(probe)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(POLL_SECONDS)


def running_round(world: World) -> Match | None:
    match = match_state(world)
    return match if match.status == "running" and match.state is not None else None


async def test_deadline_jobs_fire_on_time_without_polling(tmp_path):
    # 3 s phases: 11 of them leave half a minute for a slow set-up before the match is over
    now = datetime.now(timezone.utc)
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}", season_starting(now + timedelta(seconds=1), "3s"))
    runner = ServiceRunner(world.referee, poll_seconds=3600, grace_seconds=0)  # after the first, no poll comes
    task = asyncio.create_task(runner.run())
    try:
        match = await wait_for("the match to start", lambda: running_round(world))
        first_round, deadline = match.state["round"], match.deadline
        # only the deadline's own job can close it: the next poll is an hour away
        match = await wait_for(
            f"round {first_round} to close", lambda: (m := match_state(world)).state["round"] > first_round and m
        )
        assert datetime.now(timezone.utc) >= deadline, "a step never closes before its deadline"
        assert match.status in ("running", "finished")
        # every step that opened mailed its players: the start prompt, then one mail per closed round
        await wait_for(
            "the step mails", lambda: len(world.client("alice").all()) >= match_state(world).state["round"] + 1
        )
    finally:
        runner.stop()
        await asyncio.wait_for(task, WAIT_SECONDS)
    world.store.dispose()


async def test_restart_catches_up_everything_that_fell_due(tmp_path):
    # down for 3.5 phases of 10 minutes: 3 closes fell due; the 4th deadline is 5 minutes away
    phase = timedelta(minutes=10)
    start = datetime.now(timezone.utc) - 3.5 * phase
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}", season_starting(start, "10m"))
    runner = ServiceRunner(world.referee, poll_seconds=3600, grace_seconds=0)
    task = asyncio.create_task(runner.run())
    try:
        match = await wait_for("the catch-up", lambda: (m := running_round(world)) and m.state["round"] >= 3 and m)
        assert match.state["round"] == 3
        assert match.deadline == start + 4 * phase  # on schedule, not "now + 10 minutes"
        assert upcoming_instants(world.referee, datetime.now(timezone.utc))[0] == match.deadline
    finally:
        runner.stop()
        await asyncio.wait_for(task, WAIT_SECONDS)
    world.store.dispose()


async def test_a_mail_still_being_delivered_at_the_deadline_counts(tmp_path):
    """The MTA stamps a mail before the deadline but finishes delivering it after: working
    `grace` behind the clock, the referee still sees it while the step is open.

    Minutes of slack: the referee works 10 minutes behind the clock; the deadline passed
    5 minutes ago on the real clock, so for the referee it is still 5 minutes ahead when
    the mail becomes visible (stamped a little under 10 minutes earlier). Without the
    grace, the first cycle would have closed the step before the mail was there."""
    grace = timedelta(minutes=10)
    now = datetime.now(timezone.utc)
    start = now - grace - timedelta(seconds=30)
    deadline = now - timedelta(minutes=5)
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}", season_starting(start, "330s"))
    runner = ServiceRunner(world.referee, poll_seconds=0.2, grace_seconds=grace.total_seconds())
    task = asyncio.create_task(runner.run())
    try:
        await wait_for("the start prompt", lambda: world.client("alice").all())
        stamped = datetime.now(timezone.utc) - grace + timedelta(seconds=2)
        assert stamped < deadline < datetime.now(timezone.utc)  # stamped before the deadline, visible after it
        world.send("alice", "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0", stamped)
        receipts = await wait_for(
            "the receipt", lambda: [m for m in world.client("alice").all() if "Received:" in m.subject]
        )
        assert len(receipts) == 1
        match = match_state(world)
        assert match.state["round"] == 0 and match.deadline == deadline  # the step was still open
    finally:
        runner.stop()
        await asyncio.wait_for(task, WAIT_SECONDS)
    world.tick(deadline)  # close the step now rather than in 5 minutes: the roulette counts
    assert match_state(world).state["history"][0]["prepared"]["alice"] is True
    world.store.dispose()


async def test_a_stop_lets_the_cycle_under_way_finish_and_logs_no_error(tmp_path, caplog):
    """SIGTERM in the middle of a cycle: the scheduler's shutdown cancels the job, not the
    cycle; the stop waits for it, then closes the connections."""
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}")
    began, release = asyncio.Event(), asyncio.Event()
    finished: list[bool] = []
    real_atick = world.referee.atick

    async def slow_atick(now):
        began.set()
        await release.wait()  # the cycle is under way when the stop comes
        report = await real_atick(now)
        finished.append(True)
        return report

    world.referee.atick = slow_atick
    runner = ServiceRunner(world.referee, poll_seconds=3600, grace_seconds=0)
    task = asyncio.create_task(runner.run())
    try:
        await asyncio.wait_for(began.wait(), WAIT_SECONDS)
        runner.stop()
        await asyncio.sleep(0.2)  # the shutdown has cancelled the job by now
        assert not task.done(), "the stop did not wait for the cycle"
        release.set()
        await asyncio.wait_for(task, WAIT_SECONDS)
    finally:
        release.set()
        runner.stop()
    assert finished == [True]
    assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
    world.store.dispose()
