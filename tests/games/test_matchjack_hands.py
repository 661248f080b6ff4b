"""MatchJack's hands and pots (``referee.games.matchjack.hands``): the order of the rule
text and RULINGS, worked out by hand."""

from __future__ import annotations

import pytest

from referee.games.matchjack.hands import (
    DECK,
    Pot,
    award,
    colour,
    describe,
    rank,
    side_pots,
    uncalled_bet,
    single_colour,
    value,
    worth,
)


def test_the_deck_is_four_colours_of_one_to_eleven() -> None:
    assert len(DECK) == 44 and len(set(DECK)) == 44
    assert {colour(c) for c in DECK} == {"Red", "Blue", "Yellow", "Green"}
    assert sorted({value(c) for c in DECK}) == list(range(1, 12))


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        (["R7", "B9"], 16),
        (["R7", "R9"], 48),  # all one colour: tripled
        (["G1", "G2", "G3"], 18),
        (["G1", "G2", "Y3"], 6),
        (["R10", "R11"], 63),
    ],
)
def test_worth_is_the_sum_tripled_when_the_colours_match(cards, expected) -> None:
    assert worth(cards) == expected


def test_single_colour_needs_every_card() -> None:
    assert single_colour(["B2", "B5", "B11"]) and not single_colour(["B2", "B5", "R11"])


def test_the_order_of_hands() -> None:
    """High to low: matching cards adding to 21; any other 21 (a matching 7 tripled too);
    matching hands over 21 (higher beats lower); 20 or less (higher beats lower); bust."""
    order = [
        ["R10", "R11"],  # matching, face values add to 21 (worth 63)
        ["R10", "B11"],  # a plain 21
        ["Y3", "Y4"],  # matching, worth 21 (7 tripled): "any other hand worth 21"
        ["G9", "G11"],  # matching, worth 60
        ["G5", "G6"],  # matching, worth 33
        ["R9", "B11"],  # 20
        ["R1", "R2"],  # matching, worth 9
        ["R1", "B2"],  # 3
    ]
    ranks = [rank(cards) for cards in order]
    assert all(r is not None for r in ranks)
    assert ranks == sorted(ranks, reverse=True)
    assert rank(["R10", "B11"]) == rank(["Y3", "Y4"])  # both "worth 21": a tie
    assert len(set(ranks)) == len(ranks) - 1


def test_over_21_busts_unless_the_colours_match() -> None:
    assert rank(["R10", "B11", "G1"]) is None
    assert rank(["R10", "R11", "R2"]) is not None  # matching, worth 69: not bust
    assert rank(["R10", "R11", "R2"]) < rank(["R10", "R11"])  # face 23 is not "adding to 21"
    assert rank(["R10", "R11", "R2"]) > rank(["R9", "B11"])  # beats any hand of 20 or less


def test_describe_names_the_class() -> None:
    assert describe(["R10", "R11"]) == "R10 R11: matching cards adding to 21, worth 63"
    assert describe(["R10", "B11", "G1"]) == "R10 B11 G1: 22, bust"
    assert describe(["R9", "B11"]) == "R9 B11: worth 20"


BOTS = ("Alpha", "Beta")


def test_side_pots_form_only_at_an_all_in_humans_level() -> None:
    """a all in for 3, b and c put in 8, the bots their ante of 1: the main pot of 11 (3 each
    and the bots' 2) for all three and the bots; a side pot of 10 for b, c and the bots."""
    pots = side_pots({"a": 3, "b": 8, "c": 8, "Alpha": 1, "Beta": 1}, live=("a", "b", "c"), all_in=("a",), bots=BOTS)
    assert pots == [Pot(11, ("a", "b", "c", *BOTS)), Pot(10, ("b", "c", *BOTS))]


def test_the_bots_ante_is_no_pot_level() -> None:
    """No one all in: one pot, whatever the bots put in (RULINGS: "Levels with the same
    contestants are one pot")."""
    pots = side_pots({"a": 2, "b": 2, "c": 1, "Alpha": 1, "Beta": 1}, live=("a", "b"), all_in=(), bots=BOTS)
    assert pots == [Pot(7, ("a", "b", *BOTS))]


