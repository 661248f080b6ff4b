"""season_events: the season's own hash chain (the organizer's commands that concern no one match)

season_events   one row per command of the organizer's that is about the season rather than
                one match (`referee adjust`, `referee announce` to a season), in order per
                season (seq from 1), each chained to the one before as a match's events are
                (referee.archive.chain: the chain's key is "season:<season key>").

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 13:30:00
"""
from alembic import op
import sqlalchemy as sa

from referee.store.models import UTCDateTime


revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'season_events',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('season_id', sa.Integer(), nullable=False),
        sa.Column('seq', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('payload', sa.JSON(), nullable=False),
        sa.Column('at', UTCDateTime(), nullable=False),
        sa.Column('digest', sa.String(length=64), nullable=False),
        sa.Column('hash', sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(['season_id'], ['seasons.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('season_id', 'seq', name='uq_season_events_season_seq'),
    )


def downgrade() -> None:
    op.drop_table('season_events')
