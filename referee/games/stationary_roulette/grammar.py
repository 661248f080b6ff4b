"""Stationary Roulette's mail: the ROULETTE and BET sections of a player's reply read into
moves (the game page's "Submission grammar"), and the form written for the player.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.games.base import Move, NoMoves, Parsed, ParseError, State
from referee.games.betting import turn_reference
from referee.games.lines import MAX_LINE_CHARS, strip_emphasis, unbullet
from referee.games.lines import shown as _shown  # longer pieces of the mail are cut when a reason quotes them
from referee.games.stationary_roulette.rules import COLOURS, bettable, prepares_in, round_title, uses_left

# --------------------------------------------------------------------------- parsing
#
# The grammar ("Submission grammar" and the parsing rulings in the game page) is read
# in one pass over the lines, each line split once into words and separators by a regex
# with a single possessive quantifier; everything else uses plain string methods and
# looks at each word a bounded number of times. So reading costs time linear in the
# length of the text, whatever the text.

_HEADERS = {"roulette": "roulette", "bet": "bet", "bets": "bet"}
_WIN_WORDS = frozenset({"win", "winning", "winner"})
_COLOUR_WORDS = frozenset({"colour", "color"})
_UNITS = ("points", "point", "pts", "pt", "p")  # longest first
_ZERO_VALUES = frozenset({"", "-", "\u2013", "\u2014"})
# Ruling: emphasis marks around words are not part of the form (Gmail's plain part writes bold as
# *...*); referee.games.lines.strip_emphasis drops them, keeping a mark inside a word (2_0: unreadable)
# Ruling: a longer line is never a line of the form: outside a section or after a complete
# one it is ignored (a pasted log costs nothing), inside an incomplete one it is read cut
# (MAX_LINE_CHARS, every grammar's limit)
_SEPARATORS = (":", "=")
# A word (a run of anything but whitespace and separators) or a separator.
_TOKEN = re.compile(r"[^\s:=]++|[:=]")
# Ruling: a section holds at most this many non-blank lines after its header; the
# lines after that are not read into it.
MAX_SECTION_LINES = 40
# "Step: Round 3" (any case, "Step :" too): the line of the form naming the round it answers
_STEP_LINE = re.compile(r"step\s*:\s*(\S.*)", re.IGNORECASE)
# Ruling: no sane amount of points has more digits than this.
MAX_DIGITS = 6


def _colour_prefix(word: str) -> str | None:
    """The colour a lower-case word abbreviates (any non-empty prefix; Gold, Silver and
    Black start with different letters, so a prefix names at most one colour)."""
    if not word or len(word) > 6:
        return None
    for colour in COLOURS:
        if colour.lower().startswith(word):
            return colour
    return None


def _key_of(words: Sequence[str]) -> str | None:
    """ "winning", a colour, or None for one or two lower-case words: ``Win``, ``Winning``,
    ``Winner`` (each optionally followed by ``colour``/``color``) and ``Colour`` name the
    winning colour; a colour prefix, optionally followed by ``colour``, names a colour."""
    if len(words) == 2:
        if words[1] not in _COLOUR_WORDS:
            return None
        return "winning" if words[0] in _WIN_WORDS else _colour_prefix(words[0])
    if len(words) == 1:
        word = words[0]
        return "winning" if word in _WIN_WORDS or word in _COLOUR_WORDS else _colour_prefix(word)
    return None


def _as_colour(value: str) -> str | None:
    """The colour a value names (``Gold``, ``s``, ``Black colour.``), else None."""
    words = value.strip().rstrip(".!").split(None, 2)
    key = _key_of([word.lower() for word in words]) if len(words) <= 2 else None
    return key if key in COLOURS else None


class _Tokens:
    """The words and separators (``:`` or ``=``) of one line, with where each begins."""

    __slots__ = ("line", "text", "low", "start")

    def __init__(self, line: str):
        self.line = line
        self.text: list[str] = []
        self.start: list[int] = []
        for match in _TOKEN.finditer(line):
            self.text.append(match.group())
            self.start.append(match.start())
        self.low = [token.lower() for token in self.text]

    def __len__(self) -> int:
        return len(self.text)

    def sep(self, i: int) -> bool:
        return i < len(self.text) and self.text[i] in _SEPARATORS

    def word(self, i: int) -> bool:
        return i < len(self.text) and self.text[i] not in _SEPARATORS

    def number(self, i: int) -> bool:
        """A word that begins with a number (``20``, ``+49``, ``-5``, ``30p``)."""
        if not self.word(i):
            return False
        token = self.text[i]
        digit = 1 if token[0] in "+-" else 0
        return len(token) > digit and token[digit].isdecimal()

    def colour_word(self, i: int) -> bool:
        return self.word(i) and _colour_prefix(self.low[i].rstrip(".!")) is not None

    def known_key(self, i: int) -> tuple[str | None, int]:
        """The key ("winning" or a colour) that begins at word i, and its length in words
        (two before one: ``Gold colour``, ``Winning colour``); (None, 0) if none."""
        if not self.word(i):
            return None, 0
        if self.word(i + 1) and self.low[i + 1] in _COLOUR_WORDS:
            key = _key_of(self.low[i : i + 2])
            if key is not None:
                return key, 2
        key = _key_of(self.low[i : i + 1])
        return (key, 1) if key is not None else (None, 0)

    def span(self, i: int, j: int) -> str:
        """The text of tokens i..j-1 as written (with the spaces between them)."""
        if i >= j:
            return ""
        return self.line[self.start[i] : self.start[j - 1] + len(self.text[j - 1])]


@dataclass(frozen=True)
class _Entry:
    """One ``key: value`` of an entry line (a line may hold several)."""

    begin: int  # first token of the key
    key: str | None  # "winning", a colour, or None (a key we do not know)
    words: int  # words in the key
    sep: bool  # the key is followed by ':' or '='
    end: int  # the token after the value

    @property
    def value_start(self) -> int:
        return self.begin + self.words + (1 if self.sep else 0)


def _unknown_word(word: str) -> bool:
    """A word that may be an unknown key in the middle of a line (``Tel``, ``PS``): it
    has a letter and no digit (``2:1`` is no key)."""
    return any(c.isalpha() for c in word) and not any(c.isdigit() for c in word)


def _first_key(t: _Tokens, s: int) -> tuple[str | None, int, bool] | None:
    """The key that begins a line at token s: a known key; else the one or two words
    before the line's first separator; else, without a separator, the first word.
    None when the line cannot begin with an entry (a separator first, or three or more
    words before the first separator)."""
    key, words = t.known_key(s)
    if key is not None:
        return key, words, t.sep(s + words)
    first_sep = next((i for i in range(s, len(t)) if t.sep(i)), None)
    if first_sep is None:
        return (None, 1, False) if t.word(s) else None
    if first_sep - s in (1, 2):
        return None, first_sep - s, True
    return None


def _entries(t: _Tokens, s: int) -> list[_Entry]:
    """The entries of a line from token s: the first begins at s (see _first_key); the
    next ones begin where, further on, a key is followed by a separator (a known key, or
    a single unknown word followed by a number or a colour: ``Gold: 20 Silver: 20``,
    ``Black: 0 Tel: +49 30 123``). Empty when the line does not begin with an entry."""
    first = _first_key(t, s)
    if first is None:
        return []
    begins: list[tuple[int, str | None, int, bool]] = [(s, *first)]
    j = s + first[1] + (1 if first[2] else 0)
    while j < len(t):
        key, words = t.known_key(j)
        if key is not None and t.sep(j + words):
            begins.append((j, key, words, True))
            j += words + 1
            continue
        if (
            key is None
            and t.sep(j + 1)
            and t.word(j)
            and _unknown_word(t.text[j])
            and (t.number(j + 2) or t.colour_word(j + 2))
        ):
            begins.append((j, None, 1, True))
            j += 2
            continue
        j += 1
    ends = [begin[0] for begin in begins[1:]] + [len(t)]
    return [_Entry(b, key, words, sep, end) for (b, key, words, sep), end in zip(begins, ends, strict=True)]


def _header(t: _Tokens) -> tuple[str, int] | None:
    """(kind, first token after the header) when the line is a section header: ``BET``,
    ``BETS`` or ``ROULETTE`` (any case, with or without colons), alone or followed on
    the same line by entries beginning with a known key (``BET Gold: 20``, as
    format=flowed joins lines); ``BET is what I always do`` is no header."""
    if not t.word(0) or t.low[0] not in _HEADERS:
        return None
    s = 1
    while s < len(t) and t.text[s] == ":":
        s += 1
    if s == len(t):
        return _HEADERS[t.low[0]], s
    key, words = t.known_key(s)
    if key is None:
        return None
    after = s + words
    if t.sep(after) or (key == "winning" and t.colour_word(after)) or (key != "winning" and t.number(after)):
        return _HEADERS[t.low[0]], s
    return None


def _points(value: str, colour: str, line: str) -> tuple[int, str]:
    """A whole number of points (``30``, ``30 points``, ``30 pts``, ``30p``, ``30.``; an
    empty value or a dash is 0) and the text after it, which must hold no digit and is
    returned to be listed as ignored (``20 (feeling lucky)``)."""
    if value in _ZERO_VALUES:
        return 0, ""
    unreadable = ParseError(f"I could not read {_shown(value)!r} as a whole number of points for {colour}", line)
    sign = 1 if value[0] in "+-" else 0
    end = sign
    while end < len(value) and end - sign <= MAX_DIGITS and value[end].isdecimal():
        end += 1
    if end == sign:
        raise unreadable
    if end - sign > MAX_DIGITS:
        raise ParseError(
            f"I could not read {_shown(value)!r} as a number of points for {colour}: "
            f"it has more than {MAX_DIGITS} digits",
            line,
        )
    rest = value[end:]
    after = rest.lstrip()
    for unit in _UNITS:
        if after[: len(unit)].lower() == unit and not after[len(unit) : len(unit) + 1].isalnum():
            rest = after[len(unit) :]
            break
    else:
        if rest[:1].isalnum():  # 2O, 20px
            raise unreadable
    if rest.startswith("."):
        rest = rest[1:]
    if any(c.isdigit() for c in rest):  # 20.5, 20 30, 20 (2nd try)
        raise unreadable
    try:  # value[:end] holds only a sign and decimal digits: never an underscore, which int() would skip
        points = int(value[:end])
    except ValueError:  # a digit int() does not take: read it as unreadable, never crash
        raise unreadable from None
    rest = rest.strip().lstrip(",;").strip()
    return points, rest if any(c.isalnum() for c in rest) else ""


def _colour(value: str, line: str) -> str:
    value = value.strip().rstrip(".!").strip()
    if not value:
        raise ParseError("The winning colour is empty; write Gold, Silver or Black", line)
    colour = _as_colour(value)
    if colour is None:
        raise ParseError(f"{_shown(value)!r} is not a colour; the winning colour must be Gold, Silver or Black", line)
    return colour


@dataclass
class _Section:
    kind: str  # "roulette" or "bet"
    header: str  # the header line, quoted in errors
    values: dict[str, Any] = field(default_factory=dict)  # "winning" / colour -> value
    lines: int = 0  # non-blank lines read after the header

    @property
    def complete(self) -> bool:
        """It has what its move needs: a ROULETTE its winning colour and the three
        colours, a BET at least one colour."""
        if self.kind == "bet":
            return bool(self.values)
        return all(key in self.values for key in ("winning", *COLOURS))

    def unknown(self, key: str, line: str) -> ParseError:
        expected = "Winning colour, Gold, Silver and Black" if self.kind == "roulette" else "Gold, Silver and Black"
        return ParseError(f"I do not understand {_shown(key)!r}; a {self.kind.upper()} has the lines {expected}", line)

    def add(self, key: str, value: str, line: str, ignored: list[str]) -> None:
        rest = ""
        if key == "winning":
            if self.kind == "bet":
                raise ParseError("A BET has no winning colour; only the ROULETTE you prepare has one", line)
            read: Any = _colour(value, line)
        else:
            read, rest = _points(value, key, line)
        if key in self.values:
            name = "The winning colour" if key == "winning" else key
            twice = f"{name} appears twice in your {self.kind.upper()} section"
            if self.values[key] != read:
                twice += f", first {self.values[key]} and then {read}"
            raise ParseError(twice, line)
        self.values[key] = read
        if rest:
            ignored.append(rest)

    def read_line(self, t: _Tokens, s: int, written: str, ignored: list[str]) -> None:
        """Read the entries of a line from token s. While the section is incomplete, an
        unknown key that looks like an entry (``Purple: 5``, ``W: Gold``) is an error;
        once complete, only entries of the section are read and other lines (or parts
        of lines) are ignored. A line that does not begin with an entry is ignored."""
        entries = _entries(t, s)
        if not entries or not self._begins_with_entry(t, entries[0]):
            ignored.append(written)
            return
        for entry in entries:
            value = t.span(entry.value_start, entry.end)
            if entry.key is not None:
                self.add(entry.key, value, written, ignored)  # errors quote the line as written
            elif self.complete:
                ignored.append(t.span(entry.begin, entry.end))
            else:
                raise self.unknown(t.span(entry.begin, entry.begin + entry.words), written)

    def _begins_with_entry(self, t: _Tokens, entry: _Entry) -> bool:
        """Whether a line's first entry makes it an entry line: an unknown key counts
        only with a value that begins with a number or is a colour (``PS: 2 more``,
        ``W: Gold``; not ``Note: good luck``), and only while the section is incomplete
        (afterwards such a line is ignored); once complete, a known key counts only
        followed by a separator or a number, the winning colour only with a colour
        (``Go Bob!`` is not an entry)."""
        start = entry.value_start
        has_number = start < entry.end and t.number(start)
        if entry.key is None:
            return not self.complete and (has_number or _as_colour(t.span(start, entry.end)) is not None)
        if not self.complete:
            return True
        if entry.key == "winning":
            return _as_colour(t.span(start, entry.end)) is not None
        return entry.sep or has_number

    def missing(self) -> str | None:
        if self.kind == "bet":
            return None if self.values else 'Your BET section has no colour lines (write lines like "Gold: 20")'
        if "winning" not in self.values:
            return 'The winning colour is missing from your ROULETTE section (add a line like "Winning colour: Gold")'
        for colour in COLOURS:
            if colour not in self.values:
                return f'{colour} is missing from your ROULETTE section (add a line like "{colour}: 0")'
        return None

    def close(self, capped: bool) -> None:
        missing = self.missing()
        if missing is not None:
            if capped:
                missing += f"; I read only the first {MAX_SECTION_LINES} lines of a section"
            raise ParseError(missing, self.header)

    def move(self) -> Move:
        if self.kind == "roulette":
            return {
                "type": "roulette",
                "winning": self.values["winning"],
                "points": {colour: self.values[colour] for colour in COLOURS},
            }
        return {"type": "bet", "bets": {colour: self.values.get(colour, 0) for colour in COLOURS}}


def read_mail(text: str) -> Parsed:
    """Read the ROULETTE and BET sections of a mail (the game page's "Submission grammar").

    Lines before the first header are ignored (greetings). A header opens a section,
    which runs to the next header, the end of the text or its MAX_SECTION_LINES-th
    non-blank line; lines outside every section are ignored. A section that ends
    without what its move needs is an error, as are two sections of one kind; a text
    without any section is NoMoves. Everything ignored is listed, in order.

    A ``Step: Round N`` line anywhere (the form's first line, issue 20: every game's form
    names the step it answers so) is read apart from the sections: each move carries its
    normalised reference as ``"step"`` (``"round 3"``), which ``apply_move`` compares with
    the round open now. Two Step lines naming different rounds are an error."""
    sections: list[_Section] = []
    ignored: list[str] = []
    section: _Section | None = None
    reference: tuple[str, str] | None = None
    for raw in text.splitlines():
        written = raw.strip()
        if not written:
            continue
        if len(written) > MAX_LINE_CHARS and (section is None or section.complete):
            ignored.append(_shown(written))
            continue
        line = strip_emphasis(unbullet(written[:MAX_LINE_CHARS]))  # a long line is read cut (quoted whole)
        if line[:4].lower() == "step":
            named_step = _STEP_LINE.match(line)
            if named_step is not None:
                ref = turn_reference(named_step.group(1))
                if reference is not None and reference[0] != ref:
                    raise ParseError(
                        f"Your mail names two rounds, {_shown(reference[1])!r} and {_shown(written)!r}; keep only one",
                        written,
                    )
                reference = (ref, written)
                continue
        t: _Tokens | None = None
        if line[:8].lower().startswith(("roulette", "bet")):
            t = _Tokens(line)
            header = _header(t)
            if header is not None:
                kind, s = header
                if any(other.kind == kind for other in sections):
                    raise ParseError(f"Your mail has two {kind.upper()} sections; send only one", written)
                if section is not None:
                    section.close(capped=False)
                section = _Section(kind, written)  # errors quote the line as written
                sections.append(section)
                if s < len(t):
                    section.read_line(t, s, written, ignored)
                continue
        if section is not None and section.lines >= MAX_SECTION_LINES:
            section.close(capped=True)
            section = None
        if section is None:
            ignored.append(written)
            continue
        section.lines += 1
        section.read_line(t or _Tokens(line), 0, written, ignored)
    if section is not None:
        section.close(capped=False)
    if not sections:
        raise NoMoves("I found no ROULETTE or BET section in your mail", None)
    moves = [s.move() for s in sections]
    if reference is not None:
        moves = [{**move, "step": reference[0]} for move in moves]
    return Parsed(moves, ignored)


# --------------------------------------------------------------------------- the game's mail


# parse reads the text alone (read_mail): the same text reads the same in every state, so
# a reader of many mails of the same text may read it once (referee.games.quick)
PARSE_READS_STATE = False


def parse(state: State, player: str, text: str) -> Parsed:
    return read_mail(text)


def form(state: State, player: str) -> str:
    """The ROULETTE and BET sections the player owes this round (their current
    submission, else an example), after the line ``Step: Round N`` (the convention of
    every game's form: a reply names the round it answers)."""
    if state["result"] is not None:
        return ""
    pending = state["pending"][player]
    parts = []
    if prepares_in(state["round"]):
        roulette = pending["roulette"] or example_roulette(state, player)
        lines = [f"{colour}: {roulette['points'][colour]}" for colour in COLOURS]
        parts.append("\n".join(["ROULETTE", f"Winning colour: {roulette['winning']}", *lines]))
    if bettable(state, player) is not None:
        bet = pending["bet"] or {"Gold": 20, "Silver": 20, "Black": 0}
        parts.append("\n".join(["BET", *(f"{colour}: {bet[colour]}" for colour in COLOURS)]))
    if not parts:
        return ""
    return f"Step: {round_title(state['round'])}\n\n" + "\n\n".join(parts) + "\n"


def example_roulette(state: State, player: str) -> dict[str, Any]:
    """A legal example: the first colour with uses left (10 roulettes never use up all 15)."""
    left = uses_left(state["roulettes"][player])
    winning = next(colour for colour in COLOURS if left[colour] > 0)
    return {"winning": winning, "points": {"Gold": 30, "Silver": 10, "Black": 0}}
