"""The shared betting module: every action, the caps, the all-in ante, the timeout
default, and the mail grammar of the commands (rulings B1.. of docs/games/indian-poker.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games.base import NoMoves, ParseError, plural
from referee.games.betting import (
    MAX_DIGITS,
    MAX_LINE_CHARS,
    IllegalAction,
    Reading,
    act,
    command_text,
    default_action,
    describe_legal,
    is_over,
    legal_actions,
    max_raise,
    open_round,
    pot,
    read_action,
    showdown,
    to_call,
    turn_reference,
)
from referee.games.lines import strip_emphasis
from referee.render import environment
from tests.games.mail_context import assert_counts_agree
from tests.timing import growth

A, B = "alice", "bob"


def rnd(a: int = 24, b: int = 24, ante: int = 1, first: str = A, carried: int = 0) -> dict[str, Any]:
    """A round opened from stacks a, b (before the antes)."""
    return open_round([A, B], {A: a + ante, B: b + ante}, ante, first, carried)


def raw(a_bet: int, b_bet: int, a_behind: int, b_behind: int, to_act: str = A) -> dict[str, Any]:
    """A round in the middle of betting, built by hand (e.g. unequal bets)."""
    return {
        "seats": [A, B],
        "stacks": {A: a_behind, B: b_behind},
        "bets": {A: a_bet, B: b_bet},
        "ante": 0,
        "antes": {A: 0, B: 0},
        "carried": 0,
        "first": to_act,
        "to_act": to_act,
        "actions": [],
        "end": None,
        "folder": None,
    }


def total_chips(r: dict[str, Any]) -> int:
    return sum(r["stacks"].values()) + sum(r["bets"].values())


# --------------------------------------------------------------------------- opening


OPENINGS = [
    # (id, stacks before antes, ante, posted antes, end)
    ("ante-1", {A: 25, B: 25}, 1, {A: 1, B: 1}, None),
    ("ante-3", {A: 25, B: 25}, 3, {A: 3, B: 3}, None),
    ("no-ante", {A: 25, B: 25}, 0, {A: 0, B: 0}, None),
    ("all-in-ante-exact", {A: 2, B: 48}, 2, {A: 2, B: 2}, "all-in"),
    ("all-in-ante-short-opponent-matches-only", {A: 2, B: 48}, 3, {A: 2, B: 2}, "all-in"),
    ("both-short-the-smaller-counts", {A: 1, B: 2}, 3, {A: 1, B: 1}, "all-in"),
    ("zero-chips-no-ante-straight-to-showdown", {A: 0, B: 30}, 0, {A: 0, B: 0}, "all-in"),
    ("zero-chips-with-ante", {A: 0, B: 30}, 1, {A: 0, B: 0}, "all-in"),
]


@pytest.mark.parametrize(("stacks", "ante", "posted", "end"), [c[1:] for c in OPENINGS], ids=[c[0] for c in OPENINGS])
def test_open_round_posts_the_antes(stacks: dict[str, int], ante: int, posted: dict[str, int], end: str | None) -> None:
    r = open_round([A, B], stacks, ante, A)
    assert r["antes"] == r["bets"] == posted
    assert r["stacks"] == {p: stacks[p] - posted[p] for p in (A, B)}
    assert r["end"] == end
    assert r["to_act"] == (None if end else A)
    assert showdown(r) == (end == "all-in")
    assert total_chips(r) == sum(stacks.values())


def test_open_round_rejects_bad_input() -> None:
    for args in (([A, A], {A: 1}, 1, A), ([A, B], {A: 1, B: 1}, 1, "carol"), ([A, B], {A: -1, B: 1}, 1, A)):
        with pytest.raises(Exception, match="seat|stack"):
            open_round(*args)  # type: ignore[arg-type]


def test_pot_includes_the_carried_chips() -> None:
    assert pot(rnd(carried=6)) == 8


# --------------------------------------------------------------------------- actions

# (id, round, action, put, returned, new totals, next to act, end)
ACTIONS = [
    ("raise-n-adds-to-the-opponents-total", rnd(), {"action": "raise", "by": 3}, 3, 0, {A: 4, B: 1}, B, None),
    ("raise-to-n", rnd(), {"action": "raise", "to": 8}, 7, 0, {A: 8, B: 1}, B, None),
    (
        "re-raise-pays-the-call-plus-the-raise",
        raw(1, 5, 24, 20),
        {"action": "raise", "by": 2},
        6,
        0,
        {A: 7, B: 5},
        B,
        None,
    ),
    ("raise-to-over-a-raise", raw(1, 5, 24, 20), {"action": "raise", "to": 9}, 8, 0, {A: 9, B: 5}, B, None),
    ("call-matches", raw(1, 5, 24, 20), {"action": "call"}, 4, 0, {A: 5, B: 5}, None, "call"),
    ("call-on-equal-bets-is-the-showdown", rnd(), {"action": "call"}, 0, 0, {A: 1, B: 1}, None, "call"),
    ("check-is-call-when-nothing-to-call", rnd(), {"action": "check"}, 0, 0, {A: 1, B: 1}, None, "call"),
    ("short-call-is-all-in-excess-returned", raw(1, 9, 3, 10), {"action": "call"}, 3, 5, {A: 4, B: 4}, None, "call"),
    ("fold", raw(1, 5, 24, 20), {"action": "fold"}, 0, 0, {A: 1, B: 5}, None, "fold"),
    ("fold-with-nothing-to-call-is-allowed", rnd(), {"action": "fold"}, 0, 0, {A: 1, B: 1}, None, "fold"),
    ("all-in-is-a-raise-to-the-whole-stack", rnd(), {"action": "all-in"}, 24, 0, {A: 25, B: 1}, B, None),
    ("all-in-capped-at-what-the-opponent-covers", rnd(a=40, b=8), {"action": "all-in"}, 8, 0, {A: 9, B: 1}, B, None),
    ("all-in-facing-an-all-in-is-a-call", raw(5, 25, 20, 0), {"action": "all-in"}, 20, 0, {A: 25, B: 25}, None, "call"),
    ("all-in-when-short-is-a-short-call", raw(1, 9, 3, 10), {"action": "all-in"}, 3, 5, {A: 4, B: 4}, None, "call"),
    ("raise-up-to-the-cap", rnd(a=40, b=8), {"action": "raise", "by": 8}, 8, 0, {A: 9, B: 1}, B, None),
    ("raise-all-my-chips", rnd(a=5, b=40), {"action": "raise", "to": 6}, 5, 0, {A: 6, B: 1}, B, None),
]


@pytest.mark.parametrize(
    ("r", "action", "put", "returned", "totals", "next_", "end"), [c[1:] for c in ACTIONS], ids=[c[0] for c in ACTIONS]
)
def test_each_action(
    r: dict[str, Any],
    action: dict[str, Any],
    put: int,
    returned: int,
    totals: dict[str, int],
    next_: str | None,
    end: str | None,
) -> None:
    before = json.dumps(r, sort_keys=True)
    new = act(r, A, action)
    assert json.dumps(r, sort_keys=True) == before, "act must not change its argument"
    entry = new["actions"][-1]
    assert (entry["put"], entry["returned"]) == (put, returned)
    assert new["bets"] == totals
    assert new["to_act"] == next_
    assert new["end"] == end
    assert is_over(new) == (end is not None)
    assert new["folder"] == (A if end == "fold" else None)
    assert entry["command"] == command_text(action)
    assert entry["all_in"] == (new["stacks"][A] == 0)
    assert total_chips(new) == total_chips(r)


# (id, round, action, words the reason must contain)
ILLEGAL = [
    ("raise-0", rnd(), {"action": "raise", "by": 0}, ["at least 1", "RAISE 1 to RAISE 24"]),
    ("raise-negative", rnd(), {"action": "raise", "by": -2}, ["at least 1"]),
    (
        "raise-to-not-above-the-opponent",
        raw(1, 5, 24, 20),
        {"action": "raise", "to": 5},
        ["more than your opponent's 5"],
    ),
    (
        "raise-above-what-the-opponent-can-call",
        rnd(a=40, b=8),
        {"action": "raise", "by": 9},
        ["too much", "can only call up to 9", "RAISE 1 to RAISE 8"],
    ),
    ("raise-above-my-chips", rnd(a=5, b=40), {"action": "raise", "by": 6}, ["too much", "you hold only 5 chips"]),
    ("raise-to-above-the-cap", rnd(a=40, b=8), {"action": "raise", "to": 10}, ["too much", "RAISE TO 9"]),
    (
        "raise-when-the-opponent-is-all-in",
        raw(5, 25, 20, 0),
        {"action": "raise", "by": 1},
        ["cannot raise", "no chips left", "ALL IN (= CALL"],
    ),
    ("raise-when-short", raw(1, 9, 3, 10), {"action": "raise", "by": 1}, ["cannot raise", "not hold more"]),
    ("check-facing-a-raise", raw(1, 5, 24, 20), {"action": "check"}, ["cannot CHECK", "4 chips to call", "FOLD"]),
    ("malformed", rnd(), {"action": "raise", "by": "3"}, ["whole number"]),
    ("unknown-action", rnd(), {"action": "bet"}, ["RAISE n, RAISE TO n"]),
]


@pytest.mark.parametrize(("r", "action", "words"), [c[1:] for c in ILLEGAL], ids=[c[0] for c in ILLEGAL])
def test_illegal_actions_say_why_and_what_is_legal(r: dict[str, Any], action: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(IllegalAction) as error:
        act(r, A, action)
    for word in words:
        assert word in error.value.reason


def test_only_the_seat_to_act_may_act() -> None:
    with pytest.raises(IllegalAction, match="alice's turn"):
        act(rnd(), B, {"action": "call"})
    done = act(rnd(), A, {"action": "call"})
    with pytest.raises(IllegalAction, match="over"):
        act(done, B, {"action": "call"})
    assert legal_actions(done, A) is None and legal_actions(rnd(), B) is None


CAPS = [
    # (id, round, to call, max raise)
    ("equal-stacks", rnd(), 0, 24),
    ("opponent-shorter", rnd(a=40, b=8), 0, 8),
    ("me-shorter", rnd(a=5, b=40), 0, 5),
    ("facing-a-raise", raw(1, 5, 24, 20), 4, 20),
    ("facing-a-raise-short-after-the-call", raw(1, 5, 6, 20), 4, 2),
    ("exactly-the-call", raw(1, 5, 4, 20), 4, 0),
    ("opponent-all-in", raw(5, 25, 20, 0), 20, 0),
]


@pytest.mark.parametrize(("r", "owed", "top"), [c[1:] for c in CAPS], ids=[c[0] for c in CAPS])
def test_raise_cap(r: dict[str, Any], owed: int, top: int) -> None:
    """Ruling: a raise may not exceed what the opponent can still call (their chips
    behind), nor what the raiser holds after calling."""
    assert to_call(r, A) == owed
    assert max_raise(r, A) == top
    legal = legal_actions(r, A)
    assert legal is not None
    if top:
        assert legal["raise"] == {"min": 1, "max": top, "to_min": r["bets"][B] + 1, "to_max": r["bets"][B] + top}
        act(r, A, {"action": "raise", "by": top})
        with pytest.raises(IllegalAction):
            act(r, A, {"action": "raise", "by": top + 1})
    else:
        assert legal["raise"] is None
        assert legal["all_in"]["action"] == "call"


def test_legal_actions_and_their_description() -> None:
    legal = legal_actions(rnd(), A)
    assert legal is not None
    assert legal["check"] and legal["to_call"] == 0
    assert legal["commands"] == ["CHECK", "RAISE 1", "RAISE TO 25", "ALL IN", "FOLD"]
    assert describe_legal(rnd(), A) == (
        "Your choices now: CALL or CHECK (nothing to call: the hand goes to the showdown), "
        "RAISE 1 to RAISE 24 (= RAISE TO 2 to RAISE TO 25), ALL IN (= RAISE TO 25) or FOLD."
    )
    assert describe_legal(raw(1, 5, 24, 20), A) == (
        "Your choices now: CALL (4 chips, making 5 each), RAISE 1 to RAISE 20 "
        "(= RAISE TO 6 to RAISE TO 25), ALL IN (= RAISE TO 25) or FOLD."
    )
    assert "CALL (all in: your last 3 chips, the excess goes back)" in describe_legal(raw(1, 9, 3, 10), A)
    assert "RAISE 1 (= RAISE TO 6)" in describe_legal(raw(1, 5, 5, 20), A)


@pytest.mark.parametrize("n", [1, 2, 3, 10])
def test_the_reject_texts_agree_with_their_counts(n: int) -> None:
    """Every reason and every statement of the choices says "1 chip" and "2 chips", "there
    is 1 chip to call" and "there are 2 chips to call", whatever the amounts."""
    facing = raw(1, 1 + n, 24, 20)  # n to call
    with pytest.raises(IllegalAction) as error:
        act(facing, A, {"action": "check"})
    verb, chips = ("is", "1 chip") if n == 1 else ("are", f"{n} chips")
    assert error.value.reason.startswith(f"You cannot CHECK: there {verb} {chips} to call.")
    assert f"CALL ({chips}, making {1 + n} each)" in error.value.reason
    rounds = [
        facing,
        raw(1, 1 + n, n, 20),  # a CALL puts in all n chips behind
        raw(1, 1 + n, n + 1, 20),  # n to call, 1 chip more behind
        raw(1, 1, n, 20),  # n chips behind, nothing to call
        raw(1, 1, 20, n),  # the opponent holds n chips behind
        raw(n, n, 0, 20),  # nothing behind
        rnd(a=n, b=n, ante=n),
    ]
    actions = [
        {"action": "check"},
        {"action": "raise", "by": 0},
        {"action": "raise", "by": n + 30},
        {"action": "raise", "to": 1},
        {"action": "raise", "to": n + 50},
        {"action": "raise", "by": 1},
    ]
    texts = []
    for r in rounds:
        if r["to_act"] is not None:
            texts.append(describe_legal(r, A))
        for action in actions:
            try:
                act(r, A, action)
            except IllegalAction as illegal:
                texts.append(illegal.reason)
    assert len(texts) > len(rounds)
    for text in texts:
        assert_counts_agree(text)


