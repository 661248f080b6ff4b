"""mail safety: bounded inbound identity, duplicates, quarantine, reply links, inbox problems

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 08:30:00
"""
from alembic import op
import sqlalchemy as sa
import referee.store.models


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

SYNTHETIC = "@referee.invalid"


def upgrade() -> None:
    with op.batch_alter_table('inbound', schema=None) as batch_op:
        batch_op.add_column(sa.Column('dedupe_key', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('duplicate_of', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('message_id', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('rule', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('attempts', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('sender', sa.String(length=320), nullable=True))
        batch_op.add_column(sa.Column('body_digest', sa.String(length=64), nullable=True))

    # Existing rows: the Message-ID they were stored under, and the content digest that now
    # identifies a mail (re-deliveries stored twice before this migration become duplicates).
    from referee.mail.identity import bounded, content_digest

    conn = op.get_bind()
    inbound = sa.table(
        'inbound', sa.column('id', sa.Integer), sa.column('message_key', sa.String), sa.column('raw', sa.LargeBinary),
        sa.column('dedupe_key', sa.String), sa.column('duplicate_of', sa.Integer),
        sa.column('message_id', sa.String), sa.column('status', sa.String), sa.column('note', sa.Text),
    )
    seen: dict[str, int] = {}
    rows = conn.execute(sa.select(inbound.c.id, inbound.c.message_key, inbound.c.raw, inbound.c.status)
                        .order_by(inbound.c.id)).all()
    for row_id, key, raw, status in rows:
        digest = content_digest(raw or b"")
        values = {"message_id": None if key.endswith(SYNTHETIC) else bounded(key, 255)}
        if digest in seen:
            values.update(duplicate_of=seen[digest])
        else:
            seen[digest] = row_id
            values.update(dedupe_key=digest)
        if status == "failed":
            values.update(status="quarantined")
        conn.execute(sa.update(inbound).where(inbound.c.id == row_id).values(**values))

    with op.batch_alter_table('inbound', schema=None) as batch_op:
        batch_op.drop_constraint('uq_inbound_message_key', type_='unique')
        batch_op.drop_column('message_key')
        batch_op.create_unique_constraint(batch_op.f('uq_inbound_dedupe_key'), ['dedupe_key'])
        batch_op.create_foreign_key(batch_op.f('fk_inbound_duplicate_of_inbound'), 'inbound', ['duplicate_of'], ['id'])
        batch_op.create_index(batch_op.f('ix_inbound_message_id'), ['message_id'], unique=False)
        batch_op.create_index('ix_inbound_sender_body', ['sender', 'body_digest'], unique=False)
        batch_op.alter_column('attempts', server_default=None)

    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('inbound_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_outbox_inbound_id_inbound'), 'inbound', ['inbound_id'], ['id'])
        batch_op.create_index(batch_op.f('ix_outbox_inbound_id'), ['inbound_id'], unique=False)
        batch_op.create_index('ix_outbox_to_created', ['to_addr', 'created_at'], unique=False)

    op.create_table('inbox_problems',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('source', sa.String(length=500), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('first_seen', referee.store.models.UTCDateTime(), nullable=False),
    sa.Column('last_seen', referee.store.models.UTCDateTime(), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_inbox_problems')),
    sa.UniqueConstraint('source', name=op.f('uq_inbox_problems_source'))
    )


def downgrade() -> None:
    op.drop_table('inbox_problems')
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_to_created')
        batch_op.drop_index(batch_op.f('ix_outbox_inbound_id'))
        batch_op.drop_constraint(batch_op.f('fk_outbox_inbound_id_inbound'), type_='foreignkey')
        batch_op.drop_column('inbound_id')
    with op.batch_alter_table('inbound', schema=None) as batch_op:
        batch_op.add_column(sa.Column('message_key', sa.String(length=998), nullable=True))
    conn = op.get_bind()
    conn.execute(sa.text("UPDATE inbound SET message_key = COALESCE(dedupe_key, 'dup-' || id)"))
    with op.batch_alter_table('inbound', schema=None) as batch_op:
        batch_op.alter_column('message_key', nullable=False)
        batch_op.create_unique_constraint('uq_inbound_message_key', ['message_key'])
        batch_op.drop_index('ix_inbound_sender_body')
        batch_op.drop_index(batch_op.f('ix_inbound_message_id'))
        batch_op.drop_constraint(batch_op.f('fk_inbound_duplicate_of_inbound'), type_='foreignkey')
        batch_op.drop_constraint(batch_op.f('uq_inbound_dedupe_key'), type_='unique')
        for column in ('body_digest', 'sender', 'attempts', 'rule', 'message_id', 'duplicate_of', 'dedupe_key'):
            batch_op.drop_column(column)
