"""Two Piles: a small game of concurrent steps that drives the service tests of the core's
support for them, apart from any real game (MatchJack is the real one).

Four players sit at two tables, Left (the first two) and Right (the last two). At each
table the two take turns taking 1 or 2 counters from the table's own pile (``TAKE n``); the
tables play at once, each turn with its own deadline (a turn not answered takes 1). A
table whose pile is empty waits (a waiting step: no deadline) until the other's is empty
too. Then everyone votes at once, in secret, for a table (``VOTE LEFT|RIGHT``, revisable
until the deadline; no vote: none) and may tip garnets, a season currency the game reads
(``TIP n``: refused when the player holds fewer). Whoever took the last counter at the
table with the most votes wins (Left on a tie).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from referee.games.base import (
    HOUSE,
    MATCH_CHIPS,
    MIXED,
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
    check_balances,
    clone,
    transfer,
)

PILE = 3
TABLES = ("left", "right")
GARNETS = "garnets"
LINE = re.compile(r"^\s*(take|vote|tip)\s+(\S+)\s*$", re.IGNORECASE)


class TwoPiles:
    name = "twopiles"
    title = "Two Piles"
    min_players = 4
    max_players = 4
    game_type = GameType(
        dynamics=MIXED,
        roles=("player",) * 4,
        currencies=(MATCH_CHIPS, GARNETS),
        step_kinds={"turn": 12.0, "vote": 24.0},
        concurrent=True,
        reads=(GARNETS,),
    )
    step_kinds = game_type.step_kinds

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
        held = (options.get("holdings") or {}).get(GARNETS, {})
        return {
            "players": list(players),
            "tables": {
                "left": {"seats": list(players[:2]), "pile": PILE, "to_act": players[0], "turn": 1, "last": None},
                "right": {"seats": list(players[2:]), "pile": PILE, "to_act": players[2], "turn": 1, "last": None},
            },
            "garnets": {p: int(held.get(p, 0)) for p in players},
            "votes": None,  # {player: "left" | "right" | None} once both piles are empty
            "tips": {p: 0 for p in players},
            "log": [],
            "transfers": [],
            "result": None,
        }

    # -------------------------------------------------------------- steps

    def steps(self, state: State) -> tuple[Step, ...]:
        if state["result"] is not None:
            return ()
        if state["votes"] is not None:
            return (Step("vote", "vote", tuple(state["players"]), True, "The vote"),)
        out = []
        for name in TABLES:
            t = state["tables"][name]
            if t["pile"] == 0:
                out.append(Step(f"{name}-done", "wait", (), False, f"{name.title()} table done", waiting=True))
            else:
                key = f"{name}-{t['turn']}"
                out.append(Step(key, "turn", (t["to_act"],), False, f"{name.title()} table, turn {t['turn']}"))
        return tuple(out)

    def step(self, state: State) -> Step | None:
        steps = self.steps(state)
        return steps[0] if steps else None

    def awaiting(self, state: State) -> tuple[str, ...]:
        if state["result"] is not None:
            return ()
        if state["votes"] is not None:
            return tuple(p for p in state["players"] if state["votes"][p] is None)
        return tuple(t["to_act"] for t in state["tables"].values() if t["pile"] > 0)

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        """A table's steps are told to its two players; the vote and the end to everyone."""
        if step is None or step.key == "vote":
            return tuple(state["players"])
        return tuple(state["tables"][step.key.split("-")[0]]["seats"])

    @staticmethod
    def table_of(state: State, player: str) -> str:
        return next(name for name, t in state["tables"].items() if player in t["seats"])

    # -------------------------------------------------------------- mail

    def parse(self, state: State, player: str, text: str) -> Parsed:
        moves: list[Move] = []
        ignored = []
        for line in text.split("\n"):
            m = LINE.match(line)
            if not m:
                if line.strip():
                    ignored.append(line.strip())
                continue
            word, arg = m.group(1).lower(), m.group(2).lower()
            if word == "vote":
                if arg not in TABLES:
                    raise ParseError("VOTE needs LEFT or RIGHT", line)
                moves.append({"vote": arg})
            elif not arg.isdigit():
                raise ParseError(f"{word.upper()} needs a whole number", line)
            else:
                moves.append({word: int(arg)})
        if not moves:
            raise NoMoves("no TAKE, VOTE or TIP line")
        return Parsed(moves, ignored)

    def form(self, state: State, player: str) -> str:
        if state["result"] is not None:
            return ""
        if state["votes"] is not None:
            return "VOTE LEFT\n"
        t = state["tables"][self.table_of(state, player)]
        return "TAKE 1\n" if t["pile"] > 0 and t["to_act"] == player else ""

    # -------------------------------------------------------------- moves

    def apply_move(self, state: State, player: str, move: Move) -> Applied:
        def no(reason: str) -> Applied:
            return Applied(state, False, reason, changed=False)

        if state["result"] is not None:
            return no("The match is over.")
        new = clone(state)
        if "vote" in move:
            if state["votes"] is None:
                return no("There is nothing to vote on yet.")
            new["votes"][player] = move["vote"]
            return Applied(new, True)
        if "tip" in move:
            n = move["tip"]
            if state["votes"] is None or not isinstance(n, int) or n < 1:
                return no("A tip comes with the vote, and is a whole number of garnets.")
            if n > state["garnets"][player]:
                return no(f"You hold {state['garnets'][player]} garnets.")
            new["garnets"][player] -= n
            new["tips"][player] += n
            transfer(new, player, HOUSE, n, "tip", "vote", currency=GARNETS)
            return Applied(new, True)
        name = self.table_of(state, player)
        t = new["tables"][name]
        n = move.get("take")
        if t["pile"] == 0 or t["to_act"] != player:
            return no("It is not your turn.")
        if not isinstance(n, int) or not 1 <= n <= min(2, t["pile"]):
            return no(f"You may take 1 to {min(2, t['pile'])}.")
        self._take(new, name, n, timeout=False)
        return Applied(new, True)

    def _take(self, s: State, name: str, n: int, *, timeout: bool) -> None:
        t = s["tables"][name]
        player = t["to_act"]
        transfer(s, f"pile-{name}", player, n, "take", f"{name}-{t['turn']}", currency=MATCH_CHIPS)
        t["pile"] -= n
        s["log"].append({"table": name, "turn": t["turn"], "player": player, "take": n, "timeout": timeout})
        t["turn"] += 1
        if t["pile"] == 0:
            t["last"] = player
            if all(x["pile"] == 0 for x in s["tables"].values()):
                s["votes"] = {p: None for p in s["players"]}
        else:
            t["to_act"] = next(p for p in t["seats"] if p != player)

    def apply_timeout(self, state: State, key: str | None = None) -> State:
        open_keys = [st.key for st in self.steps(state) if not st.waiting]
        if state["result"] is not None or key not in open_keys:
            raise GameError(f"no timed step {key!r} is open")
        new = clone(state)
        if key == "vote":
            counts = {name: sum(v == name for v in new["votes"].values()) for name in TABLES}
            table = "right" if counts["right"] > counts["left"] else "left"
            winner = new["tables"][table]["last"]
            new["result"] = {
                "outcome": {p: "win" if p == winner else "loss" for p in new["players"]},
                "victory_points": {p: 1.0 if p == winner else 0.0 for p in new["players"]},
                "reason": f"The {table} table won the vote; {winner} took its last counter.",
                "scores": counts,
                "awards": {},
                "signals": [],
            }
            return new
        self._take(new, key.split("-")[0], 1, timeout=True)
        return new

    def with_balances(self, state: State, balances: dict[str, int]) -> State:
        check_balances(state, balances)
        return state

    def with_holdings(self, state: State, holdings: dict[str, dict[str, int]]) -> State:
        new = clone(state)
        new["garnets"] = {p: int(holdings[GARNETS][p]) for p in state["players"]}
        return new

    # -------------------------------------------------------------- views

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        over = state["result"] is not None
        votes = state["votes"]
        return clone(
            {
                "tables": {n: {k: t[k] for k in ("seats", "pile", "to_act", "turn", "last")} for n, t in state["tables"].items()},
                "table": None if player is None else self.table_of(state, player),
                "my_vote": None if player is None or votes is None else votes[player],
                "votes": votes if over else None,
                "garnets": None if player is None else state["garnets"][player],
                "log": state["log"],
            }
        )

    def result(self, state: State) -> Result | None:
        return None if state["result"] is None else Result(**clone(state["result"]))

    def standings(self, state: State) -> list[str]:
        return [f"{n}: pile {t['pile']}" for n, t in state["tables"].items()]

    def sample_moves(self, state: State, player: str, rnd: random.Random) -> list[Move]:
        if state["result"] is not None:
            return []
        if state["votes"] is not None:
            return [{"vote": rnd.choice(TABLES)}]
        t = state["tables"][self.table_of(state, player)]
        if t["pile"] == 0 or t["to_act"] != player:
            return []
        return [{"take": n} for n in range(1, min(2, t["pile"]) + 1)]

    def hidden_variants(self, state: State, player: str, rnd: random.Random) -> list[State]:
        if state["votes"] is None or state["result"] is not None:
            return []
        new = clone(state)
        for p in new["players"]:
            if p != player:
                new["votes"][p] = rnd.choice([None, *TABLES])
        return [new]


