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
    HIDDEN_ROTATING,
    NAMES,
    Playout,
    acting,
    as_json,
    mail_context,
    mails,
    playouts,
    unchanged,
)


def hidden_sample(name: str, rotating_seed: int) -> list[tuple[Playout, int, bool]]:
    """The states the check looks at, (playout, index, rotating): every state when the
    playouts hold at most ``HIDDEN_CHECKS`` (state, acting player) pairs; else a sample of
    about that many pairs drawn with the fixed seeds (the same states on every run: a
    failure repeats), the final state of each playout always, plus about
    ``HIDDEN_ROTATING`` pairs more, of other states, drawn with the run's rotating seed (other
    states on every run: over many runs the check reaches states the fixed sample never does)."""
    outs = playouts(name)
    pairs = sum(len(o.states) for o in outs) * max(1, len(acting(outs[0])))
    share = min(1.0, HIDDEN_CHECKS / pairs)
    more = min(1.0, HIDDEN_ROTATING / pairs / (1 - share)) if share < 1.0 else 0.0
    chosen = []
    for out in outs:
        fixed, rotating = out.rnd("hidden-states"), out.rnd("hidden-rotating", rotating_seed)
        for k in range(len(out.states)):
            if share >= 1.0 or fixed.random() < share or k == len(out.states) - 1:
                chosen.append((out, k, False))
            elif rotating.random() < more:
                chosen.append((out, k, True))
    return chosen


@pytest.mark.parametrize("name", NAMES)
def test_hidden_information_stays_hidden(name: str, conformance_seed: int, record_property: Any) -> None:
    chosen = hidden_sample(name, conformance_seed)
    checked_pairs = {False: 0, True: 0}
    for out, k, rotating in chosen:
        try:
            checked_pairs[rotating] += check_hidden(out, k, conformance_seed if rotating else None)
        except AssertionError as exc:
            seed = f"the rotating seed {conformance_seed} (REFEREE_CONFORMANCE_SEED)" if rotating else "a fixed seed"
            exc.add_note(f"{name}, playout seed {out.seed}, state {k} of {len(out.states)}: drawn with {seed}")
            raise
    states = sum(len(o.states) for o in playouts(name))
    record_property(
        "conformance-hidden",
        {"game": name, "states": states, "fixed": checked_pairs[False], "rotating": checked_pairs[True]},
    )


def check_hidden(out: Playout, k: int, rotating_seed: int | None) -> int:
    """The checks of the module docstring ("indistinguishability") at ``out.states[k]``; the
    number of (state, player) pairs checked. ``rotating_seed``: the run's rotating seed, which
    then also draws the variants and moves (None: the fixed seeds)."""
    game, state = out.game, out.states[k]
    acting_players, silent = acting(out), [p for p in out.players if p not in acting(out)]
    step, result = open_steps(game, state), game.result(state)
    public, standings = game.view(state, None), game.standings(state)
    # every acting player at every state; silent seats (which never act, and see
    # the same kind of thing) one per state, each in turn
    checked = [*acting_players, *([silent[k % len(silent)]] if silent else [])]
    before = unchanged(state)  # checked once all players are done: no call below changes the state
    for p in checked:
        rnd = out.rnd("hidden", k, p) if rotating_seed is None else out.rnd("hidden", k, p, "rotating", rotating_seed)
        variants = game.hidden_variants(state, p, rnd)
        # the context holds the view and (while a step is open) the form: each is built once
        context = mail_context(game, state, p, out.players)
        view, form = context["view"], context["form"] if step else game.form(state, p)
        mails(game, state, p, out.players, context)  # every kind of mail renders on the state itself
        own_moves = game.sample_moves(state, p, rnd)
        for i, variant in enumerate(variants):
            assert as_json(variant) == variant
            assert open_steps(game, variant) == step and game.result(variant) == result
            # a template sees nothing but its context: the same context, the same mails
            # (rendered above on the state itself, for every kind); the context holds the
            # view, and the form while a step is open
            variant_context = mail_context(game, variant, p, out.players)
            if variant_context != context or not step:  # (the view, then the form, named when they differ)
                assert variant_context["view"] == view
                assert (variant_context["form"] if step else game.form(variant, p)) == form
                assert variant_context == context
            assert game.view(variant, None) == public, "the public view shows what a player may not know"
            assert game.standings(variant) == standings
            # the player's legal moves do not depend on what they cannot know
            if own_moves:
                move = rnd.choice(own_moves)
                assert game.apply_move(variant, p, move).accepted, (move, "legality depends on hidden facts")
            if i > 0:
                continue  # the rest, on one variant per state and player (time)
            # a valid state: the view and form of everybody checked (every acting player; the
            # player's own were built for the context above), their moves, and the deadline can close it
            for q in checked:
                if q != p:
                    game.view(variant, q), game.form(variant, q)
                for move in game.sample_moves(variant, q, rnd):
                    assert game.apply_move(variant, q, move).accepted, (q, move)
            for timed in timed_steps(game, variant)[:1]:
                time_out(game, game.with_balances(variant, out.balances(variant)), timed.key)
    assert unchanged(state) == before, "hidden_variants, a view, a form or a mail changed the state"
    return len(checked)


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
