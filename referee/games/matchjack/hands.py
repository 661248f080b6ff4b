"""MatchJack's cards, hands and pots: pure functions, no state.

Cards: 4 colours (Red, Blue, Yellow, Green) x the values 1..11, 44 in all, written
``"R7"``, ``"B11"``, ``"Y1"``, ``"G10"``.

A hand's **worth** is the sum of its values, tripled when every card has the same colour
("If all of your cards match color, your total number on the cards will triple"). Its
**rank** at the showdown, high to low (RULINGS, "MatchJack"):

1. single-colour cards whose face values add to 21 ("matching cards that add to 21 ...
   beats any normal 21");
2. any other hand worth 21 ("21 will always be the best hand");
3. single-colour hands worth over 21, the higher beating the lower ("If you go over 21
   in this case, you will not bust, and beat any hand that is 20 and lower");
4. hands worth 20 or less, the higher beating the lower;
5. hands over 21 that are not single-colour bust and cannot win.

Pots: every chip a seat puts in is a contribution; :func:`side_pots` cuts the
contributions into a main pot and side pots (a seat that went all-in competes only for
the chips every other seat matched), and :func:`award` gives each pot to its best-ranked
eligible seats: a tie splits it, the remainder of a split is discarded, and a share won by
an automated player is discarded too (a human tied with a bot keeps their share).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

COLOURS = ("Red", "Blue", "Yellow", "Green")
LETTERS = {colour[0]: colour for colour in COLOURS}
VALUES = tuple(range(1, 12))
DECK = tuple(f"{colour[0]}{value}" for colour in COLOURS for value in VALUES)  # 44 cards
TWENTY_ONE = 21
TRIPLE = 3

# the rank classes, high to low (a rank is (class, worth); a higher tuple is the better hand)
MATCHING_21 = 3
TWENTY_ONE_CLASS = 2
MATCHING_OVER = 1
UP_TO_20 = 0


def colour(card: str) -> str:
    """``"R7"`` -> ``"Red"``."""
    return LETTERS[card[0]]


def value(card: str) -> int:
    """``"R7"`` -> 7."""
    return int(card[1:])


def is_card(text: object) -> bool:
    return isinstance(text, str) and text in DECK


def single_colour(cards: Sequence[str]) -> bool:
    """Do all the cards match in colour? (A hand always holds at least two cards.)"""
    return len(cards) >= 2 and len({card[0] for card in cards}) == 1


def face_total(cards: Sequence[str]) -> int:
    return sum(value(card) for card in cards)


def worth(cards: Sequence[str]) -> int:
    """The sum of the values, tripled when every card has the same colour."""
    total = face_total(cards)
    return total * TRIPLE if single_colour(cards) else total


def rank(cards: Sequence[str]) -> tuple[int, int] | None:
    """The hand's rank at the showdown, or None when it busts (over 21, not single-colour).
    Ranks compare as tuples; equal ranks tie (and split the pot)."""
    matching, total = single_colour(cards), worth(cards)
    if matching and face_total(cards) == TWENTY_ONE:
        return (MATCHING_21, 0)
    if total == TWENTY_ONE:
        return (TWENTY_ONE_CLASS, 0)
    if total > TWENTY_ONE:
        return (MATCHING_OVER, total) if matching else None
    return (UP_TO_20, total)


def describe(cards: Sequence[str]) -> str:
    """A hand in words, for mails: ``"R10 R11: matching cards adding to 21 (worth 63)"``."""
    shown = " ".join(cards)
    r, total = rank(cards), worth(cards)
    if r is None:
        return f"{shown}: {total}, bust"
    kind = {
        MATCHING_21: "matching cards adding to 21",
        TWENTY_ONE_CLASS: "21",
        MATCHING_OVER: "matching cards over 21",
        UP_TO_20: "single colour" if single_colour(cards) else "",
    }[r[0]]
    return f"{shown}: {kind + ', ' if kind else ''}worth {total}"


# ---------------------------------------------------------------------- pots


@dataclass(frozen=True)
class Pot:
    amount: int
    eligible: tuple[str, ...]  # the seats still in the hand that put in at least this level


def side_pots(contributions: Mapping[str, int], folded: Iterable[str] = ()) -> list[Pot]:
    """The main pot and the side pots, lowest level first. Every seat's chips count toward
    the pots up to what it put in; a folded seat's chips stay in but it is eligible for
    none. A level that only one eligible seat reached is a pot of that seat alone (its
    unmatched chips come back to it through :func:`award`)."""
    out = set(folded)
    levels = sorted({n for seat, n in contributions.items() if n > 0 and seat not in out})
    pots: list[Pot] = []
    below = 0
    for level in levels:
        amount = sum(min(n, level) - min(n, below) for n in contributions.values() if n > below)
        eligible = tuple(seat for seat, n in contributions.items() if seat not in out and n >= level)
        if amount:
            pots.append(Pot(amount, eligible))
        below = level
    # chips folded seats put in above every remaining seat's level join the last pot
    rest = sum(max(0, n - below) for n in contributions.values())
    if rest:
        if pots:
            last = pots[-1]
            pots[-1] = Pot(last.amount + rest, last.eligible)
        else:
            pots.append(Pot(rest, ()))
    return pots


@dataclass(frozen=True)
class Awarded:
    won: dict[str, int]  # human seat -> chips won from the pots
    discarded: int  # split remainders, shares won by automated players, pots nobody could win
    winners: list[tuple[str, ...]]  # per pot, the seats that shared it


def award(pots: Sequence[Pot], ranks: Mapping[str, tuple[int, int] | None], bots: Iterable[str] = ()) -> Awarded:
    """Each pot to its best-ranked eligible seats (RULINGS): an exact tie splits it evenly,
    the remainder of the split is discarded, and any share an automated player wins is
    discarded. A pot only one seat is eligible for (chips nobody else matched) goes back to
    it, whatever its hand. A pot whose eligible seats all bust (or that has none) is
    discarded."""
    automated = set(bots)
    won: dict[str, int] = {}
    discarded = 0
    winners: list[tuple[str, ...]] = []
    for pot in pots:
        if len(pot.eligible) == 1:  # chips nobody else matched go back to their seat, whatever its hand
            (seat,) = pot.eligible
            if seat in automated:
                discarded += pot.amount
            else:
                won[seat] = won.get(seat, 0) + pot.amount
            winners.append(pot.eligible)
            continue
        contenders = [seat for seat in pot.eligible if ranks.get(seat) is not None]
        if not contenders:
            discarded += pot.amount
            winners.append(())
            continue
        best = max(ranks[seat] for seat in contenders)  # type: ignore[type-var]
        top = tuple(seat for seat in contenders if ranks[seat] == best)
        share, remainder = divmod(pot.amount, len(top))
        discarded += remainder
        for seat in top:
            if seat in automated:
                discarded += share
            else:
                won[seat] = won.get(seat, 0) + share
        winners.append(top)
    return Awarded(won, discarded, winners)
