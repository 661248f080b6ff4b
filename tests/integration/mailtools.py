"""Helpers for the tests on the loopback mail stack: messages, SMTP sends, IMAP sessions,
waiting for a Message-ID to arrive (Postfix answers 250 before the message is stored and
does not keep order: wait for the condition, match on Message-ID)."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta, timezone
from email.message import EmailMessage
from email.utils import format_datetime

import aioimaplib
import aiosmtplib

from .conftest import MailStack

DELIVERY_TIMEOUT = 30.0  # seconds; generous so that a machine ten times slower still passes
IO_TIMEOUT = 30.0

_MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}
_INTERNALDATE = re.compile(r"\s*(\d{1,2})-([A-Z][a-z]{2})-(\d{4}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})")


def parse_internaldate(value: str) -> datetime:
    """RFC 3501 date-time ("01-Dec-2025 14:05:00 +0100", day may be space-padded) -> aware datetime.

    Parsed by hand: strptime's %b follows the locale.
    """
    m = _INTERNALDATE.fullmatch(value)
    if m is None:
        raise ValueError(f"not an IMAP INTERNALDATE: {value!r}")
    day, mon, year, hh, mm, ss, sign, tzh, tzm = m.groups()
    offset = timedelta(hours=int(tzh), minutes=int(tzm)) * (-1 if sign == "-" else 1)
    return datetime(int(year), _MONTHS[mon], int(day), int(hh), int(mm), int(ss), tzinfo=timezone(offset))


def make_message(stack: MailStack, to: str, subject: str, body: str) -> tuple[str, bytes]:
    """A message with a unique Message-ID; returns (message_id, raw bytes with CRLF line ends)."""
    message_id = f"<{uuid.uuid4().hex}@referee.test>"
    msg = EmailMessage()
    msg["From"] = stack.address("referee")
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = format_datetime(datetime.now(UTC))
    msg["Message-ID"] = message_id
    msg.set_content(body)
    return message_id, msg.as_bytes().replace(b"\n", b"\r\n")


async def send(stack: MailStack, recipients: list[str], raw: bytes) -> dict[str, aiosmtplib.SMTPResponse]:
    """One SMTP connection, one message; returns the refused recipients (when some were accepted)."""
    async with aiosmtplib.SMTP(hostname=stack.host, port=stack.smtp_port, start_tls=False, timeout=IO_TIMEOUT) as smtp:
        errors, _ = await smtp.sendmail(stack.address("referee"), recipients, raw)
    return errors


@asynccontextmanager
async def imap_session(stack: MailStack, user: str) -> AsyncIterator[aioimaplib.IMAP4]:
    imap = aioimaplib.IMAP4(host=stack.host, port=stack.imap_port, timeout=IO_TIMEOUT)
    await imap.wait_hello_from_server()
    response = await imap.login(stack.address(user), stack.password)
    assert response.result == "OK", response  # login() does not raise on failure
    try:
        yield imap
    finally:
        await imap.logout()


async def search_message_id(imap: aioimaplib.IMAP4, message_id: str) -> list[str]:
    """UIDs of the messages in the selected mailbox with this Message-ID."""
    response = await imap.uid_search(f'HEADER Message-ID "{message_id}"', charset=None)
    assert response.result == "OK", response
    return response.lines[0].decode().split()


async def wait_for_message_id(imap: aioimaplib.IMAP4, message_id: str, stack: MailStack) -> str:
    """Poll the selected mailbox until the message is there; its UID."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DELIVERY_TIMEOUT
    while not (uids := await search_message_id(imap, message_id)):
        if loop.time() > deadline:
            raise AssertionError(f"{message_id} not delivered within {DELIVERY_TIMEOUT} s\n{stack.logs()}")
        await asyncio.sleep(0.05)  # a poll interval, not a wait for delivery
    assert len(uids) == 1, uids
    return uids[0]


def parse_uid_fetch(lines: list) -> list[tuple[bytes, bytes]]:
    """aioimaplib's UID FETCH response lines -> [(meta, raw message)].

    Per message: a bytes line with UID/INTERNALDATE/RFC822.SIZE, then the raw message as a
    bytearray (the literal), then b')'; a tagged status line ends the list.
    """
    messages = []
    for i, line in enumerate(lines):
        if isinstance(line, bytearray):
            messages.append((bytes(lines[i - 1]), bytes(line)))
    return messages
