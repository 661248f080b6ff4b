"""Betting Minority: one test (or parametrized case) per rule and ruling.

A test named ``test_ruling_<n>_...`` checks ruling n of the game's rulings (the numbered
list in ``docs/games/betting-minority.md``); the others check the rule text and the
RULINGS reading (``seeds/betting-minority.txt``, "Betting Minority" in RULINGS.md).
Expected values are worked out by hand from the rules, never taken from the engine; the
payout() cases are in ``test_betting_minority_payout.py``.

Most whole-game tests place all ten participants in Uno: every round has 5 EC and 5
DMO entries, so Uno is tied and no room has a winner, and the payout is each player's
own bet doubled (with the doubled portion) whatever the lists hold. Where a test needs
a room won, it reads the open round's entries from the state (the test knows what the
players may not) and arranges the room.

The golden transcript (``betting_minority_golden.txt``) is written by a small
deterministic script at the end of this module, a bot that mails in the grammar and
now and then lets a deadline pass or breaks a limit: one ``>`` line per event (a mail,
its lines joined by `` / ``, or a deadline), then what the referee made of it
(placements, bets, penalties, missed turns, each finished round's entries, counts,
winners and payout per room, the chips and the marker). Unlike the other tests it
records what the engine does; several of its rounds were checked by hand.
``REGENERATE=1 pytest tests/games/test_betting_minority.py`` rewrites it after a
deliberate change of the rules (then read the difference).
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from referee.games.base import MATCH_CHIPS, Applied, GameError, Move, NoMoves, ParseError, State, clone, rng
from referee.games.betting_minority import (
    DMO,
    EC,
    GAME,
    ROOMS,
    bet_cap,
    call_amount,
    cut_placement,
    describe_bet_choices,
    judge_bet,
    make_lists,
    normal_name,
    payout,
    resolve_sends,
    room_counts,
    room_winners,
    short_ids,
)
from referee.match.book import replay

G = GAME
RED, ZERO = "red", "zero"  # the EC and the DMO, as in the seed's example
# seat order P1..P10; season ids and names chosen for the naming rules (ruling 4):
# P1's season id is "p3" (a short id wins over it), "ann" is P4's season id and the
# first word of P1's and P5's names, P10 is called just "Eve" and P7 "Eve Stone",
# P6 and P8 share the first word "Dan"
PARTS = ["p3", "jnunez", "cdiaz", "ann", "bell", "dek", "estone", "dray", "gmoreau", "eve2"]
NAMES = {
    RED: "Red Rover",
    ZERO: "Zero Cool",
    "p3": "Ann Lee",
    "jnunez": "José Núñez",
    "cdiaz": "Cara Diaz",
    "ann": "Annabel Smith",
    "bell": "Ann Bell",
    "dek": "Dan Ek",
    "estone": "Eve Stone",
    "dray": "Dan Ray",
    "gmoreau": "Gus Moreau",
    "eve2": "Eve",
}
PLAYERS = [RED, ZERO, *PARTS]
SEED = 11


# --------------------------------------------------------------------------- helpers


def start(seed: int = SEED) -> State:
    return G.initial_state(seed, PLAYERS, {"names": dict(NAMES)})


def ok(state: State, player: str, move: Move) -> State:
    applied = G.apply_move(state, player, move)
    assert applied.accepted and applied.changed, applied.reason
    return applied.state


def refused(state: State, player: str, move: Move) -> Applied:
    """A move refused without cost: not accepted, nothing changed."""
    before = json.dumps(state, sort_keys=True)
    applied = G.apply_move(state, player, move)
    assert not applied.accepted and not applied.changed, applied.reason
    assert json.dumps(applied.state, sort_keys=True) == before
    return applied


def penalised(state: State, player: str, move: Move) -> State:
    """A well-formed bet that breaks a limit: not accepted, but it cost something."""
    applied = G.apply_move(state, player, move)
    assert not applied.accepted and applied.changed, applied.reason
    return applied.state


def mail(state: State, player: str, text: str) -> State:
    moves = G.parse(state, player, text).moves
    assert len(moves) == 1
    return ok(state, player, moves[0])


def send(who: str, room: str) -> Move:
    return {"action": "send", "participant": who, "room": room}


def bet(action: str, **rooms: int) -> Move:
    return {"action": action, "rooms": rooms}


def marker(state: State, to: str) -> State:
    return ok(state, ZERO, {"action": "marker", "to": to})


def everyone_in(room: str) -> dict[str, str]:
    return {p: room for p in PARTS}


def entries_now(state: State) -> dict[str, str]:
    """The open round's entries (hidden from the players; the test may read them)."""
    return {p: state["lists"][p][state["round"] - 1] for p in PARTS}


def uno_won_by(state: State, role: str) -> dict[str, str]:
    """Positions where ``role`` wins Uno and no other room has a winner: Uno holds one
    participant with ``role``'s entry and two with the other's; the other 4 of ``role``
    go to Dos, the other 3 of the other role to Tres (both one-sided)."""
    e = entries_now(state)
    few = [p for p in PARTS if e[p] == role]
    many = [p for p in PARTS if e[p] != role]
    rooms = {few[0]: "Uno", many[0]: "Uno", many[1]: "Uno"}
    rooms.update({p: "Dos" for p in few[1:]})
    rooms.update({p: "Tres" for p in many[2:]})
    return rooms


def place(state: State, rooms: dict[str, str]) -> State:
    """Every participant placed by sends, two per step (EC the first unplaced, DMO the next)."""
    while state["phase"] == "send":
        free = [p for p in PARTS if state["positions"][p] is None]
        state = ok(state, RED, send(free[0], rooms[free[0]]))
        state = ok(state, ZERO, send(free[1], rooms[free[1]]))
    return state


def to_betting(marker_to: str = "me", seed: int = SEED) -> State:
    """Round 1's betting, all participants in Uno; ``"me"``: the DMO opens, else the EC."""
    state = place(marker(start(seed), marker_to), everyone_in("Uno"))
    assert state["phase"] == "bet"
    return state


def chips(state: State) -> tuple[int, int]:
    return state["chips"][RED], state["chips"][ZERO]


def net(state: State, account: str) -> int:
    return sum(
        t["amount"] * ((t["to"] == account) - (t["from"] == account))
        for t in state["transfers"]
        if t.get("currency") == MATCH_CHIPS
    )


def key(state: State) -> str:
    step = G.step(state)
    assert step is not None
    return step.key


# --------------------------------------------------------------------------- ruling 1: the lists


def test_ruling_1_lists_hold_4_and_4_and_every_round_5_and_5() -> None:
    for seed in range(120):
        lists = make_lists(seed, PARTS)
        assert list(lists) == PARTS
        for entries in lists.values():
            assert len(entries) == 8
            assert entries.count(EC) == 4 and entries.count(DMO) == 4
        for r in range(8):
            column = [lists[p][r] for p in PARTS]
            assert column.count(EC) == 5 and column.count(DMO) == 5, (seed, r)


def test_ruling_1_lists_are_the_seeds() -> None:
    assert make_lists(5, PARTS) == make_lists(5, PARTS)
    assert start(5)["lists"] == make_lists(5, PARTS)
    assert start(5)["lists"] == start(5)["lists"]
    drawn = {json.dumps(make_lists(seed, PARTS), sort_keys=True) for seed in range(40)}
    assert len(drawn) == 40


# --------------------------------------------------------------------------- ruling 2: seats


def test_ruling_2_seats_are_ec_dmo_then_ten_participants() -> None:
    state = start()
    assert (state["ec"], state["dmo"], state["participants"]) == (RED, ZERO, PARTS)
    assert short_ids(PARTS) == {p: f"P{i + 1}" for i, p in enumerate(PARTS)}
    seen = G.view(state, RED)["participants"]
    assert [(row["id"], row["short"], row["name"]) for row in seen] == [
        (p, f"P{i + 1}", NAMES[p]) for i, p in enumerate(PARTS)
    ]
    assert chips(state) == (4, 4)  # "At the start of the game DM players will receive 4 chips"


# --------------------------------------------------------------------------- ruling 3: participants


def test_ruling_3_participants_get_the_first_mail_only() -> None:
    state = start()
    assert G.audience(state) == tuple(PLAYERS)
    state = marker(state, "me")
    assert G.audience(state) == (RED, ZERO)
    state = G.apply_timeout(state)  # the first placement step: both time out, all placed
    assert G.audience(state) == (RED, ZERO)


def test_ruling_3_a_participants_mail_has_nothing_to_send() -> None:
    """Whatever a participant writes, a command or not, the answer is that they have
    nothing to send in this match (never a word about the open step); a move that reaches
    the engine some other way is refused the same."""
    state = marker(start(), "me")
    plain = "You have nothing to send in this match: as a participant, you are sent to rooms by"
    for text in ("SEND P1 TO Uno", "BET Uno 1", "Hello, what do I do?", "STEP: Round 1, placement 1"):
        with pytest.raises(ParseError) as caught:
            G.parse(state, "cdiaz", text)
        assert caught.value.reason.startswith(plain) and "placement" not in caught.value.reason
        assert not isinstance(caught.value, NoMoves)  # the answer, not "nothing read"
    for move in ({"action": "send", "participant": "ann", "room": "Uno"}, {"action": "bet", "rooms": {"Uno": 1}}):
        applied = refused(state, "cdiaz", move)
        assert (applied.reason or "").startswith(plain)


def test_ruling_3_a_participant_sees_their_list_and_the_dm_players() -> None:
    state = start()
    view = G.view(state, "cdiaz")
    assert view["entry_roles"] == state["lists"]["cdiaz"]
    assert view["entries"] == [NAMES[RED] if e == EC else NAMES[ZERO] for e in state["lists"]["cdiaz"]]
    assert (view["short"], view["ec"], view["dmo"]) == ("P3", RED, ZERO)
    for play in ("positions", "stacks", "betting", "history", "placements"):
        assert play not in view


