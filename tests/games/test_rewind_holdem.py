"""Rewind Hold'em: one test (or table-driven case) per rule and ruling.

Rulings "R<n>" are those of ``docs/games/rewind-holdem.md``. The helpers at the top are
shared with the property, template and golden tests. Most tests stack the deck
(the ``deal`` fixture) so that each round holds the cards the rule needs.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from referee.games import betting, cards
from referee.games.base import MATCH_CHIPS, SEQUENTIAL, GameError, Move, NoMoves, ParseError, State
from referee.games.rewind_holdem import DECK_SIZE, GAME, STARTING_CHIPS, TURN_HOURS, _possible_own_cards, ranking

G = GAME
A, B = "alice", "bob"
TOTAL = 2 * STARTING_CHIPS

Deal = Callable[..., None]


def start(dmo: str | None = None, seed: int = 7) -> State:
    return G.initial_state(seed, [A, B], {} if dmo is None else {"dmo": dmo})


@pytest.fixture
def deal(monkeypatch: pytest.MonkeyPatch) -> Deal:
    """Stack the deck: ``deal((a, b, x, y), ...)`` queues the cards of the next rounds,
    alice's hidden card, bob's, then the two open cards (the deal order of ruling R5).
    The shoe still moves as it would; once the queue is empty the real cards come."""
    queue: list[int] = []
    real = cards.draw

    def draw(seed: int, shoe: cards.Shoe, count: int, **kw: Any) -> tuple[list[int], cards.Shoe, list[Any]]:
        got, after, fresh = real(seed, shoe, count, **kw)
        if queue:
            got = [queue.pop(0) for _ in range(count)]
        return got, after, fresh

    monkeypatch.setattr(cards, "draw", draw)

    def stack(*rounds: tuple[int, int, int, int]) -> None:
        for r in rounds:
            queue.extend(r)

    return stack


def send(state: State, player: str, text: str) -> State:
    """A mail from ``player``: parsed, then every move applied; all must be accepted."""
    for move in G.parse(state, player, text).moves:
        applied = G.apply_move(state, player, move)
        assert applied.accepted, applied.reason
        state = applied.state
    return state


def move(command: str, rewind: bool = False) -> Move:
    parsed = G.parse(start(), A, command + ("\nREWIND" if rewind else ""))
    return parsed.moves[0]


def rejected(state: State, player: str, mv: Move) -> str:
    applied = G.apply_move(state, player, mv)
    assert not applied.accepted
    assert applied.changed is False
    assert applied.state == state
    assert applied.reason
    return applied.reason


def last(state: State) -> dict[str, Any]:
    record: dict[str, Any] = state["history"][-1]
    return record


def to_act(state: State) -> str:
    step = G.step(state)
    assert step is not None
    return step.players[0]


def set_stacks(state: State, stacks: dict[str, int]) -> State:
    """The current round with other chips behind (the antes stay in the pot)."""
    new = json.loads(json.dumps(state))
    new["chips"] = dict(stacks)
    new["table"]["betting"]["stacks"] = dict(stacks)
    return new


def carry_one(state: State) -> State:
    """The current round as if one chip of bob's had been carried into its pot."""
    new = json.loads(json.dumps(state))
    new["chips"][B] -= 1
    new["table"]["betting"]["stacks"][B] -= 1
    new["table"]["betting"]["carried"] = 1
    new["pot"] += 1
    return new


def give_rewind_cards(state: State, owner: str, pair: tuple[int, int]) -> State:
    new = json.loads(json.dumps(state))
    new["rewind_cards"] = {"owner": owner, "cards": list(pair), "round": 0}
    return new


def conserved(state: State) -> bool:
    return sum(state["chips"].values()) + state["pot"] == TOTAL


def assert_transfers_match(state: State) -> None:
    """Every chip a player or the pot holds is explained by the transfers."""
    for account, held in [*state["chips"].items(), ("pot", state["pot"])]:
        start_with = STARTING_CHIPS if account in (A, B) else 0
        moved = sum(t["amount"] for t in state["transfers"] if t["to"] == account) - sum(
            t["amount"] for t in state["transfers"] if t["from"] == account
        )
        assert held == start_with + moved, account


# --------------------------------------------------------------------------- setup


def test_game_metadata() -> None:
    assert (G.name, G.title, G.min_players, G.max_players) == ("rewind-holdem", "Rewind Hold'em", 2, 2)
    assert G.step_kinds == {"turn": TURN_HOURS} == {"turn": 30.0}  # R3: 30 seconds live -> 30 hours


def test_initial_state_25_chips_each_and_the_antes_posted() -> None:
    state = start()
    assert state["initial_chips"] == {A: 25, B: 25}
    assert state["chips"] == {A: 24, B: 24} and state["pot"] == 2
    assert state["transfers"] == [
        {"from": A, "to": "pot", "amount": 1, "reason": "ante, round 1", "step": "start", "currency": MATCH_CHIPS},
        {"from": B, "to": "pot", "amount": 1, "reason": "ante, round 1", "step": "start", "currency": MATCH_CHIPS},
    ]
    assert json.loads(json.dumps(state)) == state


@pytest.mark.parametrize(("options", "first"), [({}, A), ({"dmo": A}, A), ({"dmo": B}, B)], ids=["default", "a", "b"])
def test_the_dmo_starts_round_1(options: dict[str, str], first: str) -> None:
    """ROUND / R1: "Starting with the DMO on round 1"; the match option dmo, default the first player."""
    state = G.initial_state(1, [A, B], options)
    assert state["dmo"] == first and to_act(state) == first


@pytest.mark.parametrize(
    ("players", "options"), [([A, A], {}), ([A], {}), ([A, B], {"dmo": "carol"})], ids=["same", "one", "bad-dmo"]
)
def test_initial_state_refuses_bad_setups(players: list[str], options: dict[str, str]) -> None:
    with pytest.raises(GameError):
        G.initial_state(1, players, options)


