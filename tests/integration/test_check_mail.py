"""`referee check-mail` against the real servers: a working IMAP + SMTP set-up says so and
its test mail arrives; a wrong password and a server that is not there are named."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from referee.cli import main

from .conftest import MailStack
from .mailtools import imap_session


def write_config(folder: Path, stack: MailStack, *, password: str = "secret", smtp_port: int | None = None) -> Path:
    path = folder / "referee.toml"
    path.write_text(
        'secret = "0123456789abcdef0123"\n'
        '[mail]\naddress = "referee@example.test"\ninbound = "imap"\noutbound = "smtp"\n'
        f'[imap]\nhost = "{stack.host}"\nport = {stack.imap_port}\nsecurity = "none"\n'
        f'username = "{stack.address("referee")}"\npassword = "{password}"\ntimeout_seconds = 20\n'
        f'[smtp]\nhost = "{stack.host}"\nport = {smtp_port or stack.smtp_port}\nsecurity = "none"\n'
        "timeout_seconds = 20\n"
    )
    return path


def test_a_working_set_up_says_so_and_its_test_mail_arrives(mailstack: MailStack, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("REFEREE_IMAP_PASSWORD", raising=False)
    config = write_config(tmp_path, mailstack)
    assert main(["--config", str(config), "check-mail", "--send-to", mailstack.address("bob")]) == 0
    out = capsys.readouterr().out
    assert out.count("ok: ") == 3 and "FAILED" not in out, out
    assert "logged in as referee@example.test" in out and "Processed ready" in out
    assert "test mail to bob@example.test: accepted" in out
    assert "secret" not in out  # the password is never shown

    async def arrived() -> bool:
        async with imap_session(mailstack, "bob") as imap:
            await imap.select("INBOX")
            for _ in range(300):
                found = await imap.uid_search('SUBJECT "referee check-mail"', charset=None)
                if found.lines[0].split():
                    return True
                await asyncio.sleep(0.1)
        return False

    assert asyncio.run(arrived())


def test_a_wrong_password_and_a_missing_server_are_named(mailstack: MailStack, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("REFEREE_IMAP_PASSWORD", raising=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        nobody = probe.getsockname()[1]
    config = write_config(tmp_path, mailstack, password="wrong-password", smtp_port=nobody)
    assert main(["--config", str(config), "check-mail"]) == 1
    out = capsys.readouterr().out
    assert "FAILED: IMAP" in out and "refused the login" in out, out
    assert f"FAILED: SMTP {mailstack.host}:{nobody}" in out
    assert "wrong-password" not in out
