"""One-tap answers: the common answers a player may send now, as (label, text) pairs.

Each game says its common answers in one place, ``quick_answers(state, player)`` (a
method of the game object; a game without one offers its form as it stands:
:func:`answers_of`). Each text is a whole mail body the game's ``parse`` reads as that
answer: the command and the form's ``Step:`` line. The step mail's HTML part turns each
into a ``mailto:`` button (:mod:`referee.mail.html_mail`); :func:`answers_of` keeps only
the answers the rules accept now, so a button never offers a move that would be refused.
"""

from __future__ import annotations

from typing import Any

from referee.games.base import GameError, clone

__all__ = ["FORM_LABEL", "answers_of", "betting_answers", "with_step"]

FORM_LABEL = "Reply with the form"


def with_step(form: str, command: str) -> str:
    """``command`` in place of the form's first line (the form's other lines, its ``Step:``
    line, kept)."""
    rest = form.split("\n", 1)[1] if "\n" in form else ""
    return (command + "\n" + rest).rstrip("\n") + "\n"


def betting_answers(form: str, legal: dict[str, Any] | None) -> list[tuple[str, str]]:
    """A duel's betting turn (``referee.games.betting.legal_actions``): CALL (or CHECK),
    FOLD, and RAISE 2 (RAISE 1 when only 1 is allowed)."""
    if not form or legal is None:
        return []
    first = form.split("\n", 1)[0].strip()
    out = [(first, with_step(form, first))]
    if first != "CALL" and not legal.get("check"):
        out.append(("CALL", with_step(form, "CALL")))
    out.append(("FOLD", with_step(form, "FOLD")))
    r = legal.get("raise")
    if r is not None and r.get("max", 0) >= 1:
        n = 2 if r["max"] >= 2 else 1
        out.append((f"RAISE {n}", with_step(form, f"RAISE {n}")))
    return out


def answers_of(game: Any, state: Any, player: str) -> list[tuple[str, str]]:
    """The game's quick answers for ``player`` now (its ``quick_answers``, else the form as
    one answer), each read back by the game's parser and kept only when every move it holds
    is accepted by the rules on ``state``; the same text never twice."""
    if state is None:
        return []
    try:
        own = getattr(game, "quick_answers", None)
        if own is not None:
            candidates = list(own(state, player))
        else:
            form = game.form(state, player)
            candidates = [(FORM_LABEL, form)] if form else []
    except GameError:
        return []
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for label, text in candidates:
        if text in seen or not _accepted(game, state, player, text):
            continue
        seen.add(text)
        out.append((label, text))
    return out


# the moves of texts already read, for the games whose parse does not read the state (a
# grammar's PARSE_READS_STATE = False): a close mails the same form text to most players of
# a round, and each would be read again; (game, text) -> the moves, or None when refused
_READ: dict[tuple[str, str], list[Any] | None] = {}
_READ_ENTRIES = 512  # the texts kept (the memory stays small: forms are a few lines)


def _moves(game: Any, state: Any, player: str, text: str) -> list[Any] | None:
    """The moves ``text`` holds for ``player`` (None when the parser refuses it): read
    once per text when the game's parse does not read the state, else read now; a fresh
    copy either way (the rules get moves nobody else holds)."""
    if getattr(getattr(game, "grammar", None), "PARSE_READS_STATE", True):
        try:
            return game.parse(state, player, text).moves
        except GameError:
            return None
    key = (game.name, text)
    if key not in _READ:
        if len(_READ) >= _READ_ENTRIES:
            _READ.clear()
        try:
            _READ[key] = game.parse(state, player, text).moves
        except GameError:
            _READ[key] = None
    moves = _READ[key]
    return None if moves is None else clone(moves)


def _accepted(game: Any, state: Any, player: str, text: str) -> bool:
    moves = _moves(game, state, player, text)
    if not moves:
        return False
    for move in moves:
        try:
            applied = game.apply_move(state, player, move)
        except GameError:
            return False
        if not applied.accepted:
            return False
        state = applied.state
    return True
