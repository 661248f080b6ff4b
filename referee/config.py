"""Configuration: the service file (``referee.toml``) and season files.

Every problem is reported as one :class:`ConfigError` line that names the file, the
key and what is wrong, so the CLI can print it and exit non-zero without a traceback.
"""

from __future__ import annotations

import os
import re
import secrets
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


CONFIG_NAME = "referee.toml"
RESERVED_ACCOUNTS = {"LGT", "SEASON"}
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_EMAIL = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$")
_DURATION = re.compile(r"^\s*(?:(\d+)\s*d)?\s*(?:(\d+)\s*h)?\s*(?:(\d+)\s*m)?\s*(?:(\d+)\s*s)?\s*$")


class ConfigError(Exception):
    """A configuration problem, said in one line."""


# ---------------------------------------------------------------------------- helpers


def parse_duration(value: Any, where: str) -> timedelta:
    """``"24h"``, ``"1h30m"``, ``"90m"``, ``"2d"``, ``"45s"``; a bare number means hours."""
    if isinstance(value, bool):
        raise ConfigError(f'{where}: expected a duration such as "24h" or "90m", got {value!r}')
    if isinstance(value, (int, float)):
        if value <= 0:
            raise ConfigError(f"{where}: a duration must be positive, got {value!r}")
        return timedelta(hours=value)
    if isinstance(value, str):
        m = _DURATION.match(value.lower())
        if m and any(m.groups()):
            d, h, mi, s = (int(g or 0) for g in m.groups())
            td = timedelta(days=d, hours=h, minutes=mi, seconds=s)
            if td > timedelta(0):
                return td
    raise ConfigError(f'{where}: expected a duration such as "24h", "90m" or "1h30m", got {value!r}')


def parse_instant(value: Any, where: str) -> datetime:
    """An ISO 8601 instant with an offset (TOML datetimes are accepted too)."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(f"{where}: not an ISO 8601 date and time: {value!r}") from None
    else:
        raise ConfigError(f"{where}: expected a date and time such as 2026-12-01T18:00:00Z, got {value!r}")
    if dt.tzinfo is None:
        raise ConfigError(f"{where}: {value!s} has no time zone; add Z or an offset such as +01:00")
    return dt.astimezone(timezone.utc)


def check_timezone(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f'{where}: expected an IANA time zone name such as "Europe/Berlin", got {value!r}')
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f'{where}: unknown time zone {value!r} (use an IANA name such as "Europe/Berlin")') from None
    return value


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: [{key}] must be a table")
    return value


def _str(data: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if value is None:
        raise ConfigError(f"{where}: missing required key {key!r}")
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: {key!r} must be a non-empty string, got {value!r}")
    return value.strip()


NAME_MAX = 200  # a season's or a player's name (the database column: referee.store.models)
EMAIL_MAX = 320  # RFC 5321's longest address (the column too)


def _name(data: dict[str, Any], key: str, where: str, default: str) -> str:
    """A display name: a non-empty string of at most :data:`NAME_MAX` characters."""
    value = _str(data, key, where, default)
    if len(value) > NAME_MAX:
        raise ConfigError(f"{where}: {key!r} is {len(value)} characters long; at most {NAME_MAX} fit: shorten it")
    return value


def _bool(data: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: {key!r} must be true or false, got {value!r}")
    return value


def _unknown(data: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(data) - allowed)
    if extra:
        raise ConfigError(f"{where}: unknown key {extra[0]!r} (allowed: {', '.join(sorted(allowed))})")


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


# ---------------------------------------------------------------------------- service config


@dataclass(frozen=True)
class SmtpSettings:
    """``[smtp]``: the server outbound mail goes to (:mod:`referee.mail.smtp`)."""

    host: str
    port: int
    security: str = "starttls"  # "tls": TLS from the start (port 465); "starttls" (587); "none": loopback only
    username: str | None = None
    password: str | None = field(default=None, repr=False)  # never logged, never shown
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
    folder: str = "INBOX"  # where mail arrives
    processed_folder: str = "Processed"  # where it goes once stored (created when missing)
    max_message_bytes: int = 1 << 20  # a larger mail is read only this far
    timeout: float = 60.0  # seconds for any one command
    validate_certs: bool = True
    ca_file: Path | None = None  # trust this CA (PEM) instead of the system's (a private CA)


@dataclass(frozen=True)
class DkimSettings:
    """``[dkim]``: the key outbound mail is signed with (:mod:`referee.mail.dkim`)."""

    selector: str  # the DNS name of the public key is <selector>._domainkey.<domain>
    domain: str  # the signing domain (d=): by default the domain of [mail] address
    key_file: Path
    private_key: bytes = field(default=b"", repr=False)  # PEM, read and checked at load; never shown
    headers: tuple[str, ...] | None = None  # header names to sign (None: RFC 6376's recommended ones)


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
    settings = DkimSettings(
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
    password = _password(table, where, base, "REFEREE_SMTP_PASSWORD", username)
    return SmtpSettings(
        host=_str(table, "host", where),
        port=port,
        security=security,
        username=username,
        password=password,
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


def _password(table: dict[str, Any], where: str, base: Path, default_env: str, username: str | None) -> str | None:
    """A login's password: from the environment variable ``password_env`` names (default
    *default_env*), else ``password_file`` (relative to the configuration file), else
    ``password``; required with a username."""
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
        raise ConfigError(
            f"{where}: username {username!r} needs a password: set ${env_name}, password_file or password"
        )
    return password


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
    return ImapSettings(
        host=_str(table, "host", where),
        port=port,
        security=security,
        username=username,
        password=_password(table, where, base, "REFEREE_IMAP_PASSWORD", username),
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
    return secrets.token_urlsafe(32)


# ---------------------------------------------------------------------------- season files


def game_options(game: Any) -> list[str]:
    """The option names a game's engine reads, as its ``game_type`` declares them."""
    game_type = getattr(game, "game_type", None)
    return sorted(game_type.options if game_type is not None else ())


