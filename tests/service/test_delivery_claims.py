"""issue 23: an outbox claim ends with its holder. A `referee tick` killed (SIGKILL) after it
claimed its batch leaves nothing waiting: the next tick, one cycle later, takes the claim
over and sends every mail, each once; a claim whose holder is alive protects its batch from
another process. Real processes, a real SMTP conversation: the moment of the kill is made
certain by a loopback SMTP server that holds every connection before its greeting (the batch
is claimed in a committed transaction before the first connection is made), on SQLite (the
holder is an flock) and on PostgreSQL (an advisory lock)."""

from __future__ import annotations

import email
import email.policy
import signal
import socketserver
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.config import parse_season
from referee.seasons import load_season
from referee.store import lease
from referee.store.db import Store
from referee.store.models import Outbox

from .harness import DAY, START

REFEREE = Path(sys.executable).with_name("referee")
WAIT = 120.0  # seconds for anything to happen (a slow machine too); never a wait for speed
MATCHES = 3  # two step mails each


class SmtpSink:
    """A loopback SMTP server in threads that takes every mail (a 250 for each), keeping each
    one's Message-ID; while ``held``, it greets nobody (a client waits for the greeting)."""

    def __init__(self) -> None:
        self.connections = 0
        self.message_ids: list[str] = []
        self.held = threading.Event()
        self._lock = threading.Lock()
        sink = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                with sink._lock:
                    sink.connections += 1
                while sink.held.is_set():
                    time.sleep(0.01)  # a poll interval, not a wait for speed
                try:
                    sink._converse(self.rfile, self.wfile)
                except OSError:  # its client was killed meanwhile
                    pass

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def _converse(self, rfile, wfile) -> None:
        wfile.write(b"220 sink ESMTP\r\n")
        while line := rfile.readline():
            verb = line.split(b" ")[0].strip().upper()
            if verb in (b"EHLO", b"HELO"):
                wfile.write(b"250-sink\r\n250 8BITMIME\r\n")
            elif verb == b"DATA":
                wfile.write(b"354 go on\r\n")
                wfile.flush()
                data = bytearray()
                while (chunk := rfile.readline()) not in (b".\r\n", b""):
                    data += chunk[1:] if chunk.startswith(b"..") else chunk
                message = email.message_from_bytes(bytes(data), policy=email.policy.default)
                with self._lock:
                    self.message_ids.append(str(message["Message-ID"]).strip("<>"))
                wfile.write(b"250 2.0.0 queued\r\n")
            elif verb == b"QUIT":
                wfile.write(b"221 bye\r\n")
                wfile.flush()
                return
            else:
                wfile.write(b"250 ok\r\n")
            wfile.flush()

    def close(self) -> None:
        self.held.clear()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sinks():
    made: list[SmtpSink] = []

    def make() -> SmtpSink:
        made.append(SmtpSink())
        return made[-1]

    yield make
    for sink in made:
        sink.close()


def referee_folder(folder: Path, db_url: str, port: int) -> Path:
    """A referee's folder: its referee.toml (the shared database, SMTP to ``port``), its inbox."""
    folder.mkdir(parents=True)
    (folder / "referee.toml").write_text(
        f'database = "{db_url}"\nsecret = "claims-secret-0123456789abcdef"\n'
        '[mail]\naddress = "referee@example.test"\ninbox = "inbox"\noutbound = "smtp"\n'
        f'[smtp]\nhost = "127.0.0.1"\nport = {port}\nsecurity = "none"\nconcurrency = 2\ntimeout_seconds = 600\n'
    )
    return folder


def load(db_url: str) -> None:
    spec = {
        "season": {"id": "claims", "name": "Claims", "starting_chips": 200},
        "players": [{"id": f"p{i}", "name": f"P{i}", "email": f"p{i}@example.test"} for i in range(2 * MATCHES)],
        "matches": [
            {
                "id": f"m{i}",
                "game": "stationary-roulette",
                "players": [f"p{2 * i}", f"p{2 * i + 1}"],
                "start": START.isoformat(),
                "seed": i,
            }
            for i in range(MATCHES)
        ],
    }
    store = Store(db_url)
    try:
        load_season(store, parse_season(spec, "claims season"), START - DAY)
    finally:
        store.dispose()


def tick(folder: Path, seconds: float = 0) -> subprocess.Popen[str]:
    """``referee tick --now START+seconds`` in ``folder``, started."""
    at = (START + timedelta(seconds=seconds)).isoformat()
    return subprocess.Popen(
        [str(REFEREE), "--config", str(folder / "referee.toml"), "tick", "--now", at],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=folder,
    )


