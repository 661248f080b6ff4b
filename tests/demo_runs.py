"""What several test files read, made once per test run and shared by them all, on every
xdist worker: each ``referee demo`` (here) and the conformance suite's playouts
(``tests.games.test_conformance.playouts``).

The same demo (the same game and seed) is read by its own test file (what it printed, the
mailboxes, the database, the commands that work on its folder afterwards), by the IMAP
tests (the match it plays on Maildirs, to compare with the one played over real mail) and
by the browser tests (its archive). Each is played once per test run, by the command line
in a process of its own, as a user runs it, into a folder every xdist worker sees (next to
the workers' own temporary folders); the first worker to ask plays it while the others
wait on its lock file, then all read the same folder. The readers only read: a test that
changes a demo's folder (a ``tick``, an ``archive build``) plays a demo of its own.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

DEMO = "import sys; from referee.cli import main; sys.exit(main(sys.argv[1:]))"
TIMEOUT = 900  # seconds for one demo: generous for a machine ten times slower


@dataclass(frozen=True)
class DemoRun:
    folder: Path  # the demo's folder
    code: int  # the command's exit status
    out: str  # what it printed on stdout
    err: str  # ... and on stderr


# the folder of this test run that every worker sees (set by tests/conftest.py; None outside pytest)
SHARED: Path | None = None


def shared_root(factory: pytest.TempPathFactory) -> Path:
    """The folder of this test run that every worker sees: on an xdist worker, the session's
    folder (the parent of the workers' own); else this process's own."""
    base = factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared"
    root.mkdir(exist_ok=True)
    return root


@contextmanager
def made_once(folder: Path, name: str) -> Iterator[Path]:
    """Held while ``folder/name``'s thing is made or read: the first worker to ask makes it
    (the path does not exist yet), the others wait on its lock file, then read it."""
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield folder / name


def shared_demo(factory: pytest.TempPathFactory, *args: str) -> DemoRun:
    """``referee demo ARGS`` played once for the whole test run; ``{dir}`` in ``args`` is the
    demo's folder (``--dir {dir}``, or ``--season {dir}``)."""
    root = shared_root(factory) / "demos"
    root.mkdir(exist_ok=True)
    name = re.sub(r"[^a-z0-9]+", "-", " ".join(a for a in args if a != "{dir}").lower()).strip("-") or "demo"
    folder = root / name
    with made_once(root, f"{name}.json") as record:
        if not record.exists():
            shutil.rmtree(folder, ignore_errors=True)
            env = {k: v for k, v in os.environ.items() if k != "REFEREE_CONFIG"}
            done = subprocess.run(
                [sys.executable, "-c", DEMO, "demo", *(str(folder) if a == "{dir}" else a for a in args)],
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                env=env,
            )
            record.write_text(json.dumps({"code": done.returncode, "out": done.stdout, "err": done.stderr}))
        played = json.loads(record.read_text())
    return DemoRun(folder, played["code"], played["out"], played["err"])
