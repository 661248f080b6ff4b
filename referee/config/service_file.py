"""The service file (``referee.toml``): the database, the mail (``[mail]``, ``[imap]``,
``[smtp]``, ``[dkim]``), the archive, the time zone; read and checked by
:func:`load_service_config`, found by :func:`find_config`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.config.common import (
    CONFIG_NAME,
    _EMAIL,
    ConfigError,
    parse_duration,
    _table,
    _str,
    _bool,
    _unknown,
    read_toml,
)

if TYPE_CHECKING:  # [dkim]'s module is imported where a [dkim] table is read
    from referee.mail.dkim import DkimSettings

# ---------------------------------------------------------------------------- service config


@dataclass(frozen=True)
class SmtpSettings:
    """``[smtp]``: the server outbound mail goes to (:mod:`referee.mail.smtp`)."""

    host: str
    port: int
    security: str = "starttls"  # "tls": TLS from the start (port 465); "starttls" (587); "none": loopback only
    username: str | None = None
    password: str | None = field(default=None, repr=False)  # never logged, never shown
    # why a login cannot be made (a username without a password): said when the transport
    # is built (``referee run``, ``tick``, ``check-mail``), not by the commands that send
    # and read no mail (``status``, ``season load``: no password in an organizer's shell)
    password_missing: str | None = None
    concurrency: int = 4  # connections sending at once
    timeout: float = 60.0  # seconds for any one step (connect, a command, the data)
    local_hostname: str | None = None  # the EHLO name (default: this host's name)
    validate_certs: bool = True
    ca_file: Path | None = None  # trust this CA (PEM) instead of the system's (a private CA)


@dataclass(frozen=True)
class ImapSettings:
    """``[imap]``: the mailbox inbound mail is read from (:mod:`referee.mail.imap`)."""

    host: str
    port: int
    # "tls": TLS from the start (port 993); "starttls": plain connection upgraded with STARTTLS
    # before the login (143); "none": no TLS at all, loopback only
    security: str = "tls"
    username: str = ""
    password: str | None = field(default=None, repr=False)  # never logged, never shown
    password_missing: str | None = None  # as SmtpSettings's
    folder: str = "INBOX"  # where mail arrives
    processed_folder: str = "Processed"  # where it goes once stored (created when missing)
    max_message_bytes: int = 1 << 20  # a larger mail is read only this far
    timeout: float = 60.0  # seconds for any one command
    validate_certs: bool = True
    ca_file: Path | None = None  # trust this CA (PEM) instead of the system's (a private CA)


@dataclass(frozen=True)
class ArchiveSettings:
    """``[archive]``: the static site of the seasons (:mod:`referee.archive.site`), which
    ``referee run`` brings up to date after every cycle that changed something."""

    dir: Path  # where the site is written (made when missing)
    base_url: str | None = None  # where it is published, e.g. "https://example.org/archive/" (absolute feed links)


INBOUND = ("maildir", "imap")
OUTBOUND = ("maildir", "smtp")
SECURITY = ("tls", "starttls", "none")


@dataclass
class MailConfig:
    address: str  # our From; personal reply addresses are local+token@domain
    name: str = "Referee"
    transport: str = "maildir"  # the inbound transport (the old name of `inbound`)
    inbox: Path | None = None  # maildir transport: where inbound mail is delivered
    outbox: Path | None = None  # maildir transport: where we deliver outbound mail
    per_address: bool = True  # one Maildir per recipient under outbox/
    outbound: str = "maildir"  # "maildir" or "smtp"
    smtp: SmtpSettings | None = None  # [smtp], when outbound = "smtp"
    imap: ImapSettings | None = None  # [imap], when inbound = "imap"
    # who is told by mail when a player's address keeps bouncing (None: a warning in the log)
    organizer: str | None = None
    bounce_limit: int = 3  # hard bounces of one player's address within bounce_window...
    bounce_window: timedelta = timedelta(days=7)  # ...that make it unreachable
    # the authserv-id(s) of the receiving server(s) whose Authentication-Results header is
    # trusted: when set, a seat's mail is obeyed only if that header shows a pass for the From domain
    trusted_authserv_id: tuple[str, ...] | None = None

    @property
    def local(self) -> str:
        return self.address.split("@", 1)[0]

    @property
    def domain(self) -> str:
        return self.address.split("@", 1)[1]


@dataclass
class ServiceConfig:
    path: Path | None
    database: str
    secret: bytes
    mail: MailConfig
    poll_seconds: float = 30.0
    outbox_max_attempts: int = 10
    log_level: str = "INFO"
    # `referee run` works this far behind the clock, so that a mail the MTA is still
    # delivering when a deadline passes is seen before the deadline closes
    arrival_grace_seconds: float = 5.0
    # replies that are not receipts (errors, notices) per address and hour; past it, the
    # address gets no such reply until it has been quiet for quiet_minutes (loops, floods)
    replies_per_hour: int = 10
    quiet_minutes: int = 60
    # notices about mail that is not authenticated (a forged sender, a mail to the general
    # address) per address and hour: a budget of their own, so that mail anyone can forge in a
    # player's name never holds back the replies to the player's own mail
    notices_per_hour: int = 3
    # mails from one sender judged within an hour (by arrival); past it, ignored unread
    mails_per_sender_hour: int = 60
    # worker processes that make the mails of a large batch (a close of many matches) beside
    # the referee's own (referee.match.press); None: one on a machine of two cores or more
    mail_workers: int | None = None
    dkim: DkimSettings | None = None  # [dkim]: outbound mail is signed when set
    archive: ArchiveSettings | None = None  # [archive]: `referee run` keeps the static site current
    extra: dict[str, Any] = field(default_factory=dict)


def load_service_config(path: Path) -> ServiceConfig:
    """Read ``referee.toml``. Relative paths are relative to the file's folder."""
    path = Path(path)
    data = read_toml(path)
    where = str(path)
    _unknown(data, {"database", "secret", "secret_file", "mail", "service", "smtp", "imap", "dkim", "archive"}, where)
    base = path.parent.resolve()

    database = _str(data, "database", where, "sqlite:///referee.db")
    if database.startswith("sqlite:///") and not database.startswith("sqlite:////"):
        rel = database[len("sqlite:///") :]
        if rel and rel != ":memory:":
            database = f"sqlite:///{(base / rel).resolve()}"

    env_secret = os.environ.get("REFEREE_SECRET")
    if env_secret:
        secret = env_secret.encode()
    elif "secret_file" in data:
        secret_path = base / _str(data, "secret_file", where)
        try:
            secret = secret_path.read_bytes().strip()
        except OSError as exc:
            raise ConfigError(f"{where}: secret_file {secret_path}: {exc.strerror}") from None
    else:
        secret = _str(data, "secret", where).encode()
    if len(secret) < 16:
        raise ConfigError(f"{where}: the secret must be at least 16 characters long")

    mail = _table(data, "mail", where)
    mwhere = f"{where} [mail]"
    _unknown(
        mail,
        {"address", "name", "transport", "inbound", "outbound", "inbox", "outbox", "per_address"}
        | {"organizer", "bounce_limit", "bounce_window", "trusted_authserv_id"},
        mwhere,
    )
    address = _str(mail, "address", mwhere).lower()
    if not _EMAIL.match(address) or "+" in address.split("@")[0]:
        raise ConfigError(f"{mwhere}: address {address!r} must be a plain address such as referee@example.org")
    organizer = _str(mail, "organizer", mwhere).lower() if "organizer" in mail else None
    if organizer is not None:
        if not _EMAIL.match(organizer):
            raise ConfigError(f"{mwhere}: organizer {organizer!r} is not an email address")
        local, _, domain = organizer.partition("@")
        if f"{local.split('+', 1)[0]}@{domain}" == address:
            raise ConfigError(f"{mwhere}: organizer must not be the referee's own address ({address})")
    bounce_limit = mail.get("bounce_limit", 3)
    if not isinstance(bounce_limit, int) or isinstance(bounce_limit, bool) or not 1 <= bounce_limit <= 100:
        raise ConfigError(f"{mwhere}: bounce_limit must be a whole number from 1 to 100, got {bounce_limit!r}")
    bounce_window = parse_duration(mail.get("bounce_window", "7d"), f"{mwhere} bounce_window")
    if "transport" in mail and "inbound" in mail:
        raise ConfigError(f"{mwhere}: set inbound (transport is its old name), not both")
    transport = _str(mail, "inbound", mwhere, None) if "inbound" in mail else _str(mail, "transport", mwhere, "maildir")
    if transport not in INBOUND:
        raise ConfigError(f"{mwhere}: inbound {transport!r} is not supported (supported: {', '.join(INBOUND)})")
    outbound = _str(mail, "outbound", mwhere, "maildir")
    if outbound not in OUTBOUND:
        raise ConfigError(f"{mwhere}: outbound {outbound!r} is not supported (supported: {', '.join(OUTBOUND)})")
    smtp = _smtp(_table(data, "smtp", where), f"{where} [smtp]", base) if "smtp" in data else None
    imap = _imap(_table(data, "imap", where), f"{where} [imap]", base) if "imap" in data else None
    if transport == "imap" and imap is None:
        raise ConfigError(f'{mwhere}: inbound = "imap" needs an [imap] table (host, username, folder, ...)')
    if outbound == "smtp" and smtp is None:
        raise ConfigError(f'{mwhere}: outbound = "smtp" needs an [smtp] table (host, port, security, username, ...)')
    mc = MailConfig(
        address=address,
        name=_str(mail, "name", mwhere, "Referee"),
        transport=transport,
        inbox=(base / _str(mail, "inbox", mwhere, "mail/inbox")).resolve(),
        outbox=(base / _str(mail, "outbox", mwhere, "mail/outbox")).resolve(),
        per_address=_bool(mail, "per_address", mwhere, True),
        outbound=outbound,
        smtp=smtp,
        imap=imap,
        organizer=organizer,
        bounce_limit=bounce_limit,
        bounce_window=bounce_window,
        trusted_authserv_id=_authserv_id(mail, mwhere),
    )

    svc = _table(data, "service", where)
    swhere = f"{where} [service]"
    _unknown(
        svc,
        {
            "poll_seconds",
            "outbox_max_attempts",
            "log_level",
            "arrival_grace_seconds",
            "replies_per_hour",
            "quiet_minutes",
            "notices_per_hour",
            "mails_per_sender_hour",
            "mail_workers",
        },
        swhere,
    )
    poll = svc.get("poll_seconds", 30)
    if not isinstance(poll, (int, float)) or isinstance(poll, bool) or poll <= 0:
        raise ConfigError(f"{swhere}: poll_seconds must be a positive number, got {poll!r}")
    attempts = svc.get("outbox_max_attempts", 10)
    if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
        raise ConfigError(f"{swhere}: outbox_max_attempts must be a positive integer, got {attempts!r}")
    grace = svc.get("arrival_grace_seconds", 5)
    if not isinstance(grace, (int, float)) or isinstance(grace, bool) or not 0 <= grace <= 600:
        raise ConfigError(f"{swhere}: arrival_grace_seconds must be a number from 0 to 600, got {grace!r}")
    limits = {}
    for name, default in (
        ("replies_per_hour", 10),
        ("quiet_minutes", 60),
        ("notices_per_hour", 3),
        ("mails_per_sender_hour", 60),
    ):
        value = svc.get(name, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{swhere}: {name} must be a positive integer, got {value!r}")
        limits[name] = value
    workers = svc.get("mail_workers")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or not 0 <= workers <= 8):
        raise ConfigError(f"{swhere}: mail_workers must be a whole number from 0 to 8, got {workers!r}")
    level = str(svc.get("log_level", "INFO")).upper()
    if level not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ConfigError(f"{swhere}: log_level must be DEBUG, INFO, WARNING or ERROR, got {level!r}")
    return ServiceConfig(
        path=path,
        database=database,
        secret=secret,
        mail=mc,
        poll_seconds=float(poll),
        outbox_max_attempts=attempts,
        log_level=level,
        arrival_grace_seconds=float(grace),
        **limits,
        mail_workers=workers,
        dkim=_dkim(_table(data, "dkim", where), f"{where} [dkim]", base, mc.domain) if "dkim" in data else None,
        archive=_archive(_table(data, "archive", where), f"{where} [archive]", base) if "archive" in data else None,
    )


