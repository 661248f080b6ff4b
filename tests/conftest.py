"""Shared fixtures: a store on SQLite (always) and on PostgreSQL (when reachable); and the
rule every test of an outside service follows (PostgreSQL, the mail stack, the browser)."""

from __future__ import annotations

import gc
import os
import random
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, NoReturn

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from referee.store.db import Store
from referee.store.models import Base
from tests import migrated

PG_URL = os.environ.get("REFEREE_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")

# ---------------------------------------------------------------- the conformance suite's rotating seed

# The hidden-information check of tests/games/test_conformance_hidden.py draws its states with
# fixed seeds and, beside them, with one seed that changes from run to run: drawn once per run
# (by the controller under xdist, handed to every worker), printed in the header and in the
# summary; REFEREE_CONFORMANCE_SEED=N runs with N again.
SEED_VARIABLE = "REFEREE_CONFORMANCE_SEED"
_SEED = pytest.StashKey[int]()


def pytest_configure(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        compile_sources()
        temporary_files_in_memory(config)
    if workerinput is not None and SEED_VARIABLE in workerinput:
        seed = int(workerinput[SEED_VARIABLE])
    elif os.environ.get(SEED_VARIABLE):
        seed = int(os.environ[SEED_VARIABLE])
    else:
        seed = random.SystemRandom().randrange(1, 1_000_000)
    config.stash[_SEED] = seed


# The tests' temporary files (pytest's tmp_path, the tempfile module, the processes the tests
# start) go to memory, /dev/shm, when it is a tmpfs with room: the tests write thousands of
# SQLite databases, Maildirs and archives, and every commit's fsync and every Maildir's
# syncfs then returns at once instead of waiting for the disk (a tenth off the service tests'
# time on two cores). What the tests check is the same on either: a killed process leaves
# the same files, and the full-disk tests mount a small tmpfs of their own.
# REFEREE_TEST_TMPDIR=/some/folder puts them there; REFEREE_TEST_TMPDIR= (empty) leaves them
# in the system's temporary folder; --basetemp is obeyed as always.
TMP_VARIABLE = "REFEREE_TEST_TMPDIR"
MEMORY = Path("/dev/shm")
MEMORY_ROOM = 4 << 30  # bytes free, at least, for a run (a whole run writes some 1-2 GB)


def temporary_files_in_memory(config: pytest.Config) -> None:
    """On the controller (the workers' base folder is made in the controller's, and they
    inherit its environment), before any temporary folder is made."""
    if config.option.basetemp:
        return
    chosen = os.environ.get(TMP_VARIABLE)
    if chosen is None:
        chosen = str(MEMORY) if _roomy_tmpfs(MEMORY) else ""
    if not chosen:
        return
    os.environ["TMPDIR"] = chosen
    tempfile.tempdir = chosen


def _roomy_tmpfs(folder: Path) -> bool:
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
        stat = os.statvfs(folder)
    except OSError:
        return False
    tmpfs = any(line.split()[1:3] == [str(folder), "tmpfs"] for line in mounts if len(line.split()) > 2)
    return tmpfs and stat.f_bavail * stat.f_frsize >= MEMORY_ROOM and os.access(folder, os.W_OK)


def compile_sources() -> None:
    """The referee's and the tests' bytecode written once, before the workers start (as an
    installation has it: pip compiles every module). Where PYTHONDONTWRITEBYTECODE is set
    (as on the CI machines), every process the tests start (`referee` commands, demos, three
    `referee run` processes, the workers themselves) would otherwise compile the modules it
    imports again: a quarter of a second of CPU each, hundreds of times."""
    import compileall

    root = Path(__file__).resolve().parent.parent
    for folder in ("referee", "tests", "scheduler"):
        if (root / folder).is_dir():
            compileall.compile_dir(str(root / folder), quiet=1)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The garbage collector, tuned for a test process: what is there once the tests are
    collected (modules, test items) stays to the end and is not walked again (freeze), and
    the young generations are collected 140 times less often than by default (700
    allocations): a test allocates millions of short-lived objects (states cloned, templates
    rendered, rows loaded), which reference counting frees anyway. A fifth less CPU on the
    service, archive and game tests; the cycles left wait a little longer."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(xdist, on the controller) every worker gets the run's rotating seed."""
    node.workerinput[SEED_VARIABLE] = node.config.stash[_SEED]


def pytest_report_header(config: pytest.Config) -> str:
    seed = config.stash[_SEED]
    return f"conformance rotating seed: {seed} (to run with it again: {SEED_VARIABLE}={seed})"


@pytest.fixture(scope="session", autouse=True)
def _shared_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The folder every worker of this test run sees (tests/demo_runs.py)."""
    from tests import demo_runs

    demo_runs.SHARED = demo_runs.shared_root(tmp_path_factory)


@pytest.fixture(scope="session")
def conformance_seed(pytestconfig: pytest.Config) -> int:
    """The run's rotating seed (see ``pytest_configure``)."""
    return pytestconfig.stash[_SEED]


# what the conformance tests report of their budgets (``record_property``): kind -> game -> figures
_REPORTED: dict[str, dict[str, dict[str, Any]]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep the conformance tests' budgets for the summary (under xdist the controller gets
    every worker's reports, with their properties)."""
    if report.when != "call":
        return
    for key, value in report.user_properties:
        if key.startswith("conformance-") and isinstance(value, dict):
            _REPORTED.setdefault(key, {})[str(value.get("game"))] = value


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The conformance suite's budgets per game, and the rotating seed, at the end of the run."""
    seed = config.stash[_SEED]
    playouts, hidden = _REPORTED.get("conformance-playouts", {}), _REPORTED.get("conformance-hidden", {})
    if not playouts and not hidden:
        return
    terminalreporter.section("conformance budgets")
    for game in sorted({*playouts, *hidden}):
        line = f"{game}:"
        if game in playouts:
            got = playouts[game]
            line += f" {got['playouts']} playouts, {got['states']} states (budget {got['budget']});"
        if game in hidden:
            got = hidden[game]
            line += (
                f" hidden information at {got['fixed']} (state, player) pairs of fixed seeds"
                f" + {got['rotating']} of the rotating seed"
            )
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"rotating seed: {seed} (to run with it again: {SEED_VARIABLE}={seed})")


def unavailable(required_by: str, required: str, missing: str) -> NoReturn:
    """An outside service a test needs is missing: under CI (or with ``required_by`` set in
    the environment) the test fails, saying ``required``; elsewhere it is skipped, saying
    ``missing``."""
    if os.environ.get(required_by) or os.environ.get("CI"):
        pytest.fail(required, pytrace=False)
    pytest.skip(missing)


# ---------------------------------------------------------------- the order of the files on the workers

# The files that take longest, longest first: xdist (--dist loadfile, --no-loadscope-reorder in
# pyproject.toml) hands whole files to whichever worker is free, in the order the workers
# collected them; a long file handed out last would keep one worker busy alone at the end
# while the other waits. The rest follow, the files of most tests first (xdist's own order).
# A file named here that no longer exists is simply not there.
RUN_FIRST = (
    "tests/games/test_conformance_hidden.py",
    "tests/service/test_duels_by_mail.py",
    "tests/games/test_conformance.py",
    "tests/integration/test_three_processes.py",
    # the demos over real mail wait on the mail servers much of their time: started early,
    # their waits overlap the other workers' work instead of ending the run with idle cores
    "tests/integration/test_demo_imap.py",
    "tests/integration/test_demo_matchjack_imap.py",
    "tests/integration/test_full_match.py",
    "tests/browser/test_archive_layout.py",
    "tests/service/test_betting_minority_service.py",
    "tests/test_demo.py",
    "tests/replies/test_corpus.py",
    "tests/mail/test_readable_mails.py",
    "tests/games/test_rewind_holdem_properties.py",
    "tests/service/test_whole_season.py",
    "tests/service/test_corpus.py",
    "tests/archive/test_leaks.py",
    "tests/service/test_matchjack_service.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker: the files in the order above (see RUN_FIRST); the tests of a file
    stay in their order. A run in one process (-n 0) keeps the collection's order."""
    if not hasattr(config, "workerinput"):
        return
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    rank = {name: i for i, name in enumerate(RUN_FIRST)}
    order = sorted(files, key=lambda name: (rank.get(name, len(rank)), -len(files[name])))
    items[:] = [item for name in order for item in files[name]]


def mark_users(items: Iterable[pytest.Item], marker: str, fixtures: set[str]) -> None:
    """Every test that uses one of ``fixtures`` carries ``marker`` (select with -m)."""
    for item in items:
        if fixtures & set(getattr(item, "fixturenames", ())):
            item.add_marker(getattr(pytest.mark, marker))


def _pg_admin():
    try:
        engine = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text("select 1"))
        return engine
    except Exception:
        return None


@pytest.fixture(scope="session")
def pg_admin():
    engine = _pg_admin()
    if engine is None:
        unavailable(
            "REFEREE_REQUIRE_PG",
            f"PostgreSQL is required here but not reachable at {PG_URL}",
            f"PostgreSQL not reachable at {PG_URL}",
        )
    yield engine
    engine.dispose()


def _fresh_pg_database(admin, template: str | None = None) -> tuple[str, str]:
    """A new database (empty; or a copy of the database ``template``): its name and URL."""
    name = f"referee_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")))
    url = make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    return name, url