def test_the_deck_is_40_cards_1_to_10_four_times() -> None:
    for number in range(3):
        deck = cards.deck(7, number, values=10, copies=4)
        assert sorted(deck) == sorted(list(range(1, 11)) * 4) and len(deck) == DECK_SIZE == 40
    assert cards.deck(7, 0, values=10, copies=4) != cards.deck(7, 1, values=10, copies=4)
    assert cards.deck(7, 0, values=10, copies=4) == cards.deck(7, 0, values=10, copies=4)


def test_the_deal_comes_from_the_seeded_deck_in_the_ruled_order() -> None:
    """R5: alice's card, bob's card, the two open cards, from deck 0 = rng(seed, "deck", 0)."""
    state = start(seed=11)
    deck = cards.deck(11, 0, values=10, copies=4)
    table = state["table"]
    assert (table["hidden"][A], table["hidden"][B], table["open"]) == (deck[0], deck[1], deck[2:4])
    assert state["shoe"] == {"deck": 0, "drawn": 4}
    state = send(state, A, "FOLD")
    assert (state["table"]["hidden"][A], state["table"]["hidden"][B], state["table"]["open"]) == (
        deck[4],
        deck[5],
        deck[6:8],
    )


def test_a_deck_that_runs_out_mid_deal_goes_on_from_a_fresh_shuffled_deck() -> None:
    """SETUP: "Once all 40 cards are used, a completely fresh deck is created"."""
    state = start(seed=5)
    state["shoe"] = {"deck": 0, "drawn": 38}
    state = send(state, A, "FOLD")
    old, fresh = cards.deck(5, 0, values=10, copies=4), cards.deck(5, 1, values=10, copies=4)
    table = state["table"]
    assert (table["hidden"][A], table["hidden"][B]) == (old[38], old[39])
    assert table["open"] == fresh[:2]
    assert table["fresh_decks"] == [{"deck": 1, "after": 2}]
    assert state["shoe"] == {"deck": 1, "drawn": 2}
    assert (G.view(state, A)["deck"]["number"], G.view(state, A)["deck"]["left"]) == (2, 38)


def test_a_step_is_one_turn_of_the_player_to_act() -> None:
    """R4: key round-r-turn-t, kind "turn", only the player to act, not simultaneous."""
    state = start(dmo=B)
    step = G.step(state)
    assert step is not None
    assert (step.key, step.kind, step.players, step.simultaneous, step.title) == (
        "round-1-turn-1",
        "turn",
        (B,),
        False,
        "Round 1, turn 1",
    )
    assert G.awaiting(state) == (B,)
    state = send(state, B, "RAISE 2")
    step = G.step(state)
    assert step is not None and (step.key, step.players) == ("round-1-turn-2", (A,))
    assert G.awaiting(state) == (A,)


# --------------------------------------------------------------------------- views


def test_a_player_sees_the_opponents_card_and_never_their_own(deal: Deal) -> None:
    """ROUND: "Players will only know the card that the opponent received and not their own"."""
    deal((3, 8, 5, 6))
    state = start()
    for player, other, card, text in ((A, B, 8, "High card 8-6-5"), (B, A, 3, "High card 6-5-3")):
        table = G.view(state, player)["table"]
        assert table["cards"] == {other: card}
        assert table["hands"] == {other: {"cards": [card, 5, 6], "class": "High card", "text": text}}
        assert table["open"] == [5, 6]


def test_the_unseen_cards_do_not_name_your_own(deal: Deal) -> None:
    """R5: the view counts the cards of the deck in use the viewer has not seen; the
    viewer's own card is among them, and the public sees neither hidden card."""
    deal((3, 8, 5, 6), (9, 9, 9, 1))
    state = send(start(), A, "FOLD")  # round 1's cards are revealed: 3, 8, 5, 6
    unseen = {p: G.view(state, p)["deck"]["unseen"] for p in (A, B, None)}
    base = [4, 4, 3, 4, 3, 3, 4, 3, 4, 4]  # less round 1's 3, 5, 6, 8
    assert unseen[None] == [base[0] - 1, *base[1:8], base[8] - 1, base[9]]  # the open 1 and 9
    assert unseen[A] == [base[0] - 1, *base[1:8], base[8] - 2, base[9]]  # and bob's 9
    assert unseen[B] == unseen[A]  # alice holds a 9 too
    assert G.view(state, A)["deck"]["left"] == DECK_SIZE - 8


def test_the_public_view_shows_no_hidden_card(deal: Deal) -> None:
    deal((3, 8, 5, 6))
    state = start()
    public = G.view(state, None)
    assert public["table"]["cards"] == {} and public["table"]["hands"] == {}
    assert public["choices"] is None and public["waiting"] is None and public["you"] is None


@pytest.mark.parametrize("ending", ["FOLD", "CHECK"])
def test_both_cards_are_revealed_when_the_round_ends(deal: Deal, ending: str) -> None:
    """R6: after a showdown and after a fold, both hidden cards are in the round's record."""
    deal((3, 8, 5, 6))
    state = send(start(), A, ending)
    for viewer in (A, B, None):
        record = G.view(state, viewer)["history"][0]
        assert record["hidden"] == {A: 3, B: 8}
        assert record["hands"][A]["text"] == "High card 6-5-3" and record["hands"][B]["text"] == "High card 8-6-5"


def test_the_rewind_cards_are_public(deal: Deal) -> None:
    """R9: the stored pair (owner and cards) is in every view, the archive's too."""
    deal((3, 8, 5, 6))
    state = send(start(), A, "FOLD")
    for viewer in (A, B, None):
        assert G.view(state, viewer)["rewind_cards"] == {"owner": A, "cards": [5, 6], "round": 1}
    assert "holds the Rewind Cards 5 and 6" in G.standings(state)[0]


def test_choices_are_offered_only_to_the_player_to_act(deal: Deal) -> None:
    deal((3, 8, 5, 6))
    state = start()
    mine, theirs = G.view(state, A), G.view(state, B)
    assert mine["choices"]["check"] is True and mine["choices"]["raise"] == {
        "min": 1,
        "max": 24,
        "to_min": 2,
        "to_max": 25,
    }
    assert mine["choices"]["timeout"] == "CALL" and mine["waiting"] is None
    assert theirs["choices"] is None and theirs["waiting"] == {"player": A, "timeout": "CALL"}