# --------------------------------------------------------------------------- ruling 4: naming participants


def sent_who(state: State, written: str) -> str:
    (move,) = G.parse(state, RED, f"SEND {written} TO Uno").moves
    assert move["room"] == "Uno"
    return move["participant"]


@pytest.mark.parametrize(
    ("written", "who"),
    [
        ("P3", "cdiaz"),  # a short id wins over P1's season id "p3"
        ("p3", "cdiaz"),
        ("P1", "p3"),
        ("P10", "eve2"),
        ("jnunez", "jnunez"),  # a season id
        ("JNUNEZ", "jnunez"),
        ("ann", "ann"),  # a season id wins over the first word of Ann Lee's and Ann Bell's names
        ("Ann Lee", "p3"),  # a full name
        ("José Núñez", "jnunez"),
        ("jose nunez", "jnunez"),  # accents and case ignored
        ("JOSE NUNEZ", "jnunez"),
        ("José", "jnunez"),  # the first words of a name
        ("Cara", "cdiaz"),
        ("cara diaz", "cdiaz"),
        ("Eve", "eve2"),  # a whole name wins over the first word of "Eve Stone"
        ("Eve Stone", "estone"),
        ("Dan Ray", "dray"),
    ],
)
def test_ruling_4_send_names_a_participant(written: str, who: str) -> None:
    assert sent_who(marker(start(), "me"), written) == who


def test_ruling_4_several_matches_list_the_candidates() -> None:
    state = marker(start(), "me")
    with pytest.raises(ParseError) as caught:
        G.parse(state, RED, "SEND Dan TO Uno")
    text = str(caught.value)
    assert "P6 Dan Ek" in text and "P8 Dan Ray" in text
    assert "P1 Ann Lee" not in text


def test_ruling_4_no_match_lists_every_participant() -> None:
    state = marker(start(), "me")
    with pytest.raises(ParseError) as caught:
        G.parse(state, RED, "SEND Zed TO Uno")
    text = str(caught.value)
    for i, p in enumerate(PARTS):
        assert f"P{i + 1} {NAMES[p]}" in text


def test_ruling_4_normal_names_drop_accents_and_case() -> None:
    assert normal_name("José  Núñez") == normal_name("jose nunez") == "jose nunez"


# --------------------------------------------------------------------------- ruling 5: steps


def test_ruling_5_step_kinds_and_default_lengths() -> None:
    gt = G.game_type
    assert gt.step_kinds == {"marker": 24.0, "send": 12.0, "bet": 24.0, "extension": 24.0}
    base, fraction = gt.derived_steps["extension"]
    assert base == "bet" and gt.step_kinds[base] * fraction == pytest.approx(16.0)
    state = start()
    step = G.step(state)
    assert step is not None and (step.kind, step.players, step.simultaneous) == ("marker", (ZERO,), False)
    state = marker(state, "me")
    step = G.step(state)
    assert step is not None and (step.key, step.kind, step.players, step.simultaneous) == (
        "r1-send-1",
        "send",
        (RED, ZERO),
        True,
    )
    state = place(state, everyone_in("Uno"))
    step = G.step(state)
    assert step is not None and (step.key, step.kind, step.players, step.simultaneous) == (
        "r1-bet-1",
        "bet",
        (ZERO,),
        False,
    )


@pytest.mark.parametrize(("to", "holder"), [("me", ZERO), ("opponent", RED)])
def test_ruling_5_the_dmo_gives_the_marker(to: str, holder: str) -> None:
    state = marker(start(), to)
    assert state["marker"] == holder
    assert key(state) == "r1-send-1"
    state = place(state, everyone_in("Uno"))
    assert G.step(state).players == (holder,)  # type: ignore[union-attr]


def test_ruling_5_marker_timeout_the_dmo_keeps_it() -> None:
    state = G.apply_timeout(start())
    assert state["marker"] == ZERO
    assert key(state) == "r1-send-1"


def test_ruling_5_only_the_dmo_gives_the_marker() -> None:
    refused(start(), RED, {"action": "marker", "to": "me"})


# --------------------------------------------------------------------------- ruling 6: placement


def placed(placements: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(p["participant"], p["room"], p["how"]) for p in placements]


def test_ruling_6_different_participants_are_both_placed() -> None:
    sends = {RED: {"participant": "p3", "room": "Uno"}, ZERO: {"participant": "cdiaz", "room": "Dos"}}
    assert placed(resolve_sends(sends)) == [("p3", "Uno", "sent"), ("cdiaz", "Dos", "sent")]


def test_ruling_6_same_participant_same_room_is_placed_there() -> None:
    sends = {RED: {"participant": "p3", "room": "Tres"}, ZERO: {"participant": "p3", "room": "Tres"}}
    assert placed(resolve_sends(sends)) == [("p3", "Tres", "agreed")]


@pytest.mark.parametrize(("a", "b", "third"), [("Uno", "Dos", "Tres"), ("Dos", "Tres", "Uno"), ("Tres", "Uno", "Dos")])
def test_ruling_6_same_participant_different_rooms_goes_to_the_third(a: str, b: str, third: str) -> None:
    sends = {RED: {"participant": "p3", "room": a}, ZERO: {"participant": "p3", "room": b}}
    assert placed(resolve_sends(sends)) == [("p3", third, "clash")]


def test_ruling_6_a_missing_send_places_nobody() -> None:
    assert placed(resolve_sends({RED: None, ZERO: {"participant": "dek", "room": "Dos"}})) == [("dek", "Dos", "sent")]
    assert resolve_sends({RED: None, ZERO: None}) == []


def test_ruling_6_the_step_closes_when_both_have_sent() -> None:
    state = marker(start(), "me")
    state = ok(state, RED, send("p3", "Uno"))
    assert key(state) == "r1-send-1" and G.awaiting(state) == (ZERO,)
    state = ok(state, ZERO, send("p3", "Dos"))  # a clash: the third room
    assert key(state) == "r1-send-2"
    assert state["positions"]["p3"] == "Tres"
    assert sum(room is not None for room in state["positions"].values()) == 1


def test_ruling_6_a_send_is_final() -> None:
    state = ok(marker(start(), "me"), RED, send("p3", "Uno"))
    refused(state, RED, send("cdiaz", "Dos"))
    refused(state, RED, send("p3", "Dos"))


def test_ruling_6_a_placed_participant_is_refused() -> None:
    state = marker(start(), "me")
    state = ok(state, RED, send("p3", "Uno"))
    state = ok(state, ZERO, send("cdiaz", "Dos"))
    refused(state, RED, send("p3", "Tres"))
    refused(state, ZERO, send("cdiaz", "Dos"))


def test_ruling_6_the_player_who_times_out_places_nobody() -> None:
    state = ok(marker(start(), "me"), ZERO, send("dek", "Dos"))
    state = G.apply_timeout(state)
    assert key(state) == "r1-send-2"
    assert {p: r for p, r in state["positions"].items() if r is not None} == {"dek": "Dos"}


def test_ruling_6_both_time_out_the_rest_is_placed_at_random_and_betting_starts() -> None:
    state = marker(start(), "opponent")
    state = ok(state, RED, send("p3", "Uno"))
    state = ok(state, ZERO, send("jnunez", "Uno"))
    state = G.apply_timeout(state)  # step 2: nobody sent
    drawn = rng(SEED, "placement", 1, 2)
    expected = {"p3": "Uno", "jnunez": "Uno", **{p: drawn.choice(ROOMS) for p in PARTS[2:]}}
    assert state["positions"] == expected
    assert state["phase"] == "bet" and key(state) == "r1-bet-1"
    assert G.step(state).players == (RED,)  # type: ignore[union-attr]


# --------------------------------------------------------------------------- room winners


@pytest.mark.parametrize(
    ("ec", "dmo", "winner"),
    [
        (1, 2, EC),  # the minority wins: strictly fewer ...
        (2, 1, DMO),
        (1, 4, EC),
        (3, 4, EC),
        (2, 2, None),  # a tie has no winner
        (5, 5, None),
        (3, 0, None),  # ... but at least once: one-sided rooms have no winner
        (0, 2, None),
        (0, 0, None),  # nor an empty room
    ],
)
def test_room_winner_is_the_minority(ec: int, dmo: int, winner: str | None) -> None:
    counts = {"Uno": {EC: ec, DMO: dmo}, "Dos": {EC: 0, DMO: 0}, "Tres": {EC: 0, DMO: 0}}
    assert room_winners(counts) == {"Uno": winner, "Dos": None, "Tres": None}


def test_room_counts_count_each_rooms_entries() -> None:
    entries = {"a": EC, "b": DMO, "c": DMO, "d": EC, "e": EC}
    positions = {"a": "Uno", "b": "Uno", "c": "Uno", "d": "Tres", "e": None}
    counts = room_counts(entries, positions)
    assert counts == {"Uno": {EC: 1, DMO: 2}, "Dos": {EC: 0, DMO: 0}, "Tres": {EC: 1, DMO: 0}}
    assert room_winners(counts) == {"Uno": EC, "Dos": None, "Tres": None}


# --------------------------------------------------------------------------- ruling 8: limits


@pytest.mark.parametrize(
    ("mine", "theirs", "cap"),
    [
        (4, 4, 3),  # floor(3/4 of 4)
        (10, 5, 3),  # floor(3.75): rounded down
        (10, 7, 5),  # floor(5.25)
        (10, 8, 6),
        (2, 8, 2),  # no more than you hold
        (3, 100, 3),
        (5, 1, 1),  # floor(0.75) = 0, but never below 1 while you hold a chip
        (1, 1, 1),
        (1, 8, 1),
        (0, 8, 0),
    ],
)
def test_ruling_8_bet_cap(mine: int, theirs: int, cap: int) -> None:
    assert bet_cap(mine, theirs) == cap


