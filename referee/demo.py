"""``referee demo``: a throwaway season in which two scripted players play a whole
Stationary Roulette match by mail, on an accelerated clock (``--game indian-poker`` or
``--game rewind-holdem``: a whole duel instead; ``--game betting-minority``: a Betting
Minority match, the two DM players scripted, ten participants of whom four have an
address and get their list by mail; ``--game matchjack``: a 15-hand MatchJack match of
six scripted players at two tables at once, :mod:`referee.demo_matchjack`).

Everything goes through the real path: the referee delivers prompts into per-address
Maildirs; the scripted players read them and reply like a mail client (quoting the
original), into the referee's inbox Maildir, with delivery times on the virtual clock;
``Referee.tick`` processes them and closes each round at its deadline. The script
includes a Black roulette, a rejected bet that is then corrected, and a missed round.

The folder keeps the database, ``referee.toml``, ``season.toml`` and every mail, so that
``referee status`` and ``referee tick`` work afterwards, inside it or with ``--config``; the
demo ends by printing a ``status`` command that works as printed from where it was run.

``--transport imap`` plays the same match over real mail: a loopback Dovecot and Postfix of
the demo's own, the referee on IMAP and SMTP, the players sending by SMTP and reading by
IMAP (:mod:`referee.demo_mail`, which also says how the accelerated clock meets real
arrival times).
"""

from __future__ import annotations

import os
import random
import re
import shlex
import shutil
import sys
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from referee.config import ConfigError, ServiceConfig, load_season, load_service_config, new_secret
from referee.games import GAMES, Game
from referee.games.betting_minority import ROOMS
from referee.mail.client import Received, ScriptedClient
from referee.seasons import load_season as load_into_store
from referee.service import Referee
from referee.store.db import Store
from referee.store.models import Match

if TYPE_CHECKING:
    from referee.demo_mail import RealMail
    from referee.mailstack import MailStack

MARKER = "# referee demo folder"
GAME = "stationary-roulette"
ROUND = timedelta(hours=24)
PLAYERS = {
    "alice": ("Alice", "Europe/Berlin"),
    "bob": ("Bob", "America/New_York"),
}
BLACK_ROUND = 3  # alice's roulette prepared in this round wins on Black
REJECTED_BET_ROUND = 2  # bob's first bet this round names three colours and is rejected
MISSED_ROUND = 5  # bob sends nothing this round


DUELS = ("indian-poker", "rewind-holdem")
MINORITY = "betting-minority"
MATCHJACK = "matchjack"
GAMES_DEMOED = (GAME, *DUELS, MINORITY, MATCHJACK)
# MatchJack's six: alice and bob, and these four (key -> name, time zone), all with an address
MATCHJACK_PLAYERS = {
    "chiara": ("Chiara Rossi", "Europe/Rome"),
    "kenji": ("Kenji Sato", "Asia/Tokyo"),
    "priya": ("Priya Nair", "Asia/Kolkata"),
    "tomas": ("Tomás Silva", "America/Sao_Paulo"),
}
MATCHJACK_GARNETS = 12  # the season's starting garnets: FOLD STAYSET costs 5
TRANSPORTS = ("maildir", "imap")


def run_demo(
    folder: Path,
    *,
    seed: int,
    game: str = GAME,
    transport: str = "maildir",
    install: bool = False,
    out: TextIO = sys.stdout,
) -> int:
    """The demo match on Maildirs, or over real mail (``transport="imap"``: a loopback stack
    of its own; ``install``: the Debian packages installed first when missing)."""
    if game == MINORITY:
        return run_minority_demo(folder, seed=seed, transport=transport, install=install, out=out)
    if game == MATCHJACK:
        from referee.demo_matchjack import run_matchjack_demo

        return run_matchjack_demo(folder, seed=seed, transport=transport, install=install, out=out)
    if game != GAME:
        return run_duel_demo(folder, seed=seed, game=game, transport=transport, install=install, out=out)
    check_folder(folder)  # before a mail stack is started for nothing
    with _mail_stack(transport, install, out) as stack:
        return _play_roulette(folder, seed, stack, out)


