"""The command line: init, season load, tick with crafted .eml files, status, errors."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.cli import main
from referee.config import load_service_config
from referee.mail.maildir import deliver_to_maildir
from referee.mail.tokens import make_token, reply_address
from referee.store.db import Store
from referee.store.models import Match, Seat

START = datetime(2026, 12, 1, 18, 0, tzinfo=timezone.utc)
DAY = timedelta(days=1)

SEASON = """
[season]
id = "cli"
name = "CLI season"
starting_chips = 150

[[players]]
id = "alice"
name = "Alice"
email = "alice@example.test"
timezone = "Europe/Berlin"

[[players]]
id = "bob"
name = "Bob"
email = "bob@example.test"
timezone = "Asia/Tokyo"

[[matches]]
id = "sr-1"
game = "stationary-roulette"
players = ["alice", "bob"]
start = 2026-12-01T18:00:00Z
seed = 5
reminders = ["2h"]
"""

EML = """\
From: {name} <{sender}>
To: {to}
Subject: Re: my move
Date: {date}
Message-ID: <{mid}@mail.example.test>
Content-Type: text/plain; charset=utf-8

Hello,

{body}

Best,
{name}
"""


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    (tmp_path / "season.toml").write_text(SEASON)
    assert main(["season", "load", "season.toml"]) == 0
    return tmp_path


def craft(folder: Path, player: str, body: str, at: datetime, n: int) -> None:
    config = load_service_config(folder / "referee.toml")
    store = Store(config.database)
    with store.unit_of_work() as session:
        seat = session.scalar(
            select(Seat).join(Match).where(Match.key == "sr-1").where(Seat.position == (0 if player == "alice" else 1))
        )
        token = make_token(config.secret, seat.id, "sr-1", player)
    store.dispose()
    raw = EML.format(
        name=player.title(),
        sender=f"{player}@example.test",
        to=reply_address(config.mail.local, config.mail.domain, token),
        date=format_datetime(at),
        mid=f"{player}-{n}",
        body=body,
    )
    deliver_to_maildir(config.mail.inbox, raw.replace("\n", "\r\n").encode(), delivered_at=at)


def tick(at: datetime) -> int:
    return main(["tick", "--now", at.isoformat()])


def test_whole_match_through_tick_with_crafted_eml_files(folder, capsys):
    assert tick(START) == 0
    n = 0
    for r in range(11):
        opened = START + r * DAY
        colour = ("Gold", "Silver")[r % 2]  # each colour at most 5 times
        for key in ("alice", "bob"):
            parts = []
            if r < 10:
                parts.append(f"ROULETTE\nWinning colour: {colour}\nGold: 30\nSilver: 10\nBlack: 0")
            if r > 0:
                parts.append("BET\nGold: 30\nSilver: 10")
            n += 1
            craft(folder, key, "\n\n".join(parts), opened + timedelta(hours=3), n)
        assert tick(opened + timedelta(hours=4)) == 0
        assert tick(opened + DAY) == 0
    capsys.readouterr()
    assert main(["status", "--now", (START + 12 * DAY).isoformat()]) == 0
    out = capsys.readouterr().out
    assert "sr-1" in out and "finished" in out
    assert "accepted 22" in out
    # each player's mailbox holds the prompts, 22 receipts in all and the final results
    outbox = folder / "mail" / "outbox"
    alice = sorted((outbox / "alice@example.test" / "new").iterdir())
    assert len(alice) >= 11 + 11
    config = load_service_config(folder / "referee.toml")
    store = Store(config.database)
    with store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == "sr-1"))
        assert match.status == "finished"
        # identical play on both sides: every roulette and bet mirrored, so a draw
        assert match.result["outcome"] == {"alice": "draw", "bob": "draw"}
    store.dispose()


def test_status_shows_phase_deadline_and_who_submitted(folder, capsys):
    tick(START)
    craft(
        folder, "alice", "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0", START + timedelta(hours=1), 1
    )
    tick(START + timedelta(hours=1))
    capsys.readouterr()
    assert main(["status", "sr-1", "--now", (START + timedelta(hours=2)).isoformat()]) == 0
    out = capsys.readouterr().out
    assert "Preparation phase" in out
    assert "2026-12-02 18:00 UTC" in out and "in 22 hours" in out
    assert "submitted: alice; awaiting: bob" in out


def test_season_load_is_idempotent(folder, capsys):
    capsys.readouterr()
    assert main(["season", "load", "season.toml"]) == 0
    assert capsys.readouterr().out.strip() == "no changes"


@pytest.mark.parametrize(
    "content, message",
    [
        ("[season]\nid = 'x'\n[[players]]\nid='a'\nemail='not-an-address'\n", "is not an email address"),
        ("[season\n", "not valid TOML"),
        (SEASON.replace('timezone = "Asia/Tokyo"', 'timezone = "Mars/Olympus"'), "unknown time zone 'Mars/Olympus'"),
        (SEASON.replace('game = "stationary-roulette"', 'game = "chess"'), "unknown game 'chess'"),
        (SEASON.replace('players = ["alice", "bob"]', 'players = ["alice"]'), "needs 2 players, got 1"),
        (SEASON.replace("start = 2026-12-01T18:00:00Z", 'start = "tomorrow"'), "not an ISO 8601"),
        (SEASON.replace('reminders = ["2h"]', 'reminders = ["soon"]'), "expected a duration"),
        (SEASON + "\ncolour = 'x'\n", "unknown key 'colour'"),
    ],
    ids=["email", "toml", "timezone", "game", "players", "start", "duration", "unknown-key"],
)
def test_bad_season_file_gives_one_clear_line(folder, capsys, content, message):
    (folder / "bad.toml").write_text(content)
    capsys.readouterr()
    assert main(["season", "load", "bad.toml"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "bad.toml" in err
    assert len(err.splitlines()) == 1


def test_commands_outside_a_referee_folder_say_what_to_do(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert "referee.toml: configuration file not found" in err and "referee demo" in err


def test_bad_now_is_one_line(folder, capsys):
    capsys.readouterr()
    assert main(["tick", "--now", "yesterday"]) == 2
    assert "--now: not an ISO 8601" in capsys.readouterr().err


def test_uninitialised_database_is_reported(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "referee.toml").write_text('secret = "0123456789abcdef0123"\n[mail]\naddress = "r@example.test"\n')
    assert main(["status"]) == 2
    assert "run `referee init` first" in capsys.readouterr().err


def test_console_script_runs_without_traceback(tmp_path):
    """The installed `referee` entry point: bad input is one line, exit status non-zero."""
    env = {**os.environ, "REFEREE_CONFIG": str(tmp_path / "missing.toml")}
    script = Path(sys.executable).with_name("referee")
    assert script.exists(), "the project is installed with its `referee` console script (README)"
    proc = subprocess.run([str(script), "status"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "missing.toml: configuration file not found" in proc.stderr


def test_usage_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["tick", "--nw", "x"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "referee: error: unrecognized arguments: --nw x (see: referee --help)"


def test_init_honours_referee_config_and_keeps_the_secret_private(tmp_path, monkeypatch):
    target = tmp_path / "etc" / "referee.toml"
    monkeypatch.setenv("REFEREE_CONFIG", str(target))
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    assert target.exists() and not (tmp_path / "referee.toml").exists()
    assert target.stat().st_mode & 0o077 == 0


def test_requeue_puts_failed_mail_back_in_line(folder, capsys):
    config = load_service_config(folder / "referee.toml")
    store = Store(config.database)
    from referee.store.models import Inbound

    with store.unit_of_work() as session:
        session.add(Inbound(message_key="x@y", source="f", raw=b"", received_at=START, status="failed"))
    store.dispose()
    capsys.readouterr()
    assert main(["requeue"]) == 0
    assert "requeued 1 inbound and 0 outbound" in capsys.readouterr().out


def test_started_match_refuses_changed_options(folder, capsys):
    tick(START)
    (folder / "season.toml").write_text(SEASON.replace('reminders = ["2h"]', 'reminders = ["2h"]\noptions = {x = 1}'))
    capsys.readouterr()
    assert main(["season", "load", "season.toml"]) == 2
    assert "has started" in capsys.readouterr().err


def test_two_players_may_swap_addresses(folder, capsys):
    swapped = (
        SEASON.replace("alice@example.test", "tmp@example.test")
        .replace("bob@example.test", "alice@example.test")
        .replace("tmp@example.test", "bob@example.test")
    )
    (folder / "season.toml").write_text(swapped)
    capsys.readouterr()
    assert main(["season", "load", "season.toml"]) == 0
    out = capsys.readouterr().out
    assert "player alice: updated (bob@example.test" in out and "player bob: updated (alice@example.test" in out
