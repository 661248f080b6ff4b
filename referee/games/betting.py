"""Heads-up betting rounds for the duels: pure functions over plain data.

Used by Indian Poker (``referee.games.indian_poker``) and Rewind Hold'em; written so
that MatchJack and Betting Minority can reuse the parts that fit. The betting rules are
the "Actions" rulings of the Indian Poker section of ``RULINGS.md`` (Rewind Hold'em
says "Betting actions as in Indian Poker"); rulings of our own are listed in
``docs/games/indian-poker.md`` under "Rulings" (B1..).

Nothing here moves chips between accounts or knows about cards: a game keeps its own
stacks and transfers and reads, after each action, what the action put in and what it
returned (the ``put`` and ``returned`` of the last entry of ``round["actions"]``).
No function mutates its arguments; every function returning a round returns a new one.

API (stable; other engines import it)
=====================================

A **round** is a JSON-serialisable dict between exactly two seats (player keys)::

    seats     [a, b]               the two seats, in a fixed order
    stacks    {seat: n}            chips behind: not yet put into this round
    bets      {seat: n}            chips each seat has put into this round (antes included)
    ante      n                    the ante asked of each seat (0: none)
    antes     {seat: n}            the antes really posted (see ``open_round``)
    carried   n                    chips already in the pot from earlier rounds (ties)
    first     seat                 who acted first
    to_act    seat | None          whose turn it is (None once the round has ended)
    actions   [entry, ...]         what was done, in order (see below)
    end       None | "call" | "fold" | "all-in"
    folder    seat | None          who folded (end "fold")

``end`` is "call" after a CALL (or CHECK), "fold" after a FOLD, and "all-in" when the
round opened with a seat holding no chips behind (an all-in ante, or 0 chips with no
ante): no betting, straight to the showdown. ``showdown(round)`` is True for "call" and
"all-in". An action entry is::

    {"seat": s, "command": "RAISE 3", "action": "raise"|"call"|"fold",
     "put": chips moved from s's stack into the pot by this action,
     "returned": chips handed back from the pot to the opponent (a short all-in call),
     "total": s's bet after the action, "all_in": s has no chips behind afterwards}

An **action** (a move as parsed, before the rules judge it) is one of::

    {"action": "raise", "by": n}   RAISE n: your total becomes the opponent's total + n
    {"action": "raise", "to": n}   RAISE TO n: your total becomes n
    {"action": "call"}             CALL: match the opponent's total, or put in all you
                                   have when short (the excess is returned to them)
    {"action": "check"}            CHECK: accepted as CALL when there is nothing to call
    {"action": "fold"}             FOLD
    {"action": "all-in"}           ALL IN: as much as you may put in (see ``resolve``)

Functions:

``open_round(seats, stacks, ante, first, carried=0) -> round``
    Posts the antes (a seat holding the ante or less antes all it has; if a seat then has
    nothing behind, the others post only as much: the round ends "all-in").
``to_call(round, seat) -> int``, ``max_raise(round, seat) -> int``, ``pot(round) -> int``
    ``max_raise`` is the largest n of a legal RAISE n (0: no raise possible): at most what
    the opponent still has behind (a raise may not exceed what the opponent can call) and
    at most what ``seat`` has behind after calling.
``legal_actions(round, seat) -> dict | None``
    The choices of ``seat`` now, as plain data for views and forms (None when it is not
    ``seat``'s turn): ``{"to_call", "call_put" (what a CALL puts in), "call_all_in"
    (a CALL puts in all ``seat`` has), "call_total", "check" (nothing to call), "raise"
    (None or {"min", "max", "to_min", "to_max"}: RAISE min..max = RAISE TO to_min..to_max),
    "all_in" ({"action", "put", "total"} of ALL IN), "fold": True,
    "commands": [example command texts]}``.
``describe_legal(round, seat) -> str``
    One sentence stating those choices, for error messages ("Your choices now: ...").
``resolve(round, seat, action) -> dict``
    The entry the action would append (see above), or ``IllegalAction`` whose ``reason``
    says why and states the legal choices now. Not ``seat``'s turn, the round over, a
    raise of less than 1 or above the cap, CHECK facing a bet: all illegal. ALL IN is a
    raise to the most you may raise to, or a CALL when you cannot raise.
``act(round, seat, action) -> round``
    The round after the action (``resolve`` + bookkeeping); raises ``IllegalAction``.
``default_action(round) -> action``
    The timeout default for the seat to act: CALL with nothing to call, else FOLD.
``forfeit(round, seat) -> round``
    The round ended as a fold by ``seat``, whoever's turn it was (a forfeit of the match:
    the entry's command is ``FORFEIT`` and it has ``"forfeit": True``).
``showdown(round) -> bool``, ``is_over(round) -> bool``
``action_problem(action) -> str | None``
    Why a dict is not a well-formed action (None when it is).
``command_text(action) -> str``
    ``RAISE 3``, ``RAISE TO 8``, ``CALL``, ``CHECK``, ``FOLD``, ``ALL IN``.
``read_action(text, extra_commands=()) -> Reading``
    Reads one command from the cleaned text of a mail, in time linear in its length (see
    "Mail grammar" below). Returns ``Reading(action, line, extras, turn, ignored)``:
    ``action`` the betting action or None, ``line`` the line it was read from,
    ``extras`` the extra command words found (lower case, e.g. ``("rewind",)``: each
    alone on a line, each at most once), ``turn`` the normalised text of a ``Step:``
    line (or ``Turn:``, the forms' line before issue 20; see ``turn_reference``) or
    None, ``ignored`` the lines or parts of lines read but not used, in order. Raises
    ``NoMoves`` when the text holds no command at all and ``ParseError`` (quoting the
    line) for a mistake.
``turn_reference(text) -> str``
    The normalised form of a turn reference (``"Hand 3, action 2"`` -> ``"hand 3 action 2"``),
    so a game compares the ``Step:`` (or ``Turn:``) line of a mail with the one of its form.
``duel_type(turn_hours, dmo, step_titles) -> GameType``
    The game type of a heads-up betting duel (Indian Poker, Rewind Hold'em): sequential
    turns, the match's own chips, chance, the ``dmo`` option, ranked, a death match, and 5
    missed steps forfeit. ``check_forfeit(state, player)`` (:mod:`referee.games.base`'s)
    refuses a forfeit once the match is over or from anyone not playing it.

Mail grammar
------------

One command per mail, on a line of its own; case does not matter, bullets (``-``,
``*``, ``\u2022``) and emphasis marks (``*``, ``_``) around words are dropped
(``referee.games.lines.strip_emphasis``: ``**CALL**``, ``RAISE *3*``; a number written
with an underscore, ``RAISE 1_0``, is an error quoting it), lines quoted with ``>``
and lines longer than MAX_LINE_CHARS are not read (they are listed as ignored)::

    RAISE 3          RAISE BY 3       raise 3 chips    Raise: 3
    RAISE TO 8       raise to 8 chips
    CALL    CHECK    FOLD    ALL IN   all-in   allin

Text after a complete command is ignored and listed (``CALL, good luck``, ``RAISE 3
(bluffing?)``). A line that begins with CALL, CHECK, FOLD or ALL IN followed directly
by other words is prose (``Call me tomorrow``), ignored and listed; a line beginning
with RAISE must hold a readable raise (``RAISE five`` is an error). A command given an
amount it does not take (``CALL 3``) is an error. Two commands (even the same one twice)
are an error naming both. An optional ``Step: ...`` line names the turn the mail
answers (the games put it in their forms, so a reply to an old mail is recognised);
``Turn: ...``, the line of the duels' forms before issue 20, is read the same way. A mail
naming two different turns (by either word) is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.games.base import (
    MATCH_CHIPS,
    SEQUENTIAL,
    GameError,
    GameType,
    NoMoves,
    ParseError,
    clone,
    plural,
)
from referee.games.base import check_forfeit as check_forfeit  # a duel's forfeit is refused as any game's
from referee.games.lines import MAX_LINE_CHARS as MAX_LINE_CHARS  # ruling B8: a longer line is never a command
from referee.games.lines import mail_lines
from referee.games.lines import shown as _shown

Round = dict[str, Any]
Action = dict[str, Any]

ACTIONS = ("raise", "call", "check", "fold", "all-in")
# Ruling B9: no sane raise has more digits than this.
MAX_DIGITS = 6


class IllegalAction(GameError):
    """A well-formed action the betting rules do not allow now."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------- rounds


