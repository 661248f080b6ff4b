"""The outbox's SMTP transport against a real Postfix: connections reused, several mails in
flight, the server's answers read as sent / temporary / permanent, and the referee's own
outbox delivered through it to the players' IMAP mailboxes."""

from __future__ import annotations

import asyncio
import socket

from referee.mail.smtp import SmtpSender, SmtpSettings
from referee.mail.transport import OutboundMail

from .conftest import MailStack
from .mailtools import imap_session, make_message, wait_for_message_id


def sender_for(stack: MailStack, **overrides) -> SmtpSender:
    settings = {"host": stack.host, "port": stack.smtp_port, "security": "none", "concurrency": 2, "timeout": 30.0}
    return SmtpSender(SmtpSettings(**{**settings, **overrides}))


def outbound(stack: MailStack, to: str, subject: str) -> tuple[str, OutboundMail]:
    message_id, raw = make_message(stack, to, subject, f"{subject}\n")
    return message_id, OutboundMail(message_id, stack.address("referee"), (to,), raw)


async def test_mails_go_out_on_reused_connections_and_each_arrives_once(mailstack: MailStack) -> None:

    sender = sender_for(mailstack, concurrency=2)
    mails = [outbound(mailstack, mailstack.address(user), f"mail {i}") for i in range(4) for user in ("alice", "bob")]
    gate = asyncio.Semaphore(sender.concurrency)  # as the outbox sends: at most `concurrency` in flight

    async def gated(mail: OutboundMail):
        async with gate:
            return await sender.send(mail)

    results = await asyncio.gather(*(gated(mail) for _, mail in mails))
    await sender.close()
    assert [r.outcome for r in results] == ["sent"] * 8
    assert all("2.0.0" in r.recipients[m.recipients[0]][1] for r, (_, m) in zip(results, mails, strict=True))
    assert sender.connections_opened <= 2  # eight mails, at most two connections
    for user in ("alice", "bob"):
        async with imap_session(mailstack, user) as imap:
            assert (await imap.select("INBOX")).result == "OK"
            for message_id, mail in mails:
                if mail.recipients[0] == mailstack.address(user):
                    await wait_for_message_id(imap, message_id, mailstack)  # there, exactly once


async def test_a_4xx_is_temporary_a_5xx_permanent_and_the_connection_stays_usable(mailstack: MailStack) -> None:
    sender = sender_for(mailstack, concurrency=1)
    _, busy = outbound(mailstack, f"busy@{mailstack.domain}", "busy")
    _, gone = outbound(mailstack, f"gone@{mailstack.domain}", "gone")
    _, outside = outbound(mailstack, "someone@elsewhere.invalid", "outside")
    message_id, fine = outbound(mailstack, mailstack.address("alice"), "fine")
    first = await sender.send(busy)
    assert first.outcome == "temporary" and "450" in first.detail and "busy" in first.detail
    second = await sender.send(gone)
    assert second.outcome == "permanent" and "550" in second.detail
    third = await sender.send(outside)
    assert third.outcome == "permanent" and third.detail.startswith("someone@elsewhere.invalid: 5")
    assert (await sender.send(fine)).outcome == "sent"
    await sender.close()
    assert sender.connections_opened == 1  # the refusals did not cost the connection
    async with imap_session(mailstack, "alice") as imap:
        assert (await imap.select("INBOX")).result == "OK"
        await wait_for_message_id(imap, message_id, mailstack)


async def test_a_server_that_does_not_answer_is_a_temporary_failure(mailstack: MailStack) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sender = sender_for(mailstack, port=port, timeout=10.0)
    _, mail = outbound(mailstack, mailstack.address("alice"), "nobody home")
    result = await sender.send(mail)
    assert result.outcome == "temporary" and "cannot connect" in result.detail


def test_the_referee_delivers_its_outbox_by_smtp(mailstack: MailStack, tmp_path) -> None:
    """The step mails of a match that starts go out through Postfix and arrive by IMAP;
    the outbox marks them sent."""

    from tests.service.harness import START, World, outbox_rows

    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}")
    try:
        world.referee.outbox = sender_for(mailstack)
        world.tick(START)
        rows = outbox_rows(world)
        assert len(rows) == 2 and all(r.status == "sent" and r.attempts == 1 for r in rows), [
            (r.status, r.last_error) for r in rows
        ]

        async def arrived() -> None:
            for row in rows:
                user = row.to_addr.split("@")[0]
                async with imap_session(mailstack, user) as imap:
                    assert (await imap.select("INBOX")).result == "OK"
                    await wait_for_message_id(imap, f"<{row.message_id}>", mailstack)

        asyncio.run(arrived())
    finally:
        world.store.dispose()
