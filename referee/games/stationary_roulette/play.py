"""Stationary Roulette as it is played: the state, the rounds, the submissions, the deadline
that settles a round, the forfeit.

Round 0 is the preparation phase. In round r (0..9) each player prepares the
roulette for round r+1; in round r (1..10) each player bets on the roulette the
opponent prepared in round r-1. Both submissions are simultaneous and may be
revised until the deadline; the round closes only at its deadline
(:func:`apply_timeout`), which settles it.

State (plain JSON data)::

    players        [a, b]
    seed           the match seed (the game has no chance: only the lot that ranks the
                   players of a draw with equal chips at the end reads it, see ``ranking``)
    round          the open round 0..10 (once over: the round the match ended in)
    initial_chips  {player: chips at the start of the match}
    chips          {player: chips now}
    points         {player: points}
    black_taken    {player: gross chips taken through own Black roulettes}
    black_lost     {player: chips lost to Black takes, for the 100-chip cap}
    roulettes      {player: [roulette prepared in round i, or None when missed]}
    pending        {player: {"roulette": roulette | None, "bet": bet | None}}
    history        [settlement record of round 0, 1, ...]: the last one in full (what the
                   round's mails show), the earlier ones compact, see below
    transfers      chip movements, see :func:`referee.games.base.transfer`
    result         None while the match runs, else the fields of :class:`Result`
    forfeit        only once a player forfeited: {"player", "round"} (ruling 33)

A roulette is ``{"winning": colour, "points": {colour: n}}``; a bet is ``{colour: n}``. The
settlement records (the history) are :mod:`referee.games.stationary_roulette.settlement`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.base import (
    Applied,
    GameError,
    Move,
    State,
    Step,
    check_balances,
    check_forfeit,
    clone,
    opponent,
    rejected,
    result_record,
)
from referee.games.stationary_roulette.rules import (
    COLOURS,
    DEFAULT_CHIPS,
    LAST_PREPARATION_ROUND,
    ROUNDS,
    bet_problems,
    prepares_in,
    roulette_problems,
    round_named,
    round_title,
    step_key,
    uses_left,
)
from referee.games.stationary_roulette.rules import bettable, nothing_to_bet
from referee.games.stationary_roulette.settlement import Settlement


# --------------------------------------------------------------------------- moves


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _points_shape(points: dict[Any, Any]) -> str | None:
    """Why a colour -> points mapping is malformed (None when well formed)."""
    for key, value in points.items():
        if key not in COLOURS:
            return f"{key!r} is not a colour; the colours are Gold, Silver and Black."
        if not _is_int(value):
            return f"The points on {key} must be a whole number; you gave {value!r}."
    return None


# --------------------------------------------------------------------------- the match


def initial_state(seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
    if len(players) != 2 or players[0] == players[1]:
        raise GameError("Stationary Roulette needs two different players.")
    chips = {p: options.get("chips", {}).get(p, DEFAULT_CHIPS) for p in players}
    if not all(_is_int(n) and n >= 0 for n in chips.values()):
        raise GameError("Starting chips must be non-negative whole numbers.")
    return {
        "players": list(players),
        "seed": seed,
        "round": 0,
        "initial_chips": dict(chips),
        "chips": dict(chips),
        "points": {p: 0 for p in players},
        "black_taken": {p: 0 for p in players},
        "black_lost": {p: 0 for p in players},
        "roulettes": {p: [] for p in players},
        "pending": {p: {"roulette": None, "bet": None} for p in players},
        "history": [],
        "transfers": [],
        "result": None,
    }


def step(state: State) -> Step | None:
    if state["result"] is not None:
        return None
    return Step(
        key=step_key(state["round"]),
        kind="round",
        players=tuple(state["players"]),
        simultaneous=True,
        title=round_title(state["round"]),
    )


def awaiting(state: State) -> tuple[str, ...]:
    if state["result"] is not None:
        return ()
    return tuple(
        p
        for p in state["players"]
        if (prepares_in(state["round"]) and state["pending"][p]["roulette"] is None)
        or (bettable(state, p) is not None and state["pending"][p]["bet"] is None)
    )


def apply_move(state: State, player: str, move: Move) -> Applied:
    if state["result"] is not None:
        return rejected(state, "The match is over; no more submissions are accepted.")
    if player not in state["players"]:
        return rejected(state, f"{player} is not playing in this match.")
    kind = move.get("type") if isinstance(move, dict) else None
    ref = move.get("step") if isinstance(move, dict) else None
    if ref is not None and round_named(ref) != state["round"]:
        now = round_title(state["round"])
        said = "the preparation phase" if state["round"] == 0 else now
        shown = ref[:1].upper() + ref[1:] if isinstance(ref, str) else repr(ref)
        return rejected(
            state,
            f"Your mail answers {shown}, but {said} is open now. Nothing of that mail was "
            f"recorded: send your submission for {said} again, with the line 'Step: {now}' "
            "(the form of our latest mail has it).",
        )
    if kind == "roulette":
        problem, value = check_roulette(state, player, move)
    elif kind == "bet":
        problem, value = check_bet(state, player, move)
    else:
        return rejected(state, "A submission is either a ROULETTE or a BET.")
    if problem is not None:
        return rejected(state, problem)
    new = clone(state)
    new["pending"][player][kind] = value
    return Applied(new, True)


def check_roulette(state: State, player: str, move: Move) -> tuple[str | None, Any]:
    if not prepares_in(state["round"]):
        return (
            f"Round {ROUNDS} is the last round: there is no roulette to prepare "
            f"(the last roulettes were prepared in round {LAST_PREPARATION_ROUND}).",
            None,
        )
    winning, points = move.get("winning"), move.get("points")
    if winning not in COLOURS:
        return f"The winning colour must be Gold, Silver or Black; you gave {winning!r}.", None
    if not isinstance(points, dict):
        return "The roulette must give points for Gold, Silver and Black.", None
    shape = _points_shape(points)
    if shape is not None:
        return shape, None
    roulette = {"winning": winning, "points": {colour: points.get(colour, 0) for colour in COLOURS}}
    problems = roulette_problems(roulette, uses_left(state["roulettes"][player]))
    return (" ".join(problems) if problems else None), roulette


def check_bet(state: State, player: str, move: Move) -> tuple[str | None, Any]:
    if bettable(state, player) is None:
        return nothing_to_bet(state), None
    bets = move.get("bets")
    if not isinstance(bets, dict):
        return "The bet must give points for Gold, Silver or Black.", None
    shape = _points_shape(bets)
    if shape is not None:
        return shape, None
    bet = {colour: bets.get(colour, 0) for colour in COLOURS}
    problems = bet_problems(bet)
    return (" ".join(problems) if problems else None), bet


def apply_timeout(state: State, key: str | None = None) -> State:
    if state["result"] is not None:
        raise GameError("The match is over; there is no round to close.")
    new = clone(state)
    Settlement(new).run()
    return new


def forfeit(state: State, player: str) -> State:
    """``player`` forfeits the match (RULINGS, "Seasons": a loss, with the chips as they
    stand; ruling 33): it ends at once, the opponent winning. The open round is not
    settled: its submissions are dropped, no points are scored, no chips move (no take,
    no LGT payment, no inactivity fee, no point-lead payment); a roulette not yet bet on
    is never revealed (ruling 4). ``state["forfeit"]`` records who forfeited and in
    which round (the views show it)."""
    check_forfeit(state, player)
    new = clone(state)
    winner = opponent(new, player)
    round_no = new["round"]
    where = "the preparation phase" if round_no == 0 else f"round {round_no}"
    new["pending"] = {p: {"roulette": None, "bet": None} for p in new["players"]}
    new["forfeit"] = {"player": player, "round": round_no}
    new["result"] = result_record(
        {winner: "win", player: "loss"},
        f"{winner} wins: {player} forfeited the match in {where} (not settled).",
        dict(new["points"]),
    )
    return new


def with_balances(state: State, balances: dict[str, int]) -> State:
    """The state with each player's chips set to their live season balance (ruling:
    every settlement, the lead payment included, is judged on what the players hold
    in the season at that moment; chips lost to Black takes in this match, for the
    cap, are not touched)."""
    check_balances(state, balances)
    new = clone(state)
    new["chips"] = {p: balances[p] for p in state["players"]}
    return new
