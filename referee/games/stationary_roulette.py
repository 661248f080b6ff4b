"""Stationary Roulette: each player prepares a roulette for the other to bet on.

Rule text: ``seeds/stationary-roulette.txt``; the authoritative reading is the
"Stationary Roulette" section of ``RULINGS.md``; decisions of our own are listed
under "Rulings" in ``docs/games/stationary-roulette.md``.

Round 0 is the preparation phase. In round r (0..9) each player prepares the
roulette for round r+1; in round r (1..10) each player bets on the roulette the
opponent prepared in round r-1. Both submissions are simultaneous and may be
revised until the deadline; the round closes only at its deadline
(:meth:`StationaryRoulette.apply_timeout`), which settles it.

State (plain JSON data)::

    players        [a, b]
    seed           the match seed (the game has no chance; kept for the record)
    round          the open round 0..10 (once over: the round the match ended in)
    initial_chips  {player: chips at the start of the match}
    chips          {player: chips now}
    points         {player: points}
    black_taken    {player: gross chips taken through own Black roulettes}
    black_lost     {player: chips lost to Black takes, for the 100-chip cap}
    roulettes      {player: [roulette prepared in round i, or None when missed]}
    pending        {player: {"roulette": roulette | None, "bet": bet | None}}
    history        [settlement record of round 0, 1, ...]
    transfers      chip movements, see :func:`referee.games.base.transfer`
    result         None while the match runs, else the fields of :class:`Result`

A roulette is ``{"winning": colour, "points": {colour: n}}``; a bet is ``{colour: n}``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.games.base import (
    HOUSE,
    Applied,
    GameError,
    Move,
    ParseError,
    Result,
    State,
    Step,
    clone,
    transfer,
)

COLOURS = ("Gold", "Silver", "Black")

# SETUP 1-2: a preparation phase (round 0), then 10 rounds of 24 hours each.
ROUNDS = 10
ROUND_HOURS = 24.0
# PREPARING A ROULETTE 1 / ruling: roulettes are prepared in rounds 0..9, none in round 10.
LAST_PREPARATION_ROUND = ROUNDS - 1
# PREPARING A ROULETTE 2b: 40 points, Gold at least 25, Silver at least 5, Black none.
ROULETTE_POINTS = 40
MIN_GOLD = 25
MIN_SILVER = 5
# PREPARING A ROULETTE 2a: each colour is a player's winning colour at most 5 times.
MAX_WINNING_COLOUR_USES = 5
# GAMEPLAY 3 / 3a: 40 points to bet, on at most 2 colours; ruling: a total under 40 is legal.
BET_POINTS = 40
MAX_BET_COLOURS = 2
# SCORING 2a: 20 bonus points for an all-in single-colour bet.
SINGLE_COLOUR_BONUS = 20
# SCORING 3: the preparer of a Black roulette takes 40 chips minus the bet on Black.
BLACK_TAKE = 40
# SCORING 3d: the preparer of a Black roulette pays the LGT 10 chips.
LGT_PAYMENT = 10
# SCORING 3a / END OF GAME 3: at most 100 chips lost to Black takes, then forfeit.
CHIP_CAP = 100
# INACTIVITY 1 and 3: 60 points to the opponent of a missing preparer; 5 chips per miss.
INACTIVITY_POINTS = 60
INACTIVITY_FEE = 5
# END OF GAME 2: the winner takes 1 chip for every 10 points of lead.
POINTS_PER_LEAD_CHIP = 10
# Ruling (game page): starting chips when the match options give none.
DEFAULT_CHIPS = 100

# INACTIVITY 2: a missed bet is a bet of 0 on every colour.
NO_BET: dict[str, int] = {colour: 0 for colour in COLOURS}
VICTORY_POINTS = {"win": 1.0, "loss": 0.0, "draw": 0.5}


# --------------------------------------------------------------------------- rules


def round_title(round_no: int) -> str:
    return "Preparation phase" if round_no == 0 else f"Round {round_no} of {ROUNDS}"


def step_key(round_no: int) -> str:
    return f"round-{round_no}"


def prepares_in(round_no: int) -> bool:
    """Roulettes are prepared in the preparation phase and rounds 1-9 (PREPARING 1)."""
    return round_no <= LAST_PREPARATION_ROUND


def uses_left(roulettes: Sequence[dict[str, Any] | None]) -> dict[str, int]:
    """Remaining winning-colour uses after these roulettes (PREPARING 2a); a missed
    preparation uses no colour (ruling: "the colour count is not used")."""
    used = {colour: 0 for colour in COLOURS}
    for roulette in roulettes:
        if roulette is not None:
            used[roulette["winning"]] += 1
    return {colour: MAX_WINNING_COLOUR_USES - n for colour, n in used.items()}


def roulette_problems(roulette: dict[str, Any], left: dict[str, int]) -> list[str]:
    """Why a roulette breaks PREPARING 2 (empty when legal); ``left`` are the
    preparer's remaining winning-colour uses, not counting the pending roulette."""
    points = roulette["points"]
    problems = []
    if points["Gold"] < MIN_GOLD:
        problems.append(f"Gold must have at least {MIN_GOLD} points; you placed {points['Gold']}.")
    if points["Silver"] < MIN_SILVER:
        problems.append(f"Silver must have at least {MIN_SILVER} points; you placed {points['Silver']}.")
    if points["Black"] != 0:
        problems.append(f"Black cannot have any points; you placed {points['Black']}.")
    total = sum(points.values())
    if total != ROULETTE_POINTS:
        problems.append(f"The points must add up to exactly {ROULETTE_POINTS}; yours add up to {total}.")
    if left[roulette["winning"]] <= 0:
        problems.append(
            f"You have already made {roulette['winning']} the winning colour "
            f"{MAX_WINNING_COLOUR_USES} times, the most the rules allow; choose another winning colour."
        )
    return problems


