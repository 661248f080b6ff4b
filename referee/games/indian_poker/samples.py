"""For tests, demos and automated players of Indian Poker: a few legal moves of the player to
act, and states that differ only in what a player may not know yet (the conformance suite,
``tests/games/test_conformance.py``)."""

from __future__ import annotations

import random

from referee.games import betting
from referee.games.base import Move, State, clone, require_player
from referee.games.indian_poker.play import step


def sample_moves(state: State, player: str, rnd: random.Random) -> list[Move]:
    """A few legal moves of the player to act: CHECK or CALL (with nothing to call
    both), FOLD, RAISE n and RAISE TO n with random legal amounts, ALL IN; now and
    then with the ``Step:`` line of the form. [] for anyone else and once over."""
    now = step(state)
    if now is None or player not in now.players:
        return []
    legal = betting.legal_actions(state["betting"], player)
    assert legal is not None
    actions: list[betting.Action] = [{"action": "call"}, {"action": "fold"}, {"action": "all-in"}]
    if legal["check"]:
        actions.append({"action": "check"})
    if legal["raise"] is not None:
        r = legal["raise"]
        actions.append({"action": "raise", "by": rnd.randint(r["min"], r["max"])})
        actions.append({"action": "raise", "to": rnd.randint(r["to_min"], r["to_max"])})
    turn = betting.turn_reference(now.title)
    return [{**a, "turn": turn} if rnd.random() < 0.5 else a for a in actions]


def hidden_variants(state: State, player: str, rnd: random.Random) -> list[State]:
    """A few states that differ from ``state`` only in what ``player`` may not know
    yet: their own card of the open hand, each time a value of the cards of this
    deck they have not seen (ruling 3, the view's ``unseen``), and the order of the
    undealt cards, which nobody knows. A new own card swaps values with an undealt
    card holding it, so the deck keeps its 20 cards, each value twice. Nothing else
    is hidden from a player; once the match is over, nothing at all."""
    require_player(state, player)
    if state["result"] is not None:
        return []
    own = state["cards"][player]
    # the values of the view's "unseen": the own card and the undealt cards
    values = sorted({own, *state["deck"]["cards"]})
    variants = []
    for value in rnd.sample(values, min(3, len(values))):
        new = clone(state)
        cards = new["deck"]["cards"]
        if value != own:
            i = rnd.choice([k for k, card in enumerate(cards) if card == value])
            cards[i], new["cards"][player] = own, value
        rnd.shuffle(cards)
        if new != state:
            variants.append(new)
    return variants
