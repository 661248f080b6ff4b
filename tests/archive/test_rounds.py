"""The closed rounds of a match, for every game: the public history, stamped with the
instant of the event that closed each entry."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from referee.archive.rounds import match_rounds, public_view
from referee.games import GAMES

from ..games.test_conformance import match_row, playouts

T0 = datetime(2026, 12, 1, 18, 0, tzinfo=timezone.utc)


def stamped(out) -> list[SimpleNamespace]:
    """The playout's events as the store has them: a start, then one instant an hour apart."""
    start = SimpleNamespace(kind="start", player=None, payload={"options": out.options}, at=T0, step_key=None)
    events = [start]
    for i, ev in enumerate(out.events, start=1):
        # a deadline keeps the step it closed (a game of concurrent steps is told which); a move gets a name of its own
        events.append(SimpleNamespace(**{**vars(ev), "at": T0 + timedelta(hours=i), "step_key": ev.step_key or f"s{i}"}))
    return events


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_history_entry_is_stamped_by_the_event_that_closed_it(name):
    game = GAMES[name]
    for out in playouts(name, first=8):
        events = stamped(out)
        for upto in sorted({max(1, len(events) // 3), max(1, len(events) // 2), len(events)}):
            state = out.states[upto - 1]
            match = match_row(out)
            match.state, match.finished_at, match.starts_at = state, None, T0
            rounds = match_rounds(game, match, events[:upto])
            history = game.view(state, None)["history"]
            assert [r.entry for r in rounds] == history
            assert [r.number for r in rounds] == list(range(1, len(history) + 1))
            # entry i appeared with the event at which the public history first had i + 1 entries
            for r in rounds:
                k = next(k for k in range(upto) if len(game.view(out.states[k], None)["history"]) >= r.number)
                assert r.closed_at == events[k].at and r.step_key == events[k].step_key


def test_a_match_not_started_has_no_rounds():
    game = GAMES["stationary-roulette"]
    match = SimpleNamespace(state=None)
    assert public_view(game, match) is None
    assert match_rounds(game, match, []) == []
