"""What a seat of Betting Minority (or the public, the archive) sees: the view every mail is
rendered from (a participant's, a DM player's, the public's), and the organizers' standings
built from the public view."""

from __future__ import annotations

from typing import Any

from referee.games.base import State, clone, plural
from referee.games.betting_minority.play import step, unplaced_names, what_now
from referee.games.betting_minority.rules import (
    DMO,
    EC,
    PARTICIPANT,
    ROOMS,
    ROUNDS,
    bet_cap,
    bet_figures,
    call_amount,
    format_placement,
    opponent,
    role,
    short_ids,
    total,
)


def view(state: State, player: str | None) -> dict[str, Any]:
    """What ``player`` may see (None: the public, the archive). A participant sees their
    own list and who the DM players are, nothing of the play; a DM player sees the
    positions, both stacks, the betting so far with its split, the finished rounds
    (each with the entries its payout revealed) and what they may do now; never an
    entry of the open round or a later one, nor the opponent's send before the step
    closes. The public sees what both DM players see, without any send in progress."""
    seat_role = role(state, player)
    names = state["names"]
    short = short_ids(state["participants"])
    base: dict[str, Any] = {
        "role": seat_role,
        "me": player,
        "ec": state["ec"],
        "dmo": state["dmo"],
        "names": dict(names),
        "rounds": ROUNDS,
        "rooms": list(ROOMS),
        "participants": [{"id": p, "short": short[p], "name": names[p]} for p in state["participants"]],
    }
    if seat_role == PARTICIPANT:
        base["entries"] = [names[state["ec"] if e == EC else state["dmo"]] for e in state["lists"][player]]
        base["entry_roles"] = list(state["lists"][player])
        base["short"] = short[player]
        base["final"] = state["result"]
        return clone(base)  # one copy of everything the view shares with the state
    now = step(state)
    b = state["betting"]
    base.update(
        {
            "round": state["round"],
            "phase": state["phase"],
            "step": None if now is None else {"key": now.key, "kind": now.kind, "title": now.title},
            "marker": state["marker"],
            "marker_given": state["marker_given"],
            "stacks": dict(state["chips"]),
            "missed": dict(state["missed"]),
            "positions": [
                {"id": p, "short": short[p], "name": names[p], "room": state["positions"][p]}
                for p in state["participants"]
            ],
            "occupants": {
                room: [names[p] for p in state["participants"] if state["positions"][p] == room] for room in ROOMS
            },
            "unplaced": unplaced_names(state) if state["result"] is None else [],
            "placements": state["placements"],
            "betting": None
            if b is None
            else {
                "opener": b["opener"],
                "to_act": b["to_act"],
                "turn": b["turn"],
                "extension": b["extension"],
                "switched": b["switched"],
                "placements": b["placements"],
                "totals": {p: total(pl) for p, pl in b["placements"].items()},
                "actions": b["actions"],
            },
            "history": state["history"],
            "final": state["result"],
        }
    )
    if state.get("forfeit") is not None:  # only once a DM player forfeited (ruling 21)
        base["forfeit"] = state["forfeit"]
    if seat_role in (EC, DMO):
        assert player is not None
        opp = opponent(state, player)
        base["opponent"] = opp
        sent = state["send"]["sent"][player] if state["phase"] == "send" and state["result"] is None else None
        base["sent"] = None if sent is None else {**sent, "name": names[sent["participant"]]}
        base["legal"] = legal(state, player)
        base["now"] = what_now(state, player) if now is not None else None
    return clone(base)  # one copy of everything the view shares with the state


def legal(state: State, player: str) -> dict[str, Any] | None:
    now = step(state)
    if now is None or player not in now.players:
        return None
    phase = state["phase"]
    if phase == "marker":
        return {"kind": "marker"}
    if phase == "send":
        if state["send"]["sent"][player] is not None:
            return None
        return {"kind": "send", "unplaced": unplaced_names(state)}
    mine, theirs, their_total = bet_figures(state, player)
    cap = bet_cap(mine, theirs)
    return {
        "kind": "bet",
        "cap": cap,
        "opening": their_total == 0,
        "call": None if their_total == 0 else call_amount(mine, theirs, their_total),
        "raise_from": their_total + 1 if cap > their_total else None,
    }


def standings(state: State) -> list[str]:
    """Two lines, one per DM player, from the public view only."""
    public = view(state, None)
    lines = []
    for p in (state["ec"], state["dmo"]):
        line = f"{p} ({role(state, p)}): {plural(public['stacks'][p], 'chip')}"
        if public["marker"] == p:
            line += ", holds the starting marker"
        if public["missed"][p]:
            k = public["missed"][p]
            line += f", {plural(k, 'betting turn')} missed"
        b = public["betting"]
        if b is not None and b["placements"][p]:
            line += f"; bet {format_placement(b['placements'][p])}"
        lines.append(line)
    done = len(public["history"])
    lines.append(f"rounds finished: {done} of {ROUNDS}")
    return lines