def bet_problems(bet: dict[str, int]) -> list[str]:
    """Why a bet breaks GAMEPLAY 3 (empty when legal): non-negative, at most 2
    colours (colours with 0 do not count), total at most 40."""
    problems = [f"A bet cannot be negative; you bet {n} on {colour}." for colour, n in bet.items() if n < 0]
    used = [colour for colour, n in bet.items() if n > 0]
    if len(used) > MAX_BET_COLOURS:
        problems.append(
            f"You may bet on at most {MAX_BET_COLOURS} colours; you bet on {', '.join(used[:-1])} and {used[-1]}."
        )
    total = sum(bet.values())
    if total > BET_POINTS:
        problems.append(f"You have {BET_POINTS} points to bet; your bets add up to {total}.")
    return problems


def single_colour(bet: dict[str, int]) -> str | None:
    """The colour of an all-40-on-one-colour bet, else None. Ruling: 40 on one colour
    and 0 on another counts as all 40 on one colour."""
    for colour, n in bet.items():
        if n == BET_POINTS:
            return colour
    return None


def single_colour_bonus(winning: str, bet: dict[str, int]) -> str | None:
    """SCORING 2a: who earns the 20 bonus points, "bettor" or "preparer" (None: nobody).
    Ruling: this holds when the winning colour is Black too."""
    colour = single_colour(bet)
    if colour is None:
        return None
    return "bettor" if colour == winning else "preparer"


def black_take(bet: dict[str, int]) -> int:
    """SCORING 3: the preparer of a Black roulette takes 40 chips minus the bet on Black."""
    return BLACK_TAKE - bet["Black"]


def lead_chips(lead: int) -> int:
    """END OF GAME 2: 1 chip for every 10 points of lead (ruling: floor(lead / 10))."""
    return lead // POINTS_PER_LEAD_CHIP


@dataclass(frozen=True)
class RouletteScore:
    preparer_points: int  # points on the winning colour, bonus excluded
    bettor_points: int
    bonus_to: str | None  # "preparer", "bettor" or None
    take: int  # chips the preparer takes from the bettor (Black only)


def score_roulette(roulette: dict[str, Any], bet: dict[str, int]) -> RouletteScore:
    """SCORING 2-3: W Gold or Silver: both earn their points on W (the preparer its
    placed points, the bettor its bet); W Black: no points, the preparer takes chips.
    The single-colour bonus applies in both cases."""
    winning = roulette["winning"]
    if winning == "Black":
        return RouletteScore(0, 0, single_colour_bonus(winning, bet), black_take(bet))
    return RouletteScore(roulette["points"][winning], bet[winning], single_colour_bonus(winning, bet), 0)