def finished(process: subprocess.Popen[str]) -> str:
    out, _ = process.communicate(timeout=WAIT)
    assert process.returncode == 0 and "Traceback" not in out, out
    return out


def wait_until(condition: Callable[[], bool], what: str, process: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the referee ended before {what}: {process.communicate()[0]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {WAIT:.0f} s: {what}")
        time.sleep(0.02)  # a poll interval, not a wait for speed


def outbox(db_url: str) -> list[Outbox]:
    store = Store(db_url)
    try:
        with store.unit_of_work() as session:
            return list(session.scalars(select(Outbox).order_by(Outbox.id)))
    finally:
        store.dispose()


def test_a_tick_killed_after_claiming_its_batch_leaves_it_to_the_next_tick_at_once(tmp_path, db_url, sinks):
    load(db_url)
    sink = sinks()
    sink.held.set()
    folder = referee_folder(tmp_path / "referee", db_url, sink.port)
    first = tick(folder)  # starts the matches (six step mails), claims them, connects: held
    wait_until(lambda: sink.connections >= 1, "the first tick connects to the SMTP server", first)
    rows = outbox(db_url)
    assert len(rows) == 2 * MATCHES
    assert all(r.status == "pending" and r.claimed_by is not None for r in rows)  # claimed, then killed
    holder = rows[0].claimed_by
    first.send_signal(signal.SIGKILL)
    first.wait(WAIT)
    assert first.returncode == -signal.SIGKILL
    sink.held.clear()
    assert sink.message_ids == []  # nothing was sent before the kill

    out = finished(tick(folder, seconds=1))  # the next cycle, a second later (the old lease: 15 minutes)
    assert "sent 6" in out, out
    rows = outbox(db_url)
    assert all(r.status == "sent" and r.claimed_by is None for r in rows)
    assert sorted(sink.message_ids) == sorted(r.message_id for r in rows)  # every mail, each once
    assert len(set(sink.message_ids)) == len(sink.message_ids) == 2 * MATCHES
    if db_url.startswith("sqlite"):  # the dead holder's lock file went with its claim
        assert not list(tmp_path.glob(f"referee.db.claim-{holder:016x}.lock"))
    finished(tick(folder, seconds=2))
    assert len(sink.message_ids) == 2 * MATCHES  # and nothing is sent again


def test_a_claim_whose_holder_lives_is_not_taken_by_another_process(tmp_path, db_url, sinks):
    load(db_url)
    held, other = sinks(), sinks()
    held.held.set()
    first_folder = referee_folder(tmp_path / "first", db_url, held.port)
    second_folder = referee_folder(tmp_path / "second", db_url, other.port)
    first = tick(first_folder)
    wait_until(lambda: held.connections >= 1, "the first tick connects to its SMTP server", first)
    claims = {r.id: r.claimed_by for r in outbox(db_url)}
    assert len(claims) == 2 * MATCHES and None not in claims.values()

    out = finished(tick(second_folder, seconds=1))  # the first is alive, mid-send: its batch is its own
    assert "sent" not in out and other.message_ids == [] and other.connections == 0, out
    assert {r.id: r.claimed_by for r in outbox(db_url)} == claims

    held.held.clear()
    out = finished(first)
    assert "sent 6" in out, out
    rows = outbox(db_url)
    assert all(r.status == "sent" and r.claimed_by is None for r in rows)
    assert sorted(held.message_ids) == sorted(r.message_id for r in rows) and other.message_ids == []


def test_a_holder_is_alive_until_released_or_its_process_dies(db_url):
    """referee.store.lease.holder: the same notion of holder as the decide lease, on both
    databases; a holder killed with SIGKILL is gone at once."""
    store = Store(db_url)
    try:
        mine = lease.holder(store)
        assert lease.gone(store, [mine.key]) == set()
        mine.release()
        assert lease.gone(store, [mine.key]) == {mine.key}
        script = textwrap.dedent(f"""
            import time
            from referee.store.db import Store
            from referee.store.lease import holder
            print(holder(Store({db_url!r})).key, flush=True)
            time.sleep(600)
        """)
        child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None
            key = int(child.stdout.readline())
            assert lease.gone(store, [key]) == set()  # alive in another process
            child.kill()
            child.wait(WAIT)
            wait_until(lambda: lease.gone(store, [key]) == {key}, "the killed holder is gone")
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(WAIT)
    finally:
        store.dispose()
