"""TLS against the real servers: IMAP by STARTTLS (143-style port) and by implicit TLS
(993-style), SMTP by STARTTLS (587-style) and by implicit TLS (465-style), each verified
against the stack's throwaway CA; a CA that did not sign the servers' certificate (or the
system's CAs) is refused with a message that says what to change, by the transports and by
``referee check-mail``."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from referee.cli import main
from referee.config import ImapSettings, SmtpSettings
from referee.mail.imap import ImapSource
from referee.mail.smtp import SmtpSender
from referee.mail.tls import is_encrypted
from referee.mail.transport import OutboundMail, TransportError

from .conftest import MailStack
from .mailtools import DELIVERY_TIMEOUT, imap_session, make_message, send, wait_for_message_id

TIMEOUT = 20.0


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory) -> Path:
    """A CA certificate of its own: a valid PEM CA that did not sign the stack's certificate."""
    folder = tmp_path_factory.mktemp("other-ca")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        + ["-keyout", str(folder / "ca.key"), "-out", str(folder / "ca.pem"), "-days", "2"]
        + ["-subj", "/CN=not the mailstack CA"],
        check=True,
        capture_output=True,
    )
    return folder / "ca.pem"


def imap_source(stack: MailStack, security: str, *, ca_file: Path | None, port: int | None = None) -> ImapSource:
    port = port or (stack.imaps_port if security == "tls" else stack.imap_port)
    settings = ImapSettings(
        host=stack.host,
        port=port,
        security=security,
        username=stack.address("referee"),
        password=stack.password,
        timeout=TIMEOUT,
        ca_file=ca_file,
    )
    return ImapSource(settings)


def smtp_sender(stack: MailStack, security: str, *, ca_file: Path | None) -> SmtpSender:
    port = stack.smtps_port if security == "tls" else stack.smtp_port
    settings = SmtpSettings(host=stack.host, port=port, security=security, timeout=TIMEOUT, ca_file=ca_file)
    return SmtpSender(settings)


@pytest.mark.parametrize("security", ["starttls", "tls"])
async def test_imap_over_tls_verified_against_the_stacks_ca(mailstack: MailStack, security: str) -> None:
    source = imap_source(mailstack, security, ca_file=mailstack.ca_file)
    try:
        said = await source.check()
        assert f"({security}): logged in as referee@example.test" in said, said
        imap = source._imap
        assert imap is not None and is_encrypted(imap.protocol.transport)
        ssl_object = imap.protocol.transport.get_extra_info("ssl_object")
        assert ssl_object.version() in ("TLSv1.2", "TLSv1.3")
        # CAPABILITY was asked again under TLS: Dovecot offers STARTTLS only in clear
        assert "STARTTLS" not in imap.protocol.capabilities and "IDLE" in imap.protocol.capabilities
        await source.pending()  # the session works: NOOP, SEARCH, FETCH over TLS
    finally:
        await source.close()


@pytest.mark.parametrize("security", ["starttls", "tls"])
async def test_smtp_over_tls_verified_against_the_stacks_ca_and_the_mail_arrives(
    mailstack: MailStack, security: str
) -> None:
    sender = smtp_sender(mailstack, security, ca_file=mailstack.ca_file)
    to = mailstack.address("alice")
    message_id, raw = make_message(mailstack, to, f"over {security}", "sent over TLS\n")
    try:
        assert f"({security}): connected" in await sender.check()
        result = await sender.send(OutboundMail(message_id, mailstack.address("referee"), (to,), raw))
        assert result.outcome == "sent", result.detail
        assert sender.connections_opened == 1  # the one check() opened, reused for the mail
        assert len(sender._idle) == 1 and is_encrypted(sender._idle[0].transport)
    finally:
        await sender.close()
    async with imap_session(mailstack, "alice") as imap:
        assert (await imap.select("INBOX")).result == "OK"
        await wait_for_message_id(imap, message_id, mailstack)
    assert "TLS connection established" in (mailstack.dir / "log" / "postfix.log").read_text()


