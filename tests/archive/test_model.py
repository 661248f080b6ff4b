"""The archive's page model: standings, ledger histories with running balances, the schedule."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from sqlalchemy import select

from referee.archive import model
from referee.archive.model import SeasonData, SeasonLedger
from referee.store.models import LedgerEntry, Match, Player, Season, Seat

from .league import DAY, START, League, load, match_dict, season_dict

H = timedelta(hours=1)


def result(outcome: dict[str, str], vp: dict[str, float]) -> dict:
    return {"outcome": outcome, "victory_points": vp, "reason": "r", "scores": {}, "awards": {}, "signals": []}


@pytest.fixture
def season(store):
    """Four players, three finished matches with known results, one running, one
    scheduled; chips and a season currency moved by hand."""
    with store.unit_of_work() as session:
        s = Season(key="s1", name="Season one", settings={}, created_at=START - DAY)
        session.add(s)
        session.flush()
        players = {}
        for key, name in (("alice", "Alice"), ("bob", "Bob"), ("carol", "Carol"), ("dave", "Dave")):
            players[key] = Player(season_id=s.id, key=key, name=name, email=f"{key}@x.test", timezone="Europe/Berlin")
            session.add(players[key])
        session.flush()

        def match(key, seats, status, **extra):
            m = Match(
                season_id=s.id, key=key, game="stationary-roulette", seed=1, options={}, timing={}, status=status,
                starts_at=extra.pop("starts_at", START), **extra,
            )  # fmt: skip
            session.add(m)
            session.flush()
            for pos, p in enumerate(seats):
                session.add(Seat(match_id=m.id, player_id=players[p].id, position=pos))
            return m

        m1 = match("m1", ["alice", "bob"], "finished", finished_at=START + DAY,
                   result=result({"alice": "win", "bob": "loss"}, {"alice": 1.0, "bob": 0.0}))  # fmt: skip
        m2 = match("m2", ["alice", "carol"], "finished", finished_at=START + 2 * DAY,
                   result=result({"alice": "draw", "carol": "draw"}, {"alice": 0.5, "carol": 0.5}))  # fmt: skip
        match("m3", ["bob", "carol"], "finished", finished_at=START + 3 * DAY,
              result=result({"bob": "win", "carol": "loss"}, {"bob": 1.0, "carol": 0.0}))  # fmt: skip
        match("m4", ["dave", "bob"], "scheduled", starts_at=START + 9 * DAY)
        match("m0", ["dave", "carol"], "scheduled", starts_at=START + 9 * DAY)

        def move(m, seq, frm, to, amount, at, currency="chips", reason="r"):
            session.add(
                LedgerEntry(
                    season_id=s.id,
                    match_id=m.id if m else None,
                    seq=seq,
                    from_account=frm,
                    to_account=to,
                    amount=amount,
                    reason=reason,
                    step_key=None,
                    at=at,
                    currency=currency,
                )
            )
            session.flush()

        for p in players:
            move(None, None, "SEASON", p, 200, START - DAY, reason="starting chips")
        move(m1, 0, "alice", "LGT", 5, START + H)  # m1 and m2 overlap: alice's chips are one balance
        move(m2, 0, "carol", "alice", 20, START + 2 * H)
        move(m1, 1, "alice", "bob", 10, START + 3 * H)
        move(m2, 1, "alice", "pot", 3, START + 4 * H, currency="stack")  # a match's own chips
        move(m2, 2, "pot", "alice", 7, START + 5 * H, currency="stack")
        move(m2, 3, "SEASON", "carol", 2, START + 2 * DAY, currency="CoL", reason="award")
        ids = {"m1": m1.id, "m2": m2.id}
    return ids


def header(session) -> model.SeasonHeader:
    [h] = model.season_headers(session)
    return h


def test_standings_sum_victory_points_outcomes_and_balances(store, season):
    with store.unit_of_work() as session:
        data = SeasonData.load(session, header(session))
    table = [(s.rank, s.player.key, s.played, s.wins, s.draws, s.losses, s.victory_points) for s in data.standings]
    assert table == [
        (1, "alice", 2, 1, 1, 0, 1.5),
        (2, "bob", 2, 1, 0, 1, 1.0),
        (3, "carol", 2, 0, 1, 1, 0.5),
        (4, "dave", 0, 0, 0, 0, 0.0),
    ]
    chips = {s.player.key: s.chips for s in data.standings}
    assert chips == {"alice": 205, "bob": 210, "carol": 180, "dave": 200}  # the stack moves are not chips
    assert data.currencies == ["CoL"]
    assert {s.player.key: s.awards for s in data.standings}["carol"] == {"CoL": 2}
    # the chart: cumulative victory points of the leaders after each finished match, in order
    chart = data.points_chart()
    assert chart["Alice"] == [("1 (2 Dec)", 1.0), ("2 (3 Dec)", 1.5), ("3 (4 Dec)", 1.5)]
    assert chart["Bob"] == [("1 (2 Dec)", 0.0), ("2 (3 Dec)", 0.0), ("3 (4 Dec)", 1.0)]


def test_ledger_history_runs_the_season_balance_across_overlapping_matches(store, season):
    with store.unit_of_work() as session:
        h = header(session)
        pages = {p.key: p for p in model.match_pages(session, h, list(season.values()), SeasonLedger(h.id))}
    m1 = {(x.player.key, x.currency): x for x in pages["m1"].ledger}
    assert [(line.amount, line.balance, line.counterparty) for line in m1[("alice", "chips")].lines] == [
        (-5, 195, "LGT"),
        (-10, 205, "bob"),  # carol's 20 in m2 came in between
    ]
    assert [(line.amount, line.balance) for line in m1[("bob", "chips")].lines] == [(10, 210)]
    m2 = {(x.player.key, x.currency): x for x in pages["m2"].ledger}
    assert [(line.amount, line.balance) for line in m2[("alice", "chips")].lines] == [(20, 215)]
    stack = m2[("alice", "stack")]
    assert not stack.in_season and [(line.amount, line.balance) for line in stack.lines] == [(-3, -3), (7, 4)]
    assert [(line.amount, line.balance) for line in m2[("carol", "CoL")].lines] == [(2, 2)]
    assert [x.currency for x in pages["m2"].ledger if x.player.key == "alice"] == ["chips", "stack"]


@pytest.mark.parametrize("whole", [False, True])
def test_the_whole_season_ledger_gives_the_same_balances(store, season, whole):
    with store.unit_of_work() as session:
        h = header(session)
        pages = model.match_pages(session, h, list(season.values()), SeasonLedger(h.id, whole=whole))
        balances = [(x.player.key, x.currency, [line.balance for line in x.lines]) for p in pages for x in p.ledger]
    assert ("alice", "chips", [195, 205]) in balances and ("alice", "chips", [215]) in balances


def test_the_schedule_rows_name_the_open_step_and_its_deadline(store):
    load(
        store,
        season_dict(
            [
                match_dict("late", "stationary-roulette", ["alice", "bob"], start=START + DAY),
                match_dict("run", "indian-poker", ["alice", "carol"], seed=3),
                match_dict("done", "rewind-holdem", ["bob", "dave"], seed=4),
            ]
        ),
    )
    league = League(store)
    league.play("run", random.Random(1), events=3)
    league.play("done", random.Random(2))
    with store.unit_of_work() as session:
        stamps = sorted(model.stamps(session), key=model.schedule_order)
        rows = model.match_rows(session, [s.id for s in stamps])
        running = session.scalar(select(Match).where(Match.key == "run"))
        deadline, step_key = running.deadline, running.step_key
    assert [s.key for s in stamps] == ["done", "run", "late"]  # by start, then key
    by_key = {r.key: r for r in rows.values()}
    assert by_key["late"].status == "scheduled" and by_key["late"].step is None
    assert by_key["run"].step.key == step_key and by_key["run"].step.deadline == deadline
    assert by_key["run"].step.title.startswith("Hand ")
    assert by_key["run"].game_title == "Indian Poker"
    assert [p.name for p in by_key["run"].players] == ["Alice", "<script>alert(1)</script>"]
    done_row = by_key["done"]
    assert done_row.status == "finished" and done_row.step is None
    assert sorted(done_row.victory_points.values()) in ([0.0, 1.0], [0.5, 0.5])
    assert set(done_row.outcome) == {"bob", "dave"}