def _other(rnd: Round, seat: str) -> str:
    a, b = rnd["seats"]
    return str(b if seat == a else a)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def open_round(seats: Sequence[str], stacks: dict[str, int], ante: int, first: str, carried: int = 0) -> Round:
    """A new betting round with the antes posted.

    Indian Poker ruling "all-in ante": a seat whose ante takes all its chips (it holds the
    ante or less) antes all it has, the opponent matches only that amount, and the round
    goes straight to the showdown (end "all-in"). The same holds with no ante for a seat
    with 0 chips behind (ruling: 0 chips but chips in a carried pot is not out: straight
    to the showdown)."""
    seats = list(seats)
    if len(seats) != 2 or seats[0] == seats[1]:
        raise GameError("A betting round is between two different seats.")
    if first not in seats:
        raise GameError(f"{first} is not a seat of this betting round.")
    if not _is_int(ante) or ante < 0 or not _is_int(carried) or carried < 0:
        raise GameError("The ante and the carried pot must be whole numbers, not negative.")
    for s in seats:
        if not _is_int(stacks.get(s)) or stacks[s] < 0:
            raise GameError(f"The stack of {s} must be a whole number, not negative.")
    posted = {s: min(ante, stacks[s]) for s in seats}
    all_in = any(stacks[s] - posted[s] == 0 for s in seats)
    if all_in:
        matched = min(posted.values())
        posted = {s: matched for s in seats}
    return {
        "seats": seats,
        "stacks": {s: stacks[s] - posted[s] for s in seats},
        "bets": dict(posted),
        "ante": ante,
        "antes": dict(posted),
        "carried": carried,
        "first": first,
        "to_act": None if all_in else first,
        "actions": [],
        "end": "all-in" if all_in else None,
        "folder": None,
    }


