"""``referee demo --season``: a whole small season by mail, on an accelerated clock.

Seven players with an address (alice, bob, the four of the MatchJack demo and Lena) and six
silent participants (Betting Minority's fill-ins, without an address) play the season frame
(docs/season.md) through:

1. ``main1``, a main match of Stationary Roulette, alice against bob: its loser is the EC;
2. ``main1-nomination``: the EC nominates the DMO by mail (``NOMINATE`` and a full name);
3. ``main1-death``, a death match of Indian Poker, the EC against the DMO: its loser is
   eliminated;
4. ``main2``, a main match of MatchJack of ``players = "live"``: the six players still live,
   both tables at once; its EC is the last of its ranking;
5. ``main2-nomination``: the EC first names the winner of main2 (refused by mail: the winner
   is never eligible), then nominates by first name;
6. ``main2-death``, a death match of Betting Minority: the EC and the DMO, the other four
   live players as participants (they get their list by mail), filled up with the silent
   participants. Its loser is eliminated, nothing is scheduled any more: the season ends and
   every player gets the final standings by mail.

Nothing here decides for the referee: the season file (``season.toml``) says only the two
main matches; the frame creates each nomination and death match when the match before it
ends, and the clock starts them. The director (:class:`_Season`) looks, after each match,
for the match that runs now or the next one scheduled (ticking the referee at its start),
and hands it to the players of its game, who answer their mail as the other demos' players
do; each comes from its game's demo module: ``ScriptedPlayer`` (Stationary Roulette,
:mod:`referee.games.stationary_roulette.demo`), ``DuelPlayer`` (Indian Poker,
:mod:`referee.games.indian_poker.demo`), the MatchJack demo's planner and players
(:mod:`referee.games.matchjack.demo`), ``MinorityPlayer`` (Betting Minority,
:mod:`referee.games.betting_minority.demo`); :class:`NominationPlayer` (the nomination, the
season's own step) is here. Each replies to the mail that holds its form, into the
referee's inbox Maildir, with a delivery time on the virtual clock. (So this module, unlike
the rest of :mod:`referee.demo`, names its games: it plays a season of these five.)

The commentary is a few lines per match (its start, a line per round or hand of a main
match, its end, the EC, the DMO, who is eliminated); then the final standings (``referee
standings``), the mail, the archive (built, its season page showing the eliminated players)
and the ``status`` command, as in the other demos.
"""

from __future__ import annotations

import io
import random
import re
import shlex
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy import select

from referee.config import ConfigError, load_season, load_service_config
from referee.demo.base import PLAYERS, form_of, problem_line
from referee.demo.files import check_folder, player_table, prepare_folder, write_config
from referee.demo.report import archive_note, referee_command, shown, status_command
from referee.demo.transport import MaildirMail
from referee.games import GAMES
from referee.games.betting_minority import ROOMS
from referee.games.betting_minority.demo import MAX_MINORITY_STEPS, PARTICIPANTS, MinorityPlayer
from referee.games.indian_poker.demo import MAX_DEMO_TURNS, DuelPlayer
from referee.games.matchjack.demo import (
    MATCHJACK_GARNETS,
    MATCHJACK_PLAYERS,
    MAX_EVENTS,
    MatchJackPlayer,
    Planner,
    chips_after,
)
from referee.games.stationary_roulette.demo import ScriptedPlayer
from referee.mail.client import Received, ScriptedClient
from referee.seasons import load_season as load_into_store
from referee.service import Referee
from referee.standings import season_standings, standings_text
from referee.store.db import Store
from referee.store.models import Match, Season

__all__ = ["NominationPlayer", "run_season_demo"]

