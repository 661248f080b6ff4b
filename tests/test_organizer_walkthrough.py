"""docs/organizer-guide.md, "Your first season", runs as written; the guide lists every game.

The walkthrough is read from the guide itself, so the guide cannot drift from the code:
each block marked ``<!-- walkthrough file: NAME -->`` is written to NAME exactly as shown,
then every command of the section's ```sh blocks (each line) and ```console blocks (each
``$ `` line) runs in order in a fresh folder, and must exit 0 and print the output lines
the guide shows under it (``...`` on a line of its own: lines left out; inside a line: any
text). A block after ``<!-- walkthrough: skip -->`` is not run. ``referee`` commands run
in-process (:func:`referee.cli.main`), anything else (``mkdir``, ``ls``, ``grep``) in bash;
``cd`` changes the folder of the commands after it. The reader and the runner are
tests/docsteps.py's (shared with tests/integration/test_guide_mailbox.py).

The clock of the commands is set to a week before the season file's first start, so the
guide's dates (in the future when written) keep loading after they have passed.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from referee import commands
from referee.games import GAMES, playable

from .docsteps import Runner, assert_shown, section, walkthrough_steps

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "organizer-guide.md"
WALKTHROUGH = "## Your first season"
GAMES_SECTION = "### `[games.<game>]`"
# what a walkthrough must show, at the least (so that a parsing slip cannot pass as an empty run)
MUST_RUN = {"init", "season load --check", "season load", "tick", "status", "standings"}
CONTROLS = {"extend", "pause", "resume", "announce", "forfeit", "cancel", "substitute", "adjust"}


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


def first_start(season_toml: str) -> datetime:
    data = tomllib.loads(season_toml)
    starts = [m["start"] for m in data.get("matches", []) if "start" in m]
    starts += [data["season"]["start"]] if "start" in data.get("season", {}) else []
    return min(starts)


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
