"""MatchJack's rule text as numbers and the rules that read the state: who is still in the
match and where, the open steps, what a player may do now, leaving the match, the end of the
match and its ranking (rule text: ``seeds/matchjack.txt``; the rulings:
``docs/games/matchjack.md``). A hand as it is played at the tables is
:mod:`referee.games.matchjack.play`; the match as it runs, :mod:`referee.games.matchjack.engine`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.base import SEASON_ACCOUNT, State, Step, plural, result_record, rng
from referee.games.matchjack import bots as botlib
from referee.games.matchjack import grammar, table

NAME = "matchjack"

# ---------------------------------------------------------------------- the rule text's numbers

PLAYERS = 6
HANDS = 15  # "After 15 Hands"
STARTING_CHIPS = 20  # "(Players start with 20 chips)"
SETS = ("Main", "Lost")
KEYS = {"Main": "main", "Lost": "lost"}
OTHER = {"Main": "Lost", "Lost": "Main"}
PILE = 22  # RULINGS: the 44 cards split into two 22-card piles
STAYSET_FEE = 5  # "you may pay a fee of 5 garnets to avoid swapping sets"
GUESS_GARNETS = 3  # "You will gain 3 garnets, as well as an additional 6 chips!"
GUESS_CHIPS = 6
BOT_ANTE = 1  # "They will ante 1 chip, and bet nothing else"
BREAKS = (5, 10)  # "After Hand 5 and 10, you will get 10 minutes of break"
COLS = 2  # "the winner of the Main Match and gain 2 CoLs"
GARNETS = "garnets"
SEASON = SEASON_ACCOUNT  # where a correct guess's garnets come from
POTS = {"Main": "pot-main", "Lost": "pot-lost"}
BOTS_ACCOUNT, DISCARD, BANK = "bots", "discard", "bank"
RULE_IDS = tuple(rule.id for rule in botlib.CATALOGUE)
ALL_BOTS = tuple(b for name in SETS for b in botlib.BOTS[name])
ACTIONS = ("hit", "swap", "draw", "new")
# Live minutes become hours (ruling 1): "3 minutes to decide on actions", a 10-minute break.
STEP_HOURS = {"stay": 24.0, "bet": 12.0, "action": 12.0, "break": 24.0}


def ante_for(hand_no: int) -> int:
    """Rule text: 1 chip; "After Hand 7, both antes raise by 1 chip, and after hand 13 it
    raises by one more": 1 in hands 1-7, 2 in 8-13, 3 in 14-15 (the bots always 1)."""
    return 1 if hand_no <= 7 else 2 if hand_no <= 13 else 3


# ---------------------------------------------------------------------- small readers


def alive_players(s: State) -> list[str]:
    out = {e["player"] for e in s["eliminated"]}
    return [p for p in s["players"] if p not in out]


def is_out(s: State, p: str) -> bool:
    return any(e["player"] == p for e in s["eliminated"])


def forfeiters(s: State) -> set[str]:
    """The players who forfeited the match (ruling 21)."""
    return {e["player"] for e in s["eliminated"] if e.get("forfeit")}


def how_gone(s: State, p: str) -> str:
    """How ``p``, out of the match, left it, for the answers they get."""
    return "You have forfeited the match" if p in forfeiters(s) else "You have left the match (0 chips)"


def dealt_at(s: State, p: str) -> str | None:
    """The table ``p`` was dealt at in the open (or last) hand."""
    for name in SETS:
        if p in s["tables"][name]["dealt"]:
            return name
    return None


def in_hand(t: dict[str, Any]) -> list[str]:
    """The humans still in the hand at this table, in action order."""
    out = set(t["hall"]) | set(t["folded"])
    return [p for p in t["order"] if p not in out]


def guess_hand(s: State) -> int:
    """The hand a guess made now counts for (ruling 16: a break's guess counts for the next)."""
    return s["hand"] + 1 if s["phase"] == "break" else s["hand"]


def guess_problem(s: State, p: str) -> str | None:
    """Why ``p`` may not guess now (None: they may)."""
    if s["result"] is not None:
        return "The match is over; no more guesses."
    if is_out(s, p):
        return f"{how_gone(s, p)}; you may not guess any more."
    hand_no = guess_hand(s)
    if any(g["hand"] == hand_no for g in s["guesses"][p]):
        return f"You have already guessed in hand {hand_no}; one guess per hand."
    return None


# ---------------------------------------------------------------------- steps


def _table_step(s: State, name: str) -> Step | None:
    t = s["tables"][name]
    h, key = s["hand"], KEYS[name]
    if t["status"] == "bet":
        rnd = t["rounds"][-1]
        p = rnd["to_act"]
        return Step(
            f"h{h}-{key}-bet{rnd['number']}-{rnd['turn']}",
            "bet",
            (p,),
            False,
            f"Hand {h}, {name} table, betting round {rnd['number']}, turn {rnd['turn']}",
        )
    if t["status"] == "action":
        p = t["action_order"][t["next"]]
        seat = t["seats"][p]
        return Step(f"h{h}-{key}-act-{seat}", "action", (p,), False, f"Hand {h}, {name} table, action of seat {seat}")
    if t["status"] == "done":
        return Step(
            f"h{h}-{key}-done",
            "wait",
            (),
            False,
            f"Hand {h}, {name} table: waiting for the {OTHER[name]} table",
            waiting=True,
        )
    return None