@contextmanager
def _mail_stack(transport: str, install: bool, out: TextIO, users: tuple[str, ...] = ()) -> Iterator[MailStack | None]:
    """None for Maildirs; over IMAP a running stack (with mailboxes for ``users`` too, beside
    the referee's, alice's and bob's), removed when the demo ends however it ends."""
    if transport not in TRANSPORTS:
        raise ConfigError(f"no demo over {transport!r}: choose one of {', '.join(TRANSPORTS)}")
    if transport == "maildir":
        yield None
        return
    from referee.demo_mail import demo_stack

    with demo_stack(install=install, out=out, users=users) as stack:
        yield stack


def _play_roulette(folder: Path, seed: int, stack: MailStack | None, out: TextIO) -> int:
    folder, start, config, store, post, clients = _set_up(folder, seed, GAME, stack)
    players = {key: ScriptedPlayer(key, clients[key], random.Random(f"{seed}:{key}")) for key in PLAYERS}

    print(f"referee demo in {folder}", file=out)
    print(
        f"Stationary Roulette, alice vs bob, seed {seed}; one day of play per round, "
        f"starting {start:%Y-%m-%d %H:%M} UTC ({post.clock_note})\n",
        file=out,
    )
    post.tick(start)
    game = GAMES[GAME]
    notes: list[str] = []
    for round_no in range(11):
        opened = start + round_no * ROUND
        for offset, key in ((3, "alice"), (5, "bob")):
            at = opened + timedelta(hours=offset)
            if key == "bob" and round_no == MISSED_ROUND:
                continue
            player = players[key]
            if key == "bob" and round_no == REJECTED_BET_ROUND:
                post.advance(at)
                player.send(round_no, at, illegal_bet=True)
                post.tick(at)
                error = clients["bob"].latest()
                notes.append(f"  bob's first reply was rejected by mail: {problem_line(error.text)}")
                at += timedelta(hours=1)
                notes.append("  bob sent a corrected bet an hour later; it was accepted")
            post.advance(at)
            player.send(round_no, at)
            post.tick(at)
        post.tick(opened + ROUND)  # the deadline: the round is settled, results mailed
        with store.unit_of_work() as session:
            match = session.query(Match).filter_by(key="demo-1").one()
            public = game.view(match.state, None)
        print(round_summary(public["history"][-1]), file=out)
        for note in notes:
            print(note, file=out)
        notes.clear()
        if public["over"]:
            break

    _report_end(folder, config, store, game, post, out)
    return 0


def run_duel_demo(
    folder: Path,
    *,
    seed: int,
    game: str,
    transport: str = "maildir",
    install: bool = False,
    out: TextIO = sys.stdout,
) -> int:
    """A whole duel (Indian Poker or Rewind Hold'em) by mail: each scripted player answers
    the mail that shows their turn; one command with an amount the rules do not allow is
    answered with an error (and then corrected), and one turn is missed (its default applies)."""
    if game not in DUELS:
        raise ConfigError(f"no demo for {game!r}: choose one of {', '.join(GAMES_DEMOED)}")
    check_folder(folder)
    with _mail_stack(transport, install, out) as stack:
        return _play_duel(folder, seed, game, stack, out)


