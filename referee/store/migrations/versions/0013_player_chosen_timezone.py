"""players.timezone_chosen: the time zone a player chose by mail (``TIMEZONE <zone>``,
referee.pipeline.player_commands), NULL when they chose none. It wins over the season
file's zone (``players.timezone``) until the file changes that player's zone; every
mail and page shows a player's times in ``coalesce(timezone_chosen, timezone)``.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05 10:00:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.add_column(sa.Column('timezone_chosen', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.drop_column('timezone_chosen')