def check_options(game: Any, value: Any, where: str) -> dict[str, Any]:
    """A match's (or a game table's) ``options``: a table of the names the game knows."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: must be a table such as {{ name = value }}, got {value!r}")
    if "chips" in value:
        raise ConfigError(
            f"{where}: options may not set chips: chips come from the season's starting_chips "
            "(each player brings their season balance into a match)"
        )
    allowed = game_options(game)
    for name in value:
        if name not in allowed:
            known = f"allowed: {', '.join(allowed)}" if allowed else f"{game.title} has no options"
            raise ConfigError(f"{where}: unknown option {name!r} ({known})")
    return dict(value)


@dataclass
class PlayerSpec:
    key: str
    name: str
    # None: the player has no address and is never mailed; such a player may sit only at
    # silent seats (``GameType.silent_roles``: seats that never act, such as Betting
    # Minority's participants)
    email: str | None
    timezone: str


@dataclass
class MatchSpec:
    key: str
    game: str
    players: list[str]
    starts_at: datetime
    seed: int
    seed_given: bool  # False: drawn at load time; a reload keeps the stored seed
    steps: dict[str, float]  # step kind -> seconds
    reminders: list[float]  # seconds before a deadline
    options: dict[str, Any]
    kind: str | None = None  # "main": a main match of the season frame; None: a match on its own
    death_match: str | None = None  # the death-match game that follows this main match (else the rotation)
    live: bool = False  # players = "live": the season's live players, taken at the start
    abandon_after: int = 0  # missed steps in a row after which a player forfeits (0: off)


@dataclass
class FrameSpec:
    """The season frame (RULINGS, "Seasons"): what follows a main match."""

    seed: int  # the season's lots (a nomination's timeout, Betting Minority's participants)
    seed_given: bool
    death_matches: list[str]  # the rotation of death-match games, in the order they are created
    gap: float  # seconds from the end of a nomination to the start of its death match
    nomination: float  # seconds for the EC's nomination (and for a nominee's CoL answer)
    cols: bool  # may a nominated player use a CoL?
    silent: list[str]  # Betting Minority's silent participants, in the file's order
    # death-match games: {game: {"steps": {kind: seconds}, "reminders": [seconds], "options": {}}}
    timing: dict[str, dict[str, Any]]

    def settings(self) -> dict[str, Any]:
        """As stored in the season's settings (``Season.settings["frame"]``)."""
        return {
            "seed": self.seed,
            "death_matches": list(self.death_matches),
            "gap": self.gap,
            "nomination": self.nomination,
            "cols": self.cols,
            "silent": list(self.silent),
            "timing": self.timing,
        }


@dataclass
class SeasonSpec:
    key: str
    name: str
    starting_chips: int
    players: list[PlayerSpec]
    matches: list[MatchSpec]
    # garnets granted once per player into the season ledger (a season currency MatchJack reads)
    starting_garnets: int = 0
    frame: FrameSpec | None = None


