"""What a player of Stationary Roulette (or the public, the archive) sees: the view every mail
is rendered from, and the organizers' standings built from the public totals."""

from __future__ import annotations

from typing import Any

from referee.games.base import State, clone, opponent, plural, require_player
from referee.games.stationary_roulette.rules import (
    BET_POINTS,
    CHIP_CAP,
    NAME,
    ROUNDS,
    bettable,
    nothing_to_bet,
    prepares_in,
    round_title,
    uses_left,
    uses_left_after_each,
)
from referee.games.stationary_roulette.settlement import last_record, settled_records


def view(state: State, player: str | None) -> dict[str, Any]:
    """What ``player`` may know (None: the public archive). Hidden until settled:
    winning colours of unsettled roulettes (also through colour-use counts), the
    opponent's submissions this round (not even whether they exist), the points
    of roulettes in play (public view only).

    A player's view holds what their mails show: the running totals (``standings``)
    and the last settled round (``last_result``), so it costs the same in every
    round. The public view adds ``history``, every settled round (the archive)."""
    if player is not None:
        require_player(state, player)
    over = state["result"] is not None
    settled = state["history"]
    viewer = None if over else player  # a finished match has nothing personal left
    # built from references into the state, then copied once: nothing shared leaves
    view = {
        "game": NAME,
        "round": state["round"],
        "rounds": ROUNDS,
        "title": round_title(state["round"]),
        "over": over,
        "players": list(state["players"]),
        "you": player,
        "opponent": None if player is None else opponent(state, player),
        "standings": standings_of(state, player),
        "todo": None if viewer is None else todo(state, viewer),
        "pending": None if viewer is None else pending_view(state, viewer),
        "in_play": None if viewer is None else in_play(state, viewer),
        "last_result": entry_view(state, last_record(state), player) if settled else None,
        "final": state["result"],
    }
    if player is None:
        view["history"] = history(state)
    if state.get("forfeit") is not None:  # only once a player forfeited (ruling 33)
        view["forfeit"] = state["forfeit"]
    copied: dict[str, Any] = clone(view)
    return copied


def standings_of(state: State, player: str | None) -> dict[str, dict[str, Any]]:
    """The running totals, and the colour uses left as ``player`` may know them: their
    own from every roulette they prepared, the opponent's from the revealed ones."""
    revealed = max(len(state["history"]) - 1, 0)
    standings = {}
    for p in state["players"]:
        known = state["roulettes"][p] if p == player else state["roulettes"][p][:revealed]
        standings[p] = {
            "points": state["points"][p],
            "chips": state["chips"][p],
            "black_taken": state["black_taken"][p],
            "black_lost": state["black_lost"][p],
            "cap_left": CHIP_CAP - state["black_lost"][p],
            "uses_left": uses_left(known),
        }
    return standings


def entry_view(state: State, entry: dict[str, Any], player: str | None) -> dict[str, Any]:
    """A settled round with each player's remaining colour uses as the viewer may
    know them: their own roulettes including the one just prepared, the
    opponent's only as far as revealed (prepared before that round)."""
    shown = dict(entry)  # the whole view is copied once at the end
    shown["uses_left"] = {
        p: uses_left(state["roulettes"][p][: entry["round"] + (1 if p == player else 0)]) for p in state["players"]
    }
    return shown


def history(state: State) -> list[dict[str, Any]]:
    """Every settled round for the public view, in full (compact records rebuilt), each
    with the colour uses revealed by then (the roulettes prepared before it), counted in
    one pass per player."""
    left = {p: uses_left_after_each(state["roulettes"][p]) for p in state["players"]}
    shown = []
    for entry in settled_records(state):
        row = dict(entry)  # the whole view is copied once at the end
        row["uses_left"] = {p: left[p][min(entry["round"], len(left[p]) - 1)] for p in state["players"]}
        shown.append(row)
    return shown


def todo(state: State, player: str) -> dict[str, Any]:
    roulette = bettable(state, player)
    return {
        "prepare": prepares_in(state["round"]),
        "bet": None
        if roulette is None
        else {
            "preparer": opponent(state, player),
            "prepared_in": state["round"] - 1,
            "points": dict(roulette["points"]),
        },
        "nothing_to_bet": nothing_to_bet(state) if roulette is None else None,
    }


def pending_view(state: State, player: str) -> dict[str, Any]:
    pending = state["pending"][player]  # view() copies the whole view
    roulette, bet = pending["roulette"], pending["bet"]
    return {
        "roulette": roulette,
        "bet": bet,
        "unbet": None if bet is None else BET_POINTS - sum(bet.values()),
        "uses_left_after": None if roulette is None else uses_left([*state["roulettes"][player], roulette]),
    }


def in_play(state: State, player: str) -> dict[str, Any] | None:
    """The viewer's own roulette the opponent is betting on this round."""
    if state["round"] == 0:
        return None
    roulette: dict[str, Any] | None = state["roulettes"][player][state["round"] - 1]  # copied by view()
    return roulette


def standings(state: State) -> list[str]:
    """One line per player for organizers, from the public view's standings only."""
    return [
        f"{p}: {plural(row['points'], 'point')}, {plural(row['chips'], 'chip')}, {row['black_taken']} taken "
        f"through Black roulettes, {row['black_lost']} of {CHIP_CAP} lost to Black takes"
        for p, row in standings_of(state, None).items()
    ]
