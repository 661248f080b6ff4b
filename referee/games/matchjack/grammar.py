"""MatchJack's mail grammar: what a player's mail says, read line by line in time linear
in its length, and the commands written back (forms, receipts).

One play command per mail (the one for the player's open step) and at most one
``GUESS <bot> <rule id>`` line, in any order, and an optional ``Step: <title>`` line
(the forms carry it, so a reply to an old mail is recognised). Case does not matter;
bullets (``-``, ``*``, ``\u2022``) and emphasis marks (``*``, ``_``) around words are dropped
(``referee.games.lines.strip_emphasis``), an ``_`` between two letters separates words
(``FOLD_STAYSET``), and a number written with an underscore (``BET 1_0``) is an error
quoting it; lines
quoted with ``>`` and lines longer than 300 characters are never read; every other line
that is not a command is listed as ignored::

    STAY                     stay in the hand (the second ante)
    FOLD                     at the stay step: fold (you move to the other set);
                             in a betting round: fold
    FOLD STAYSET             fold and pay 5 garnets to keep your set (also STAYSET,
                             FOLD STAY SET)
    CHECK    CALL    ALL IN (all-in, allin)
    BET n                    open the betting with n chips (BET 3 chips)
    RAISE n                  raise by n over the current bet (RAISE BY n)
    RAISE TO n               your bet in the round becomes n
    HIT                      (also HIT ME)
    SWAP UP    SWAP DOWN     (also SWAP FACE UP, SWAP FACE-DOWN, SWAP UP CARD)
    DRAW n                   replace your card at position n (DRAW 2, DRAW CARD 2, DRAW #2)
    NEW                      (also NEW CARD)
    GUESS <bot> <rule id>    GUESS Alpha odd-hitter (also GUESS alpha Odd Hitter)

Text after a complete command is ignored and listed (``STAY, good luck``, ``HIT me
please``). A line that begins with STAY, FOLD, CHECK, CALL, ALL IN, HIT, NEW or BET
followed directly by other words is prose (``Call me tomorrow``, ``New idea``), ignored
and listed. A line beginning with RAISE, SWAP, DRAW or GUESS must hold a readable command
(``DRAW a card`` is an error). Two play commands, or two guesses, are an error naming both.
Any other line is no command (ignored and listed; ``NOMINATE Bob`` too: the nomination of
the DMO is the season's, not the match's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from referee.games.base import Move, NoMoves, Parsed, ParseError
from referee.games.betting import (
    _DASHES,
    _TRAIL,
    _amount,
    _numberish,
    _read_raise,
    _rest_text,
    _shown,
    turn_reference,
)
from referee.games.lines import clean_line, mail_lines
from referee.games.matchjack import table

PLAY_KEYS = ("stay", "bet", "action")
_OPENERS = "([\u2013\u2014"


def reference(title: str) -> str:
    """A step's title as a ``Step:`` line is compared: ``"Hand 3, stay or fold"`` ->
    ``"hand 3 stay or fold"``."""
    return turn_reference(title)


def _alnum(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


# --------------------------------------------------------------------------- writing moves


def command_text(move: Move) -> str:
    """A move as a mail command: ``STAY``, ``FOLD STAYSET``, ``RAISE TO 6``, ``SWAP UP``,
    ``DRAW 2``, ``GUESS Alpha odd-hitter``."""
    if "stay" in move:
        return {"stay": "STAY", "fold": "FOLD", "stayset": "FOLD STAYSET"}[move["stay"]]
    if "bet" in move:
        return table.command_text(move)
    if "action" in move:
        kind = move["action"]
        if kind == "swap":
            return f"SWAP {str(move['card']).upper()}"
        if kind == "draw":
            return f"DRAW {move['position']}"
        return str(kind).upper()
    if "guess" in move:
        return f"GUESS {move['guess']['bot']} {move['guess']['rule']}"
    raise ValueError(f"not a MatchJack move: {move!r}")


# --------------------------------------------------------------------------- reading


# an underscore between two letters separates words, as it always did here (FOLD_STAYSET,
# HIT_ME); one next to a digit stays, so 1_0 is an error and never 10
_JOINED_WORDS = re.compile(r"(?<=[^\W\d_])_+(?=[^\W\d_])")


def _clean(written: str) -> str:
    return _JOINED_WORDS.sub(" ", clean_line(written)).strip()


def _word(word: str) -> str:
    return word.lower().rstrip(_TRAIL)


def _simple(words: list[str], n: int, ended: bool, name: str, line: str) -> tuple[bool, str]:
    """A command of ``n`` words taking nothing after it: (read?, ignored rest). Followed
    directly by a word it is prose (not read); by a number, an error."""
    rest = words[n:]
    if not rest or ended:
        return True, _rest_text(rest)
    first = rest[0]
    if first in _DASHES or first[:1] in _OPENERS:
        return True, _rest_text(rest)
    if _numberish(first):
        raise ParseError(f"{name} takes no number; write just {name}", line)
    return False, ""


def _read_bet(words: list[str], line: str) -> tuple[Move | None, str]:
    """BET n [chips] [anything without digits]; BET followed by a word is prose."""
    if len(words) == 1:
        raise ParseError("BET needs an amount: BET n (n chips)", line)
    if not _numberish(words[1]):
        return None, ""
    amount, glued = _amount(words[1], line)
    rest = words[2:]
    if rest and _word(rest[0]) in ("chip", "chips") and not glued:
        glued, rest = rest[0][len(rest[0].rstrip(_TRAIL)) :], rest[1:]
    text = _rest_text(rest, glued)
    if any(c.isdigit() for c in text):
        raise ParseError("A BET has one amount; I found more numbers on its line", line)
    return {"bet": "bet", "amount": amount}, text


_SWAP_FILLERS = frozenset({"my", "the", "your"})
_SIDES = {"up": "up", "faceup": "up", "down": "down", "facedown": "down"}


def _read_swap(words: list[str], line: str) -> tuple[Move, str]:
    """SWAP UP | DOWN (also SWAP FACE UP, SWAP FACE-DOWN, SWAP MY UP CARD)."""
    rest = words[1:]
    i = 0
    while i < len(rest) and _alnum(rest[i]) in _SWAP_FILLERS:
        i += 1
    token = _alnum(rest[i]) if i < len(rest) else ""
    if token == "face" and i + 1 < len(rest):
        i += 1
        token += _alnum(rest[i])
    side = _SIDES.get(token)
    if side is None:
        raise ParseError("SWAP needs UP (your face-up card) or DOWN (your face-down card): SWAP UP or SWAP DOWN", line)
    tail = rest[i + 1 :]
    if tail and _alnum(tail[0]) == "card":
        tail = tail[1:]
    return {"action": "swap", "card": side}, _rest_text(tail)


_DRAW_FILLERS = frozenset({"card", "position", "pos", "no", "number", "at", "my", "the"})


def _read_draw(words: list[str], line: str) -> tuple[Move, str]:
    rest = words[1:]
    i = 0
    while i < len(rest) and _alnum(rest[i]) in _DRAW_FILLERS:
        i += 1
    if i < len(rest) and rest[i] == "#":
        i += 1
    word = rest[i].lstrip("#") if i < len(rest) else ""
    if not word or not _numberish(word):
        raise ParseError("DRAW needs the position of the card to replace: DRAW 1 or DRAW 2", line)
    position, glued = _amount(word, line)
    text = _rest_text(rest[i + 1 :], glued)
    if any(c.isdigit() for c in text):
        raise ParseError("DRAW takes one position; I found more numbers on its line", line)
    return {"action": "draw", "position": position}, text


_GUESS_FILLERS = frozenset({"is", "rule", "has", "uses", "follows", "plays", "as", ""})


def _read_guess(words: list[str], line: str, bots: Sequence[str], rules: Sequence[str]) -> tuple[Move, str]:
    by_bot = {b.lower(): b for b in bots}
    listed_bots = ", ".join(bots)
    if len(words) < 2:
        raise ParseError(f"GUESS needs a bot and a rule id, as in GUESS {bots[0]} {rules[0]}", line)
    bot = by_bot.get(_alnum(words[1]))
    if bot is None:
        raise ParseError(f"{_shown(words[1])!r} is not an automated player; they are {listed_bots}", line)
    rest = words[2:]
    while rest and _alnum(rest[0]) in _GUESS_FILLERS:
        rest = rest[1:]
    by_rule = {_alnum(r): r for r in rules}
    found: tuple[str, int] | None = None
    text = ""
    for n in range(1, min(len(rest), 4) + 1):
        joined = "".join(_alnum(w) for w in rest[:n])
        if joined in by_rule:
            found = (by_rule[joined], n)
    if found is None:
        shown = " ".join(rest[:3]) if rest else "nothing"
        raise ParseError(f"{_shown(shown)!r} is not a rule id; the rule ids are {', '.join(rules)}", line)
    text = _rest_text(rest[found[1] :])
    return {"guess": {"bot": bot, "rule": found[0]}}, text


def read_mail(
    text: str,
    *,
    fold_means: str,
    bots: Sequence[str],
    rules: Sequence[str],
) -> Parsed:
    """Read a mail (see the module docstring). ``fold_means`` is ``"stay"`` while the stay
    step is open (FOLD is then a stay choice), else ``"bet"``; ``bots`` and ``rules`` are the
    bot names and rule ids a GUESS may name."""
    ignored: list[str] = []
    play: tuple[Move, str, int] | None = None
    guess: tuple[Move, str, int] | None = None
    ref: tuple[str, str] | None = None
    index = 0
    for written, line, words in mail_lines(text, ignored, clean=_clean):
        low = words[0].lower()
        head = low.rstrip(_TRAIL)
        ended = head != low
        n = 1
        if head == "step" and (low == "step:" or (len(words) > 1 and words[1].startswith(":"))):
            found_ref = reference(line.split(":", 1)[1])
            if ref is not None and ref[0] != found_ref:
                raise ParseError(f"Your mail names two steps, {ref[1]!r} and {line!r}; keep only one", line)
            ref = (found_ref, line)
            continue
        if head == "all" and not ended and len(words) > 1 and _word(words[1]) == "in":
            head, n = "all-in", 2
            ended = words[1].rstrip(_TRAIL) != words[1]
        move: Move | None = None
        rest = ""
        if head == "stay":
            ok, rest = _simple(words, n, ended, "STAY", line)
            move = {"stay": "stay"} if ok else None
        elif head in ("stayset", "stay-set"):
            ok, rest = _simple(words, n, ended, "FOLD STAYSET", line)
            move = {"stay": "stayset"} if ok else None
        elif head == "fold":
            nxt = [_alnum(w) for w in words[1:3]]
            if not ended and nxt[:1] == ["stayset"]:
                n = 2
            elif not ended and nxt == ["stay", "set"]:
                n = 3
            if n > 1:
                last = words[n - 1]
                ok, rest = _simple(words, n, last.rstrip(_TRAIL) != last, "FOLD STAYSET", line)
                move = {"stay": "stayset"} if ok else None
            else:
                ok, rest = _simple(words, n, ended, "FOLD", line)
                move = ({"stay": "fold"} if fold_means == "stay" else {"bet": "fold"}) if ok else None
        elif head in ("check", "call", "all-in", "allin"):
            kind = "all-in" if head in ("all-in", "allin") else head
            ok, rest = _simple(words, n, ended, table.command_text({"bet": kind}), line)
            move = {"bet": kind} if ok else None
        elif head == "bet":
            move, rest = _read_bet(words, line)
        elif head == "raise":
            action, rest = _read_raise(words[1:], line)
            move = {"bet": "raise-to", "to": action["to"]} if "to" in action else {"bet": "raise", "by": action["by"]}
        elif head == "hit":
            if not ended and len(words) > 1 and _word(words[1]) == "me":
                n = 2
                ended = words[1].rstrip(_TRAIL) != words[1]
            ok, rest = _simple(words, n, ended, "HIT", line)
            move = {"action": "hit"} if ok else None
        elif head == "new":
            if not ended and len(words) > 1 and _word(words[1]) == "card":
                n = 2
                ended = words[1].rstrip(_TRAIL) != words[1]
            ok, rest = _simple(words, n, ended, "NEW", line)
            move = {"action": "new"} if ok else None
        elif head == "swap":
            move, rest = _read_swap(words, line)
        elif head == "draw":
            move, rest = _read_draw(words, line)
        elif head == "guess":
            if guess is not None:
                raise ParseError(
                    f"Your mail has two guesses, {guess[1]!r} and {line!r}; one guess per hand, so send one", line
                )
            move, rest = _read_guess(words, line, bots, rules)
            guess = (move, line, index)
            index += 1
            if rest:
                ignored.append(rest)
            continue
        if move is None:
            ignored.append(written)
            continue
        if play is not None:
            raise ParseError(
                f"Your mail has two commands, {play[1]!r} and {line!r}; send only one command per mail", line
            )
        play = (move, line, index)
        index += 1
        if rest:
            ignored.append(rest)
    if play is None and guess is None:
        raise NoMoves(
            "I found no command (STAY, FOLD, CHECK, CALL, BET, RAISE, ALL IN, HIT, SWAP, DRAW, NEW or GUESS) "
            "in your mail",
            None,
        )
    found: list[tuple[int, Move]] = []
    if play is not None:
        move = dict(play[0])
        if ref is not None:
            move["step"] = ref[0]
        found.append((play[2], move))
    if guess is not None:
        found.append((guess[2], guess[0]))
    return Parsed([m for _, m in sorted(found, key=lambda pair: pair[0])], ignored)


def describe_parsed(moves: Sequence[Move]) -> list[str]:
    """The commands of parsed moves, for receipts."""
    return [command_text({k: v for k, v in m.items() if k != "step"}) for m in moves]


def play_kind(move: Any) -> str | None:
    """Which play command a move is (``"stay"``, ``"bet"``, ``"action"``),
    ``"guess"`` for a guess, None when it is none or several."""
    if not isinstance(move, dict):
        return None
    kinds = [k for k in (*PLAY_KEYS, "guess") if k in move]
    return kinds[0] if len(kinds) == 1 else None
