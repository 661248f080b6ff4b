"""Indian Poker's rule text as numbers and pure functions, each named for its rule (rule text:
``seeds/indian-poker.txt``; the rulings: ``docs/games/indian-poker.md``). The betting itself
is :mod:`referee.games.betting`; the match as it runs, :mod:`referee.games.indian_poker.play`.
"""

from __future__ import annotations

from typing import Any

from referee.games.base import rng

NAME = "indian-poker"

# Rule text 2 / ruling: two players with 25 chips each.
STARTING_CHIPS = 25
# Rule text 2: a 20-card deck, each value 1..10 twice; dealt without replacement,
# reshuffled when all 20 cards have been played.
CARD_VALUES = tuple(range(1, 11))
COPIES = 2
DECK = tuple(sorted(CARD_VALUES * COPIES))
# Rule text 3 and 10: an ante of 1 chip each, raised by 1 every 10 hands.
FIRST_ANTE = 1
HANDS_PER_ANTE = 10
# Rule text 9: folding while holding a 10 costs 10 chips to the opponent.
TEN = 10
TEN_FOLD_PENALTY = 10
# Ruling 10: a turn lasts 24 hours by default (the organizer configures it per kind).
TURN_HOURS = 24.0
POT = "pot"  # the pot's account in the transfers


def ante_for(hand_no: int) -> int:
    """Rule text 10: 1 chip in hands 1-10, 2 in hands 11-20, and so on. Ruling: hands
    without an ante (after a tie) still count toward these steps."""
    return FIRST_ANTE + (hand_no - 1) // HANDS_PER_ANTE


def last_hand_of_ante(hand_no: int) -> int:
    """The last hand played at the ante of ``hand_no`` (10, 20, ...)."""
    return ((hand_no - 1) // HANDS_PER_ANTE + 1) * HANDS_PER_ANTE


def hand_ante(hand_no: int, previous: dict[str, Any] | None) -> int:
    """Rule text 6: after a tied showdown the next hand has no ante."""
    if previous is not None and previous["tie"]:
        return 0
    return ante_for(hand_no)


def first_to_act(dmo: str, previous: dict[str, Any] | None) -> str:
    """Rule text 7: hand 1 the DMO; afterwards the previous hand's loser; ruling: after a
    tie, the same player as in the tied hand."""
    if previous is None:
        return dmo
    return str(previous["first"] if previous["tie"] else previous["loser"])


def showdown_winner(cards: dict[str, int]) -> str | None:
    """Rule text 5: the higher card wins; equal cards tie (None)."""
    (a, card_a), (b, card_b) = cards.items()
    if card_a == card_b:
        return None
    return a if card_a > card_b else b


def ten_fold_penalty(card: int, stack: int) -> int:
    """Rule text 9: folding a 10 pays 10 chips to the opponent; ruling: or all the folder
    holds (behind, after the fold), when that is less."""
    return min(TEN_FOLD_PENALTY, stack) if card == TEN else 0


def is_out(stack: int, carried: int) -> bool:
    """Rule text 11: a player with no chips loses; ruling: a player with 0 chips behind
    but chips in a pot carried over from a tie is not out."""
    return stack == 0 and carried == 0


def shuffled_deck(seed: int, number: int) -> list[int]:
    """The ``number``-th shuffle of the 20 cards (1, 2, ...), from the match seed."""
    cards = list(DECK)
    rng(seed, "deck", number).shuffle(cards)
    return cards


def step_key(hand_no: int, action_no: int) -> str:
    return f"hand-{hand_no}-{action_no}"


def turn_title(hand_no: int, action_no: int) -> str:
    return f"Hand {hand_no}, action {action_no}"
