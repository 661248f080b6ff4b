"""MatchJack's demo (``referee demo --game matchjack``): a whole MatchJack match by mail
between six scripted players, both tables at once (the generic part: :mod:`referee.demo`).

The six (alice and bob, and :data:`MATCHJACK_PLAYERS`) each have an address and a mailbox;
the season gives them 12 garnets each. Everything goes through the real path, as in the
other demos: the referee mails every step into the players' mailboxes, the players reply to
their latest mail that holds the fill-in form (a command line pre-filled with a legal
choice, then a ``Step:`` line), and ``Referee.tick`` runs at each reply's arrival or at a
deadline, on a virtual clock.

The two tables play at once: several steps are open together (the match row's
``open_steps``, each with its deadline). The planner (:class:`Planner`) plans, for every
open step as it appears, the reply of the player whose step it is (a little after the step
opened: each player has their own pace) or, for a step nobody answers, its deadline; then
it plays the earliest planned event, ticks, and looks again. So the Main and the Lost
table's turns interleave as real mail would. A waiting step (a table that has finished its
hand) needs nothing. (The season demo, :mod:`referee.demo.season`, plays its MatchJack
match with the same planner and players.)

The players decide from their mail and from nothing else: the form's command (usually as
it is), sometimes another legal command (a FOLD at the stay step, a BET or RAISE within the
amounts the mail lists, another action), a GUESS at random from the published catalogue of
the bots' rules. The script adds one FOLD STAYSET, two GUESS lines, one BET the rules do not
allow (refused by mail, then corrected), a stay step and a betting turn left to their
deadlines (the defaults apply), and the breaks after hands 5 and 10 passing by their
deadlines. The match ends with its last hand: its result names the winner and the EC and
ranks the six (the EC's nomination of the DMO is the season's step, not the match's).

Each event is one line (who did what at which table); each finished hand a short summary
from the public view (``engine.view(state, None)``); the end of the match in a line; then
the end report, the archive and the ``status`` command, as in the other demos.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from referee.demo.base import TWO_SEATS, Demo, Script, form_of, problem_line, unquoted
from referee.games.base import Game, Step, open_steps
from referee.games.matchjack import bots as published  # the catalogue every player may read
from referee.games.matchjack.hands import rank, worth
from referee.mail.client import Received, ScriptedClient
from referee.match import opensteps
from referee.store.db import Store
from referee.store.models import Match

if TYPE_CHECKING:
    from referee.demo.mail import RealMail
    from referee.demo.transport import MaildirMail

__all__ = ["DEMO", "MATCHJACK_PLAYERS", "MatchJackPlayer", "MatchJackScript", "Planner"]

MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)

# The script (hands by number; each happens at the first chance from that hand on, so that
# any seed plays all of it; a player named here who has left the match is stood in for by
# another one still in).
STAYSET = (2, "chiara")  # she pays 5 garnets to keep her set: FOLD STAYSET
GUESSES = ((3, "kenji"), (9, "priya"))  # a GUESS line with their stay choice
MISSED_STAY = (4, "tomas")  # he sends nothing at the stay step: FOLD at the deadline (he moves)
REFUSED_HAND = 2  # the first betting turn with nothing to call: BET 99, refused; then corrected
MISSED_TURN_HAND = 7  # the first betting turn from this hand on is left to its deadline
REFUSED_BET = 99  # more than anyone holds: the rules refuse it at no cost
MAX_EVENTS = 5000  # a match ends long before; the bound keeps a broken one from looping

# MatchJack's six: alice and bob, and these four (key -> name, time zone), all with an address
MATCHJACK_PLAYERS = {
    "chiara": ("Chiara Rossi", "Europe/Rome"),
    "kenji": ("Kenji Sato", "Asia/Tokyo"),
    "priya": ("Priya Nair", "Asia/Kolkata"),
    "tomas": ("Tomás Silva", "America/Sao_Paulo"),
}
MATCHJACK_GARNETS = 12  # the season's starting garnets: FOLD STAYSET costs 5


class MatchJackScript(Script):
    """The demo's script: the six players, and the :class:`Planner` that plays the match
    event by event (:meth:`play`); at the end, every player must have got mail."""

    max_steps = MAX_EVENTS

    def __init__(self, director):
        super().__init__(director)
        d = director
        players = {key: MatchJackPlayer(key, client, d.rng(key)) for key, client in d.clients.items()}
        self.planner = Planner(d.engine, d.store, d.post, players, d.out, match=d.match_key)

    def opening(self) -> list[str]:
        return self.planner.seat_lines()

    def play(self) -> bool:
        return self.planner.next_event()

    def check(self) -> tuple[bool, list[str]]:
        checked, line = mail_check(self.director.clients)
        return checked, [line]


# ---------------------------------------------------------------------------- the players


class MatchJackPlayer:
    """A MatchJack player by mail: reads the latest mail that holds the fill-in form (a
    command line, then a ``Step:`` line naming the step it answers) and replies to it like a
    mail client, the command typed on top and the Step line kept. Usually the form's command
    as it is; now and then another legal one, from what the mail lists."""

    def __init__(self, key: str, client: ScriptedClient, rng: random.Random):
        self.key = key
        self.client = client
        self.rng = rng
        self._parsed: dict[Path, Received] = {}
        self._forms: dict[Path, tuple[str, str] | None] = {}  # each mail's form, read once
        self.guessed: set[tuple[str, str]] = set()

    # ----------------------------------------------------------------- reading

    def mails(self) -> list[Received]:
        """Every mail in the mailbox, oldest first (on Maildirs each file parsed once)."""
        if type(self.client) is not ScriptedClient:
            return self.client.all()  # over IMAP: the client keeps what it fetched
        files = []
        for sub in ("new", "cur"):
            box = self.client.mailbox / sub
            if box.is_dir():
                files.extend(p for p in box.iterdir() if not p.name.startswith("."))
        files.sort(key=lambda p: (p.stat().st_mtime, p.name))
        found = []
        for path in files:
            if path not in self._parsed:
                self._parsed[path] = _read(path)
            found.append(self._parsed[path])
        return found

    def prompt(self) -> Received:
        """The latest mail with a form: a step mail, a receipt, an error or a reminder."""
        return next(m for m in reversed(self.mails()) if self._form_of(m) is not None)

    def form(self) -> tuple[str, str]:
        """(the pre-filled command, the step's title) of the latest form."""
        found = self._form_of(self.prompt())
        assert found is not None
        return found

    def _form_of(self, mail: Received) -> tuple[str, str] | None:
        if mail.path not in self._forms:
            self._forms[mail.path] = form_of(mail.text)
        return self._forms[mail.path]

    # ----------------------------------------------------------------- replying

    def reply(self, command: str, at: datetime, *, guess: str | None = None) -> str:
        """``command`` (and a GUESS line) on top of a reply to the latest form, its Step line kept."""
        mail = self.prompt()
        _, title = self.form()
        lines = [command, f"Step: {title}"]
        if guess:
            lines.append(guess)
        self.client.reply(mail, "\n".join(lines), at)
        return command if not guess else f"{command} + {guess}"

    # ----------------------------------------------------------------- deciding

    def stay(self) -> str:
        """The form's STAY, or now and then a FOLD (to the hall, and the other set next hand)."""
        filled, _ = self.form()
        return "FOLD" if self.rng.random() < 0.15 else filled

    def bet(self) -> str:
        """Mostly the form's CHECK or CALL; now and then a small BET or RAISE within the
        amounts the mail lists, or (facing a bet) a FOLD."""
        filled, _ = self.form()
        text = unquoted(self.prompt().text)
        roll = self.rng.random()
        if filled == "CHECK":
            amounts = listed_amounts(text, "BET")
            if amounts and roll < 0.3:
                low, high = amounts
                return f"BET {self.rng.randint(low, min(high, low + 2))}"
            return filled
        amounts = listed_amounts(text, "RAISE")
        if amounts and roll < 0.15:
            low, high = amounts
            return f"RAISE {self.rng.randint(low, min(high, low + 1))}"
        if roll < 0.35:
            return "FOLD"
        return filled

    def action(self) -> str:
        """The form's NEW about half the time, else another action (all legal whatever the cards)."""
        filled, _ = self.form()
        if self.rng.random() < 0.5:
            return filled
        return self.rng.choice(["HIT", "HIT", "SWAP UP", "SWAP DOWN", "DRAW 1", "DRAW 2"])

    def guess(self) -> str:
        """A guess at random from the published catalogue, never one made before."""
        bots = [bot for table in published.BOTS.values() for bot in table]
        rules = [rule.id for rule in published.CATALOGUE]
        while True:
            bot, rule = self.rng.choice(bots), self.rng.choice(rules)
            if (bot, rule) not in self.guessed:
                self.guessed.add((bot, rule))
                return f"GUESS {bot} {rule}"


def _read(path: Path) -> Received:
    return Received(path, raw=path.read_bytes())


def listed_amounts(text: str, word: str) -> tuple[int, int] | None:
    """The amounts ``word n`` (``BET n``, or ``RAISE n``: not ``RAISE TO n``) may take, as the
    mail lists them: a choice line ``BET n ... n from 1 to 6``, or ``BET 1 to BET 6`` in a
    sentence; None when the mail lists none (then the form's command it is)."""
    # the mails wrap at 72 (issue 20): a choice's meaning goes on under its column, a sentence
    # may break at any space
    rows = re.sub(r"\n {16}(?=\S)", " ", text)
    line = re.search(rf"^\s*{word} n\b.*?\bfrom (\d+) to (\d+)", rows, re.MULTILINE)
    span = line or re.search(rf"\b{word} (\d+) to {word} (\d+)\b", " ".join(text.split()))
    if span is None:
        return None
    low, high = int(span.group(1)), int(span.group(2))
    return (low, high) if 0 < low <= high else None


# ---------------------------------------------------------------------------- the director


@dataclass(order=True)
class _Event:
    at: datetime
    order: int
    step: str = field(compare=False)
    # "reply": the player decides and replies; "form": they send the form's command as it is
    # (after a refusal); "remind": a tick (the reminder goes out); "deadline": a tick at it
    what: str = field(compare=False)
    player: str | None = field(compare=False, default=None)


class Planner:
    """The script's planner: reads the open steps from the database (the match row's
    ``open_steps``, each with the instant it opened and its deadline), plans for each new one
    the reply of the player whose step it is (or its deadline), plays the earliest planned
    event, ticks the referee and prints a line per event and a summary per finished hand.
    The players decide from their mail."""

    def __init__(
        self,
        engine: Game,
        store: Store,
        post: MaildirMail | RealMail,
        players: dict,
        out: TextIO,
        *,
        match: str = "demo-1",
    ):
        self.engine, self.store, self.post, self.players, self.out = engine, store, post, players, out
        self.match = match  # the match's id (the season demo plays one of several)
        self.queue: list[_Event] = []
        self.planned: set[str] = set()
        self.counter = 0
        self.hands_told = 0
        self.end_told = False
        self.stay_sent: dict[str, str] = {}  # the open stay step's replies, said when it closes
        self.stay_tables: dict[str, list[str]] = {}  # who sits at each table in its hand
        self.script: dict[str, str] = {}  # the open stay step's part of the script: what -> who
        self.done: set[str] = set()  # the parts of the script played (or planned)
        self.refused_done = self.missed_turn_done = False
        self._row: Match | None = None
        self._view: dict[str, Any] | None = None

    # ----------------------------------------------------------------- reading the match

    def _match(self) -> Match:
        """The match row as the last tick left it (read again after each tick)."""
        if self._row is None:
            with self.store.unit_of_work() as session:
                self._row = session.query(Match).filter_by(key=self.match).one()
        return self._row

    def _tick(self, at: datetime) -> None:
        self.post.tick(at)
        self._row = self._view = None

    def _public(self) -> dict[str, Any]:
        """The public view (``view(state, None)``) as the last tick left it."""
        if self._view is None:
            self._view = self.engine.view(self._match().state, None)
        return self._view

    def _say(self, line: str) -> None:
        print(line, file=self.out)

    def seat_lines(self) -> list[str]:
        """Who sits at each table at the start, and its bots."""
        public = self._public()
        lines = []
        for table in ("Main", "Lost"):
            seated = sorted((p for p in public["players"] if public["sets"][p] == table), key=public["seats"].get)
            bots = " and ".join(public["bots"][table])
            shown = ", ".join(f"{p} (seat {public['seats'][p]})" for p in seated)
            lines.append(f"{table} set: {shown}; the bots {bots}")
        return lines

    # ----------------------------------------------------------------- the loop

    def next_event(self) -> bool:
        """Plan what the new open steps need, play the earliest planned event; False once the
        match is over."""
        match = self._match()
        if match.status != "running":
            return False
        steps = {s.key: s for s in open_steps(self.engine, match.state)}
        entries = {e.key: e for e in opensteps.listed(match)}
        self.queue = [e for e in self.queue if e.step in steps]
        for key, step in steps.items():
            if not step.waiting and key not in self.planned:
                self.planned.add(key)
                self._plan(match.state, step, entries[key].opened_at, entries[key].deadline)
        if not self.queue:
            raise RuntimeError(f"nothing planned while the match runs (open: {', '.join(steps)})")
        event = min(self.queue)
        self.queue.remove(event)
        step = steps[event.step]
        if event.what == "deadline":
            self._deadline(step, event.at)
        elif event.what == "remind":
            self._tick(event.at)
        else:
            assert event.player is not None
            self._reply(step, event.player, event.at, as_filled=event.what == "form")
        self._tell_hands()
        return True

    def _add(self, at: datetime, step: Step, what: str, player: str | None = None) -> None:
        self.counter += 1
        self.queue.append(_Event(at, self.counter, step.key, what, player))

    def _pace(self, key: str, longest: int) -> timedelta:
        """How long ``key`` takes to answer a mail: their own pace, 15 minutes and more."""
        return timedelta(minutes=self.players[key].rng.randint(15, longest))

    def _plan(self, state: dict, step: Step, opened: datetime, deadline: datetime | None) -> None:
        hand = state["hand"]
        if step.kind == "stay":
            self._plan_stay(state, step)
            for key in step.players:
                if key != self.script.get("missed"):
                    self._add(opened + self._pace(key, 300), step, "reply", key)
            assert deadline is not None
            self._add(deadline, step, "deadline")
        elif step.kind in ("bet", "action"):
            (key,) = step.players
            if step.kind == "bet" and hand >= MISSED_TURN_HAND and not self.missed_turn_done:
                self.missed_turn_done = True
                assert deadline is not None
                self._add(deadline - HOUR, step, "remind")
                self._add(deadline, step, "deadline", key)
            else:
                self._add(opened + self._pace(key, 120), step, "reply", key)
        else:  # a break: nobody acts, its deadline ends it
            assert deadline is not None
            self._add(deadline, step, "deadline")

    def _plan_stay(self, state: dict, step: Step) -> None:
        """Who does what of the script at this stay step, and who sits where (for its line)."""
        hand, alive = state["hand"], list(step.players)

        def who(named: str) -> str:  # the player named, else the last one in with no part yet
            free = [p for p in alive if p not in self.script.values()]
            return named if named in free else free[-1]

        self.script = {}
        if hand >= STAYSET[0] and "stayset" not in self.done:
            self.done.add("stayset")
            self.script["stayset"] = who(STAYSET[1])
        if hand >= MISSED_STAY[0] and "missed" not in self.done:
            self.done.add("missed")
            self.script["missed"] = who(MISSED_STAY[1])
        guessers = [who(named) for h, named in GUESSES if h <= hand and f"guess-{h}" not in self.done]
        if guessers:  # one guess a hand each: the first of this step's, the next one later
            self.done.add(f"guess-{next(h for h, _ in GUESSES if f'guess-{h}' not in self.done)}")
            self.script["guess"] = guessers[0]
        public = self.engine.view(state, None)
        self.stay_tables = {
            name: [s["player"] for s in sorted(public["tables"][name]["seats"], key=lambda s: s["seat"])]
            for name in ("Main", "Lost")
        }
        self.stay_sent = {}

    # ----------------------------------------------------------------- events

    def _send(self, key: str, command: str, at: datetime, *, guess: str | None = None) -> str:
        self.post.advance(at)
        sent = self.players[key].reply(command, at, guess=guess)
        self._tick(at)
        return sent

    def _still_open(self, step: Step, key: str) -> bool:
        """Was ``key``'s reply to ``step`` refused? (The step still waits for them.)"""
        state = self._match().state
        return any(s.key == step.key and key in s.players for s in open_steps(self.engine, state)) and (
            step.kind != "stay" or key in self.engine.awaiting(state)
        )

    def _refusal(self, key: str) -> str:
        return problem_line(self.players[key].client.latest().text)

    def _reply(self, step: Step, key: str, at: datetime, *, as_filled: bool = False) -> None:
        """``key`` answers ``step`` at ``at`` (``as_filled``: with the form's command as it is)."""
        player = self.players[key]
        state = self._match().state
        hand = state["hand"]
        filled, title = player.form()
        if title != step.title:  # the mail of this step has not come (yet): a bug of the demo
            raise RuntimeError(f"{key}'s latest form is for {title!r}, not {step.title!r}")
        if step.kind == "stay":
            guess = player.guess() if self.script.get("guess") == key else None
            command = "FOLD STAYSET" if self.script.get("stayset") == key else player.stay()
            rewards = len(self._public()["rewards"])
            sent = self._send(key, command, at, guess=guess)
            if self._still_open(step, key):
                sent += f" (refused: {self._refusal(key)})"
            elif len(self._public()["rewards"]) > rewards:
                sent += " (a right guess: +6 chips)"
            self.stay_sent[key] = sent
            return
        scripted = step.kind == "bet" and hand >= REFUSED_HAND and filled == "CHECK" and not self.refused_done
        if scripted:  # more than the mail lists: refused, and answered again 20 minutes later
            self.refused_done = True
            command = f"BET {REFUSED_BET}"
        elif as_filled:
            command = filled
        else:
            command = player.bet() if step.kind == "bet" else player.action()
        sent = self._send(key, command, at)
        if not self._still_open(step, key):
            self._say(f"  {step.title}: {key} {sent}")
            return
        self._say(f"  {step.title}: {key} {sent}: refused by mail ({self._refusal(key)})")
        # the script's refusal is answered with a new choice; any other with the form as it is
        self._add(at + 20 * MINUTE, step, "reply" if scripted else "form", key)

    def _deadline(self, step: Step, at: datetime) -> None:
        if step.kind == "bet":
            (key,) = step.players
            self._tick(at)
            self._say(f"  {step.title}: no answer from {key} by the deadline: {self._default_of(step, key)}")
            return
        self._tick(at)
        if step.kind == "stay":
            self._say(self._stay_line(step))
        elif step.kind == "break":
            self._say(f"  {step.title}: passed by its deadline, {at:%Y-%m-%d %H:%M} UTC")

    def _default_of(self, step: Step, key: str) -> str:
        """What the deadline did, from the public view: a check when it was free, else a fold."""
        hand, table = step.key.split("-")[:2]
        public = self._public()
        rounds = public["tables"][table.title()]["rounds"] if public["hand"] == int(hand[1:]) else []
        for entry in (e for rnd in reversed(rounds) for e in reversed(rnd["actions"])):
            if entry["player"] == key and entry["timeout"]:
                return f"{entry['action'].upper()} by default"
        return "the default applies (CHECK when free, else FOLD)"

    def _stay_line(self, step: Step) -> str:
        """The stay step's replies as sent, once it has closed (a player who sent nothing: FOLD)."""
        parts = []
        for table, seated in self.stay_tables.items():
            shown = [f"{key} {self.stay_sent.get(key, 'sent nothing: FOLD at the deadline')}" for key in seated]
            parts.append(f"{table} {', '.join(shown) or 'no player'}")
        return f"  {step.title}: " + "; ".join(parts)

    # ----------------------------------------------------------------- summaries

    def _tell_hands(self) -> None:
        public = self._public()
        for entry in public["history"][self.hands_told :]:
            self._say(hand_summary(entry, public))
        self.hands_told = len(public["history"])
        if public["result"] is not None and not self.end_told:
            self.end_told = True
            self._say(end_summary(public))


def hand_summary(entry: dict[str, Any], public: dict[str, Any]) -> str:
    """A finished hand from the public record: per table who stayed and folded, the hands
    shown, who took the pot; the set moves, who left the match, the chips after it."""
    lines = [f"Hand {entry['hand']} (ante {entry['ante']}):"]
    bots = {b for table in public["bots"].values() for b in table}
    for table in ("Main", "Lost"):
        t = entry["tables"][table]
        who = []
        if t["stayed"]:
            who.append("stayed " + ", ".join(t["stayed"]))
        if t["folded"]:
            who.append("folded " + ", ".join(t["folded"]))
        if t["stayset"]:
            who.append("paid to keep their set " + ", ".join(t["stayset"]))
        later = [p for p in t["stayed"] if p not in t["hands"]]
        if later:
            who.append("folded later " + ", ".join(later))
        shown = ", ".join(f"{x} {' '.join(cards)} {_worth(cards)}" for x, cards in t["hands"].items())
        if t["won"]:
            took = ", ".join(f"{p} takes {n}" for p, n in t["won"].items())
            took += f" ({t['discarded']} discarded)" if t["discarded"] else ""
        else:
            ranked = {x: rank(cards) for x, cards in t["hands"].items()}
            best = [x for x, r in ranked.items() if r is not None and r == max(v for v in ranked.values() if v)]
            why = f"{' and '.join(best)} had the best hand" if best and set(best) <= bots else "nobody could win it"
            took = f"the pot of {t['pot']} is discarded: {why}"
        lines.append(f"  {table}: {'; '.join(who) or 'no player at the table'}; shown {shown} -> {took}")
    moves = [f"{m['player']} to {m['to']} (seat {m['seat']})" for m in entry["moves"]]
    if moves:
        lines.append("  moving: " + ", ".join(moves))
    if entry["eliminated"]:
        lines.append("  left the match at 0 chips: " + ", ".join(entry["eliminated"]))
    chips = chips_after(entry["hand"], public)
    lines.append("  chips: " + ", ".join(f"{p} {n}" for p, n in chips.items()))
    return "\n".join(lines)


def end_summary(public: dict[str, Any]) -> str:
    """The end of the match from the public view: the winner, the EC and the ranking (the EC's
    nomination of the DMO is the season's step, not the match's)."""
    final, result = public["final"], public["result"]
    return (
        f"The match is over after hand {final['hands']}: {final['winner']} wins, {final['ec']} is the EC\n"
        f"  ranking, best first: {', '.join(result['ranking'])}; the season asks the EC to nominate the DMO"
    )


def _worth(cards: list[str]) -> str:
    r = rank(cards)
    if r is None:
        return "(bust)"
    colours = {c[0] for c in cards}
    return f"({worth(cards)}{', one colour' if len(colours) == 1 else ''})"


def chips_after(hand: int, public: dict[str, Any]) -> dict[str, int]:
    """The chips after ``hand``: the stacks now, plus what the next hand (dealt at once, when
    no break comes) has taken as antes."""
    stacks = dict(public["stacks"])
    if public["hand"] > hand:
        for table in public["tables"].values():
            for who, n in table["contributions"].items():
                if who in stacks:
                    stacks[who] += n
    return stacks


def mail_check(clients: dict[str, ScriptedClient]) -> tuple[bool, str]:
    """Every player got mail; what to say of it."""
    counts = {key: len(client.all()) for key, client in clients.items()}
    if all(counts.values()):
        listed = ", ".join(f"{key} {n}" for key, n in counts.items())
        return True, f"Every player's mailbox holds their mail: {listed}."
    empty = ", ".join(k for k, n in counts.items() if not n)
    return False, f"WRONG: no mail for {empty}"


DEMO = Demo(
    seats={**TWO_SEATS, **{key: (name, tz, True) for key, (name, tz) in MATCHJACK_PLAYERS.items()}},
    match_lines='steps = { stay = "8h", bet = "3h", action = "3h", break = "6h" }\nreminders = ["1h"]',
    script=MatchJackScript,
    who=f"six players ({', '.join([*TWO_SEATS, *MATCHJACK_PLAYERS])}), 15 hands at two tables at once",
    season_lines=f"starting_garnets = {MATCHJACK_GARNETS}\n",
)