def pot(rnd: Round) -> int:
    """Every chip in the pot: the carried pot and both bets of this round."""
    return int(rnd["carried"] + sum(rnd["bets"].values()))


def is_over(rnd: Round) -> bool:
    return rnd["end"] is not None


def showdown(rnd: Round) -> bool:
    """The round ended in a showdown: a call, or no betting at all (all-in)."""
    return rnd["end"] in ("call", "all-in")


def to_call(rnd: Round, seat: str) -> int:
    """Chips ``seat`` needs to put in to match the opponent (before any shortness)."""
    return int(max(rnd["bets"][_other(rnd, seat)] - rnd["bets"][seat], 0))


def max_raise(rnd: Round, seat: str) -> int:
    """The largest n of a legal RAISE n; 0 when ``seat`` cannot raise. Ruling: "A raise
    may not exceed what the opponent can still call": at most the opponent's chips
    behind; and ``seat`` must hold the call plus the raise."""
    other = _other(rnd, seat)
    return int(max(min(rnd["stacks"][other], rnd["stacks"][seat] - to_call(rnd, seat)), 0))


def legal_actions(rnd: Round, seat: str) -> dict[str, Any] | None:
    """The choices of ``seat`` now (None when it is not ``seat``'s turn)."""
    if rnd["end"] is not None or rnd["to_act"] != seat:
        return None
    other = _other(rnd, seat)
    owed = to_call(rnd, seat)
    short = rnd["stacks"][seat] <= owed and owed > 0
    call_put = min(owed, rnd["stacks"][seat])
    top = max_raise(rnd, seat)
    raise_ = None
    if top >= 1:
        opp = rnd["bets"][other]
        raise_ = {"min": 1, "max": top, "to_min": opp + 1, "to_max": opp + top}
    all_in = resolve(rnd, seat, {"action": "all-in"})
    commands = ["CALL" if owed else "CHECK"]
    if raise_ is not None:
        commands += [f"RAISE {raise_['min']}", f"RAISE TO {raise_['to_max']}"]
    commands += ["ALL IN", "FOLD"]
    return {
        "to_call": owed,
        "call_put": call_put,
        "call_all_in": short,
        "call_total": rnd["bets"][seat] + call_put,
        "check": owed == 0,
        "raise": raise_,
        "all_in": {"action": all_in["action"], "put": all_in["put"], "total": all_in["total"]},
        "fold": True,
        "commands": commands,
    }


