"""[mail] inbound / outbound and [smtp] in referee.toml: the transports chosen, the SMTP
password from the environment, a file or the file itself, never shown."""

from __future__ import annotations

import pytest

from referee.config import ConfigError, load_service_config

BASE = 'secret = "0123456789abcdef0123"\n[mail]\naddress = "referee@example.org"\n'
IMAP = 'inbound = "imap"\n[imap]\nhost = "h"\nusername = "u"\n'


def config(tmp_path, text: str):
    path = tmp_path / "referee.toml"
    path.write_text(BASE + text)
    return load_service_config(path)


def test_maildir_both_ways_by_default_and_the_old_transport_key_still_reads(tmp_path):
    assert (config(tmp_path, "").mail.transport, config(tmp_path, "").mail.outbound) == ("maildir", "maildir")
    assert config(tmp_path, 'transport = "maildir"\n').mail.transport == "maildir"
    with pytest.raises(ConfigError, match="not both"):
        config(tmp_path, 'transport = "maildir"\ninbound = "maildir"\n')


def test_smtp_out_with_the_password_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("REFEREE_SMTP_PASSWORD", "app-password-1")
    cfg = config(
        tmp_path,
        'outbound = "smtp"\n[smtp]\nhost = "smtp.example.org"\nusername = "referee@example.org"\nconcurrency = 8\n',
    )
    smtp = cfg.mail.smtp
    assert (smtp.host, smtp.port, smtp.security, smtp.concurrency) == ("smtp.example.org", 587, "starttls", 8)
    assert smtp.password == "app-password-1"
    assert "app-password-1" not in repr(cfg) and "app-password-1" not in repr(smtp)


def test_the_password_from_a_file_or_the_file_itself_and_tls_on_465(tmp_path, monkeypatch):
    monkeypatch.delenv("REFEREE_SMTP_PASSWORD", raising=False)
    (tmp_path / "smtp-password").write_text("from-a-file\n")
    text = 'outbound = "smtp"\n[smtp]\nhost = "h"\nsecurity = "tls"\nusername = "u"\npassword_file = "smtp-password"\n'
    smtp = config(tmp_path, text).mail.smtp
    assert (smtp.port, smtp.password) == (465, "from-a-file")
    monkeypatch.setenv("MY_PASS", "from-my-env")
    text = 'outbound = "smtp"\n[smtp]\nhost = "h"\nusername = "u"\npassword_env = "MY_PASS"\npassword = "inline"\n'
    assert config(tmp_path, text).mail.smtp.password == "from-my-env"
    monkeypatch.delenv("MY_PASS")
    assert config(tmp_path, text).mail.smtp.password == "inline"


@pytest.mark.parametrize(
    "text, message",
    [
        ('outbound = "smtp"\n', r"needs an \[smtp\] table"),
        ('outbound = "carrier-pigeon"\n', "outbound 'carrier-pigeon' is not supported"),
        ('inbound = "pop3"\n', "inbound 'pop3' is not supported"),
        ('outbound = "smtp"\n[smtp]\nhost = "h"\nsecurity = "ssl"\n', "security must be one of"),
        ('outbound = "smtp"\n[smtp]\nhost = "h"\nport = 0\n', "port must be a port number"),
        ('outbound = "smtp"\n[smtp]\nhost = "h"\nconcurrency = 0\n', "concurrency must be"),
        ('outbound = "smtp"\n[smtp]\nhost = "h"\npasword = "typo"\n', "unknown key 'pasword'"),
    ],
)
def test_mistakes_in_the_transport_tables_are_named(tmp_path, monkeypatch, text, message):
    monkeypatch.delenv("REFEREE_SMTP_PASSWORD", raising=False)
    with pytest.raises(ConfigError, match=message):
        config(tmp_path, text)


