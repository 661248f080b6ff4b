"""What a game's demo gives the generic director, and what every scripted player reads.

A game's demo lives with the game, in ``referee/games/<game>/demo.py``, as a module-level
``DEMO``: a :class:`Demo` saying who sits at the demo match (and who has an address), the
match's own lines of the demo's ``season.toml``, the heading the demo prints, and its
script: a :class:`Script` subclass the director builds and calls until the match is over
(:mod:`referee.demo.director`). The registry finds it by convention
(:mod:`referee.demo.registry`); nothing here or in the director names a game.

Also here, for every game's scripted players: the two players of the two-seat demos
(:data:`PLAYERS`), how a mail's fill-in form is read (:func:`form_of`) and an error mail's
``Problem:`` paragraph (:func:`problem_line`).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TextIO, TypeVar

if TYPE_CHECKING:
    import random
    from datetime import datetime

    from referee.games.base import Game
    from referee.mail.client import Received, ScriptedClient
    from referee.store.db import Store
    from referee.store.models import Match

T = TypeVar("T")


class Director(Protocol):
    """What a game's script has of the demo's director (:class:`referee.demo.director.Director`,
    which this module does not import: the director imports the games' demos)."""

    engine: Game
    store: Store
    clients: dict[str, ScriptedClient]
    out: TextIO
    seed: int
    start: datetime
    match_key: str

    def rng(self, key: str) -> random.Random: ...
    def match(self) -> Match: ...
    def public(self) -> dict[str, Any]: ...
    def advance(self, at: datetime) -> None: ...
    def tick(self, at: datetime) -> Any: ...
    def send(self, key: str, at: datetime, write: Callable[[datetime], T]) -> tuple[T, Received]: ...
    def say(self, line: str) -> None: ...


# the players of a two-seat demo (key -> name, time zone), both with an address
PLAYERS = {
    "alice": ("Alice", "Europe/Berlin"),
    "bob": ("Bob", "America/New_York"),
}
# who sits at a two-seat demo match: key -> (name, time zone, has an address)
TWO_SEATS = {key: (name, tz, True) for key, (name, tz) in PLAYERS.items()}


class Script(ABC):
    """One game's script of its demo match, built by the director with itself
    (``DEMO.script(director)``). The director ticks the referee at the match's start, prints
    :meth:`opening`, then calls :meth:`play` until it returns False (at most ``max_steps``
    times), then asks :meth:`check` what to add to the end report. The script reads the
    match, has its scripted players answer their mail and says what happened, all through
    the director (:class:`~referee.demo.director.Director`)."""

    max_steps = 1000  # a match ends long before; the bound keeps a broken one from looping

    def __init__(self, director: Director):
        self.director = director

    def opening(self) -> Iterable[str]:
        """Lines said once the match has started, before its play (who sits where)."""
        return ()

    @abstractmethod
    def play(self) -> bool:
        """Play the open step (or the next event of the script); False once the match is over."""

    def check(self) -> tuple[bool, list[str]]:
        """Whether the mail went where it should, and the lines the end report says of it."""
        return True, []


@dataclass(frozen=True)
class Demo:
    """A game's demo (``DEMO`` in ``referee/games/<game>/demo.py``)."""

    # who sits at the demo match, in seat order: key -> (name, time zone, has an address); a
    # seat without an address is never mailed (a silent seat)
    seats: Mapping[str, tuple[str, str, bool]]
    # the demo match's own lines in season.toml, after its id, game, players, start and seed
    # (its step lengths, options and reminders)
    match_lines: str
    # the game's script of the demo match
    script: Callable[[Director], Script]
    # who plays, for the heading: "<title>, <who>, seed 7; <pace>starting ..."
    who: str
    pace: str = ""  # e.g. "one day of play per round, "
    # lines of the [season] table the game reads (MatchJack's starting garnets), each ending in "\n"
    season_lines: str = ""


# ---------------------------------------------------------------------------- reading mail

STEP_LINE = re.compile(r"^Step: (.+)$", re.MULTILINE)


def unquoted(text: str) -> str:
    """The mail's own lines (a quoted ``>`` line or an echoed ``|`` line is not the referee's word now)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith((">", "|")))


def form_of(text: str) -> tuple[str, str] | None:
    """(command, step title) of the fill-in form a mail holds: its last ``Step:`` line and
    the command line right above it; None when the mail holds no form."""
    lines = unquoted(text).splitlines()
    for i in range(len(lines) - 1, 0, -1):
        found = STEP_LINE.match(lines[i])
        if found and lines[i - 1].strip():
            return lines[i - 1].strip(), found.group(1).strip()
    return None


def problem_line(text: str) -> str:
    """The "Problem:" paragraph of an error mail on one line (it may be wrapped), else the
    mail's first line."""
    found = re.search(r"^Problem:.*(?:\n(?!\n).*)*", text, re.MULTILINE)
    if found:
        return " ".join(found.group(0).split())
    return text.splitlines()[0] if text else ""


__all__ = ["PLAYERS", "TWO_SEATS", "Demo", "Script", "STEP_LINE", "form_of", "problem_line", "unquoted"]
