"""The Indian Poker mail templates render at every step of random matches, for both
players, say what happened and what may be done now, and never show a player their own
card before the showdown.

``python -m tests.games.test_indian_poker_templates`` rewrites the example mails of
``docs/games/indian-poker.md`` (a test checks that the page shows them as rendered).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment

from referee.games.base import State
from referee.render import named, render_mail
from tests.games.test_indian_poker import A, B, CALL, FOLD, G, raise_by, setup, submit
from tests.games.test_indian_poker_properties import own_card_variants, random_match
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
DOC = Path(__file__).resolve().parents[2] / "docs" / "games" / "indian-poker.md"


def context(state: State, player: str, ignored: list[str] | None = None) -> dict[str, Any]:
    """What the service gives the templates (see tests/games/mail_context.py)."""
    return mail_context(G, state, player, NAMES, ignored=ignored)


def render(name: str, state: State, player: str, env: Environment = ENV, ignored: list[str] | None = None) -> str:
    extra = {"left": "5 hours"} if name == "reminder" else {}
    return env.get_template(f"mail/indian-poker/{name}.txt").render(**context(state, player, ignored), **extra)


def matches() -> list[list[State]]:
    """The states of a few random matches: every kind of hand (ties, folds of a 10,
    all-in antes, carried pots, timeouts) comes up in them."""
    out = []
    for i in range(12):
        style = {"rng": i, "dmo": (A, B)[i % 2], "timeouts": (0.0, 0.3, 1.0)[i % 3], "forbidden": 0.0}
        out.append(random_match(1000 + i, style)[1])
    return out


MATCHES = matches()
ALL_STATES = [s for states in MATCHES for s in states]


def test_the_random_matches_cover_every_kind_of_hand() -> None:
    hands = [h for states in MATCHES for h in states[-1]["history"]]
    assert any(h["tie"] for h in hands)
    assert any(h["penalty"] for h in hands)
    assert any(h["end"] == "all-in" for h in hands)
    assert any(h["end"] == "fold" and not h["penalty"] for h in hands)
    assert any(a["timeout"] for h in hands for a in h["actions"])
    assert any(h["carried_in"] for h in hands)


def assert_mail_shape(text: str) -> None:
    lines = text.split("\n")
    assert lines[0].startswith("Subject: [Indian Poker m1] ")
    assert lines[1] == ""
    assert "\n\n\n" not in text
    assert "None" not in text
    assert_counts_agree(text)


@pytest.mark.parametrize("index", range(len(MATCHES)))
def test_step_and_receipt_render_at_every_step(index: int) -> None:
    for state in MATCHES[index]:
        result = G.result(state)
        for player in (A, B):
            view = G.view(state, player)
            for name in ("step", "receipt"):
                text = render(name, state, player)
                assert_mail_shape(text)
                assert render(name, state, player, SERVICE_ENV) == text
                for h in view["recent_hands"]:
                    assert f"=== Result of hand {h['hand']} ===" in text
                if result is not None:
                    assert "=== The match is over ===" in text and result.reason in text
            step = render("step", state, player)
            if result is None:
                opponent = B if player == A else A
                assert f"{NAMES[opponent]}'s card: {state['cards'][opponent]}." in step
                assert f"=== Hand {state['hand']} ===" in step
                if view["your_turn"]:
                    assert G.form(state, player).strip() in step
                    assert view["choices"] in step
                    assert f"Deadline: {DEADLINE}." in step
                    assert f"reply to this mail (it goes to {REPLY_TO})" in step
                else:
                    assert "There is nothing for you to send now" in step


@pytest.mark.parametrize("index", range(len(MATCHES)))
def test_reminder_renders_at_every_open_step(index: int) -> None:
    """To the player to act: the deadline, what a timeout does, the choices and the form;
    to the other (the service reminds only the player awaited): nothing to send."""
    for state in MATCHES[index]:
        step = G.step(state)
        if step is None:
            continue
        for player in (A, B):
            text = render("reminder", state, player)
            assert_mail_shape(text)
            assert render("reminder", state, player, SERVICE_ENV) == text
            assert text.startswith(f"Subject: [Indian Poker m1] Reminder: {step.title} closes in 5 hours\n")
            view = G.view(state, player)
            if view["your_turn"]:
                assert f"it is your turn in {step.title}" in text
                assert f"The deadline is {DEADLINE}, in 5 hours." in text
                timeout = "CALL" if view["legal"]["check"] else "FOLD"
                assert f"If nothing arrives by then, the default applies: you {timeout}" in text
                assert view["choices"] in text and G.form(state, player).strip() in text
                opponent = B if player == A else A
                assert f"{NAMES[opponent]}'s card is {state['cards'][opponent]}." in text
            else:
                assert "nothing for you to send" in text and "Step:" not in text and "Turn:" not in text


def test_service_renders_the_reminder_of_the_game_not_the_common_one() -> None:
    state = submit(setup([(8, 3)]), A, raise_by(2))
    mail = render_mail("indian-poker", "reminder", {**context(state, B), "left": "2 hours"})
    assert mail.subject == "[Indian Poker m1] Reminder: Hand 1, action 2 closes in 2 hours"
    assert "colours" not in mail.text and "CALL\nStep: Hand 1, action 2\n" in mail.text


@pytest.mark.parametrize("index", range(len(MATCHES)))
def test_mails_never_show_a_player_their_own_card_before_the_showdown(index: int) -> None:
    """Any value of the player's own card (and any order of the undealt cards) gives the
    same mails, word for word."""
    for state in MATCHES[index][:60]:
        for player in (A, B):
            step, receipt = render("step", state, player), render("receipt", state, player)
            reminder = None if G.step(state) is None else render("reminder", state, player)
            for variant in own_card_variants(state, player):
                assert render("step", variant, player) == step
                assert render("receipt", variant, player) == receipt
                if reminder is not None:
                    assert render("reminder", variant, player) == reminder


def test_first_mail() -> None:
    state = setup([(8, 3), (1, 2)])
    text = render("step", state, A)
    assert text.startswith("Subject: [Indian Poker m1] Hand 1, action 1: your turn\n\nDear Alice,\n")
    assert "Bob's card: 3. Your own card is not told to you" in text
    assert "Pot: 2 chips. Your chips: 24 (bet in this hand: 1). Bob's chips: 24 (bet in this hand: 1)." in text
    assert "  RAISE n      your bet becomes your opponent's bet plus n chips (n from 1 to 24)" in text
    assert "If nothing arrives from you by then, the default applies: you CALL" in text
    assert "CHECK\nStep: Hand 1, action 1\n" in text
    other = render("step", state, B)
    assert other.startswith("Subject: [Indian Poker m1] Hand 1, action 1: Alice's turn\n")
    assert "Alice's card: 8." in other and "It is Alice's turn (Hand 1, action 1)" in other


def test_hand_results_for_showdown_fold_penalty_and_tie() -> None:
    state = setup([(8, 3), (2, 10), (5, 5), (1, 2)])
    state = submit(state, A, raise_by(2))
    state = submit(state, B, CALL)
    text = render("step", state, B)
    assert "Cards: you had 3, Alice had 8." in text
    assert "  Alice: RAISE 2 - puts in 2 chips, 3 in total\n  Bob: CALL - puts in 2 chips, 3 in total" in text
    assert "Showdown: Alice's 8 beats Bob's 3: Alice takes the pot of 6 chips." in text
    state = submit(state, B, raise_by(1))
    state = submit(state, A, FOLD)  # bob holds the 10: no penalty; alice folds a 2
    state = submit(state, A, "CALL")  # hand 3: a tie
    text = render("step", state, A)
    assert "Tie: both cards are 5. The pot of 2 chips is set aside" in text
    assert "No ante this hand: the last hand was a tie, and its pot of 2 chips is carried over." in text


def test_ten_fold_penalty_and_timeout_are_explained() -> None:
    state = submit(setup([(3, 10), (1, 2)]), A, raise_by(2))
    state = G.apply_timeout(state)
    text = render("step", state, B)
    assert "  Bob: FOLD (no answer by the deadline) - folds" in text
    assert "Bob folded holding a 10 and pays Alice 10 chips." in text


def test_all_in_ante_and_final_mail() -> None:
    state = setup([(1, 9)], stacks={A: 2, B: 48}, hands_before=20)
    text = render("step", state, A)
    assert text.startswith("Subject: [Indian Poker m1] Final result\n")
    assert "No betting: an ante took all of a player's chips, so the hand went straight to the showdown." in text
    assert "bob wins: alice has no chips left after hand 21." in text
    assert "You: loss, victory points: 0. Bob: win, victory points: 1." in text
    assert "Deadline" not in text


def test_receipt_restates_the_command_and_lists_what_was_ignored() -> None:
    state = setup([(8, 3), (1, 2)])
    parsed = G.parse(state, A, "Hi Bob!\nRAISE 3 (bluffing?)\nCheers")
    state = submit(state, A, parsed.moves[0])
    text = render("receipt", state, A, ignored=parsed.ignored)
    assert text.startswith("Subject: [Indian Poker m1] Received: RAISE 3 in hand 1\n")
    assert "Recorded for hand 1: Alice: RAISE 3 - puts in 3 chips, 4 in total." in text
    assert "Now it is Bob's turn (Hand 1, action 2)" in text
    for line in ("Hi Bob!", "(bluffing?)", "Cheers"):
        assert f"| {line}\n" in text
    assert "| " not in render("receipt", state, A)


def test_service_renderer_reads_the_subject_and_body() -> None:
    mail = render_mail("indian-poker", "step", context(setup([(8, 3)]), A))
    assert mail.subject == "[Indian Poker m1] Hand 1, action 1: your turn"
    assert mail.text.startswith("Dear Alice,\n")


def test_random_states_render_in_the_service_environment() -> None:
    r = random.Random(5)
    for state in r.sample(ALL_STATES, 40):
        for player in (A, B):
            render_mail("indian-poker", "step", context(state, player))
            render_mail("indian-poker", "receipt", context(state, player))


# --------------------------------------------------------------------------- the page's examples


def served(kind: str, state: State, player: str, **extra: Any) -> str:
    """A mail as the service sends it (:func:`tests.games.mail_context.served`)."""
    return service_mail(G.name, kind, {**context(state, player), **extra}, NAMES)


def example_hands() -> dict[str, State]:
    """Hand 1 (Alice 8, Bob 3; Alice, the DMO, acts first and raises 2), Bob's call with a
    word of his own, and hand 2 (Alice 7, Bob 5), where Bob, who lost hand 1, acts first.
    The rest of the 20-card deck follows in a shuffled order, as in a match."""
    first = [8, 3, 7, 5]
    rest = [card for card in range(1, 11) for _ in range(2)]
    for card in first:
        rest.remove(card)
    random.Random(7).shuffle(rest)
    cards = first + rest
    dealt = setup([(cards[i], cards[i + 1]) for i in range(0, len(cards), 2)])
    raised = submit(dealt, A, raise_by(2))
    return {"raised": raised, "hand 2": submit(raised, B, G.parse(raised, B, CALLED).moves[0])}


CALLED = "CALL\nStep: Hand 1, action 2\nGood luck!"  # Bob's reply: the form, and a line of his own
# The refusals of the page, in hand 2: (who, what they send, in words); the first is an
# example mail, the page quotes the reasons of the others
REFUSALS = [
    (B, "RAISE 30\nStep: Hand 2, action 1", "Bob sends `RAISE 30` holding 21"),
    (A, "CALL", "Alice sends `CALL` while it is Bob's turn"),
    (B, "CALL\nStep: Hand 1, action 2", "Bob answers the mail of hand 1 again in hand 2"),
]


def refusal(state: State, player: str, written: str) -> str:
    """The reason the engine gives for a command it refuses, worded with names."""
    (move,) = G.parse(state, player, written).moves
    applied = G.apply_move(state, player, move)
    assert not applied.accepted and applied.reason is not None
    return str(named(applied.reason, NAMES))


def example_mails() -> list[tuple[str, str]]:
    """The example mails of docs/games/indian-poker.md, rendered as the service does."""
    h = example_hands()
    parsed = G.parse(h["raised"], B, CALLED)
    player, written, _ = REFUSALS[0]
    error = {"reason": refusal(h["hand 2"], player, written), "line": None, "penalised": False}
    quoted = {"lines": written.split("\n"), "more": 0}
    return [
        ("A turn, to the player to act (Bob; Alice raised 2)", served("step", h["raised"], B)),
        (
            "A receipt (Bob called; the showdown; Bob acts first in hand 2)",
            served("receipt", h["hand 2"], B, ignored={"lines": parsed.ignored, "more": 0}),
        ),
        (
            "A rejection (Bob raises more than he holds)",
            served("error", h["hand 2"], player, error=error, quoted=quoted),
        ),
    ]


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_docs_show_the_example_mails_as_rendered() -> None:
    """docs/games/indian-poker.md shows each example mail exactly as rendered (update the
    page with ``python -m tests.games.test_indian_poker_templates``), and quotes the reason
    of each refusal it lists as the error mail gives it."""
    page = DOC.read_text(encoding="utf-8")
    assert EXAMPLES in page
    mails = page.split(EXAMPLES, 1)[1]
    for title, text in example_mails():
        assert f"### {title}\n\n```text\n{text}```\n" in mails, title
    hand_2 = example_hands()["hand 2"]
    for player, written, said in REFUSALS[1:]:
        assert flat(f'{said}: "{refusal(hand_2, player, written)}"') in flat(mails), said


def main() -> None:
    DOC.write_text(rewrite_examples(DOC.read_text(encoding="utf-8"), example_mails()), encoding="utf-8")
    print(f"rewrote the example mails of {DOC}")


if __name__ == "__main__":
    main()
