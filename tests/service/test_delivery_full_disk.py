"""issue 23: a full outbox disk, for real. The outbox Maildirs are on a small tmpfs filled to
the last byte; cycles run (the clock driven, a cycle every 30 s) while three matches start
ten minutes apart, so that their step mails fail at different times and wait on different
retry times; then the space comes back, and the next cycle delivers every waiting mail,
each once, every step mail before its deadline, with a few log lines for the whole outage
rather than a line per mail per cycle. Needs root for the mount (CI runs as root)."""

from __future__ import annotations

import errno
import logging
import os
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from referee.mail.maildir import MaildirOutbox
from referee.status import status_text

from .harness import START, World, outbox_rows

CYCLE = timedelta(seconds=30)
ROUND = timedelta(hours=1)
STARTS = [timedelta(0), timedelta(minutes=10), timedelta(minutes=20)]
FULL_FOR = timedelta(minutes=40)


@pytest.fixture
def small_disk(tmp_path) -> Iterator[Path]:
    """A 256 KiB tmpfs where the referee's outbox goes (``<world>/outbox``); unmounted after."""
    mount = tmp_path / "world" / "outbox"
    mount.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(mount)], capture_output=True, text=True
    )
    assert done.returncode == 0, f"cannot mount a tmpfs (this test needs root): {done.stderr}"
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def fill(disk: Path) -> Path:
    """Fill ``disk`` to the last byte; the filler file."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as handle:
        for size in (1 << 16, 1 << 12, 1):
            while True:
                try:
                    handle.write(b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
                    break
    return filler


def season() -> dict:
    return {
        "season": {"id": "disk", "name": "Full disk", "starting_chips": 200},
        "players": [{"id": f"p{i}", "name": f"P{i}", "email": f"p{i}@example.test"} for i in range(2 * len(STARTS))],
        "matches": [
            {
                "id": f"m{i}",
                "game": "stationary-roulette",
                "players": [f"p{2 * i}", f"p{2 * i + 1}"],
                "start": (START + start).isoformat(),
                "seed": i,
                "steps": {"round": "1h"},
                "reminders": [],
            }
            for i, start in enumerate(STARTS)
        ],
    }


def test_after_a_full_outbox_disk_every_waiting_mail_goes_out_in_the_next_cycle(tmp_path, small_disk, caplog):
    world = World(tmp_path / "world", f"sqlite:///{tmp_path / 'referee.db'}", season())
    try:
        assert Path(world.config.mail.outbox) == small_disk
        assert isinstance(world.referee.outbox, MaildirOutbox)
        filler = fill(small_disk)
        caplog.set_level(logging.INFO, logger="referee")
        at = START
        cycles = 0
        while at < START + FULL_FOR:
            world.tick(at)
            at += CYCLE
            cycles += 1
        rows = outbox_rows(world)
        assert len(rows) == 2 * len(STARTS)
        assert all(r.status == "pending" and r.fail_cause == "disk" and "No space left" in r.last_error for r in rows)
        # on their own retry times, some would wait long after the space is back
        assert max(r.next_attempt_at for r in rows) > at + 10 * CYCLE, [r.next_attempt_at for r in rows]
        waiting = status_text(world.store, at - CYCLE)
        assert "waiting for another delivery attempt: 6 (for the outbox disk 6;" in waiting, waiting
        assert not list((small_disk).glob("*/new/*"))  # nothing written meanwhile

        filler.unlink()  # the space is back
        world.tick(at)  # the next cycle
        rows = outbox_rows(world)
        assert all(r.status == "sent" and r.sent_at == at for r in rows), [(r.to_addr, r.status) for r in rows]
        assert all(r.kind == "step" and r.deadline is not None and r.sent_at < r.deadline for r in rows)
        for row in rows:  # each mail once, in its player's Maildir
            files = list(world.referee.outbox.maildir_for(row.to_addr).glob("new/*"))
            assert len(files) == 1, (row.to_addr, files)
        assert all(not os.listdir(maildir / "tmp") for maildir in small_disk.iterdir() if maildir.is_dir())
        assert "waiting for another delivery attempt" not in status_text(world.store, at)

        lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.getMessage().startswith("outbox")]
        warnings = [text for level, text in lines if level == "WARNING"]
        minutes = int(FULL_FOR / timedelta(minutes=1))
        assert warnings[0].startswith("outbox: 2 mail(s) not delivered, the outbox disk cannot be written"), warnings
        assert len(warnings) <= 1 + minutes, warnings  # once, then at most a line a minute
        assert not any(level == "ERROR" for level, _ in lines), lines
        assert [text for level, text in lines if level == "INFO"][-1].startswith(
            "outbox: the outbox disk works again after"
        ), lines
    finally:
        world.store.dispose()
