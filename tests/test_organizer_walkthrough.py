"""docs/organizer-guide.md, "Your first season", runs as written; the guide lists every game.

The walkthrough is read from the guide itself, so the guide cannot drift from the code:
each block marked ``<!-- walkthrough file: NAME -->`` is written to NAME exactly as shown,
then every command of the section's ```sh blocks (each line) and ```console blocks (each
``$ `` line) runs in order in a fresh folder, and must exit 0 and print the output lines
the guide shows under it (``...`` on a line of its own: lines left out; inside a line: any
text). A block after ``<!-- walkthrough: skip -->`` is not run. ``referee`` commands run
in-process (:func:`referee.cli.main`), anything else (``mkdir``, ``ls``, ``grep``) in bash;
``cd`` changes the folder of the commands after it.

The clock of the commands is set to a week before the season file's first start, so the
guide's dates (in the future when written) keep loading after they have passed.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from referee import commands
from referee.cli import main
from referee.games import GAMES, playable

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "organizer-guide.md"
WALKTHROUGH = "## Your first season"
GAMES_SECTION = "### `[games.<game>]`"
FENCE = re.compile(r"^```(\w*)\s*$")
FILE_MARK = re.compile(r"^<!--\s*walkthrough file:\s*(\S+)\s*-->\s*$")
SKIP_MARK = re.compile(r"^<!--\s*walkthrough:\s*skip\s*-->\s*$")
SHELL_SYNTAX = re.compile(r"[|;&<>`$*?]")  # a referee line with these runs in bash, not in-process
# what a walkthrough must show, at the least (so that a parsing slip cannot pass as an empty run)
MUST_RUN = {"init", "season load --check", "season load", "tick", "status", "standings"}
CONTROLS = {"extend", "pause", "resume", "announce", "forfeit", "cancel", "substitute", "adjust"}


def section(text: str, heading: str) -> str:
    """From ``heading`` (a line of its own) to the next heading of the same level or above
    (outside code blocks, where a line may begin with ``#`` too)."""
    lines = text.splitlines()
    level = len(heading) - len(heading.lstrip("#"))
    start = lines.index(heading)
    fenced = False
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(rf"^#{{1,{level}}} ", lines[i]):
            return "\n".join(lines[start:i]) + "\n"
    return "\n".join(lines[start:]) + "\n"


def table(text: str, header: str) -> list[str]:
    """The rows of the Markdown table whose header line begins with ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:  # after the header and its |---| line
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


@dataclass
class Step:
    kind: str  # "file" or "command"
    text: str  # the file's name, or the command line
    body: str = ""  # the file's content
    shown: list[str] = field(default_factory=list)  # the output lines the guide shows


def walkthrough_steps(text: str) -> list[Step]:
    """The section's files and commands, in the guide's order."""
    steps: list[Step] = []
    lines = text.splitlines()
    i, mark = 0, None
    while i < len(lines):
        line = lines[i]
        if FILE_MARK.match(line) or SKIP_MARK.match(line):
            mark = line
            i += 1
            continue
        fence = FENCE.match(line)
        if not fence:
            if line.strip():
                mark = None  # a mark belongs to the block right after it
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        lang, block = fence.group(1), lines[i + 1 : end]
        i = end + 1
        if mark and SKIP_MARK.match(mark):
            mark = None
            continue
        if mark and FILE_MARK.match(mark):
            steps.append(Step("file", FILE_MARK.match(mark).group(1), "\n".join(block) + "\n"))
        elif lang == "sh":
            steps += [Step("command", cmd.strip()) for cmd in block if cmd.strip() and not cmd.startswith("#")]
        elif lang == "console":
            for out in block:
                if out.startswith("$ "):
                    steps.append(Step("command", out[2:].strip()))
                elif steps and steps[-1].kind == "command":
                    steps[-1].shown.append(out)
        mark = None
    return steps


def line_pattern(shown: str) -> re.Pattern[str]:
    """A shown line as a pattern: ``...`` inside it stands for any text."""
    return re.compile(".*".join(re.escape(part) for part in shown.rstrip().split("...")) + r"\Z")


def assert_shown(shown: list[str], output: str, command: str) -> None:
    """The shown lines are in the output: each run of them between ``...`` lines as lines in
    a row, the runs in the guide's order."""
    actual = [line.rstrip() for line in output.splitlines()]
    runs: list[list[str]] = [[]]
    for line in shown:
        if line.strip() == "...":
            runs.append([])
        else:
            runs[-1].append(line)
    at = 0
    for run in (r for r in runs if r):
        patterns = [line_pattern(line) for line in run]
        found = next(
            (
                k
                for k in range(at, len(actual) - len(run) + 1)
                if all(p.match(actual[k + n]) for n, p in enumerate(patterns))
            ),
            None,
        )
        assert found is not None, (
            f"`{command}`: the guide shows\n" + "\n".join(run) + f"\n\nbut the command printed\n{output}"
        )
        at = found + len(run)


def first_start(season_toml: str) -> datetime:
    data = tomllib.loads(season_toml)
    starts = [m["start"] for m in data.get("matches", []) if "start" in m]
    starts += [data["season"]["start"]] if "start" in data.get("season", {}) else []
    return min(starts)


class Runner:
    """Runs the guide's commands in ``folder``, as a reader's shell would."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch):
        self.cwd = folder
        self.monkeypatch = monkeypatch
        monkeypatch.chdir(folder)

    def run(self, command: str) -> tuple[int, str]:
        argv = shlex.split(command)
        if argv[0] == "cd" and len(argv) == 2:
            self.cwd = (self.cwd / argv[1]).resolve()
            self.monkeypatch.chdir(self.cwd)
            return 0, ""
        if argv[0] == "referee" and not SHELL_SYNTAX.search(command):
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                try:
                    code = main(argv[1:])
                except SystemExit as exc:  # usage errors, --help
                    code = exc.code if isinstance(exc.code, int) else 1
            return code, out.getvalue()
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.cwd, env=env, capture_output=True, text=True, timeout=60
        )
        return done.returncode, done.stdout + done.stderr


def what(command: str) -> str:
    """``season load --check`` for ``referee season load --check season.toml``, and so on."""
    argv = shlex.split(command)
    if argv[0] != "referee":
        return argv[0]
    words = [w for w in argv[1:] if not w.startswith("-") or w == "--check"]
    if words[:2] == ["season", "load"]:
        return "season load --check" if "--check" in argv else "season load"
    return words[0]


def test_the_walkthrough_runs_as_the_guide_shows_it(tmp_path, monkeypatch):
    steps = walkthrough_steps(section(GUIDE.read_text(encoding="utf-8"), WALKTHROUGH))
    files = {s.text: s.body for s in steps if s.kind == "file"}
    seasons = [name for name in files if name.endswith(".toml")]
    assert seasons, "the walkthrough shows no season file (<!-- walkthrough file: NAME.toml --> before it)"
    ran = {what(s.text) for s in steps if s.kind == "command"}
    assert MUST_RUN <= ran, f"the walkthrough does not run {sorted(MUST_RUN - ran)}"
    assert ran & CONTROLS, "the walkthrough shows none of the organizer's controls"

    # the reader's clock: a week before the season's first start (its dates are in the future)
    today = first_start(files[seasons[0]]) - timedelta(days=7)

    class Clock(datetime):
        @classmethod
        def now(cls, tz=None):
            return today.astimezone(tz or timezone.utc)

    monkeypatch.setattr(commands, "datetime", Clock)
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    runner = Runner(tmp_path, monkeypatch)
    for step in steps:
        if step.kind == "file":
            (runner.cwd / step.text).write_text(step.body, encoding="utf-8")
            continue
        code, output = runner.run(step.text)
        assert code == 0, f"`{step.text}` exited {code}:\n{output}"
        assert_shown(step.shown, output, step.text)


def test_the_walkthrough_reader_checks_what_it_reads():
    """The helpers themselves: a console block's output, elisions and wildcards."""
    text = (
        "<!-- walkthrough file: a.toml -->\n```toml\nx = 1\n```\n\n"
        "<!-- walkthrough: skip -->\n```sh\nreferee run\n```\n\n"
        "```sh\nmkdir d\ncd d\n```\n\n```console\n$ referee tick --now X\ntick at X: sent 2\n...\n$ ls\n```\n"
    )
    steps = walkthrough_steps(text)
    assert [(s.kind, s.text) for s in steps] == [
        ("file", "a.toml"),
        ("command", "mkdir d"),
        ("command", "cd d"),
        ("command", "referee tick --now X"),
        ("command", "ls"),
    ]
    assert steps[0].body == "x = 1\n" and steps[3].shown == ["tick at X: sent 2", "..."]
    assert_shown(["a ... c", "...", "e"], "a b c\nd\ne\n", "cmd")
    assert_shown(["b", "c"], "a\nb\nc\n", "cmd")
    for shown in (["c", "b"], ["b", "d"], ["a"]):  # out of order; not in a row; not a whole line
        with pytest.raises(AssertionError):
            assert_shown(shown, "a b\nb\nc\nd\n", "cmd")


def test_the_guide_lists_every_game_with_its_options_and_step_kinds():
    guide = GUIDE.read_text(encoding="utf-8")
    assert "only game so far" not in guide
    games = table(section(guide, GAMES_SECTION), "| game |")
    rows = {m.group(1): line for line in games if (m := re.match(r"^\| `([a-z0-9-]+)`", line))}
    assert len(rows) == len(games), f"a row of the games table does not begin with a game's name: {games}"
    assert set(rows) == set(GAMES), f"the games table of {GAMES_SECTION} lists {sorted(rows)}, not {sorted(GAMES)}"
    assert set(playable()) <= set(rows)
    for name, game in GAMES.items():
        row = rows[name]
        assert game.title in row, f"{name}: its title {game.title!r} is not in its row"
        for option in game.game_type.options:
            assert f"`{option}`" in row, f"{name}: option {option!r} is not in its row of {GAMES_SECTION}"
        for kind in game.game_type.step_kinds:
            assert f"`{kind}`" in row, f"{name}: step kind {kind!r} is not in its row of {GAMES_SECTION}"
        if not game.game_type.options and name in playable():
            assert "none" in row.split("|")[4], f"{name}: declares no options; its row should say none"
    for name in playable():  # and a season file may name each where games are named
        assert f'`"{name}"`' in section(guide, "### `[[matches]]`"), f"[[matches]] game does not list {name}"
