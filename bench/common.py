"""Shared helpers for the referee benchmarks (``bench/bench_inbound.py``, ``bench/bench_close.py``).

A benchmark world is a temporary folder with a ``referee.toml``, a migrated SQLite
database (made by :class:`referee.store.db.Store`, so the engine has the service's own
pragmas: WAL, synchronous=FULL, BEGIN IMMEDIATE) and the inbox / outbox Maildirs.

Seasons are set up either through the real loader (``referee.seasons.load_season``) or,
much faster, by bulk INSERTs that write exactly the rows the loader writes (season,
players, one "starting chips" ledger grant per player, scheduled matches, seats).
Setup is never part of a timed figure.
"""

from __future__ import annotations

import gc
import os
import resource
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

from sqlalchemy import insert, select  # noqa: E402

from referee.config import ServiceConfig, load_service_config, parse_season  # noqa: E402
from referee.seasons import GRANT_REASON, load_season  # noqa: E402
from referee.store.db import Store  # noqa: E402
from referee.store.models import LedgerEntry, Match, Player, Season, Seat  # noqa: E402

GAME = "stationary-roulette"
START = datetime(2026, 12, 1, 18, 0, tzinfo=timezone.utc)
ROUND = timedelta(hours=24)
SECRET = "bench-secret-0123456789abcdef-0123"
REFEREE_ADDRESS = "referee@league.test"
PLAYER_DOMAIN = "players.test"
STARTING_CHIPS = 200
TIMEZONES = ("Europe/Berlin", "America/New_York", "UTC", "Asia/Tokyo", "Australia/Sydney")

ROULETTE = "ROULETTE\nWinning colour: {colour}\nGold: 30\nSilver: 10\nBlack: 0"
BET = "BET\nGold: 20\nSilver: 20"


# ----------------------------------------------------------------------------- world


@dataclass
class World:
    dir: Path
    config: ServiceConfig
    store: Store


