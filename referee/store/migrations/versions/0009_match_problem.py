"""match problem: why a match could not start (the game refused its seats or options, or
starting it failed), set by the clock when the start fails and cleared by the next season
load, after which the start is tried again. NULL for every match that started or has not
been tried.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 18:20:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.add_column(sa.Column('problem', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_column('problem')