@pytest.mark.parametrize(
    "text, where",
    [
        ('outbound = "smtp"\n[smtp]\nhost = "h"\nusername = "u"\n', "[smtp]"),
        (IMAP, "[imap]"),
    ],
)
def test_a_login_without_its_password_stops_only_what_logs_in(tmp_path, monkeypatch, capsys, text, where):
    """A username without a password: the commands that read and send no mail (``status``,
    ``season load`` in an organizer's shell, where the service's EnvironmentFile is not) run;
    the service and ``check-mail``, which log in, say what to set before they try."""
    import asyncio

    from referee.cli import main
    from referee.mailcheck import check_mail
    from referee.service import Referee
    from referee.store.db import Store

    for variable in ("REFEREE_SMTP_PASSWORD", "REFEREE_IMAP_PASSWORD", "REFEREE_CONFIG"):
        monkeypatch.delenv(variable, raising=False)
    cfg = config(tmp_path, text)  # loads
    settings = cfg.mail.smtp if where == "[smtp]" else cfg.mail.imap
    assert settings.password is None and "needs a password" in settings.password_missing
    with pytest.raises(ConfigError, match=rf"\{where}: username 'u' needs a password: set \$REFEREE_"):
        Referee.configured(Store(f"sqlite:///{tmp_path / 'r.db'}"), cfg)
    path = tmp_path / "referee.toml"
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0  # the database and the Maildirs, on the file as it is
    checks = asyncio.run(check_mail(cfg))
    said = [(ok, line) for ok, line in checks if "needs a password" in line]
    assert len(said) == 1 and not said[0][0] and f"{where}: username 'u' needs a password" in said[0][1], checks
    assert main(["status"]) == 0
    capsys.readouterr()
    assert main(["tick"]) != 0
    assert "needs a password" in capsys.readouterr().err
    assert path.is_file()


def test_the_configured_referee_sends_by_smtp(tmp_path, monkeypatch):
    from referee.mail.smtp import SmtpSender
    from referee.service import Referee
    from referee.store.db import Store

    cfg = config(tmp_path, 'outbound = "smtp"\n[smtp]\nhost = "127.0.0.1"\nport = 10025\nsecurity = "none"\n')
    referee = Referee.configured(Store(f"sqlite:///{tmp_path / 'r.db'}"), cfg)
    assert isinstance(referee.sender, SmtpSender) and referee.sender.settings.port == 10025


def test_imap_in_with_its_folders_and_password(tmp_path, monkeypatch):
    monkeypatch.setenv("REFEREE_IMAP_PASSWORD", "imap-app-password")
    cfg = config(
        tmp_path,
        'inbound = "imap"\n[imap]\nhost = "imap.example.org"\nusername = "referee@example.org"\n'
        'processed_folder = "Referee/Done"\nmax_message_bytes = 2097152\n',
    )
    imap = cfg.mail.imap
    assert (imap.host, imap.port, imap.security, imap.folder) == ("imap.example.org", 993, "tls", "INBOX")
    assert (imap.processed_folder, imap.max_message_bytes) == ("Referee/Done", 2 << 20)
    assert imap.password == "imap-app-password"
    assert "imap-app-password" not in repr(cfg)


@pytest.mark.parametrize(
    "text, message",
    [
        ('inbound = "imap"\n', r"needs an \[imap\] table"),
        (IMAP + 'security = "ssl"\n', "security must be one of tls, starttls, none"),
        (IMAP + 'processed_folder = "INBOX"\n', "must not be the folder"),
        (IMAP + "max_message_bytes = 10\n", "max_message_bytes"),
        ('inbound = "imap"\n[imap]\nhost = "h"\n', "missing required key 'username'"),
    ],
)
def test_mistakes_in_the_imap_table_are_named(tmp_path, monkeypatch, text, message):
    monkeypatch.delenv("REFEREE_IMAP_PASSWORD", raising=False)
    with pytest.raises(ConfigError, match=message):
        config(tmp_path, text)


def test_the_configured_referee_reads_by_imap(tmp_path, monkeypatch):
    from referee.mail.imap import ImapSource
    from referee.service import Referee
    from referee.store.db import Store

    monkeypatch.setenv("REFEREE_IMAP_PASSWORD", "p")
    cfg = config(tmp_path, 'inbound = "imap"\n[imap]\nhost = "127.0.0.1"\nusername = "u"\nsecurity = "none"\n')
    referee = Referee.configured(Store(f"sqlite:///{tmp_path / 'r.db'}"), cfg)
    assert isinstance(referee.source, ImapSource) and referee.source.settings.port == 143


