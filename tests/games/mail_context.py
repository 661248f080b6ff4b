"""The context the service gives a game's mail templates (``Notices.context``), without a
database, and Jinja environments on the project's templates: shared by the template tests
of every game and the conformance suite."""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any, Sequence

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from referee.games.base import Game, State, open_steps
from referee.render import FILTERS, named, render_mail, template_dir

TEMPLATES = FileSystemLoader(str(template_dir()))
ENV = Environment(loader=TEMPLATES, undefined=StrictUndefined, keep_trailing_newline=True)
# the service's environment (referee.render) also trims blocks; the mails must come out the same
SERVICE_ENV = Environment(
    loader=TEMPLATES, undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True
)
for _env in (ENV, SERVICE_ENV):
    _env.filters.update(FILTERS)  # the service's filters (referee.render), e.g. plural
DEADLINE = "Tuesday 3 December 18:00 CET"
REPLY_TO = "referee+m1@example.org"


def person(key: str, name: str) -> dict[str, str]:
    return {"id": key, "name": name, "email": f"{key}@example.org", "timezone": "Europe/Berlin"}


def mail_context(
    game: Game,
    state: State,
    player: str,
    names: dict[str, str],
    *,
    match_id: str = "m1",
    season: str = "Season 2",
    reply_to: str = REPLY_TO,
    ignored: Sequence[str] | None = None,
) -> dict[str, Any]:
    """``names``: every seated player's key -> display name, in seat order. ``ignored``:
    the lines of the player's mail the parse read but did not use (shown in a receipt)."""
    steps = open_steps(game, state)
    # the step the mail is about, as Notices.context picks it: the player's own, else the first
    step = next((s for s in steps if player in s.players), steps[0] if steps else None)
    result = game.result(state)
    others = [person(q, n) for q, n in names.items() if q != player]
    return {
        "player": person(player, names[player]),
        "opponent": others[0] if len(others) == 1 else None,
        "players": [person(q, n) for q, n in names.items()],
        "match": {"id": match_id, "title": game.title, "game": game.name, "season": season},
        "view": game.view(state, player),
        "form": None if step is None else game.form(state, player),
        "step": None if step is None else {"key": step.key, "kind": step.kind, "title": step.title},
        "deadline": None if step is None or step.waiting else DEADLINE,
        "steps": [
            {
                "key": s.key,
                "kind": s.kind,
                "title": s.title,
                "players": list(s.players),
                "deadline": None if s.waiting else DEADLINE,
                "passed": False,
            }
            for s in steps
        ],
        "passed": False,  # the step's deadline had passed when the mail was written
        "deadline_at": None,
        "arrived": None,
        "open_before": [],
        "result": None if result is None else asdict(result),
        "reply_to": reply_to,
        "ignored": {"lines": list(ignored or []), "more": 0},
        "truncated": False,
        "sealed": [],  # a receipt's seals (referee.match.seals); the service's tests check them
        "revealed": None,
        "next": [],  # the matches the season created to follow this one
    }


# A count and its noun (and "there is/are") that do not agree: "1 chips", "2 chip", "there are 1 chip".
_NOUNS = "chip|point|card|hand|round|turn|hour|garnet|time|line|colour|player|digit"
_DISAGREEING = re.compile(
    rf"(?<![\d.])\b1 (?:{_NOUNS})s\b"
    rf"|(?<![\d.])\b(?:0|[2-9]|[1-9]\d+) (?:{_NOUNS})\b(?![-'\w])"
    r"|\bthere are 1\b|\bthere is (?:0|[2-9]|[1-9]\d+)\b"
)


def assert_counts_agree(text: str) -> None:
    """Every count in ``text`` agrees with its noun and verb ("there is 1 chip to call",
    "there are 2 chips to call"; never "1 chips", "2 chip" nor "there are 1 chip")."""
    found = [text[max(m.start() - 30, 0) : m.end() + 10] for m in _DISAGREEING.finditer(text)]
    assert not found, found


def served(game: str, kind: str, ctx: dict[str, Any], names: dict[str, str]) -> str:
    """A mail as the service sends it (``Notices.mail_player``): the context ``ctx`` with the
    players' ``names`` ({key: name}), the engine's reasons (result, error) worded with names,
    rendered and wrapped by ``referee.render.render_mail``; its subject line, a blank line,
    its text."""
    ctx = {**ctx, "names": names}
    if ctx.get("result") is not None:
        ctx["result"] = {**ctx["result"], "reason": named(ctx["result"]["reason"], names)}
    if "error" in ctx:
        ctx["error"] = {**ctx["error"], "reason": named(ctx["error"]["reason"], names)}
    mail = render_mail(game, kind, ctx)
    return f"Subject: {mail.subject}\n\n{mail.text}"


EXAMPLES = "\n## Example mails\n"


def rewrite_examples(page: str, mails: list[tuple[str, str]]) -> str:
    """A game's docs page with its example mails replaced: the section keeps its heading and
    the text before its first ``###``; the mails follow, up to the next section (if any)."""
    head, found, rest = page.partition(EXAMPLES)
    assert found, f"no {EXAMPLES.strip()!r} section"
    intro = rest.split("\n### ", 1)[0].rstrip("\n")
    after = re.search(r"^## ", rest, re.M)
    tail = "\n" + rest[after.start() :] if after else ""
    blocks = "\n".join(f"### {title}\n\n```text\n{text}```\n" for title, text in mails)
    return f"{head}{EXAMPLES}{intro}\n\n{blocks}{tail}"


def flat(text: str) -> str:
    """The text with its line breaks and runs of spaces as single spaces (for prose)."""
    return " ".join(text.split())


class Mail(str):
    """A rendered mail whose ``in`` reads its prose as wrapped: the mails wrap prose at 72
    characters (issue 20), so a sentence may break at any space; a piece is in the mail when
    it is there as written, or with its line breaks and runs of spaces read as single spaces.
    Everything else (``==``, ``startswith``, ``count``, ``split``) is the exact text."""

    def __contains__(self, piece: object) -> bool:
        if not isinstance(piece, str):
            return False
        return str.__contains__(self, piece) or (bool(piece.strip()) and flat(piece) in flat(self))
