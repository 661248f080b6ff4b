"""Live season balances inside one unit of work (referee.store.balances)."""

from __future__ import annotations


def test_live_balances_follow_the_entries_a_batch_adds_before_it_flushes(store):
    from datetime import datetime, timezone

    from referee.store.balances import Balances
    from referee.store.models import LedgerEntry, Season

    at = datetime(2026, 12, 1, tzinfo=timezone.utc)
    with store.unit_of_work(autoflush=False) as session:
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


def test_balances_of_many_accounts_count_what_came_in_less_what_went_out(store):
    """More accounts than one query's share (500), in one currency, others left out; on
    PostgreSQL the accounts go as one array (a prepared statement's generic plan of a long
    IN list compares every row of the season's ledger with each account)."""
    from datetime import datetime, timezone

    from referee.store.balances import balances_of
    from referee.store.models import LedgerEntry, Season

    at = datetime(2026, 12, 1, tzinfo=timezone.utc)
    players = [f"p{i:04}" for i in range(1200)]
    with store.unit_of_work() as session:
        season = Season(key="s", name="S", settings={}, created_at=at)
        session.add(season)
        session.flush()
        for i, player in enumerate(players):
            session.add(
                LedgerEntry(
                    season_id=season.id, from_account="SEASON", to_account=player, amount=100, reason="g", at=at
                )
            )
            if i % 3 == 0:  # some lose to the next, some hold garnets (another currency)
                session.add(
                    LedgerEntry(
                        season_id=season.id,
                        from_account=player,
                        to_account=players[i + 1],
                        amount=i % 50,
                        reason="t",
                        at=at,
                    )
                )
            if i % 7 == 0:
                session.add(
                    LedgerEntry(
                        season_id=season.id,
                        from_account="SEASON",
                        to_account=player,
                        amount=9,
                        currency="garnets",
                        reason="award",
                        at=at,
                    )
                )
        session.flush()
        for _ in range(7):  # past psycopg's prepare threshold: the prepared statement's plans too
            found = balances_of(session, season.id, [*players, "nobody"])
        garnets = balances_of(session, season.id, players[:20], "garnets")
    want = {p: 100 for p in players}
    for i in range(0, 1200, 3):
        want[players[i]] -= i % 50
        want[players[i + 1]] += i % 50
    assert found == {**want, "nobody": 0}
    assert garnets == {p: (9 if i % 7 == 0 else 0) for i, p in enumerate(players[:20])}