@pytest.mark.parametrize(
    ("mine", "theirs", "their_total", "need"),
    [
        (4, 4, 2, 2),  # the opponent's total
        (4, 4, 3, 3),
        (2, 8, 3, 2),  # or the most the caller may bet: all they hold
        (10, 4, 5, 3),  # ... or 3/4 of the opponent's chips
        (10, 1, 3, 1),  # ... but at least 1
    ],
)
def test_ruling_7_call_amount(mine: int, theirs: int, their_total: int, need: int) -> None:
    assert call_amount(mine, theirs, their_total) == need


@pytest.mark.parametrize(
    ("mine", "theirs", "their_total", "command", "rooms", "kind"),
    [
        (4, 4, 0, "bet", {"Uno": 3}, "open"),
        (4, 4, 0, "raise", {"Uno": 1, "Dos": 2}, "open"),  # the opener may open with RAISE
        (4, 4, 2, "raise", {"Uno": 3}, "raise"),
        (4, 4, 2, "call", {"Uno": 1, "Dos": 1}, "call"),
        (2, 8, 3, "call", {"Dos": 2}, "call"),  # the most the caller may bet
        (4, 4, 2, "bet", {"Uno": 3}, "raise"),  # BET above the opponent's total: a raise
        (4, 4, 2, "bet", {"Tres": 2}, "call"),  # BET equal to what a call must be: a call
        (2, 8, 3, "bet", {"Uno": 2}, "call"),
    ],
)
def test_ruling_7_judge_bet_reads_legal_bets(
    mine: int, theirs: int, their_total: int, command: str, rooms: dict[str, int], kind: str
) -> None:
    assert judge_bet(mine, theirs, their_total, command, rooms) == (kind, None)


@pytest.mark.parametrize(
    ("mine", "theirs", "their_total", "command", "rooms"),
    [
        (2, 8, 0, "bet", {"Uno": 3}),  # more than you hold
        (4, 4, 0, "bet", {"Uno": 5}),
        (4, 4, 0, "bet", {"Uno": 4}),  # more than you may bet (3)
        (4, 4, 0, "bet", {"Uno": 2, "Dos": 2}),
        (10, 1, 0, "bet", {"Uno": 2}),  # the cap is 1 here
        (4, 4, 0, "bet", {"Uno": 0, "Dos": 2}),  # a room with 0
        (4, 4, 0, "bet", {"Uno": 0}),
        (4, 4, 0, "bet", {"Uno": 1, "Dos": 1, "Tres": 1}),  # all three rooms
        (4, 4, 2, "raise", {"Uno": 2}),  # a RAISE not above the opponent's total
        (4, 4, 2, "raise", {"Uno": 1}),
        (4, 4, 2, "call", {"Uno": 1}),  # a CALL of another total
        (4, 4, 2, "call", {"Uno": 3}),
        (2, 8, 3, "call", {"Uno": 1}),  # the call must be 2 here
        (4, 4, 2, "bet", {"Uno": 1}),  # a BET below the opponent's total is neither
        (4, 4, 3, "raise", {"Uno": 4}),  # no raise is possible: 4 is over the cap
    ],
)
def test_ruling_8_judge_bet_finds_every_broken_limit(
    mine: int, theirs: int, their_total: int, command: str, rooms: dict[str, int]
) -> None:
    _, problem = judge_bet(mine, theirs, their_total, command, rooms)
    assert problem


def test_ruling_7_call_at_the_opening_is_refused_without_cost() -> None:
    state = to_betting("me")
    applied = refused(state, ZERO, bet("call", Uno=1))
    assert "no bet to call" in (applied.reason or "").lower()


@pytest.mark.parametrize(
    "move",
    [
        bet("bet", Uno=5),  # more than DMO holds (4)
        bet("raise", Uno=4),  # more than DMO may bet (3)
        bet("raise", Uno=0, Dos=3),  # a room with 0
        bet("raise", Uno=1, Dos=1, Tres=1),  # all three rooms
        bet("raise", Dos=2),  # a RAISE not above EC's total
        bet("call", Uno=1),  # a CALL of another total
        bet("call", Dos=3),
        bet("bet", Uno=1),  # a BET below EC's total
    ],
    ids=["over-held", "over-cap", "zero-room", "three-rooms", "raise-not-above", "call-1", "call-3", "bet-below"],
)
def test_ruling_8_a_broken_limit_costs_a_chip_and_keeps_the_turn(move: Move) -> None:
    state = ok(to_betting("opponent"), RED, bet("bet", Uno=2))  # EC opens with 2
    before = key(state)
    after = penalised(state, ZERO, move)
    assert chips(after) == (4, 3)
    assert after["transfers"][len(state["transfers"]) :] == [
        {"from": ZERO, "to": "out", "amount": 1, "reason": "illegal bet", "step": "r1-bet-2", "currency": MATCH_CHIPS}
    ]
    assert key(after) == before and G.step(after).players == (ZERO,)  # type: ignore[union-attr]
    assert after["betting"]["placements"] == {RED: {"Uno": 2}, ZERO: None}
    after = ok(after, ZERO, bet("call", Dos=2))  # and the turn is still open
    assert after["history"][0]["caller"] == ZERO


def test_ruling_7_bet_is_read_by_its_total() -> None:
    state = ok(to_betting("opponent"), RED, bet("bet", Uno=1))
    raised = ok(state, ZERO, bet("bet", Uno=2))  # above EC's 1: a raise
    assert raised["betting"]["actions"][-1]["kind"] == "raise"
    assert G.step(raised).players == (RED,)  # type: ignore[union-attr]
    called = ok(raised, RED, bet("bet", Dos=2))  # equal to what a call must be: a call
    assert called["history"][0]["ended"] == "call" and called["history"][0]["caller"] == RED
    # nobody won (all in Uno): EC 4 - 2 + 4 = 6, DMO 4 - 2 + 4 = 6
    assert chips(called) == (6, 6)


def test_ruling_7_raise_and_call_end_the_betting_and_pass_the_marker() -> None:
    state = to_betting("me")  # the DMO holds the marker and opens
    state = ok(state, ZERO, bet("raise", Uno=1))  # RAISE may open
    assert key(state) == "r1-bet-2" and G.step(state).players == (RED,)  # type: ignore[union-attr]
    state = ok(state, RED, bet("raise", Uno=1, Dos=1))
    assert key(state) == "r1-bet-3" and G.step(state).players == (ZERO,)  # type: ignore[union-attr]
    state = ok(state, ZERO, bet("raise", Tres=3))  # each bet replaces the bettor's placement
    assert state["betting"]["placements"] == {RED: {"Uno": 1, "Dos": 1}, ZERO: {"Tres": 3}}
    state = ok(state, RED, bet("call", Uno=2, Dos=1))
    assert state["marker"] == RED  # calling passes the marker to the caller
    record = state["history"][0]
    assert record["stakes"] == {RED: {"Uno": 2, "Dos": 1}, ZERO: {"Tres": 3}}
    # no room won: EC (X = 1) Uno 2 + 1 -> 6, Dos 1 + 1 -> 4: 10; DMO Tres 3 -> 6
    assert chips(state) == (4 - 3 + 10, 4 - 3 + 6)
    assert (state["round"], key(state)) == (2, "r2-send-1")


def test_ruling_7_a_call_for_less_when_that_is_the_most_you_may_bet() -> None:
    state = ok(to_betting("opponent"), RED, bet("bet", Uno=1, Dos=2))
    state = ok(state, ZERO, bet("call", Tres=3))
    # nobody won: EC X = 1: Uno (1 + 1) x 2 = 4, Dos (2 + 1) x 2 = 6: 10; DMO Tres 3 x 2 = 6
    assert chips(state) == (4 - 3 + 10, 4 - 3 + 6)
    state = place(state, everyone_in("Uno"))  # round 2: DMO holds the marker and opens
    state = ok(state, ZERO, bet("bet", Uno=7))  # DMO may bet min(7, floor(3/4 of 11) = 8) = 7
    # EC may bet min(11, floor(3/4 of 7) = 5) = 5 < 7: the call is 5; calling 7 breaks the cap
    state = penalised(state, RED, bet("call", Uno=7))
    assert chips(state) == (10, 7)
    state = ok(state, RED, bet("call", Uno=5))  # still min(10, 5) = 5
    assert state["history"][1]["stakes"] == {RED: {"Uno": 5}, ZERO: {"Uno": 7}}
    assert chips(state) == (10 - 5 + 10, 7 - 7 + 14)


def test_ruling_16_the_penalty_cuts_a_placement_above_the_chips_larger_room_first() -> None:
    # round 1, nobody wins: EC bets Uno 1 Dos 1 (X = 1): (1 + 1) x 2 in each room = 8; DMO calls Uno 2: 4
    state = ok(to_betting("opponent"), RED, bet("bet", Uno=1, Dos=1))
    state = ok(state, ZERO, bet("call", Uno=2))
    assert chips(state) == (10, 6) and state["marker"] == ZERO
    state = place(state, everyone_in("Uno"))
    state = ok(state, ZERO, bet("bet", Uno=2, Dos=1))  # DMO may bet min(6, 7) = 6
    state = ok(state, RED, bet("raise", Uno=4))  # EC may bet min(10, floor(4.5)) = 4
    wrong = bet("raise", Uno=1, Dos=1, Tres=1)
    for held in (5, 4, 3):
        state = penalised(state, ZERO, wrong)
        assert state["chips"][ZERO] == held
        assert state["betting"]["placements"][ZERO] == {"Uno": 2, "Dos": 1}  # 3 chips, still covered
    state = penalised(state, ZERO, wrong)
    assert state["chips"][ZERO] == 2
    assert state["betting"]["placements"][ZERO] == {"Uno": 1, "Dos": 1}  # cut by 1, from the larger room
    state = penalised(state, ZERO, wrong)
    assert state["chips"][ZERO] == 1
    assert state["betting"]["placements"][ZERO] == {"Uno": 1}  # a tie: the later room, Dos, goes
    assert key(state) == "r2-bet-3"


