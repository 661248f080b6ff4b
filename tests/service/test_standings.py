"""`referee standings`: a season's players with victory points, chips, garnets, CoLs and
matches played, from the finished matches and the season ledger; silent participants are
no season players (issue 21)."""

from __future__ import annotations

import json
from datetime import timedelta

from sqlalchemy import select

from referee.cli import main
from referee.standings import season_standings
from referee.store.models import Match

from .harness import DAY, START, World
from .test_betting_minority_service import PARTICIPANTS, bm_season


def test_standings_rank_the_players_of_a_finished_match_by_victory_points(tmp_path, db_url, capsys):
    world = World(tmp_path, db_url)
    try:
        at = START
        while True:  # nobody sends anything: every round closes with its defaults
            world.tick(at)
            with world.store.unit_of_work() as session:
                match = session.scalar(select(Match).where(Match.key == "m1"))
                if match.status == "finished":
                    points = dict(match.result["victory_points"])
                    break
            at += DAY
            assert at < START + 30 * DAY, "the match does not end"
        name, rows = season_standings(world.store)
        assert name == "Test season"
        assert [r.player for r in rows] == sorted(points, key=lambda p: (-points[p], p))
        assert all(r.played == 1 for r in rows) and [r.rank for r in rows] == [1, 2]
        assert {r.player: r.victory_points for r in rows} == points
        assert main(["--config", str(world.dir / "referee.toml"), "standings"]) == 0
        table = capsys.readouterr().out
        assert table.startswith("Standings of Test season (VP: victory points; CoLs: certificates of life)\n")
        assert "Alice (alice)" in table and "Bob (bob)" in table
        assert main(["--config", str(world.dir / "referee.toml"), "standings", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert [r["player"] for r in data["standings"]] == [r.player for r in rows]
    finally:
        world.store.dispose()


def test_silent_participants_are_no_season_players(tmp_path, db_url):
    world = World(tmp_path, db_url, bm_season())
    try:
        world.tick(START + timedelta(minutes=1))
        _, rows = season_standings(world.store)
        assert [r.player for r in rows] == ["alice", "bob"]  # none of the participants
        assert not set(PARTICIPANTS) & {r.player for r in rows}
    finally:
        world.store.dispose()
