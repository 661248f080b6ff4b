"""The organizer's commands by mail, read from the text the organizer wrote: one command a
line (:func:`read_orders`). Pure (no I/O) and linear: each line is split once, every word
looked at a bounded number of times, and at most :data:`MAX_ORDERS` commands are taken
from one mail (the work any one mail can cause is bounded).

The commands are the organizer's controls (:class:`referee.season.controls.Controls`),
the same as the command line's, written as words::

    EXTEND <match> [STEP <step>] <duration>
    PAUSE <match>... : <reason>            PAUSE SEASON [<season>] : <reason>
    RESUME <match>...                      RESUME SEASON [<season>]
    CANCEL <match> <reason...>
    FORFEIT <match> <player> <reason...>
    SUBSTITUTE <match> <old> <new> <reason...>
    ADJUST [SEASON <season>] <player> <currency> <+N|-N> <reason...>
    ANNOUNCE <match> | ANNOUNCE SEASON [<season>]   (the text on the lines below, up to END)
    STANDINGS [<season>]
    STATUS [<match>]

Keywords (the verbs, ``SEASON``, ``STEP``, ``END``) are read in any case; ids (matches,
players, seasons, steps) as written. A reason may follow a colon (``CANCEL m1: both left``);
PAUSE needs the colon, which ends its list of matches. Blank lines are skipped; a
signature line (``-- ``) ends the commands. A line that is none of these is an error:
the mail is read whole and its commands are done all together or not at all, so a mail
holding any line not understood does nothing (a copy of one of our mails, whatever way
it got into the text, is never done).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from referee.config import ConfigError, parse_duration

__all__ = ["COMMANDS", "MAX_ORDERS", "Order", "Problem", "Read", "read_orders"]

MAX_ORDERS = 20  # commands one mail may hold: more, and nothing of it is done
MAX_PROBLEMS = 10  # lines not understood that are listed: reading stops at the next one
MAX_REASON = 500  # characters of a reason (told to the players)
MAX_MATCHES = 50  # matches one PAUSE or RESUME line may name
LINE_SHOWN = 200  # characters of a line quoted back in a problem
CURRENCIES = ("chips", "garnets", "cols")  # as Controls.adjust moves them
SIGNATURE = "--"  # a signature's first line ("-- "), stripped: it ends the commands

# Each command as the reference lists it: the form, then one example.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("EXTEND <match> [STEP <step>] <duration>", "EXTEND m1 12h"),
    ("PAUSE <match>... : <reason>", "PAUSE m1 m2: our mail server moves"),
    ("PAUSE SEASON [<season>] : <reason>", "PAUSE SEASON: the holidays"),
    ("RESUME <match>...", "RESUME m1 m2"),
    ("RESUME SEASON [<season>]", "RESUME SEASON"),
    ("CANCEL <match> <reason>", "CANCEL m1 both players left the club"),
    ("FORFEIT <match> <player> <reason>", "FORFEIT m1 bob moved abroad"),
    ("SUBSTITUTE <match> <old> <new> <reason>", "SUBSTITUTE m1 bob carol Bob moved abroad"),
    ("ADJUST [SEASON <season>] <player> <currency> <+N|-N> <reason>", "ADJUST alice cols +2 won the quiz"),
    ("ANNOUNCE <match>, then the text, then END", "ANNOUNCE m1"),
    ("ANNOUNCE SEASON [<season>], then the text, then END", "ANNOUNCE SEASON"),
    ("STANDINGS [<season>]", "STANDINGS"),
    ("STATUS [<match>]", "STATUS m1"),
)

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # a match, player, season or step id
_AMOUNT = re.compile(r"[+-]?[0-9]{1,9}")
_VERBS = ("extend", "pause", "resume", "cancel", "forfeit", "substitute", "adjust", "announce", "standings", "status")


@dataclass(frozen=True)
class Order:
    """One command as read. ``line``: its first line as written (cut), ``number``: where
    it stands in the text (1 is the first line)."""

    verb: str  # one of _VERBS
    line: str
    number: int
    matches: tuple[str, ...] = ()  # the match, or the matches of PAUSE and RESUME
    season: str | None = None  # named with SEASON (None: the only season)
    whole_season: bool = False  # PAUSE / RESUME / ANNOUNCE SEASON
    step: str | None = None  # EXTEND ... STEP
    duration: timedelta | None = None  # EXTEND
    player: str | None = None  # FORFEIT, ADJUST; SUBSTITUTE's old player
    new: str | None = None  # SUBSTITUTE's new player
    currency: str | None = None  # ADJUST
    amount: int = 0  # ADJUST
    reason: str = ""
    text: str = ""  # ANNOUNCE

    @property
    def match(self) -> str | None:
        return self.matches[0] if self.matches else None


@dataclass(frozen=True)
class Problem:
    """A line that is not a command as written, and why."""

    number: int
    line: str
    reason: str


@dataclass(frozen=True)
class Read:
    orders: tuple[Order, ...]
    problems: tuple[Problem, ...]  # none: the orders may be done
    stopped: bool = False  # reading stopped at MAX_PROBLEMS lines not understood: there may be more


class _Refused(Exception):
    def __init__(self, reason: str, resume: int | None = None):
        self.reason = reason
        self.resume = resume  # the index of the line to read on with (None: the next)


def read_orders(text: str) -> Read:
    """The commands of *text* (what the organizer wrote, quotes taken off), in order, and
    the lines that are not commands. At most :data:`MAX_ORDERS` commands are read: a
    further one is a problem (nothing of such a mail is done), and reading stops there; so
    it does after :data:`MAX_PROBLEMS` lines that are not commands."""
    orders: list[Order] = []
    problems: list[Problem] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        raw = lines[i]
        number = i + 1
        i += 1
        line = raw.strip()
        if not line:
            continue
        if line == SIGNATURE:
            break  # the signature: nothing below it is a command
        if len(orders) >= MAX_ORDERS:
            problems.append(
                Problem(number, _shown(line), f"more than {MAX_ORDERS} commands in one mail: send the rest in another")
            )
            break
        words = line.split()
        verb = words[0].lower()
        try:
            if verb not in _VERBS:
                raise _Refused("not a command (the commands are listed below)")
            if verb == "announce":
                order, i = _announce(words, _shown(line), number, lines, i)
            else:
                order = _READERS[verb](words[1:], _shown(line), number)
        except _Refused as exc:
            if len(problems) >= MAX_PROBLEMS:
                return Read(tuple(orders), tuple(problems), stopped=True)
            problems.append(Problem(number, _shown(line), exc.reason))
            i = exc.resume if exc.resume is not None else i
            continue
        orders.append(order)
    return Read(tuple(orders), tuple(problems))


def _shown(line: str) -> str:
    return line if len(line) <= LINE_SHOWN else line[: LINE_SHOWN - 1] + "\u2026"


def _id(word: str, what: str) -> str:
    if _ID.fullmatch(word) is None:
        raise _Refused(f"{_shown(word)!r} is not a {what} id (letters, digits, '.', '_' and '-')")
    return word


def _split_reason(words: list[str], fixed: int, usage: str) -> tuple[list[str], str]:
    """The first ``fixed`` words and the reason after them (a colon may stand between)."""
    head = words[:fixed]
    if len(head) == fixed and head and head[-1].endswith(":") and len(head[-1]) > 1:
        head[-1] = head[-1][:-1]  # "CANCEL m1: why"
    rest = words[fixed:]
    if rest and rest[0] == ":":
        rest = rest[1:]
    elif rest and rest[0].startswith(":"):
        rest = [rest[0][1:], *rest[1:]]
    reason = " ".join(word for word in rest if word)
    if len(head) < fixed or not reason:
        raise _Refused(f"write {usage} (a reason is told to the players)")
    if len(reason) > MAX_REASON:
        raise _Refused(f"the reason is longer than {MAX_REASON} characters")
    return head, reason


def _season_part(words: list[str]) -> tuple[bool, str | None, list[str]]:
    """``SEASON [<season>]`` at the start of ``words``: (named, the season id or None, the
    rest; a colon right after SEASON or the season id stands first in the rest)."""
    if not words or words[0].lower().rstrip(":") != "season":
        return False, None, words
    if words[0].endswith(":"):
        return True, None, [":", *words[1:]]
    rest = words[1:]
    if not rest or rest[0].startswith(":"):
        return True, None, rest
    if rest[0].endswith(":"):
        return True, _id(rest[0][:-1], "season"), [":", *rest[1:]]
    return True, _id(rest[0], "season"), rest[1:]


def _extend(words: list[str], line: str, number: int) -> Order:
    usage = "EXTEND <match> [STEP <step>] <duration>, e.g. EXTEND m1 12h"
    if len(words) == 2:
        match, step, amount = words[0], None, words[1]
    elif len(words) == 4 and words[1].lower() == "step":
        match, step, amount = words[0], _id(words[2], "step"), words[3]
    else:
        raise _Refused(f"write {usage}")
    try:
        by = parse_duration(amount, "duration")
    except ConfigError:
        raise _Refused(f'{_shown(amount)!r} is not a duration such as "12h", "90m" or "1d12h"') from None
    return Order("extend", line, number, matches=(_id(match, "match"),), step=step, duration=by)


def _pause(words: list[str], line: str, number: int) -> Order:
    usage = "PAUSE <match>... : <reason> or PAUSE SEASON [<season>] : <reason>"
    whole, season, words = _season_part(words)
    joined = " ".join(words)
    keys, colon, reason = joined.partition(":")
    reason = " ".join(reason.split())
    if not colon or not reason:
        raise _Refused(f"write {usage} (the reason after a colon is told to the players)")
    if len(reason) > MAX_REASON:
        raise _Refused(f"the reason is longer than {MAX_REASON} characters")
    matches = _matches(keys.split(), whole, usage)
    return Order("pause", line, number, matches=matches, season=season, whole_season=whole, reason=reason)


def _resume(words: list[str], line: str, number: int) -> Order:
    usage = "RESUME <match>... or RESUME SEASON [<season>]"
    whole, season, words = _season_part(words)
    matches = _matches(words, whole, usage)
    return Order("resume", line, number, matches=matches, season=season, whole_season=whole)


def _matches(words: list[str], whole: bool, usage: str) -> tuple[str, ...]:
    if whole:
        if words:
            raise _Refused(f"write {usage}: a season, or matches, not both")
        return ()
    if not words:
        raise _Refused(f"write {usage}")
    if len(words) > MAX_MATCHES:
        raise _Refused(f"more than {MAX_MATCHES} matches in one line: name the season (SEASON), or use two lines")
    return tuple(dict.fromkeys(_id(word, "match") for word in words))


def _cancel(words: list[str], line: str, number: int) -> Order:
    (match,), reason = _split_reason(words, 1, "CANCEL <match> <reason>, e.g. CANCEL m1 both players left")
    return Order("cancel", line, number, matches=(_id(match, "match"),), reason=reason)


def _forfeit(words: list[str], line: str, number: int) -> Order:
    (match, player), reason = _split_reason(words, 2, "FORFEIT <match> <player> <reason>")
    return Order("forfeit", line, number, matches=(_id(match, "match"),), player=_id(player, "player"), reason=reason)


def _substitute(words: list[str], line: str, number: int) -> Order:
    (match, old, new), reason = _split_reason(words, 3, "SUBSTITUTE <match> <old> <new> <reason>")
    return Order(
        "substitute",
        line,
        number,
        matches=(_id(match, "match"),),
        player=_id(old, "player"),
        new=_id(new, "player"),
        reason=reason,
    )


def _adjust(words: list[str], line: str, number: int) -> Order:
    usage = "ADJUST [SEASON <season>] <player> <currency> <+N|-N> <reason>, e.g. ADJUST alice cols +2 won the quiz"
    season = None
    if words and words[0].lower() == "season":
        if len(words) < 2:
            raise _Refused(f"write {usage}")
        season, words = _id(words[1], "season"), words[2:]
    (player, currency, amount), reason = _split_reason(words, 3, usage)
    if currency.lower() not in CURRENCIES:
        raise _Refused(f"{_shown(currency)!r} is not a currency: ADJUST moves {', '.join(CURRENCIES)}")
    if _AMOUNT.fullmatch(amount) is None:
        raise _Refused(f"{_shown(amount)!r} is not an amount: write +N or -N, a whole number")
    return Order(
        "adjust",
        line,
        number,
        season=season,
        player=_id(player, "player"),
        currency=currency.lower(),
        amount=int(amount),
        reason=reason,
    )


def _standings(words: list[str], line: str, number: int) -> Order:
    if len(words) > 1:
        raise _Refused("write STANDINGS, or STANDINGS <season>")
    return Order("standings", line, number, season=_id(words[0], "season") if words else None)


def _status(words: list[str], line: str, number: int) -> Order:
    if len(words) > 1:
        raise _Refused("write STATUS, or STATUS <match>")
    return Order("status", line, number, matches=(_id(words[0], "match"),) if words else ())


def _announce(words: list[str], line: str, number: int, lines: list[str], at: int) -> tuple[Order, int]:
    """ANNOUNCE and its text: the lines after it up to a line ``END`` (taken) or the end of
    the text or a signature (not taken). Returns the order and the index of the next line;
    a refusal skips the text too (its lines are no commands)."""
    text: list[str] = []
    end = at
    while end < len(lines):
        raw = lines[end]
        if raw.strip().lower() == "end":
            end += 1
            break
        if raw.strip() == SIGNATURE:
            break
        text.append(raw.rstrip())
        end += 1
    usage = "ANNOUNCE <match> or ANNOUNCE SEASON [<season>] alone on its line, the text on the lines below, then END"
    try:
        whole, season, rest = _season_part(words[1:])
        if (whole and rest) or (not whole and len(rest) != 1):
            raise _Refused(f"write {usage}")
        matches = () if whole else (_id(rest[0], "match"),)
        body = "\n".join(text).strip("\n")
        if not body.strip():
            raise _Refused(f"the announcement is empty: write {usage}")
    except _Refused as exc:
        raise _Refused(exc.reason, end) from None
    return Order("announce", line, number, matches=matches, season=season, whole_season=whole, text=body), end


_READERS = {
    "extend": _extend,
    "pause": _pause,
    "resume": _resume,
    "cancel": _cancel,
    "forfeit": _forfeit,
    "substitute": _substitute,
    "adjust": _adjust,
    "standings": _standings,
    "status": _status,
}