@pytest.mark.parametrize(
    ("placement", "most", "cut"),
    [
        ({"Uno": 2, "Dos": 1}, 3, {"Uno": 2, "Dos": 1}),  # covered: unchanged
        ({"Uno": 2, "Dos": 1}, 2, {"Uno": 1, "Dos": 1}),  # the larger room first
        ({"Uno": 1, "Dos": 3}, 2, {"Uno": 1, "Dos": 1}),  # ... whichever room it is
        ({"Uno": 5, "Dos": 2}, 4, {"Uno": 2, "Dos": 2}),  # down to the other room, not below it
        ({"Uno": 5, "Dos": 2}, 3, {"Uno": 2, "Dos": 1}),  # then even: the later room (Dos) first
        ({"Dos": 2, "Tres": 2}, 3, {"Dos": 2, "Tres": 1}),  # a tie: the later room
        ({"Uno": 1, "Tres": 1}, 1, {"Uno": 1}),  # a tie at 1 chip each: the later room is dropped
        ({"Tres": 4}, 2, {"Tres": 2}),  # one room
        ({"Uno": 1, "Dos": 1}, 0, None),  # nothing left: no bet
        ({"Dos": 3}, 0, None),
    ],
)
def test_ruling_16_cut_placement_larger_room_first_ties_the_later_room(
    placement: dict[str, int], most: int, cut: dict[str, int] | None
) -> None:
    assert cut_placement(placement, most) == cut


def test_ruling_8_a_penalty_that_leaves_no_chips_ends_the_betting_as_a_call_and_is_paid_out() -> None:
    """RULINGS: a penalty chip that leaves a player at 0 ends the betting as if that player
    called with their current placement (cut to 0 chips: none); the round is paid out; then
    the player at 0 loses. The opponent's standing bet is paid out as payout() computes it."""
    state = marker(start(), "opponent")  # the EC opens
    state = place(state, uno_won_by(state, EC))
    state = ok(state, RED, bet("bet", Uno=1))
    state = ok(state, ZERO, bet("raise", Uno=1, Dos=1))
    state = ok(state, RED, bet("raise", Uno=2, Tres=1))  # EC's standing bet, X = 1 doubled in Uno and Tres
    for held, standing in ((3, {"Uno": 1, "Dos": 1}), (2, {"Uno": 1, "Dos": 1}), (1, {"Uno": 1})):
        state = penalised(state, ZERO, bet("bet", Uno=4))
        assert state["chips"][ZERO] == held and state["betting"]["placements"][ZERO] == standing
    applied = G.apply_move(state, ZERO, bet("bet", Uno=4))  # the last chip
    assert not applied.accepted and applied.changed
    after = applied.state
    (record,) = after["history"]
    assert (record["ended"], record["caller"]) == ("penalty", ZERO)
    assert record["stakes"] == {RED: {"Uno": 2, "Tres": 1}, ZERO: None}  # cut to 0 chips: no bet
    assert record["actions"][-1]["kind"] == "penalty"
    expected = payout({EC: {"Uno": 2, "Tres": 1}, DMO: None}, {"Uno": EC, "Dos": None, "Tres": None})
    # by hand: nothing to claim (the DMO bet nothing); Uno (2 + 1) x 2 = 6, Tres (1 + 1) x 2 = 4
    assert expected["paid"] == {EC: 10, DMO: 0}
    assert record["payout"]["paid"] == {RED: 10, ZERO: 0}
    assert record["chips_before"] == {RED: 4, ZERO: 0}
    assert chips(after) == (4 - 3 + 10, 0)  # the penalised player gets nothing back: still at 0
    assert record["zero_check"] == "payout" and record["missed_loss"] == {}
    assert after["marker"] == ZERO  # passed as for a call
    assert (net(after, RED), net(after, ZERO)) == (7, -4)
    assert net(after, "out") == 4  # the four penalty chips
    result = G.result(after)
    assert result is not None
    assert result.outcome == {RED: "win", ZERO: "loss"}
    assert result.victory_points == {RED: 1.0, ZERO: 0.0}
    assert "Zero Cool has no chips left after the payout of round 1" in result.reason
    assert "a penalty for an illegal bet took Zero Cool's last chip" in result.reason
    assert G.step(after) is None
    reason = applied.reason or ""
    assert "it costs you 1 chip, your last one" in reason
    assert "the betting of round 1 ends as if you called with your standing bet cut to the chips you hold" in reason
    assert "Round 1 is paid out: you staked nothing and are paid nothing; Red Rover staked 3 chips" in reason
    assert "is paid 10 chips. You hold no chips after the payout, so you lose the match; Red Rover wins." in reason


def test_ruling_8_the_limit_messages_count_chips_in_the_right_number() -> None:
    """Every count of chips in a message is "1 chip" or "n chips", never "1 chips"."""
    one_chips = re.compile(r"(?<![\d.])1 chips")
    texts = [
        judge_bet(2, 1, 0, "bet", {"Uno": 2})[1],  # the cap is 3/4 of 1 chip, at least 1
        judge_bet(4, 4, 1, "call", {"Uno": 2})[1],
        judge_bet(4, 4, 1, "raise", {"Uno": 1})[1],
        judge_bet(4, 4, 0, "bet", {"Uno": 0})[1],
    ]
    assert texts == [
        "Your bet totals 2 chips, more than the most you may bet now, 1 (3/4 of your opponent's 1 chip, at least 1)",
        "A call must total 1 chip, your opponent's bet; yours totals 2",
        "A raise must total more than your opponent's 1 chip; yours totals 1",
        "Every room you bet on needs at least 1 chip",
    ]
    state = to_betting("opponent")
    state["chips"] = {RED: 1, ZERO: 4}  # the EC may bet 1 chip in all
    texts.append(describe_bet_choices(state, RED))
    assert "1 chip in all at most" in texts[-1]
    state = ok(state, RED, bet("bet", Uno=1))
    texts.append(describe_bet_choices(state, ZERO))
    assert texts[-1].startswith("CALL with 1 chip in all on one or two rooms")
    with pytest.raises(ParseError) as caught:
        G.parse(state, ZERO, "CALL 1")
    texts.append(str(caught.value))
    assert "Name the room for the 1 chip" in texts[-1]
    state = G.apply_timeout(state)  # the DMO misses a turn
    texts += G.standings(state)
    assert "zero (DMO): 4 chips, 1 betting turn missed" in texts
    assert "red (EC): 1 chip, holds the starting marker; bet Uno 1" in texts
    for text in texts:
        assert not one_chips.search(text or ""), text


# --------------------------------------------------------------------------- ruling 9: missed turns


def test_ruling_9_a_missed_turn_opens_one_extension() -> None:
    state = G.apply_timeout(to_betting("me"))
    step = G.step(state)
    assert step is not None
    assert (step.kind, step.extends, step.players) == ("extension", "r1-bet-1", (ZERO,))
    assert step.key != "r1-bet-1"
    assert state["missed"] == {RED: 0, ZERO: 1}
    # the same turn: the same Step: line, and a bet is taken as in the turn
    state = mail(state, ZERO, "BET Uno 2\nStep: Round 1, betting turn 1")
    assert state["missed"] == {RED: 0, ZERO: 1}  # answered in the extension: still missed
    assert key(state) == "r1-bet-2" and G.step(state).kind == "bet"  # type: ignore[union-attr]


def test_ruling_9_a_penalty_in_the_extension_keeps_the_extension() -> None:
    state = G.apply_timeout(to_betting("me"))
    extension = key(state)
    state = penalised(state, ZERO, bet("bet", Uno=4))
    assert chips(state) == (4, 3)
    assert key(state) == extension and G.step(state).kind == "extension"  # type: ignore[union-attr]
    state = ok(state, ZERO, bet("bet", Uno=3))  # DMO may bet min(3, 3) = 3
    assert key(state) == "r1-bet-2"


def test_ruling_9_the_opener_missing_twice_the_opponent_opens() -> None:
    state = G.apply_timeout(G.apply_timeout(to_betting("me")))
    step = G.step(state)
    assert step is not None and (step.kind, step.players) == ("bet", (RED,))
    assert state["betting"]["opener"] == RED
    assert state["missed"] == {RED: 0, ZERO: 1}
    state = ok(state, RED, bet("bet", Uno=1))
    state = ok(state, ZERO, bet("call", Dos=1))
    assert state["marker"] == ZERO  # the caller
    # nobody won: 4 - 1 + 2 = 5 each; then DMO loses floor(1 x 5 / 5) = 1
    assert chips(state) == (5, 4)


def test_ruling_9_the_responder_missing_twice_calls_with_the_placement() -> None:
    state = ok(to_betting("opponent"), RED, bet("bet", Uno=1))
    state = ok(state, ZERO, bet("raise", Uno=2))
    state = G.apply_timeout(G.apply_timeout(state))
    record = state["history"][0]
    assert (record["ended"], record["caller"]) == ("missed", RED)
    assert record["stakes"] == {RED: {"Uno": 1}, ZERO: {"Uno": 2}}
    assert state["marker"] == RED  # the marker passes as for a call
    # nobody won: EC 4 - 1 + 2 = 5, then floor(1 x 5 / 5) = 1 lost: 4; DMO 4 - 2 + 4 = 6
    assert chips(state) == (4, 6)
    assert record["missed_loss"] == {RED: 1}


