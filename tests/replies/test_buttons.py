"""Issue 22's one-tap answers in the reply corpus: each ``mailto:`` button of the step mail's
HTML part, in every game, produces a new mail (no quote, no threading headers) whose body is
exactly the button's text; the judge must record the very move that text means."""

from __future__ import annotations

import pytest

from . import corpus as C


@pytest.mark.parametrize("game", C.GAME_NAMES)
def test_every_button_reply_is_recorded_as_the_move_it_holds(game):
    results = C.run_buttons((game,))
    report = "\n".join(f"{r.outcome}: {r.case.id} {r.detail}" for r in results)
    print(f"\n{report}")
    assert results, game
    assert all(r.outcome == C.RIGHT for r in results), report
