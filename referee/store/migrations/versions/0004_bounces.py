"""bounces: delivery reports, bounces and permanent refusals of outbox mail, per recipient

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03 09:00:00
"""
from alembic import op
import sqlalchemy as sa
import referee.store.models


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('bounces',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('outbox_id', sa.Integer(), nullable=True),
    sa.Column('player_id', sa.Integer(), nullable=True),
    sa.Column('address', sa.String(length=320), nullable=False),
    sa.Column('action', sa.String(length=32), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=True),
    sa.Column('diagnostic', sa.Text(), nullable=True),
    sa.Column('source', sa.String(length=16), nullable=False),
    sa.Column('hard', sa.Boolean(), nullable=False),
    sa.Column('verified', sa.Boolean(), nullable=False),
    sa.Column('received_at', referee.store.models.UTCDateTime(), nullable=False),
    sa.Column('inbound_id', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['inbound_id'], ['inbound.id'], name=op.f('fk_bounces_inbound_id_inbound')),
    sa.ForeignKeyConstraint(['outbox_id'], ['outbox.id'], name=op.f('fk_bounces_outbox_id_outbox')),
    sa.ForeignKeyConstraint(['player_id'], ['players.id'], name=op.f('fk_bounces_player_id_players')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_bounces'))
    )
    with op.batch_alter_table('bounces', schema=None) as batch_op:
        batch_op.create_index('ix_bounces_address_received', ['address', 'received_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_bounces_inbound_id'), ['inbound_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_bounces_outbox_id'), ['outbox_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_bounces_player_id'), ['player_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('bounces', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_bounces_player_id'))
        batch_op.drop_index(batch_op.f('ix_bounces_outbox_id'))
        batch_op.drop_index(batch_op.f('ix_bounces_inbound_id'))
        batch_op.drop_index('ix_bounces_address_received')
    op.drop_table('bounces')
    # a bounced mail was sent: what it was before this revision
    op.execute("UPDATE outbox SET status = 'sent' WHERE status = 'bounced'")