@pytest.mark.parametrize(("marker_to", "holder", "other"), [("me", ZERO, RED), ("opponent", RED, ZERO)])
def test_ruling_9_both_openers_missing_no_stakes_and_the_marker_stays(marker_to: str, holder: str, other: str) -> None:
    """RULINGS: "If the opener and then the other player both miss their turns (extensions
    included), the round has no bets and the marker stays where it was"."""
    state = to_betting(marker_to)
    for opener in (holder, holder, other, other):  # each opening turn and its extension
        assert G.step(state).players == (opener,)  # type: ignore[union-attr]
        state = G.apply_timeout(state)
    record = state["history"][0]
    assert (record["ended"], record["caller"]) == ("nobody opened", None)
    assert record["stakes"] == {RED: None, ZERO: None}
    assert record["payout"]["staked"] == record["payout"]["paid"] == {RED: 0, ZERO: 0}
    assert state["marker"] == record["marker"] == record["marker_before"] == holder
    assert state["missed"] == {RED: 1, ZERO: 1}
    assert chips(state) == (4, 4)  # floor(1 x 4 / 5) = 0 each
    assert (state["round"], key(state)) == (2, "r2-send-1")


# --------------------------------------------------------------------------- ruling 10: the k/5 loss


def test_ruling_10_missed_turns_cost_k_fifths_over_two_rounds() -> None:
    # round 1: DMO opens late (in the extension) with Uno 2; EC calls; nobody wins
    state = G.apply_timeout(to_betting("me"))
    state = ok(state, ZERO, bet("bet", Uno=2))
    state = ok(state, RED, bet("call", Uno=2))
    # EC 4 - 2 + 4 = 6; DMO 4 - 2 + 4 = 6, then k = 1: floor(1 x 6 / 5) = 1 -> 5
    assert chips(state) == (6, 5)
    assert state["history"][0]["missed_loss"] == {ZERO: 1}
    assert state["marker"] == RED
    # round 2: EC opens Uno 1; DMO misses the turn and its extension: a call with nothing
    state = place(state, everyone_in("Uno"))
    state = ok(state, RED, bet("bet", Uno=1))
    state = G.apply_timeout(G.apply_timeout(state))
    # EC 6 - 1 + 2 = 7; DMO 5 - 0 + 0 = 5, then k = 2: floor(2 x 5 / 5) = 2 -> 3
    assert chips(state) == (7, 3)
    assert state["history"][1]["missed_loss"] == {ZERO: 2}
    assert state["missed"] == {RED: 0, ZERO: 2}
    assert state["marker"] == ZERO  # "as if they called"
    # the lost chips left play
    out = [t for t in state["transfers"] if t["to"] == "out"]
    assert [(t["from"], t["amount"]) for t in out] == [(ZERO, 1), (ZERO, 2)]
    # round 3: nobody misses, nobody loses, though DMO's k is 2
    state = place(state, everyone_in("Uno"))
    state = ok(state, ZERO, bet("bet", Uno=1))
    state = ok(state, RED, bet("call", Uno=1))
    assert chips(state) == (8, 4)
    assert state["history"][2]["missed_loss"] == {}


def test_ruling_10_the_fifth_miss_costs_every_chip_both_at_0_the_dmo_wins() -> None:
    """Every round both openers miss (no stakes), so each player's k grows by one a
    round: round 1 floor(4/5) = 0, round 2 floor(2 x 4/5) = 1, round 3 floor(3 x 3/5) = 1,
    round 4 floor(4 x 2/5) = 1, round 5 all of the last chip: both at 0 at once."""
    state = marker(start(), "me")
    held = []
    while G.result(state) is None:
        state = G.apply_timeout(state)  # placement: both time out, all placed at random
        assert state["phase"] == "bet"
        for _ in range(4):
            state = G.apply_timeout(state)
        held.append(chips(state))
    assert held == [(4, 4), (3, 3), (2, 2), (1, 1), (0, 0)]
    result = G.result(state)
    assert result is not None
    assert result.outcome == {RED: "loss", ZERO: "win"}  # a tie goes to the DMO
    assert len(state["history"]) == 5


# --------------------------------------------------------------------------- rulings 11 and 12: the payout


def test_ruling_11_new_chips_are_chips_minus_stake_plus_payout() -> None:
    state = marker(start(), "opponent")
    state = place(state, uno_won_by(state, EC))
    state = ok(state, RED, bet("bet", Uno=1, Dos=1))
    state = ok(state, ZERO, bet("call", Uno=2))
    # Uno: EC claims min(1, 2) = 1 of DMO's (DMO bet one room: nothing doubled); EC owns
    # 1 + 1 (its X) + 1 = 3 -> 6, DMO 1 -> 2. Dos: EC 1 + 1 -> 4. EC paid 10, DMO 2.
    payout = state["history"][0]["payout"]
    assert payout["paid"] == {RED: 10, ZERO: 2}
    assert payout["rooms"]["Uno"]["winner"] == RED
    assert chips(state) == (4 - 2 + 10, 4 - 2 + 2)
    assert (net(state, RED), net(state, ZERO)) == (8, 0)
    assert state["marker"] == ZERO


def test_ruling_12_the_payout_reveals_the_rounds_entries() -> None:
    state = marker(start(), "opponent")
    entries = entries_now(state)
    state = place(state, uno_won_by(state, DMO))
    state = ok(state, RED, bet("bet", Uno=1))
    state = ok(state, ZERO, bet("call", Uno=1))
    for viewer in (RED, ZERO, None):
        (record,) = G.view(state, viewer)["history"]
        assert record["entries"] == entries
        assert record["counts"] == {"Uno": {EC: 2, DMO: 1}, "Dos": {EC: 0, DMO: 4}, "Tres": {EC: 3, DMO: 0}}
        assert record["winners"] == {"Uno": ZERO, "Dos": None, "Tres": None}
    # DMO claims min(1, 1) = 1: owns 2 -> 4; EC 0. EC 4 - 1 = 3, DMO 4 - 1 + 4 = 7
    assert chips(state) == (3, 7)


# --------------------------------------------------------------------------- ruling 13: the end


def test_ruling_13_no_chips_after_a_payout_loses_at_once() -> None:
    state = marker(start(), "opponent")
    state = place(state, uno_won_by(state, DMO))
    for _ in range(3):  # EC 4 -> 1 chip by penalties
        state = penalised(state, RED, bet("bet", Uno=4))
    state = ok(state, RED, bet("bet", Uno=1))  # EC may bet min(1, 3) = 1
    state = ok(state, ZERO, bet("call", Uno=1))  # DMO may bet max(floor(3/4), 1) = 1
    # DMO wins Uno and claims min(1, 1) = 1: EC 1 - 1 + 0 = 0; DMO owns 2 -> 4: 4 - 1 + 4
    assert chips(state) == (0, 7)
    result = G.result(state)
    assert result is not None and result.outcome == {RED: "loss", ZERO: "win"}
    assert len(state["history"]) == 1 and G.step(state) is None


def play_eight_rounds(opener_bet: dict[str, dict[str, int]], caller_bet: dict[str, dict[str, int]]) -> State:
    """Eight rounds, all participants in Uno each time (no winner); the marker holder
    bets ``opener_bet[holder]`` and the other calls with ``caller_bet[them]``."""
    state = marker(start(), "opponent")
    while G.result(state) is None:
        state = place(state, everyone_in("Uno"))
        holder = state["marker"]
        other = ZERO if holder == RED else RED
        state = ok(state, holder, {"action": "bet", "rooms": opener_bet[holder]})
        state = ok(state, other, {"action": "call", "rooms": caller_bet[other]})
    return state


def test_ruling_13_after_eight_rounds_the_most_chips_wins() -> None:
    # EC always bets Uno 1 Dos 1: (1 + 1) x 2 in each room = 8, +6 a round; DMO always Uno 2: +2
    two = {RED: {"Uno": 1, "Dos": 1}, ZERO: {"Uno": 2}}
    state = play_eight_rounds(two, two)
    assert len(state["history"]) == 8
    assert chips(state) == (4 + 8 * 6, 4 + 8 * 2)
    result = G.result(state)
    assert result is not None
    assert result.outcome == {RED: "win", ZERO: "loss"}
    assert result.victory_points == {RED: 1.0, ZERO: 0.0}


def test_ruling_13_a_tie_after_eight_rounds_goes_to_the_dmo() -> None:
    one = {RED: {"Uno": 1}, ZERO: {"Tres": 1}}
    state = play_eight_rounds(one, one)
    assert chips(state) == (12, 12)  # +1 each a round
    result = G.result(state)
    assert result is not None
    assert result.outcome == {RED: "loss", ZERO: "win"}  # only the DM players have an outcome
    assert set(result.victory_points) == {RED, ZERO}


def with_misses(state: State, **missed: int) -> State:
    """The state with betting turns missed in earlier rounds (k so far), as if played."""
    new = clone(state)
    new["missed"].update(missed)
    return new


@pytest.mark.parametrize(("marker_to", "who", "other"), [("opponent", RED, ZERO), ("me", ZERO, RED)])
def test_ruling_13_the_k5_loss_leaves_one_at_0_that_one_loses(marker_to: str, who: str, other: str) -> None:
    """Both above 0 after the payout; the k/5 loss (k = 5: every chip) leaves one at 0,
    who loses (RULINGS: "only then is the k/5 loss taken, and a player it leaves at 0 loses")."""
    state = with_misses(to_betting(marker_to), **{who: 4})  # ``who`` opens, with 4 misses so far
    state = G.apply_timeout(state)  # the 5th miss; answered in the extension
    state = ok(state, who, bet("bet", Uno=1))
    state = ok(state, other, bet("call", Dos=1))
    (record,) = state["history"]
    # nobody won: 4 - 1 + 2 = 5 each after the payout; then floor(5 x 5 / 5) = 5 lost
    assert record["chips_after_payout"] == {RED: 5, ZERO: 5}
    assert record["missed_loss"] == {who: 5}
    assert state["chips"] == {who: 0, other: 5}
    assert record["zero_check"] == "loss"
    result = G.result(state)
    assert result is not None and result.outcome == {who: "loss", other: "win"}
    assert f"{NAMES[who]} has no chips left after the loss for missed betting turns in round 1." in result.reason


