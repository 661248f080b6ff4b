"""Pile: a game package of its own outside ``referee/games/``, as a new game would come:
its engine (here: Countdown, ``tests/service/countdown.py``, under its own name), its
templates (``templates/mail/pile/``) and its demo (``demo.py``), and nothing else. The
tests register it (``tests/test_demo_new_game.py``) and play its demo through the generic
director, as ``referee demo --game pile``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.service.countdown import Countdown

TEMPLATES = Path(__file__).parent / "templates"


class Pile(Countdown):
    """Countdown's rules: two players take 1, 2 or 3 counters from a pile in turn (``TAKE
    n``, with the form's ``Turn:`` line); whoever takes the last counter wins."""

    name = "pile"
    title = "Pile"
    # what the archive calls its accounts and its steps (the ledger and the events name them)
    game_type = replace(
        Countdown.game_type,
        accounts={"pile": "the pile", "house": "the house of Pile"},
        step_titles=((r"turn-(\d+)", "Turn {0}"),),
    )


GAME = Pile()