# --------------------------------------------------------------------------- parsing

_HEADERS = {"roulette": "roulette", "bet": "bet", "bets": "bet"}
_WINNING_KEY = re.compile(r"win(?:ning|ner)?(?: colou?r)?|colou?r")
_POINTS_VALUE = re.compile(r"([-+]?\d+)\s*(?:points?|pts?|p)?\.?", re.IGNORECASE)
_ZERO_VALUES = {"", "-", "\u2013", "\u2014"}
_BULLET = re.compile(r"^[-*\u2022]\s+")


@dataclass(frozen=True)
class _Line:
    text: str  # the line as written (stripped), quoted in errors
    key: str
    value: str


@dataclass
class _Section:
    kind: str  # "roulette" or "bet"
    header: str
    lines: list[_Line]


def _header(line: str) -> str | None:
    return _HEADERS.get(line.rstrip(":").strip().lower())


def _key(text: str) -> str | None:
    """ "winning", a colour, or None; colour names may be abbreviated to a prefix."""
    key = " ".join(text.lower().split())
    if _WINNING_KEY.fullmatch(key):
        return "winning"
    key = re.sub(r" colou?r$", "", key)
    matches = [colour for colour in COLOURS if key and colour.lower().startswith(key)]
    return matches[0] if len(matches) == 1 else None


def _split(line: str) -> tuple[str, str]:
    """Split an entry line at ':' or '=', else after its longest known key."""
    match = re.match(r"([^:=]*?)\s*[:=]\s*(.*)", line)
    if match:
        return match[1], match[2].strip()
    words = line.split()
    for n in range(len(words), 0, -1):
        if _key(" ".join(words[:n])):
            return " ".join(words[:n]), " ".join(words[n:])
    return words[0], " ".join(words[1:])


def _is_entry(key: str, value: str) -> bool:
    """A known key, or a short name followed by a number or a colour ("Purple: 5", "W: Gold")."""
    if _key(key) is not None:
        return True
    return len(key.split()) <= 2 and (re.match(r"[-+]?\d", value) is not None or _key(value) in COLOURS)


def _points(line: _Line, colour: str) -> int:
    value = line.value.strip()
    if value in _ZERO_VALUES:
        return 0
    match = _POINTS_VALUE.fullmatch(value)
    if match is None:
        raise ParseError(f"I could not read {value!r} as a whole number of points for {colour}", line.text)
    return int(match[1])


def _colour(line: _Line) -> str:
    value = line.value.strip().rstrip(".!").strip()
    if not value:
        raise ParseError("The winning colour is empty; write Gold, Silver or Black", line.text)
    colour = _key(value)
    if colour is None or colour == "winning":
        raise ParseError(f"{value!r} is not a colour; the winning colour must be Gold, Silver or Black", line.text)
    return colour


def _sections(text: str) -> list[_Section]:
    """Group entry lines under their headers. Lines before the first header are
    ignored; a line that is not an entry ("Thanks!") ends a section; an entry line
    outside every section is an error, as is an unreadable entry inside one."""
    sections: list[_Section] = []
    inside = False
    for raw in text.splitlines():
        line = _BULLET.sub("", raw.strip())
        if not line:
            continue
        kind = _header(line)
        if kind is not None:
            if any(section.kind == kind for section in sections):
                raise ParseError(f"Your mail has two {kind.upper()} sections; send only one", line)
            sections.append(_Section(kind, line, []))
            inside = True
            continue
        if not sections:
            continue
        key, value = _split(line)
        if not _is_entry(key, value):
            inside = False
            continue
        if not inside:
            raise ParseError("This line is not under a ROULETTE or BET header; put it in its section", line)
        sections[-1].lines.append(_Line(line, key, value))
    return sections


def _section_entries(section: _Section) -> dict[str, _Line]:
    entries: dict[str, _Line] = {}
    for line in section.lines:
        key = _key(line.key)
        if key is None:
            expected = (
                "Winning colour, Gold, Silver and Black" if section.kind == "roulette" else "Gold, Silver and Black"
            )
            raise ParseError(
                f"I do not understand {line.key.strip()!r}; a {section.kind.upper()} has the lines {expected}",
                line.text,
            )
        if key == "winning" and section.kind == "bet":
            raise ParseError("A BET has no winning colour; only the ROULETTE you prepare has one", line.text)
        if key in entries:
            name = "The winning colour" if key == "winning" else key
            raise ParseError(f"{name} appears twice in your {section.kind.upper()} section", line.text)
        entries[key] = line
    return entries


