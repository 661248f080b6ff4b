"""Pile's demo: alice and bob take counters by mail until the pile is empty, as any game's
demo does (:mod:`referee.demo.base`): who sits, the match's lines of the season file, and a
script the generic director runs. The script has alice take more than the pile allows once
(refused by mail, then corrected) and bob miss one turn (the default takes 1).
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta

from referee.demo.base import PLAYERS, TWO_SEATS, Demo, Script, problem_line
from referee.mail.client import ScriptedClient

TURN_LINE = re.compile(r"^Turn: (.+)$", re.MULTILINE)
PILE = re.compile(r"\bPile: (\d+)")
REFUSED_TURN = 2  # alice's first turn from this one on: TAKE 9, refused; then a legal one
MISSED_TURN = 3  # bob's first turn from this one on: left to its deadline
HOUR = timedelta(hours=1)


class PilePlayer:
    """Replies to the latest mail that shows the pile and holds the form (its ``Turn:``
    line) with a take of 1 to 3 (no more than the pile holds), the Turn line kept."""

    def __init__(self, key: str, client: ScriptedClient, rng: random.Random):
        self.key, self.client, self.rng = key, client, rng

    def take(self, at: datetime, *, amount: int | None = None) -> str:
        mail = next(m for m in reversed(self.client.all()) if TURN_LINE.search(m.text) and PILE.search(m.text))
        if amount is None:
            pile = int(PILE.search(mail.text).group(1))
            amount = self.rng.randint(1, min(3, pile))
        command = f"TAKE {amount}"
        self.client.reply(mail, f"{command}\n{TURN_LINE.search(mail.text).group(0)}", at)
        return command


class PileScript(Script):
    """A turn per :meth:`play`: the player to act answers two hours after it opened."""

    max_steps = 100

    def __init__(self, director):
        super().__init__(director)
        self.players = {key: PilePlayer(key, director.clients[key], director.rng(key)) for key in PLAYERS}
        self.refused = self.missed = False

    def play(self) -> bool:
        d = self.director
        match = d.match()
        if match.status != "running":
            return False
        step = d.engine.step(match.state)
        (key,) = step.players
        turn = match.state["turn"]
        if key == "bob" and turn >= MISSED_TURN and not self.missed:
            self.missed = True
            d.tick(match.deadline)
            d.say(f"  {step.title}: no answer from bob by the deadline: he takes 1")
            return True
        at = match.step_opened_at + 2 * HOUR
        player = self.players[key]
        if key == "alice" and turn >= REFUSED_TURN and not self.refused:
            self.refused = True
            command, answer = d.send(key, at, lambda at: player.take(at, amount=9))
            d.say(f"  {step.title}: alice {command}: refused by mail ({problem_line(answer.text)})")
            at += HOUR
        command, _ = d.send(key, at, player.take)
        d.say(f"  {step.title}: {key} {command}, {d.match().state['pile']} left")
        return True

    def check(self) -> tuple[bool, list[str]]:
        counts = {key: len(client.all()) for key, client in self.director.clients.items()}
        return all(counts.values()), [f"Mails: {', '.join(f'{key} {n}' for key, n in counts.items())}."]


DEMO = Demo(
    seats=TWO_SEATS,
    match_lines='options = { pile = 9 }\nreminders = ["2h"]',
    script=PileScript,
    who="alice vs bob",
    pace="a turn of 12 hours each, ",
)
