"""Stationary Roulette: each player prepares a roulette for the other to bet on.

Rule text: ``seeds/stationary-roulette.txt``; the authoritative reading is the
"Stationary Roulette" section of ``RULINGS.md``; decisions of our own are listed
under "Rulings" in ``docs/games/stationary-roulette.md``.

Round 0 is the preparation phase. In round r (0..9) each player prepares the
roulette for round r+1; in round r (1..10) each player bets on the roulette the
opponent prepared in round r-1. Both submissions are simultaneous and may be
revised until the deadline; the round closes only at its deadline
(:meth:`StationaryRoulette.apply_timeout`), which settles it.

State (plain JSON data)::

    players        [a, b]
    seed           the match seed (the game has no chance: only the lot that ranks the
                   players of a draw with equal chips at the end reads it, see ``ranking``)
    round          the open round 0..10 (once over: the round the match ended in)
    initial_chips  {player: chips at the start of the match}
    chips          {player: chips now}
    points         {player: points}
    black_taken    {player: gross chips taken through own Black roulettes}
    black_lost     {player: chips lost to Black takes, for the 100-chip cap}
    roulettes      {player: [roulette prepared in round i, or None when missed]}
    pending        {player: {"roulette": roulette | None, "bet": bet | None}}
    history        [settlement record of round 0, 1, ...]: the last one in full (what the
                   round's mails show), the earlier ones compact, see below
    transfers      chip movements, see :func:`referee.games.base.transfer`
    result         None while the match runs, else the fields of :class:`Result`
    forfeit        only once a player forfeited: {"player", "round"} (ruling 33)

A roulette is ``{"winning": colour, "points": {colour: n}}``; a bet is ``{colour: n}``.

A settlement record in full (``_Settlement.entry``) says everything a round's result mail
shows. When the next round is settled it is kept compact: ``round``, ``prepared``,
``roulettes`` (``[{"preparer", "bet", "bet_missed"}]``) and ``chips_before`` (the chips the
settlement was judged on), which with the roulettes and the record before it are all the
settlement read, so the archive (``view(state, None)``) rebuilds the full record by
settling the round again (:func:`_settled_records`). So a state grows by a few hundred
bytes a round (some 6 KB after round 10 instead of 15 KB), not by a whole record, and
its copies, loads and stores cost little more in round 10 than in round 1. A state
stored when every record was kept in full reads the same; its records stay as they are
but the last, which becomes compact when the next round is settled.
"""

from __future__ import annotations

import marshal
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.games.base import (
    HOUSE,
    SEASON_CHIPS,
    SIMULTANEOUS,
    Applied,
    GameError,
    GameType,
    Move,
    NoMoves,
    Parsed,
    ParseError,
    Result,
    State,
    Step,
    check_balances,
    clone,
    plural,
    stored_result,
    transfer,
)
from referee.games.base import ranked_by_outcome as ranking
from referee.games.betting import turn_reference
from referee.games.lines import strip_emphasis, unbullet

COLOURS = ("Gold", "Silver", "Black")

# SETUP 1-2: a preparation phase (round 0), then 10 rounds of 24 hours each.
ROUNDS = 10
ROUND_HOURS = 24.0
# PREPARING A ROULETTE 1 / ruling: roulettes are prepared in rounds 0..9, none in round 10.
LAST_PREPARATION_ROUND = ROUNDS - 1
# PREPARING A ROULETTE 2b: 40 points, Gold at least 25, Silver at least 5, Black none.
ROULETTE_POINTS = 40
MIN_GOLD = 25
MIN_SILVER = 5
# PREPARING A ROULETTE 2a: each colour is a player's winning colour at most 5 times.
MAX_WINNING_COLOUR_USES = 5
# GAMEPLAY 3 / 3a: 40 points to bet, on at most 2 colours; ruling: a total under 40 is legal.
BET_POINTS = 40
MAX_BET_COLOURS = 2
# SCORING 2a: 20 bonus points for an all-in single-colour bet.
SINGLE_COLOUR_BONUS = 20
# SCORING 3: the preparer of a Black roulette takes 40 chips minus the bet on Black.
BLACK_TAKE = 40
# SCORING 3d: the preparer of a Black roulette pays the LGT 10 chips.
LGT_PAYMENT = 10
# SCORING 3a / END OF GAME 3: at most 100 chips lost to Black takes, then forfeit.
CHIP_CAP = 100
# INACTIVITY 1 and 3: 60 points to the opponent of a missing preparer; 5 chips per miss.
INACTIVITY_POINTS = 60
INACTIVITY_FEE = 5
# END OF GAME 2: the winner takes 1 chip for every 10 points of lead.
POINTS_PER_LEAD_CHIP = 10
# Ruling (game page): starting chips when the match options give none.
DEFAULT_CHIPS = 100

# INACTIVITY 2: a missed bet is a bet of 0 on every colour.
NO_BET: dict[str, int] = {colour: 0 for colour in COLOURS}
VICTORY_POINTS = {"win": 1.0, "loss": 0.0, "draw": 0.5}


