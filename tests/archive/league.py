"""A season for the archive's tests, played straight through the match book.

The service's own path without the mail: matches are started, moved and closed by
:class:`referee.match.book.MatchBook` in units of work, as the judge and the clock do, so
every event, ledger row, result and hash-chain link is the one a real season would have.
Moves come from each game's ``sample_moves`` (as ``tests/games/test_conformance.py`` plays),
so every game in ``referee.games.GAMES`` can be put in any state a season reaches.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import select, update

from referee.config import parse_season
from referee.games import GAMES
from referee.match.book import MATCH_CONTEXT, MatchBook
from referee.seasons import load_season
from referee.store.db import Store
from referee.store.models import Match

START = datetime(2026, 12, 1, 18, 0, tzinfo=timezone.utc)
DAY = timedelta(days=1)
SECRET = b"archive-test-secret-0123456789abcdef"

EVIL_NAME = "<script>alert(1)</script>"
EVIL_SEASON = "Season & <b>\"quoted\"</b> 'it'"


def season_dict(
    matches: list[dict[str, Any]],
    *,
    key: str = "s1",
    name: str = "Test season",
    players: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """A season file's content: four players (one with a name that is HTML), the matches."""
    return {
        "season": {"id": key, "name": name, "starting_chips": 200, "reminders": []},
        "players": players
        or [
            {"id": "alice", "name": "Alice", "email": "alice@example.test", "timezone": "Europe/Berlin"},
            {"id": "bob", "name": "Bob", "email": "bob@example.test", "timezone": "America/New_York"},
            {"id": "carol", "name": EVIL_NAME, "email": "carol@example.test", "timezone": "Asia/Tokyo"},
            {"id": "dave", "name": "Dave", "email": "dave@example.test", "timezone": "UTC"},
        ],
        "matches": matches,
    }


def match_dict(key: str, game: str, players: list[str], *, seed: int = 1, start: datetime = START) -> dict[str, Any]:
    return {"id": key, "game": game, "players": players, "start": start.isoformat(), "seed": seed}


def load(store: Store, data: dict[str, Any]) -> None:
    """Load a season file's content. A match of a season's own step (the nomination, which no
    season file schedules: the referee opens it) is loaded as a two-player duel and then
    turned into that step, so the archive tests can put every game in any state."""
    steps = {m["id"]: m["game"] for m in data["matches"] if GAMES[m["game"]].game_type.season_step}
    if steps:
        data = {**data, "matches": [{**m, "game": "indian-poker"} if m["id"] in steps else m for m in data["matches"]]}
    load_season(store, parse_season(data, "test season"), START - DAY)
    with store.unit_of_work() as session:
        for key, game in steps.items():
            steps = {kind: hours * 3600 for kind, hours in GAMES[game].step_kinds.items()}
            timing = {"steps": steps, "reminders": []}
            session.execute(update(Match).where(Match.key == key).values(game=game, timing=timing))


class League:
    """Moves the matches of a store on, one unit of work per step, as the service would."""

    def __init__(self, store: Store):
        self.store = store
        self.book = MatchBook(SECRET)
        self.clock: dict[str, datetime] = {}  # per match, the instant of its last move

    def _with(self, key: str, work) -> Any:
        with self.store.unit_of_work() as session:
            match = session.scalar(select(Match).options(*MATCH_CONTEXT).where(Match.key == key))
            return work(session, match)

    def match(self, key: str) -> Match:
        return self._with(key, lambda session, match: match)

    def start(self, key: str) -> None:
        self._with(key, lambda session, match: self.book.start(session, match))

    def close(self, key: str) -> datetime:
        """Close the open step at its deadline (the rules' defaults for whoever is missing)."""
        return self._with(key, lambda session, match: self.book.close_step(session, match))

    def move(self, key: str, player: str, move: dict[str, Any], at: datetime) -> None:
        def work(session, match):
            applied = GAMES[match.game].apply_move(match.state, player, move)
            assert applied.accepted, applied.reason
            self.book.record_moves(session, match, player, [{"move": move, "accepted": True}], applied.state, at)

        self._with(key, work)

    def step(self, key: str, rnd: random.Random, *, deadline_odds: float = 0.3) -> bool:
        """One random event of a running match: a sample move of a player who may act, an
        hour after the later of the step's opening and the last move (before the deadline),
        or else the deadline. False once the match is over."""
        match = self.match(key)
        if match.status != "running":
            return False
        game = GAMES[match.game]
        step = game.step(match.state)
        movers = [(p, moves) for p in step.players if (moves := game.sample_moves(match.state, p, rnd))]
        at = max(match.step_opened_at, self.clock.get(key, match.starts_at)) + timedelta(minutes=rnd.randint(1, 60))
        if movers and rnd.random() >= deadline_odds and at < match.deadline:
            player, moves = rnd.choice(movers)
            self.move(key, player, rnd.choice(moves), at)
            self.clock[key] = at
        else:
            self.close(key)
        return True

    def play(self, key: str, rnd: random.Random, *, events: int | None = None, **odds: float) -> None:
        """Start the match if need be, then ``events`` random events (or until it ends)."""
        if self.match(key).status == "scheduled":
            self.start(key)
        done = 0
        while (events is None or done < events) and self.step(key, rnd, **odds):
            done += 1
            assert done < 5000, f"{key} does not end"
