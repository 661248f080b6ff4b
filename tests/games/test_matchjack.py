"""MatchJack's engine (``referee.games.matchjack.engine``): one test (or parametrized case)
per rule and ruling.

A test named ``test_ruling_<n>_...`` checks ruling n of the game's rulings (the numbered
list in ``docs/games/matchjack.md``); the others check the rule text and the RULINGS
reading (``seeds/matchjack.txt``, "MatchJack" in RULINGS.md). Expected values are worked
out by hand from the rules. The set-ups (``fresh``, ``deal`` ...) are in
``test_matchjack_helpers.py``: the bots' rules are ``never-moves`` (NEW) unless a test sets
them, and the cards are dealt by hand where they matter.
"""

from __future__ import annotations

import json
import random

import pytest

from referee.games.base import HOUSE, MATCH_CHIPS, GameError, State, rng
from referee.games.matchjack import engine
from referee.games.matchjack.engine import GAME as G
from referee.games.matchjack.engine import ante_for
from tests.games.test_matchjack_helpers import (
    NAMES,
    PLAYERS,
    act,
    bet,
    checks_round,
    deal,
    fresh,
    net,
    news,
    ok,
    play_out,
    refused,
    stay,
    table_step,
    timeout_all,
    to_act,
)

# --------------------------------------------------------------------------- the game type


def test_the_game_declares_its_type() -> None:
    gt = G.game_type
    assert (G.name, G.title, G.min_players, G.max_players) == ("matchjack", "MatchJack", 6, 6)
    assert gt.dynamics == "mixed" and gt.roles == ("player",) * 6
    assert gt.currencies == (MATCH_CHIPS, "garnets") and gt.reads == ("garnets",)
    assert gt.concurrent and gt.names and gt.chance
    assert gt.ranked  # result(state).ranking: the winner first, the EC last
    assert G.step_kinds == gt.step_kinds


def test_ruling_1_step_kinds_and_default_lengths() -> None:
    assert G.step_kinds == {"stay": 24.0, "bet": 12.0, "action": 12.0, "break": 24.0}


def test_ruling_6_the_six_start_three_per_set_drawn_from_the_seed() -> None:
    s = G.initial_state(5, PLAYERS, {})
    order = list(PLAYERS)
    rng(5, "sets").shuffle(order)
    assert [p for p in order if s["sets"][p] == "Main"] == order[:3]
    assert [s["seats"][p] for p in order] == [1, 2, 3, 1, 2, 3]
    assert s["tables"]["Main"]["dealt"] == order[:3] and s["tables"]["Lost"]["dealt"] == order[3:]
    assert G.initial_state(5, PLAYERS, {}) == s


def test_the_bots_draw_distinct_rules_from_the_seed() -> None:
    from referee.games.matchjack.bots import draw_rules

    s = G.initial_state(9, PLAYERS, {})
    assert s["rules"] == draw_rules(rng(9, "bots"))
    assert len(set(s["rules"].values())) == 4


# --------------------------------------------------------------------------- deal and antes


def test_ruling_2_the_deck_is_split_in_two_piles_and_dealt_one_face_up() -> None:
    s = G.initial_state(3, PLAYERS, {})
    deck = list(engine.hands.DECK)
    rng(3, "deck", 1).shuffle(deck)
    for i, name in enumerate(engine.SETS):
        t = s["tables"][name]
        pile = deck[i * 22 : (i + 1) * 22]
        seats = t["dealt"] + t["bots"]  # humans in seat order, then the bots
        assert [t["hands"][w][0] for w in seats] == [[c, True] for c in pile[:5]]
        assert [t["hands"][w][1] for w in seats] == [[c, False] for c in pile[5:10]]
        assert t["pile"] == pile[10:]


@pytest.mark.parametrize(("hand", "ante"), [(1, 1), (7, 1), (8, 2), (13, 2), (14, 3), (15, 3)])
def test_antes_by_hand_number(hand: int, ante: int) -> None:
    assert ante_for(hand) == ante
    s = fresh(hand=hand)
    assert all(s["chips"][p] == 20 - ante for p in PLAYERS)
    assert s["tables"]["Main"]["contrib"] == {"ann": ante, "bob": ante, "cat": ante, "Alpha": 1, "Beta": 1}
    assert net(s, "pot-main") == 3 * ante + 2 and net(s, "bots") == -4


def test_ruling_3_a_player_short_of_the_ante_antes_all_they_have() -> None:
    s = fresh(chips={"ann": 2}, hand=14)
    assert s["chips"]["ann"] == 0 and s["tables"]["Main"]["contrib"]["ann"] == 2


def test_stayers_pay_the_second_ante() -> None:
    s = fresh(hand=8)  # ante 2
    s = stay(s, {"ann": "stay", "bob": "stay", "dan": "stay"})
    assert s["chips"]["ann"] == 16 and s["tables"]["Main"]["contrib"]["ann"] == 4
    assert s["chips"]["cat"] == 18 and s["tables"]["Main"]["contrib"]["cat"] == 2  # folded: first ante only
    assert [t["reason"] for t in s["transfers"] if t["from"] == "ann"] == ["ante, hand 8", "second ante, hand 8"]


def test_ruling_4_an_all_in_ante_stays_for_free() -> None:
    s = fresh(chips={"ann": 1})
    s = stay(s, {"ann": "stay", "bob": "stay", "cat": "stay"})
    t = s["tables"]["Main"]
    assert s["chips"]["ann"] == 0 and t["contrib"]["ann"] == 1 and "ann" in t["all_in"]
    assert "ann" in t["stayed"]


# --------------------------------------------------------------------------- the stay step


def test_ruling_4_the_stay_step_is_one_step_for_both_tables_and_revisable() -> None:
    s = fresh()
    (step,) = G.steps(s)
    assert (step.key, step.kind, step.simultaneous) == ("h1-stay", "stay", True)
    assert step.players == tuple(PLAYERS) and step.title == "Hand 1, stay or fold"
    s = ok(s, "ann", {"stay": "fold"})
    s = ok(s, "ann", {"stay": "stay"})  # the last valid choice counts
    assert G.awaiting(s) == ("bob", "cat", "dan", "eve", "fay")
    assert G.steps(s) == (step,)  # still open: it closes at its deadline
    s = G.apply_timeout(s, "h1-stay")
    assert s["tables"]["Main"]["stayed"] == ["ann"]


def test_ruling_4_the_stay_choices_are_secret_until_the_close() -> None:
    s = ok(fresh(), "ann", {"stay": "fold"})
    assert G.view(s, "ann")["your_stay"] == "fold"
    for viewer in ("bob", "dan", None):
        view = G.view(s, viewer)
        assert view["tables"]["Main"]["stay"] is None and view.get("your_stay") is None
        assert view["tables"]["Main"]["hall"] == [] and view["tables"]["Main"]["stayed"] == []
    s = G.apply_timeout(ok(s, "cat", {"stay": "stay"}), "h1-stay")
    assert G.view(s, "dan")["tables"]["Main"]["stay"]["ann"] == {"choice": "folded", "timeout": False}
    assert G.view(s, None)["tables"]["Main"]["stay"]["bob"] == {"choice": "folded", "timeout": True}


def test_folders_move_to_the_other_set_for_the_next_hand_and_take_the_lowest_free_seat() -> None:
    s = fresh()
    s = stay(s, {"ann": "stay", "bob": "fold", "cat": "stay", "dan": "stay", "eve": "stay", "fay": "stay"})
    assert s["sets"]["bob"] == "Main"  # in the hall for the rest of the hand
    assert s["tables"]["Main"]["hall"] == ["bob"]
    s = play_out(play_out(s, "Main"), "Lost")
    assert s["hand"] == 2
    assert (s["sets"]["bob"], s["seats"]["bob"]) == ("Lost", 4)
    assert s["tables"]["Lost"]["dealt"] == ["dan", "eve", "fay", "bob"]
    assert s["tables"]["Main"]["dealt"] == ["ann", "cat"]
    assert s["history"][0]["moves"] == [{"player": "bob", "from": "Main", "to": "Lost", "seat": 4}]


def test_a_missing_stay_choice_is_a_fold_that_moves_the_set() -> None:
    s = stay(fresh(), {"ann": "stay", "bob": "stay", "dan": "stay", "eve": "stay", "fay": "stay"})
    t = s["tables"]["Main"]
    assert t["hall"] == ["cat"] and t["moving"] == ["cat"] and t["stay"]["cat"] == {"choice": "folded", "timeout": True}
    s = play_out(play_out(s, "Main"), "Lost")
    assert (s["sets"]["cat"], s["seats"]["cat"]) == ("Lost", 4)


def test_a_player_in_the_hall_still_follows_their_table() -> None:
    s = deal(fresh(), "Main", {"ann": "R5 B6", "bob": "Y3 G4"})
    s = stay(s, {"bob": "stay", "cat": "stay", "dan": "stay", "eve": "stay"})  # ann folds: the hall
    view = G.view(s, "ann")
    assert view["your_table"] == "Main" and view["tables"]["Main"]["at_table"]
    assert view["tables"]["Main"]["cards"]["bob"] == [{"card": "Y3", "up": True}, {"card": None, "up": False}]
    assert view["step"] is None and G.form(s, "ann") == "" and G.sample_moves(s, "ann", random.Random(1)) == []
    assert "ann" in G.audience(s, table_step(s, "Main"))


def test_ruling_6_arrivals_fill_the_freed_seats_lowest_first_in_their_old_seat_order() -> None:
    s = fresh()
    # ann (Main 1) and cat (Main 3) fold, and dan (Lost 1): the folders have left their seats
    # (they sat in the hall). At Lost eve (2) and fay (3) stay: ann takes seat 1, cat seat 4;
    # at Main bob (2) stays: dan takes seat 1.
    s = stay(s, {"bob": "stay", "eve": "stay", "fay": "stay"})  # ann, cat, dan time out: FOLD
    s = play_out(play_out(s, "Main"), "Lost")
    assert (s["seats"]["ann"], s["seats"]["cat"], s["seats"]["dan"]) == (1, 4, 1)
    assert s["sets"]["dan"] == "Main" and s["sets"]["ann"] == s["sets"]["cat"] == "Lost"
    assert s["tables"]["Main"]["dealt"] == ["dan", "bob"]
    assert s["tables"]["Lost"]["dealt"] == ["ann", "eve", "fay", "cat"]


