"""Helpers the games' mail grammars share for reading the lines of a mail."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

_MARKS = re.compile(r"[*_]+")


def strip_emphasis(line: str) -> str:
    """``line`` without the markdown emphasis marks (``*`` and ``_``) around its words.

    A run of marks is dropped at the start or the end of a word, also where punctuation
    lies between it and the word (``**CALL**``, ``_FOLD_``, ``RAISE *3*``, ``__BET 2__``,
    ``**Raise**: 3``, ``*Gold:* 20``, ``(*3*)``); a run between two letters or digits is
    part of the word and kept (``1_0``, ``2_000``, ``all_in``, ``snake_case``), so a number
    written with an underscore stays one word that a grammar refuses, quoting it as
    written, instead of reading ``1_0`` as 10 (as ``int("1_0")`` would). The grammars call
    it on a line after taking off its bullet. Time linear in the length of the line."""

    def drop(mark: re.Match[str]) -> str:
        start, end = mark.span()
        inside = 0 < start and end < len(line) and line[start - 1].isalnum() and line[end].isalnum()
        return mark.group() if inside else ""

    return _MARKS.sub(drop, line)


# a bullet a mail client or a player puts before a line: - * + • · ◦ ▪ ‣ –
BULLETS = "-*+\u2022\u00b7\u25e6\u25aa\u2023\u2013"


def unbullet(line: str) -> str:
    """``line`` without a bullet and the space after it (``- CALL``, ``\u2022 Gold: 20`` ->
    ``CALL``, ``Gold: 20``); a mark that touches its word (``-5``, ``*3*``) is no bullet."""
    if len(line) > 1 and line[0] in BULLETS and line[1].isspace():
        return line[1:].lstrip()
    return line


def clean_line(raw: str) -> str:
    """A line of a mail as the grammars read it: stripped, without its bullet and without
    the emphasis around its words (:func:`strip_emphasis`)."""
    return strip_emphasis(unbullet(raw.strip())).strip()


# Ruling (every grammar): a longer line is never a command (a pasted log costs nothing)
MAX_LINE_CHARS = 300
SHOWN_CHARS = 40  # longer pieces of a mail are cut when a reason or the ignored list quotes them


def shown(text: str) -> str:
    """``text`` as a reason or the list of ignored lines quotes it: cut to 40 characters."""
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def mail_lines(
    text: str, ignored: list[str], clean: Callable[[str], str] = clean_line
) -> Iterator[tuple[str, str, list[str]]]:
    """The lines of a mail a grammar of commands reads, one at a time, as ``(written, line,
    words)``: the line as written (stripped), as read (``clean``: :func:`clean_line`) and its
    words. Blank lines are passed over; a quoted line (``>``), a line longer than
    ``MAX_LINE_CHARS`` (quoted cut, :func:`shown`) and a line with no word once cleaned go to
    ``ignored`` as they come, so the grammar's own entries keep the mail's order."""
    for raw in text.splitlines():
        written = raw.strip()
        if not written:
            continue
        if len(written) > MAX_LINE_CHARS or written.startswith(">"):
            ignored.append(shown(written))
            continue
        line = clean(written)
        words = line.split()
        if not words:
            ignored.append(written)
            continue
        yield written, line, words
