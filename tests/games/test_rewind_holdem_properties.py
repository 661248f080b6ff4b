"""Property tests for Rewind Hold'em: random matches (random legal commands, REWIND when
allowed, timeouts and the odd forbidden move), from random seeds and either DMO.

A random match plays RANDOM_STEPS random steps, then both players shove (the player to
act goes ALL IN or calls) so that every match ends; it must end within MAX_STEPS.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games.base import MATCH_CHIPS, Move, State
from tests.games.test_rewind_holdem import TOTAL, A, B, G, assert_transfers_match

Event = tuple[str, str, Move | None]  # ("move", player, move) or ("timeout", player, None)

PROPERTY_SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RANDOM_STEPS = 40
MAX_STEPS = 1000
seeds = st.integers(0, 2**32)
dmos = st.sampled_from([A, B])


def draw_move(data: st.DataObject, state: State, player: str) -> Move:
    choices = G.view(state, player)["choices"]
    options: list[Move] = [{"action": "call"}, {"action": "fold"}, {"action": "all-in"}]
    if choices["check"]:
        options.append({"action": "check"})
    if choices["raise"] is not None:
        r = choices["raise"]
        options.append({"action": "raise", "by": data.draw(st.integers(r["min"], r["max"]), label="by")})
        options.append({"action": "raise", "to": data.draw(st.integers(r["to_min"], r["to_max"]), label="to")})
    chosen = dict(data.draw(st.sampled_from(options), label="action"))
    chosen["rewind"] = choices["rewind"] is not None and data.draw(st.booleans(), label="rewind")
    chosen["turn"] = None
    return chosen


def shove(state: State, player: str) -> Move:
    """Both players all in: ends the match within a few rounds."""
    choices = G.view(state, player)["choices"]
    return {"action": "all-in" if choices["to_call"] == 0 else "call", "rewind": False, "turn": None}


def forbidden_moves(state: State, player: str) -> list[tuple[str, Move]]:
    """Moves that must be rejected now, each with the player who sends it."""
    choices = G.view(state, player)["choices"]
    other = B if player == A else A
    moves: list[tuple[str, Move]] = [
        (other, {"action": "call"}),  # not their turn
        (player, {"action": "call", "turn": "round 0 turn 9"}),  # a stale turn
    ]
    top = choices["raise"]["max"] if choices["raise"] is not None else 0
    moves.append((player, {"action": "raise", "by": top + 1}))  # more than the cap
    if choices["rewind"] is None:
        moves.append((player, {"action": "call", "rewind": True}))
    if not choices["check"]:
        moves.append((player, {"action": "check"}))
    return moves


def check_invariants(before: State, after: State, key: str, seen: set[str]) -> None:
    assert sum(after["chips"].values()) + after["pot"] == TOTAL
    assert min(after["chips"].values()) >= 0 and after["pot"] >= 0
    assert_transfers_match(after)
    new = after["transfers"][len(before["transfers"]) :]
    assert after["transfers"][: len(before["transfers"])] == before["transfers"]
    for t in new:
        assert t["currency"] == MATCH_CHIPS and t["amount"] > 0 and t["step"] == key
        assert {t["from"], t["to"]} <= {A, B, "pot"} and t["from"] != t["to"]
    step = G.step(after)
    assert (step is None) == (G.result(after) is not None)
    if step is not None:
        assert step.key not in seen, "step keys are unique within the match"
        assert after["chips"] == after["table"]["betting"]["stacks"]
        assert after["pot"] == after["table"]["betting"]["carried"] + sum(after["table"]["betting"]["bets"].values())
    else:
        assert after["pot"] == 0 and sorted(after["chips"].values()) == [0, TOTAL]


def random_match(data: st.DataObject, seed: int, dmo: str) -> tuple[list[Event], list[State], State]:
    """A random match: its events, every state it passed through (the first is the
    initial state) and the final state; checks the invariants after every step."""
    state = G.initial_state(seed, [A, B], {"dmo": dmo})
    states, events = [state], []
    seen: set[str] = set()
    check_invariants({"transfers": []}, state, "start", seen)
    for n in range(MAX_STEPS):
        step = G.step(state)
        if step is None:
            break
        seen.add(step.key)
        player = step.players[0]
        random_phase = n < RANDOM_STEPS
        if random_phase and data.draw(st.integers(0, 5), label="forbidden?") == 0:
            who, bad = data.draw(st.sampled_from(forbidden_moves(state, player)), label="forbidden")
            applied = G.apply_move(state, who, bad)
            assert not applied.accepted and not applied.changed and applied.state == state and applied.reason
        if random_phase and data.draw(st.integers(0, 7), label="timeout?") == 0:
            after = G.apply_timeout(state)
            events.append(("timeout", player, None))
        else:
            mv = draw_move(data, state, player) if random_phase else shove(state, player)
            applied = G.apply_move(state, player, mv)
            assert applied.accepted, applied.reason
            after = applied.state
            events.append(("move", player, mv))
        check_invariants(state, after, step.key, seen)
        state = after
        states.append(state)
    assert G.step(state) is None, f"the match did not end within {MAX_STEPS} steps"
    return events, states, state


def replay(seed: int, dmo: str, events: list[Event], json_round_trip_at: int | None = None) -> State:
    state = G.initial_state(seed, [A, B], {"dmo": dmo})
    for i, (kind, player, mv) in enumerate(events):
        if i == json_round_trip_at:
            state = json.loads(json.dumps(state))
        if kind == "timeout":
            state = G.apply_timeout(state)
        else:
            assert mv is not None
            applied = G.apply_move(state, player, mv)
            assert applied.accepted, applied.reason
            state = applied.state
    return state


def own_card_variants(state: State, player: str) -> list[State]:
    """States that differ from ``state`` only in ``player``'s own hidden card this round."""
    if state["table"] is None:
        return []
    variants = []
    for card in range(1, 11):
        if card != state["table"]["hidden"][player]:
            variant = copy.deepcopy(state)
            variant["table"]["hidden"][player] = card
            variants.append(variant)
    return variants


