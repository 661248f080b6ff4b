"""The Betting Minority mail templates, rendered on states played through the engine: a
participant's one mail holds their list and nothing of the play; every mail to a DM
player says what just happened (the placement step that closed, the betting, the payout
in full), shows the positions, both stacks, the bets with their split by room, the legal
choices, the deadline and the form; the extension says the turn was missed; the payout
of the seed's worked example comes out as Red 46, Zero 26; and the final mail has the
result and the last payout.

``python -m tests.games.test_betting_minority_templates`` prints the example mails of
``docs/games/betting-minority.md`` (a test checks that the page shows them as rendered).
"""

from __future__ import annotations

import random
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment

from referee.config import parse_season
from referee.games.base import ParseError, State, clone
from referee.games.betting_minority import GAME as G
from referee.match import seals
from referee.render import render_mail
from tests.games.mail_context import DEADLINE, ENV, REPLY_TO, SERVICE_ENV, Mail, assert_counts_agree, flat, mail_context

EC, DMO = "red", "zero"
PARTICIPANTS = ["ann", "jose", "kim", "lars", "mia", "noor", "omar", "pia", "quinn", "rosa"]
PLAYERS = [EC, DMO, *PARTICIPANTS]
NAMES = {
    EC: "Red",
    DMO: "Zero",
    "ann": "Ann Lee",
    "jose": "José Núñez",
    "kim": "Kim Park",
    "lars": "Lars Berg",
    "mia": "Mia Rossi",
    "noor": "Noor Khan",
    "omar": "Omar Haddad",
    "pia": "Pia Sund",
    "quinn": "Quinn Ray",
    "rosa": "Rosa Díaz",
}
SEED = 11
DOC = Path(__file__).resolve().parents[2] / "docs" / "games" / "betting-minority.md"


# --------------------------------------------------------------------------- playing


def start(seed: int = SEED) -> State:
    return G.initial_state(seed, PLAYERS, {"names": NAMES})


def submit(state: State, player: str, text: str) -> State:
    """A mail's command, read by the game's own grammar and accepted."""
    (move,) = G.parse(state, player, text).moves
    applied = G.apply_move(state, player, move)
    assert applied.accepted, applied.reason
    return applied.state


def place(state: State, plan: dict[str, str]) -> State:
    """The minority phase by mail: in each placement step the EC sends the next
    participant of ``plan`` and the DMO the one after it, to the rooms the plan names."""
    order = [p for p in plan if state["positions"][p] is None]
    while state["phase"] == "send":
        for dm in (EC, DMO):
            if order and state["phase"] == "send":
                p = order.pop(0)
                state = submit(state, dm, f"SEND {NAMES[p]} TO {plan[p]}")
    return state


def seed_example_plan(state: State) -> dict[str, str]:
    """Positions in which the EC wins Uno (one EC entry and two DMO entries there), the
    rest in Dos and Tres: the seed's worked example needs only Uno to be won by Red."""
    entries = {p: state["lists"][p][state["round"] - 1] for p in PARTICIPANTS}
    ec = [p for p in PARTICIPANTS if entries[p] == "EC"]
    dmo = [p for p in PARTICIPANTS if entries[p] == "DMO"]
    plan = {ec[0]: "Uno", dmo[0]: "Uno", dmo[1]: "Uno"}
    rest = [p for p in PARTICIPANTS if p not in plan]
    plan.update({p: ("Dos", "Tres")[i % 2] for i, p in enumerate(rest)})
    return plan


def betting_of_the_seed_example() -> State:
    """Round 1 placed (Red wins Uno), the DMO gave the marker to the EC, both hold 15
    chips (the example's stakes need 11 each; the match starts with 4, so the test sets
    the stacks), and Red has bet the example's Uno 3 Tres 8: Zero to answer."""
    state = submit(start(), DMO, "MARKER OPPONENT")
    state = place(state, seed_example_plan(state))
    state = clone(state)
    state["chips"] = {EC: 15, DMO: 15}
    return submit(state, EC, "BET Uno 3 Tres 8")


def seed_example_payout() -> State:
    """Zero calls with the example's Uno 4 Dos 7: the payout of round 1."""
    return submit(betting_of_the_seed_example(), DMO, "CALL Uno 4 Dos 7")


def finished_match() -> State:
    """The seed example's round, then rounds 2-8 with the placement left to the deadline
    (everyone placed at random) and a one-chip bet called by the other player."""
    state = seed_example_payout()
    while G.step(state) is not None:
        if state["phase"] == "send":
            state = G.apply_timeout(state)
            continue
        b = state["betting"]
        other = DMO if b["to_act"] == EC else EC
        state = submit(state, b["to_act"], "BET Uno 1" if b["placements"][other] is None else "CALL Dos 1")
    return state


