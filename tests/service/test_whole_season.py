"""A whole season through the real service, by mail, on SQLite and on PostgreSQL (issue 21):
twelve players, two rounds of main matches (MatchJack and Stationary Roulette), each followed
by its nomination and its death match (one of each death-match game: Indian Poker, Rewind
Hold'em, Betting Minority), with the organizer's controls on the way (a substitution, an
extended deadline, a pause and resume, a cancelled match), a CoL used in a nomination, the
abandonment rule, and the final standings checked against a table worked out by hand.
After every tick the unchanged season file is loaded again: it must change nothing.

The season (every step 1 hour, no reminders; T = 2026-12-01 18:00 UTC):

Round 1, at T
- mj1, MatchJack: Alice, Bob, Carol, Dave, Erin, Frank. Nobody sends a stay choice (a
  timeout folds) but Bob, who stays in hand 1 and then misses his action turn (a fold):
  he pays the second ante for nothing. Alice guesses Alpha's rule right in hand 1 (+6
  chips, +3 garnets). Antes: 1 chip in hands 1-7, 2 in 8-13, 3 in 14-15, so 19 chips by
  hand 13. Bob (20 - 2 - 6 - 12) is at 0 in hand 13, the first: the EC. Carol, Dave,
  Erin and Frank (20 - 19 = 1 chip left) ante their last chip in hand 14; Alice
  (26 - 19 - 3 = 4) is then the only one with chips: the match ends after hand 14, Alice
  wins (1 VP, 2 CoLs). Hand 1 lasts 2 hours (Bob's action turn), hands 2-14 one hour
  each, and two breaks: it ends at T + 17h.
- sr1, Stationary Roulette: Grace, Heidi. Grace sends one roulette in the preparation
  phase (Gold wins; Gold 35, Silver 5), then nothing; Heidi never sends anything. Points:
  Grace 60 for each of Heidi's 10 missing roulettes (rounds 0-9) + 35 (round 1: Gold
  wins, Heidi's missing bet is 0 everywhere) = 635; Heidi 60 for each of Grace's 9
  missing roulettes (rounds 1-9) = 540. Grace wins by 95 and takes floor(95 / 10) = 9
  chips. Fees, 5 chips a miss: Grace 9 (roulettes of rounds 1-9), Heidi 11 (10 roulettes
  and the bet of round 1; she has nothing to bet on after that). Chips: Grace
  200 - 45 + 9 = 164, Heidi 200 - 55 - 9 = 136. It ends at T + 11h.
- sr1's nomination: Heidi, the EC, is silent: at its deadline (T + 12h) a lot among the
  live players but Heidi and Grace draws Dave (the nomination's seed and lot, worked out
  below from the season's seed 42). sr1-death, Rewind Hold'em (abandonment after 3 missed
  steps), starts at T + 13h: Dave (the DMO) opens round 1 with RAISE 1, Heidi misses
  every turn (one a round: she folds facing a raise, or calls on equal antes when she
  opens), so she forfeits at her third miss: eliminated at T + 16h05.
- mj1's nomination: Bob nominates Kevin. mj1-death, Indian Poker (abandonment after 2
  missed steps), starts at T + 18h05: Kevin never answers; he acts first in hand 1, and in
  hand 2 either he opens again (after losing hand 1 or a tie) or faces Bob's RAISE 1:
  his second miss comes in hand 2, and he forfeits: eliminated at T + 20h05.

Round 2, at R = T + 24h
- mj2, MatchJack: Alice, Carol, Dave, Erin, Ivan, Judy. As mj1: Ivan stays in hand 1 and
  misses his action (the EC, at 0 in hand 13); Judy guesses right in hand 1, Alice in
  hand 3 (+6 chips, +3 garnets each). Both have 4 chips after hand 14, so hand 15 is
  played: 1 chip each. The tie goes to the chips after the hands before, going back:
  after hand 1 Judy had 25, Alice 19: Judy wins (1 VP, 2 CoLs). Paused for 3 hours in
  hand 3: it ends at R + 2h + 14h + 2h + 3h = R + 21h.
- sr2, Stationary Roulette: Frank, Laura. Laura sends one roulette in the preparation
  phase (as Grace did), then the organizer hands her seat to Bob (Laura moved abroad)
  during round 2; nobody sends anything more. Round 5 is extended by 2 hours: it ends at
  R + 13h. The seat scores as Grace did (635 to 540) and wins: Bob's (1 VP), with the 9
  chips of the lead. Fees: Laura 5 (her missing roulette of round 1, before the
  handover), Bob 40 (the roulettes of rounds 2-9), Frank 55. Chips: Laura 195, Bob
  200 - 40 + 9 = 169, Frank 200 - 55 - 9 = 136.
- sr2's nomination: Frank nominates Alice, who uses one of her 2 CoLs; Frank nominates
  Grace. sr2-death (Indian Poker) starts an hour later; the organizer cancels it half an
  hour in: no result, nobody eliminated, in nobody's standings.
- mj2's nomination: Ivan nominates Dave. mj2-death, Betting Minority: Ivan, Dave, the
  other 8 live players drawn by lot, then the silent participants Quiet 1 and Quiet 2.
  Nobody sends anything: the DMO keeps the marker; every round each player misses one
  betting turn (the opener, then the other, who opens instead; no bets, no payout); the
  k/5 losses take 4 chips to 4, 3, 2, 1 and, at the fifth miss, 0, both at once: the DMO
  wins. Ivan is eliminated at R + 44h45 (marker 1h, five rounds of 4h20: a placement
  step, two turns and their extensions of 40 minutes). Nothing is left: the season ends.

Matches played count finished matches with an outcome for the player: not a
nomination, not a cancelled match, not a participant's silent seat, and not Laura's sr2,
whose result is the seat's new player's (RULINGS, "Seasons", ruling 12).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import func, select

from referee.config import parse_season
from referee.games import GAMES
from referee.games.base import open_steps, rng
from referee.match.book import replay
from referee.mail.client import ScriptedClient
from referee.season.controls import Controls
from referee.seasons import load_season
from referee.standings import season_standings
from referee.store.models import Event, LedgerEntry, Match, Player, Season

from .harness import SEASON, START, World

HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
T = START  # 2026-12-01 18:00 UTC
R = T + 24 * HOUR  # round 2
KEYS = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "kevin", "laura")
SILENT = ("quiet1", "quiet2", "quiet3", "quiet4")
STEP = re.compile(r"^Step: .+$", re.MULTILINE)
ROULETTE = "Step: Preparation phase\nROULETTE\nWinning colour: Gold\nGold: 35\nSilver: 5\nBlack: 0"

# The final standings, worked out by hand (the module's docstring says how): live players
# by victory points, chips, garnets (then name); eliminated players after them, the latest
# first. (player, eliminated in, victory points, chips, garnets, CoLs, matches played)
EXPECTED = [
    # mj1 won; 3 + 3 garnets (mj1, mj2); 2 CoLs of mj1, one used in sr2's nomination; mj1, mj2
    ("alice", None, 1.0, 200, 6, 1, 2),
    # mj2 won; 3 garnets, 2 CoLs; mj2 (a participant of mj2-death: no outcome, not played)
    ("judy", None, 1.0, 200, 3, 2, 1),
    # sr2 won with Laura's seat; 200 - 40 + 9 chips; mj1, mj1-death, sr2
    ("bob", None, 1.0, 169, 0, 0, 3),
    # sr1 won; 200 - 45 + 9 chips; sr1 (sr2-death was cancelled)
    ("grace", None, 1.0, 164, 0, 0, 1),
    ("carol", None, 0.0, 200, 0, 0, 2),  # mj1, mj2
    ("dave", None, 0.0, 200, 0, 0, 4),  # mj1, sr1-death, mj2, mj2-death
    ("erin", None, 0.0, 200, 0, 0, 2),  # mj1, mj2
    ("laura", None, 0.0, 195, 0, 0, 0),  # one fee before the handover; sr2's result is Bob's
    ("frank", None, 0.0, 136, 0, 0, 2),  # mj1, sr2 (lost): 200 - 55 - 9
    ("ivan", "mj2-death", 0.0, 200, 0, 0, 2),  # mj2, mj2-death: eliminated last
    ("kevin", "mj1-death", 0.0, 200, 0, 0, 1),  # mj1-death, at T + 20h05
    ("heidi", "sr1-death", 0.0, 136, 0, 0, 2),  # sr1, sr1-death, at T + 16h05
]
ELIMINATED_AT = {"ivan": R + 44 * HOUR + 45 * MINUTE, "kevin": T + 20 * HOUR + 5 * MINUTE}
ELIMINATED_AT["heidi"] = T + 16 * HOUR + 5 * MINUTE


def season_file() -> dict:
    quick = {"phase_length": "1h", "reminders": []}
    return {
        "season": {
            "id": "whole",
            "name": "Whole season",
            "starting_chips": 200,
            "seed": 42,
            "death_match_gap": "1h",
            "nomination_length": "1h",
            "cols": True,
            "silent_participants": list(SILENT),
        },
        "games": {
            "indian-poker": {**quick, "abandon_after": 2},
            "rewind-holdem": {**quick, "abandon_after": 3},
            "betting-minority": dict(quick),
        },
        "players": [{"id": k, "name": k.title(), "email": f"{k}@example.test", "timezone": "UTC"} for k in KEYS]
        + [{"id": key, "name": f"Quiet {key[-1]}"} for key in SILENT],
        "matches": [
            {
                "id": "mj1",
                "game": "matchjack",
                "kind": "main",
                "players": ["alice", "bob", "carol", "dave", "erin", "frank"],
                "start": T.isoformat(),
                "seed": 101,
                "abandon_after": 0,  # everyone lets the stay steps pass
                "death_match": "indian-poker",
                **quick,
            },
            {
                "id": "sr1",
                "game": "stationary-roulette",
                "kind": "main",
                "players": ["grace", "heidi"],
                "start": T.isoformat(),
                "seed": 102,
                "death_match": "rewind-holdem",
                **quick,
            },
            {
                "id": "mj2",
                "game": "matchjack",
                "kind": "main",
                "players": ["alice", "carol", "dave", "erin", "ivan", "judy"],
                "start": R.isoformat(),
                "seed": 103,
                "abandon_after": 0,
                "death_match": "betting-minority",
                **quick,
            },
            {
                "id": "sr2",
                "game": "stationary-roulette",
                "kind": "main",
                "players": ["frank", "laura"],
                "start": R.isoformat(),
                "seed": 104,
                "death_match": "indian-poker",
                **quick,
            },
        ],
    }


def snapshot(world: World) -> dict:
    """What a reload of the season file could change: every match (with its options, timing,
    seats and events), the players, the ledger, the season's settings."""
    with world.store.unit_of_work() as session:
        matches = {
            m.key: (
                m.status,
                m.game,
                m.seed,
                m.options,
                m.timing,
                m.starts_at,
                m.kind,
                m.seating,
                m.problem,
                m.deadline,
                m.last_event_seq,
                [(s.position, s.player.key) for s in m.seats],
            )
            for m in session.scalars(select(Match).order_by(Match.id))
        }
        players = [
            (p.key, p.name, p.email, p.timezone, p.eliminated_at, p.eliminated_in)
            for p in session.scalars(select(Player).order_by(Player.id))
        ]
        return {
            "matches": matches,
            "players": players,
            "events": session.scalar(select(func.count()).select_from(Event)),
            "ledger": session.scalar(select(func.count()).select_from(LedgerEntry)),
            "settings": [s.settings for s in session.scalars(select(Season))],
        }


