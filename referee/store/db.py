"""Engines, the unit of work, and schema migrations.

SQLite is the embedded default (WAL, foreign keys, a busy timeout so that a second
process waits instead of failing); PostgreSQL is the production database. Both run
the same Alembic migrations (``referee init``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from referee.store import dbapi, rows

MIGRATIONS = Path(__file__).with_name("migrations")


def json_dumps(value: Any) -> str:
    """JSON for the JSON columns: orjson's (several times faster on a match state), else the
    stdlib's for what orjson refuses (integers beyond 64 bits); the same text either way."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(value)


def make_engine(url: str, *, echo: bool = False) -> Engine:
    json_options = {"json_serializer": json_dumps, "json_deserializer": orjson.loads}
    if url.startswith("sqlite"):
        engine = create_engine(url, echo=echo, connect_args={"timeout": 30}, **json_options)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):  # pragma: no cover - trivial
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            # WAL + FULL: a committed transaction survives a power cut, not only a crash.
            cur.execute("PRAGMA synchronous=FULL")
            cur.close()

        # pysqlite's own transaction handling defers BEGIN; take the write lock up front
        # so two processes never interleave a read-modify-write of the same match.
        @event.listens_for(engine, "connect")
        def _no_autobegin(dbapi_conn, _record):  # pragma: no cover - trivial
            dbapi_conn.isolation_level = None

        @event.listens_for(engine, "begin")
        def _begin_immediate(conn):  # pragma: no cover - trivial
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    return create_engine(url, echo=echo, pool_pre_ping=True, **json_options)


class Store:
    """Owns the engine and hands out units of work."""

    def __init__(self, url: str, *, echo: bool = False):
        self.url = url
        self.engine = make_engine(url, echo=echo)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        rows.install(self._sessions)  # rows added as plain dicts go out before each flush and commit

    @contextmanager
    def unit_of_work(self, *, autoflush: bool = True) -> Iterator[Session]:
        """One transaction: commits when the block ends normally, rolls back otherwise.

        ``autoflush=False`` lets a batch send its writes together at commit; the caller
        then flushes itself wherever a query must see the batch's own changes.
        """
        with self._sessions(autoflush=autoflush) as session, session.begin():
            yield session

    def migrate(self) -> None:
        """Create or upgrade the schema to the newest migration (nothing to do, and Alembic,
        which reads every migration file to find the newest, not started, when the database
        is at it already: a service starts, a test sets up its world, in milliseconds)."""
        try:
            current = self.is_current()
        finally:
            # no connection of the look left open in the pool: as Alembic's, closed with it
            # (a caller may replace a SQLite file it only migrated, as the tests' snapshots do)
            self.engine.dispose()
        if current:
            return
        from alembic import command

        command.upgrade(alembic_config(self.url), "head")

    def schema_state(self) -> str:
        """:func:`referee.store.dbapi.schema_state`: missing, old or current (without Alembic:
        the database's revision against ``HEAD_REVISION``)."""
        with self.engine.connect() as conn:
            return dbapi.schema_state(dbapi.Reader(conn.connection.driver_connection, conn.dialect.name))

    def is_current(self) -> bool:
        return self.schema_state() == dbapi.CURRENT

    def has_schema(self) -> bool:
        return self.schema_state() != dbapi.MISSING

    def dispose(self) -> None:
        self.engine.dispose()


def alembic_config(url: str):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg
