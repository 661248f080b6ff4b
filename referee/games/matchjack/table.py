"""MatchJack's betting rounds: standard no-limit betting among several seats, as pure
functions over plain data (the duels' :mod:`referee.games.betting` is a two-seat round).

Nothing here moves chips between accounts or knows about cards: the engine keeps the
stacks, the pots and the transfers, and reads after each action what it put in (the
``put`` of the last entry of ``round["actions"]``). No function mutates its arguments;
every function returning a round returns a new one. The automated players never bet, so
a round is among the humans still in the hand.

A **round** is a JSON-serialisable dict::

    number    1 or 2 (before and after the action phase)
    order     [player, ...] the humans in the hand when the round opened, in action order
              (seat order from the hand's starting seat, round the table); the all-in
              ones too (they take no turn)
    bets      {player: chips put in during this round}
    current   the highest bet of the round (0: nothing to call yet)
    acted     [player, ...] who has acted since the last bet or raise
    folded    [player, ...] who folded in this round
    all_in    [player, ...] who has no chips behind (from earlier, or in this round)
    to_act    the player to act, None once the round is over
    turn      the number of the next action (1, 2, ...): the step keys count on it
    actions   [entry, ...] what was done, in order
    end       None while open; "skipped" (fewer than two humans could bet: no betting),
              "matched" (everyone still able to bet has acted and matched the bet) or
              "one-left" (every other human folded)

An **action** is the move as parsed (the ``"bet"`` key of a MatchJack move)::

    {"bet": "check"}    {"bet": "call"}    {"bet": "fold"}    {"bet": "all-in"}
    {"bet": "bet", "amount": n}      BET n: open the betting with n chips
    {"bet": "raise", "by": n}        RAISE n: your bet becomes the current bet + n
    {"bet": "raise-to", "to": n}     RAISE TO n: your bet in this round becomes n

An **entry**: ``{"player", "command" (as written back: "RAISE TO 6"), "action" ("check",
"call", "bet", "raise" or "fold"), "put" (chips moved from the stack into the pot),
"total" (the player's bet in the round after it), "all_in" (no chips behind after it),
"timeout"}``.

Rulings (numbered as in ``docs/games/matchjack.md``):

* the minimum bet and the minimum raise are 1 chip, and every raise re-opens the betting
  for everyone still able to bet (ruling 8);
* a bet or raise may not take your bet in the round above the most another human still
  in the hand could put in (their bet in the round plus their chips behind): chips nobody
  could call are never asked (ruling 8);
* ``ALL IN`` is the biggest bet or raise you may make, else a call (a check with nothing
  to call); CALL with nothing to call is a check; BET facing a bet is refused (say CALL,
  RAISE n or RAISE TO n); RAISE with nothing to call opens like BET (ruling 8);
* the round ends when every human still in and not all-in has acted since the last bet or
  raise and matched it, or when one human is left (the automated players stay in the
  hand: it goes on to the action phase and the showdown) (ruling 9);
* a round with fewer than two humans able to bet is skipped (rule text: "betting is not
  needed and will be skipped");
* the deadline's default is a check when checking is free, else a fold (RULINGS);
* a player who forfeits the match leaves the round as after a fold, their turn or not
  (``forfeit``; ruling 21).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.base import GameError, clone, plural

Round = dict[str, Any]
Action = dict[str, Any]

KINDS = ("check", "call", "fold", "all-in", "bet", "raise", "raise-to")
MAX_AMOUNT = 999_999


class IllegalBet(GameError):
    """A well-formed betting action the rules do not allow now."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --------------------------------------------------------------------------- opening


def open_round(number: int, order: Sequence[str], stacks: Mapping[str, int], all_in: Sequence[str]) -> Round:
    """A new round among ``order`` (the humans still in, in action order). With fewer than
    two of them able to bet (not all in), the round is ``"skipped"`` at once."""
    out = set(all_in)
    rnd: Round = {
        "number": number,
        "order": list(order),
        "bets": {p: 0 for p in order},
        "current": 0,
        "acted": [],
        "folded": [],
        "all_in": [p for p in order if p in out or stacks[p] <= 0],
        "to_act": None,
        "turn": 1,
        "actions": [],
        "end": None,
    }
    able = _able(rnd)
    if len(able) < 2:
        rnd["end"] = "skipped"
    else:
        rnd["to_act"] = able[0]
    return rnd