def test_a_count_and_its_noun_agree_in_code_and_in_the_templates() -> None:
    assert [plural(n, "chip") for n in (0, 1, 2)] == ["0 chips", "1 chip", "2 chips"]
    assert plural(1, "garnet") == "1 garnet" and plural(3, "box", "boxes") == "3 boxes"
    template = environment().from_string('{{ 1 | plural("card") }}, {{ 2 | plural("card") }}')
    assert template.render() == "1 card, 2 cards"
    assert_counts_agree("there is 1 chip to call; there are 2 chips to call")
    for wrong in ("there are 1 chip to call", "1 chips", "2 chip", "there is 2 chips"):
        with pytest.raises(AssertionError):
            assert_counts_agree(wrong)


@pytest.mark.parametrize(
    ("r", "default"),
    [(rnd(), {"action": "call"}), (raw(1, 5, 24, 20), {"action": "fold"}), (rnd(ante=0), {"action": "call"})],
    ids=["nothing-to-call-call", "facing-a-raise-fold", "no-ante-call"],
)
def test_timeout_default(r: dict[str, Any], default: dict[str, Any]) -> None:
    assert default_action(r) == default
    act(r, A, default)


def test_command_texts() -> None:
    texts = [
        command_text(a)
        for a in (
            {"action": "raise", "by": 3},
            {"action": "raise", "to": 8},
            {"action": "call"},
            {"action": "check"},
            {"action": "fold"},
            {"action": "all-in"},
        )
    ]
    assert texts == ["RAISE 3", "RAISE TO 8", "CALL", "CHECK", "FOLD", "ALL IN"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), a=st.integers(0, 60), b=st.integers(0, 60), ante=st.integers(0, 4))
