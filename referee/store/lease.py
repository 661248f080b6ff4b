"""One holder at a time, across processes, for a job that must not run twice at once.

Several ``referee run`` processes may share one database (PostgreSQL in production). Mail
in and mail out are theirs to share: ingest stores each mail once (its content is unique),
and the outbox claims a batch before sending it. *Deciding* is not: mail, starts and
deadlines are applied in time order across the whole season (a mail before the deadline
that follows its arrival; a match that starts at T after every settlement before T), which
two processes working side by side could not keep. So the part of a tick that decides
(:meth:`referee.service.Referee._decide`) is held by one process at a time; the others
wait for it, then find done what it did.

The hold ends with its holder, however that ends: on PostgreSQL it is a session advisory
lock on a connection of its own (the server lets go when the connection goes, so a killed
process never blocks the others); on an SQLite file it is an ``flock`` on a file beside
the database (the kernel lets go when the process dies); an SQLite database in memory is
one process's, and a lock of that process is enough.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import make_url

from referee.store.db import Store

__all__ = ["LOCK_IDS", "exclusive"]

# PostgreSQL advisory lock keys (64-bit), one per job: "referee" + the job's number
LOCK_IDS = {"decide": 0x7265_6665_7265_6501}
POLL = 0.05  # seconds between tries while another holder has it

_local: dict[tuple[str, str], threading.Lock] = {}
_local_guard = threading.Lock()


@contextmanager
def exclusive(store: Store, job: str, *, wait: float) -> Iterator[bool]:
    """Hold ``job`` for the block, waiting up to ``wait`` seconds for another holder to let
    go. Yields True when held; False when the time ran out (the block should then skip the
    job: its holder is doing it)."""
    if job not in LOCK_IDS:
        raise KeyError(f"no such job to hold: {job!r} (known: {', '.join(LOCK_IDS)})")
    dialect = store.engine.dialect.name
    if dialect == "postgresql":
        holder = _postgresql(store, job, wait)
    elif dialect == "sqlite" and (database := _sqlite_file(store)) is not None:
        holder = _file(database, job, wait)
    else:
        holder = _in_process(store, job, wait)
    with holder as held:
        yield held


@contextmanager
def _postgresql(store: Store, job: str, wait: float) -> Iterator[bool]:
    key = LOCK_IDS[job]
    with store.engine.connect() as connection:
        connection = connection.execution_options(isolation_level="AUTOCOMMIT")
        held = _poll(lambda: bool(connection.scalar(text("SELECT pg_try_advisory_lock(:k)"), {"k": key})), wait)
        try:
            yield held
        finally:
            if held:
                connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})


def _sqlite_file(store: Store) -> Path | None:
    database = make_url(store.url).database
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        return None
    return Path(database)


@contextmanager
def _file(database: Path, job: str, wait: float) -> Iterator[bool]:
    import fcntl

    path = database.with_name(f"{database.name}.{job}.lock")
    with open(path, "a+b") as handle:

        def attempt() -> bool:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True

        held = _poll(attempt, wait)
        try:
            yield held
        finally:
            if held:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextmanager
def _in_process(store: Store, job: str, wait: float) -> Iterator[bool]:
    with _local_guard:
        lock = _local.setdefault((store.url, job), threading.Lock())
    held = lock.acquire(timeout=max(wait, 0.0))
    try:
        yield held
    finally:
        if held:
            lock.release()


def _poll(attempt: Callable[[], bool], wait: float) -> bool:
    """Try now, then every ``POLL`` seconds until ``wait`` has passed."""
    deadline = time.monotonic() + wait
    while True:
        if attempt():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)