def _remaining(rnd: Round) -> list[str]:
    return [p for p in rnd["order"] if p not in rnd["folded"]]


def _able(rnd: Round) -> list[str]:
    """The humans still in who may still bet (not folded, not all in), in action order."""
    return [p for p in _remaining(rnd) if p not in rnd["all_in"]]


def is_over(rnd: Round) -> bool:
    return rnd["end"] is not None


def to_call(rnd: Round, player: str) -> int:
    return int(max(rnd["current"] - rnd["bets"][player], 0))


def most_total(rnd: Round, stacks: Mapping[str, int], player: str) -> int:
    """The most ``player``'s bet in this round may become (ruling 8): what they hold, and
    no more than another human still in and able to bet could put in. Never below the
    current bet when they can match it (a raise needs more than that)."""
    own = rnd["bets"][player] + stacks[player]
    others = [rnd["bets"][q] + stacks[q] for q in _able(rnd) if q != player]
    cap = max(others) if others else 0
    return int(min(own, cap))


def can_raise(rnd: Round, stacks: Mapping[str, int], player: str) -> bool:
    return most_total(rnd, stacks, player) > rnd["current"]


# --------------------------------------------------------------------------- choices


def legal_actions(rnd: Round, stacks: Mapping[str, int], player: str) -> dict[str, Any] | None:
    """The choices of ``player`` now, as plain data for views and forms (None when it is
    not their turn)."""
    if rnd["end"] is not None or rnd["to_act"] != player:
        return None
    owed = to_call(rnd, player)
    behind = stacks[player]
    call_put = min(owed, behind)
    top = most_total(rnd, stacks, player)
    current = rnd["current"]
    mine = rnd["bets"][player]
    bet = raise_ = None
    if top > current:
        if current == 0:
            bet = {"min": 1, "max": top - mine}
        else:
            raise_ = {"min": 1, "max": top - current, "to_min": current + 1, "to_max": top}
    all_in = resolve(rnd, stacks, player, {"bet": "all-in"})
    commands = ["CHECK" if owed == 0 else "CALL"]
    if bet is not None:
        commands += [f"BET {bet['min']}", f"BET {bet['max']}"]
    if raise_ is not None:
        commands += [f"RAISE {raise_['min']}", f"RAISE TO {raise_['to_max']}"]
    commands += ["ALL IN", "FOLD"]
    return {
        "to_call": owed,
        "check": owed == 0,
        "call_put": call_put,
        "call_all_in": owed > 0 and behind <= owed,
        "call_total": mine + call_put,
        "current": current,
        "bet": bet,
        "raise": raise_,
        "all_in": {"action": all_in["action"], "put": all_in["put"], "total": all_in["total"]},
        "fold": True,
        "commands": commands,
    }


def describe_legal(rnd: Round, stacks: Mapping[str, int], player: str) -> str:
    """The choices of ``player`` now, in one sentence (for rejections and mails)."""
    if rnd["end"] is not None:
        return "This betting round is over."
    if rnd["to_act"] != player:
        return f"It is {rnd['to_act']}'s turn to bet, not yours."
    legal = legal_actions(rnd, stacks, player)
    assert legal is not None
    parts = []
    if legal["check"]:
        parts.append("CHECK (nothing to call)")
    elif legal["call_all_in"]:
        parts.append(f"CALL (all in: your last {plural(legal['call_put'], 'chip')})")
    else:
        parts.append(f"CALL ({plural(legal['call_put'], 'chip')}, making your bet {legal['call_total']})")
    b, r = legal["bet"], legal["raise"]
    if b is not None:
        parts.append(f"BET {b['min']}" if b["max"] == b["min"] else f"BET {b['min']} to BET {b['max']}")
    if r is not None:
        if r["max"] == r["min"]:
            parts.append(f"RAISE {r['min']} (= RAISE TO {r['to_min']})")
        else:
            parts.append(f"RAISE {r['min']} to RAISE {r['max']} (= RAISE TO {r['to_min']} to RAISE TO {r['to_max']})")
    if b is not None or r is not None:
        parts.append(f"ALL IN (= {'BET' if b is not None else 'RAISE TO'} {legal['all_in']['total']})")
    else:
        parts.append("ALL IN (= " + ("CHECK" if legal["check"] else "CALL") + ": you cannot raise)")
    parts.append("FOLD")
    return "Your choices now: " + ", ".join(parts[:-1]) + " or " + parts[-1] + "."