def random_states(seed: int, timeouts: float) -> list[State]:
    """Every state of a random match, with deadlines passing now and then."""
    rnd = random.Random(seed)
    state = start(seed)
    states = [state]
    while G.step(state) is not None:
        step = G.step(state)
        movers = [(p, moves) for p in step.players if (moves := G.sample_moves(state, p, rnd))]
        if movers and rnd.random() >= timeouts:
            player, moves = rnd.choice(movers)
            applied = G.apply_move(state, player, rnd.choice(moves))
            assert applied.accepted, applied.reason
            state = applied.state
        else:
            state = G.apply_timeout(state)
        states.append(state)
    return states


# --------------------------------------------------------------------------- rendering


def context(state: State, player: str, **extra: Any) -> dict[str, Any]:
    """What the service gives the templates (see tests/games/mail_context.py)."""
    return {**mail_context(G, state, player, NAMES), **extra}


def render(name: str, state: State, player: str, env: Environment = ENV, **extra: Any) -> Mail:
    if name == "reminder":
        extra.setdefault("left", "5 hours")
    return Mail(env.get_template(f"mail/betting-minority/{name}.txt").render(**context(state, player, **extra)))


def error_mail(state: State, player: str, reason: str, line: str | None, *, penalised: bool = False) -> str:
    """The common error mail (with this game's now.txt), as the service renders it."""
    extra = {
        "error": {"reason": reason, "line": line, "penalised": penalised},
        "quoted": {"lines": [line] if line else [], "more": 0},
        "truncated": False,
    }
    mail = render_mail(G.name, "error", context(state, player, **extra))
    return Mail(f"Subject: {mail.subject}\n\n{mail.text}")


MAX_LINE = 78  # issue 20: no line over 78, prose wrapped at 72 (RFC 3676)
WRAP = 72
ABBREVIATIONS = {"EC": "elimination candidate", "DMO": "death-match opponent"}


def assert_mail_shape(text: str) -> None:
    """The shape of every mail: the subject, no blank runs, no template leftovers, counts
    that agree with their nouns, names never season ids, lines of at most 78 characters
    (prose at most 72; a seal's check command stands whole on its line), LF line ends,
    the abbreviations spelt out where they first appear, and the news first: what happened
    and what to do now before the positions, the seals and the rules in short."""
    lines = text.split("\n")
    assert lines[0].startswith("Subject: [Betting Minority m1] ")
    assert lines[1] == ""
    assert "\n\n\n" not in text and "\r" not in text
    assert "None" not in text and "{{" not in text and "{%" not in text
    assert_counts_agree(text)
    body = [line for line in lines[1:] if "sha256sum" not in line]  # a seal's command is never broken
    assert all(len(line) <= WRAP for line in body), [line for line in body if len(line) > WRAP]
    assert all(len(line) <= MAX_LINE for line in lines[1:] if "sha256sum" not in line or " " not in line.strip())
    prose = "\n".join(line for line in lines if "sha256sum" not in line)
    for p in PLAYERS:  # names, never season ids, in the prose (a seal's line holds the ids)
        assert not re.search(rf"(?<![\w@+.-]){p}(?![\w@.-])", prose), p
    body_text = "\n".join(lines[1:])
    for short, meaning in ABBREVIATIONS.items():
        first = re.search(rf"\b{short}\b", body_text)
        if first is not None:  # explained where it first appears: "the EC (elimination candidate)"
            after = body_text[first.end() : first.end() + 80]
            assert after[:1] in (" ", "\n") and flat(after).startswith(f"({meaning})"), (
                short,
                body_text[first.start() - 40 : first.end() + 40],
            )
    # news first: what happened (the marker, a placement step's result, a payout), then what
    # to do now, then where things stand, the seals and the rules in short
    heads = [
        (i, line) for i, line in enumerate(lines) if line.startswith("=== ") or line.startswith("The rules in short")
    ]
    news = [
        i
        for i, line in heads
        if line in ("=== The starting marker ===",)
        or line.endswith((": result ===", " is over ==="))
        and line != "=== The match is over ==="
    ]
    now = [i for i, line in heads if line.startswith("=== Now")]
    later = [i for i, line in heads if i not in news and i not in now and line != "=== The match is over ==="]
    if now:
        assert all(i < now[0] for i in news) and all(i > now[0] for i in later), [line for _, line in heads]
    else:
        assert all(i > j for i in later for j in news), [line for _, line in heads]


def short(p: str) -> str:
    return f"P{PARTICIPANTS.index(p) + 1}"


def label(p: str) -> str:
    return f"{short(p)} {NAMES[p]}"


# --------------------------------------------------------------------------- participants