# --------------------------------------------------------------------------- showdown


SHOWDOWNS = [
    # (alice's card, bob's card, open cards, winner or None for a tie)
    # With two open cards shared, a Triple meets only a Double (the open pair) and a
    # Straight never meets a Triple; every other meeting of classes is in the hand tests.
    ("triple-beats-double", 4, 6, (4, 4), A),  # 4-4-4 vs 4-4-6
    ("straight-beats-double", 3, 4, (4, 5), A),  # 3-4-5 vs 4-4-5
    ("straight-9-10-1-beats-double", 1, 10, (9, 10), A),
    ("straight-10-1-2", 1, 2, (10, 2), A),  # 10-1-2 vs 2-2-10
    ("double-beats-high-card", 5, 9, (5, 2), A),
    ("higher-double-wins", 3, 2, (3, 2), A),  # 3-3-2 vs 2-2-3: the rule text's example
    ("better-straight-wins", 1, 8, (9, 10), B),  # 8-9-10 vs 9-10-1
    ("high-card-from-the-top", 7, 6, (10, 2), A),
    ("1-is-the-lowest-card", 1, 3, (7, 5), B),
    ("same-card-is-a-tie", 6, 6, (2, 9), None),
]


@pytest.mark.parametrize(
    ("a_card", "b_card", "open_cards", "winner"),
    [case[1:] for case in SHOWDOWNS],
    ids=[case[0] for case in SHOWDOWNS],
)
def test_showdown_the_better_hand_takes_the_pot(
    deal: Deal, a_card: int, b_card: int, open_cards: tuple[int, int], winner: str | None
) -> None:
    """BETTING ENDS: "Whichever player has the better hand will gain all the chips"."""
    deal((a_card, b_card, *open_cards))
    state = send(start(), A, "RAISE 3")
    state = send(state, B, "CALL")
    record = last(state)
    assert record["end"] == "call" and record["pot"] == 8
    assert record["winner"] == winner and record["tie"] == (winner is None)
    if winner is None:
        assert record["won"] == {A: 4, B: 4} and state["chips"] == {A: 24, B: 24}
    else:
        loser = B if winner == A else A
        assert record["won"][winner] == 8 and state["chips"][winner] == 24 + 4 and state["chips"][loser] == 20
    assert conserved(state)


def test_an_exact_tie_splits_the_pot(deal: Deal) -> None:
    """R12: an exact tie splits the pot, half each."""
    deal((6, 6, 2, 9))
    state = send(start(), A, "CHECK")
    assert last(state)["tie"] and last(state)["won"] == {A: 1, B: 1} and last(state)["carry_out"] == 0
    assert state["chips"] == {A: 24, B: 24} and state["pot"] == 2  # round 2's antes


def test_an_odd_chip_of_a_tie_is_carried_to_the_next_pot(deal: Deal) -> None:
    """R12: the odd chip stays in the pot and is part of the next round's pot, which its
    winner takes whole."""
    deal((6, 6, 2, 9), (9, 2, 4, 5))
    state = carry_one(start())  # a pot of 3: the antes and one carried chip
    state = send(state, A, "CHECK")
    assert last(state)["pot"] == 3 and last(state)["won"] == {A: 1, B: 1} and last(state)["carry_out"] == 1
    assert state["pot"] == 3 and state["table"]["betting"]["carried"] == 1
    assert G.view(state, A)["table"]["carried"] == 1
    state = send(state, A, "CHECK")  # a tie: the same player starts
    assert last(state)["winner"] == A and last(state)["won"][A] == 3
    assert conserved(state)


# --------------------------------------------------------------------------- who starts


@pytest.mark.parametrize(
    ("cards_", "commands", "starts_next"),
    [
        ((9, 2, 4, 5), [(A, "CHECK")], B),  # bob lost the showdown
        ((2, 9, 4, 5), [(A, "CHECK")], A),  # alice lost the showdown
        ((9, 2, 4, 5), [(A, "FOLD")], A),  # the folder lost
        ((2, 9, 4, 5), [(A, "RAISE 1"), (B, "FOLD")], B),
        ((6, 6, 4, 5), [(A, "CHECK")], A),  # after a tie, the same player
    ],
    ids=["showdown-loser-b", "showdown-loser-a", "folder-a", "folder-b", "tie-same-player"],
)
def test_the_previous_loser_starts_the_next_round(
    deal: Deal, cards_: tuple[int, int, int, int], commands: list[tuple[str, str]], starts_next: str
) -> None:
    """ROUND: "the loser of the previous round on subsequent rounds"; ruling: after a tie, the same player."""
    deal(cards_)
    state = start()
    for player, command in commands:
        state = send(state, player, command)
    assert state["table"]["first"] == starts_next == to_act(state) == last(state)["next_first"]


# --------------------------------------------------------------------------- betting


def test_check_is_a_call_with_nothing_to_call(deal: Deal) -> None:
    """Ruling: CHECK is accepted as CALL; on equal antes the first player's call is the showdown."""
    deal((9, 2, 4, 5))
    state = send(start(), A, "CHECK")
    assert last(state)["end"] == "call" and last(state)["actions"][0]["command"] == "CHECK"


@pytest.mark.parametrize(
    ("command", "total", "a_behind"),
    [("RAISE 3", 4, 21), ("RAISE TO 6", 6, 19), ("RAISE BY 2", 3, 22), ("ALL IN", 25, 0)],
    ids=["raise-n", "raise-to-n", "raise-by-n", "all-in"],
)
def test_raises(deal: Deal, command: str, total: int, a_behind: int) -> None:
    """BETTING A: RAISE n makes your total the opponent's + n; RAISE TO n makes it n."""
    deal((9, 2, 4, 5))
    state = send(start(), A, command)
    assert state["table"]["betting"]["bets"] == {A: total, B: 1}
    assert state["chips"][A] == a_behind and state["pot"] == total + 1 and to_act(state) == B