def all_steps(s: State) -> tuple[Step, ...]:
    """Every open step: the timed ones first (Main before Lost), then the waiting one."""
    if s["result"] is not None:
        return ()
    h, phase = s["hand"], s["phase"]
    if phase == "stay":
        return (Step(f"h{h}-stay", "stay", tuple(alive_players(s)), True, f"Hand {h}, stay or fold"),)
    if phase == "break":
        return (Step(f"break-{h}", "break", (), False, f"Break after hand {h}"),)
    found = [step for name in SETS if (step := _table_step(s, name)) is not None]
    return tuple(sorted(found, key=lambda step: step.waiting))


def player_step(s: State, p: str) -> Step | None:
    """The open step ``p`` acts in (at most one at a time)."""
    for step in all_steps(s):
        if p in step.players:
            return step
    return None


def step_table(step: Step) -> str | None:
    """The table a table step (betting, action, waiting) belongs to."""
    parts = step.key.split("-")
    if step.kind not in ("bet", "action", "wait") or len(parts) < 2:
        return None
    return next((name for name in SETS if KEYS[name] == parts[1]), None)


def mark_told(s: State) -> None:
    """Ruling 13: a player who leaves the match is told by the first step mail that opens
    after it, at the table they were dealt at (or the next hand's or a break's); nothing after
    that but the result (a player who leaves the match in its last hand is told by it)."""
    pending = [e for e in s["eliminated"] if e["told"] is None]
    if not pending:
        return
    opened = all_steps(s)
    for e in pending:
        for step in opened:
            if step.kind in ("stay", "break") or (
                step_table(step) == e["table"] and step.key.startswith(f"h{e['hand']}-")
            ):
                e["told"] = step.key
                break
        if e["told"] is None and s["result"] is not None:
            e["told"] = "end"


# ---------------------------------------------------------------------- what a player may do now


def what_now(state: State, player: str) -> str:
    """One sentence: what ``player`` may do now."""
    if state["result"] is not None:
        return "The match is over."
    if is_out(state, player):
        return f"{how_gone(state, player)}; you have nothing to send."
    step = player_step(state, player)
    guess = "" if guess_problem(state, player) else " You may also GUESS <bot> <rule id> (once per hand)."
    if step is None:
        open_steps = [s.title for s in all_steps(state) if not s.waiting]
        return f"You have nothing to send now (open: {'; '.join(open_steps)}).{guess}"
    if step.kind == "stay":
        mine = state["stay"].get(player)
        can_set = state["garnets"][player] >= STAYSET_FEE
        text = (
            f"Choose STAY (a second ante of {plural(ante_for(state['hand']), 'chip')}), "
            "FOLD (you move to the other set for the next hand)"
            + (f" or FOLD STAYSET ({STAYSET_FEE} garnets: you keep your set)" if can_set else "")
            + "; you may change your choice until the deadline."
        )
        if mine is not None:
            text += f" Your choice now: {grammar.command_text({'stay': mine})}."
        return text + guess
    if step.kind == "bet":
        t = state["tables"][dealt_at(state, player)]
        return table.describe_legal(t["rounds"][-1], state["chips"], player) + guess
    t = state["tables"][dealt_at(state, player)]  # an action turn
    text = "Take one action: HIT, SWAP UP, SWAP DOWN, DRAW 1, DRAW 2 or NEW."
    if not t["pile"] and not t["spent"]:
        text += " The pile is empty and nothing is spent: HIT, DRAW and NEW change nothing."
    return text + guess


# ---------------------------------------------------------------------- leaving the match, the end


def eliminate(s: State, players: Sequence[str]) -> None:
    """Players at 0 chips leave the match at once (ruling 12), all of one call in one batch
    (the same moment); each is recorded with the table they were dealt at in this hand."""
    fresh = [p for p in players if not is_out(s, p)]
    if not fresh:
        return
    batch = 1 + max((e["batch"] for e in s["eliminated"]), default=0)
    for p in fresh:
        s["eliminated"].append({"player": p, "hand": s["hand"], "table": dealt_at(s, p), "batch": batch, "told": None})


def _order_key(s: State, p: str) -> tuple[int, ...]:
    """Chips after the last hand, then after each earlier hand going back (RULINGS)."""
    return tuple(row[p] for row in reversed(s["chips_after"]))


