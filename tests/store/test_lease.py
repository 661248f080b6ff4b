"""The decide lease: one holder at a time across processes; a holder that dies lets go."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest

from referee.store.db import Store
from referee.store.lease import exclusive

WAIT = 60.0  # seconds: how long a test waits for what must happen (a slow machine too)


def test_one_holder_at_a_time(store):
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with exclusive(store, "decide", wait=WAIT) as got:
            assert got
            held.set()
            release.wait(WAIT)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(WAIT)
        with exclusive(store, "decide", wait=0.2) as got:
            assert not got  # the other holds it: the time runs out
    finally:
        release.set()
        thread.join(WAIT)
    with exclusive(store, "decide", wait=WAIT) as got:
        assert got  # let go: taken at once


def test_a_waiting_process_gets_it_when_the_holder_lets_go(store):
    held, release = threading.Event(), threading.Event()
    order: list[str] = []

    def holder() -> None:
        with exclusive(store, "decide", wait=WAIT):
            held.set()
            release.wait(WAIT)
            order.append("first done")

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(WAIT)
    threading.Timer(0.3, release.set).start()
    with exclusive(store, "decide", wait=WAIT) as got:
        order.append("second in")
        assert got
    thread.join(WAIT)
    assert order == ["first done", "second in"]


def test_a_killed_holder_lets_go(db_url):
    """kill -9 while holding it: the database (or the kernel, for the SQLite file) lets go."""
    script = textwrap.dedent(f"""
        import sys, time
        from referee.store.db import Store
        from referee.store.lease import exclusive
        with exclusive(Store({db_url!r}), "decide", wait=60) as got:
            print("held" if got else "not held", flush=True)
            time.sleep(600)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    store = Store(db_url)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        with exclusive(store, "decide", wait=0.2) as got:
            assert not got
        child.kill()
        child.wait(WAIT)
        with exclusive(store, "decide", wait=WAIT) as got:
            assert got
    finally:
        if child.poll() is None:
            child.kill()
        store.dispose()


def test_an_in_memory_database_is_held_within_the_process():
    store = Store("sqlite://")
    with exclusive(store, "decide", wait=0) as first:
        assert first
        other = threading.Thread(target=lambda: result.append(_try(store)))
        result: list[bool] = []
        other.start()
        other.join(WAIT)
        assert result == [False]
    assert _try(store)


def _try(store: Store) -> bool:
    with exclusive(store, "decide", wait=0) as got:
        return got


def test_only_known_jobs(store):
    with pytest.raises(KeyError):
        with exclusive(store, "nonsense", wait=0):
            pass
