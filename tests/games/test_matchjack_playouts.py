"""MatchJack on seeded random playouts, with concurrent steps (``steps``, a deadline per step):
the properties the conformance suite checks once the game is registered, run here on the
engine directly. A playout applies, at each event, either one of the ``sample_moves`` of a
player of an open step, or the deadline of one of the timed open steps (``with_holdings``
with the garnets as the season ledger would give them, then ``apply_timeout(state, key)``).

Checked: every playout ends with a result; states and views are JSON; every transfer is
positive, between two accounts, in a declared currency; ``view["stacks"]`` moves exactly by
the match-chip transfers; every sample move is accepted; forms parse back to accepted moves
(and are empty exactly when there is nothing to do); a player outside every open step has
no sample moves; the given state is never changed; the log (seed, options, moves,
deadlines with their holdings) replays the match exactly, also from a JSON round trip
mid-match; every ``hidden_variants`` state gives the player the same view, form, steps,
public view and standings, and takes their moves.
"""

from __future__ import annotations

import functools
import json
import random
from dataclasses import dataclass
from typing import Any

import pytest

from referee.games.base import MATCH_CHIPS, GameError, State
from referee.games.matchjack.engine import GAME as G
from tests.games.test_matchjack_helpers import NAMES, PLAYERS

SEEDS = (0, 1, 2, 3, 5)  # 5: a right guess (random guesses are right one time in ten)
MAX_EVENTS = 5000
CURRENCIES = {MATCH_CHIPS, "garnets"}


def as_json(data: Any) -> Any:
    return json.loads(json.dumps(data, allow_nan=False))


def net(transfers: list[dict], account: str, money: str) -> int:
    return sum(
        t["amount"] * ((t["to"] == account) - (t["from"] == account)) for t in transfers if t.get("currency") == money
    )


@dataclass
class Playout:
    seed: int
    options: dict[str, Any]
    events: list[tuple[str, Any, Any]]  # ("move", player, move) | ("timeout", key, holdings)
    states: list[State]


def garnets(start: dict[str, int], state: State) -> dict[str, dict[str, int]]:
    """The live garnets as the season ledger holds them: the start plus the transfers."""
    return {"garnets": {p: start[p] + net(state["transfers"], p, "garnets") for p in PLAYERS}}


@functools.cache
def playout(seed: int) -> Playout:
    rnd = random.Random(f"matchjack:{seed}")
    start = {p: rnd.choice([0, 2, 5, 9]) for p in PLAYERS}
    options = as_json({"names": NAMES, "holdings": {"garnets": start}})
    state = G.initial_state(seed, PLAYERS, options)
    out = Playout(seed, options, [], [state])
    deadline = rnd.choice([0.03, 0.1, 0.25])
    for _ in range(MAX_EVENTS):
        if G.result(state) is not None:
            assert G.steps(state) == () and G.step(state) is None
            return out
        steps = G.steps(state)
        timed = [s for s in steps if not s.waiting]
        assert timed, steps
        assert G.step(state) == steps[0]
        before = json.dumps(state, sort_keys=True)
        movers = [(p, m) for s in timed for p in s.players if (m := G.sample_moves(state, p, rnd))]
        if movers and rnd.random() >= deadline:
            player, moves = rnd.choice(movers)
            move = rnd.choice(moves)
            applied = G.apply_move(state, player, move)
            assert applied.accepted and applied.changed, (move, applied.reason)
            out.events.append(("move", player, as_json(move)))
            state = applied.state
        else:
            step = rnd.choice(timed)
            holdings = garnets(start, state)
            state = G.apply_timeout(G.with_holdings(state, holdings), step.key)
            assert step.key not in [s.key for s in G.steps(state)], "a deadline left its step open"
            out.events.append(("timeout", step.key, holdings))
        assert json.dumps(out.states[-1], sort_keys=True) == before, "a call changed the state it was given"
        out.states.append(state)
    raise AssertionError(f"seed {seed}: no end after {MAX_EVENTS} events")


def replay(out: Playout, upto: int | None = None, state: State | None = None, since: int = 0) -> State:
    if state is None:
        state = G.initial_state(out.seed, PLAYERS, out.options)
    for kind, who, payload in out.events[since:upto]:
        if kind == "move":
            state = G.apply_move(state, who, payload).state
        else:
            state = G.apply_timeout(G.with_holdings(state, payload), who)
    return state


@pytest.mark.parametrize("seed", SEEDS)
def test_playouts_end_with_a_result(seed: int) -> None:
    out = playout(seed)
    final = out.states[-1]
    result = G.result(final)
    assert result is not None and set(result.outcome) == set(PLAYERS) == set(result.victory_points)
    assert list(result.outcome.values()).count("win") == 1 and sum(result.victory_points.values()) == 1
    winner = next(p for p, o in result.outcome.items() if o == "win")
    assert result.awards == {"cols": {winner: 2}}
    # no nomination in the match (the season's step): the result ranks the six, the winner
    # first and the EC last, and the match is over right after its last hand
    assert result.signals == [] and sorted(result.ranking) == sorted(PLAYERS)
    assert result.ranking[0] == winner == result.scores["winner"] and result.ranking[-1] == result.scores["ec"]
    before = next(s for s in reversed(out.states) if s["result"] is None)
    assert len(final["history"]) == len(before["history"]) + 1, "the match ends with the hand that ends it"
    assert len(final["history"]) == 15 or len([p for p in PLAYERS if final["chips"][p] > 0]) <= 1
    assert G.awaiting(final) == () and all(G.sample_moves(final, p, random.Random(1)) == [] for p in PLAYERS)
    assert all(G.form(final, p) == "" for p in PLAYERS)
    with pytest.raises(GameError):
        G.apply_timeout(final)
    for kind, who, payload in out.events[-3:]:
        if kind == "move":
            applied = G.apply_move(final, who, payload)
            assert not applied.accepted and not applied.changed
    assert G.view(final, None)["rules"] == final["rules"]


