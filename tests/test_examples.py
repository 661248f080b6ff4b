"""The example files in deploy/ load as they are, and with each commented-out key switched on."""

from __future__ import annotations

import re
import tomllib
from datetime import timedelta
from pathlib import Path

import pytest

from referee.config import ConfigError, load_service_config, parse_season
from referee.seasons import load_season
from referee.config.service_file import require_password

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
EXAMPLE_SEASON = DEPLOY / "example-season.toml"
# "# key = value   # comment": an optional key, shown commented out
OPTIONAL = re.compile(r"^# ([a-z_]+ = .*)$")


def variants(path: Path) -> list[tuple[str, str]]:
    """The file as it is, then once per commented-out key with that key switched on."""
    text = path.read_text()
    lines = text.splitlines()
    found = [("as shipped", text)]
    for i, line in enumerate(lines):
        m = OPTIONAL.match(line)
        if m:
            on = [*lines[:i], m.group(1), *lines[i + 1 :]]
            found.append((m.group(1).split(" =")[0] + f" (line {i + 1})", "\n".join(on) + "\n"))
    return found


def label_only(value: str) -> str:
    return value if len(value) < 40 else ""


@pytest.mark.parametrize("label, text", variants(EXAMPLE_SEASON), ids=label_only)
def test_example_season_loads(sqlite_store, label, text):
    spec = parse_season(tomllib.loads(text), f"{EXAMPLE_SEASON.name} ({label})")
    assert spec.key == "winter-2026" and [p.key for p in spec.players] == ["alice", "bob"]
    # loaded as an organizer would, before its first start
    before = min(m.starts_at for m in spec.matches) - timedelta(days=1)
    changes = load_season(sqlite_store, spec, before)
    assert "season winter-2026: created" in changes and any(line.startswith("match sr-1: added") for line in changes)
    assert load_season(sqlite_store, spec, before) == []


def test_example_season_has_optional_keys_to_try():
    assert len(variants(EXAMPLE_SEASON)) > 5


@pytest.mark.parametrize("label, text", variants(DEPLOY / "example-referee.toml"), ids=label_only)
def test_example_referee_toml_loads(tmp_path, monkeypatch, label, text):
    monkeypatch.delenv("REFEREE_SECRET", raising=False)
    (tmp_path / "referee.toml").write_text(text)
    config = load_service_config(tmp_path / "referee.toml")
    assert config.mail.address == "referee@example.org"
    assert config.mail.inbox == tmp_path / "mail" / "inbox"


def test_production_referee_toml_loads(tmp_path, monkeypatch):
    """Its secret_file lives in /etc/referee; REFEREE_SECRET stands in for it here."""
    monkeypatch.setenv("REFEREE_SECRET", "a-secret-of-at-least-16-characters")
    config = load_service_config(DEPLOY / "referee.production.toml")
    assert config.database == "sqlite:////var/lib/referee/referee.db"
    assert config.mail.inbox == Path("/var/lib/referee/mail/inbox")


def uncomment_block(lines: list[str], header: str) -> list[str]:
    """The file's own instruction: remove "#   " from the line that is ``header`` and the
    commented lines that follow it (a lone "#" stands for an empty line)."""
    if header in lines:  # uncommented already with the table before it (one block)
        return lines
    start = lines.index(f"#   {header}")
    out = list(lines)
    for i in range(start, len(lines)):
        if lines[i].startswith("#   "):
            out[i] = lines[i][4:]
        elif lines[i] == "#":
            out[i] = ""
        else:
            break
    return out


def provider_set_up(text: str) -> str:
    """SET-UP B of a deploy example, made as its comments say: the lines inbound and outbound
    replaced by the commented ones below them, the [imap] and [smtp] tables uncommented."""
    lines = text.splitlines()
    assert '#   inbound = "imap"' in lines and '#   outbound = "smtp"' in lines
    lines = [line for line in lines if not line.startswith(("inbound = ", "outbound = "))]
    lines = [line[4:] if line in ('#   inbound = "imap"', '#   outbound = "smtp"') else line for line in lines]
    lines = uncomment_block(uncomment_block(lines, "[imap]"), "[smtp]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", ["example-referee.toml", "referee.production.toml"])
def test_each_deploy_example_shows_both_mail_set_ups_with_todays_keys(tmp_path, monkeypatch, name):
    """As shipped: Maildirs both ways (inbound/outbound, never the old `transport`); SET-UP B
    made as the comments say: IMAP in, SMTP out, the password from $REFEREE_MAIL_PASSWORD."""
    monkeypatch.setenv("REFEREE_SECRET", "a-secret-of-at-least-16-characters")  # production: secret_file
    for variable in ("REFEREE_MAIL_PASSWORD", "REFEREE_IMAP_PASSWORD", "REFEREE_SMTP_PASSWORD"):
        monkeypatch.delenv(variable, raising=False)
    text = (DEPLOY / name).read_text()
    assert not re.search(r"^\s*transport\s*=", text, re.M), "the old name of inbound"
    (tmp_path / "referee.toml").write_text(text)
    config = load_service_config(tmp_path / "referee.toml")
    assert (config.mail.transport, config.mail.outbound) == ("maildir", "maildir")
    assert config.mail.imap is None and config.mail.smtp is None

    (tmp_path / "referee.toml").write_text(provider_set_up(text))
    config = load_service_config(tmp_path / "referee.toml")  # status and season load need no password
    for settings in (config.mail.imap, config.mail.smtp):  # what logs in asks for it by name
        with pytest.raises(ConfigError, match="REFEREE_MAIL_PASSWORD"):
            require_password(settings)
    monkeypatch.setenv("REFEREE_MAIL_PASSWORD", "an-app-password")
    config = load_service_config(tmp_path / "referee.toml")
    assert (config.mail.transport, config.mail.outbound) == ("imap", "smtp")
    imap, smtp = config.mail.imap, config.mail.smtp
    assert (imap.host, imap.port, imap.security, imap.username) == (
        "imap.example.org",
        993,
        "tls",
        "referee@example.org",
    )
    assert (imap.folder, imap.processed_folder, imap.password) == ("INBOX", "Processed", "an-app-password")
    assert (smtp.host, smtp.port, smtp.security) == ("smtp.example.org", 587, "starttls")
    assert (smtp.username, smtp.password) == ("referee@example.org", "an-app-password")
