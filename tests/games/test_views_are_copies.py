"""Views and new states share nothing with the state they came from: a template or a
caller that changes a view cannot change a match."""

from __future__ import annotations

import json

from referee.games import GAMES

GAME = GAMES["stationary-roulette"]
ROULETTE = {"type": "roulette", "winning": "Gold", "points": {"Gold": 30, "Silver": 10, "Black": 0}}
BET = {"type": "bet", "bets": {"Gold": 20, "Silver": 20, "Black": 0}}


def played_state():
    state = GAME.initial_state(1, ["a", "b"], {"chips": {"a": 100, "b": 100}})
    for _ in range(3):
        for p in ("a", "b"):
            state = GAME.apply_move(state, p, ROULETTE).state
            if state["round"] > 0:
                state = GAME.apply_move(state, p, BET).state
        state = GAME.apply_timeout(state)
    state = GAME.apply_move(state, "a", ROULETTE).state
    return GAME.apply_move(state, "a", BET).state


def scribble(value):
    """Change every dict and list reachable from ``value``."""
    if isinstance(value, dict):
        for v in list(value.values()):
            scribble(v)
        value["scribbled"] = True
    elif isinstance(value, list):
        for v in value:
            scribble(v)
        value.append("scribbled")


def test_changing_a_view_leaves_the_state_alone():
    state = played_state()
    before = json.dumps(state, sort_keys=True)
    for player in ("a", "b", None):
        scribble(GAME.view(state, player))
    assert json.dumps(state, sort_keys=True) == before


def test_a_new_state_shares_nothing_with_the_old_one():
    state = played_state()
    before = json.dumps(state, sort_keys=True)
    scribble(GAME.apply_timeout(state))
    scribble(GAME.apply_move(state, "b", BET).state)
    assert json.dumps(state, sort_keys=True) == before