def action_problem(action: Any) -> str | None:
    """Why ``action`` is not a well-formed betting action (None when it is)."""
    if not isinstance(action, dict) or action.get("bet") not in KINDS:
        return "A betting action is CHECK, CALL, BET n, RAISE n, RAISE TO n, ALL IN or FOLD."
    kind = action["bet"]
    need = {"bet": "amount", "raise": "by", "raise-to": "to"}.get(kind)
    if need is not None and (not _is_int(action.get(need)) or not 0 <= action[need] <= MAX_AMOUNT):
        return f"{command_text(action) if _is_int(action.get(need)) else kind.upper()} needs one whole number of chips."
    return None


def command_text(action: Action) -> str:
    """``CHECK``, ``CALL``, ``FOLD``, ``ALL IN``, ``BET 3``, ``RAISE 2``, ``RAISE TO 6``."""
    kind = action["bet"]
    if kind == "bet":
        return f"BET {action['amount']}"
    if kind == "raise":
        return f"RAISE {action['by']}"
    if kind == "raise-to":
        return f"RAISE TO {action['to']}"
    return "ALL IN" if kind == "all-in" else str(kind).upper()


# --------------------------------------------------------------------------- acting


def resolve(rnd: Round, stacks: Mapping[str, int], player: str, action: Action) -> dict[str, Any]:
    """The entry ``action`` by ``player`` would append; IllegalBet if it is not allowed."""
    problem = action_problem(action)
    if problem is not None:
        raise IllegalBet(problem)
    if rnd["end"] is not None:
        raise IllegalBet("This betting round is over.")
    if rnd["to_act"] != player:
        raise IllegalBet(f"It is {rnd['to_act']}'s turn to bet, not {player}'s.")
    mine, current, behind = rnd["bets"][player], rnd["current"], stacks[player]
    owed = to_call(rnd, player)
    top = most_total(rnd, stacks, player)
    kind = action["bet"]
    command = command_text(action)

    def entry(act: str, put: int) -> dict[str, Any]:
        return {
            "player": player,
            "command": command,
            "action": act,
            "put": put,
            "total": mine + put,
            "all_in": behind - put == 0,
            "timeout": False,
        }

    def illegal(why: str) -> IllegalBet:
        return IllegalBet(f"{why} {describe_legal(rnd, stacks, player)}")

    if kind == "all-in":
        if top > current:
            kind, total = ("bet" if current == 0 else "raise-to"), top
        else:
            kind, total = ("call" if owed else "check"), None
    elif kind == "bet":
        if current > 0:
            raise illegal(
                f"There is already a bet of {plural(current, 'chip')}: you cannot BET, only CALL, RAISE or FOLD."
            )
        total = action["amount"]
    elif kind == "raise":
        total = current + action["by"]
        if action["by"] < 1:
            raise illegal(f"A raise is at least 1 chip; you wrote {command}.")
    elif kind == "raise-to":
        total = action["to"]
        if total <= current:
            raise illegal(
                f"{command} is not a raise: it must be more than the current bet of {plural(current, 'chip')}."
            )
    else:
        total = None
    if kind == "fold":
        return entry("fold", 0)
    if kind == "check":
        if owed > 0:
            raise illegal(f"You cannot CHECK: there {'is' if owed == 1 else 'are'} {plural(owed, 'chip')} to call.")
        return entry("check", 0)
    if kind == "call":
        if owed == 0:
            return entry("check", 0)  # CALL with nothing to call is a check (ruling 8)
        return entry("call", min(owed, behind))
    assert total is not None
    if total < 1:
        raise illegal(f"A bet is at least 1 chip; you wrote {command}.")
    if top <= current:
        why = "You cannot bet more now:"
        if mine + behind <= current:
            why += " you do not hold more than the call."
        else:
            why += " no other player still in could call more."
        raise illegal(why)
    if total > top:
        if total - mine > behind:
            raise illegal(f"{command} is too much: you hold only {plural(behind, 'chip')}.")
        raise illegal(f"{command} is too much: nobody still in could put in more than {top} in this round.")
    return entry("bet" if current == 0 else "raise", total - mine)


