"""Rewind Hold'em's rule text as numbers and pure functions, each named for its section of the
rule text (``seeds/rewind-holdem.txt``: SETUP, ROUND, HANDS, FOLD, REWIND; the rulings:
``docs/games/rewind-holdem.md``). The betting round is :mod:`referee.games.betting`; the
match as it runs, :mod:`referee.games.rewind_holdem.play`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.base import State

NAME = "rewind-holdem"

# SETUP: "a 40 card deck of 4 of each 1-10"; "each player has 25 chips".
VALUES = 10
COPIES = 4
DECK_SIZE = VALUES * COPIES
STARTING_CHIPS = 25
# ROUND: "each player bets 1 chip as ante" (ruling R2: every round, the ante never rises).
ANTE = 1
# ROUND: "1 card along with 2 open cards shared by both players".
OPEN_CARDS = 2
# BETTING: "30 seconds"; the common rulings make live seconds hours.
TURN_HOURS = 30.0
POT = "pot"  # the account of the chips in the pot (referee.games.betting.duel_type names it)


# --------------------------------------------------------------------------- hands
#
# HANDS: a hand is the player's own card and the two open cards. Classes, high to low:
# Triple, Straight, Double, High card.

TRIPLE, STRAIGHT, DOUBLE, HIGH_CARD = 3, 2, 1, 0
CLASS_NAMES = {TRIPLE: "Triple", STRAIGHT: "Straight", DOUBLE: "Double", HIGH_CARD: "High card"}


def straight_run(cards: Sequence[int]) -> tuple[int, int, int] | None:
    """The three cards in run order when they form a Straight, else None: three
    consecutive values in the cycle 1..10 where 10 and 1 are adjacent (ruling: 9-10-1
    and 10-1-2 are Straights; 8-9-10 too, and 1-2-3)."""
    values = set(cards)
    if len(values) != 3 or len(cards) != 3:
        return None
    for low in range(1, VALUES + 1):
        run = (low, low % VALUES + 1, (low + 1) % VALUES + 1)
        if values == set(run):
            return run
    return None


def hand_class(cards: Sequence[int]) -> int:
    """HANDS: Triple (3 of the same card), Straight, Double (2 of the 3 the same),
    else High card."""
    distinct = len(set(cards))
    if distinct == 1:
        return TRIPLE
    if straight_run(cards) is not None:
        return STRAIGHT
    if distinct == 2:
        return DOUBLE
    return HIGH_CARD


def hand_key(cards: Sequence[int]) -> tuple[int, ...]:
    """What a hand is compared by, greater is better: the class, then (ruling) "the
    higher card forming the hand", 1 being the lowest value: a Triple by its value; a
    Double by the paired value, then the third card; a Straight and a High card by
    their cards compared from highest to lowest (so 8-9-10 > 9-10-1 > 10-1-2 > 7-8-9
    > ... > 1-2-3)."""
    cls = hand_class(cards)
    if cls == DOUBLE:
        pair = next(v for v in cards if list(cards).count(v) == 2)
        third = next(v for v in cards if v != pair)
        return (cls, pair, third)
    return (cls, *sorted(cards, reverse=True))


def compare_hands(first: Sequence[int], second: Sequence[int]) -> int:
    """1 when ``first`` wins, -1 when ``second`` wins, 0 for an exact tie."""
    a, b = hand_key(first), hand_key(second)
    return (a > b) - (a < b)


def hand_cards(cards: Sequence[int]) -> str:
    """The cards of a hand as players read them: a Straight in run order (9-10-1),
    a Double pair first (3-3-2), otherwise from the highest down (9-5-2)."""
    run = straight_run(cards)
    if run is not None:
        return "-".join(map(str, run))
    key = hand_key(cards)
    if key[0] == DOUBLE:
        return f"{key[1]}-{key[1]}-{key[2]}"
    return "-".join(map(str, key[1:]))


def describe_hand(cards: Sequence[int]) -> str:
    """``Straight 9-10-1``, ``Double 3-3-2``, ``High card 9-5-2``, ``Triple 7-7-7``."""
    return f"{CLASS_NAMES[hand_class(cards)]} {hand_cards(cards)}"


def hand_record(hand: list[int]) -> dict[str, Any]:
    """A hand as the records and the views show it: its cards, its class and in words."""
    return {"cards": hand, "class": CLASS_NAMES[hand_class(hand)], "text": describe_hand(hand)}


# --------------------------------------------------------------------------- folds, turns, the rewind


# FOLD: "If a player folds while they have a triple or a straight, they must forfeit an
# extra 10 chips to their opponent; if they fold with a double, they must forfeit 5."
FOLD_PENALTY = {TRIPLE: 10, STRAIGHT: 10, DOUBLE: 5, HIGH_CARD: 0}


def fold_penalty(hand: Sequence[int]) -> int:
    """The extra chips a folder owes the opponent for the hand folded (before the cap
    at what the folder holds)."""
    return FOLD_PENALTY[hand_class(hand)]


def hand_of(table: dict[str, Any], player: str) -> list[int]:
    """HANDS: the player's own card and the open cards now on the table."""
    return [table["hidden"][player], *table["open"]]


def step_key(round_no: int, turn: int) -> str:
    return f"round-{round_no}-turn-{turn}"


def turn_title(round_no: int, turn: int) -> str:
    return f"Round {round_no}, turn {turn}"


def rewind_problem(state: State, player: str) -> str | None:
    """Why ``player`` may not REWIND now (None: they may). Ruling: only the player who
    starts the betting of the round, only before their first action of the round, and
    only holding the stored Rewind Cards (the pair belongs to the most recent folder)."""
    table = state["table"]
    stored = state["rewind_cards"]
    if table is None or table["betting"]["to_act"] != player:
        return "You may REWIND only on your own turn."
    if table["first"] != player:
        return f"Only {table['first']}, who starts the betting of round {table['round']}, may REWIND."
    if table["betting"]["actions"]:
        return "REWIND is allowed only before your first action of the round, and you have acted already."
    if stored is None:
        return "There are no Rewind Cards: a pair is stored only when somebody folds."
    if stored["owner"] != player:
        return (
            f"The Rewind Cards {pair_text(stored['cards'])} are {stored['owner']}'s (stored when they folded in "
            f"round {stored['round']}); you may REWIND only with Rewind Cards of your own."
        )
    return None


def pair_text(pair: Sequence[int]) -> str:
    return f"{pair[0]} and {pair[1]}"