HOUR = timedelta(hours=1)
SEASON = "demo"
# the season's players with an address (key -> name, time zone): alice and bob, the four of
# the MatchJack demo, and a seventh, so that MatchJack seats the six left after one elimination
SEASON_PLAYERS = {**PLAYERS, **MATCHJACK_PLAYERS, "lena": ("Lena Fischer", "Europe/Vienna")}
# Betting Minority's silent participants: the demo's participants without an address
SILENT = {key: (name, tz) for key, (name, tz, address) in PARTICIPANTS.items() if not address}
MAIN1, MAIN2 = "main1", "main2"
FIRST_DEATH, SECOND_DEATH = "indian-poker", "betting-minority"
# main2 starts four weeks after main1: main1's eleven days, a day of nomination, half a day
# of gap and a death match of two-hour answers to 12-hour steps fit in it with room to spare
# (were main1's death match still open then, main2 would wait for it: a match of the live
# players starts when its season's last open nomination or death match ends)
MAIN2_AFTER = timedelta(days=28)
MAX_MATCHES = 20  # the season has six; the bound keeps a broken frame from looping
DATE = "%a %d %b %H:%M"


def run_season_demo(
    folder: Path, *, seed: int, transport: str = "maildir", install: bool = False, out: TextIO = sys.stdout
) -> int:
    """The whole demo season by mail (see the module docstring); 0 when it ended as it should."""
    if transport != "maildir" or install:
        raise ConfigError("the season demo runs on Maildirs: leave out --transport imap and --install")
    check_folder(folder)  # before anything is written
    folder = prepare_folder(folder)
    start = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
    domain = write_config(folder)
    write_season(folder, start, seed, domain)
    config = load_service_config(folder / "referee.toml")
    store = Store(config.database)
    try:
        store.migrate()
        load_into_store(store, load_season(folder / "season.toml"), start - HOUR)
        post = MaildirMail(Referee.configured(store, config), config)
        clients = {
            key: CachedClient(f"{key}@{domain}", name, config.mail.outbox / f"{key}@{domain}", config.mail.inbox)
            for key, (name, _tz) in SEASON_PLAYERS.items()
        }
        print(f"referee demo in {folder}", file=out)
        print(
            f"A whole season by mail, seed {seed}: {len(SEASON_PLAYERS)} players ({', '.join(SEASON_PLAYERS)}) "
            f"and {len(SILENT)} silent participants; starting {start:%Y-%m-%d %H:%M} UTC ({post.clock_note})",
            file=out,
        )
        print(
            f"  season.toml: {MAIN1}, Stationary Roulette, alice vs bob; {MAIN2}, MatchJack of the live players, "
            f"{start + MAIN2_AFTER:%a %d %b}; each followed by the EC's nomination of the DMO and a death match "
            f"({GAMES[FIRST_DEATH].title}, then {GAMES[SECOND_DEATH].title}) whose loser leaves the season\n",
            file=out,
        )
        director = _Season(store, post, clients, seed, start, out)
        played = director.run()
        checked, mail_line = mail_check(store, clients)
        ended = director.report_end()
        print("", file=out)
        for line in [*post.keep(folder), mail_line]:
            print(line, file=out)
        print(archive_note(folder, config, store, ended or director.now), file=out)
        config_arg = shlex.quote(shown(folder / "referee.toml"))
        print(f"The standings again: {referee_command()} --config {config_arg} standings", file=out)
        print(f"Try: {status_command(folder)}", file=out)
    finally:
        store.dispose()
    return 0 if played and checked and ended is not None else 1


class CachedClient(ScriptedClient):
    """The scripted mail client, each mail file parsed once (a season's mailbox grows to
    hundreds of mails, and the players read it before every reply)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._parsed: dict[Path, Received] = {}

    def all(self) -> list[Received]:
        files = []
        for sub in ("new", "cur"):
            box = self.mailbox / sub
            if box.is_dir():
                files.extend(p for p in box.iterdir() if not p.name.startswith("."))
        files.sort(key=lambda p: (p.stat().st_mtime, p.name))
        for path in files:
            if path not in self._parsed:
                self._parsed[path] = Received(path, raw=path.read_bytes())
        return [self._parsed[p] for p in files]


# ---------------------------------------------------------------------------- the season file


def write_season(folder: Path, start: datetime, seed: int, domain: str) -> None:
    """``season.toml``: the players, the silent participants, the frame and the two main matches."""
    players = "\n".join(
        [
            *(player_table(key, name, f"{key}@{domain}", tz) for key, (name, tz) in SEASON_PLAYERS.items()),
            *(player_table(key, name, None, tz) for key, (name, tz) in SILENT.items()),
        ]
    )
    silent = ", ".join(f'"{key}"' for key in SILENT)
    (folder / "season.toml").write_text(
        f"""# written by `referee demo --season`
