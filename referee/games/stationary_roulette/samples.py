"""For tests, demos and automated players of Stationary Roulette: a few legal submissions,
and states that differ only in what a player may not know yet (the conformance suite,
``tests/games/test_conformance.py``)."""

from __future__ import annotations

import random
from typing import Any

from referee.games.base import Move, State, clone, opponent, require_player
from referee.games.stationary_roulette.rules import (
    BET_POINTS,
    COLOURS,
    MAX_BET_COLOURS,
    MIN_GOLD,
    MIN_SILVER,
    ROULETTE_POINTS,
    bettable,
    prepares_in,
    uses_left,
)


def sample_moves(state: State, player: str, rnd: random.Random) -> list[Move]:
    """A few legal submissions ``player`` may send now (a roulette when the round
    prepares one, a bet when there is a roulette to bet on; revisions included), []
    when there is nothing to do."""
    if state["result"] is not None or player not in state["players"]:
        return []
    moves: list[Move] = []
    if prepares_in(state["round"]):
        left = uses_left(state["roulettes"][player])
        colours = [colour for colour in COLOURS if left[colour] > 0]
        for _ in range(2):
            points = random_points(rnd)
            moves.append({"type": "roulette", "winning": rnd.choice(colours), "points": points})
    if bettable(state, player) is not None:
        moves.extend({"type": "bet", "bets": random_bet(rnd)} for _ in range(2))
    return moves


def hidden_variants(state: State, player: str, rnd: random.Random) -> list[State]:
    """A few states that differ from ``state`` only in what ``player`` may not know
    yet: the winning colour of each unsettled roulette of the opponent (the one
    ``player`` bets on, or one left over when the match ended early: of that one
    the points too, which ``player`` never saw), and, while the round is open, the
    opponent's pending roulette and bet (or whether there is one). Each is a valid
    state: roulettes obey the colour-use limit, bets the betting rules."""
    require_player(state, player)
    other = opponent(state, player)
    over = state["result"] is not None
    recorded: list[dict[str, Any] | None] = state["roulettes"][other]
    unsettled = [i for i in range(max(len(state["history"]) - 1, 0), len(recorded)) if recorded[i] is not None]
    variants = []
    for _ in range(4):
        new = clone(state)
        roulettes = new["roulettes"][other]
        for i in unsettled:
            # a colour still allowed once this roulette's own use is given back
            left = uses_left(roulettes[:i] + roulettes[i + 1 :])
            roulettes[i]["winning"] = rnd.choice([c for c in COLOURS if left[c] > 0])
            if over:
                roulettes[i]["points"] = random_points(rnd)
        pending = new["pending"][other]
        if not over and prepares_in(state["round"]):
            left = uses_left(roulettes)
            colours = [colour for colour in COLOURS if left[colour] > 0]
            pending["roulette"] = (
                None if rnd.random() < 0.3 else {"winning": rnd.choice(colours), "points": random_points(rnd)}
            )
        if not over and bettable(state, other) is not None:
            pending["bet"] = None if rnd.random() < 0.3 else random_bet(rnd)
        variants.append(new)
    return variants


def random_points(rnd: random.Random) -> dict[str, int]:
    """The points of a legal roulette (PREPARING 2b)."""
    gold = rnd.randint(MIN_GOLD, ROULETTE_POINTS - MIN_SILVER)
    return {"Gold": gold, "Silver": ROULETTE_POINTS - gold, "Black": 0}


def random_bet(rnd: random.Random) -> dict[str, int]:
    """A legal bet (GAMEPLAY 3): all 40 on one colour, or at most 40 over two colours."""
    if rnd.random() < 0.3:
        colour = rnd.choice(COLOURS)
        return {c: BET_POINTS if c == colour else 0 for c in COLOURS}
    first, second = rnd.sample(COLOURS, MAX_BET_COLOURS)
    n = rnd.randint(0, BET_POINTS)
    bet = {colour: 0 for colour in COLOURS}
    bet[first], bet[second] = n, rnd.randint(0, BET_POINTS - n)
    return bet