def hidden_variants(state: State) -> list[State]:
    """States that differ only in the hidden cards of the round in play (both players)."""
    return [v for p in (A, B) for v in own_card_variants(state, p)] + [
        w for v in own_card_variants(state, A)[:2] for w in own_card_variants(v, B)[:2]
    ]


@PROPERTY_SETTINGS
@given(data=st.data(), seed=seeds, dmo=dmos)
def test_random_matches_end_and_conserve_the_50_chips(data: st.DataObject, seed: int, dmo: str) -> None:
    events, states, final = random_match(data, seed, dmo)
    result = G.result(final)
    assert result is not None
    assert sorted(result.outcome.values()) == ["loss", "win"] and sum(result.victory_points.values()) == 1.0
    winner = next(p for p, o in result.outcome.items() if o == "win")
    assert final["chips"][winner] == TOTAL and result.scores["chips"] == final["chips"]
    assert [r["round"] for r in final["history"]] == list(range(1, final["round"] + 1))
    for record in final["history"]:
        assert sum(record["chips"].values()) + record["carry_out"] == TOTAL
        assert record["hidden"][A] in range(1, 11) and record["hidden"][B] in range(1, 11)


@PROPERTY_SETTINGS
@given(data=st.data(), seed=seeds, dmo=dmos)
def test_replay_from_the_seed_and_the_moves_is_identical(data: st.DataObject, seed: int, dmo: str) -> None:
    events, states, final = random_match(data, seed, dmo)
    assert replay(seed, dmo, events) == final
    for i in data.draw(st.lists(st.integers(0, len(events)), max_size=3), label="prefixes"):
        assert replay(seed, dmo, events[:i]) == states[i]


@PROPERTY_SETTINGS
@given(data=st.data(), seed=seeds, dmo=dmos)
def test_json_round_trip_mid_match_continues_identically(data: st.DataObject, seed: int, dmo: str) -> None:
    events, _, final = random_match(data, seed, dmo)
    at = data.draw(st.integers(0, len(events)), label="round trip at")
    assert replay(seed, dmo, events, json_round_trip_at=at) == final
    assert json.loads(json.dumps(final)) == final


@settings(PROPERTY_SETTINGS, max_examples=25)
@given(data=st.data(), seed=seeds, dmo=dmos)
def test_a_players_own_card_changes_nothing_they_see(data: st.DataObject, seed: int, dmo: str) -> None:
    """Views and forms are the same whatever the viewer's own card this round; the public
    view is the same whatever both cards are."""
    _, states, _ = random_match(data, seed, dmo)
    for state in states[:: max(1, len(states) // 6)] + states[-1:]:
        public = G.view(state, None)
        json.dumps(public)
        for player in (A, B):
            view, form = G.view(state, player), G.form(state, player)
            json.dumps(view)
            for variant in own_card_variants(state, player) + G.hidden_variants(state, player, random.Random(seed)):
                assert G.view(variant, player) == view
                assert G.form(variant, player) == form
                assert G.step(variant) == G.step(state) and G.result(variant) == G.result(state)
        for variant in hidden_variants(state):
            assert G.view(variant, None) == public
            assert G.standings(variant) == G.standings(state)


@PROPERTY_SETTINGS
@given(data=st.data(), seed=seeds, dmo=dmos)
def test_the_form_is_always_an_accepted_move(data: st.DataObject, seed: int, dmo: str) -> None:
    _, states, _ = random_match(data, seed, dmo)
    for state in states:
        step = G.step(state)
        if step is None:
            continue
        player = step.players[0]
        moves = G.parse(state, player, G.form(state, player)).moves
        assert len(moves) == 1 and G.apply_move(state, player, moves[0]).accepted
        other = B if player == A else A
        assert G.form(state, other) == ""


@PROPERTY_SETTINGS
@given(data=st.data(), seed=seeds, dmo=dmos)
def test_rounds_follow_the_rules(data: st.DataObject, seed: int, dmo: str) -> None:
    """Who starts, the pot and the penalties of every finished round, recomputed from its record."""
    _, _, final = random_match(data, seed, dmo)
    first: Any = dmo
    for record in final["history"]:
        assert record["first"] == first
        assert record["antes"] == {A: 1, B: 1}  # R2: the ante is 1 in every round, all-in antes included
        assert record["pot"] == record["carried"] + sum(record["bets"].values())
        kinds = [p["kind"] for p in record["payments"]]
        if record["end"] == "fold":
            assert record["stored"] == {"owner": record["folder"], "cards": record["open"], "round": record["round"]}
            assert "rewind" not in kinds
        else:
            assert record["stored"] is None and "fold penalty" not in kinds
            assert ("rewind" in kinds) == (record["rewind"] is not None and not record["tie"])
        if record["rewind"] is not None:
            assert record["open"] == record["rewind"]["cards"] and record["rewind"]["by"] == record["first"]
            assert record["actions"][0]["rewind"] and record["rewind"]["pot"] == 2 + record["carried"]
        assert not any(a["rewind"] for a in record["actions"][1:])
        for pay in record["payments"]:  # capped at what the payer holds: paid in full, or all they had
            assert 0 <= pay["paid"] <= pay["owed"]
            assert pay["paid"] == pay["owed"] or record["chips"][pay["from"]] == 0
        first = record["first"] if record["tie"] else record["loser"]