def test_imap_starttls_on_143_tls_on_993(tmp_path, monkeypatch):
    monkeypatch.setenv("REFEREE_IMAP_PASSWORD", "p")
    imap = config(tmp_path, IMAP + 'security = "starttls"\n').mail.imap
    assert (imap.security, imap.port, imap.validate_certs, imap.ca_file) == ("starttls", 143, True, None)
    assert config(tmp_path, IMAP + 'security = "starttls"\nport = 1143\n').mail.imap.port == 1143
    assert (config(tmp_path, IMAP).mail.imap.security, config(tmp_path, IMAP).mail.imap.port) == ("tls", 993)


def write_ca(path) -> None:
    """A CA certificate (PEM), made with the openssl command."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        + ["-keyout", str(path.with_suffix(".key")), "-out", str(path), "-days", "2", "-subj", "/CN=private CA"],
        check=True,
        capture_output=True,
    )


def test_ca_file_for_imap_and_smtp_relative_to_the_configuration_file(tmp_path, monkeypatch):
    monkeypatch.setenv("REFEREE_IMAP_PASSWORD", "p")
    (tmp_path / "tls").mkdir()
    write_ca(tmp_path / "tls" / "private-ca.pem")
    cfg = config(
        tmp_path,
        'outbound = "smtp"\n' + IMAP + 'security = "starttls"\nca_file = "tls/private-ca.pem"\n'
        '[smtp]\nhost = "smtp.example.org"\nsecurity = "tls"\nca_file = "tls/private-ca.pem"\n',
    )
    assert cfg.mail.imap.ca_file == tmp_path / "tls" / "private-ca.pem"
    assert cfg.mail.smtp.ca_file == tmp_path / "tls" / "private-ca.pem"
    assert (cfg.mail.smtp.security, cfg.mail.smtp.port) == ("tls", 465)
    absolute = config(tmp_path, IMAP + f'ca_file = "{tmp_path / "tls" / "private-ca.pem"}"\n').mail.imap
    assert absolute.ca_file == tmp_path / "tls" / "private-ca.pem"


@pytest.mark.parametrize("table", ["imap", "smtp"])
def test_mistakes_with_ca_file_are_named(tmp_path, monkeypatch, table):
    monkeypatch.setenv("REFEREE_IMAP_PASSWORD", "p")
    head = IMAP if table == "imap" else 'outbound = "smtp"\n[smtp]\nhost = "h"\n'
    (tmp_path / "not-a-cert.pem").write_text("hello\n")
    write_ca(tmp_path / "ca.pem")
    with pytest.raises(ConfigError, match=rf"\[{table}\]: ca_file .*missing\.pem: no such file"):
        config(tmp_path, head + 'ca_file = "missing.pem"\n')
    with pytest.raises(ConfigError, match=rf"\[{table}\]: ca_file .*not-a-cert\.pem: not a file of PEM certificates"):
        config(tmp_path, head + 'ca_file = "not-a-cert.pem"\n')
    with pytest.raises(ConfigError, match='ca_file is for TLS, but security = "none"'):
        config(tmp_path, head + 'security = "none"\nca_file = "ca.pem"\n')
    with pytest.raises(ConfigError, match="'ca_file' must be a non-empty string"):
        config(tmp_path, head + "ca_file = 3\n")


def test_the_configured_sources_verify_against_the_ca_file(tmp_path, monkeypatch):
    """The transports build their TLS contexts from the settings: ca_file's CA only, the
    host name checked; validate_certs = false turns the checks off."""
    import ssl

    from referee.mail.imap import ImapSource
    from referee.mail.smtp import SmtpSender

    monkeypatch.setenv("REFEREE_IMAP_PASSWORD", "p")
    write_ca(tmp_path / "ca.pem")
    cfg = config(
        tmp_path,
        'outbound = "smtp"\n' + IMAP + 'security = "starttls"\nca_file = "ca.pem"\n'
        '[smtp]\nhost = "h"\nca_file = "ca.pem"\n',
    )
    for context in (ImapSource(cfg.mail.imap)._tls_context(), SmtpSender(cfg.mail.smtp)._tls_context()):
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
        assert [ca["subject"] for ca in context.get_ca_certs()] == [((("commonName", "private CA"),),)]
        assert context.minimum_version >= ssl.TLSVersion.TLSv1_2
    lax = config(tmp_path, IMAP + "validate_certs = false\n").mail.imap
    context = ImapSource(lax)._tls_context()
    assert context.verify_mode == ssl.CERT_NONE and not context.check_hostname
