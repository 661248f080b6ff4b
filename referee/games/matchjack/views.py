"""What a player of MatchJack (or the public, the archive) sees (ruling 17): the view every
mail is rendered from, with each table as the viewer may see it and what they may do now,
and the organizers' standings."""

from __future__ import annotations

from typing import Any

from referee.games.base import State, clone, plural, require_player
from referee.games.matchjack import bots as botlib
from referee.games.matchjack import table
from referee.games.matchjack.play import public_action
from referee.games.matchjack.rules import (
    BOT_ANTE,
    HANDS,
    NAME,
    SETS,
    STAYSET_FEE,
    all_steps,
    ante_for,
    dealt_at,
    forfeiters,
    guess_hand,
    guess_problem,
    is_out,
    left_record,
    player_step,
    what_now,
)


def legal(state: State, player: str) -> dict[str, Any] | None:
    step = player_step(state, player)
    if step is None:
        return None
    if step.kind == "stay":
        choices = ["STAY", "FOLD"] + (["FOLD STAYSET"] if state["garnets"][player] >= STAYSET_FEE else [])
        return {"kind": "stay", "commands": choices, "second_ante": ante_for(state["hand"])}
    if step.kind == "bet":
        t = state["tables"][dealt_at(state, player)]
        legal = table.legal_actions(t["rounds"][-1], state["chips"], player)
        return {"kind": "bet", **(legal or {})}
    t = state["tables"][dealt_at(state, player)]  # an action turn
    return {
        "kind": "action",
        "commands": ["HIT", "SWAP UP", "SWAP DOWN"]
        + [f"DRAW {i + 1}" for i in range(len(t["hands"][player]))]
        + ["NEW"],
        "pile_empty": not t["pile"] and not t["spent"],
    }


def table_view(state: State, name: str, viewer: str | None) -> dict[str, Any]:
    t = state["tables"][name]
    at = viewer is not None and viewer in t["dealt"]
    revealed = set(t["revealed"])
    view: dict[str, Any] = {
        "name": name,
        "hand": state["hand"],
        "seats": [{"seat": t["seats"][p], "player": p, "name": state["names"][p]} for p in t["dealt"]],
        "bots": list(t["bots"]),
        "status": t["status"],
        "pot": sum(t["contrib"].values()),
        "contributions": dict(t["contrib"]),
        "stay": t["stay"],
        "stayed": list(t["stayed"]),
        "hall": list(t["hall"]),
        "folded": list(t["folded"]),
        "all_in": list(t["all_in"]),
        "starter": t["starter"],
        "order": list(t["order"]),
        "rounds": t["rounds"],
        "action_order": list(t["action_order"]) if t["status"] in ("action", "done") else [],
        "showdown": t["showdown"],
        "pile": {"left": len(t["pile"]), "spent": len(t["spent"]), "refills": t["refills"]},
        "at_table": at,
    }
    if not at:
        view["actions"] = [public_action(e) for e in t["actions"]]
        view["turned"] = None if t["turned"] is None else {"refill": t["turned"]["refill"]}
        view["cards"] = None
        view["pile"]["up"] = None
        return view
    actions = []
    for e in t["actions"]:
        shown = dict(e)
        if e["action"] == "draw" and not e.get("face_up", True) and e["who"] != viewer:
            shown.pop("drawn", None)
        actions.append(shown)
    view["actions"] = actions
    view["turned"] = t["turned"]
    view["pile"]["up"] = t["up"]
    view["pile"]["spent_cards"] = list(t["spent"])
    cards = {}
    for who in [*t["dealt"], *t["bots"]]:
        cards[who] = [
            {"card": c if (up or who == viewer or who in revealed) else None, "up": up} for c, up in t["hands"][who]
        ]
    view["cards"] = cards
    return view


