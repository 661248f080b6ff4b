"""MatchJack's pots as amended in RULINGS ("Pots"), as properties: of the pure functions
(``hands.uncalled_bet``, ``hands.side_pots``, ``hands.award``) on generated tables, and of
every showdown of seeded random matches played through the engine.

In every showdown: the chips put in (antes and bets of every seat, the bots' antes, folded
seats' too) equal the chips paid out plus the chips discarded plus a bet nobody called
handed back; no two pots have the same contestants (a pot is split once); the bots contest
every pot; and antes are never returned: what goes back to a player is at most what they
bet in the betting rounds, and no other chip leaves a pot for a player but a pot won.
The named cases of the review are in ``test_matchjack.py`` (``test_ruling_11_pots_...``).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games.base import State
from referee.games.matchjack import engine
from referee.games.matchjack.engine import GAME as G
from referee.games.matchjack.hands import Pot, award, side_pots, uncalled_bet
from tests.games.test_matchjack_helpers import NAMES, PLAYERS

BOTS = ("Alpha", "Beta")
HUMANS = ("a", "b", "c", "d")
SEEDS = range(24)
MAX_EVENTS = 4000


@st.composite
def tables(draw: Any) -> dict[str, Any]:
    """A showdown's table: each human's antes and bets, who folded, who is all in; ranks for
    all (None: bust)."""
    humans = HUMANS[: draw(st.integers(1, 4))]
    antes = {p: draw(st.integers(1, 6)) for p in humans}
    bets = {p: draw(st.integers(0, 12)) for p in humans}
    live = [p for p in humans if draw(st.booleans())]
    all_in = [p for p in live if draw(st.booleans())]
    ranks = {x: draw(st.one_of(st.none(), st.tuples(st.integers(0, 3), st.integers(0, 4)))) for x in (*humans, *BOTS)}
    return {"antes": antes, "bets": bets, "live": live, "all_in": all_in, "ranks": ranks}


def settle(table: dict[str, Any]) -> tuple[dict[str, int], str, int, list[Pot], Any]:
    contrib = {p: table["antes"][p] + table["bets"][p] for p in table["antes"]} | dict.fromkeys(BOTS, 1)
    bettor, back = uncalled_bet(contrib, table["bets"], table["live"])
    kept = dict(contrib)
    if back:
        kept[bettor] -= back
    pots = side_pots(kept, live=table["live"], all_in=table["all_in"], bots=BOTS)
    return contrib, bettor, back, pots, award(pots, table["ranks"], bots=BOTS)


def check_pots(pots: list[Pot] | list[dict[str, Any]], bots: tuple[str, ...] = BOTS) -> None:
    contestants = [tuple(p.eligible if isinstance(p, Pot) else p["eligible"]) for p in pots]
    assert len(set(contestants)) == len(contestants), f"a pot split twice: {pots}"
    assert all(set(bots) <= set(c) for c in contestants), f"a pot the bots do not contest: {pots}"
    assert all((p.amount if isinstance(p, Pot) else p["amount"]) > 0 for p in pots)


@settings(max_examples=300, deadline=None)
@given(tables())
def test_chips_in_are_chips_paid_out_plus_discarded(table: dict[str, Any]) -> None:
    contrib, bettor, back, pots, got = settle(table)
    assert sum(p.amount for p in pots) == sum(contrib.values()) - back
    assert sum(got.won.values()) + got.discarded + back == sum(contrib.values())
    check_pots(pots)


@settings(max_examples=300, deadline=None)
@given(tables())
def test_antes_are_never_returned(table: dict[str, Any]) -> None:
    _, bettor, back, _, _ = settle(table)
    assert back == 0 or (bettor in table["live"] and back <= table["bets"][bettor])


# --------------------------------------------------------------------------- the engine


def showdowns(seed: int) -> list[dict[str, Any]]:
    """Plays a match of random moves and deadlines; returns every showdown with its table's
    betting rounds, its humans, its bots and the transfers of its hand."""
    rnd = random.Random(f"matchjack pots:{seed}")
    start = {p: rnd.choice([0, 5, 9]) for p in PLAYERS}
    state = G.initial_state(seed, PLAYERS, {"names": NAMES, "holdings": {"garnets": start}})
    deadline = rnd.choice([0.05, 0.15, 0.3])
    found: list[dict[str, Any]] = []
    for _ in range(MAX_EVENTS):
        if G.result(state) is not None:
            return found
        timed = [s for s in G.steps(state) if not s.waiting]
        movers = [(p, m) for s in timed for p in s.players if (m := G.sample_moves(state, p, rnd))]
        if movers and rnd.random() >= deadline:
            player, moves = rnd.choice(movers)
            after = G.apply_move(state, player, rnd.choice(moves)).state
        else:
            after = G.apply_timeout(state, rnd.choice(timed).key)
        found += shown(state, after)
        state = after
    raise AssertionError(f"seed {seed}: no end after {MAX_EVENTS} events")


def shown(before: State, after: State) -> list[dict[str, Any]]:
    """The showdowns an event made (the hand's record holds a table the next hand replaced)."""
    h = before["hand"]
    record = next((r for r in after["history"] if r["hand"] == h), None)
    out = []
    for name in engine.SETS:
        if before["phase"] not in ("stay", "play") or before["tables"][name]["showdown"] is not None:
            continue
        t = after["tables"][name] if after["hand"] == h else None
        if t is not None and t["showdown"] is not None:
            table = {"showdown": t["showdown"], "rounds": t["rounds"], "dealt": t["dealt"], "bots": t["bots"]}
        elif record is not None:
            r = record["tables"][name]
            table = {"showdown": r["showdown"], "rounds": r["rounds"], "dealt": list(r["seats"])}
            table["bots"] = list(engine.botlib.BOTS[name])
        else:
            continue
        pot, key = engine.POTS[name], f"h{h}-"
        table["in"] = [t for t in after["transfers"] if t["to"] == pot and t["step"].startswith(key)]
        table["out"] = [t for t in after["transfers"] if t["from"] == pot and t["step"].startswith(key)]
        out.append(table)
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_every_showdown_pays_out_every_chip_once_and_returns_no_ante(seed: int) -> None:
    seen = showdowns(seed)
    assert len(seen) >= 4, "too few showdowns in a whole match"
    for table in seen:
        sd = table["showdown"]
        chips_in = sum(t["amount"] for t in table["in"])
        returned = sum(sd["returned"].values())
        assert chips_in == sum(t["amount"] for t in table["out"]), "chips left in the pot"
        assert chips_in == sum(sd["won"].values()) + sd["discarded"] + returned, sd
        assert sd["pot"] == sum(p["amount"] for p in sd["pots"]) == chips_in - returned
        check_pots(sd["pots"], tuple(table["bots"]))
        bets = {p: sum(r["bets"].get(p, 0) for r in table["rounds"]) for p in table["dealt"]}
        for p, n in sd["returned"].items():
            assert n <= bets[p], f"an ante handed back to {p}: {sd}"
        for t in table["out"]:
            assert t["to"] == engine.DISCARD or t["reason"].startswith(("pot, hand", "bet nobody called")), t
        assert returned == sum(t["amount"] for t in table["out"] if t["reason"].startswith("bet nobody called"))