def test_ruling_13_both_at_0_after_the_k5_loss_the_dmo_wins() -> None:
    state = with_misses(to_betting("opponent"), **{RED: 4, ZERO: 4})
    state = G.apply_timeout(state)  # the EC's 5th miss
    state = ok(state, RED, bet("bet", Uno=1))
    state = G.apply_timeout(state)  # the DMO's 5th miss
    state = ok(state, ZERO, bet("call", Dos=1))
    (record,) = state["history"]
    assert record["chips_after_payout"] == {RED: 5, ZERO: 5}
    assert record["missed_loss"] == {RED: 5, ZERO: 5} and chips(state) == (0, 0)
    result = G.result(state)
    assert result is not None and result.outcome == {RED: "loss", ZERO: "win"}
    assert result.reason == (
        "Zero Cool wins: Red Rover and Zero Cool both have no chips left after the loss for missed betting "
        "turns in round 1. Both at 0: the DMO wins."
    )


def test_ruling_13_both_at_0_after_the_payout_the_dmo_wins() -> None:
    """Both at 0 right after a payout cannot happen in play (a payout pays back at least
    twice what was staked, and with no stakes the stacks stay as they were, above 0), so
    the state is made up: both stacks at 0 while the betting is open, and both openers miss.
    The check after the payout ends the match, the DMO wins, and no k/5 loss is taken."""
    state = clone(to_betting("me"))
    state["chips"] = {RED: 0, ZERO: 0}
    for _ in range(4):
        state = G.apply_timeout(state)
    (record,) = state["history"]
    assert record["ended"] == "nobody opened"
    assert record["zero_check"] == "payout" and record["missed_loss"] == {}
    result = G.result(state)
    assert result is not None and result.outcome == {RED: "loss", ZERO: "win"}
    assert "Red Rover and Zero Cool both have no chips left after the payout of round 1." in result.reason
    assert result.reason.endswith(
        "The match ends at this check, so the loss for missed betting turns is not taken. Both at 0: the DMO wins."
    )


# --------------------------------------------------------------------------- ruling 17: no k/5 loss after the match


def test_ruling_17_dmo_at_0_after_the_payout_the_ec_wins_without_its_k5_loss() -> None:
    """The issue's case: the DMO is at 0 after the payout; the EC missed its 5th betting
    turn this round, so its k/5 loss would take every chip. The check after the payout
    comes first and ends the match: the DMO loses at once, and the k/5 loss is not taken.
    (Checking once after the loss, both would be at 0 and the DMO would win.)"""
    state = marker(start(), "me")  # the DMO opens
    state = with_misses(place(state, uno_won_by(state, EC)), **{RED: 4})
    for _ in range(3):  # the DMO 4 -> 1 chip by penalties
        state = penalised(state, ZERO, bet("bet", Uno=4))
    state = ok(state, ZERO, bet("bet", Uno=1))
    state = G.apply_timeout(state)  # the EC's 5th miss; it calls in the extension
    state = ok(state, RED, bet("call", Uno=1))  # the EC may bet max(floor(3/4 of 1), 1) = 1
    (record,) = state["history"]
    expected = payout({EC: {"Uno": 1}, DMO: {"Uno": 1}}, {"Uno": EC, "Dos": None, "Tres": None})
    # by hand: the EC wins Uno and claims min(1, 1) = 1: owns 2 -> paid 4; the DMO is paid 0
    assert expected["paid"] == {EC: 4, DMO: 0}
    assert record["payout"]["paid"] == {RED: 4, ZERO: 0}
    assert record["chips_after_payout"] == {RED: 4 - 1 + 4, ZERO: 1 - 1 + 0}
    assert record["missed"] == {RED: 1, ZERO: 0} and record["missed_total"] == {RED: 5, ZERO: 0}
    assert record["missed_loss"] == {} and record["zero_check"] == "payout"
    assert chips(state) == (7, 0)  # not (0, 0): the EC's k/5 loss (all 7) is not taken
    assert not [t for t in state["transfers"] if t["reason"].startswith("missed betting turns")]
    result = G.result(state)
    assert result is not None and result.outcome == {RED: "win", ZERO: "loss"}
    assert result.reason == (
        "Red Rover wins: Zero Cool has no chips left after the payout of round 1. The match ends at this check, "
        "so the loss for missed betting turns is not taken."
    )


# --------------------------------------------------------------------------- ruling 20: the ranking


def test_ruling_20_the_winner_ranks_first_and_the_loser_last_and_no_participant() -> None:
    assert G.game_type.ranked is True
    two = {RED: {"Uno": 1, "Dos": 1}, ZERO: {"Uno": 2}}
    one = {RED: {"Uno": 1}, ZERO: {"Tres": 1}}
    most_chips = play_eight_rounds(two, two)  # the EC wins with more chips
    tie_to_the_dmo = play_eight_rounds(one, one)  # 12 each: the DMO wins, not a draw
    both_at_0 = with_misses(to_betting("opponent"), **{RED: 4, ZERO: 4})
    both_at_0 = ok(G.apply_timeout(both_at_0), RED, bet("bet", Uno=1))
    both_at_0 = ok(G.apply_timeout(both_at_0), ZERO, bet("call", Dos=1))  # both at 0: the DMO wins
    for state, winner, loser in ((most_chips, RED, ZERO), (tie_to_the_dmo, ZERO, RED), (both_at_0, ZERO, RED)):
        result = G.result(state)
        assert result is not None and result.outcome == {winner: "win", loser: "loss"}
        assert result.ranking == [winner, loser]  # the two DM players only
        assert G.result(json.loads(json.dumps(state))).ranking == [winner, loser]  # type: ignore[union-attr]
    assert chips(tie_to_the_dmo) == (12, 12) and chips(both_at_0) == (0, 0)


# --------------------------------------------------------------------------- rulings 7 and 14: the mail


@pytest.mark.parametrize(
    ("text", "to"),
    [
        ("MARKER ME", "me"),
        ("marker myself", "me"),
        ("Marker keep", "me"),
        ("MARKER OPPONENT", "opponent"),
        ("MARKER EC", "opponent"),
        ("marker give", "opponent"),
        ("MARKER THEM", "opponent"),
    ],
)
def test_the_marker_forms(text: str, to: str) -> None:
    assert G.parse(start(), ZERO, text).moves == [{"action": "marker", "to": to}]


def test_a_marker_without_a_choice_is_an_error() -> None:
    with pytest.raises(ParseError):
        G.parse(start(), ZERO, "MARKER perhaps")


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("RAISE Uno 3 Dos 2", bet("raise", Uno=3, Dos=2)),
        ("bet Uno: 3, Dos: 2", bet("bet", Uno=3, Dos=2)),
        ("CALL 3 on Uno and 2 on Dos", bet("call", Uno=3, Dos=2)),
        ("Bet 2 chips on Tres", bet("bet", Tres=2)),
        ("- raise dos 4", bet("raise", Dos=4)),
        ("call Uno 0", bet("call", Uno=0)),  # well-formed: breaking the limit costs a chip
        ("BET Uno 1 Dos 1 Tres 1", bet("bet", Uno=1, Dos=1, Tres=1)),
        ("> RAISE Uno 9\nCALL Uno 1", bet("call", Uno=1)),  # quoted lines are not read
    ],
)
def test_ruling_7_the_bet_commands(text: str, move: Move) -> None:
    assert G.parse(to_betting(), ZERO, text).moves == [move]


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("*BET* Uno 3", bet("bet", Uno=3)),
        ("RAISE _Uno_ 3", bet("raise", Uno=3)),
        ("CALL Uno **3**", bet("call", Uno=3)),
        ("**RAISE** *Uno*: 3, _Dos_: 2", bet("raise", Uno=3, Dos=2)),
        ("__bet__ __uno__ __2__!", bet("bet", Uno=2)),
        ("* *CALL* Tres 1", bet("call", Tres=1)),  # a bullet, then emphasis
        ("*RAISE Uno 3 Dos 2*", bet("raise", Uno=3, Dos=2)),
    ],
)
def test_ruling_18_emphasis_around_words_is_dropped(text: str, move: Move) -> None:
    assert G.parse(to_betting(), ZERO, text).moves == [move]


def test_ruling_18_emphasis_around_a_name_is_dropped_and_inside_it_separates_words() -> None:
    state = marker(start(), "me")
    assert G.parse(state, RED, "*SEND* _Cara_ TO **Dos**").moves == [send("cdiaz", "Dos")]
    assert G.parse(state, RED, "SEND Cara_Diaz TO Dos").moves == [send("cdiaz", "Dos")]


@pytest.mark.parametrize(
    ("text", "written"),
    [("RAISE Uno 1_0", "1_0"), ("BET Uno 1_000", "1_000"), ("CALL *Uno* 1*0", "1*0"), ("BET Dos 1.5", "1.5")],
)
def test_ruling_18_a_number_with_an_underscore_is_an_error_quoting_it(text: str, written: str) -> None:
    """Never read as two numbers ("1 0") nor as one ("10"): an error, costing nothing,
    that quotes the number as written."""
    with pytest.raises(ParseError) as caught:
        G.parse(to_betting(), ZERO, text)
    assert not isinstance(caught.value, NoMoves)
    assert caught.value.reason.startswith(f"{written!r} is not a whole number of chips")
    assert "Two numbers" not in caught.value.reason


@pytest.mark.parametrize("text", ["BET Uno", "BET 3", "BET Uno 1 Uno 2", "RAISE Quattro 2", "CALL"])
def test_a_malformed_bet_is_an_error(text: str) -> None:
    with pytest.raises(ParseError) as caught:
        G.parse(to_betting(), ZERO, text)
    assert not isinstance(caught.value, NoMoves)


@pytest.mark.parametrize("text", ["BET Uno 1\nCALL Dos 1", "SEND P1 TO Uno\nSEND P2 TO Dos", "MARKER ME\nBET Uno 1"])
def test_two_commands_are_an_error(text: str) -> None:
    with pytest.raises(ParseError) as caught:
        G.parse(marker(start(), "me"), RED, text)
    assert not isinstance(caught.value, NoMoves)


