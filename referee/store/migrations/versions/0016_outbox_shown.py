"""The outbox keeps the text a reader sees of each mail (issue 23): a reply is read against
the mail of ours it copies, and finding that text in the mail's bytes (walking its MIME
parts, decoding the quoted-printable plain part) was a tenth of judging a reply. The press
writes it beside the bytes; a mail written before, or rewritten on delivery (noted late),
has none, and the reader takes it from the bytes as before. lz4 on PostgreSQL, as the
other large columns (0015).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07 05:30:00
"""
import sqlalchemy as sa
from alembic import op


revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("shown", sa.Text(), nullable=True))
    bind = op.get_bind()
    if bind.dialect.name == "postgresql" and (bind.dialect.server_version_info or (0,)) >= (14,):
        op.execute(
            "DO $$ BEGIN ALTER TABLE outbox ALTER COLUMN shown SET COMPRESSION lz4; "
            "EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN "
            "RAISE NOTICE 'compression lz4 is not available: outbox.shown keeps its own'; END $$"
        )


def downgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("shown")
