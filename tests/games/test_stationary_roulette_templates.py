"""The Stationary Roulette mail templates render every round of a match, say what
happened and what to do, and never leak hidden information."""

from __future__ import annotations

from typing import Any

import pytest
from jinja2 import Environment

from referee.games.base import Move, State
from referee.render import render_mail
from tests.games.test_stationary_roulette import SPLIT, A, B, G, bet, roulette, schedule_colour, start, submit
from tests.games.test_stationary_roulette_properties import hidden_variants
from tests.games.mail_context import DEADLINE, ENV, REPLY_TO, SERVICE_ENV, assert_counts_agree, mail_context

NAMES = {A: "Alice", B: "Bob"}

# A match with Black takes (single and double), bonuses, misses and revisions.
SCRIPT: dict[int, dict[str, list[Move]]] = {
    0: {A: [roulette("Gold"), roulette("Black")], B: [roulette("Gold")]},
    1: {A: [roulette("Gold"), SPLIT], B: [roulette("Black"), bet(gold=30, black=10)]},
    2: {A: [bet(gold=40)], B: [roulette("Gold", gold=25, silver=15), bet(gold=20, silver=20)]},
    3: {A: [roulette("Black"), SPLIT], B: [roulette("Black")]},
    4: {A: [roulette("Gold"), bet(gold=5, black=35)], B: [roulette("Gold"), bet(black=40)]},
}


def context(state: State, player: str, ignored: list[str] | None = None) -> dict[str, Any]:
    """What the service gives the templates (see tests/games/mail_context.py)."""
    return mail_context(G, state, player, NAMES, ignored=ignored)


def render(name: str, state: State, player: str, env: Environment = ENV, ignored: list[str] | None = None) -> str:
    return env.get_template(f"mail/stationary-roulette/{name}.txt").render(**context(state, player, ignored))


def played() -> tuple[list[State], list[State]]:
    """States when each round opens, and just before each round's deadline."""
    state = start()
    opened, submitted = [state], []
    while G.step(state) is not None:
        r = state["round"]
        default = {p: [roulette(schedule_colour(r))] * (r <= 9) + [SPLIT] * (r >= 1) for p in (A, B)}
        for player, moves in SCRIPT.get(r, default).items():
            for move in moves:
                state = submit(state, player, move)
        submitted.append(state)
        state = G.apply_timeout(state)
        opened.append(state)
    return opened, submitted


OPENED, SUBMITTED = played()


def assert_mail_shape(text: str) -> None:
    lines = text.split("\n")
    assert lines[0].startswith("Subject: [Stationary Roulette m1] ")
    assert lines[1] == ""
    assert "\n\n\n" not in text
    assert_counts_agree(text)


@pytest.mark.parametrize("player", [A, B])
@pytest.mark.parametrize("index", range(len(OPENED)), ids=[f"after-round-{i - 1}" for i in range(len(OPENED))])
def test_step_mail_renders_every_round(index: int, player: str) -> None:
    state = OPENED[index]
    text = render("step", state, player)
    assert_mail_shape(text)
    view = G.view(state, player)
    last = view["last_result"]
    if last is not None:
        assert f"=== Result of {last['title']} ===" in text
        for record in last["roulettes"]:
            assert f"Roulette prepared by {NAMES[record['preparer']]}" in text
            assert f"Winning colour: {record['winning']}." in text
        assert "Chip movements:" in text
        assert f"Totals after {last['title']}:" in text
        assert "Winning colours left" in text
    if G.result(state) is None:
        assert f"=== Now: {view['title']} ===" in text
        assert f"Deadline: {DEADLINE}." in text
        form = G.form(state, player)
        assert (form.strip() in text) if form else ("nothing for you to send" in text)
        if form:
            assert f"reply to this mail (it goes to {REPLY_TO})" in text
    else:
        assert "=== The match is over ===" in text
        result = G.result(state)
        assert result is not None and result.reason in text


def test_first_mail_invites_the_first_roulette() -> None:
    text = render("step", OPENED[0], A)
    assert text.startswith(
        "Subject: [Stationary Roulette m1] Preparation phase is open - prepare your first roulette\n\n"
    )
    assert "* Prepare a roulette for Bob to bet on in round 1." in text
    assert "There is nothing to bet on in the preparation phase" in text
    assert "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0\n" in text


def test_round_result_lines_for_takes_bonus_and_lgt() -> None:
    text = render("step", OPENED[2], B)  # round 1 settled
    assert "Subject: [Stationary Roulette m1] Round 1 of 10 result - Round 2 of 10 is open" in text
    assert "Roulette prepared by Alice in the preparation phase, bet on by Bob:" in text
    assert "  Winning colour: Black. Points placed: Gold 30, Silver 10, Black 0." in text
    assert "  Bob's bet: Gold 30, Silver 0, Black 10." in text
    assert "Alice takes 40 - 10 (bet on Black) = 30 chips from Bob." in text
    assert "  Alice's bet: Gold 20, Silver 20, Black 0." in text
    assert "  Points: Bob +30 (placed on Gold), Alice +20 (bet on Gold)." in text
    assert "  Bob paid Alice 30 chips (Black take)." in text
    assert "  Alice paid the LGT (the house) 10 chips (LGT payment for a Black roulette)." in text
    assert "  Bob: 30 points (+30 this round), 70 chips; lost to Black takes 30 of 100" in text


