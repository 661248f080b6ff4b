"""Betting Minority's demo (``referee demo --game betting-minority``): a whole match by mail,
alice the EC and bob the DMO scripted, ten participants of whom four have an address and
get their list by mail (the generic part: :mod:`referee.demo`).

alice and bob (:class:`MinorityPlayer`) answer the mail that holds their form; the
participants with an address get their list and nothing else (:func:`participants_check`
says so at the end). The script (:class:`MinorityScript`) names a participant ambiguously
(an error, then the whole name), sends one participant to two rooms at once (the third
room), bets over the cap once (the penalty chip) and misses one betting turn (answered in
its extension); each finished round is summed up in three lines (:func:`minority_summary`).
"""

from __future__ import annotations

import random
import re
import unicodedata
from datetime import datetime, timedelta
from typing import Any

from referee.demo.base import PLAYERS, STEP_LINE, TWO_SEATS, Demo, Script, problem_line
from referee.games.betting_minority import ROOMS
from referee.mail.client import Received, ScriptedClient
from referee.store.models import Match

# ---------------------------------------------------------------------------- the players

# The ten participants, seats P1..P10 after the EC (alice) and the DMO (bob): key -> (name,
# time zone, has an address). Four have one and get their list by mail; the other six are
# never mailed. Accents and a shared first name, so that the DM players' mail names them
# by short id (alice), by name and by the name typed without its accents (bob), and "Ann"
# alone names two of them.
PARTICIPANTS = {
    "jose": ("José Núñez", "Europe/Madrid", True),
    "annlee": ("Ann Lee", "Europe/London", True),
    "annsmith": ("Ann Smith", "America/Chicago", False),
    "bjorn": ("Björn Larsson", "Europe/Stockholm", False),
    "chen": ("Chen Wei", "Asia/Shanghai", True),
    "francois": ("François Dupré", "Europe/Paris", False),
    "ngozi": ("Ngozi Okafor", "Africa/Lagos", True),
    "siobhan": ("Siobhán Kelly", "Europe/Dublin", False),
    "martins": ("Mārtiņš Ozols", "Europe/Riga", False),
    "zoe": ("Zoë Ångström", "Europe/Stockholm", False),
}
HOUR = timedelta(hours=1)
AMBIGUOUS_STEP = (1, 1)  # round, placement step: bob names "Ann" (two participants), then the whole name
CLASH_STEP = (1, 3)  # both send the same participant, to different rooms: they go to the third room
ILLEGAL_ROUND = 2  # from this round on, alice's first bet with a chip to spare is over the cap: the penalty chip
MISSED_ROUND = 3  # from this round on, bob misses his first betting turn and answers in its extension
MAX_MINORITY_STEPS = 1000  # a match ends long before; the bound keeps a broken one from looping


