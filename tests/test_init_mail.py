"""`referee init` and the mail set-up: the file it writes uses today's keys (inbound,
outbound) and carries commented [imap] and [smtp] tables that work once uncommented as the
file says; given a mailbox's servers it writes them in force and checks them at once."""

from __future__ import annotations

import re
import socket
import tomllib
from pathlib import Path

import pytest

from referee.cli import main
from referee.config import load_service_config

PASSWORD = "an-app-password-42"


@pytest.fixture
def empty(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "new"
    folder.mkdir()
    monkeypatch.chdir(folder)
    for variable in ("REFEREE_CONFIG", "REFEREE_SECRET", "REFEREE_MAIL_PASSWORD"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("REFEREE_IMAP_PASSWORD", raising=False)
    monkeypatch.delenv("REFEREE_SMTP_PASSWORD", raising=False)
    return folder


def follow_the_comments(text: str) -> str:
    """What the file (and docs/operations.md, "Reading by IMAP", "Sending by SMTP") say to do
    for a mailbox at a provider: inbound = "imap" and outbound = "smtp" in [mail], and the
    "# " removed in front of each line from [imap] (and [smtp]) to the next empty line."""
    lines = text.splitlines()
    assert sum(line.startswith(('inbound = "maildir"', 'outbound = "maildir"')) for line in lines) == 2
    out = []
    uncommenting = False
    for line in lines:
        if line.startswith('inbound = "maildir"'):
            line = 'inbound = "imap"'
        elif line.startswith('outbound = "maildir"'):
            line = 'outbound = "smtp"'
        elif line in ("# [imap]", "# [smtp]"):
            uncommenting = True
        if not line:
            uncommenting = False
        out.append(line[2:] if uncommenting else line)
    return "\n".join(out) + "\n"


def test_init_writes_todays_keys_and_the_imap_and_smtp_tables_ready_to_uncomment(empty, monkeypatch, capsys):
    assert main(["init"]) == 0
    assert "wrote referee.toml" in capsys.readouterr().out
    path = empty / "referee.toml"
    text = path.read_text()
    mail = tomllib.loads(text)["mail"]
    assert "transport" not in mail and (mail["inbound"], mail["outbound"]) == ("maildir", "maildir")
    config = load_service_config(path)
    assert (config.mail.transport, config.mail.outbound, config.mail.imap, config.mail.smtp) == (
        "maildir",
        "maildir",
        None,
        None,
    )
    assert (empty / "mail" / "inbox").is_dir() and (empty / "mail" / "outbox").is_dir()
    for key in ("host", "security", "username", "password_env", "folder", "processed_folder"):
        assert f"# {key} = " in text  # each commented key ...
    keys = [line for line in text.splitlines() if re.match(r"# [a-z_]+ = ", line)]
    assert len(keys) == 10 and all(re.search(r"\s# \S", line[2:]) for line in keys)  # ... explained

    path.write_text(follow_the_comments(text))
    unset = load_service_config(path).mail  # loads: only the commands that log in need the password
    for table in (unset.imap, unset.smtp):
        assert table.password is None and "needs a password: set $REFEREE_MAIL_PASSWORD" in table.password_missing
    monkeypatch.setenv("REFEREE_MAIL_PASSWORD", PASSWORD)
    config = load_service_config(path)
    assert (config.mail.transport, config.mail.outbound) == ("imap", "smtp")
    imap, smtp = config.mail.imap, config.mail.smtp
    assert (imap.host, imap.port, imap.security, imap.username, imap.password) == (
        "imap.example.org",
        993,
        "tls",
        "referee@example.test",
        PASSWORD,
    )
    assert (imap.folder, imap.processed_folder) == ("INBOX", "Processed")
    assert (smtp.host, smtp.port, smtp.security, smtp.username, smtp.password) == (
        "smtp.example.org",
        587,
        "starttls",
        "referee@example.test",
        PASSWORD,
    )


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_init_for_a_mailbox_writes_imap_and_smtp_and_checks_them(empty, monkeypatch, capsys):
    """No server answers at these ports: the file is written and ready, the check says which
    server it could not reach, and the exit status is 1."""
    monkeypatch.setenv("REFEREE_MAIL_PASSWORD", PASSWORD)
    imap_port, smtp_port = closed_port(), closed_port()
    argv = ["init", "--address", "referee@example.org", "--user", "ref-login"]
    argv += ["--imap-host", f"127.0.0.1:{imap_port}", "--smtp-host", f"127.0.0.1:{smtp_port}"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "wrote referee.toml\n" in out and "database ready: sqlite:///" in out
    assert f"FAILED: IMAP 127.0.0.1:{imap_port}: cannot reach" in out
    assert f"FAILED: SMTP 127.0.0.1:{smtp_port}:" in out and "referee check-mail" in out
    assert PASSWORD not in out
    text = (empty / "referee.toml").read_text()
    assert PASSWORD not in text and "transport" not in tomllib.loads(text)["mail"]
    config = load_service_config(empty / "referee.toml")
    assert (config.mail.address, config.mail.transport, config.mail.outbound) == ("referee@example.org", "imap", "smtp")
    assert (config.mail.imap.host, config.mail.imap.port, config.mail.imap.security) == ("127.0.0.1", imap_port, "tls")
    assert (config.mail.smtp.port, config.mail.smtp.security) == (smtp_port, "starttls")
    assert config.mail.imap.username == config.mail.smtp.username == "ref-login"
    assert config.mail.imap.password == config.mail.smtp.password == PASSWORD
    assert not (empty / "mail").exists()  # no Maildirs for a mailbox read by IMAP and sent to by SMTP


@pytest.mark.parametrize(
    "imap, smtp, security",
    [
        ("imap.example.org", "smtp.example.org", ("tls", 993, "starttls", 587)),
        ("imap.example.org:143", "smtp.example.org:465", ("starttls", 143, "tls", 465)),
    ],
)
def test_the_security_follows_the_port(empty, monkeypatch, imap, smtp, security):
    from referee.config.new_file import init_config_text

    monkeypatch.setenv("REFEREE_MAIL_PASSWORD", PASSWORD)
    text = init_config_text(
        "sqlite:///r.db", "0123456789abcdef0123", address="r@example.org", imap_host=imap, smtp_host=smtp
    )
    (empty / "referee.toml").write_text(text)
    config = load_service_config(empty / "referee.toml")
    found = (config.mail.imap.security, config.mail.imap.port, config.mail.smtp.security, config.mail.smtp.port)
    assert found == security


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--address", "r@example.org", "--imap-host", "imap.example.org"],
            "set REFEREE_MAIL_PASSWORD to the mailbox's password",
        ),
        (["--imap-host", "imap.example.org"], "need --address"),
        (["--user", "r"], "give --imap-host and/or --smtp-host"),
        (["--address", "r@example.org", "--smtp-host", "smtp.example.org:x"], "give HOST or HOST:PORT"),
        (["--address", "r@example.org", "--imap-host", "imap.example.org", "--smtp-no-login"], "for the server of"),
        (
            ["--address", "r@example.org", "--imap-host", "i.example.org", "--smtp-host", "s", "--smtp-no-login"],
            "set REFEREE_MAIL_PASSWORD to the mailbox's password",
        ),
    ],
)
def test_init_options_that_cannot_work_are_refused_and_leave_nothing(empty, monkeypatch, capsys, argv, message):
    if "give HOST" in message:
        monkeypatch.setenv("REFEREE_MAIL_PASSWORD", PASSWORD)
    assert main(["init", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert list(empty.iterdir()) == []


def test_a_relay_without_a_login_needs_no_username_and_no_password(empty, monkeypatch, capsys):
    """``--smtp-no-login`` (a relay of one's own that takes mail without SMTP AUTH): [smtp]
    has no username, so no password is asked for; Maildirs in, as no --imap-host is given."""
    monkeypatch.delenv("REFEREE_MAIL_PASSWORD", raising=False)
    port = closed_port()
    argv = ["init", "--address", "referee@example.org", "--smtp-host", f"127.0.0.1:{port}", "--smtp-no-login"]
    assert main(argv) == 1  # nothing answers at the port
    out = capsys.readouterr().out
    assert f"FAILED: SMTP 127.0.0.1:{port}:" in out and "needs a password" not in out
    text = (empty / "referee.toml").read_text()
    assert "no SMTP AUTH" in text and "\nusername" not in text and "\npassword_env" not in text
    config = load_service_config(empty / "referee.toml")
    assert (config.mail.transport, config.mail.outbound) == ("maildir", "smtp")
    assert config.mail.smtp.username is None and config.mail.smtp.password_missing is None


def test_the_password_is_no_option(empty, capsys):
    with pytest.raises(SystemExit):
        main(["init", "--password", "x"])


def test_options_for_a_new_file_are_refused_when_it_exists(empty, monkeypatch, capsys):
    assert main(["init"]) == 0
    monkeypatch.setenv("REFEREE_MAIL_PASSWORD", PASSWORD)
    assert main(["init", "--address", "r@example.org", "--imap-host", "imap.example.org"]) == 2
    assert "exists already; edit it instead of passing --address, --imap-host" in capsys.readouterr().err
