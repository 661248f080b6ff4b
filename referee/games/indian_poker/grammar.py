"""Indian Poker's mail: a player's reply read into a move, and the form and one-tap answers
written for the player to act. The grammar of a betting command is
:func:`referee.games.betting.read_action` ("Mail grammar" in :mod:`referee.games.betting`).
"""

from __future__ import annotations

from referee.games import betting
from referee.games.base import Move, Parsed, State
from referee.games.indian_poker.play import step
from referee.games.quick import betting_answers


def parse(state: State, player: str, text: str) -> Parsed:
    """One command (see referee.games.betting, "Mail grammar"), and the ``Step:`` line
    of the form when the mail keeps it (ruling 8; ``Turn:``, the line of forms mailed
    before issue 20, is read the same way)."""
    reading = betting.read_action(text)
    assert reading.action is not None  # no extra commands in this game
    move: Move = dict(reading.action)
    if reading.turn is not None:
        move["turn"] = reading.turn
    return Parsed([move], reading.ignored)


def form(state: State, player: str) -> str:
    """For the player to act: CALL (or CHECK, with nothing to call) and the Step line;
    for anyone else, nothing (ruling 8)."""
    now = step(state)
    if now is None or player not in now.players:
        return ""
    command = "CHECK" if betting.to_call(state["betting"], player) == 0 else "CALL"
    return f"{command}\nStep: {now.title}\n"


def quick_answers(state: State, player: str) -> list[tuple[str, str]]:
    """The step mail's one-tap answers (referee.games.quick): CALL (or CHECK), FOLD, RAISE 2."""
    text = form(state, player)
    return betting_answers(text, betting.legal_actions(state["betting"], player) if text else None)