[season]
id = "{SEASON}"
name = "Demo season"
starting_chips = 200
starting_garnets = {MATCHJACK_GARNETS}
seed = {seed}
nomination_length = "24h"
death_match_gap = "12h"
silent_participants = [{silent}]

[games.{FIRST_DEATH}]
phase_length = "12h"

[games.{SECOND_DEATH}]
steps = {{ marker = "24h", send = "12h", bet = "24h" }}

{players}
[[matches]]
id = "{MAIN1}"
game = "stationary-roulette"
kind = "main"
death_match = "{FIRST_DEATH}"
players = ["alice", "bob"]
start = {start:%Y-%m-%dT%H:%M:%SZ}
seed = {seed}
phase_length = "24h"
reminders = ["2h"]

[[matches]]
id = "{MAIN2}"
game = "matchjack"
kind = "main"
death_match = "{SECOND_DEATH}"
players = "live"
start = {start + MAIN2_AFTER:%Y-%m-%dT%H:%M:%SZ}
seed = {seed + 1}
steps = {{ stay = "8h", bet = "3h", action = "3h", break = "6h" }}
reminders = ["1h"]
""",
        encoding="utf-8",
    )


# ---------------------------------------------------------------------------- the nomination


class NominationPlayer:
    """The EC of a main match, by mail: reads the latest mail that holds the nomination's
    form, takes the players it may nominate from the mail ("You may nominate A, B and C (not
    W, who won the match)") and replies ``NOMINATE`` with one of them, the Step line kept."""

    def __init__(self, key: str, client: ScriptedClient, rng: random.Random):
        self.key = key
        self.client = client
        self.rng = rng

    def prompt(self) -> Received:
        return next(m for m in reversed(self.client.all()) if (form_of(m.text) or ("", ""))[1].startswith("Nomination"))

    def choices(self) -> tuple[list[str], str | None]:
        """(the players the mail says one may nominate, the winner it names)."""
        text = " ".join(self.prompt().text.split())
        found = re.search(r"You may nominate (.+?)(?: \(not (.+?), who won the match\))?\. ", text)
        assert found, f"{self.key}'s nomination mail names nobody to nominate"
        return re.split(r", | and ", found.group(1)), found.group(2)

    def nominate(self, who: str, at: datetime) -> str:
        mail = self.prompt()
        _, title = form_of(mail.text) or ("", "")
        command = f"NOMINATE {who}"
        self.client.reply(mail, f"{command}\nStep: {title}", at)
        return command


# ---------------------------------------------------------------------------- the director