@pytest.mark.parametrize("participant", PARTICIPANTS)
def test_a_participants_first_mail_holds_their_list_and_nothing_else(participant: str) -> None:
    state = start()
    text = render("step", state, participant)
    assert text == render("step", state, participant, SERVICE_ENV)
    assert_mail_shape(text)
    assert text.startswith(f"Subject: [Betting Minority m1] Your list: you are {short(participant)} in this match\n")
    assert f"Dear {NAMES[participant]},\n" in text
    assert "a death match between Red, the EC (elimination candidate), and Zero, the DMO (death-match opponent)" in text
    assert f"Your short id is {short(participant)}." in text
    rows = re.findall(r"^  Round (\d): (\w+) \((EC|DMO)\)$", text, re.M)
    assert rows == [
        (str(r + 1), NAMES[EC] if e == "EC" else NAMES[DMO], e) for r, e in enumerate(state["lists"][participant])
    ]
    assert "You have nothing to send, now or later" in text
    assert "Red and Zero never see your list" in text
    assert "the season's archive" in text
    # nothing of the play, and nobody else's entries (nor anybody else at all)
    for word in ("Deadline", "Step:", "reply to this mail", "MARKER", "SEND", "chips"):
        assert word not in text
    for other in PARTICIPANTS:
        if other != participant:
            assert NAMES[other] not in text


def test_a_participants_mail_is_the_same_whatever_the_other_lists() -> None:
    state = start()
    rnd = random.Random(3)
    for participant in PARTICIPANTS:
        mails = [render(kind, state, participant) for kind in ("step", "receipt", "reminder")]
        for variant in G.hidden_variants(state, participant, rnd):
            assert variant["lists"] != state["lists"]
            assert [render(kind, variant, participant) for kind in ("step", "receipt", "reminder")] == mails


def test_the_first_mail_goes_to_every_seat_and_later_ones_only_to_the_dm_players() -> None:
    state = start()
    assert G.audience(state) == tuple(PLAYERS)
    state = submit(state, DMO, "MARKER ME")
    assert G.audience(state) == (EC, DMO)


def test_a_participant_who_writes_is_told_they_have_nothing_to_send() -> None:
    """A participant's mail, a command or anything else, is answered in plain words: they
    have nothing to send in this match (the engine's parse says so before any step is
    read; a move that reaches apply_move is refused the same)."""
    state = submit(start(), DMO, "MARKER ME")
    applied = G.apply_move(state, "kim", {"action": "send", "participant": "ann", "room": "Uno"})
    assert not applied.accepted
    with pytest.raises(ParseError) as caught:
        G.parse(state, "kim", "Hello, where do I go?\nSEND Ann TO Uno\nStep: Round 1, placement 1")
    assert caught.value.reason == applied.reason
    text = error_mail(state, "kim", applied.reason, None)
    assert_mail_shape(text)
    assert "Problem: You have nothing to send in this match: as a participant, you are sent to rooms by Red" in text
    assert "You are a participant (P3) in this match: you have nothing to send in this match, now or later." in text
    assert "Round" not in text.split("Problem: ")[1].split("\n\n")[0]  # nothing about the open step
    assert "Deadline" not in text and "Step:" not in text and "placement" not in text
    for kind in ("receipt", "reminder"):
        text = render(kind, state, "kim")
        assert text == render(kind, state, "kim", SERVICE_ENV)
        assert_mail_shape(text)
        assert "you have nothing to send in this match, now or later" in text
        assert "Step:" not in text


# --------------------------------------------------------------------------- the DM players' mails


def test_the_marker_step_mails() -> None:
    state = start()
    dmo = render("step", state, DMO)
    assert_mail_shape(dmo)
    assert dmo.startswith("Subject: [Betting Minority m1] The starting marker: your decision\n")
    assert "You are the DMO (death-match opponent) and Red is the EC (elimination candidate)." in dmo
    assert "Write MARKER ME to keep it, or MARKER OPPONENT to give\nit to Red." in dmo
    assert f"Deadline: {DEADLINE}. If nothing arrives from you by then, you keep it." in dmo
    assert f"(it goes to {REPLY_TO})" in dmo
    assert dmo.count("MARKER ME\nStep: The starting marker\n") == 1
    for p in PARTICIPANTS:
        assert f"\n  {label(p)}\n" in dmo
    ec = render("step", state, EC)
    assert ec.startswith("Subject: [Betting Minority m1] The starting marker: Zero decides\n")
    assert "The starting marker is Zero's to decide; you have nothing to send until our next mail." in ec
    assert "Step:" not in ec


def test_the_marker_is_reported_in_the_first_placement_step() -> None:
    state = submit(start(), DMO, "MARKER OPPONENT")
    text = render("step", state, EC)
    assert (
        "=== The starting marker ===\nZero (the DMO) gave the starting marker to you. You open the betting of round 1."
        in text
    )
    assert "You hold the starting marker, so you open the betting of this round." in text
    timed_out = G.apply_timeout(start())
    text = render("step", timed_out, DMO)
    assert "No decision arrived from you (the DMO) by the deadline, so you keep the starting marker." in text