def test_a_raise_may_not_exceed_what_the_opponent_can_call(deal: Deal) -> None:
    deal((9, 2, 4, 5))
    state = set_stacks(start(), {A: 40, B: 8})
    reason = rejected(state, A, move("RAISE 9"))
    assert "RAISE 1 to RAISE 8" in reason
    state = send(state, A, "ALL IN")
    assert state["table"]["betting"]["bets"][A] == 9 and state["chips"][A] == 32
    choices = G.view(state, B)["choices"]
    assert choices["raise"] is None and choices["to_call"] == 8
    state = send(state, B, "CALL")
    assert last(state)["pot"] == 18 and last(state)["winner"] == A
    assert G.result(state) is not None  # bob has no chips left


def test_calling_a_raise_matches_it(deal: Deal) -> None:
    deal((2, 9, 4, 5))
    state = send(send(start(), A, "RAISE 4"), B, "RAISE 2")
    assert state["table"]["betting"]["bets"] == {A: 5, B: 7}
    state = send(state, A, "CALL")
    assert last(state)["bets"] == {A: 7, B: 7} and last(state)["winner"] == B
    assert state["chips"] == {A: 18 - 1, B: 32 - 1}  # round 2's antes are posted


@pytest.mark.parametrize(
    ("setup", "command", "reason"),
    [
        ([], "RAISE 0", "A raise is at least 1 chip"),
        ([], "RAISE 25", "RAISE 25 is too much"),
        ([], "RAISE TO 1", "RAISE TO 1 is not a raise"),
        ([(A, "RAISE 2")], "CHECK", "You cannot CHECK: there are 2 chips to call."),
        ([(A, "RAISE 1")], "CHECK", "You cannot CHECK: there is 1 chip to call."),
        ([(A, "RAISE 1")], "RAISE 25", "Your choices now: CALL (1 chip, making 2 each), RAISE 1 to RAISE 23"),
    ],
    ids=[
        "raise-0",
        "raise-over-the-stack",
        "raise-to-no-more",
        "check-facing-a-raise",
        "check-facing-1-chip",
        "raise-over-the-stack-facing-1-chip",
    ],
)
def test_illegal_amounts_are_rejected_with_the_choices(setup: list[tuple[str, str]], command: str, reason: str) -> None:
    """R15: a well-formed move the rules forbid costs nothing; the reason states the choices now."""
    state = start()
    for player, text in setup:
        state = send(state, player, text)
    why = rejected(state, to_act(state), move(command))
    assert reason in why and "Your choices now:" in why


@pytest.mark.parametrize(
    ("text", "quoted"),
    [("RAISE 1_0", "'1_0'"), ("raise to 2_000 chips", "'2_000'"), ("**RAISE 1_0**\nREWIND", "'1_0'")],
    ids=["1_0", "2_000", "emphasised-1_0-with-rewind"],
)
def test_a_number_with_an_underscore_is_an_error_quoting_it(text: str, quoted: str) -> None:
    """R-grammar (ruling B11 of Indian Poker): ``1_0`` is not read as 10."""
    with pytest.raises(ParseError) as error:
        G.parse(start(), A, text)
    assert not isinstance(error.value, NoMoves)
    assert error.value.reason.startswith(f"I could not read {quoted} as a whole number of chips")


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("*RAISE 3*", "RAISE 3"),
        ("RAISE *3*", "RAISE 3"),
        ("__RAISE TO 4__", "RAISE TO 4"),
        ("**CALL**", "CALL"),
        ("_FOLD_", "FOLD"),
        ("*ALL_IN*", "ALL IN"),
    ],
)
def test_emphasis_around_words_is_still_read(text: str, command: str) -> None:
    assert G.parse(start(), A, text).moves == [move(command)]
    assert G.parse(start(), A, text + "\n__REWIND__").moves == [move(command, rewind=True)]


def test_all_in_ante_goes_straight_to_the_showdown(deal: Deal) -> None:
    """BETTING (as in Indian Poker): a player whose ante takes all their chips antes all
    they have and the round goes straight to the showdown; it needs no step (R4)."""
    deal((3, 8, 5, 6), (9, 2, 4, 5), (3, 8, 5, 6))
    state = set_stacks(start(), {A: 1, B: 47})
    state = send(state, A, "FOLD")  # alice keeps 1 chip: round 2 takes it as her ante
    allin = state["history"][1]
    assert allin["end"] == "all-in" and allin["actions"] == [] and allin["ante_all_in"] == [A]
    assert allin["winner"] == A and allin["pot"] == 2 and allin["closed_by"] == "round-1-turn-1"
    assert state["round"] == 3 and G.step(state).key == "round-3-turn-1"  # type: ignore[union-attr]
    assert state["chips"] == {A: 1, B: 47} and to_act(state) == B  # the loser of round 2 starts
    assert [r["round"] for r in G.view(state, A)["last_rounds"]] == [1, 2]


def test_an_all_in_ante_lost_ends_the_match(deal: Deal) -> None:
    deal((3, 8, 5, 6), (2, 9, 4, 5))
    state = send(set_stacks(start(), {A: 1, B: 47}), A, "FOLD")
    assert G.result(state) is not None and G.result(state).outcome == {A: "loss", B: "win"}  # type: ignore[union-attr]
    assert state["chips"] == {A: 0, B: 50} and state["pot"] == 0 and state["table"] is None


# --------------------------------------------------------------------------- timeouts


def test_timeout_with_nothing_to_call_is_a_call(deal: Deal) -> None:
    deal((9, 2, 4, 5))
    state = G.apply_timeout(start())
    action = last(state)["actions"][0]
    assert (action["command"], action["timeout"], last(state)["end"]) == ("CALL", True, "call")


def test_timeout_facing_a_raise_is_a_fold_with_its_penalty_and_rewind_cards(deal: Deal) -> None:
    """R7, R21: a timeout fold is a fold: the penalty is paid and the open cards stored."""
    deal((9, 4, 4, 5))  # bob holds 4-4-5, a Double
    state = G.apply_timeout(send(start(), A, "RAISE 2"))
    record = last(state)
    assert record["end"] == "fold" and record["folder"] == B and record["actions"][-1]["timeout"]
    assert record["payments"] == [
        {"kind": "fold penalty", "from": B, "to": A, "owed": 5, "paid": 5, "reason": "fold penalty, round 1"}
    ]
    assert state["rewind_cards"] == {"owner": B, "cards": [4, 5], "round": 1}


