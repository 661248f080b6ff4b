"""The nomination: the season's step after a main match (RULINGS, "Seasons").

Not a game a season file schedules: the referee opens one when a main match ends with an
EC (elimination candidate) who is still live. It is played as a match of its own, so it
has its mails, deadlines, reminders, receipts, events and archive like any game:

* Seats: the EC first, then every eligible player (the season's live players but the EC
  and the main match's winner), in the season's order. Options: ``winner`` (the main
  match's winner, who is never eligible), ``main`` (the main match's title, for the
  mails), ``col`` (may a nominated player use a CoL: the season file's ``cols``).
* **nominate** (the EC, sequential): ``NOMINATE <player>``, by name or season id. Final
  once accepted. At the deadline: a lot among the eligible players, final (a CoL answers
  only the EC's own nomination).
* **col** (the nominated player, when CoLs are on and they hold one): ``USE COL`` spends one
  CoL (a transfer of 1 ``cols`` to the season), voids the nomination and gives the EC a new
  nominate step among the rest; ``NO COL`` (or the deadline) lets the nomination stand.
  ``USE COL`` is refused when it would leave nobody to nominate.

The result names the DMO (death-match opponent) in ``scores`` (``ec``, ``dmo``, ``by``:
``"ec"`` or ``"lot"``); its outcome is ``EC``, ``DMO`` or ``spared`` for each seat, with no
victory points (nobody wins a nomination).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.base import (
    SEASON_ACCOUNT,
    SEQUENTIAL,
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
    clone,
    rng,
    stored_result,
    transfer,
)
from referee.games.betting import normal_name, turn_reference
from referee.games.lines import clean_line

COLS = "cols"  # the season currency of certificates of life
NOMINATE_HOURS = 24.0
COL_HOURS = 24.0
MAX_LINES = 2_000  # lines of a mail read at most (the rest is ignored, and said so)


def find_player(names: Mapping[str, str], written: str, line: str) -> str:
    """The player a mail names: by season id or name, without regard to case or accents; a
    name may also be given by its first words (``Ann`` for ``Ann Lee``) when no name is
    exactly that; a season id wins over a name. No match, or more than one, is a
    :class:`ParseError` listing the candidates."""
    wanted = normal_name(written)
    if not wanted:
        raise ParseError("Name the player: a season id or a name", line)
    tiers = (
        lambda p: normal_name(p) == wanted,
        lambda p: normal_name(names.get(p, p)) == wanted,
        lambda p: (normal_name(names.get(p, p)) + " ").startswith(wanted + " "),
    )
    found: list[str] = []
    for matches in tiers:
        found = [p for p in names if matches(p)]
        if found:
            break
    if len(found) == 1:
        return found[0]
    # "id: " keeps a season id as written in a mail that names players (referee.render.named)
    listed = ", ".join(f"{names[p]} (id: {p})" for p in (found or list(names)))
    if not found:
        raise ParseError(f"No player you may nominate is called {written!r}. They are: {listed}", line)
    raise ParseError(f"{written!r} could be any of {len(found)} players: {listed}. Write the season id", line)


def written_name(names: Mapping[str, str], player: str) -> str:
    """What a form writes for ``player``: the name when it reads back as that player, else
    the season id."""
    name = names.get(player, player)
    try:
        if find_player(names, name, name) == player:
            return name
    except ParseError:
        pass
    return player


class Nomination:
    name = "nomination"
    title = "Nomination"
    min_players = 2  # the EC and at least one eligible player
    max_players = 1_000

    def __init__(self) -> None:
        self.game_type = GameType(
            dynamics=SEQUENTIAL,
            roles=("ec", "eligible"),
            currencies=(COLS,),
            step_kinds={"nominate": NOMINATE_HOURS, "col": COL_HOURS},
            options={
                "winner": "the main match's winner (never eligible)",
                "winner_name": "the winner's name, for the mails",
                "main": "the main match's title, for the mails",
                "col": "may a nominated player use a CoL (default true)",
            },
            chance=True,
            names=True,
            reads=(COLS,),
            step_titles=(  # step's titles
                (r"nominate-1", "Nomination of the DMO"),
                (r"nominate-(\d+)", "Nomination of the DMO (round {0})"),
                (r"col-(\d+)", "Certificate of life"),
            ),
            season_step=True,
        )
        self.step_kinds: dict[str, float] = self.game_type.step_kinds

    # ------------------------------------------------------------------ state

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
        players = list(players)
        if len(players) < 2 or len(set(players)) != len(players):
            raise GameError("A nomination needs the EC and at least one other player, each once.")
        names = dict(options.get("names") or {})
        held = dict((options.get("holdings") or {}).get(COLS) or {})
        return {
            "seed": seed,
            "players": players,
            "names": {p: names.get(p, p) for p in players}
            | ({options["winner"]: options.get("winner_name") or options["winner"]} if options.get("winner") else {}),
            "ec": players[0],
            "eligible": players[1:],
            "winner": options.get("winner"),
            "main": options.get("main") or "the main match",
            "col": bool(options.get("col", True)),
            "cols": {p: int(held.get(p, 0)) for p in players},
            "round": 1,
            "phase": "nominate",  # nominate -> (col ->) over
            "nominee": None,
            "voided": [],  # nominated players who used a CoL: no longer eligible
            # each nomination once settled: [{"round", "nominee", "by": "ec" | "lot", "col": "used" |
            # "not used" | None (the nominee held no CoL, or CoLs are off, or the lot chose)}]
            "history": [],
            "transfers": [],
            "result": None,
        }

    def with_holdings(self, state: State, holdings: dict[str, dict[str, int]]) -> State:
        new = clone(state)
        held = holdings.get(COLS) or {}
        new["cols"] = {p: int(held.get(p, new["cols"].get(p, 0))) for p in new["players"]}
        return new

    def with_balances(self, state: State, balances: dict[str, int]) -> State:
        return state  # the nomination moves no chips

    @staticmethod
    def open_to(state: State) -> list[str]:
        """The players the EC may nominate now."""
        return [p for p in state["eligible"] if p not in state["voided"]]

    # ------------------------------------------------------------------ steps

    def step(self, state: State) -> Step | None:
        if state["phase"] == "nominate":
            title = "Nomination of the DMO" + (f" (round {state['round']})" if state["round"] > 1 else "")
            return Step(f"nominate-{state['round']}", "nominate", (state["ec"],), False, title)
        if state["phase"] == "col":
            return Step(f"col-{state['round']}", "col", (state["nominee"],), False, "Certificate of life")
        return None

    def awaiting(self, state: State) -> tuple[str, ...]:
        step = self.step(state)
        return step.players if step is not None else ()

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        if state["phase"] == "over":
            return (state["ec"], state["result"]["scores"]["dmo"])
        if state["phase"] == "col":  # the EC is told by the receipt of their nomination
            return (state["nominee"],)
        return (state["ec"],)

    # ------------------------------------------------------------------ mail

    def parse(self, state: State, player: str, text: str) -> Parsed:
        step = self.step(state)
        moves: list[Move] = []
        ignored: list[str] = []
        checked: str | None = None  # the form's Step line: the step the mail answers
        names = {p: state["names"][p] for p in self.open_to(state)}
        for n, raw in enumerate(text.splitlines()):
            if n >= MAX_LINES:
                break
            line = clean_line(raw)
            if not line:
                continue
            words = line.split()
            head = words[0].upper().rstrip(":")
            if head in ("STEP", "TURN") and (words[0].endswith(":") or (len(words) > 1 and words[1].startswith(":"))):
                ref = turn_reference(line[len(words[0]) :])
                if checked is not None and checked != ref:
                    raise ParseError("Your mail names two steps; keep only one Step line", line)
                checked = ref
            elif head == "NOMINATE":
                who = " ".join(words[1:]).strip(" :<>\"'")
                if not who:
                    raise ParseError("NOMINATE needs the player you name as DMO: NOMINATE <name>", line)
                moves.append({"nominate": find_player(names, who, line)})
            elif head == "USE" and len(words) >= 2 and words[1].upper().rstrip(".!") == "COL":
                if len(words) > 2:
                    raise ParseError("USE COL takes nothing after it", line)
                moves.append({"col": True})
            elif head == "NO" and len(words) >= 2 and words[1].upper().rstrip(".!") == "COL":
                if len(words) > 2:
                    raise ParseError("NO COL takes nothing after it", line)
                moves.append({"col": False})
            else:
                ignored.append(line)
        if not moves:
            raise NoMoves(
                "I found no NOMINATE, USE COL or NO COL line"
                + (f" (the open step is {step.title})" if step is not None else "")
            )
        if len(moves) > 1:
            raise ParseError("Send one command: a nomination is final once accepted", None)
        if checked is not None:
            moves[0]["step"] = checked
        return Parsed(moves, ignored)

    def apply_move(self, state: State, player: str, move: Move) -> Applied:
        phase = state["phase"]
        if phase == "over":
            return Applied(state, False, "The nomination is over.", changed=False)
        step = self.step(state)
        assert step is not None
        if move.get("step") is not None and move["step"] != turn_reference(step.title):
            return Applied(
                state,
                False,
                f"Your mail answers an earlier step ({move['step']}), which is over; now it is {step.title}.",
                changed=False,
            )
        if "nominate" in move:
            if phase != "nominate" or player != state["ec"]:
                return Applied(state, False, "Only the EC nominates, while the nomination is open.", changed=False)
            who = move["nominate"]
            if who not in self.open_to(state):
                names = ", ".join(state["names"][p] for p in self.open_to(state))
                return Applied(state, False, f"You may nominate one of: {names}.", changed=False)
            new = clone(state)
            if new["col"] and new["cols"].get(who, 0) > 0 and len(self.open_to(new)) > 1:
                new["phase"], new["nominee"] = "col", who  # the nominee may use a CoL (history: once answered)
                return Applied(new, True)
            new["history"].append({"round": new["round"], "nominee": who, "by": "ec", "col": None})
            _finish(new, who, "ec")
            return Applied(new, True)
        if "col" in move:
            if phase != "col" or player != state["nominee"]:
                return Applied(
                    state, False, "Only a nominated player may answer with USE COL or NO COL.", changed=False
                )
            new = clone(state)
            entry = {"round": new["round"], "nominee": player, "by": "ec", "col": "not used"}
            if not move["col"]:
                new["history"].append(entry)
                _finish(new, player, "ec")
                return Applied(new, True)
            if len(self.open_to(state)) <= 1:
                return Applied(state, False, "USE COL would leave nobody to nominate.", changed=False)
            transfer(new, player, SEASON_ACCOUNT, 1, "CoL used", f"col-{new['round']}", currency=COLS)
            new["cols"][player] -= 1
            new["history"].append({**entry, "col": "used"})
            new["voided"].append(player)
            new["round"] += 1
            new["phase"], new["nominee"] = "nominate", None
            return Applied(new, True)
        return Applied(state, False, "Not a move of the nomination.", changed=False)

    def apply_timeout(self, state: State, key: str | None = None) -> State:
        if state["phase"] == "over":
            raise GameError("The nomination is over.")
        new = clone(state)
        if new["phase"] == "col":  # no answer: the nomination stands
            new["history"].append({"round": new["round"], "nominee": new["nominee"], "by": "ec", "col": "not used"})
            _finish(new, new["nominee"], "ec")
            return new
        dmo = rng(new["seed"], "lot", new["round"]).choice(sorted(self.open_to(new)))
        new["history"].append({"round": new["round"], "nominee": dmo, "by": "lot", "col": None})
        _finish(new, dmo, "lot")
        return new

    # ------------------------------------------------------------------ what players see

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        names = state["names"]
        return {
            "ec": state["ec"],
            "winner": state["winner"],
            "main": state["main"],
            "phase": state["phase"],
            "round": state["round"],
            "nominee": state["nominee"],
            "col_allowed": state["col"],
            "open_to": self.open_to(state),
            "voided": list(state["voided"]),
            "history": clone(state["history"]),
            "cols": dict(state["cols"]),
            "names": dict(names),
            "you": player,
            "final": clone(state["result"]) if state["result"] is not None else None,
        }

    def result(self, state: State) -> Result | None:
        return stored_result(state)

    def forfeit(self, state: State, player: str) -> State:
        """Never: a nomination is the season's step, not a match anyone plays to win or lose;
        the season itself handles an EC or a nominee who leaves (RULINGS, "Seasons")."""
        raise GameError(
            "A nomination cannot be forfeited: it is the season's step, not a match; the season handles an EC "
            "or a nominee who leaves (the nomination lapses, or the EC nominates again)."
        )

    def form(self, state: State, player: str) -> str:
        step = self.step(state)
        if step is None or player not in step.players:
            return ""
        if step.kind == "nominate":
            names = {p: state["names"][p] for p in self.open_to(state)}
            first = written_name(names, self.open_to(state)[0])
            return f"NOMINATE {first}\nStep: {step.title}\n"
        return f"USE COL\nStep: {step.title}\n"

    def quick_answers(self, state: State, player: str) -> list[tuple[str, str]]:
        """The step mail's one-tap answers (referee.games.quick): NOMINATE each player the EC
        may nominate; USE COL and NO COL for the nominee."""
        step = self.step(state)
        if step is None or player not in step.players:
            return []
        if step.kind == "nominate":
            open_to = self.open_to(state)
            names = {p: state["names"][p] for p in open_to}
            return [
                (f"NOMINATE {state['names'][p]}", f"NOMINATE {written_name(names, p)}\nStep: {step.title}\n")
                for p in open_to
            ]
        return [(c, f"{c}\nStep: {step.title}\n") for c in ("USE COL", "NO COL")]

    def standings(self, state: State) -> list[str]:
        names = state["names"]
        if state["phase"] == "over":
            scores = state["result"]["scores"]
            how = "by the EC" if scores["by"] == "ec" else "by lot"
            return [f"{names[scores['dmo']]} is the DMO ({how}); EC {names[state['ec']]}"]
        if state["phase"] == "col":
            return [f"{names[state['nominee']]} was nominated and may use a CoL; EC {names[state['ec']]}"]
        return [f"EC {names[state['ec']]} nominates among {len(self.open_to(state))} players"]

    def sample_moves(self, state: State, player: str, rnd: random.Random) -> list[Move]:
        step = self.step(state)
        if step is None or player not in step.players:
            return []
        if step.kind == "nominate":
            return [{"nominate": rnd.choice(self.open_to(state))}]
        moves: list[Move] = [{"col": False}]
        if len(self.open_to(state)) > 1:
            moves.append({"col": True})
        return moves

    def hidden_variants(self, state: State, player: str, rnd: random.Random) -> list[State]:
        return [state]  # nothing is hidden: the lot is drawn at the deadline


def _finish(s: State, dmo: str, by: str) -> None:
    names = s["names"]
    s["phase"], s["nominee"] = "over", None
    how = f"nominated {names[dmo]}" if by == "ec" else f"sent no nomination: {names[dmo]} was drawn by lot"
    s["result"] = {
        # the game's own words (nobody wins a nomination; no victory points)
        "outcome": {p: "EC" if p == s["ec"] else "DMO" if p == dmo else "spared" for p in s["players"]},
        "victory_points": {p: 0.0 for p in s["players"]},
        "reason": f"{names[s['ec']]}, the EC, {how}; {names[dmo]} is the DMO (death-match opponent).",
        "scores": {"ec": s["ec"], "dmo": dmo, "by": by, "winner": s["winner"]},
        "awards": {},
        "signals": [],
        "ranking": [],
    }


GAME = Nomination()
