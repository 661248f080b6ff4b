"""Property tests for Stationary Roulette: random legal play (with missed and
revised submissions and the odd forbidden move), from random starting chips."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games.base import Move, State
from referee.games.stationary_roulette import COLOURS, NO_BET, prepares_in, uses_left
from tests.games.test_stationary_roulette import A, B, G, assert_conserved, bet, roulette, start

Script = list[list[tuple[str, Move]]]  # per round: the moves sent, in order
Balances = list[dict[str, int] | None]  # per round: the season balances at its settlement

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
chips_strategy = st.fixed_dictionaries({A: st.integers(0, 120), B: st.integers(0, 120)})


def draw_roulette(data: st.DataObject, state: State, player: str) -> Move:
    left = uses_left(state["roulettes"][player])
    winning = data.draw(st.sampled_from([c for c in COLOURS if left[c] > 0]))
    gold = data.draw(st.integers(25, 35))
    return roulette(winning, gold, 40 - gold)


def draw_bet(data: st.DataObject) -> Move:
    colours = data.draw(st.lists(st.sampled_from(COLOURS), max_size=2, unique=True))
    first = data.draw(st.one_of(st.just(40), st.integers(0, 40)))
    second = data.draw(st.integers(0, 40 - first))
    amounts = dict(zip(colours, (first, second)[: len(colours)], strict=True))
    return bet(amounts.get("Gold", 0), amounts.get("Silver", 0), amounts.get("Black", 0))


def draw_forbidden(data: st.DataObject) -> Move:
    return data.draw(
        st.sampled_from(
            [roulette(gold=20, silver=20), roulette(gold=30, silver=5, black=5), bet(10, 10, 10), bet(gold=41)]
        )
    )


def random_match(data: st.DataObject, chips: dict[str, int]) -> tuple[Script, list[State], State]:
    """Play a random match; returns the script, the state of every round just before
    its deadline, and the final state. Checks the invariants after every step."""
    script, before_deadline, _, final = play_random(data, chips, live=False)
    return script, before_deadline, final


def play_random(data: st.DataObject, chips: dict[str, int], live: bool) -> tuple[Script, list[State], Balances, State]:
    """A random match; with ``live``, each settlement is judged on random season balances
    (as if the players' other matches had moved their chips), set by ``with_balances``."""
    state = start(chips)
    script: Script = []
    before_deadline: list[State] = []
    balances: Balances = []
    for _ in range(11):
        moves: list[tuple[str, Move]] = []
        for player in (A, B):
            if data.draw(st.booleans()):
                forbidden = draw_forbidden(data)
                applied = G.apply_move(state, player, forbidden)
                assert not applied.accepted and not applied.changed and applied.state == state
            kinds = []
            if prepares_in(state["round"]):
                kinds += ["roulette"] * data.draw(st.integers(0, 2))  # 0: missed, 2: revised
            if G.view(state, player)["todo"]["bet"] is not None:
                kinds += ["bet"] * data.draw(st.integers(0, 2))
            for kind in kinds:
                move = draw_roulette(data, state, player) if kind == "roulette" else draw_bet(data)
                applied = G.apply_move(state, player, move)
                assert applied.accepted, applied.reason
                state = applied.state
                moves.append((player, move))
        script.append(moves)
        before_deadline.append(state)
        live_balances = data.draw(chips_strategy) if live else None
        balances.append(live_balances)
        if live_balances is not None:
            state = G.with_balances(state, live_balances)
        held, transfers_before = dict(state["chips"]), len(state["transfers"])
        state = G.apply_timeout(state)
        assert_settlement_conserves(held, state, transfers_before)
        if not live:
            assert_conserved(state)
        assert (G.step(state) is None) == (G.result(state) is not None)
        if G.step(state) is None:
            break
    assert G.step(state) is None, "the match must end within 11 steps"
    return script, before_deadline, balances, state


def assert_settlement_conserves(held: dict[str, int], state: State, transfers_before: int) -> None:
    """What each player holds after a settlement is what they held when it began plus
    what it moved to them minus what it moved from them, and never below 0."""
    new = state["transfers"][transfers_before:]
    for p in (A, B):
        delta = sum(t["amount"] for t in new if t["to"] == p) - sum(t["amount"] for t in new if t["from"] == p)
        assert state["chips"][p] == held[p] + delta >= 0


def replay(
    script: Script, chips: dict[str, int], json_round_trip_at: int | None = None, balances: Balances | None = None
) -> State:
    state = start(chips)
    for round_no, moves in enumerate(script):
        if round_no == json_round_trip_at:
            state = json.loads(json.dumps(state))
        for player, move in moves:
            applied = G.apply_move(state, player, move)
            assert applied.accepted
            state = applied.state
        if balances is not None and balances[round_no] is not None:
            state = G.with_balances(state, balances[round_no])
        state = G.apply_timeout(state)
    return state


def unrevealed(state: State, player: str) -> list[int]:
    """Indices of ``player``'s recorded roulettes not yet settled (so not revealed)."""
    first = max(len(state["history"]) - 1, 0)
    return [i for i in range(first, len(state["roulettes"][player])) if state["roulettes"][player][i] is not None]


def hidden_variants(state: State, player: str) -> list[State]:
    """States that differ from ``state`` only in what ``player`` may not know: the
    winning colour of the opponent's unsettled roulettes (the one being bet on, or one
    left over when the match ended early), the opponent's pending roulette (or whether
    there is one) and the opponent's pending bet."""
    opponent = B if player == A else A
    variants = []
    for index in unrevealed(state, opponent):
        for colour in COLOURS:
            variant = copy.deepcopy(state)
            variant["roulettes"][opponent][index]["winning"] = colour
            variants.append(variant)
    pending_roulettes: list[dict[str, Any] | None] = [None]
    pending_roulettes += [{"winning": c, "points": {"Gold": 28, "Silver": 12, "Black": 0}} for c in COLOURS]
    for pending_roulette in pending_roulettes:
        variant = copy.deepcopy(state)
        variant["pending"][opponent]["roulette"] = pending_roulette
        variants.append(variant)
    for pending_bet in (
        None,
        dict(NO_BET),
        {"Gold": 0, "Silver": 0, "Black": 40},
        {"Gold": 25, "Silver": 15, "Black": 0},
    ):
        variant = copy.deepcopy(state)
        variant["pending"][opponent]["bet"] = pending_bet
        variants.append(variant)
    return variants


def public_variants(state: State) -> list[State]:
    """States that differ only in what nobody outside may know: also the points of
    every unsettled roulette."""
    variants = [*hidden_variants(state, A), *hidden_variants(state, B)]
    for player in (A, B):
        for index in unrevealed(state, player):
            variant = copy.deepcopy(state)
            variant["roulettes"][player][index]["points"] = {"Gold": 33, "Silver": 7, "Black": 0}
            variants.append(variant)
    return variants


@PROPERTY_SETTINGS
@given(data=st.data(), chips=chips_strategy)
def test_random_play_terminates_and_conserves_chips(data: st.DataObject, chips: dict[str, int]) -> None:
    script, _, final = random_match(data, chips)
    assert len(script) <= 11
    result = G.result(final)
    assert result is not None
    assert sum(result.victory_points.values()) == 1.0
    assert sorted(result.outcome.values()) in (["draw", "draw"], ["loss", "win"])
    assert all(t["amount"] > 0 and t["step"].startswith("round-") for t in final["transfers"])
    assert all(t["from"] in (A, B) and t["to"] in (A, B, "LGT") for t in final["transfers"])
    assert max(final["black_lost"].values()) <= 100


@PROPERTY_SETTINGS
@given(data=st.data(), chips=chips_strategy)
def test_replay_from_the_seed_is_identical(data: st.DataObject, chips: dict[str, int]) -> None:
    script, _, final = random_match(data, chips)
    assert replay(script, chips) == final
    assert json.dumps(replay(script, chips), sort_keys=True) == json.dumps(final, sort_keys=True)


@PROPERTY_SETTINGS
@given(data=st.data(), chips=chips_strategy)
def test_json_round_trip_mid_match_continues_identically(data: st.DataObject, chips: dict[str, int]) -> None:
    script, _, final = random_match(data, chips)
    at = data.draw(st.integers(0, len(script) - 1))
    assert replay(script, chips, json_round_trip_at=at) == final


@settings(PROPERTY_SETTINGS, max_examples=50)
@given(data=st.data(), chips=chips_strategy)
def test_views_and_forms_do_not_depend_on_hidden_information(data: st.DataObject, chips: dict[str, int]) -> None:
    _, before_deadline, final = random_match(data, chips)
    for state in [*before_deadline, final]:
        public = G.view(state, None)
        json.dumps(public)
        for player in (A, B):
            view, form = G.view(state, player), G.form(state, player)
            json.dumps(view)
            for variant in hidden_variants(state, player):
                assert G.view(variant, player) == view
                assert G.form(variant, player) == form
        for variant in public_variants(state):
            assert G.view(variant, None) == public


@PROPERTY_SETTINGS
@given(data=st.data(), chips=chips_strategy)
def test_form_round_trips_in_random_play(data: st.DataObject, chips: dict[str, int]) -> None:
    _, before_deadline, _ = random_match(data, chips)
    for state in before_deadline:
        for player in (A, B):
            for move in G.parse(state, player, G.form(state, player)).moves if G.form(state, player) else []:
                assert G.apply_move(state, player, move).accepted


@PROPERTY_SETTINGS
@given(data=st.data(), chips=chips_strategy)
def test_live_balances_never_go_below_0_and_replay_identically(data: st.DataObject, chips: dict[str, int]) -> None:
    """Ruling: each settlement is judged on the live season balances; whatever they are,
    no one pays more than they hold (checked per settlement in play_random), the cap
    still counts this match only, and the recorded balances replay the match exactly."""
    script, _, balances, final = play_random(data, chips, live=True)
    assert G.result(final) is not None
    assert min(final["chips"].values()) >= 0
    assert max(final["black_lost"].values()) <= 100
    assert final["black_lost"] == {
        p: sum(t["amount"] for t in final["transfers"] if t["from"] == p and t["reason"] == "Black take")
        for p in (A, B)
    }
    assert replay(script, chips, balances=balances) == final


@settings(PROPERTY_SETTINGS, max_examples=60)
@given(data=st.data(), chips=chips_strategy)
def test_the_archive_rebuilds_every_settlement_record_as_it_was(data: st.DataObject, chips: dict[str, int]) -> None:
    """The state keeps only the last settlement record in full; whatever the play (misses,
    Black takes, the cap, bankruptcy, live balances), the archive's records are exactly
    the full records each settlement made."""
    script, _, balances, final = play_random(data, chips, live=True)
    made = [replay(script[: k + 1], chips, balances=balances[: k + 1])["history"][-1] for k in range(len(script))]
    assert all("payments" in record for record in made)
    archive = [{k: v for k, v in entry.items() if k != "uses_left"} for entry in G.view(final, None)["history"]]
    assert archive == made
    assert all("chips_before" in entry for entry in final["history"][:-1])
