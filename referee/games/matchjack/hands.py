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

Pots (RULINGS, "Pots", as amended after review): every chip a seat puts in is a
contribution, antes included, and antes are dead money. :func:`uncalled_bet` finds the one
thing that goes back, a bet nobody called; :func:`side_pots` cuts the rest into a main pot
and side pots at the levels where a human still in went all in (the bots contest every
pot); :func:`award` gives each pot to its best-ranked contestants: a tie splits it once,
the remainder of a split is discarded, and a share won by an automated player is discarded
too (a human tied with a bot keeps their share).
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
    eligible: tuple[str, ...]  # who contests it: the humans still in who reached its level, then the bots


def uncalled_bet(contributions: Mapping[str, int], bets: Mapping[str, int], live: Iterable[str]) -> tuple[str, int]:
    """The bet nobody called (RULINGS, "Pots": "Only a bet nobody called goes back to its
    bettor"): what the human still in who put in the most put in above everyone else, but
    never more than they bet in the betting rounds, since antes are dead money and never go
    back. Returns (player, chips), chips 0 when nothing goes back. ``contributions`` are
    every seat's chips in the hand (antes and bets, folded seats and bots included), ``bets``
    the humans' chips put in by betting alone."""
    ahead = sorted(live, key=lambda p: -contributions[p])
    if not ahead:
        return "", 0
    top = ahead[0]
    others = max((n for seat, n in contributions.items() if seat != top), default=0)
    return top, max(0, min(contributions[top] - others, bets.get(top, 0)))


def side_pots(
    contributions: Mapping[str, int], live: Iterable[str], all_in: Iterable[str], bots: Sequence[str]
) -> list[Pot]:
    """The pots of a showdown, lowest level first (RULINGS, "Pots"): side pots form only at
    the levels where a human still in went all in, and the top level is the most anyone put
    in. Each pot holds every seat's chips between its level and the one below, folded seats'
    and the bots' included (a bot's ante lies in the lowest pot). It is contested by the
    humans still in who reached its level and by the bots, who anted and contest every pot;
    a pot above every human still in (a folded player's chips over an all-in player's
    level) is the bots' alone. Levels with the same contestants make one pot.

    ``contributions``: every seat's chips in the hand after any uncalled bet went back;
    ``live``: the humans still in; ``all_in``: the humans with no chips behind."""
    still = [p for p in contributions if p in set(live)]
    tops = {contributions[p] for p in still if p in set(all_in)}
    top = max(contributions.values(), default=0)
    levels = sorted({n for n in tops if 0 < n < top} | ({top} if top > 0 else set()))
    pots: list[Pot] = []
    below = 0
    for level in levels:
        amount = sum(min(n, level) - min(n, below) for n in contributions.values() if n > below)
        eligible = tuple(p for p in still if contributions[p] >= level) + tuple(bots)
        if pots and pots[-1].eligible == eligible:
            pots[-1] = Pot(pots[-1].amount + amount, eligible)
        elif amount:
            pots.append(Pot(amount, eligible))
        below = level
    return pots


@dataclass(frozen=True)
class Awarded:
    won: dict[str, int]  # human seat -> chips won from the pots
    discarded: int  # split remainders, shares won by automated players, pots nobody could win
    winners: list[tuple[str, ...]]  # per pot, the seats that shared it


def award(pots: Sequence[Pot], ranks: Mapping[str, tuple[int, int] | None], bots: Iterable[str] = ()) -> Awarded:
    """Each pot to its best-ranked contestants (RULINGS): an exact tie splits it evenly
    (once per pot), the remainder of the split is discarded, and any share an automated
    player wins is discarded (a human tied with a bot keeps their share). A pot whose
    contestants all bust is discarded."""
    automated = set(bots)
    won: dict[str, int] = {}
    discarded = 0
    winners: list[tuple[str, ...]] = []
    for pot in pots:
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
