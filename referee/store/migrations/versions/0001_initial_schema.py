"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-29 15:17:39.386062
"""
from alembic import op
import sqlalchemy as sa
import referee.store.models


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('seasons',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('settings', sa.JSON(), nullable=False),
    sa.Column('created_at', referee.store.models.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_seasons')),
    sa.UniqueConstraint('key', name=op.f('uq_seasons_key'))
    )
    op.create_table('matches',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('season_id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('game', sa.String(length=64), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=False),
    sa.Column('options', sa.JSON(), nullable=False),
    sa.Column('timing', sa.JSON(), nullable=False),
    sa.Column('starts_at', referee.store.models.UTCDateTime(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('state', sa.JSON(), nullable=True),
    sa.Column('step_key', sa.String(length=64), nullable=True),
    sa.Column('step_kind', sa.String(length=64), nullable=True),
    sa.Column('step_opened_at', referee.store.models.UTCDateTime(), nullable=True),
    sa.Column('deadline', referee.store.models.UTCDateTime(), nullable=True),
    sa.Column('remind_at', referee.store.models.UTCDateTime(), nullable=True),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('last_event_seq', sa.Integer(), nullable=False),
    sa.Column('result', sa.JSON(), nullable=True),
    sa.Column('finished_at', referee.store.models.UTCDateTime(), nullable=True),
    sa.ForeignKeyConstraint(['season_id'], ['seasons.id'], name=op.f('fk_matches_season_id_seasons')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_matches')),
    sa.UniqueConstraint('key', name=op.f('uq_matches_key'))
    )
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_matches_deadline'), ['deadline'], unique=False)
        batch_op.create_index(batch_op.f('ix_matches_remind_at'), ['remind_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_matches_status'), ['status'], unique=False)

    op.create_table('players',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('season_id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('timezone', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['season_id'], ['seasons.id'], name=op.f('fk_players_season_id_seasons')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_players')),
    sa.UniqueConstraint('season_id', 'email', name='uq_players_season_email'),
    sa.UniqueConstraint('season_id', 'key', name='uq_players_season_key')
    )
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_players_email'), ['email'], unique=False)

    op.create_table('inbound',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('message_key', sa.String(length=998), nullable=False),
    sa.Column('source', sa.String(length=500), nullable=False),
    sa.Column('raw', sa.LargeBinary(), nullable=False),
    sa.Column('received_at', referee.store.models.UTCDateTime(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('match_id', sa.Integer(), nullable=True),
    sa.Column('player_id', sa.Integer(), nullable=True),
    sa.Column('processed_at', referee.store.models.UTCDateTime(), nullable=True),
    sa.ForeignKeyConstraint(['match_id'], ['matches.id'], name=op.f('fk_inbound_match_id_matches')),
    sa.ForeignKeyConstraint(['player_id'], ['players.id'], name=op.f('fk_inbound_player_id_players')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_inbound')),
    sa.UniqueConstraint('message_key', name=op.f('uq_inbound_message_key'))
    )
    with op.batch_alter_table('inbound', schema=None) as batch_op:
        batch_op.create_index('ix_inbound_status_received', ['status', 'received_at'], unique=False)

    op.create_table('ledger',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('season_id', sa.Integer(), nullable=False),
    sa.Column('match_id', sa.Integer(), nullable=True),
    sa.Column('seq', sa.Integer(), nullable=True),
    sa.Column('from_account', sa.String(length=64), nullable=False),
    sa.Column('to_account', sa.String(length=64), nullable=False),
    sa.Column('amount', sa.Integer(), nullable=False),
    sa.Column('reason', sa.String(length=200), nullable=False),
    sa.Column('step_key', sa.String(length=64), nullable=True),
    sa.Column('at', referee.store.models.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['match_id'], ['matches.id'], name=op.f('fk_ledger_match_id_matches')),
    sa.ForeignKeyConstraint(['season_id'], ['seasons.id'], name=op.f('fk_ledger_season_id_seasons')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ledger')),
    sa.UniqueConstraint('match_id', 'seq', name='uq_ledger_match_seq')
    )
    with op.batch_alter_table('ledger', schema=None) as batch_op:
        batch_op.create_index('ix_ledger_season_from', ['season_id', 'from_account'], unique=False)
        batch_op.create_index('ix_ledger_season_to', ['season_id', 'to_account'], unique=False)

    op.create_table('outbox',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dedupe_key', sa.String(length=300), nullable=False),
    sa.Column('message_id', sa.String(length=400), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('match_id', sa.Integer(), nullable=True),
    sa.Column('step_key', sa.String(length=64), nullable=True),
    sa.Column('to_addr', sa.String(length=320), nullable=False),
    sa.Column('message', sa.LargeBinary(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', referee.store.models.UTCDateTime(), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('created_at', referee.store.models.UTCDateTime(), nullable=False),
    sa.Column('sent_at', referee.store.models.UTCDateTime(), nullable=True),
    sa.ForeignKeyConstraint(['match_id'], ['matches.id'], name=op.f('fk_outbox_match_id_matches')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_outbox')),
    sa.UniqueConstraint('dedupe_key', name=op.f('uq_outbox_dedupe_key'))
    )
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_outbox_match_id'), ['match_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_outbox_message_id'), ['message_id'], unique=False)
        batch_op.create_index('ix_outbox_status_next', ['status', 'next_attempt_at'], unique=False)

    op.create_table('seats',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('match_id', sa.Integer(), nullable=False),
    sa.Column('player_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['match_id'], ['matches.id'], name=op.f('fk_seats_match_id_matches')),
    sa.ForeignKeyConstraint(['player_id'], ['players.id'], name=op.f('fk_seats_player_id_players')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_seats')),
    sa.UniqueConstraint('match_id', 'player_id', name='uq_seats_match_player')
    )
    with op.batch_alter_table('seats', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_seats_match_id'), ['match_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_seats_player_id'), ['player_id'], unique=False)

    op.create_table('events',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('match_id', sa.Integer(), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('step_key', sa.String(length=64), nullable=True),
    sa.Column('player', sa.String(length=64), nullable=True),
    sa.Column('payload', sa.JSON(), nullable=False),
    sa.Column('at', referee.store.models.UTCDateTime(), nullable=False),
    sa.Column('inbound_id', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['inbound_id'], ['inbound.id'], name=op.f('fk_events_inbound_id_inbound')),
    sa.ForeignKeyConstraint(['match_id'], ['matches.id'], name=op.f('fk_events_match_id_matches')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_events')),
    sa.UniqueConstraint('match_id', 'seq', name='uq_events_match_seq')
    )


def downgrade() -> None:
    op.drop_table('events')
    with op.batch_alter_table('seats', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_seats_player_id'))
        batch_op.drop_index(batch_op.f('ix_seats_match_id'))

    op.drop_table('seats')
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_status_next')
        batch_op.drop_index(batch_op.f('ix_outbox_message_id'))
        batch_op.drop_index(batch_op.f('ix_outbox_match_id'))

    op.drop_table('outbox')
    with op.batch_alter_table('ledger', schema=None) as batch_op:
        batch_op.drop_index('ix_ledger_season_to')
        batch_op.drop_index('ix_ledger_season_from')

    op.drop_table('ledger')
    with op.batch_alter_table('inbound', schema=None) as batch_op:
        batch_op.drop_index('ix_inbound_status_received')

    op.drop_table('inbound')
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_players_email'))

    op.drop_table('players')
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_matches_status'))
        batch_op.drop_index(batch_op.f('ix_matches_remind_at'))
        batch_op.drop_index(batch_op.f('ix_matches_deadline'))

    op.drop_table('matches')
    op.drop_table('seasons')