def test_a_placement_step_mail_shows_the_result_positions_choices_and_form() -> None:
    state = submit(start(), DMO, "MARKER ME")
    state = submit(state, EC, "SEND Ann TO Uno")
    state = submit(state, DMO, "SEND ann TO Dos")  # the same participant, another room: the third
    state = submit(state, EC, "SEND P2 TO Dos")
    state = submit(state, DMO, "SEND P2 TO Dos")  # the same participant, the same room
    state = submit(state, EC, "SEND Kim TO Uno")
    state = G.apply_timeout(state)  # Zero sends nobody
    text = render("step", state, DMO)
    assert text == render("step", state, DMO, SERVICE_ENV)
    assert_mail_shape(text)
    assert text.startswith("Subject: [Betting Minority m1] Round 1, placement 4: send a participant\n")
    assert (
        "=== Round 1, placement 3: result ===\nYou sent nobody by the deadline, and so placed nobody in this step.\n"
        "Red sent P3 Kim Park to Uno.\n  P3 Kim Park goes to Uno.\n"
    ) in text
    assert "  Uno: P3 Kim Park\n  Dos: P2 José Núñez\n  Tres: P1 Ann Lee\n" in text
    assert "  Not placed yet: " + ", ".join(label(p) for p in PARTICIPANTS[3:]) + "\n" in text
    assert "Chips: you 4, Red 4.\nYou hold the starting marker" in text
    assert f"Deadline: {DEADLINE}; the step closes earlier, as soon as you have both sent." in text
    assert "SEND P4 TO Uno\nStep: Round 1, placement 4\n" in text
    earlier = submit(submit(submit(start(), DMO, "MARKER ME"), EC, "SEND Ann TO Uno"), DMO, "SEND ann TO Dos")
    assert "  P1 Ann Lee goes to Tres (sent to two different rooms: the room neither named).\n" in render(
        "step", earlier, EC
    )
    agreed = submit(submit(earlier, EC, "SEND P2 TO Dos"), DMO, "SEND P2 TO Dos")
    assert "  P2 José Núñez goes to Dos (you both sent them there).\n" in render("step", agreed, EC)


def test_both_missing_a_placement_step_places_everyone_at_random() -> None:
    state = G.apply_timeout(submit(start(), DMO, "MARKER ME"))
    text = render("step", state, EC)
    assert (
        "Neither of you sent anyone by the deadline, so everyone not yet placed went to a room drawn at random:" in text
    )
    for p in PARTICIPANTS:
        assert f"  {label(p)} goes to {state['positions'][p]} (at random).\n" in text
    assert "Everyone is placed: the minority phase is over, and the betting begins." in text
    assert text.startswith("Subject: [Betting Minority m1] Round 1, betting turn 1: Zero's turn\n")


def test_the_receipt_of_a_first_send_says_it_is_final_and_shows_its_seal() -> None:
    state = submit(submit(start(), DMO, "MARKER ME"), EC, "SEND Rosa TO Tres")
    move = G.parse(state, EC, "SEND Rosa TO Tres").moves[0]
    sealed = [seals.seal("m1", "r1-send-1", EC, move, "0" * 32, 3)]
    text = render("receipt", state, EC, sealed=sealed)
    assert text == render("receipt", state, EC, SERVICE_ENV, sealed=sealed)
    assert_mail_shape(text)
    assert text.startswith("Subject: [Betting Minority m1] Received: SEND P10 TO Tres\n")
    assert "Recorded: SEND P10 TO Tres.\nA send is final: it stands, and stays secret until the step closes." in text
    assert "The step waits for\nZero's send; you get a mail when it closes." in text
    assert "=== Your sealed move: a code to keep ===" in text
    assert f"  {sealed[0]['commitment']}\n" in text
    assert "You have sent P10 Rosa Díaz to Tres in this step; a send is final." in text
    assert "Step:" not in text  # nothing more to send in this step
    # the send that closes the step: its result, the reveal of the seals, and the next form
    closing = submit(state, DMO, "SEND Ann TO Uno")
    revealed = {"step": "r1-send-1", "seals": sealed}
    text = render("receipt", closing, DMO, revealed=revealed)
    assert_mail_shape(text)
    assert "Recorded: SEND P1 TO Uno." in text and "A send is final" not in text
    assert "=== Round 1, placement 1: result ===\nYou sent P1 Ann Lee to Uno.\nRed sent P10 Rosa Díaz to Tres." in text
    assert "=== How to check the referee did not change your move ===" in text and sealed[0]["check"] in text
    assert "SEND P2 TO Uno\nStep: Round 1, placement 2\n" in text
    step = render("step", closing, EC, revealed=revealed)
    assert "=== How to check the referee did not change your move ===" in step