def _archive(table: dict[str, Any], where: str, base: Path) -> ArchiveSettings:
    """``[archive]``: ``dir`` (relative to this file) and, optionally, ``base_url``: the
    http(s) address the folder is published at, which the Atom feeds name themselves by
    (without it their links are relative, which feed readers resolve against the feed's
    own address)."""
    from urllib.parse import urlsplit

    _unknown(table, {"dir", "base_url"}, where)
    folder = (base / _str(table, "dir", where)).resolve()
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{where}: dir {folder} is not a folder")
    base_url = None
    if "base_url" in table:
        base_url = _str(table, "base_url", where)
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise ConfigError(
                f"{where}: base_url must be an http(s) address without query or fragment, such as "
                f'"https://example.org/archive/", got {base_url!r}'
            )
        base_url = base_url if base_url.endswith("/") else base_url + "/"
    return ArchiveSettings(dir=folder, base_url=base_url)


_AUTHSERV_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")


def _authserv_id(mail: dict[str, Any], where: str) -> tuple[str, ...] | None:
    """``trusted_authserv_id``: the name the receiving server writes first in its
    Authentication-Results header (RFC 8601), as a rule its host name; or a list of them (one
    per MX host); lowercased, as they are compared ignoring case."""
    if "trusted_authserv_id" not in mail:
        return None
    value = mail["trusted_authserv_id"]
    names = value if isinstance(value, list) and value else [value]
    for name in names:
        if not isinstance(name, str) or not _AUTHSERV_ID.match(name.strip()):
            raise ConfigError(
                f"{where}: trusted_authserv_id {name!r} must be the name the receiving server writes first in its "
                'Authentication-Results header, such as "mx.example.org" (or a list of such names)'
            )
    return tuple(dict.fromkeys(name.strip().lower() for name in names))


