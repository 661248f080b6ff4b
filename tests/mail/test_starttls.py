"""STARTTLS asked for, against fake servers on the loopback that do not give it: the login
(and so the password) never goes over the plain connection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from referee.config import ImapSettings, SmtpSettings
from referee.mail.imap import ImapSource
from referee.mail.smtp import SmtpSender
from referee.mail.transport import OutboundMail, TransportError

PASSWORD = "app-password-never-in-clear"


@asynccontextmanager
async def fake_server(
    greeting: bytes, answer: Callable[[str], tuple[bytes, bool]]
) -> AsyncIterator[tuple[int, list[str]]]:
    """A line server on the loopback: ``greeting`` first, then ``answer(line)`` (the reply,
    and whether the session ends) for every line it reads; its port and every line it read."""
    heard: list[str] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(greeting)
        while line := await reader.readline():
            text = line.decode().rstrip("\r\n")
            heard.append(text)
            reply, done = answer(text)
            writer.write(reply)
            await writer.drain()
            if done:
                break
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], heard
    finally:
        server.close()
        await server.wait_closed()


def fake_imap(capabilities: str, starttls_answer: str = "NO not today"):
    """An IMAP server that greets, answers CAPABILITY with ``capabilities`` and STARTTLS with
    ``starttls_answer`` (never a handshake), and OK to anything else."""

    def answer(text: str) -> tuple[bytes, bool]:
        tag, _, command = text.partition(" ")
        if command.upper() == "CAPABILITY":
            return f"* CAPABILITY {capabilities}\r\n{tag} OK done\r\n".encode(), False
        if command.upper() == "STARTTLS":
            return f"{tag} {starttls_answer}\r\n".encode(), False
        if command.upper() == "LOGOUT":
            return f"* BYE\r\n{tag} OK bye\r\n".encode(), True
        return f"{tag} OK fine\r\n".encode(), False

    return fake_server(b"* OK fake IMAP ready\r\n", answer)


def source(port: int) -> ImapSource:
    settings = ImapSettings(
        host="127.0.0.1", port=port, security="starttls", username="referee@example.org", password=PASSWORD, timeout=5
    )
    return ImapSource(settings)


async def test_imap_starttls_not_offered_is_refused_before_the_login() -> None:
    async with fake_imap("IMAP4rev1 AUTH=PLAIN IDLE") as (port, heard):
        imap = source(port)
        with pytest.raises(TransportError, match="does not offer STARTTLS.*not logging in over a plain connection"):
            await imap.pending()
        await imap.close()
    assert not any("LOGIN" in line.upper() or "AUTHENTICATE" in line.upper() for line in heard), heard
    assert not any(PASSWORD in line for line in heard)


async def test_imap_starttls_offered_but_refused_is_not_a_login_in_clear() -> None:
    async with fake_imap("IMAP4rev1 STARTTLS AUTH=PLAIN", starttls_answer="BAD no TLS here") as (port, heard):
        imap = source(port)
        with pytest.raises(TransportError, match="refused STARTTLS"):
            await imap.check()
        await imap.close()
    assert any(line.endswith("STARTTLS") for line in heard)
    assert not any(PASSWORD in line or "LOGIN" in line.upper() for line in heard), heard


def fake_smtp():
    """An SMTP server that offers AUTH but not STARTTLS."""

    def answer(text: str) -> tuple[bytes, bool]:
        verb = text.split(" ")[0].upper()
        if verb == "EHLO":
            return b"250-fake\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n", False
        if verb == "QUIT":
            return b"221 bye\r\n", True
        return b"250 ok\r\n", False

    return fake_server(b"220 fake ESMTP\r\n", answer)


async def test_smtp_starttls_not_offered_is_refused_before_the_login() -> None:
    async with fake_smtp() as (port, heard):
        settings = SmtpSettings(
            host="127.0.0.1", port=port, security="starttls", username="referee@example.org", password=PASSWORD
        )
        sender = SmtpSender(settings)
        with pytest.raises(Exception, match="STARTTLS"):
            await sender.check()
        mail = OutboundMail("k", "referee@example.org", ("someone@example.org",), b"Subject: x\r\n\r\nx\r\n")
        result = await sender.send(mail)
        await sender.close()
    assert result.outcome == "temporary" and "STARTTLS" in result.detail
    assert not any(line.upper().startswith(("AUTH", "MAIL")) for line in heard), heard
    assert not any(PASSWORD in line for line in heard)