def describe_legal(rnd: Round, seat: str) -> str:
    """The choices of ``seat`` now, in one sentence (for rejections and error mails)."""
    if rnd["end"] is not None:
        return "The betting of this hand is over."
    if rnd["to_act"] != seat:
        return f"It is {rnd['to_act']}'s turn, not yours."
    legal = legal_actions(rnd, seat)
    assert legal is not None
    parts = []
    if legal["check"]:
        parts.append("CALL or CHECK (nothing to call: the hand goes to the showdown)")
    elif legal["call_all_in"]:
        parts.append(f"CALL (all in: your last {plural(legal['call_put'], 'chip')}, the excess goes back)")
    else:
        parts.append(f"CALL ({plural(legal['call_put'], 'chip')}, making {legal['call_total']} each)")
    r = legal["raise"]
    if r is not None:
        if r["max"] == 1:
            parts.append(f"RAISE 1 (= RAISE TO {r['to_min']})")
        else:
            parts.append(f"RAISE 1 to RAISE {r['max']} (= RAISE TO {r['to_min']} to RAISE TO {r['to_max']})")
        parts.append(f"ALL IN (= RAISE TO {legal['all_in']['total']})")
    else:
        parts.append("ALL IN (= CALL: you cannot raise)")
    parts.append("FOLD")
    return "Your choices now: " + ", ".join(parts[:-1]) + " or " + parts[-1] + "."


def action_problem(action: Any) -> str | None:
    """Why ``action`` is not a well-formed action (None when it is)."""
    if not isinstance(action, dict) or action.get("action") not in ACTIONS:
        return "A betting action is RAISE n, RAISE TO n, CALL, CHECK, FOLD or ALL IN."
    if action["action"] == "raise":
        amounts = [k for k in ("by", "to") if k in action]
        if len(amounts) != 1 or not _is_int(action[amounts[0]]):
            return "A raise needs one whole number: RAISE n or RAISE TO n."
    return None


def command_text(action: Action) -> str:
    """The mail command of an action: ``RAISE 3``, ``RAISE TO 8``, ``CALL`` ..."""
    kind = action["action"]
    if kind == "raise":
        return f"RAISE TO {action['to']}" if "to" in action else f"RAISE {action['by']}"
    return "ALL IN" if kind == "all-in" else str(kind).upper()


def resolve(rnd: Round, seat: str, action: Action) -> dict[str, Any]:
    """The action entry ``action`` by ``seat`` would append; IllegalAction if not allowed."""
    problem = action_problem(action)
    if problem is not None:
        raise IllegalAction(problem)
    if rnd["end"] is not None:
        raise IllegalAction("The betting of this hand is over.")
    if rnd["to_act"] != seat:
        raise IllegalAction(f"It is {rnd['to_act']}'s turn, not {seat}'s.")
    other = _other(rnd, seat)
    mine, theirs, behind = rnd["bets"][seat], rnd["bets"][other], rnd["stacks"][seat]
    owed = to_call(rnd, seat)
    top = max_raise(rnd, seat)
    kind = action["action"]
    command = command_text(action)

    def entry(act: str, put: int, returned: int = 0) -> dict[str, Any]:
        return {
            "seat": seat,
            "command": command,
            "action": act,
            "put": put,
            "returned": returned,
            "total": mine + put,
            "all_in": behind - put == 0,
        }

    def illegal(why: str) -> IllegalAction:
        return IllegalAction(f"{why} {describe_legal(rnd, seat)}")

    if kind == "all-in":
        # Ruling B4: ALL IN puts in as much as you may: a raise to the cap, else a call.
        kind, action = ("raise", {"action": "raise", "by": top}) if top >= 1 else ("call", {"action": "call"})
    if kind == "check":
        if owed > 0:
            raise illegal(f"You cannot CHECK: there {'is' if owed == 1 else 'are'} {plural(owed, 'chip')} to call.")
        kind = "call"  # ruling: CHECK is accepted as CALL when there is nothing to call
    if kind == "fold":
        return entry("fold", 0)
    if kind == "call":
        put = min(owed, behind)
        # a short call: all in; the opponent's excess goes back to them
        return entry("call", put, returned=theirs - (mine + put))
    by = action["by"] if "by" in action else action["to"] - theirs
    if top < 1:
        why = "You cannot raise:"
        if rnd["stacks"][other] == 0:
            why += " your opponent has no chips left to call a raise."
        else:
            why += " you do not hold more than the call."
        raise illegal(why)
    if by < 1:
        if "to" in action:
            raise illegal(f"RAISE TO {action['to']} is not a raise: it must be more than your opponent's {theirs}.")
        raise illegal(f"A raise is at least 1 chip; you wrote {command}.")
    if by > top:
        cap = (
            f"your opponent can only call up to {theirs + rnd['stacks'][other]}"
            if top == rnd["stacks"][other]
            else f"you hold only {plural(behind, 'chip')}" + (f", {owed} of them to call" if owed else "")
        )
        raise illegal(f"{command} is too much: {cap}.")
    return entry("raise", owed + by)