def test_random_legal_betting_ends_and_conserves_chips(data: st.DataObject, a: int, b: int, ante: int) -> None:
    r = open_round([A, B], {A: a, B: b}, ante, data.draw(st.sampled_from([A, B])))
    steps = 0
    while not is_over(r):
        seat = r["to_act"]
        legal = legal_actions(r, seat)
        assert legal is not None
        choices: list[dict[str, Any]] = [{"action": "call"}, {"action": "fold"}, {"action": "all-in"}]
        if legal["raise"]:
            n = data.draw(st.integers(legal["raise"]["min"], legal["raise"]["max"]))
            choices += [{"action": "raise", "by": n}, {"action": "raise", "to": n + r["bets"][B if seat == A else A]}]
        if legal["check"]:
            choices.append({"action": "check"})
        r = act(r, seat, data.draw(st.sampled_from(choices)))
        steps += 1
        assert total_chips(r) == a + b
        assert min(r["stacks"].values()) >= 0
    assert steps <= a + b + 2
    if showdown(r):
        assert r["bets"][A] == r["bets"][B], "a showdown is always on equal bets"


# --------------------------------------------------------------------------- mail grammar

ACCEPTED: list[tuple[str, str, dict[str, Any], list[str]]] = [
    ("raise-n", "RAISE 3", {"action": "raise", "by": 3}, []),
    ("raise-lower", "raise 3", {"action": "raise", "by": 3}, []),
    ("raise-by", "Raise by 3", {"action": "raise", "by": 3}, []),
    ("raise-colon", "Raise: 3", {"action": "raise", "by": 3}, []),
    ("raise-chips", "raise 3 chips", {"action": "raise", "by": 3}, []),
    ("raise-glued-chips", "raise 3chips.", {"action": "raise", "by": 3}, []),
    ("raise-plus", "raise +3", {"action": "raise", "by": 3}, []),
    ("raise-zero-is-read-the-rules-judge-it", "raise 0", {"action": "raise", "by": 0}, []),
    ("raise-to", "RAISE TO 8", {"action": "raise", "to": 8}, []),
    ("raise-to-lower-chips", "raise to 8 chips!", {"action": "raise", "to": 8}, []),
    ("raise-with-prose", "RAISE 3 (I feel lucky)", {"action": "raise", "by": 3}, ["(I feel lucky)"]),
    ("call", "call", {"action": "call"}, []),
    ("call-upper-dot", "CALL.", {"action": "call"}, []),
    ("call-comma-prose", "Call, good luck!", {"action": "call"}, ["good luck!"]),
    ("call-dash-prose", "call - see you", {"action": "call"}, ["see you"]),
    ("check", "Check", {"action": "check"}, []),
    ("fold", "FOLD", {"action": "fold"}, []),
    ("all-in-words", "ALL IN", {"action": "all-in"}, []),
    ("all-in-hyphen", "all-in", {"action": "all-in"}, []),
    ("all-in-bang", "All in!", {"action": "all-in"}, []),
    ("allin", "allin", {"action": "all-in"}, []),
    ("all_in-emphasis-dropped", "all_in", {"action": "all-in"}, []),
    ("bullet-and-bold", "- **CALL**", {"action": "call"}, []),
    ("emphasis-around-the-command", "*RAISE 3*", {"action": "raise", "by": 3}, []),
    ("emphasis-around-the-amount", "RAISE *3*", {"action": "raise", "by": 3}, []),
    ("bold-before-a-colon", "**Raise**: 3", {"action": "raise", "by": 3}, []),
    ("double-underscores", "__RAISE TO 8__", {"action": "raise", "to": 8}, []),
    ("underscore-emphasis", "_FOLD_", {"action": "fold"}, []),
    ("emphasis-in-parentheses", "RAISE 3 (*really*)", {"action": "raise", "by": 3}, ["(really)"]),
    ("unicode-bullet", "\u2022 fold", {"action": "fold"}, []),
    (
        "greeting-and-signature",
        "Hi Referee,\n\nRAISE 2\n\nCheers,\nBob",
        {"action": "raise", "by": 2},
        ["Hi Referee,", "Cheers,", "Bob"],
    ),
    ("prose-beginning-with-call", "Call me tomorrow\nfold", {"action": "fold"}, ["Call me tomorrow"]),
    ("prose-beginning-with-all-in", "All in all a good game\ncheck", {"action": "check"}, ["All in all a good game"]),
    ("quoted-lines-not-read", "fold\n> CALL\n> RAISE 3", {"action": "fold"}, ["> CALL", "> RAISE 3"]),
    ("crlf", "Hello\r\nCALL\r\n", {"action": "call"}, ["Hello"]),
]