def test_betting_mails_show_the_split_bets_the_limits_and_the_form() -> None:
    state = betting_of_the_seed_example()
    text = render("step", state, DMO)
    assert text == render("step", state, DMO, SERVICE_ENV)
    assert_mail_shape(text)
    assert text.startswith("Subject: [Betting Minority m1] Round 1, betting turn 2: your turn\n")
    assert "=== Round 1: betting ===\n  Red: BET Uno 3, Tres 8 (11 chips) - opens the betting\n" in text
    assert "Bets standing now (each bet replaces the bettor's last): you nothing; Red Uno 3, Tres 8 (11 chips)." in text
    assert "Chips: you 15, Red 15." in text
    # the choices, each on a line of its own (the demo's scripted players read them so)
    assert "\nCALL with 11 chips in all on one or two rooms, as in CALL Uno 11.\n" in text
    assert "\nYou may not raise: the most you may bet does not top Red's bet.\n" in text
    assert "The most you may bet now, in all: 11 chips (no more than your 15, nor than 3/4 of\nRed's 15" in text
    assert "A call ends the betting, the payout follows, and the starting marker passes to you." in text
    assert f"Deadline: {DEADLINE}.\nIf no bet arrives from you by then, the turn counts as missed" in text
    assert "CALL Uno 11\nStep: Round 1, betting turn 2\n" in text
    other = render("step", state, EC)
    assert other.startswith("Subject: [Betting Minority m1] Round 1, betting turn 2: Zero's turn\n")
    assert f"you have nothing to send until our next mail.\nZero has until {DEADLINE}." in other
    assert "Step:" not in other
    receipt = render("receipt", state, EC)
    assert receipt.startswith("Subject: [Betting Minority m1] Received: BET Uno 3 Tres 8\n")
    # the entries of the open round are never in a DM player's mail
    assert "(Red)" not in text and "(Zero)" not in text


def test_a_bet_that_breaks_the_limits_is_answered_with_the_penalty_and_the_open_turn() -> None:
    state = betting_of_the_seed_example()
    move = G.parse(state, DMO, "RAISE Uno 9 Dos 3").moves[0]
    applied = G.apply_move(state, DMO, move)
    assert not applied.accepted and applied.changed
    text = error_mail(applied.state, DMO, applied.reason, "RAISE Uno 9 Dos 3", penalised=True)
    assert "The rules penalise this move; the penalty has been applied." in text
    assert (
        "  You: RAISE Uno 9 Dos 3 - refused: it cost 1 chip, and the turn stayed open.\n"
        "    Your bet totals 12 chips, more than the most you may bet now, 11" in text
    )
    assert "Chips: you 14, Red 15." in text
    assert "CALL Uno 11\nStep: Round 1, betting turn 2\n" in text
    assert "\n\n\n" not in text


def test_the_extension_says_the_turn_was_missed_and_what_a_second_miss_does() -> None:
    state = G.apply_timeout(betting_of_the_seed_example())
    text = render("step", state, DMO)
    assert text == render("step", state, DMO, SERVICE_ENV)
    assert_mail_shape(text)
    assert text.startswith("Subject: [Betting Minority m1] Round 1, betting turn 2 (extended): you missed your turn\n")
    assert "You missed Round 1, betting turn 2: no bet arrived by its deadline." in text
    assert "It counts as a missed betting turn (1 in the match so far for you)" in text
    assert f"and the turn is extended once, until {DEADLINE}.\nA reply to the mail of the turn still counts." in text
    assert (
        "If you miss the extension too:\nthe betting ends as if you called with no bet (you have none standing),\n"
        "the payout follows, and the starting marker passes to you." in text
    )
    assert "After this round's payout you lose k/5 of your chips (rounded down)" in text
    assert "  You: no bet by the deadline - a missed betting turn; the turn was extended\n" in text
    assert "CALL Uno 11\nStep: Round 1, betting turn 2\n" in text  # the same Step line
    other = render("step", state, EC)
    assert other.startswith("Subject: [Betting Minority m1] Round 1, betting turn 2 (extended): Zero missed the turn\n")
    assert "If Zero misses the extension too:" in other and "Step:" not in other


def test_the_extension_of_an_opening_turn_says_who_opens_instead_and_then_that_nobody_did() -> None:
    state = G.apply_timeout(G.apply_timeout(submit(start(), DMO, "MARKER ME")))  # placed at random; Zero misses
    text = render("step", state, DMO)
    assert "If you miss the extension too: Red opens the betting instead." in text
    state = G.apply_timeout(G.apply_timeout(state))  # Red opens in Zero's place, and misses too
    text = render("step", state, EC)
    assert "  Zero: no bet by the end of the extension either\n" in text
    assert "You open in place of Zero, who missed the opening turn and its extension." in text
    assert (
        "If you miss the extension too: the betting ends with no stakes, and the starting marker stays with Zero."
        in text
    )
    state = G.apply_timeout(state)
    text = render("step", state, EC)
    assert (
        "Nobody opened the betting (both opening turns and their extensions were missed): no stakes this round." in text
    )
    assert "The starting marker stays with Zero." in text
    assert "Stakes: you nothing; Zero nothing." in text and "Room by room" not in text


