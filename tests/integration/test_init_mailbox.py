"""`referee init --address ... --imap-host ... --smtp-host ...` against the real servers of
the loopback stack: the file it writes reads by IMAP and sends by SMTP, and its check runs at
once. The stack's Postfix offers no login (no SMTP AUTH): the check says to remove username
from [smtp], and once that is done, `referee check-mail` passes and its test mail goes out."""

from __future__ import annotations

from referee.cli import main
from referee.config import load_service_config

from .conftest import MailStack
from .test_check_mail import write_config


def test_init_for_a_mailbox_checks_it_and_says_what_to_change(mailstack: MailStack, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for variable in ("REFEREE_CONFIG", "REFEREE_SECRET", "REFEREE_IMAP_PASSWORD", "REFEREE_SMTP_PASSWORD"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("REFEREE_MAIL_PASSWORD", mailstack.password)
    argv = ["init", "--address", mailstack.address("referee"), "--ca-file", str(mailstack.ca_file)]
    argv += ["--imap-host", f"{mailstack.host}:{mailstack.imaps_port}"]  # TLS from the first byte
    argv += ["--smtp-host", f"{mailstack.host}:{mailstack.smtp_port}"]  # STARTTLS
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert f"ok: IMAP {mailstack.host}:{mailstack.imaps_port} (tls): logged in as referee@example.test" in out, out
    assert (
        f"FAILED: SMTP {mailstack.host}:{mailstack.smtp_port}: the server offers no login (the SMTP AUTH extension "
        "is not supported by this server): it takes mail without one, so remove username" in out
    ), out
    path = tmp_path / "referee.toml"
    config = load_service_config(path)
    assert (config.mail.transport, config.mail.outbound) == ("imap", "smtp")
    assert config.mail.smtp.security == "starttls" and config.mail.imap.security == "tls"

    # as the line says: the username (and its password) out of [smtp]
    text = path.read_text()
    smtp = text.index("\n[smtp]\n")
    kept = [line for line in text[smtp:].splitlines() if not line.startswith(("username = ", "password_env = "))]
    path.write_text(text[:smtp] + "\n".join(kept) + "\n")
    assert main(["check-mail", "--send-to", mailstack.address("bob")]) == 0
    out = capsys.readouterr().out
    assert out.count("ok: ") == 3 and "FAILED" not in out, out
    assert f"SMTP {mailstack.host}:{mailstack.smtp_port} (starttls): connected, no login configured" in out
    assert "test mail to bob@example.test: accepted" in out


def test_a_username_on_a_plain_connection_without_auth_says_both_ways_out(mailstack: MailStack, tmp_path, capsys):
    config = write_config(tmp_path, mailstack)
    config.write_text(config.read_text() + 'username = "referee@example.test"\npassword = "secret"\n')
    assert main(["--config", str(config), "check-mail"]) == 1
    out = capsys.readouterr().out
    assert (
        f"FAILED: SMTP {mailstack.host}:{mailstack.smtp_port}: the server offers no login (no SMTP AUTH) on this "
        "unencrypted connection: if it takes mail without one, remove username from [smtp]; if it needs one, set "
        'security = "starttls"' in out
    ), out
