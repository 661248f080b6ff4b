"""A round of Stationary Roulette settled, in the ruled order (SCORING, INACTIVITY, END OF
GAME), and the settlement records the state keeps.

A settlement record in full (``Settlement.entry``) says everything a round's result mail
shows. When the next round is settled it is kept compact: ``round``, ``prepared``,
``roulettes`` (``[{"preparer", "bet", "bet_missed"}]``) and ``chips_before`` (the chips the
settlement was judged on), which with the roulettes and the record before it are all the
settlement read, so the archive (``view(state, None)``) rebuilds the full record by
settling the round again (:func:`settled_records`). So a state grows by a few hundred
bytes a round (some 6 KB after round 10 instead of 15 KB), not by a whole record, and
its copies, loads and stores cost little more in round 10 than in round 1. A state
stored when every record was kept in full reads the same; its records stay as they are
but the last, which becomes compact when the next round is settled.
"""

from __future__ import annotations

from typing import Any

from referee.games.base import HOUSE, State, opponent, plural, result_record, transfer
from referee.games.stationary_roulette.rules import (
    BET_POINTS,
    CHIP_CAP,
    INACTIVITY_FEE,
    INACTIVITY_POINTS,
    LGT_PAYMENT,
    NO_BET,
    ROUNDS,
    SINGLE_COLOUR_BONUS,
    lead_chips,
    prepares_in,
    round_title,
    score_roulette,
    single_colour,
    step_key,
)

# --------------------------------------------------------------------------- settlement records


def last_record(state: State) -> dict[str, Any]:
    """The last settled round's record, in full (as the settlement keeps it)."""
    last: dict[str, Any] = state["history"][-1]
    return last if "chips_before" not in last else settled_records(state)[-1]


def compact(entry: dict[str, Any]) -> dict[str, Any]:
    """A settlement record as kept once the next round is settled: what the settlement
    read that the rest of the state does not keep (see the module docstring). The chips
    it was judged on are its chips after, given back what it paid and taken what it got."""
    if "chips_before" in entry:
        return entry
    chips = dict(entry["chips"])
    for payment in entry["payments"]:
        chips[payment["from"]] += payment["paid"]
        if payment["to"] in chips:
            chips[payment["to"]] -= payment["paid"]
    return {
        "round": entry["round"],
        "prepared": entry["prepared"],
        "roulettes": [
            {"preparer": r["preparer"], "bet": r["bet"], "bet_missed": r["bet_missed"]} for r in entry["roulettes"]
        ],
        "chips_before": chips,
    }


def settled_records(state: State) -> list[dict[str, Any]]:
    """Every settled round's record in full, compact ones rebuilt by settling their round
    again from what it read: the chips it was judged on, the bets, the roulettes and the
    totals after the round before. The records share data with ``state``: copy them."""
    records: list[dict[str, Any]] = []
    for entry in state["history"]:
        if "chips_before" in entry:
            entry = resettle(state, entry, records[-1] if records else None)
        records.append(entry)
    return records


def resettle(state: State, compact: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    players = state["players"]
    round_no = compact["round"]
    roulettes = state["roulettes"]
    pending = {p: {"roulette": roulettes[p][round_no] if prepares_in(round_no) else None, "bet": None} for p in players}
    for record in compact["roulettes"]:
        pending[opponent(state, record["preparer"])]["bet"] = None if record["bet_missed"] else record["bet"]
    totals = {key: dict(before[key]) if before else {p: 0 for p in players} for key in TOTALS}
    again: State = {
        "players": players,
        "round": round_no,
        "chips": dict(compact["chips_before"]),
        **totals,
        "roulettes": {p: roulettes[p][:round_no] for p in players},
        "pending": pending,
        "history": [],
        "transfers": [],
        "result": None,
    }
    Settlement(again).run()
    record: dict[str, Any] = again["history"][0]
    return record


TOTALS = ("points", "black_taken", "black_lost")  # what a settlement adds to (chips: it is judged on live ones)


# --------------------------------------------------------------------------- settlement


class Settlement:
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
        if s["history"]:
            s["history"][-1] = compact(s["history"][-1])  # only the last round's is kept in full
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
            self.losses[frm].append(
                f"{frm} owed {plural(owed, 'chip')} ({reason}) but held only {paid} and is bankrupt"
            )
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
                other = opponent(self.s, p)
                self.entry["inactivity_points"][other] += INACTIVITY_POINTS
                self.s["points"][other] += INACTIVITY_POINTS
        self.entry["prepared"] = prepared

    def score_roulettes(self) -> None:
        """Score the roulettes prepared last round against the bets made on them."""
        if self.round == 0:
            return
        for preparer in self.players:
            roulette = self.s["roulettes"][preparer][self.round - 1]
            if roulette is None:
                continue
            bettor = opponent(self.s, preparer)
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
        self.s["result"] = result_record(outcome, reason, dict(self.s["points"]))

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
        winner = opponent(self.s, loser)
        self.finish({winner: "win", loser: "loss"}, f"{winner} wins: {reasons}.")

    def end_by_points(self) -> None:
        """END OF GAME 1-2: most points wins; tie -> more gross chips taken through own
        Black roulettes; still tied -> draw. The winner takes floor(lead / 10) chips."""
        a, b = self.players
        points, taken = self.s["points"], self.s["black_taken"]
        if points[a] != points[b]:
            winner = a if points[a] > points[b] else b
            loser = opponent(self.s, winner)
            lead = points[winner] - points[loser]
            paid = self.pay(loser, winner, lead_chips(lead), "point lead")
            reason = (
                f"{winner} wins on points, {points[winner]} to {points[loser]}, "
                f"and takes {plural(paid, 'chip')} from {loser} for the lead of {plural(lead, 'point')}."
            )
        elif taken[a] != taken[b]:
            winner = a if taken[a] > taken[b] else b
            loser = opponent(self.s, winner)
            reason = (
                f"Tied on {plural(points[a], 'point')}; {winner} wins the tiebreak with "
                f"{plural(taken[winner], 'chip')} taken through Black roulettes against {taken[loser]}."
            )
        else:
            self.finish(
                {a: "draw", b: "draw"},
                f"Tied on {plural(points[a], 'point')} and on {plural(taken[a], 'chip')} taken through Black "
                "roulettes: a draw.",
            )
            return
        self.finish({winner: "win", loser: "loss"}, reason)