def test_the_payout_mail_shows_the_seed_example_in_full() -> None:
    state = seed_example_payout()
    text = render("step", state, EC)
    assert text == render("step", state, EC, SERVICE_ENV)
    assert_mail_shape(text)
    assert text.startswith("Subject: [Betting Minority m1] Round 2, placement 1: send a participant\n")
    h = state["history"][0]
    for room in ("Uno", "Dos", "Tres"):
        inside = [p for p in PARTICIPANTS if h["positions"][p] == room]
        shown = ", ".join(f"{label(p)} ({NAMES[EC] if h['entries'][p] == 'EC' else NAMES[DMO]})" for p in inside)
        assert f"  {room}: {shown}.\n    Red {h['counts'][room]['EC']}, Zero {h['counts'][room]['DMO']}:" in text
    assert "Red 1, Zero 2: Red wins Uno (the fewer entries)." in text
    assert (
        "  You: BET Uno 3, Tres 8 (11 chips) - opens the betting\n  Zero: CALL Uno 4, Dos 7 (11 chips) - calls" in text
    )
    assert "Stakes: you Uno 3, Tres 8 (11 chips); Zero Uno 4, Dos 7 (11 chips)." in text
    assert "in each): you 3, Zero 4." in text
    assert (
        "  Uno (won by you): you 3 + 3 doubled; Zero 4 + 4 doubled.\n"
        "    You take 3 of Zero's 4 chips here, 3 of them doubled ones, so 6 with the doubling.\n"
        "    Owned before the last doubling: you 12, Zero 2. Doubled and paid: you 24, Zero 4.\n"
    ) in text
    assert "Doubled and paid: you 0, Zero 22.\n" in text and "Doubled and paid: you 22, Zero 0.\n" in text
    assert "Paid back in all: you 46, Zero 26." in text
    assert "  You: 15 - 11 + 46 = 50\n  Zero: 15 - 11 + 26 = 30\n" in text
    assert "Chips after round 1: you 50, Zero 30.\nThe starting marker passes to Zero." in text
    zero = render("step", state, DMO)
    assert "    Red takes 3 of your 4 chips here, 3 of them doubled ones, so 6 with the doubling.\n" in zero
    assert "Paid back in all: you 26, Red 46." in zero
    # the caller hears of it in the receipt
    receipt = render("receipt", state, DMO)
    assert receipt.startswith("Subject: [Betting Minority m1] Received: CALL Uno 4 Dos 7\n")
    assert "=== Round 1: payout ===" in receipt and "SEND P1 TO Uno\nStep: Round 2, placement 1\n" in receipt


def test_the_missed_turn_loss_is_shown_after_the_payout() -> None:
    state = G.apply_timeout(betting_of_the_seed_example())
    state = submit(state, DMO, "CALL Uno 4 Dos 7")  # answered in the extension: still a missed turn
    text = render("step", state, EC)
    lost = state["history"][0]["missed_loss"][DMO]
    assert lost == 30 // 5
    assert (
        f"Zero missed 1 betting turn this round and so loses {lost} chips (k/5 of their 30, rounded down, "
        "k being the betting turns missed in the match so far); these chips leave play." in text
    )
    assert f"Chips after round 1: you 50, Zero {30 - lost}." in text
    assert "Betting turns missed in the match so far: you 0, Zero 1." in text


def test_the_final_mail_has_the_result_and_the_last_payout() -> None:
    state = finished_match()
    result = G.result(state)
    assert result is not None
    for me in (EC, DMO):
        text = render("step", state, me)
        assert text == render("step", state, me, SERVICE_ENV)
        assert_mail_shape(text)
        assert text.startswith("Subject: [Betting Minority m1] Final result\n")
        assert "=== Round 8: payout ===" in text and "=== The match is over ===" in text
        assert result.reason in text
        opp = DMO if me == EC else EC
        assert (
            f"You: {result.outcome[me]}, victory points: {result.victory_points[me]:g}. "
            f"{NAMES[opp]}: {result.outcome[opp]}, victory points: {result.victory_points[opp]:g}." in text
        )
        assert f"Final chips: you {state['chips'][me]}, {NAMES[opp]} {state['chips'][opp]}, after 8 rounds." in text
        assert "Deadline" not in text and "Step:" not in text
        receipt = render("receipt", state, me)
        assert_mail_shape(receipt)
        assert "=== The match is over ===" in receipt
    caller = state["history"][-1]["caller"]
    assert render("receipt", state, caller).startswith("Subject: [Betting Minority m1] Received: CALL Dos 1\n")


