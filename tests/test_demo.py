"""`referee demo`: a whole match by mail with a Black round, a rejected bet and a missed deadline."""

from __future__ import annotations

import io

import pytest

from referee.cli import main
from referee.demo import run_demo


def test_demo_plays_a_full_match_by_mail(tmp_path, monkeypatch, capsys):
    out = io.StringIO()
    assert run_demo(tmp_path / "demo", seed=7, out=out) == 0
    text = out.getvalue()
    assert "Preparation phase:" in text and "Round 10 of 10:" in text
    assert "-> Black" in text and "(Black take)" in text
    assert "rejected by mail: Problem:" in text
    assert "bob missed the deadline" in text and "inactivity fee" in text
    assert "Final standings:" in text
    outbox = tmp_path / "demo" / "mail" / "outbox"
    assert len(list((outbox / "bob@demo.test" / "new").iterdir())) >= 11 + 10 + 1  # prompts, receipts, error
    # the folder works for later commands
    monkeypatch.chdir(tmp_path / "demo")
    capsys.readouterr()
    assert main(["status"]) == 0
    status = capsys.readouterr().out
    assert "demo-1" in status and "finished" in status
    assert main(["tick"]) == 0


def test_demo_refuses_a_folder_that_is_not_a_demo(tmp_path, capsys):
    (tmp_path / "precious.txt").write_text("keep me")
    assert main(["demo", "--dir", str(tmp_path)]) == 2
    assert "not a demo folder" in capsys.readouterr().err
    assert (tmp_path / "precious.txt").exists()


@pytest.mark.parametrize("seed", [1, 2])
def test_demo_runs_again_in_the_same_folder_and_with_other_seeds(tmp_path, seed):
    assert run_demo(tmp_path / "d", seed=seed, out=io.StringIO()) == 0
    assert run_demo(tmp_path / "d", seed=seed, out=io.StringIO()) == 0