def act(rnd: Round, stacks: Mapping[str, int], player: str, action: Action, *, timeout: bool = False) -> Round:
    """The round after ``player``'s ``action`` (see ``resolve``); ``stacks`` are the chips
    behind before the action (the caller takes ``put`` off them)."""
    done = resolve(rnd, stacks, player, action)
    done["timeout"] = timeout
    new: Round = clone(rnd)
    new["bets"][player] += done["put"]
    new["actions"].append(done)
    new["turn"] += 1
    if done["action"] == "fold":
        new["folded"].append(player)
    if done["all_in"] and done["action"] != "fold" and player not in new["all_in"]:
        new["all_in"].append(player)
    if new["bets"][player] > new["current"]:
        new["current"] = new["bets"][player]
        new["acted"] = [player]
    elif player not in new["acted"]:
        new["acted"].append(player)
    _next(new, player)
    return new


def _needs(rnd: Round, p: str) -> bool:
    return p not in rnd["acted"] or rnd["bets"][p] < rnd["current"]


def _next(rnd: Round, after: str) -> None:
    """Who acts next, or the end of the round."""
    if len(_remaining(rnd)) <= 1:
        rnd["end"], rnd["to_act"] = "one-left", None
        return
    order = rnd["order"]
    start = order.index(after)
    able = set(_able(rnd))
    for i in range(1, len(order) + 1):
        q = order[(start + i) % len(order)]
        if q in able and _needs(rnd, q):
            rnd["to_act"] = q
            return
    rnd["end"], rnd["to_act"] = "matched", None


def forfeit(rnd: Round, stacks: Mapping[str, int], player: str) -> Round:
    """The round after ``player``, still in it, forfeits the match (ruling 21): out as after a
    FOLD, with an entry whose command is ``FORFEIT`` (``"forfeit": True``). When it was their
    turn, the turn passes as after a FOLD; when not, the turn does not move (the step of the
    player to act stays open), and with one human left the round is over ("one-left")."""
    if rnd["end"] is not None:
        raise GameError("This betting round is over.")
    if player not in _remaining(rnd):
        raise GameError(f"{player} is not in this betting round.")
    if rnd["to_act"] == player:
        new = act(rnd, stacks, player, {"bet": "fold"})
        new["actions"][-1].update(command="FORFEIT", forfeit=True)
        return new
    new = clone(rnd)
    new["actions"].append(
        {
            "player": player,
            "command": "FORFEIT",
            "action": "fold",
            "put": 0,
            "total": new["bets"][player],
            "all_in": player in new["all_in"],
            "timeout": False,
            "forfeit": True,
        }
    )
    new["folded"].append(player)
    if len(_remaining(new)) <= 1:
        new["end"], new["to_act"] = "one-left", None
    return new


def default_action(rnd: Round) -> Action:
    """The deadline's default (RULINGS): a check when checking is free, else a fold."""
    player = rnd["to_act"]
    if player is None:
        raise GameError("This betting round is over; nobody is to act.")
    return {"bet": "check"} if to_call(rnd, player) == 0 else {"bet": "fold"}
