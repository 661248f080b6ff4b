"""Rewind Hold'em: three-card hold'em with one hidden card each and a rewind.

Rule text: ``seeds/rewind-holdem.txt``; the authoritative reading is the "Rewind
Hold'em" section of ``RULINGS.md`` (betting "as in Indian Poker": the "Indian Poker"
section); decisions of our own are listed, numbered, under "Rulings" in
``docs/games/rewind-holdem.md``. The betting round itself (RAISE n, RAISE TO n, CALL,
CHECK, FOLD, ALL IN, the raise cap, the all-in ante, the timeout default, the mail
grammar of one command) is :mod:`referee.games.betting`; this module adds the cards,
the hands, the fold penalties, the Rewind Cards, the chips and the mail of the game.

The game (``GAME``, registered as ``rewind-holdem``) is assembled from its modules, each
one job (:class:`referee.games.base.Engine`):

* :mod:`~referee.games.rewind_holdem.rules`: the rule text's numbers and rules (the hands
  and their classes, the fold penalties, who may REWIND);
* :mod:`~referee.games.rewind_holdem.play`: the state (its layout is there), the rounds and
  their turns, the moves, the timeout default, the forfeit and the end;
* :mod:`~referee.games.rewind_holdem.grammar`: the mail read into a move (a betting command,
  REWIND, the Step line), the form and the one-tap answers;
* :mod:`~referee.games.rewind_holdem.views`: what a player and the public see, the standings;
* :mod:`~referee.games.rewind_holdem.samples`: sample moves and hidden variants, for tests
  and automated players.
"""

from __future__ import annotations

from referee.games import betting
from referee.games.base import VICTORY_POINTS, Engine, State
from referee.games.base import opponent as _other
from referee.games.base import ranked_by_outcome as ranking
from referee.games.rewind_holdem import grammar, play, samples, views
from referee.games.rewind_holdem.grammar import REWIND
from referee.games.rewind_holdem.play import _action_of as _action_of
from referee.games.rewind_holdem.play import _current_reference as _current_reference
from referee.games.rewind_holdem.play import _move_problem as _move_problem
from referee.games.rewind_holdem.play import _Play as _Play
from referee.games.rewind_holdem.play import dealt_cards as _dealt
from referee.games.rewind_holdem.rules import (
    ANTE,
    CLASS_NAMES,
    COPIES,
    DECK_SIZE,
    DOUBLE,
    FOLD_PENALTY,
    HIGH_CARD,
    NAME,
    OPEN_CARDS,
    POT,
    STARTING_CHIPS,
    STRAIGHT,
    TRIPLE,
    TURN_HOURS,
    VALUES,
    compare_hands,
    describe_hand,
    fold_penalty,
    hand_cards,
    hand_class,
    hand_key,
    hand_of,
    rewind_problem,
    step_key,
    straight_run,
    turn_title,
)
from referee.games.rewind_holdem.rules import hand_record as _hand_record
from referee.games.rewind_holdem.rules import pair_text as _pair
from referee.games.rewind_holdem.samples import possible_own_cards as _possible_own_cards
from referee.games.rewind_holdem.views import unseen as _unseen

__all__ = [
    "ANTE",
    "CLASS_NAMES",
    "COPIES",
    "DECK_SIZE",
    "DOUBLE",
    "FOLD_PENALTY",
    "GAME",
    "HIGH_CARD",
    "OPEN_CARDS",
    "POT",
    "REWIND",
    "STARTING_CHIPS",
    "STRAIGHT",
    "TRIPLE",
    "TURN_HOURS",
    "VALUES",
    "VICTORY_POINTS",
    "RewindHoldem",
    "compare_hands",
    "describe_hand",
    "fold_penalty",
    "hand_cards",
    "hand_class",
    "hand_key",
    "hand_of",
    "ranking",
    "rewind_problem",
    "step_key",
    "straight_run",
    "turn_title",
    "_dealt",
    "_hand_record",
    "_other",
    "_pair",
    "_possible_own_cards",
    "_unseen",
]


class RewindHoldem(Engine):
    """Rewind Hold'em's game object: its modules assembled (the wiring every game shares is
    :class:`referee.games.base.Engine`). The chips are the match's own (MATCH_CHIPS), so the
    live season balances, checked for shape, change nothing (ruling R13)."""

    name = NAME
    title = "Rewind Hold'em"
    min_players = 2
    max_players = 2
    game_type = betting.duel_type(
        TURN_HOURS,
        dmo="the player who starts the betting of round 1 (default: the first player)",
        step_titles=((r"round-(\d+)-turn-(\d+)", "Round {0}, turn {1}"),),  # turn_key and turn_title
    )

    def choices_text(self, state: State, player: str) -> str:
        return play.choices_text(state, player)

    def quick_answers(self, state: State, player: str) -> list[tuple[str, str]]:
        return grammar.quick_answers(state, player)


GAME = RewindHoldem(play=play, grammar=grammar, views=views, samples=samples)
