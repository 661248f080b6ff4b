"""Indian Poker: one test (or parametrized case) per rule and ruling.

Rule numbers are the paragraphs of ``seeds/indian-poker.txt``; "ruling N" are the
rulings of ``docs/games/indian-poker.md``. The helpers at the top are shared with the
property, template and golden-transcript tests.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from referee.games.base import MATCH_CHIPS, SEQUENTIAL, GameError, Move, ParseError, State
from referee.games.indian_poker import (
    DECK,
    GAME,
    POT,
    STARTING_CHIPS,
    _Hand,
    ante_for,
    first_to_act,
    hand_ante,
    is_out,
    shuffled_deck,
    showdown_winner,
    ten_fold_penalty,
)

G = GAME
A, B = "alice", "bob"
SEED = 11
TOTAL = 2 * STARTING_CHIPS

CALL: Move = {"action": "call"}
CHECK: Move = {"action": "check"}
FOLD: Move = {"action": "fold"}
ALL_IN: Move = {"action": "all-in"}


def raise_by(n: int) -> Move:
    return {"action": "raise", "by": n}


def raise_to(n: int) -> Move:
    return {"action": "raise", "to": n}


def start(dmo: str | None = None, seed: int = SEED) -> State:
    return G.initial_state(seed, [A, B], {} if dmo is None else {"dmo": dmo})


def filler(hand_no: int) -> dict[str, Any]:
    """A finished hand before a test position: alice's CALL, and her 2 beat bob's 1 (of an
    older deck)."""
    ante = ante_for(hand_no)
    call = {
        "seat": A,
        "command": "CALL",
        "action": "call",
        "put": 0,
        "returned": 0,
        "total": ante,
        "all_in": False,
        "timeout": False,
    }
    return {
        "hand": hand_no,
        "deck": 0,
        "ante": ante,
        "antes": {A: ante, B: ante},
        "first": A,
        "cards": {A: 2, B: 1},
        "actions": [call],
        "bets": {A: ante, B: ante},
        "end": "call",
        "folder": None,
        "tie": False,
        "winner": A,
        "loser": B,
        "carried_in": 0,
        "pot": 2 * ante,
        "carried_out": 0,
        "penalty": None,
        "stacks": {A: STARTING_CHIPS, B: STARTING_CHIPS},
    }


def setup(
    deal: list[tuple[int, int]],
    stacks: dict[str, int] | None = None,
    dmo: str = A,
    carried: int = 0,
    hands_before: int = 0,
    previous: dict[str, Any] | None = None,
) -> State:
    """A position at the start of hand ``hands_before + 1``: the given stacks (before the
    ante) and carried pot, the cards dealt from ``deal`` ((alice's, bob's) per hand; then
    the seeded shuffles), ``previous`` changing the last finished hand. The new hand is
    opened, and played out while nobody has a decision, exactly as in a match."""
    state = start(dmo)
    history = [filler(i) for i in range(1, hands_before + 1)]
    if previous:
        history[-1].update(previous)
    state.update(
        hand=0,
        stacks=dict(stacks or {A: STARTING_CHIPS, B: STARTING_CHIPS}),
        carried=carried,
        deck={"number": 1, "cards": [card for pair in deal for card in pair]},
        cards=None,
        betting=None,
        history=history,
        transfers=[],
        result=None,
    )
    hand = _Hand(state)
    hand.start()
    hand.run()
    return state


def submit(state: State, player: str, move: Move | str) -> State:
    """Apply a move (or the first move of a mail text) that must be accepted."""
    if isinstance(move, str):
        move = G.parse(state, player, move).moves[0]
    applied = G.apply_move(state, player, move)
    assert applied.accepted, applied.reason
    assert applied.changed
    return applied.state


def rejected(state: State, player: str, move: Move | str) -> str:
    if isinstance(move, str):
        move = G.parse(state, player, move).moves[0]
    applied = G.apply_move(state, player, move)
    assert not applied.accepted
    assert applied.changed is False
    assert applied.state == state
    assert applied.reason
    return applied.reason


def to_act(state: State) -> str:
    step = G.step(state)
    assert step is not None
    return step.players[0]


def timeouts(state: State, n: int) -> State:
    for _ in range(n):
        state = G.apply_timeout(state)
    return state


def hand(state: State, hand_no: int) -> dict[str, Any]:
    record: dict[str, Any] = next(h for h in state["history"] if h["hand"] == hand_no)
    return record


def pot_now(state: State) -> int:
    return 0 if state["betting"] is None else int(state["carried"] + sum(state["betting"]["bets"].values()))


def assert_conserved(state: State) -> None:
    """Stacks plus pot hold 50 chips; the transfers (match chips only, between the players
    and the pot) account for every stack and for the pot."""
    assert sum(state["stacks"].values()) + pot_now(state) == TOTAL
    if state["result"] is None:
        assert pot_now(state) == state["carried"] + sum(state["betting"]["bets"].values())
    balance = Counter({A: STARTING_CHIPS, B: STARTING_CHIPS, POT: 0})
    for t in state["transfers"]:
        assert t["currency"] == MATCH_CHIPS
        assert t["amount"] > 0 and {t["from"], t["to"]} <= {A, B, POT}
        balance[t["from"]] -= t["amount"]
        balance[t["to"]] += t["amount"]
    assert balance[A] == state["stacks"][A] and balance[B] == state["stacks"][B]
    assert balance[POT] == pot_now(state)


# --------------------------------------------------------------------------- pure rules


@pytest.mark.parametrize(
    ("hand_no", "ante"),
    [(1, 1), (10, 1), (11, 2), (20, 2), (21, 3), (30, 3), (31, 4), (101, 11)],
)
def test_rule_10_ante_rises_every_10_hands(hand_no: int, ante: int) -> None:
    assert ante_for(hand_no) == ante


@pytest.mark.parametrize(
    ("hand_no", "previous", "ante"),
    [(1, None, 1), (2, {"tie": False}, 1), (2, {"tie": True}, 0), (11, {"tie": True}, 0), (12, {"tie": False}, 2)],
    ids=["hand-1", "after-a-decided-hand", "after-a-tie", "after-a-tie-at-a-step", "after-the-hand-without-ante"],
)
def test_rule_6_no_ante_after_a_tie(hand_no: int, previous: dict[str, Any] | None, ante: int) -> None:
    assert hand_ante(hand_no, previous) == ante


@pytest.mark.parametrize(
    ("previous", "first"),
    [
        (None, B),
        ({"tie": False, "first": A, "loser": A}, A),
        ({"tie": False, "first": A, "loser": B}, B),
        ({"tie": True, "first": A, "loser": None}, A),
        ({"tie": True, "first": B, "loser": None}, B),
    ],
    ids=["hand-1-the-dmo", "loser-who-was-first", "loser-who-was-second", "tie-same-first", "tie-same-first-bob"],
)
def test_rule_7_first_to_act(previous: dict[str, Any] | None, first: str) -> None:
    assert first_to_act(B, previous) == first


@pytest.mark.parametrize(
    ("cards", "winner"), [({A: 9, B: 3}, A), ({A: 1, B: 10}, B), ({A: 6, B: 6}, None), ({A: 10, B: 10}, None)]
)
def test_rule_5_higher_card_wins_equal_cards_tie(cards: dict[str, int], winner: str | None) -> None:
    assert showdown_winner(cards) == winner


@pytest.mark.parametrize(("card", "stack", "paid"), [(10, 24, 10), (10, 10, 10), (10, 4, 4), (10, 0, 0), (9, 24, 0)])
def test_rule_9_folding_a_10_pays_10_or_all_the_folder_holds(card: int, stack: int, paid: int) -> None:
    assert ten_fold_penalty(card, stack) == paid


@pytest.mark.parametrize(("stack", "carried", "out"), [(0, 0, True), (0, 4, False), (1, 0, False), (3, 2, False)])
def test_rule_11_out_only_without_chips_and_without_a_carried_pot(stack: int, carried: int, out: bool) -> None:
    assert is_out(stack, carried) is out


def test_rule_2_the_deck_is_1_to_10_twice() -> None:
    assert Counter(DECK) == Counter({v: 2 for v in range(1, 11)})
    assert sorted(shuffled_deck(SEED, 1)) == list(DECK)
    assert shuffled_deck(SEED, 1) == shuffled_deck(SEED, 1) != shuffled_deck(SEED, 2)


# --------------------------------------------------------------------------- setup and deal


def test_rule_2_25_chips_each_and_the_first_ante() -> None:
    state = start()
    assert state["stacks"] == {A: 24, B: 24}
    assert pot_now(state) == 2
    assert [(t["from"], t["to"], t["amount"], t["reason"]) for t in state["transfers"]] == [
        (A, POT, 1, "ante"),
        (B, POT, 1, "ante"),
    ]
    assert_conserved(state)


def test_rule_2_cards_come_from_the_seeded_shuffles_without_replacement_and_are_reshuffled() -> None:
    state = timeouts(start(), 25)  # every hand: CALL on equal antes, a showdown
    dealt = [(h["deck"], h["cards"][A], h["cards"][B]) for h in state["history"]]
    assert len(dealt) >= 20
    for number in (1, 2):
        hands = [d for d in dealt if d[0] == number]
        assert len(hands) == 10, "20 cards, 2 per hand: a new shuffle every 10 hands"
        assert [c for _, a, b in hands for c in (a, b)] == shuffled_deck(SEED, number)
    assert state["deck"]["number"] == 3


def test_rule_4_each_player_sees_the_opponents_card_only() -> None:
    state = start()
    for player, other in ((A, B), (B, A)):
        view = G.view(state, player)
        assert view["opponent_card"] == state["cards"][other]
        assert "cards" not in view and state["cards"][player] is not None
    public = G.view(state, None)
    assert public["opponent_card"] is None and public["unseen"] is None


def test_ruling_the_unseen_cards_do_not_name_your_own() -> None:
    state = timeouts(start(), 3)
    view = G.view(state, A)
    seen = Counter(c for h in state["history"] for c in h["cards"].values()) + Counter([state["cards"][B]])
    assert Counter(view["unseen"]) == Counter(DECK) - seen
    assert state["cards"][A] in view["unseen"]
    assert view["deck"] == {"number": 1, "left": 20 - 2 * 4}


# --------------------------------------------------------------------------- antes


def alternating(n: int) -> list[tuple[int, int]]:
    """n hands won in turn by bob and alice (no ties): the first to act loses the showdown."""
    return [(1, 2) if i % 2 == 0 else (2, 1) for i in range(n)]


def test_rule_10_ante_rises_in_play_after_10_hands() -> None:
    state = timeouts(setup(alternating(12)), 11)
    assert [h["ante"] for h in state["history"]] == [1] * 10 + [2]
    assert state["betting"]["ante"] == 2 and state["hand"] == 12
    assert_conserved(state)


@pytest.mark.parametrize(
    ("tie_at", "antes"),
    [
        (9, [1] * 9 + [0, 2, 2]),
        (10, [1] * 10 + [0, 2]),
        (11, [1] * 10 + [2, 0]),
    ],
    ids=["tie-in-hand-9", "tie-in-hand-10", "tie-in-hand-11"],
)
def test_ruling_hands_without_ante_count_toward_the_10_hand_steps(tie_at: int, antes: list[int]) -> None:
    deal = alternating(12)
    deal[tie_at - 1] = (5, 5)
    state = timeouts(setup(deal), 11)
    assert [h["ante"] for h in state["history"]] + [state["betting"]["ante"]] == antes


def test_rule_6_a_tie_carries_the_pot_and_the_next_winner_takes_every_carried_pot() -> None:
    state = setup([(5, 5), (4, 4), (9, 1), (1, 2)])
    state = timeouts(state, 3)  # three showdowns: tie, tie, alice wins
    first, second, third = state["history"]
    assert (first["tie"], first["pot"], first["carried_out"]) == (True, 2, 2)
    assert (second["ante"], second["tie"], second["carried_in"], second["pot"]) == (0, True, 2, 2)
    assert (third["ante"], third["winner"], third["carried_in"], third["pot"]) == (0, A, 2, 2)
    assert third["stacks"] == {A: 26, B: 24}
    assert state["carried"] == 0 and state["betting"]["ante"] == 1


def test_rule_6_the_carried_pot_grows_with_the_betting_of_the_tied_hand() -> None:
    state = setup([(5, 5), (9, 1)])
    state = submit(state, A, raise_by(4))
    state = submit(state, B, CALL)  # tie: 2 + 4 + 4 = 10 carried
    assert state["carried"] == 10 and state["stacks"] == {A: 20, B: 20}
    assert G.view(state, A)["pot"] == 10
    state = submit(state, A, CALL)  # no ante; alice wins the carried 10
    assert hand(state, 2)["pot"] == 10 and state["stacks"] == {A: 29, B: 19}
    assert_conserved(state)


# --------------------------------------------------------------------------- first to act


def test_rule_7_hand_1_the_dmo_acts_first() -> None:
    assert to_act(start()) == A  # ruling 1: without the option, the first player
    assert to_act(start(dmo=B)) == B
    with pytest.raises(GameError, match="DMO"):
        start(dmo="carol")


@pytest.mark.parametrize(
    ("deal", "moves", "first_of_hand_2"),
    [
        ([(9, 1), (1, 1)], [(A, CALL)], B),  # bob lost the showdown
        ([(1, 9), (1, 1)], [(A, CALL)], A),  # alice lost the showdown
        ([(9, 1), (1, 1)], [(A, FOLD)], A),  # alice folded
        ([(9, 1), (1, 1)], [(A, raise_by(2)), (B, FOLD)], B),  # bob folded
        ([(5, 5), (1, 1)], [(A, CALL)], A),  # tie: the same first player
    ],
    ids=["showdown-loser-second", "showdown-loser-first", "folder-first", "folder-second", "tie"],
)
def test_rule_7_the_previous_loser_acts_first(
    deal: list[tuple[int, int]], moves: list[tuple[str, Move]], first_of_hand_2: str
) -> None:
    state = setup(deal)
    for player, move in moves:
        state = submit(state, player, move)
    assert state["hand"] == 2 and to_act(state) == first_of_hand_2


def test_rule_7_after_a_tie_the_same_player_even_when_second_acted_last() -> None:
    state = setup([(5, 5), (1, 1)], dmo=B)
    state = submit(state, B, raise_by(1))
    state = submit(state, A, CALL)
    assert hand(state, 1)["tie"] and to_act(state) == B


# --------------------------------------------------------------------------- betting


def test_ruling_call_by_the_first_player_on_equal_antes_is_the_showdown() -> None:
    state = submit(setup([(3, 8)]), A, CALL)
    record = hand(state, 1)
    assert (record["end"], record["winner"], record["pot"]) == ("call", B, 2)
    assert state["stacks"] == {A: 23, B: 25}


def test_ruling_check_is_call_when_there_is_nothing_to_call() -> None:
    state = submit(setup([(3, 8)]), A, "CHECK")
    assert hand(state, 1)["actions"][0]["command"] == "CHECK" and hand(state, 1)["end"] == "call"


def test_rule_5_raises_until_a_call() -> None:
    state = setup([(8, 3)])
    state = submit(state, A, "raise 2")
    state = submit(state, B, "RAISE TO 6")
    state = submit(state, A, "raise 1")
    assert state["betting"]["bets"] == {A: 7, B: 6} and to_act(state) == B
    state = submit(state, B, "call")
    record = hand(state, 1)
    assert [a["command"] for a in record["actions"]] == ["RAISE 2", "RAISE TO 6", "RAISE 1", "CALL"]
    assert (record["winner"], record["pot"]) == (A, 14)
    assert record["stacks"] == {A: 32, B: 18}
    assert_conserved(state)


def test_rule_5_fold_gives_the_opponent_the_pot() -> None:
    state = setup([(8, 3)])
    state = submit(state, A, raise_by(3))
    state = submit(state, B, FOLD)
    record = hand(state, 1)
    assert (record["end"], record["folder"], record["winner"], record["pot"], record["penalty"]) == (
        "fold",
        B,
        A,
        5,
        None,
    )
    assert record["stacks"] == {A: 26, B: 24}
    assert state["stacks"] == {A: 25, B: 23}  # after hand 2's antes


def test_ruling_the_raise_is_capped_at_what_the_opponent_can_call() -> None:
    state = setup([(8, 3)], stacks={A: 40, B: 10})  # after the ante: 39 and 9 behind
    reason = rejected(state, A, raise_by(10))
    assert "too much" in reason and "RAISE 1 to RAISE 9" in reason
    assert "too much" in rejected(state, A, raise_to(11))
    state = submit(state, A, ALL_IN)
    assert state["betting"]["bets"] == {A: 10, B: 1}  # ALL IN = RAISE TO 10: all bob can call
    assert "cannot raise" in rejected(state, B, raise_by(1))
    state = submit(state, B, CALL)
    assert hand(state, 1)["pot"] == 20


@pytest.mark.parametrize(
    ("move", "words"),
    [
        (raise_by(0), ["at least 1", "Your choices now: CALL or CHECK"]),
        (raise_by(25), ["too much", "RAISE 1 to RAISE 24"]),
        (raise_to(1), ["not a raise", "more than your opponent's 1"]),
        ({"action": "raise", "by": 2.5}, ["whole number", "Your choices now"]),
        ({"action": "bet", "by": 2}, ["RAISE n, RAISE TO n, CALL"]),
    ],
    ids=["raise-0", "raise-above-the-stack", "raise-to-the-same", "not-a-whole-number", "unknown"],
)
def test_ruling_an_illegal_amount_is_rejected_stating_the_choices(move: Move, words: list[str]) -> None:
    reason = rejected(start(), A, move)
    for word in words:
        assert word in reason


def test_ruling_check_facing_a_raise_is_rejected() -> None:
    state = submit(start(), A, raise_by(2))
    reason = rejected(state, B, CHECK)
    assert "cannot CHECK" in reason and "CALL (2 chips, making 3 each)" in reason


@pytest.mark.parametrize(
    ("n", "wording"),
    [(1, "You cannot CHECK: there is 1 chip to call."), (2, "You cannot CHECK: there are 2 chips to call.")],
    ids=["1-chip", "2-chips"],
)
def test_ruling_check_facing_a_raise_says_how_many_chips_in_agreement(n: int, wording: str) -> None:
    state = submit(start(), A, raise_by(n))
    reason = rejected(state, B, "CHECK")
    assert reason.startswith(wording)
    assert f"CALL ({n} chip{'s' if n > 1 else ''}, making {1 + n} each)" in reason


@pytest.mark.parametrize(
    ("text", "quoted"),
    [("RAISE 1_0", "'1_0'"), ("raise to 2_000 chips", "'2_000'"), ("RAISE *1_0*", "'1_0'")],
    ids=["1_0", "2_000", "emphasised-1_0"],
)
def test_ruling_b11_a_number_with_an_underscore_is_an_error_quoting_it(text: str, quoted: str) -> None:
    with pytest.raises(ParseError) as error:
        G.parse(start(), A, text)
    assert error.value.reason.startswith(f"I could not read {quoted} as a whole number of chips")


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("*RAISE 3*", raise_by(3)),
        ("RAISE *3*", raise_by(3)),
        ("**Raise**: 3", raise_by(3)),
        ("__RAISE TO 4__", raise_to(4)),
        ("**CALL**", CALL),
        ("_FOLD_", FOLD),
        ("*all in*", ALL_IN),
    ],
)
def test_ruling_b11_emphasis_around_words_is_still_read(text: str, move: Move) -> None:
    assert G.parse(start(), A, text).moves == [move]


def test_ruling_a_move_by_the_wrong_player_is_rejected() -> None:
    reason = rejected(start(), B, CALL)
    assert "not your turn" in reason and "alice's to act" in reason
    assert "not playing" in rejected(start(), "carol", CALL)


def test_ruling_a_mail_answering_an_earlier_turn_is_rejected() -> None:
    state = setup([(1, 9), (3, 3)])  # alice loses hand 1 and acts first again in hand 2
    stale = "CALL\nTurn: Hand 1, action 1"
    state = submit(state, A, stale)
    assert G.step(state) is not None and G.step(state).key == "hand-2-1"  # type: ignore[union-attr]
    reason = rejected(state, A, stale)
    assert "earlier turn (hand 1 action 1)" in reason and "Hand 2, action 1" in reason
    assert "Your choices now:" in reason
    assert "earlier turn" in rejected(state, B, "FOLD\nTurn: Hand 1, action 1")
    submit(state, A, "CALL\nTurn: Hand 2, action 1")
    submit(state, A, "CALL")  # without a Turn line the move is for the open turn


def test_a_finished_match_accepts_nothing() -> None:
    state = setup([(1, 9)], stacks={A: 1, B: 49})
    assert G.result(state) is not None
    assert "over" in rejected(state, A, CALL)
    with pytest.raises(GameError):
        G.apply_timeout(state)


# --------------------------------------------------------------------------- all-in antes, carried pots


@pytest.mark.parametrize(
    ("stacks", "deal", "antes", "after"),
    [
        ({A: 3, B: 47}, [(9, 1), (1, 1)], {A: 3, B: 3}, {A: 6, B: 44}),  # exactly the ante
        ({A: 2, B: 48}, [(9, 1), (1, 1)], {A: 2, B: 2}, {A: 4, B: 46}),  # less: bob matches 2
        ({A: 47, B: 3}, [(1, 9), (1, 1)], {A: 3, B: 3}, {A: 44, B: 6}),  # either player
    ],
    ids=["exactly-the-ante", "less-than-the-ante", "the-second-player"],
)
def test_ruling_an_all_in_ante_goes_straight_to_the_showdown(
    stacks: dict[str, int], deal: list[tuple[int, int]], antes: dict[str, int], after: dict[str, int]
) -> None:
    state = setup(deal, stacks=stacks, hands_before=20)  # hand 21: ante 3
    record = hand(state, 21)
    assert (record["ante"], record["antes"], record["end"], record["actions"]) == (3, antes, "all-in", [])
    assert record["stacks"] == after
    assert state["hand"] == 22 and G.step(state).key == "hand-22-1"  # type: ignore[union-attr]


def test_ruling_losing_an_all_in_ante_ends_the_match() -> None:
    state = setup([(1, 9)], stacks={A: 2, B: 48}, hands_before=20)
    result = G.result(state)
    assert result is not None and result.outcome == {A: "loss", B: "win"}
    assert result.reason == "bob wins: alice has no chips left after hand 21."
    assert G.step(state) is None and G.awaiting(state) == ()


def test_ruling_0_chips_with_chips_in_a_carried_pot_is_not_out() -> None:
    # hand 21: alice's all-in ante of 2, a tie: 4 carried, alice holds 0 and is not out;
    # hand 22: no ante, straight to the showdown, which alice wins.
    state = setup([(5, 5), (9, 1), (2, 2)], stacks={A: 2, B: 48}, hands_before=20)
    tie, showdown = hand(state, 21), hand(state, 22)
    assert (tie["tie"], tie["stacks"], tie["carried_out"]) == (True, {A: 0, B: 46}, 4)
    assert (showdown["ante"], showdown["end"], showdown["winner"], showdown["pot"]) == (0, "all-in", A, 4)
    assert G.result(state) is None and state["hand"] == 23
    assert state["betting"]["antes"] == {A: 3, B: 3} and state["stacks"] == {A: 1, B: 43}


def test_ruling_0_chips_and_a_carried_pot_lost_is_out() -> None:
    state = setup([(5, 5), (1, 9)], stacks={A: 2, B: 48}, hands_before=20)
    assert G.result(state) is not None and G.result(state).outcome[A] == "loss"  # type: ignore[union-attr]
    assert hand(state, 22)["pot"] == 4


def test_ruling_a_tie_of_everything_carries_all_50_chips() -> None:
    state = setup([(8, 3)])
    state = submit(state, A, ALL_IN)
    state = submit(state, B, CALL)  # a showdown; alice wins 50
    assert G.result(state) is not None
    state = setup([(7, 7), (3, 3), (2, 9)])
    state = submit(state, A, ALL_IN)
    state = submit(state, B, CALL)
    assert [h["carried_out"] for h in state["history"]] == [50, 50, 0]
    assert G.result(state).outcome == {A: "loss", B: "win"}  # type: ignore[union-attr]


# --------------------------------------------------------------------------- fold penalty


@pytest.mark.parametrize(
    ("deal", "stacks", "moves", "penalty", "after"),
    [
        ([(10, 3)], None, [(A, FOLD)], {"from": A, "to": B, "owed": 10, "paid": 10}, {A: 14, B: 36}),
        ([(3, 10)], None, [(A, raise_by(2)), (B, FOLD)], {"from": B, "to": A, "owed": 10, "paid": 10}, {A: 36, B: 14}),
        ([(10, 3)], {A: 6, B: 44}, [(A, FOLD)], {"from": A, "to": B, "owed": 10, "paid": 5}, {A: 0, B: 50}),
        ([(9, 3)], None, [(A, FOLD)], None, {A: 24, B: 26}),
    ],
    ids=["folder-holds-a-10", "second-player-folds-a-10", "pays-all-the-folder-holds", "no-penalty-without-a-10"],
)
def test_rule_9_folding_a_10(
    deal: list[tuple[int, int]],
    stacks: dict[str, int] | None,
    moves: list[tuple[str, Move]],
    penalty: dict[str, Any] | None,
    after: dict[str, int],
) -> None:
    state = setup(deal + [(1, 2)], stacks=stacks)
    for player, move in moves:
        state = submit(state, player, move)
    record = hand(state, 1)
    assert record["penalty"] == penalty
    assert record["stacks"] == after
    if penalty:
        assert {
            "from": penalty["from"],
            "to": penalty["to"],
            "amount": penalty["paid"],
            "reason": "folded a 10",
            "step": "hand-1",
            "currency": MATCH_CHIPS,
        } in state["transfers"]


def test_rule_9_paying_all_you_hold_for_a_10_ends_the_match() -> None:
    state = submit(setup([(10, 3)], stacks={A: 6, B: 44}), A, FOLD)
    assert G.result(state) is not None and G.result(state).outcome == {A: "loss", B: "win"}  # type: ignore[union-attr]


# --------------------------------------------------------------------------- timeouts


def test_ruling_timeout_with_nothing_to_call_is_call_and_the_showdown() -> None:
    state = G.apply_timeout(setup([(10, 3), (1, 2)]))
    record = hand(state, 1)
    assert record["actions"][0]["timeout"] and record["actions"][0]["command"] == "CALL"
    assert (record["end"], record["winner"], record["penalty"]) == ("call", A, None)


def test_ruling_timeout_facing_a_raise_is_fold_and_the_10_penalty_still_applies() -> None:
    state = submit(setup([(3, 10), (1, 2)]), A, raise_by(2))
    state = G.apply_timeout(state)
    record = hand(state, 1)
    assert record["actions"][-1] == {
        "seat": B,
        "command": "FOLD",
        "action": "fold",
        "put": 0,
        "returned": 0,
        "total": 1,
        "all_in": False,
        "timeout": True,
    }
    assert record["penalty"] == {"from": B, "to": A, "owed": 10, "paid": 10}


def test_ruling_timeout_in_a_hand_without_ante_is_call() -> None:
    state = timeouts(setup([(4, 4), (9, 1)]), 2)
    assert hand(state, 2)["ante"] == 0 and hand(state, 2)["end"] == "call" and hand(state, 2)["winner"] == A


# --------------------------------------------------------------------------- reveal, end, steps


def test_rule_5_both_cards_are_revealed_after_every_hand() -> None:
    for moves in ([(A, CALL)], [(A, FOLD)], [(A, raise_by(1)), (B, FOLD)]):
        state = setup([(6, 2), (1, 2)])
        for player, move in moves:
            state = submit(state, player, move)
        for viewer in (A, B, None):
            assert G.view(state, viewer)["last_hand"]["cards"] == {A: 6, B: 2}
            assert G.view(state, viewer)["history"][0]["cards"] == {A: 6, B: 2}


def test_rule_11_the_match_ends_when_a_player_has_no_chips() -> None:
    state = setup([(8, 3)])
    state = submit(state, A, ALL_IN)
    state = submit(state, B, CALL)
    result = G.result(state)
    assert result is not None
    assert result.outcome == {A: "win", B: "loss"} and result.victory_points == {A: 1.0, B: 0.0}
    assert result.reason == "alice wins: bob has no chips left after hand 1."
    assert result.scores == {"stacks": {A: 50, B: 0}, "hands": 1}
    assert G.step(state) is None and G.form(state, A) == "" and G.view(state, A)["over"]
    assert G.view(state, A)["opponent_card"] is None


def test_steps_are_turns_with_a_key_per_hand_and_action() -> None:
    state = setup([(8, 3), (2, 2)])
    keys = []
    for player, move in ((A, raise_by(1)), (B, raise_by(1)), (A, CALL)):
        step = G.step(state)
        assert step is not None
        assert (step.kind, step.players, step.simultaneous) == ("turn", (player,), False)
        assert G.awaiting(state) == (player,)
        keys.append((step.key, step.title))
        state = submit(state, player, move)
    keys.append((G.step(state).key, G.step(state).title))  # type: ignore[union-attr]
    assert keys == [
        ("hand-1-1", "Hand 1, action 1"),
        ("hand-1-2", "Hand 1, action 2"),
        ("hand-1-3", "Hand 1, action 3"),
        ("hand-2-1", "Hand 2, action 1"),
    ]
    assert G.step_kinds == {"turn": 24.0}


def test_ruling_season_balances_change_nothing() -> None:
    state = start()
    assert G.with_balances(state, {A: 0, B: 1000}) == state
    with pytest.raises(GameError):
        G.with_balances(state, {A: -1, B: 3})


def test_transfers_are_match_chips_between_the_players_and_the_pot() -> None:
    state = setup([(8, 3), (5, 5)])
    state = submit(state, A, raise_by(3))
    state = submit(state, B, CALL)
    assert all(t["currency"] == MATCH_CHIPS for t in state["transfers"])
    assert [(t["from"], t["to"], t["amount"], t["reason"]) for t in state["transfers"]] == [
        (A, POT, 1, "ante"),
        (B, POT, 1, "ante"),
        (A, POT, 3, "RAISE 3"),
        (B, POT, 3, "CALL"),
        (POT, A, 8, "pot"),
        (A, POT, 1, "ante"),
        (B, POT, 1, "ante"),
    ]


def test_view_shows_what_the_player_may_know() -> None:
    state = submit(setup([(8, 3), (6, 2)]), A, raise_by(2))
    view = G.view(state, B)
    assert (view["opponent_card"], view["stacks"], view["pot"]) == (8, {A: 22, B: 24}, 4)
    assert view["ante"] == {"now": 1, "until_hand": 10, "next": 2}
    assert [a["command"] for a in view["hand_open"]["actions"]] == ["RAISE 2"]
    assert view["your_turn"] and view["hand_open"]["to_act"] == B and view["hand_open"]["to_call"] == 2
    assert view["legal"]["raise"] == {"min": 1, "max": 22, "to_min": 4, "to_max": 25}
    assert G.view(state, A)["legal"] is None and not G.view(state, A)["your_turn"]
    json.dumps(view)


def test_form_is_the_default_command_and_the_turn() -> None:
    state = start()
    # issue 20: one convention for every game's form, "Step: <title>"
    assert G.form(state, A) == "CHECK\nStep: Hand 1, action 1\n"
    assert G.form(state, B) == ""
    state = submit(state, A, raise_by(1))
    assert G.form(state, B) == "CALL\nStep: Hand 1, action 2\n"
    assert G.parse(state, B, G.form(state, B)).moves == [{"action": "call", "turn": "hand 1 action 2"}]
    # a reply to a mail sent before the change keeps its "Turn:" line: read the same way
    assert G.parse(state, B, "CALL\nTurn: Hand 1, action 2\n").moves == [{"action": "call", "turn": "hand 1 action 2"}]
    old = G.parse(state, B, "CALL\nTurn: Hand 1, action 1\n").moves[0]
    assert "'Step: Hand 1, action 2'" in G.apply_move(state, B, old).reason


def test_standings_for_organizers() -> None:
    state = submit(setup([(8, 3), (6, 6), (1, 2)]), A, CALL)
    state = submit(state, B, raise_by(1))
    state = submit(state, A, CALL)  # a tie: 4 carried
    assert G.standings(state) == [
        "alice: 24 chips, 0 bet in hand 3; hands won 1, lost 0; 4 chips carried over from a tie",
        "bob: 22 chips, 0 bet in hand 3 (to act); hands won 0, lost 1; 4 chips carried over from a tie",
    ]


def scribble(value: Any) -> None:
    """Change every dict and list reachable from ``value``."""
    if isinstance(value, dict):
        for v in list(value.values()):
            scribble(v)
        value["scribbled"] = True
    elif isinstance(value, list):
        for v in value:
            scribble(v)
        value.append("scribbled")


def test_views_and_new_states_share_nothing_with_the_state() -> None:
    state = submit(submit(setup([(8, 3), (5, 5), (1, 2)]), A, raise_by(1)), B, CALL)
    state = submit(state, B, raise_by(2))
    before = json.dumps(state, sort_keys=True)
    for player in (A, B, None):
        scribble(G.view(state, player))
    scribble(G.apply_move(state, A, CALL).state)
    scribble(G.apply_timeout(state))
    scribble(G.with_balances(state, {A: 1, B: 1}))
    assert json.dumps(state, sort_keys=True) == before


# --------------------------------------------------------------------------- the ranking (ruling 24)


def test_ruling_24_the_winner_ranks_first_and_the_loser_last() -> None:
    assert G.game_type.ranked is True
    showdown = submit(submit(setup([(8, 3)]), A, ALL_IN), B, CALL)
    all_in_ante = setup([(1, 9)], stacks={A: 2, B: 48}, hands_before=20)
    folded_a_10 = submit(setup([(10, 3)], stacks={A: 6, B: 44}), A, FOLD)
    for state, winner, loser in ((showdown, A, B), (all_in_ante, B, A), (folded_a_10, B, A)):
        result = G.result(state)
        assert result is not None and result.outcome == {winner: "win", loser: "loss"}
        assert result.ranking == [winner, loser]
        assert G.result(json.loads(json.dumps(state))).ranking == [winner, loser]  # type: ignore[union-attr]


# --------------------------------------------------------------------------- for tests and bots


def test_game_type_declares_a_sequential_duel_of_match_chips() -> None:
    gt = G.game_type
    assert (gt.dynamics, gt.roles, gt.currencies, gt.chance) == (SEQUENTIAL, ("player", "player"), (MATCH_CHIPS,), True)
    assert gt.step_kinds == G.step_kinds == {"turn": 24.0}
    assert set(gt.options) == {"dmo"}


def test_sample_moves_are_legal_moves_of_the_player_to_act_of_every_kind() -> None:
    state = submit(setup([(8, 3), (6, 2)]), A, raise_by(2))
    kinds = set()
    for i in range(20):
        moves = G.sample_moves(state, B, random.Random(i))
        assert G.sample_moves(state, A, random.Random(i)) == []
        for move in moves:
            assert G.apply_move(state, B, move).accepted, move
            kinds.add((move["action"], "by" in move, "to" in move, "turn" in move))
    assert {k[:3] for k in kinds} == {
        ("call", False, False),
        ("fold", False, False),
        ("all-in", False, False),
        ("raise", True, False),
        ("raise", False, True),
    }
    assert {k[3] for k in kinds} == {True, False}  # with and without the form's Turn line
    nothing_to_call = [m["action"] for m in G.sample_moves(start(), A, random.Random(0))]
    assert "check" in nothing_to_call and "call" in nothing_to_call
    over = setup([(1, 9)], stacks={A: 2, B: 48}, hands_before=20)
    assert G.result(over) is not None and G.sample_moves(over, A, random.Random(0)) == []


def test_hidden_variants_change_only_the_own_card_and_the_order_of_the_undealt_cards() -> None:
    state = submit(submit(start(seed=5), A, raise_by(1)), B, CALL)
    state = submit(state, to_act(state), CHECK)  # hand 3 is open: 4 cards of this deck are known
    assert state["hand"] == 3
    for player in (A, B):
        opponent = B if player == A else A
        unseen = G.view(state, player)["unseen"]
        own_values = set()
        for i in range(30):
            for variant in G.hidden_variants(state, player, random.Random(i)):
                assert variant != state
                assert variant["cards"][opponent] == state["cards"][opponent]
                # the deck keeps its composition: the own card swapped values with an undealt card
                assert sorted([variant["cards"][player], *variant["deck"]["cards"]]) == sorted(
                    [state["cards"][player], *state["deck"]["cards"]]
                )
                rest = {k: v for k, v in variant.items() if k not in ("cards", "deck")}
                assert rest == {k: v for k, v in state.items() if k not in ("cards", "deck")}
                assert variant["deck"]["number"] == state["deck"]["number"]
                assert variant["cards"][player] in unseen
                assert G.view(variant, player) == G.view(state, player)
                own_values.add(variant["cards"][player])
        assert own_values == set(unseen)  # every value the player cannot rule out comes up
    with pytest.raises(GameError):
        G.hidden_variants(state, "carol", random.Random(0))
    over = setup([(1, 9)], stacks={A: 2, B: 48}, hands_before=20)
    assert G.hidden_variants(over, A, random.Random(0)) == []


def test_hidden_variants_of_the_last_hand_of_a_deck() -> None:
    """In the 10th hand of a deck nothing is left undealt and the player has seen every
    other card: their own card is known, and there is nothing to vary."""
    state = start(seed=3)
    while len(state["deck"]["cards"]) > 0 or state["hand"] < 10:
        state = submit(state, to_act(state), CALL)
    assert G.view(state, A)["unseen"] == [state["cards"][A]]
    assert G.hidden_variants(state, A, random.Random(0)) == []


# --------------------------------------------------------------------------- ruling 25: a forfeit


def test_ruling_25_a_forfeit_is_a_fold_without_the_10_penalty_and_ends_the_match() -> None:
    """alice holds a 10 and has raised; bob is to act when alice forfeits: the hand ends as
    her fold, not on her turn; bob takes the pot (3 + 1 chips), no 10-chip penalty; the match
    is over, bob winning, the chips as they stand."""
    state = submit(setup([(10, 3)]), A, raise_by(2))
    assert to_act(state) == B
    before = json.dumps(state, sort_keys=True)
    over = G.forfeit(state, A)
    assert json.dumps(state, sort_keys=True) == before, "forfeit changed the state it was given"
    record = hand(over, 1)
    assert (record["end"], record["folder"], record["winner"], record["loser"]) == ("fold", A, B, A)
    assert record["penalty"] is None and record["forfeit"] == A and record["pot"] == 4
    assert record["actions"][-1] == {
        "seat": A,
        "command": "FORFEIT",
        "action": "fold",
        "put": 0,
        "returned": 0,
        "total": 3,
        "all_in": False,
        "forfeit": True,
        "timeout": False,
    }
    assert over["stacks"] == {A: 22, B: 28} and over["forfeit"] == {"player": A, "hand": 1}
    assert_conserved(over)
    result = G.result(over)
    assert result.outcome == {A: "loss", B: "win"} and result.victory_points == {A: 0.0, B: 1.0}
    assert result.reason == "bob wins: alice forfeited the match in hand 1."
    assert result.ranking == [B, A] and result.scores == {"stacks": {A: 22, B: 28}, "hands": 1}
    assert G.step(over) is None and G.awaiting(over) == ()
    assert G.forfeit(state, A) == over  # deterministic


def test_ruling_25_the_forfeiter_to_act_and_a_carried_pot_go_to_the_opponent() -> None:
    """A tie carried 4 chips; in hand 2 bob, to act, forfeits: alice takes the carried pot too."""
    state = submit(setup([(4, 4), (2, 9)]), A, CALL)
    assert state["carried"] == 2 and hand(state, 1)["tie"]
    assert to_act(state) == A  # after a tie the same player acts first
    state = submit(state, A, raise_by(1))
    over = G.forfeit(state, B)
    assert hand(over, 2)["pot"] == 3 and over["stacks"] == {A: 26, B: 24}
    assert_conserved(over)
    assert G.result(over).outcome == {A: "win", B: "loss"}


def test_ruling_25_the_views_show_the_forfeit_and_both_cards() -> None:
    state = setup([(7, 3)])
    over = G.forfeit(state, B)
    public = G.view(over, None)
    assert public["forfeit"] == {"player": B, "hand": 1} and public["over"]
    assert public["recent_hands"][-1]["cards"] == {A: 7, B: 3}
    assert public["last_action"]["command"] == "FORFEIT"
    assert "forfeit" not in G.view(state, None)
    assert G.hidden_variants(over, A, random.Random(1)) == []


def test_ruling_25_a_match_over_or_a_stranger_cannot_forfeit() -> None:
    state = start()
    with pytest.raises(GameError, match="not playing"):
        G.forfeit(state, "carol")
    over = G.forfeit(state, A)
    with pytest.raises(GameError, match="over"):
        G.forfeit(over, B)
