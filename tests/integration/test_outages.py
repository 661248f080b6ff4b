"""Outages of the real servers: nothing lost, nothing applied twice.

* SMTP down while mails are queued: each stays pending (a temporary failure, retried later)
  and goes out once the server is back, once.
* IMAP down in the middle of a round (Dovecot stopped and started again): the tick records
  an inbox problem and goes on; the next tick connects again and reads what arrived, and
  nothing already stored is stored again."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

from sqlalchemy import func, select

from referee.store.models import InboxProblem, Inbound

from .conftest import StackControl
from .mailtools import imap_session, make_message, send, wait_for_message_id
from .test_imap_source import source_for, wait_until_waiting
from .test_smtp_sender import sender_for


def test_mails_queued_while_smtp_is_down_go_out_once_it_is_back(own_mailstack: StackControl, tmp_path) -> None:
    from tests.service.harness import START, World, outbox_rows

    stack = own_mailstack.stack
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}")
    try:
        world.referee.outbox = sender_for(stack, timeout=10.0)
        own_mailstack.stop()
        world.tick(START)  # the match starts: two step mails, the server is away
        rows = outbox_rows(world)
        assert len(rows) == 2 and all(r.status == "pending" and r.attempts == 1 for r in rows)
        assert all("cannot connect" in r.last_error for r in rows)
        own_mailstack.start()
        world.referee.flush_outbox(START + timedelta(seconds=30))  # before the retry is due: nothing
        assert all(r.status == "pending" for r in outbox_rows(world))
        world.referee.flush_outbox(START + timedelta(seconds=61))
        rows = outbox_rows(world)
        assert all(r.status == "sent" and r.attempts == 2 for r in rows), [(r.status, r.last_error) for r in rows]
        world.referee.flush_outbox(START + timedelta(hours=1))  # nothing more to send

        async def each_arrived_once() -> None:
            for row in rows:
                async with imap_session(stack, row.to_addr.split("@")[0]) as imap:
                    assert (await imap.select("INBOX")).result == "OK"
                    await wait_for_message_id(imap, f"<{row.message_id}>", stack)  # asserts exactly one

        asyncio.run(each_arrived_once())
    finally:
        world.store.dispose()


async def test_imap_down_in_the_middle_of_a_round_loses_nothing(own_mailstack: StackControl, tmp_path) -> None:
    from referee.service import Referee

    from tests.service.harness import World

    stack = own_mailstack.stack
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}")
    try:
        source = source_for(stack)
        referee = Referee(world.store, world.config, inbox=source, outbox=world.outbox)
        first_id, first = make_message(stack, stack.address("referee"), "before", "before the outage\n")
        await send(stack, [stack.address("referee")], first)
        await wait_until_waiting(source, 1, stack)
        assert await referee.aingest(datetime.now(timezone.utc) + timedelta(seconds=1)) == 1
        own_mailstack.stop()  # Dovecot (and Postfix) go away; the referee's connection breaks
        assert await referee.aingest(datetime.now(timezone.utc)) == 0  # no crash: an inbox problem
        with world.store.unit_of_work() as session:
            problems = session.scalars(select(InboxProblem)).all()
        assert len(problems) == 1 and "cannot list the inbox" in problems[0].reason
        own_mailstack.start()
        second_id, second = make_message(stack, stack.address("referee"), "after", "after the outage\n")
        await send(stack, [stack.address("referee")], second)
        await wait_until_waiting(source, 1, stack)  # connects again by itself
        assert await referee.aingest(datetime.now(timezone.utc) + timedelta(seconds=1)) == 1
        with world.store.unit_of_work() as session:
            stored = session.scalars(select(Inbound.message_id).order_by(Inbound.id)).all()
            problems = session.scalar(select(func.count()).select_from(InboxProblem))
        assert stored == [first_id.strip("<>"), second_id.strip("<>")]  # each once
        assert problems == 0  # solved problems are forgotten
        await source.close()
    finally:
        world.store.dispose()
