"""Betting Minority as it is played: the state, the steps (the starting marker, the placement
steps, the betting turns and their extensions), the moves, the deadlines, the forfeit.
The phases a move or a deadline sets off are :mod:`referee.games.betting_minority.phases`.

Seats, in the season file's order: the **EC**, the **DMO**, then ten **participants**.
The participants never act (``GameType.silent_roles``): each has a private list of 8
entries, 4 naming the EC and 4 the DMO, with exactly 5 of each in every round
(:func:`make_lists`, from the match seed). A participant with an address gets their list
in the match's first mail, and nothing after it.

A match is 8 rounds, after a starting-marker step (the DMO gives the starting marker to
themself or to the EC). Each round:

* **Minority phase**, in placement steps (kind ``"send"``, simultaneous): each DM player
  sends one unplaced participant to a room (``SEND <participant> TO <room>``); a step
  closes as soon as both have sent (a send is final) or at its deadline. Collisions as
  :func:`resolve_sends` rules them.
* **Betting phase**, in turns (kind ``"bet"``, one player each): the marker holder opens;
  each bet replaces the bettor's placement (one or two rooms, each >= 1 chip), a RAISE
  must top the opponent's total, a CALL match it (or be the most the caller may bet) and
  ends the betting; the limits are :func:`bet_cap`. A well-formed bet that breaks them
  costs 1 chip and is asked again. A missed turn gets one extension (kind
  ``"extension"``, 2/3 of a turn) and counts as missed.
* **Payout**: :func:`payout`, a pure function of the two placements and the room winners
  (:func:`room_winners`). Then the zero-chip checks, in RULINGS' order: a player at 0
  after the payout loses at once (both at 0: the DMO wins), and no k/5 loss is taken;
  else the k/5 chip loss of a player who missed a betting turn in the round
  (:func:`missed_turn_loss`), and a player it leaves at 0 loses (both: the DMO wins).
  A penalty chip that leaves a player at 0 during betting ends the betting as their
  call (``ended`` "penalty"), and the round is paid out before the checks.

After 8 rounds the most chips wins; a tie goes to the DMO.

Chips are the match's own (``MATCH_CHIPS``): 4 each at the start. Stakes go to the
``"table"`` account when betting ends; the doubling is paid into the table by the
``"bank"`` and the table pays every room out; penalty chips go ``"out"`` of play.

State (plain JSON data)::

    players       [ec, dmo, participant x 10] (seat order)
    seed          the match seed
    ec, dmo       the DM players
    participants  the ten participants, in seat order (short ids P1..P10)
    names         {player: display name} (options["names"], else the keys)
    lists         {participant: [8 entries, each "EC" or "DMO"]}: hidden until each
                  round's payout reveals that round's entries
    round         the open round 1..8 (once over: the last round played)
    phase         "marker", "send", "bet" or "over"
    marker        who holds the starting marker (None before the marker step closes)
    marker_given  how the marker step ended: {"by", "to", "timeout"} (None before)
    chips         {dm player: chips held}
    missed        {dm player: betting turns missed so far in the match}
    positions     {participant: room or None} of the open round
    send          the open placement step: {"step": i, "sent": {dm: send or None}}, or None
    placements    [record of each closed placement step of the open round]
    betting       the open betting: opener, to_act, turn, extension, switched,
                  placements {dm: {room: n} or None}, actions, missed {dm: n}; or None
    history       [record of every finished round, see phases.end_betting]
    transfers     chip movements (currency MATCH_CHIPS), see referee.games.base.transfer
    result        None while the match runs, else the fields of Result
    forfeit       only once a DM player forfeited: {"player", "round", "phase", and the open
                  round as it stood: "positions", "placements", "betting"} (ruling 21)
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
    check_forfeit,
    clone,
    plural,
    rejected,
)
from referee.games.betting_minority.phases import (
    close_send_step,
    end_betting,
    match_result,
    open_round,
    penalise,
    penalty_reason,
)
from referee.games.betting_minority.rules import (
    BET_COMMANDS,
    MIN_BET,
    PARTICIPANTS,
    ROOMS,
    STARTING_CHIPS,
    bet_cap,
    bet_figures,
    call_amount,
    judge_bet,
    make_lists,
    opponent,
    short_ids,
    step_reference,
    total,
)

PLAYERS = 2 + PARTICIPANTS  # the EC, the DMO and the ten participants


def initial_state(seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
    """Seats: EC, DMO, then the ten participants (ruling 2). ``options["names"]`` (the
    match book passes the seats' names) lets mail name participants; other options
    are not read."""
    if len(players) != PLAYERS or len(set(players)) != len(players):
        raise GameError(f"Betting Minority needs {PLAYERS} different players: EC, DMO, 10 participants.")
    given = options.get("names") if isinstance(options, dict) else None
    names = {p: str(given.get(p, p)) if isinstance(given, dict) else p for p in players}
    ec, dmo, *participants = players
    state: State = {
        "players": list(players),
        "seed": seed,
        "ec": ec,
        "dmo": dmo,
        "participants": participants,
        "names": names,
        "lists": make_lists(seed, participants),
        "round": 1,
        "phase": "marker",
        "marker": None,
        "marker_given": None,
        "chips": {ec: STARTING_CHIPS, dmo: STARTING_CHIPS},
        "missed": {ec: 0, dmo: 0},
        "positions": {p: None for p in participants},
        "send": None,
        "placements": [],
        "betting": None,
        "history": [],
        "transfers": [],
        "result": None,
    }
    return state


# ---------------------------------------------------------------------- steps


def step(state: State) -> Step | None:
    if state["result"] is not None:
        return None
    phase, r = state["phase"], state["round"]
    if phase == "marker":
        return Step("marker", "marker", (state["dmo"],), False, "The starting marker")
    if phase == "send":
        i = state["send"]["step"]
        return Step(f"r{r}-send-{i}", "send", (state["ec"], state["dmo"]), True, f"Round {r}, placement {i}")
    b = state["betting"]
    key, title = f"r{r}-bet-{b['turn']}", f"Round {r}, betting turn {b['turn']}"
    if b["extension"]:
        return Step(f"{key}-extension", "extension", (b["to_act"],), False, f"{title} (extended)", extends=key)
    return Step(key, "bet", (b["to_act"],), False, title)


def reference(state: State) -> str | None:
    """The ``Step:`` reference of the open step: its form's title read as mail reads it
    (an extension keeps its turn's)."""
    if state["result"] is not None:
        return None
    return step_reference(form_title(state))


def form_title(state: State) -> str:
    phase, r = state["phase"], state["round"]
    if phase == "marker":
        return "The starting marker"
    if phase == "send":
        return f"Round {r}, placement {state['send']['step']}"
    return f"Round {r}, betting turn {state['betting']['turn']}"


def awaiting(state: State) -> tuple[str, ...]:
    now = step(state)
    if now is None:
        return ()
    if state["phase"] == "send":
        return tuple(p for p in now.players if state["send"]["sent"][p] is None)
    return now.players


def audience(state: State, step: Step | None = None) -> tuple[str, ...]:
    """The first mail of the match (the starting-marker step) goes to every seat, so the
    participants get their lists (those without an address are never mailed); every
    later step, and the end, only to the two DM players (ruling 3)."""
    if state["phase"] == "marker" and state["result"] is None:
        return tuple(state["players"])
    return (state["ec"], state["dmo"])


# ---------------------------------------------------------------------- moves


def apply_move(state: State, player: str, move: Move) -> Applied:
    if state["result"] is not None:
        return rejected(state, "The match is over; no more moves are accepted.")
    if player not in state["players"]:
        return rejected(state, "You are not playing in this match.")
    if player in state["participants"]:
        return rejected(state, nothing_to_send(state))
    if not isinstance(move, dict) or not isinstance(move.get("action"), str):
        return rejected(state, "A move is MARKER, SEND, BET, RAISE or CALL.")
    open_step = step(state)
    assert open_step is not None
    ref = move.get("step")
    if ref is not None and ref != reference(state):
        shown = ref if isinstance(ref, str) else repr(ref)
        now = form_title(state)
        if player in awaiting(state):
            return rejected(
                state,
                f"Your mail answers an earlier step ({shown}), which is over; now it is {now}. "
                f"Send your command again with the line 'Step: {now}'.",
            )
        return rejected(
            state,
            f"Your mail answers an earlier step ({shown}), which is over; now it is {now}, "
            "and you have nothing to send until our next mail.",
        )
    action = move["action"]
    phase = state["phase"]
    expected = {"marker": ("marker",), "send": ("send",), "bet": BET_COMMANDS}[phase]
    if action not in expected:
        return rejected(state, f"{form_title(state)} is open: {what_now(state, player)}")
    if player not in open_step.players:
        return rejected(state, f"It is not your turn: {what_now(state, player)}")
    if phase == "marker":
        return _marker(state, player, move)
    if phase == "send":
        return _send(state, player, move)
    return _bet(state, player, move)


def what_now(state: State, player: str) -> str:
    """One sentence: what ``player`` may do in the open step."""
    phase = state["phase"]
    now = step(state)
    assert now is not None
    names = state["names"]
    if player not in now.players:
        other = ", ".join(names[p] for p in now.players)
        return f"{now.title} is {other}'s to decide; you have nothing to send until our next mail."
    if phase == "marker":
        return "Give the starting marker: MARKER ME (you keep it) or MARKER OPPONENT."
    if phase == "send":
        if state["send"]["sent"][player] is not None:
            return f"You have sent your participant for this step; wait for {names[opponent(state, player)]}."
        return "Send one unplaced participant to a room: SEND <participant> TO <Uno|Dos|Tres>."
    return describe_bet_choices(state, player)


def _marker(state: State, player: str, move: Move) -> Applied:
    to = move.get("to")
    if to not in ("me", "opponent"):
        return rejected(state, "Write MARKER ME or MARKER OPPONENT.")
    new = clone(state)
    new["marker"] = player if to == "me" else opponent(state, player)
    new["marker_given"] = {"by": player, "to": new["marker"], "timeout": False}
    open_round(new)
    return Applied(new, True)


def _send(state: State, player: str, move: Move) -> Applied:
    who, room = move.get("participant"), move.get("room")
    if who not in state["participants"]:
        return rejected(state, f"{who!r} is not a participant of this match.")
    if room not in ROOMS:
        return rejected(state, f"{room!r} is not a room: Uno, Dos or Tres.")
    sent = state["send"]["sent"]
    if sent[player] is not None:
        return rejected(
            state,
            f"You have already sent a participant in this step, and a send is final; wait for "
            f"{state['names'][opponent(state, player)]} (or the step's deadline).",
        )
    placed = state["positions"][who]
    if placed is not None:
        return rejected(
            state,
            f"{state['names'][who]} is already in {placed}. Send one of the participants not yet placed: "
            f"{', '.join(unplaced_names(state))}.",
        )
    new = clone(state)
    new["send"]["sent"][player] = {"participant": who, "room": room}
    if all(s is not None for s in new["send"]["sent"].values()):
        close_send_step(new, timeout=False)
    return Applied(new, True)


def _bet(state: State, player: str, move: Move) -> Applied:
    rooms = move.get("rooms")
    if (
        not isinstance(rooms, dict)
        or not rooms
        or not all(r in ROOMS and isinstance(n, int) and not isinstance(n, bool) and n >= 0 for r, n in rooms.items())
    ):
        return rejected(state, "Name one or two rooms with whole numbers of chips.")
    b = state["betting"]
    opp = opponent(state, player)
    theirs = total(b["placements"][opp])
    command = move["action"]
    if theirs == 0 and command == "call":
        return rejected(
            state, "There is no bet to call yet: you open the betting. " + describe_bet_choices(state, player)
        )
    kind, problem = judge_bet(state["chips"][player], state["chips"][opp], theirs, command, rooms)
    new = clone(state)
    nb = new["betting"]
    placement = {room: rooms[room] for room in ROOMS if room in rooms}
    if problem is not None:
        penalise(new, player, placement, command, problem)
        return Applied(new, False, penalty_reason(new, player, problem), changed=True)
    nb["placements"][player] = placement
    nb["actions"].append({"player": player, "kind": kind, "placement": placement, "total": total(placement)})
    nb["extension"] = False
    if kind == "call":
        end_betting(new, caller=player, how="call")
    else:
        nb["to_act"] = opp
        nb["turn"] += 1
    return Applied(new, True)


# ---------------------------------------------------------------------- deadlines


def apply_timeout(state: State, key: str | None = None) -> State:
    """The open step's deadline (RULINGS): the marker stays with the DMO; a DM player who
    sent nobody places nobody, and if neither sent, the remaining participants are placed
    at random and the phase ends; a missed betting turn is extended once and counts as
    missed; still missing after the extension, the opener's turn passes to the opponent,
    and anyone else's betting ends as if they called with their current placement."""
    if state["result"] is not None:
        raise GameError("The match is over; there is no step to close.")
    new = clone(state)
    phase = new["phase"]
    if phase == "marker":
        new["marker"] = new["dmo"]
        new["marker_given"] = {"by": new["dmo"], "to": new["dmo"], "timeout": True}
        open_round(new)
    elif phase == "send":
        close_send_step(new, timeout=True)
    else:
        b = new["betting"]
        absent = b["to_act"]
        if not b["extension"]:
            new["missed"][absent] += 1
            b["missed"][absent] += 1
            b["extension"] = True
            b["actions"].append({"player": absent, "kind": "missed", "placement": None, "total": None})
        else:
            b["extension"] = False
            b["actions"].append({"player": absent, "kind": "missed-extension", "placement": None, "total": None})
            opp = opponent(new, absent)
            if b["placements"][absent] is None and b["placements"][opp] is None:
                if b["switched"]:
                    end_betting(new, caller=None, how="nobody opened")
                else:  # the absent player was to open: the opponent opens instead
                    b["switched"] = True
                    b["opener"] = b["to_act"] = opp
                    b["turn"] += 1
            else:  # as if the absent player called with their current placement
                end_betting(new, caller=absent, how="missed")
    return new


def forfeit(state: State, player: str) -> State:
    """``player``, a DM player, forfeits the match (RULINGS, "Seasons": a loss, with the
    chips as they stand; ruling 21): it ends at once, the opponent winning. The open round
    is not played out: no placement is made, no stake leaves anybody's holdings (stakes
    leave them only when betting ends), no payout, no loss for missed turns; the chips stay
    as they are. ``state["forfeit"]`` records who forfeited, in which round and phase, and
    the open round as it stood (its positions, closed placement steps and betting so far,
    all public); the state's open round is cleared, as no round is open any more, and a
    send not yet revealed is dropped. The views show the record. A participant (a silent
    seat) cannot forfeit."""
    check_forfeit(state, player)
    if player in state["participants"]:
        raise GameError(
            f"{player} is a participant, a silent seat of this match, and cannot forfeit it: only the EC and "
            "the DMO play it."
        )
    new = clone(state)
    names = new["names"]
    winner = opponent(new, player)
    new["forfeit"] = {
        "player": player,
        "round": new["round"],
        "phase": new["phase"],
        "positions": new["positions"],
        "placements": new["placements"],
        "betting": new["betting"],
    }
    new["phase"] = "over"
    new["send"] = None
    new["positions"] = {p: None for p in new["participants"]}
    new["placements"] = []
    new["betting"] = None
    where = "before round 1" if state["phase"] == "marker" else f"in round {new['round']}"
    new["result"] = match_result(
        new, winner, player, f"{names[winner]} wins: {names[player]} forfeited the match {where}."
    )
    return new


# ---------------------------------------------------------------------- texts


def nothing_to_send(state: State) -> str:
    """The answer to any mail of a participant (a silent seat): they have nothing to send
    in this match, whatever they wrote, and never a word about the open step."""
    names = state["names"]
    return (
        f"You have nothing to send in this match: as a participant, you are sent to rooms by "
        f"{names[state['ec']]} and {names[state['dmo']]}, who bet on the rooms. "
        "Your list is in the first mail of the match."
    )


def unplaced_names(state: State) -> list[str]:
    short = short_ids(state["participants"])
    return [f"{short[p]} {state['names'][p]}" for p in state["participants"] if state["positions"][p] is None]


def describe_bet_choices(state: State, player: str) -> str:
    """The legal choices of the player to bet, in one or two sentences."""
    mine, theirs, their_total = bet_figures(state, player)
    cap = bet_cap(mine, theirs)
    if their_total == 0:
        return (
            f"Open the betting: BET on one or two rooms (each at least {plural(MIN_BET, 'chip')}), "
            f"{plural(cap, 'chip')} in all at most, as in BET {ROOMS[0]} {MIN_BET}."
        )
    need = call_amount(mine, theirs, their_total)
    text = f"CALL with {plural(need, 'chip')} in all on one or two rooms, as in CALL {ROOMS[0]} {need}"
    if cap == their_total + 1:
        text += f"; or RAISE to {plural(cap, 'chip')} in all"
    elif cap > their_total:
        text += f"; or RAISE to {their_total + 1} to {plural(cap, 'chip')} in all"
    else:
        text += "; you may not raise, as the most you may bet does not top your opponent's bet"
    return text + "."
