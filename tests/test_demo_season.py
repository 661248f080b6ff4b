"""`referee demo --season`: a whole small season by mail (two main matches, each with its
nomination and death match), its final standings with the eliminated players, the archive's
season page, the players' mailboxes, `referee status` and `archive verify` on the folder."""

from __future__ import annotations

import html
import io
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.cli import main
from tests.demo_runs import shared_demo
from referee.demo.season import SEASON_PLAYERS, SILENT, run_season_demo
from referee.mail.client import ScriptedClient
from referee.standings import season_standings
from referee.store.db import Store
from referee.store.models import Match, Player, Season

SEED = 5
KEYS = ("main1", "main1-nomination", "main1-death", "main2", "main2-nomination", "main2-death")


@dataclass
class Played:
    folder: Path
    code: int
    out: str
    err: str
    matches: dict[str, dict]  # key -> game, kind, status, seats, result
    eliminated: dict[str, tuple[str, str]]  # player -> (name, the death match they lost)
    ended: str | None


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Played:
    """The season demo, run once by the CLI (for the tests of this file and the browser's:
    tests/demo_runs.py)."""
    run = shared_demo(tmp_path_factory, "--season", "{dir}", "--seed", str(SEED))  # or --season --dir DIR
    folder, code = run.folder, run.code
    store = Store(f"sqlite:///{folder / 'referee.db'}")
    with store.unit_of_work() as session:
        matches = {
            m.key: {
                "game": m.game,
                "kind": m.kind,
                "status": m.status,
                "seats": [seat.player.key for seat in m.seats],
                "result": m.result,
            }
            for m in session.scalars(select(Match).order_by(Match.id))
        }
        eliminated = {
            p.key: (p.name, p.eliminated_in)
            for p in session.scalars(select(Player).where(Player.eliminated_at.is_not(None)))
        }
        ended = (session.scalar(select(Season)).settings or {}).get("ended_at")
    store.dispose()
    return Played(folder, code, run.out, run.err, matches, eliminated, ended)


def test_the_season_demo_plays_the_whole_season_and_ends_with_the_standings(played):
    out = played.out
    assert played.code == 0, out + played.err
    assert f"A whole season by mail, seed {SEED}: 7 players (" in out
    # the frame created the nominations and the death matches; every match finished
    assert sorted(played.matches) == sorted(KEYS)
    assert all(m["status"] == "finished" for m in played.matches.values())
    assert [played.matches[k]["game"] for k in KEYS] == [
        "stationary-roulette",
        "nomination",
        "indian-poker",
        "matchjack",
        "nomination",
        "betting-minority",
    ]
    assert played.ended is not None

    # two players eliminated, one by each death match: the loser of each
    assert sorted(played.eliminated.values(), key=lambda e: e[1]) == [
        (SEASON_PLAYERS[played.matches[k]["result"]["ranking"][-1]][0], k) for k in ("main1-death", "main2-death")
    ]
    first_out = next(p for p, (_, where) in played.eliminated.items() if where == "main1-death")
    # main2 seats the six live players: not the one main1-death eliminated
    assert sorted(played.matches["main2"]["seats"]) == sorted(p for p in SEASON_PLAYERS if p != first_out)

    # the commentary: each match started and ended, the EC, the DMO, who was eliminated
    for key in ("main1", "main1-death", "main2", "main2-death"):
        assert re.search(rf"^\w{{3}} \d\d \w{{3}} \d\d:\d\d  {key} starts: ", out, re.M), key
        assert re.search(rf"^\w{{3}} \d\d \w{{3}} \d\d:\d\d  {key} ends: ", out, re.M), key
    for key in ("main1-nomination", "main2-nomination"):
        nomination = played.matches[key]
        ec, dmo = nomination["seats"][0], nomination["result"]["scores"]["dmo"]
        assert f"  {key}: {ec} is the EC and is asked by mail to nominate the DMO" in out
        assert re.search(rf"^  {ec}: NOMINATE \w[^\n]*$", out, re.M)
        assert f"  {dmo} is the DMO (nominated by the EC)" in out
        assert nomination["result"]["scores"]["by"] == "ec"
    # the second EC names the winner first: refused by mail, then a player by first name
    assert out.count("refused by mail (Problem: No player you may nominate is called ") == 1
    for player, (_, where) in played.eliminated.items():
        assert f"  {player} is eliminated (eliminated in {where})" in out
    assert "the season is over (main2-death was its last match)" in out

    # the final standings: `referee standings`, the eliminated last, with their death match
    assert "Final standings (referee standings):" in out
    table = out.split("Final standings (referee standings):\n", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines() if re.match(r"^\s+\d+\s", line)]
    assert len(rows) == len(SEASON_PLAYERS)  # the silent participants are no season players
    latest = next(p for p, (_, where) in played.eliminated.items() if where == "main2-death")
    assert rows[-2].rstrip().endswith("eliminated in main2-death") and f"({latest})" in rows[-2]
    assert rows[-1].rstrip().endswith("eliminated in main1-death") and f"({first_out})" in rows[-1]
    assert not any("eliminated" in row for row in rows[:-2])
    assert not any(name in table for name, _ in SILENT.values())

    # the mail, the archive, how to look at it
    assert "Every player's mailbox holds the mails of their matches and the final standings: " in out
    site = played.folder / "archive"
    assert f"open {(site / 'index.html').as_uri()}" in out and " archive serve" in out
    assert " standings" in out.split("The standings again: ", 1)[1].splitlines()[0]
    assert len([line for line in out.splitlines() if line.startswith("Try: ")]) == 1


