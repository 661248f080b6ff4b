"""MatchJack's automated players: the published catalogue of action rules.

Each automated player (Alpha and Beta at the Main table, Gamma and Delta at the Lost
table) antes 1 chip, never bets, and in the action phase takes the action its secret rule
gives (RULINGS: "each a short deterministic policy over the bot's cards and the face-up
card"). At the start of a match each bot draws a distinct rule from this catalogue with
``rng(seed, "bots")`` (:func:`draw_rules`); players may guess them (``GUESS <bot> <rule
id>``), and the rules are revealed when the match ends.

A rule sees the bot's hand, in position order (each card with whether it is face up),
and the face-up pile card (None when the pile has none), and returns one action:
``{"action": "hit"}``, ``{"action": "swap", "card": "up" | "down"}`` (the bot's first
face-up card, or its face-down card, for the pile card), ``{"action": "draw",
"position": n}`` (1-based) or ``{"action": "new"}``. Ties between equal cards go to the
first position.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from referee.games.matchjack.hands import TWENTY_ONE, rank, value, worth

BOTS = {"Main": ("Alpha", "Beta"), "Lost": ("Gamma", "Delta")}

Hand = Sequence[tuple[str, bool]]  # (card, face up?) in position order
Action = dict[str, object]

HIT: Action = {"action": "hit"}
NEW: Action = {"action": "new"}


def _cards(hand: Hand) -> list[str]:
    return [card for card, _ in hand]


def _index(hand: Hand, up: bool) -> int | None:
    return next((i for i, (_, face_up) in enumerate(hand) if face_up == up), None)


def _swapped(hand: Hand, which: str, pile: str) -> list[str]:
    i = _index(hand, which == "up")
    cards = _cards(hand)
    if i is not None:
        cards[i] = pile
    return cards


def _swap(which: str) -> Action:
    return {"action": "swap", "card": which}


def _draw(position: int) -> Action:
    return {"action": "draw", "position": position}


def hit_under(limit: int) -> Callable[[Hand, str | None], Action]:
    def rule(hand: Hand, pile: str | None) -> Action:
        return HIT if worth(_cards(hand)) < limit else NEW

    return rule


def colour_keeper(hand: Hand, pile: str | None) -> Action:
    up, down = _index(hand, True), _index(hand, False)
    if pile is None or up is None or down is None:
        return NEW
    if pile[0] == hand[down][0][0] and hand[up][0][0] != pile[0]:
        return _swap("up")
    return NEW


def high_swapper(hand: Hand, pile: str | None) -> Action:
    if pile is None:
        return NEW
    best: tuple[int, str] | None = None
    for which in ("up", "down"):
        i = _index(hand, which == "up")
        if i is None or value(pile) <= value(hand[i][0]):
            continue
        if rank(_swapped(hand, which, pile)) is None:
            continue  # would bust
        lift = value(pile) - value(hand[i][0])
        if best is None or lift > best[0]:
            best = (lift, which)
    return NEW if best is None else _swap(best[1])


def low_drawer(hand: Hand, pile: str | None) -> Action:
    cards = _cards(hand)
    if worth(cards) > 12:
        return NEW
    lowest = min(range(len(cards)), key=lambda i: (value(cards[i]), i))
    return _draw(lowest + 1)


def twenty_one_hunter(hand: Hand, pile: str | None) -> Action:
    if pile is not None:
        for which in ("up", "down"):
            if _index(hand, which == "up") is not None and worth(_swapped(hand, which, pile)) == TWENTY_ONE:
                return _swap(which)
    return HIT if worth(_cards(hand)) <= 10 else NEW


def odd_hitter(hand: Hand, pile: str | None) -> Action:
    return HIT if worth(_cards(hand)) % 2 else NEW


def never_moves(hand: Hand, pile: str | None) -> Action:
    return NEW


def down_swapper(hand: Hand, pile: str | None) -> Action:
    down = _index(hand, False)
    if pile is not None and down is not None and value(pile) > value(hand[down][0]):
        return _swap("down")
    return HIT if worth(_cards(hand)) < 12 else NEW


def bust_drawer(hand: Hand, pile: str | None) -> Action:
    cards = _cards(hand)
    if rank(cards) is not None:
        return NEW
    highest = max(range(len(cards)), key=lambda i: (value(cards[i]), -i))
    return _draw(highest + 1)


@dataclass(frozen=True)
class Rule:
    id: str
    text: str  # the rule as published (docs/games/matchjack.md)
    act: Callable[[Hand, str | None], Action]


CATALOGUE: tuple[Rule, ...] = (
    Rule("hit-under-15", "HIT while the hand is worth less than 15, else NEW.", hit_under(15)),
    Rule("hit-under-18", "HIT while the hand is worth less than 18, else NEW.", hit_under(18)),
    Rule(
        "colour-keeper",
        "SWAP UP when the pile card has the colour of the face-down card and the face-up card does not, else NEW.",
        colour_keeper,
    ),
    Rule(
        "high-swapper",
        "SWAP the card (UP or DOWN) the pile card tops by the most, if it does not bust the hand, else NEW.",
        high_swapper,
    ),
    Rule("low-drawer", "DRAW in place of the lowest card while the hand is worth 12 or less, else NEW.", low_drawer),
    Rule(
        "twenty-one-hunter",
        "SWAP UP, or else DOWN, when that makes the hand worth exactly 21; else HIT while worth 10 or less; else NEW.",
        twenty_one_hunter,
    ),
    Rule("odd-hitter", "HIT when the hand is worth an odd number, else NEW.", odd_hitter),
    Rule("never-moves", "Always NEW.", never_moves),
    Rule(
        "down-swapper",
        "SWAP DOWN when the pile card is higher than the face-down card; else HIT while worth less than 12; else NEW.",
        down_swapper,
    ),
    Rule("bust-drawer", "DRAW in place of the highest card when the hand busts, else NEW.", bust_drawer),
)
RULES = {rule.id: rule for rule in CATALOGUE}


def draw_rules(rnd: random.Random) -> dict[str, str]:
    """{bot: rule id}: four distinct rules for Alpha, Beta, Gamma and Delta."""
    bots = [bot for table in BOTS.values() for bot in table]
    return dict(zip(bots, rnd.sample([rule.id for rule in CATALOGUE], len(bots)), strict=True))


def act(rule_id: str, hand: Hand, pile: str | None) -> Action:
    """The action a bot with rule ``rule_id`` takes."""
    return RULES[rule_id].act(hand, pile)
