"""Rewind Hold'em's mail: a player's reply read into a move (a betting command, REWIND, the
Step line), and the form and one-tap answers written for the player to act. The grammar of
a betting command is :func:`referee.games.betting.read_action`."""

from __future__ import annotations

from referee.games import betting
from referee.games.base import Move, Parsed, ParseError, State
from referee.games.quick import betting_answers
from referee.games.rewind_holdem.rules import turn_title

REWIND = "rewind"  # the extra command word read beside the betting command


def parse(state: State, player: str, text: str) -> Parsed:
    """One betting command (the grammar of :func:`betting.read_action`), an optional
    REWIND alone on a line, and an optional ``Step:`` line naming the turn answered
    (``Turn:``, the line of forms mailed before issue 20, is read the same way)."""
    reading = betting.read_action(text, extra_commands=(REWIND,))
    if reading.action is None:
        raise ParseError(
            "REWIND comes together with your betting command in the same mail: "
            "add RAISE n, RAISE TO n, CALL, CHECK, FOLD or ALL IN on a line of its own",
            None,
        )
    move: Move = {**reading.action, "rewind": REWIND in reading.extras, "turn": reading.turn}
    return Parsed([move], list(reading.ignored))


def form(state: State, player: str) -> str:
    """A command and the Step line (the convention of every game's form), for the player
    to act; empty for anyone else."""
    if state["result"] is not None or state["table"]["betting"]["to_act"] != player:
        return ""
    table = state["table"]
    return f"CALL\nStep: {turn_title(table['round'], table['turn'])}\n"


def quick_answers(state: State, player: str) -> list[tuple[str, str]]:
    """The step mail's one-tap answers (referee.games.quick): CALL (or CHECK), FOLD, RAISE 2."""
    text = form(state, player)
    legal = betting.legal_actions(state["table"]["betting"], player) if text else None
    return betting_answers(text, legal)