def test_a_penalty_that_takes_the_last_chip_ends_the_betting_as_a_call_and_the_final_mail_says_so() -> None:
    state = clone(betting_of_the_seed_example())
    state["chips"][DMO] = 1
    turn = render("step", state, DMO)
    assert (
        "A bet that breaks these limits costs you 1 chip, your last: the betting then ends as if you\n"
        "called with no bet, the round is paid out, and you lose the match.\n" in turn
    )
    applied = G.apply_move(state, DMO, G.parse(state, DMO, "RAISE Uno 5").moves[0])
    assert G.result(applied.state) is not None
    for me in (EC, DMO):
        text = render("step", applied.state, me)
        assert text == render("step", applied.state, me, SERVICE_ENV)
        assert_mail_shape(text)
        assert "=== Round 1: payout ===" in text and "=== The match is over ===" in text
        assert "the betting, when the match ended" not in text
    text = render("step", applied.state, EC)
    assert "  You: BET Uno 3, Tres 8 (11 chips) - opens the betting\n" in text
    assert "  Zero: RAISE Uno 5 - refused: it cost 1 chip, Zero's last, and so ended the betting.\n" in text
    assert "    Your bet totals 5 chips, more than the 1 you hold.\n" in text
    assert (
        "The penalty took Zero's last chip, and so the betting ended as if Zero called with no bet (a standing "
        "bet is cut to the chips held, and none were left); the round is paid out.\n"
        "Stakes: you Uno 3, Tres 8 (11 chips); Zero nothing.\n" in text
    )
    # Red's own bet doubled: Uno (3 + 3) x 2 = 12, Tres (8 + 3) x 2 = 22
    assert "Paid back in all: you 34, Zero 0." in text
    assert "  You: 15 - 11 + 34 = 38\n  Zero: 0 - 0 + 0 = 0\n" in text
    assert "The starting marker passes to Zero." in text
    assert (
        "Red wins: Zero has no chips left after the payout of round 1 (a penalty for an illegal bet took Zero's "
        "last chip, which ended the betting as Zero's call; then the round was paid out)." in text
    )
    error = error_mail(applied.state, DMO, applied.reason, "RAISE Uno 5", penalised=True)
    assert_mail_shape(error)
    assert (
        "Problem: Your bet totals 5 chips, more than the 1 you hold. That bet breaks the limits, so it costs you "
        "1 chip, your last one. With no chips left, the betting of round 1 ends as if you called with your "
        "standing bet cut to the chips you hold, so with no bet; the starting marker passes to you, as for a call. "
        "Round 1 is paid out: you staked nothing and are paid nothing; Red staked 11 chips and is paid 34 chips. "
        "You hold no chips after the payout, so you lose the match; Red wins.\n" in error
    )
    assert "turn stays open" not in error and "still open" not in error


def test_a_match_over_at_the_payout_takes_no_missed_turn_loss_and_the_mail_says_so() -> None:
    """Zero, at 1 chip, loses it all in Uno, which Red wins; Red missed its fifth betting
    turn this round (k = 5 would take every chip), but the match ends at the payout."""
    state = submit(start(), DMO, "MARKER ME")
    state = clone(place(state, seed_example_plan(state)))
    state["chips"] = {EC: 4, DMO: 1}
    state["missed"][EC] = 4
    state = submit(state, DMO, "BET Uno 1")
    state = G.apply_timeout(state)
    state = submit(state, EC, "CALL Uno 1")
    assert G.result(state) is not None and state["chips"] == {EC: 7, DMO: 0}
    text = render("step", state, DMO)
    assert_mail_shape(text)
    assert (
        "Red missed 1 betting turn this round, but a player has no chips after the payout, so the match ends "
        "there and no loss for missed turns is taken.\nChips after round 1: you 0, Red 7.\n" in text
    )
    assert "loses 7 chips" not in text
    assert (
        "Red wins: Zero has no chips left after the payout of round 1. The match ends at this check, so the loss "
        "for missed betting turns is not taken.\n" in text
    )


def test_reminders_go_with_the_choices_and_the_form_to_the_player_awaited() -> None:
    state = betting_of_the_seed_example()
    text = render("reminder", state, DMO)
    assert text == render("reminder", state, DMO, SERVICE_ENV)
    assert_mail_shape(text)
    assert text.startswith("Subject: [Betting Minority m1] Reminder: Round 1, betting turn 2 closes in 5 hours\n")
    assert f"The deadline is {DEADLINE}, in 5 hours." in text
    assert "Bets standing now" in text and "CALL Uno 11\nStep: Round 1, betting turn 2\n" in text
    other = render("reminder", state, EC)
    assert "there is nothing for you to send" in other and "Step:" not in other


# --------------------------------------------------------------------------- every state