def seat_role(game: Any, seat: int) -> str | None:
    """The role of seat ``seat`` (0-based) of ``game``: ``game_type.roles`` in seat order,
    the last role for every seat beyond them; None for a game that declares no roles."""
    game_type = getattr(game, "game_type", None)
    roles = game_type.roles if game_type is not None else ()
    return roles[min(seat, len(roles) - 1)] if roles else None


def silent_roles(game: Any) -> tuple[str, ...]:
    """The roles of ``game`` whose seats never act (``GameType.silent_roles``)."""
    game_type = getattr(game, "game_type", None)
    return tuple(game_type.silent_roles) if game_type is not None else ()


def _check_silent_seat(game: Any, seat: int, player: str, where: str) -> None:
    """A player without an address is never mailed, so they may sit only where nobody ever
    acts: at a seat whose role is one of the game's silent roles."""
    role = seat_role(game, seat)
    silent = silent_roles(game)
    if role is not None and role in silent:
        return
    why = f"({', '.join(silent)})" if silent else f"and {game.title} has none"
    seat_is = f"seat {seat + 1} is a {role!r} seat" if role is not None else f"seat {seat + 1} has no role"
    raise ConfigError(
        f"{where}: player {player!r} has no email address, so they can only sit at a silent seat {why}, "
        f"but {seat_is}: give them an email address or another seat"
    )


def load_season(path: Path) -> SeasonSpec:
    path = Path(path)
    data = read_toml(path)
    try:
        text = path.read_text(encoding="utf-8")
        lines, players = match_lines(text), table_lines(text, "players")
    except (OSError, UnicodeDecodeError):
        lines, players = [], []
    return parse_season(data, str(path), lines=lines, player_lines=players)


_MATCHES_HEADER = re.compile(r"^\s*\[\[\s*matches\s*\]\]\s*(?:#.*)?$")


def match_lines(text: str) -> list[int]:
    """The line number (1-based) of each ``[[matches]]`` header of a season file, in order,
    so that a problem found in the i-th match names its line. A header inside a multi-line
    string is not told apart (the numbers are for people, never for reading the file)."""
    return table_lines(text, "matches")


def table_lines(text: str, table: str) -> list[int]:
    """The line number (1-based) of each ``[[<table>]]`` header, as :func:`match_lines`."""
    header = re.compile(rf"^\s*\[\[\s*{re.escape(table)}\s*\]\]\s*(?:#.*)?$")
    return [n for n, line in enumerate(text.splitlines(), 1) if header.match(line)]


def check_start(game: Any, spec: MatchSpec, names: dict[str, str], chips: int, garnets: int, where: str) -> None:
    """The match starts as the season file has it: the game builds its first state from the
    match's seed, seats and options, as the match book will at the start time (with the
    season's starting balances for the balances it will read then). A problem the game finds
    (a DMO who is not a seat, too few players ...) is refused now, with its reason, instead
    of failing at the start."""
    from referee.games.base import SEASON_CHIPS, GameError

    game_type = getattr(game, "game_type", None)
    if game_type is None or not callable(getattr(game, "initial_state", None)):
        return  # a stand-in of a game (in tests) that builds no state: nothing to try
    options = dict(spec.options)
    if SEASON_CHIPS in game_type.currencies:
        options["chips"] = {p: chips for p in spec.players}
    if game_type.names:
        options["names"] = {p: names[p] for p in spec.players}
    if game_type.reads:
        options["holdings"] = {money: {p: garnets for p in spec.players} for money in game_type.reads}
    try:
        game.initial_state(spec.seed, list(spec.players), options)
    except GameError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{where}: {game.title} cannot start with these options: {exc}") from None


SEASON_KEYS = frozenset({"id", "name", "starting_chips", "starting_garnets", "start", "reminders", "phase_length"})
# the season frame (RULINGS, "Seasons"): what follows each main match
FRAME_KEYS = frozenset({"seed", "death_matches", "death_match_gap", "nomination_length", "cols", "silent_participants"})
MATCH_KEYS = frozenset(
    {
        "id",
        "game",
        "players",
        "start",
        "seed",
        "steps",
        "phase_length",
        "reminders",
        "options",
        "kind",
        "death_match",
        "abandon_after",
    }
)
MAIN = "main"