def _roulette_move(section: _Section) -> Move:
    entries = _section_entries(section)
    if "winning" not in entries:
        raise ParseError(
            'The winning colour is missing from your ROULETTE section (add a line like "Winning colour: Gold")',
            section.header,
        )
    for colour in COLOURS:
        if colour not in entries:
            raise ParseError(
                f'{colour} is missing from your ROULETTE section (add a line like "{colour}: 0")', section.header
            )
    return {
        "type": "roulette",
        "winning": _colour(entries["winning"]),
        "points": {colour: _points(entries[colour], colour) for colour in COLOURS},
    }


def _bet_move(section: _Section) -> Move:
    entries = _section_entries(section)
    if not entries:
        raise ParseError('Your BET section has no colour lines (write lines like "Gold: 20")', section.header)
    return {
        "type": "bet",
        "bets": {colour: _points(entries[colour], colour) if colour in entries else 0 for colour in COLOURS},
    }


# --------------------------------------------------------------------------- moves


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _points_shape(points: dict[Any, Any]) -> str | None:
    """Why a colour -> points mapping is malformed (None when well formed)."""
    for key, value in points.items():
        if key not in COLOURS:
            return f"{key!r} is not a colour; the colours are Gold, Silver and Black."
        if not _is_int(value):
            return f"The points on {key} must be a whole number; you gave {value!r}."
    return None


def _opponent(state: State, player: str) -> str:
    a, b = state["players"]
    return str(b if player == a else a)


def _bettable(state: State, player: str) -> dict[str, Any] | None:
    """The roulette ``player`` bets on this round: the opponent's from last round."""
    round_no = state["round"]
    if round_no == 0:
        return None
    roulette: dict[str, Any] | None = state["roulettes"][_opponent(state, player)][round_no - 1]
    return roulette


def _nothing_to_bet(state: State) -> str:
    if state["round"] == 0:
        return "There is nothing to bet on in the preparation phase; betting starts in round 1."
    missed_in = "the preparation phase" if state["round"] == 1 else f"round {state['round'] - 1}"
    return f"There is nothing to bet on this round: your opponent prepared no roulette in {missed_in}."


# --------------------------------------------------------------------------- settlement