def test_a_timeout_never_rewinds(deal: Deal) -> None:
    deal((9, 2, 4, 5))
    state = G.apply_timeout(give_rewind_cards(start(), A, (1, 1)))
    assert last(state)["rewind"] is None and last(state)["open"] == [4, 5]
    assert state["rewind_cards"] == {"owner": A, "cards": [1, 1], "round": 0}


def test_timeout_refused_when_the_match_is_over(deal: Deal) -> None:
    deal((9, 2, 4, 5))
    state = send(start(), A, "ALL IN")
    state = send(state, B, "CALL")
    assert G.step(state) is None and G.awaiting(state) == ()
    with pytest.raises(GameError):
        G.apply_timeout(state)
    assert "The match is over" in rejected(state, A, move("CALL"))


# --------------------------------------------------------------------------- folds


def test_a_fold_gives_the_pot_to_the_opponent_and_stores_the_open_cards(deal: Deal) -> None:
    """BETTING C: the folder loses whatever they hold; the 2 open cards become their Rewind Cards."""
    deal((10, 2, 10, 10))  # alice folds a Triple: penalty 10
    state = send(send(start(), A, "RAISE 2"), B, "FOLD")
    record = last(state)
    assert (record["folder"], record["winner"], record["loser"], record["won"][A]) == (B, A, B, 4)
    assert record["stored"] == state["rewind_cards"] == {"owner": B, "cards": [10, 10], "round": 1}
    assert record["discarded"] is None


FOLD_PENALTIES = [
    # (alice's card, open cards, penalty alice pays for folding)
    ("triple", 7, (7, 7), 10),
    ("straight", 5, (6, 7), 10),
    ("straight-9-10-1", 1, (9, 10), 10),
    ("straight-10-1-2", 10, (1, 2), 10),
    ("double", 3, (3, 9), 5),
    ("double-on-the-table", 9, (3, 3), 5),
    ("high-card", 2, (6, 9), 0),
]


@pytest.mark.parametrize(
    ("a_card", "open_cards", "penalty"), [c[1:] for c in FOLD_PENALTIES], ids=[c[0] for c in FOLD_PENALTIES]
)
def test_fold_penalty(deal: Deal, a_card: int, open_cards: tuple[int, int], penalty: int) -> None:
    """FOLD: a Triple or a Straight costs 10 extra chips to the opponent, a Double 5."""
    deal((a_card, 4 if 4 not in (a_card, *open_cards) else 8, *open_cards))
    state = send(start(), A, "FOLD")  # R7: a fold with nothing to call is allowed
    assert state["history"][0]["chips"] == {A: 24 - penalty, B: 26 + penalty}
    assert [p["paid"] for p in last(state)["payments"]] == ([penalty] if penalty else [])
    assert_transfers_match(state)


def test_fold_penalty_is_capped_at_what_the_folder_holds(deal: Deal) -> None:
    deal((7, 2, 7, 7))
    state = send(set_stacks(start(), {A: 3, B: 45}), A, "FOLD")
    assert last(state)["payments"][0]["owed"] == 10 and last(state)["payments"][0]["paid"] == 3
    assert G.result(state) is not None and state["chips"] == {A: 0, B: 50}


@pytest.mark.parametrize("second_folder", [A, B], ids=["same-player", "other-player"])
def test_a_later_fold_by_either_player_replaces_the_pair(deal: Deal, second_folder: str) -> None:
    """FOLD: "There can only be 2 Rewind Cards and if another fold happens, the old cards will be discarded"."""
    deal((9, 2, 4, 5), (9, 2, 1, 8))
    state = send(start(), A, "FOLD")  # alice's pair 4, 5; alice starts round 2
    if second_folder == A:
        state = send(state, A, "FOLD")
    else:
        state = send(send(state, A, "RAISE 1"), B, "FOLD")
    assert state["rewind_cards"] == {"owner": second_folder, "cards": [1, 8], "round": 2}
    assert last(state)["discarded"] == {"owner": A, "cards": [4, 5], "round": 1}


# --------------------------------------------------------------------------- rewind


def rewind_ready(deal: Deal, a_card: int, b_card: int, dealt: tuple[int, int], pair: tuple[int, int]) -> State:
    """Round 2, alice to start, holding the Rewind Cards ``pair`` from her fold in round 1."""
    deal((9, 2, *pair), (a_card, b_card, *dealt))
    state = send(start(), A, "FOLD")
    assert state["rewind_cards"]["owner"] == A and to_act(state) == A
    return state


def test_rewind_replaces_the_open_cards_and_uses_the_pair_up(deal: Deal) -> None:
    state = rewind_ready(deal, 5, 2, (1, 9), (5, 5))
    state = send(state, A, "REWIND\nRAISE 2")
    table = state["table"]
    assert table["open"] == [5, 5] and table["dealt"] == [1, 9]
    assert table["rewind"] == {"by": A, "pot": 2, "replaced": [1, 9], "cards": [5, 5]}
    assert state["rewind_cards"] is None
    assert G.view(state, B)["table"]["hands"][A]["text"] == "Triple 5-5-5"


@pytest.mark.parametrize(
    ("a_card", "b_card", "winner", "penalty_from"),
    [(5, 2, A, B), (2, 5, B, A), (7, 7, None, None)],
    ids=["rewinder-wins", "rewinder-loses", "tie-no-penalty"],
)
def test_a_called_showdown_after_a_rewind_costs_its_loser_the_pot_at_the_rewind(
    deal: Deal, a_card: int, b_card: int, winner: str | None, penalty_from: str | None
) -> None:
    """REWIND: "If the bet is called, then the player that loses the round will forfeit
    chips equal to the amount of chips on the pot when the Rewind Cards were added";
    ruling: to the winner, not on a tie; R8: the pot of the rewind, not the final pot."""
    state = rewind_ready(deal, a_card, b_card, (1, 9), (4, 6))
    before = {p: n + 1 for p, n in state["chips"].items()}  # what each held before round 2's ante
    state = send(state, A, "REWIND\nRAISE 3")
    state = send(state, B, "CALL")
    record = last(state)
    assert record["winner"] == winner and record["pot"] == 8
    if penalty_from is None:
        assert record["payments"] == [] and record["chips"] == before
    else:
        to = A if penalty_from == B else B
        assert record["payments"] == [
            {"kind": "rewind", "from": penalty_from, "to": to, "owed": 2, "paid": 2, "reason": "rewind, round 2"}
        ]
        assert record["chips"][to] == before[to] + 4 + 2  # the loser's 4 in the pot, then 2 for the rewind
        assert record["chips"][penalty_from] == before[penalty_from] - 4 - 2


