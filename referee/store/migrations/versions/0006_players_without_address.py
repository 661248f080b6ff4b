"""players without an address: a player's email may be NULL (a player who is never mailed and
sits only at silent seats, such as Betting Minority's participants); the addresses that are set
stay unique per season (NULLs are distinct in a unique constraint on SQLite and PostgreSQL)

The downgrade refuses while a player has no address: the schema before this revision needs one
for every player, and a made-up placeholder would have the old referee mail it (mail that can
only fail, and bounces counted against nobody). Give each such player an address in the season
file and load it (`referee season load`), then downgrade.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05 09:00:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.alter_column('email', existing_type=sa.String(length=320), nullable=True)


def downgrade() -> None:
    bind = op.get_bind()
    players = sa.Table('players', sa.MetaData(), autoload_with=bind)
    keys = bind.execute(
        sa.select(players.c.key).where(players.c.email.is_(None)).order_by(players.c.key).limit(6)
    ).scalars().all()
    if keys:
        named = ', '.join(keys[:5]) + (' ...' if len(keys) > 5 else '')
        raise RuntimeError(
            f"cannot downgrade below 0006: players without an email address ({named}); the older "
            "schema needs an address for every player. Give them one in the season file, load it, "
            "and downgrade again"
        )
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.alter_column('email', existing_type=sa.String(length=320), nullable=False)
