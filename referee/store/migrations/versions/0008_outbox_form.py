"""outbox form: the form a mail to a player carried (the game's form() as the mail was
written), so that a reply is read against it: a section of the form the player left as it
was is never a move, one they edited is read whole (referee.mail.reply). NULL for mails
without a form and for mails written before this revision (their replies are read as
before).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 15:00:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('form', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_column('form')