def act(rnd: Round, seat: str, action: Action) -> Round:
    """The round after ``seat``'s ``action`` (see ``resolve``)."""
    done = resolve(rnd, seat, action)
    new: Round = clone(rnd)
    other = _other(new, seat)
    new["stacks"][seat] -= done["put"]
    new["bets"][seat] += done["put"]
    new["stacks"][other] += done["returned"]
    new["bets"][other] -= done["returned"]
    new["actions"].append(done)
    if done["action"] == "raise":
        new["to_act"] = other
    else:
        new["to_act"] = None
        new["end"] = done["action"]
        new["folder"] = seat if done["action"] == "fold" else None
    return new


def forfeit(rnd: Round, seat: str) -> Round:
    """The round after ``seat`` forfeits the match, whoever's turn it was: it ends as a fold
    by ``seat`` (end "fold", the pot to the opponent), with the entry ``{"seat", "command":
    "FORFEIT", "action": "fold", "put": 0, "returned": 0, "total", "all_in", "forfeit":
    True}`` (a game settles it without the penalties of a fold: the forfeit is no FOLD of
    the game). GameError once the round is over or for a seat not in it."""
    if seat not in rnd["seats"]:
        raise GameError(f"{seat} is not a seat of this betting round.")
    if rnd["end"] is not None:
        raise GameError("The betting of this hand is over.")
    new: Round = clone(rnd)
    new["actions"].append(
        {
            "seat": seat,
            "command": "FORFEIT",
            "action": "fold",
            "put": 0,
            "returned": 0,
            "total": new["bets"][seat],
            "all_in": new["stacks"][seat] == 0,
            "forfeit": True,
        }
    )
    new["to_act"] = None
    new["end"] = "fold"
    new["folder"] = seat
    return new


def default_action(rnd: Round) -> Action:
    """The timeout default (ruling "Timeout"): with nothing to call, CALL (on equal bets
    that is the showdown); facing a raise, FOLD."""
    seat = rnd["to_act"]
    if seat is None:
        raise GameError("The betting of this hand is over; nobody is to act.")
    return {"action": "call"} if to_call(rnd, seat) == 0 else {"action": "fold"}


# --------------------------------------------------------------------------- the duels


def duel_type(turn_hours: float, dmo: str, step_titles: tuple[tuple[str, str], ...] = ()) -> GameType:
    """The :class:`GameType` of a heads-up betting duel (Indian Poker, Rewind Hold'em): one
    player acts per step, a turn lasting ``turn_hours`` by default; the chips are the match's
    own stacks (never the season's); the deal is chance; the match option ``dmo`` (``dmo``
    says what it does in the game) names the player chosen for the death match; the result
    ranks both players."""
    return GameType(
        dynamics=SEQUENTIAL,
        roles=("player", "player"),
        currencies=(MATCH_CHIPS,),
        step_kinds={"turn": turn_hours},
        options={"dmo": dmo},
        chance=True,
        ranked=True,
        death_match=True,  # the first seat is the EC's, the second the DMO's (RULINGS, "Seasons")
        abandon_after=5,  # RULINGS, "Seasons": a timeout costs little, so 5 missed steps forfeit
        accounts={"pot": "the pot"},  # both duels' POT
        step_titles=step_titles,
    )