class _Settlement:
    """The settlement of one round, in the ruled order: points and bonuses; the net
    Black take (capped); LGT payments for Black roulettes; inactivity fees; then the
    cap and bankruptcy checks (and the end of the match after round 10)."""

    def __init__(self, state: State):
        self.s = state
        self.players: list[str] = state["players"]
        self.round: int = state["round"]
        self.key = step_key(self.round)
        self.points_before = dict(state["points"])
        self.missed: dict[str, list[str]] = {p: [] for p in self.players}
        self.losses: dict[str, list[str]] = {p: [] for p in self.players}
        self.entry: dict[str, Any] = {
            "round": self.round,
            "title": round_title(self.round),
            "prepared": None,
            "missed": self.missed,
            "inactivity_points": {p: 0 for p in self.players},
            "roulettes": [],
            "black": None,
            "payments": [],
        }

    def run(self) -> None:
        self.record_preparations()
        self.score_roulettes()
        self.settle_black_takes()
        self.pay_lgt()
        self.pay_inactivity_fees()
        losers = [p for p in self.players if self.losses[p]]
        if losers:
            self.end_by_losses(losers)
        elif self.round == ROUNDS:
            self.end_by_points()
        s = self.s
        self.entry.update(
            points_gained={p: s["points"][p] - self.points_before[p] for p in self.players},
            points=dict(s["points"]),
            chips=dict(s["chips"]),
            black_taken=dict(s["black_taken"]),
            black_lost=dict(s["black_lost"]),
            losses=self.losses,
        )
        s["history"].append(self.entry)
        s["pending"] = {p: {"roulette": None, "bet": None} for p in self.players}
        if s["result"] is None:
            s["round"] = self.round + 1

    def pay(self, frm: str, to: str, owed: int, reason: str) -> int:
        """Pay ``owed`` chips, or all ``frm`` holds when that is less; returns what was paid."""
        if owed == 0:
            return 0
        chips = self.s["chips"]
        paid: int = min(owed, chips[frm])
        transfer(self.s, frm, to, paid, reason, self.key)
        chips[frm] -= paid
        if to != HOUSE:
            chips[to] += paid
        self.entry["payments"].append({"from": frm, "to": to, "owed": owed, "paid": paid, "reason": reason})
        return paid

    def pay_or_go_bankrupt(self, frm: str, to: str, owed: int, reason: str) -> int:
        """Bankruptcy (SCORING 3b): owing more than you hold, you pay what you hold and lose."""
        paid = self.pay(frm, to, owed, reason)
        if paid < owed:
            self.losses[frm].append(f"{frm} owed {owed} chips ({reason}) but held only {paid} and is bankrupt")
        return paid

    def record_preparations(self) -> None:
        """INACTIVITY 1: no roulette by the deadline gives the opponent 60 points."""
        if not prepares_in(self.round):
            return
        prepared = {}
        for p in self.players:
            roulette = self.s["pending"][p]["roulette"]
            self.s["roulettes"][p].append(roulette)
            prepared[p] = roulette is not None
            if roulette is None:
                self.missed[p].append("roulette")
                opponent = _opponent(self.s, p)
                self.entry["inactivity_points"][opponent] += INACTIVITY_POINTS
                self.s["points"][opponent] += INACTIVITY_POINTS
        self.entry["prepared"] = prepared

    def score_roulettes(self) -> None:
        """Score the roulettes prepared last round against the bets made on them."""
        if self.round == 0:
            return
        for preparer in self.players:
            roulette = self.s["roulettes"][preparer][self.round - 1]
            if roulette is None:
                continue
            bettor = _opponent(self.s, preparer)
            bet = self.s["pending"][bettor]["bet"]
            if bet is None:
                self.missed[bettor].append("bet")
                bet = dict(NO_BET)
            score = score_roulette(roulette, bet)
            bonus_player = {"preparer": preparer, "bettor": bettor}.get(score.bonus_to or "")
            earned = {preparer: score.preparer_points, bettor: score.bettor_points}
            if bonus_player is not None:
                earned[bonus_player] += SINGLE_COLOUR_BONUS
            for p, n in earned.items():
                self.s["points"][p] += n
            self.entry["roulettes"].append(
                {
                    "preparer": preparer,
                    "bettor": bettor,
                    "prepared_in": self.round - 1,
                    "winning": roulette["winning"],
                    "points": dict(roulette["points"]),
                    "bet": bet,
                    "bet_missed": self.s["pending"][bettor]["bet"] is None,
                    "unbet": BET_POINTS - sum(bet.values()),
                    "single_colour": single_colour(bet),
                    "points_on_winning": {preparer: score.preparer_points, bettor: score.bettor_points},
                    "bonus": None if bonus_player is None else {"to": bonus_player, "points": SINGLE_COLOUR_BONUS},
                    "earned": earned,
                    "take": score.take,
                }
            )

    def settle_black_takes(self) -> None:
        """SCORING 3, 3a-c: only the net of the round's takes moves; the chips a player
        actually loses to takes are capped at 100, the payment reaching 100 is cut and
        that player forfeits."""
        black = [r for r in self.entry["roulettes"] if r["winning"] == "Black"]
        if not black:
            return
        takes = {p: 0 for p in self.players}
        for r in black:
            takes[r["preparer"]] += r["take"]
        a, b = self.players
        net = takes[a] - takes[b]
        taker, payer = (a, b) if net >= 0 else (b, a)
        owed = abs(net)
        cut = 0
        paid = 0
        if owed:
            due = min(owed, CHIP_CAP - self.s["black_lost"][payer])
            cut = owed - due
            paid = self.pay_or_go_bankrupt(payer, taker, due, "Black take")
            self.s["black_lost"][payer] += paid
            if self.s["black_lost"][payer] >= CHIP_CAP:
                self.losses[payer].append(f"{payer} has lost {CHIP_CAP} chips to Black takes and forfeits")
        # Gross takes (the tiebreak): the part offset by the other take counts in full.
        for p in self.players:
            self.s["black_taken"][p] += takes[p] - (owed - paid if p == taker else 0)
        self.entry["black"] = {
            "takes": takes,
            "net": owed,
            "from": payer if owed else None,
            "to": taker if owed else None,
            "cut_by_cap": cut,
            "paid": paid,
        }

    def pay_lgt(self) -> None:
        """SCORING 3d: each preparer of a Black roulette pays the LGT 10 chips."""
        for r in self.entry["roulettes"]:
            if r["winning"] == "Black":
                self.pay_or_go_bankrupt(r["preparer"], HOUSE, LGT_PAYMENT, "LGT payment for a Black roulette")

    def pay_inactivity_fees(self) -> None:
        """INACTIVITY 3: each miss costs the inactive player 5 chips to the LGT."""
        for p in self.players:
            for miss in self.missed[p]:
                self.pay_or_go_bankrupt(p, HOUSE, INACTIVITY_FEE, f"inactivity fee: no {miss}")

    def finish(self, outcome: dict[str, str], reason: str) -> None:
        self.s["result"] = {
            "outcome": outcome,
            "victory_points": {p: VICTORY_POINTS[o] for p, o in outcome.items()},
            "reason": reason,
            "scores": dict(self.s["points"]),
        }

    def end_by_losses(self, losers: list[str]) -> None:
        """Cap or bankruptcy: the match ends at once, no point-lead transfer; if both
        players lose in the same settlement, the match is a draw."""
        reasons = "; ".join(reason for p in losers for reason in self.losses[p])
        if len(losers) == 2:
            self.finish(
                {p: "draw" for p in self.players}, f"Both players lost in the same settlement ({reasons}): a draw."
            )
            return
        loser = losers[0]
        winner = _opponent(self.s, loser)
        self.finish({winner: "win", loser: "loss"}, f"{winner} wins: {reasons}.")

    def end_by_points(self) -> None:
        """END OF GAME 1-2: most points wins; tie -> more gross chips taken through own
        Black roulettes; still tied -> draw. The winner takes floor(lead / 10) chips."""
        a, b = self.players
        points, taken = self.s["points"], self.s["black_taken"]
        if points[a] != points[b]:
            winner = a if points[a] > points[b] else b
            loser = _opponent(self.s, winner)
            lead = points[winner] - points[loser]
            paid = self.pay(loser, winner, lead_chips(lead), "point lead")
            reason = (
                f"{winner} wins on points, {points[winner]} to {points[loser]}, "
                f"and takes {paid} chips from {loser} for the lead of {lead} points."
            )
        elif taken[a] != taken[b]:
            winner = a if taken[a] > taken[b] else b
            loser = _opponent(self.s, winner)
            reason = (
                f"Tied on {points[a]} points; {winner} wins the tiebreak with {taken[winner]} chips "
                f"taken through Black roulettes against {taken[loser]}."
            )
        else:
            self.finish(
                {a: "draw", b: "draw"},
                f"Tied on {points[a]} points and on {taken[a]} chips taken through Black roulettes: a draw.",
            )
            return
        self.finish({winner: "win", loser: "loss"}, reason)


