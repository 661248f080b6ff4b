"""A bounce through the real stack: the referee sends by SMTP to an address Postfix accepts at
RCPT time but cannot deliver (``lost@``: Dovecot has no such user), Postfix sends a delivery
report to the mail's envelope sender, its signed bounce address, the report lands in the
referee's IMAP mailbox, ``ImapSource`` ingests it and the judge records it as a bounce of the
right outbox row; with ``bounce_limit = 1`` the organizer's notice goes out by SMTP too."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

from sqlalchemy import select

from referee.mail.bounces import bounce_address
from referee.store.models import Bounce, Inbound, Outbox

from .conftest import MailStack
from .mailtools import DELIVERY_TIMEOUT, imap_session, wait_for_message_id
from .test_imap_source import source_for
from .test_smtp_sender import sender_for


async def test_a_bounce(mailstack: MailStack, tmp_path) -> None:
    from tests.service.harness import World

    start = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=1)
    season = {
        "season": {"id": "bounces", "name": "Bounce season", "starting_chips": 200},
        "players": [
            {"id": "alice", "name": "Alice", "email": mailstack.address("alice")},
            {"id": "lost", "name": "Lost", "email": f"lost@{mailstack.domain}"},
        ],
        # a match id of its own: Message-IDs derive from it, and the stack's mailboxes are shared
        "matches": [
            {
                "id": "bounce-real",
                "game": "stationary-roulette",
                "players": ["alice", "lost"],
                "start": start.isoformat(),
            }
        ],
    }
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}", season)
    world.config.mail.organizer = mailstack.address("bob")
    world.config.mail.bounce_limit = 1
    try:
        world.referee.inbox = source = source_for(mailstack)
        world.referee.outbox = sender = sender_for(mailstack)
        await world.referee.atick(datetime.now(timezone.utc))  # the match starts: its mails go out by SMTP
        with world.store.unit_of_work() as session:
            rows = {row.to_addr: row for row in session.scalars(select(Outbox).where(Outbox.kind == "step"))}
        lost = rows[f"lost@{mailstack.domain}"]
        assert lost.status == "sent" and rows[mailstack.address("alice")].status == "sent"  # 250 at RCPT for both
        verp = bounce_address(world.config.secret, "referee", mailstack.domain, lost.id)

        # Postfix's report comes back to the bounce address: read by IMAP and judged
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DELIVERY_TIMEOUT
        while True:
            await world.referee.atick(datetime.now(timezone.utc) + timedelta(seconds=1))
            with world.store.unit_of_work() as session:
                found = session.scalars(select(Bounce).where(Bounce.outbox_id == lost.id)).all()
            if found:
                break
            if loop.time() > deadline:
                raise AssertionError(f"no bounce recorded for outbox {lost.id}\n{mailstack.logs()}")
            await asyncio.sleep(0.2)

        (bounce,) = found
        assert (bounce.address, bounce.action, bounce.status, bounce.source) == (
            f"lost@{mailstack.domain}",
            "failed",
            "5.1.1",
            "dsn",
        )
        assert bounce.hard and bounce.verified and bounce.player_id is not None
        assert "5.1.1" in (bounce.diagnostic or "")
        with world.store.unit_of_work() as session:
            report = session.get(Inbound, bounce.inbound_id)
            assert (report.status, report.rule) == ("ignored", "bounce")
            assert f"outbox {lost.id}" in report.note
            raw = report.raw.decode("utf-8", "replace")
            assert verp in raw.lower()  # Postfix wrote to the envelope sender, the signed bounce address
            assert "multipart/report" in raw and "MAILER-DAEMON" in raw
            assert session.scalars(select(Outbox).where(Outbox.inbound_id == report.id)).all() == []  # no answer
            assert session.get(Outbox, lost.id).status == "bounced"
            assert session.get(Outbox, rows[mailstack.address("alice")].id).status == "sent"
            (notice,) = session.scalars(select(Outbox).where(Outbox.kind == "unreachable")).all()
        assert notice.to_addr == mailstack.address("bob") and notice.status == "sent"

        # the organizer's notice reached bob's mailbox through Postfix
        async with imap_session(mailstack, "bob") as imap:
            assert (await imap.select("INBOX")).result == "OK"
            uid = await wait_for_message_id(imap, f"<{notice.message_id}>", mailstack)
            # the stack's mailboxes are shared (another test reads bob's as a referee's inbox)
            assert (await imap.uid("store", uid, "+FLAGS", "(\\Deleted)")).result == "OK"
            assert (await imap.expunge()).result == "OK"
        await source.close()
        await sender.close()
    finally:
        world.store.dispose()