def parse_seed(value: Any, where: str) -> tuple[int, bool]:
    """A seed from a season file: (the seed, whether the file gave it); one drawn if not."""
    if value is None:
        return secrets.randbits(62), False
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
        raise ConfigError(f"{where}: seed must be a whole number from 0 to 2^63-1, got {value!r}")
    return value, True


def death_game(game: Any) -> bool:
    """Can ``game`` be a death match? (``GameType.death_match``: its first two seats are the
    EC's and the DMO's; any further seats are silent participants.)"""
    return bool(getattr(getattr(game, "game_type", None), "death_match", False))


def _match_frame(m: dict[str, Any], game: Any, gname: str, where: str) -> tuple[str | None, str | None, bool]:
    """A match's place in the season frame: (kind, its death-match game, live seats)."""
    from referee.games import playable

    PLAYABLE = playable()
    kind = m.get("kind")
    if kind is not None and kind != MAIN:
        raise ConfigError(f'{where}: kind must be "main" (a main match of the season), got {kind!r}')
    live = m.get("players") == "live"
    if kind == MAIN and not getattr(game.game_type, "ranked", False):
        raise ConfigError(f"{where}: {game.title} cannot be a main match: its result ranks no EC (RULINGS)")
    if live and kind != MAIN:
        raise ConfigError(f'{where}: players = "live" is for main matches (kind = "main")')
    following = m.get("death_match")
    if following is not None:
        if kind != MAIN:
            raise ConfigError(f'{where}: death_match is for main matches (kind = "main")')
        if following not in PLAYABLE or not death_game(PLAYABLE[following]):
            deaths = ", ".join(sorted(n for n, g in PLAYABLE.items() if death_game(g)))
            raise ConfigError(f"{where}: death_match {following!r} is no death-match game (they are: {deaths})")
    return kind, following, live


def parse_frame(
    season: dict[str, Any],
    games: dict[str, Any],
    players: list[PlayerSpec],
    matches: list[MatchSpec],
    where: str,
) -> FrameSpec:
    """The season frame of ``[season]`` (RULINGS, "Seasons"), checked against the matches."""
    from referee.games import playable

    PLAYABLE = playable()
    swhere = f"{where} [season]"
    seed, seed_given = parse_seed(season.get("seed"), swhere)
    deaths = season.get("death_matches", [])
    if isinstance(deaths, str):
        deaths = [deaths]
    if not isinstance(deaths, list):
        raise ConfigError(f'{swhere}: death_matches must be a list of games such as ["indian-poker"]')
    for name in deaths:
        if name not in PLAYABLE or not death_game(PLAYABLE[name]):
            known = ", ".join(sorted(n for n, g in PLAYABLE.items() if death_game(g)))
            raise ConfigError(f"{swhere}: death_matches: {name!r} is no death-match game (they are: {known})")
    gap_value = season.get("death_match_gap", 0)
    gap = 0.0 if gap_value in (0, "0", "0s") else parse_duration(gap_value, f"{swhere} death_match_gap").total_seconds()
    nomination = parse_duration(season.get("nomination_length", "24h"), f"{swhere} nomination_length")
    if nomination.total_seconds() <= 0:
        raise ConfigError(f"{swhere}: nomination_length must be longer than 0")
    cols = _bool(season, "cols", swhere, True)
    silent = season.get("silent_participants", [])
    if not isinstance(silent, list) or not all(isinstance(x, str) for x in silent):
        raise ConfigError(f"{swhere}: silent_participants must be a list of player ids")
    by_key = {p.key: p for p in players}
    for key in silent:
        if key not in by_key:
            raise ConfigError(f"{swhere}: silent participant {key!r} is not among the season's [[players]]")
        if by_key[key].email is not None:
            raise ConfigError(
                f"{swhere}: silent participant {key!r} has an email address: a silent participant is no "
                "season player (give them none)"
            )
    if len(set(silent)) != len(silent):
        raise ConfigError(f"{swhere}: a silent participant is listed twice")
    mains = [ms for ms in matches if ms.kind == MAIN]
    for ms in mains:
        if ms.death_match is None and not deaths:
            raise ConfigError(
                f"{where} match {ms.key!r}: a main match needs the death match that follows it: "
                "set death_match in the match, or death_matches in [season]"
            )
    following = {ms.death_match for ms in mains if ms.death_match} | (set(deaths) if mains else set())
    timing: dict[str, dict[str, Any]] = {}
    for name in sorted(following):
        game = PLAYABLE[name]
        gtable = games.get(name, {})
        gwhere = f"{where} [games.{name}]"
        steps, reminders = game_timing(game, name, gtable, season, None, where=where, mwhere=gwhere)
        timing[name] = {
            "steps": steps,
            "reminders": reminders,
            "options": dict(gtable.get("options", {})),
            "abandon_after": abandon_after(game, gtable, None, gwhere),
        }
        need = _silent_needed(game, players, silent, len(mains))
        if need > len(silent):
            raise ConfigError(
                f"{swhere}: {game.title} may follow a main match when only "
                f"{need and (game.max_players - 2 - need)} other live players are left, so it may need "
                f"{need} silent participants, but silent_participants lists {len(silent)}: list more "
                "players without an address there"
            )
    return FrameSpec(
        seed=seed,
        seed_given=seed_given,
        death_matches=list(deaths),
        gap=gap,
        nomination=nomination.total_seconds(),
        cols=cols,
        silent=list(silent),
        timing=timing,
    )