_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_DOMAIN = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})+$")


def _dkim(table: dict[str, Any], where: str, base: Path, mail_domain: str) -> DkimSettings:
    """``[dkim]``: ``selector``, ``domain`` (default: the domain of ``[mail] address``),
    ``private_key_file`` (relative to this file), ``headers`` (optional). The key is read and
    a test mail signed here, so a key that cannot sign is said at start."""
    from referee.mail import dkim

    _unknown(table, {"selector", "domain", "private_key_file", "headers"}, where)
    try:
        selector = dkim.check_selector(_str(table, "selector", where))
    except dkim.DkimError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    domain = _str(table, "domain", where, mail_domain).lower().rstrip(".")
    if not _DOMAIN.match(domain):
        raise ConfigError(f"{where}: domain {domain!r} is not a domain name such as example.org")
    headers = None
    if "headers" in table:
        names = table["headers"]
        if not isinstance(names, list) or not names:
            raise ConfigError(f'{where}: headers must be a list of header names such as ["From", "To", "Subject"]')
        try:
            headers = dkim.check_headers(names)
        except dkim.DkimError as exc:
            raise ConfigError(f"{where}: headers: {exc}") from None
    key_file = (base / _str(table, "private_key_file", where)).resolve()
    try:
        private_key = dkim.load_private_key(key_file)
    except FileNotFoundError:
        raise ConfigError(f"{where}: private_key_file {key_file}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{where}: private_key_file {key_file}: {exc.strerror or exc}") from None
    except dkim.DkimError as exc:
        raise ConfigError(f"{where}: private_key_file {key_file}: {exc}") from None
    settings = dkim.DkimSettings(
        selector=selector, domain=domain, key_file=key_file, private_key=private_key, headers=headers
    )
    try:
        dkim.DkimSigner.from_settings(settings).check()
    except dkim.DkimError as exc:
        raise ConfigError(f"{where}: private_key_file {key_file}: cannot sign with it ({exc})") from None
    return settings