def _play_duel(folder: Path, seed: int, game: str, stack: MailStack | None, out: TextIO) -> int:
    engine = GAMES[game]
    folder, start, config, store, post, clients = _set_up(folder, seed, game, stack)
    players = {key: DuelPlayer(key, clients[key], random.Random(f"{seed}:{key}")) for key in PLAYERS}
    print(f"referee demo in {folder}", file=out)
    print(
        f"{engine.title}, alice vs bob, seed {seed}; starting {start:%Y-%m-%d %H:%M} UTC ({post.clock_note})\n",
        file=out,
    )
    post.tick(start)
    now = start
    turns = 0
    illegal_sent = missed = False
    while turns < MAX_DEMO_TURNS:
        with store.unit_of_work() as session:
            match = session.query(Match).filter_by(key="demo-1").one()
            if match.status != "running":
                break
            step, deadline = engine.step(match.state), match.deadline
        turns += 1
        to_act = step.players[0]
        if not missed and to_act == "bob" and turns >= MISSED_TURN:
            missed = True
            post.tick(deadline)
            print(f"  {step.title}: no answer from bob by the deadline: the default applies", file=out)
            continue
        now += timedelta(hours=2)
        illegal = not illegal_sent and to_act == "alice" and turns >= ILLEGAL_TURN
        post.advance(now)
        command = players[to_act].answer(now, illegal=illegal)
        post.tick(now)
        reply = clients[to_act].latest()
        if "Not recorded" in reply.subject:
            illegal_sent = illegal_sent or illegal
            print(f"  {step.title}: {to_act} sends {command}: refused by mail ({problem_line(reply.text)})", file=out)
        else:
            print(f"  {step.title}: {to_act} sends {command}", file=out)
    finished = _report_end(folder, config, store, engine, post, out)
    return 0 if finished else 1


MAX_DEMO_TURNS = 2000  # a duel ends long before; the bound keeps a broken one from looping
ILLEGAL_TURN = 3  # from this turn on, alice's next command asks for more than the rules allow
MISSED_TURN = 6  # from this turn on, bob misses his next turn
CARD = re.compile(r"'s card: (\d+)")
# the form's line naming the turn: "Step: ..." since issue 20 (every game's form), "Turn: ..." before
TURN_LINE = re.compile(r"^(?:Step|Turn): .+$", re.MULTILINE)


class DuelPlayer:
    """Answers the latest mail that shows its turn (the one with a Step line in its form),
    judging by the opponent's card it shows, as a cautious human might."""

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


# ---------------------------------------------------------------------------- Betting Minority

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
STEP_LINE = re.compile(r"^Step: .+$", re.MULTILINE)


def run_minority_demo(
    folder: Path, *, seed: int, transport: str = "maildir", install: bool = False, out: TextIO = sys.stdout
) -> int:
    """A whole Betting Minority match by mail: alice (the EC) and bob (the DMO) answer the
    mail that holds their form; the participants with an address get their list and
    nothing else. The script names a participant ambiguously (an error, then the whole
    name), sends one participant to two rooms at once (the third room), bets over the cap
    once (the penalty chip) and misses one betting turn (answered in its extension)."""
    check_folder(folder)
    mailboxes = tuple(key for key, (_name, _tz, address) in PARTICIPANTS.items() if address)
    with _mail_stack(transport, install, out, users=mailboxes) as stack:
        return _play_minority(folder, seed, stack, out)


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


def _play_minority(folder: Path, seed: int, stack: MailStack | None, out: TextIO) -> int:
    engine = GAMES[MINORITY]
    folder, start, config, store, post, clients = _set_up(folder, seed, MINORITY, stack)
    players = {key: MinorityPlayer(key, clients[key], random.Random(f"{seed}:{key}")) for key in PLAYERS}
    mailboxes = [key for key in clients if key not in PLAYERS]
    print(f"referee demo in {folder}", file=out)
    print(
        f"{engine.title}, alice (EC) vs bob (DMO), {len(PARTICIPANTS)} participants ({len(mailboxes)} with an "
        f"address), seed {seed}; starting {start:%Y-%m-%d %H:%M} UTC ({post.clock_note})\n",
        file=out,
    )
    post.tick(start)
    director = _Director(engine, store, post, players, out)
    for _ in range(MAX_MINORITY_STEPS):
        if not director.next_step():
            break
    checked, line = participants_check(clients, mailboxes)
    finished = _report_end(folder, config, store, engine, post, out, notes=[line])
    return 0 if finished and checked else 1


