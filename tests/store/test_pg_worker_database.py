"""The tests' PostgreSQL database, reused from test to test (tests/conftest.py,
PgWorkerDatabase): each test gets it migrated and empty, as a fresh copy would be; a
connection a test left open does not stop the emptying; a database whose schema a test
changed is not handed on."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from ..conftest import PgWorkerDatabase

pytestmark = pytest.mark.postgres

NOW = datetime(2026, 12, 6, tzinfo=timezone.utc)


def rows(url: str, sql: str) -> list[tuple]:
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql))]
    finally:
        engine.dispose()


def season_row(conn, key: str) -> int:
    return conn.execute(
        text("INSERT INTO seasons (key, name, settings, created_at) VALUES (:k, :k, '{}', :t) RETURNING id"),
        {"k": key, "t": NOW},
    ).scalar_one()


def test_the_next_test_gets_the_database_empty_with_its_sequences_restarted(pg_admin, pg_dropper, pg_template):
    database = PgWorkerDatabase(pg_admin, pg_dropper, pg_template)
    url = database.take()
    engine = create_engine(url, poolclass=NullPool)
    with engine.begin() as conn:
        first = season_row(conn, "one")
        season_row(conn, "two")
    left_open = engine.connect()  # a test that forgot a connection, inside a transaction
    left_open.begin()
    left_open.execute(text("SELECT * FROM seasons FOR UPDATE"))
    database.give_back()
    left_open.invalidate()  # ended by the emptying: closed here without a rollback
    engine.dispose()

    assert database.take() == url  # the same database, emptied
    assert rows(url, "SELECT key FROM seasons") == []
    with create_engine(url, poolclass=NullPool).begin() as conn:
        assert season_row(conn, "again") == first  # the sequence starts again
    assert rows(url, "SELECT count(*) FROM alembic_version") == [(1,)]
    database.give_back()
    pg_dropper.drop(database.current[0])


def test_a_database_whose_schema_a_test_changed_is_not_handed_on(pg_admin, pg_dropper, pg_template):
    database = PgWorkerDatabase(pg_admin, pg_dropper, pg_template)
    url = database.take()
    with create_engine(url, poolclass=NullPool).begin() as conn:
        conn.execute(text("CREATE TABLE left_behind (id integer)"))
    database.give_back()
    assert database.current is None
    other = database.take()
    assert other != url
    assert rows(other, "SELECT count(*) FROM pg_tables WHERE tablename = 'left_behind'") == [(0,)]
    database.give_back()
    pg_dropper.drop(database.current[0])