def _copy(data: Any) -> Any:
    """A deep copy of plain data that shares no dict or list with it (every move, deadline
    and view makes one). A marshal round trip: about twice as fast as the pickle one of
    :func:`referee.games.base.clone` on a match state; what marshal cannot write (not
    plain data) goes through ``clone``."""
    try:
        return marshal.loads(marshal.dumps(data))
    except ValueError:
        return clone(data)


# --------------------------------------------------------------------------- rules


def round_title(round_no: int) -> str:
    return "Preparation phase" if round_no == 0 else f"Round {round_no} of {ROUNDS}"


def round_named(reference: object) -> int | None:
    """The round a Step line names, from its normalised text (``betting.turn_reference``):
    ``"round 3 of 10"`` and ``"round 3"`` -> 3, ``"preparation phase"`` -> 0; None for
    anything else."""
    if not isinstance(reference, str):
        return None
    if reference in ("preparation phase", "preparation"):
        return 0
    words = reference.split()
    if len(words) in (2, 4) and words[0] == "round" and words[1].isdigit() and len(words[1]) <= 3:
        if len(words) == 2 or (words[2] == "of" and words[3] == str(ROUNDS)):
            return int(words[1])
    return None


def step_key(round_no: int) -> str:
    return f"round-{round_no}"


def prepares_in(round_no: int) -> bool:
    """Roulettes are prepared in the preparation phase and rounds 1-9 (PREPARING 1)."""
    return round_no <= LAST_PREPARATION_ROUND


def uses_left(roulettes: Sequence[dict[str, Any] | None]) -> dict[str, int]:
    """Remaining winning-colour uses after these roulettes (PREPARING 2a); a missed
    preparation uses no colour (ruling: "the colour count is not used")."""
    used = {colour: 0 for colour in COLOURS}
    for roulette in roulettes:
        if roulette is not None:
            used[roulette["winning"]] += 1
    return {colour: MAX_WINNING_COLOUR_USES - n for colour, n in used.items()}


def uses_left_after_each(roulettes: Sequence[dict[str, Any] | None]) -> list[dict[str, int]]:
    """``[uses_left(roulettes[:n]) for n in range(len(roulettes) + 1)]``, in one pass."""
    left = {colour: MAX_WINNING_COLOUR_USES for colour in COLOURS}
    out = [dict(left)]
    for roulette in roulettes:
        if roulette is not None:
            left[roulette["winning"]] -= 1
        out.append(dict(left))
    return out


def roulette_problems(roulette: dict[str, Any], left: dict[str, int]) -> list[str]:
    """Why a roulette breaks PREPARING 2 (empty when legal); ``left`` are the
    preparer's remaining winning-colour uses, not counting the pending roulette."""
    points = roulette["points"]
    problems = []
    if points["Gold"] < MIN_GOLD:
        problems.append(f"Gold must have at least {MIN_GOLD} points; you placed {points['Gold']}.")
    if points["Silver"] < MIN_SILVER:
        problems.append(f"Silver must have at least {MIN_SILVER} points; you placed {points['Silver']}.")
    if points["Black"] != 0:
        problems.append(f"Black cannot have any points; you placed {points['Black']}.")
    total = sum(points.values())
    if total != ROULETTE_POINTS:
        problems.append(f"The points must add up to exactly {ROULETTE_POINTS}; yours add up to {total}.")
    if left[roulette["winning"]] <= 0:
        problems.append(
            f"You have already made {roulette['winning']} the winning colour "
            f"{MAX_WINNING_COLOUR_USES} times, the most the rules allow; choose another winning colour."
        )
    return problems


def bet_problems(bet: dict[str, int]) -> list[str]:
    """Why a bet breaks GAMEPLAY 3 (empty when legal): non-negative, at most 2
    colours (colours with 0 do not count), total at most 40."""
    problems = [f"A bet cannot be negative; you bet {n} on {colour}." for colour, n in bet.items() if n < 0]
    used = [colour for colour, n in bet.items() if n > 0]
    if len(used) > MAX_BET_COLOURS:
        problems.append(
            f"You may bet on at most {MAX_BET_COLOURS} colours; you bet on {', '.join(used[:-1])} and {used[-1]}."
        )
    total = sum(bet.values())
    if total > BET_POINTS:
        problems.append(f"You have {BET_POINTS} points to bet; your bets add up to {total}.")
    return problems


def single_colour(bet: dict[str, int]) -> str | None:
    """The colour of an all-40-on-one-colour bet, else None. Ruling: 40 on one colour
    and 0 on another counts as all 40 on one colour."""
    for colour, n in bet.items():
        if n == BET_POINTS:
            return colour
    return None


def single_colour_bonus(winning: str, bet: dict[str, int]) -> str | None:
    """SCORING 2a: who earns the 20 bonus points, "bettor" or "preparer" (None: nobody).
    Ruling: this holds when the winning colour is Black too."""
    colour = single_colour(bet)
    if colour is None:
        return None
    return "bettor" if colour == winning else "preparer"


def black_take(bet: dict[str, int]) -> int:
    """SCORING 3: the preparer of a Black roulette takes 40 chips minus the bet on Black."""
    return BLACK_TAKE - bet["Black"]


def lead_chips(lead: int) -> int:
    """END OF GAME 2: 1 chip for every 10 points of lead (ruling: floor(lead / 10))."""
    return lead // POINTS_PER_LEAD_CHIP


