"""Rewind Hold'em hands: the ranking checked exhaustively over every 3-card hand.

The expected order is written out here by hand from the rule text and the ruling
(RULINGS.md, "Rewind Hold'em": Triple > Straight > Double > High card; straights in the
cycle 1..10 with 10-1 adjacent; within a class "the higher card forming the hand" wins,
1 lowest: Triple by its value, Double by the paired value then the third card, Straight
and High card by their cards from highest to lowest, so 8-9-10 > 9-10-1 > 10-1-2 >
7-8-9 > ... > 1-2-3). It does not use the engine's code.
"""

from __future__ import annotations

import itertools

import pytest

from referee.games.rewind_holdem import (
    CLASS_NAMES,
    compare_hands,
    describe_hand,
    fold_penalty,
    hand_class,
    hand_key,
)

HIGH_TO_LOW = range(10, 0, -1)  # 10 is the highest value, 1 the lowest

# Triple: 3 of the same card, by its value.
TRIPLES = [(v, v, v) for v in HIGH_TO_LOW]
# Straight: written out from the ruling, best first.
STRAIGHTS = [
    (8, 9, 10),
    (9, 10, 1),
    (10, 1, 2),
    (7, 8, 9),
    (6, 7, 8),
    (5, 6, 7),
    (4, 5, 6),
    (3, 4, 5),
    (2, 3, 4),
    (1, 2, 3),
]
# Double: by the paired value, then the third card.
DOUBLES = [(pair, pair, third) for pair in HIGH_TO_LOW for third in HIGH_TO_LOW if third != pair]
# High card: three different values that are no straight, compared from the highest card down.
_STRAIGHT_SETS = [frozenset(s) for s in STRAIGHTS]
HIGH_CARDS = [
    (x, y, z)
    for x in HIGH_TO_LOW
    for y in HIGH_TO_LOW
    for z in HIGH_TO_LOW
    if x > y > z and frozenset((x, y, z)) not in _STRAIGHT_SETS
]  # nested loops from the top: (10, 9, 7), (10, 9, 6), ... already in descending order

CLASSES = [("Triple", TRIPLES), ("Straight", STRAIGHTS), ("Double", DOUBLES), ("High card", HIGH_CARDS)]
ORDER = [hand for _, hands in CLASSES for hand in hands]  # best first
RANK = {tuple(sorted(hand)): i for i, hand in enumerate(ORDER)}  # 0 is the best hand


def test_the_written_order_holds_every_3_card_hand_once() -> None:
    every = list(itertools.combinations_with_replacement(range(1, 11), 3))
    assert len(every) == 220
    assert sorted(tuple(sorted(h)) for h in ORDER) == sorted(every)
    assert (len(TRIPLES), len(STRAIGHTS), len(DOUBLES), len(HIGH_CARDS)) == (10, 10, 90, 110)


def test_high_cards_spot_checks() -> None:
    assert HIGH_CARDS[0] == (10, 9, 7)  # 10-9-8 is a straight
    assert HIGH_CARDS[-1] == (4, 2, 1)  # 1-2-3 is a straight
    assert HIGH_CARDS.index((10, 8, 1)) < HIGH_CARDS.index((9, 8, 6))  # a 10 beats any 9-high hand
    assert HIGH_CARDS.index((10, 3, 2)) < HIGH_CARDS.index((9, 8, 6))  # the highest card decides first
    assert (10, 2, 1) not in HIGH_CARDS and (9, 1, 10) not in HIGH_CARDS  # 10-1-2, 9-10-1 are straights
    assert (10, 9, 2) in HIGH_CARDS and (10, 8, 1) in HIGH_CARDS and (2, 10, 3) not in HIGH_CARDS


@pytest.mark.parametrize(("name", "hands"), CLASSES, ids=[name for name, _ in CLASSES])
def test_every_hand_is_in_its_class(name: str, hands: list[tuple[int, int, int]]) -> None:
    for hand in hands:
        for order in itertools.permutations(hand):
            assert CLASS_NAMES[hand_class(order)] == name, order
            assert describe_hand(order).startswith(name + " ")


def test_every_pair_of_hands_compares_as_written() -> None:
    """All 220 x 220 comparisons, each hand in every order of its cards."""
    orders = {h: list(set(itertools.permutations(h))) for h in ORDER}
    for first, second in itertools.product(ORDER, repeat=2):
        expected = (RANK[tuple(sorted(second))] > RANK[tuple(sorted(first))]) - (
            RANK[tuple(sorted(second))] < RANK[tuple(sorted(first))]
        )
        assert compare_hands(first, second) == expected, (first, second)
    for hand, perms in orders.items():
        assert {hand_key(p) for p in perms} == {hand_key(hand)}


def test_sorting_all_hands_by_the_engine_gives_the_written_order() -> None:
    every = list(itertools.combinations_with_replacement(range(1, 11), 3))
    engine = sorted(every, key=hand_key, reverse=True)
    assert engine == [tuple(sorted(h)) for h in ORDER]


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ((1, 1, 1), (8, 9, 10)),  # the lowest Triple beats the best Straight
        ((1, 2, 3), (10, 10, 9)),  # the lowest Straight beats the best Double
        ((1, 1, 2), (10, 9, 7)),  # the lowest Double beats the best High card
        ((8, 9, 10), (9, 10, 1)),
        ((9, 10, 1), (10, 1, 2)),
        ((10, 1, 2), (7, 8, 9)),
        ((2, 3, 4), (1, 2, 3)),
        ((2, 3, 3), (2, 2, 3)),  # the rule text's example: 2-2-3 loses to 2-3-3
        ((3, 3, 1), (2, 2, 10)),  # the paired value first
        ((5, 5, 9), (5, 5, 8)),  # then the third card
        ((5, 5, 2), (5, 5, 1)),  # 1 is the lowest third card
        ((10, 4, 2), (9, 8, 6)),
        ((9, 8, 2), (9, 7, 6)),
        ((9, 7, 2), (9, 7, 1)),
    ],
    ids=lambda hand: "-".join(map(str, hand)),
)
def test_ruled_comparisons(better: tuple[int, int, int], worse: tuple[int, int, int]) -> None:
    assert compare_hands(better, worse) == 1
    assert compare_hands(worse, better) == -1


@pytest.mark.parametrize(
    ("hand", "text"),
    [
        ((7, 7, 7), "Triple 7-7-7"),
        ((1, 9, 10), "Straight 9-10-1"),
        ((2, 10, 1), "Straight 10-1-2"),
        ((3, 1, 2), "Straight 1-2-3"),
        ((2, 3, 3), "Double 3-3-2"),
        ((5, 2, 9), "High card 9-5-2"),
    ],
)
def test_describe_hand(hand: tuple[int, int, int], text: str) -> None:
    assert describe_hand(hand) == text


@pytest.mark.parametrize(("name", "hands"), CLASSES, ids=[name for name, _ in CLASSES])
def test_fold_penalty_by_class(name: str, hands: list[tuple[int, int, int]]) -> None:
    """FOLD: a Triple or a Straight costs 10 extra chips, a Double 5, a High card nothing."""
    expected = {"Triple": 10, "Straight": 10, "Double": 5, "High card": 0}[name]
    assert {fold_penalty(hand) for hand in hands} == {expected}
