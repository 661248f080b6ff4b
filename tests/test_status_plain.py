"""`referee status` reads the database with plain SQL through the driver
(:mod:`referee.store.dbapi`): on both backends it prints what the same report prints in a
unit of work of the ORM's session, and it imports no SQLAlchemy, no Alembic, and no game but
those of the matches in the database. The games' registry imports a game when it is looked up."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from referee.cli import main
from referee.config import load_service_config
from referee.games import GAMES, MODULES
from referee.status import status_text
from referee.store import dbapi
from referee.store.db import Store

START = (datetime.now(timezone.utc) + timedelta(days=2)).replace(hour=18, minute=0, second=0, microsecond=0)

SEASON = f"""
[season]
id = "plain"
name = "Plain season"
starting_chips = 150

[[players]]
id = "alice"
name = "Alice"
email = "alice@example.test"

[[players]]
id = "bob"
name = "Bob"
email = "bob@example.test"

[[matches]]
id = "sr-1"
game = "stationary-roulette"
players = ["alice", "bob"]
start = {START:%Y-%m-%dT%H:%M:%SZ}
seed = 5
reminders = ["2h"]
"""


# ``referee ARGS`` as the program (``python -m referee.cli``), then every module it imported
PROBE = """
import json, runpy, sys
sys.argv = ["referee", *sys.argv[1:]]
try:
    runpy.run_module("referee.cli", run_name="__main__", alter_sys=True)
except SystemExit as end:
    code = end.code
sys.stdout.flush()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def probe(folder: Path, *args: str) -> tuple[int, str, list[str]]:
    """``referee ARGS`` in a fresh interpreter: its exit status, what it printed, what it imported."""
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=folder, capture_output=True, text=True, timeout=120)
    *errors, modules = done.stderr.strip().splitlines()
    return done.returncode, done.stdout + "".join(errors), json.loads(modules)


@pytest.fixture
def folder(tmp_path, monkeypatch, db_url):
    """A referee folder on ``db_url`` (either backend), its match started at START."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    assert main(["init", "--database", db_url]) == 0
    (tmp_path / "season.toml").write_text(SEASON)
    assert main(["season", "load", "season.toml"]) == 0
    assert main(["tick", "--now", (START + timedelta(minutes=1)).isoformat()]) == 0
    return tmp_path


def test_status_imports_no_sqlalchemy_and_prints_what_the_session_path_prints(folder):
    now = START + timedelta(hours=3)
    code, out, modules = probe(folder, "status", "--now", now.isoformat())
    assert code == 0, out
    assert out.startswith("sr-1  Stationary Roulette  (Plain season)  alice vs bob\n")
    assert ": deadline " in out and "submitted: nobody yet; awaiting: alice, bob" in out
    roots = {name.partition(".")[0] for name in modules}
    assert "sqlalchemy" not in roots and "alembic" not in roots
    assert "referee.store.models" not in modules and "referee.store.db" not in modules
    assert {name for name, module in MODULES.items() if module in modules} == {"stationary-roulette"}

    config = load_service_config(folder / "referee.toml")
    store = Store(config.database)
    try:
        assert out == status_text(store, now, mail=config.mail, secret=config.secret) + "\n"
    finally:
        store.dispose()


def test_status_of_one_match_and_of_none(folder, capsys):
    now = (START + timedelta(hours=3)).isoformat()
    capsys.readouterr()
    assert main(["status", "sr-1", "--now", now]) == 0
    assert capsys.readouterr().out.startswith("sr-1  Stationary Roulette")
    assert main(["status", "sr-2", "--now", now]) == 2
    assert capsys.readouterr().err.strip() == "referee: error: no match 'sr-2'"


def test_a_database_not_set_up_or_not_migrated_is_the_organizers_to_fix(db_url, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    config = 'secret = "0123456789abcdef0123"\n[mail]\naddress = "r@example.test"\n'
    (tmp_path / "referee.toml").write_text(f'database = "sqlite:///{tmp_path}/empty.db"\n{config}')
    assert main(["status"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"referee: error: database sqlite:///{tmp_path}/empty.db is not set up: run `referee init` first"
    )

    (tmp_path / "referee.toml").write_text(f'database = "{db_url}"\n{config}')
    store = Store(db_url)
    try:
        assert store.is_current()
        with store.engine.begin() as conn:
            conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0013'")
        assert not store.is_current() and store.has_schema()
    finally:
        store.dispose()
    assert main(["status"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"referee: error: database {dbapi.safe_url(db_url)} needs migrating: run `referee init`"
    )


def test_urls_are_read_as_sqlalchemy_reads_them():
    from sqlalchemy.engine import make_url

    for url in (
        "sqlite:///referee.db",
        "sqlite:////var/lib/referee/referee.db",
        "sqlite://",
        "sqlite:///:memory:",
        "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
        "postgresql+psycopg://referee:s3cret@db.example.test/referee",
        "postgresql+psycopg://referee:p%40ss:word@[::1]:5433/referee?sslmode=require",
    ):
        parsed, theirs = dbapi.parse_url(url), make_url(url)
        assert parsed is not None
        assert (parsed.backend, parsed.username, parsed.password, parsed.host, parsed.port, parsed.database) == (
            theirs.get_backend_name(),
            theirs.username,
            theirs.password,
            theirs.host,
            theirs.port,
            theirs.database,
        ), url
        assert dict(parsed.query) == dict(theirs.query), url
        assert dbapi.safe_url(url) == theirs.render_as_string(hide_password=True), url
    assert dbapi.sqlite_file("sqlite:///referee.db") == "referee.db"
    assert dbapi.sqlite_file("sqlite://") is None and dbapi.sqlite_file("postgresql+psycopg://h/db") is None


def test_values_come_back_as_the_orm_gives_them():
    at = datetime(2026, 12, 5, 18, 0, tzinfo=timezone.utc)
    assert dbapi.utc("2026-12-05 18:00:00.000000") == at  # SQLite's text
    assert dbapi.utc(datetime(2026, 12, 5, 18, 0)) == at  # PostgreSQL's naive timestamp
    assert dbapi.utc(None) is None
    assert dbapi.json_value('{"a": [1, null]}') == {"a": [1, None]} == dbapi.json_value({"a": [1, None]})


def test_the_registry_imports_a_game_when_it_is_looked_up():
    code = """
import sys
from referee.games import GAMES, MODULES
imported = lambda: sorted(name for name, module in MODULES.items() if module in sys.modules)
assert "matchjack" in GAMES and "chess" not in GAMES and len(GAMES) == len(MODULES)
assert list(GAMES) == list(MODULES) and imported() == [], imported()
from referee.games.stationary_roulette import GAME
assert imported() == ["stationary-roulette"], imported()
assert GAMES["indian-poker"].name == "indian-poker" and imported() == ["indian-poker", "stationary-roulette"]
assert GAMES.get("chess") is None and "sqlalchemy" not in sys.modules
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert all(GAMES[name].name == name for name in GAMES)  # each name's module holds that game


def test_a_game_set_into_the_registry_is_kept_and_taken_out_again(monkeypatch):
    class Extra:
        name = "extra"

    with monkeypatch.context() as patch:
        patch.setitem(GAMES, "extra", Extra())
        assert list(GAMES)[-1] == "extra" and GAMES["extra"].name == "extra"
    assert "extra" not in GAMES and list(GAMES) == list(MODULES)
