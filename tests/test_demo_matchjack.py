"""`referee demo --game matchjack`: a whole MatchJack match by mail between six scripted
players, both tables at once (the demo over IMAP: tests/integration/test_demo_matchjack_imap.py)."""

from __future__ import annotations

import io
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from referee.cli import main
from referee.demo import run_demo
from tests.demo_runs import shared_demo
from referee.demo.registry import seated
from referee.games.matchjack.demo import form_of, listed_amounts
from referee.games import GAMES
from referee.mail.client import ScriptedClient
from referee.store.db import Store
from referee.store.models import Match

SIX = ("alice", "bob", "chiara", "kenji", "priya", "tomas")


def _stored(folder: Path) -> tuple[dict, str, dict | None]:
    store = Store(f"sqlite:///{folder / 'referee.db'}")
    with store.unit_of_work() as session:
        match = session.query(Match).filter_by(key="demo-1").one()
        found = match.state, match.status, match.result
    store.dispose()
    return found


def _mailbox(folder: Path, key: str) -> ScriptedClient:
    return ScriptedClient(f"{key}@demo.test", key, folder / "mail" / "outbox" / f"{key}@demo.test", folder / "mail")


def _card(card: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9]){card}(?![0-9])")


def test_the_matchjack_demo_plays_a_whole_match_by_mail(tmp_path_factory, monkeypatch):
    # played once by the CLI for this test, the browser's and the IMAP one's (tests/demo_runs.py)
    run = shared_demo(tmp_path_factory, "--game", "matchjack", "--seed", "5", "--dir", "{dir}")
    folder, out = run.folder, run.out
    assert run.code == 0, out + run.err
    assert f"MatchJack, six players ({', '.join(SIX)}), 15 hands at two tables at once, seed 5" in out
    assert re.search(r"^Main set: \w+ \(seat 1\), \w+ \(seat 2\), \w+ \(seat 3\); the bots Alpha and Beta$", out, re.M)
    assert "Hand 1 (ante 1):" in out

    # the match finished: all 15 hands (or fewer, when at most one player kept chips), a result
    state, status, result = _stored(folder)
    hands = len(state["history"])
    assert status == "finished" and result is not None
    left = [p for p in SIX if p not in {e["player"] for e in state["eliminated"]}]
    assert hands == 15 or (hands < 15 and len(left) <= 1)
    assert f"Hand {hands} (ante " in out and f"hands finished: {hands} of 15" in out
    assert f"\n  {result['reason']}\n" in out
    # the match ends with its last hand: no nomination (the season's step), a ranking
    assert result["signals"] == [] and "nomination" not in state and "dmo" not in result["scores"]
    assert sorted(result["ranking"]) == sorted(SIX) and result["ranking"][0] == state["final"]["winner"]
    assert result["ranking"][-1] == state["final"]["ec"] == result["scores"]["ec"]
    assert "NOMINATE" not in out

    # the script: both tables' steps, a FOLD STAYSET, a GUESS, a refused BET then corrected,
    # a stay step and a betting turn left to their deadlines, the breaks, the end
    assert re.search(r"^  Hand \d+, Main table, betting round 1, turn 1: \w+ ", out, re.M)
    assert re.search(r"^  Hand \d+, Lost table, action of seat \d: \w+ (HIT|SWAP|DRAW|NEW)", out, re.M)
    assert re.search(r"^  Hand [2-9], stay or fold: .*\w+ FOLD STAYSET", out, re.M)
    guess = r"^  Hand [3-9], stay or fold: .*\w+ (STAY|FOLD)[A-Z ]* \+ GUESS (Alpha|Beta|Gamma|Delta) "
    assert re.search(guess, out, re.M)
    turn = r"Hand \d+, \w+ table, betting round \d, turn \d+"
    refused = re.search(rf"^  ({turn}): (\w+) BET 99: refused by mail ", out, re.M)
    assert refused and "(Problem: BET 99 is too much: you hold only " in out
    assert re.search(rf"^  {refused.group(1)}: {refused.group(2)} (CHECK|BET \d+|FOLD)$", out, re.M)  # corrected
    assert out.count("refused by mail") == 1  # every other command was recorded
    assert re.search(r"^  Hand \d+, stay or fold: .*\w+ sent nothing: FOLD at the deadline", out, re.M)
    assert re.search(rf"^  {turn}: no answer from \w+ by the deadline: (CHECK|FOLD) by default$", out, re.M)
    if hands > 5:
        assert "  Break after hand 5: passed by its deadline" in out
    if hands > 10:
        assert "  Break after hand 10: passed by its deadline" in out
    ec, winner = state["final"]["ec"], state["final"]["winner"]
    end = f"The match is over after hand {hands}: {winner} wins, {ec} is the EC\n  ranking, best first: "
    assert f"\n{end}{', '.join(result['ranking'])}; the season asks the EC to nominate the DMO\n" in out
    assert out.index(f"\nHand {hands} (ante ") < out.index(end) < out.index("Final standings:")
    stayset = [p for h in state["history"] for t in h["tables"].values() for p in t["stayset"]]
    assert len(stayset) == 1
    assert 1 <= sum(len(g) for g in state["guesses"].values()) <= 2

    # every player got mail; the first mail of each (the deal of hand 1) names their own
    # face-down card and no one else's (paragraphs all six mails share, as the rules in short
    # with their example cards, aside)
    assert "Every player's mailbox holds their mail: " in out
    dealt = GAMES["matchjack"].initial_state(5, list(seated("matchjack")), {})
    down = {who: cards[1][0] for t in dealt["tables"].values() for who, cards in t["hands"].items()}
    assert all(not up for t in dealt["tables"].values() for cards in t["hands"].values() for _, up in cards[1:])
    first = {}
    for key in SIX:
        mails = _mailbox(folder, key).all()
        assert len(mails) >= 15, key
        first[key] = mails[0].text
        assert form_of(first[key]) == ("STAY", "Hand 1, stay or fold"), first[key]
    shared = set.intersection(*(set(text.split("\n\n")) for text in first.values()))
    for key, text in first.items():
        own = "\n\n".join(part for part in text.split("\n\n") if part not in shared)
        assert _card(down[key]).search(own), f"{key}'s first mail does not show their own face-down card"
        shown = [who for who, card in down.items() if who != key and _card(card).search(own)]
        assert not shown, f"{key}'s first mail names the face-down card of {shown}"

    # the archive was built; the folder works for later commands, the printed one as printed
    site = folder / "archive"
    assert f"open {(site / 'index.html').as_uri()}" in out
    assert (site / "seasons" / "demo" / "matches" / "demo-1" / "index.html").is_file()
    [command] = [line[len("Try: ") :] for line in out.splitlines() if line.startswith("Try: ")]
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_CONFIG"}
    printed = subprocess.run(shlex.split(command), env=env, capture_output=True, text=True, timeout=120)
    assert printed.returncode == 0, printed.stderr
    assert "demo-1" in printed.stdout and "finished" in printed.stdout and "MatchJack" in printed.stdout
    monkeypatch.chdir(folder)
    assert main(["archive", "verify", "--site", "archive"]) == 0
    assert main(["replay", "demo-1"]) == 0