def test_ruling_5_fold_stayset_pays_5_garnets_and_keeps_the_set() -> None:
    s = fresh(garnets={"bob": 7})
    s = ok(s, "bob", {"stay": "stayset"})
    s = stay(s, {"ann": "stay", "cat": "stay"})
    assert s["garnets"]["bob"] == 2
    assert {"from": "bob", "to": HOUSE, "amount": 5, "currency": "garnets"}.items() <= next(
        t for t in s["transfers"] if t.get("currency") == "garnets"
    ).items()
    assert s["tables"]["Main"]["hall"] == ["bob"] and s["tables"]["Main"]["moving"] == []
    s = play_out(play_out(s, "Main"), "Lost")
    assert s["sets"]["bob"] == "Main" and s["seats"]["bob"] == 2


def test_ruling_5_fold_stayset_without_5_garnets_is_refused_and_costs_nothing() -> None:
    s = fresh(garnets={"bob": 4})
    applied = refused(s, "bob", {"stay": "stayset"})
    assert "5 garnets" in applied.reason and "4" in applied.reason


def test_ruling_5_fold_stayset_judged_on_the_garnets_at_the_close_counts_as_fold() -> None:
    s = fresh(garnets={"bob": 6})
    s = ok(s, "bob", {"stay": "stayset"})
    s = G.with_holdings(s, {"garnets": {p: 0 for p in PLAYERS} | {"bob": 3}})  # spent elsewhere meanwhile
    s = stay(s, {"dan": "stay", "eve": "stay"})  # the Lost table plays on: the hand is not over
    assert s["garnets"]["bob"] == 3 and not [t for t in s["transfers"] if t.get("currency") == "garnets"]
    assert "bob" in s["tables"]["Main"]["moving"]
    assert G.view(s, "bob")["stayset_refused"] is True
    assert G.view(s, None)["tables"]["Main"]["stay"]["bob"]["choice"] == "folded"  # publicly a plain fold
    assert "stayset_refused" not in G.view(s, None)


def test_with_holdings_checks_the_shape() -> None:
    s = fresh()
    for bad in (
        {},
        {"garnets": {"ann": 1}},
        {"garnets": {p: -1 for p in PLAYERS}},
        {"garnets": {p: 1.5 for p in PLAYERS}},
    ):
        with pytest.raises(GameError):
            G.with_holdings(s, bad)
    assert G.with_holdings(s, {"garnets": {p: 9 for p in PLAYERS}})["garnets"]["fay"] == 9
    assert G.with_balances(s, {p: 0 for p in PLAYERS}) == s
    with pytest.raises(GameError):
        G.with_balances(s, {"ann": 3})


# --------------------------------------------------------------------------- betting


def test_ruling_7_betting_starts_with_the_lowest_seat_without_a_recent_winner() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    step = table_step(s, "Main")
    assert (step.key, step.kind, step.players) == ("h1-main-bet1-1", "bet", ("ann",))
    assert step.title == "Hand 1, Main table, betting round 1, turn 1"
    assert s["tables"]["Main"]["order"] == ["ann", "bob", "cat"]


def test_ruling_7_betting_starts_with_the_seat_that_most_recently_won() -> None:
    s = fresh()
    s["winners"]["Main"] = 2
    s = stay(s, {p: "stay" for p in PLAYERS})
    assert to_act(s, "Main") == "bob" and s["tables"]["Main"]["order"] == ["bob", "cat", "ann"]
    assert s["tables"]["Main"]["starter"] == 2


def test_ruling_7_a_winning_seat_not_in_the_hand_starts_nobody() -> None:
    s = fresh()
    s["winners"]["Main"] = 2
    s = stay(s, {"ann": "stay", "cat": "stay"})  # bob (seat 2) folds
    assert to_act(s, "Main") == "ann"


def test_ruling_7_the_starter_begins_the_action_phase_and_round_2_too() -> None:
    s = fresh()
    s["winners"]["Main"] = 3
    s = stay(s, {p: "stay" for p in PLAYERS})
    s = checks_round(s, "Main")
    assert to_act(s, "Main") == "cat"  # the action phase
    assert s["tables"]["Main"]["action_order"] == ["cat", "ann", "bob", "Alpha", "Beta"]
    s = news(s, "Main")
    assert table_step(s, "Main").key == "h1-main-bet2-1" and to_act(s, "Main") == "cat"


def test_betting_is_skipped_with_fewer_than_two_humans() -> None:
    s = stay(fresh(), {"ann": "stay", "dan": "stay", "eve": "stay"})
    t = s["tables"]["Main"]
    assert t["rounds"][0]["end"] == "skipped" and t["status"] == "action"
    assert table_step(s, "Main").key == "h1-main-act-1"
    assert s["tables"]["Lost"]["status"] == "bet"


def test_betting_is_skipped_when_only_one_human_can_still_bet() -> None:
    s = stay(fresh(chips={"ann": 1}), {"ann": "stay", "bob": "stay"})  # ann is all in from her ante
    assert s["tables"]["Main"]["rounds"][0]["end"] == "skipped"


def test_a_bet_a_raise_and_calls() -> None:
    """ann BET 3, bob RAISE 2 (to 5), cat RAISE TO 9, ann CALL (6 more), bob FOLD: the
    round ends; the pot holds 2+2+2 (antes) + 9 + 5 + 9 + 2 (the bots) = 31."""
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    s = bet(s, "ann", "bet", amount=3)
    s = bet(s, "bob", "raise", by=2)
    s = bet(s, "cat", "raise-to", to=9)
    assert to_act(s, "Main") == "ann" and table_step(s, "Main").key == "h1-main-bet1-4"
    s = bet(s, "ann", "call")
    s = bet(s, "bob", "fold")
    t = s["tables"]["Main"]
    assert t["rounds"][0]["end"] == "matched" and t["status"] == "action"
    assert t["contrib"] == {"ann": 11, "bob": 7, "cat": 11, "Alpha": 1, "Beta": 1}
    assert (s["chips"]["ann"], s["chips"]["bob"], s["chips"]["cat"]) == (9, 13, 9)
    assert net(s, "pot-main") == 31 and t["folded"] == ["bob"]
    assert s["sets"]["bob"] == "Main"  # a fold in a betting round does not move the set
    assert t["action_order"] == ["ann", "cat", "Alpha", "Beta"]


@pytest.mark.parametrize(
    ("move", "why"),
    [
        ({"bet": "call"}, None),  # CALL with nothing to call is a check
        ({"bet": "raise", "by": 0}, "at least 1"),
        ({"bet": "bet", "amount": 19}, "too much"),  # 18 behind after the two antes
        ({"bet": "raise-to", "to": 0}, "not a raise"),
    ],
)
def test_ruling_8_bet_limits(move, why) -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    applied = G.apply_move(s, "ann", move)
    if why is None:
        assert applied.accepted and applied.state["tables"]["Main"]["rounds"][0]["actions"][0]["action"] == "check"
    else:
        assert not applied.accepted and why in applied.reason and "Your choices now" in applied.reason


def test_ruling_8_check_facing_a_bet_and_bet_facing_a_bet_are_refused() -> None:
    s = bet(stay(fresh(), {p: "stay" for p in PLAYERS}), "ann", "bet", amount=2)
    assert "cannot CHECK" in refused(s, "bob", {"bet": "check"}).reason
    assert "cannot BET" in refused(s, "bob", {"bet": "bet", "amount": 4}).reason


def test_ruling_8_a_raise_is_capped_by_what_another_player_could_put_in() -> None:
    """bob holds 5 after the antes, cat 3: ann (18) may bet at most 5; ALL IN bets 5."""
    s = stay(fresh(chips={"bob": 7, "cat": 5}), {p: "stay" for p in PLAYERS})
    legal = G.view(s, "ann")["legal"]
    assert legal["bet"] == {"min": 1, "max": 5} and legal["all_in"]["total"] == 5
    assert "too much" in refused(s, "ann", {"bet": "bet", "amount": 6}).reason
    s = bet(s, "ann", "all-in")
    assert s["tables"]["Main"]["contrib"]["ann"] == 7 and s["chips"]["ann"] == 13
    s = bet(s, "bob", "call")  # bob all in for 5
    assert "bob" in s["tables"]["Main"]["all_in"]
    assert "cannot bet more" in refused(s, "cat", {"bet": "raise", "by": 1}).reason
    s = bet(s, "cat", "all-in")  # cat cannot raise: ALL IN is a call, all in for 3
    assert s["chips"]["cat"] == 0 and s["tables"]["Main"]["contrib"]["cat"] == 5
    assert s["tables"]["Main"]["status"] == "action"


def test_ruling_8_a_raise_reopens_the_betting() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    s = bet(s, "ann", "check")
    s = bet(s, "bob", "bet", amount=1)
    s = bet(s, "cat", "call")
    s = bet(s, "ann", "raise", by=1)
    assert to_act(s, "Main") == "bob"  # bob and cat must answer the raise
    s = bet(s, "bob", "call")
    s = bet(s, "cat", "call")
    assert s["tables"]["Main"]["status"] == "action"


def test_ruling_9_a_human_alone_with_the_bots_plays_on_to_the_showdown() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    s = bet(s, "ann", "bet", amount=2)
    s = bet(s, "bob", "fold")
    s = bet(s, "cat", "fold")
    t = s["tables"]["Main"]
    assert t["rounds"][0]["end"] == "one-left" and t["status"] == "action" and to_act(s, "Main") == "ann"
    s = act(s, "ann", "new")  # then the bots; round 2 is skipped; the showdown
    t = s["tables"]["Main"]
    assert [r["end"] for r in t["rounds"]] == ["one-left", "skipped"] and t["status"] == "done"
    assert set(t["showdown"]["hands"]) == {"ann", "Alpha", "Beta"}


def test_a_player_not_to_act_is_refused() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    assert "turn" in refused(s, "bob", {"bet": "check"}).reason
    assert "no step open" in refused(s, "bob", {"action": "hit"}).reason


# --------------------------------------------------------------------------- the action phase


def action_start(pile: str, ann: str = "R5 B6", **extra: str) -> State:
    """ann alone at Main (bob and cat fold): no betting; the pile's top is turned up and it
    is ann's action."""
    s = fresh()
    s = deal(s, "Main", {"ann": ann, "Alpha": "G1 G2", "Beta": "Y1 Y2", **extra}, pile)
    s = stay(s, {"ann": "stay", "dan": "stay", "eve": "stay"})
    assert table_step(s, "Main").key == "h1-main-act-1"
    return s


