"""For tests, demos and automated players of Betting Minority: a few legal moves, and states
that differ only in what a seat may not know yet (the conformance suite,
``tests/games/test_conformance.py``)."""

from __future__ import annotations

import random

from referee.games.base import Move, State, clone, require_player
from referee.games.betting_minority.play import reference, step
from referee.games.betting_minority.rules import ROOMS, ROUNDS, bet_cap, bet_figures, call_amount, swap_mix


def sample_moves(state: State, player: str, rnd: random.Random) -> list[Move]:
    """A few legal moves of ``player`` now (with the Step line now and then)."""
    now = step(state)
    if now is None or player not in now.players:
        return []
    phase = state["phase"]
    moves: list[Move] = []
    if phase == "marker":
        moves = [{"action": "marker", "to": "me"}, {"action": "marker", "to": "opponent"}]
    elif phase == "send":
        if state["send"]["sent"][player] is not None:
            return []
        free = [p for p in state["participants"] if state["positions"][p] is None]
        for _ in range(3):
            moves.append({"action": "send", "participant": rnd.choice(free), "room": rnd.choice(ROOMS)})
    else:
        mine, theirs, their_total = bet_figures(state, player)
        cap = bet_cap(mine, theirs)
        if their_total == 0:
            for _ in range(2):
                moves.append({"action": rnd.choice(["bet", "raise"]), "rooms": random_split(rnd, rnd.randint(1, cap))})
        else:
            need = call_amount(mine, theirs, their_total)
            moves.append({"action": rnd.choice(["call", "bet"]), "rooms": random_split(rnd, need)})
            if cap > their_total:
                moves.append({"action": "raise", "rooms": random_split(rnd, rnd.randint(their_total + 1, cap))})
    ref = reference(state)
    return [{**m, "step": ref} if rnd.random() < 0.3 else m for m in moves]


def hidden_variants(state: State, player: str, rnd: random.Random) -> list[State]:
    """States that differ only in what ``player`` may not know yet: the entries of the
    open and later rounds (the revealed ones stay; for a participant, their own list
    stays too, and every list is re-drawn with both margins kept), and the other DM
    player's send of the open placement step (for a participant, both sends)."""
    require_player(state, player)
    if state["result"] is not None:
        return []
    variants = []
    for _ in range(2):
        new = clone(state)
        revealed = len(state["history"])
        rows = [i for i, p in enumerate(state["participants"]) if p != player]
        grid = [list(new["lists"][p]) for p in state["participants"]]
        swap_mix(grid, rows, list(range(revealed, ROUNDS)), rnd, 60)
        for i, p in enumerate(state["participants"]):
            new["lists"][p] = grid[i]
        if state["phase"] == "send":
            free = [p for p in state["participants"] if state["positions"][p] is None]
            for dm, sent in new["send"]["sent"].items():
                if sent is not None and dm != player:
                    new["send"]["sent"][dm] = {"participant": rnd.choice(free), "room": rnd.choice(ROOMS)}
        if new != state:
            variants.append(new)
    return variants


def random_split(rnd: random.Random, amount: int) -> dict[str, int]:
    """``amount`` chips on one room or split over two (each >= 1)."""
    if amount >= 2 and rnd.random() < 0.5:
        a, b = rnd.sample(ROOMS, 2)
        first = rnd.randint(1, amount - 1)
        return {room: n for room, n in sorted({a: first, b: amount - first}.items(), key=lambda kv: ROOMS.index(kv[0]))}
    return {rnd.choice(ROOMS): amount}
