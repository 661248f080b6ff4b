"""Ingest from a real Dovecot by IMAP, and a round of a match played by real mail: the
referee reads the players' replies by IMAP and answers by SMTP through Postfix.

Arrival times here are the server's INTERNALDATE, i.e. the real clock: the match starts a
little before now, and every wait is for a condition with a generous timeout."""

from __future__ import annotations

import asyncio
import email
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from referee.config import ImapSettings
from referee.mail.client import ScriptedClient
from referee.mail.imap import ImapSource, parse_internaldate
from referee.store.models import Inbound

from .conftest import MailStack
from .mailtools import DELIVERY_TIMEOUT, imap_session, make_message, send
from .test_smtp_sender import sender_for


def source_for(stack: MailStack, user: str = "referee") -> ImapSource:
    return ImapSource(
        ImapSettings(
            host=stack.host,
            port=stack.imap_port,
            security="none",
            username=stack.address(user),
            password=stack.password,
            timeout=30.0,
        )
    )


async def wait_until_waiting(source: ImapSource, count: int, stack: MailStack) -> list:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DELIVERY_TIMEOUT
    while len(items := await source.pending()) < count:
        if loop.time() > deadline:
            raise AssertionError(f"{len(items)} of {count} mails arrived\n{stack.logs()}")
        await asyncio.sleep(0.1)
    return items


async def count_in(stack: MailStack, user: str, folder: str) -> int:
    async with imap_session(stack, user) as imap:
        selected = await imap.select(folder)
        assert selected.result == "OK", selected
        found = await imap.uid_search("ALL", charset=None)
        return len(found.lines[0].split())


async def test_mail_is_stored_with_its_arrival_time_then_moved_and_read_once(mailstack: MailStack, tmp_path) -> None:
    from referee.service import Referee

    from tests.service.harness import World

    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}")
    try:
        source = source_for(mailstack)
        await source.pending()  # empties nothing; makes sure the folders exist
        waiting = len(await source.pending())
        ids = []
        sent_at = datetime.now(timezone.utc)
        for i in range(3):
            message_id, raw = make_message(mailstack, mailstack.address("referee"), f"mail {i}", f"body {i}\n")
            await send(mailstack, [mailstack.address("referee")], raw)
            ids.append(message_id.strip("<>"))
        duplicate_id, duplicate = make_message(mailstack, mailstack.address("referee"), "twice", "the same mail\n")
        for _ in range(2):  # delivered twice: the same bytes (Received headers aside)
            await send(mailstack, [mailstack.address("referee")], duplicate)
        items = await wait_until_waiting(source, waiting + 5, mailstack)
        assert all(abs(item.delivered_at - sent_at) < timedelta(minutes=10) for item in items)
        await source.close()
        referee = Referee(world.store, world.config, inbox=source, outbox=world.outbox)
        now = datetime.now(timezone.utc) + timedelta(seconds=1)
        assert await referee.aingest(now) >= 4  # three mails and the first copy of the fourth
        with world.store.unit_of_work() as session:
            rows = {r.message_id: r for r in session.scalars(select(Inbound))}
        arrived = {item.key: item.delivered_at for item in items}
        for message_id in ids:  # stored with the server's arrival time, INTERNALDATE
            assert rows[message_id].received_at == arrived[rows[message_id].source]
        with world.store.unit_of_work() as session:
            twice = session.scalars(select(Inbound).where(Inbound.message_id == duplicate_id.strip("<>"))).all()
        assert sorted(r.status for r in twice) == ["ignored", "pending"]  # stored once, the copy a duplicate
        assert await count_in(mailstack, "referee", "INBOX") == 0
        assert await count_in(mailstack, "referee", "Processed") >= 5
        assert await referee.aingest(now) == 0  # nothing is read twice
        await source.close()
    finally:
        world.store.dispose()


def test_internaldate_is_read_as_utc():
    assert parse_internaldate("01-Dec-2026 15:25:39 +0100") == datetime(2026, 12, 1, 14, 25, 39, tzinfo=timezone.utc)
    assert parse_internaldate(" 1-Dec-2026 15:25:39 -0230") == datetime(2026, 12, 1, 17, 55, 39, tzinfo=timezone.utc)