def test_the_top_pile_card_is_turned_face_up_before_the_actions() -> None:
    s = action_start("R9 B3 Y7 G8")
    t = s["tables"]["Main"]
    assert t["up"] == "R9" and t["pile"] == ["B3", "Y7", "G8"]
    view = G.view(s, "ann")
    assert view["tables"]["Main"]["pile"]["up"] == "R9"
    assert G.view(s, "dan")["tables"]["Main"]["pile"]["up"] is None  # not at the Main table


def hand(s: State, who: str, name: str = "Main") -> list[list]:
    return s["tables"][name]["hands"][who]


def test_hit_adds_the_top_card_face_up() -> None:
    s = act(action_start("R9 B3 Y7 G8"), "ann", "hit")
    assert hand(s, "ann") == [["R5", True], ["B6", False], ["B3", True]]
    assert s["tables"]["Main"]["actions"][0] == {
        "who": "ann", "seat": 1, "bot": False, "action": "hit", "noop": False, "refill": False,
        "timeout": False, "drawn": "B3",
    }  # fmt: skip


def test_swap_up_trades_the_face_up_card_with_the_pile_card() -> None:
    s = act(action_start("R9 B3 Y7 G8"), "ann", "swap", card="up")
    assert hand(s, "ann") == [["R9", True], ["B6", False]]
    entry = s["tables"]["Main"]["actions"][0]
    assert (entry["took"], entry["gave"]) == ("R9", "R5")
    # then Alpha and Beta (NEW) cover R5 with B3, then Y7: R5 and B3 are spent
    assert s["tables"]["Main"]["spent"] == ["R5", "B3"] and s["tables"]["Main"]["up"] == "Y7"


def test_swap_down_shows_the_face_down_card_as_the_new_pile_card() -> None:
    s = act(action_start("R9 B3 Y7 G8"), "ann", "swap", card="down")
    assert hand(s, "ann") == [["R5", True], ["R9", True]]  # the card taken is face up
    assert s["tables"]["Main"]["actions"][0]["gave"] == "B6"
    assert s["tables"]["Main"]["spent"][0] == "B6"  # it was the face-up pile card until Alpha's NEW


def test_draw_1_replaces_the_face_up_card_face_up() -> None:
    s = act(action_start("R9 B3 Y7 G8"), "ann", "draw", position=1)
    assert hand(s, "ann") == [["B3", True], ["B6", False]]
    entry = s["tables"]["Main"]["actions"][0]
    assert (entry["drawn"], entry["gave"], entry["face_up"]) == ("B3", "R5", True)
    # R9 was covered by R5 (spent), then the bots' NEW: Y7 covers R5, G8 covers Y7
    assert s["tables"]["Main"]["spent"] == ["R9", "R5", "Y7"] and s["tables"]["Main"]["up"] == "G8"


def test_draw_2_replaces_the_face_down_card_face_down() -> None:
    s = act(action_start("R9 B3 Y7 G8"), "ann", "draw", position=2)
    assert hand(s, "ann") == [["R5", True], ["B3", False]]
    entry = s["tables"]["Main"]["actions"][0]
    assert (entry["drawn"], entry["gave"], entry["face_up"]) == ("B3", "B6", False)


def test_ruling_17_draw_2_keeps_the_new_card_hidden_from_the_others() -> None:
    s = fresh()
    s = deal(s, "Main", {"ann": "R5 B6", "bob": "Y3 G4"}, "R9 B3 Y7 G8 R1 R2")
    s = stay(s, {"ann": "stay", "bob": "stay"})
    s = checks_round(s, "Main")
    s = act(s, "ann", "draw", position=2)
    bobs = G.view(s, "bob")["tables"]["Main"]
    assert bobs["cards"]["ann"] == [{"card": "R5", "up": True}, {"card": None, "up": False}]
    assert "drawn" not in bobs["actions"][0] and bobs["actions"][0]["gave"] == "B6"
    anns = G.view(s, "ann")["tables"]["Main"]
    assert anns["cards"]["ann"][1] == {"card": "B3", "up": False} and anns["actions"][0]["drawn"] == "B3"
    public = G.view(s, None)["tables"]["Main"]
    assert public["cards"] is None and set(public["actions"][0]) >= {"who", "action", "position"}
    assert "gave" not in public["actions"][0]


def test_new_turns_the_next_card_and_keeps_the_hand() -> None:
    s = act(action_start("R9 B3 Y7 G8"), "ann", "new")
    assert hand(s, "ann") == [["R5", True], ["B6", False]]
    assert s["tables"]["Main"]["actions"][0]["drawn"] == "B3"


def test_ruling_10_an_empty_pile_is_refilled_from_the_spent_pile_cards() -> None:
    """Pile B3 Y7: B3 is turned up; ann's NEW turns Y7 (B3 spent); the pile is empty: Alpha's
    NEW refills it with the spent B3 and turns it (Y7 spent); Beta's NEW refills with Y7."""
    s = act(action_start("B3 Y7"), "ann", "new")
    t = s["tables"]["Main"]
    alpha, beta = t["actions"][1], t["actions"][2]
    assert (alpha["refill"], alpha["drawn"], beta["refill"], beta["drawn"]) == (True, "B3", True, "Y7")
    assert t["refills"] == 2 and t["up"] == "Y7" and t["spent"] == ["B3"] and t["pile"] == []


def test_ruling_10_with_nothing_to_refill_hit_draw_and_new_change_nothing() -> None:
    s = action_start("B3")  # B3 turned up: the pile is empty, nothing spent
    view = G.view(s, "ann")
    assert view["legal"]["pile_empty"] and "change nothing" in view["now"]
    for move in ({"action": "hit"}, {"action": "draw", "position": 1}, {"action": "new"}):
        after = ok(s, "ann", move)
        assert hand(after, "ann") == [["R5", True], ["B6", False]]
        assert after["tables"]["Main"]["actions"][0]["noop"] is True
    after = act(s, "ann", "swap", card="up")  # SWAP still works on the face-up pile card
    assert hand(after, "ann")[0] == ["B3", True]


def test_ruling_10_a_refill_shuffles_with_the_seed() -> None:
    s = action_start("B3 Y7 G8", ann="R5 B6")
    s = act(s, "ann", "new")  # Y7 up, B3 spent; Alpha NEW: G8 up, Y7 spent; Beta NEW: refill [B3, Y7]
    t = s["tables"]["Main"]
    cards = ["B3", "Y7"]
    rng(1, "refill", 1, "main", 1).shuffle(cards)
    assert t["actions"][2]["drawn"] == cards[0] and t["pile"] == cards[1:]


def test_bad_actions_are_refused() -> None:
    s = action_start("R9 B3 Y7 G8")
    assert "DRAW" in refused(s, "ann", {"action": "draw", "position": 3}).reason
    assert "SWAP" in refused(s, "ann", {"action": "swap", "card": "left"}).reason
    assert "action" in refused(s, "ann", {"bet": "check"}).reason


def test_ruling_10_the_bots_act_by_their_rules_after_the_humans() -> None:
    """Alpha (hit-under-15, R3 B9: 12) hits; Beta (twenty-one-hunter, R10 B4) finds no swap
    to 21 with the pile card Y2 and, worth 14, takes NEW."""
    s = fresh(rules={"Alpha": "hit-under-15", "Beta": "twenty-one-hunter"})
    s = deal(s, "Main", {"ann": "R5 B6", "Alpha": "R3 B9", "Beta": "R10 B4"}, "G11 Y2 Y7 G8")
    s = stay(s, {"ann": "stay", "dan": "stay", "eve": "stay"})
    s = act(s, "ann", "new")  # Y2 turned up over G11 (G11 spent)
    t = s["tables"]["Main"]
    alpha, beta = t["actions"][1], t["actions"][2]
    assert (alpha["who"], alpha["action"], alpha["drawn"]) == ("Alpha", "hit", "Y7")
    # Beta: the pile card is Y2; R10 Y2 is 12, Y2 B4 is 6: no 21; worth 14 > 10: NEW
    assert (beta["who"], beta["action"], beta["drawn"]) == ("Beta", "new", "G8")
    assert t["hands"]["Alpha"] == [["R3", True], ["B9", False], ["Y7", True]]


def test_a_bot_swaps_by_its_rule() -> None:
    s = fresh(rules={"Alpha": "twenty-one-hunter"})
    s = deal(s, "Main", {"ann": "R5 B6", "Alpha": "R10 B4"}, "G11 Y2 Y7 G8")
    s = stay(s, {"ann": "stay", "dan": "stay", "eve": "stay"})
    s = act(s, "ann", "hit")  # ann takes Y2; the pile card is still G11
    alpha = s["tables"]["Main"]["actions"][1]
    assert (alpha["action"], alpha["card"], alpha["took"], alpha["gave"]) == ("swap", "down", "G11", "B4")
    assert s["tables"]["Main"]["hands"]["Alpha"] == [["R10", True], ["G11", True]]


# --------------------------------------------------------------------------- the showdown


def showdown(main: dict[str, str], *, chips: dict[str, int] | None = None, winners=None) -> State:
    """All three stay at Main; everyone checks and takes NEW: the showdown of ``main``."""
    s = fresh(chips=chips)
    if winners:
        s["winners"].update(winners)
    s = deal(s, "Main", main, "R1 R2 R3 R4 R6 R7 R8")
    s = stay(s, {p: "stay" for p in PLAYERS})
    return play_out(s, "Main")


def test_the_best_hand_takes_the_pot() -> None:
    """ann 21 beats bob's matching 33 (B5 B6) and cat's 20: the pot of 8 (2 each and the
    bots' 1) goes to ann. Seat 1 is credited with the win."""
    s = showdown({"ann": "R10 Y11", "bob": "B5 B6", "cat": "G9 Y10", "Alpha": "G1 Y2", "Beta": "G2 Y3"})
    sd = s["tables"]["Main"]["showdown"]
    assert sd["won"] == {"ann": 8} and sd["discarded"] == 0
    assert s["chips"] == s["chips"] | {"ann": 26, "bob": 18, "cat": 18}
    assert s["winners"]["Main"] == 1
    assert sd["described"]["bob"] == "B5 B6: matching cards over 21, worth 33"


