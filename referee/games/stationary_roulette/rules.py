"""Stationary Roulette's rule text as numbers and pure functions, each named for its section of
the rule text (``seeds/stationary-roulette.txt``: SETUP, GAMEPLAY, PREPARING A ROULETTE,
SCORING, END OF GAME, INACTIVITY; the rulings: ``docs/games/stationary-roulette.md``). A
round's settlement in the ruled order is :mod:`referee.games.stationary_roulette.settlement`;
the match as it runs, :mod:`referee.games.stationary_roulette.play`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.games.base import State, opponent

NAME = "stationary-roulette"

COLOURS = ("Gold", "Silver", "Black")

# SETUP 1-2: a preparation phase (round 0), then 10 rounds of 24 hours each.
ROUNDS = 10
ROUND_HOURS = 24.0
# PREPARING A ROULETTE 1 / ruling: roulettes are prepared in rounds 0..9, none in round 10.
LAST_PREPARATION_ROUND = ROUNDS - 1
# PREPARING A ROULETTE 2b: 40 points, Gold at least 25, Silver at least 5, Black none.
ROULETTE_POINTS = 40
MIN_GOLD = 25
MIN_SILVER = 5
# PREPARING A ROULETTE 2a: each colour is a player's winning colour at most 5 times.
MAX_WINNING_COLOUR_USES = 5
# GAMEPLAY 3 / 3a: 40 points to bet, on at most 2 colours; ruling: a total under 40 is legal.
BET_POINTS = 40
MAX_BET_COLOURS = 2
# SCORING 2a: 20 bonus points for an all-in single-colour bet.
SINGLE_COLOUR_BONUS = 20
# SCORING 3: the preparer of a Black roulette takes 40 chips minus the bet on Black.
BLACK_TAKE = 40
# SCORING 3d: the preparer of a Black roulette pays the LGT 10 chips.
LGT_PAYMENT = 10
# SCORING 3a / END OF GAME 3: at most 100 chips lost to Black takes, then forfeit.
CHIP_CAP = 100
# INACTIVITY 1 and 3: 60 points to the opponent of a missing preparer; 5 chips per miss.
INACTIVITY_POINTS = 60
INACTIVITY_FEE = 5
# END OF GAME 2: the winner takes 1 chip for every 10 points of lead.
POINTS_PER_LEAD_CHIP = 10
# Ruling (game page): starting chips when the match options give none.
DEFAULT_CHIPS = 100

# INACTIVITY 2: a missed bet is a bet of 0 on every colour.
NO_BET: dict[str, int] = {colour: 0 for colour in COLOURS}


# --------------------------------------------------------------------------- rules


def round_title(round_no: int) -> str:
    return "Preparation phase" if round_no == 0 else f"Round {round_no} of {ROUNDS}"


def round_named(reference: object) -> int | None:
    """The round a Step line names, from its normalised text (``betting.turn_reference``):
    ``"round 3 of 10"`` and ``"round 3"`` -> 3, ``"preparation phase"`` -> 0; None for
    anything else."""
    if not isinstance(reference, str):
        return None
    if reference in ("preparation phase", "preparation"):
        return 0
    words = reference.split()
    if len(words) in (2, 4) and words[0] == "round" and words[1].isdigit() and len(words[1]) <= 3:
        if len(words) == 2 or (words[2] == "of" and words[3] == str(ROUNDS)):
            return int(words[1])
    return None


def step_key(round_no: int) -> str:
    return f"round-{round_no}"


def prepares_in(round_no: int) -> bool:
    """Roulettes are prepared in the preparation phase and rounds 1-9 (PREPARING 1)."""
    return round_no <= LAST_PREPARATION_ROUND


def uses_left(roulettes: Sequence[dict[str, Any] | None]) -> dict[str, int]:
    """Remaining winning-colour uses after these roulettes (PREPARING 2a); a missed
    preparation uses no colour (ruling: "the colour count is not used")."""
    used = {colour: 0 for colour in COLOURS}
    for roulette in roulettes:
        if roulette is not None:
            used[roulette["winning"]] += 1
    return {colour: MAX_WINNING_COLOUR_USES - n for colour, n in used.items()}


def uses_left_after_each(roulettes: Sequence[dict[str, Any] | None]) -> list[dict[str, int]]:
    """``[uses_left(roulettes[:n]) for n in range(len(roulettes) + 1)]``, in one pass."""
    left = {colour: MAX_WINNING_COLOUR_USES for colour in COLOURS}
    out = [dict(left)]
    for roulette in roulettes:
        if roulette is not None:
            left[roulette["winning"]] -= 1
        out.append(dict(left))
    return out


def roulette_problems(roulette: dict[str, Any], left: dict[str, int]) -> list[str]:
    """Why a roulette breaks PREPARING 2 (empty when legal); ``left`` are the
    preparer's remaining winning-colour uses, not counting the pending roulette."""
    points = roulette["points"]
    problems = []
    if points["Gold"] < MIN_GOLD:
        problems.append(f"Gold must have at least {MIN_GOLD} points; you placed {points['Gold']}.")
    if points["Silver"] < MIN_SILVER:
        problems.append(f"Silver must have at least {MIN_SILVER} points; you placed {points['Silver']}.")
    if points["Black"] != 0:
        problems.append(f"Black cannot have any points; you placed {points['Black']}.")
    total = sum(points.values())
    if total != ROULETTE_POINTS:
        problems.append(f"The points must add up to exactly {ROULETTE_POINTS}; yours add up to {total}.")
    if left[roulette["winning"]] <= 0:
        problems.append(
            f"You have already made {roulette['winning']} the winning colour "
            f"{MAX_WINNING_COLOUR_USES} times, the most the rules allow; choose another winning colour."
        )
    return problems