def _smtp(table: dict[str, Any], where: str, base: Path) -> SmtpSettings:
    """``[smtp]``. The password: ``password_env`` names an environment variable (default
    ``REFEREE_SMTP_PASSWORD``, read when set), else ``password_file`` (relative to this
    file), else ``password`` (a file other people cannot read is the better place)."""
    _unknown(table, _SERVER_KEYS | {"concurrency", "helo_name"}, where)
    security = _str(table, "security", where, "starttls")
    if security not in SECURITY:
        raise ConfigError(f"{where}: security must be one of {', '.join(SECURITY)}, got {security!r}")
    port = _port(table, where, {"tls": 465, "starttls": 587, "none": 25}[security])
    concurrency = table.get("concurrency", 4)
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or not 1 <= concurrency <= 64:
        raise ConfigError(f"{where}: concurrency must be a whole number from 1 to 64, got {concurrency!r}")
    timeout = _timeout(table, where)
    username = _str(table, "username", where) if "username" in table else None
    password, missing = _password(table, where, base, "REFEREE_SMTP_PASSWORD", username)
    return SmtpSettings(
        host=_str(table, "host", where),
        port=port,
        security=security,
        username=username,
        password=password,
        password_missing=missing,
        concurrency=concurrency,
        timeout=timeout,
        local_hostname=_str(table, "helo_name", where) if "helo_name" in table else None,
        validate_certs=_bool(table, "validate_certs", where, True),
        ca_file=_ca_file(table, where, base, security),
    )


