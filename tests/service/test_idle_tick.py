"""A tick with nothing due (the service wakes every minute, most often for nothing) reads a
few things and writes nothing: no judging, no outbox claim, no inbox clean-up, on both
databases; the tick after it, with a mail, does all of it as before."""

from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy import event

from referee.service import TickReport

from .harness import START, World

WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)
IDLE_QUERIES = 8  # an idle tick's reads, at most: the due times (3), the reminders, the inbox problems,
# the outbox; on PostgreSQL the decide lease's lock and unlock too


def test_a_tick_with_nothing_due_writes_nothing_and_reads_little(tmp_path, db_url):
    world = World(tmp_path, db_url)
    world.tick(START)  # the match starts: both players get their first mail
    statements: list[str] = []

    @event.listens_for(world.store.engine, "before_cursor_execute")
    def _seen(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    for minute in (0, 1):
        assert world.tick(START + timedelta(hours=1, minutes=minute)).summary() == TickReport().summary()
    queries = [
        s
        for s in statements
        if not s.strip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE"))
    ]
    assert not [s for s in queries if WRITE.match(s)], "an idle tick wrote to the database"
    assert len(queries) <= 2 * IDLE_QUERIES, queries  # two idle ticks

    statements.clear()
    world.send("alice", "ROULETTE\nWinning: Gold\nGold: 40\nSilver: 40\nBlack: 20\n", START + timedelta(hours=2))
    busy = world.tick(START + timedelta(hours=2, minutes=1))
    assert busy.ingested == 1 and busy.sent >= 1  # the mail judged and answered
    assert any(WRITE.match(s) for s in statements)
