"""Indian Poker: each player sees the opponent's card, never their own, and bets on it.

Rule text: ``seeds/indian-poker.txt``; the authoritative reading is the "Indian Poker"
section of ``RULINGS.md``; decisions of our own are listed under "Rulings" in
``docs/games/indian-poker.md`` (numbered; each names its test). The betting itself
(RAISE n, RAISE TO n, CALL, CHECK, FOLD, ALL IN, the raise cap, the all-in ante, the
timeout default, the mail grammar) is :mod:`referee.games.betting`.

The game (``GAME``, registered as ``indian-poker``) is assembled from its modules, each
one job (:class:`referee.games.base.Engine`):

* :mod:`~referee.games.indian_poker.rules`: the rule text's numbers and rules (antes, the
  deck, the showdown, the penalty for folding a 10, who is out);
* :mod:`~referee.games.indian_poker.play`: the state (its layout is there), the turns, the
  moves, the timeout default, the forfeit and the end;
* :mod:`~referee.games.indian_poker.grammar`: the mail read into a move, the form and the
  one-tap answers;
* :mod:`~referee.games.indian_poker.views`: what a player and the public see, the standings;
* :mod:`~referee.games.indian_poker.samples`: sample moves and hidden variants, for tests
  and automated players.
"""

from __future__ import annotations

from referee.games import betting
from referee.games.base import VICTORY_POINTS, Engine, State
from referee.games.base import opponent as _opponent
from referee.games.base import ranked_by_outcome as ranking
from referee.games.indian_poker import grammar, play, samples, views
from referee.games.indian_poker.play import _Hand as _Hand
from referee.games.indian_poker.rules import (
    CARD_VALUES,
    COPIES,
    DECK,
    FIRST_ANTE,
    HANDS_PER_ANTE,
    NAME,
    POT,
    STARTING_CHIPS,
    TEN,
    TEN_FOLD_PENALTY,
    TURN_HOURS,
    ante_for,
    first_to_act,
    hand_ante,
    is_out,
    last_hand_of_ante,
    showdown_winner,
    shuffled_deck,
    step_key,
    ten_fold_penalty,
    turn_title,
)

__all__ = [
    "CARD_VALUES",
    "COPIES",
    "DECK",
    "FIRST_ANTE",
    "GAME",
    "HANDS_PER_ANTE",
    "POT",
    "STARTING_CHIPS",
    "TEN",
    "TEN_FOLD_PENALTY",
    "TURN_HOURS",
    "VICTORY_POINTS",
    "IndianPoker",
    "ante_for",
    "first_to_act",
    "hand_ante",
    "is_out",
    "last_hand_of_ante",
    "ranking",
    "showdown_winner",
    "shuffled_deck",
    "step_key",
    "ten_fold_penalty",
    "turn_title",
    "_opponent",
]


class IndianPoker(Engine):
    """Indian Poker's game object: its modules assembled (the wiring every game shares is
    :class:`referee.games.base.Engine`). The chips are the match's own: the season balances
    are checked for shape but change nothing (ruling 9)."""

    name = NAME
    title = "Indian Poker"
    min_players = 2
    max_players = 2
    game_type = betting.duel_type(
        TURN_HOURS,
        dmo="the player chosen for the death match, who acts first in hand 1 (default: the first player)",
        # turn_key and turn_title; a hand's own transfers (its antes, its pot) name the hand
        step_titles=((r"hand-(\d+)-(\d+)", "Hand {0}, action {1}"), (r"hand-(\d+)", "Hand {0}")),
    )
    ranked_by = "stacks"  # a drawn result ranks the player with more chips first

    def quick_answers(self, state: State, player: str) -> list[tuple[str, str]]:
        return grammar.quick_answers(state, player)


GAME = IndianPoker(play=play, grammar=grammar, views=views, samples=samples)
