"""Stationary Roulette: one test (or parametrized case) per rule and ruling.

The helpers at the top are shared with the property and template tests.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from referee.games.base import GameError, Move, ParseError, State, rng
from referee.games.stationary_roulette import (
    CHIP_CAP,
    GAME,
    RouletteScore,
    lead_chips,
    score_roulette,
    single_colour,
    uses_left,
    uses_left_after_each,
)

G = GAME
A, B = "alice", "bob"


def roulette(winning: str = "Gold", gold: int = 30, silver: int = 10, black: int = 0) -> Move:
    return {"type": "roulette", "winning": winning, "points": {"Gold": gold, "Silver": silver, "Black": black}}


def bet(gold: int = 0, silver: int = 0, black: int = 0) -> Move:
    return {"type": "bet", "bets": {"Gold": gold, "Silver": silver, "Black": black}}


SPLIT = bet(gold=20, silver=20)


def start(chips: dict[str, int] | None = None) -> State:
    return G.initial_state(7, [A, B], {} if chips is None else {"chips": chips})


def submit(state: State, player: str, move: Move) -> State:
    applied = G.apply_move(state, player, move)
    assert applied.accepted, applied.reason
    return applied.state


def play(
    rounds: list[dict[str, list[Move]]],
    chips: dict[str, int] | None = None,
    live: dict[int, dict[str, int]] | None = None,
) -> State:
    """Play one dict per round ({player: moves}), closing each round at its deadline;
    ``live[r]`` are the players' season balances right before round r's settlement
    (the service's ``with_balances``; without it the match's own chips count)."""
    state = start(chips)
    for round_no, moves in enumerate(rounds):
        for player, player_moves in moves.items():
            for move in player_moves:
                state = submit(state, player, move)
        if live and round_no in live:
            state = G.with_balances(state, live[round_no])
        state = G.apply_timeout(state)
    return state


def rejected(state: State, player: str, move: Move) -> str:
    applied = G.apply_move(state, player, move)
    assert not applied.accepted
    assert applied.changed is False
    assert applied.state == state
    assert applied.reason
    return applied.reason


def outcome(state: State) -> dict[str, str]:
    result = G.result(state)
    assert result is not None, "the match should be over"
    return result.outcome


def settled(state: State, round_no: int) -> dict[str, Any]:
    """The settlement record of a round, in full (the state keeps only the last one so:
    the archive view rebuilds the others), without the archive's colour-use counts."""
    entry: dict[str, Any] = G.view(state, None)["history"][round_no]
    assert entry["round"] == round_no
    return {k: v for k, v in entry.items() if k != "uses_left"}


def roulette_record(state: State, round_no: int, preparer: str) -> dict[str, Any]:
    record: dict[str, Any] = next(r for r in settled(state, round_no)["roulettes"] if r["preparer"] == preparer)
    return record


def moved(state: State, round_no: int) -> list[tuple[str, str, int, str]]:
    return [
        (t["from"], t["to"], t["amount"], t["reason"]) for t in state["transfers"] if t["step"] == f"round-{round_no}"
    ]


def round_one(
    a_roulette: Move, b_roulette: Move, a_bet: Move | None, b_bet: Move | None, chips: dict[str, int] | None = None
) -> State:
    """Round 0: both prepare; round 1: both bet (None: no bet) and prepare a Gold roulette."""
    a_moves = [roulette()] + ([a_bet] if a_bet else [])
    b_moves = [roulette()] + ([b_bet] if b_bet else [])
    return play([{A: [a_roulette], B: [b_roulette]}, {A: a_moves, B: b_moves}], chips)


def schedule_colour(round_no: int) -> str:
    return "Gold" if round_no < 5 else "Silver"


def full_match(
    overrides: dict[tuple[int, str, str], Move | None] | None = None,
    chips: dict[str, int] | None = None,
    live: dict[int, dict[str, int]] | None = None,
) -> State:
    """A symmetric 11-round match: both prepare Gold in rounds 0-4 and Silver in 5-9
    (30/10/0) and bet 20 Gold / 20 Silver; overrides[(round, player, kind)] replaces
    a submission (None: not sent)."""
    overrides = overrides or {}
    rounds = []
    for r in range(11):
        moves: dict[str, list[Move]] = {}
        for p in (A, B):
            default = {
                "roulette": roulette(schedule_colour(r)) if r <= 9 else None,
                "bet": SPLIT if r >= 1 else None,
            }
            moves[p] = [
                m for kind in ("roulette", "bet") if (m := overrides.get((r, p, kind), default[kind])) is not None
            ]
        rounds.append(moves)
    return play(rounds, chips, live)


def assert_conserved(state: State) -> None:
    lgt = sum(t["amount"] for t in state["transfers"] if t["to"] == "LGT")
    assert sum(state["chips"].values()) + lgt == sum(state["initial_chips"].values())
    for p in state["players"]:
        delta = sum(t["amount"] for t in state["transfers"] if t["to"] == p) - sum(
            t["amount"] for t in state["transfers"] if t["from"] == p
        )
        assert state["chips"][p] == state["initial_chips"][p] + delta
        assert state["chips"][p] >= 0


# --------------------------------------------------------------------------- setup and steps


def test_initial_state_defaults_to_100_chips_and_empty_transfers() -> None:
    state = start()
    assert state["chips"] == {A: 100, B: 100}
    assert state["transfers"] == []
    assert json.loads(json.dumps(state)) == state


def test_initial_state_takes_chips_from_options() -> None:
    assert start({A: 7, B: 250})["chips"] == {A: 7, B: 250}


def test_initial_state_needs_two_different_players() -> None:
    with pytest.raises(GameError):
        G.initial_state(1, [A, A], {})


def test_game_metadata() -> None:
    assert (G.name, G.title, G.min_players, G.max_players) == ("stationary-roulette", "Stationary Roulette", 2, 2)
    assert G.step_kinds == {"round": 24.0}


@pytest.mark.parametrize(
    ("rounds", "key", "title"),
    [(0, "round-0", "Preparation phase"), (3, "round-3", "Round 3 of 10"), (10, "round-10", "Round 10 of 10")],
    ids=["preparation-phase", "round-3", "round-10"],
)
def test_step_keys_and_titles(rounds: int, key: str, title: str) -> None:
    state = start()
    for _ in range(rounds):
        state = G.apply_timeout(state)
    step = G.step(state)
    assert step is not None
    assert (step.key, step.kind, step.players, step.simultaneous, step.title) == (key, "round", (A, B), True, title)


def test_step_is_none_and_timeout_refused_when_over() -> None:
    state = full_match()
    assert G.step(state) is None
    with pytest.raises(GameError):
        G.apply_timeout(state)


def test_awaiting_preparation_phase_needs_roulettes_only() -> None:
    state = start()
    assert G.awaiting(state) == (A, B)
    assert G.awaiting(submit(state, A, roulette())) == (B,)


def test_awaiting_needs_roulette_and_bet_when_both_are_due() -> None:
    state = play([{A: [roulette()], B: [roulette()]}])
    state = submit(state, A, roulette())
    assert G.awaiting(state) == (A, B)
    assert G.awaiting(submit(state, A, SPLIT)) == (B,)


def round_10(a_prepares_until: int, b_prepares_until: int) -> State:
    """Play to round 10 with no bets; each player prepares in rounds 0..n only."""
    state = start()
    for r in range(10):
        for p, last in ((A, a_prepares_until), (B, b_prepares_until)):
            if r <= last:
                state = submit(state, p, roulette(schedule_colour(r)))
        state = G.apply_timeout(state)
    return state


def test_awaiting_round_10_asks_only_for_bets_that_can_be_made() -> None:
    assert G.awaiting(round_10(9, 9)) == (A, B)
    assert G.awaiting(round_10(8, 9)) == (A,)  # alice prepared nothing in round 9: bob has nothing to bet on
    assert G.awaiting(round_10(8, 8)) == ()


