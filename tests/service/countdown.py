"""Countdown: a small game of turns that drives the service tests apart from any real game.

Two players take turns taking 1, 2 or 3 counters from a pile (``TAKE n``); whoever takes
3 moves again; whoever takes the last counter wins the match. A turn not answered by its
deadline takes 1. Each player draws a secret digit at the start, which only they see
until the end; the winner is awarded as many CoLs (a season currency) as their secret.
The counters taken are the match's own chips (``MATCH_CHIPS``: moved from the "pile"
account); at the end the loser pays the winner one of the season's chips, if they have
one then (the live season balance); the match signals the season to send the loser to a
death match.

It uses everything the core offers a game: sequential turns with their own deadlines,
match-local chips beside season chips, awards, signals, hidden information, a ``Turn:``
line in the form, extra turns, and a timeout default.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from referee.games.base import (
    MATCH_CHIPS,
    SEASON_CHIPS,
    SEQUENTIAL,
    Applied,
    GameError,
    GameType,
    Move,
    NoMoves,
    ParseError,
    Parsed,
    Result,
    State,
    Step,
    clone,
    rng,
    transfer,
)

PILE = 7
MAX_TAKE = 3
TAKE = re.compile(r"^\s*take\s+(\S+)\s*$", re.IGNORECASE)
TURN = re.compile(r"^\s*turn\s*:\s*(.*?)\s*$", re.IGNORECASE)


def title(turn: int) -> str:
    return f"Turn {turn}"


class Countdown:
    name = "countdown"
    title = "Countdown"
    min_players = 2
    max_players = 2
    game_type = GameType(
        dynamics=SEQUENTIAL,
        roles=("player", "player"),
        currencies=(MATCH_CHIPS, SEASON_CHIPS),
        step_kinds={"turn": 12.0},
        options={"pile": "the counters on the pile at the start (default 7)"},
        chance=True,
    )
    step_kinds = game_type.step_kinds

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
        if len(players) != 2 or players[0] == players[1]:
            raise GameError("Countdown needs two different players.")
        pile = options.get("pile", PILE)
        if not isinstance(pile, int) or isinstance(pile, bool) or not 1 <= pile <= 100:
            raise GameError(f"pile must be a whole number from 1 to 100, not {pile!r}")
        draw = rng(seed, "secrets")
        return {
            "players": list(players),
            "pile": pile,
            "to_act": players[0],
            "turn": 1,
            "secrets": {p: draw.randint(1, 9) for p in players},
            "balances": dict(options.get("chips", {})),
            "log": [],
            "transfers": [
                {
                    "from": "house",
                    "to": "pile",
                    "amount": pile,
                    "reason": "pile",
                    "step": "turn-1",
                    "currency": MATCH_CHIPS,
                }
            ],
            "result": None,
        }

    def step(self, state: State) -> Step | None:
        if state["result"] is not None:
            return None
        return Step(f"turn-{state['turn']}", "turn", (state["to_act"],), False, title(state["turn"]))

    def awaiting(self, state: State) -> tuple[str, ...]:
        return () if state["result"] is not None else (state["to_act"],)

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        return tuple(state["players"])

    def parse(self, state: State, player: str, text: str) -> Parsed:
        move: Move | None = None
        turn = None
        ignored = []
        for line in text.split("\n"):
            if m := TAKE.match(line):
                if move is not None:
                    raise ParseError("one TAKE per mail", line)
                if not m.group(1).isdigit():
                    raise ParseError("TAKE needs a whole number", line)
                move = {"take": int(m.group(1))}
            elif m := TURN.match(line):
                turn = m.group(1)
            elif line.strip():
                ignored.append(line.strip())
        if move is None:
            raise NoMoves("no TAKE line")
        if turn is not None:
            move["turn"] = turn
        return Parsed([move], ignored)

    def form(self, state: State, player: str) -> str:
        if state["result"] is not None or state["to_act"] != player:
            return ""
        return f"TAKE 1\nTurn: {title(state['turn'])}\n"

    def apply_move(self, state: State, player: str, move: Move) -> Applied:
        def no(reason: str) -> Applied:
            return Applied(state, False, reason, changed=False)

        if state["result"] is not None:
            return no("The match is over.")
        if move.get("turn") not in (None, title(state["turn"])):
            return no(f"Your mail answers {move['turn']}, which is over; now it is {title(state['turn'])}.")
        if player != state["to_act"]:
            return no(f"It is not your turn: {title(state['turn'])} is {state['to_act']}'s.")
        n = move.get("take")
        most = min(MAX_TAKE, state["pile"])
        if not isinstance(n, int) or not 1 <= n <= most:
            return no(f"You may take 1 to {most}.")
        return Applied(self._take(state, player, n, timeout=False), True)

    def apply_timeout(self, state: State, key: str | None = None) -> State:
        if state["result"] is not None:
            raise GameError("The match is over.")
        return self._take(state, state["to_act"], 1, timeout=True)

    def _take(self, state: State, player: str, n: int, *, timeout: bool) -> State:
        new = clone(state)
        key = f"turn-{new['turn']}"
        new["pile"] -= n
        transfer(new, "pile", player, n, "take", key, currency=MATCH_CHIPS)
        new["log"].append({"turn": new["turn"], "player": player, "take": n, "timeout": timeout})
        other = next(p for p in new["players"] if p != player)
        if new["pile"] == 0:
            stake = min(1, new["balances"].get(other, 0))
            transfer(new, other, player, stake, "stake", key)
            new["result"] = {
                "outcome": {player: "win", other: "loss"},
                "victory_points": {player: 1.0, other: 0.0},
                "reason": f"{player} took the last counter.",
                "scores": {},
                "awards": {"cols": {player: new["secrets"][player]}},
                "signals": [{"kind": "death-match", "player": other}],
            }
            return new
        new["turn"] += 1
        new["to_act"] = player if n == MAX_TAKE and not timeout else other
        return new

    def with_balances(self, state: State, balances: dict[str, int]) -> State:
        new = clone(state)
        new["balances"] = dict(balances)
        return new

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        over = state["result"] is not None
        return clone(
            {
                "pile": state["pile"],
                "turn": state["turn"],
                "to_act": None if over else state["to_act"],
                "your_turn": not over and player == state["to_act"],
                "secret": None if player is None else state["secrets"][player],
                "secrets": state["secrets"] if over else None,
                "last": state["log"][-1] if state["log"] else None,
                "taken": {p: sum(e["take"] for e in state["log"] if e["player"] == p) for p in state["players"]},
            }
        )

    def result(self, state: State) -> Result | None:
        return None if state["result"] is None else Result(**clone(state["result"]))

    def standings(self, state: State) -> list[str]:
        public = self.view(state, None)
        return [f"{p}: took {n}" for p, n in public["taken"].items()]

    def sample_moves(self, state: State, player: str, rnd: random.Random) -> list[Move]:
        if state["result"] is not None or player != state["to_act"]:
            return []
        return [{"take": n} for n in range(1, min(MAX_TAKE, state["pile"]) + 1)]

    def hidden_variants(self, state: State, player: str, rnd: random.Random) -> list[State]:
        if state["result"] is not None:
            return []
        other = next(p for p in state["players"] if p != player)
        variants = []
        for digit in rnd.sample([d for d in range(1, 10) if d != state["secrets"][other]], 3):
            new = clone(state)
            new["secrets"][other] = digit
            variants.append(new)
        return variants


GAME = Countdown()