def view(state: State, player: str | None) -> dict[str, Any]:
    """What ``player`` may know (None: the public, the archive; ruling 17): all stacks;
    seats and sets; per table the pot, the antes and bets, who stayed or folded once the
    stay step has closed, the actions taken (no cards), the showdowns; at their own
    table (the one they were dealt at this hand) the face-up cards, the face-up pile
    card and the spent cards, their own face-down card; their own pending stay choice,
    garnets, guesses and answers; what they may do now. Never a face-down card of
    another player before the showdown, the pile order, a bot's rule before the end,
    another player's pending choice or guess. ``history``: every finished hand's public
    record in the public view (the archive's rounds and chart); in a player's, the last
    finished hand's only (what their mails tell: each is a copy, and a late hand's view
    would otherwise copy every earlier hand for every mail)."""
    if player is not None:
        require_player(state, player)
    over = state["result"] is not None
    h = state["hand"]
    steps = all_steps(state)
    mine = None if player is None else player_step(state, player)
    base: dict[str, Any] = {
        "game": NAME,
        "hand": h,
        "hands": HANDS,
        "phase": state["phase"],
        "over": over,
        "ante": ante_for(max(h, 1)),
        "bot_ante": BOT_ANTE,
        "players": list(state["players"]),
        "names": dict(state["names"]),
        "stacks": dict(state["chips"]),
        "sets": dict(state["sets"]),
        "seats": dict(state["seats"]),
        "eliminated": [left_record(e) for e in state["eliminated"]],
        "steps": [
            {"key": s.key, "kind": s.kind, "title": s.title, "players": list(s.players), "waiting": s.waiting}
            for s in steps
        ],
        "tables": {name: table_view(state, name, player) for name in SETS},
        "winners": dict(state["winners"]),
        "catalogue": [{"id": r.id, "text": r.text} for r in botlib.CATALOGUE],
        "bots": {name: list(botlib.BOTS[name]) for name in SETS},
        "rules": dict(state["rules"]) if over else None,
        "rewards": list(state["rewards"]),
        "history": state["history"] if player is None else state["history"][-1:],
        "final": state["final"],
        "result": state["result"],
        "you": player,
    }
    if player is None:
        base.update({"guesses": None if not over else state["guesses"], "your_table": None})
        return clone(base)
    name = dealt_at(state, player)
    t = state["tables"][name] if name else None
    base.update(
        {
            "name": state["names"][player],
            "out": is_out(state, player),
            "your_table": name,
            "your_set": state["sets"][player],
            "your_seat": state["seats"][player],
            "your_cards": None if t is None else t["hands"][player],
            "your_stay": state["stay"].get(player) if state["phase"] == "stay" and not over else None,
            "stayset_refused": bool(t and player in t["refused"]),
            "garnets": state["garnets"][player],
            "guesses": state["guesses"] if over else {player: state["guesses"][player]},
            "guess": {
                "allowed": guess_problem(state, player) is None,
                "hand": guess_hand(state),
                "why_not": guess_problem(state, player),
                "paid_bots": [g["bot"] for g in state["guesses"][player] if g["paid"]],
            },
            "step": None if mine is None else {"key": mine.key, "kind": mine.kind, "title": mine.title},
            "legal": legal(state, player),
            "now": what_now(state, player),
        }
    )
    return clone(base)


def standings(state: State) -> list[str]:
    """One public line per player: set and seat, chips, in the hall, out."""
    lines = []
    out = {e["player"]: e["hand"] for e in state["eliminated"]}
    forfeited = forfeiters(state)
    for p in state["players"]:
        line = f"{state['names'][p]} ({p}): {plural(state['chips'][p], 'chip')}"
        if p in forfeited:
            line += f"; forfeited the match in hand {out[p]}"
        elif p in out:
            line += f"; left the match in hand {out[p]} (0 chips)"
        else:
            line += f"; {state['sets'][p]} set, seat {state['seats'][p]}"
            name = dealt_at(state, p)
            if name is not None and state["tables"][name]["stay"] is not None:
                t = state["tables"][name]
                if p in t["hall"] and t["status"] != "done":
                    line += " (in the hall this hand)"
        lines.append(line)
    f = state["final"]
    done = len(state["history"])
    tail = f"hands finished: {done} of {HANDS}"
    if f is not None:
        tail += f"; winner {state['names'][f['winner']]}, EC {state['names'][f['ec']]}"
    lines.append(tail)
    return lines