def test_the_rewind_penalty_is_capped_at_what_the_loser_holds(deal: Deal) -> None:
    deal((9, 2, 4, 6), (2, 5, 1, 9))
    state = send(start(), A, "FOLD")
    state = set_stacks(state, {A: 4, B: 44})
    state = send(send(state, A, "REWIND\nALL IN"), B, "CALL")
    assert G.result(state) is not None and state["chips"][A] == 0  # the pot took all alice had


def test_the_rewind_penalty_counts_a_carried_chip(deal: Deal) -> None:
    state = carry_one(rewind_ready(deal, 5, 2, (1, 9), (4, 6)))  # a pot of 3 when alice rewinds
    state = send(state, A, "REWIND\nCHECK")  # alice's Straight 4-5-6 beats bob's High card 6-4-2
    assert last(state)["rewind"]["pot"] == 3 and last(state)["payments"][0]["owed"] == 3


@pytest.mark.parametrize("folder", [A, B], ids=["rewinder-folds", "opponent-folds"])
def test_a_fold_after_a_rewind_stores_the_cards_then_on_the_table_and_costs_no_rewind_penalty(
    deal: Deal, folder: str
) -> None:
    state = rewind_ready(deal, 8, 2, (1, 9), (4, 6))
    state = send(state, A, "REWIND\nFOLD") if folder == A else send(send(state, A, "REWIND\nRAISE 1"), B, "FOLD")
    assert state["rewind_cards"] == {"owner": folder, "cards": [4, 6], "round": 2}
    assert all(p["kind"] == "fold penalty" for p in last(state)["payments"])


def test_the_fold_penalty_after_a_rewind_is_on_the_rewound_hand(deal: Deal) -> None:
    state = rewind_ready(deal, 5, 2, (1, 9), (4, 6))  # alice: 5-4-6 is a Straight after the rewind
    state = send(state, A, "REWIND\nFOLD")
    assert last(state)["hands"][A]["text"] == "Straight 4-5-6" and last(state)["payments"][0]["paid"] == 10


ILLEGAL_REWINDS: list[tuple[str, Callable[[Deal], tuple[State, str]], str]] = [
    (
        "not-the-starting-player",
        lambda deal: (send(give_rewind_cards(rewind_ready(deal, 5, 2, (1, 9), (4, 6)), B, (3, 3)), A, "RAISE 1"), B),
        "Only alice, who starts the betting of round 2, may REWIND.",
    ),
    (
        "after-the-first-action",
        lambda deal: (send(send(rewind_ready(deal, 5, 2, (1, 9), (4, 6)), A, "RAISE 1"), B, "RAISE 1"), A),
        "REWIND is allowed only before your first action of the round",
    ),
    ("no-rewind-cards", lambda deal: (start(), A), "There are no Rewind Cards"),
    (
        "the-opponents-rewind-cards",
        lambda deal: (give_rewind_cards(start(), B, (3, 3)), A),
        "The Rewind Cards 3 and 3 are bob's",
    ),
]


@pytest.mark.parametrize(("setup", "reason"), [c[1:] for c in ILLEGAL_REWINDS], ids=[c[0] for c in ILLEGAL_REWINDS])
def test_an_illegal_rewind_is_rejected_with_the_choices(
    deal: Deal, setup: Callable[[Deal], tuple[State, str]], reason: str
) -> None:
    """REWIND: only the starting player, only before their first action, only with stored Rewind Cards of their own."""
    state, player = setup(deal)
    why = rejected(state, player, move("CALL", rewind=True))
    assert reason in why and "Your choices now:" in why and "(without REWIND)" in why
    assert G.apply_move(state, player, move("CALL")).accepted  # the same command without REWIND is fine


def test_rewind_alone_is_a_parse_error() -> None:
    """R10: REWIND comes in the same mail as the command; alone it is no move."""
    with pytest.raises(ParseError) as error:
        G.parse(start(), A, "REWIND\n")
    assert not isinstance(error.value, NoMoves)
    assert "same mail" in error.value.reason


def test_the_rewind_offer_is_in_the_choices(deal: Deal) -> None:
    state = rewind_ready(deal, 5, 2, (1, 9), (4, 6))
    choices = G.view(state, A)["choices"]
    assert choices["rewind"] == {"cards": [4, 6], "pot": 2} and choices["rewind_why_not"] is None
    assert "You may also REWIND" in choices["text"]
    assert G.view(state, B)["choices"] is None


# --------------------------------------------------------------------------- rejections


def test_wrong_player_is_rejected() -> None:
    state = start()
    why = rejected(state, B, move("CALL"))
    assert why.startswith("It is not your turn.") and "It is alice's turn (Round 1, turn 1)" in why
    assert "carol is not playing" in rejected(state, "carol", move("CALL"))


def test_a_mail_answering_an_old_turn_is_rejected() -> None:
    """R14: the Turn line of the form names the turn; a mail naming an older one records nothing."""
    state = start()
    old_form = G.form(state, A)
    state = send(send(state, A, "RAISE 1"), B, "RAISE 1")
    why = rejected(state, A, G.parse(state, A, old_form.replace("CALL", "FOLD")).moves[0])
    assert "answers the turn 'round 1 turn 1', which is over" in why and "Now it is Round 1, turn 3" in why
    assert "Your choices now:" in why


@pytest.mark.parametrize(
    "bad",
    [{"action": "bet"}, {"action": "raise"}, {"action": "raise", "by": "3"}, {"action": "call", "rewind": "yes"}, []],
    ids=["unknown-action", "raise-without-amount", "raise-by-text", "rewind-not-bool", "not-a-dict"],
)
def test_malformed_moves_are_rejected(bad: Any) -> None:
    assert rejected(start(), A, bad)