def test_round_result_lines_for_bonus_and_double_black() -> None:
    bonus = render("step", OPENED[3], A)  # round 2: alice all 40 on Gold, bob's roulette was Black
    assert "Bonus: Alice bet all 40 on Gold, which was wrong: Bob +20 points." in bonus
    double = render("step", OPENED[5], A)  # round 4: both roulettes Black
    assert "Black take (net of both Black roulettes: Alice 0, Bob 5): Alice owes Bob 5 chips." in double
    assert "Bonus: Bob bet all 40 on Black, which was right: Bob +20 points." in double


def test_missed_bet_and_missed_roulette_are_explained() -> None:
    text = render("step", OPENED[3], B)  # round 2: alice sent no roulette
    assert "Alice prepared no roulette: Bob gets 60 points and has nothing to bet on next round." in text
    assert "Alice paid the LGT (the house) 5 chips (inactivity fee: no roulette)." in text
    assert "There is nothing to bet on this round: your opponent prepared no roulette in round 2." in text
    assert "your opponent prepared no roulette" not in render("step", OPENED[3], A)


def test_final_mail_has_standings_and_victory_points() -> None:
    text = render("step", OPENED[-1], A)
    assert "Subject: [Stationary Roulette m1] Final result" in text
    assert "You: loss, victory points: 0. Bob: win, victory points: 1." in text
    assert "Final standings:" in text
    assert "Deadline" not in text


@pytest.mark.parametrize("player", [A, B])
@pytest.mark.parametrize("index", range(len(SUBMITTED)), ids=[f"round-{i}" for i in range(len(SUBMITTED))])
def test_receipt_restates_what_stands(index: int, player: str) -> None:
    state = SUBMITTED[index]
    text = render("receipt", state, player)
    assert_mail_shape(text)
    pending = G.view(state, player)["pending"]
    if pending["roulette"]:
        assert f"  Winning colour: {pending['roulette']['winning']}." in text
    if pending["bet"]:
        assert f"{pending['unbet']} of your 40 points left unbet" in text
    assert f"You may revise until {DEADLINE}" in text
    assert G.form(state, player).strip() in text


def test_receipt_lists_what_the_parse_read_but_did_not_use() -> None:
    text = "Hi!\nBET\nGold: 20 (feeling lucky)\nSilver: 20\nTel: +49 30 1234567\n"
    parsed = G.parse(OPENED[1], A, text)
    state = submit(OPENED[1], A, parsed.moves[0])
    receipt = render("receipt", state, A, ignored=parsed.ignored)
    for line in ("Hi!", "(feeling lucky)", "Tel: +49 30 1234567"):
        assert f"| {line}\n" in receipt
    assert "| " not in render("receipt", state, A)


def test_receipt_mentions_missing_parts() -> None:
    state = submit(OPENED[1], A, SPLIT)
    text = render("receipt", state, A)
    assert "Gold 20, Silver 20, Black 0; 0 of your 40 points left unbet." in text
    assert "none yet. Without one by the deadline, Bob gets 60 points" in text
    # issue 20: the receipt never shows as the player's submission what they did not send
    assert "Your current submission, as a form:" not in text
    assert "Your current submission, as a form; the ROULETTE part is only an example" in text


@pytest.mark.parametrize("index", range(len(SUBMITTED)), ids=[f"round-{i}" for i in range(len(SUBMITTED))])
def test_mails_do_not_depend_on_hidden_information(index: int) -> None:
    for state in (SUBMITTED[index], OPENED[index + 1]):
        for player in (A, B):
            step, receipt = render("step", state, player), None
            if G.result(state) is None:
                receipt = render("receipt", state, player)
            for variant in hidden_variants(state, player):
                assert render("step", variant, player) == step
                if receipt is not None:
                    assert render("receipt", variant, player) == receipt


@pytest.mark.parametrize("name", ["step", "receipt"])
def test_mails_are_the_same_with_the_services_block_trimming(name: str) -> None:
    states = OPENED if name == "step" else SUBMITTED
    for state in states:
        for player in (A, B):
            assert render(name, state, player, SERVICE_ENV) == render(name, state, player)


def test_service_renderer_reads_the_subject_and_body() -> None:
    mail = render_mail("stationary-roulette", "step", context(OPENED[2], A))
    assert mail.subject == "[Stationary Roulette m1] Round 1 of 10 result - Round 2 of 10 is open"
    assert mail.text.startswith("Dear Alice,\n")
