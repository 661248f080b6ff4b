"""The example files in deploy/ load as they are, and with each commented-out key switched on."""

from __future__ import annotations

import re
import tomllib
from datetime import timedelta
from pathlib import Path

import pytest

from referee.config import load_service_config, parse_season
from referee.seasons import load_season

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


def test_the_smtp_example_in_example_referee_toml_loads(tmp_path, monkeypatch):
    """The commented [smtp] block, switched on with outbound = "smtp", is a working configuration."""
    monkeypatch.setenv("REFEREE_SMTP_PASSWORD", "an-app-password")
    text = (DEPLOY / "example-referee.toml").read_text()
    lines = text.splitlines()
    start = lines.index("#   [smtp]")
    block = [line[4:] for line in lines[start:] if line.startswith("#   ")]
    text = text.replace('outbound = "maildir" ', 'outbound = "smtp"    ', 1) + "\n" + "\n".join(block) + "\n"
    (tmp_path / "referee.toml").write_text(text)
    config = load_service_config(tmp_path / "referee.toml")
    assert config.mail.outbound == "smtp" and config.mail.smtp.host == "smtp.example.org"
    assert config.mail.smtp.password == "an-app-password"
