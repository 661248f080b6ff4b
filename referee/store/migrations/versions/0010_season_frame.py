"""season frame: what a match is to its season, and who is out of it

matches.kind       "main" (a main match: its EC nominates a DMO), "nomination" (the EC's
                   nomination, opened by the referee), "death" (a death match, created by the
                   referee); NULL for a match of no season frame (as every match was before)
matches.follows_id the match this one follows (a nomination: its main match; a death match:
                   its nomination), NULL otherwise
matches.seating    "live": the seats are the season's live players, taken at the start (a main
                   match the season file gives "live" players); NULL: the seats are as loaded
players.eliminated_at, players.eliminated_in
                   when a player lost a death match and which (the match's key): such a player
                   plays no later match of the season; NULL for a live player

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 20:00:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.add_column(sa.Column('kind', sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column('follows_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('seating', sa.String(length=16), nullable=True))
        batch_op.create_foreign_key('fk_matches_follows_id_matches', 'matches', ['follows_id'], ['id'])
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.add_column(sa.Column('eliminated_at', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('eliminated_in', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.drop_column('eliminated_in')
        batch_op.drop_column('eliminated_at')
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_constraint('fk_matches_follows_id_matches', type_='foreignkey')
        batch_op.drop_column('seating')
        batch_op.drop_column('follows_id')
        batch_op.drop_column('kind')
