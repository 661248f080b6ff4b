"""The matches' optimistic lock survives the batched UPDATE (referee.store.rows.write_versioned):
each changed match is written once, guarded by the version its session read; a row changed
by someone else since makes the whole batch fail as the ORM's own check would."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import event, select
from sqlalchemy.orm.exc import StaleDataError

from referee.store.models import Match, Season

AT = datetime(2026, 12, 1, tzinfo=timezone.utc)


def _season_with_matches(store, n: int) -> list[int]:
    with store.unit_of_work() as session:
        season = Season(key="s", name="S", settings={}, created_at=AT)
        session.add(season)
        session.flush()
        matches = [
            Match(season_id=season.id, key=f"m{i}", game="g", seed=i, options={}, timing={}, starts_at=AT)
            for i in range(n)
        ]
        session.add_all(matches)
        session.flush()
        return [m.id for m in matches]


def _updates(store) -> Counter:
    seen: Counter = Counter()

    @event.listens_for(store.engine, "before_cursor_execute")
    def _count(_conn, _cursor, statement, _params, _context, executemany):
        if statement.lstrip().upper().startswith("UPDATE MATCHES"):
            seen["statements"] += 1
            seen["rows"] += len(_params) if executemany else 1

    return seen


def test_changed_matches_go_out_in_one_statement_with_their_versions_bumped(store):
    ids = _season_with_matches(store, 5)
    updates = _updates(store)
    with store.unit_of_work(autoflush=False) as session:
        matches = session.scalars(select(Match).where(Match.id.in_(ids)).order_by(Match.id)).all()
        for i, match in enumerate(matches):
            match.state = {"round": i, "text": "Grüße"}
            match.step_key, match.deadline = f"r{i}", AT + timedelta(days=i)
        matches[0].status = "running"  # another set of columns: a statement of its own
    # one statement per set of changed columns, nothing left for the ORM to send row by row
    assert updates == Counter(statements=2, rows=5)
    with store.unit_of_work() as session:
        again = session.scalars(select(Match).where(Match.id.in_(ids)).order_by(Match.id)).all()
        assert [m.version for m in again] == [2] * 5  # 1 at the INSERT
        assert [m.state for m in again] == [{"round": i, "text": "Grüße"} for i in range(5)]
        assert [m.deadline for m in again] == [AT + timedelta(days=i) for i in range(5)]
        assert [m.status for m in again] == ["running"] + ["scheduled"] * 4


def test_a_match_changed_twice_in_one_transaction_keeps_its_lock(store):
    (mid,) = _season_with_matches(store, 1)
    with store.unit_of_work(autoflush=False) as session:
        match = session.get(Match, mid)
        match.step_key = "r1"
        session.flush()
        assert match.version == 2 and not session.dirty
        match.step_key = "r2"
    with store.unit_of_work() as session:
        match = session.get(Match, mid)
        assert (match.step_key, match.version) == ("r2", 3)


def test_a_match_changed_by_someone_else_since_it_was_read_fails_the_whole_batch(store):
    ids = _season_with_matches(store, 3)
    with pytest.raises(StaleDataError), store.unit_of_work(autoflush=False) as session:
        matches = session.scalars(select(Match).where(Match.id.in_(ids)).order_by(Match.id)).all()
        # behind the session's back (as another process's close would): the second match moves on
        table = Match.__table__
        session.execute(
            table.update().where(table.c.id == ids[1]).values(step_key="theirs", version=table.c.version + 1)
        )
        for match in matches:
            match.step_key = "ours"
    with store.unit_of_work() as session:
        found = session.scalars(select(Match).where(Match.id.in_(ids)).order_by(Match.id)).all()
        assert [(m.step_key, m.version) for m in found] == [(None, 1)] * 3  # nothing of the batch stayed
