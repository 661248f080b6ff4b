"""`referee demo`: a whole match by mail with a Black round, a rejected bet and a missed deadline."""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys
from pathlib import Path

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


def try_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith("Try: ")]
    assert len(lines) == 1, text
    return lines[0][len("Try: ") :]


def run_printed(command: str, cwd, env) -> subprocess.CompletedProcess:
    return subprocess.run(shlex.split(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_printed_status_command_works_as_printed_without_referee_on_path(tmp_path):
    """`referee demo` run by its full path, as the README does: the hint names that path."""
    script = Path(sys.executable).with_name("referee")
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != script.parent)
    env = {**os.environ, "PATH": path}
    env.pop("REFEREE_CONFIG", None)
    demo = subprocess.run([str(script), "demo"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert demo.returncode == 0, demo.stderr
    command = try_line(demo.stdout)
    assert command == f"{script} --config ./referee-demo/referee.toml status"
    status = run_printed(command, tmp_path, env)
    assert status.returncode == 0, status.stderr
    assert "demo-1" in status.stdout and "finished" in status.stdout


def test_the_printed_status_command_works_with_referee_on_path(tmp_path, monkeypatch):
    script = Path(sys.executable).with_name("referee")
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert run_demo(tmp_path / "my demo", seed=3, out=out) == 0
    command = try_line(out.getvalue())
    assert command == "referee --config './my demo/referee.toml' status"
    status = run_printed(command, tmp_path, dict(os.environ))
    assert status.returncode == 0, status.stderr
    assert "demo-1" in status.stdout


def test_the_printed_status_command_uses_an_absolute_path_outside_the_current_folder(tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    out = io.StringIO()
    assert run_demo(tmp_path / "elsewhere", seed=3, out=out) == 0
    command = try_line(out.getvalue())
    assert f" --config {tmp_path / 'elsewhere' / 'referee.toml'} status" in command
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_CONFIG"}
    status = run_printed(command, here, env)
    assert status.returncode == 0, status.stderr


@pytest.mark.parametrize("game", ["indian-poker", "rewind-holdem"])
def test_demo_plays_a_whole_duel_by_mail(tmp_path, monkeypatch, capsys, game):
    """`referee demo --game ...`: a duel to its end, with a refused command and a missed turn."""
    assert main(["demo", "--game", game, "--dir", str(tmp_path / "duel"), "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "RAISE 999: refused by mail (Problem: RAISE 999 is too much" in out
    assert "no answer from bob by the deadline: the default applies" in out
    assert "Final standings:" in out and " 0 chips" in out and " 50 chips" in out
    assert out.count("refused by mail") == 1  # every other command answered the right mail
    monkeypatch.chdir(tmp_path / "duel")
    assert main(["status"]) == 0
    status = capsys.readouterr().out
    assert "demo-1" in status and "finished" in status