def _pick(s: State, candidates: list[str], best: bool, label: str) -> tuple[str, str]:
    """The player with the most (``best``) or fewest chips among ``candidates``: ties by the
    chips after earlier hands going back, then a lot from ``rng(seed, "lot", label)``."""
    last = [s["chips_after"][-1][p] for p in candidates]
    edge = max(last) if best else min(last)
    tied = [p for p in candidates if s["chips_after"][-1][p] == edge]
    if len(tied) == 1:
        return tied[0], "chips"
    keys = {p: _order_key(s, p) for p in tied}
    edge_key = max(keys.values()) if best else min(keys.values())
    still = sorted(p for p in tied if keys[p] == edge_key)
    if len(still) == 1:
        return still[0], "earlier hands"
    return rng(s["seed"], "lot", label).choice(still), "lot"


def rank(s: State) -> tuple[list[str], dict[str, str]]:
    """The six from best to worst, and how the winner and the EC were picked.

    The winner, first, has the most chips (``_pick``: ties by the chips after earlier
    hands going back, then ``rng(seed, "lot", "winner")``). The others are placed from the
    last place up by the EC's rule, applied again to whoever is left each time: the first
    to reach 0 (the earliest batch of ``eliminated``; a tie within a batch goes to the
    fewest chips after earlier hands, then a lot), else the fewest chips (the same ties).
    So every player who reached 0 ranks below every player who did not, an earlier batch
    below a later one, and the players with chips by their chips; the last is the EC, and
    the one before them is whom the rule would name were the EC left out (a season that
    skips an EC eliminated elsewhere takes the next one up). The lot for the last place is
    ``rng(seed, "lot", "ec")``, for the place ``n`` above it ``rng(seed, "lot", f"place-{n}")``;
    the winner is never among the candidates, so the lots for the most and the fewest chips
    never pick the same player."""
    players = list(s["players"])
    # a forfeiter never wins (ruling 21): a loss, ranked as one who reached 0 in that hand
    candidates = [p for p in players if p not in forfeiters(s)] or players
    winner, how_winner = _pick(s, candidates, True, "winner")
    rest = [p for p in players if p != winner]
    gone = [e for e in s["eliminated"] if e["player"] != winner]
    worst_first: list[str] = []
    how_ec = ""
    while rest:
        place = len(rest) + 1  # the place decided now: the worst left (the winner is place 1)
        label = "ec" if not worst_first else f"place-{place}"
        batches = [e for e in gone if e["player"] in rest]
        if batches:
            first = min(e["batch"] for e in batches)
            tied = [e["player"] for e in batches if e["batch"] == first]
            if len(tied) == 1:
                p, how = tied[0], "first to 0"
            else:
                p, how = _pick(s, tied, False, label)
                how = "first to 0, " + how
        else:
            p, how = _pick(s, rest, False, label)
        if not worst_first:
            how_ec = how
        worst_first.append(p)
        rest.remove(p)
    return [winner, *reversed(worst_first)], {"winner": how_winner, "ec": how_ec}


def ranking(s: State) -> list[str]:
    """The six from best to worst as the rules rank them at the end (``rank``): the winner
    first, the EC last."""
    return rank(s)[0]


def end_match(s: State) -> None:
    """The hands are over (after hand 15, or when at most one player is left with chips):
    the match ends at once. The most chips wins (2 CoLs); the EC (elimination candidate) is
    the last of the ranking (``rank``). The EC's nomination of the DMO (death-match
    opponent) is the season's next step, not the match's: the result only names the EC."""
    ranking, how = rank(s)
    winner, ec = ranking[0], ranking[-1]
    names = s["names"]
    s["phase"] = "over"
    s["final"] = {"winner": winner, "ec": ec, "how": how, "hands": s["hand"]}
    forfeits = [e for e in s["eliminated"] if e.get("forfeit")]
    if s["hand"] < HANDS:
        left = "in the match" if forfeits else "with chips"
        why = f"after hand {s['hand']}, when at most one player was left {left}"
    else:
        why = f"after hand {s['hand']}"
    s["result"] = result_record(
        {p: "win" if p == winner else "loss" for p in s["players"]},
        (
            f"{names[winner]} wins with {plural(s['chips'][winner], 'chip')} {why}; {names[ec]} is the EC "
            "(elimination candidate) and will nominate the DMO (death-match opponent)."
            + "".join(f" {names[e['player']]} forfeited the match in hand {e['hand']}." for e in forfeits)
        ),
        {
            "chips": dict(s["chips"]),
            "hands": s["hand"],
            "winner": winner,
            "ec": ec,
            "eliminated": [left_record(e) for e in s["eliminated"]],
            "how": dict(how),
        },
        awards={"cols": {winner: COLS}},
        signals=[],
        ranking=ranking,
    )


def left_record(e: dict[str, Any]) -> dict[str, Any]:
    """A player who left the match, as the result and the views show it: who, in which hand,
    and ``"forfeit": True`` for a forfeiter (ruling 21)."""
    return {"player": e["player"], "hand": e["hand"], **({"forfeit": True} if e.get("forfeit") else {})}