# the keys of a mail server's table, [smtp] and [imap] alike
_SERVER_KEYS = frozenset(
    {"host", "port", "security", "username", "password", "password_file", "password_env"}
    | {"timeout_seconds", "validate_certs", "ca_file"}
)


def _ca_file(table: dict[str, Any], where: str, base: Path, security: str) -> Path | None:
    """``ca_file``: the CA certificate(s), PEM, a server's certificate is checked against
    instead of the system's (a private CA); relative to the configuration file. Read here,
    so that a wrong path or a file that holds no certificate is said at start."""
    if "ca_file" not in table:
        return None
    if security == "none":
        raise ConfigError(f'{where}: ca_file is for TLS, but security = "none" (no TLS): use "tls" or "starttls"')
    path = base / _str(table, "ca_file", where)
    import ssl  # here: only a configuration with a ca_file needs it

    try:
        ssl.create_default_context(cafile=str(path))
    except FileNotFoundError:
        raise ConfigError(f"{where}: ca_file {path}: no such file") from None
    except OSError as exc:  # ssl.SSLError too: not PEM, no certificate in it
        detail = exc.strerror or getattr(exc, "reason", None) or str(exc)
        raise ConfigError(f"{where}: ca_file {path}: not a file of PEM certificates ({detail})") from None
    return path


def _port(table: dict[str, Any], where: str, default: int) -> int:
    port = table.get("port", default)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise ConfigError(f"{where}: port must be a port number, got {port!r}")
    return port


