"""One season balance per player, whatever the matches: every settlement is judged against the
player's live ledger balance, so no account but SEASON is ever negative (RULINGS.md, Stationary
Roulette: "every settlement is judged against the player's live season balance")."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from referee.games import GAMES
from referee.mail.maildir import deliver_to_maildir
from referee.mail.tokens import make_token, reply_address
from referee.service import replay
from referee.store.models import Event, LedgerEntry, Match

from .harness import START, World

GAME = GAMES["stationary-roulette"]
PLAYERS = ("alice", "bob", "carol")
PAIRS = (("alice", "bob"), ("bob", "carol"), ("alice", "carol"))
HOUR = timedelta(hours=1)
BLACK = "ROULETTE\nWinning colour: Black\nGold: 30\nSilver: 10\nBlack: 0"
GOLD = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0"
BET = "BET\nGold: 40"  # nothing on Black: a Black roulette takes all 40 chips


def season(offsets: list[int], chips: int) -> dict:
    return {
        "season": {"id": "s", "name": "Overlaps", "starting_chips": chips},
        "players": [{"id": p, "name": p.title(), "email": f"{p}@example.test", "timezone": "UTC"} for p in PLAYERS],
        "matches": [
            {
                "id": f"m{i}",
                "game": "stationary-roulette",
                "players": list(pair),
                "start": (START + offset * HOUR).isoformat(),
                "seed": i,
                "phase_length": "1h",
                "reminders": [],
            }
            for i, (pair, offset) in enumerate(zip(PAIRS, offsets, strict=True))
        ],
    }


def balances(world: World) -> dict[str, int]:
    totals: dict[str, int] = defaultdict(int)
    with world.store.unit_of_work() as session:
        for entry in session.scalars(select(LedgerEntry)):
            totals[entry.from_account] -= entry.amount
            totals[entry.to_account] += entry.amount
    return dict(totals)


def mail(world: World, seat, text: str, at) -> None:
    token = make_token(world.config.secret, seat.id, seat.match.key, seat.player.key)
    to = reply_address("referee", "example.test", token)
    data = (
        f"From: {seat.player.email}\r\nTo: {to}\r\nSubject: move\r\n"
        f"Message-ID: <{seat.match.key}.{seat.player.key}.{at.timestamp()}@example.test>\r\n\r\n{text}\r\n"
    ).encode()
    deliver_to_maildir(world.config.mail.inbox, data, delivered_at=at)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    offsets=st.lists(st.integers(0, 6), min_size=3, max_size=3),
    chips=st.integers(0, 120),
    plays=st.lists(st.integers(0, 3), min_size=80, max_size=80),
)
def test_overlapping_matches_never_drive_a_balance_below_zero(tmp_path_factory, offsets, chips, plays):
    tmp = tmp_path_factory.mktemp("overlap")
    world = World(tmp, f"sqlite:///{tmp / 'r.db'}", season(offsets, chips))
    choices = iter(plays * 4)
    try:
        t = START
        end = START + (max(offsets) + 12) * HOUR
        while t <= end:
            world.tick(t)
            with world.store.unit_of_work() as session:
                running = session.scalars(select(Match).where(Match.status == "running")).all()
                for match in running:
                    if match.step_opened_at != t:
                        continue
                    for seat in match.seats:
                        choice = next(choices)
                        if choice == 0:
                            continue  # inactive: fees, and 60 points to the opponent
                        text = (BLACK if choice < 3 else GOLD) + "\n\n" + (BET if match.state["round"] else "")
                        mail(world, seat, text, t + timedelta(minutes=10))
            world.tick(t + timedelta(minutes=10))
            held = balances(world)
            assert all(v >= 0 for k, v in held.items() if k != "SEASON"), held
            assert sum(held.values()) == 0
            t += HOUR
        with world.store.unit_of_work() as session:
            matches = session.scalars(select(Match)).all()
            assert all(m.status == "finished" for m in matches)
            for match in matches:
                events = session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)).all()
                assert replay(GAME, match, events) == match.state  # balances recorded in the log
    finally:
        world.store.dispose()


def test_a_settlement_uses_what_the_player_holds_now_not_what_the_match_started_with(tmp_path):
    """alice brings 8 chips into two matches that start together and misses both preparations:
    5 chips owed in each. The first close takes 5; the second finds 3 (not the 8 the match
    started with), takes them and she is bankrupt there, at 0 and never at -2."""
    spec = season([0, 5, 0], 8)
    world = World(tmp_path, f"sqlite:///{tmp_path / 'r.db'}", spec)
    try:
        world.tick(START)
        world.tick(START + HOUR)  # m0 (alice-bob) and m2 (alice-carol) close round 0: alice misses both
        held = balances(world)
        assert held["alice"] == 0
        assert held["LGT"] == 18  # alice 5 + 3, bob 5, carol 5
        assert all(v >= 0 for k, v in held.items() if k != "SEASON")
        with world.store.unit_of_work() as session:
            m2 = session.scalar(select(Match).where(Match.key == "m2"))
            assert m2.status == "finished" and m2.result["outcome"]["alice"] == "loss"
    finally:
        world.store.dispose()
