"""The MatchJack mail templates, rendered on states played through the engine (with the
set-ups of ``test_matchjack_helpers``): every mail says what just happened (the deal, the
stay results, each bet and action, the showdown with every hand shown as
``hands.describe`` words it, the pots, the other table's public news, the last hand's
results at both tables, who left the match), what the reader may do now with the amounts,
by when, what a missed deadline does, and the form, whose command and Step line the
engine reads back to an accepted move; a player to act, waiting at the table, in the hall,
at the other table or out of the match each gets a mail that fits. No mail shows another
player's face-down card before the showdown, nor an undealt pile card; the answer to a
guess is in the guesser's mails only. The archive templates render every finished hand.

``python -m tests.games.test_matchjack_templates`` prints the example mails of
``docs/games/matchjack.md`` (a test checks that the page shows them as rendered).
"""

from __future__ import annotations

import itertools
import random
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment

from referee.archive.rounds import Round
from referee.archive.texts import round_text
from referee.games.base import State, open_steps
from referee.games.matchjack import hands
from referee.games.matchjack.engine import GAME as G
from referee.match import seals
from referee.render import render_mail
from tests.games.mail_context import DEADLINE, ENV, REPLY_TO, SERVICE_ENV, Mail, assert_counts_agree, flat, mail_context
from tests.games.test_matchjack_helpers import (
    NAMES,
    PLAYERS,
    act,
    deal,
    fresh,
    play_out,
    stay,
    timeout_all,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "games" / "matchjack.md"
BOTS = ("Alpha", "Beta", "Gamma", "Delta")
MAX_LINE = 78  # issue 20: no line over 78, prose wrapped at 72 (RFC 3676)
WRAP = 72
ABBREVIATIONS = {"EC": "elimination candidate", "DMO": "death-match opponent", "CoL": "certificate"}


# --------------------------------------------------------------------------- playing


def submit(state: State, player: str, text: str) -> State:
    """A mail, read by the game's own grammar, every move accepted."""
    for move in G.parse(state, player, text).moves:
        applied = G.apply_move(state, player, move)
        assert applied.accepted, applied.reason
        state = applied.state
    return state


def dealt() -> State:
    """Hand 1 dealt: Main ann bob cat (ann and cat with garnets), Lost dan eve fay; the
    cards and piles chosen; Alpha plays odd-hitter, Beta high-swapper."""
    s = fresh(1, garnets={"ann": 7, "cat": 5}, rules={"Alpha": "odd-hitter", "Beta": "high-swapper"})
    s = deal(
        s,
        "Main",
        {"ann": "R7 B6", "bob": "Y3 Y9", "cat": "G2 G5", "Alpha": "R1 R2", "Beta": "B4 Y5"},
        pile="Y8 R9 G11 B10 B1 B2 Y2 G1 R4",
    )
    return deal(
        s,
        "Lost",
        {"dan": "G6 Y4", "eve": "Y10 G9", "fay": "R3 R5", "Gamma": "G3 Y6", "Delta": "G10 B11"},
        pile="R11 B7 G7 B5 Y11 R6 B8",
    )


def hand_states() -> dict[str, State]:
    """One hand, step by step (see the comments)."""
    out: dict[str, State] = {"deal": dealt()}
    s = submit(out["deal"], "ann", "STAY\nStep: Hand 1, stay or fold")
    out["ann stays"] = s
    s = submit(s, "cat", "FOLD STAYSET")
    # the stay step closes: fay sent nothing (a fold, she moves to Main)
    s = stay(s, {"bob": "stay", "dan": "stay", "eve": "stay"})
    out["stay closed"] = s  # Main: ann to bet (seat 1 starts); Lost: dan to bet
    s = submit(s, "ann", "BET 2")
    out["bob to call"] = s
    s = submit(s, "bob", "CALL")
    out["ann to act"] = s  # Main: the action phase, Y8 turned up
    s = submit(s, "ann", "HIT")
    out["bob to act"] = s
    s = submit(s, "bob", "DRAW 2")
    out["round 2"] = s  # Alpha and Beta acted; Main: ann to bet, nothing to call
    s = submit(s, "ann", "CHECK")
    s = submit(s, "bob", "CHECK")
    out["main done"] = s  # Main's showdown; Lost still betting
    s = submit(s, "dan", "CHECK")
    s = submit(s, "eve", "CHECK")
    s = submit(s, "dan", "NEW")
    s = submit(s, "eve", "NEW")
    s = submit(s, "dan", "BET 3")
    out["eve to call"] = s
    s = submit(s, "eve", "FOLD")
    out["hand 2"] = s  # the hand is over: hand 2's stay step
    return out


@pytest.fixture(scope="module")
def hand() -> dict[str, State]:
    return hand_states()


def lost_first() -> State:
    """Hand 1: the Lost table has finished (everyone there folded) while Main bets."""
    s = stay(dealt(), {"ann": "stay", "bob": "stay"})
    assert s["tables"]["Lost"]["status"] == "done" and s["tables"]["Main"]["status"] == "bet"
    return s


def broke() -> tuple[State, State]:
    """Ann antes her last 2 chips (all in), loses the showdown and leaves the match: the
    state where her table waits, and hand 2's stay step."""
    s = fresh(2, chips={"ann": 2})
    s = deal(s, "Main", {"ann": "R2 B3", "bob": "Y10 G11", "cat": "G2 G5", "Alpha": "R1 R3", "Beta": "B4 Y5"})
    s = stay(s, {"ann": "stay", "bob": "stay", "dan": "stay", "eve": "stay"})
    s = play_out(s, "Main")
    assert [e["player"] for e in s["eliminated"]] == ["ann"]
    waiting = s
    return waiting, play_out(s, "Lost")


def last_hand() -> State:
    """Hand 15 played out (Ann guesses Gamma's rule right): the end of the match."""
    rules = {"Alpha": "odd-hitter", "Beta": "high-swapper", "Gamma": "low-drawer", "Delta": "bust-drawer"}
    s = fresh(4, hand=15, chips={"ann": 30, "bob": 6, "cat": 12, "dan": 15, "eve": 18, "fay": 21}, rules=rules)
    s = submit(s, "ann", "GUESS Gamma low-drawer")
    s = stay(s, {p: "stay" for p in PLAYERS})
    s = play_out(play_out(s, "Main"), "Lost")
    assert s["phase"] == "over"
    return s


def the_break() -> State:
    s = timeout_all(fresh(5), 5)
    assert s["phase"] == "break"
    return s


# --------------------------------------------------------------------------- rendering


def context(state: State, player: str, **extra: Any) -> dict[str, Any]:
    """What the service gives the templates (see tests/games/mail_context.py)."""
    return {**mail_context(G, state, player, NAMES), **extra}


def render(kind: str, state: State, player: str, env: Environment = ENV, **extra: Any) -> Mail:
    """A mail as the service renders it, with its Subject line first."""
    if kind == "reminder":
        extra.setdefault("left", "5 hours")
    if kind == "error":
        extra = {
            "error": {"reason": "That is not allowed now.", "line": "RAISE 99", "penalised": False},
            "quoted": {"lines": ["RAISE 99"], "more": 0},
            "truncated": False,
            **extra,
        }
        mail = render_mail(G.name, "error", context(state, player, **extra))
        return Mail(f"Subject: {mail.subject}\n\n{mail.text}")
    text = env.get_template(f"mail/matchjack/{kind}.txt").render(**context(state, player, **extra))
    mail = render_mail(G.name, kind, context(state, player, **extra))
    assert text.rstrip() + "\n" == f"Subject: {mail.subject}\n\n{mail.text}", "the service renders it otherwise"
    return Mail(text)


def every_mail(state: State, player: str) -> dict[str, str]:
    kinds = ["step", "receipt", "reminder", "error"] if G.result(state) is None else ["step", "receipt"]
    return {kind: render(kind, state, player) for kind in kinds}


def assert_mail_shape(text: str) -> None:
    lines = text.split("\n")
    assert lines[0].startswith("Subject: [MatchJack m1] ")
    assert lines[1] == ""
    assert "\n\n\n" not in text
    assert "None" not in text and "{{" not in text and "{%" not in text
    assert "<" not in re.sub(r"<(bot|rule id|player)>", "", text)
    ours = [line for line in lines[1:] if "sha256sum" not in line]  # a seal's check command is never broken
    assert all(len(line) <= WRAP for line in ours), [line for line in ours if len(line) > WRAP]
    assert "\r" not in text
    assert all(line == line.rstrip() for line in lines if line != "-- ")
    body = "\n".join(lines[1:])
    for short, meaning in ABBREVIATIONS.items():  # spelt out where each first appears
        first = re.search(rf"\b{short}s?\b", body)
        if first is not None:
            after = body[first.end() : first.end() + 80]
            assert after[:1] in (" ", "\n") and flat(after).startswith(f"({meaning}"), (
                short,
                body[first.start() - 60 :][:140],
            )
    # news first: the last hand's news, then what to do now, then the tables, the record, the
    # chips, the guessing, the seals and the rules in short
    heads = [i for i, line in enumerate(lines) if line.startswith("=== ") or line.startswith("MatchJack in short:")]
    now = [i for i in heads if lines[i].startswith("=== Now")]
    news = [i for i in heads if lines[i].endswith(" is over ===") and lines[i].startswith("=== Hand ")]
    if now:
        after_now = [i for i in heads if i not in now and i not in news and lines[i] != "=== The match is over ==="]
        assert all(i < now[0] for i in news) and all(i > now[0] for i in after_now), [lines[i] for i in heads]
    prose = text.replace(REPLY_TO, "")
    for p in PLAYERS:  # names, never season ids
        assert not re.search(rf"\b{p}\b", prose), p
    assert_counts_agree(text)


def subject(text: str) -> str:
    return text.split("\n", 1)[0].removeprefix("Subject: [MatchJack m1] ")


def the_form(text: str) -> str:
    """The command line and the Step line of a mail's form."""
    lines = text.split("\n")
    (i,) = [k for k, line in enumerate(lines) if line.startswith("Step: ")]
    return f"{lines[i - 1]}\n{lines[i]}\n"


def assert_form_is_accepted(state: State, player: str, text: str) -> None:
    form = the_form(text)
    assert form == G.form(state, player)
    moves = G.parse(state, player, form).moves
    assert moves and "step" in moves[0]
    assert G.apply_move(state, player, moves[0]).accepted


def hidden_cards(state: State, player: str) -> set[str]:
    """The cards ``player`` may not know: the others' face-down cards not shown at a
    showdown, and every undealt pile card (hand 1: no refill)."""
    hidden: set[str] = set()
    for t in state["tables"].values():
        shown = set(t["revealed"])
        for who, cards in t["hands"].items():
            if who != player and who not in shown:
                hidden |= {card for card, up in cards if not up}
        hidden |= set(t["pile"])
    return hidden


def rules_part(text: str) -> str:
    """A mail without its rules in short (which name R7 and G11 as examples)."""
    return text.split("MatchJack in short:")[0]


def shown(cards: set[str], text: str) -> set[str]:
    return {card for card in cards if re.search(rf"\b{card}\b", rules_part(text))}


# --------------------------------------------------------------------------- the deal and the stay step


def test_the_stay_mail_deals_the_cards_and_offers_stay_fold_and_fold_stayset(hand: dict[str, State]) -> None:
    s = hand["deal"]
    text = render("step", s, "ann")
    assert_mail_shape(text)
    assert subject(text) == "Hand 1, stay or fold at the Main table: your choice"
    assert "=== Hand 1 at the Main table (yours) ===" in text
    assert "Seats: 1 you, 2 Bob Ray, 3 Cat Núñez, then the automated players Alpha and Beta." in text
    assert "  Seat 1, you: R7 face up, B6 face down (only you see it)\n" in text
    assert "  Seat 2, Bob Ray: Y3 face up, a card face down\n" in text
    assert "  Alpha: R1 face up, a card face down\n" in text
    assert "Your hand: R7 B6: worth 13." in text
    assert "=== Hand 1 at the Lost table ===\n" in text and "Its cards are seen only at that table." in text
    assert "  STAY          stay in the hand: a second ante of 1 chip\n" in text
    assert "then move to the Lost set for the next hand" in text
    assert "  FOLD STAYSET  fold, but pay 5 garnets to keep your set and seat (you hold 7)" in text
    assert f"Deadline: {DEADLINE}." in text
    assert "If no choice arrives from you by then, you FOLD and move to the Lost set." in text
    assert "The catalogue:\n  hit-under-15: HIT while the hand is worth less than 15, else NEW." in text
    assert_form_is_accepted(s, "ann", text)
    bob = render("step", s, "bob")
    assert "(FOLD STAYSET, to fold and keep your set, costs 5 garnets; you hold 0.)" in bob
    assert "  Seat 2, you: Y3 face up, Y9 face down (only you see it)" in bob


def test_a_stay_receipt_holds_the_choice_secret_and_revisable(hand: dict[str, State]) -> None:
    s = hand["ann stays"]
    move = G.parse(hand["deal"], "ann", "STAY").moves[0]
    sealed = [seals.seal("m1", "h1-stay", "ann", move, "5f0c8e2a9b7d4c1e3a6f8b0d2c4e6a81", 1)]
    text = render("receipt", s, "ann", sealed=sealed)
    assert_mail_shape(text)
    assert subject(text) == "Received: your mail (Hand 1, stay or fold at the Main table: your choice)"
    assert "Your choice for hand 1 now: STAY. It stays secret until the step closes" in text
    assert "=== Your sealed move: a code to keep ===" in text
    assert "Your choice now: STAY. Until the deadline you may send another choice: the last one counts." in text
    assert_form_is_accepted(s, "ann", text)
    # nobody else sees it: their own choice is still open
    for p in ("bob", "cat", "dan"):
        text = render("step", s, p)
        assert "Your choice now" not in text and "You have not chosen yet." in text


# --------------------------------------------------------------------------- betting


def test_a_betting_turn_lists_the_choices_with_their_amounts(hand: dict[str, State]) -> None:
    s = hand["bob to call"]
    text = render("step", s, "bob")
    assert_mail_shape(text)
    assert subject(text) == "Hand 1, Main table, betting round 1, turn 2: your turn"
    assert "Stay or fold (secret until the step closed):\n  Seat 1, Ann Lee: STAY - in the hand" in text
    assert "  Seat 3, Cat Núñez: FOLD STAYSET - in the hall, paid 5 garnets to keep the seat" in text
    assert "Betting round 1:\n  Ann Lee: BET 2 - 2 chips into the pot (2 in this round)\n  Next to bet: you." in text
    assert "The bet to match in this round is 2; yours is 0. The pot: 9 chips." in text
    assert "  CALL          2 chips: your bet in this round becomes 2\n" in text
    assert "  RAISE n       raise by n: your bet becomes 2 + n, n from 1 to 16\n" in text
    assert "  RAISE TO n    your bet becomes n, from 3 to 18\n" in text
    assert "  ALL IN        the most you may bet now: RAISE TO 18 (18 chips)\n" in text
    assert "If nothing arrives from you by then, you FOLD: out of this hand, but you keep your set." in text
    assert "CALL\nStep: Hand 1, Main table, betting round 1, turn 2\n" in text
    assert_form_is_accepted(s, "bob", text)
    # the other table's public news: its stay results (fay timed out) and its betting
    assert "  Seat 3, Fay Sund: no choice by the deadline: FOLD - in the hall, then to the Main set" in text
    assert "Betting round 1:\n  No bet yet.\n  Next to bet: Dan Ek." in text


def test_a_free_check_is_the_default_and_round_2_follows_the_actions(hand: dict[str, State]) -> None:
    s = hand["round 2"]
    text = render("step", s, "ann")
    assert_mail_shape(text)
    assert "  CHECK         put in nothing (nothing to call)\n" in text
    assert "  BET n         open the betting with n chips, n from 1 to 16\n" in text
    assert "If nothing arrives from you by then, you CHECK (it is free)." in text
    # the action phase as the table saw it: the card turned up, the cards taken face up
    assert "  The top pile card was turned face up: Y8.\n" in text
    assert "  You: HIT - took the top pile card, R9, face up\n" in text
    assert "  Bob Ray: DRAW 2 - the top pile card replaced Bob Ray's card 2, Y9, face down; Y9 is" in text
    assert "  Alpha: HIT - took the top pile card, B10, face up\n" in text  # odd-hitter: R1 R2 is worth 3, odd
    assert "  Beta: SWAP UP - took the face-up pile card Y9 for Beta's face-up card B4, now the" in text
    assert "  Seat 1, you: R7 face up, B6 face down (only you see it), R9 face up" in text


def test_players_waiting_at_the_table_and_in_the_hall_have_nothing_to_send(hand: dict[str, State]) -> None:
    s = hand["bob to call"]
    ann = render("step", s, "ann")
    assert_mail_shape(ann)
    assert subject(ann) == "Hand 1, Main table, betting round 1, turn 2: Bob Ray's turn"
    assert "=== Now: Hand 1, Main table, betting round 1, turn 2: Bob Ray's turn ===" in ann
    assert "You are in the hand. You have nothing to send now." in ann
    assert f"Bob Ray has until {DEADLINE}.\nIf nothing arrives from Bob Ray by then, Bob Ray folds" in ann
    assert "Step:" not in ann
    cat = render("step", s, "cat")
    assert_mail_shape(cat)
    assert subject(cat) == "Hand 1, Main table, betting round 1, turn 2: Bob Ray's turn (you are in the hall)"
    assert "You folded and paid 5 garnets to keep your seat: you sit in the hall for the rest" in cat
    assert "  Seat 3, you (in the hall): G2 face up, G5 face down (only you see it)" in cat
    assert "Step:" not in cat
    eve = render("step", hand["bob to call"], "eve")
    assert "Dan Ek has until" in eve and "Dan Ek checks (it is free)" in eve


def test_a_reminder_and_an_error_say_what_to_send(hand: dict[str, State]) -> None:
    s = hand["bob to call"]
    text = render("reminder", s, "bob")
    assert_mail_shape(text)
    assert subject(text) == "Reminder: Hand 1, Main table, betting round 1, turn 2 closes in 5 hours"
    assert f"The deadline is {DEADLINE}, in 5 hours." in flat(text)
    assert "Your cards: 1. Y3 face up, 2. Y9 face down (only you see it); Y3 Y9: matching cards over 21," in flat(text)
    assert "  CALL          2 chips: your bet in this round becomes 2\n" in text
    assert_form_is_accepted(s, "bob", text)
    other = render("reminder", s, "ann")
    assert "there is nothing for you to send" in other and "Step:" not in other
    error = render("error", s, "bob")
    assert_mail_shape(error)
    assert "Problem: That is not allowed now." in error
    assert "Your cards: 1. Y3 face up, 2. Y9 face down (only you see it)" in flat(error)
    assert "=== Now: Hand 1, Main table, betting round 1, turn 2: your turn ===" in error
    assert_form_is_accepted(s, "bob", error)


# --------------------------------------------------------------------------- the action phase


def test_an_action_turn_says_what_each_action_does_to_the_hand(hand: dict[str, State]) -> None:
    s = hand["ann to act"]
    text = render("step", s, "ann")
    assert_mail_shape(text)
    assert subject(text) == "Hand 1, Main table, action of seat 1: your turn"
    assert "Your cards: 1. R7 face up, 2. B6 face down (only you see it); R7 B6: worth 13." in text
    assert "The face-up pile card: Y8. The pile: 8 cards left, face down." in text
    assert "  HIT           the top pile card joins your hand, face up (as card 3)\n" in text
    assert "  SWAP UP       take Y8 (face up) for your face-up card R7, which goes to the pile\n" in text
    assert "                face up; your hand: Y8 B6: worth 14\n" in text
    assert "  SWAP DOWN     take Y8 (face up) for your face-down card B6, which goes to the pile\n" in text
    assert "                face up; your hand: R7 Y8: worth 15\n" in text
    assert "  DRAW 1        the top pile card replaces R7, face up like it; R7 goes to the pile\n" in text
    assert "  DRAW 2        the top pile card replaces B6, face down like it; B6 goes to the pile\n" in text
    assert "  NEW           your hand stays; the top pile card becomes the face-up pile card\n" in text
    assert "If nothing arrives from you by then, you FOLD: out of this hand, but you keep your set." in text
    assert "NEW\nStep: Hand 1, Main table, action of seat 1\n" in text
    assert_form_is_accepted(s, "ann", text)
    assert "  Still to act, in turn: you, Bob Ray, Alpha and Beta." in text


def test_a_face_down_draw_stays_hidden_from_the_others(hand: dict[str, State]) -> None:
    s = hand["round 2"]
    drawn = next(e["drawn"] for e in s["tables"]["Main"]["actions"] if e["who"] == "bob")
    bob = render("step", s, "bob")
    assert f"You: DRAW 2 - the top pile card, {drawn}, replaced your card 2, Y9, face down (only you see it)" in flat(
        bob
    )
    assert f"Seat 2, you: Y3 face up, {drawn} face down (only you see it)" in bob
    for p in ("ann", "cat", "dan"):
        text = render("step", s, p)
        assert not shown({drawn}, text), p
        assert "replaced Bob Ray's card 2" in text


# --------------------------------------------------------------------------- the showdown and waiting


def test_the_waiting_mail_shows_the_showdown_and_says_the_other_table_plays(hand: dict[str, State]) -> None:
    s = hand["main done"]
    t = s["tables"]["Main"]
    for p in ("ann", "bob", "cat"):
        text = render("step", s, p)
        assert_mail_shape(text)
        assert subject(text) == "Hand 1, Main table: finished, waiting for the Lost table"
        assert "Showdown: the cards of everyone still in the hand, the automated players too:" in text
        for who, cards in t["showdown"]["hands"].items():
            label = "You" if who == p else NAMES.get(who, who)
            assert f"  {label}: {hands.describe(cards)}\n" in text
        assert "The Lost table is still playing (Hand 1, Lost table, betting round 1, turn 1, until" in text
        assert "You have nothing to send now. A mail follows when it finishes, with hand 2" in flat(text)
        assert "Step:" not in text
    # the pot's winner, and what was discarded
    ann = render("step", s, "ann")
    won = t["showdown"]["won"]
    if won:
        assert "Won: " + ", ".join(f"{'you' if p == 'ann' else NAMES[p]} {n} chip" for p, n in won.items()) in ann
    else:
        assert f"No player won chips; discarded: {t['showdown']['discarded']} chips." in ann


def test_a_player_at_the_other_table_reads_its_public_news(hand: dict[str, State]) -> None:
    s = hand["main done"]
    dan = render("step", s, "dan")  # Dan bets at the Lost table
    assert_mail_shape(dan)
    assert subject(dan) == "Hand 1, Lost table, betting round 1, turn 1: your turn"
    main = dan.split("=== Hand 1 at the Main table ===")[1].split("===")[0]
    assert "Its cards are seen only at that table." not in main  # it is over: the showdown shows them
    assert "  Ann Lee: HIT - took the top pile card face up\n" in main  # no card: public
    assert "R9" in main  # ... but the showdown shows Ann's cards
    assert "\n  Bob Ray: DRAW 2 - the top pile card replaced Bob Ray's card 2, which is now the" in Mail(main)
    # a player whose table has finished while the other's step is the first open one
    s = lost_first()
    assert open_steps(G, s)[0].key.startswith("h1-main-")
    eve = render("step", s, "eve")
    assert_mail_shape(eve)
    assert subject(eve) == "Hand 1, Lost table: finished, waiting for the Main table"
    assert "(every player at this table had folded: the automated players played the hand out)" in eve
    assert "The Main table is still playing (Hand 1, Main table, betting round 1, turn 1, until" in eve
    receipt = render("receipt", s, "eve")
    assert_mail_shape(receipt)
    assert "Step:" not in receipt


def test_the_next_hand_tells_the_last_hands_results_at_both_tables(hand: dict[str, State]) -> None:
    s = hand["hand 2"]
    text = render("step", s, "eve")
    assert_mail_shape(text)
    assert subject(text).startswith("Hand 2, stay or fold at the ")
    news = text.split("=== Hand 1 is over ===")[1].split("\n=== Now: ")[0]
    assert "Main table: " in news and "Lost table: " in news and "Chips after hand 1: " in news
    # news first: the news of hand 1, what to do now, hand 2 so far, then hand 1 in full
    order = [
        text.index(h) for h in ("=== Hand 1 is over ===", "=== Now: ", "=== Hand 2 at the ", "=== Hand 1 in full ===")
    ]
    assert order == sorted(order)
    results = Mail(text.split("=== Hand 1 in full ===")[1].split("\n=== Chips")[0])
    assert "--- The Main table ---" in results and "--- The Lost table ---" in results
    assert "  Dan Ek: BET 3 - 3 chips into the pot (3 in this round)\n  You: FOLD - out of this hand" in results
    assert "  The round is over: everyone else folded; Dan Ek plays on with the automated players." in results
    assert "First 3 chips that Dan Ek bet and nobody called went back to Dan Ek (antes never go\n  back)." in results
    for name in ("Main", "Lost"):
        for who, cards in s["history"][0]["tables"][name]["showdown"]["hands"].items():
            label = "You" if who == "eve" else NAMES.get(who, who)
            assert f"  {label}: {hands.describe(cards)}\n" in results
    assert "Set moves for the next hand: Fay Sund to the Main set, seat 4." in Mail(news)
    chips = s["history"][0]["chips"]
    assert f"Chips after hand 1: Ann Lee {chips['ann']}, Bob Ray {chips['bob']}" in Mail(news)


# --------------------------------------------------------------------------- guesses


def test_the_answer_to_a_guess_is_told_to_the_guesser_only(hand: dict[str, State]) -> None:
    s = submit(hand["bob to call"], "bob", "GUESS Alpha odd-hitter")
    s = submit(s, "dan", "GUESS Gamma low-drawer\nCHECK")
    bob = render("receipt", s, "bob")
    assert_mail_shape(bob)
    assert "Your guess for hand 1: GUESS Alpha odd-hitter - right! You are paid 3 garnets and 6" in bob
    assert "Hand 1: GUESS Alpha odd-hitter - right: you were paid 3 garnets and 6 chips" in bob
    assert "Your garnets: 3." in bob
    dan = render("receipt", s, "dan")
    assert "Your guess for hand 1: GUESS Gamma low-drawer - wrong. Only you are told." in dan
    assert "You have already guessed in hand 1; one guess per hand." in dan
    for p in PLAYERS:
        for kind, text in every_mail(s, p).items():
            if p != "bob":
                assert "GUESS Alpha odd-hitter" not in text, (p, kind)
                assert "Correct guesses paid so far (+6 chips each): Bob Ray in hand 1." in text or kind in (
                    "reminder",
                    "error",
                )
            if p != "dan":
                assert "GUESS Gamma low-drawer" not in text, (p, kind)


# --------------------------------------------------------------------------- out of the match, breaks, the end


def test_a_player_who_leaves_the_match_is_told_and_has_nothing_more_to_send() -> None:
    waiting, hand_2 = broke()
    ann = render("step", waiting, "ann")
    assert_mail_shape(ann)
    assert subject(ann) == "Hand 1: you have left the match (0 chips)"
    assert "  Seat 1, you (all in): " not in ann  # the hand is over: the showdown shows the cards
    assert "Left the match with 0 chips: you." in ann
    assert "You have 0 chips and have left the match." in ann
    assert "Step:" not in ann and "=== Guessing" not in ann
    for kind in ("receipt", "reminder", "error"):
        assert "Step:" not in render(kind, waiting, "ann")
    bob = render("step", waiting, "bob")
    assert "Left the match with 0 chips: Ann Lee." in bob
    later = render("step", hand_2, "cat")
    assert "Left the match with 0 chips: Ann Lee." in later
    assert "  Ann Lee: 0 chips - left the match in hand 1\n" in later


def test_an_all_in_player_still_takes_an_action() -> None:
    s = fresh(2, chips={"ann": 2})
    s = deal(s, "Main", {"ann": "R2 B3", "bob": "Y10 G11", "cat": "G2 G5", "Alpha": "R1 R3", "Beta": "B4 Y5"})
    s = stay(s, {"ann": "stay", "bob": "stay"})
    bob = render("step", s, "bob")
    assert "  Seat 1, Ann Lee (all in): R2 face up, a card face down" in bob
    assert "Betting round 1: no betting (fewer than two players in the hand could bet)." in bob
    s = act(s, "bob", "new")
    ann = render("step", s, "ann")
    assert subject(ann) == "Hand 1, Main table, action of seat 1: your turn"
    assert_form_is_accepted(s, "ann", ann)


def test_the_break_mail() -> None:
    s = the_break()
    text = render("step", s, "ann")
    assert_mail_shape(text)
    assert subject(text) == "Break after hand 5: nothing to send"
    assert "=== Hand 5 is over ===" in text and "=== Hand 5 in full ===" in text
    assert "=== Now: Break after hand 5 ===" in text
    assert "Hand 6 is dealt when the break ends; its mail tells you your cards." in text.replace("\n", " ")
    assert "You may guess now (the guess counts for hand 6)." in text
    assert "Step:" not in text


def test_the_final_mail_follows_the_last_hand_and_names_the_winner_and_the_ec() -> None:
    """No nomination step: the mail after the last hand is the final result, to all six; it
    names the winner and the EC, ranks the six and says the season asks the EC, by a
    mail of its own, to nominate the DMO."""
    s = last_hand()
    f = s["final"]
    ec, winner = f["ec"], f["winner"]
    result = G.result(s)
    assert result.ranking[0] == winner and result.ranking[-1] == ec
    ranked = [NAMES[p] for p in result.ranking]
    for p in PLAYERS:
        final = render("step", s, p)
        assert_mail_shape(final)
        assert subject(final) == "Final result"
        assert "=== Hand 15 is over ===" in final and "=== Hand 15 in full ===" in final
        assert "=== The match is over ===" in final
        assert f"Winner: {NAMES[winner]}, {s['chips'][winner]} chips, who gains 2 CoLs (certificates of life)." in final
        how = "first to reach 0 chips" if f["how"]["ec"] == "first to 0" else "fewest chips"
        assert f"EC (elimination candidate): {NAMES[ec]} (the {how})." in final
        assert (
            f"{NAMES[winner]} wins with {s['chips'][winner]} chips after hand 15; {NAMES[ec]} is the EC (elimination"
            " candidate) and will nominate the DMO (death-match opponent)."
        ) in flat(final)
        shown = ["you" if q == p else NAMES[q] for q in result.ranking]
        assert f"Ranking, best first: {', '.join(shown[:-1])} and {shown[-1]}." in flat(final)
        if p == ec:
            asked = "You are the EC: the season will now ask you to nominate the DMO for the death match, by a"
        else:
            asked = f"The season will now ask {NAMES[ec]}, the EC, to nominate the DMO for the death match, by a"
        assert f"{asked} separate mail." in flat(final)
        assert "NOMINATE" not in final and "nominated" not in final and "Nomination" not in final
        outcome = "win" if p == winner else "loss"
        assert f"You: {outcome}, victory points: {1 if p == winner else 0}." in final
        for bot in BOTS:
            assert f"  {bot}: {s['rules'][bot]} - " in final
        assert "Thank you for playing." in final and "Step:" not in final
        assert "Every guess:\n  Ann Lee: hand 15 Gamma low-drawer (right)\n" in final.replace("  You:", "  Ann Lee:")
    assert len(set(ranked)) == 6
    # the mail that ended it: the last mover's receipt says it all (the match is over)
    receipt = render("receipt", s, "fay")
    assert_mail_shape(receipt)
    assert "(the match is over)" in subject(receipt) and "=== The match is over ===" in receipt


# --------------------------------------------------------------------------- hidden information


def test_no_mail_shows_another_players_face_down_card_before_the_showdown(hand: dict[str, State]) -> None:
    checked = 0
    for name, s in hand.items():
        if s["hand"] != 1:
            continue
        for p in PLAYERS:
            hidden = hidden_cards(s, p)
            for kind, text in every_mail(s, p).items():
                assert not shown(hidden, text), (name, p, kind, shown(hidden, text))
                checked += 1
    assert checked > 200


def test_random_matches_show_no_hidden_card_in_hand_1_and_every_mail_is_well_formed() -> None:
    """Seeded random playouts (moves and deadlines): every mail of every player in every
    state renders alike with and without trim_blocks, keeps its shape, and in hand 1 shows
    no card the reader may not know."""
    from tests.games.test_conformance import play

    rendered = 0
    for seed in (0, 1):
        out = play(G, seed)
        rnd = random.Random(seed)
        for state in out.states:
            if state["hand"] > 1 and rnd.random() > 0.15:
                continue
            for p in out.players:
                context_ = mail_context(G, state, p, {q: f"Player {q.upper()}" for q in out.players})
                kinds = ("step", "receipt", "reminder") if G.result(state) is None else ("step",)
                for kind in kinds:
                    extra = {"left": "5 hours"} if kind == "reminder" else {}
                    text = ENV.get_template(f"mail/matchjack/{kind}.txt").render(**context_, **extra)
                    assert text == SERVICE_ENV.get_template(f"mail/matchjack/{kind}.txt").render(**context_, **extra)
                    lines = text.split("\n")
                    assert "\n\n\n" not in text and all(len(line) <= MAX_LINE for line in lines[1:])
                    assert "None" not in text
                    if state["hand"] == 1 and not state["history"]:
                        assert not shown(hidden_cards(state, p), text), (seed, p, kind)
                    if kind == "step" and G.form(state, p):
                        assert G.form(state, p).strip() in text
                    rendered += 1
    assert rendered > 1000


# --------------------------------------------------------------------------- the hand words


def describe_template(cards: list[str]) -> str:
    template = ENV.from_string('{% import "mail/matchjack/macros.txt" as m %}{{ m.describe(cards) }}')
    return template.render(cards=cards)


def test_the_templates_describe_a_hand_as_the_engine_does() -> None:
    for pair in itertools.permutations(hands.DECK, 2):
        assert describe_template(list(pair)) == hands.describe(pair), pair
    rnd = random.Random(7)
    for size in (3, 4, 5):
        for _ in range(300):
            cards = rnd.sample(hands.DECK, size)
            assert describe_template(cards) == hands.describe(cards), cards
        for colour in "RBYG":
            cards = rnd.sample([c for c in hands.DECK if c[0] == colour], size)
            assert describe_template(cards) == hands.describe(cards), cards


# --------------------------------------------------------------------------- the archive


def test_the_archive_text_and_page_tell_each_hand() -> None:
    s = hand_states()["hand 2"]
    view = G.view(s, None)
    ctx = {
        "match": {"id": "m7", "title": "MatchJack", "game": "matchjack", "season": "Winter season"},
        "players": [{"id": p, "name": NAMES[p]} for p in PLAYERS],
        "view": view,
    }
    entry = view["history"][0]
    title, text = round_text("matchjack", ctx, Round(1, entry, datetime(2026, 12, 1, 18, tzinfo=timezone.utc), None))
    assert title == "MatchJack m7: Hand 1"
    assert text.startswith("Hand 1 of the MatchJack match m7 (Winter season), six players at two tables, closed")
    assert "  Ann Lee: BET 2 - 2 chips into the pot (2 in the round)" in text
    assert "  Ann Lee: HIT\n" in text and "  Bob Ray: DRAW 2\n" in text
    for name in ("Main", "Lost"):
        for who, cards in entry["tables"][name]["showdown"]["hands"].items():
            assert f"  {NAMES.get(who, who)}: {hands.describe(cards)}\n" in text
    assert "Set moves for the next hand: Fay Sund to the Main set, seat 4." in text
    assert f"Chips after hand 1: Ann Lee {entry['chips']['ann']}," in text
    assert all(line == line.rstrip() for line in text.splitlines()) and "\n\n\n" not in text


# --------------------------------------------------------------------------- the docs


def example_mails() -> list[tuple[str, str]]:
    """The example mails of docs/games/matchjack.md, rendered as the service does."""
    h = hand_states()
    waiting, _ = broke()
    s = submit(h["bob to call"], "bob", "GUESS Alpha odd-hitter")
    done = last_hand()
    ec = done["final"]["ec"]

    def mail(state: State, player: str, kind: str = "step", **extra: Any) -> str:
        return render(kind, state, player, **extra)

    return [
        ("The deal and the stay step (to Ann Lee, Main table)", mail(h["deal"], "ann")),
        ("A betting turn (to Bob Ray)", mail(h["bob to call"], "bob")),
        ("The same step to a player in the hall (Cat Núñez)", mail(h["bob to call"], "cat")),
        ("An action turn (to Ann Lee)", mail(h["ann to act"], "ann")),
        ("A receipt with the answer to a guess (to Bob Ray only)", mail(s, "bob", "receipt")),
        ("The showdown while the other table plays (to Ann Lee)", mail(h["main done"], "ann")),
        ("The next hand, with the last hand's results (to Eve Holt)", mail(h["hand 2"], "eve")),
        ("A reminder (to Bob Ray)", mail(h["bob to call"], "bob", "reminder")),
        ("A player who has left the match (Ann Lee)", mail(waiting, "ann")),
        ("The break (to Ann Lee)", mail(the_break(), "ann")),
        ("The final mail (to Ann Lee)", mail(done, "ann")),
        (f"The final mail (to the EC, {NAMES[ec]})", mail(done, ec)),
    ]


def test_the_docs_show_the_example_mails_as_rendered() -> None:
    """docs/games/matchjack.md shows each example mail exactly as rendered (update the page
    with ``python -m tests.games.test_matchjack_templates``)."""
    page = DOC.read_text(encoding="utf-8")
    assert "\n## The mails\n" in page
    mails = page.split("\n## The mails\n", 1)[1]
    for title, text in example_mails():
        assert f"### {title}\n\n```text\n{text}```\n" in mails, title


def main() -> None:
    for title, text in example_mails():
        print(f"### {title}\n\n```text\n{text}```\n")


if __name__ == "__main__":
    main()
