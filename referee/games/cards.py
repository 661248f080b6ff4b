"""A shoe of numbered cards for the duels (Rewind Hold'em; usable by Indian Poker).

A deck holds ``copies`` cards of each value ``1..values``. Deck ``n`` of a match is
shuffled by ``rng(seed, label, n)`` (:func:`referee.games.base.rng`), so the state
needs to keep only *where* the shoe stands, ``{"deck": n, "drawn": k}`` (deck number,
cards already drawn from it), never the order of the cards still to come: a view can
never leak them and the seed rebuilds them exactly. When a deck runs out, even in the
middle of a deal, the deal continues from deck ``n + 1``, a fresh, newly shuffled
full deck (the cards of the old deck, seen or not, are gone).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from referee.games.base import rng

Shoe = dict[str, int]  # {"deck": number of the deck in use (0, 1, ...), "drawn": cards drawn from it}


def new_shoe() -> Shoe:
    return {"deck": 0, "drawn": 0}


@lru_cache(maxsize=256)
def _deck(seed: int, label: str, number: int, values: int, copies: int) -> tuple[int, ...]:
    cards = [value for value in range(1, values + 1) for _ in range(copies)]
    rng(seed, label, number).shuffle(cards)
    return tuple(cards)


def deck(seed: int, number: int, *, values: int, copies: int, label: str = "deck") -> list[int]:
    """Deck ``number`` of the match, in the order its cards are drawn."""
    return list(_deck(seed, label, number, values, copies))


def draw(
    seed: int, shoe: Shoe, count: int, *, values: int, copies: int, label: str = "deck"
) -> tuple[list[int], Shoe, list[dict[str, Any]]]:
    """Draw ``count`` cards from where ``shoe`` stands; returns the cards, where the shoe
    stands afterwards, and one note per fresh deck begun during the draw
    (``{"deck": n, "after": i}``: deck n was begun after the i-th card of this draw)."""
    size = values * copies
    number, drawn = shoe["deck"], shoe["drawn"]
    cards: list[int] = []
    fresh: list[dict[str, Any]] = []
    while len(cards) < count:
        if drawn >= size:
            number, drawn = number + 1, 0
            fresh.append({"deck": number, "after": len(cards)})
        order = _deck(seed, label, number, values, copies)
        take = min(count - len(cards), size - drawn)
        cards.extend(order[drawn : drawn + take])
        drawn += take
    return cards, {"deck": number, "drawn": drawn}, fresh


def left(shoe: Shoe, *, values: int, copies: int) -> int:
    """Cards still to be drawn from the deck in use."""
    return values * copies - shoe["drawn"]