def bet_problems(bet: dict[str, int]) -> list[str]:
    """Why a bet breaks GAMEPLAY 3 (empty when legal): non-negative, at most 2
    colours (colours with 0 do not count), total at most 40."""
    problems = [f"A bet cannot be negative; you bet {n} on {colour}." for colour, n in bet.items() if n < 0]
    used = [colour for colour, n in bet.items() if n > 0]
    if len(used) > MAX_BET_COLOURS:
        problems.append(
            f"You may bet on at most {MAX_BET_COLOURS} colours; you bet on {', '.join(used[:-1])} and {used[-1]}."
        )
    total = sum(bet.values())
    if total > BET_POINTS:
        problems.append(f"You have {BET_POINTS} points to bet; your bets add up to {total}.")
    return problems


def bettable(state: State, player: str) -> dict[str, Any] | None:
    """GAMEPLAY 2: the roulette ``player`` bets on this round, the one the opponent prepared
    last round (None: nothing to bet on)."""
    round_no = state["round"]
    if round_no == 0:
        return None
    roulette: dict[str, Any] | None = state["roulettes"][opponent(state, player)][round_no - 1]
    return roulette


def nothing_to_bet(state: State) -> str:
    if state["round"] == 0:
        return "There is nothing to bet on in the preparation phase; betting starts in round 1."
    missed_in = "the preparation phase" if state["round"] == 1 else f"round {state['round'] - 1}"
    return f"There is nothing to bet on this round: your opponent prepared no roulette in {missed_in}."


def single_colour(bet: dict[str, int]) -> str | None:
    """The colour of an all-40-on-one-colour bet, else None. Ruling: 40 on one colour
    and 0 on another counts as all 40 on one colour."""
    for colour, n in bet.items():
        if n == BET_POINTS:
            return colour
    return None


def single_colour_bonus(winning: str, bet: dict[str, int]) -> str | None:
    """SCORING 2a: who earns the 20 bonus points, "bettor" or "preparer" (None: nobody).
    Ruling: this holds when the winning colour is Black too."""
    colour = single_colour(bet)
    if colour is None:
        return None
    return "bettor" if colour == winning else "preparer"


def black_take(bet: dict[str, int]) -> int:
    """SCORING 3: the preparer of a Black roulette takes 40 chips minus the bet on Black."""
    return BLACK_TAKE - bet["Black"]


def lead_chips(lead: int) -> int:
    """END OF GAME 2: 1 chip for every 10 points of lead (ruling: floor(lead / 10))."""
    return lead // POINTS_PER_LEAD_CHIP


@dataclass(frozen=True)
class RouletteScore:
    preparer_points: int  # points on the winning colour, bonus excluded
    bettor_points: int
    bonus_to: str | None  # "preparer", "bettor" or None
    take: int  # chips the preparer takes from the bettor (Black only)


def score_roulette(roulette: dict[str, Any], bet: dict[str, int]) -> RouletteScore:
    """SCORING 2-3: W Gold or Silver: both earn their points on W (the preparer its
    placed points, the bettor its bet); W Black: no points, the preparer takes chips.
    The single-colour bonus applies in both cases."""
    winning = roulette["winning"]
    if winning == "Black":
        return RouletteScore(0, 0, single_colour_bonus(winning, bet), black_take(bet))
    return RouletteScore(roulette["points"][winning], bet[winning], single_colour_bonus(winning, bet), 0)