def write_config(folder: Path) -> ServiceConfig:
    """A ``referee.toml`` like ``referee demo`` writes; paths relative to *folder*."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "referee.toml").write_text(
        'database = "sqlite:///referee.db"\n'
        f'secret = "{SECRET}"\n'
        "[mail]\n"
        f'address = "{REFEREE_ADDRESS}"\n'
        'name = "Benchmark Referee"\n'
        'inbox = "mail/inbox"\n'
        'outbox = "mail/outbox"\n'
        "per_address = true\n"
    )
    return load_service_config(folder / "referee.toml")


def new_world(folder: Path) -> World:
    config = write_config(folder)
    store = Store(config.database)
    store.migrate()
    return World(folder, config, store)


def open_world(folder: Path) -> World:
    config = load_service_config(folder / "referee.toml")
    return World(folder, config, Store(config.database))


def player_key(i: int) -> str:
    return f"p{i:06d}"


def match_key(i: int) -> str:
    return f"m{i:06d}"


def seating(n_matches: int, n_players: int) -> list[tuple[int, int]]:
    """Two different players per match; with fewer than 2 x matches players, players are reused."""
    if n_players < 2:
        raise ValueError("at least two players are needed")
    seats = []
    for i in range(n_matches):
        a = (2 * i) % n_players
        b = (2 * i + 1) % n_players
        if b == a:  # odd player count wrapping round
            b = (a + 1) % n_players
        seats.append((a, b))
    return seats


def season_dict(n_matches: int, n_players: int, start: datetime = START) -> dict[str, Any]:
    """The season, as the TOML file would give it (for ``parse_season``)."""
    return {
        "season": {"id": "bench", "name": "Benchmark season", "starting_chips": STARTING_CHIPS,
                   "reminders": ["2h"]},
        "players": [
            {"id": player_key(j), "name": f"Player {j}", "email": f"{player_key(j)}@{PLAYER_DOMAIN}",
             "timezone": TIMEZONES[j % len(TIMEZONES)]}
            for j in range(n_players)
        ],
        "matches": [
            {"id": match_key(i), "game": GAME, "players": [player_key(a), player_key(b)],
             "start": start.isoformat(), "seed": i + 1}
            for i, (a, b) in enumerate(seating(n_matches, n_players))
        ],
    }


def setup_season(world: World, n_matches: int, n_players: int, *, how: str = "bulk",
                 start: datetime = START) -> float:
    """Load the season; returns the seconds it took. ``how``: "bulk" or "loader"."""
    spec = parse_season(season_dict(n_matches, n_players, start), "bench season")
    t0 = time.perf_counter()
    if how == "loader":
        load_season(world.store, spec, start - timedelta(days=1))
    elif how == "bulk":
        bulk_load(world.store, spec, start - timedelta(days=1))
    else:
        raise ValueError(how)
    return time.perf_counter() - t0


def bulk_load(store: Store, spec, now: datetime) -> None:
    """Write the rows ``load_season`` writes for a new season, with executemany INSERTs."""
    with store.engine.begin() as conn:
        season_id = conn.execute(insert(Season).returning(Season.id), {
            "key": spec.key, "name": spec.name, "settings": {"starting_chips": spec.starting_chips},
            "created_at": now}).scalar_one()
        conn.execute(insert(Player), [
            {"season_id": season_id, "key": p.key, "name": p.name, "email": p.email, "timezone": p.timezone}
            for p in spec.players])
        player_ids = dict(conn.execute(select(Player.key, Player.id).where(Player.season_id == season_id)).all())
        if spec.starting_chips > 0:
            conn.execute(insert(LedgerEntry), [
                {"season_id": season_id, "match_id": None, "seq": None, "from_account": "SEASON",
                 "to_account": p.key, "amount": spec.starting_chips, "reason": GRANT_REASON, "step_key": None,
                 "at": now}
                for p in spec.players])
        conn.execute(insert(Match), [
            {"season_id": season_id, "key": m.key, "game": m.game, "seed": m.seed, "options": m.options,
             "timing": {"steps": m.steps, "reminders": m.reminders}, "starts_at": m.starts_at,
             "status": "scheduled", "state": None, "version": 1}
            for m in spec.matches])
        match_ids = dict(conn.execute(select(Match.key, Match.id).where(Match.season_id == season_id)).all())
        conn.execute(insert(Seat), [
            {"match_id": match_ids[m.key], "player_id": player_ids[k], "position": pos}
            for m in spec.matches for pos, k in enumerate(m.players)])


def copy_world(src: Path, dst: Path) -> None:
    """Copy a world folder (database and Maildirs, keeping file times: they are delivery times)."""
    shutil.copytree(src, dst, copy_function=shutil.copy2, symlinks=True)
    settle()


def settle() -> None:
    """Write back what setup left dirty, so that no timed fsync pays for it."""
    if hasattr(os, "sync"):
        os.sync()
    gc.collect()


@contextmanager
def temp_folder(keep: bool = False) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="referee-bench-"))
    try:
        yield folder
    finally:
        if keep:
            print(f"(kept {folder})")
        else:
            shutil.rmtree(folder, ignore_errors=True)


# ----------------------------------------------------------------------------- measuring


@contextmanager
def timed(results: dict[str, float], name: str) -> Iterator[None]:
    gc.collect()
    t0 = time.perf_counter()
    try:
        yield
    finally:
        results[name] = time.perf_counter() - t0


def rss_mb() -> float:
    """Current resident set size (VmRSS) in MB."""
    return _status_kb("VmRSS") / 1024


def hwm_mb() -> float:
    """Peak resident set size (VmHWM) in MB."""
    return _status_kb("VmHWM") / 1024


def maxrss_mb() -> float:
    """``ru_maxrss`` of this process in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _status_kb(field: str) -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return float(line.split()[1])
    except OSError:
        pass
    return float("nan")


