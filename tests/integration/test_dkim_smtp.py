"""A DKIM signature survives the SMTP path: the referee signs its step mails, Postfix takes
them, Dovecot stores them with its trace headers on top, and the mail read back by IMAP
verifies against the published key."""

from __future__ import annotations

import asyncio

import dkim

from tests.mail.test_dkim import KEY, dnsfunc_for

from .conftest import MailStack
from .mailtools import imap_session, parse_uid_fetch, wait_for_message_id
from .test_smtp_sender import sender_for


def test_signed_mail_sent_by_smtp_arrives_verifiable(mailstack: MailStack, tmp_path) -> None:
    from tests.service.harness import SEASON, START, outbox_rows
    from tests.service.test_dkim_delivery import dkim_world

    # a match id of its own: the stack is shared, and Message-IDs derive from the match id
    season = {**SEASON, "matches": [{**SEASON["matches"][0], "id": "dkim-smtp-1"}]}
    world = dkim_world(tmp_path, f"sqlite:///{tmp_path / 'r.db'}", season)
    try:
        world.referee.outbox = sender_for(mailstack)
        world.tick(START)
        rows = outbox_rows(world)
        assert len(rows) == 2 and all(r.status == "sent" for r in rows), [(r.status, r.last_error) for r in rows]

        async def read_back() -> list[tuple[bytes, bytes]]:
            found = []
            for row in rows:
                async with imap_session(mailstack, row.to_addr.split("@")[0]) as imap:
                    assert (await imap.select("INBOX")).result == "OK"
                    uid = await wait_for_message_id(imap, f"<{row.message_id}>", mailstack)
                    response = await imap.uid("fetch", uid, "(UID BODY.PEEK[])")
                    [(_, stored)] = parse_uid_fetch(response.lines)
                    found.append((row.message, stored))
            return found

        lookup = dnsfunc_for(KEY, name=b"s1._domainkey.example.test.")
        for composed, stored in asyncio.run(read_back()):
            assert b"DKIM-Signature:" in stored and b"DKIM-Signature:" not in composed
            assert stored.split(b"DKIM-Signature:", 1)[0].count(b"Received:") >= 1  # trace headers above it
            assert dkim.verify(stored, dnsfunc=lookup)
    finally:
        world.store.dispose()