# --------------------------------------------------------------------------- mail text
#
# One pass over the lines; each line is split once into words (str.split) and only its
# first few words are looked at, so reading costs time linear in the length of the text.

_TRAIL = ".,;:!?"
# all_in: the underscore is not emphasis inside a word (see strip_emphasis), but ALL_IN means ALL IN
_SIMPLE = {"call": "call", "check": "check", "fold": "fold", "all-in": "all-in", "allin": "all-in", "all_in": "all-in"}
_UNITS = frozenset({"chip", "chips"})
# The line naming the turn a mail answers: "Step: <title>" in every game's form since issue
# 20 (one convention for the five games); "Turn: <title>", the duels' forms before it, is
# still read, so a reply to an older mail is recognised.
_REFERENCE_WORDS = frozenset({"step", "turn"})
_DASHES = frozenset({"-", "\u2013", "\u2014"})


@dataclass(frozen=True)
class Reading:
    """What ``read_action`` found in a mail."""

    action: Action | None  # the betting command, None when the mail holds only extras
    line: str | None  # the line the command was read from
    extras: tuple[str, ...] = ()  # extra command words found (lower case), in order
    turn: str | None = None  # the normalised text of a "Step:" (or old "Turn:") line
    ignored: list[str] = field(default_factory=list)  # read, but part of no command, in order


def turn_reference(text: str) -> str:
    """``"Hand 3, action 2"`` -> ``"hand 3 action 2"``: lower case, runs of anything but
    letters and digits become one space."""
    out: list[str] = []
    gap = False
    for c in text.lower():
        if c.isalnum():
            if gap and out:
                out.append(" ")
            out.append(c)
            gap = False
        else:
            gap = True
    return "".join(out)


def normal_name(text: str) -> str:
    """A name as mail matches it: accents dropped, case folded, anything but letters and
    digits one space (``"José  Núñez"`` and ``"jose nunez"`` are the same)."""
    import unicodedata  # here: only the games that read names in mail need it

    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return turn_reference(plain.casefold())  # the duels' reading of a Turn line, on the plain text


def _numberish(word: str) -> bool:
    digit = 1 if word[:1] in "+-" else 0
    return len(word) > digit and word[digit].isdecimal()


def _amount(word: str, line: str) -> tuple[int, str]:
    """A whole number of chips at the start of ``word`` (``3``, ``+3``, ``3.``, ``3,``) and
    what follows it in the word (``chips`` glued on is dropped)."""
    sign = 1 if word[:1] in "+-" else 0
    end = sign
    while end < len(word) and end - sign <= MAX_DIGITS and word[end].isdecimal():
        end += 1
    if end == sign:
        raise ParseError(f"I could not read {_shown(word)!r} as a whole number of chips", line)
    if end - sign > MAX_DIGITS:
        raise ParseError(f"{_shown(word)!r} has more than {MAX_DIGITS} digits; no raise is that large", line)
    rest = word[end:]
    if any(c.isdigit() for c in rest):  # 3.5, 3/4
        raise ParseError(f"I could not read {_shown(word)!r} as a whole number of chips", line)
    unit = rest.lower().rstrip(_TRAIL)
    if unit in _UNITS:
        rest = rest[len(unit) :]
    if rest and rest[0] not in _TRAIL + ")":
        raise ParseError(f"I could not read {_shown(word)!r} as a whole number of chips", line)
    try:  # word[:end] holds only a sign and decimal digits: never an underscore, which int() would skip
        value = int(word[:end])
    except ValueError:  # a decimal digit int() does not take
        raise ParseError(f"I could not read {_shown(word)!r} as a whole number of chips", line) from None
    return value, rest


def _rest_text(words: list[str], glued: str = "") -> str:
    """What follows a command, to be listed as ignored ('' when it holds nothing)."""
    text = " ".join(([glued] if glued else []) + words).strip()
    text = text.lstrip(_TRAIL + "".join(_DASHES)).strip()
    return text if any(c.isalnum() for c in text) else ""