def _silent_needed(game: Any, players: list[PlayerSpec], silent: list[str], mains: int) -> int:
    """The silent participants a death match of ``game`` may need: its seats beyond the EC's
    and the DMO's, less the other live players left when the last main match's death match
    is created (every death match before it eliminates one player)."""
    seats = game.max_players - 2
    if seats <= 0:
        return 0
    season_players = sum(1 for p in players if p.email is not None)
    others = max(0, season_players - (mains - 1) - 2)
    return max(0, seats - others)


def abandon_after(game: Any, gtable: dict[str, Any], m: dict[str, Any] | None, where: str) -> int:
    """The abandonment rule of a match (RULINGS, "Seasons"): after this many missed steps in a
    row a player forfeits it; 0 is off. The match's ``abandon_after``, else the game table's,
    else the game's default (``GameType.abandon_after``: 5 in Indian Poker, Rewind Hold'em
    and MatchJack, off in Stationary Roulette and Betting Minority)."""
    default = getattr(getattr(game, "game_type", None), "abandon_after", 0)
    value = (m or {}).get("abandon_after", gtable.get("abandon_after", default))
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 1000:
        raise ConfigError(f"{where}: abandon_after must be a whole number of missed steps (0: off), got {value!r}")
    return value


def game_timing(
    game: Any,
    gname: str,
    gtable: dict[str, Any],
    season: dict[str, Any],
    m: dict[str, Any] | None,
    *,
    where: str,
    mwhere: str,
) -> tuple[dict[str, float], list[float]]:
    """A match's step lengths (seconds per step kind) and reminders (seconds before a
    deadline), later layers winning: the game's defaults, ``[season] phase_length``, the
    game's ``phase_length``, the game's ``steps``, the match's ``phase_length``, the match's
    ``steps`` (``m``: the match's table; None for a match the referee creates, a death match)."""
    swhere = f"{where} [season]"
    m = m or {}
    steps: dict[str, float] = {kind: hours * 3600 for kind, hours in game.step_kinds.items()}
    game_type = getattr(game, "game_type", None)
    derived = dict(game_type.derived_steps) if game_type is not None else {}
    explicit: set[str] = set()  # derived kinds a steps table sets itself
    layers = (
        (season.get("phase_length"), f"{swhere} phase_length", None, ""),
        (
            gtable.get("phase_length"),
            f"{where} [games.{gname}] phase_length",
            gtable.get("steps", {}),
            f"{where} [games.{gname}.steps]",
        ),
        (m.get("phase_length"), f"{mwhere} phase_length", m.get("steps", {}), f"{mwhere} steps"),
    )
    for phase, pwhere, table, twhere in layers:
        if phase is not None:
            length = parse_duration(phase, pwhere).total_seconds()
            steps = {kind: length for kind in steps}
            explicit.clear()  # a phase length is every plain kind's; derived kinds follow them
        if table is None:
            continue
        if not isinstance(table, dict):
            raise ConfigError(f"{twhere}: must be a table of step kind = duration")
        for kind, value in table.items():
            if kind not in steps:
                raise ConfigError(f"{twhere}: {gname} has no step kind {kind!r} (it has: {', '.join(sorted(steps))})")
            steps[kind] = parse_duration(value, f"{twhere} {kind}").total_seconds()
            explicit.add(kind)
    for kind, (base, fraction) in derived.items():
        if kind not in explicit:  # e.g. an extension lasts 2/3 of a turn, however long a turn is
            steps[kind] = round(steps[base] * fraction)

    reminders_raw = m.get("reminders", gtable.get("reminders", season.get("reminders", ["2h"])))
    if not isinstance(reminders_raw, list):
        raise ConfigError(f'{mwhere}: reminders must be a list of durations such as ["2h", "30m"]')
    reminders = sorted({parse_duration(r, f"{mwhere} reminders").total_seconds() for r in reminders_raw}, reverse=True)
    return steps, reminders