def _timeout(table: dict[str, Any], where: str) -> float:
    timeout = table.get("timeout_seconds", 60)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= 600:
        raise ConfigError(f"{where}: timeout_seconds must be a number of seconds from 1 to 600, got {timeout!r}")
    return float(timeout)


def require_password(settings: SmtpSettings | ImapSettings) -> None:
    """Raises the :class:`ConfigError` of a login without its password: called where a
    transport is built, so that only the commands that log in need the password."""
    if settings.password_missing:
        raise ConfigError(settings.password_missing)


def _password(
    table: dict[str, Any], where: str, base: Path, default_env: str, username: str | None
) -> tuple[str | None, str | None]:
    """A login's password: from the environment variable ``password_env`` names (default
    *default_env*), else ``password_file`` (relative to the configuration file), else
    ``password``; with a username and none of them, the line that says so (raised by
    :func:`require_password` when a transport is built). A password file that cannot be
    read is an error at once."""
    env_name = _str(table, "password_env", where, default_env)
    password = os.environ.get(env_name) or None
    if password is None and "password_file" in table:
        password_path = base / _str(table, "password_file", where)
        try:
            password = password_path.read_text().strip()
        except OSError as exc:
            raise ConfigError(f"{where}: password_file {password_path}: {exc.strerror}") from None
    if password is None and "password" in table:
        password = _str(table, "password", where)
    if username and password is None:
        return None, f"{where}: username {username!r} needs a password: set ${env_name}, password_file or password"
    return password, None


def _imap(table: dict[str, Any], where: str, base: Path) -> ImapSettings:
    """``[imap]`` (the password as for ``[smtp]``, from ``$REFEREE_IMAP_PASSWORD`` by default)."""
    _unknown(table, _SERVER_KEYS | {"folder", "processed_folder", "max_message_bytes"}, where)
    security = _str(table, "security", where, "tls")
    if security not in SECURITY:
        raise ConfigError(f"{where}: security must be one of {', '.join(SECURITY)}, got {security!r}")
    port = _port(table, where, 993 if security == "tls" else 143)
    limit = table.get("max_message_bytes", 1 << 20)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 16 * 1024 <= limit <= 64 << 20:
        raise ConfigError(f"{where}: max_message_bytes must be a whole number from 16384 to 67108864, got {limit!r}")
    timeout = _timeout(table, where)
    username = _str(table, "username", where)
    folder = _str(table, "folder", where, "INBOX")
    processed = _str(table, "processed_folder", where, "Processed")
    if processed == folder:
        raise ConfigError(f"{where}: processed_folder must not be the folder mail arrives in ({folder!r})")
    password, missing = _password(table, where, base, "REFEREE_IMAP_PASSWORD", username)
    return ImapSettings(
        host=_str(table, "host", where),
        port=port,
        security=security,
        username=username,
        password=password,
        password_missing=missing,
        folder=folder,
        processed_folder=processed,
        max_message_bytes=limit,
        timeout=timeout,
        validate_certs=_bool(table, "validate_certs", where, True),
        ca_file=_ca_file(table, where, base, security),
    )


def find_config(explicit: str | None) -> Path:
    """``--config``, else ``$REFEREE_CONFIG``, else ``./referee.toml``."""
    env = os.environ.get("REFEREE_CONFIG")
    path = Path(explicit or env or CONFIG_NAME)
    if path.exists():
        return path
    if explicit:
        raise ConfigError(
            f"{path}: configuration file not found: check the path, or run `referee init --config {path}` first"
        )
    if env:
        raise ConfigError(
            f"{path}: configuration file not found (named by REFEREE_CONFIG): run `referee init` first, "
            "or fix REFEREE_CONFIG, or give --config"
        )
    raise ConfigError(f"no {CONFIG_NAME} here (or in REFEREE_CONFIG): run `referee init` first, or give --config")


def new_secret() -> str:
    import secrets

    return secrets.token_urlsafe(32)
