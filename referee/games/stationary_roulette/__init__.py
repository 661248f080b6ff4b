"""Stationary Roulette: each player prepares a roulette for the other to bet on.

Rule text: ``seeds/stationary-roulette.txt``; the authoritative reading is the
"Stationary Roulette" section of ``RULINGS.md``; decisions of our own are listed
under "Rulings" in ``docs/games/stationary-roulette.md``.

The game (``GAME``, registered as ``stationary-roulette``) is assembled from its modules,
each one job (:class:`referee.games.base.Engine`):

* :mod:`~referee.games.stationary_roulette.rules`: the rule text's numbers and rules
  (preparing a roulette, betting, scoring, the end of the game);
* :mod:`~referee.games.stationary_roulette.settlement`: a round settled in the ruled order,
  and the settlement records the state keeps;
* :mod:`~referee.games.stationary_roulette.play`: the state (its layout is there), the
  rounds, the submissions, the deadline that settles a round, the forfeit;
* :mod:`~referee.games.stationary_roulette.grammar`: the ROULETTE and BET sections of a mail
  read into moves, and the form;
* :mod:`~referee.games.stationary_roulette.views`: what a player and the public see, the
  standings;
* :mod:`~referee.games.stationary_roulette.samples`: sample moves and hidden variants, for
  tests and automated players.
"""

from __future__ import annotations

from referee.games.base import SEASON_CHIPS, SIMULTANEOUS, VICTORY_POINTS, Engine, GameType, State
from referee.games.base import opponent as _opponent
from referee.games.base import ranked_by_outcome as ranking
from referee.games.lines import SHOWN_CHARS as _SHOWN
from referee.games.stationary_roulette import grammar, play, samples, views
from referee.games.stationary_roulette.grammar import (
    _COLOUR_WORDS,
    _HEADERS,
    _SEPARATORS,
    _STEP_LINE,
    _TOKEN,
    _UNITS,
    _WIN_WORDS,
    _ZERO_VALUES,
    MAX_DIGITS,
    MAX_LINE_CHARS,
    MAX_SECTION_LINES,
    _as_colour,
    _colour,
    _colour_prefix,
    _Entry,
    _entries,
    _first_key,
    _header,
    _key_of,
    _points,
    _Section,
    _shown,
    _Tokens,
    _unknown_word,
    read_mail,
)
from referee.games.stationary_roulette.play import _is_int, _points_shape
from referee.games.base import clone as _copy
from referee.games.stationary_roulette.rules import (
    BET_POINTS,
    BLACK_TAKE,
    CHIP_CAP,
    COLOURS,
    DEFAULT_CHIPS,
    INACTIVITY_FEE,
    INACTIVITY_POINTS,
    LAST_PREPARATION_ROUND,
    LGT_PAYMENT,
    MAX_BET_COLOURS,
    MAX_WINNING_COLOUR_USES,
    MIN_GOLD,
    MIN_SILVER,
    NAME,
    NO_BET,
    POINTS_PER_LEAD_CHIP,
    ROULETTE_POINTS,
    ROUND_HOURS,
    ROUNDS,
    SINGLE_COLOUR_BONUS,
    RouletteScore,
    bet_problems,
    black_take,
    lead_chips,
    prepares_in,
    roulette_problems,
    round_named,
    round_title,
    score_roulette,
    single_colour,
    single_colour_bonus,
    step_key,
    uses_left,
    uses_left_after_each,
)
from referee.games.stationary_roulette.rules import bettable as _bettable
from referee.games.stationary_roulette.rules import nothing_to_bet as _nothing_to_bet
from referee.games.stationary_roulette.samples import random_bet as _random_bet
from referee.games.stationary_roulette.samples import random_points as _random_points
from referee.games.stationary_roulette.settlement import TOTALS as _TOTALS
from referee.games.stationary_roulette.settlement import Settlement as _Settlement
from referee.games.stationary_roulette.settlement import compact as _compact
from referee.games.stationary_roulette.settlement import last_record as _last_record
from referee.games.stationary_roulette.settlement import resettle as _resettle
from referee.games.stationary_roulette.settlement import settled_records as _settled_records

__all__ = [
    "BET_POINTS",
    "BLACK_TAKE",
    "CHIP_CAP",
    "COLOURS",
    "DEFAULT_CHIPS",
    "GAME",
    "INACTIVITY_FEE",
    "INACTIVITY_POINTS",
    "LAST_PREPARATION_ROUND",
    "LGT_PAYMENT",
    "MAX_BET_COLOURS",
    "MAX_DIGITS",
    "MAX_LINE_CHARS",
    "MAX_SECTION_LINES",
    "MAX_WINNING_COLOUR_USES",
    "MIN_GOLD",
    "MIN_SILVER",
    "NO_BET",
    "POINTS_PER_LEAD_CHIP",
    "ROULETTE_POINTS",
    "ROUND_HOURS",
    "ROUNDS",
    "SINGLE_COLOUR_BONUS",
    "VICTORY_POINTS",
    "RouletteScore",
    "StationaryRoulette",
    "bet_problems",
    "black_take",
    "lead_chips",
    "prepares_in",
    "ranking",
    "read_mail",
    "roulette_problems",
    "round_named",
    "round_title",
    "score_roulette",
    "single_colour",
    "single_colour_bonus",
    "step_key",
    "uses_left",
    "uses_left_after_each",
    # names of the modules' insides, importable from here as before the package was split
    "_COLOUR_WORDS",
    "_HEADERS",
    "_SEPARATORS",
    "_SHOWN",
    "_STEP_LINE",
    "_TOKEN",
    "_TOTALS",
    "_UNITS",
    "_WIN_WORDS",
    "_ZERO_VALUES",
    "_Entry",
    "_Section",
    "_Tokens",
    "_as_colour",
    "_colour",
    "_colour_prefix",
    "_entries",
    "_first_key",
    "_header",
    "_is_int",
    "_key_of",
    "_points",
    "_points_shape",
    "_shown",
    "_unknown_word",
    "_Settlement",
    "_bettable",
    "_compact",
    "_copy",
    "_last_record",
    "_nothing_to_bet",
    "_opponent",
    "_random_bet",
    "_random_points",
    "_resettle",
    "_settled_records",
]


class StationaryRoulette(Engine):
    """Stationary Roulette's game object: its modules assembled (the wiring every game shares
    is :class:`referee.games.base.Engine`). The match moves the season's chips: the state
    reads the players' live balances before every settlement (``with_balances``)."""

    name = NAME
    title = "Stationary Roulette"
    min_players = 2
    max_players = 2
    # Rounds are simultaneous; the match moves the season's chips (the ``chips`` the
    # service passes in the options are the players' balances, not a match option).
    game_type = GameType(
        dynamics=SIMULTANEOUS,
        roles=("player", "player"),
        currencies=(SEASON_CHIPS,),
        step_kinds={"round": ROUND_HOURS},
        options={},
        chance=False,
        ranked=True,
        step_titles=((r"round-0", "Preparation phase"), (r"round-(\d+)", f"Round {{0}} of {ROUNDS}")),  # round_title
    )

    def awaiting(self, state: State) -> tuple[str, ...]:
        return play.awaiting(state)

    def with_balances(self, state: State, balances: dict[str, int]) -> State:
        return play.with_balances(state, balances)


GAME = StationaryRoulette(play=play, grammar=grammar, views=views, samples=samples)