# --------------------------------------------------------------------------- roulette validation


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        (roulette(gold=20, silver=20), "Gold must have at least 25 points; you placed 20."),
        (roulette(gold=36, silver=4), "Silver must have at least 5 points; you placed 4."),
        (roulette(gold=30, silver=5, black=5), "Black cannot have any points; you placed 5."),
        (roulette(gold=30, silver=5), "The points must add up to exactly 40; yours add up to 35."),
        (roulette(gold=31, silver=10), "The points must add up to exactly 40; yours add up to 41."),
        (roulette(winning="Purple"), "The winning colour must be Gold, Silver or Black; you gave 'Purple'."),
        (
            {"type": "roulette", "winning": "Gold", "points": {"Gold": 40}},
            "Silver must have at least 5 points; you placed 0.",
        ),
        ({"type": "roulette", "winning": "Gold", "points": {"Gold": 30.5, "Silver": 9.5, "Black": 0}}, "whole number"),
        ({"type": "roulette", "winning": "Gold", "points": {"Gold": 30, "Pink": 10, "Black": 0}}, "'Pink' is not"),
    ],
    ids=[
        "gold-below-25",
        "silver-below-5",
        "black-has-points",
        "sum-below-40",
        "sum-above-40",
        "unknown-winning-colour",
        "omitted-colour-is-0",
        "not-whole-numbers",
        "unknown-colour-key",
    ],
)
def test_roulette_rejected(move: Move, reason: str) -> None:
    assert reason in rejected(start(), A, move)


def test_roulette_rejection_lists_every_problem() -> None:
    reason = rejected(start(), A, roulette(gold=20, silver=3, black=2))
    assert "Gold must" in reason and "Silver must" in reason and "Black cannot" in reason and "add up" in reason


@pytest.mark.parametrize(
    "move",
    [
        roulette(gold=25, silver=15),
        roulette(gold=35, silver=5),
        roulette("Silver"),
        roulette("Black"),
        {"type": "roulette", "winning": "Gold", "points": {"Gold": 30, "Silver": 10}},
    ],
    ids=["gold-exactly-25", "silver-exactly-5", "silver-wins", "black-wins-with-0-on-black", "omitted-black-is-0"],
)
def test_roulette_accepted(move: Move) -> None:
    state = submit(start(), A, move)
    points = {"Black": 0, **move["points"]}
    assert state["pending"][A]["roulette"] == {"winning": move["winning"], "points": points}


def test_colour_use_limit_five_times_as_winning_colour() -> None:
    state = play([{A: [roulette("Gold")], B: [roulette("Silver")]}] * 5)
    assert "already made Gold the winning colour 5 times" in rejected(state, A, roulette("Gold"))
    submit(state, A, roulette("Silver"))


def test_colour_limit_counts_earlier_roulettes_not_the_pending_one_it_replaces() -> None:
    state = play([{A: [roulette("Gold")]}] * 4)
    state = submit(state, A, roulette("Gold"))  # the fifth Gold, pending
    state = submit(state, A, roulette("Gold", gold=35, silver=5))  # a revision, still the fifth
    assert state["pending"][A]["roulette"]["points"]["Gold"] == 35


def test_missed_preparation_does_not_use_a_colour() -> None:
    state = play([{A: [roulette("Gold")]}, {}, {}, {A: [roulette("Gold")]}])
    assert G.view(state, A)["standings"][A]["uses_left"] == {"Gold": 3, "Silver": 5, "Black": 5}


def test_preparing_in_round_10_is_rejected() -> None:
    state = start()
    for _ in range(10):
        state = G.apply_timeout(state)
    assert "no roulette to prepare" in rejected(state, A, roulette())


# --------------------------------------------------------------------------- bet validation


def bet_round_state() -> State:
    return play([{A: [roulette()], B: [roulette()]}])


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        (bet(gold=10, silver=10, black=10), "You may bet on at most 2 colours; you bet on Gold, Silver and Black."),
        (bet(gold=30, silver=20), "You have 40 points to bet; your bets add up to 50."),
        (bet(gold=-5, silver=20), "A bet cannot be negative; you bet -5 on Gold."),
        ({"type": "bet", "bets": {"Gold": "ten"}}, "whole number"),
        ({"type": "bet", "bets": {"Purple": 5}}, "'Purple' is not a colour"),
    ],
    ids=["three-colours", "total-above-40", "negative", "not-a-number", "unknown-colour"],
)
def test_bet_rejected(move: Move, reason: str) -> None:
    assert reason in rejected(bet_round_state(), A, move)


@pytest.mark.parametrize(
    ("move", "unbet"),
    [
        (bet(gold=20, silver=20), 0),
        (bet(gold=20, black=20), 0),
        (bet(gold=40), 0),
        (bet(gold=10, silver=5), 25),
        (bet(), 40),
        ({"type": "bet", "bets": {"Silver": 12}}, 28),
    ],
    ids=[
        "two-colours",
        "zero-colour-does-not-count",
        "all-on-one",
        "total-under-40-is-legal",
        "zero-on-every-colour",
        "omitted-colours-are-zero",
    ],
)
def test_bet_accepted_and_unbet_points_shown(move: Move, unbet: int) -> None:
    state = submit(bet_round_state(), A, move)
    assert G.view(state, A)["pending"]["unbet"] == unbet


def test_betting_in_preparation_phase_is_rejected() -> None:
    assert "preparation phase" in rejected(start(), A, SPLIT)


def test_betting_when_opponent_missed_preparation_is_rejected() -> None:
    state = play([{A: [roulette()]}])
    assert rejected(state, A, SPLIT) == (
        "There is nothing to bet on this round: your opponent prepared no roulette in the preparation phase."
    )
    submit(state, B, SPLIT)


def test_move_by_player_not_in_match_is_rejected() -> None:
    assert rejected(start(), "mallory", roulette()) == "mallory is not playing in this match."


def test_move_after_match_over_is_rejected() -> None:
    assert "match is over" in rejected(full_match(), A, SPLIT)


def test_unknown_move_type_is_rejected() -> None:
    assert rejected(start(), A, {"type": "fold"}) == "A submission is either a ROULETTE or a BET."


# --------------------------------------------------------------------------- revisions


def test_later_roulette_replaces_earlier() -> None:
    state = submit(submit(start(), A, roulette("Gold")), A, roulette("Black"))
    assert state["pending"][A]["roulette"]["winning"] == "Black"


def test_later_bet_replaces_earlier() -> None:
    state = submit(submit(bet_round_state(), A, bet(gold=40)), A, bet(silver=15))
    assert state["pending"][A]["bet"] == {"Gold": 0, "Silver": 15, "Black": 0}


def test_invalid_revision_keeps_the_earlier_submission() -> None:
    state = submit(start(), A, roulette("Silver"))
    rejected(state, A, roulette(gold=10))
    assert state["pending"][A]["roulette"]["winning"] == "Silver"


def test_apply_move_never_mutates_its_input() -> None:
    state = start()
    frozen = json.dumps(state, sort_keys=True)
    G.apply_move(state, A, roulette())
    G.apply_timeout(state)
    assert json.dumps(state, sort_keys=True) == frozen


# --------------------------------------------------------------------------- scoring


@pytest.mark.parametrize(
    ("winning", "bet_move", "expected"),
    [
        ("Gold", bet(gold=20, silver=20), RouletteScore(30, 20, None, 0)),
        ("Silver", bet(gold=25, silver=15), RouletteScore(10, 15, None, 0)),
        ("Gold", bet(gold=40), RouletteScore(30, 40, "bettor", 0)),
        ("Gold", bet(silver=40), RouletteScore(30, 0, "preparer", 0)),
        ("Gold", {"type": "bet", "bets": {"Gold": 40, "Silver": 0, "Black": 0}}, RouletteScore(30, 40, "bettor", 0)),
        ("Gold", bet(gold=39), RouletteScore(30, 39, None, 0)),
        ("Black", bet(gold=20, black=20), RouletteScore(0, 0, None, 20)),
        ("Black", bet(black=40), RouletteScore(0, 0, "bettor", 0)),
        ("Black", bet(gold=40), RouletteScore(0, 0, "preparer", 40)),
        ("Black", bet(), RouletteScore(0, 0, None, 40)),
    ],
    ids=[
        "gold-both-earn-on-winning-colour",
        "silver-both-earn-on-winning-colour",
        "bonus-right-colour-to-bettor",
        "bonus-wrong-colour-to-preparer",
        "40-and-0-counts-as-single-colour",
        "39-on-one-colour-no-bonus",
        "black-take-40-minus-bet-on-black",
        "black-bonus-right-when-w-black",
        "black-bonus-wrong-when-w-black",
        "black-no-bet-takes-40",
    ],
)
def test_score_roulette(winning: str, bet_move: Move, expected: RouletteScore) -> None:
    assert score_roulette(roulette(winning), bet_move["bets"]) == expected