def parse_season(
    data: dict[str, Any], where: str, *, lines: list[int] | None = None, player_lines: list[int] | None = None
) -> SeasonSpec:
    """A season file's content (``data``, read from ``where``) checked and read; ``lines``: the
    line of each ``[[matches]]`` header (:func:`match_lines`), named in a match's problems;
    ``player_lines`` likewise of each ``[[players]]`` header."""
    from referee.games import GAMES, playable  # the engines are loaded by the commands that read seasons

    _unknown(data, {"season", "games", "players", "matches"}, where)
    PLAYABLE = playable()
    season = _table(data, "season", where)
    swhere = f"{where} [season]"
    _unknown(season, SEASON_KEYS | FRAME_KEYS, swhere)
    key = _str(season, "id", swhere)
    if not _KEY.match(key):
        raise ConfigError(f"{swhere}: id {key!r} may use only letters, digits, '.', '_' and '-'")
    chips = season.get("starting_chips", 100)
    if not isinstance(chips, int) or isinstance(chips, bool) or chips < 0:
        raise ConfigError(f"{swhere}: starting_chips must be a whole number >= 0, got {chips!r}")
    garnets = season.get("starting_garnets", 0)
    if not isinstance(garnets, int) or isinstance(garnets, bool) or garnets < 0:
        raise ConfigError(f"{swhere}: starting_garnets must be a whole number >= 0, got {garnets!r}")
    season_start = parse_instant(season["start"], f"{swhere} start") if "start" in season else None

    games = _table(data, "games", where)
    for gname, gtable in games.items():
        if gname not in PLAYABLE:
            raise ConfigError(f"{where} [games.{gname}]: unknown game (known: {', '.join(sorted(PLAYABLE))})")
        if not isinstance(gtable, dict):
            raise ConfigError(f"{where} [games.{gname}] must be a table")
        _unknown(gtable, {"steps", "reminders", "phase_length", "options", "abandon_after"}, f"{where} [games.{gname}]")
        if "options" in gtable:
            check_options(GAMES[gname], gtable["options"], f"{where} [games.{gname}] options")
        # checked here whether or not a match of the file names the game (a death match may)
        game_timing(GAMES[gname], gname, gtable, season, None, where=where, mwhere=f"{where} [games.{gname}]")
        abandon_after(GAMES[gname], gtable, None, f"{where} [games.{gname}]")

    raw_players = data.get("players", [])
    if not isinstance(raw_players, list) or not raw_players:
        raise ConfigError(f"{where}: at least one [[players]] entry is required")
    players: list[PlayerSpec] = []
    seen_keys: set[str] = set()
    seen_emails: set[str] = set()
    for i, p in enumerate(raw_players, 1):
        at = f":{player_lines[i - 1]}" if player_lines and i <= len(player_lines) else ""  # its header's line
        pwhere = f"{where}{at} [[players]] #{i}"
        if not isinstance(p, dict):
            raise ConfigError(f"{pwhere}: must be a table")
        _unknown(p, {"id", "name", "email", "timezone"}, pwhere)
        pkey = _str(p, "id", pwhere)
        if not _KEY.match(pkey) or pkey in RESERVED_ACCOUNTS:
            raise ConfigError(f"{pwhere}: id {pkey!r} must use letters, digits, '.', '_', '-' and not be LGT or SEASON")
        pwhere = f"{where}{at} player {pkey!r}"
        if pkey in seen_keys:
            raise ConfigError(f"{pwhere}: the id is used twice")
        # no email: a player without an address, who may sit only at silent seats (checked
        # with the matches below); the addresses that are given are unique
        email = _str(p, "email", pwhere).lower() if "email" in p else None
        if email is not None:
            if not _EMAIL.match(email):
                raise ConfigError(f"{pwhere}: {email!r} is not an email address")
            if len(email) > EMAIL_MAX:
                raise ConfigError(f"{pwhere}: the email address is {len(email)} characters long; at most {EMAIL_MAX}")
            if email in seen_emails:
                raise ConfigError(f"{pwhere}: email {email!r} is used by another player")
            seen_emails.add(email)
        seen_keys.add(pkey)
        players.append(
            PlayerSpec(
                key=pkey,
                name=_name(p, "name", pwhere, pkey),
                email=email,
                timezone=check_timezone(p.get("timezone", "UTC"), f"{pwhere} timezone"),
            )
        )

    addressless = {ps.key for ps in players if ps.email is None}
    names = {ps.key: ps.name for ps in players}
    raw_matches = data.get("matches", [])
    if not isinstance(raw_matches, list):
        raise ConfigError(f"{where}: matches must be a list of [[matches]] tables")
    matches: list[MatchSpec] = []
    match_keys: set[str] = set()
    for i, m in enumerate(raw_matches, 1):
        at = f":{lines[i - 1]}" if lines and i <= len(lines) else ""  # the TOML line of its header
        mwhere = f"{where}{at} [[matches]] #{i}"
        if not isinstance(m, dict):
            raise ConfigError(f"{mwhere}: must be a table")
        _unknown(m, MATCH_KEYS, mwhere)
        mkey = _str(m, "id", mwhere)
        if not _KEY.match(mkey):
            raise ConfigError(f"{mwhere}: id {mkey!r} may use only letters, digits, '.', '_' and '-'")
        mwhere = f"{where}{at} match {mkey!r}"
        if mkey in match_keys:
            raise ConfigError(f"{mwhere}: the id is used twice")
        match_keys.add(mkey)
        gname = _str(m, "game", mwhere)
        if gname not in PLAYABLE:
            known = ", ".join(sorted(PLAYABLE))
            if gname in GAMES:
                raise ConfigError(f"{mwhere}: {gname} is the season's own step, opened by the referee (games: {known})")
            raise ConfigError(f"{mwhere}: unknown game {gname!r} (known: {known})")
        game = GAMES[gname]
        kind, death_game, live = _match_frame(m, game, gname, mwhere)
        mplayers = list(m.get("players") or []) if not live else []
        if not live and (not isinstance(m.get("players"), list) or not all(isinstance(x, str) for x in mplayers)):
            raise ConfigError(f'{mwhere}: players must be a list of player ids, or "live" (the live players)')
        for pk in mplayers:
            if pk not in seen_keys:
                raise ConfigError(f"{mwhere}: player {pk!r} is not among the season's [[players]]")
        if len(set(mplayers)) != len(mplayers):
            raise ConfigError(f"{mwhere}: a player is listed twice")
        for seat, pk in enumerate(mplayers):
            if pk in addressless:
                _check_silent_seat(game, seat, pk, mwhere)
        if not live and not game.min_players <= len(mplayers) <= game.max_players:
            need = (
                str(game.min_players)
                if game.min_players == game.max_players
                else f"{game.min_players} to {game.max_players}"
            )
            raise ConfigError(f"{mwhere}: {game.title} needs {need} players, got {len(mplayers)}")
        if "start" in m:
            start = parse_instant(m["start"], f"{mwhere} start")
        elif season_start is not None:
            start = season_start
        else:
            raise ConfigError(f"{mwhere}: missing 'start' (or set start in [season])")
        seed, seed_given = parse_seed(m.get("seed"), mwhere)

        gtable = games.get(gname, {})
        steps, reminders = game_timing(game, gname, gtable, season, m, where=where, mwhere=mwhere)
        abandon = abandon_after(game, gtable, m, mwhere)
        options = dict(gtable.get("options", {}))
        if "options" in m:
            options.update(check_options(game, m["options"], f"{mwhere} options"))
        matches.append(
            MatchSpec(
                key=mkey,
                game=gname,
                players=list(mplayers),
                starts_at=start,
                seed=seed,
                seed_given=seed_given,
                steps=steps,
                reminders=reminders,
                options=options,
                kind=kind,
                death_match=death_game,
                live=live,
                abandon_after=abandon,
            )
        )
        if not live:  # live seats are known at the start only: checked then
            check_start(game, matches[-1], names, chips, garnets, mwhere)

    frame = parse_frame(season, games, players, matches, where)
    return SeasonSpec(
        key=key,
        name=_name(season, "name", swhere, key),
        starting_chips=chips,
        players=players,
        matches=matches,
        starting_garnets=garnets,
        frame=frame,
    )
