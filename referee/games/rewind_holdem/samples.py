"""For tests, demos and automated players of Rewind Hold'em: a few legal moves of the player
to act, and states that differ only in what a player may not know yet (the conformance
suite, ``tests/games/test_conformance.py``)."""

from __future__ import annotations

import random

from referee.games import betting
from referee.games.base import Move, State, clone, require_player
from referee.games.rewind_holdem.play import dealt_cards
from referee.games.rewind_holdem.rules import COPIES, DECK_SIZE, VALUES, rewind_problem


def sample_moves(state: State, player: str, rnd: random.Random) -> list[Move]:
    """A few legal moves of the player to act (each with REWIND now and then, when it
    is allowed); [] for anyone else and once the match is over."""
    if state["result"] is not None or state["table"]["betting"]["to_act"] != player:
        return []
    legal = betting.legal_actions(state["table"]["betting"], player)
    assert legal is not None
    actions: list[betting.Action] = [{"action": "check" if legal["check"] else "call"}, {"action": "fold"}]
    if legal["raise"] is not None:
        r = legal["raise"]
        actions.append({"action": "raise", "by": rnd.randint(r["min"], r["max"])})
        actions.append({"action": "raise", "to": rnd.randint(r["to_min"], r["to_max"])})
    actions.append({"action": "all-in"})
    may_rewind = rewind_problem(state, player) is None
    return [{**a, "rewind": may_rewind and rnd.random() < 0.5, "turn": None} for a in actions]


def hidden_variants(state: State, player: str, rnd: random.Random) -> list[State]:
    """A few states that differ from ``state`` only in what ``player`` may not know
    yet: their own card of the round in play, each time a value the deck it was
    dealt from could still have held (every other card dealt from that deck counted).
    Nothing else is hidden from a player; once the match is over, nothing at all."""
    require_player(state, player)
    if state["table"] is None:
        return []
    possible = [v for v in possible_own_cards(state, player) if v != state["table"]["hidden"][player]]
    variants = []
    for value in rnd.sample(possible, min(3, len(possible))):
        new = clone(state)
        new["table"]["hidden"][player] = value
        variants.append(new)
    return variants


def possible_own_cards(state: State, player: str) -> list[int]:
    """The values ``player``'s card of the round in play could have, as far as the cards
    dealt tell: those the deck it came from still held a copy of."""
    dealt = [card for card, _ in dealt_cards(state)]
    own = len(dealt) - 4 + state["players"].index(player)
    start = len(dealt) - state["shoe"]["drawn"]  # where the deck in use began
    while start > own:
        start -= DECK_SIZE
    deck = dealt[max(start, 0) : start + DECK_SIZE]
    deck.pop(own - max(start, 0))
    return [v for v in range(1, VALUES + 1) if deck.count(v) < COPIES]
