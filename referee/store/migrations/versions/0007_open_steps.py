"""open steps: a match may have several steps open at once, each with its own deadline (a
game of concurrent steps, such as MatchJack's two tables); matches.open_steps lists them. The
step_key, step_kind, step_opened_at, deadline and remind_at columns stay: they are the open
step whose deadline comes first. A running match of before this revision gets its one open
step listed.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-06 09:00:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def _iso(value):
    if value is None:
        return None
    if isinstance(value, str):  # SQLite hands back text
        value = value.replace(' ', 'T')
        return value if value.endswith('Z') or '+' in value[10:] else value + '+00:00'
    return value.isoformat() + ('' if value.tzinfo else '+00:00')


def upgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.add_column(sa.Column('open_steps', sa.JSON(), nullable=True))
    bind = op.get_bind()
    matches = sa.Table('matches', sa.MetaData(), autoload_with=bind)
    running = bind.execute(
        sa.select(
            matches.c.id, matches.c.step_key, matches.c.step_kind, matches.c.step_opened_at,
            matches.c.deadline, matches.c.remind_at,
        ).where(matches.c.status == 'running', matches.c.step_key.is_not(None))
    ).all()
    for row in running:
        entry = {
            'key': row.step_key,
            'kind': row.step_kind,
            'opened_at': _iso(row.step_opened_at),
            'deadline': _iso(row.deadline),
            'remind_at': _iso(row.remind_at),
        }
        bind.execute(matches.update().where(matches.c.id == row.id).values(open_steps=[entry]))


def downgrade() -> None:
    bind = op.get_bind()
    matches = sa.Table('matches', sa.MetaData(), autoload_with=bind)
    many = bind.execute(sa.select(matches.c.key, matches.c.open_steps).where(matches.c.status == 'running')).all()
    crowded = [key for key, steps in many if steps and len(steps) > 1]
    if crowded:
        raise RuntimeError(
            f"cannot downgrade below 0007: matches with several open steps ({', '.join(sorted(crowded)[:5])}); "
            "the older schema holds one open step per match. Let them finish first"
        )
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_column('open_steps')
