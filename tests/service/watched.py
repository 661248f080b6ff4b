"""Watched Countdown: Countdown (tests/service/countdown.py) with silent seats, for the tests of
players without an address.

The first two seats play Countdown; every seat after them is a *watcher*: a silent seat
(``GameType.silent_roles``) that no step ever lists, but that is in the audience of every
step, as Betting Minority's participants are. A season may seat a player without an
address there, and the service must never mail them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.games.base import State, Step, clone
from tests.service.countdown import Countdown

WATCHER = "watcher"

# the mails of a watched match; no opponent line, since a match has more than two seats
TEMPLATES = {
    "step.txt": (
        "Subject: [{{ match.title }} {{ match.id }}] {% if result %}Final result{% else %}{{ step.title }}{% endif %}\n"
        "\n"
        "Dear {{ player.name }},\n"
        "\n"
        "Pile: {{ view.pile }}.\n"
        "{% if form %}Reply with:\n\n{{ form }}{% endif %}\n"
    ),
    "receipt.txt": (
        "Subject: [{{ match.title }} {{ match.id }}] Received: TAKE {{ view.last.take }}\n"
        "\n"
        "Dear {{ player.name }},\n"
        "\n"
        "Received: you took {{ view.last.take }}. Pile: {{ view.pile }}.\n"
    ),
}


class Watched(Countdown):
    name = "watched"
    title = "Watched Countdown"
    min_players = 3
    max_players = 4
    game_type = dataclasses.replace(Countdown.game_type, roles=("player", "player", WATCHER), silent_roles=(WATCHER,))
    step_kinds = game_type.step_kinds

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
        state = super().initial_state(seed, players[:2], options)
        state["watchers"] = list(players[2:])
        return state

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        return (*state["players"], *state["watchers"])

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        if player is None or player in state["players"]:
            return super().view(state, player)
        return clone({**super().view(state, None), "your_turn": False})

    def form(self, state: State, player: str) -> str:
        return super().form(state, player) if player in state["players"] else ""


GAME = Watched()


def write_templates(folder: Path) -> Path:
    """The watched match's templates under ``folder`` (``mail/watched/*.txt``)."""
    target = folder / "mail" / GAME.name
    target.mkdir(parents=True, exist_ok=True)
    for name, text in TEMPLATES.items():
        (target / name).write_text(text)
    return folder
