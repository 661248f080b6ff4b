"""Plain SQL through the DB-API driver, for the read-only paths that must start fast.

``referee status`` runs once and exits: importing SQLAlchemy, the ORM models and Alembic
would cost it ten times more than its queries. This module opens a read connection from
the same SQLAlchemy-style URL (``sqlite:///file.db``, ``postgresql+psycopg://user@host/db``)
with the driver itself (:mod:`sqlite3`, :mod:`psycopg`), runs queries written once for both
(``?`` parameters), and gives back column values as the ORM would (:mod:`referee.store.models`):
aware UTC datetimes for the ``UTCDateTime`` columns (SQLite keeps them as text, PostgreSQL as
naive timestamps), decoded JSON (SQLite keeps text; psycopg decodes it already). A
:class:`Reader` also wraps the driver connection of a SQLAlchemy session
(:meth:`Reader.of_session`), so that the same queries run inside a caller's unit of work.

Nothing here imports SQLAlchemy. The schema check (:func:`schema_state`) compares the
database's ``alembic_version`` with :data:`HEAD_REVISION`, which a test keeps equal to
Alembic's head (``tests/store/test_migrations.py``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

__all__ = [
    "CURRENT",
    "HEAD_REVISION",
    "MISSING",
    "OLD",
    "Reader",
    "Url",
    "json_value",
    "marks",
    "parse_url",
    "read_connection",
    "safe_url",
    "schema_state",
    "sqlite_file",
    "utc",
]

# the newest migration (referee/store/migrations/versions): a database whose alembic_version
# holds another revision needs `referee init`
HEAD_REVISION = "0016"

MISSING, OLD, CURRENT = "missing", "old", "current"  # what schema_state says

# SQLAlchemy's URL grammar (sqlalchemy.engine.url._parse_url), so both read a URL alike
_URL = re.compile(
    r"""
        (?P<name>[\w\+]+)://
        (?:
            (?P<username>[^:/]*)
            (?::(?P<password>[^@]*))?
        @)?
        (?:
            (?:
                \[(?P<ipv6host>[^/\?]+)\] |
                (?P<ipv4host>[^/:\?]+)
            )?
            (?::(?P<port>[^/\?]*))?
        )?
        (?:/(?P<database>[^\?]*))?
        (?:\?(?P<query>.*))?
    """,
    re.X,
)


class Url(NamedTuple):
    backend: str  # "sqlite", "postgresql", ...
    driver: str  # after the "+", "" when none is named
    username: str | None
    password: str | None
    host: str | None
    port: int | None
    database: str | None
    query: tuple[tuple[str, str], ...]


def parse_url(url: str) -> Url | None:
    """The parts of a database URL, as SQLAlchemy reads them; None when it is not one."""
    from urllib.parse import parse_qsl, unquote

    m = _URL.match(url)
    if m is None:
        return None
    backend, _, driver = m["name"].partition("+")
    try:
        port = int(m["port"]) if m["port"] else None
    except ValueError:
        return None
    return Url(
        backend=backend,
        driver=driver,
        username=unquote(m["username"]) if m["username"] is not None else None,
        password=unquote(m["password"]) if m["password"] is not None else None,
        host=m["ipv4host"] or m["ipv6host"],
        port=port,
        database=m["database"],
        query=tuple(parse_qsl(m["query"])) if m["query"] else (),
    )


def safe_url(url: str) -> str:
    """The database URL without its password (for messages)."""
    m = _URL.match(url)
    if m is None or m["password"] is None:
        return url
    start, end = m.span("password")
    return url[:start] + "***" + url[end:]


def sqlite_file(url: str) -> str | None:
    """The file of a SQLite URL (None for other databases and in-memory SQLite)."""
    parsed = parse_url(url)
    if parsed is None or parsed.backend != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return parsed.database


# ---------------------------------------------------------------------------- values


def utc(value: Any) -> datetime | None:
    """A ``UTCDateTime`` column's value as the ORM gives it: aware UTC (SQLite stores
    ``2026-12-05 18:00:00.000000``, PostgreSQL a naive timestamp, both UTC)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def json_value(value: Any) -> Any:
    """A JSON column's value: SQLite gives its text, psycopg the decoded value already."""
    if isinstance(value, (str, bytes)):
        import orjson  # the ORM's deserializer (referee.store.db.make_engine)

        return orjson.loads(value)
    return value


def marks(count: int) -> str:
    """``?, ?, ?``: the parameters of an ``IN (...)`` of ``count`` values."""
    return ", ".join("?" * count)


