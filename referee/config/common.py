"""What the readers of the service file and of season files share: the one-line
:class:`ConfigError`, durations, instants, time zones, and the checked reading of TOML
values (each problem names the file, the key and what is wrong)."""

from __future__ import annotations

import re
import tomllib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any


CONFIG_NAME = "referee.toml"
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
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # here: only a season file names zones

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