@pytest.mark.parametrize("seed", SEEDS)
def test_playouts_replay_exactly_also_from_json(seed: int) -> None:
    out = playout(seed)
    assert replay(out) == out.states[-1]
    rnd = random.Random(seed)
    for k in rnd.sample(range(len(out.events) + 1), 3):
        assert replay(out, k) == out.states[k]
    k = rnd.randrange(len(out.states))
    assert replay(out, state=as_json(out.states[k]), since=k) == out.states[-1]


@pytest.mark.parametrize("seed", SEEDS)
def test_playouts_conserve_chips_and_stay_json(seed: int) -> None:
    out = playout(seed)
    initial = G.view(out.states[0], None)["stacks"]
    start = out.states[0]["transfers"]
    for before, after in zip(out.states, out.states[1:], strict=False):
        assert after["transfers"][: len(before["transfers"])] == before["transfers"]
    for k, state in enumerate(out.states):
        assert as_json(state) == state
        for t in state["transfers"]:
            assert isinstance(t["amount"], int) and t["amount"] > 0 and t["from"] != t["to"]
            assert t["currency"] in CURRENCIES
        public = G.view(state, None)
        for p in PLAYERS:
            moved = net(state["transfers"], p, MATCH_CHIPS) - net(start, p, MATCH_CHIPS)
            assert public["stacks"][p] == initial[p] + moved == state["chips"][p]
            assert state["chips"][p] >= 0
        if k % 5 == 0:
            for p in [*PLAYERS, None]:
                view = G.view(state, p)
                assert as_json(view) == view
    final = out.states[-1]
    for pot in ("pot-main", "pot-lost"):
        assert net(final["transfers"], pot, MATCH_CHIPS) == 0, "chips left in a pot"


@pytest.mark.parametrize("seed", SEEDS)
def test_playouts_sample_moves_and_forms(seed: int) -> None:
    out = playout(seed)
    for k, state in enumerate(out.states):
        if k % 3:
            continue
        in_steps = {p for s in G.steps(state) for p in s.players}
        for p in PLAYERS:
            rnd = random.Random(f"{seed}:{k}:{p}")
            moves = G.sample_moves(state, p, rnd)
            if p not in in_steps:
                assert moves == [], (p, G.steps(state))
            for move in moves:
                applied = G.apply_move(state, p, move)
                assert applied.accepted and applied.changed, (move, applied.reason)
            form = G.form(state, p)
            if not moves:
                assert form == ""
                continue
            current = state
            parsed = G.parse(state, p, form).moves
            assert parsed
            for move in parsed:
                applied = G.apply_move(current, p, move)
                assert applied.accepted, (form, move, applied.reason)
                current = applied.state


@pytest.mark.parametrize("seed", SEEDS)
def test_playouts_hidden_information_stays_hidden(seed: int) -> None:
    out = playout(seed)
    pick = random.Random(f"hidden:{seed}")
    chosen = sorted(pick.sample(range(len(out.states)), min(25, len(out.states))))
    for k in chosen:
        state = out.states[k]
        steps, public, standings = G.steps(state), G.view(state, None), G.standings(state)
        for p in PLAYERS:
            rnd = random.Random(f"{seed}:{k}:{p}")
            view, form = G.view(state, p), G.form(state, p)
            own = G.sample_moves(state, p, rnd)
            for i, variant in enumerate(G.hidden_variants(state, p, rnd)):
                assert as_json(variant) == variant
                assert G.steps(variant) == steps and G.result(variant) == G.result(state)
                assert G.view(variant, p) == view
                assert G.form(variant, p) == form
                assert G.view(variant, None) == public
                assert G.standings(variant) == standings
                for audience_step in steps:
                    assert G.audience(variant, audience_step) == G.audience(state, audience_step)
                for move in own:
                    assert G.apply_move(variant, p, move).accepted, (move, "legality depends on hidden facts")
                if i == 0:
                    for q in PLAYERS:
                        G.view(variant, q), G.form(variant, q)
                        for move in G.sample_moves(variant, q, rnd):
                            assert G.apply_move(variant, q, move).accepted
                    for step in steps:
                        if not step.waiting:
                            G.apply_timeout(variant, step.key)


def test_the_playouts_cover_the_game() -> None:
    """Across the playouts: every step kind (the waiting step, breaks),
    guesses right and wrong, all-in players, eliminations, FOLD STAYSET. (Refills and
    no-op actions are rare here: see test_matchjack.py.)"""
    seen: set[str] = set()
    for seed in SEEDS:
        out = playout(seed)
        for state in out.states:
            for step in G.steps(state):
                seen.add(step.kind)
            for t in state["tables"].values():
                if t["refills"]:
                    seen.add("refill")
                if t["all_in"]:
                    seen.add("all-in")
                if t["stay"] and any(v["choice"] == "stayset" for v in t["stay"].values()):
                    seen.add("stayset")
        final = out.states[-1]
        if final["eliminated"]:
            seen.add("elimination")
        if any(g["right"] for gs in final["guesses"].values() for g in gs):
            seen.add("right guess")
        if any(not g["right"] for gs in final["guesses"].values() for g in gs):
            seen.add("wrong guess")
    assert {"stay", "bet", "action", "wait", "break"} <= seen and "nominate" not in seen
    assert {"all-in", "elimination", "right guess", "wrong guess", "stayset"} <= seen, seen