class _Director:
    """The script of the Betting Minority demo: it reads the open step from the database (as
    the duels' demo does), has the DM player whose turn it is answer by mail (both, in a
    placement step), ticks the referee at each mail's arrival or at a deadline, and prints
    a line per event and a summary per finished round. The players decide from their mail."""

    def __init__(self, engine: Game, store: Store, post: MaildirMail | RealMail, players: dict, out: TextIO):
        self.engine, self.store, self.post, self.players, self.out = engine, store, post, players, out
        self.rounds_told = 0
        self.illegal_sent = self.missed = False

    def _match(self) -> Match:
        with self.store.unit_of_work() as session:
            return session.query(Match).filter_by(key="demo-1").one()

    def next_step(self) -> bool:
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

    def _say(self, line: str) -> None:
        print(line, file=self.out)

    def _send(self, key: str, command: str, at: datetime, title: str) -> bool:
        """``key`` replies ``command`` to their latest form, arriving at ``at``; True if it
        was recorded, else the refusal (or penalty) is said."""
        self.post.advance(at)
        self.players[key].reply(command, at)
        self.post.tick(at)
        answer = self.players[key].client.latest()
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
            self.post.tick(deadline - 2 * HOUR)  # the reminder
            self.post.tick(deadline)
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


def _set_up(
    folder: Path, seed: int, game: str, stack: MailStack | None = None
) -> tuple[Path, datetime, ServiceConfig, Store, MaildirMail | RealMail, dict]:
    """The demo folder with its files, database and season, the referee on its Maildirs (or
    on the ``stack``: IMAP and SMTP), its mail, and a scripted mail client per player with
    an address (in Betting Minority the participants with one too: they read their list)."""
    folder = prepare_folder(folder)
    start = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
    write_files(folder, start, seed, game=game, stack=stack)
    config = load_service_config(folder / "referee.toml")
    store = Store(config.database)
    store.migrate()
    load_into_store(store, load_season(folder / "season.toml"), start - timedelta(hours=1))
    referee = Referee.configured(store, config)
    people = mailed(game)
    if stack is not None:
        from referee.demo_mail import RealMail

        post = RealMail(referee, store, config, stack, start, people)
        return folder, start, config, store, post, post.clients
    clients = {
        key: ScriptedClient(f"{key}@demo.test", name, config.mail.outbox / f"{key}@demo.test", config.mail.inbox)
        for key, name in people.items()
    }
    return folder, start, config, store, MaildirMail(referee, config), clients


def seated(game: str) -> dict[str, tuple[str, str, bool]]:
    """The demo match's players in seat order: key -> (name, time zone, has an address)."""
    players = {key: (name, tz, True) for key, (name, tz) in PLAYERS.items()}
    if game == MATCHJACK:
        return {**players, **{key: (name, tz, True) for key, (name, tz) in MATCHJACK_PLAYERS.items()}}
    return {**players, **PARTICIPANTS} if game == MINORITY else players


def mailed(game: str) -> dict[str, str]:
    """The demo match's players who have an address (key -> name): the ones with a mailbox."""
    return {key: name for key, (name, _tz, address) in seated(game).items() if address}


class MaildirMail:
    """The demo's mail on Maildirs: the referee's ticks at the demo's times, each mail there
    at once, delivered at the time its sender chose (``RealMail`` is the same over IMAP)."""

    clock_note = "virtual clock"

    def __init__(self, referee: Referee, config: ServiceConfig):
        self.referee = referee
        self.config = config

    def advance(self, at: datetime) -> None:
        """Nothing to do: a player's mail is delivered with the time it is sent at."""

    def tick(self, at: datetime):
        return self.referee.tick(at)

    async def atick(self, at: datetime, *, wait: bool = True):
        return await self.referee.atick(at)

    def keep(self, folder: Path) -> list[str]:
        """Where the mail is (it stays there)."""
        outbox, inbox = self.config.mail.outbox, self.config.mail.inbox
        mails = sum(1 for p in outbox.rglob("*") if p.is_file() and p.parent.name in ("new", "cur"))
        replies = sum(1 for p in inbox.rglob("*") if p.is_file() and p.parent.name in ("new", "cur"))
        return [
            f"{mails} mails from the referee are in {outbox}/<address>/new/,",
            f"{replies} replies from the players in {inbox}/cur/.",
        ]