class Driver:
    """The season's clock and its players. :meth:`run` ticks from one due instant to the next
    (a deadline, a start), reloading the unchanged season file after every tick; after each
    tick the present players answer what is open to them, five minutes later."""

    def __init__(self, world: World):
        self.world = world
        self.spec = parse_season(season_file(), "whole season")
        self.now = T - HOUR
        self.reloads = 0
        self.answered: set[tuple[str, str, str]] = set()
        self.duels: dict[str, str] = {}  # a death match -> its present player (RAISE 1 on each turn)
        self.nominations: dict[str, list[str]] = {}  # an EC -> whom they nominate, in turn
        self.cols: dict[str, str] = {}  # a nominee -> USE COL or NO COL
        self.sent: list[str] = []

    # ------------------------------------------------------------------ the clock

    def tick(self, at: datetime) -> None:
        assert at >= self.now, (at, self.now)
        self.now = at
        self.world.tick(at)
        before = snapshot(self.world)
        assert load_season(self.world.store, self.spec, at) == [], at
        assert snapshot(self.world) == before, at
        self.reloads += 1

    def next_due(self) -> datetime | None:
        with self.world.store.unit_of_work() as session:
            deadline = session.scalar(select(func.min(Match.deadline)).where(Match.status == "running"))
            start = session.scalar(select(func.min(Match.starts_at)).where(Match.status == "scheduled"))
        due = [t for t in (deadline, start) if t is not None]
        return min(due) if due else None

    def run(self, until: datetime) -> None:
        """Every due instant up to ``until``, then ``until`` itself."""
        while True:
            while self.react():
                pass
            due = self.next_due()
            if due is None or due > until:
                break
            self.tick(max(due, self.now))
        if until > self.now:
            self.tick(until)
            while self.react():
                pass

    # ------------------------------------------------------------------ the players

    def react(self) -> bool:
        at = self.now + 5 * MINUTE
        sent = False
        with self.world.store.unit_of_work() as session:
            running = [
                (m.key, m.game, m.state)
                for m in session.scalars(select(Match).where(Match.status == "running").order_by(Match.id))
            ]
        for key, game, state in running:
            for step in open_steps(GAMES[game], state):
                for player in step.players:
                    if (key, step.key, player) in self.answered:
                        continue
                    text = self.answer(key, game, step, player)
                    if text is None:
                        continue
                    self.answered.add((key, step.key, player))
                    self.world.client(player).reply(self.form_mail(player, key, game), text, at)
                    self.sent.append(f"{at:%d %H:%M} {player}, {key} {step.key}: {text.splitlines()[0]}")
                    sent = True
        if sent:
            self.tick(at)
        return sent

    def answer(self, key: str, game: str, step, player: str) -> str | None:
        if game == "nomination":
            if step.kind == "nominate" and self.nominations.get(player):
                return f"NOMINATE {self.nominations[player].pop(0)}"
            if step.kind == "col" and player in self.cols:
                return self.cols.pop(player)
            return None
        return "RAISE 1" if self.duels.get(key) == player else None

    def form_mail(self, player: str, key: str, game: str):
        mails = self.world.client(player).all()
        if game == "nomination":
            mails = [m for m in mails if "nominate your DMO" in m.subject or "use a CoL" in m.subject]
        else:
            mails = [m for m in mails if f" {key}]" in m.subject and STEP.search(m.text)]
        assert mails, (player, key)
        return mails[-1]

    def send(self, player: str, key: str, text: str, at: datetime) -> None:
        """``player`` answers their latest mail about match ``key``."""
        mail = [m for m in self.world.client(player).all() if f" {key}]" in m.subject][-1]
        self.world.client(player).reply(mail, text, at)

    # ------------------------------------------------------------------ reading

    def match(self, key: str) -> Match | None:
        with self.world.store.unit_of_work() as session:
            found = session.scalar(select(Match).where(Match.key == key))
            if found is not None:
                _ = [seat.player.key for seat in found.seats]
            return found

    def seats(self, key: str) -> list[str]:
        with self.world.store.unit_of_work() as session:
            return [s.player.key for s in session.scalar(select(Match).where(Match.key == key)).seats]

    def mails(self, player: str, about: str) -> list:
        return [m for m in self.world.client(player).all() if about in m.subject]

    def mail(self, player: str, about: str):
        found = self.mails(player, about)
        assert found, (player, about, [m.subject for m in self.world.client(player).all()][-5:])
        return found[-1]


