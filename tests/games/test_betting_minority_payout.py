"""Betting Minority: the payout phase as a pure function (ruling 11).

Every expected number here was worked out by hand from the rule text (``seeds/
betting-minority.txt``, "Payout phase") and the RULINGS reading, in the order the rule
gives: per room the winner first takes ownership of min(own chips there, opponent's chips
there) of the opponent's chips, taken from the opponent's doubled portion first; then a
player who bet X on one room and X+Y on another has X chips doubled in each of the two
rooms (a doubled chip already taken doubles for its taker); then every chip is doubled and
returned to its owner. The working is in each case's comment.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from referee.games.betting_minority import DMO, EC, ROOMS, payout

NO_WINNER = {room: None for room in ROOMS}


def winners(**won: str) -> dict[str, str | None]:
    return {**NO_WINNER, **won}


def paid(result: dict[str, Any]) -> tuple[int, int]:
    return result["paid"][EC], result["paid"][DMO]


def room_paid(result: dict[str, Any], room: str) -> tuple[int, int]:
    return result["rooms"][room]["paid"][EC], result["rooms"][room]["paid"][DMO]


# the seed's example, Red the EC and Zero the DMO, with Wei/Shu/Wu renamed Uno/Dos/Tres
SEED_EC = {"Uno": 3, "Tres": 8}
SEED_DMO = {"Uno": 4, "Dos": 7}


def test_ruling_11_the_seed_example_comes_out_46_26() -> None:
    """The seed: Red claims 3 of Zero's 4 in Uno (doubled ones, as Zero's X is 4); Red's 3
    and Zero's 4 are doubled in both their rooms; Uno then holds 6 of Red's and 8 of
    Zero's, 6 of those now Red's: Red owns 12 there, Zero 2, doubled to 24 and 4; Tres
    (8 + 3) and Dos (7 + 4) double to 22 each. Red 24 + 22 = 46, Zero 22 + 4 = 26."""
    result = payout({EC: SEED_EC, DMO: SEED_DMO}, winners(Uno=EC))
    assert paid(result) == (46, 26)
    assert room_paid(result, "Tres") == (22, 0)
    assert room_paid(result, "Dos") == (0, 22)
    assert room_paid(result, "Uno") == (24, 4)
    uno = result["rooms"]["Uno"]
    assert uno["chips"] == {EC: 3, DMO: 4}
    assert uno["doubled"] == {EC: 3, DMO: 4}
    assert (uno["claimed"], uno["claimed_doubled"]) == (3, 3)
    assert uno["owned"] == {EC: 12, DMO: 2}  # "6 of those chips belong to Red": 6 + 6
    assert result["staked"] == {EC: 11, DMO: 11}


# (name, EC placement, DMO placement, winners, (EC paid, DMO paid), {room: (claimed, of them doubled)})
CASES = [
    (
        # DMO's X is 2 (Dos 2, Uno 6). EC claims min(5, 6) = 5 in Uno: DMO's 2 doubled chips
        # first (they double to 4 for EC), then 3 plain ones. Uno: EC owns 5 + 4 + 3 = 12,
        # DMO the 1 chip left -> 24 and 2. Dos: 2 + 2 -> 8. EC 24, DMO 10.
        "claim larger than the opponent's doubled portion",
        {"Uno": 5},
        {"Uno": 6, "Dos": 2},
        winners(Uno=EC),
        (24, 10),
        {"Uno": (5, 2)},
    ),
    (
        # DMO's X is 4 (Uno 4, Dos 6). EC claims min(2, 4) = 2, both doubled ones (-> 4 for EC).
        # Uno: EC owns 2 + 4 = 6 -> 12; DMO 4 + 4 - 4 = 4 -> 8. Dos: 6 + 4 = 10 -> 20.
        # EC 12, DMO 28.
        "claim smaller than the opponent's doubled portion",
        {"Uno": 2},
        {"Uno": 4, "Dos": 6},
        winners(Uno=EC),
        (12, 28),
        {"Uno": (2, 2)},
    ),
    (
        # DMO's X is 3 (Uno 5, Dos 3). EC claims min(3, 5) = 3, exactly the 3 doubled ones
        # (-> 6). Uno: EC 3 + 6 = 9 -> 18; DMO 5 + 3 - 6 = 2 -> 4. Dos: 3 + 3 = 6 -> 12.
        # EC 18, DMO 16.
        "claim equal to the opponent's doubled portion",
        {"Uno": 3},
        {"Uno": 5, "Dos": 3},
        winners(Uno=EC),
        (18, 16),
        {"Uno": (3, 3)},
    ),
    (
        # Both on one room: nothing is doubled before the last doubling. DMO claims
        # min(2, 3) = 2 of EC's 3: DMO owns 4 -> 8, EC 1 -> 2.
        "bets on one room each, the smaller bet wins",
        {"Dos": 3},
        {"Dos": 2},
        winners(Dos=DMO),
        (2, 8),
        {"Dos": (2, 0)},
    ),
    (
        # One room each, different rooms, no winner: each bet doubles once. 3 -> 6, 2 -> 4.
        "bets on one room each, different rooms",
        {"Uno": 3},
        {"Tres": 2},
        NO_WINNER,
        (6, 4),
        {},
    ),
    (
        # EC bet X = X + Y = 2: 2 doubled in each room. DMO claims min(3, 2) = 2 of EC's Uno
        # chips, the doubled ones (-> 4). Uno: DMO 3 + 4 = 7 -> 14; EC 2 + 2 - 4 = 0.
        # Dos: 2 + 2 = 4 -> 8. EC 8, DMO 14.
        "X equal to X+Y, claimed",
        {"Uno": 2, "Dos": 2},
        {"Uno": 3},
        winners(Uno=DMO),
        (8, 14),
        {"Uno": (2, 2)},
    ),
    (
        # X = X + Y = 2 and nobody wins: each room 2 + 2 = 4 -> 8; EC 16; DMO 3 -> 6.
        "X equal to X+Y, no winner",
        {"Uno": 2, "Dos": 2},
        {"Tres": 3},
        NO_WINNER,
        (16, 6),
        {},
    ),
    (
        # The seed's bets, no room won: EC Uno (3 + 3) -> 12, Tres (8 + 3) -> 22: 34;
        # DMO Uno (4 + 4) -> 16, Dos (7 + 4) -> 22: 38.
        "rooms without a winner",
        SEED_EC,
        SEED_DMO,
        NO_WINNER,
        (34, 38),
        {"Uno": (0, 0)},
    ),
    (
        # DMO wins Tres, where DMO bet nothing; EC wins Dos, where EC bet nothing: each
        # claims min(0, ...) = 0, so the same as no winner: 34 and 38.
        "a winner who bet nothing in the room",
        SEED_EC,
        SEED_DMO,
        winners(Tres=DMO, Dos=EC),
        (34, 38),
        {"Tres": (0, 0), "Dos": (0, 0)},
    ),
    (
        # EC has no placement: DMO wins Uno and has nothing to claim; DMO's 3 -> 6.
        "a player with no placement, the other winning",
        None,
        {"Uno": 3},
        winners(Uno=DMO),
        (0, 6),
        {"Uno": (0, 0)},
    ),
    (
        # EC has no placement and wins Uno: min(0, 3) = 0 claimed; DMO's 3 -> 6.
        "a player with no placement winning",
        None,
        {"Uno": 3},
        winners(Uno=EC),
        (0, 6),
        {"Uno": (0, 0)},
    ),
    (
        "no placements at all",
        None,
        None,
        winners(Uno=EC, Dos=DMO),
        (0, 0),
        {},
    ),
    (
        # Same room, EC wins: claims min(4, 3) = 3, all of DMO's: EC owns 7 -> 14, DMO 0.
        "both on the same single room, EC winning",
        {"Uno": 4},
        {"Uno": 3},
        winners(Uno=EC),
        (14, 0),
        {"Uno": (3, 0)},
    ),
    (
        # Same room, DMO wins: claims min(3, 4) = 3 of EC's 4: DMO owns 6 -> 12, EC 1 -> 2.
        "both on the same single room, DMO winning",
        {"Uno": 4},
        {"Uno": 3},
        winners(Uno=DMO),
        (2, 12),
        {"Uno": (3, 0)},
    ),
    (
        # EC X = 2 (Uno 2, Dos 5), DMO X = 1 (Uno 4, Dos 1); EC wins Uno, DMO wins Dos.
        # Uno: EC claims min(2, 4) = 2: DMO's 1 doubled chip (-> 2) and 1 plain: EC owns
        # 2 + 2 + 3 = 7 -> 14, DMO 4 + 1 - 3 = 2 -> 4. Dos: DMO claims min(1, 5) = 1, one of
        # EC's 2 doubled chips (-> 2): DMO 1 + 1 + 2 = 4 -> 8, EC 5 + 2 - 2 = 5 -> 10.
        # EC 24, DMO 12.
        "both claim, each in a room",
        {"Uno": 2, "Dos": 5},
        {"Uno": 4, "Dos": 1},
        winners(Uno=EC, Dos=DMO),
        (24, 12),
        {"Uno": (2, 1), "Dos": (1, 1)},
    ),
]


@pytest.mark.parametrize(("name", "ec", "dmo", "won", "expected", "claims"), CASES, ids=[c[0] for c in CASES])
def test_ruling_11_payout_cases(
    name: str,
    ec: dict[str, int] | None,
    dmo: dict[str, int] | None,
    won: dict[str, str | None],
    expected: tuple[int, int],
    claims: dict[str, tuple[int, int]],
) -> None:
    result = payout({EC: ec, DMO: dmo}, won)
    assert paid(result) == expected, name
    for room, (claimed, of_them_doubled) in claims.items():
        info = result["rooms"][room]
        assert (info["claimed"], info["claimed_doubled"]) == (claimed, of_them_doubled), (name, room)
    assert result["staked"] == {EC: sum((ec or {}).values()), DMO: sum((dmo or {}).values())}


def test_ruling_11_payout_is_pure() -> None:
    placements = {EC: dict(SEED_EC), DMO: dict(SEED_DMO)}
    won = winners(Uno=EC)
    before = copy.deepcopy((placements, won))
    assert payout(placements, won) == payout(placements, won)
    assert (placements, won) == before


def test_ruling_11_every_chip_on_the_table_is_paid_out_doubled() -> None:
    """Whoever wins, a room pays out twice its chips plus the doubled portions: the claim
    only moves ownership. Over random placements of one or two rooms."""
    rnd = random.Random("betting-minority payout sums")
    for _ in range(500):
        placements: dict[str, dict[str, int] | None] = {}
        for role in (EC, DMO):
            rooms = rnd.sample(ROOMS, rnd.choice([0, 1, 2]))
            placements[role] = {room: rnd.randint(1, 9) for room in rooms} or None
        won = {room: rnd.choice([None, EC, DMO]) for room in ROOMS}
        result = payout(placements, won)
        for room in ROOMS:
            info = result["rooms"][room]
            on_table = sum(info["chips"].values()) + sum(info["doubled"].values())
            assert sum(info["paid"].values()) == 2 * on_table
            assert min(info["paid"].values()) >= 0
