"""Live season balances inside one unit of work (referee.store.balances)."""

from __future__ import annotations


def test_live_balances_follow_the_entries_a_batch_adds_before_it_flushes(sqlite_store):
    from datetime import datetime, timezone

    from referee.store.balances import Balances
    from referee.store.models import LedgerEntry, Season

    at = datetime(2026, 12, 1, tzinfo=timezone.utc)
    with sqlite_store.unit_of_work(autoflush=False) as session:
        season = Season(key="s", name="S", settings={}, created_at=at)
        session.add(season)
        session.flush()
        session.add(
            LedgerEntry(season_id=season.id, from_account="SEASON", to_account="a", amount=50, reason="g", at=at)
        )
        session.flush()
        live = Balances(session)
        live.preload([(season.id, "a"), (season.id, "b")])
        assert (live.get(season.id, "a"), live.get(season.id, "b")) == (50, 0)
        entry = LedgerEntry(season_id=season.id, from_account="a", to_account="b", amount=20, reason="t", at=at)
        session.add(entry)
        live.post(entry)
        assert (live.get(season.id, "a"), live.get(season.id, "b")) == (30, 20)
        entry = LedgerEntry(season_id=season.id, from_account="a", to_account="LGT", amount=5, reason="fee", at=at)
        session.add(entry)
        live.post(entry)
        assert live.get(season.id, "LGT") == 5  # not preloaded: read after flushing what the batch added
        assert live.get(season.id, "a") == 25