def test_single_colour_is_none_for_a_split_bet() -> None:
    assert single_colour({"Gold": 20, "Silver": 20, "Black": 0}) is None
    assert single_colour({"Gold": 0, "Silver": 40, "Black": 0}) == "Silver"


def test_both_players_earn_points_on_both_roulettes() -> None:
    state = round_one(
        roulette("Gold"), roulette("Silver", gold=25, silver=15), bet(gold=20, silver=20), bet(gold=10, silver=30)
    )
    assert roulette_record(state, 1, A)["earned"] == {A: 30, B: 10}
    assert roulette_record(state, 1, B)["earned"] == {B: 15, A: 20}
    assert state["points"] == {A: 50, B: 25}


def test_single_colour_bonus_right_adds_20_to_bettor() -> None:
    state = round_one(roulette("Gold"), roulette("Gold"), SPLIT, bet(gold=40))
    record = roulette_record(state, 1, A)
    assert record["bonus"] == {"to": B, "points": 20}
    assert record["earned"] == {A: 30, B: 60}


def test_single_colour_bonus_wrong_adds_20_to_preparer() -> None:
    state = round_one(roulette("Gold"), roulette("Gold"), SPLIT, bet(silver=40))
    assert roulette_record(state, 1, A)["earned"] == {A: 50, B: 0}


def test_single_colour_bonus_also_when_winning_colour_is_black() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, bet(black=40))
    record = roulette_record(state, 1, A)
    assert record["earned"] == {A: 0, B: 20}
    assert record["take"] == 0


# --------------------------------------------------------------------------- Black takes and the LGT


def test_black_take_then_lgt_payment() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, bet(gold=20, black=10))
    assert moved(state, 1) == [(B, A, 30, "Black take"), (A, "LGT", 10, "LGT payment for a Black roulette")]
    assert state["chips"] == {A: 120, B: 70}
    assert state["black_taken"] == {A: 30, B: 0}
    assert state["black_lost"] == {A: 0, B: 30}
    assert roulette_record(state, 1, A)["earned"] == {A: 0, B: 0}


def test_both_black_only_the_net_moves_and_both_pay_lgt() -> None:
    state = round_one(roulette("Black"), roulette("Black"), bet(gold=10, black=30), bet(gold=40))
    assert moved(state, 1) == [
        (B, A, 30, "Black take"),
        (A, "LGT", 10, "LGT payment for a Black roulette"),
        (B, "LGT", 10, "LGT payment for a Black roulette"),
    ]
    assert state["black_lost"] == {A: 0, B: 30}  # the net counts toward the cap
    assert state["black_taken"] == {A: 40, B: 10}  # gross takes (tiebreak)
    assert settled(state, 1)["black"] == {
        "takes": {A: 40, B: 10},
        "net": 30,
        "from": B,
        "to": A,
        "cut_by_cap": 0,
        "paid": 30,
    }


def test_both_black_equal_takes_move_nothing() -> None:
    state = round_one(roulette("Black"), roulette("Black"), bet(gold=20, black=20), bet(gold=20, black=20))
    assert moved(state, 1) == [
        (A, "LGT", 10, "LGT payment for a Black roulette"),
        (B, "LGT", 10, "LGT payment for a Black roulette"),
    ]
    assert state["black_lost"] == {A: 0, B: 0}
    assert state["black_taken"] == {A: 20, B: 20}


def test_black_roulette_with_zero_take_still_pays_lgt() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, bet(black=40))
    assert moved(state, 1) == [(A, "LGT", 10, "LGT payment for a Black roulette")]


# --------------------------------------------------------------------------- the 100-chip cap


def black_siege(
    b_black_bets: list[int],
    chips: dict[str, int] | None = None,
    b_last: list[Move] | None = None,
    live: dict[int, dict[str, int]] | None = None,
) -> State:
    """Alice prepares Black every round; Bob prepares Gold and bets the given amounts on Black."""
    rounds: list[dict[str, list[Move]]] = [{A: [roulette("Black")], B: [roulette("Gold")]}]
    for i, on_black in enumerate(b_black_bets):
        b_moves = [
            roulette("Gold" if i < 3 else "Silver"),
            bet(gold=40 - on_black, black=on_black) if on_black else SPLIT,
        ]
        rounds.append({A: [roulette("Black"), SPLIT], B: b_moves})
    if b_last is not None:
        rounds[-1][B] = b_last
    return play(rounds, {A: 100, B: 300} if chips is None else chips, live)


def test_cap_cuts_the_payment_that_reaches_100_and_ends_the_match() -> None:
    state = black_siege([0, 0, 0])
    assert moved(state, 3)[0] == (B, A, 20, "Black take")
    assert settled(state, 3)["black"]["cut_by_cap"] == 20
    assert state["black_lost"][B] == CHIP_CAP
    result = G.result(state)
    assert result is not None
    assert result.outcome == {A: "win", B: "loss"}
    assert result.victory_points == {A: 1.0, B: 0.0}
    assert "lost 100 chips to Black takes" in result.reason
    assert G.step(state) is None


def test_cap_reached_exactly_ends_the_match() -> None:
    state = black_siege([0, 0, 20])
    assert moved(state, 3)[0] == (B, A, 20, "Black take")
    assert settled(state, 3)["black"]["cut_by_cap"] == 0
    assert outcome(state)[B] == "loss"


def test_below_cap_the_match_goes_on() -> None:
    state = black_siege([0, 0, 21])
    assert state["black_lost"][B] == 99
    assert G.result(state) is None


def test_net_take_in_double_black_counts_toward_cap() -> None:
    rounds: list[dict[str, list[Move]]] = [{A: [roulette("Black")], B: [roulette("Black")]}]
    for _ in range(3):
        rounds.append({A: [roulette("Black"), bet(gold=30, black=10)], B: [roulette("Black"), bet(gold=40)]})
    state = play(rounds, {A: 100, B: 300})
    # each round: alice takes 40, bob takes 30, the net 10 moves; only bob's net losses count
    assert state["black_lost"] == {A: 0, B: 30}
    assert state["black_taken"] == {A: 120, B: 90}


def test_takes_won_never_offset_chips_lost_to_the_cap() -> None:
    rounds: list[dict[str, list[Move]]] = [
        {A: [roulette("Black")], B: [roulette("Gold")]},
        {A: [roulette("Gold"), SPLIT], B: [roulette("Black"), SPLIT]},
        {A: [roulette("Black"), SPLIT], B: [roulette("Gold"), SPLIT]},
        {A: [roulette("Black"), SPLIT], B: [roulette("Gold"), SPLIT]},
        {A: [roulette("Black"), SPLIT], B: [roulette("Gold"), SPLIT]},
    ]
    state = play(rounds)
    # bob lost 40 (r1), won 40 (r2), lost 40 (r3) and 40 (r4): capped at 100 in round 4
    assert state["black_lost"][B] == 100
    assert moved(state, 4)[0] == (B, A, 20, "Black take")
    assert outcome(state) == {A: "win", B: "loss"}


def test_lgt_payments_and_inactivity_fees_do_not_count_toward_cap() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, None)
    assert moved(state, 1) == [
        (B, A, 40, "Black take"),
        (A, "LGT", 10, "LGT payment for a Black roulette"),
        (B, "LGT", 5, "inactivity fee: no bet"),
    ]
    assert state["black_lost"] == {A: 0, B: 40}


def test_fees_are_paid_in_the_round_the_match_ends() -> None:
    state = black_siege([0, 0, 0], b_last=[])  # bob also sends nothing in round 3
    assert moved(state, 3) == [
        (B, A, 20, "Black take"),
        (A, "LGT", 10, "LGT payment for a Black roulette"),
        (B, "LGT", 5, "inactivity fee: no roulette"),
        (B, "LGT", 5, "inactivity fee: no bet"),
    ]
    assert settled(state, 3)["inactivity_points"][A] == 60


