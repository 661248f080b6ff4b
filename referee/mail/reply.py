"""A reply read against the mail it answers: the player's part is what is not a copy of
our mail, wherever it stands (above, below or inside the copy).

The referee knows every mail it sent byte for byte, which no generic reply parser does.
:func:`read_against` lines the reply's lines up with the text of our mail, tolerant of the
ways clients copy a mail into a reply:

* any quote prefix (``>``, ``> >``, ``|``, a tab, spaces, none): taken off each line and
  counted as its depth;
* re-wrapping at another width and ``format=flowed`` (undone before this): lines are
  compared as runs of words of one stream, not as lines;
* trailing spaces, blank lines dropped or added, punctuation around words (bullets,
  emphasis), case;
* Unicode normalisation (NFC/NFD, compatibility forms) and the usual mis-decoding of UTF-8
  read as Latin-1 or cp1252 (``TomÃ¡s`` is ``Tomás``);
* header blocks and attributions in any language between the player's text and the copy:
  the player's text above and below the copy is read as :func:`strip_quoted` leaves it.

Lines that match our mail are *copy* lines when they make one increasing run through it
(the longest such run: a line the player typed that happens to equal a line of ours, above
or below the quote, is not part of it); in a copy whose lines carry a quote prefix, a line
without one is never copy. What remains is the player's:

* the text above the copy and the text below it;
* lines inside the copy, at most as deeply quoted as the copy, that are not ours: the
  player's edits. An edit standing where lines of a **form section** of our mail are
  missing changes that section: the section is read whole, as the player left it (its
  untouched lines too, from the reply); a section the player did not touch is never read,
  so an example or a current choice shown in our form is never taken for a move. A form
  section is a paragraph of the form the mail carried (``Outbox.form``): ``ROULETTE`` and
  ``BET`` apart, a command with its ``Step:`` line.

Every line is looked at a bounded number of times (a line that does not continue the copy
is tried at no more than :data:`CANDIDATES` places), so the work is linear in the sizes of
the reply and of our mail. Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from referee.mail.quotes import strip_quoted

__all__ = ["Against", "read_against", "words"]

CANDIDATES = 24  # places tried for a line that does not continue the copy where the last one ended
MIN_COPY_LINES = 2  # fewer lines of ours than this: no copy found (the caller reads the mail as before)
MAX_EDITS = 4  # the player's lines inside a copy, at most (or half its lines): more, it is a quote of another mail
CHECK_WORDS = ("step", "turn")  # the first word of a form's check line ("Step: ...", "Turn:" before issue 20)
GUESS_SHARE = 6  # tenths of our mail's lines a copy must hold, when unquoted or of a mail the reply does not name
_QUOTE = " \t>|"
_EDGE = "".join(chr(c) for c in range(33, 127) if not chr(c).isalnum()) + (
    "\u2022\u00b7\u2013\u2014\u2018\u2019\u201c\u201d\u00ab\u00bb\u2026\u25aa\u25e6\u2023"
)  # punctuation around a word: ASCII, bullets, dashes, curly quotes, guillemets
# an ASCII word without the punctuation around it: from its first letter or digit to its last
# (the "\\S*" gives back at most the word's own length: linear)
_ASCII_WORD = re.compile(r"[0-9a-z](?:\S*[0-9a-z])?")
# the first byte of a UTF-8 sequence read as Latin-1 or cp1252 (Ã, Â, â, Ì for the combining
# accents of an NFD text ...): only a text holding one is tried for repair
_MOJIBAKE = re.compile("[\u00c2-\u00f4]")


@dataclass(frozen=True)
class Against:
    """A reply as read against one of our mails."""

    text: str  # what to read for moves: the player's text and the sections they changed, in order
    own: tuple[str, ...]  # the lines the player wrote (no copy line), for quoting back in an answer
    copied: int  # lines of the reply that are a copy of our mail
    form_seen: bool  # the copy holds lines of the form our mail carried
    form_changed: bool  # ... and the player changed at least one section of it

    @property
    def form_untouched(self) -> bool:
        """The reply quotes our form and leaves every section of it as it was."""
        return self.form_seen and not self.form_changed


class _Line(NamedTuple):  # a tuple: made for every line of both mails, cheaply
    raw: str
    text: str  # without its quote prefix and trailing spaces
    depth: int  # quote marks (">" or "|") in its prefix
    words: tuple[str, ...]


def words(text: str) -> tuple[str, ...]:
    """The words of a line as compared: mis-decoding repaired, NFKC, case folded, punctuation
    around each word dropped."""
    if text.isascii():  # the common case: nothing to repair or normalise, one scan
        return tuple(_ASCII_WORD.findall(text.lower()))
    text = unicodedata.normalize("NFKC", _repair(text)).casefold()
    return tuple(word for word in (w.strip(_EDGE) for w in text.split()) if word)


def _repair(text: str) -> str:
    """UTF-8 that was read as Latin-1 or cp1252 (``TomÃ¡s``), read back; else the text."""
    if _MOJIBAKE.search(text) is None:
        return text
    for codec in ("cp1252", "latin-1"):
        try:
            return text.encode(codec).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
    return text


def _line(raw: str) -> _Line:
    """A line's record. Most lines of our mails (the rules, the form, the what-now
    paragraph) are the same in every match's mail and in every reply that quotes one: a
    line of a mail's usual length is remembered, so that a batch of replies reads each such
    line once (the records are immutable; :func:`read_against` looks them up itself, the
    call of this function being most of the cost of a line remembered)."""
    found = _LINES.get(raw)
    if found is None:
        found = _read_line(raw)
        if len(raw) <= _REMEMBERED_LINE:
            if len(_LINES) >= _REMEMBERED_LINES:
                _LINES.clear()  # bounded: a few MB at most
            _LINES[raw] = found
    return found


_REMEMBERED_LINE = 200  # characters
_REMEMBERED_LINES = 8192  # lines remembered at most (then forgotten all at once, and read again)
_LINES: dict[str, _Line] = {}


def _read_line(raw: str) -> _Line:
    i, depth, n = 0, 0, len(raw)
    while i < n and raw[i] in _QUOTE:
        depth += raw[i] in ">|"
        i += 1
    text = raw[i:].rstrip()
    return _Line(raw, text, depth, words(text))


def read_against(reply: str, sent: str, form: str | None = None, *, linked: bool = True) -> Against | None:
    """The reply ``reply`` read against ``sent``, the text of one of our mails, which carried
    ``form`` (None: no form). ``linked``: the reply names that mail (In-Reply-To or
    References); else it is only a guess (our latest mail to the player).

    None when the reply holds no copy of that mail: fewer than :data:`MIN_COPY_LINES` lines
    of it; or, in a copy without quote marks or of a mail the reply does not name, fewer
    than that many lines of our prose (not of the form), since the form's lines alone may
    be the player's own (typed as the form shows them, or an old mail of theirs quoted);
    or more lines of the player's inside it than :data:`MAX_EDITS` or half its lines (a
    quote of another mail that shares a few lines with ours); or, without quote marks or of
    a mail the reply does not name, less than :data:`GUESS_SHARE` tenths of it. The caller
    then reads the mail as before."""
    raws, sent_lines = reply.split("\n"), sent.split("\n")
    if not any(raw.lstrip(" \t")[:1] in (">", "|") for raw in raws):
        # no quoted line: only a whole copy without quote marks could be one (see GUESS_SHARE)
        filled = sum(1 for raw in raws if any(c.isalnum() for c in raw))  # lines that have words
        if filled * 10 < sum(1 for raw in sent_lines if any(c.isalnum() for c in raw)) * GUESS_SHARE:
            return None
    known = _LINES.get
    lines = [known(raw) or _line(raw) for raw in raws]
    sent_words = [(known(raw) or _line(raw)).words for raw in sent_lines]
    ours = sum(1 for found in sent_words if found)
    stream: list[str] = []
    line_of: list[int] = []  # the sent line of each word of the stream
    for k, found in enumerate(sent_words):
        stream.extend(found)
        line_of.extend([k] * len(found))
    starts = _align(lines, stream, line_of)
    copy = _longest_run(starts)
    if copy:  # a copy is quoted one way throughout: the lines at another depth are not part of it
        counts = Counter(lines[i].depth for i in copy)
        depth = max(counts, key=lambda d: (counts[d], d))
        copy = [i for i in copy if lines[i].depth == depth]
    if len(copy) < MIN_COPY_LINES:
        return None
    section_of, checks = _sections(sent_words, form)
    spans: dict[int, tuple[int, int]] = {}  # copy line -> the first and last of our lines it holds words of
    for i in copy:
        a = starts[i]
        assert a is not None
        spans[i] = line_of[a], line_of[a + len(lines[i].words) - 1]
    # the form sections each copy line holds words of
    held = {i: {section_of[k] for k in range(a, b + 1) if k in section_of} for i, (a, b) in spans.items()}

    # Lines the player typed as our form shows them (no quote marks, none of our prose
    # around them) are theirs: an unquoted copy must hold some of our prose.
    prose = [i for i in copy if not held[i]]
    if (depth == 0 or not linked) and len(prose) < MIN_COPY_LINES:
        return None
    in_copy = set(copy)
    first, last = copy[0], copy[-1]

    # the form sections the copy shows, and for each player's line inside (or right at) the
    # copy the section whose missing lines it stands in place of
    shown = set().union(*held.values())
    edits: dict[int, int | None] = {}  # reply line -> the section it changes (None: a line of its own)
    prev: int | None = None
    following = _next_copy(len(lines), copy)
    # the quoted (or blank) lines right before the copy and right after it
    near_before, near_after = first, last
    while near_before > 0 and (lines[near_before - 1].depth > 0 or not lines[near_before - 1].words):
        near_before -= 1
    while near_after < len(lines) - 1 and (lines[near_after + 1].depth > 0 or not lines[near_after + 1].words):
        near_after += 1
    for i, line in enumerate(lines):
        if i in in_copy:
            prev = i
            continue
        if not line.words:
            continue
        inside = first < i < last
        edge = not inside and line.depth == depth > 0  # a quoted line just outside the copy
        if not (inside and line.depth <= depth) and not edge:
            continue
        if edge and not near_before <= i <= near_after:
            continue
        nxt = following[i]
        low = spans[prev][1] + 1 if prev is not None else None
        high = spans[nxt][0] - 1 if nxt is not None else None
        if low is None:
            low = high  # before the copy: in place of the sent line just above it
        if high is None:
            high = low  # after the copy: in place of the sent line just below it
        assert low is not None and high is not None
        edits[i] = next((section_of[k] for k in range(low, high + 1) if k in section_of), None)
    # A quote of another mail shares a few lines with ours (the greeting, the signature, an
    # instruction) and differs in many: no copy of this one. The player's own lines inside a
    # copy are a few edits or answers beside what they quote.
    if len(edits) > max(MAX_EDITS, len(copy) // 2):
        return None
    if (depth == 0 or not linked) and len(copy) * 10 < ours * GUESS_SHARE:
        return None  # a copy without quote marks is a whole mail (Outlook's): a few lines are the player's
    changed = {s for s in edits.values() if s is not None}
    if changed:  # a form's check line (a paragraph of its own) goes with every section changed
        changed |= checks & shown

    def belongs(i: int, section: int) -> bool:
        if i in edits:
            return edits[i] == section
        return section in held[i] if i in in_copy else False

    pieces: list[tuple[int, str]] = []  # (reply line, text) in reply order
    own: list[str] = []
    above = strip_quoted("\n".join(line.raw for line in lines[:first] if line.depth == 0))
    if above.strip():
        pieces.append((0, above.strip("\n")))
        own += above.strip("\n").split("\n")
    for section in sorted(changed):
        members = [i for i in range(len(lines)) if belongs(i, section)]
        pieces.append((members[0], "\n".join(lines[i].text for i in members)))
    for i, section in edits.items():
        own.append(lines[i].text)
        if section is None:
            pieces.append((i, lines[i].text))
    below = strip_quoted("\n".join(line.raw for line in lines[last + 1 :] if line.depth == 0))
    if below.strip():
        pieces.append((last + 1, below.strip("\n")))
        own += below.strip("\n").split("\n")
    pieces.sort(key=lambda piece: piece[0])
    return Against(
        text="\n".join(text for _, text in pieces),
        own=tuple(own),
        copied=len(copy),
        form_seen=bool(shown) or bool(changed),
        form_changed=bool(changed),
    )


def _next_copy(n: int, copy: list[int]) -> list[int | None]:
    """For every reply line, the first copy line after it (None: none)."""
    out: list[int | None] = [None] * n
    it = len(copy) - 1
    nxt: int | None = None
    for i in range(n - 1, -1, -1):
        while it >= 0 and copy[it] > i:
            nxt = copy[it]
            it -= 1
        out[i] = nxt
    return out


def _align(lines: list[_Line], stream: list[str], line_of: list[int]) -> list[int | None]:
    """Where each reply line's words stand as one run in our mail's word stream (None: not
    ours): where the last line ended if it continues there (a re-wrapped line), else at the
    start of one of our lines, at one of at most :data:`CANDIDATES` places of its first word
    (the nearest after the last line first); a line of one or two words found so must also
    end where that line of ours ends (else "Gold: 30" would be found inside any of our
    sentences)."""
    where: dict[str, list[int]] = {}
    for k, word in enumerate(stream):
        if k == 0 or line_of[k - 1] != line_of[k]:  # the first word of one of our lines
            where.setdefault(word, []).append(k)
    n = len(stream)
    starts: list[int | None] = [None] * len(lines)
    at = 0
    for i, line in enumerate(lines):
        found = line.words
        if not found:
            continue
        m = len(found)
        if tuple(stream[at : at + m]) == found:
            starts[i], at = at, at + m
            continue
        places = where.get(found[0], [])
        j = bisect_left(places, at)
        for c in places[j : j + CANDIDATES] + places[max(0, j - CANDIDATES) : j]:
            if tuple(stream[c : c + m]) != found:
                continue
            if m <= 2 and c + m < n and line_of[c + m] == line_of[c]:
                continue
            starts[i], at = c, c + m
            break
    return starts


def _longest_run(starts: list[int | None]) -> list[int]:
    """The reply lines of the longest run whose places in our mail increase with the reply's
    order (patience sorting: n log n)."""
    tails: list[int] = []  # tails[k]: the smallest place ending a run of k + 1 lines
    tail_line: list[int] = []
    before: dict[int, int | None] = {}
    for i, a in enumerate(starts):
        if a is None:
            continue
        k = bisect_left(tails, a)
        before[i] = tail_line[k - 1] if k else None
        if k == len(tails):
            tails.append(a)
            tail_line.append(i)
        else:
            tails[k], tail_line[k] = a, i
    run: list[int] = []
    i: int | None = tail_line[-1] if tail_line else None
    while i is not None:
        run.append(i)
        i = before[i]
    return run[::-1]


def _sections(mail: list[tuple[str, ...]], form: str | None) -> tuple[dict[int, int], set[int]]:
    """Our mail's line -> the form section it belongs to (the form's paragraphs, found in
    the mail as runs of lines with the same words); and the sections that are a check line
    of their own (``Step: Round 3 of 10``), which name the step the form answers."""
    out: dict[int, int] = {}
    checks: set[int] = set()
    if not form:
        return out, checks
    paragraphs: list[list[tuple[str, ...]]] = [[]]
    for raw in form.split("\n"):
        found = words(raw)
        if found:
            paragraphs[-1].append(found)
        elif paragraphs[-1]:
            paragraphs.append([])
    start = 0
    for n, para in enumerate(p for p in paragraphs if p):
        size = len(para)
        if size == 1 and para[0][0] in CHECK_WORDS:
            checks.add(n)
        for k in range(start, len(mail) - size + 1):
            if mail[k] == para[0] and mail[k : k + size] == para:
                for j in range(k, k + size):
                    out[j] = n
                start = k + size
                break
    return out, checks
