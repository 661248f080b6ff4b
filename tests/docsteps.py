"""A guide's walkthrough, read from the guide's own text and run as a reader would run it.

Used by tests/test_organizer_walkthrough.py (docs/organizer-guide.md, "Your first season") and
tests/integration/test_guide_mailbox.py (docs/operations.md, "Your first real mailbox").

What the reader takes from a section, in the guide's order:

- every line of a ```sh block, and every ``$ `` line of a ```console block, is a command; the
  lines under a ``$ `` line are the output the guide shows for it (``...`` on a line of its
  own: lines left out; inside a line: any text). A ```console block without ``$`` lines adds
  its lines to the output shown for the command before it;
- a block right after ``<!-- walkthrough file: NAME -->`` is a file, written to NAME as shown;
  any other ``<!-- walkthrough KIND: ARGUMENT -->`` makes the block a step of that kind for
  the test to act out (e.g. ``reply: alice@example.org``: the player's reply, typed as shown;
  ``output: referee run``: more of what a command left running shows);
- ``<!-- walkthrough: OPTIONS -->`` right before a block says how to take it, options
  separated by ``;``: ``skip`` (not run), ``background`` (its command keeps running while
  the steps after it run), ``exits N`` (its commands end with exit status N, not 0),
  ``path NAME`` (the block belongs to one of the guide's branches, e.g. what to do when a
  check fails: run only when the test takes that path). An unknown option is an error.

:class:`Runner` runs the commands in a folder: ``referee`` commands in-process
(:func:`referee.cli.main`), anything else in bash; ``cd`` changes the folder and
``export NAME=VALUE`` the environment of the commands after it.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from referee.cli import main

FENCE = re.compile(r"^```(\w*)\s*$")
KIND_MARK = re.compile(r"^<!--\s*walkthrough ([a-z-]+):\s*(\S.*?)\s*-->\s*$")  # file: NAME, reply: ADDRESS, ...
OPTIONS_MARK = re.compile(r"^<!--\s*walkthrough:\s*(.*?)\s*-->\s*$")
SHELL_SYNTAX = re.compile(r"[|;&<>`$*?]")  # a referee line with these runs in bash, not in-process
EXPORT = re.compile(r"^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


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


@dataclass
class Step:
    kind: str  # "file", "command", or the KIND of a <!-- walkthrough KIND: ... --> mark
    text: str  # the file's name, the command line, or the mark's argument
    body: str = ""  # the file's (or marked block's) content
    shown: list[str] = field(default_factory=list)  # the output lines the guide shows
    exits: int = 0  # the exit status the command ends with
    background: bool = False  # the command keeps running while the next steps run


@dataclass
class Options:
    skip: bool = False
    background: bool = False
    exits: int = 0
    path: str | None = None


def parse_options(words: str) -> Options:
    options = Options()
    for option in filter(None, (part.strip() for part in words.split(";"))):
        name, _, value = option.partition(" ")
        if name == "skip" and not value:
            options.skip = True
        elif name == "background" and not value:
            options.background = True
        elif name == "exits" and value.strip().isdigit():
            options.exits = int(value)
        elif name == "path" and value.strip():
            options.path = value.strip()
        else:
            raise ValueError(f"<!-- walkthrough: {words} -->: unknown option {option!r}")
    return options


def walkthrough_steps(text: str, paths: frozenset[str] | set[str] = frozenset()) -> list[Step]:
    """The section's files, commands and marked blocks, in the guide's order (a block on a
    ``path`` only when ``paths`` names it)."""
    steps: list[Step] = []
    lines = text.splitlines()
    i = 0
    kind: tuple[str, str] | None = None  # the <!-- walkthrough KIND: ARG --> before the next block
    options = Options()
    while i < len(lines):
        line = lines[i]
        if m := KIND_MARK.match(line):
            kind = (m.group(1), m.group(2))
            i += 1
            continue
        if m := OPTIONS_MARK.match(line):
            options = parse_options(m.group(1))
            i += 1
            continue
        fence = FENCE.match(line)
        if not fence:
            if line.strip():
                kind, options = None, Options()  # a mark belongs to the block right after it
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        lang, block = fence.group(1), lines[i + 1 : end]
        i = end + 1
        taken = not options.skip and (options.path is None or options.path in paths)
        if taken and kind:
            body = "\n".join(block) + "\n"
            steps.append(Step(kind[0], kind[1], body, shown=list(block)))
        elif taken and lang == "sh":
            steps += [
                Step("command", cmd.strip(), exits=options.exits, background=options.background)
                for cmd in block
                if cmd.strip() and not cmd.startswith("#")
            ]
        elif taken and lang == "console":
            for out in block:
                if out.startswith("$ "):
                    steps.append(Step("command", out[2:].strip(), exits=options.exits, background=options.background))
                elif steps and steps[-1].kind == "command":
                    steps[-1].shown.append(out)
        kind, options = None, Options()
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


class Background:
    """A command left running (``referee run``): its output (stdout and stderr) so far, and
    a way to stop it as a reader would, with Ctrl-C."""

    def __init__(self, command: str, process: subprocess.Popen, log: Path):
        self.command, self.process, self.log = command, process, log

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_shown(self, shown: list[str], timeout: float) -> None:
        """Until the output shows the lines (as :func:`assert_shown` reads them); fails after
        ``timeout`` seconds, or at once when the command has ended."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                assert_shown(shown, self.output(), self.command)
                return
            except AssertionError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    code = self.process.poll()
                    raise AssertionError(
                        f"`{self.command}` ({'still running' if code is None else f'ended with {code}'}) "
                        f"did not show within {timeout:.0f} s\n" + "\n".join(shown) + f"\n\nit printed\n{self.output()}"
                    ) from None
            time.sleep(0.1)  # a poll interval, not a wait for the lines

    def stop(self, timeout: float) -> int:
        """Ctrl-C (SIGINT); killed if it has not ended after ``timeout`` seconds. Its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


class Runner:
    """Runs the guide's commands in ``folder``, as a reader's shell would."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch):
        self.cwd = folder
        self.monkeypatch = monkeypatch
        self.background: list[Background] = []
        monkeypatch.chdir(folder)

    def _env(self) -> dict[str, str]:
        return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}

    def run(self, command: str) -> tuple[int, str]:
        argv = shlex.split(command)
        if argv[0] == "cd" and len(argv) == 2:
            self.cwd = (self.cwd / argv[1]).resolve()
            self.monkeypatch.chdir(self.cwd)
            return 0, ""
        if (export := EXPORT.match(command)) and len(argv) == 2:
            self.monkeypatch.setenv(export.group(1), argv[1].partition("=")[2])
            return 0, ""
        if argv[0] == "referee" and not SHELL_SYNTAX.search(command):
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                try:
                    code = main(argv[1:])
                except SystemExit as exc:  # usage errors, --help
                    code = exc.code if isinstance(exc.code, int) else 1
            return code, out.getvalue()
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.cwd, env=self._env(), capture_output=True, text=True, timeout=60
        )
        return done.returncode, done.stdout + done.stderr

    def start(self, command: str) -> Background:
        """The command in bash, left running (its output in a file outside the folder)."""
        fd, name = tempfile.mkstemp(prefix="walkthrough-", suffix=".log")
        with os.fdopen(fd, "wb") as log:
            process = subprocess.Popen(
                ["bash", "-c", f"exec {command}"],
                cwd=self.cwd,
                env=self._env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.background.append(Background(command, process, Path(name)))
        return self.background[-1]

    def stop_all(self, timeout: float = 60) -> None:
        """Every command left running stopped (Ctrl-C, then kill), its output file removed."""
        for job in self.background:
            job.stop(timeout)
            job.log.unlink(missing_ok=True)