def test_no_point_lead_transfer_after_cap() -> None:
    state = black_siege([0, 0, 0])
    assert all(t["reason"] != "point lead" for t in state["transfers"])


# --------------------------------------------------------------------------- bankruptcy


def test_bankruptcy_on_a_take_pays_what_is_held_and_loses() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, SPLIT, chips={A: 100, B: 30})
    assert moved(state, 1)[0] == (B, A, 30, "Black take")
    assert state["chips"][B] == 0
    result = G.result(state)
    assert result is not None and result.outcome == {A: "win", B: "loss"}
    assert "bankrupt" in result.reason
    assert state["black_lost"][B] == 30


def test_bankruptcy_on_the_lgt_payment() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, bet(black=40), chips={A: 5, B: 100})
    assert moved(state, 1) == [(A, "LGT", 5, "LGT payment for a Black roulette")]
    assert outcome(state) == {A: "loss", B: "win"}


def test_bankruptcy_on_an_inactivity_fee() -> None:
    state = play([{A: [roulette()]}], {A: 100, B: 3})
    assert moved(state, 0) == [(B, "LGT", 3, "inactivity fee: no roulette")]
    assert outcome(state) == {A: "win", B: "loss"}
    assert G.step(state) is None


def test_ending_a_settlement_with_exactly_0_chips_is_not_a_loss() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, SPLIT, chips={A: 100, B: 40})
    assert state["chips"][B] == 0
    assert G.result(state) is None
    step = G.step(state)
    assert step is not None and step.key == "round-2"


def test_owing_anything_with_0_chips_is_bankruptcy() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, SPLIT, chips={A: 100, B: 40})
    state = submit(state, A, roulette())
    state = submit(state, A, SPLIT)
    state = submit(state, B, roulette())
    state = G.apply_timeout(state)  # bob sent no bet: a 5-chip fee he cannot pay
    assert outcome(state) == {A: "win", B: "loss"}


def test_both_players_lose_in_the_same_settlement_is_a_draw() -> None:
    state = play([{}], {A: 2, B: 2})
    result = G.result(state)
    assert result is not None
    assert result.outcome == {A: "draw", B: "draw"}
    assert result.victory_points == {A: 0.5, B: 0.5}
    assert "Both players lost" in result.reason


def test_take_and_lgt_bankruptcies_in_the_same_settlement_are_a_draw() -> None:
    # bob cannot pay alice's take of 5; alice, who then still holds 0, cannot pay the LGT
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, bet(gold=5, black=35), chips={A: 0, B: 0})
    assert settled(state, 1)["payments"][:2] == [
        {"from": B, "to": A, "owed": 5, "paid": 0, "reason": "Black take"},
        {"from": A, "to": "LGT", "owed": 10, "paid": 0, "reason": "LGT payment for a Black roulette"},
    ]
    assert outcome(state) == {A: "draw", B: "draw"}


def test_no_point_lead_transfer_after_bankruptcy() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), bet(gold=40), SPLIT, chips={A: 100, B: 30})
    assert state["points"][A] > state["points"][B]
    assert all(t["reason"] != "point lead" for t in state["transfers"])


def test_settlement_order_take_before_lgt_before_fees() -> None:
    # alice holds 0: she can pay the LGT only because the take comes first
    state = round_one(roulette("Black"), roulette("Gold"), None, SPLIT, chips={A: 0, B: 100})
    assert moved(state, 1) == [
        (B, A, 40, "Black take"),
        (A, "LGT", 10, "LGT payment for a Black roulette"),
        (A, "LGT", 5, "inactivity fee: no bet"),
    ]
    assert state["chips"][A] == 25
    assert G.result(state) is None


# --------------------------------------------------------------------------- end after round 10


def test_symmetric_match_is_a_draw_with_half_victory_points() -> None:
    state = full_match()
    result = G.result(state)
    assert result is not None
    assert result.outcome == {A: "draw", B: "draw"}
    assert result.victory_points == {A: 0.5, B: 0.5}
    assert state["round"] == 10 and len(state["history"]) == 11
    assert moved(state, 10) == []


def test_most_points_wins_and_takes_floor_lead_over_10() -> None:
    state = full_match({(9, B, "bet"): bet(gold=25, silver=5), (10, B, "bet"): bet(gold=20)})
    assert state["points"][A] - state["points"][B] == 35
    result = G.result(state)
    assert result is not None and result.outcome == {A: "win", B: "loss"}
    assert moved(state, 10) == [(B, A, 3, "point lead")]
    assert result.scores == state["points"]


def test_lead_transfer_is_capped_at_what_the_loser_holds() -> None:
    state = full_match({(9, B, "bet"): bet(gold=25, silver=5), (10, B, "bet"): bet(gold=20)}, chips={A: 100, B: 2})
    assert moved(state, 10) == [(B, A, 2, "point lead")]
    assert outcome(state) == {A: "win", B: "loss"}


def test_lead_under_10_moves_no_chips() -> None:
    state = full_match({(10, B, "bet"): bet(gold=20, silver=15)})
    assert state["points"][A] - state["points"][B] == 5
    assert outcome(state)[A] == "win"
    assert moved(state, 10) == []
    assert settled(state, 10)["payments"] == []


@pytest.mark.parametrize(("lead", "chips"), [(0, 0), (9, 0), (10, 1), (35, 3), (100, 10)])
def test_lead_chips_is_floor_of_lead_over_10(lead: int, chips: int) -> None:
    assert lead_chips(lead) == chips


def test_points_tie_broken_by_gross_chips_taken_through_own_black() -> None:
    state = full_match(
        {
            (3, A, "roulette"): roulette("Black"),
            (3, B, "roulette"): roulette("Black"),
            (4, B, "bet"): bet(gold=10, black=30),
            (4, A, "bet"): bet(gold=20, black=20),
        }
    )
    assert state["points"][A] == state["points"][B]
    assert state["black_taken"] == {A: 10, B: 20}
    result = G.result(state)
    assert result is not None and result.outcome == {A: "loss", B: "win"}
    assert "tiebreak" in result.reason
    assert moved(state, 10) == []


def test_points_and_tiebreak_tied_is_a_draw() -> None:
    state = full_match(
        {
            (3, A, "roulette"): roulette("Black"),
            (3, B, "roulette"): roulette("Black"),
            (4, B, "bet"): bet(gold=20, black=20),
            (4, A, "bet"): bet(gold=20, black=20),
        }
    )
    assert outcome(state) == {A: "draw", B: "draw"}


# --------------------------------------------------------------------------- the ranking (ruling 32)


def ranking_of(state: State) -> list[str]:
    result = G.result(state)
    assert result is not None, "the match should be over"
    return result.ranking


def lot(seed: int) -> list[str]:
    """The order the lot of a drawn match with equal chips gives, best first."""
    order = [A, B]
    rng(seed, "ranking").shuffle(order)
    return order


def test_game_type_is_ranked() -> None:
    assert G.game_type.ranked is True


def test_ruling_32_the_winner_ranks_first_and_the_loser_last_whatever_their_chips() -> None:
    # alice wins on points holding fewer chips than bob
    on_points = full_match({(9, B, "bet"): bet(gold=25, silver=5), (10, B, "bet"): bet(gold=20)}, chips={A: 10, B: 300})
    assert outcome(on_points) == {A: "win", B: "loss"} and on_points["chips"][A] < on_points["chips"][B]
    assert ranking_of(on_points) == [A, B]
    tiebreak = full_match(
        {
            (3, A, "roulette"): roulette("Black"),
            (3, B, "roulette"): roulette("Black"),
            (4, B, "bet"): bet(gold=10, black=30),
            (4, A, "bet"): bet(gold=20, black=20),
        }
    )
    assert outcome(tiebreak) == {A: "loss", B: "win"} and ranking_of(tiebreak) == [B, A]
    capped = black_siege([0, 0, 0])  # bob forfeits at the cap, still holding more chips
    assert outcome(capped) == {A: "win", B: "loss"} and capped["chips"][B] > capped["chips"][A]
    assert ranking_of(capped) == [A, B]
    bankrupt = round_one(roulette("Black"), roulette("Gold"), SPLIT, SPLIT, chips={A: 100, B: 40})
    bankrupt = G.apply_timeout(submit(submit(submit(bankrupt, A, roulette()), A, SPLIT), B, roulette()))
    assert outcome(bankrupt) == {A: "win", B: "loss"} and ranking_of(bankrupt) == [A, B]