@dataclass(frozen=True)
class RouletteScore:
    preparer_points: int  # points on the winning colour, bonus excluded
    bettor_points: int
    bonus_to: str | None  # "preparer", "bettor" or None
    take: int  # chips the preparer takes from the bettor (Black only)


def score_roulette(roulette: dict[str, Any], bet: dict[str, int]) -> RouletteScore:
    """SCORING 2-3: W Gold or Silver: both earn their points on W (the preparer its
    placed points, the bettor its bet); W Black: no points, the preparer takes chips.
    The single-colour bonus applies in both cases."""
    winning = roulette["winning"]
    if winning == "Black":
        return RouletteScore(0, 0, single_colour_bonus(winning, bet), black_take(bet))
    return RouletteScore(roulette["points"][winning], bet[winning], single_colour_bonus(winning, bet), 0)


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
MAX_LINE_CHARS = 300
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
_SHOWN = 40  # longer pieces of the mail are cut when a reason quotes them


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


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


# --------------------------------------------------------------------------- moves


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _points_shape(points: dict[Any, Any]) -> str | None:
    """Why a colour -> points mapping is malformed (None when well formed)."""
    for key, value in points.items():
        if key not in COLOURS:
            return f"{key!r} is not a colour; the colours are Gold, Silver and Black."
        if not _is_int(value):
            return f"The points on {key} must be a whole number; you gave {value!r}."
    return None


def _opponent(state: State, player: str) -> str:
    a, b = state["players"]
    return str(b if player == a else a)


def _last_record(state: State) -> dict[str, Any]:
    """The last settled round's record, in full (as the settlement keeps it)."""
    last: dict[str, Any] = state["history"][-1]
    return last if "chips_before" not in last else _settled_records(state)[-1]


def _bettable(state: State, player: str) -> dict[str, Any] | None:
    """The roulette ``player`` bets on this round: the opponent's from last round."""
    round_no = state["round"]
    if round_no == 0:
        return None
    roulette: dict[str, Any] | None = state["roulettes"][_opponent(state, player)][round_no - 1]
    return roulette


def _nothing_to_bet(state: State) -> str:
    if state["round"] == 0:
        return "There is nothing to bet on in the preparation phase; betting starts in round 1."
    missed_in = "the preparation phase" if state["round"] == 1 else f"round {state['round'] - 1}"
    return f"There is nothing to bet on this round: your opponent prepared no roulette in {missed_in}."


# --------------------------------------------------------------------------- settlement records


def _compact(entry: dict[str, Any]) -> dict[str, Any]:
    """A settlement record as kept once the next round is settled: what the settlement
    read that the rest of the state does not keep (see the module docstring). The chips
    it was judged on are its chips after, given back what it paid and taken what it got."""
    if "chips_before" in entry:
        return entry
    chips = dict(entry["chips"])
    for payment in entry["payments"]:
        chips[payment["from"]] += payment["paid"]
        if payment["to"] in chips:
            chips[payment["to"]] -= payment["paid"]
    return {
        "round": entry["round"],
        "prepared": entry["prepared"],
        "roulettes": [
            {"preparer": r["preparer"], "bet": r["bet"], "bet_missed": r["bet_missed"]} for r in entry["roulettes"]
        ],
        "chips_before": chips,
    }


def _settled_records(state: State) -> list[dict[str, Any]]:
    """Every settled round's record in full, compact ones rebuilt by settling their round
    again from what it read: the chips it was judged on, the bets, the roulettes and the
    totals after the round before. The records share data with ``state``: copy them."""
    records: list[dict[str, Any]] = []
    for entry in state["history"]:
        if "chips_before" in entry:
            entry = _resettle(state, entry, records[-1] if records else None)
        records.append(entry)
    return records


