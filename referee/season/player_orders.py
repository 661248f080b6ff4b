"""The players' commands by mail (docs/players.md), read from the text a player wrote: one
command a line (:func:`read_commands`). Pure (no I/O) and linear: each line is split once,
at most :data:`MAX_COMMANDS` commands are taken from one mail.

::

    HELP
    STATUS
    STANDINGS
    HISTORY <match>
    TIMEZONE <IANA zone> [<code>]
    RESIGN <match> [<code>]

Keywords are read in any case, match ids and zones as written (a zone's case is checked
against the zone database). Blank lines are skipped; a signature line (``-- ``) ends the
commands.

**Which mail holds commands** (:func:`is_commands_mail`). A mail to a personal reply address
is a mail of commands only when every line the player wrote (above any quote) is a command
line (its first word is a command keyword); any other line makes it a mail of moves, read
by the game as always, and then no command in it is done (the game's answer lists what it
did not read). A mail to the general address holds no moves: it is a mail of commands when
any of its lines is a command line, and then every other line is a problem.

A mail's commands are done all together or not at all: a line that is not a command as
written, and nothing of the mail is done (the answer says why, with the list of commands).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import date, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones
from referee.season.orders import Problem  # a line not understood, and why: as in the organizer's

__all__ = [
    "COMMANDS",
    "MAX_COMMANDS",
    "Command",
    "Problem",
    "Read",
    "check_code",
    "confirm_code",
    "is_commands_mail",
    "read_commands",
]

MAX_COMMANDS = 10  # commands one mail may hold: more, and nothing of it is done
MAX_PROBLEMS = 10  # lines not understood that are listed: reading stops at the next one
LINE_SHOWN = 70  # characters of a line quoted back (the answer's lines stay within 78)
SIGNATURE = "--"
CODE_LENGTH = 8  # characters of a confirmation code (lowercase base32)
VERBS = ("help", "status", "standings", "history", "timezone", "resign")

# Each command as the answers and docs/players.md list it: the form, then what it does.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("HELP", "these commands, and what you may send now in each match"),
    ("STATUS", "each of your running matches as you may see it"),
    ("STANDINGS", "the standings of your season"),
    ("HISTORY <match>", "every step of a match so far, as you saw it"),
    ("TIMEZONE <zone>", "show your times in this zone, e.g. TIMEZONE Europe/Paris"),
    ("RESIGN <match>", "give up a match (a second mail with a code confirms)"),
)

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_ZONE = re.compile(r"[A-Za-z][A-Za-z0-9_+\-/]{0,63}")
_CODE = re.compile(rf"[A-Za-z2-7]{{{CODE_LENGTH}}}")


@dataclass(frozen=True)
class Command:
    """One command as read: ``line`` as written (cut), ``number`` its line (1: the first)."""

    verb: str  # one of VERBS
    line: str
    number: int
    match: str | None = None  # HISTORY, RESIGN
    zone: str | None = None  # TIMEZONE
    code: str | None = None  # RESIGN, TIMEZONE: the confirmation code (lowercase)


@dataclass(frozen=True)
class Read:
    commands: tuple[Command, ...]
    problems: tuple[Problem, ...]  # none: the commands may be done


class _Refused(Exception):
    pass


def _lines(text: str) -> list[tuple[int, str]]:
    """The non-blank lines above the signature, stripped, with their numbers."""
    out = []
    for i, raw in enumerate(text.split("\n")):
        line = raw.strip()
        if line == SIGNATURE:
            break
        if line:
            out.append((i + 1, line))
    return out


def _is_command_line(line: str) -> bool:
    return line.split(maxsplit=1)[0].lower().rstrip(":") in VERBS


def is_commands_mail(text: str, *, general: bool) -> bool:
    """Does the text a player wrote hold commands (see the module docstring)? ``general``:
    the mail went to the general address (no moves there)."""
    lines = _lines(text)
    if not lines:
        return False
    if general:
        return any(_is_command_line(line) for _, line in lines)
    return all(_is_command_line(line) for _, line in lines)


def read_commands(text: str) -> Read:
    """The commands of *text*, in order, and the lines that are not commands."""
    commands: list[Command] = []
    problems: list[Problem] = []
    for number, line in _lines(text):
        shown = line if len(line) <= LINE_SHOWN else line[: LINE_SHOWN - 1] + "\u2026"
        if len(commands) >= MAX_COMMANDS:
            problems.append(Problem(number, shown, f"more than {MAX_COMMANDS} commands: send the rest in another mail"))
            break
        words = line.split()
        verb = words[0].lower().rstrip(":")
        try:
            if verb not in VERBS:
                raise _Refused("not a command (the commands are listed below)")
            commands.append(_READERS[verb](words[1:], shown, number))
        except _Refused as exc:
            problems.append(Problem(number, shown, str(exc)))
            if len(problems) >= MAX_PROBLEMS:
                break
    return Read(tuple(commands), tuple(problems))


def _plain(verb: str) -> object:
    def read(words: list[str], line: str, number: int) -> Command:
        if words:
            raise _Refused(f"write {verb.upper()} alone on its line")
        return Command(verb, line, number)

    return read


def _match(words: list[str], usage: str) -> str:
    if not words or _ID.fullmatch(words[0]) is None:
        raise _Refused(f"write {usage}, with the match as our mails name it (e.g. m1)")
    return words[0]


def _code(words: list[str], usage: str) -> str | None:
    if not words:
        return None
    if len(words) > 1 or _CODE.fullmatch(words[0]) is None:
        raise _Refused(f"write {usage}; the code is the {CODE_LENGTH} letters and digits of our answer")
    return words[0].lower()


def _history(words: list[str], line: str, number: int) -> Command:
    usage = "HISTORY <match>"
    match = _match(words, usage)
    if len(words) > 1:
        raise _Refused(f"write {usage}")
    return Command("history", line, number, match=match)


def _resign(words: list[str], line: str, number: int) -> Command:
    usage = "RESIGN <match>, or RESIGN <match> <code>"
    return Command("resign", line, number, match=_match(words, usage), code=_code(words[1:], usage))


def _timezone(words: list[str], line: str, number: int) -> Command:
    usage = "TIMEZONE <zone>, e.g. TIMEZONE Europe/Paris"
    if not words:
        raise _Refused(f"write {usage}")
    zone = known_zone(words[0])
    if zone is None:
        raise _Refused(f"{words[0][:40]!r} is not a time zone I know: write a name such as Europe/Paris or UTC")
    return Command("timezone", line, number, zone=zone, code=_code(words[1:], usage + " <code>"))


@functools.cache
def _zones() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


def known_zone(word: str) -> str | None:
    """The IANA zone *word* names (any case: ``europe/paris`` is ``Europe/Paris``), or None."""
    if _ZONE.fullmatch(word) is None:
        return None
    name = _zones().get(word.lower())
    if name is None:
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    return name


_READERS = {
    "help": _plain("help"),
    "status": _plain("status"),
    "standings": _plain("standings"),
    "history": _history,
    "timezone": _timezone,
    "resign": _resign,
}


# ---------------------------------------------------------------------- confirmation codes


def confirm_code(secret: bytes, verb: str, subject: str, player: str, day: date) -> str:
    """The code that confirms ``verb`` (``resign``, ``timezone``) of ``subject`` (the match,
    the zone) for ``player`` (``<season key>:<player key>``) on ``day`` (UTC): HMAC-SHA256
    with the server secret, the first :data:`CODE_LENGTH` characters of its lowercase
    base32. Only our answer to the registered address carries it."""
    message = f"confirm\0{verb}\0{subject}\0{player}\0{day.isoformat()}".encode()
    digest = hmac.digest(secret, message, hashlib.sha256)
    return base64.b32encode(digest[:10]).decode("ascii").lower()[:CODE_LENGTH]


def check_code(secret: bytes, code: str, verb: str, subject: str, player: str, day: date) -> bool:
    """Is ``code`` the code of ``day`` or of the day before (a code sent just before
    midnight still works the next morning)?"""
    return any(
        hmac.compare_digest(confirm_code(secret, verb, subject, player, d).encode(), code.lower().encode())
        for d in (day, day - timedelta(days=1))
    )