@pytest.mark.parametrize(
    ("chips", "live", "expected"),
    [({A: 100, B: 120}, None, [B, A]), ({A: 120, B: 100}, None, [A, B]), (None, {10: {A: 50, B: 40}}, [A, B])],
    ids=["bob-holds-more", "alice-holds-more", "the-live-season-balances-count"],
)
def test_ruling_32_a_draw_ranks_the_player_with_fewer_chips_at_the_end_last(
    chips: dict[str, int] | None, live: dict[int, dict[str, int]] | None, expected: list[str]
) -> None:
    state = full_match(chips=chips, live=live)
    assert outcome(state) == {A: "draw", B: "draw"}
    assert ranking_of(state) == expected
    # the state's seed (the lot) plays no part when the chips differ
    assert all(ranking_of({**state, "seed": seed}) == expected for seed in range(6))


def test_ruling_32_a_draw_with_equal_chips_is_ranked_by_a_lot_from_the_match_seed() -> None:
    state = full_match()
    assert outcome(state) == {A: "draw", B: "draw"} and state["chips"] == {A: 100, B: 100}
    assert ranking_of(state) == ranking_of(json.loads(json.dumps(state))) == lot(state["seed"])
    # the match is the same with any seed (the game has no chance): only the lot changes
    picks = {seed: ranking_of({**state, "seed": seed}) for seed in range(12)}
    assert picks == {seed: lot(seed) for seed in range(12)}
    assert {order[-1] for order in picks.values()} == {A, B}  # each player is the lot's last for some seed
    assert G.view({**state, "seed": 99}, A) == G.view(state, A)  # the views never show the ranking


def test_ruling_32_both_players_losing_at_once_with_0_chips_each_is_ranked_by_the_lot() -> None:
    state = play([{}], {A: 2, B: 2})
    assert outcome(state) == {A: "draw", B: "draw"} and state["chips"] == {A: 0, B: 0}
    assert ranking_of(state) == lot(state["seed"])


# --------------------------------------------------------------------------- inactivity


def test_missed_roulette_gives_opponent_60_points_and_costs_5_chips() -> None:
    state = play([{A: [roulette()]}])
    assert state["points"] == {A: 60, B: 0}
    assert moved(state, 0) == [(B, "LGT", 5, "inactivity fee: no roulette")]
    assert settled(state, 0)["prepared"] == {A: True, B: False}


def test_missed_roulette_leaves_nothing_to_bet_on_and_no_fee_for_that_bet() -> None:
    state = play([{A: [roulette()]}, {A: [roulette()], B: [roulette(), SPLIT]}])
    assert [r["preparer"] for r in settled(state, 1)["roulettes"]] == [A]
    assert moved(state, 1) == []
    assert settled(state, 1)["missed"] == {A: [], B: []}


def test_missed_bet_is_a_bet_of_0_on_every_colour_with_a_5_chip_fee() -> None:
    state = round_one(roulette("Gold"), roulette("Gold"), SPLIT, None)
    record = roulette_record(state, 1, A)
    assert record["bet"] == {"Gold": 0, "Silver": 0, "Black": 0}
    assert record["bet_missed"] is True
    assert record["earned"] == {A: 30, B: 0}
    assert moved(state, 1) == [(B, "LGT", 5, "inactivity fee: no bet")]


def test_missed_bet_on_black_roulette_pays_the_full_take() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, None)
    assert moved(state, 1)[0] == (B, A, 40, "Black take")


def test_submitted_bet_of_0_costs_no_fee() -> None:
    state = round_one(roulette("Gold"), roulette("Gold"), SPLIT, bet())
    assert moved(state, 1) == []
    assert roulette_record(state, 1, A)["bet_missed"] is False


def test_each_miss_costs_5_chips() -> None:
    state = play([{A: [roulette()], B: [roulette()]}, {A: [roulette(), SPLIT]}])
    assert moved(state, 1) == [(B, "LGT", 5, "inactivity fee: no roulette"), (B, "LGT", 5, "inactivity fee: no bet")]
    assert settled(state, 1)["missed"] == {A: [], B: ["roulette", "bet"]}


def test_both_miss_preparation_both_get_60() -> None:
    state = play([{}])
    assert state["points"] == {A: 60, B: 60}
    assert state["chips"] == {A: 95, B: 95}


# --------------------------------------------------------------------------- live season balances


BLACK_ROUND_ONE: list[dict[str, list[Move]]] = [
    {A: [roulette("Black")], B: [roulette()]},
    {A: [roulette(), SPLIT], B: [roulette(), SPLIT]},
]  # round 1: alice's Black roulette takes 40 from bob, then she pays the LGT 10


def test_with_balances_sets_the_chips_and_nothing_else() -> None:
    state = black_siege([0])
    live = G.with_balances(state, {A: 7, B: 250})
    assert live["chips"] == {A: 7, B: 250}
    assert {k: v for k, v in live.items() if k != "chips"} == {k: v for k, v in state.items() if k != "chips"}
    assert live["black_lost"] == {A: 0, B: 40}  # the cap counts this match's losses, whatever the balance
    live["chips"][A] = 0
    live["history"].append("scribbled")
    assert state["chips"] == {A: 130, B: 260}
    assert state["history"][-1] != "scribbled"


@pytest.mark.parametrize(
    "balances",
    [{A: 5}, {A: -1, B: 5}, {A: 1.5, B: 5}, {A: True, B: 5}, {A: "5", B: 5}],
    ids=["missing-player", "negative", "fraction", "bool", "text"],
)
def test_with_balances_refuses_a_missing_negative_or_fractional_balance(balances: dict[str, Any]) -> None:
    with pytest.raises(GameError):
        G.with_balances(start(), balances)


def test_a_balance_dropped_elsewhere_is_all_a_settlement_can_take_and_bankrupts() -> None:
    # the match thinks bob holds 100; his other matches left him 15 in the season
    state = play(BLACK_ROUND_ONE, live={1: {A: 100, B: 15}})
    assert moved(state, 1) == [(B, A, 15, "Black take"), (A, "LGT", 10, "LGT payment for a Black roulette")]
    assert state["chips"] == {A: 105, B: 0}
    assert state["black_lost"][B] == 15  # only what was paid counts toward the cap
    result = G.result(state)
    assert result is not None and result.outcome == {A: "win", B: "loss"}
    assert "bob owed 40 chips (Black take) but held only 15 and is bankrupt" in result.reason


def test_a_balance_of_0_left_by_another_match_cannot_pay_a_fee() -> None:
    state = play([{A: [roulette()]}], live={0: {A: 100, B: 0}})
    assert moved(state, 0) == []
    assert settled(state, 0)["payments"] == [
        {"from": B, "to": "LGT", "owed": 5, "paid": 0, "reason": "inactivity fee: no roulette"}
    ]
    assert state["chips"] == {A: 100, B: 0}
    assert outcome(state) == {A: "win", B: "loss"}


def test_a_balance_that_rose_elsewhere_pays_what_the_match_alone_could_not() -> None:
    assert outcome(play(BLACK_ROUND_ONE, {A: 100, B: 10}))[B] == "loss"  # on 10 chips bob is bankrupt
    state = play(BLACK_ROUND_ONE, {A: 100, B: 10}, live={1: {A: 100, B: 60}})
    assert moved(state, 1)[0] == (B, A, 40, "Black take")
    assert state["chips"] == {A: 130, B: 20}
    assert G.result(state) is None


def test_the_lgt_payment_is_judged_on_the_live_balance() -> None:
    # alice takes 0 (bob bet all 40 on Black); the match thinks she holds 100, the season 4
    rounds = [BLACK_ROUND_ONE[0], {A: [roulette(), SPLIT], B: [roulette(), bet(black=40)]}]
    state = play(rounds, live={1: {A: 4, B: 100}})
    assert moved(state, 1) == [(A, "LGT", 4, "LGT payment for a Black roulette")]
    assert outcome(state) == {A: "loss", B: "win"}