async def test_a_round_played_by_real_mail(mailstack: MailStack, tmp_path) -> None:
    """The match's first mail goes to alice by SMTP, she answers by SMTP to her personal
    reply address, the referee reads it by IMAP (its arrival: INTERNALDATE) and her
    receipt comes back by SMTP."""
    from tests.service.harness import SEASON, World

    start = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=1)
    # a match id of its own: Message-IDs derive from it, and the stack's mailboxes are shared
    season = {**SEASON, "matches": [{**SEASON["matches"][0], "id": "real-round", "start": start.isoformat()}]}
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}", season)
    mailboxes = mailstack.dir / "mail" / mailstack.domain
    alice = ScriptedClient("alice@example.test", "Alice", mailboxes / "alice" / "Maildir", tmp_path / "unused")
    try:
        world.referee.inbox = source = source_for(mailstack)
        world.referee.outbox = sender = sender_for(mailstack)
        await world.referee.atick(datetime.now(timezone.utc))
        # this match's mail only (its Message-IDs carry its id): other tests write to alice too
        prompt = await _wait_for_mail(
            alice, lambda m: "Winning colour" in m.text and "real-round" in m.message_id, mailstack
        )
        raw = alice.compose_reply(
            prompt, "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0", datetime.now(timezone.utc)
        )
        assert "referee+" in prompt.reply_address
        await send(mailstack, [prompt.reply_address], raw)
        await wait_until_waiting(source, 1, mailstack)
        report = await world.referee.atick(datetime.now(timezone.utc) + timedelta(seconds=1))
        assert report.accepted == 1, report
        sent_id = email.message_from_bytes(raw)["Message-ID"].strip()
        receipt = await _wait_for_mail(
            alice, lambda m: "Received:" in m.subject and str(m.message["In-Reply-To"]).strip() == sent_id, mailstack
        )
        assert "Gold" in receipt.text and "accepted" in receipt.text
        await source.close()
        await sender.close()
    finally:
        world.store.dispose()


async def _wait_for_mail(client: ScriptedClient, wanted, stack: MailStack):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DELIVERY_TIMEOUT
    while True:
        found = [m for m in client.all() if wanted(m)] if (client.mailbox / "new").exists() else []
        if found:
            return found[-1]
        if loop.time() > deadline:
            raise AssertionError(f"no such mail for {client.address}\n{stack.logs()}")
        await asyncio.sleep(0.1)


async def test_a_mail_too_large_is_read_only_in_part_answered_with_an_error_and_kept(
    mailstack: MailStack, tmp_path
) -> None:
    from dataclasses import replace

    from tests.service.harness import SEASON, World

    start = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=1)
    season = {**SEASON, "matches": [{**SEASON["matches"][0], "id": "too-large", "start": start.isoformat()}]}
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}", season)
    try:
        source = source_for(mailstack)
        source.settings = replace(source.settings, max_message_bytes=16384)
        world.referee.inbox = source
        world.tick(datetime.now(timezone.utc))  # the match starts; its mails go to the local Maildirs
        prompt = world.client("alice").latest()
        text = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0\n\n" + "a long signature\n" * 4000
        raw = world.client("alice").compose_reply(prompt, text, datetime.now(timezone.utc))
        assert len(raw) > 60_000
        await send(mailstack, [prompt.reply_address], raw)
        await wait_until_waiting(source, 1, mailstack)
        report = await world.referee.atick(datetime.now(timezone.utc) + timedelta(seconds=1))
        assert (report.accepted, report.rejected) == (0, 1), report
        with world.store.unit_of_work() as session:
            row = session.scalars(select(Inbound)).one()
        assert row.rule == "too-large" and len(row.raw) <= 16384 and "too large" in row.note
        error = world.client("alice").latest()
        assert "too large" in error.text and "nothing in it was read" in error.text
        assert await count_in(mailstack, "referee", "Processed") >= 1  # kept on the server
        await source.close()
    finally:
        world.store.dispose()


async def test_a_mail_another_process_moved_is_gone_not_a_problem(mailstack: MailStack) -> None:
    """Two processes on one mailbox list the same mail; one stores and moves it, then the
    other's MOVE finds it gone: MailGone (nothing to do), not a transport failure that would
    be recorded as an inbox problem."""
    from referee.mail.transport import MailGone

    first, second = source_for(mailstack), source_for(mailstack)
    try:
        await first.pending()
        waiting = len(await first.pending())
        _, raw = make_message(mailstack, mailstack.address("referee"), "taken twice", "a body\n")
        await send(mailstack, [mailstack.address("referee")], raw)
        (mine, *_) = [i for i in await wait_until_waiting(first, waiting + 1, mailstack)][-1:]
        theirs = [i for i in await second.pending() if i.uid == mine.uid]
        assert theirs, "the second session lists the mail too"
        await second.mark_processed(theirs[0])
        with pytest.raises(MailGone):  # Dovecot: NO [EXPUNGEISSUED] ... no longer exist
            await first.mark_processed(mine)
        assert mine.uid not in {i.uid for i in await first.pending()}
        assert await count_in(mailstack, "referee", "Processed") >= 1
    finally:
        await first.close()
        await second.close()