class MinorityPlayer:
    """A DM player of Betting Minority: reads the latest mail that holds a form (its
    ``Step:`` line names the step it answers) and replies to it like a mail client, the
    command typed on top and the Step line kept: MARKER before round 1, SEND in a
    placement step (chosen among the mail's "Not placed yet" list), BET, RAISE or CALL
    with rooms and chips in a betting turn (within the choices the mail lists). alice
    names participants by short id (P3); bob by name, typed without accents when a name
    has some (Jose Nunez), and writes his chips now and then as "2 on Uno and 1 on Dos"."""

    def __init__(self, key: str, client: ScriptedClient, rng: random.Random):
        self.key = key
        self.client = client
        self.rng = rng

    def prompt(self) -> Received:
        """The latest mail with a form: a step mail, a receipt or an error that shows the open step."""
        return next(m for m in reversed(self.client.all()) if STEP_LINE.search(m.text))

    def reply(self, command: str, at: datetime) -> str:
        mail = self.prompt()
        self.client.reply(mail, f"{command}\n{STEP_LINE.search(mail.text).group(0)}", at)
        return command

    # ----------------------------------------------------------------- the starting marker

    def marker(self) -> str:
        return self.rng.choice(["MARKER ME", "MARKER OPPONENT"])

    # ----------------------------------------------------------------- placement steps

    def unplaced(self) -> list[tuple[str, str]]:
        """(short id, name) of the participants the mail lists as not placed yet."""
        # the list may be wrapped: its continuation lines are indented under it
        found = re.search(r"^\s*Not placed yet: (.+(?:\n {4}\S.*)*)", self.prompt().text, re.MULTILINE)
        assert found, f"{self.key}'s mail lists nobody to send"
        items = " ".join(found.group(1).split()).split(", ")
        return [(short, name) for short, name in (item.split(" ", 1) for item in items)]

    def choose(self) -> tuple[tuple[str, str], str]:
        """A participant not placed yet, and a room: alice takes hers from the first half of
        the list, bob from the second (so they seldom send the same one by chance)."""
        free = self.unplaced()
        half = (len(free) + 1) // 2
        pick = free[:half] if self.key == "alice" else free[len(free) - half :]
        return self.rng.choice(pick), self.rng.choice(ROOMS)

    def send_command(self, who: tuple[str, str], room: str, *, written: str | None = None) -> str:
        """``SEND <participant> TO <room>``, the participant as this player names them."""
        short, name = who
        if written is None:
            written = short if self.key == "alice" else plain(name)
        return f"SEND {written} TO {room}"

    # ----------------------------------------------------------------- betting turns

    def bet_command(self) -> str:
        """A legal bet from the choices the mail lists, cautiously: an opening BET of at
        most a third of one's chips; then mostly a CALL, now and then (early in the
        betting) a RAISE that stakes no more than half of the smaller stack."""
        text = self.prompt().text
        step = STEP_LINE.search(text).group(0)
        turn = int(re.search(r"betting turn (\d+)", step).group(1))
        mine, theirs = (int(n) for n in re.search(r"^Chips: you (\d+), .* (\d+)\.$", text, re.MULTILINE).groups())
        opening = re.search(r"(\d+) chips? in all at most", text)
        if opening:
            most = min(int(opening.group(1)), max(1, mine // 3))
            return "BET " + self.rooms(self.rng.randint(1, most))
        need = int(re.search(r"CALL with (\d+) chips? in all", text).group(1))
        raising = re.search(r"RAISE to (\d+) to (\d+) chips in all", text)
        if raising and turn <= 2 and self.rng.random() < 0.4:
            low, high = int(raising.group(1)), min(int(raising.group(2)), min(mine, theirs) // 2)
            if low <= high:
                return "RAISE " + self.rooms(self.rng.randint(low, high))
        return "CALL " + self.rooms(need)

    def over_the_cap(self) -> str:
        """A well-formed bet one more than the most the mail says one may bet."""
        text = self.prompt().text
        most = int(re.search(r"The most you may bet now, in all: (\d+) chip", text).group(1))
        command = "BET" if re.search(r"chips? in all at most", text) else "RAISE"
        return f"{command} {self.rng.choice(ROOMS)} {most + 1}"

    def rooms(self, amount: int) -> str:
        """``amount`` chips on one room or split over two, as this player writes them."""
        if amount >= 2 and self.rng.random() < 0.5:
            split = sorted(self.rng.sample(ROOMS, 2), key=ROOMS.index)
            first = self.rng.randint(1, amount - 1)
            chips = [(split[0], first), (split[1], amount - first)]
        else:
            chips = [(self.rng.choice(ROOMS), amount)]
        if self.key == "bob" and self.rng.random() < 0.4:
            return " and ".join(f"{n} on {room}" for room, n in chips)
        return " ".join(f"{room} {n}" for room, n in chips)


def plain(name: str) -> str:
    """A name typed without its accents (``José Núñez`` -> ``Jose Nunez``)."""
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))


class MinorityScript(Script):
    """The script of the Betting Minority demo, a step per :meth:`play`: it reads the open
    step from the database, has the DM player whose turn it is answer by mail (both, in a
    placement step), ticks the referee at each mail's arrival or at a deadline, and says a
    line per event and a summary per finished round. The players decide from their mail."""

    max_steps = MAX_MINORITY_STEPS

    def __init__(self, director):
        super().__init__(director)
        self.engine = director.engine
        self.players = {key: MinorityPlayer(key, director.clients[key], director.rng(key)) for key in PLAYERS}
        self.rounds_told = 0
        self.illegal_sent = self.missed = False

    def _match(self) -> Match:
        return self.director.match()

    def play(self) -> bool:
        """Play the open step (or the part of it the script has for it); False once the match is over."""
        match = self._match()
        if match.status != "running":
            return False
        step = self.engine.step(match.state)
        assert step is not None
        if step.kind == "marker":
            at = match.step_opened_at + 3 * HOUR
            command = self.players["bob"].marker()
            if self._send("bob", command, at, step.title):
                self._say(f"  {step.title}: bob {command}")
        elif step.kind == "send":
            self._placement(match.state, step, match.step_opened_at)
        else:
            self._betting(match.state, step, match.step_opened_at, match.deadline)
        self._tell_rounds()
        return True

    def check(self) -> tuple[bool, list[str]]:
        mailboxes = [key for key in self.director.clients if key not in PLAYERS]
        checked, line = participants_check(self.director.clients, mailboxes)
        return checked, [line]

    def _say(self, line: str) -> None:
        self.director.say(line)

    def _send(self, key: str, command: str, at: datetime, title: str) -> bool:
        """``key`` replies ``command`` to their latest form, arriving at ``at``; True if it
        was recorded, else the refusal (or penalty) is said."""
        _, answer = self.director.send(key, at, lambda at: self.players[key].reply(command, at))
        if "Not recorded" not in answer.subject:
            return True
        penalty = ": it costs the penalty chip" if "penalise" in answer.text else ""
        self._say(f"  {title}: {key} {command}: refused by mail{penalty} ({problem_line(answer.text)})")
        return False

    def _placement(self, state: dict, step: Any, opened: datetime) -> None:
        """Both DM players send a participant: the first an hour after the step opened, the
        second an hour later (alice first in odd rounds, bob in even ones)."""
        r, i = state["round"], state["send"]["step"]
        order = ("alice", "bob") if r % 2 else ("bob", "alice")
        first, second = (self.players[k] for k in order)
        who, room = first.choose()
        commands = {first.key: first.send_command(who, room)}
        at = opened + HOUR
        self._send(first.key, commands[first.key], at, step.title)
        at += HOUR
        if (r, i) == CLASH_STEP:  # the same participant, another room
            other = second.rng.choice([x for x in ROOMS if x != room])
            commands[second.key] = second.send_command(who, other)
        elif (r, i) == AMBIGUOUS_STEP and second.key == "bob":  # "Ann" names two participants
            ann = next(p for p in second.unplaced() if p[1].startswith("Ann ") and p != who)
            room2 = second.rng.choice(ROOMS)
            self._send("bob", second.send_command(ann, room2, written="Ann"), at, step.title)
            at += HOUR
            commands["bob"] = second.send_command(ann, room2, written=ann[1])
        else:
            commands[second.key] = second.send_command(*second.choose())
        self._send(second.key, commands[second.key], at, step.title)
        public = self.engine.view(self._match().state, None)
        if len(public["placements"]) <= len(state["placements"]):
            self._say(f"  {step.title}: alice {commands['alice']}; bob {commands['bob']}: the step is still open")
            return
        placed = public["placements"][-1]["placed"]
        shown = {p["id"]: f"{p['short']} {p['name']}" for p in public["participants"]}
        how = {"clash": " (sent to two rooms: the third)", "agreed": " (both sent them there)"}
        where = ", ".join(f"{shown[x['participant']]} in {x['room']}{how.get(x['how'], '')}" for x in placed)
        self._say(f"  {step.title}: alice {commands['alice']}; bob {commands['bob']} -> {where}")

    def _betting(self, state: dict, step: Any, opened: datetime, deadline: datetime) -> None:
        """The DM player to bet answers two hours into the turn; the script's illegal bet and
        missed turn are here."""
        key = step.players[0]
        player = self.players[key]
        if key == "bob" and state["round"] >= MISSED_ROUND and step.kind == "bet" and not self.missed:
            self.missed = True
            self.director.tick(deadline - 2 * HOUR)  # the reminder
            self.director.tick(deadline)
            extension = self._match().deadline - deadline
            self._say(
                f"  {step.title}: no bet from bob by the deadline: a missed betting turn; "
                f"the turn is extended by {extension.total_seconds() / 3600:g} hours"
            )
            return
        at = opened + 2 * HOUR
        spare = state["chips"]["alice"] > 1  # the penalty must not take her last chip
        if key == "alice" and state["round"] >= ILLEGAL_ROUND and not self.illegal_sent and spare:
            self.illegal_sent = True
            self._send(key, player.over_the_cap(), at, step.title)
            at += HOUR
        command = player.bet_command()
        if self._send(key, command, at, step.title):
            self._say(f"  {step.title}: {key} {command}")

    def _tell_rounds(self) -> None:
        history = self.engine.view(self._match().state, None)["history"]
        for entry in history[self.rounds_told :]:
            self._say(minority_summary(entry))
        self.rounds_told = len(history)


def minority_summary(entry: dict[str, Any]) -> str:
    """A finished round of Betting Minority in three lines: the rooms, the stakes and the chips."""
    roles = {"EC": "alice", "DMO": "bob"}
    rooms = []
    for room in ROOMS:
        c, winner = entry["counts"][room], entry["winners"][room]
        rooms.append(f"{room} alice {c['EC']} : bob {c['DMO']}{f', won by {winner}' if winner else ''}")
    stakes = ", ".join(f"{p} {_chips(entry['stakes'][p])}" for p in roles.values())
    paid = entry["payout"]["paid"]
    chips = ", ".join(f"{p} {entry['chips_before'][p]} -> {entry['chips'][p]}" for p in roles.values())
    lost = "".join(f"; {p} loses {n} for the missed turn" for p, n in entry["missed_loss"].items() if n)
    marker = entry["marker"]
    return (
        f"Round {entry['round']} paid out: entries in {'; '.join(rooms)}\n"
        f"  stakes {stakes}; paid alice {paid['alice']}, bob {paid['bob']}{lost}\n"
        f"  chips {chips}; the marker {'stays with' if marker == entry['marker_before'] else 'passes to'} {marker}"
    )


def _chips(placement: dict[str, int] | None) -> str:
    return " ".join(f"{room} {n}" for room, n in placement.items()) if placement else "nothing"


def participants_check(clients: dict[str, ScriptedClient], mailboxes: list[str]) -> tuple[bool, str]:
    """Each participant with an address holds exactly one mail, their list; and what to say of it."""
    counts = {key: len(clients[key].all()) for key in mailboxes}
    lists = {key: [m for m in clients[key].all() if "Your list" in m.subject] for key in mailboxes}
    ok = all(n == 1 and len(lists[key]) == 1 for key, n in counts.items())
    addresses = ", ".join(clients[key].address for key in mailboxes)
    without = len(PARTICIPANTS) - len(mailboxes)
    if ok:
        return True, (
            f"The participants' mailboxes ({addresses}) hold one mail each, their list; "
            f"the {without} participants without an address were never mailed."
        )
    wrong = ", ".join(f"{clients[key].address} {n}" for key, n in counts.items() if n != 1 or len(lists[key]) != 1)
    return False, f"WRONG: a participant's mailbox should hold exactly one mail, their list: {wrong}"


DEMO = Demo(
    seats={**TWO_SEATS, **PARTICIPANTS},
    match_lines='steps = { marker = "24h", send = "12h", bet = "24h" }\nreminders = ["2h"]',
    script=MinorityScript,
    who=(
        f"alice (EC) vs bob (DMO), {len(PARTICIPANTS)} participants "
        f"({sum(1 for _name, _tz, address in PARTICIPANTS.values() if address)} with an address)"
    ),
)