def test_matching_cards_adding_to_21_beat_a_plain_21() -> None:
    s = showdown({"ann": "R10 Y11", "bob": "B10 B11", "cat": "G9 Y10", "Alpha": "G1 Y2", "Beta": "G2 Y3"})
    assert s["tables"]["Main"]["showdown"]["won"] == {"bob": 8} and s["winners"]["Main"] == 2


def test_a_bust_cannot_win() -> None:
    """ann hits R10 Y11 to 22 (B1, not one colour): bust; cat's 19 takes both pots."""
    s = fresh()
    s = deal(s, "Main", {"ann": "R10 Y11", "bob": "B5 G6", "cat": "G9 Y10", "Alpha": "G1 Y2", "Beta": "G2 Y3"},
             "R1 B1 R3 R4 R6 R7 R8")  # fmt: skip
    s = stay(s, {p: "stay" for p in PLAYERS})
    s = checks_round(s, "Main")
    s = act(s, "ann", "hit")  # R1 is the pile card; ann takes B1
    s = play_out(s, "Main")
    sd = s["tables"]["Main"]["showdown"]
    assert sd["bust"] == ["ann"] and sd["won"] == {"cat": 8}
    assert sd["described"]["ann"] == "R10 Y11 B1: 22, bust"


def test_ruling_11_side_pots_with_an_all_in_player() -> None:
    """ann holds 4: antes 2, ALL IN for her last 2 (BET 2); bob RAISE TO 6, cat CALL. A side
    pot forms only at ann's all-in level (RULINGS, "Pots"): the main pot is 14 (4 each from
    ann, bob, cat and the bots' 2) for all; the side pot 8 (4 each from bob, cat) for bob,
    cat and the bots (the bots, who never fold, contest every pot). ann (21) wins 14, bob
    (20) wins 8."""
    s = fresh(chips={"ann": 4})
    s = deal(s, "Main", {"ann": "R10 B11", "bob": "Y9 G11", "cat": "Y2 G3", "Alpha": "G1 B2", "Beta": "Y1 B3"},
             "R1 R2 R3 R4 R6 R7 R8")  # fmt: skip
    s = stay(s, {p: "stay" for p in PLAYERS})
    s = bet(s, "ann", "all-in")
    assert s["tables"]["Main"]["contrib"]["ann"] == 4 and s["chips"]["ann"] == 0
    s = bet(s, "bob", "raise-to", to=6)
    s = bet(s, "cat", "call")
    s = news(s, "Main")
    assert to_act(s, "Main") == "bob"  # ann is all in: round 2 is bob's and cat's
    s = play_out(s, "Main")
    sd = s["tables"]["Main"]["showdown"]
    assert [(p["amount"], p["eligible"], p["winners"]) for p in sd["pots"]] == [
        (14, ["ann", "bob", "cat", "Alpha", "Beta"], ["ann"]),
        (8, ["bob", "cat", "Alpha", "Beta"], ["bob"]),
    ]
    assert (s["chips"]["ann"], s["chips"]["bob"], s["chips"]["cat"]) == (14, 20, 12)
    assert sd["discarded"] == 0 and net(s, "pot-main") == 0


def test_a_split_pot_discards_its_remainder() -> None:
    """ann and bob tie at 21 over cat's 17: the one pot of
    8 (the antes, 1 from each of the five, and the three second antes) is split once, 4 + 4,
    nothing left over. With cat tied too, 8 / 3 is 2 each and 2 discarded. The lowest tied
    seat, 1, is credited."""
    s = showdown({"ann": "R10 B11", "bob": "Y10 G11", "cat": "G9 Y8", "Alpha": "G1 Y2", "Beta": "G2 Y3"})
    sd = s["tables"]["Main"]["showdown"]
    assert len(sd["pots"]) == 1 and sd["won"] == {"ann": 4, "bob": 4} and sd["discarded"] == 0
    assert net(s, "discard") == 0 and s["winners"]["Main"] == 1
    s = showdown({"ann": "R10 B11", "bob": "Y10 G11", "cat": "G10 Y11", "Alpha": "G1 Y2", "Beta": "G2 Y3"})
    sd = s["tables"]["Main"]["showdown"]
    assert sd["won"] == {"ann": 2, "bob": 2, "cat": 2} and sd["discarded"] == 2 and net(s, "discard") == 2


def test_ruling_11_a_bot_with_the_best_hand_takes_every_pot_and_it_is_discarded() -> None:
    """Alpha's R10 R11 is the best: it wins the one pot of 8 (the antes and the second
    antes), though it put in only its ante ("If any of the automated players win, the chips
    are discarded"): all 8 discarded; no human won, so the table's earlier credit (seat 2)
    stays."""
    s = showdown(
        {"ann": "Y2 B3", "bob": "Y4 G5", "cat": "G9 Y11", "Alpha": "R10 R11", "Beta": "G2 Y3"}, winners={"Main": 2}
    )
    sd = s["tables"]["Main"]["showdown"]
    assert [p["winners"] for p in sd["pots"]] == [["Alpha"]]
    assert sd["won"] == {} and sd["discarded"] == 8 and sd["returned"] == {}
    assert s["winners"]["Main"] == 2


def test_ruling_11_a_human_tied_with_a_bot_keeps_their_share() -> None:
    """cat (G9 Y11) and Alpha (R9 B11) tie at 20 over bob: the one pot of 8 splits once,
    4 + 4: cat keeps her 4, Alpha's 4 are discarded."""
    s = showdown({"ann": "Y2 B3", "bob": "Y4 G5", "cat": "G9 Y11", "Alpha": "R9 B11", "Beta": "G2 Y3"})
    sd = s["tables"]["Main"]["showdown"]
    assert [p["winners"] for p in sd["pots"]] == [["cat", "Alpha"]]
    assert sd["won"] == {"cat": 4} and sd["discarded"] == 4


def test_ruling_11_only_a_bots_win_leaves_the_credited_seat() -> None:
    """With a bot winning the only contested pot, the seat that won before keeps the credit."""
    s = fresh()
    s["winners"]["Main"] = 2
    s = deal(s, "Main", {"ann": "Y2 B3", "Alpha": "R10 R11", "Beta": "G2 Y3"}, "R1 R2 R3 R4 R6")
    s = stay(s, {"ann": "stay", "dan": "stay", "eve": "stay"})  # ann alone at Main
    s = play_out(s, "Main")
    sd = s["tables"]["Main"]["showdown"]
    assert sd["pots"][0]["winners"] == ["Alpha"] and s["winners"]["Main"] == 2
    # antes are dead money (RULINGS, "Pots"): her second ante is not handed back; the whole
    # pot of 6 (her two antes, bob's and cat's, the bots') goes to Alpha, discarded
    assert sd["won"] == {} and sd["returned"] == {} and sd["discarded"] == 6


def test_ruling_11_a_table_where_every_human_folded_plays_out_its_bots() -> None:
    s = stay(fresh(), {"dan": "stay", "eve": "stay"})  # ann, bob, cat fold
    t = s["tables"]["Main"]
    assert t["status"] == "done" and [a["who"] for a in t["actions"]] == ["Alpha", "Beta"]
    assert set(t["showdown"]["hands"]) == {"Alpha", "Beta"} and t["showdown"]["discarded"] == 5
    steps = G.steps(s)
    assert [st.key for st in steps] == ["h1-lost-bet1-1", "h1-main-done"]
    assert steps[1].waiting and steps[1].kind == "wait" and steps[1].players == ()


def test_ruling_11_pots_a_three_way_tie_with_both_bots_splits_one_pot_once() -> None:
    """Review case (seed 0, hand 1, Main): ann and bob stay, cat folds; nobody bets. bob,
    Alpha and Beta tie at 20 and ann loses. The bots' 1-chip ante is no pot level: one pot
    of 7 (three antes, the bots' two, two second antes) is split once, 7 // 3 = 2 for bob,
    Alpha's and Beta's 2 and the remainder 1 discarded (5). Before the amendment the pot
    was split twice: bob 1, 6 discarded."""
    s = fresh()
    s = deal(s, "Main", {"ann": "Y2 B3", "bob": "R9 B11", "cat": "G1 Y1", "Alpha": "G9 Y11", "Beta": "Y9 R11"},
             "R1 R2 R3 R4 R6 R7 R8")  # fmt: skip
    s = stay(s, {"ann": "stay", "bob": "stay", "dan": "stay", "eve": "stay", "fay": "stay"})
    s = play_out(s, "Main")
    sd = s["tables"]["Main"]["showdown"]
    assert [(p["amount"], p["winners"]) for p in sd["pots"]] == [(7, ["bob", "Alpha", "Beta"])]
    assert sd["won"] == {"bob": 2} and sd["discarded"] == 5 and sd["returned"] == {}
    assert s["chips"]["bob"] == 20 and net(s, "discard") == 5


def test_ruling_11_pots_antes_are_never_handed_back_even_to_a_lone_stayer() -> None:
    """RULINGS, "Pots": "antes, the first and the second, are dead money and never handed
    back, even to a lone stayer". ann stays alone at Main (antes 1 + 1) and beats the bots:
    she takes the whole pot of 6; when Alpha beats her, all 6 are discarded and she has
    lost both antes."""
    cards = {"ann": "R10 B9", "Alpha": "G1 Y2", "Beta": "G2 Y3"}
    s = deal(fresh(), "Main", cards, "R1 R2 R3 R4 R6")
    s = play_out(stay(s, {"ann": "stay", "dan": "stay", "eve": "stay"}), "Main")
    sd = s["tables"]["Main"]["showdown"]
    assert sd["pots"] == [{"amount": 6, "eligible": ["ann", "Alpha", "Beta"], "winners": ["ann"]}]
    assert sd["won"] == {"ann": 6} and sd["returned"] == {} and s["chips"]["ann"] == 24
    s = deal(fresh(), "Main", cards | {"Alpha": "R10 R11"}, "R1 R2 R3 R4 R6")
    s = play_out(stay(s, {"ann": "stay", "dan": "stay", "eve": "stay"}), "Main")
    sd = s["tables"]["Main"]["showdown"]
    assert sd["won"] == {} and sd["returned"] == {} and sd["discarded"] == 6 and s["chips"]["ann"] == 18
    assert not [t for t in s["transfers"] if t["from"] == "pot-main" and t["to"] == "ann"]


