"""A new game brings its demo in its own package: Pile (``tests/pile/``: its engine, its
templates, its ``demo.py``), registered beside the project's games, is offered by ``referee
demo --game`` and plays a whole match by mail through the generic director, with no line of
``referee/demo/`` or of the command line naming it."""

from __future__ import annotations

import re

import pytest
from jinja2 import ChoiceLoader, FileSystemLoader

import referee.render
from referee.cli import main
from referee.demo.registry import demo_of, demos, package_of
from referee.games import GAMES
from tests import pile
from tests.pile import demo as pile_demo


@pytest.fixture
def pile_game(monkeypatch):
    """Pile in the registry, and its templates found before the project's (as the project's
    own games' are in templates/)."""
    monkeypatch.setitem(GAMES, pile.GAME.name, pile.GAME)
    env = referee.render.environment()  # one per process: the mail's and the archive's
    monkeypatch.setattr(env, "loader", ChoiceLoader([FileSystemLoader(str(pile.TEMPLATES)), env.loader]))
    return pile.GAME


def test_a_game_s_demo_is_found_in_its_own_package(pile_game):
    assert package_of(pile_game) == "tests.pile"
    assert demo_of(pile_game) is pile_demo.DEMO
    assert list(demos())[-1] == "pile"
    # the games of the project: each its own package's demo; the nomination (the season's
    # step, a module of referee.games) has none
    assert package_of(GAMES["matchjack"]) == "referee.games.matchjack"
    assert demo_of(GAMES["nomination"]) is None and "nomination" not in demos()


def test_without_registering_it_the_game_is_not_offered(tmp_path, capsys):
    assert "pile" not in demos()
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--game", "pile", "--dir", str(tmp_path / "d")])
    assert exit_.value.code == 2 and "invalid choice: 'pile'" in capsys.readouterr().err


def test_a_registered_game_plays_its_demo_by_mail_through_the_generic_director(
    pile_game, tmp_path, monkeypatch, capsys
):
    folder = tmp_path / "pile"
    assert main(["demo", "--game", "pile", "--dir", str(folder), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert f"referee demo in {folder}" in out
    assert re.search(r"^Pile, alice vs bob, seed 3; a turn of 12 hours each, starting .* \(virtual clock\)$", out, re.M)
    assert re.search(r"^  Turn \d+: alice TAKE 9: refused by mail \(Problem: .*You may take 1 to \d\.", out, re.M)
    assert re.search(r"^  Turn \d+: no answer from bob by the deadline: he takes 1$", out, re.M)
    assert re.search(r"^  Turn \d+: (alice|bob) TAKE [123], 0 left$", out, re.M)  # the last counter
    assert out.count("refused by mail") == 1
    # the end report: the game's standings and result, the script's note on the mail, the
    # archive of the demo season, the status command
    assert "Final standings:\n  alice: took " in out and re.search(
        r"^  (alice|bob) took the last counter\.$", out, re.M
    )
    assert re.search(r"^Mails: alice \d+, bob \d+\.$", out, re.M)
    match_pages = folder / "archive" / "seasons" / "demo" / "matches" / "demo-1"
    assert (match_pages / "index.html").is_file()
    # the ledger and the events name the game's accounts and steps as its package does
    ledger, events = (match_pages / "ledger-1.html").read_text(), (match_pages / "events-1.html").read_text()
    assert "from <bdi>the pile</bdi>" in ledger and re.search(r"<td>Turn \d+</td>", ledger)
    assert re.search(r"<td>Turn \d+</td>", events) and "a step of the match" not in ledger + events
    season = (folder / "season.toml").read_text()
    assert 'game = "pile"' in season and "options = { pile = 9 }" in season
    monkeypatch.chdir(folder)
    assert main(["status"]) == 0
    status = capsys.readouterr().out
    assert "demo-1" in status and "finished" in status