def _drop_pg_database(admin, name: str) -> None:
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# The migrations run once per worker on each backend, into a template that every test's
# database is copied from (a file copy; PostgreSQL's CREATE DATABASE ... TEMPLATE): the same
# migrated, empty database as running them for every test, in a fraction of the time.
# tests/store/test_migrations.py runs the migrations themselves.


@pytest.fixture(scope="session")
def sqlite_template() -> Path:
    """A migrated, empty SQLite database, all of it in its one file (nothing left in a WAL):
    the worker's one (tests/migrated.py), which helpers outside fixtures copy too."""
    return migrated.sqlite_template()


@pytest.fixture(scope="session")
def pg_template(pg_admin) -> Iterator[str]:
    """The name of a migrated, empty PostgreSQL database to copy (nobody connects to it after)."""
    name, url = _fresh_pg_database(pg_admin)
    try:
        store = Store(url)
        store.migrate()
        store.dispose()
        yield name
    finally:
        _drop_pg_database(pg_admin, name)


class Dropper:
    """Drops databases in a thread of its own: a DROP DATABASE waits for a checkpoint (about a
    second), which the next tests need not wait for."""

    def __init__(self, admin) -> None:
        self.admin = admin
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="pg-drop")
        self.drops: list[Future[None]] = []

    def drop(self, name: str) -> None:
        self.drops.append(self.pool.submit(_drop_pg_database, self.admin, name))

    def close(self) -> list[str]:
        """Waits for every drop; the failures."""
        self.pool.shutdown(wait=True)
        return [f"{exc!r}" for f in self.drops if (exc := f.exception()) is not None]