def test_ruling_11_pots_a_folded_players_chips_above_an_all_in_level_go_to_the_bots() -> None:
    """Review case (seed 9, hand 15, Main): bob holds 2 and antes them all (all in); eve
    antes 3 and folds. eve's third chip lies above bob's level: it belongs to the pot of
    those who matched it (nobody) and the bots, so it is discarded; bob's pot is 6 (his 2,
    eve's 2, the bots' 2) and he wins it: 6, not 7."""
    s = fresh(main=("bob", "eve"), lost=("ann", "cat", "dan", "fay"), chips={"bob": 2}, hand=15)
    s = deal(s, "Main", {"bob": "R9 B11", "eve": "Y2 B3", "Alpha": "G1 Y2", "Beta": "G2 Y3"}, "R1 R2 R3 R4 R6")
    s = stay(s, {"bob": "stay", "ann": "stay", "cat": "stay", "dan": "stay"})  # eve folds
    assert s["tables"]["Main"]["contrib"] == {"bob": 2, "eve": 3, "Alpha": 1, "Beta": 1}
    s = play_out(s, "Main")
    sd = s["tables"]["Main"]["showdown"]
    assert [(p["amount"], p["eligible"], p["winners"]) for p in sd["pots"]] == [
        (6, ["bob", "Alpha", "Beta"], ["bob"]),
        (1, ["Alpha", "Beta"], ["Beta"]),
    ]
    assert sd["won"] == {"bob": 6} and sd["discarded"] == 1 and s["chips"]["bob"] == 6


def test_ruling_11_pots_a_bet_nobody_called_goes_back_and_only_that() -> None:
    """ann bets 5 and everyone folds: her 5 go back ("Only a bet nobody called goes back to
    its bettor"); the antes (2 from each of the three, the bots' 2) stay in the pot she
    then contests with the bots."""
    s = fresh()
    s = deal(s, "Main", {"ann": "R10 B9", "bob": "Y2 B3", "cat": "Y4 G5", "Alpha": "G1 Y2", "Beta": "G2 Y3"},
             "R1 R2 R3 R4 R6 R7 R8")  # fmt: skip
    s = stay(s, {p: "stay" for p in PLAYERS})
    s = bet(s, "ann", "bet", amount=5)
    s = bet(s, "bob", "fold")
    s = bet(s, "cat", "fold")
    s = play_out(s, "Main")
    sd = s["tables"]["Main"]["showdown"]
    assert sd["returned"] == {"ann": 5} and sd["pots"] == [
        {"amount": 8, "eligible": ["ann", "Alpha", "Beta"], "winners": ["ann"]}
    ]
    assert s["chips"]["ann"] == 20 - 2 - 5 + 5 + 8


# --------------------------------------------------------------------------- the two tables


def test_ruling_19_the_two_tables_move_independently() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    lost = table_step(s, "Lost")
    assert lost.key == "h1-lost-bet1-1" and table_step(s, "Main").key == "h1-main-bet1-1"
    s2 = bet(s, "ann", "bet", amount=2)
    assert table_step(s2, "Lost") == lost and s2["tables"]["Lost"] == s["tables"]["Lost"]
    s3 = G.apply_timeout(s2, "h1-main-bet1-2")  # bob times out facing a bet: fold
    assert table_step(s3, "Lost") == lost and s3["tables"]["Main"]["folded"] == ["bob"]
    s4 = G.apply_timeout(s3, lost.key)  # dan checks (free)
    assert table_step(s4, "Main") == table_step(s3, "Main")
    assert s4["tables"]["Lost"]["rounds"][0]["actions"][0]["action"] == "check"


def test_ruling_19_the_waiting_step_lasts_until_the_other_table_finishes() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    s = play_out(s, "Main")
    steps = G.steps(s)
    assert [st.key for st in steps] == ["h1-lost-bet1-1", "h1-main-done"]
    assert G.step(s) == steps[0]
    with pytest.raises(GameError):
        G.apply_timeout(s, "h1-main-done")
    assert G.audience(s, steps[1]) == ("ann", "bob", "cat")
    assert G.audience(s, steps[0]) == ("dan", "eve", "fay")
    s = play_out(s, "Lost")
    assert [st.key for st in G.steps(s)] == ["h2-stay"] and s["hand"] == 2


def test_ruling_19_apply_timeout_needs_the_key_when_several_steps_are_open() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    with pytest.raises(GameError):
        G.apply_timeout(s)
    with pytest.raises(GameError):
        G.apply_timeout(s, "h1-stay")
    single = fresh()
    assert G.apply_timeout(single)["hand"] == 2  # the only timed step: all fold, hand 1 plays itself out


# --------------------------------------------------------------------------- timeouts


def test_ruling_19_a_betting_turn_times_out_to_a_check_when_free_else_a_fold() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    s = G.apply_timeout(s, "h1-main-bet1-1")
    entry = s["tables"]["Main"]["rounds"][0]["actions"][0]
    assert (entry["player"], entry["action"], entry["timeout"]) == ("ann", "check", True)
    s = bet(s, "bob", "bet", amount=1)
    s = G.apply_timeout(s, "h1-main-bet1-3")
    entry = s["tables"]["Main"]["rounds"][0]["actions"][2]
    assert (entry["player"], entry["action"], entry["timeout"]) == ("cat", "fold", True)
    assert s["sets"]["cat"] == "Main"


def test_ruling_10_a_missed_action_turn_folds_without_moving_the_set() -> None:
    s = action_start("R9 B3 Y7 G8")
    s = G.apply_timeout(s, "h1-main-act-1")
    t = s["tables"]["Main"]
    assert t["folded"] == ["ann"] and t["actions"][0]["action"] == "fold" and t["actions"][0]["timeout"]
    assert t["status"] == "done" and "ann" not in t["showdown"]["hands"]
    s = play_out(s, "Lost")
    assert s["sets"]["ann"] == "Main" and s["seats"]["ann"] == 1


def test_ruling_1_breaks_after_hands_5_and_10() -> None:
    s = timeout_all(fresh(), 5)
    assert s["phase"] == "break"
    (step,) = G.steps(s)
    assert (step.key, step.kind, step.players, step.title) == ("break-5", "break", (), "Break after hand 5")
    assert G.awaiting(s) == () and G.form(s, "ann") == "" and G.sample_moves(s, "ann", random.Random(1)) == []
    s = G.apply_timeout(s, "break-5")
    assert s["hand"] == 6 and [st.key for st in G.steps(s)] == ["h6-stay"]
    s = timeout_all(s, 5)
    assert [st.key for st in G.steps(s)] == ["break-10"]


# --------------------------------------------------------------------------- elimination and the end


def test_ruling_14_everyone_timing_out_runs_dry_in_hand_14_and_the_lots_decide() -> None:
    """Every stay step times out: everyone folds every hand. 20 - 7 x 1 - 6 x 2 = 1 chip
    each before hand 14; its ante of 3 takes the last chip and the fold leaves everyone at
    0 at once: the hands end; all tied all the way back, the lots decide."""
    s = timeout_all(fresh(), 14)
    assert s["phase"] == "over" and s["hand"] == 14
    assert [e["hand"] for e in s["eliminated"]] == [14] * 6 and len({e["batch"] for e in s["eliminated"]}) == 1
    winner = rng(1, "lot", "winner").choice(sorted(PLAYERS))
    ec = rng(1, "lot", "ec").choice(sorted(p for p in PLAYERS if p != winner))
    assert (s["final"]["winner"], s["final"]["ec"]) == (winner, ec)
    assert s["final"]["how"] == {"winner": "lot", "ec": "first to 0, lot"}
    assert G.steps(s) == () and G.result(s).ranking[0] == winner and G.result(s).ranking[-1] == ec
    # all tied all the way back: each place above the EC is a lot of its own, worst first
    left = sorted(p for p in PLAYERS if p not in (winner, ec))
    expected = [ec]
    for place in (5, 4, 3, 2):
        expected.append(rng(1, "lot", f"place-{place}").choice(left) if len(left) > 1 else left[0])
        left.remove(expected[-1])
    assert G.result(s).ranking == [winner, *reversed(expected)]


def test_ruling_12_elimination_at_0_chips_and_the_ec_is_the_first_to_reach_0() -> None:
    """cat holds 1: the ante takes it and her fold leaves her at 0 in hand 1; dan holds 2:
    at 0 in hand 2. The others run dry in hand 14 together."""
    s = fresh(chips={"cat": 1, "dan": 2})
    s = G.apply_timeout(s, "h1-stay")  # all fold: both tables play out their bots; hand 2 is dealt
    assert [e["player"] for e in s["eliminated"]] == ["cat"] and s["eliminated"][0]["hand"] == 1
    assert s["hand"] == 2
    s = timeout_all(s, 1)
    assert [(e["player"], e["hand"]) for e in s["eliminated"]] == [("cat", 1), ("dan", 2)]
    assert s["sets"]["cat"] is None and "cat" not in G.steps(s)[0].players
    assert "left the match" in refused(s, "cat", {"stay": "stay"}).reason
    assert "left the match" in refused(s, "cat", {"guess": {"bot": "Alpha", "rule": "odd-hitter"}}).reason
    s = timeout_all(s, 20)
    assert s["final"]["ec"] == "cat" and s["final"]["how"]["ec"] == "first to 0"
    assert s["phase"] == "over" and s["hand"] == 14
    result = G.result(s)
    assert result.scores["ec"] == "cat" and result.signals == []
    assert result.scores["eliminated"][:2] == [{"player": "cat", "hand": 1}, {"player": "dan", "hand": 2}]
    # cat (first to 0) ranks last, dan (second to 0) next to last
    assert result.ranking[-2:] == ["dan", "cat"]