class _Season:
    """Plays the season: the match that runs now, else the next one scheduled (the referee
    ticked at its start), each by its game's players, until nothing is left."""

    def __init__(
        self,
        store: Store,
        post: MaildirMail,
        clients: dict[str, CachedClient],
        seed: int,
        start: datetime,
        out: TextIO,
    ):
        self.store, self.post, self.clients, self.seed, self.out = store, post, clients, seed, out
        self.now = start
        self.nominations = 0

    # ----------------------------------------------------------------- reading and ticking

    def _row(self, key: str) -> Match:
        with self.store.unit_of_work() as session:
            match = session.query(Match).filter_by(key=key).one()
            _ = [(seat.player.key, seat.player.name) for seat in match.seats]  # loaded for later
            return match

    def _matches(self) -> list[Match]:
        with self.store.unit_of_work() as session:
            return list(session.scalars(select(Match).order_by(Match.starts_at, Match.id)))

    def tick(self, at: datetime) -> None:
        self.now = max(self.now, at)
        self.post.tick(self.now)

    def _send(self, player: Any, at: datetime, send: Any) -> tuple[Any, Received]:
        """``send()`` (a player's reply, arriving at ``at``), the tick at its arrival; what it
        returned and the referee's answer (the player's latest mail)."""
        at = max(self.now, at)
        sent = send(at)
        self.tick(at)
        return sent, player.client.latest()

    def _say(self, line: str) -> None:
        print(line, file=self.out)

    # ----------------------------------------------------------------- the loop

    def run(self) -> bool:
        """Every match of the season, in turn; True when each one finished."""
        self.tick(self.now)
        for _ in range(MAX_MATCHES):
            matches = self._matches()
            running = [m for m in matches if m.status in ("running", "paused")]
            if len(running) > 1:
                self._say(f"WRONG: several matches run at once ({', '.join(m.key for m in running)})")
                return False
            if not running:
                scheduled = [m for m in matches if m.status == "scheduled"]
                if not scheduled:
                    return all(m.status == "finished" for m in matches)
                self.tick(scheduled[0].starts_at)
                match = self._row(scheduled[0].key)
                if match.status == "scheduled":
                    self._say(f"WRONG: {match.key} did not start at {match.starts_at:{DATE}}: {match.problem}")
                    return False
            else:
                match = running[0]
            if not self._play(match.key):
                return False
        self._say("WRONG: the season did not end")
        return False

    def _play(self, key: str) -> bool:
        match = self._row(key)
        seats = [seat.player.key for seat in match.seats]
        title = GAMES[match.game].title
        when = f"{match.starts_at:{DATE}}"
        if match.kind == "nomination":
            self._say(f"{when}  {key}: {seats[0]} is the EC and is asked by mail to nominate the DMO")
            self._nomination(match)
        elif match.kind == "death":
            self._say(
                f"{when}  {key} starts: {title}, {seats[0]} (EC) vs {seats[1]} (DMO), the loser leaves the season"
            )
            if len(seats) > 2:
                live = [p for p in seats[2:] if p in self.clients]
                self._say(
                    f"  participants: {', '.join(live)} (the other live players, drawn by lot; their list comes "
                    f"by mail) and {len(seats) - 2 - len(live)} silent participants"
                )
            {"betting-minority": self._minority}.get(match.game, self._duel)(match)
        else:
            who = " vs ".join(seats) if len(seats) == 2 else ", ".join(seats)
            live = " (the live players)" if match.seating == "live" else ""
            self._say(f"{when}  {key} starts: {title}, {who}{live}; a main match")
            {"matchjack": self._matchjack}.get(match.game, self._roulette)(match)
        return self._ended(key)

    def _ended(self, key: str) -> bool:
        match = self._row(key)
        if match.status != "finished" or match.result is None:
            self._say(f"WRONG: {key} is {match.status}, not finished")
            return False
        result = match.result
        scores = result.get("scores") or {}
        when = f"{match.finished_at:{DATE}}"
        if match.kind == "nomination":
            by = "nominated by the EC" if scores.get("by") == "ec" else "drawn by lot"
            self._say(f"{when}  {scores['dmo']} is the DMO ({by})")
        elif match.kind == "death":
            loser = result["ranking"][-1]
            self._say(f"{when}  {key} ends: {result['reason']}")
            self._say(f"  {loser} is eliminated (eliminated in {key}); {result['ranking'][0]} plays on")
        else:
            ranking = result.get("ranking") or []
            self._say(f"{when}  {key} ends: {result['reason']}")
            if ranking:
                self._say(f"  ranking, best first: {', '.join(ranking)}")
        return True

    # ----------------------------------------------------------------- the games

    def _rng(self, key: str, what: str) -> random.Random:
        return random.Random(f"{self.seed}:{key}:{what}")

    def _roulette(self, match: Match) -> None:
        """Stationary Roulette: each player answers the round's mail (3 and 5 hours into it),
        the round is settled at its deadline."""
        engine = GAMES[match.game]
        seats = [seat.player.key for seat in match.seats]
        players = {k: ScriptedPlayer(k, self.clients[k], self._rng(k, match.key)) for k in seats}
        for round_no in range(MAX_DEMO_TURNS):
            row = self._row(match.key)
            if row.status != "running":
                return
            for hours, key in zip((3, 5), seats, strict=False):
                player = players[key]
                _, answer = self._send(
                    player, row.step_opened_at + hours * HOUR, lambda at, p=player, n=round_no: p.send(n, at)
                )
                if "Not recorded" in answer.subject:
                    self._say(f"  {key}'s reply was refused: {_problem(answer)}")
            self.tick(row.deadline)
            entry = engine.view(self._row(match.key).state, None)["history"][-1]
            totals = "; ".join(f"{p} {entry['points'][p]} points, {entry['chips'][p]} chips" for p in entry["points"])
            self._say(f"  {entry['title']}: {totals}")

    def _nomination(self, match: Match) -> None:
        """The EC nominates by mail three hours into the step: the first by full name; the
        second names the winner of the main match first (refused by mail), then a player by
        first name."""
        ec = match.seats[0].player.key
        player = NominationPlayer(ec, self.clients[ec], self._rng(ec, match.key))
        self.nominations += 1
        names, winner = player.choices()
        self._say(
            f"  the mail lets {ec} nominate {', '.join(names)}" + (f" (not {winner}, the winner)" if winner else "")
        )
        at = match.step_opened_at + 3 * HOUR
        if self.nominations > 1 and winner:
            _, answer = self._send(player, at, lambda t: player.nominate(winner, t))
            self._say(f"  {ec}: NOMINATE {winner}: refused by mail ({_problem(answer)})")
            at += HOUR
        chosen = player.rng.choice(names)
        written = chosen.split()[0] if self.nominations > 1 else chosen
        command, answer = self._send(player, at, lambda t: player.nominate(written, t))
        refused = " (refused by mail)" if "Not recorded" in answer.subject else ""
        self._say(f"  {ec}: {command}{refused}")
        row = self._row(match.key)
        if row.status == "running":  # nothing the EC sent counted: the lot at the deadline
            self.tick(row.deadline)

    def _duel(self, match: Match) -> None:
        """A duel: the player whose turn it is answers its mail two hours after it opened."""
        engine = GAMES[match.game]
        seats = [seat.player.key for seat in match.seats]
        players = {k: DuelPlayer(k, self.clients[k], self._rng(k, match.key)) for k in seats}
        moves = refused = 0
        for _ in range(MAX_DEMO_TURNS):
            row = self._row(match.key)
            if row.status != "running":
                break
            (key, *_rest) = engine.step(row.state).players
            player = players[key]
            _, answer = self._send(player, row.step_opened_at + 2 * HOUR, player.answer)
            moves += 1
            refused += "Not recorded" in answer.subject
        state = self._row(match.key).state
        hands = len(engine.view(state, None).get("history") or [])
        self._say(f"  {hands} hands, {moves} moves by mail ({refused} refused)")

    def _matchjack(self, match: Match) -> None:
        """MatchJack: the MatchJack demo's planner plays it (both tables at once, its script
        included); a line per finished hand here (its play-by-play is not printed)."""
        engine = GAMES[match.game]
        seats = [seat.player.key for seat in match.seats]
        players = {k: MatchJackPlayer(k, self.clients[k], self._rng(k, match.key)) for k in seats}
        director = Planner(engine, self.store, _Clock(self), players, io.StringIO(), match=match.key)
        told = 0
        for _ in range(MAX_EVENTS):
            if not director.next_event():
                break
            public = director._public()
            for entry in public["history"][told:]:
                chips = chips_after(entry["hand"], public)
                out = f"; left the match: {', '.join(entry['eliminated'])}" if entry["eliminated"] else ""
                self._say(f"  Hand {entry['hand']}: chips {', '.join(f'{p} {n}' for p, n in chips.items())}{out}")
            told = len(public["history"])

    def _minority(self, match: Match) -> None:
        """Betting Minority: the DMO sets the marker, both send participants, the player to
        bet answers two hours into the turn; a round's line when it is paid out."""
        engine = GAMES[match.game]
        ec, dmo = (seat.player.key for seat in match.seats[:2])
        players = {k: MinorityPlayer(k, self.clients[k], self._rng(k, match.key)) for k in (ec, dmo)}
        told = 0
        for _ in range(MAX_MINORITY_STEPS):
            row = self._row(match.key)
            if row.status != "running":
                break
            step = engine.step(row.state)
            opened = row.step_opened_at
            if step.kind == "marker":
                self._minority_send(players[dmo], lambda p: p.marker(), opened + 3 * HOUR)
            elif step.kind == "send":
                for hours, key in ((1, ec), (2, dmo)):
                    self._minority_send(players[key], lambda p: p.send_command(*p.choose()), opened + hours * HOUR)
            else:
                (key,) = step.players
                self._minority_send(players[key], lambda p: p.bet_command(), opened + 2 * HOUR)
            history = engine.view(self._row(match.key).state, None)["history"]
            for entry in history[told:]:
                chips = ", ".join(f"{p} {entry['chips_before'][p]} -> {entry['chips'][p]}" for p in (ec, dmo))
                won = ", ".join(f"{room} {entry['winners'][room]}" for room in ROOMS if entry["winners"][room])
                self._say(f"  Round {entry['round']} paid out: rooms won {won or 'by nobody'}; chips {chips}")
            told = len(history)

    def _minority_send(self, player: MinorityPlayer, command: Any, at: datetime) -> None:
        """``player`` replies with ``command(player)``; when refused, with the form's own command."""
        _, answer = self._send(player, at, lambda t: player.reply(command(player), t))
        if "Not recorded" in answer.subject:
            filled = form_of(answer.text)
            self._say(f"  {player.key}: refused by mail ({_problem(answer)}); the form's command instead")
            if filled:
                self._send(player, at + HOUR, lambda t: player.reply(filled[0], t))

    # ----------------------------------------------------------------- the end

    def report_end(self) -> datetime | None:
        """The season's end and its final standings (``referee standings``); when it ended."""
        with self.store.unit_of_work() as session:
            season = session.scalar(select(Season).where(Season.key == SEASON))
            settings = dict(season.settings or {})
        ended = settings.get("ended_at")
        print("", file=self.out)
        if ended is None:
            self._say("WRONG: the season has not ended")
            return None
        at = datetime.fromisoformat(ended.replace("Z", "+00:00"))
        self._say(f"{at:{DATE}}  the season is over ({settings.get('ended_by')} was its last match)\n")
        name, rows = season_standings(self.store, SEASON)
        self._say("Final standings (referee standings):")
        for line in standings_text(name, rows).splitlines():
            self._say(f"  {line}")
        return at