def table(rows: list[tuple[Any, ...]], headers: tuple[str, ...]) -> str:
    """A plain text table; numbers right-aligned."""
    cells = [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    numeric = [all(isinstance(row[i], (int, float)) or row[i] in ("", "-") for row in rows) for i in range(len(headers))]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if numeric[i] else v.ljust(w) for i, (v, w) in enumerate(zip(values, widths))).rstrip()

    out = [line(list(headers)), line(["-" * w for w in widths])]
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value != value:
            return "n/a"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def machine() -> str:
    import platform
    import sqlite3

    import sqlalchemy
    return (f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, SQLAlchemy {sqlalchemy.__version__}, "
            f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}")


# ----------------------------------------------------------------------------- profiles

# (label, (file suffix, function name), caller (file suffix, function name) or None, use tottime)
# File suffix "~" is a C function; its time is its own (tottime) time.
BREAKDOWN = [
    ("Referee.ingest", ("referee/service.py", "ingest"), None, False),
    ("  parse_headers (for the Message-ID and sender)", ("referee/mail/parse.py", "parse_headers"), ("referee/pipeline/ingest.py", "_read"), False),
    ("  content_digest (duplicate detection)", ("referee/mail/identity.py", "content_digest"), None, False),
    ("  MaildirInbox.mark_processed", ("referee/mail/maildir.py", "mark_processed"), None, False),
    ("Referee.process_inbound", ("referee/service.py", "process_inbound"), None, False),
    ("  parse_headers (stored raw mail, headers first)", ("referee/mail/parse.py", "parse_headers"), ("referee/pipeline/judge.py", "process"), False),
    ("  guards.automated_reason", ("referee/mail/guards.py", "automated_reason"), None, False),
    ("  authenticate (session.get of the seat and its match)", ("referee/mail/auth.py", "authenticate"), None, False),
    ("  parse_body (authenticated mail only)", ("referee/mail/parse.py", "parse_body"), None, False),
    ("  _late_reply (outbox SELECT by Message-ID)", ("referee/pipeline/judge.py", "_late_reply"), None, False),
    ("  game.parse", ("referee/games/stationary_roulette.py", "parse"), ("referee/pipeline/judge.py", "_read"), False),
    ("  game.apply_move", ("referee/games/stationary_roulette.py", "apply_move"), ("referee/pipeline/judge.py", "judge"), False),
    ("  MatchBook.record_moves (events and state)", ("referee/match/book.py", "record_moves"), None, False),
    ("Referee.start_due", ("referee/service.py", "start_due"), None, False),
    ("  Balances.preload (2 grouped SUM queries per batch)", ("referee/store/balances.py", "preload"), None, False),
    ("Referee.close_due", ("referee/service.py", "close_due"), None, False),
    ("  MatchBook.close_step", ("referee/match/book.py", "close_step"), None, False),
    ("  game.apply_timeout (settlement, deepcopy)", ("referee/games/stationary_roulette.py", "apply_timeout"), None, False),
    ("Delivery.flush", ("referee/pipeline/deliver.py", "flush"), None, False),
    ("  MaildirOutbox.deliver", ("referee/mail/maildir.py", "deliver"), None, False),
    ("  MaildirOutbox.sync (batch durability)", ("referee/mail/maildir.py", "sync"), None, False),
    ("MatchBook.log_event (all)", ("referee/match/book.py", "log_event"), None, False),
    ("  max(seq) SELECT (incl. autoflush)", ("sqlalchemy/orm/session.py", "scalar"), ("referee/match/book.py", "log_event"), False),
    ("MatchBook.save_state (all)", ("referee/match/book.py", "save_state"), None, False),
    ("Notices.mail_player (all mail composing)", ("referee/match/notices.py", "mail_player"), None, False),
    ("  dedupe SELECT on outbox (incl. autoflush)", ("sqlalchemy/orm/session.py", "scalar"), ("referee/match/notices.py", "mail_player"), False),
    ("  Notices.context (view, form, token, local time)", ("referee/match/notices.py", "context"), None, False),
    ("    game.view", ("referee/games/stationary_roulette.py", "view"), ("referee/match/notices.py", "context"), False),
    ("  render_mail (jinja)", ("referee/render.py", "render_mail"), None, False),
    ("  compose", ("referee/mail/compose.py", "compose"), None, False),
    ("copy.deepcopy (all callers)", ("copy.py", "deepcopy"), None, False),
    ("json.dumps (JSON columns written)", ("json/__init__.py", "dumps"), None, False),
    ("json.loads (JSON columns read)", ("json/__init__.py", "loads"), None, False),
    ("ORM lazy loads (N+1 SELECTs)", ("sqlalchemy/orm/strategies.py", "_emit_lazyload"), None, False),
    ("ORM Session._flush (all flushes)", ("sqlalchemy/orm/session.py", "_flush"), None, False),
    ("sqlite3 Cursor.execute (inside SQLite)", ("~", "<method 'execute' of 'sqlite3.Cursor' objects>"), None, True),
    ("sqlite3 Connection.commit (WAL fsync)", ("~", "<method 'commit' of 'sqlite3.Connection' objects>"), None, True),
    ("os.fsync (Maildir files and directories)", ("~", "<built-in method posix.fsync>"), None, True),
    ("syncfs (Maildir helper)", ("referee/mail/maildir.py", "_syncfs"), None, False),
]