GAME = TwoPiles()

TEMPLATES = {
    "step.txt": (
        "Subject: Two Piles {{ match.id }}: {{ step.title if step else 'the end' }}\n"
        "Dear {{ player.name }},\n\n"
        "{% for s in steps %}open: {{ s.title }} until {{ s.deadline or 'no deadline' }}\n{% endfor %}"
        "{% if step %}Your step: {{ step.title }} (deadline {{ deadline or 'none' }})\n{% endif %}"
        "{% if result %}Result: {{ result.reason }}\n{% endif %}"
        "{% if revealed %}{% for s in revealed.seals %}Check: {{ s.check }}\n{% endfor %}{% endif %}"
        "{% if form %}\n{{ form }}{% endif %}"
    ),
    "receipt.txt": (
        "Subject: Two Piles {{ match.id }}: Received\nDear {{ player.name }},\n\nRecorded."
        "{% for s in sealed %} Sealed {{ s.commitment }}.{% endfor %}\n"
        "{% if step %}Your step: {{ step.title }} (deadline {{ deadline or 'none' }})\n{% endif %}"
        "{% if form %}\n{{ form }}{% endif %}"
    ),
    "now.txt": "{% if step %}Now: {{ step.title }}{% endif %}\n",
    "form_help.txt": "TAKE 1 or TAKE 2 at your turn; VOTE LEFT or VOTE RIGHT and TIP n at the vote.\n",
}


def write_templates(folder):
    """The game's templates under ``folder`` (``mail/twopiles/*.txt``)."""
    target = folder / "mail" / GAME.name
    target.mkdir(parents=True, exist_ok=True)
    for name, text in TEMPLATES.items():
        (target / name).write_text(text)
    return folder