def controls(world: World) -> Controls:
    return Controls(world.store, world.referee.book, world.referee.notices)


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path, db_url, season_file())
    w.clients = {
        key: ScriptedClient(
            f"{key}@example.test", key.title(), w.config.mail.outbox / f"{key}@example.test", w.config.mail.inbox
        )
        for key in KEYS
    }
    yield w
    w.store.dispose()


def test_a_whole_season_of_twelve_players_ends_with_the_standings_worked_out_by_hand(world):
    s = Driver(world)

    # ---------------------------------------------------------------- round 1
    s.tick(T)
    rules = s.match("mj1").state["rules"]  # the players may know them: a right guess is what counts
    s.send("alice", "mj1", f"GUESS Alpha {rules['Alpha']}", T + 10 * MINUTE)
    s.send("bob", "mj1", "STAY\nStep: Hand 1, stay or fold", T + 10 * MINUTE)
    s.send("grace", "sr1", ROULETTE, T + 10 * MINUTE)
    s.tick(T + 10 * MINUTE)
    s.duels.update({"sr1-death": "dave", "mj1-death": "bob"})
    s.nominations["bob"] = ["Kevin"]
    s.run(T + 12 * HOUR)

    sr1 = s.match("sr1")
    assert (sr1.finished_at, sr1.result["ranking"], sr1.result["scores"]) == (
        T + 11 * HOUR,
        ["grace", "heidi"],
        {"grace": 635, "heidi": 540},
    )
    # Heidi sent no nomination: the lot, from the season's seed 42 and the main match, among
    # the live players but the EC and the winner, in the order of their ids
    nomination = s.match("sr1-nomination")
    eligible = ["alice", "bob", "carol", "dave", "erin", "frank", "ivan", "judy", "kevin", "laura"]
    assert s.seats("sr1-nomination") == ["heidi", *eligible]
    assert nomination.seed == rng(42, "nomination", "sr1").getrandbits(62)
    assert rng(nomination.seed, "lot", 1).choice(eligible) == "dave"
    assert nomination.result["scores"]["dmo"] == "dave" and nomination.result["scores"]["by"] == "lot"
    assert nomination.finished_at == T + 12 * HOUR
    assert s.seats("sr1-death") == ["heidi", "dave"] and s.match("sr1-death").starts_at == T + 13 * HOUR

    s.run(R)
    death = s.match("sr1-death")
    assert death.game == "rewind-holdem" and death.finished_at == T + 16 * HOUR + 5 * MINUTE
    assert death.result["ranking"] == ["dave", "heidi"] and death.result["outcome"]["heidi"] == "loss"
    assert "missed 3 steps in a row (the abandonment rule: 3)" in flat(s.mail("heidi", "You forfeit the match").text)
    mj1 = s.match("mj1")
    assert mj1.finished_at == T + 17 * HOUR
    assert mj1.result["ranking"][0] == "alice" and mj1.result["ranking"][-1] == "bob"
    assert mj1.result["scores"]["chips"] == {"alice": 4, "bob": 0, "carol": 0, "dave": 0, "erin": 0, "frank": 0}
    assert mj1.result["scores"]["eliminated"][0] == {"player": "bob", "hand": 13}
    # Bob nominated among the live players but himself and Alice (Heidi is out by then)
    assert s.seats("mj1-nomination") == ["bob", *(k for k in KEYS if k not in ("alice", "bob", "heidi"))]
    death = s.match("mj1-death")
    assert death.game == "indian-poker" and s.seats("mj1-death") == ["bob", "kevin"]
    assert death.options["dmo"] == "kevin" and death.starts_at == T + 18 * HOUR + 5 * MINUTE
    assert death.finished_at == T + 20 * HOUR + 5 * MINUTE and death.result["ranking"] == ["bob", "kevin"]
    assert "missed 2 steps in a row" in flat(s.mail("kevin", "You forfeit the match").text)

    # ---------------------------------------------------------------- round 2
    rules = s.match("mj2").state["rules"]
    s.send("judy", "mj2", f"GUESS Alpha {rules['Alpha']}", R + 10 * MINUTE)
    s.send("ivan", "mj2", "STAY\nStep: Hand 1, stay or fold", R + 10 * MINUTE)
    s.send("laura", "sr2", ROULETTE, R + 10 * MINUTE)
    s.tick(R + 10 * MINUTE)

    # the substitution, in sr2's round 2 (Laura paid the fee of her missing round-1 roulette)
    s.run(R + 2 * HOUR + 30 * MINUTE)
    assert s.match("sr2").step_key == "round-2"
    lines = controls(world).substitute("sr2", "laura", "bob", "Laura moved abroad", s.now)
    assert "bob takes over laura's seat" in lines[0]
    s.tick(s.now)
    assert s.seats("sr2") == ["frank", "bob"]
    handover = s.mail("bob", "You take over Laura's seat")
    assert "Laura moved abroad" in flat(handover.text) and "Step: Round 2 of 10" in handover.text
    assert s.mails("laura", "Bob takes over your seat") and s.mails("frank", "Bob takes Laura's seat")
    seq = s.match("sr2").last_event_seq
    s.send("laura", "sr2", ROULETTE.replace("Preparation phase", "Round 2 of 10"), s.now + 5 * MINUTE)
    s.tick(s.now + 5 * MINUTE)
    assert s.match("sr2").last_event_seq == seq  # Laura's reply speaks for the seat no more

    # Alice's guess in hand 3 of mj2, then the organizer pauses mj2 for 3 hours
    s.run(R + 3 * HOUR + 30 * MINUTE)
    assert s.match("mj2").step_key == "h3-stay"
    s.send("alice", "mj2", f"GUESS Gamma {rules['Gamma']}", s.now)
    s.tick(s.now)
    deadline = s.match("mj2").deadline
    controls(world).pause(["mj2"], None, "a power cut at the club", s.now)
    s.tick(s.now)
    assert s.match("mj2").status == "paused" and s.mails("carol", "The match is paused")

    # sr2's round 5 gets 2 hours more
    s.run(R + 5 * HOUR + 30 * MINUTE)
    assert s.match("sr2").step_key == "round-5" and s.match("sr2").deadline == R + 6 * HOUR
    controls(world).extend("sr2", None, 2 * HOUR, s.now)
    s.tick(s.now)
    assert s.match("sr2").deadline == R + 8 * HOUR and s.mails("frank", "More time")

    s.run(R + 6 * HOUR + 30 * MINUTE)
    assert s.match("mj2").status == "paused" and s.match("mj2").deadline == deadline
    controls(world).resume(["mj2"], None, s.now)
    s.tick(s.now)
    assert s.match("mj2").status == "running" and s.match("mj2").deadline == deadline + 3 * HOUR

    # sr2's nomination: Frank nominates Alice, who uses a CoL, then Grace
    s.nominations.update({"frank": ["Alice", "Grace"], "ivan": ["Dave"]})
    s.cols["alice"] = "USE COL"
    s.run(R + 13 * HOUR + 30 * MINUTE)
    sr2 = s.match("sr2")
    assert sr2.finished_at == R + 13 * HOUR
    assert (sr2.result["ranking"], sr2.result["scores"]) == (["bob", "frank"], {"bob": 635, "frank": 540})
    again = s.mail("frank", "nominate your DMO")
    assert "Carol, Dave, Erin, Grace, Ivan, Judy and Laura (not Bob, who won the match)" in flat(again.text)
    assert "Alice was nominated and used a CoL" in flat(again.text)
    scores = s.match("sr2-nomination").result["scores"]
    assert (scores["ec"], scores["dmo"], scores["by"]) == ("frank", "grace", "ec")

    # the organizer cancels sr2's death match half an hour after its start
    death = s.match("sr2-death")
    assert death.starts_at == R + 14 * HOUR + 15 * MINUTE and s.seats("sr2-death") == ["frank", "grace"]
    s.run(death.starts_at + 30 * MINUTE)
    assert s.match("sr2-death").status == "running"
    controls(world).cancel("sr2-death", "Grace is in hospital", s.now)
    s.tick(s.now)
    assert s.match("sr2-death").status == "cancelled" and s.match("sr2-death").result is None
    assert "Grace is in hospital" in s.mail("frank", "The match is cancelled").text

    # mj2 ends; Ivan nominates Dave; Betting Minority, which nobody plays, ends the season
    s.run(R + 60 * HOUR)
    mj2 = s.match("mj2")
    assert mj2.finished_at == R + 21 * HOUR
    assert mj2.result["ranking"][:2] == ["judy", "alice"] and mj2.result["ranking"][-1] == "ivan"
    assert mj2.result["scores"]["chips"] == {"alice": 1, "carol": 0, "dave": 0, "erin": 0, "ivan": 0, "judy": 1}
    bm = s.seats("mj2-death")
    assert bm[:2] == ["ivan", "dave"] and bm[10:] == ["quiet1", "quiet2"]
    assert sorted(bm[2:10]) == ["alice", "bob", "carol", "erin", "frank", "grace", "judy", "laura"]
    death = s.match("mj2-death")
    assert death.starts_at == R + 22 * HOUR + 5 * MINUTE and death.finished_at == R + 44 * HOUR + 45 * MINUTE
    assert death.result["ranking"] == ["dave", "ivan"] and set(death.result["outcome"]) == {"ivan", "dave"}
    with world.store.unit_of_work() as session:
        settings = session.scalar(select(Season)).settings
    assert (settings["ended_at"], settings["ended_by"]) == ("2026-12-04T14:45:00Z", "mj2-death")
    assert [m for m in s.sent if "NOMINATE" in m or "COL" in m] == [
        "02 11:05 bob, mj1-nomination nominate-1: NOMINATE Kevin",
        "03 07:05 frank, sr2-nomination nominate-1: NOMINATE Alice",
        "03 07:10 alice, sr2-nomination col-1: USE COL",
        "03 07:15 frank, sr2-nomination nominate-2: NOMINATE Grace",
        "03 15:05 ivan, mj2-nomination nominate-1: NOMINATE Dave",
    ]

    # ---------------------------------------------------------------- the standings
    _, rows = season_standings(world.store)
    # the season's twelve players, ranked 1 to 12: no silent participant is a season player
    got = [(r.player, r.eliminated_in, r.victory_points, r.chips, r.garnets, r.cols, r.played) for r in rows]
    assert got == EXPECTED
    assert [r.rank for r in rows] == list(range(1, 13))
    assert {r.player: r.eliminated_at for r in rows if r.eliminated_at} == {
        key: at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") for key, at in ELIMINATED_AT.items()
    }
    for key in KEYS:  # every player gets the final standings, the eliminated too
        final = flat(s.mail(key, "Final standings").text)
        assert "The season Whole season is over: its last match has ended." in final
        assert "1. Alice: 1 VP, 200 chips, 6 garnets, 1 CoL" in final
        assert "eliminated in mj2-death" in final
    assert s.reloads > 80


