"""The command line: init, season load, tick with crafted .eml files, status, errors."""

from __future__ import annotations

import os
import re
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

# always in the future: `season load` refuses a start in the past (ticks give --now)
START = (datetime.now(timezone.utc) + timedelta(days=2)).replace(hour=18, minute=0, second=0, microsecond=0)
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
start = {start}
seed = 5
reminders = ["2h"]
""".replace("{start}", f"{START:%Y-%m-%dT%H:%M:%SZ}")

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
    assert f"{START + DAY:%Y-%m-%d %H:%M} UTC" in out and "in 22 hours" in out
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
        (SEASON.replace(f"start = {START:%Y-%m-%dT%H:%M:%SZ}", 'start = "tomorrow"'), "not an ISO 8601"),
        (SEASON.replace('reminders = ["2h"]', 'reminders = ["soon"]'), "expected a duration"),
        (SEASON + "\ncolour = 'x'\n", "unknown key 'colour'"),
        (SEASON + "options = { speed = 2 }\n", "unknown option 'speed' (Stationary Roulette has no options)"),
        (SEASON + "options = { chips = { alice = 9 } }\n", "chips come from the season's starting_chips"),
    ],
    ids=["email", "toml", "timezone", "game", "players", "start", "duration", "unknown-key", "option", "chips"],
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
    err = capsys.readouterr().err.strip()
    assert err == (
        "referee: error: no referee.toml here (or in REFEREE_CONFIG): run `referee init` first, or give --config"
    )


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
        session.add(
            Inbound(
                dedupe_key="d1", source="f", raw=b"", received_at=START, status="quarantined", note="internal error: x"
            )
        )
    store.dispose()
    capsys.readouterr()
    assert main(["requeue"]) == 0
    assert "requeued 1 inbound and 0 outbound" in capsys.readouterr().out


def test_quarantine_lists_why_and_requeues_by_id(folder, capsys):
    config = load_service_config(folder / "referee.toml")
    store = Store(config.database)
    from referee.store.models import Inbound

    with store.unit_of_work() as session:
        for i in (1, 2):
            session.add(
                Inbound(
                    dedupe_key=f"d{i}",
                    source=f"file{i}",
                    raw=b"",
                    received_at=START,
                    status="quarantined",
                    note=f"internal error: RuntimeError: bug {i}",
                    sender="a@x",
                    attempts=2,
                )
            )
    capsys.readouterr()
    assert main(["quarantine"]) == 0
    out = capsys.readouterr().out
    assert "2 quarantined mail(s)" in out and "bug 1" in out and "file2" in out
    assert main(["quarantine", "--requeue", "1"]) == 0
    assert "requeued 1 quarantined mail(s)" in capsys.readouterr().out
    assert main(["quarantine", "--requeue", "x"]) == 2
    assert "takes inbound ids" in capsys.readouterr().err
    assert main(["quarantine", "--requeue", "all"]) == 0
    assert "requeued 1 quarantined mail(s)" in capsys.readouterr().out
    with store.unit_of_work() as session:
        assert {row.status for row in session.scalars(select(Inbound))} == {"pending"}
    store.dispose()


def test_requeue_makes_mail_waiting_for_a_retry_due_now(folder, capsys):
    config = load_service_config(folder / "referee.toml")
    store = Store(config.database)
    from referee.store.models import Outbox

    later = datetime.now(timezone.utc) + timedelta(hours=3)
    with store.unit_of_work() as session:
        session.add(
            Outbox(
                dedupe_key="k",
                message_id="m@x",
                kind="step",
                to_addr="a@x",
                message=b"x",
                status="pending",
                attempts=2,
                next_attempt_at=later,
                last_error="OSError: disk full",
                created_at=START,
            )
        )
    capsys.readouterr()
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "waiting for another delivery attempt: 1" in out and "disk full" in out
    assert main(["requeue", "--outbound"]) == 0
    assert "requeued 0 inbound and 1 outbound" in capsys.readouterr().out
    with store.unit_of_work() as session:
        assert session.scalar(select(Outbox)).next_attempt_at <= datetime.now(timezone.utc)
    store.dispose()


def test_started_match_refuses_a_changed_start_and_says_so(folder, capsys):
    tick(START)
    later = START + DAY
    (folder / "season.toml").write_text(
        SEASON.replace(f"start = {START:%Y-%m-%dT%H:%M:%SZ}", f"start = {later:%Y-%m-%dT%H:%M:%SZ}")
    )
    capsys.readouterr()
    assert main(["season", "load", "season.toml"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"referee: error: season.toml: match sr-1 has started (at {START:%Y-%m-%d %H:%M} UTC), so its game, "
        "players, seed, start and options can no longer change, but the file changes its start "
        f"{START:%Y-%m-%d %H:%M} UTC -> {later:%Y-%m-%d %H:%M} UTC. Nothing was loaded: put the old values back "
        "(only phase lengths and reminders of a started match may change)"
    )


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
    assert out.splitlines() == [
        "player alice: email alice@example.test -> bob@example.test",
        "player bob: email bob@example.test -> alice@example.test",
    ]


# ---------------------------------------------------------------------------- starts in the past


def past_season(days: int) -> tuple[str, datetime]:
    start = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0) - days * DAY
    return SEASON.replace(f"start = {START:%Y-%m-%dT%H:%M:%SZ}", f"start = {start:%Y-%m-%dT%H:%M:%SZ}"), start


@pytest.mark.parametrize("check", [False, True], ids=["load", "check"])
def test_a_start_in_the_past_is_refused(tmp_path, monkeypatch, capsys, check):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    assert main(["init"]) == 0
    content, start = past_season(3)
    (tmp_path / "past.toml").write_text(content)
    capsys.readouterr()
    assert main(["season", "load", "past.toml", *(["--check"] if check else [])]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"referee: error: past.toml: match sr-1 would start {start:%Y-%m-%d %H:%M} UTC, 3 days")
    assert err.endswith(
        "ago: the next tick would close its first 3 phases at once, with inactivity penalties for players who did "
        "not act. Give a future start, or --allow-past to load it anyway."
    )
    assert len(err.splitlines()) == 1


def test_check_without_a_service_checks_past_starts_too(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    content, _start = past_season(3)
    (tmp_path / "past.toml").write_text(content)
    assert main(["season", "load", "past.toml", "--check"]) == 2
    assert "would close its first 3 phases at once" in capsys.readouterr().err
    assert main(["season", "load", "past.toml", "--check", "--allow-past"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "past.toml: season cli: 2 players, 1 match: OK (not compared with a database: no referee.toml here)"
    )
    assert out[1].startswith("  match sr-1: warning: starts ") and "(--allow-past)" in out[1]


def test_allow_past_loads_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    assert main(["init"]) == 0
    content, _start = past_season(3)
    (tmp_path / "past.toml").write_text(content)
    capsys.readouterr()
    assert main(["season", "load", "past.toml", "--allow-past"]) == 0
    out = capsys.readouterr().out
    assert "match sr-1: added: stationary-roulette for alice, bob" in out
    assert "(--allow-past): the next tick would close its first 3 phases at once" in out


def test_check_compares_with_the_database_and_changes_nothing(folder, capsys):
    changed = SEASON.replace('reminders = ["2h"]', 'reminders = ["2h"]\nphase_length = "12h"')
    (folder / "season.toml").write_text(changed)
    capsys.readouterr()
    assert main(["season", "load", "season.toml", "--check"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "season.toml: season cli: 2 players, 1 match: OK; loading it would change:",
        "  match sr-1: round length 24h -> 12h",
        "what the season would start, and when (UTC):",
    ]
    # the match, its start and its first deadline (12 hours later, as the file now says)
    (plan,) = lines[3:]
    assert re.match(r"  \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in .*\): sr-1, Stationary Roulette, for alice, bob; ", plan)
    start, closes = re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d", plan)
    assert datetime.fromisoformat(closes) - datetime.fromisoformat(start) == timedelta(hours=12)
    assert main(["season", "load", "season.toml"]) == 0
    assert capsys.readouterr().out.splitlines() == ["match sr-1: round length 24h -> 12h"]
    assert main(["season", "load", "season.toml", "--check"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0] == "season.toml: season cli: 2 players, 1 match: OK; loading it changes nothing"


# ---------------------------------------------------------------------------- --config, --version


def test_config_may_come_after_the_command(folder, tmp_path_factory, monkeypatch, capsys):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.chdir(elsewhere)
    config = str(folder / "referee.toml")
    for argv in (
        ["status", "--config", config],
        ["--config", config, "status"],
        ["status", "sr-1", "--config", config, "--debug"],
        ["season", "load", str(folder / "season.toml"), "--config", config],
        ["--config", "/nonexistent.toml", "status", "--config", config],  # the later one wins
    ):
        capsys.readouterr()
        assert main(argv) == 0, argv
        assert capsys.readouterr().out, argv


def test_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"referee {version('referee')}"


def test_version_falls_back_to_the_package(monkeypatch):
    import importlib.metadata

    import referee
    from referee import cli

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    monkeypatch.setattr(referee, "__version__", "9.9.9", raising=False)
    assert cli.version() == "9.9.9"


# ---------------------------------------------------------------------------- init leaves nothing behind


def leftovers(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(
    "database, message",
    [
        ("postgresql+psycopg://nobody@127.0.0.1:1/referee", "referee: database error: connection failed"),
        ("sqlite:///no-such-folder/referee.db", "referee: database error: unable to open database file"),
        ("nosuchdb://x", "referee: database error: Can't load plugin"),
    ],
    ids=["postgresql-unreachable", "sqlite-unwritable", "bad-url"],
)
def test_init_that_fails_on_the_database_leaves_nothing_behind(tmp_path, monkeypatch, capsys, database, message):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REFEREE_CONFIG", str(tmp_path / "etc" / "referee" / "referee.toml"))
    assert main(["init", "--database", database]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and len(err.splitlines()) == 1
    assert leftovers(tmp_path) == []


def test_init_removes_a_half_made_database(tmp_path, monkeypatch, capsys):
    from referee.store.db import Store as RealStore

    def broken_migrate(self):
        with self.engine.connect() as conn:  # creates the file (and its WAL)
            conn.exec_driver_sql("CREATE TABLE half (x INTEGER)")
        raise OSError(28, "No space left on device")

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    monkeypatch.setattr(RealStore, "migrate", broken_migrate)
    assert main(["init"]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert leftovers(tmp_path) == []


def test_init_keeps_an_existing_configuration_when_the_database_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    text = 'database = "sqlite:///no-such-folder/r.db"\nsecret = "0123456789abcdef0123"\n[mail]\naddress = "r@x.test"\n'
    (tmp_path / "referee.toml").write_text(text)
    assert main(["init"]) == 1
    assert leftovers(tmp_path) == ["referee.toml"] and (tmp_path / "referee.toml").read_text() == text


def test_init_escapes_the_database_url(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    assert main(["init", "--database", 'sqlite:///we"ird {x}.db']) == 0
    assert load_service_config(tmp_path / "referee.toml").database.endswith('we"ird {x}.db')


def test_help_imports_nothing_but_the_parser():
    """`referee --help` (and any usage error) is as cheap as the parser: the commands, the
    configuration, the database layer, the engines and the templates come later."""
    code = (
        "import sys, referee.cli as c\n"
        "try:\n    c.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('referee.commands', 'referee.config', 'sqlalchemy', 'jinja2', 'referee.games',"
        " 'logging', 'importlib.metadata') if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_config_name_is_the_configs():
    import referee.cli
    import referee.config

    assert referee.cli.CONFIG_NAME == referee.config.CONFIG_NAME


@pytest.mark.parametrize(
    "argv, target",
    [
        (["archive", "mbox", "m1", "--season", "s", "out.mbox"], ["m1", "out.mbox"]),
        (["archive", "mbox", "m1", "out.mbox", "--season", "s"], ["m1", "out.mbox"]),
        (["archive", "mbox", "--public", "out.mbox"], ["out.mbox"]),
    ],
)
def test_archive_mbox_takes_its_words_on_either_side_of_its_options(argv, target):
    from referee.cli import parse

    assert parse(argv).target == target


def test_a_word_no_command_takes_is_still_a_usage_error(capsys):
    from referee.cli import parse

    with pytest.raises(SystemExit) as exit_:
        parse(["status", "--bogus"])
    assert exit_.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse(["archive", "mbox", "m1", "--season", "s", "out.mbox", "--bogus"])
