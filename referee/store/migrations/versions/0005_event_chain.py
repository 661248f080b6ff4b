"""event hash chain and sealed-move commitments: every event carries the SHA-256 digest of
its canonical body and the hash that links it to the event before (the head is kept on the
match); matches keep the commitments to the sealed moves of their open step

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 09:00:00
"""
from alembic import op
import sqlalchemy as sa

from referee.archive.chain import GENESIS, stamp


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.add_column(sa.Column('digest', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('hash', sa.String(length=64), nullable=True))
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.add_column(sa.Column('last_event_hash', sa.String(length=64), nullable=False, server_default=GENESIS))
        batch_op.add_column(sa.Column('seals', sa.JSON(), nullable=True))
    _chain_existing_events()
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.alter_column('digest', existing_type=sa.String(length=64), nullable=False)
        batch_op.alter_column('hash', existing_type=sa.String(length=64), nullable=False)


def _chain_existing_events() -> None:
    """Chain the events written before this revision, match by match in seq order."""
    bind = op.get_bind()
    meta = sa.MetaData()
    matches = sa.Table('matches', meta, autoload_with=bind)
    events = sa.Table('events', meta, autoload_with=bind)
    # read through the models' column types, so instants come back as aware UTC
    from referee.store.models import Event
    typed = Event.__table__
    for match_id, key in bind.execute(sa.select(matches.c.id, matches.c.key)).all():
        head = GENESIS
        rows = bind.execute(
            sa.select(typed.c.id, typed.c.seq, typed.c.kind, typed.c.step_key, typed.c.player, typed.c.at,
                      typed.c.payload).where(typed.c.match_id == match_id).order_by(typed.c.seq)
        ).mappings().all()
        for row in rows:
            digest, head = stamp(head, key, row)
            bind.execute(events.update().where(events.c.id == row['id']).values(digest=digest, hash=head))
        bind.execute(matches.update().where(matches.c.id == match_id).values(last_event_hash=head))


def downgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_column('seals')
        batch_op.drop_column('last_event_hash')
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_column('hash')
        batch_op.drop_column('digest')
