"""Indian Poker's demo (``referee demo --game indian-poker``): a whole duel by mail between
alice and bob, bob the DMO (the generic part: :mod:`referee.demo`).

Each turn, the player whose turn the mail shows answers it two hours after the last reply
(:class:`DuelPlayer`, judging by the opponent's card, as a cautious human might). One
command asks for more than the rules allow (answered with an error, then corrected) and one
turn is missed (its default applies).

Rewind Hold'em's demo is this one (``referee.games.rewind_holdem.demo``): the same player
answers its mails, and adds REWIND when the mail offers it.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta

from referee.demo.base import PLAYERS, TWO_SEATS, Demo, Script, problem_line
from referee.mail.client import ScriptedClient

MAX_DEMO_TURNS = 2000  # a duel ends long before; the bound keeps a broken one from looping
ILLEGAL_TURN = 3  # from this turn on, alice's next command asks for more than the rules allow
MISSED_TURN = 6  # from this turn on, bob misses his next turn
CARD = re.compile(r"'s card: (\d+)")
# the form's line naming the turn: "Step: ..." since issue 20 (every game's form), "Turn: ..." before
TURN_LINE = re.compile(r"^(?:Step|Turn): .+$", re.MULTILINE)


class DuelPlayer:
    """Answers the latest mail that shows its turn (the one with a Step line in its form),
    judging by the opponent's card it shows, as a cautious human might; in Rewind Hold'em it
    adds REWIND now and then, when the mail offers it."""

    def __init__(self, key: str, client: ScriptedClient, rng: random.Random):
        self.key = key
        self.client = client
        self.rng = rng

    def answer(self, at: datetime, *, illegal: bool = False) -> str:
        mails = self.client.all()
        mail = next(m for m in reversed(mails) if TURN_LINE.search(m.text))
        text = mail.text
        card = CARD.search(text)
        seen = int(card.group(1)) if card else 5
        if illegal:
            command = "RAISE 999"
        elif "Not recorded" in mails[-1].subject:
            command = "CALL"  # the referee said no: the safe choice, always allowed
        elif seen >= 8 and "FOLD" in text and self.rng.random() < 0.6:
            command = "FOLD"
        elif seen <= 4 and "RAISE n" in text and self.rng.random() < 0.7:
            command = f"RAISE {self.rng.randint(1, 2)}"
        else:
            command = "CALL"
        lines = [command]
        if "REWIND, on a line of its own" in text and self.rng.random() < 0.5:
            lines.append("REWIND")
            command += " with REWIND"
        lines.append(TURN_LINE.search(text).group(0))
        self.client.reply(mail, "\n".join(lines), at)
        return command


class DuelScript(Script):
    """A turn per :meth:`play`: the player to act answers two hours after the last reply; the
    script's refused command and missed turn included."""

    max_steps = MAX_DEMO_TURNS

    def __init__(self, director):
        super().__init__(director)
        self.players = {key: DuelPlayer(key, director.clients[key], director.rng(key)) for key in PLAYERS}
        self.now = director.start
        self.turns = 0
        self.illegal_sent = self.missed = False

    def play(self) -> bool:
        d = self.director
        match = d.match()
        if match.status != "running":
            return False
        step, deadline = d.engine.step(match.state), match.deadline
        self.turns += 1
        to_act = step.players[0]
        if not self.missed and to_act == "bob" and self.turns >= MISSED_TURN:
            self.missed = True
            d.tick(deadline)
            d.say(f"  {step.title}: no answer from bob by the deadline: the default applies")
            return True
        self.now += timedelta(hours=2)
        illegal = not self.illegal_sent and to_act == "alice" and self.turns >= ILLEGAL_TURN
        command, reply = d.send(to_act, self.now, lambda at: self.players[to_act].answer(at, illegal=illegal))
        if "Not recorded" in reply.subject:
            self.illegal_sent = self.illegal_sent or illegal
            d.say(f"  {step.title}: {to_act} sends {command}: refused by mail ({problem_line(reply.text)})")
        else:
            d.say(f"  {step.title}: {to_act} sends {command}")
        return True


DEMO = Demo(
    seats=TWO_SEATS,
    match_lines='options = { dmo = "bob" }\nreminders = ["2h"]',
    script=DuelScript,
    who="alice vs bob",
)