def test_the_lead_payment_is_judged_on_the_live_balance() -> None:
    lead_35 = {(9, B, "bet"): bet(gold=25, silver=5), (10, B, "bet"): bet(gold=20)}  # 3 chips
    poorer = full_match(lead_35, live={10: {A: 100, B: 2}})
    assert moved(poorer, 10) == [(B, A, 2, "point lead")]
    assert poorer["chips"] == {A: 102, B: 0}
    richer = full_match(lead_35, chips={A: 100, B: 0}, live={10: {A: 100, B: 50}})
    assert moved(richer, 10) == [(B, A, 3, "point lead")]
    assert richer["chips"] == {A: 103, B: 47}


def test_the_cap_counts_this_matchs_losses_whatever_the_balance() -> None:
    state = black_siege([0, 0, 0], live={3: {A: 100, B: 1000}})
    assert moved(state, 3)[0] == (B, A, 20, "Black take")
    assert settled(state, 3)["black"]["cut_by_cap"] == 20
    assert state["black_lost"][B] == CHIP_CAP
    assert state["chips"][B] == 980
    assert outcome(state) == {A: "win", B: "loss"}


# --------------------------------------------------------------------------- parsing

FULL = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0\n\nBET\nGold: 20\nSilver: 20\nBlack: 0\n"
R_GOLD = {"type": "roulette", "winning": "Gold", "points": {"Gold": 30, "Silver": 10, "Black": 0}}


def bets(gold: int = 0, silver: int = 0, black: int = 0) -> Move:
    return bet(gold, silver, black)


@pytest.mark.parametrize(
    ("text", "moves"),
    [
        (FULL, [R_GOLD, bets(20, 20)]),
        (FULL.lower(), [R_GOLD, bets(20, 20)]),
        ("  roulette:  \n\tWINNING   COLOR :\tgold \n gold=30\nsilver 10\nblack:-\n", [R_GOLD]),
        ("Bet:\ng 25\nsil: 15 points\n", [bets(25, 15)]),
        ("BET\nGold: 30 pts\nBlack:\nSilver: -\n", [bets(30)]),
        ("BET\nBlack: 40\n", [bets(black=40)]),
        ("Hi referee,\nhere is my move.\n\nBET\nGold: 40\n\nThanks!\nBob\n", [bets(40)]),
        ("BET\n\nGold: 20\n\nSilver: 20\n\ncheers\n", [bets(20, 20)]),
        ("ROULETTE\nWinning: s\nG: 30\nS: 10\nB: 0\n", [{**R_GOLD, "winning": "Silver"}]),
        ("ROULETTE\nWinning colour Black\nGold 30\nSilver 10\nBlack 0\n", [{**R_GOLD, "winning": "Black"}]),
        ("BET\n- Gold: 20\n* Silver: 20\n", [bets(20, 20)]),
        ("BET\nGold: 20\nBET is what I always do\n", [bets(20)]),
        ("BET\nGold colour: 20\n", [bets(20)]),
        ("BET\nGold: 50\nSilver: -5\n", [bets(50, -5)]),
        ("BET\nGold: 20\nROULETTE\nWinning colour: Gold.\nGold: 30\nSilver: 10\nBlack: 0\n", [bets(20), R_GOLD]),
    ],
    ids=[
        "the-form",
        "lower-case",
        "spaces-tabs-colon-color-equals-whitespace-dash",
        "header-colon-prefixes-and-points-suffix",
        "empty-and-dash-mean-0-in-bet",
        "omitted-colours-mean-0-in-bet",
        "greeting-before-and-signature-after",
        "blank-lines-inside-section-and-cheers",
        "single-letter-prefixes",
        "no-separator-winning-colour",
        "bullets",
        "prose-line-ends-section",
        "colour-word-after-colour-name",
        "rule-breaking-values-still-parse",
        "bet-before-roulette-and-trailing-dot",
    ],
)
def test_parse_reads(text: str, moves: list[Move]) -> None:
    assert G.parse(start(), A, text).moves == moves


@pytest.mark.parametrize(
    ("text", "reason", "line"),
    [
        ("BET\nGold: thirty\n", "could not read 'thirty'", "Gold: thirty"),
        ("BET\nPurple: 5\n", "I do not understand 'Purple'; a BET has the lines Gold, Silver and Black", "Purple: 5"),
        ("ROULETTE\nW: Gold\nGold: 30\nSilver: 10\nBlack: 0\n", "I do not understand 'W'; a ROULETTE has", "W: Gold"),
        ("BET\nGx: 5\nGo: 5\n", "I do not understand 'Gx'", "Gx: 5"),
        ("BET\nGold: 20.5\n", "whole number", "Gold: 20.5"),
        ("ROULETTE\nWinning colour: Gold\nGold: 30\nBlack: 0\n", "Silver is missing", "ROULETTE"),
        ("ROULETTE\nGold: 30\nSilver: 10\nBlack: 0\n", "winning colour is missing", "ROULETTE"),
        (
            "ROULETTE\nWinning colour: Purple\nGold: 30\nSilver: 10\nBlack: 0\n",
            "'Purple' is not a colour",
            "Winning colour: Purple",
        ),
        ("ROULETTE\nWinning colour:\nGold: 30\nSilver: 10\nBlack: 0\n", "winning colour is empty", "Winning colour:"),
        ("BET\nGold: 20\ngold: 20\n", "Gold appears twice", "gold: 20"),
        ("BET\nWinning colour: Gold\n", "A BET has no winning colour", "Winning colour: Gold"),
        ("BET\nGold: 20\nBET\nSilver: 20\n", "two BET sections", "BET"),
        ("BET\n\nthanks\n", "no colour lines", "BET"),
        ("Gold: 20\nSilver: 20\n", "I found no ROULETTE or BET section in your mail", None),
        ("", "I found no ROULETTE or BET section in your mail", None),
        ("BET\nGold: 30 10\n", "could not read '30 10'", "Gold: 30 10"),
    ],
    ids=[
        "word-instead-of-number",
        "unknown-colour",
        "unknown-key-with-colour-value",
        "not-a-prefix",
        "fraction",
        "roulette-colour-missing",
        "roulette-winning-colour-missing",
        "roulette-unknown-winning-colour",
        "roulette-empty-winning-colour",
        "duplicate-colour",
        "winning-colour-in-bet",
        "two-bet-sections",
        "empty-bet-section",
        "no-section",
        "empty-mail",
        "two-numbers-for-one-colour",
    ],
)
def test_parse_error_quotes_the_line(text: str, reason: str, line: str | None) -> None:
    with pytest.raises(ParseError) as error:
        G.parse(start(), A, text)
    assert reason in error.value.reason
    assert error.value.line == line


# --------------------------------------------------------------------------- forms


def test_form_preparation_phase_has_roulette_only() -> None:
    # issue 20: every form begins with the Step line naming the round it answers
    expected = "Step: Preparation phase\n\nROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0\n"
    assert G.form(start(), A) == expected


def test_form_round_10_has_bet_only() -> None:
    assert G.form(round_10(9, 9), A) == "Step: Round 10 of 10\n\nBET\nGold: 20\nSilver: 20\nBlack: 0\n"


def test_form_prefills_the_pending_submission() -> None:
    state = submit(submit(bet_round_state(), A, roulette("Black", gold=26, silver=14)), A, bet(silver=7))
    assert (
        G.form(state, A) == "Step: Round 1 of 10\n\n"
        "ROULETTE\nWinning colour: Black\nGold: 26\nSilver: 14\nBlack: 0\n\nBET\nGold: 0\nSilver: 7\nBlack: 0\n"
    )