def _report_end(
    folder: Path,
    config: ServiceConfig,
    store: Store,
    engine: Game,
    post: MaildirMail | RealMail,
    out: TextIO,
    notes: Sequence[str] = (),
) -> bool:
    """The final standings, where the mails are (and the ``notes`` on them), the archive and
    the status command; True if the match finished."""
    with store.unit_of_work() as session:
        match = session.query(Match).filter_by(key="demo-1").one()
        print("\nFinal standings:", file=out)
        for line in engine.standings(match.state):
            print(f"  {line}", file=out)
        if match.result:
            print(f"  {match.result['reason']}", file=out)
        finished = match.status == "finished"
        ended = match.finished_at or datetime.now(timezone.utc)
    print("", file=out)
    for line in [*post.keep(folder), *notes]:
        print(line, file=out)
    print(archive_note(folder, config, store, ended), file=out)
    print(f"Try: {status_command(folder)}", file=out)
    store.dispose()
    return finished


def archive_note(folder: Path, config: ServiceConfig, store: Store, now: datetime) -> str:
    """Build the archive of the demo season (its ``[archive] dir``) and say where to open it."""
    from referee.archive.site import build

    assert config.archive is not None  # write_files sets it
    site = config.archive.dir
    report = build(store, site, now=now)
    serve = f"{referee_command()} --config {shlex.quote(_shown(folder / 'referee.toml'))} archive serve"
    return (
        f"The archive of the season ({report.written} files written): open {(site / 'index.html').as_uri()}"
        f" in a browser,\nor serve it at http://127.0.0.1:8000/ with: {serve}"
    )


def _shown(path: Path) -> str:
    """``path`` as ``./relative`` to the current folder when it is below it."""
    try:
        return f"./{path.relative_to(Path.cwd().resolve())}"
    except ValueError:
        return str(path)


def status_command(folder: Path) -> str:
    """``referee --config ./referee-demo/referee.toml status``, runnable from the current folder."""
    return f"{referee_command()} --config {shlex.quote(_shown(folder / 'referee.toml'))} status"


def referee_command() -> str:
    """``referee`` if that is on PATH and is this installation, else the path of this one's script."""
    candidates = []
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "referee" and argv0.is_file():
        candidates.append(argv0.absolute())  # the console script that is running now
    candidates.append(Path(sys.executable).with_name("referee"))  # the venv's console script
    ours = next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)
    on_path = shutil.which("referee")
    if on_path and (ours is None or Path(on_path).resolve() == ours.resolve()):
        return "referee"
    if ours is not None:
        return shlex.quote(str(ours))
    return f"{shlex.quote(sys.executable)} -m referee.cli"


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


def round_summary(entry: dict[str, Any]) -> str:
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


def problem_line(text: str) -> str:
    """The "Problem:" paragraph of an error mail on one line (it may be wrapped), else the
    mail's first line."""
    found = re.search(r"^Problem:.*(?:\n(?!\n).*)*", text, re.MULTILINE)
    if found:
        return " ".join(found.group(0).split())
    return text.splitlines()[0] if text else ""


def check_folder(folder: Path) -> bool:
    """True when ``folder`` holds something (a demo of before); a ConfigError when it is not
    empty and not a demo folder."""
    folder = folder.resolve()
    config = folder / "referee.toml"
    if not (folder.exists() and any(folder.iterdir())):
        return False
    if not (config.exists() and config.read_text().startswith(MARKER)):
        raise ConfigError(f"{folder} is not empty and is not a demo folder; choose another --dir")
    return True