def test_ruling_12_an_all_in_player_at_0_chips_stays_in_until_the_showdown() -> None:
    """ann holds 2: both antes leave her at 0, all in; she is still in the hand; her 5 loses
    to bob's 20 at the showdown, and she leaves the match then. Lost all folded at the stay,
    so the hand is over: the next stay step's mail tells her (ruling 13)."""
    s = fresh(chips={"ann": 2})
    s = deal(s, "Main", {"ann": "Y2 G3", "bob": "Y9 G11", "cat": "B2 R4", "Alpha": "G1 B5", "Beta": "Y1 B3"},
             "R1 R2 R3 R5 R6 R7 R8")  # fmt: skip
    s = stay(s, {"ann": "stay", "bob": "stay", "cat": "stay"})
    assert s["chips"]["ann"] == 0 and s["eliminated"] == []
    s = checks_round(s, "Main")  # bob and cat: ann is all in (and bob, seat 2, starts)
    assert s["tables"]["Main"]["action_order"][:3] == ["bob", "cat", "ann"]
    s = news(s, "Main")
    assert s["eliminated"] == [] and s["tables"]["Main"]["status"] == "bet"
    s = play_out(s, "Main")
    assert [(e["player"], e["hand"], e["table"], e["told"]) for e in s["eliminated"]] == [("ann", 1, "Main", "h2-stay")]
    (step,) = G.steps(s)
    assert "ann" not in step.players and "ann" in G.audience(s, step)
    assert s["sets"]["ann"] is None and s["seats"]["ann"] is None


def test_ruling_12_a_missed_action_turn_at_0_chips_leaves_the_match_at_once() -> None:
    s = fresh(chips={"ann": 1})
    s = stay(s, {"ann": "stay", "dan": "stay", "eve": "stay"})  # ann alone at Main, all in
    assert table_step(s, "Main").key == "h1-main-act-1"
    s = G.apply_timeout(s, "h1-main-act-1")
    assert [(e["player"], e["told"]) for e in s["eliminated"]] == [("ann", "h1-main-done")]


def test_ruling_14_the_match_ends_when_at_most_one_player_has_chips() -> None:
    """Five players hold 1 chip: hand 1's ante takes it and the stay timeout folds them at
    0; ann alone is left: the hands are over after hand 1."""
    s = fresh(chips={p: 1 for p in PLAYERS if p != "ann"})
    s = G.apply_timeout(s, "h1-stay")
    assert s["phase"] == "over" and s["hand"] == 1 and len(s["history"]) == 1
    assert s["final"]["winner"] == "ann"
    assert s["final"]["ec"] == rng(1, "lot", "ec").choice(sorted(p for p in PLAYERS if p != "ann"))
    result = G.result(s)
    assert result.reason.startswith("Ann Lee wins with 19 chips after hand 1, when at most one player was left with")
    assert G.steps(s) == () and result.ranking[0] == "ann" and result.ranking[-1] == s["final"]["ec"]


def hand_15(chips: dict[str, int], history: list[dict[str, int]]) -> State:
    """Hand 15 dealt with ``chips`` (before its ante) and ``history`` as the chips after
    hands 1..14; every deadline passes: everyone folds and loses the ante of 3."""
    s = fresh(chips=chips, hand=15)
    s["chips_after"] = [{p: 20 for p in PLAYERS}, *history]
    return timeout_all(s, 1)


def test_after_hand_15_the_most_chips_wins_and_the_fewest_is_the_ec() -> None:
    chips = {"ann": 30, "bob": 25, "cat": 20, "dan": 15, "eve": 10, "fay": 20}
    s = hand_15(chips, [dict(chips)] * 14)
    assert s["hand"] == 15 and s["phase"] == "over"
    assert s["final"] == {"winner": "ann", "ec": "eve", "how": {"winner": "chips", "ec": "chips"}, "hands": 15}
    # the others by their chips; cat and fay, tied all the way back, by a lot of its own for
    # the lower place (4th), as the EC's lot picks the lower of equals
    lower = rng(1, "lot", "place-4").choice(["cat", "fay"])
    upper = "fay" if lower == "cat" else "cat"
    assert G.result(s).ranking == ["ann", "bob", upper, lower, "dan", "eve"]


def test_ruling_14_ties_for_most_and_fewest_go_to_the_chips_after_earlier_hands() -> None:
    chips = {"ann": 30, "bob": 30, "cat": 20, "dan": 10, "eve": 10, "fay": 20}
    h13 = dict(chips, ann=25, bob=26, dan=11, eve=11)  # bob was ahead after hand 13
    h12 = dict(h13, dan=9, eve=12)  # dan was behind after hand 12
    s = hand_15(chips, [dict(chips)] * 11 + [h12, h13, dict(chips)])
    assert (s["final"]["winner"], s["final"]["ec"]) == ("bob", "dan")
    assert s["final"]["how"] == {"winner": "earlier hands", "ec": "earlier hands"}
    # the same ties place the others: ann second (behind bob on earlier hands only), eve fifth
    assert G.result(s).ranking[:2] == ["bob", "ann"] and G.result(s).ranking[-2:] == ["eve", "dan"]


def test_ruling_14_the_last_players_at_0_in_the_same_hand_the_most_chips_before_it_wins() -> None:
    """RULINGS ("MatchJack"): "If the last players reach 0 in the same hand, the one with the
    most chips before that hand wins (then the tie rule above)." Hand 8 (ante 2): ann holds 2,
    everyone else 1; the antes take every chip and all six leave at 0 in one batch. ann,
    with the most chips before the hand, wins; the EC is one of the others (first to 0, all
    together: the fewest chips before, then a lot), never ann."""
    chips = {"ann": 2, "bob": 1, "cat": 1, "dan": 1, "eve": 1, "fay": 1}
    s = fresh(chips=chips, hand=8)
    s["chips_after"] = [{p: 20 for p in PLAYERS}] * 7 + [dict(chips)]
    s = G.apply_timeout(s, "h8-stay")
    assert s["phase"] == "over" and all(n == 0 for n in s["chips"].values())
    assert {e["batch"] for e in s["eliminated"]} == {1} and len(s["eliminated"]) == 6
    assert s["final"]["winner"] == "ann" and s["final"]["how"]["winner"] == "earlier hands"
    assert s["final"]["ec"] != "ann" and s["final"]["how"]["ec"].startswith("first to 0")


def test_ruling_14_a_tie_all_the_way_back_goes_to_a_lot_from_the_seed() -> None:
    chips = {"ann": 30, "bob": 30, "cat": 20, "dan": 10, "eve": 10, "fay": 20}
    s = hand_15(chips, [dict(chips)] * 14)
    assert s["final"]["winner"] == rng(1, "lot", "winner").choice(["ann", "bob"])
    assert s["final"]["ec"] == rng(1, "lot", "ec").choice(["dan", "eve"])
    assert s["final"]["how"] == {"winner": "lot", "ec": "lot"}


def test_ruling_15_the_match_ends_with_the_last_hand_and_its_result_names_the_ec() -> None:
    """No nomination in the match (the season's step): right after the last hand the match
    is over, its result names the winner and the EC and ranks the six."""
    chips = {"ann": 30, "bob": 25, "cat": 20, "dan": 15, "eve": 10, "fay": 20}
    s = hand_15(chips, [dict(chips)] * 14)
    assert s["phase"] == "over" and G.steps(s) == () and G.step(s) is None and G.awaiting(s) == ()
    assert all(G.form(s, p) == "" for p in PLAYERS)
    assert G.audience(s) == tuple(PLAYERS)
    with pytest.raises(GameError):
        G.apply_timeout(s)
    result = G.result(s)
    assert result.outcome == {p: "win" if p == "ann" else "loss" for p in PLAYERS}
    assert result.victory_points == {p: 1.0 if p == "ann" else 0.0 for p in PLAYERS}
    assert result.awards == {"cols": {"ann": 2}}
    assert result.signals == []
    assert result.reason == (
        "Ann Lee wins with 27 chips after hand 15; Eve Holt is the EC (elimination candidate) and will nominate "
        "the DMO (death-match opponent)."
    )
    assert result.scores["winner"] == "ann" and result.scores["ec"] == "eve" and "dmo" not in result.scores
    assert result.ranking[0] == result.scores["winner"] and result.ranking[-1] == result.scores["ec"]
    assert sorted(result.ranking) == sorted(PLAYERS)
    assert "nomination" not in s and "nomination" not in G.view(s, None) and "next" not in str(result)
    assert G.view(s, None)["rules"] == s["rules"]  # revealed at the end
    assert G.standings(s)[-1].endswith("; winner Ann Lee, EC Eve Holt")  # no DMO: the season names one


def test_ruling_15_nominate_is_no_command_of_the_match() -> None:
    chips = {"ann": 30, "bob": 25, "cat": 20, "dan": 15, "eve": 10, "fay": 20}
    over = hand_15(chips, [dict(chips)] * 14)
    assert "not yourself" not in refused(over, "eve", {"nominate": "cat"}).reason
    assert "The match is over" in refused(over, "eve", {"nominate": "cat"}).reason
    running = fresh()
    assert "A move is one command" in refused(running, "ann", {"nominate": "cat"}).reason
    parsed = G.parse(running, "ann", "NOMINATE Cat Núñez\nSTAY")
    assert parsed.moves == [{"stay": "stay"}] and parsed.ignored == ["NOMINATE Cat Núñez"]


def ranking_of(s: State) -> list[str]:
    result = G.result(s)
    assert result is not None and result.ranking == engine._ranking(s)
    assert sorted(result.ranking) == sorted(PLAYERS)
    assert result.ranking[0] == result.scores["winner"] == s["final"]["winner"]
    assert result.ranking[-1] == result.scores["ec"] == s["final"]["ec"]
    return result.ranking


def test_ruling_15_the_ranking_puts_those_at_0_last_an_earlier_batch_lower() -> None:
    """cat leaves at 0 in hand 1 (batch 1); dan and eve in hand 2 together (batch 2), eve
    with fewer chips after hand 1; ann, bob and fay keep chips to hand 15, bob and fay
    with the same chips after every hand but hand 14. The ranking: ann (most chips), then
    fay and bob by chips and earlier hands, then the later batch above the earlier one,
    within a batch the fewer chips after earlier hands lower: dan, eve, then cat (the EC)."""
    s = fresh(chips={"cat": 1})
    s = G.apply_timeout(s, "h1-stay")  # everyone folds: cat's ante took her last chip
    assert [(e["player"], e["batch"]) for e in s["eliminated"]] == [("cat", 1)]
    s["chips"].update(dan=0, eve=0)  # as if their ante and a lost pot had taken everything
    s["chips_after"][-1].update(dan=3, eve=2)
    engine._eliminate(s, ["dan", "eve"])
    assert [(e["player"], e["batch"]) for e in s["eliminated"]][1:] == [("dan", 2), ("eve", 2)]
    s["chips"].update(ann=30, bob=12, fay=12)
    history = [{**s["chips_after"][-1], "ann": 30, "bob": 12, "fay": 12} for _ in range(13)]
    history[-1] = {**history[-1], "bob": 11, "fay": 13}  # after hand 14: fay ahead
    s["chips_after"] += history
    s["hand"] = 14
    engine._end_match(s)
    assert ranking_of(s) == ["ann", "fay", "bob", "dan", "eve", "cat"]
    assert s["final"]["how"] == {"winner": "chips", "ec": "first to 0"}


