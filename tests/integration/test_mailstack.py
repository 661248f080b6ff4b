"""Smoke tests of the loopback mail stack, used the way the transports use it.

SMTP in with aiosmtplib (Postfix), IMAP out with aioimaplib (Dovecot). Postfix answers 250
before the message is stored and does not keep order: wait for a condition (the Message-ID
turns up in the mailbox) and match on Message-ID, never on UID order or a fixed sleep.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import aioimaplib
import aiosmtplib
import pytest

from .conftest import MailStack
from .mailtools import (
    IO_TIMEOUT,
    parse_internaldate,
    make_message,
    send,
    imap_session,
    search_message_id,
    wait_for_message_id,
    parse_uid_fetch,
)


async def test_smtp_in_imap_out(mailstack: MailStack) -> None:
    body = "Hello alice,\n.a line that starts with a dot (SMTP dot-stuffing)\n\nthe referee\n"
    message_id, raw = make_message(mailstack, mailstack.address("alice"), "smoke test", body)
    sent_at = datetime.now(UTC)
    assert await send(mailstack, [mailstack.address("alice")], raw) == {}

    async with imap_session(mailstack, "alice") as imap:
        response = await imap.select("INBOX")
        assert response.result == "OK", response
        uid = await wait_for_message_id(imap, message_id, mailstack)

        response = await imap.uid("fetch", uid, "(UID INTERNALDATE RFC822.SIZE BODY.PEEK[])")
        assert response.result == "OK", response
        [(meta, stored)] = parse_uid_fetch(response.lines)

    assert re.search(rb"\bUID %s\b" % uid.encode(), meta), meta
    assert int(re.search(rb"RFC822\.SIZE (\d+)", meta).group(1)) == len(stored)
    # Postfix and Dovecot prepend their trace headers (Return-Path, Delivered-To, Received); the
    # message as sent follows unchanged, dot-stuffing undone.
    assert stored.endswith(raw), stored
    assert stored.split(b"\r\n\r\n", 1)[1] == body.replace("\n", "\r\n").encode()
    assert b"\r\nReceived: " in stored or stored.startswith(b"Received: ")

    internaldate = parse_internaldate(re.search(rb'INTERNALDATE "([^"]+)"', meta).group(1).decode())
    assert internaldate.tzinfo is not None
    assert abs(internaldate - sent_at) < timedelta(minutes=10), (internaldate, sent_at)


@pytest.mark.parametrize(
    "outsider",
    ["someone@elsewhere.invalid", "nobody@example.test"],
    ids=["other-domain", "unknown-user"],
)
async def test_refuses_recipients_it_does_not_host(mailstack: MailStack, outsider: str) -> None:
    _, raw = make_message(mailstack, outsider, "must not leave the machine", "no relaying\n")
    with pytest.raises(aiosmtplib.SMTPRecipientsRefused) as refused:
        await send(mailstack, [outsider], raw)
    [rejection] = refused.value.recipients
    assert rejection.recipient == outsider
    assert 500 <= rejection.code < 600, rejection

    # Mixed with a local recipient: the local one is accepted, the outsider refused with 5xx.
    message_id, raw = make_message(mailstack, f"{mailstack.address('bob')}, {outsider}", "mixed", "half\n")
    errors = await send(mailstack, [mailstack.address("bob"), outsider], raw)
    assert list(errors) == [outsider]
    assert 500 <= errors[outsider].code < 600, errors
    async with imap_session(mailstack, "bob") as imap:
        assert (await imap.select("INBOX")).result == "OK"
        await wait_for_message_id(imap, message_id, mailstack)


async def test_uid_move_to_processed(mailstack: MailStack) -> None:
    message_id, raw = make_message(mailstack, mailstack.address("bob"), "to be moved", "move me\n")
    assert await send(mailstack, [mailstack.address("bob")], raw) == {}

    async with imap_session(mailstack, "bob") as imap:
        response = await imap.create("processed")
        # independent of other tests (and of a re-run within the session): the folder may exist
        assert response.result == "OK" or b"ALREADYEXISTS" in b" ".join(response.lines), response
        assert imap.has_capability("MOVE")

        assert (await imap.select("INBOX")).result == "OK"
        uid = await wait_for_message_id(imap, message_id, mailstack)
        response = await imap.uid("move", uid, "processed")
        assert response.result == "OK", response
        assert await search_message_id(imap, message_id) == []

        assert (await imap.select("processed")).result == "OK"
        [moved_uid] = await search_message_id(imap, message_id)
        response = await imap.uid("fetch", moved_uid, "(UID BODY.PEEK[])")
        assert response.result == "OK", response
        [(_, stored)] = parse_uid_fetch(response.lines)
        assert stored.endswith(raw)


async def test_wrong_password_is_refused(mailstack: MailStack) -> None:
    imap = aioimaplib.IMAP4(host=mailstack.host, port=mailstack.imap_port, timeout=IO_TIMEOUT)
    await imap.wait_hello_from_server()
    response = await imap.login(mailstack.address("alice"), "not-the-password")
    assert response.result == "NO", response
    await imap.logout()


def test_parse_internaldate() -> None:
    assert parse_internaldate(" 1-Dec-2025 14:05:09 +0130") == datetime(
        2025, 12, 1, 14, 5, 9, tzinfo=timezone(timedelta(hours=1, minutes=30))
    )
    assert parse_internaldate("17-Jul-1996 02:44:25 -0700").utcoffset() == timedelta(hours=-7)
    with pytest.raises(ValueError):
        parse_internaldate("1996-07-17T02:44:25Z")
