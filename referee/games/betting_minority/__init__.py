"""Betting Minority: two DM players send ten participants into three rooms, then bet on
the rooms they expect to win, and the payout doubles what they staked.

Rule text: ``seeds/betting-minority.txt``; the authoritative reading is the "Betting
Minority" section of ``RULINGS.md``; decisions of our own are listed under "Rulings" in
``docs/games/betting-minority.md`` (numbered; each names its test).

The game (``GAME``, registered as ``betting-minority``) is assembled from its modules, each
one job (:class:`referee.games.base.Engine`):

* :mod:`~referee.games.betting_minority.rules`: the rule text's numbers and rules (the
  lists, the rooms and the sends, the betting limits, the payout, the loss for missed
  turns, the names a mail may use);
* :mod:`~referee.games.betting_minority.phases`: the phases a move or a deadline sets off
  (the placement steps, an illegal bet's penalty, the payout and the zero-chip checks, the
  end of the match);
* :mod:`~referee.games.betting_minority.play`: the state (its layout is there), the steps,
  the moves, the deadlines, the forfeit;
* :mod:`~referee.games.betting_minority.grammar`: the mail read into a move, the form and
  the commands written back;
* :mod:`~referee.games.betting_minority.views`: what a seat and the public see, the
  standings;
* :mod:`~referee.games.betting_minority.samples`: sample moves and hidden variants, for
  tests and automated players.
"""

from __future__ import annotations

from referee.games.base import MATCH_CHIPS, MIXED, VICTORY_POINTS, Engine, GameType, State, Step
from referee.games.base import ranked_by_outcome as ranking
from referee.games.betting_minority import grammar, play, rules, samples, views
from referee.games.betting_minority.grammar import (
    _FILLERS,
    _ROOM_NAMES,
    MAX_LINE_CHARS,
    _read_rooms,
    _room,
    command_text,
    find_participant,
    read_mail,
)
from referee.games.betting_minority.phases import close_send_step as _close_send_step
from referee.games.betting_minority.phases import end_betting as _end_betting
from referee.games.betting_minority.phases import end_match as _end_match
from referee.games.betting_minority.phases import open_round as _open_round
from referee.games.betting_minority.phases import penalise as _penalise
from referee.games.betting_minority.phases import penalty_reason as _penalty_reason
from referee.games.betting_minority.phases import zero_reason as _zero_reason
from referee.games.betting_minority.play import PLAYERS, describe_bet_choices, nothing_to_send, unplaced_names
from referee.games.betting_minority.rules import (
    BANK,
    BET_COMMANDS,
    BET_HOURS,
    CAP_DENOMINATOR,
    CAP_NUMERATOR,
    DMO,
    EC,
    ENTRIES_EACH,
    EXTENSION_FRACTION,
    LOSS_FIFTHS,
    MARKER_HOURS,
    MIN_BET,
    NAME,
    OUT,
    PARTICIPANT,
    PARTICIPANTS,
    PENALTY,
    PER_ROUND_EACH,
    ROOMS,
    ROUNDS,
    SEND_HOURS,
    STARTING_CHIPS,
    TABLE,
    bet_cap,
    bet_figures,
    call_amount,
    cut_placement,
    doubled_portion,
    format_placement,
    judge_bet,
    make_lists,
    missed_turn_loss,
    normal_name,
    payout,
    resolve_sends,
    room_counts,
    room_winners,
    short_ids,
    step_reference,
    third_room,
    total,
)
from referee.games.betting_minority.rules import swap_mix as _swap_mix
from referee.games.betting_minority.samples import random_split

__all__ = [
    "BANK",
    "BET_COMMANDS",
    "BET_HOURS",
    "CAP_DENOMINATOR",
    "CAP_NUMERATOR",
    "DMO",
    "EC",
    "ENTRIES_EACH",
    "EXTENSION_FRACTION",
    "GAME",
    "LOSS_FIFTHS",
    "MARKER_HOURS",
    "MAX_LINE_CHARS",
    "MIN_BET",
    "OUT",
    "PARTICIPANT",
    "PARTICIPANTS",
    "PENALTY",
    "PER_ROUND_EACH",
    "ROOMS",
    "ROUNDS",
    "SEND_HOURS",
    "STARTING_CHIPS",
    "TABLE",
    "VICTORY_POINTS",
    "BettingMinority",
    "bet_cap",
    "bet_figures",
    "call_amount",
    "command_text",
    "cut_placement",
    "describe_bet_choices",
    "doubled_portion",
    "find_participant",
    "format_placement",
    "judge_bet",
    "make_lists",
    "missed_turn_loss",
    "normal_name",
    "nothing_to_send",
    "payout",
    "random_split",
    "ranking",
    "read_mail",
    "resolve_sends",
    "room_counts",
    "room_winners",
    "short_ids",
    "step_reference",
    "third_room",
    "total",
    "unplaced_names",
    # names of the modules' insides, importable from here as before the package was split
    "_FILLERS",
    "_ROOM_NAMES",
    "_close_send_step",
    "_end_betting",
    "_end_match",
    "_open_round",
    "_penalise",
    "_penalty_reason",
    "_read_rooms",
    "_room",
    "_swap_mix",
    "_zero_reason",
]


class BettingMinority(Engine):
    """Betting Minority's game object: its modules assembled (the wiring every game shares is
    :class:`referee.games.base.Engine`). The match is played with its own chips: the season
    balances are checked, not used."""

    name = NAME
    title = "Betting Minority"
    wraps_own_mail = True  # its templates wrap their prose and explain DM, EC, DMO themselves
    archive_rounds_per_page = 3  # a round's placements and betting are long
    min_players = PLAYERS
    max_players = PLAYERS
    game_type = GameType(
        dynamics=MIXED,
        roles=(EC, DMO, *([PARTICIPANT] * PARTICIPANTS)),
        currencies=(MATCH_CHIPS,),
        step_kinds={"marker": MARKER_HOURS, "send": SEND_HOURS, "bet": BET_HOURS, "extension": BET_HOURS},
        derived_steps={"extension": ("bet", EXTENSION_FRACTION)},
        chance=True,
        silent_roles=(PARTICIPANT,),
        names=True,
        ranked=True,
        death_match=True,  # the first seat is the EC's, the second the DMO's (RULINGS, "Seasons")
        accounts={TABLE: "the table", BANK: "the bank", OUT: "out of play"},
        step_titles=(  # play.step's titles; the payout is no step, its transfers name it
            (r"marker", "The starting marker"),
            (r"r(\d+)-send-(\d+)", "Round {0}, placement {1}"),
            (r"r(\d+)-bet-(\d+)", "Round {0}, betting turn {1}"),
            (r"r(\d+)-bet-(\d+)-extension", "Round {0}, betting turn {1} (extended)"),
            (r"r(\d+)-payout", "Round {0}, payout"),
        ),
    )

    def awaiting(self, state: State) -> tuple[str, ...]:
        return play.awaiting(state)

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        return play.audience(state, step)

    # the open step's names and texts, and who is who
    reference = staticmethod(play.reference)
    form_title = staticmethod(play.form_title)
    what_now = staticmethod(play.what_now)
    opponent = staticmethod(rules.opponent)
    role = staticmethod(rules.role)


GAME = BettingMinority(play=play, grammar=grammar, views=views, samples=samples)