def _resettle(state: State, compact: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    players = state["players"]
    round_no = compact["round"]
    roulettes = state["roulettes"]
    pending = {p: {"roulette": roulettes[p][round_no] if prepares_in(round_no) else None, "bet": None} for p in players}
    for record in compact["roulettes"]:
        pending[_opponent(state, record["preparer"])]["bet"] = None if record["bet_missed"] else record["bet"]
    totals = {key: dict(before[key]) if before else {p: 0 for p in players} for key in _TOTALS}
    again: State = {
        "players": players,
        "round": round_no,
        "chips": dict(compact["chips_before"]),
        **totals,
        "roulettes": {p: roulettes[p][:round_no] for p in players},
        "pending": pending,
        "history": [],
        "transfers": [],
        "result": None,
    }
    _Settlement(again).run()
    record: dict[str, Any] = again["history"][0]
    return record


_TOTALS = ("points", "black_taken", "black_lost")  # what a settlement adds to (chips: it is judged on live ones)


# --------------------------------------------------------------------------- settlement


class _Settlement:
    """The settlement of one round, in the ruled order: points and bonuses; the net
    Black take (capped); LGT payments for Black roulettes; inactivity fees; then the
    cap and bankruptcy checks (and the end of the match after round 10)."""

    def __init__(self, state: State):
        self.s = state
        self.players: list[str] = state["players"]
        self.round: int = state["round"]
        self.key = step_key(self.round)
        self.points_before = dict(state["points"])
        self.missed: dict[str, list[str]] = {p: [] for p in self.players}
        self.losses: dict[str, list[str]] = {p: [] for p in self.players}
        self.entry: dict[str, Any] = {
            "round": self.round,
            "title": round_title(self.round),
            "prepared": None,
            "missed": self.missed,
            "inactivity_points": {p: 0 for p in self.players},
            "roulettes": [],
            "black": None,
            "payments": [],
        }

    def run(self) -> None:
        self.record_preparations()
        self.score_roulettes()
        self.settle_black_takes()
        self.pay_lgt()
        self.pay_inactivity_fees()
        losers = [p for p in self.players if self.losses[p]]
        if losers:
            self.end_by_losses(losers)
        elif self.round == ROUNDS:
            self.end_by_points()
        s = self.s
        self.entry.update(
            points_gained={p: s["points"][p] - self.points_before[p] for p in self.players},
            points=dict(s["points"]),
            chips=dict(s["chips"]),
            black_taken=dict(s["black_taken"]),
            black_lost=dict(s["black_lost"]),
            losses=self.losses,
        )
        if s["history"]:
            s["history"][-1] = _compact(s["history"][-1])  # only the last round's is kept in full
        s["history"].append(self.entry)
        s["pending"] = {p: {"roulette": None, "bet": None} for p in self.players}
        if s["result"] is None:
            s["round"] = self.round + 1

    def pay(self, frm: str, to: str, owed: int, reason: str) -> int:
        """Pay ``owed`` chips, or all ``frm`` holds when that is less; returns what was paid."""
        if owed == 0:
            return 0
        chips = self.s["chips"]
        paid: int = min(owed, chips[frm])
        transfer(self.s, frm, to, paid, reason, self.key)
        chips[frm] -= paid
        if to != HOUSE:
            chips[to] += paid
        self.entry["payments"].append({"from": frm, "to": to, "owed": owed, "paid": paid, "reason": reason})
        return paid

    def pay_or_go_bankrupt(self, frm: str, to: str, owed: int, reason: str) -> int:
        """Bankruptcy (SCORING 3b): owing more than you hold, you pay what you hold and lose."""
        paid = self.pay(frm, to, owed, reason)
        if paid < owed:
            self.losses[frm].append(
                f"{frm} owed {plural(owed, 'chip')} ({reason}) but held only {paid} and is bankrupt"
            )
        return paid

    def record_preparations(self) -> None:
        """INACTIVITY 1: no roulette by the deadline gives the opponent 60 points."""
        if not prepares_in(self.round):
            return
        prepared = {}
        for p in self.players:
            roulette = self.s["pending"][p]["roulette"]
            self.s["roulettes"][p].append(roulette)
            prepared[p] = roulette is not None
            if roulette is None:
                self.missed[p].append("roulette")
                opponent = _opponent(self.s, p)
                self.entry["inactivity_points"][opponent] += INACTIVITY_POINTS
                self.s["points"][opponent] += INACTIVITY_POINTS
        self.entry["prepared"] = prepared

    def score_roulettes(self) -> None:
        """Score the roulettes prepared last round against the bets made on them."""
        if self.round == 0:
            return
        for preparer in self.players:
            roulette = self.s["roulettes"][preparer][self.round - 1]
            if roulette is None:
                continue
            bettor = _opponent(self.s, preparer)
            bet = self.s["pending"][bettor]["bet"]
            if bet is None:
                self.missed[bettor].append("bet")
                bet = dict(NO_BET)
            score = score_roulette(roulette, bet)
            bonus_player = {"preparer": preparer, "bettor": bettor}.get(score.bonus_to or "")
            earned = {preparer: score.preparer_points, bettor: score.bettor_points}
            if bonus_player is not None:
                earned[bonus_player] += SINGLE_COLOUR_BONUS
            for p, n in earned.items():
                self.s["points"][p] += n
            self.entry["roulettes"].append(
                {
                    "preparer": preparer,
                    "bettor": bettor,
                    "prepared_in": self.round - 1,
                    "winning": roulette["winning"],
                    "points": dict(roulette["points"]),
                    "bet": bet,
                    "bet_missed": self.s["pending"][bettor]["bet"] is None,
                    "unbet": BET_POINTS - sum(bet.values()),
                    "single_colour": single_colour(bet),
                    "points_on_winning": {preparer: score.preparer_points, bettor: score.bettor_points},
                    "bonus": None if bonus_player is None else {"to": bonus_player, "points": SINGLE_COLOUR_BONUS},
                    "earned": earned,
                    "take": score.take,
                }
            )

    def settle_black_takes(self) -> None:
        """SCORING 3, 3a-c: only the net of the round's takes moves; the chips a player
        actually loses to takes are capped at 100, the payment reaching 100 is cut and
        that player forfeits."""
        black = [r for r in self.entry["roulettes"] if r["winning"] == "Black"]
        if not black:
            return
        takes = {p: 0 for p in self.players}
        for r in black:
            takes[r["preparer"]] += r["take"]
        a, b = self.players
        net = takes[a] - takes[b]
        taker, payer = (a, b) if net >= 0 else (b, a)
        owed = abs(net)
        cut = 0
        paid = 0
        if owed:
            due = min(owed, CHIP_CAP - self.s["black_lost"][payer])
            cut = owed - due
            paid = self.pay_or_go_bankrupt(payer, taker, due, "Black take")
            self.s["black_lost"][payer] += paid
            if self.s["black_lost"][payer] >= CHIP_CAP:
                self.losses[payer].append(f"{payer} has lost {CHIP_CAP} chips to Black takes and forfeits")
        # Gross takes (the tiebreak): the part offset by the other take counts in full.
        for p in self.players:
            self.s["black_taken"][p] += takes[p] - (owed - paid if p == taker else 0)
        self.entry["black"] = {
            "takes": takes,
            "net": owed,
            "from": payer if owed else None,
            "to": taker if owed else None,
            "cut_by_cap": cut,
            "paid": paid,
        }

    def pay_lgt(self) -> None:
        """SCORING 3d: each preparer of a Black roulette pays the LGT 10 chips."""
        for r in self.entry["roulettes"]:
            if r["winning"] == "Black":
                self.pay_or_go_bankrupt(r["preparer"], HOUSE, LGT_PAYMENT, "LGT payment for a Black roulette")

    def pay_inactivity_fees(self) -> None:
        """INACTIVITY 3: each miss costs the inactive player 5 chips to the LGT."""
        for p in self.players:
            for miss in self.missed[p]:
                self.pay_or_go_bankrupt(p, HOUSE, INACTIVITY_FEE, f"inactivity fee: no {miss}")

    def finish(self, outcome: dict[str, str], reason: str) -> None:
        self.s["result"] = {
            "outcome": outcome,
            "victory_points": {p: VICTORY_POINTS[o] for p, o in outcome.items()},
            "reason": reason,
            "scores": dict(self.s["points"]),
        }

    def end_by_losses(self, losers: list[str]) -> None:
        """Cap or bankruptcy: the match ends at once, no point-lead transfer; if both
        players lose in the same settlement, the match is a draw."""
        reasons = "; ".join(reason for p in losers for reason in self.losses[p])
        if len(losers) == 2:
            self.finish(
                {p: "draw" for p in self.players}, f"Both players lost in the same settlement ({reasons}): a draw."
            )
            return
        loser = losers[0]
        winner = _opponent(self.s, loser)
        self.finish({winner: "win", loser: "loss"}, f"{winner} wins: {reasons}.")

    def end_by_points(self) -> None:
        """END OF GAME 1-2: most points wins; tie -> more gross chips taken through own
        Black roulettes; still tied -> draw. The winner takes floor(lead / 10) chips."""
        a, b = self.players
        points, taken = self.s["points"], self.s["black_taken"]
        if points[a] != points[b]:
            winner = a if points[a] > points[b] else b
            loser = _opponent(self.s, winner)
            lead = points[winner] - points[loser]
            paid = self.pay(loser, winner, lead_chips(lead), "point lead")
            reason = (
                f"{winner} wins on points, {points[winner]} to {points[loser]}, "
                f"and takes {plural(paid, 'chip')} from {loser} for the lead of {plural(lead, 'point')}."
            )
        elif taken[a] != taken[b]:
            winner = a if taken[a] > taken[b] else b
            loser = _opponent(self.s, winner)
            reason = (
                f"Tied on {plural(points[a], 'point')}; {winner} wins the tiebreak with "
                f"{plural(taken[winner], 'chip')} taken through Black roulettes against {taken[loser]}."
            )
        else:
            self.finish(
                {a: "draw", b: "draw"},
                f"Tied on {plural(points[a], 'point')} and on {plural(taken[a], 'chip')} taken through Black "
                "roulettes: a draw.",
            )
            return
        self.finish({winner: "win", loser: "loss"}, reason)


# --------------------------------------------------------------------------- the game


class StationaryRoulette:
    name = "stationary-roulette"
    title = "Stationary Roulette"
    min_players = 2
    max_players = 2

    def __init__(self) -> None:
        # Rounds are simultaneous; the match moves the season's chips (the ``chips`` the
        # service passes in the options are the players' balances, not a match option).
        self.game_type = GameType(
            dynamics=SIMULTANEOUS,
            roles=("player", "player"),
            currencies=(SEASON_CHIPS,),
            step_kinds={"round": ROUND_HOURS},
            options={},
            chance=False,
            ranked=True,
        )
        self.step_kinds: dict[str, float] = self.game_type.step_kinds

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
        if len(players) != 2 or players[0] == players[1]:
            raise GameError("Stationary Roulette needs two different players.")
        chips = {p: options.get("chips", {}).get(p, DEFAULT_CHIPS) for p in players}
        if not all(_is_int(n) and n >= 0 for n in chips.values()):
            raise GameError("Starting chips must be non-negative whole numbers.")
        return {
            "players": list(players),
            "seed": seed,
            "round": 0,
            "initial_chips": dict(chips),
            "chips": dict(chips),
            "points": {p: 0 for p in players},
            "black_taken": {p: 0 for p in players},
            "black_lost": {p: 0 for p in players},
            "roulettes": {p: [] for p in players},
            "pending": {p: {"roulette": None, "bet": None} for p in players},
            "history": [],
            "transfers": [],
            "result": None,
        }

    def step(self, state: State) -> Step | None:
        if state["result"] is not None:
            return None
        return Step(
            key=step_key(state["round"]),
            kind="round",
            players=tuple(state["players"]),
            simultaneous=True,
            title=round_title(state["round"]),
        )

    def awaiting(self, state: State) -> tuple[str, ...]:
        if state["result"] is not None:
            return ()
        return tuple(
            p
            for p in state["players"]
            if (prepares_in(state["round"]) and state["pending"][p]["roulette"] is None)
            or (_bettable(state, p) is not None and state["pending"][p]["bet"] is None)
        )

    # ----------------------------------------------------------------- mail text

    def parse(self, state: State, player: str, text: str) -> Parsed:
        return read_mail(text)

    def form(self, state: State, player: str) -> str:
        """The ROULETTE and BET sections the player owes this round (their current
        submission, else an example), after the line ``Step: Round N`` (the convention of
        every game's form: a reply names the round it answers)."""
        if state["result"] is not None:
            return ""
        pending = state["pending"][player]
        parts = []
        if prepares_in(state["round"]):
            roulette = pending["roulette"] or self._example_roulette(state, player)
            lines = [f"{colour}: {roulette['points'][colour]}" for colour in COLOURS]
            parts.append("\n".join(["ROULETTE", f"Winning colour: {roulette['winning']}", *lines]))
        if _bettable(state, player) is not None:
            bet = pending["bet"] or {"Gold": 20, "Silver": 20, "Black": 0}
            parts.append("\n".join(["BET", *(f"{colour}: {bet[colour]}" for colour in COLOURS)]))
        if not parts:
            return ""
        return f"Step: {round_title(state['round'])}\n\n" + "\n\n".join(parts) + "\n"

    @staticmethod
    def _example_roulette(state: State, player: str) -> dict[str, Any]:
        """A legal example: the first colour with uses left (10 roulettes never use up all 15)."""
        left = uses_left(state["roulettes"][player])
        winning = next(colour for colour in COLOURS if left[colour] > 0)
        return {"winning": winning, "points": {"Gold": 30, "Silver": 10, "Black": 0}}

    # ----------------------------------------------------------------- moves

    def apply_move(self, state: State, player: str, move: Move) -> Applied:
        if state["result"] is not None:
            return Applied(state, False, "The match is over; no more submissions are accepted.", changed=False)
        if player not in state["players"]:
            return Applied(state, False, f"{player} is not playing in this match.", changed=False)
        kind = move.get("type") if isinstance(move, dict) else None
        ref = move.get("step") if isinstance(move, dict) else None
        if ref is not None and round_named(ref) != state["round"]:
            now = round_title(state["round"])
            said = "the preparation phase" if state["round"] == 0 else now
            shown = ref[:1].upper() + ref[1:] if isinstance(ref, str) else repr(ref)
            return Applied(
                state,
                False,
                f"Your mail answers {shown}, but {said} is open now. Nothing of that mail was "
                f"recorded: send your submission for {said} again, with the line 'Step: {now}' "
                "(the form of our latest mail has it).",
                changed=False,
            )
        if kind == "roulette":
            problem, value = self._check_roulette(state, player, move)
        elif kind == "bet":
            problem, value = self._check_bet(state, player, move)
        else:
            return Applied(state, False, "A submission is either a ROULETTE or a BET.", changed=False)
        if problem is not None:
            return Applied(state, False, problem, changed=False)
        new = _copy(state)
        new["pending"][player][kind] = value
        return Applied(new, True)

    @staticmethod
    def _check_roulette(state: State, player: str, move: Move) -> tuple[str | None, Any]:
        if not prepares_in(state["round"]):
            return (
                f"Round {ROUNDS} is the last round: there is no roulette to prepare "
                f"(the last roulettes were prepared in round {LAST_PREPARATION_ROUND}).",
                None,
            )
        winning, points = move.get("winning"), move.get("points")
        if winning not in COLOURS:
            return f"The winning colour must be Gold, Silver or Black; you gave {winning!r}.", None
        if not isinstance(points, dict):
            return "The roulette must give points for Gold, Silver and Black.", None
        shape = _points_shape(points)
        if shape is not None:
            return shape, None
        roulette = {"winning": winning, "points": {colour: points.get(colour, 0) for colour in COLOURS}}
        problems = roulette_problems(roulette, uses_left(state["roulettes"][player]))
        return (" ".join(problems) if problems else None), roulette

    @staticmethod
    def _check_bet(state: State, player: str, move: Move) -> tuple[str | None, Any]:
        if _bettable(state, player) is None:
            return _nothing_to_bet(state), None
        bets = move.get("bets")
        if not isinstance(bets, dict):
            return "The bet must give points for Gold, Silver or Black.", None
        shape = _points_shape(bets)
        if shape is not None:
            return shape, None
        bet = {colour: bets.get(colour, 0) for colour in COLOURS}
        problems = bet_problems(bet)
        return (" ".join(problems) if problems else None), bet

    def apply_timeout(self, state: State, key: str | None = None) -> State:
        if state["result"] is not None:
            raise GameError("The match is over; there is no round to close.")
        new = _copy(state)
        _Settlement(new).run()
        return new

    def forfeit(self, state: State, player: str) -> State:
        """``player`` forfeits the match (RULINGS, "Seasons": a loss, with the chips as they
        stand; ruling 33): it ends at once, the opponent winning. The open round is not
        settled: its submissions are dropped, no points are scored, no chips move (no take,
        no LGT payment, no inactivity fee, no point-lead payment); a roulette not yet bet on
        is never revealed (ruling 4). ``state["forfeit"]`` records who forfeited and in
        which round (the views show it)."""
        if state["result"] is not None:
            raise GameError("The match is over; nobody can forfeit it any more.")
        if player not in state["players"]:
            raise GameError(f"{player} is not playing in this match, so cannot forfeit it.")
        new = _copy(state)
        winner = _opponent(new, player)
        round_no = new["round"]
        where = "the preparation phase" if round_no == 0 else f"round {round_no}"
        new["pending"] = {p: {"roulette": None, "bet": None} for p in new["players"]}
        new["forfeit"] = {"player": player, "round": round_no}
        new["result"] = {
            "outcome": {winner: "win", player: "loss"},
            "victory_points": {winner: VICTORY_POINTS["win"], player: VICTORY_POINTS["loss"]},
            "reason": f"{winner} wins: {player} forfeited the match in {where} (not settled).",
            "scores": dict(new["points"]),
        }
        return new

    def with_balances(self, state: State, balances: dict[str, int]) -> State:
        """The state with each player's chips set to their live season balance (ruling:
        every settlement, the lead payment included, is judged on what the players hold
        in the season at that moment; chips lost to Black takes in this match, for the
        cap, are not touched)."""
        check_balances(state, balances)
        new = _copy(state)
        new["chips"] = {p: balances[p] for p in state["players"]}
        return new

    # ----------------------------------------------------------------- views

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        """What ``player`` may know (None: the public archive). Hidden until settled:
        winning colours of unsettled roulettes (also through colour-use counts), the
        opponent's submissions this round (not even whether they exist), the points
        of roulettes in play (public view only).

        A player's view holds what their mails show: the running totals (``standings``)
        and the last settled round (``last_result``), so it costs the same in every
        round. The public view adds ``history``, every settled round (the archive)."""
        if player is not None and player not in state["players"]:
            raise GameError(f"{player} is not playing in this match.")
        over = state["result"] is not None
        settled = state["history"]
        viewer = None if over else player  # a finished match has nothing personal left
        # built from references into the state, then copied once: nothing shared leaves
        view = {
            "game": self.name,
            "round": state["round"],
            "rounds": ROUNDS,
            "title": round_title(state["round"]),
            "over": over,
            "players": list(state["players"]),
            "you": player,
            "opponent": None if player is None else _opponent(state, player),
            "standings": self._standings(state, player),
            "todo": None if viewer is None else self._todo(state, viewer),
            "pending": None if viewer is None else self._pending(state, viewer),
            "in_play": None if viewer is None else self._in_play(state, viewer),
            "last_result": self._entry_view(state, _last_record(state), player) if settled else None,
            "final": state["result"],
        }
        if player is None:
            view["history"] = self._history(state)
        if state.get("forfeit") is not None:  # only once a player forfeited (ruling 33)
            view["forfeit"] = state["forfeit"]
        copied: dict[str, Any] = _copy(view)
        return copied

    @staticmethod
    def _standings(state: State, player: str | None) -> dict[str, dict[str, Any]]:
        """The running totals, and the colour uses left as ``player`` may know them: their
        own from every roulette they prepared, the opponent's from the revealed ones."""
        revealed = max(len(state["history"]) - 1, 0)
        standings = {}
        for p in state["players"]:
            known = state["roulettes"][p] if p == player else state["roulettes"][p][:revealed]
            standings[p] = {
                "points": state["points"][p],
                "chips": state["chips"][p],
                "black_taken": state["black_taken"][p],
                "black_lost": state["black_lost"][p],
                "cap_left": CHIP_CAP - state["black_lost"][p],
                "uses_left": uses_left(known),
            }
        return standings

    @staticmethod
    def _entry_view(state: State, entry: dict[str, Any], player: str | None) -> dict[str, Any]:
        """A settled round with each player's remaining colour uses as the viewer may
        know them: their own roulettes including the one just prepared, the
        opponent's only as far as revealed (prepared before that round)."""
        shown = dict(entry)  # the whole view is copied once at the end
        shown["uses_left"] = {
            p: uses_left(state["roulettes"][p][: entry["round"] + (1 if p == player else 0)]) for p in state["players"]
        }
        return shown

    @staticmethod
    def _history(state: State) -> list[dict[str, Any]]:
        """Every settled round for the public view, in full (compact records rebuilt), each
        with the colour uses revealed by then (the roulettes prepared before it), counted in
        one pass per player."""
        left = {p: uses_left_after_each(state["roulettes"][p]) for p in state["players"]}
        shown = []
        for entry in _settled_records(state):
            row = dict(entry)  # the whole view is copied once at the end
            row["uses_left"] = {p: left[p][min(entry["round"], len(left[p]) - 1)] for p in state["players"]}
            shown.append(row)
        return shown

    @staticmethod
    def _todo(state: State, player: str) -> dict[str, Any]:
        roulette = _bettable(state, player)
        return {
            "prepare": prepares_in(state["round"]),
            "bet": None
            if roulette is None
            else {
                "preparer": _opponent(state, player),
                "prepared_in": state["round"] - 1,
                "points": dict(roulette["points"]),
            },
            "nothing_to_bet": _nothing_to_bet(state) if roulette is None else None,
        }

    @staticmethod
    def _pending(state: State, player: str) -> dict[str, Any]:
        pending = state["pending"][player]  # view() copies the whole view
        roulette, bet = pending["roulette"], pending["bet"]
        return {
            "roulette": roulette,
            "bet": bet,
            "unbet": None if bet is None else BET_POINTS - sum(bet.values()),
            "uses_left_after": None if roulette is None else uses_left([*state["roulettes"][player], roulette]),
        }

    @staticmethod
    def _in_play(state: State, player: str) -> dict[str, Any] | None:
        """The viewer's own roulette the opponent is betting on this round."""
        if state["round"] == 0:
            return None
        roulette: dict[str, Any] | None = state["roulettes"][player][state["round"] - 1]  # copied by view()
        return roulette

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        """Every player is told of every step (and of the end)."""
        return tuple(state["players"])

    def standings(self, state: State) -> list[str]:
        """One line per player for organizers, from the public view's standings only."""
        return [
            f"{p}: {plural(row['points'], 'point')}, {plural(row['chips'], 'chip')}, {row['black_taken']} taken "
            f"through Black roulettes, {row['black_lost']} of {CHIP_CAP} lost to Black takes"
            for p, row in self._standings(state, None).items()
        ]

    def result(self, state: State) -> Result | None:
        result = stored_result(state)
        if result is not None:
            result.ranking = ranking(state, result.outcome, state["chips"])
        return result

    # ----------------------------------------------------------------- for tests and bots

    def sample_moves(self, state: State, player: str, rnd: random.Random) -> list[Move]:
        """A few legal submissions ``player`` may send now (a roulette when the round
        prepares one, a bet when there is a roulette to bet on; revisions included), []
        when there is nothing to do."""
        if state["result"] is not None or player not in state["players"]:
            return []
        moves: list[Move] = []
        if prepares_in(state["round"]):
            left = uses_left(state["roulettes"][player])
            colours = [colour for colour in COLOURS if left[colour] > 0]
            for _ in range(2):
                points = _random_points(rnd)
                moves.append({"type": "roulette", "winning": rnd.choice(colours), "points": points})
        if _bettable(state, player) is not None:
            moves.extend({"type": "bet", "bets": _random_bet(rnd)} for _ in range(2))
        return moves

    def hidden_variants(self, state: State, player: str, rnd: random.Random) -> list[State]:
        """A few states that differ from ``state`` only in what ``player`` may not know
        yet: the winning colour of each unsettled roulette of the opponent (the one
        ``player`` bets on, or one left over when the match ended early: of that one
        the points too, which ``player`` never saw), and, while the round is open, the
        opponent's pending roulette and bet (or whether there is one). Each is a valid
        state: roulettes obey the colour-use limit, bets the betting rules."""
        if player not in state["players"]:
            raise GameError(f"{player} is not playing in this match.")
        opponent = _opponent(state, player)
        over = state["result"] is not None
        recorded: list[dict[str, Any] | None] = state["roulettes"][opponent]
        unsettled = [i for i in range(max(len(state["history"]) - 1, 0), len(recorded)) if recorded[i] is not None]
        variants = []
        for _ in range(4):
            new = clone(state)
            roulettes = new["roulettes"][opponent]
            for i in unsettled:
                # a colour still allowed once this roulette's own use is given back
                left = uses_left(roulettes[:i] + roulettes[i + 1 :])
                roulettes[i]["winning"] = rnd.choice([c for c in COLOURS if left[c] > 0])
                if over:
                    roulettes[i]["points"] = _random_points(rnd)
            pending = new["pending"][opponent]
            if not over and prepares_in(state["round"]):
                left = uses_left(roulettes)
                colours = [colour for colour in COLOURS if left[colour] > 0]
                pending["roulette"] = (
                    None if rnd.random() < 0.3 else {"winning": rnd.choice(colours), "points": _random_points(rnd)}
                )
            if not over and _bettable(state, opponent) is not None:
                pending["bet"] = None if rnd.random() < 0.3 else _random_bet(rnd)
            variants.append(new)
        return variants


def _random_points(rnd: random.Random) -> dict[str, int]:
    """The points of a legal roulette (PREPARING 2b)."""
    gold = rnd.randint(MIN_GOLD, ROULETTE_POINTS - MIN_SILVER)
    return {"Gold": gold, "Silver": ROULETTE_POINTS - gold, "Black": 0}


def _random_bet(rnd: random.Random) -> dict[str, int]:
    """A legal bet (GAMEPLAY 3): all 40 on one colour, or at most 40 over two colours."""
    if rnd.random() < 0.3:
        colour = rnd.choice(COLOURS)
        return {c: BET_POINTS if c == colour else 0 for c in COLOURS}
    first, second = rnd.sample(COLOURS, MAX_BET_COLOURS)
    n = rnd.randint(0, BET_POINTS)
    bet = {colour: 0 for colour in COLOURS}
    bet[first], bet[second] = n, rnd.randint(0, BET_POINTS - n)
    return bet


GAME = StationaryRoulette()
