"""`referee run` on IMAP hears of new mail at once (IDLE) instead of at its next poll."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select

from referee.store.models import Inbound

from .conftest import MailStack
from .mailtools import DELIVERY_TIMEOUT, make_message, send
from .test_imap_source import source_for


async def test_new_mail_is_ingested_long_before_the_next_poll(mailstack: MailStack, tmp_path) -> None:
    from scheduler.runner import ServiceRunner
    from tests.service.harness import World

    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}")
    source = source_for(mailstack)
    world.referee.inbox = source
    runner = ServiceRunner(world.referee, poll_seconds=600, grace_seconds=0.2)  # no poll in this test's time
    task = asyncio.ensure_future(runner.run())
    loop = asyncio.get_running_loop()
    try:
        deadline = loop.time() + DELIVERY_TIMEOUT
        while source._watcher is None or source._watcher._imap is None or not source._watcher._imap.has_pending_idle():
            assert loop.time() < deadline, "the runner never started to wait for mail"
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)  # the first poll's cycle is over; only IDLE can bring the next mail in
        message_id, raw = make_message(mailstack, mailstack.address("referee"), "idle", "wake up\n")
        await send(mailstack, [mailstack.address("referee")], raw)

        def stored() -> int:
            with world.store.unit_of_work() as session:
                return session.scalar(
                    select(func.count()).select_from(Inbound).where(Inbound.message_id == message_id.strip("<>"))
                )

        while not await asyncio.to_thread(stored):
            assert loop.time() < deadline, f"not ingested within {DELIVERY_TIMEOUT} s\n{mailstack.logs()}"
            await asyncio.sleep(0.1)
    finally:
        runner.stop()
        await asyncio.wait_for(task, 60)
        world.store.dispose()
    assert source._imap is None and source._watcher is None  # logged out when the runner stopped