def test_silent_participants_are_no_season_players_in_the_standings(world):
    """RULINGS, "Seasons": silent participants (no address) are no season players, seated at a
    silent seat or not yet (a silent participant never seated was once listed as a live
    player with the starting chips, in `referee standings` and the standings mails)."""
    _, rows = season_standings(world.store)
    assert [r.player for r in rows] == list(KEYS)


def test_a_handed_over_roulette_seat_holds_the_new_players_season_chips(tmp_path, db_url):
    """RULINGS, "Seasons", ruling 12: what the match brought the old player before the
    handover stays theirs. Stationary Roulette plays with the season's chips, so the seat
    handed to Carol (200 chips in the season) holds her 200, not Alice's 195 (Alice paid a
    5-chip fee for round 0); so does a replay."""
    season = {
        **SEASON,
        "players": [*SEASON["players"], {"id": "carol", "name": "Carol", "email": "carol@example.test"}],
        "matches": [{**SEASON["matches"][0], "phase_length": "1h", "reminders": []}],
    }
    w = World(tmp_path, db_url, season)
    try:
        w.tick(T)
        w.tick(T + HOUR)  # round 0 closes: both miss their roulette, 5 chips each
        controls(w).substitute("m1", "alice", "carol", "moved abroad", T + 90 * MINUTE)
        with w.store.unit_of_work() as session:
            state = session.scalar(select(Match).where(Match.key == "m1")).state
        assert state["chips"] == {"carol": 200, "bob": 195}
        with w.store.unit_of_work() as session:
            row = session.scalar(select(Match).where(Match.key == "m1"))
            events = list(session.scalars(select(Event).where(Event.match_id == row.id).order_by(Event.seq)))
            assert replay(GAMES[row.game], row, events) == row.state
    finally:
        w.store.dispose()
