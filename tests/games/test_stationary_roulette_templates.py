"""The Stationary Roulette mail templates render every round of a match, say what
happened and what to do, and never leak hidden information.

``python -m tests.games.test_stationary_roulette_templates`` rewrites the example mails of
``docs/games/stationary-roulette.md`` (a test checks that the page shows them as rendered).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment

from referee.games.base import Move, State
from referee.match import seals
from referee.render import render_mail
from tests.games.test_stationary_roulette import SPLIT, A, B, G, bet, roulette, schedule_colour, start, submit
from tests.games.test_stationary_roulette_properties import hidden_variants
from tests.games.mail_context import (
    DEADLINE,
    ENV,
    REPLY_TO,
    SERVICE_ENV,
    assert_counts_agree,
    mail_context,
    rewrite_examples,
)
from tests.games.mail_context import EXAMPLES
from tests.games.mail_context import served as service_mail

NAMES = {A: "Alice", B: "Bob"}
DOC = Path(__file__).resolve().parents[2] / "docs" / "games" / "stationary-roulette.md"

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
    # issue 20: the LGT is explained where a mail first names it (referee.render, after rendering)
    assert "  Alice paid the LGT 10 chips (LGT payment for a Black roulette)." in text
    served = render_mail("stationary-roulette", "step", context(OPENED[2], B)).text
    assert "  Alice paid the LGT (the house) 10 chips (LGT payment for a Black" in served
    assert served.count("(the house)") == 1
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
    assert "Alice paid the LGT 5 chips (inactivity fee: no roulette)." in text
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
    # issue 20: "the default" says which
    assert "none yet. Without one by the deadline, the default applies:\n  Bob gets 60 points" in text
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


# --------------------------------------------------------------------------- the page's examples


def served(kind: str, state: State, player: str, **extra: Any) -> str:
    """A mail as the service sends it (:func:`tests.games.mail_context.served`)."""
    return service_mail(G.name, kind, {**context(state, player), **extra}, NAMES)


def sealed(step: str, player: str, moves: list[Move]) -> list[dict[str, Any]]:
    """The seals of a player's moves in a step (``referee.match.seals``), with fixed nonces
    (the service derives each from its secret: ``referee.archive.chain.move_nonce``)."""
    return [
        seals.seal("m1", step, player, move, hashlib.sha256(f"{step} {player} {i}".encode()).hexdigest()[:32], 40 + i)
        for i, move in enumerate(moves)
    ]


def example_mails() -> list[tuple[str, str]]:
    """The example mails of docs/games/stationary-roulette.md, rendered as the service does."""
    # a round mail: round 4 settled (both roulettes Black), round 5 open; Bob's sealed moves
    # of round 4 (his roulette and his bet) are revealed at its close
    revealed = {"step": "round-4", "seals": sealed("round-4", B, SCRIPT[4][B])}
    # an error mail: in round 2, Bob's bet names three colours (a rule the engine checks)
    written = "Hi referee,\n\nStep: Round 2 of 10\n\nBET\nGold: 20\nSilver: 10\nBlack: 10\n\nThanks!"
    (move,) = G.parse(OPENED[2], B, written).moves
    refused = G.apply_move(OPENED[2], B, move)
    assert not refused.accepted and refused.reason is not None
    error = {"reason": refused.reason, "line": None, "penalised": False}
    quoted = {"lines": written.split("\n"), "more": 0}
    # a receipt: Bob's first roulette, sent with the form's lines and a greeting
    reply = "Hi,\n\nStep: Preparation phase\n\nROULETTE\nWinning colour: Gold\nGold: 35\nSilver: 5\nBlack: 0"
    parsed = G.parse(OPENED[0], B, reply)
    (roulette_move,) = parsed.moves
    prepared = submit(OPENED[0], B, roulette_move)
    return [
        (
            "A round mail (results of round 4, then round 5 opens), to Bob",
            served("step", OPENED[5], B, revealed=revealed),
        ),
        ("An error mail (Bob's bet named three colours)", served("error", OPENED[2], B, error=error, quoted=quoted)),
        (
            "A receipt",
            served(
                "receipt",
                prepared,
                B,
                ignored={"lines": parsed.ignored, "more": 0},
                sealed=sealed("round-0", B, [roulette_move]),
            ),
        ),
    ]


def test_the_docs_show_the_example_mails_as_rendered() -> None:
    """docs/games/stationary-roulette.md shows each example mail exactly as rendered (update
    the page with ``python -m tests.games.test_stationary_roulette_templates``)."""
    page = DOC.read_text(encoding="utf-8")
    assert EXAMPLES in page
    mails = page.split(EXAMPLES, 1)[1]
    for title, text in example_mails():
        assert f"### {title}\n\n```text\n{text}```\n" in mails, title


def main() -> None:
    DOC.write_text(rewrite_examples(DOC.read_text(encoding="utf-8"), example_mails()), encoding="utf-8")
    print(f"rewrote the example mails of {DOC}")


if __name__ == "__main__":
    main()