def test_the_step_line_names_the_round_and_another_round_is_refused() -> None:
    """Issue 20: a reply keeps the form's "Step: Round N" line; every move carries the round
    it names, and a round other than the open one is refused naming both. A reply without
    the line is read as before; two lines naming different rounds are an error."""
    state = bet_round_state()  # round 1
    form = G.form(state, A)
    assert form.startswith("Step: Round 1 of 10\n\n")
    parsed = G.parse(state, A, form)
    assert {m["step"] for m in parsed.moves} == {"round 1 of 10"}
    assert all(G.apply_move(state, A, m).accepted for m in parsed.moves)
    # "Step: Round 1" (without "of 10"), any case, is the same round
    short = G.parse(state, A, form.replace("Step: Round 1 of 10", "step : round 1"))
    assert all(G.apply_move(state, A, m).accepted for m in short.moves)
    # another round: refused, naming both
    old = G.parse(state, A, form.replace("Step: Round 1 of 10", "Step: Preparation phase"))
    refused = G.apply_move(state, A, old.moves[0])
    assert not refused.accepted and not refused.changed
    assert "Your mail answers Preparation phase, but Round 1 of 10 is open now" in refused.reason
    assert "'Step: Round 1 of 10'" in refused.reason
    later = G.apply_move(state, A, G.parse(state, A, form.replace("Round 1", "Round 4")).moves[0])
    assert not later.accepted and "Round 4 of 10" in later.reason and "Round 1 of 10" in later.reason
    # without the line: read as before, no step named
    bare = G.parse(state, A, form.split("\n\n", 1)[1])
    assert all("step" not in m for m in bare.moves)
    assert all(G.apply_move(state, A, m).accepted for m in bare.moves)
    # the line anywhere, also after a section; two different rounds: an error quoting the second
    moved = G.parse(state, A, form.split("\n\n", 1)[1] + "\nStep: Round 1 of 10\n")
    assert {m["step"] for m in moved.moves} == {"round 1 of 10"}
    with pytest.raises(ParseError) as error:
        G.parse(state, A, form + "\nStep: Round 2 of 10\n")
    assert "names two rounds" in error.value.reason and error.value.line == "Step: Round 2 of 10"


def test_form_example_skips_a_used_up_colour() -> None:
    state = play([{A: [roulette("Gold")]}] * 5)
    assert "Winning colour: Silver" in G.form(state, A)


def test_form_is_empty_when_there_is_nothing_to_send() -> None:
    assert G.form(round_10(8, 9), B) == ""
    assert G.form(full_match(), A) == ""


def test_form_round_trips_in_every_round() -> None:
    state = start()
    while G.step(state) is not None:
        for p in (A, B):
            text = G.form(state, p)
            for move in G.parse(state, p, text).moves:
                state = submit(state, p, move)
            assert G.form(state, p) == text  # prefilled with the submission, which was the example
        assert G.awaiting(state) == ()
        state = G.apply_timeout(state)
    assert G.result(state) is not None


# --------------------------------------------------------------------------- views and hidden information


def test_view_shows_the_points_but_not_the_winning_colour_being_bet_on() -> None:
    state = play([{A: [roulette("Black", gold=27, silver=13)], B: [roulette()]}])
    view = G.view(state, B)
    assert view["todo"]["bet"] == {"preparer": A, "prepared_in": 0, "points": {"Gold": 27, "Silver": 13, "Black": 0}}
    assert "winning" not in json.dumps(view["todo"])
    assert view["standings"][A]["uses_left"] == {"Gold": 5, "Silver": 5, "Black": 5}
    assert G.view(state, A)["standings"][A]["uses_left"] == {"Gold": 5, "Silver": 5, "Black": 4}
    assert G.view(state, A)["in_play"] == {"winning": "Black", "points": {"Gold": 27, "Silver": 13, "Black": 0}}


def test_view_reveals_the_roulette_after_its_settlement() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, SPLIT)
    view = G.view(state, B)
    assert view["last_result"]["roulettes"][0]["winning"] == "Black"
    assert view["standings"][A]["uses_left"] == {"Gold": 5, "Silver": 5, "Black": 4}
    assert view["last_result"]["uses_left"][A] == {"Gold": 5, "Silver": 5, "Black": 4}
    assert view["last_result"]["uses_left"][B] == {"Gold": 3, "Silver": 5, "Black": 5}  # own, incl. round 1's


def test_view_hides_the_opponents_submissions_this_round() -> None:
    state = bet_round_state()
    other = submit(submit(state, A, roulette("Black")), A, bet(gold=40))
    assert G.view(other, B) == G.view(state, B)
    assert G.view(other, None) == G.view(state, None)


def test_public_view_has_no_personal_parts() -> None:
    view = G.view(bet_round_state(), None)
    assert (view["you"], view["todo"], view["pending"], view["in_play"]) == (None, None, None, None)
    assert view["standings"][A]["uses_left"] == {"Gold": 5, "Silver": 5, "Black": 5}


def test_view_of_unknown_player_is_refused() -> None:
    with pytest.raises(GameError):
        G.view(start(), "mallory")


def test_view_after_the_match_has_the_final_result() -> None:
    state = full_match()
    view = G.view(state, A)
    assert view["over"] is True
    assert view["final"]["outcome"] == {A: "draw", B: "draw"}
    assert view["last_result"]["round"] == 10  # the final round, as the last mail shows it
    assert view["todo"] is None
    json.dumps(view)
    archive = G.view(state, None)
    assert [entry["round"] for entry in archive["history"]] == list(range(11))  # every settled round
    json.dumps(archive)


def test_a_players_view_holds_the_last_round_not_the_whole_history() -> None:
    """A mail shows the running totals and the last settled round: a player's view holds
    those, so it is as large in round 10 as in round 1; the archive holds every round."""
    state = start()
    sizes = []
    for r in range(11):
        for p in (A, B):
            if r <= 9:
                state = submit(state, p, roulette(schedule_colour(r)))
            if r >= 1:
                state = submit(state, p, SPLIT)
        state = G.apply_timeout(state)
        for p in (A, B):
            view = G.view(state, p)
            assert "history" not in view
            assert view["last_result"]["round"] == r
            sizes.append(len(json.dumps(view)))
        assert len(G.view(state, None)["history"]) == r + 1
    assert max(sizes) < 1.5 * min(sizes[2:]), sizes


def test_the_last_result_and_the_archive_count_colour_uses_as_the_viewer_may_know_them() -> None:
    state = black_siege([0, 10, 20])  # alice prepares Black every round: her uses run down
    archive = G.view(state, None)
    for entry in archive["history"]:
        for p in (A, B):
            assert entry["uses_left"][p] == uses_left(state["roulettes"][p][: entry["round"]])
    assert archive["last_result"] == archive["history"][-1]
    for viewer in (A, B):
        last = G.view(state, viewer)["last_result"]
        r = last["round"]
        assert {k: v for k, v in last.items() if k != "uses_left"} == state["history"][-1]
        for p in (A, B):
            # their own roulettes including the one just prepared; the opponent's as far as revealed
            assert last["uses_left"][p] == uses_left(state["roulettes"][p][: r + (1 if p == viewer else 0)])


def varied_round(state: State, r: int) -> State:
    """Round r of a match with a bit of everything: Black roulettes (alice, rounds 2-3),
    a missed roulette (bob, round 4, so alice has nothing to bet on in round 5), a missed
    bet (alice, round 6) and all-in bets (every third round)."""
    for p in (A, B):
        if r <= 9 and not (p == B and r == 4):
            state = submit(state, p, roulette("Black" if p == A and r in (2, 3) else schedule_colour(r)))
        if G.view(state, p)["todo"]["bet"] is not None and not (p == A and r == 6):
            state = submit(state, p, bet(gold=40) if r % 3 == 0 else SPLIT)
    return state


def test_the_state_keeps_only_the_last_settlement_record_in_full() -> None:
    """Earlier records are compact (what their settlement read); the archive rebuilds
    each in full, exactly as it stood when it was the last one."""
    state = start()
    full_records = []
    for r in range(11):
        state = G.apply_timeout(G.with_balances(varied_round(state, r), {A: 80 + r, B: 120 - r}))
        full_records.append(state["history"][-1])
        assert "payments" in state["history"][-1]
        for entry in state["history"][:-1]:
            assert set(entry) == {"round", "prepared", "roulettes", "chips_before"}, entry
            assert all(set(rec) == {"preparer", "bet", "bet_missed"} for rec in entry["roulettes"])
    assert G.result(state) is not None
    assert [settled(state, r) for r in range(11)] == full_records
    assert len(json.dumps(state)) < 0.5 * len(json.dumps({**state, "history": full_records}))


