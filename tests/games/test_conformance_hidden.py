"""Conformance, the hidden information: every game in ``referee.games.GAMES`` on the seeded
random playouts of :mod:`tests.games.test_conformance` (whose docstring says what is
checked under "indistinguishability"). A file of its own, so that a test run on two workers
(one file per worker) runs it beside the rest of the conformance suite; each worker plays
the playouts once."""

from __future__ import annotations

from typing import Any

import pytest

from referee.games import GAMES
from referee.games.base import open_steps, time_out, timed_steps
from tests.games.test_conformance import (
    HIDDEN_CHECKS,
    NAMES,
    acting,
    as_json,
    mail_context,
    mails,
    playouts,
    unchanged,
)


@pytest.mark.parametrize("name", NAMES)
def test_hidden_information_stays_hidden(name: str) -> None:
    for out in playouts(name):
        game = out.game
        acting_players, silent = acting(out), [p for p in out.players if p not in acting(out)]
        pairs = sum(len(o.states) for o in playouts(name)) * max(1, len(acting_players))
        share = min(1.0, HIDDEN_CHECKS / pairs)
        sample = out.rnd("hidden-states")
        for k, state in enumerate(out.states):
            if share < 1.0 and sample.random() >= share and k != len(out.states) - 1:
                continue  # a sample of the states (the final one always)
            step, result = open_steps(game, state), game.result(state)
            public, standings = game.view(state, None), game.standings(state)
            # every acting player at every state; silent seats (which never act, and see
            # the same kind of thing) one per state, each in turn
            checked = [*acting_players, *([silent[k % len(silent)]] if silent else [])]
            for p in checked:
                rnd = out.rnd("hidden", k, p)
                before = unchanged(state)
                variants = game.hidden_variants(state, p, rnd)
                assert unchanged(state) == before
                view, form = game.view(state, p), game.form(state, p)
                context, _ = mail_context(game, state, p, out.players), mails(game, state, p, out.players)
                own_moves = game.sample_moves(state, p, rnd)
                for i, variant in enumerate(variants):
                    assert as_json(variant) == variant
                    assert open_steps(game, variant) == step and game.result(variant) == result
                    assert game.view(variant, p) == view
                    assert game.form(variant, p) == form
                    # a template sees nothing but its context: the same context, the same mails
                    # (rendered above on the state itself, for every kind)
                    assert mail_context(game, variant, p, out.players) == context
                    assert game.view(variant, None) == public, "the public view shows what a player may not know"
                    assert game.standings(variant) == standings
                    # the player's legal moves do not depend on what they cannot know
                    if own_moves:
                        move = rnd.choice(own_moves)
                        assert game.apply_move(variant, p, move).accepted, (move, "legality depends on hidden facts")
                    if i > 0:
                        continue  # the rest, on one variant per state and player (time)
                    # a valid state: the view and form of everybody checked (every acting player),
                    # their moves, and the deadline can close it
                    for q in checked:
                        game.view(variant, q), game.form(variant, q)
                        for move in game.sample_moves(variant, q, rnd):
                            assert game.apply_move(variant, q, move).accepted, (q, move)
                    for timed in timed_steps(game, variant)[:1]:
                        time_out(game, game.with_balances(variant, out.balances(variant)), timed.key)


# --------------------------------------------------------------------------- Stationary Roulette


def test_roulette_hidden_variants_obey_the_rules_and_cover_the_hidden_information() -> None:
    """The roulette variants are legal (colour-use limit, roulette and bet rules) and,
    across the playouts, vary every kind of hidden information at least once."""
    from referee.games.stationary_roulette import _bettable, bet_problems, prepares_in, roulette_problems, uses_left

    game = GAMES["stationary-roulette"]
    varied = set()
    for out in playouts(game.name):
        for k, state in enumerate(out.states):
            for p in out.players:
                o = next(q for q in out.players if q != p)
                for variant in game.hidden_variants(state, p, out.rnd("rules", k, p)):
                    recorded = variant["roulettes"][o]
                    pending = variant["pending"][o]
                    # nothing else differs: not the player's own data, not whether o prepared
                    assert [r is None for r in recorded] == [r is None for r in state["roulettes"][o]]
                    first = max(len(state["history"]) - 1, 0)
                    assert recorded[:first] == state["roulettes"][o][:first], "a revealed roulette changed"
                    rest = {
                        **variant,
                        "roulettes": {**variant["roulettes"], o: None},
                        "pending": {**variant["pending"], o: None},
                    }
                    same = {
                        **state,
                        "roulettes": {**state["roulettes"], o: None},
                        "pending": {**state["pending"], o: None},
                    }
                    assert rest == same
                    used: list[dict[str, Any]] = []
                    for r in [*recorded, pending["roulette"]]:
                        if r is not None:
                            assert roulette_problems(r, uses_left(used)) == [], r
                            used.append(r)
                    if pending["roulette"] is not None:
                        assert state["result"] is None and prepares_in(state["round"])
                    if pending["bet"] is not None:
                        assert state["result"] is None and _bettable(state, o) is not None
                        assert bet_problems(pending["bet"]) == []
                    if recorded != state["roulettes"][o]:
                        varied.add("unsettled roulette")
                    if pending["roulette"] != state["pending"][o]["roulette"]:
                        varied.add("pending roulette")
                    if pending["bet"] != state["pending"][o]["bet"]:
                        varied.add("pending bet")
    assert varied == {"unsettled roulette", "pending roulette", "pending bet"}