def test_ruling_15_the_ranking_agrees_with_the_ec_rule_when_the_ec_is_left_out() -> None:
    """ranking[-2] is whom the EC rule names were the EC left out, and so on up: each place
    is the EC of the players ranked above it (the winner aside). Every deadline passes
    (everyone folds every hand: 25 chips of antes over 15 hands), from chips drawn per seed,
    so some leave at 0 (in batches, some together) and some keep chips, with ties."""
    for seed in range(12):
        rnd = random.Random(seed)
        chips = {p: rnd.choice([2, 2, 3, 9, 20, 26, 26, 30, 40]) for p in PLAYERS}
        s = timeout_all(fresh(seed, chips=chips), 15)
        ranking = ranking_of(s)
        for k in range(len(ranking), 1, -1):
            candidates = ranking[1:k]  # the players the rule chooses among, once the k-th is left
            gone = [e for e in s["eliminated"] if e["player"] in candidates]
            if gone:  # the first to 0 ...
                first = min(e["batch"] for e in gone)
                assert ranking[k - 1] in {e["player"] for e in gone if e["batch"] == first}, (seed, k)
            else:  # ... else the fewest chips
                assert s["chips"][ranking[k - 1]] == min(s["chips"][p] for p in candidates), (seed, k)
        out = {e["player"] for e in s["eliminated"]} - {ranking[0]}
        assert set(ranking[len(ranking) - len(out) :]) == out  # those at 0 below all the others


# --------------------------------------------------------------------------- guesses


def guessed(s: State, player: str, bot: str, rule: str) -> State:
    return ok(s, player, {"guess": {"bot": bot, "rule": rule}})


def test_ruling_16_a_correct_guess_pays_3_garnets_and_6_chips() -> None:
    s = fresh(rules={"Alpha": "odd-hitter"}, garnets={"ann": 1})
    s = guessed(s, "ann", "Alpha", "odd-hitter")
    assert s["chips"]["ann"] == 25 and s["garnets"]["ann"] == 4
    pay = [t for t in s["transfers"] if t["to"] == "ann"]
    assert [(t["from"], t["amount"], t.get("currency"), t["reason"]) for t in pay] == [
        ("SEASON", 3, "garnets", "a correct guess"),
        ("bank", 6, MATCH_CHIPS, "a correct guess"),
    ]
    assert G.view(s, "ann")["guesses"] == {
        "ann": [{"hand": 1, "bot": "Alpha", "rule": "odd-hitter", "right": True, "paid": True}]
    }
    assert G.view(s, None)["rewards"] == [{"player": "ann", "hand": 1, "chips": 6}]


def test_ruling_16_the_answer_is_told_to_the_guesser_only() -> None:
    s = guessed(fresh(rules={"Alpha": "odd-hitter"}), "ann", "Alpha", "low-drawer")
    assert G.view(s, "ann")["guesses"]["ann"][0]["right"] is False
    for viewer in ("bob", "dan", None):
        view = G.view(s, viewer)
        assert "low-drawer" not in str(view["guesses"]) and view["rules"] is None
        assert view["rewards"] == []
    assert "low-drawer" not in str(G.standings(s))


def test_ruling_16_one_guess_per_hand() -> None:
    s = guessed(fresh(), "ann", "Beta", "odd-hitter")
    assert "already guessed in hand 1" in refused(s, "ann", {"guess": {"bot": "Alpha", "rule": "low-drawer"}}).reason
    s = timeout_all(s, 1)
    s = guessed(s, "ann", "Alpha", "low-drawer")
    assert [g["hand"] for g in s["guesses"]["ann"]] == [1, 2]


def test_ruling_16_each_player_is_paid_once_per_bot() -> None:
    s = fresh(rules={"Gamma": "bust-drawer"})
    s = guessed(s, "bob", "Gamma", "bust-drawer")
    s = guessed(s, "cat", "gamma", "BUST-DRAWER")  # another player: paid too
    s = timeout_all(s, 1)
    s = guessed(s, "bob", "Gamma", "bust-drawer")  # right again, not paid again
    assert s["guesses"]["bob"][1] == {"hand": 2, "bot": "Gamma", "rule": "bust-drawer", "right": True, "paid": False}
    assert len(s["rewards"]) == 2 and net(s, "bank") == -12


def test_ruling_16_a_guess_during_a_break_counts_for_the_next_hand() -> None:
    s = timeout_all(fresh(), 5)
    assert s["phase"] == "break"
    s = guessed(s, "dan", "Delta", "never-moves")
    assert s["guesses"]["dan"][0]["hand"] == 6
    s = G.apply_timeout(s, "break-5")
    assert "already guessed in hand 6" in refused(s, "dan", {"guess": {"bot": "Alpha", "rule": "never-moves"}}).reason


def test_ruling_16_guesses_close_when_the_hands_are_over() -> None:
    chips = {"ann": 30, "bob": 25, "cat": 20, "dan": 15, "eve": 10, "fay": 20}
    s = hand_15(chips, [dict(chips)] * 14)
    assert "The match is over" in refused(s, "bob", {"guess": {"bot": "Alpha", "rule": "never-moves"}}).reason


def test_ruling_16_a_guess_is_accepted_outside_the_players_step() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    assert to_act(s, "Main") == "ann"
    s = guessed(s, "cat", "Alpha", "never-moves")  # not cat's turn: a guess is still taken
    assert s["chips"]["cat"] == 24
    assert "names a bot" in refused(s, "dan", {"guess": {"bot": "Zeta", "rule": "never-moves"}}).reason


def test_ruling_16_an_all_in_player_stays_all_in_after_a_reward() -> None:
    s = fresh(chips={"ann": 1}, rules={"Beta": "odd-hitter"})
    s = stay(s, {"ann": "stay", "bob": "stay", "cat": "stay"})
    s = guessed(s, "ann", "Beta", "odd-hitter")
    assert s["chips"]["ann"] == 6 and "ann" in s["tables"]["Main"]["all_in"]
    s = checks_round(s, "Main")
    assert "ann" not in [a["player"] for a in s["tables"]["Main"]["rounds"][0]["actions"]]


# --------------------------------------------------------------------------- views and mail audience


def test_ruling_17_a_player_sees_their_table_and_only_the_public_facts_of_the_other() -> None:
    s = deal(fresh(), "Main", {"ann": "R5 B6", "bob": "Y3 G4"})
    view = G.view(s, "bob")
    main, lost = view["tables"]["Main"], view["tables"]["Lost"]
    assert main["cards"]["ann"] == [{"card": "R5", "up": True}, {"card": None, "up": False}]
    assert main["cards"]["bob"] == [{"card": "Y3", "up": True}, {"card": "G4", "up": False}]
    assert main["cards"]["Alpha"][1]["card"] is None and main["cards"]["Alpha"][0]["card"]
    assert lost["cards"] is None and view["your_cards"] == [["Y3", True], ["G4", False]]
    public = G.view(s, None)
    assert public["tables"]["Main"]["cards"] is None and public["rules"] is None
    assert public["stacks"] == {p: 19 for p in PLAYERS}
    assert "B6" not in str(public) and "G4" not in str(view["tables"]["Lost"])


def test_ruling_13_audience() -> None:
    s = fresh(chips={"cat": 1})
    assert G.audience(s) == tuple(PLAYERS)
    s = stay(s, {"ann": "stay", "bob": "stay", "dan": "stay", "eve": "stay"})  # cat folds at 0: out
    main = table_step(s, "Main")
    assert G.audience(s, main) == ("ann", "bob", "cat")  # cat: the mail that tells her
    assert s["eliminated"][0]["told"] == main.key
    s = bet(s, "ann", "check")
    assert G.audience(s, table_step(s, "Main")) == ("ann", "bob")  # nothing more for cat
    assert G.audience(s, table_step(s, "Lost")) == ("dan", "eve", "fay")


def test_ruling_17_standings_are_public() -> None:
    s = ok(fresh(), "ann", {"stay": "fold"})
    lines = G.standings(s)
    assert lines[0] == "Ann Lee (ann): 19 chips; Main set, seat 1" and len(lines) == 7
    assert lines[-1] == "hands finished: 0 of 15"
    s = stay(s, {"bob": "stay", "cat": "stay"})
    assert G.standings(s)[0].endswith("(in the hall this hand)")


def test_ruling_18_forms_fill_in_the_open_step() -> None:
    s = fresh(garnets={"bob": 5})
    assert G.form(s, "ann") == "STAY\nStep: Hand 1, stay or fold\n"
    s = ok(s, "bob", {"stay": "stayset"})
    assert G.form(s, "bob") == "FOLD STAYSET\nStep: Hand 1, stay or fold\n"
    s = stay(s, {p: "stay" for p in PLAYERS if p != "bob"})
    assert G.form(s, "ann") == "CHECK\nStep: Hand 1, Main table, betting round 1, turn 1\n"
    assert G.form(s, "bob") == "" and G.form(s, "cat") == ""
    s = bet(s, "ann", "bet", amount=2)
    assert G.form(s, "cat") == "CALL\nStep: Hand 1, Main table, betting round 1, turn 2\n"
    s = bet(s, "cat", "call")
    assert G.form(s, "ann") == "NEW\nStep: Hand 1, Main table, action of seat 1\n"


def test_ruling_18_a_reply_to_an_old_step_is_refused_at_no_cost() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    old = G.parse(s, "ann", G.form(s, "ann")).moves[0]
    s = bet(s, "ann", "check")
    s = bet(s, "bob", "check")
    s = bet(s, "cat", "check")  # the action phase: ann's turn again
    applied = refused(s, "ann", old)
    assert "earlier step" in applied.reason and "Hand 1, Main table, action of seat 1" in applied.reason


def test_states_and_views_are_json_and_the_given_state_is_never_changed() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    before = json.dumps(s, sort_keys=True)
    for p in [*PLAYERS, None]:
        view = G.view(s, p)
        assert json.loads(json.dumps(view)) == view
    G.apply_move(s, "ann", {"bet": "bet", "amount": 3})
    G.apply_timeout(s, "h1-lost-bet1-1")
    G.hidden_variants(s, "bob", random.Random(2))
    assert json.dumps(s, sort_keys=True) == before
    assert json.loads(json.dumps(s)) == s