@pytest.mark.parametrize(("text", "action", "ignored"), [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_commands_are_read_and_prose_listed(text: str, action: dict[str, Any], ignored: list[str]) -> None:
    reading = read_action(text)
    assert reading.action == action
    assert reading.ignored == ignored
    assert reading.extras == () and reading.turn is None


REJECTED: list[tuple[str, str, str, str | None]] = [
    ("two-commands-named", "RAISE 3\nCALL", "two commands, 'RAISE 3' and 'CALL'", "CALL"),
    ("the-same-command-twice", "call\ncall", "two commands, 'call' and 'call'", "call"),
    ("raise-without-amount", "RAISE", "RAISE needs an amount", "RAISE"),
    ("raise-to-without-amount", "raise to", "RAISE TO needs an amount", "raise to"),
    ("raise-words", "raise five", "'five' as a whole number", "raise five"),
    ("raise-decimal", "raise 2.5", "'2.5' as a whole number", "raise 2.5"),
    ("raise-two-amounts", "raise 3 4", "one amount", "raise 3 4"),
    ("raise-too-many-digits", "raise 12345678", f"more than {MAX_DIGITS} digits", "raise 12345678"),
    ("raise-unit-typo", "raise 3x", "'3x' as a whole number", "raise 3x"),
    ("raise-underscore-in-the-amount", "RAISE 1_0", "I could not read '1_0' as a whole number of chips", "RAISE 1_0"),
    ("raise-to-underscore-thousands", "raise to 2_000", "'2_000' as a whole number of chips", "raise to 2_000"),
    ("raise-emphasised-underscore-amount", "RAISE *1_0*", "'1_0' as a whole number of chips", "RAISE 1_0"),
    ("raise-underscore-and-unit", "RAISE 1_0 chips", "'1_0' as a whole number of chips", "RAISE 1_0 chips"),
    ("call-with-amount", "call 3", "CALL takes no amount", "call 3"),
    ("all-in-with-amount", "all in 25", "ALL IN takes no amount", "all in 25"),
    ("two-turn-lines", "Turn: hand 1, action 1\nTurn: hand 2, action 1\ncall", "two turns", "Turn: hand 2, action 1"),
]


@pytest.mark.parametrize(("text", "reason", "line"), [c[1:] for c in REJECTED], ids=[c[0] for c in REJECTED])
def test_mistakes_are_errors_quoting_the_line(text: str, reason: str, line: str | None) -> None:
    with pytest.raises(ParseError) as error:
        read_action(text)
    assert not isinstance(error.value, NoMoves)
    assert reason in error.value.reason
    assert error.value.line == line


EMPHASIS = [
    ("**CALL**", "CALL"),
    ("_FOLD_", "FOLD"),
    ("*RAISE 3*", "RAISE 3"),
    ("RAISE *3*", "RAISE 3"),
    ("__BET 2__", "BET 2"),
    ("**Raise**: 3", "Raise: 3"),
    ("*Gold:* 20", "Gold: 20"),
    ("(*3*), _x_.", "(3), x."),
    ("RAISE 1_0", "RAISE 1_0"),
    ("2_000 *1*2* a__b", "2_000 1*2 a__b"),
    ("all_in snake_case", "all_in snake_case"),
    ("* CALL", " CALL"),
    ("***", ""),
]


@pytest.mark.parametrize(("written", "read"), EMPHASIS, ids=[w for w, _ in EMPHASIS])
def test_strip_emphasis_drops_the_marks_around_words_only(written: str, read: str) -> None:
    assert strip_emphasis(written) == read


@pytest.mark.parametrize("text", ["", "Hello\nthanks", "Call me tomorrow", "Turn: hand 1, action 1", "> CALL"])
def test_no_command_is_no_moves(text: str) -> None:
    with pytest.raises(NoMoves):
        read_action(text)


def test_extra_commands_and_the_turn_line() -> None:
    reading = read_action("REWIND\nraise 2\nTurn: Hand 3, action 2", extra_commands=("rewind",))
    assert reading == Reading({"action": "raise", "by": 2}, "raise 2", ("rewind",), "hand 3 action 2", [])
    assert read_action("rewind", extra_commands=("rewind",)).action is None
    with pytest.raises(ParseError, match="twice"):
        read_action("rewind\nrewind\ncall", extra_commands=("rewind",))
    assert read_action("Turn the page\ncall").turn is None
    assert turn_reference("Hand 3, action 2") == turn_reference("  hand 3 -- ACTION 2.") == "hand 3 action 2"


def test_a_long_line_is_never_a_command() -> None:
    long = "call " + "x" * MAX_LINE_CHARS
    with pytest.raises(NoMoves):
        read_action(long)
    assert read_action(long + "\nfold").ignored[0].endswith("...")


@given(st.text(max_size=400))
@settings(max_examples=300, deadline=None)
def test_any_text_gives_a_reading_or_a_parse_error(text: str) -> None:
    try:
        read_action(text, extra_commands=("rewind",))
    except ParseError:
        pass


WORDS = [
    "raise",
    "RAISE",
    "to",
    "by",
    "call",
    "check",
    "fold",
    "all",
    "in",
    "all-in",
    "3",
    "+7",
    "2.5",
    "chips",
    "Turn:",
    "hand",
    "-",
    ",",
    "(x)",
    "\n",
    "\n",
    ">",
    "**",
    "_",
    "1_0",
    "*3*",
    "rewind",
]


@given(st.lists(st.sampled_from(WORDS), max_size=40))
@settings(max_examples=400, deadline=None)
def test_any_command_like_text_gives_a_reading_or_a_parse_error(words: list[str]) -> None:
    try:
        reading = read_action(" ".join(words), extra_commands=("rewind",))
    except ParseError:
        return
    if reading.action is not None:
        assert command_text(reading.action)


INPUTS: dict[str, Callable[[int], str]] = {
    "prose": lambda n: "hello there friend\n" * n,
    "long-lines": lambda n: ("call " * 80 + "\n") * n,
    "raise-words": lambda n: "raise " + "to " * n,
    "spaces": lambda n: "call" + " " * (20 * n),
    "quoted": lambda n: "> RAISE 3\n" * n + "call",
}


@pytest.mark.parametrize("make", INPUTS.values(), ids=INPUTS.keys())
def test_reading_time_is_linear(make: Callable[[int], str]) -> None:
    def read(text: str) -> None:
        try:
            read_action(text)
        except ParseError:
            pass

    short, long = make(2000), make(20000)
    small, big = growth(lambda: read(short), lambda: read(long), 30, slack=0.05)  # tests/timing.py
    assert big < 30 * small + 0.05, (small, big)


def test_the_step_line_and_the_old_turn_line_name_the_turn_alike() -> None:
    """Issue 20: every game's form names its step with "Step: <title>"; the duels' forms
    said "Turn: <title>" before, and a reply to such a mail is read the same way. Two lines
    naming different turns, by either word, are an error."""
    for word in ("Step", "Turn", "step", "STEP"):
        reading = read_action(f"CALL\n{word}: Hand 3, action 2\n")
        assert reading.action == {"action": "call"} and reading.turn == "hand 3 action 2"
    assert read_action("Step : Hand 3, action 2\nFOLD").turn == "hand 3 action 2"
    assert read_action("CALL\nStep: Hand 3, action 2\nTurn: Hand 3, action 2").turn == "hand 3 action 2"
    with pytest.raises(ParseError) as error:
        read_action("CALL\nTurn: Hand 3, action 1\nStep: Hand 3, action 2")
    assert "two turns" in error.value.reason
    # a line merely beginning with the word is prose, not a reference
    assert read_action("Step by step I call\nCALL").ignored == ["Step by step I call"]


@pytest.mark.parametrize(
    "written, read",
    [
        ("- CALL", "CALL"),
        ("+ CALL", "CALL"),
        ("\u2022 Gold: 20", "Gold: 20"),
        ("  * **RAISE** *3*  ", "RAISE 3"),
        ("-5", "-5"),
        ("*3*", "3"),
        ("RAISE 1_0", "RAISE 1_0"),
    ],
)
def test_clean_line_drops_a_bullet_and_the_emphasis_around_words(written: str, read: str) -> None:
    """docs/games/lines.md, rulings 1-4: the line every grammar reads."""
    from referee.games.lines import clean_line

    assert clean_line(written) == read
