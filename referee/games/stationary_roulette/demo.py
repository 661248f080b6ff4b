"""Stationary Roulette's demo (``referee demo``, its default game): alice and bob play a
whole match by mail, one day of play per round (the generic part: :mod:`referee.demo`).

Each round, alice answers the round's mail three hours into it and bob five hours into it
(:class:`ScriptedPlayer`: a roulette and a bet, as the mail asks); the round is settled at
its deadline and summed up in a few lines (:func:`round_summary`). The script includes a
Black roulette, a rejected bet that is then corrected, and a missed round.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from referee.demo.base import PLAYERS, TWO_SEATS, Demo, Script, problem_line
from referee.mail.client import Received, ScriptedClient

ROUND = timedelta(hours=24)
ROUNDS = 11  # the preparation phase and ten rounds
BLACK_ROUND = 3  # alice's roulette prepared in this round wins on Black
REJECTED_BET_ROUND = 2  # bob's first bet this round names three colours and is rejected
# bob sends nothing this round (the round the demo has always played: the 5 written here
# before was shadowed by Betting Minority's MISSED_ROUND when both shared one module)
MISSED_ROUND = 3


class ScriptedPlayer:
    """Reads its mail and answers the form it was sent, like a careful human would."""

    def __init__(self, key: str, client: ScriptedClient, rng: random.Random):
        self.key = key
        self.client = client
        self.rng = rng
        self.uses = {"Gold": 0, "Silver": 0, "Black": 0}

    def send(self, round_no: int, at: datetime, *, illegal_bet: bool = False) -> None:
        prompt = self.latest_prompt()
        asked = {line.strip().upper() for line in prompt.text.splitlines()}
        parts = []
        if "ROULETTE" in asked and not illegal_bet:
            parts.append(self.roulette(round_no))
        if "BET" in asked:
            parts.append(self.bet(illegal=illegal_bet))
        text = "Hi referee,\n\n" + "\n\n".join(parts) + "\n\nThanks!\n-- \n" + self.key.title()
        self.client.reply(prompt, text, at)

    def latest_prompt(self) -> Received:
        mails = [m for m in self.client.all() if "ROULETTE" in m.text or "BET" in m.text]
        return mails[-1]

    def roulette(self, round_no: int) -> str:
        if self.key == "alice" and round_no == BLACK_ROUND:
            colour = "Black"
        else:
            colour = self.rng.choice([c for c in ("Gold", "Silver") if self.uses[c] < 5])
        self.uses[colour] += 1
        gold = self.rng.randint(25, 35)
        return f"ROULETTE\nWinning colour: {colour}\nGold: {gold}\nSilver: {40 - gold}\nBlack: 0"

    def bet(self, *, illegal: bool = False) -> str:
        if illegal:
            return "BET\nGold: 20\nSilver: 10\nBlack: 10"
        if self.rng.random() < 0.25:
            colour = self.rng.choice(["Gold", "Silver"])
            return f"BET\n{colour}: 40"
        first, second = self.rng.sample(["Gold", "Silver", "Black"], 2)
        a = self.rng.randint(5, 35)
        return f"BET\n{first}: {a}\n{second}: {40 - a}"


class RouletteScript(Script):
    """A round per :meth:`play`: alice's reply three hours in, bob's five hours in (the
    script's rejected bet and missed round included), the tick at its deadline, its summary."""

    max_steps = ROUNDS

    def __init__(self, director):
        super().__init__(director)
        self.players = {key: ScriptedPlayer(key, director.clients[key], director.rng(key)) for key in PLAYERS}
        self.round_no = 0
        self.over = False

    def play(self) -> bool:
        if self.over:
            return False
        d, round_no = self.director, self.round_no
        opened = d.start + round_no * ROUND
        notes: list[str] = []
        for offset, key in ((3, "alice"), (5, "bob")):
            at = opened + timedelta(hours=offset)
            if key == "bob" and round_no == MISSED_ROUND:
                continue
            player = self.players[key]
            if key == "bob" and round_no == REJECTED_BET_ROUND:
                _, error = d.send(key, at, lambda at, p=player: p.send(round_no, at, illegal_bet=True))
                notes.append(f"  bob's first reply was rejected by mail: {problem_line(error.text)}")
                at += timedelta(hours=1)
                notes.append("  bob sent a corrected bet an hour later; it was accepted")
            d.send(key, at, lambda at, p=player: p.send(round_no, at))
        d.tick(opened + ROUND)  # the deadline: the round is settled, results mailed
        public = d.public()
        d.say(round_summary(public["history"][-1]))
        for note in notes:
            d.say(note)
        self.over = public["over"]
        self.round_no += 1
        return True


def round_summary(entry: dict[str, Any]) -> str:
    """A settled round from the public record: each roulette's bet and points, the missed
    deadlines, the payments and the totals."""
    lines = [f"{entry['title']}:"]
    for r in entry["roulettes"]:
        bet = ", ".join(f"{c} {n}" for c, n in r["bet"].items() if n) or "nothing"
        extra = " (no bet sent)" if r["bet_missed"] else ""
        bonus = f", bonus +{r['bonus']['points']} to {r['bonus']['to']}" if r["bonus"] else ""
        lines.append(
            f"  {r['bettor']} bet {bet}{extra} on {r['preparer']}'s roulette -> {r['winning']}; "
            f"points {', '.join(f'{p} +{n}' for p, n in r['earned'].items())}{bonus}"
        )
    bettors = {r["bettor"] for r in entry["roulettes"]}
    if entry["round"] > 0:
        for p in entry["points"]:
            if p not in bettors:
                lines.append(f"  {p} had nothing to bet on: the opponent prepared no roulette last round")
    for p, missed in entry["missed"].items():
        if missed:
            lines.append(f"  {p} missed the deadline: no {' and no '.join(missed)}")
    for p, n in entry["inactivity_points"].items():
        if n:
            lines.append(f"  {p} +{n} points: the opponent prepared no roulette")
    for pay in entry["payments"]:
        lines.append(f"  {pay['from']} pays {pay['paid']} chips to {pay['to']} ({pay['reason']})")
    lines.append(
        "  totals: " + "; ".join(f"{p} {entry['points'][p]} points, {entry['chips'][p]} chips" for p in entry["points"])
    )
    return "\n".join(lines)


DEMO = Demo(
    seats=TWO_SEATS,
    match_lines='phase_length = "24h"\nreminders = ["2h"]',
    script=RouletteScript,
    who="alice vs bob",
    pace="one day of play per round, ",
)
