"""Issue 25, item 4: a mail written after the deadline of the step it is about promises no
time, in every game (the nomination too).

The service reads a mail that arrived before a deadline after that deadline when it was
down, or the mailbox could not be read, or the mail came just before the deadline: the
mail counts (timeliness is judged by arrival), and the answer is written when the step's
deadline has passed (``passed`` in ``Notices.context``). Every kind of mail about a step is
rendered here, as the service renders it, for every acting player on states of a random
playout of each game (``tests/games/test_conformance.py``), with the step's deadline passed:
no "until", "by", "Deadline:" of it, no form to send, and the shared sentence of
``templates/mail/common/passed.txt`` in its place. The service tests
(``tests/service/test_no_past_promises.py``) play the same through the mailboxes.
"""

from __future__ import annotations

from typing import Any

import pytest

from referee.games import GAMES
from referee.games.base import open_steps
from referee.render import LINE_MAX, render_mail, unbreakable
from tests.games.mail_context import DEADLINE
from tests.games.test_conformance import RUNNING_MAIL_EXTRAS, acting, has_template, mail_context, play

GAMES_HERE = sorted(GAMES)  # every registered game, the nomination too
STATES = 40  # states of each game's playout, spread over it
ARRIVED = "Tuesday 3 December 17:59:30 CET"
PROMISES = ("until", "by", "Deadline:", "closes at", "ends", "deadline is", "(")


def flat(text: str) -> str:
    return " ".join(text.split())


def passed(context: dict[str, Any], *, receipt: str | None = None) -> dict[str, Any]:
    """``context`` written after every open step's deadline: a receipt's for a move made in the
    mail's step (``receipt="same"``) or one that opened it (``"opened"``), else an answer's."""
    out = {**context, "passed": True, "steps": [{**s, "passed": True} for s in context["steps"]]}
    out["arrived"] = ARRIVED if receipt or "error" in context else None
    if receipt == "same":
        out["open_before"] = [s["key"] for s in context["steps"]]
    elif receipt == "opened":
        out["open_before"] = ["an-earlier-step"]
    return out


def checked(name: str, kind: str, text: str) -> None:
    where = f"{name} {kind}:\n{text}"
    words = flat(text)
    for word in PROMISES:
        assert f"{word} {DEADLINE}" not in words, where
    assert "Step:" not in text, where  # no form: nothing more can be sent for the step
    assert all(len(line) <= LINE_MAX or unbreakable(line) for line in text.split("\n")), where
    if DEADLINE in words:
        assert f"closed at its deadline, {DEADLINE}" in words or f"deadline at {DEADLINE}" in words, where


@pytest.mark.parametrize("name", GAMES_HERE)
def test_no_mail_written_after_its_steps_deadline_promises_that_time(name: str) -> None:
    game = GAMES[name]
    out = play(game, 0)
    players = acting(out)
    states = [s for s in out.states if open_steps(game, s)]
    rendered = 0
    for state in states[:: max(1, len(states) // STATES)]:
        for player in players:
            context = mail_context(game, state, player, out.players)
            if context["step"] is None or context["deadline"] is None:
                continue
            extra = RUNNING_MAIL_EXTRAS
            cases = [
                ("receipt", passed(context, receipt="same") | extra["receipt"]),
                ("receipt", passed(context, receipt="opened") | extra["receipt"]),
                ("error", passed(context | extra["error"])),
                ("step", passed(context)),
                ("spoof", passed(context) | extra["spoof"]),
            ]
            for kind, ctx in cases:
                if not has_template(name, kind):
                    continue
                mail = render_mail(name, kind, ctx)
                checked(name, kind, mail.text)
                rendered += 1
            receipt = flat(render_mail(name, "receipt", passed(context, receipt="same") | extra["receipt"]).text)
            if player in next(s for s in context["steps"] if s["key"] == context["step"]["key"])["players"]:
                assert (
                    f"closed at its deadline, {DEADLINE}, before we could read your mail. Your mail arrived in"
                    f" time, at {ARRIVED}, so it counts"
                ) in receipt, receipt
    assert rendered, f"no state of {name} with a step and a deadline"