# --------------------------------------------------------------------------- the end


def test_the_match_ends_when_a_player_has_no_chips(deal: Deal) -> None:
    """END: "The player to gain all the chips first will win the DM"."""
    deal((9, 2, 4, 5))
    state = send(send(start(), A, "ALL IN"), B, "CALL")
    result = G.result(state)
    assert result is not None
    assert result.outcome == {A: "win", B: "loss"} and result.victory_points == {A: 1.0, B: 0.0}
    assert result.reason == "bob has no chips left after round 1: alice wins the match."
    assert result.scores == {"chips": {A: 50, B: 0}, "rounds": 1}
    assert state["table"] is None and G.form(state, A) == "" and G.view(state, A)["choices"] is None
    assert G.view(state, A)["title"] == "Final result"


def test_with_balances_leaves_the_match_chips_alone() -> None:
    """R13: the season balances change nothing in a game of match chips; their shape is still checked."""
    state = start()
    assert G.with_balances(state, {A: 0, B: 1000}) == state
    for bad in ({A: -1, B: 3}, {A: 1}, {A: 1.5, B: 2}):
        with pytest.raises(GameError):
            G.with_balances(state, bad)  # type: ignore[arg-type]


def test_every_transfer_is_of_match_chips_between_the_players_and_the_pot(deal: Deal) -> None:
    deal((9, 4, 4, 5), (2, 5, 1, 9))
    state = G.apply_timeout(send(start(), A, "RAISE 2"))  # a fold with a penalty
    state = send(state, B, "RAISE 3")
    state = send(state, A, "CALL")
    assert state["transfers"] and all(t["currency"] == MATCH_CHIPS for t in state["transfers"])
    assert all({t["from"], t["to"]} <= {A, B, "pot"} and t["amount"] > 0 for t in state["transfers"])
    assert {t["step"] for t in state["transfers"]} == {
        "start",
        "round-1-turn-1",
        "round-1-turn-2",
        "round-2-turn-1",
        "round-2-turn-2",
    }
    assert_transfers_match(state)
    assert conserved(state)


# --------------------------------------------------------------------------- the ranking (R23)


def test_r23_the_winner_ranks_first_and_the_loser_last(deal: Deal) -> None:
    assert G.game_type.ranked is True
    deal((9, 2, 4, 5), (3, 8, 5, 6), (2, 9, 4, 5))
    showdown = send(send(start(), A, "ALL IN"), B, "CALL")
    all_in_ante = send(set_stacks(start(), {A: 1, B: 47}), A, "FOLD")
    for state, winner, loser in ((showdown, A, B), (all_in_ante, B, A)):
        result = G.result(state)
        assert result is not None and result.outcome == {winner: "win", loser: "loss"}
        assert result.ranking == [winner, loser]
        assert G.result(json.loads(json.dumps(state))).ranking == [winner, loser]  # type: ignore[union-attr]


def test_r23_a_draw_would_rank_the_player_with_fewer_chips_last() -> None:
    # no match ends drawn (a player has no chips at the end): the rule ranks a drawn result all the same
    state = start()
    drawn = {A: "draw", B: "draw"}
    assert ranking(state, drawn, {A: 20, B: 30}) == [B, A]
    assert ranking(state, drawn, {A: 30, B: 20}) == [A, B]
    assert ranking(state, {A: "loss", B: "win"}, {A: 50, B: 0}) == [B, A]  # the outcome first, then the chips


# --------------------------------------------------------------------------- mail text


def test_the_form_parses_to_a_call_on_the_open_turn() -> None:
    """R19: the form holds CALL (always legal) and the Step line (issue 20: the convention of
    every game's form; "Turn:" of older mails is still read), for the player to act only."""
    state = start()
    assert G.form(state, A) == "CALL\nStep: Round 1, turn 1\n"
    assert G.parse(state, A, "Turn: Round 1, turn 1\nCALL\n").moves[0]["turn"] == "round 1 turn 1"
    assert G.form(state, B) == ""
    parsed = G.parse(state, A, G.form(state, A))
    assert parsed.moves == [{"action": "call", "rewind": False, "turn": "round 1 turn 1"}]
    assert G.apply_move(state, A, parsed.moves[0]).accepted


@pytest.mark.parametrize(
    ("text", "expected", "ignored"),
    [
        ("RAISE 3", {"action": "raise", "by": 3, "rewind": False, "turn": None}, []),
        ("raise to 8 chips", {"action": "raise", "to": 8, "rewind": False, "turn": None}, []),
        ("Rewind\nCALL", {"action": "call", "rewind": True, "turn": None}, []),
        ("FOLD\nREWIND\nthanks", {"action": "fold", "rewind": True, "turn": None}, ["thanks"]),
        ("Hi\nTurn: Round 2, turn 3\nall in", {"action": "all-in", "rewind": False, "turn": "round 2 turn 3"}, ["Hi"]),
        ("check, good luck", {"action": "check", "rewind": False, "turn": None}, ["good luck"]),
    ],
    ids=["raise", "raise-to", "rewind-call", "fold-rewind-prose", "turn-all-in", "check-prose"],
)
def test_parse_reads(text: str, expected: Move, ignored: list[str]) -> None:
    parsed = G.parse(start(), A, text)
    assert parsed.moves == [expected] and parsed.ignored == ignored


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Good morning", NoMoves),
        ("CALL\nFOLD", ParseError),
        ("REWIND\nREWIND\nCALL", ParseError),
        ("RAISE lots", ParseError),
    ],
    ids=["nothing", "two-commands", "rewind-twice", "unreadable-raise"],
)
def test_parse_errors(text: str, error: type[ParseError]) -> None:
    with pytest.raises(error):
        G.parse(start(), A, text)


def test_betting_module_is_the_one_used() -> None:
    """The betting round in the state is a betting.py round (no betting rules of our own)."""
    rnd = start()["table"]["betting"]
    assert betting.legal_actions(rnd, A) is not None and betting.pot(rnd) == 2