def _read_simple(kind: str, words: list[str], ended: bool, line: str) -> tuple[Action | None, str]:
    """CALL / CHECK / FOLD / ALL IN followed by ``words``: (action, ignored rest), or
    (None, '') when the line is prose (the command word followed directly by a word)."""
    if not words:
        return {"action": kind}, ""
    first = words[0]
    if ended:
        return {"action": kind}, _rest_text(words)
    if _numberish(first):
        name = command_text({"action": kind})
        raise ParseError(f"{name} takes no amount; write just {name} (or RAISE n / RAISE TO n to raise)", line)
    if first in _DASHES or first[:1] in "([\u2013\u2014":
        return {"action": kind}, _rest_text(words)
    return None, ""


def _read_raise(words: list[str], line: str) -> tuple[Action, str]:
    """RAISE [BY|TO] n [chips] [anything without digits]."""
    if not words:
        raise ParseError("RAISE needs an amount: RAISE n (n chips more than your opponent) or RAISE TO n", line)
    key = "by"
    head = words[0].lower().rstrip(_TRAIL)
    if head in ("to", "by") and not _numberish(words[0]):
        key = head
        words = words[1:]
        if not words:
            raise ParseError(f"RAISE {key.upper()} needs an amount, like RAISE {key.upper()} 3", line)
    if not _numberish(words[0]):
        raise ParseError(
            f"I could not read {_shown(words[0])!r} as a whole number of chips; write RAISE n or RAISE TO n", line
        )
    value, glued = _amount(words[0], line)
    rest = words[1:]
    if rest and rest[0].lower().rstrip(_TRAIL) in _UNITS and not glued:
        glued, rest = rest[0][len(rest[0].rstrip(_TRAIL)) :], rest[1:]
    text = _rest_text(rest, glued)
    if any(c.isdigit() for c in text):
        raise ParseError("A RAISE has one amount; I found more numbers on its line", line)
    return {"action": "raise", key: value}, text


def read_action(text: str, extra_commands: Iterable[str] = ()) -> Reading:
    """Read one betting command (and any extra command words) from a mail; see the module
    docstring, "Mail grammar"."""
    extras_known = frozenset(word.lower() for word in extra_commands)
    ignored: list[str] = []
    found: tuple[Action, str] | None = None
    extras: list[tuple[str, str]] = []
    turn: tuple[str, str] | None = None
    for written, line, words in mail_lines(text, ignored):
        low = words[0].lower()
        head = low.rstrip(_TRAIL)
        ended = head != low
        action: Action | None = None
        rest = ""
        n = 1
        if head == "all" and not ended and len(words) > 1 and words[1].lower().rstrip(_TRAIL) == "in":
            head, n = "all-in", 2
            ended = words[1].rstrip(_TRAIL) != words[1]
        if head in _REFERENCE_WORDS and (low == head + ":" or (len(words) > 1 and words[1].startswith(":"))):
            ref = turn_reference(line[len(words[0]) :])
            if turn is not None and turn[0] != ref:
                raise ParseError(f"Your mail names two turns, {turn[1]!r} and {line!r}; keep only one", line)
            turn = (ref, line)
            continue
        if head in extras_known and len(words) == n:
            if any(word == head for word, _ in extras):
                raise ParseError(f"{head.upper()} appears twice in your mail; write it once", line)
            extras.append((head, line))
            continue
        if head == "raise":
            action, rest = _read_raise(words[1:], line)
        elif head in _SIMPLE:
            action, rest = _read_simple(_SIMPLE[head], words[n:], ended, line)
        if action is None:
            ignored.append(written)
            continue
        if found is not None:
            raise ParseError(
                f"Your mail has two commands, {found[1]!r} and {line!r}; send only one command per mail", line
            )
        found = (action, line)
        if rest:
            ignored.append(rest)
    if found is None and not extras:
        raise NoMoves("I found no command (RAISE n, RAISE TO n, CALL, CHECK, FOLD or ALL IN) in your mail", None)
    return Reading(
        action=None if found is None else found[0],
        line=None if found is None else found[1],
        extras=tuple(word for word, _ in extras),
        turn=None if turn is None else turn[0],
        ignored=ignored,
    )