# --------------------------------------------------------------------------- the game


class StationaryRoulette:
    name = "stationary-roulette"
    title = "Stationary Roulette"
    min_players = 2
    max_players = 2

    def __init__(self) -> None:
        self.step_kinds: dict[str, float] = {"round": ROUND_HOURS}

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
        if len(players) != 2 or players[0] == players[1]:
            raise GameError("Stationary Roulette needs two different players.")
        chips = {p: options.get("chips", {}).get(p, DEFAULT_CHIPS) for p in players}
        if not all(_is_int(n) and n >= 0 for n in chips.values()):
            raise GameError("Starting chips must be non-negative whole numbers.")
        return {
            "players": list(players),
            "seed": seed,
            "round": 0,
            "initial_chips": dict(chips),
            "chips": dict(chips),
            "points": {p: 0 for p in players},
            "black_taken": {p: 0 for p in players},
            "black_lost": {p: 0 for p in players},
            "roulettes": {p: [] for p in players},
            "pending": {p: {"roulette": None, "bet": None} for p in players},
            "history": [],
            "transfers": [],
            "result": None,
        }

    def step(self, state: State) -> Step | None:
        if state["result"] is not None:
            return None
        return Step(
            key=step_key(state["round"]),
            kind="round",
            players=tuple(state["players"]),
            simultaneous=True,
            title=round_title(state["round"]),
        )

    def awaiting(self, state: State) -> tuple[str, ...]:
        if state["result"] is not None:
            return ()
        return tuple(
            p
            for p in state["players"]
            if (prepares_in(state["round"]) and state["pending"][p]["roulette"] is None)
            or (_bettable(state, p) is not None and state["pending"][p]["bet"] is None)
        )

    # ----------------------------------------------------------------- mail text

    def parse(self, state: State, player: str, text: str) -> list[Move]:
        sections = _sections(text)
        if not sections:
            raise ParseError("I found no ROULETTE or BET section in your mail", None)
        return [_roulette_move(s) if s.kind == "roulette" else _bet_move(s) for s in sections]

    def form(self, state: State, player: str) -> str:
        if state["result"] is not None:
            return ""
        pending = state["pending"][player]
        parts = []
        if prepares_in(state["round"]):
            roulette = pending["roulette"] or self._example_roulette(state, player)
            lines = [f"{colour}: {roulette['points'][colour]}" for colour in COLOURS]
            parts.append("\n".join(["ROULETTE", f"Winning colour: {roulette['winning']}", *lines]))
        if _bettable(state, player) is not None:
            bet = pending["bet"] or {"Gold": 20, "Silver": 20, "Black": 0}
            parts.append("\n".join(["BET", *(f"{colour}: {bet[colour]}" for colour in COLOURS)]))
        return "\n\n".join(parts) + "\n" if parts else ""

    @staticmethod
    def _example_roulette(state: State, player: str) -> dict[str, Any]:
        """A legal example: the first colour with uses left (10 roulettes never use up all 15)."""
        left = uses_left(state["roulettes"][player])
        winning = next(colour for colour in COLOURS if left[colour] > 0)
        return {"winning": winning, "points": {"Gold": 30, "Silver": 10, "Black": 0}}

    # ----------------------------------------------------------------- moves

    def apply_move(self, state: State, player: str, move: Move) -> Applied:
        if state["result"] is not None:
            return Applied(state, False, "The match is over; no more submissions are accepted.", changed=False)
        if player not in state["players"]:
            return Applied(state, False, f"{player} is not playing in this match.", changed=False)
        kind = move.get("type") if isinstance(move, dict) else None
        if kind == "roulette":
            problem, value = self._check_roulette(state, player, move)
        elif kind == "bet":
            problem, value = self._check_bet(state, player, move)
        else:
            return Applied(state, False, "A submission is either a ROULETTE or a BET.", changed=False)
        if problem is not None:
            return Applied(state, False, problem, changed=False)
        new = clone(state)
        new["pending"][player][kind] = value
        return Applied(new, True)

    @staticmethod
    def _check_roulette(state: State, player: str, move: Move) -> tuple[str | None, Any]:
        if not prepares_in(state["round"]):
            return (
                f"Round {ROUNDS} is the last round: there is no roulette to prepare "
                f"(the last roulettes were prepared in round {LAST_PREPARATION_ROUND}).",
                None,
            )
        winning, points = move.get("winning"), move.get("points")
        if winning not in COLOURS:
            return f"The winning colour must be Gold, Silver or Black; you gave {winning!r}.", None
        if not isinstance(points, dict):
            return "The roulette must give points for Gold, Silver and Black.", None
        shape = _points_shape(points)
        if shape is not None:
            return shape, None
        roulette = {"winning": winning, "points": {colour: points.get(colour, 0) for colour in COLOURS}}
        problems = roulette_problems(roulette, uses_left(state["roulettes"][player]))
        return (" ".join(problems) if problems else None), roulette

    @staticmethod
    def _check_bet(state: State, player: str, move: Move) -> tuple[str | None, Any]:
        if _bettable(state, player) is None:
            return _nothing_to_bet(state), None
        bets = move.get("bets")
        if not isinstance(bets, dict):
            return "The bet must give points for Gold, Silver or Black.", None
        shape = _points_shape(bets)
        if shape is not None:
            return shape, None
        bet = {colour: bets.get(colour, 0) for colour in COLOURS}
        problems = bet_problems(bet)
        return (" ".join(problems) if problems else None), bet

    def apply_timeout(self, state: State) -> State:
        if state["result"] is not None:
            raise GameError("The match is over; there is no round to close.")
        new = clone(state)
        _Settlement(new).run()
        return new

    # ----------------------------------------------------------------- views

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        """What ``player`` may know (None: the public archive). Hidden until settled:
        winning colours of unsettled roulettes (also through colour-use counts), the
        opponent's submissions this round (not even whether they exist), the points
        of roulettes in play (public view only)."""
        if player is not None and player not in state["players"]:
            raise GameError(f"{player} is not playing in this match.")
        over = state["result"] is not None
        history = [self._entry_view(state, entry, player) for entry in state["history"]]
        revealed = max(len(state["history"]) - 1, 0)
        standings = {}
        for p in state["players"]:
            known = state["roulettes"][p] if p == player else state["roulettes"][p][:revealed]
            standings[p] = {
                "points": state["points"][p],
                "chips": state["chips"][p],
                "black_taken": state["black_taken"][p],
                "black_lost": state["black_lost"][p],
                "cap_left": CHIP_CAP - state["black_lost"][p],
                "uses_left": uses_left(known),
            }
        viewer = None if over else player  # a finished match has nothing personal left
        # built from references into the state, then cloned once: nothing shared leaves
        return clone(
            {
                "game": self.name,
                "round": state["round"],
                "rounds": ROUNDS,
                "title": round_title(state["round"]),
                "over": over,
                "players": list(state["players"]),
                "you": player,
                "opponent": None if player is None else _opponent(state, player),
                "standings": standings,
                "todo": None if viewer is None else self._todo(state, viewer),
                "pending": None if viewer is None else self._pending(state, viewer),
                "in_play": None if viewer is None else self._in_play(state, viewer),
                "last_result": history[-1] if history else None,
                "history": history,
                "final": state["result"],
            }
        )

    @staticmethod
    def _entry_view(state: State, entry: dict[str, Any], player: str | None) -> dict[str, Any]:
        """A settled round with each player's remaining colour uses as the viewer may
        know them: their own roulettes including the one just prepared, the
        opponent's only as far as revealed (prepared before that round)."""
        shown = dict(entry)  # the whole view is cloned once at the end
        shown["uses_left"] = {
            p: uses_left(state["roulettes"][p][: entry["round"] + (1 if p == player else 0)]) for p in state["players"]
        }
        return shown

    @staticmethod
    def _todo(state: State, player: str) -> dict[str, Any]:
        roulette = _bettable(state, player)
        return {
            "prepare": prepares_in(state["round"]),
            "bet": None
            if roulette is None
            else {
                "preparer": _opponent(state, player),
                "prepared_in": state["round"] - 1,
                "points": dict(roulette["points"]),
            },
            "nothing_to_bet": _nothing_to_bet(state) if roulette is None else None,
        }

    @staticmethod
    def _pending(state: State, player: str) -> dict[str, Any]:
        pending = state["pending"][player]  # view() clones the whole view
        roulette, bet = pending["roulette"], pending["bet"]
        return {
            "roulette": roulette,
            "bet": bet,
            "unbet": None if bet is None else BET_POINTS - sum(bet.values()),
            "uses_left_after": None if roulette is None else uses_left([*state["roulettes"][player], roulette]),
        }

    @staticmethod
    def _in_play(state: State, player: str) -> dict[str, Any] | None:
        """The viewer's own roulette the opponent is betting on this round."""
        if state["round"] == 0:
            return None
        roulette: dict[str, Any] | None = state["roulettes"][player][state["round"] - 1]  # cloned by view()
        return roulette

    def standings(self, state: State) -> list[str]:
        """One line per player for organizers, from the public view only."""
        public = self.view(state, None)
        return [
            f"{p}: {row['points']} points, {row['chips']} chips, {row['black_taken']} taken through Black "
            f"roulettes, {row['black_lost']} of {CHIP_CAP} lost to Black takes"
            for p, row in public["standings"].items()
        ]

    def result(self, state: State) -> Result | None:
        if state["result"] is None:
            return None
        return Result(**clone(state["result"]))


GAME = StationaryRoulette()