class _Clock:
    """The mail of the MatchJack planner, on the season's clock (its ticks never go back)."""

    def __init__(self, season: _Season):
        self.season = season

    def advance(self, at: datetime) -> None:
        """Nothing to do: a player's mail is delivered with the time it is sent at."""

    def tick(self, at: datetime) -> None:
        self.season.tick(at)


def _problem(answer: Received) -> str:
    """The Problem paragraph of an error mail on one line, without the line it quotes."""
    return problem_line(answer.text).removesuffix(" In this line of your mail:")


def mail_check(store: Store, clients: dict[str, ScriptedClient]) -> tuple[bool, str]:
    """Every player's mailbox holds mail of each match they sat at (a mail whose subject
    names the match; of a nomination, the EC's mail and the DMO's) and the final standings;
    what to say of it."""
    with store.unit_of_work() as session:
        sat = [
            (m.key, m.kind, (m.result or {}).get("scores") or {}, seat.player.key)
            for m in session.scalars(select(Match).order_by(Match.id))
            for seat in m.seats
        ]
    subjects = {key: [m.subject for m in client.all()] for key, client in clients.items()}
    missing = [
        f"{key} (final standings)" for key, found in subjects.items() if "] Final standings" not in " ".join(found)
    ]
    for key, kind, scores, player in sat:
        if player not in clients:
            continue  # a silent participant: never mailed
        if kind == "nomination":
            wanted = {scores.get("ec"): "nominate your DMO", scores.get("dmo"): "The DMO is"}.get(player)
        else:
            wanted = f" {key}]"
        if wanted and not any(wanted in subject for subject in subjects[player]):
            missing.append(f"{player} ({key})")
    counts = ", ".join(f"{key} {len(found)}" for key, found in subjects.items())
    if missing:
        return False, f"WRONG: no mail for {', '.join(missing)}"
    return True, f"Every player's mailbox holds the mails of their matches and the final standings: {counts}."