def test_folded_chips_stay_in_the_pots_they_reached() -> None:
    """a (all in for 2) and d folded: d's 5 lie 2 in the main pot and 3 in the side pot of
    b and c, never a's."""
    contrib = {"a": 2, "b": 5, "c": 5, "d": 5, "Alpha": 1, "Beta": 1}
    pots = side_pots(contrib, live=("a", "b", "c"), all_in=("a",), bots=BOTS)
    assert pots == [Pot(10, ("a", "b", "c", *BOTS)), Pot(9, ("b", "c", *BOTS))]


def test_a_folded_players_chips_above_an_all_in_level_are_the_bots() -> None:
    """RULINGS, "Pots": bob all in for 2, eve anted 3 and folded: eve's third chip belongs to
    the pot of those who matched it (nobody) and the bots, never to bob."""
    pots = side_pots({"bob": 2, "eve": 3, "Alpha": 1, "Beta": 1}, live=("bob",), all_in=("bob",), bots=BOTS)
    assert pots == [Pot(6, ("bob", *BOTS)), Pot(1, BOTS)]
    got = award(pots, {"bob": (0, 20), "Alpha": (0, 5), "Beta": (0, 7)}, bots=BOTS)
    assert got.won == {"bob": 6} and got.discarded == 1


def test_a_split_pot_discards_its_remainder() -> None:
    got = award([Pot(9, ("a", "b", "c"))], {"a": (0, 18), "b": (0, 18), "c": (0, 5)})
    assert got.won == {"a": 4, "b": 4} and got.discarded == 1


def test_a_bots_share_is_discarded_and_a_tied_human_keeps_theirs() -> None:
    pots = [Pot(10, ("alice", "Alpha", "bob"))]
    got = award(pots, {"alice": (2, 0), "Alpha": (2, 0), "bob": (0, 20)}, bots={"Alpha"})
    assert got.won == {"alice": 5} and got.discarded == 5
    alone = award(pots, {"alice": (0, 4), "Alpha": (1, 40), "bob": None}, bots={"Alpha"})
    assert alone.won == {} and alone.discarded == 10


def test_each_pot_goes_to_its_best_contestants() -> None:
    """a (all in) has the best hand: the main pot; the side pot goes to the best of b, c
    and the bots."""
    contrib = {"a": 3, "b": 8, "c": 8, "Alpha": 1, "Beta": 1}
    pots = side_pots(contrib, live=("a", "b", "c"), all_in=("a",), bots=BOTS)
    got = award(pots, {"a": (3, 0), "b": (0, 12), "c": (0, 19), "Alpha": (0, 2), "Beta": None}, bots=BOTS)
    assert got.won == {"a": 11, "c": 10} and got.discarded == 0
    assert got.winners == [("a",), ("c",)]


def test_only_a_bet_nobody_called_goes_back() -> None:
    """RULINGS, "Pots": antes are dead money; only a bet nobody called goes back."""
    # a lone stayer's second ante: nobody matched it, yet it is an ante: nothing goes back
    assert uncalled_bet({"a": 2, "b": 1, "c": 1, "Alpha": 1, "Beta": 1}, {"a": 0}, ["a"]) == ("a", 0)
    # a bet of 5 that b folded to: all 5 back, the antes (2 each) stay
    assert uncalled_bet({"a": 9, "b": 4, "Alpha": 1, "Beta": 1}, {"a": 5, "b": 0}, ["a"]) == ("a", 5)
    # b called 3 of it before folding to a raise: what b never matched goes back
    assert uncalled_bet({"a": 9, "b": 7, "Alpha": 1, "Beta": 1}, {"a": 5, "b": 3}, ["a"]) == ("a", 2)
    # the top two matched each other: nothing
    assert uncalled_bet({"a": 9, "b": 9, "Alpha": 1, "Beta": 1}, {"a": 5, "b": 5}, ["a", "b"])[1] == 0
    # nobody still in: nothing
    assert uncalled_bet({"a": 3, "Alpha": 1, "Beta": 1}, {"a": 0}, []) == ("", 0)


def test_a_pot_everyone_busts_is_discarded() -> None:
    got = award([Pot(6, ("a", "b"))], {"a": None, "b": None})
    assert got.won == {} and got.discarded == 6