@pytest.mark.parametrize("security", ["starttls", "tls"])
@pytest.mark.parametrize("trusted", ["other CA", "system CAs"])
async def test_a_certificate_the_client_does_not_trust_is_refused_clearly(
    mailstack: MailStack, other_ca: Path, security: str, trusted: str
) -> None:
    ca_file = other_ca if trusted == "other CA" else None
    source = imap_source(mailstack, security, ca_file=ca_file)
    with pytest.raises(TransportError) as refused:
        await source.pending()
    await source.close()
    said = str(refused.value)
    assert "TLS certificate of 127.0.0.1:" in said and "not accepted" in said, said
    assert "unable to get local issuer certificate" in said
    assert (f"ca_file {other_ca}" if ca_file else "the system's CAs") in said
    assert "set ca_file" in said and mailstack.password not in said

    sender = smtp_sender(mailstack, security, ca_file=ca_file)
    with pytest.raises(TransportError, match="TLS certificate of 127.0.0.1:.* not accepted"):
        await sender.check()
    to = mailstack.address("bob")
    message_id, raw = make_message(mailstack, to, "never sent", "not over an untrusted connection\n")
    result = await sender.send(OutboundMail(message_id, mailstack.address("referee"), (to,), raw))
    assert result.outcome == "temporary" and "not accepted" in result.detail  # tried again later
    await sender.close()


def write_config(folder: Path, stack: MailStack, ca_file: Path) -> Path:
    path = folder / "referee.toml"
    path.write_text(
        'secret = "0123456789abcdef0123"\n'
        '[mail]\naddress = "referee@example.test"\ninbound = "imap"\noutbound = "smtp"\n'
        f'[imap]\nhost = "{stack.host}"\nport = {stack.imap_port}\nsecurity = "starttls"\n'
        f'ca_file = "{ca_file}"\n'
        f'username = "{stack.address("referee")}"\npassword = "{stack.password}"\ntimeout_seconds = 20\n'
        f'[smtp]\nhost = "{stack.host}"\nport = {stack.smtps_port}\nsecurity = "tls"\n'
        f'ca_file = "{ca_file}"\ntimeout_seconds = 20\n'
    )
    return path


def test_check_mail_over_tls_and_with_the_wrong_ca(mailstack: MailStack, other_ca: Path, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("REFEREE_IMAP_PASSWORD", raising=False)
    good = write_config(tmp_path, mailstack, mailstack.ca_file)
    assert main(["--config", str(good), "check-mail"]) == 0
    out = capsys.readouterr().out
    assert out.count("ok: ") == 2 and "(starttls): logged in" in out and "(tls): connected" in out, out

    (tmp_path / "wrong").mkdir()
    wrong = write_config(tmp_path / "wrong", mailstack, other_ca)
    assert main(["--config", str(wrong), "check-mail"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    imap_line = next(line for line in lines if line.startswith("FAILED: IMAP"))
    smtp_line = next(line for line in lines if line.startswith("FAILED: SMTP"))
    for line in (imap_line, smtp_line):
        assert "TLS certificate of 127.0.0.1:" in line and "not accepted" in line, out
        assert f"checked against the CA in ca_file {other_ca}" in line and "set ca_file" in line, out
    assert "Traceback" not in out and mailstack.password not in out


async def test_idle_over_starttls_hears_new_mail(mailstack: MailStack) -> None:
    """The IDLE watcher has a connection of its own: upgraded the same way."""
    source = imap_source(mailstack, "starttls", ca_file=mailstack.ca_file)
    loop = asyncio.get_running_loop()
    try:
        waiting = asyncio.ensure_future(source.wait_for_mail(DELIVERY_TIMEOUT))
        deadline = loop.time() + DELIVERY_TIMEOUT
        while source._watcher is None or source._watcher._imap is None or not source._watcher._imap.has_pending_idle():
            assert loop.time() < deadline and not waiting.done(), "the watcher never went into IDLE"
            await asyncio.sleep(0.05)
        assert is_encrypted(source._watcher._imap.protocol.transport)
        _, raw = make_message(mailstack, mailstack.address("referee"), "idle over TLS", "wake up\n")
        await send(mailstack, [mailstack.address("referee")], raw)
        assert await waiting
    finally:
        await source.close()
