"""absences: each player's missed steps in a row in a match (the season's abandonment rule)

matches.absences   {player: steps missed in a row}, counted when a step closes at its deadline
                   without the player's submission, reset by any accepted move of theirs; a
                   player who reaches the match's abandonment limit (timing["abandon_after"])
                   forfeits it. NULL: nobody has missed a step.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 21:00:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.add_column(sa.Column('absences', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_column('absences')
