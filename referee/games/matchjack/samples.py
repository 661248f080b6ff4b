"""For tests, demos and automated players of MatchJack: a few legal moves of a player, and
states that differ only in what a player may not know yet (the conformance suite,
``tests/games/test_conformance.py``)."""

from __future__ import annotations

import random
from typing import Any

from referee.games.base import Move, State, clone, require_player
from referee.games.matchjack import grammar, table
from referee.games.matchjack.rules import (
    ALL_BOTS,
    RULE_IDS,
    SETS,
    STAYSET_FEE,
    dealt_at,
    guess_problem,
    player_step,
)


def sample_moves(state: State, player: str, rnd: random.Random) -> list[Move]:
    """A few legal moves of ``player`` now, [] when they have no step open (a GUESS is
    offered now and then, only alongside a step's moves, so playouts stay finite)."""
    if state["result"] is not None or player not in state["players"]:
        return []
    step = player_step(state, player)
    if step is None:
        return []
    moves: list[Move] = []
    if step.kind == "stay":  # revisions too: the step is open until its deadline
        moves = [{"stay": "stay"}, {"stay": "fold"}]
        if state["garnets"][player] >= STAYSET_FEE:
            moves.append({"stay": "stayset"})
    elif step.kind == "bet":
        t = state["tables"][dealt_at(state, player)]
        legal = table.legal_actions(t["rounds"][-1], state["chips"], player)
        assert legal is not None
        moves = [{"bet": "check"} if legal["check"] else {"bet": "call"}, {"bet": "fold"}]
        if legal["bet"] is not None and rnd.random() < 0.6:
            b = legal["bet"]
            moves.append({"bet": "bet", "amount": rnd.randint(b["min"], min(b["max"], b["min"] + 4))})
        if legal["raise"] is not None and rnd.random() < 0.6:
            r = legal["raise"]
            if rnd.random() < 0.5:
                moves.append({"bet": "raise", "by": rnd.randint(r["min"], min(r["max"], 3))})
            else:
                moves.append({"bet": "raise-to", "to": rnd.randint(r["to_min"], min(r["to_max"], r["to_min"] + 3))})
        if rnd.random() < 0.1:
            moves.append({"bet": rnd.choice(["all-in", "call"])})
    else:  # an action turn
        size = len(state["tables"][dealt_at(state, player)]["hands"][player])
        every = [
            {"action": "hit"},
            {"action": "swap", "card": "up"},
            {"action": "swap", "card": "down"},
            {"action": "draw", "position": rnd.randint(1, size)},
            {"action": "new"},
        ]
        moves = rnd.sample(every, 3)
    ref = grammar.reference(step.title)
    moves = [{**m, "step": ref} if rnd.random() < 0.3 else m for m in moves]
    if guess_problem(state, player) is None and rnd.random() < 0.2:
        moves.append({"guess": {"bot": rnd.choice(ALL_BOTS), "rule": rnd.choice(RULE_IDS)}})
    return moves


def hidden_variants(state: State, player: str, rnd: random.Random) -> list[State]:
    """A few states that differ from ``state`` only in what ``player`` may not know yet:
    the face-down cards of the others (humans and bots, not yet shown) and the undealt
    pile cards, at each table, shuffled among themselves (at a table the player sits at,
    a pile that is a refill keeps its cards, seen face up, and only changes order); the
    bots' rules (while secret), kept true to the player's own guesses and answers, with
    the other players' guesses rewritten to the same answers; the other players' pending
    stay choices."""
    require_player(state, player)
    if state["result"] is not None:
        return []
    variants = []
    for _ in range(2):
        new = clone(state)
        for name in SETS:
            _vary_cards(new["tables"][name], player, rnd)
        _vary_rules(new, player, rnd)
        if new["phase"] == "stay":
            for q, choice in new["stay"].items():
                if q != player and choice is not None:
                    options = ["stay", "fold"] + (["stayset"] if new["garnets"][q] >= STAYSET_FEE else [])
                    new["stay"][q] = rnd.choice(options)
        if new != state:
            variants.append(new)
    return variants


def _vary_cards(t: dict[str, Any], player: str, rnd: random.Random) -> None:
    at = player in t["dealt"]
    revealed = set(t["revealed"])
    slots = [
        (who, i)
        for who in [*t["dealt"], *t["bots"]]
        if who != player and who not in revealed
        for i, (_, up) in enumerate(t["hands"].get(who, []))
        if not up
    ]
    pool = [t["hands"][who][i][0] for who, i in slots]
    with_pile = not (at and t["refilled"])
    if with_pile:
        pool += t["pile"]
    rnd.shuffle(pool)
    moved = {}
    for k, (who, i) in enumerate(slots):
        moved[t["hands"][who][i][0]] = pool[k]
        t["hands"][who][i][0] = pool[k]
    for e in t["actions"]:  # a face-down card drawn by another: the log follows the card
        if e["action"] == "draw" and e.get("face_up") is False and e["who"] != player and e.get("drawn") in moved:
            e["drawn"] = moved[e["drawn"]]
    if with_pile:
        t["pile"] = pool[len(slots) :]
    else:
        rnd.shuffle(t["pile"])


def _vary_rules(s: State, player: str, rnd: random.Random) -> None:
    own = s["guesses"][player]
    chosen = None
    for _ in range(12):
        candidate = dict(zip(ALL_BOTS, rnd.sample(RULE_IDS, len(ALL_BOTS)), strict=True))
        if all((candidate[g["bot"]] == g["rule"]) == g["right"] for g in own):
            chosen = candidate
            break
    if chosen is None:
        return
    s["rules"] = chosen
    for q, listed in s["guesses"].items():
        if q == player:
            continue
        for g in listed:
            if g["right"]:
                g["rule"] = chosen[g["bot"]]
            else:
                g["rule"] = rnd.choice([r for r in RULE_IDS if r != chosen[g["bot"]]])