def test_no_command_is_no_moves() -> None:
    with pytest.raises(NoMoves):
        G.parse(start(), ZERO, "Hello referee,\nthanks for the game!")


def test_ruling_14_the_step_line_names_the_step() -> None:
    state = marker(start(), "me")
    state = ok(state, RED, send("p3", "Uno"))
    state = ok(state, ZERO, send("jnunez", "Uno"))  # placement 2 is open
    form = G.form(state, RED)
    assert form.endswith("Step: Round 1, placement 2\n")
    (move,) = G.parse(state, RED, form).moves
    assert move["step"] == "round 1 placement 2"
    ok(state, RED, move)
    (stale,) = G.parse(state, RED, "SEND P3 TO Dos\nStep: Round 1, placement 1").moves
    applied = refused(state, RED, stale)
    assert "earlier step" in (applied.reason or "")
    (fresh,) = G.parse(state, RED, "SEND P3 TO Dos\nstep: round 1, PLACEMENT 2").moves
    ok(state, RED, fresh)


def test_ruling_14_a_stale_bet_costs_nothing() -> None:
    state = ok(to_betting("opponent"), RED, bet("bet", Uno=1))
    (stale,) = G.parse(state, ZERO, "RAISE Uno 1 Dos 1 Tres 1\nStep: Round 1, betting turn 1").moves
    refused(state, ZERO, stale)  # an illegal bet, but for an old step: refused before it is judged


# --------------------------------------------------------------------------- rulings 3 and 15: hidden information


def flipped(state: State, *, keep: str | None = None) -> State:
    """The state with every entry of the open and later rounds turned (EC <-> DMO), except
    ``keep``'s list: what nobody but a participant may know yet."""
    new = clone(state)
    done = len(state["history"])
    for p in PARTS:
        if p != keep:
            new["lists"][p] = [e if i < done else (DMO if e == EC else EC) for i, e in enumerate(new["lists"][p])]
    return new


def lists_in(data: Any) -> list[Any]:
    """Every list in ``data`` that looks like list data: 8 entries, each a role or a DM
    player's name; and every value under a key ``"lists"``."""
    found: list[Any] = []
    marks = {EC, DMO, RED, ZERO, NAMES[RED], NAMES[ZERO]}
    if isinstance(data, dict):
        if "lists" in data:
            found.append(data["lists"])
        for value in data.values():
            found += lists_in(value)
    elif isinstance(data, list):
        if len(data) == 8 and all(isinstance(x, str) and x in marks for x in data):
            found.append(data)
        for value in data:
            found += lists_in(value)
    return found


def test_ruling_15_views_hold_no_entry_of_the_open_or_a_later_round() -> None:
    _, _, states = golden_match()
    for state in states:
        if G.result(state) is not None:
            continue
        turned = flipped(state)
        for viewer in (RED, ZERO, None):
            view = G.view(state, viewer)
            assert lists_in(json.loads(json.dumps(view))) == []
            assert view == G.view(turned, viewer), (viewer, state["phase"], state["round"])
            assert [r["round"] for r in view["history"]] == list(range(1, len(state["history"]) + 1))
        for p in PARTS[:3]:
            view = G.view(state, p)
            found = lists_in(view)
            assert len(found) == 2 and view["entry_roles"] in found and view["entries"] in found
            assert view["entry_roles"] == state["lists"][p]
            assert view == G.view(flipped(state, keep=p), p)  # nobody else's list


def test_ruling_15_the_other_dm_players_send_is_not_shown_before_the_step_closes() -> None:
    state = ok(marker(start(), "me"), RED, send("p3", "Uno"))
    state = ok(state, ZERO, send("jnunez", "Dos"))  # step 1 closed; step 2 open
    one = ok(state, RED, send("cdiaz", "Uno"))
    other = ok(state, RED, send("ann", "Tres"))
    for viewer in (ZERO, None, "bell"):
        assert G.view(one, viewer) == G.view(other, viewer)
    assert G.view(one, RED)["sent"]["participant"] == "cdiaz"  # one's own send is shown
    # once closed, the sends are public
    closed = ok(one, ZERO, send("dek", "Dos"))
    record = G.view(closed, ZERO)["placements"][-1]
    assert record["sent"] == {RED: {"participant": "cdiaz", "room": "Uno"}, ZERO: {"participant": "dek", "room": "Dos"}}


def test_ruling_15_the_public_view_shows_positions_stacks_and_betting() -> None:
    state = marker(start(), "opponent")
    state = place(state, everyone_in("Tres"))
    state = ok(state, RED, bet("bet", Uno=1, Dos=1))
    public = G.view(state, None)
    assert public["stacks"] == {RED: 4, ZERO: 4}
    assert {row["id"]: row["room"] for row in public["positions"]} == everyone_in("Tres")
    assert public["betting"]["placements"] == {RED: {"Uno": 1, "Dos": 1}, ZERO: None}
    assert "entries" not in public and "lists" not in public


# --------------------------------------------------------------------------- replay and the golden transcript

GOLDEN = Path(__file__).with_name("betting_minority_golden.txt")
GOLDEN_SEED = 2025
GOLDEN_SCRIPT = "betting-minority golden 356"  # the bot's own random stream
STYLES = ("{room} {n}", "{room}: {n}", "{n} on {room}")


def _name_of(rnd: random.Random, p: str) -> str:
    """A participant as a player might write them: short id, season id, name, plain name."""
    short = f"P{PARTS.index(p) + 1}"
    season = [] if p.upper() in short_ids(PARTS).values() else [p]  # "p3" names P3, not P1
    return rnd.choice([short, *season, NAMES[p], normal_name(NAMES[p])])


def _rooms_text(rnd: random.Random, rooms: dict[str, int]) -> str:
    style = rnd.choice(STYLES)
    return (", " if ":" in style else " and " if " on " in style else " ").join(
        style.format(room=room, n=n) for room, n in rooms.items()
    )


def _split(rnd: random.Random, amount: int) -> dict[str, int]:
    if amount >= 2 and rnd.random() < 0.5:
        a, b = sorted(rnd.sample(ROOMS, 2), key=ROOMS.index)
        first = rnd.randint(1, amount - 1)
        return {a: first, b: amount - first}
    return {rnd.choice(ROOMS): amount}


def _bot_mail(rnd: random.Random, state: State) -> tuple[str, str] | None:
    """The next mail of the scripted match (player, text), or None: a deadline passes."""
    step = G.step(state)
    assert step is not None
    phase = state["phase"]
    if phase == "marker":
        return None if rnd.random() < 0.3 else (ZERO, rnd.choice(["MARKER ME", "MARKER OPPONENT"]))
    if phase == "send":
        waiting = list(G.awaiting(state))
        if rnd.random() < (0.1 if len(waiting) == 2 else 0.15):
            return None
        player = rnd.choice(waiting)
        free = [p for p in PARTS if state["positions"][p] is None]
        other = state["send"]["sent"][ZERO if player == RED else RED]
        who = other["participant"] if other is not None and rnd.random() < 0.4 else rnd.choice(free)
        text = f"SEND {_name_of(rnd, who)} TO {rnd.choice(ROOMS)}"
    else:
        if rnd.random() < 0.1:
            return None
        (player,) = step.players
        opp = ZERO if player == RED else RED
        mine, theirs = state["chips"][player], state["chips"][opp]
        their_total = sum((state["betting"]["placements"][opp] or {}).values())
        cap = bet_cap(mine, theirs)
        roll = rnd.random()
        if roll < 0.08:  # a bet that breaks a limit
            text = rnd.choice([f"BET Uno {cap + 1}", "RAISE Uno 1 Dos 1 Tres 1", "BET Dos 0 Tres 1"])
        elif their_total == 0:
            text = f"{rnd.choice(['BET', 'RAISE'])} {_rooms_text(rnd, _split(rnd, rnd.randint(1, cap)))}"
        elif cap > their_total and roll < 0.45:
            text = f"RAISE {_rooms_text(rnd, _split(rnd, rnd.randint(their_total + 1, cap)))}"
        else:
            need = call_amount(mine, theirs, their_total)
            text = f"{rnd.choice(['CALL', 'CALL', 'BET'])} {_rooms_text(rnd, _split(rnd, need))}"
    if rnd.random() < 0.3:
        text += f"\nStep: {G.form_title(state)}"
    return player, text


def _who(p: str) -> str:
    return f"P{PARTS.index(p) + 1}"


def _placement(rooms: dict[str, int] | None) -> str:
    return "nothing" if not rooms else " ".join(f"{room} {n}" for room, n in rooms.items())


def _positions(positions: dict[str, str | None]) -> str:
    return "; ".join(f"{room}: {' '.join(_who(p) for p in PARTS if positions[p] == room) or '-'}" for room in ROOMS)


def _placement_line(r: int, rec: dict[str, Any]) -> str:
    how = ", ".join(
        f"{_who(x['participant'])} -> {x['room']} ({x['how']}{' by ' + x['by'] if 'by' in x else ''})"
        for x in rec["placed"]
    )
    return f"  round {r} placement {rec['step']}{' (deadline)' if rec['timeout'] else ''}: {how or 'nobody placed'}"


def _action_line(a: dict[str, Any]) -> str:
    who = a["player"]
    if a["kind"] == "missed":
        return f"  {who} missed the turn: extension"
    if a["kind"] == "missed-extension":
        return f"  {who} missed the extension too"
    if a["kind"] == "penalty":
        return f"  {who} penalty, 1 chip out: {a['command']} {_placement(a['placement'])}: {a['problem']}"
    return f"  {who} {a['kind']}s {_placement(a['placement'])} (total {a['total']})"


