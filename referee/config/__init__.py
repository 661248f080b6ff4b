"""Configuration: the service file (``referee.toml``, :mod:`.service_file`) and season
files (:mod:`.season_file`), on shared checked readers (:mod:`.common`).

Every problem is reported as one :class:`ConfigError` line that names the file, the
key and what is wrong, so the CLI can print it and exit non-zero without a traceback.
"""

from importlib import import_module
from typing import Any

from referee.config.common import (
    CONFIG_NAME,
    ConfigError,
    parse_duration,
    parse_instant,
    check_timezone,
    NAME_MAX,
    EMAIL_MAX,
    read_toml,
)
from referee.config.service_file import (
    SmtpSettings,
    ImapSettings,
    ArchiveSettings,
    INBOUND,
    OUTBOUND,
    SECURITY,
    MailConfig,
    ServiceConfig,
    load_service_config,
    find_config,
    new_secret,
)

# the season files' readers, and [dkim]'s settings, imported when first asked for: a command
# that reads no season file (``referee status``) does without them
_LAZY = {
    name: "referee.config.season_file"
    for name in (
        "game_options",
        "check_options",
        "PlayerSpec",
        "MatchSpec",
        "FrameSpec",
        "SeasonSpec",
        "seat_role",
        "silent_roles",
        "load_season",
        "match_lines",
        "table_lines",
        "check_start",
        "SEASON_KEYS",
        "FRAME_KEYS",
        "MATCH_KEYS",
        "MAIN",
        "parse_seed",
        "death_game",
        "parse_frame",
        "abandon_after",
        "game_timing",
        "parse_season",
    )
}
_LAZY["DkimSettings"] = "referee.mail.dkim"


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ArchiveSettings",
    "CONFIG_NAME",
    "ConfigError",
    "DkimSettings",
    "EMAIL_MAX",
    "FRAME_KEYS",
    "FrameSpec",
    "INBOUND",
    "ImapSettings",
    "MAIN",
    "MATCH_KEYS",
    "MailConfig",
    "MatchSpec",
    "NAME_MAX",
    "OUTBOUND",
    "PlayerSpec",
    "SEASON_KEYS",
    "SECURITY",
    "SeasonSpec",
    "ServiceConfig",
    "SmtpSettings",
    "abandon_after",
    "check_options",
    "check_start",
    "check_timezone",
    "death_game",
    "find_config",
    "game_options",
    "game_timing",
    "load_season",
    "load_service_config",
    "match_lines",
    "new_secret",
    "parse_duration",
    "parse_frame",
    "parse_instant",
    "parse_season",
    "parse_seed",
    "read_toml",
    "seat_role",
    "silent_roles",
    "table_lines",
]