def prepare_folder(folder: Path) -> Path:
    folder = folder.resolve()
    if check_folder(folder):
        database = ("referee.db", "referee.db-wal", "referee.db-shm", "referee.db.decide.lock")
        written = (*database, "season.toml", "referee.toml")
        for name in written:
            (folder / name).unlink(missing_ok=True)
        shutil.rmtree(folder / "mail", ignore_errors=True)
        shutil.rmtree(folder / "archive", ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_config(folder: Path, stack: MailStack | None = None) -> str:
    """The demo's ``referee.toml`` (on Maildirs, or on the ``stack``: IMAP in, SMTP out); the
    mail domain of its players' addresses."""
    domain = stack.domain if stack is not None else "demo.test"
    (folder / "referee.toml").write_text(
        f"""{MARKER}: `referee demo` may wipe and rewrite it
database = "sqlite:///referee.db"
secret = "{new_secret()}"

[mail]
address = "referee@{domain}"
name = "Referee (demo)"
{_transport_lines(stack)}
[service]
poll_seconds = 5

[archive]
dir = "archive"
""",
        encoding="utf-8",
    )
    return domain


def write_files(folder: Path, start: datetime, seed: int, *, game: str = GAME, stack: MailStack | None = None) -> None:
    """``referee.toml`` (on Maildirs, or on the ``stack``: IMAP in, SMTP out) and ``season.toml``."""
    domain = write_config(folder, stack)
    players = "\n".join(
        _player_table(key, name, f"{key}@{domain}" if address else None, tz)
        for key, (name, tz, address) in seated(game).items()
    )
    seats = ", ".join(f'"{key}"' for key in seated(game))
    (folder / "season.toml").write_text(
        f"""# written by `referee demo`
[season]
id = "demo"
name = "Demo season"
starting_chips = 200
{_garnets_line(game)}
{players}
[[matches]]
id = "demo-1"
game = "{game}"
players = [{seats}]
start = {start:%Y-%m-%dT%H:%M:%SZ}
seed = {seed}
{_timing_line(game)}
reminders = ["{"1h" if game == MATCHJACK else "2h"}"]
""",
        encoding="utf-8",
    )


def _player_table(key: str, name: str, email: str | None, tz: str) -> str:
    """A ``[[players]]`` table; without ``email`` for a participant who has no address (they
    sit at a silent seat and are never mailed)."""
    address = f'email = "{email}"\n' if email is not None else ""
    return f'[[players]]\nid = "{key}"\nname = "{name}"\n{address}timezone = "{tz}"\n'


def _garnets_line(game: str) -> str:
    """MatchJack reads the season's garnets (FOLD STAYSET costs 5, a right guess pays 3)."""
    return f"starting_garnets = {MATCHJACK_GARNETS}\n" if game == MATCHJACK else ""


def _timing_line(game: str) -> str:
    """The match's own line of the demo season: Stationary Roulette's one-day rounds, a
    duel's DMO, Betting Minority's step lengths (its defaults, written out; the extension
    of a missed betting turn is 2/3 of a turn, 16 hours), MatchJack's (shorter than its
    defaults: 15 hands of many turns; its reminder comes 1 hour before a deadline)."""
    if game == GAME:
        return 'phase_length = "24h"'
    if game == MINORITY:
        return 'steps = { marker = "24h", send = "12h", bet = "24h" }'
    if game == MATCHJACK:
        return 'steps = { stay = "8h", bet = "3h", action = "3h", break = "6h" }'
    return 'options = { dmo = "bob" }'


def _transport_lines(stack: MailStack | None) -> str:
    if stack is None:
        return """transport = "maildir"
inbox = "mail/inbox"
outbox = "mail/outbox"
per_address = true
"""
    # password_env: a variable of its own, so that a $REFEREE_IMAP_PASSWORD of a real set-up does not apply
    return f"""inbound = "imap"
outbound = "smtp"

# the demo's own loopback Dovecot and Postfix (stopped and removed when the demo ends)
[imap]
host = "{stack.host}"
port = {stack.imap_port}
security = "none"
username = "{stack.address("referee")}"
password = "{stack.password}"
password_env = "REFEREE_DEMO_IMAP_PASSWORD"
timeout_seconds = 30

[smtp]
host = "{stack.host}"
port = {stack.smtp_port}
security = "none"
timeout_seconds = 30
"""
