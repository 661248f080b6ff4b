"""outbox delivery after faults (issue 23): ``claimed_by``, the holder of a claim under way
(referee.store.lease: a claim whose holder has ended is taken over at once, instead of after
a 15-minute lease); ``fail_cause`` and ``failed_at``, the cause of the last failed attempt
(disk, server, recipient, other) and its time (mail waiting for the disk or the server is due
once it works again); ``deadline``, a step mail's step deadline as delivery last found it
(retries are kept before it; ``referee status`` says when it passed undelivered); and an
index on ``sent_at`` (the latest success). NULL in every row written before this revision:
mail waiting then keeps its retry time.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06 10:00:00
"""
from alembic import op
import sqlalchemy as sa
import referee.store.models


revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('claimed_by', sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column('fail_cause', sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column('failed_at', referee.store.models.UTCDateTime(), nullable=True))
        batch_op.add_column(sa.Column('deadline', referee.store.models.UTCDateTime(), nullable=True))
        batch_op.create_index('ix_outbox_sent_at', ['sent_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_sent_at')
        batch_op.drop_column('deadline')
        batch_op.drop_column('failed_at')
        batch_op.drop_column('fail_cause')
        batch_op.drop_column('claimed_by')
