"""The Rewind Hold'em mail templates render at every step of random matches, say what
happened, what the player may do now (with the amounts, REWIND when allowed), by when,
and carry the form; they never depend on the reader's own card.

``python -m tests.games.test_rewind_holdem_templates`` rewrites the example mails of
``docs/games/rewind-holdem.md`` (a test checks that the page shows them as rendered).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import Environment

from referee.games.base import State
from referee.render import render_mail
from tests.games import test_rewind_holdem_golden as golden
from tests.games.test_rewind_holdem import A, B, G, Deal, deal, give_rewind_cards, send, set_stacks, start
from tests.games.test_rewind_holdem_properties import PROPERTY_SETTINGS, dmos, own_card_variants, random_match, seeds
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

__all__ = ["deal"]  # the fixture, used below

NAMES = {A: "Alice", B: "Bob"}
DOC = Path(__file__).resolve().parents[2] / "docs" / "games" / "rewind-holdem.md"


def context(state: State, player: str, ignored: list[str] | None = None) -> dict[str, Any]:
    """What the service gives the templates (see tests/games/mail_context.py)."""
    return mail_context(G, state, player, NAMES, ignored=ignored)


def render(name: str, state: State, player: str, env: Environment = ENV, ignored: list[str] | None = None) -> str:
    return env.get_template(f"mail/rewind-holdem/{name}.txt").render(**context(state, player, ignored))


def assert_mail_shape(text: str) -> None:
    lines = text.split("\n")
    assert lines[0].startswith("Subject: [Rewind Hold'em m1] ")
    assert lines[1] == ""
    assert "\n\n\n" not in text
    assert "None" not in text and "{{" not in text and "{%" not in text
    assert_counts_agree(text)


def check_step_mail(state: State, player: str) -> str:
    text = render("step", state, player)
    assert text == render("step", state, player, SERVICE_ENV)
    assert_mail_shape(text)
    view = G.view(state, player)
    opponent = NAMES[B if player == A else A]
    for record in view["last_rounds"]:
        assert f"=== Result of round {record['round']} ===" in text
        assert f"Chips after round {record['round']}: " in text
        if record["end"] == "fold":
            assert f"{NAMES[record['folder']]} folded, holding {record['hands'][record['folder']]['text']}" in text
        else:
            assert f"Showdown: {NAMES[player]} {record['hands'][player]['text']}" in text
        for pay in record["payments"]:
            assert ("Fold penalty:" if pay["kind"] == "fold penalty" else "Rewind:") in text
    result = G.result(state)
    if result is not None:
        assert text.startswith("Subject: [Rewind Hold'em m1] Final result\n")
        assert "=== The match is over ===" in text and result.reason in text
        assert "Deadline" not in text and "reply to this mail" not in text
        return text
    table = view["table"]
    assert f"=== Now: {view['title']} ===" in text
    assert f"Open cards: {table['open'][0]} and {table['open'][1]}" in text
    assert f"{opponent}'s card: {table['cards'][B if player == A else A]}" in text
    assert "Your card: hidden from you until the round ends." in text
    choices = view["choices"]
    if choices is not None:
        assert f"{view['title']}: your turn" in text.split("\n")[0]
        assert "It is your turn." in text
        assert G.form(state, player).strip() in text
        assert f"reply to this mail (it goes to {REPLY_TO})" in text
        assert f"If nothing arrives from you by {DEADLINE}, the default applies: you {choices['timeout']}" in text
        if choices["raise"] is not None:
            assert f"from RAISE 1 to RAISE {choices['raise']['max']}" in text
            assert f"ALL IN: the most you may raise to, RAISE TO {choices['all_in']['total']}." in text
        else:
            assert "No raise is possible now" in text
        rewind = choices["rewind"]
        assert ("REWIND, on a line of its own" in text) == (rewind is not None)
        if rewind is not None:
            assert f"your Rewind Cards {rewind['cards'][0]} and {rewind['cards'][1]} replace the open cards" in text
    else:
        assert f"It is {opponent}'s turn. If {opponent} sends nothing by {DEADLINE}" in text
        assert "There is nothing for you to send now" in text and "Step:" not in text and "Turn:" not in text
    return text


def check_reminder(state: State, player: str) -> str:
    context = {**globals()["context"](state, player), "left": "5 hours"}
    text = ENV.get_template("mail/rewind-holdem/reminder.txt").render(**context)
    assert text == SERVICE_ENV.get_template("mail/rewind-holdem/reminder.txt").render(**context)
    assert_mail_shape(text)
    choices = G.view(state, player)["choices"]
    if choices is not None:
        assert f"it is your turn in {G.step(state).title}" in text  # type: ignore[union-attr]
        assert choices["text"] in text and G.form(state, player).strip() in text
    else:
        assert "nothing for you to send" in text
    return text


def check_receipt(state: State, player: str) -> str:
    text = render("receipt", state, player, ignored=["Hi Bob", "cheers"])
    assert text == render("receipt", state, player, SERVICE_ENV, ignored=["Hi Bob", "cheers"])
    assert_mail_shape(text)
    action = G.view(state, player)["last_action"]
    assert action["player"] == player
    assert f"Received: {action['command']}" in text.split("\n")[0]
    assert f"Your command for Round {action['round']}, turn {action['turn']}" in text
    assert "| Hi Bob\n| cheers\n" in text
    return text


@settings(PROPERTY_SETTINGS, max_examples=25)
@given(data=st.data(), seed=seeds, dmo=dmos)
def test_mails_render_for_every_step_of_random_matches(data: st.DataObject, seed: int, dmo: str) -> None:
    events, states, _ = random_match(data, seed, dmo)
    for i, state in enumerate(states):
        for player in (A, B):
            check_step_mail(state, player)
            if G.step(state) is not None:
                check_reminder(state, player)
        if i > 0 and events[i - 1][0] == "move":
            check_receipt(state, events[i - 1][1])


@settings(PROPERTY_SETTINGS, max_examples=15)
@given(data=st.data(), seed=seeds, dmo=dmos)
def test_mails_do_not_depend_on_the_readers_own_card(data: st.DataObject, seed: int, dmo: str) -> None:
    events, states, _ = random_match(data, seed, dmo)
    for i, state in list(enumerate(states))[:: max(1, len(states) // 6)]:
        for player in (A, B):
            step = render("step", state, player)
            receipt = render("receipt", state, player) if i > 0 and events[i - 1][1] == player else None
            for variant in own_card_variants(state, player):
                assert render("step", variant, player) == step
                if receipt is not None and events[i - 1][0] == "move":
                    assert render("receipt", variant, player) == receipt


# --------------------------------------------------------------------------- what the mails say


def test_the_first_mail_of_the_starting_player(deal: Deal) -> None:
    deal((3, 8, 5, 6))
    state = start()
    text = render("step", state, A)
    assert text.startswith("Subject: [Rewind Hold'em m1] Round 1, turn 1: your turn\n\nDear Alice,\n")
    assert "Bob's card: 8, so Bob holds High card 8-6-5." in text
    assert "Pot: 2 chips (antes 1 and 1). In the pot this round: Alice 1, Bob 1." in text
    assert "Chips behind: Alice 24, Bob 24." in text
    assert (
        "Deck 1: 36 cards still to be dealt. Its cards you have not seen (your own card is one of them):\n"
        "  1 x4, 2 x4, 3 x4, 4 x4, 5 x3, 6 x3, 7 x4, 8 x3, 9 x4, 10 x4.\n" in text
    )
    assert "Rewind Cards: nobody holds any." in text
    assert "  CALL (or CHECK): nothing to call; the cards are shown at once." in text
    assert (
        "  RAISE n, from RAISE 1 to RAISE 24: put in the call and n more (the same as RAISE TO 2 to RAISE TO 25)."
        in text
    )
    assert "(No REWIND: There are no Rewind Cards: a pair is stored only when somebody folds.)" in text
    assert "keep the Step line, so an old mail is never taken for a new one:\n\nCALL\nStep: Round 1, turn 1\n" in text
    other = render("step", state, B)
    assert other.startswith("Subject: [Rewind Hold'em m1] Round 1, turn 1: Alice to act\n")
    assert "Alice's card: 3, so Alice holds High card 6-5-3." in other
    assert "Bob's card" not in other and "Your card: hidden from you until the round ends." in other


def test_the_mail_after_a_raise_shows_the_betting_and_the_call(deal: Deal) -> None:
    deal((3, 8, 5, 6))
    state = send(start(), A, "RAISE 3")
    text = render("step", state, B)
    assert "Betting so far (Alice first):\n  Alice: RAISE 3 - puts in 3 chips, 4 in all.\n" in text
    assert "  CALL: put in 3 chips (4 each); the cards are shown." in text
    assert (
        "If nothing arrives from you by Tuesday 3 December 18:00 CET, the default applies: "
        "you FOLD (with any fold penalty)." in text
    )
    receipt = render("receipt", state, A)
    assert receipt.startswith("Subject: [Rewind Hold'em m1] Received: RAISE 3 for Round 1, turn 1\n")
    assert "  RAISE 3: you put in 3 chips, 4 in all." in receipt
    # the receipt is the mover's only mail about the new turn: it shows the table as the step mail does
    assert "=== Now: Round 1, turn 2 ===" in receipt
    assert (
        "It is Bob's turn. If Bob sends nothing by Tuesday 3 December 18:00 CET, the default applies: Bob will FOLD."
        in receipt
    )
    assert "Betting so far (Alice first):\n  Alice: RAISE 3 - puts in 3 chips, 4 in all.\n" in receipt


def test_the_result_of_a_fold_with_a_penalty(deal: Deal) -> None:
    deal((3, 8, 8, 6))  # bob folds a Double 8-8-6
    state = send(send(start(), A, "RAISE 1"), B, "FOLD")
    text = render("step", state, A)
    assert "=== Result of round 1 ===\nOpen cards: 8 and 6.\nCards: Alice held 3, Bob held 8.\n" in text
    assert "Bob folded, holding Double 8-8-6: Alice takes the pot of 3 chips." in text
    assert "Fold penalty: folding with a Double costs 5 chips; Bob paid Alice 5 chips." in text
    assert "The open cards 8 and 6 are now Bob's Rewind Cards." in text
    assert "Chips after round 1: Alice 31, Bob 19." in text
    assert "Rewind Cards: Bob holds 8 and 6 (stored by the fold in round 1)." in text
    receipt = render("receipt", state, B)
    assert "=== Result of round 1 ===\nOpen cards: 8 and 6.\nCards: Bob held 8, Alice held 3.\n" in receipt
    assert "Chips after round 1: Bob 19, Alice 31." in receipt
    # the folder starts round 2 (the loser of a round starts the next): the receipt carries the form
    assert "=== Now: Round 2, turn 1 ===" in receipt and "It is your turn. You may send one of:" in receipt
    assert receipt.count("CALL\nStep: Round 2, turn 1\n") == 1


def test_the_mails_of_a_rewind(deal: Deal) -> None:
    deal((9, 2, 4, 6), (5, 2, 1, 9))
    state = send(start(), A, "FOLD")
    offer = render("step", state, A)
    assert (
        "  REWIND, on a line of its own together with your command: your Rewind Cards 4 and 6 replace the open "
        "cards 1 and 9. If the round then ends in a called showdown that is not a tie, its loser also pays the "
        "winner 2 chips (the pot now)." in offer
    )
    assert "Rewind Cards: Bob holds" not in render("step", state, B) and "you hold 4 and 6" in offer
    state = send(state, A, "RAISE 2\nREWIND")
    mid = render("step", state, B)
    assert "Open cards: 4 and 6 (the Rewind Cards of Alice; the cards dealt, 1 and 9, are discarded)." in mid
    assert "  Alice: RAISE 2 with REWIND - puts in 2 chips, 3 in all." in mid
    assert "REWIND: your Rewind Cards replaced the open cards" in render("receipt", state, A)
    state = send(state, B, "CALL")
    text = render("step", state, B)
    assert (
        "Open cards dealt: 1 and 9. Alice rewound: the Rewind Cards 4 and 6 replaced them (the pot was 2 chips)."
        in text
    )
    assert "Showdown: Bob High card 6-4-2, Alice Straight 4-5-6." in text
    assert (
        "Rewind: Alice rewound and the round ended in a called showdown, so its loser Bob paid Alice 2 chips "
        "(the pot at the rewind)." in text
    )


def test_the_mail_of_an_all_in_ante_and_the_end(deal: Deal) -> None:
    deal((3, 8, 5, 6), (2, 9, 4, 5))
    state = send(set_stacks(start(), {A: 1, B: 47}), A, "FOLD")
    text = render("step", state, A)
    assert "=== Result of round 1 ===" in text and "=== Result of round 2 ===" in text
    assert "No betting: the ante took all of Alice's chips, so the round went straight to the showdown." in text
    assert text.startswith("Subject: [Rewind Hold'em m1] Final result\n")
    assert "alice has no chips left after round 2: bob wins the match." in text
    assert "You: loss, victory points: 0. Bob: win, victory points: 1." in text
    assert "Final chips: Alice 0, Bob 50, after 2 rounds." in text


def test_the_mail_of_a_tie(deal: Deal) -> None:
    deal((6, 6, 2, 9))
    text = render("step", send(start(), A, "CHECK"), B)
    assert "An exact tie: the pot of 2 chips is split, 1 each." in text


def test_the_mail_names_whose_rewind_cards_are_on_offer(deal: Deal) -> None:
    state = give_rewind_cards(start(), B, (3, 3))
    text = render("step", state, A)
    assert "Rewind Cards: Bob holds 3 and 3" in text
    assert "(No REWIND: The Rewind Cards 3 and 3 are Bob's" in text


def test_service_renderer_reads_the_subject_and_body() -> None:
    mail = render_mail("rewind-holdem", "step", context(start(), A))
    assert mail.subject == "[Rewind Hold'em m1] Round 1, turn 1: your turn"
    assert mail.text.startswith("Dear Alice,\n")


# --------------------------------------------------------------------------- the page's examples


def served(kind: str, state: State, player: str, **extra: Any) -> str:
    """A mail as the service sends it (:func:`tests.games.mail_context.served`)."""
    return service_mail(G.name, kind, {**context(state, player), **extra}, NAMES)


def golden_match() -> list[State]:
    """Every state of the golden match (``test_rewind_holdem_golden``: seed 126, Bob the
    DMO), replayed from its inputs: the start, then the state after each mail or deadline."""
    state = G.initial_state(golden.SEED, [A, B], {"dmo": golden.DMO})
    states = [state]
    for line in golden.inputs_of(golden.FIXTURE.read_text()):
        body = line[2:]
        if body.startswith("timeout "):
            state = G.apply_timeout(state)
        else:
            player, _, mail = body.partition(": ")
            state = send(state, player, mail.replace(" / ", "\n"))
        states.append(state)
    return states


def at_turn(states: list[State], title: str) -> State:
    return next(s for s in states if G.step(s) is not None and G.step(s).title == title)  # type: ignore[union-attr]


# Alice's mail in round 5 of the golden match: her command and REWIND, the form's Step line,
# and a greeting (ignored)
REWOUND = "Hi Bob,\nREWIND\nRAISE TO 5\nStep: Round 5, turn 1"


def example_mails() -> list[tuple[str, str]]:
    """The example mails of docs/games/rewind-holdem.md, rendered as the service does."""
    states = golden_match()
    offer = at_turn(states, "Round 5, turn 1")
    parsed = G.parse(offer, A, REWOUND)
    return [
        ("Alice's turn, with a REWIND on offer (after her fold in round 4)", served("step", offer, A)),
        (
            "The receipt of her REWIND + RAISE TO 5",
            served("receipt", send(offer, A, REWOUND), A, ignored={"lines": parsed.ignored, "more": 0}),
        ),
        (
            "A rewind paid at a called showdown (round 12), to Bob, who waits",
            served("step", at_turn(states, "Round 13, turn 1"), B),
        ),
        ("The final mail (a timeout fold with a capped penalty)", served("step", states[-1], B)),
    ]


def test_the_docs_show_the_example_mails_as_rendered() -> None:
    """docs/games/rewind-holdem.md shows each example mail exactly as rendered (update the
    page with ``python -m tests.games.test_rewind_holdem_templates``)."""
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
