"""A golden transcript: one seeded match, played by a fixed script, and the sequence of
views and forms each player got, compared with ``indian_poker_golden.json``.

A change of the engine that changes what a player is shown shows up here as a diff.
To accept it on purpose: ``REGENERATE_GOLDEN=1 .venv/bin/pytest tests/games/test_indian_poker_golden.py``
and review the diff of the fixture.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from referee.games.base import State
from tests.games.test_indian_poker import A, B, G

FIXTURE = Path(__file__).with_name("indian_poker_golden.json")
SEED = 20240611
# the commands of the player to act, in order ("timeout": the deadline passes); once the
# script is used up, the player to act goes ALL IN and the other calls
SCRIPT = [
    "RAISE 2",
    "CALL",
    "CHECK",
    "raise to 5",
    "RAISE 3",
    "fold",
    "timeout",
    "RAISE 1",
    "timeout",
    "ALL IN",
    "FOLD",
]
# the same at every step, or said again in another key: left out of the fixture
LEFT_OUT = ("game", "players", "you", "opponent", "dmo", "history", "last_hand", "legal")


def shown(state: State, player: str | None) -> dict[str, Any]:
    """The view without what is the same at every step or said again elsewhere: the
    cumulative history and the last hand (each finished hand is in ``recent_hands`` when
    it ends) and the legal actions (``choices`` says them)."""
    view = G.view(state, player)
    for key in LEFT_OUT:
        del view[key]
    return view


def transcript() -> list[dict[str, Any]]:
    state = G.initial_state(SEED, [A, B], {"dmo": B})
    entries = []
    event = "start"
    script = list(SCRIPT)
    while True:
        step = G.step(state)
        entries.append(
            {
                "event": event,
                "step": None if step is None else step.key,
                "to_act": None if step is None else step.players[0],
                "views": {p: shown(state, p) for p in (A, B)},
                "forms": {p: G.form(state, p) for p in (A, B)},
                "standings": G.standings(state),
            }
        )
        if step is None:
            break
        player = step.players[0]
        if script:
            command = script.pop(0)
        else:
            command = "ALL IN" if not state["betting"]["actions"] else "CALL"
        if command == "timeout":
            state = G.apply_timeout(state)
            event = f"timeout of {player}"
        else:
            (move,) = G.parse(state, player, command).moves
            applied = G.apply_move(state, player, move)
            assert applied.accepted, applied.reason
            state = applied.state
            event = f"{player}: {command}"
    assert G.result(state) is not None
    return entries


def test_golden_transcript() -> None:
    got = transcript()
    text = "[\n" + ",\n".join(json.dumps(entry, sort_keys=True) for entry in got) + "\n]\n"
    if os.environ.get("REGENERATE_GOLDEN"):
        FIXTURE.write_text(text)
    assert FIXTURE.exists(), f"{FIXTURE.name} is missing: REGENERATE_GOLDEN=1 writes it"
    expected = json.loads(FIXTURE.read_text())
    assert len(got) == len(expected)
    for i, (entry, want) in enumerate(zip(got, expected, strict=True)):
        assert entry == want, f"transcript entry {i} ({want['event']}) differs"


def test_the_golden_match_shows_each_player_only_the_opponents_card() -> None:
    for entry in json.loads(FIXTURE.read_text()):
        for player in (A, B):
            view = entry["views"][player]
            assert (view["opponent_card"] is None) == view["over"]
            assert view["your_turn"] == (entry["to_act"] == player)
            assert bool(entry["forms"][player]) == (entry["to_act"] == player)
