"""Shared fixtures: a store on SQLite (always) and on PostgreSQL (when reachable); and the
rule every test of an outside service follows (PostgreSQL, the mail stack, the browser)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Iterator
from typing import NoReturn

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from referee.store.db import Store

PG_URL = os.environ.get("REFEREE_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")


def unavailable(required_by: str, required: str, missing: str) -> NoReturn:
    """An outside service a test needs is missing: under CI (or with ``required_by`` set in
    the environment) the test fails, saying ``required``; elsewhere it is skipped, saying
    ``missing``."""
    if os.environ.get(required_by) or os.environ.get("CI"):
        pytest.fail(required, pytrace=False)
    pytest.skip(missing)


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


def _fresh_pg_database(admin) -> tuple[str, str]:
    name = f"referee_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    return name, url


def _drop_pg_database(admin, name: str) -> None:
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request, tmp_path) -> Iterator[str]:
    """A migrated, empty database on each backend."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'referee.db'}"
        Store(url).migrate()
        yield url
        return
    admin = request.getfixturevalue("pg_admin")
    name, url = _fresh_pg_database(admin)
    try:
        Store(url).migrate()
        yield url
    finally:
        _drop_pg_database(admin, name)


@pytest.fixture
def store(db_url) -> Iterator[Store]:
    s = Store(db_url)
    yield s
    s.dispose()


@pytest.fixture
def sqlite_store(tmp_path) -> Iterator[Store]:
    s = Store(f"sqlite:///{tmp_path / 'referee.db'}")
    s.migrate()
    yield s
    s.dispose()