@pytest.mark.parametrize("seed", [2])
def test_the_matchjack_demo_plays_its_whole_script_with_another_seed(tmp_path, seed):
    out = io.StringIO()
    assert run_demo(tmp_path / "mj", seed=seed, game="matchjack", out=out) == 0
    text = out.getvalue()
    assert text.count("refused by mail") == 1 and "FOLD STAYSET" in text and "+ GUESS " in text
    assert "sent nothing: FOLD at the deadline" in text and "by the deadline: " in text
    assert " is the EC\n  ranking, best first: " in text and "Final standings:" in text
    assert "NOMINATE" not in text


def test_the_players_read_the_form_and_the_amounts_the_mail_lists():
    mail = (
        "Your choices:\n  CHECK         nothing to call\n"
        "  BET n         open the betting with n chips, n from 1 to 9\n"
        "  ALL IN        the most you may bet now: BET 9 (9 chips)\n\n"
        "CHECK\nStep: Hand 4, Main table, betting round 1, turn 2\n\n-- \nThe referee\n\n"
        "> CALL\n> Step: Hand 3, Lost table, betting round 2, turn 1\n"
    )
    assert form_of(mail) == ("CHECK", "Hand 4, Main table, betting round 1, turn 2")
    assert listed_amounts(mail, "BET") == (1, 9) and listed_amounts(mail, "RAISE") is None
    error = "Problem: BET 99 is too much. Your choices now: CHECK (nothing to call), BET 1 to BET 16, ALL IN or FOLD."
    assert listed_amounts(error, "BET") == (1, 16)
    raising = "  RAISE n       your bet becomes 2 + n, n from 1 to 4\n  RAISE TO n    your bet becomes n, from 3 to 6"
    assert listed_amounts(raising, "RAISE") == (1, 4)
    assert form_of("| STAY\n| Step: Hand 1, stay or fold\n") is None  # an echo of the player's own lines