def test_a_state_stored_with_every_record_in_full_reads_and_plays_on_the_same() -> None:
    """States stored before records were kept compact have every record in full: their
    views are the same, and the next settlement makes the earlier records compact."""
    compact = start()
    for r in range(7):
        compact = G.apply_timeout(varied_round(compact, r))
    stored = {**compact, "history": [settled(compact, r) for r in range(7)]}  # every record in full
    assert all("payments" in entry for entry in stored["history"])
    for viewer in (A, B, None):
        assert G.view(stored, viewer) == G.view(compact, viewer)
    assert G.standings(stored) == G.standings(compact)
    compact, stored = G.apply_timeout(varied_round(compact, 7)), G.apply_timeout(varied_round(stored, 7))
    assert stored["history"][:6] == [settled(stored, r) for r in range(6)]  # the older ones stay in full
    assert stored["history"][6:] == compact["history"][6:]  # the one settled before is compact now
    for viewer in (A, B, None):
        assert G.view(stored, viewer) == G.view(compact, viewer)


def test_uses_left_after_each_is_uses_left_of_every_prefix() -> None:
    roulettes = [{"winning": "Black"}, None, {"winning": "Gold"}, {"winning": "Black"}]
    assert uses_left_after_each(roulettes) == [uses_left(roulettes[:n]) for n in range(len(roulettes) + 1)]
    assert uses_left_after_each([]) == [uses_left([])]


def test_standings_are_the_public_views_standings() -> None:
    state = black_siege([0, 10])
    public = G.view(state, None)["standings"]
    assert G.standings(state) == [
        f"{p}: {row['points']} points, {row['chips']} chips, {row['black_taken']} taken through Black "
        f"roulettes, {row['black_lost']} of {CHIP_CAP} lost to Black takes"
        for p, row in public.items()
    ]


def test_unsettled_roulette_stays_hidden_when_the_match_ends_early() -> None:
    state = black_siege([0, 0, 0])
    # bob's roulette prepared in round 3 was never bet on: alice never learns its colour
    assert G.view(state, A)["standings"][B]["uses_left"] == {"Gold": 2, "Silver": 5, "Black": 5}
    assert G.view(state, B)["standings"][B]["uses_left"] == {"Gold": 1, "Silver": 5, "Black": 5}


def test_result_is_none_while_running() -> None:
    assert G.result(start()) is None


def test_conservation_over_a_busy_match() -> None:
    state = full_match(
        {
            (0, A, "roulette"): roulette("Black"),
            (1, B, "bet"): None,
            (2, A, "roulette"): None,
            (3, B, "bet"): None,
            (5, B, "roulette"): roulette("Black"),
            (6, A, "bet"): bet(black=40),
        }
    )
    assert_conserved(state)


def test_standings_one_line_per_player_from_public_information() -> None:
    state = round_one(roulette("Black"), roulette("Gold"), SPLIT, SPLIT)
    assert G.standings(state) == [
        "alice: 20 points, 130 chips, 40 taken through Black roulettes, 0 of 100 lost to Black takes",
        "bob: 30 points, 60 chips, 0 taken through Black roulettes, 40 of 100 lost to Black takes",
    ]
    hidden = submit(submit(state, A, roulette("Black")), B, bet(black=40))
    assert G.standings(hidden) == G.standings(state)


def test_cap_and_bankruptcy_in_the_same_settlement_are_a_draw() -> None:
    # alice (Black in even rounds) takes 30 from bob in rounds 1, 3, 5; bob (Black in odd
    # rounds) takes 20 from alice in rounds 2, 4, 6, leaving her 0. In round 7 bob reaches
    # the cap (40 cut to 10) while alice, who sent no bet, cannot pay her 5-chip fee.
    rounds: list[dict[str, list[Move]]] = [{A: [roulette("Black")], B: [roulette("Gold")]}]
    for r in range(1, 8):
        a_colour, b_colour = ("Gold", "Black") if r % 2 else ("Black", "Gold")
        alice_black = r % 2 == 1  # alice's roulette from round r-1 is Black
        b_bet = (bet(gold=30, black=10) if r < 7 else SPLIT) if alice_black else SPLIT
        a_moves = [roulette(a_colour)] + ([] if r == 7 else [SPLIT if alice_black else bet(gold=20, black=20)])
        rounds.append({A: a_moves, B: [roulette(b_colour if r < 7 else "Gold"), b_bet]})
    state = play(rounds, {A: 0, B: 300})
    assert [settled(state, r)["chips"][A] for r in range(1, 7)] == [20, 0, 20, 0, 20, 0]
    assert moved(state, 7) == [(B, A, 10, "Black take"), (A, "LGT", 10, "LGT payment for a Black roulette")]
    assert state["black_lost"][B] == CHIP_CAP
    assert settled(state, 7)["payments"][-1] == {
        "from": A,
        "to": "LGT",
        "owed": 5,
        "paid": 0,
        "reason": "inactivity fee: no bet",
    }
    assert outcome(state) == {A: "draw", B: "draw"}


# --------------------------------------------------------------------------- ruling 33: a forfeit


def test_ruling_33_a_forfeit_ends_the_match_at_once_without_settling_the_round() -> None:
    """Round 2 is open, both have sent their roulette and bet; bob forfeits: the round is not
    settled (no points, no take, no LGT payment, no fee), alice wins, chips as they stand."""
    state = play([{A: [roulette()], B: [roulette("Black")]}, {A: [roulette(), SPLIT], B: [roulette(), SPLIT]}])
    state = submit(submit(state, A, roulette("Black")), B, bet(gold=40))
    state = submit(state, A, bet(black=40))
    before = json.dumps(state, sort_keys=True)
    over = G.forfeit(state, B)
    assert json.dumps(state, sort_keys=True) == before, "forfeit changed the state it was given"
    assert over["transfers"] == state["transfers"] and over["chips"] == state["chips"]
    assert over["points"] == state["points"] and len(over["history"]) == len(state["history"])
    assert over["pending"] == {A: {"roulette": None, "bet": None}, B: {"roulette": None, "bet": None}}
    assert over["round"] == 2 and over["forfeit"] == {"player": B, "round": 2}
    result = G.result(over)
    assert result.outcome == {A: "win", B: "loss"} and result.victory_points == {A: 1.0, B: 0.0}
    assert result.reason == "alice wins: bob forfeited the match in round 2 (not settled)."
    assert result.ranking == [A, B]
    assert result.scores == over["points"]
    assert G.step(over) is None and G.awaiting(over) == () and G.sample_moves(over, A, random.Random(1)) == []
    assert G.forfeit(state, B) == over  # deterministic


def test_ruling_33_the_views_say_the_forfeit_and_hide_the_unsettled_roulette() -> None:
    state = play([{A: [roulette("Black")], B: [roulette()]}])
    over = G.forfeit(state, A)
    public = G.view(over, None)
    assert public["forfeit"] == {"player": A, "round": 1} and public["over"]
    assert G.view(over, B)["forfeit"] == {"player": A, "round": 1}
    assert "forfeit" not in G.view(state, None)
    # alice's Black roulette of the preparation phase was never bet on: never revealed (ruling 4)
    assert public["standings"][A]["uses_left"] == {"Gold": 5, "Silver": 5, "Black": 5}
    assert [r["roulettes"] for r in public["history"]] == [[]]


def test_ruling_33_a_forfeit_in_the_preparation_phase_and_the_loser_is_last_whatever_the_chips() -> None:
    state = start({A: 500, B: 10})
    over = G.forfeit(state, A)
    result = G.result(over)
    assert result.outcome == {A: "loss", B: "win"} and result.ranking == [B, A]
    assert result.reason == "bob wins: alice forfeited the match in the preparation phase (not settled)."
    assert over["transfers"] == []


def test_ruling_33_a_match_over_or_a_stranger_cannot_forfeit() -> None:
    state = start()
    with pytest.raises(GameError, match="not playing"):
        G.forfeit(state, "carol")
    over = G.forfeit(state, A)
    for p in (A, B):
        with pytest.raises(GameError, match="over"):
            G.forfeit(over, p)
    ended = full_match()
    with pytest.raises(GameError, match="over"):
        G.forfeit(ended, A)