# --------------------------------------------------------------------------- for tests and bots


def test_game_type() -> None:
    gt = G.game_type
    assert (gt.dynamics, gt.roles, gt.currencies, gt.chance) == (SEQUENTIAL, ("player", "player"), (MATCH_CHIPS,), True)
    assert gt.step_kinds == G.step_kinds and set(gt.options) == {"dmo"}


def test_sample_moves_are_legal_and_only_for_the_player_to_act(deal: Deal) -> None:
    state = rewind_ready(deal, 5, 2, (1, 9), (4, 6))
    rnd = random.Random(3)
    assert G.sample_moves(state, B, rnd) == []
    moves = [m for _ in range(10) for m in G.sample_moves(state, A, rnd)]
    assert {m["action"] for m in moves} == {"check", "fold", "raise", "all-in"}
    assert any(m["rewind"] for m in moves) and not all(m["rewind"] for m in moves)
    assert all(G.apply_move(state, A, m).accepted for m in moves)
    assert not any(m["rewind"] for m in G.sample_moves(start(), A, rnd))  # no Rewind Cards: no REWIND


def test_hidden_variants_change_only_the_own_card_to_a_value_the_deck_still_held(deal: Deal) -> None:
    """Four 7s dealt from this deck besides alice's own card: her card is no 7."""
    deal((7, 7, 7, 1), (5, 7, 2, 3))
    state = send(start(), A, "FOLD")
    assert _possible_own_cards(state, A) == [1, 2, 3, 4, 5, 6, 8, 9, 10]
    assert 7 in _possible_own_cards(state, B)  # bob's own 7 is not counted: three others were dealt
    for player in (A, B):
        variants = G.hidden_variants(state, player, random.Random(1))
        assert len(variants) == 3
        for variant in variants:
            assert variant["table"]["hidden"][player] in _possible_own_cards(state, player)
            assert variant["table"]["hidden"][player] != state["table"]["hidden"][player]
            variant["table"]["hidden"][player] = state["table"]["hidden"][player]
            assert variant == state
    final = send(send(state, A, "ALL IN"), B, "CALL")
    assert G.hidden_variants(final, A, random.Random(1)) == []  # nothing is hidden once the match is over


def test_views_and_new_states_share_nothing_with_the_state(deal: Deal) -> None:
    """A template or a caller that changes a view (or a new state) cannot change a match."""

    def scribble(value: Any) -> None:
        if isinstance(value, dict):
            for v in list(value.values()):
                scribble(v)
            value["scribbled"] = True
        elif isinstance(value, list):
            for v in value:
                scribble(v)
            value.append("scribbled")

    deal((9, 2, 4, 6), (5, 2, 1, 9))
    state = send(send(start(), A, "FOLD"), A, "REWIND\nRAISE 2")
    before = json.dumps(state, sort_keys=True)
    for player in (A, B, None):
        scribble(G.view(state, player))
    scribble(G.apply_move(state, B, move("CALL")).state)
    scribble(G.apply_timeout(state))
    scribble(G.with_balances(state, {A: 1, B: 1}))
    for variant in G.hidden_variants(state, A, random.Random(0)):
        scribble(variant)
    assert json.dumps(state, sort_keys=True) == before


# --------------------------------------------------------------------------- R24: a forfeit


def test_r24_a_forfeit_is_a_fold_without_penalty_or_rewind_cards_and_ends_the_match(deal: Deal) -> None:
    """alice holds a Triple and has raised 2; bob is to act when alice forfeits: the round
    ends as her fold, not on her turn; bob takes the pot of 4, no fold penalty is paid, no
    Rewind Cards are stored (bob's pair of round 1 stays where it was); bob wins."""
    deal((9, 2, 4, 5), (7, 3, 7, 7))
    state = send(start(), A, "FOLD")  # round 1: alice's fold stores her pair 4, 5
    state = send(state, A, "RAISE 2")
    assert to_act(state) == B and state["round"] == 2
    before = json.dumps(state, sort_keys=True)
    over = G.forfeit(state, A)
    assert json.dumps(state, sort_keys=True) == before, "forfeit changed the state it was given"
    record = last(over)
    assert (record["end"], record["folder"], record["winner"], record["loser"]) == ("fold", A, B, A)
    assert record["forfeit"] == A and record["payments"] == [] and record["won"][B] == 4
    assert record["stored"] is None and record["discarded"] is None
    assert over["rewind_cards"] == state["rewind_cards"] == {"owner": A, "cards": [4, 5], "round": 1}
    assert record["actions"][-1]["command"] == "FORFEIT" and record["actions"][-1]["forfeit"]
    assert record["closed_by"] == "round-2-turn-2" == over["last_event"]
    assert over["table"] is None and over["pot"] == 0 and conserved(over)
    assert_transfers_match(over)
    assert over["forfeit"] == {"player": A, "round": 2}
    result = G.result(over)
    assert result.outcome == {A: "loss", B: "win"} and result.victory_points == {A: 0.0, B: 1.0}
    assert result.reason == "alice forfeited the match in round 2: bob wins the match."
    assert result.ranking == [B, A]
    assert G.step(over) is None and G.awaiting(over) == ()
    assert G.forfeit(state, A) == over  # deterministic


def test_r24_the_views_show_the_forfeit_and_both_hidden_cards(deal: Deal) -> None:
    deal((6, 8, 1, 3))
    state = start()
    over = G.forfeit(state, B)
    public = G.view(over, None)
    assert public["forfeit"] == {"player": B, "round": 1} and public["over"]
    assert public["last_rounds"][-1]["hidden"] == {A: 6, B: 8}
    assert public["last_action"]["command"] == "FORFEIT"
    assert "forfeit" not in G.view(state, None)
    assert over["chips"] == {A: 26, B: 24}
    assert G.hidden_variants(over, A, random.Random(1)) == []


def test_r24_a_match_over_or_a_stranger_cannot_forfeit() -> None:
    state = start()
    with pytest.raises(GameError, match="not playing"):
        G.forfeit(state, "carol")
    over = G.forfeit(state, A)
    with pytest.raises(GameError, match="over"):
        G.forfeit(over, B)
