"""Property tests for Indian Poker: random legal play with random timeouts and the odd
forbidden move (a wrong player, a stale turn, an amount over the cap), from random seeds."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games import betting
from referee.games.base import Move, State
from referee.games.indian_poker import CARD_VALUES
from tests.games.test_indian_poker import A, B, TOTAL, G, assert_conserved, pot_now

Event = tuple[str, str | None, Move | None]  # ("move", player, move) or ("timeout", None, None)

PROPERTY_SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MAX_EVENTS = 5000


def start(seed: int, dmo: str) -> State:
    return G.initial_state(seed, [A, B], {"dmo": dmo})


def random_legal_move(r: random.Random, state: State) -> Move:
    """Any legal action of the player to act, in any of its spellings."""
    rnd = state["betting"]
    player = rnd["to_act"]
    legal = betting.legal_actions(rnd, player)
    assert legal is not None
    choices: list[Move] = [{"action": "call"}, {"action": "fold"}, {"action": "all-in"}]
    if legal["check"]:
        choices.append({"action": "check"})
    if legal["raise"]:
        n = r.randint(legal["raise"]["min"], min(legal["raise"]["max"], r.choice([3, 10, 50])))
        choices += [{"action": "raise", "by": n}, {"action": "raise", "to": legal["raise"]["to_min"] + n - 1}]
    return r.choice(choices)


def forbidden_moves(state: State) -> list[tuple[str, Move]]:
    rnd = state["betting"]
    player = rnd["to_act"]
    other = B if player == A else A
    top = betting.max_raise(rnd, player)
    return [
        (other, {"action": "call"}),  # not their turn
        (player, {"action": "raise", "by": top + 1}),  # over the cap
        (player, {"action": "raise", "by": 0}),
        (player, {"action": "call", "turn": "hand 0 action 1"}),  # a stale turn
    ]


def random_match(seed: int, style: dict[str, Any]) -> tuple[list[Event], list[State]]:
    """A random match: the events applied, and every state (the initial one included).
    Checks after every event that chips are conserved and that a forbidden move changes
    nothing."""
    r = random.Random(style["rng"])
    state = start(seed, style["dmo"])
    states = [state]
    events: list[Event] = []
    assert_conserved(state)
    while G.step(state) is not None:
        assert len(events) < MAX_EVENTS, "the match must end"
        if r.random() < style["forbidden"]:
            player, move = r.choice(forbidden_moves(state))
            applied = G.apply_move(state, player, move)
            assert not applied.accepted and not applied.changed and applied.state == state
            assert applied.reason
        if r.random() < style["timeouts"]:
            state = G.apply_timeout(state)
            events.append(("timeout", None, None))
        else:
            player = G.step(state).players[0]  # type: ignore[union-attr]
            move = random_legal_move(r, state)
            applied = G.apply_move(state, player, move)
            assert applied.accepted, applied.reason
            state = applied.state
            events.append(("move", player, move))
        assert sum(state["stacks"].values()) + pot_now(state) == TOTAL
        assert min(state["stacks"].values()) >= 0
        states.append(state)
    assert_conserved(state)
    return events, states


styles = st.fixed_dictionaries(
    {
        "rng": st.integers(0, 2**32),
        "dmo": st.sampled_from([A, B]),
        "timeouts": st.sampled_from([0.0, 0.2, 0.5, 1.0]),
        "forbidden": st.sampled_from([0.0, 0.3]),
    }
)
seeds = st.integers(0, 2**31)


def replay(seed: int, dmo: str, events: list[Event], json_round_trip_at: int | None = None) -> State:
    state = start(seed, dmo)
    for i, (kind, player, move) in enumerate(events):
        if i == json_round_trip_at:
            state = json.loads(json.dumps(state))
        if kind == "timeout":
            state = G.apply_timeout(state)
        else:
            assert player is not None and move is not None
            applied = G.apply_move(state, player, move)
            assert applied.accepted
            state = applied.state
    return state


def own_card_variants(state: State, player: str) -> list[State]:
    """States that differ only in what ``player`` may not know: their own card of the open
    hand (every value), and the order of the undealt cards. (Shallow copies: views and
    forms never change a state.)"""
    if state["cards"] is None:
        return []
    variants = [{**state, "cards": {**state["cards"], player: card}} for card in CARD_VALUES]
    variants.append({**state, "deck": {**state["deck"], "cards": state["deck"]["cards"][::-1]}})
    return variants


def public_variants(state: State) -> list[State]:
    """States that differ only in what the public may not know: both cards of the open hand."""
    if state["cards"] is None:
        return []
    return [{**state, "cards": {A: a, B: b}} for a in (1, 10) for b in (1, 5)]


def sample(states: list[State], n: int) -> list[State]:
    """At most n states spread over the match, the last one included."""
    step = max(len(states) // n, 1)
    return states[::step][:n] + states[-1:]


@PROPERTY_SETTINGS
@given(seed=seeds, style=styles)
def test_random_play_terminates_and_conserves_chips(seed: int, style: dict[str, Any]) -> None:
    events, states = random_match(seed, style)
    final = states[-1]
    result = G.result(final)
    assert result is not None and G.step(final) is None
    assert sorted(result.outcome.values()) == ["loss", "win"]
    loser = next(p for p, o in result.outcome.items() if o == "loss")
    assert final["stacks"][loser] == 0 and final["carried"] == 0
    assert final["stacks"][next(p for p in (A, B) if p != loser)] == TOTAL
    for h in final["history"]:
        assert h["pot"] == h["carried_in"] + sum(h["bets"].values())
        if h["end"] != "fold":
            assert h["bets"][A] == h["bets"][B], "a showdown is always on equal bets"
        assert all(a["returned"] == 0 for a in h["actions"]), "the cap leaves no short call"


@PROPERTY_SETTINGS
@given(seed=seeds, style=styles)
def test_replay_from_the_seed_and_the_log_gives_the_same_state(seed: int, style: dict[str, Any]) -> None:
    events, states = random_match(seed, style)
    assert replay(seed, style["dmo"], events) == states[-1]


@PROPERTY_SETTINGS
@given(seed=seeds, style=styles, data=st.data())
def test_json_round_trip_mid_match_continues_identically(seed: int, style: dict[str, Any], data: Any) -> None:
    events, states = random_match(seed, style)
    at = data.draw(st.integers(0, max(len(events) - 1, 0)))
    assert replay(seed, style["dmo"], events, json_round_trip_at=at) == states[-1]
    for state in states[:: max(len(states) // 5, 1)]:
        assert json.loads(json.dumps(state)) == state


@settings(PROPERTY_SETTINGS, max_examples=60)
@given(seed=seeds, style=styles)
def test_views_and_forms_do_not_depend_on_a_players_own_card(seed: int, style: dict[str, Any]) -> None:
    _, states = random_match(seed, style)
    for state in sample(states, 15):
        public = G.view(state, None)
        json.dumps(public)
        for variant in public_variants(state):
            assert G.view(variant, None) == public
        for player in (A, B):
            view, form, standings = G.view(state, player), G.form(state, player), G.standings(state)
            json.dumps(view)
            for variant in own_card_variants(state, player):
                assert G.view(variant, player) == view
                assert G.form(variant, player) == form
                assert G.standings(variant) == standings


@PROPERTY_SETTINGS
@given(seed=seeds, style=styles)
def test_the_form_parses_to_a_legal_move(seed: int, style: dict[str, Any]) -> None:
    _, states = random_match(seed, style)
    for state in sample(states, 15):
        step = G.step(state)
        if step is None:
            continue
        player = step.players[0]
        (move,) = G.parse(state, player, G.form(state, player)).moves
        assert G.apply_move(state, player, move).accepted
        other = B if player == A else A
        assert G.form(state, other) == ""


@PROPERTY_SETTINGS
@given(seed=seeds, style=styles)
def test_step_keys_are_unique_and_name_the_player_to_act(seed: int, style: dict[str, Any]) -> None:
    _, states = random_match(seed, style)
    keys = [G.step(s).key for s in states if G.step(s) is not None]  # type: ignore[union-attr]
    assert len(keys) == len(set(keys))
    for state in states:
        step = G.step(state)
        if step is not None:
            assert step.kind == "turn" and not step.simultaneous
            assert step.players == (state["betting"]["to_act"],) == G.awaiting(state)
