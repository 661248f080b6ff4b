"""The Alembic migrations build exactly the schema the models describe, on both backends."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from referee.store.db import Store
from referee.store.models import Base


def test_migrated_schema_matches_the_models(db_url):
    store = Store(db_url)
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    store.dispose()
    assert diff == []


def test_migrate_is_idempotent_and_current(db_url):
    store = Store(db_url)
    store.migrate()
    assert store.has_schema() and store.is_current()
    store.dispose()
