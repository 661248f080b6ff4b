"""ledger currency: every row names what it moves (season chips, a match's own chips,
awards); outbox step titles: a reply to a mail about a step that is over is told which

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 11:40:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # every row written before this revision moved the season's chips
    with op.batch_alter_table('ledger', schema=None) as batch_op:
        batch_op.add_column(sa.Column('currency', sa.String(length=32), nullable=False, server_default='chips'))
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('step_title', sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_column('step_title')
    # rows of other currencies have no place in the old ledger, whose every row is season chips
    op.execute("DELETE FROM ledger WHERE currency <> 'chips'")
    with op.batch_alter_table('ledger', schema=None) as batch_op:
        batch_op.drop_column('currency')
