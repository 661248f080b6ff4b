"""MatchJack's catalogue of automated players' rules (``referee.games.matchjack.bots``):
each rule on hands worked out by hand, and the draw of four distinct rules."""

from __future__ import annotations

import random

import pytest

from referee.games.base import rng
from referee.games.matchjack.bots import CATALOGUE, RULES, act, draw_rules

UP, DOWN = True, False


def hand(*cards: tuple[str, bool]) -> list[tuple[str, bool]]:
    return list(cards)


CASES = [
    # rule, hand, pile card, action
    ("hit-under-15", hand(("R3", UP), ("B9", DOWN)), "G5", {"action": "hit"}),  # worth 12
    ("hit-under-15", hand(("R6", UP), ("B9", DOWN)), "G5", {"action": "new"}),  # worth 15
    ("hit-under-18", hand(("R6", UP), ("B9", DOWN)), "G5", {"action": "hit"}),
    ("hit-under-18", hand(("R2", UP), ("R4", DOWN)), "G5", {"action": "new"}),  # matching: worth 18
    ("colour-keeper", hand(("R6", UP), ("B9", DOWN)), "B2", {"action": "swap", "card": "up"}),
    ("colour-keeper", hand(("B6", UP), ("B9", DOWN)), "B2", {"action": "new"}),  # the up card matches already
    ("colour-keeper", hand(("R6", UP), ("B9", DOWN)), None, {"action": "new"}),  # no pile card
    ("high-swapper", hand(("R6", UP), ("B2", DOWN)), "G9", {"action": "swap", "card": "down"}),  # +7 over +3
    # G11 tops the down B9 by 2 (R10 G11: 21) and the up R10 by 1 (G11 B9: 20): the larger lift
    ("high-swapper", hand(("R10", UP), ("B9", DOWN)), "G11", {"action": "swap", "card": "down"}),
    ("high-swapper", hand(("R10", UP), ("B9", DOWN), ("Y2", UP)), "G11", {"action": "new"}),  # every swap busts
    ("low-drawer", hand(("R6", UP), ("B2", DOWN)), "G9", {"action": "draw", "position": 2}),  # worth 8
    ("low-drawer", hand(("R6", UP), ("B7", DOWN)), "G9", {"action": "new"}),  # worth 13
    ("twenty-one-hunter", hand(("R10", UP), ("B4", DOWN)), "G11", {"action": "swap", "card": "down"}),
    ("twenty-one-hunter", hand(("R3", UP), ("B4", DOWN)), "G1", {"action": "hit"}),  # worth 7
    ("twenty-one-hunter", hand(("R8", UP), ("B4", DOWN)), "G1", {"action": "new"}),
    ("odd-hitter", hand(("R8", UP), ("B5", DOWN)), None, {"action": "hit"}),
    ("odd-hitter", hand(("R8", UP), ("B4", DOWN)), None, {"action": "new"}),
    ("never-moves", hand(("R1", UP), ("B1", DOWN)), "G11", {"action": "new"}),
    ("down-swapper", hand(("R8", UP), ("B4", DOWN)), "G5", {"action": "swap", "card": "down"}),
    ("down-swapper", hand(("R3", UP), ("B6", DOWN)), "G5", {"action": "hit"}),  # worth 9
    ("down-swapper", hand(("R8", UP), ("B6", DOWN)), "G5", {"action": "new"}),
    ("bust-drawer", hand(("R10", UP), ("B9", DOWN), ("Y5", UP)), "G5", {"action": "draw", "position": 1}),
    ("bust-drawer", hand(("R10", UP), ("R9", DOWN), ("R5", UP)), "G5", {"action": "new"}),  # matching: no bust
]


@pytest.mark.parametrize(("rule", "cards", "pile", "expected"), CASES)
def test_each_rule(rule, cards, pile, expected) -> None:
    assert act(rule, cards, pile) == expected


def test_the_catalogue_has_at_least_eight_distinct_rules_with_their_text() -> None:
    assert len(CATALOGUE) >= 8 and len(RULES) == len(CATALOGUE)
    assert all(rule.text.endswith(".") for rule in CATALOGUE)
    assert {rule for rule, *_ in CASES} == set(RULES), "every rule has a case"


def test_no_two_rules_act_alike_on_every_case() -> None:
    """A guess can tell the rules apart: on a sample of hands, every pair differs somewhere."""
    rnd = random.Random(5)
    deck = [f"{c}{v}" for c in "RBYG" for v in range(1, 12)]
    samples = []
    for _ in range(400):
        cards = rnd.sample(deck, rnd.choice([2, 2, 3]) + 1)
        pile, mine = cards[0], cards[1:]
        samples.append(([(mine[0], UP), (mine[1], DOWN), *((c, UP) for c in mine[2:])], pile))
    seen = {rule.id: [repr(rule.act(h, p)) for h, p in samples] for rule in CATALOGUE}
    ids = list(seen)
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            assert seen[a] != seen[b], (a, b)


def test_each_bot_draws_a_distinct_rule_from_the_seed() -> None:
    for seed in range(50):
        drawn = draw_rules(rng(seed, "bots"))
        assert set(drawn) == {"Alpha", "Beta", "Gamma", "Delta"}
        assert len(set(drawn.values())) == 4 and set(drawn.values()) <= set(RULES)
        assert drawn == draw_rules(rng(seed, "bots"))
    assert len({tuple(draw_rules(rng(seed, "bots")).values()) for seed in range(50)}) > 10


def test_the_docs_publish_the_catalogue() -> None:
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "games" / "matchjack.md").read_text(encoding="utf-8")
    for rule in CATALOGUE:
        assert f"| `{rule.id}` | {rule.text} |" in page