def test_the_archive_s_season_page_shows_the_eliminations(played):
    site = played.folder / "archive" / "seasons" / "demo"
    page = html.unescape(re.sub(r"<[^>]+>", "", (site / "index.html").read_text(encoding="utf-8")))
    text = " ".join(page.split())
    assert len(played.eliminated) == 2
    for name, where in played.eliminated.values():
        assert f"{name} (eliminated in {where})" in text
    assert text.count("(eliminated in ") == 2
    for key in KEYS:
        assert (site / "matches" / key / "index.html").is_file(), key


def test_every_player_s_mailbox_holds_the_mails_of_their_matches(played):
    outbox = played.folder / "mail" / "outbox"
    mailboxes = {
        key: ScriptedClient(f"{key}@demo.test", name, outbox / f"{key}@demo.test", played.folder / "mail").all()
        for key, (name, _tz) in SEASON_PLAYERS.items()
    }
    for key, match in played.matches.items():
        scores = (match["result"] or {}).get("scores") or {}
        for position, player in enumerate(match["seats"]):
            if player in SILENT:
                continue
            subjects = [m.subject for m in mailboxes[player]]
            if match["kind"] == "nomination":  # the EC's mail and the DMO's; the others are not mailed
                wanted = {0: "You are the EC: nominate your DMO"}.get(position)
                wanted = "The DMO is " if player == scores["dmo"] else wanted
                if wanted:
                    assert any(wanted in s for s in subjects), (player, key)
                continue
            mine = [s for s in subjects if f" {key}]" in s]
            assert mine, (player, key)
            if match["game"] == "betting-minority" and position >= 2:  # a participant: their list only
                assert len(mine) == 1 and "Your list" in mine[0], (player, mine)
            else:
                assert len(mine) >= 2, (player, key)  # the step mails, receipts or results
    for silent in SILENT:
        assert not (outbox / f"{silent}@demo.test").exists()
    # every player got the final standings; the eliminated players too
    for player, mails in mailboxes.items():
        assert any(m.subject.endswith("] Final standings") for m in mails), player


def test_status_standings_and_archive_verify_agree_in_the_folder(played, monkeypatch, capsys):
    monkeypatch.chdir(played.folder)
    capsys.readouterr()
    assert main(["status"]) == 0
    status = capsys.readouterr().out
    blocks = {block.split()[0]: block for block in re.split(r"\n(?=\S)", status) if block.strip()}
    for key in KEYS:
        assert key in blocks, key
        assert re.search(r"^  finished \d{4}-\d\d-\d\d \d\d:\d\d UTC: ", blocks[key], re.M), blocks[key]
    assert main(["standings"]) == 0
    standings = capsys.readouterr().out
    for player, (_name, where) in played.eliminated.items():
        assert re.search(rf"\({player}\).*eliminated in {where}$", standings, re.M)
    _, rows = season_standings(Store(f"sqlite:///{played.folder / 'referee.db'}"))
    assert [r.eliminated_in for r in rows][-2:] == ["main2-death", "main1-death"]
    assert main(["archive", "verify", "--site", "archive"]) == 0
    verified = capsys.readouterr().out
    assert "0 broken" in verified
    for key in KEYS:
        assert f"ok: {key}: " in verified and f"ok: {key} (seasons/demo/matches/{key}/chain.json): " in verified
    for key in ("main1-death", "main2-death"):
        assert main(["replay", key]) == 0


def test_the_season_demo_takes_no_game_and_runs_on_maildirs_only(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--season", "--game", "matchjack", "--dir", str(tmp_path / "x")])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
    assert main(["demo", "--season", "--transport", "imap", "--dir", str(tmp_path / "y")]) == 2
    assert "the season demo runs on Maildirs" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "precious.txt").write_text("keep me")
    with pytest.raises(Exception, match="not a demo folder"):
        run_season_demo(tmp_path / "z", seed=1, out=io.StringIO())
    assert (tmp_path / "z" / "precious.txt").exists()