@pytest.mark.parametrize("seed", range(6))
def test_every_mail_renders_at_every_state_of_random_matches(seed: int) -> None:
    """Step, receipt and reminder (and the error's now.txt) for both DM players and one
    participant, the same with the service's block trimming; the step mail says what a
    closed placement step placed and shows every finished round's payout once."""
    states = random_states(seed, (0.05, 0.3, 0.6)[seed % 3])
    for state in states:
        running = G.step(state) is not None
        for player in (EC, DMO, "noor"):
            kinds = ("step", "receipt", "reminder") if running else ("step", "receipt")
            for kind in kinds:
                text = render(kind, state, player)
                assert text == render(kind, state, player, SERVICE_ENV), (kind, player)
                assert_mail_shape(text)
            if running:
                error_mail(state, player, "That is not allowed now.", "RAISE 99")
            if player == "noor":
                continue
            step = render("step", state, player)
            view = G.view(state, player)
            if running:
                assert "=== Now: " in step
                assert f"Chips: you {view['stacks'][player]}" in step
                form = G.form(state, player)
                assert (form.strip() in step) if form else ("Step:" not in step)
            if view["history"] and (not running or (state["phase"] == "send" and not view["placements"])):
                assert f"=== Round {view['history'][-1]['round']}: payout ===" in step


# --------------------------------------------------------------------------- the docs


def example_mails() -> list[tuple[str, str]]:
    """The example mails of docs/games/betting-minority.md, rendered as the service does."""

    def mail(state: State, player: str, kind: str = "step", **extra: Any) -> str:
        if kind == "reminder":
            extra.setdefault("left", "5 hours")
        rendered = render_mail(G.name, kind, context(state, player, **extra))
        return f"Subject: {rendered.subject}\n\n{rendered.text}"

    first = start()
    marker = submit(first, DMO, "MARKER OPPONENT")
    sent = submit(marker, EC, "SEND Ann TO Uno")
    move = G.parse(sent, EC, "SEND Ann TO Uno").moves[0]
    sealed = [seals.seal("m1", "r1-send-1", EC, move, "5f0c8e2a9b7d4c1e3a6f8b0d2c4e6a81", 4)]
    clash = submit(sent, DMO, "SEND Ann TO Dos")
    betting = betting_of_the_seed_example()
    raised = G.apply_move(betting, DMO, G.parse(betting, DMO, "RAISE Uno 9 Dos 3").moves[0])
    return [
        ("The first mail to a participant (José Núñez, P2)", mail(first, "jose")),
        ("The first mail to the DMO (the starting marker)", mail(first, DMO)),
        ("A receipt for a first send (Red; sealed until the step closes)", mail(sent, EC, "receipt", sealed=sealed)),
        ("A placement step after a clash (to Red)", mail(clash, EC, revealed={"step": "r1-send-1", "seals": sealed})),
        ("A betting turn (Zero answers Red's split bet)", mail(betting, DMO)),
        (
            "A bet that breaks the limits (the error mail, with the penalty)",
            error_mail(raised.state, DMO, raised.reason, "RAISE Uno 9 Dos 3", penalised=True),
        ),
        ("The extension of a missed turn (to Zero)", mail(G.apply_timeout(betting), DMO)),
        ("The payout of the seed's worked example (to Red, with the next step)", mail(seed_example_payout(), EC)),
        ("The final mail (to Zero)", mail(finished_match(), DMO)),
    ]


def test_the_docs_show_the_example_mails_as_rendered() -> None:
    """docs/games/betting-minority.md shows each example mail exactly as rendered (update
    the page with ``python -m tests.games.test_betting_minority_templates``)."""
    page = DOC.read_text(encoding="utf-8")
    for title, text in example_mails():
        assert f"### {title}\n\n```text\n{text}```\n" in page, title


def test_the_docs_season_file_loads() -> None:
    """The season file on the page is one the referee loads: participants without an
    address at the silent seats, the step lengths (the extension 2/3 of a turn unless
    named)."""
    block = re.search(r"```toml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert block is not None
    spec = parse_season(tomllib.loads(block.group(1)), "betting-minority.md")
    (match,) = spec.matches
    assert match.game == G.name and len(match.players) == 12
    assert [p.key for p in spec.players if p.email is None] == ["jose", "lars", "noor", "pia", "rosa"]
    hours = {kind: seconds / 3600 for kind, seconds in match.steps.items()}
    assert hours == {"marker": 24, "send": 12, "bet": 24, "extension": 8}


def test_the_docs_name_tests_that_exist() -> None:
    """Every ``test_*.py::test_name`` the page cites is a test of that module."""
    cited = re.findall(r"`(test_[a-z_]+)\.py::(test_[a-z0-9_]+)`", DOC.read_text(encoding="utf-8"))
    assert len(cited) > 40
    for module, name in cited:
        source = (Path(__file__).with_name(f"{module}.py")).read_text(encoding="utf-8")
        assert re.search(rf"^def {name}\(", source, re.M), f"{module}.py has no {name}"


def main() -> None:
    for title, text in example_mails():
        print(f"### {title}\n\n```text\n{text}```\n")


if __name__ == "__main__":
    main()
