"""lz4 for the large columns on PostgreSQL (issue 23): the outbox's mails, the inbound
mails, the match states and the events' payloads. PostgreSQL compresses a value over about
2 KB before it stores it (TOAST), by default with pglz; a close of 10,000 matches writes
20,000 mails of some 10 KB each, and pglz took about 0.2 ms of the server's CPU for each
(lz4: 0.06 ms; bench/README.md). A server without lz4 (before PostgreSQL 14, or built
without it) keeps pglz: the migration notes it and goes on. Nothing on SQLite. Values
stored before keep their compression until they are written again.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07 02:30:00
"""
from alembic import op


revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None

COLUMNS = (("outbox", "message"), ("inbound", "raw"), ("matches", "state"), ("events", "payload"))


def _compression(method: str) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql" or (bind.dialect.server_version_info or (0,)) < (14,):
        return
    for table, column in COLUMNS:
        op.execute(
            "DO $$ BEGIN "
            f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION {method}; "
            "EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN "
            f"RAISE NOTICE 'compression {method} is not available: {table}.{column} keeps its own'; "
            "END $$"
        )


def upgrade() -> None:
    _compression("lz4")


def downgrade() -> None:
    _compression("default")