@pytest.fixture(scope="session")
def pg_dropper(pg_admin) -> Iterator[Dropper]:
    """The tests' databases are dropped in the background, all of them by the end of the
    session; a drop that failed fails the session's last test there."""
    dropper = Dropper(pg_admin)
    yield dropper
    failed = dropper.close()
    assert not failed, f"test databases not dropped: {failed}"


class PgWorkerDatabase:
    """This worker's PostgreSQL database for the tests on ``db_url[postgresql]``: a copy of the
    template, emptied after each test and handed to the next, instead of a copy made and
    dropped per test (a CREATE DATABASE ... TEMPLATE and its DROP cost the server about 0.1 s
    of CPU, and the test 0.2 s of waiting, some 320 times a run).

    Emptied in one transaction: every other connection to it ended (what a test left open),
    the rows of every table deleted (the referencing tables first) and every sequence
    restarted; then the schema is checked to be the template's (the same tables, sequences
    and migration). A database that cannot be emptied so, or whose schema a test changed, is
    dropped and the next test gets a fresh copy: every test starts on a migrated, empty
    database, as on a copy of its own."""

    def __init__(self, admin, dropper: Dropper, template: str) -> None:
        self.admin, self.dropper, self.template = admin, dropper, template
        self.current: tuple[str, str] | None = None
        self.schema: tuple[Any, ...] | None = None

    def take(self) -> str:
        if self.current is None:
            self.current = _fresh_pg_database(self.admin, template=self.template)
            if self.schema is None:  # the template's, read on its first copy
                engine = create_engine(self.current[1], poolclass=NullPool)
                try:
                    with engine.connect() as conn:
                        schema = _pg_schema(conn)
                        rows = sum(conn.scalar(text(f'SELECT count(*) FROM "{t}"')) for t in schema[0])
                finally:
                    engine.dispose()
                # a template with rows of its own could not be restored by deleting rows
                self.schema = schema if rows == 0 else ()
        return self.current[1]

    def give_back(self) -> None:
        if self.current is None:
            return
        name, url = self.current
        try:
            emptied = self._empty(url)
        except Exception:
            emptied = False
        if not emptied:
            self.current = None
            self.dropper.drop(name)

    def _empty(self, url: str) -> bool:
        engine = create_engine(url, poolclass=NullPool)
        try:
            with engine.begin() as conn:
                conn.execute(
                    text(
                        "SELECT pg_terminate_backend(pid, 60000) FROM pg_stat_activity"
                        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
                )
                schema = _pg_schema(conn)
                if schema != self.schema:
                    return False
                tables, sequences, _ = schema
                order = [t.name for t in reversed(Base.metadata.sorted_tables) if t.name in tables]
                order += sorted(set(tables) - set(order))
                for table in order:
                    conn.execute(text(f'DELETE FROM "{table}"'))
                for sequence in sequences:
                    conn.execute(text(f'ALTER SEQUENCE "{sequence}" RESTART'))
            return True
        finally:
            engine.dispose()


def _pg_schema(conn) -> tuple[Any, ...]:
    """The tables (but the migrations' own), sequences and migration of a database."""
    tables = tuple(
        conn.scalars(
            text(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                " AND tablename <> 'alembic_version' ORDER BY tablename"
            )
        )
    )
    sequences = tuple(
        conn.scalars(text("SELECT sequencename FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1"))
    )
    version = tuple(conn.scalars(text("SELECT version_num FROM alembic_version ORDER BY 1")))
    return tables, sequences, version


@pytest.fixture(scope="session")
def pg_worker_database(pg_admin, pg_dropper, pg_template) -> Iterator[PgWorkerDatabase]:
    database = PgWorkerDatabase(pg_admin, pg_dropper, pg_template)
    yield database
    if database.current is not None:
        pg_dropper.drop(database.current[0])


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request, tmp_path) -> Iterator[str]:
    """A migrated, empty database on each backend: on SQLite a copy of the worker's template;
    on PostgreSQL the worker's database, emptied after each test (PgWorkerDatabase)."""
    if request.param == "sqlite":
        path = tmp_path / "referee.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    database = request.getfixturevalue("pg_worker_database")
    try:
        yield database.take()
    finally:
        database.give_back()


@pytest.fixture
def store(db_url) -> Iterator[Store]:
    s = Store(db_url)
    yield s
    s.dispose()


@pytest.fixture
def sqlite_store(tmp_path, sqlite_template) -> Iterator[Store]:
    path = tmp_path / "referee.db"
    shutil.copyfile(sqlite_template, path)
    s = Store(f"sqlite:///{path}")
    yield s
    s.dispose()