def _round_lines(rec: dict[str, Any], history: list[dict[str, Any]]) -> list[str]:
    """A finished round; ``history`` the rounds up to it (for each player's k so far)."""
    r, pay = rec["round"], rec["payout"]
    lines = [
        f"  round {r} betting ends ({rec['ended']}{', caller ' + rec['caller'] if rec['caller'] else ''}): "
        f"stakes {RED} {_placement(rec['stakes'][RED])}, {ZERO} {_placement(rec['stakes'][ZERO])}",
        "  entries: " + " ".join(f"{_who(p)} {rec['entries'][p]}" for p in PARTS),
    ]
    for room in ROOMS:
        c, info = rec["counts"][room], pay["rooms"][room]
        lines.append(
            f"  {room}: {' '.join(_who(p) for p in PARTS if rec['positions'][p] == room) or '-'} "
            f"(EC {c[EC]}, DMO {c[DMO]}) winner {info['winner'] or '-'}; chips {info['chips'][RED]}/"
            f"{info['chips'][ZERO]}, doubled {info['doubled'][RED]}/{info['doubled'][ZERO]}, claimed "
            f"{info['claimed']} ({info['claimed_doubled']} doubled), paid {info['paid'][RED]}/{info['paid'][ZERO]}"
        )
    parts = []
    for p in (RED, ZERO):
        lost = rec["missed_loss"].get(p)
        k = sum(h["missed"][p] for h in history)
        missed = f" - {lost} (missed {rec['missed'][p]}, k = {k})" if lost is not None else ""
        parts.append(
            f"{p} {rec['chips_before'][p]} - {pay['staked'][p]} + {pay['paid'][p]}{missed} = {rec['chips'][p]}"
        )
    lines.append(f"  chips: {', '.join(parts)}; marker {rec['marker']}")
    return lines


def _effects(before: State, after: State) -> list[str]:
    """What one event did, read from the states: placement steps closed, betting actions,
    finished rounds, the step now open, the result."""
    lines: list[str] = []
    if before["phase"] == "marker":
        given = after["marker_given"]
        lines.append(f"  marker: {given['to']}{' (deadline: the DMO keeps it)' if given['timeout'] else ''}")
    finished = after["history"][len(before["history"]) :]
    for rec in finished:  # a betting that ended: its last actions, then the round
        seen = len(before["betting"]["actions"]) if before["betting"] else 0
        lines += [_action_line(a) for a in rec["actions"][seen:]]
        lines += _round_lines(rec, after["history"][: rec["round"]])
    if not finished:
        lines += [_placement_line(after["round"], x) for x in after["placements"][len(before["placements"]) :]]
        if after["betting"] is not None:
            if before["betting"] is None:
                lines.append(f"  positions: {_positions(after['positions'])}")
            seen = len(before["betting"]["actions"]) if before["betting"] else 0
            lines += [_action_line(a) for a in after["betting"]["actions"][seen:]]
        if before["chips"] != after["chips"]:
            lines.append(f"  chips: {RED} {after['chips'][RED]}, {ZERO} {after['chips'][ZERO]}")
    step = G.step(after)
    if step is not None:
        lines.append(f"  open: {step.key} ({', '.join(G.awaiting(after))})")
    result = G.result(after)
    if result is not None:
        lines.append(f"  result: {result.reason} {result.outcome}")
    return lines


@functools.cache
def golden_match() -> tuple[list[str], list[SimpleNamespace], list[State]]:
    """The scripted match: its transcript lines, its event log (as MatchBook logs it) and
    every state (states[k + 1] after events[k])."""
    rnd = random.Random(GOLDEN_SCRIPT)
    state = start(GOLDEN_SEED)
    lines = [
        f"# Betting Minority, seed {GOLDEN_SEED}: EC {RED}, DMO {ZERO}; lists by round (E = EC, D = DMO):",
        *(f"# {_who(p)} {NAMES[p]} ({p}): {' '.join(e[0] for e in state['lists'][p])}" for p in PARTS),
    ]
    events: list[SimpleNamespace] = []
    states = [state]
    while G.result(state) is None:
        sent = _bot_mail(rnd, state)
        if sent is None:
            lines.append(f"> deadline: {', '.join(G.awaiting(state))}")
            payload = {"missing": list(G.awaiting(state)), "title": G.step(state).title}  # type: ignore[union-attr]
            after = G.apply_timeout(state)
            events.append(SimpleNamespace(kind="timeout", player=None, payload=payload))
        else:
            player, text = sent
            lines.append(f"> {player}: {text.replace(chr(10), ' / ')}")
            (move,) = G.parse(state, player, text).moves
            applied = G.apply_move(state, player, move)
            assert applied.changed, applied.reason
            after = applied.state
            logged = json.loads(json.dumps({"move": move, "accepted": applied.accepted}))
            events.append(SimpleNamespace(kind="move", player=player, payload=logged))
        lines += _effects(state, after)
        state = after
        states.append(state)
    return lines, events, states


def test_the_golden_match_matches_its_transcript() -> None:
    lines, _, _ = golden_match()
    got = "\n".join(lines) + "\n"
    if os.environ.get("REGENERATE"):
        GOLDEN.write_text(got)
    assert got == GOLDEN.read_text()


def test_the_golden_match_covers_the_rules() -> None:
    """The scripted match goes through the cases the transcript is there to pin down."""
    text = GOLDEN.read_text()
    for seen in (
        "(deadline: the DMO keeps it)",
        "(clash)",
        "(agreed)",
        "(random)",
        "penalty",
        "missed the turn",
        "missed the extension too",
        "ends (missed",
        "ends (call",
        ", k = ",
        "red opens",
        "zero opens",
    ):
        assert seen in text, seen
    assert re.search(r"missed the extension too\n  open: r\d-bet", text), "an opener who missed twice"
    assert "after 8 rounds" in text


def test_the_event_log_replays_the_match() -> None:
    _, events, states = golden_match()
    seats = [SimpleNamespace(player=SimpleNamespace(key=p)) for p in PLAYERS]
    row = SimpleNamespace(seed=GOLDEN_SEED, options={"names": dict(NAMES)}, seats=seats)
    begin = SimpleNamespace(kind="start", player=None, payload={"options": {"names": dict(NAMES)}})
    assert replay(G, row, [begin, *events]) == states[-1]
    for k in (0, 1, len(events) // 3, len(events) // 2, len(events) - 1):
        assert replay(G, row, [begin, *events[:k]]) == states[k]
    assert json.loads(json.dumps(states[-1])) == states[-1]


# --------------------------------------------------------------------------- ruling 21: a forfeit


def test_ruling_21_a_forfeit_in_the_betting_ends_the_match_with_the_chips_as_they_stand() -> None:
    """Round 2's betting: red opened with 2 chips, zero raised to 3; red is to act when zero
    forfeits. No stake leaves anybody's holdings (they leave only when betting ends), no
    payout: red wins."""
    state = ok(ok(to_betting("me"), ZERO, bet("raise", Uno=1)), RED, bet("call", Uno=1))
    state = place(state, everyone_in("Dos"))
    state = ok(ok(state, RED, bet("bet", Dos=2)), ZERO, bet("raise", Uno=3))
    assert state["round"] == 2 and G.step(state).players == (RED,)  # type: ignore[union-attr]
    before = json.dumps(state, sort_keys=True)
    over = G.forfeit(state, ZERO)
    assert json.dumps(state, sort_keys=True) == before, "forfeit changed the state it was given"
    assert chips(over) == chips(state) and over["transfers"] == state["transfers"]
    assert over["history"] == state["history"] and over["phase"] == "over"
    record = over["forfeit"]
    assert (record["player"], record["round"], record["phase"]) == (ZERO, 2, "bet")
    assert record["betting"]["placements"] == {RED: {"Dos": 2}, ZERO: {"Uno": 3}}
    assert record["positions"] == everyone_in("Dos") and len(record["placements"]) == 5
    assert over["betting"] is None and over["placements"] == [] and set(over["positions"].values()) == {None}
    result = G.result(over)
    assert result.outcome == {RED: "win", ZERO: "loss"} and result.victory_points == {RED: 1.0, ZERO: 0.0}
    assert result.reason == "Red Rover wins: Zero Cool forfeited the match in round 2."
    assert result.ranking == [RED, ZERO]  # the two DM players only
    assert result.scores == {"chips": dict(over["chips"]), "rounds": 1}
    assert G.step(over) is None and G.awaiting(over) == () and G.audience(over) == (RED, ZERO)
    assert G.forfeit(state, ZERO) == over  # deterministic


def test_ruling_21_a_forfeit_drops_an_unrevealed_send_and_the_views_say_it() -> None:
    state = ok(marker(start(), "me"), RED, send(PARTS[0], "Uno"))  # red's send, secret until the step closes
    over = G.forfeit(state, RED)
    assert over["send"] is None and over["forfeit"]["placements"] == []
    assert "Uno" not in json.dumps(over["forfeit"])
    for viewer in (None, RED, ZERO):
        assert G.view(over, viewer)["forfeit"]["player"] == RED
    assert "forfeit" not in G.view(state, None)
    result = G.result(over)
    assert result.outcome == {ZERO: "win", RED: "loss"} and result.ranking == [ZERO, RED]
    assert chips(over) == (4, 4)


def test_ruling_21_the_dmo_forfeits_before_round_1() -> None:
    over = G.forfeit(start(), ZERO)
    assert over["forfeit"]["phase"] == "marker"
    assert G.result(over).reason == "Red Rover wins: Zero Cool forfeited the match before round 1."  # type: ignore[union-attr]


def test_ruling_21_a_participant_a_stranger_or_a_match_over_cannot_forfeit() -> None:
    state = start()
    with pytest.raises(GameError, match="participant"):
        G.forfeit(state, PARTS[3])
    with pytest.raises(GameError, match="not playing"):
        G.forfeit(state, "nobody")
    over = G.forfeit(state, RED)
    with pytest.raises(GameError, match="over"):
        G.forfeit(over, ZERO)