class Reader:
    """A DB-API connection and the queries run through it: ``?`` parameters on every driver,
    aware datetimes bound as each backend stores them, rows converted by column name."""

    def __init__(self, connection: Any, backend: str):
        self.connection = connection
        self.backend = backend
        # sqlite3 takes "?"; psycopg (and most other drivers) "%s"
        driver = sys.modules.get(type(connection).__module__.partition(".")[0])
        self._pyformat = backend != "sqlite" and getattr(driver, "paramstyle", "format") in ("format", "pyformat")

    @classmethod
    def of_session(cls, session: Session) -> Reader:
        """The driver connection of ``session``, in its transaction (flushed first: the
        queries see everything the unit of work did so far)."""
        session.flush()
        connection = session.connection()
        return cls(connection.connection.driver_connection, connection.dialect.name)

    def _bind(self, value: Any) -> Any:
        if isinstance(value, datetime):  # as UTCDateTime binds it: naive UTC
            if value.tzinfo is None:
                raise ValueError("naive datetime given to the store; all times must be aware UTC")
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
            if self.backend == "sqlite":  # SQLAlchemy's text format, which SQLite compares as text
                return value.strftime("%Y-%m-%d %H:%M:%S.%f")
        return value

    def _execute(self, sql: str, params: Sequence[Any]) -> Any:
        if self._pyformat:
            sql = sql.replace("%", "%%").replace("?", "%s")
        cursor = self.connection.cursor()
        cursor.execute(sql, tuple(self._bind(p) for p in params))
        return cursor

    def rows(self, sql: str, params: Sequence[Any] = (), **convert: Callable[[Any], Any]) -> list[SimpleNamespace]:
        """Every row, its columns as attributes (named by the query), each value passed
        through ``convert[name]`` when there is one."""
        return [
            SimpleNamespace(**dict(zip(names, row, strict=True))) for names, row in self._rows(sql, params, convert)
        ]

    def tuples(self, sql: str, params: Sequence[Any] = (), **convert: Callable[[Any], Any]) -> list[tuple[Any, ...]]:
        """Every row as a tuple, converted as :meth:`rows` does."""
        return [row for _, row in self._rows(sql, params, convert)]

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self._execute(sql, params).fetchone()
        return None if row is None else row[0]

    def _rows(
        self, sql: str, params: Sequence[Any], convert: dict[str, Callable[[Any], Any]]
    ) -> Iterator[tuple[tuple[str, ...], tuple[Any, ...]]]:
        cursor = self._execute(sql, params)
        names = tuple(column[0] for column in cursor.description)
        converters = [(i, convert[name]) for i, name in enumerate(names) if name in convert]
        for row in cursor.fetchall():
            if converters:
                row = list(row)
                for i, conv in converters:
                    row[i] = conv(row[i])
            yield names, tuple(row)


@contextmanager
def read_connection(url: str) -> Iterator[Reader | None]:
    """A :class:`Reader` on the database of ``url``, in one read transaction, closed at the
    end; None for a URL this module does not open itself (anything but a plain SQLite file
    or PostgreSQL through psycopg): the caller goes through SQLAlchemy then."""
    parsed = parse_url(url)
    if parsed is not None and parsed.backend == "sqlite" and parsed.driver in ("", "pysqlite") and not parsed.query:
        if parsed.username or parsed.password or parsed.host or parsed.port:
            yield None  # SQLAlchemy says what is wrong with it
            return
        import sqlite3

        filename = parsed.database or ":memory:"
        # as make_engine: wait for a writer instead of failing; no implicit transactions
        connection = sqlite3.connect(
            filename if filename == ":memory:" else os.path.abspath(filename), timeout=30, isolation_level=None
        )
        try:
            connection.execute("BEGIN")  # deferred: one snapshot of the database, no lock taken
            yield Reader(connection, "sqlite")
        finally:
            connection.close()  # ends the read transaction
        return
    if parsed is not None and parsed.backend == "postgresql" and parsed.driver == "psycopg":
        query = dict(parsed.query)
        # as SQLAlchemy's psycopg dialect: the URL's parts, then its query's; several hosts
        # (a query's host or port) are SQLAlchemy's to spell
        if len(query) == len(parsed.query) and "host" not in query and "port" not in query:
            import psycopg

            params: dict[str, Any] = {
                key: value
                for key, value in (
                    ("user", parsed.username),
                    ("password", parsed.password),
                    ("host", parsed.host),
                    ("port", parsed.port),
                    ("dbname", parsed.database),
                )
                if value
            }
            with psycopg.connect(**(params | query)) as connection:
                try:
                    yield Reader(connection, "postgresql")
                finally:
                    connection.rollback()  # nothing was written
            return
    yield None


def schema_state(reader: Reader) -> str:
    """:data:`MISSING` (no ``matches`` table: never set up), :data:`OLD` (``alembic_version``
    holds no revision, or another than :data:`HEAD_REVISION`), else :data:`CURRENT`."""
    if not _has_table(reader, "matches"):
        return MISSING
    if not _has_table(reader, "alembic_version"):
        return OLD
    revisions = [row[0] for row in reader.tuples("SELECT version_num FROM alembic_version")]
    return CURRENT if revisions == [HEAD_REVISION] else OLD


def _has_table(reader: Reader, name: str) -> bool:
    if reader.backend == "sqlite":
        return bool(reader.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))
    # a table the search path finds, as SQLAlchemy's has_table (and Alembic) look for it
    return reader.scalar("SELECT to_regclass(?) IS NOT NULL", (name,)) is True