def _matches(key: tuple, want: tuple[str, str]) -> bool:
    filename, _line, name = key
    suffix, wanted = want
    if suffix == "~":
        return filename == "~" and name == wanted
    return name == wanted and filename.replace("\\", "/").endswith(suffix)


def profile_breakdown(stats) -> str:
    """Where the time goes, from a ``pstats.Stats``: inclusive seconds of the referee's steps.

    Rows overlap (a row's time includes the rows indented under it, and e.g. flushes show
    up both under the step that triggered them and in the ORM row).
    """
    total = stats.total_tt or float("nan")
    rows = []
    for label, want, caller, own in BREAKDOWN:
        calls, seconds = 0, 0.0
        for key, (cc, nc, tt, ct, callers) in stats.stats.items():
            if not _matches(key, want):
                continue
            if caller is None:
                calls += cc
                seconds += tt if own else ct
            else:
                for ckey, cvalues in callers.items():
                    if _matches(ckey, caller):
                        # (cc, nc, tt, ct) per caller
                        calls += cvalues[1] if isinstance(cvalues, tuple) else cvalues
                        seconds += (cvalues[2] if own else cvalues[3]) if isinstance(cvalues, tuple) else 0.0
        if calls:
            rows.append((label, calls, seconds, 100 * seconds / total))
    return table(rows, ("where (inclusive; rows overlap)", "calls", "s", "% of profiled"))


# ----------------------------------------------------------------------------- a database URL (--url)
#
# Added for ``bench_close.py --url``: the world's database may be a scratch database on a
# PostgreSQL server instead of the SQLite file. The scratch database is created on the
# server the URL names (CREATE DATABASE, connected to the URL's own database), migrated
# exactly as ``referee init`` migrates (``Store.migrate``: Alembic to head) and dropped
# afterwards (also when the run fails).


def is_sqlite_url(url: str | None) -> bool:
    return url is None or url.startswith("sqlite")


def _pg_admin(url: str):
    from sqlalchemy import create_engine

    return create_engine(url, isolation_level="AUTOCOMMIT")


def database_url(url: str, name: str) -> str:
    """``url`` with its database replaced by ``name`` (password kept)."""
    from sqlalchemy.engine import make_url

    return make_url(url).set(database=name).render_as_string(hide_password=False)


def create_database(admin_url: str, name: str, *, template: str | None = None) -> str:
    """CREATE DATABASE ``name`` (a copy of ``template`` when given) on the server of
    ``admin_url``; returns its URL. A template must have no open connection."""
    from sqlalchemy import text

    engine = _pg_admin(admin_url)
    try:
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")))
    finally:
        engine.dispose()
    return database_url(admin_url, name)


def drop_database(admin_url: str, name: str) -> None:
    from sqlalchemy import text

    engine = _pg_admin(admin_url)
    try:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        engine.dispose()


@contextmanager
def scratch_databases(admin_url: str | None, prefix: str = "referee_bench") -> Iterator["ScratchDatabases"]:
    """Scratch databases on the PostgreSQL server of ``admin_url``, all dropped at the end;
    with a SQLite URL or None, nothing (worlds keep their SQLite file)."""
    scratch = ScratchDatabases(None if is_sqlite_url(admin_url) else admin_url, prefix)
    try:
        yield scratch
    finally:
        scratch.drop_all()


class ScratchDatabases:
    def __init__(self, admin_url: str | None, prefix: str):
        import uuid

        self.admin_url = admin_url
        self.prefix = f"{prefix}_{uuid.uuid4().hex[:8]}"
        self.names: list[str] = []

    def new(self, label: str, *, template: str | None = None) -> str | None:
        """A fresh database (a copy of the database ``template`` when given): its URL, or
        None on SQLite."""
        if self.admin_url is None:
            return None
        name = f"{self.prefix}_{label}"
        url = create_database(self.admin_url, name, template=template)
        self.names.append(name)
        return url

    def drop_all(self) -> None:
        while self.names:
            drop_database(self.admin_url, self.names.pop())


def new_world_on(folder: Path, database: str | None) -> World:
    """``new_world``, on ``database`` (a URL; None: the SQLite file in ``folder``),
    migrated as ``referee init`` migrates."""
    write_config(folder)
    if database is not None:
        _set_database(folder, database)
    config = load_service_config(folder / "referee.toml")
    store = Store(config.database)
    store.migrate()
    return World(folder, config, store)


def copy_world_on(src: Path, dst: Path, scratch: ScratchDatabases, label: str) -> None:
    """``copy_world``; on PostgreSQL the database is copied too (CREATE DATABASE ... TEMPLATE:
    nothing may be connected to the source meanwhile)."""
    copy_world(src, dst)
    database = load_service_config(src / "referee.toml").database
    if not is_sqlite_url(database):
        from sqlalchemy.engine import make_url

        _set_database(dst, scratch.new(label, template=make_url(database).database))
        settle()


def _set_database(folder: Path, database: str) -> None:
    import json  # a JSON string is a TOML basic string

    path = folder / "referee.toml"
    lines = path.read_text().splitlines(keepends=True)
    lines = [f"database = {json.dumps(database)}\n" if line.startswith("database =") else line for line in lines]
    path.write_text("".join(lines))


def database_version(store: Store) -> str:
    """``SQLite 3.x`` or the server's ``PostgreSQL 15.x``."""
    import sqlite3

    from sqlalchemy import text

    if store.url.startswith("sqlite"):
        return f"SQLite {sqlite3.sqlite_version} file"
    with store.engine.connect() as conn:
        return "PostgreSQL " + str(conn.execute(text("show server_version")).scalar())


def add_database_arguments(parser) -> None:
    """``--setup`` and ``--url``, the same in every bench that builds a world."""
    parser.add_argument(
        "--setup",
        choices=("bulk", "loader"),
        default="bulk",
        help="load the season by bulk INSERTs (default) or through referee.seasons.load_season",
    )
    parser.add_argument(
        "--url",
        default=None,
        help="database URL: SQLite by default (a file in the temp folder); with a PostgreSQL URL such as "
        "postgresql+psycopg://postgres@127.0.0.1:5432/postgres each world gets a scratch database on that "
        "server (created, migrated with Alembic, dropped at the end)",
    )