def test_names_are_read_from_the_options() -> None:
    s = fresh()
    assert s["names"] == NAMES
    assert G.initial_state(1, PLAYERS, {})["names"] == {p: p for p in PLAYERS}
    with pytest.raises(GameError):
        G.initial_state(1, PLAYERS[:5], {})


# --------------------------------------------------------------------------- ruling 21: a forfeit


def forfeit(s: State, player: str) -> State:
    """``player`` forfeits; the state given is never changed, and the same forfeit gives the same state."""
    before = json.dumps(s, sort_keys=True)
    new = G.forfeit(s, player)
    assert json.dumps(s, sort_keys=True) == before, "forfeit changed the state it was given"
    assert G.forfeit(s, player) == new and json.loads(json.dumps(new)) == new
    return new


def test_ruling_21_a_forfeit_in_the_stay_step_drops_the_choice_and_leaves_the_ante_in_the_pot() -> None:
    s = ok(fresh(), "ann", {"stay": "stay"})
    s = forfeit(s, "ann")
    assert s["eliminated"] == [
        {"player": "ann", "hand": 1, "table": "Main", "batch": 1, "told": "forfeit", "forfeit": True}
    ]
    (step,) = G.steps(s)
    assert "ann" not in step.players and "ann" not in G.awaiting(s) and "ann" not in s["stay"]
    assert G.sample_moves(s, "ann", random.Random(1)) == [] and G.form(s, "ann") == ""
    assert "ann" not in G.audience(s, step)
    assert "forfeited the match" in refused(s, "ann", {"stay": "fold"}).reason
    assert "forfeited the match" in refused(s, "ann", {"guess": {"bot": "Alpha", "rule": "odd-hitter"}}).reason
    s = stay(s, {"bob": "stay", "cat": "stay", "dan": "stay", "eve": "stay"})
    t = s["tables"]["Main"]
    assert t["stay"]["ann"] == {"choice": "forfeited", "timeout": False} and t["hall"] == ["ann"]
    assert t["stayed"] == ["bob", "cat"] and t["moving"] == []
    assert t["contrib"]["ann"] == 1 and s["chips"]["ann"] == 19  # the ante stays in the pot; the rest is kept
    s = play_out(play_out(s, "Main"), "Lost")
    record = s["history"][0]
    assert record["forfeited"] == ["ann"] and record["eliminated"] == [] and record["tables"]["Main"]["folded"] == []
    assert s["sets"]["ann"] is None and s["seats"]["ann"] is None and s["chips"]["ann"] == 19
    assert "ann" not in s["tables"]["Main"]["dealt"] + s["tables"]["Lost"]["dealt"]
    assert G.standings(s)[0] == "Ann Lee (ann): 19 chips; forfeited the match in hand 1"
    assert G.view(s, None)["eliminated"] == [{"player": "ann", "hand": 1, "forfeit": True}]


def test_ruling_21_a_forfeit_on_a_betting_turn_passes_the_turn_as_a_fold() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    s = bet(s, "ann", "bet", amount=2)
    assert table_step(s, "Main").key == "h1-main-bet1-2" and to_act(s, "Main") == "bob"
    s = forfeit(s, "bob")
    rnd = s["tables"]["Main"]["rounds"][0]
    assert rnd["actions"][-1] == {
        "player": "bob",
        "command": "FORFEIT",
        "action": "fold",
        "put": 0,
        "total": 0,
        "all_in": False,
        "timeout": False,
        "forfeit": True,
    }
    assert table_step(s, "Main").key == "h1-main-bet1-3" and to_act(s, "Main") == "cat"
    assert s["tables"]["Main"]["folded"] == ["bob"] and s["tables"]["Main"]["contrib"]["bob"] == 2


def test_ruling_21_a_forfeit_out_of_turn_leaves_the_open_turn_open_or_ends_the_round() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    s = forfeit(s, "cat")  # ann is to act: her step stays open as it was
    rnd = s["tables"]["Main"]["rounds"][0]
    assert table_step(s, "Main").key == "h1-main-bet1-1" and rnd["to_act"] == "ann"
    assert rnd["folded"] == ["cat"] and rnd["actions"][-1]["command"] == "FORFEIT"
    s = bet(s, "ann", "check")
    s = bet(s, "bob", "check")  # cat, out, is not asked: the round is over
    assert s["tables"]["Main"]["status"] == "action" and s["tables"]["Main"]["action_order"][:2] == ["ann", "bob"]
    # at Lost, two of three forfeit out of turn: the round is over, one human left
    s = forfeit(forfeit(s, "eve"), "fay")
    t = s["tables"]["Lost"]
    assert t["rounds"][0]["end"] == "one-left" and t["status"] == "action" and to_act(s, "Lost") == "dan"


def test_ruling_21_a_forfeit_in_the_action_phase_passes_or_skips_the_turn() -> None:
    s = stay(fresh(), {p: "stay" for p in PLAYERS})
    s = checks_round(s, "Main")
    assert s["tables"]["Main"]["action_order"] == ["ann", "bob", "cat", "Alpha", "Beta"]
    s = forfeit(s, "cat")  # a turn still to come: skipped
    assert s["tables"]["Main"]["action_order"] == ["ann", "bob", "Alpha", "Beta"]
    s = forfeit(s, "ann")  # her turn: it passes
    t = s["tables"]["Main"]
    assert t["actions"][-1]["who"] == "ann" and t["actions"][-1]["forfeit"] and t["actions"][-1]["action"] == "fold"
    assert to_act(s, "Main") == "bob" and table_step(s, "Main").key == "h1-main-act-2"
    s = act(s, "bob", "new")  # bob is alone: round 2 is skipped, the showdown follows
    t = s["tables"]["Main"]
    assert t["status"] == "done" and t["folded"] == ["cat", "ann"]
    assert "ann" not in t["showdown"]["hands"] and "cat" not in t["showdown"]["hands"]
    assert [e["player"] for e in s["eliminated"]] == ["cat", "ann"]


def test_ruling_21_a_forfeiter_ranks_as_one_who_reached_0_in_that_hand_and_never_wins() -> None:
    """cat reaches 0 in hand 1; in hand 2 ann, with the most chips, forfeits; the others play
    on. ann ranks below every player who never reached 0, above cat (who reached 0 first),
    and is never the winner."""
    s = fresh(chips={p: 60 for p in PLAYERS} | {"cat": 1, "ann": 100})
    s = G.apply_timeout(s, "h1-stay")  # all fold; cat is at 0
    assert [e["player"] for e in s["eliminated"]] == ["cat"] and s["hand"] == 2
    s = forfeit(s, "ann")
    s = timeout_all(s, 20)
    assert s["phase"] == "over" and s["hand"] == 15 and s["chips"]["ann"] == 98
    assert all(s["chips"][p] == 35 for p in ("bob", "dan", "eve", "fay"))
    result = G.result(s)
    assert result.ranking[-2:] == ["ann", "cat"] and s["final"]["winner"] != "ann"
    assert result.outcome["ann"] == "loss" and result.victory_points["ann"] == 0.0
    assert result.scores["eliminated"] == [
        {"player": "cat", "hand": 1},
        {"player": "ann", "hand": 2, "forfeit": True},
    ]
    assert result.reason.endswith("Ann Lee forfeited the match in hand 2.")


def test_ruling_21_a_forfeit_in_a_break_that_leaves_one_player_ends_the_match_at_once() -> None:
    """Four players hold 1 chip: hand 1's ante and the stay timeout leave them at 0; ann and
    bob play on to the break after hand 5, where bob forfeits: ann wins at once."""
    s = fresh(chips={p: 1 for p in PLAYERS if p not in ("ann", "bob")})
    s = G.apply_timeout(s, "h1-stay")
    assert len(s["eliminated"]) == 4 and s["hand"] == 2
    s = timeout_all(s, 4)
    assert s["phase"] == "break" and s["hand"] == 5
    s = forfeit(s, "bob")
    assert s["phase"] == "over" and G.steps(s) == () and s["final"]["winner"] == "ann"
    result = G.result(s)
    assert result.ranking[:2] == ["ann", "bob"] and result.outcome["bob"] == "loss"
    assert (
        result.reason.startswith("Ann Lee wins with ")
        and "when at most one player was left in the match" in result.reason
    )
    assert G.audience(s) == tuple(PLAYERS)


def test_ruling_21_the_last_player_in_a_hand_forfeits_and_the_hand_plays_out_at_once() -> None:
    """Four players fold at 0 in hand 1; ann and bob stay at Main. bob forfeits out of turn:
    ann plays on alone. Then ann, the last player in the match, forfeits: nobody is left to
    act, the bots play the table out, the hand ends and with it the match."""
    s = fresh(chips={p: 1 for p in PLAYERS if p not in ("ann", "bob")})
    s = stay(s, {"ann": "stay", "bob": "stay"})
    assert [st.players for st in G.steps(s) if not st.waiting] == [("ann",)]
    s = forfeit(s, "bob")  # bob, in the hand but not to act, leaves it: ann plays on
    assert G.result(s) is None and s["tables"]["Main"]["rounds"][0]["end"] == "one-left"
    s = forfeit(s, "ann")  # the last player still in the match: the hand plays out, the match ends
    assert s["phase"] == "over" and G.steps(s) == ()
    result = G.result(s)
    assert result.outcome["ann"] == "loss" and result.outcome["bob"] == "loss"
    assert result.ranking[0] not in ("ann", "bob")
    assert result.ranking[1:3] == ["ann", "bob"]  # later batches rank higher: ann after bob


def test_ruling_21_who_cannot_forfeit() -> None:
    s = fresh(chips={"cat": 1})
    with pytest.raises(GameError, match="not playing"):
        G.forfeit(s, "zed")
    s = G.apply_timeout(s, "h1-stay")
    with pytest.raises(GameError, match="already left the match"):
        G.forfeit(s, "cat")
    s = forfeit(s, "ann")
    with pytest.raises(GameError, match="already left the match"):
        G.forfeit(s, "ann")
    over = timeout_all(s, 20)
    with pytest.raises(GameError, match="over"):
        G.forfeit(over, "bob")
