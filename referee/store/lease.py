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

A **claim holder** (:func:`holder`) is the same notion of holder for work a process takes
for itself rather than waits for: the outbox's claim of a batch
(:mod:`referee.pipeline.deliver`). Each holder is a new random number, held the same way
as ``decide`` while its work runs (a session advisory lock on that key on a connection of its
own; an ``flock`` on ``<database>.claim-<key>.lock``; an in-process set), and written into
the rows it claims. :func:`gone` says which of the holders named in rows have ended (their
process died, or their work ended without letting go of the rows): their rows are free to
take at once. A live holder's rows are never taken.
"""

from __future__ import annotations

import os
import secrets
from abc import ABC, abstractmethod
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import make_url

from referee.store.db import Store

__all__ = ["LOCK_IDS", "Holder", "exclusive", "gone", "holder"]

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


# --------------------------------------------------------------------------- claim holders

STALE_FILE = 60.0  # seconds: a holder's lock file nobody holds, older than this, is a leftover
_live: set[tuple[str, int]] = set()  # the holders of in-memory databases: (url, key)
_live_guard = threading.Lock()


class Holder(ABC):
    """A holder of claims, alive until :meth:`release` (or its process's end). ``key``: what
    its claims record. One kind per way of holding (the kinds below)."""

    key: int

    @abstractmethod
    def release(self) -> None:
        """End the holding: its claims may be taken over."""


def holder(store: Store) -> Holder:
    """A new holder, held as the ``decide`` lease is (see the module's docstring)."""
    dialect = store.engine.dialect.name
    if dialect == "postgresql":
        return _PgHolder(store)
    if dialect == "sqlite" and (database := _sqlite_file(store)) is not None:
        return _FileHolder(database)
    return _LocalHolder(store.url)


def gone(store: Store, keys: Iterable[int]) -> set[int]:
    """Of the holders ``keys``, those that have ended: their claims may be taken over now."""
    keys = {int(key) for key in keys}
    if not keys:
        return set()
    dialect = store.engine.dialect.name
    if dialect == "postgresql":
        with store.engine.connect() as connection:
            held = set(
                connection.scalars(
                    text(
                        "SELECT (classid::bigint << 32) | objid::bigint FROM pg_locks"
                        " WHERE locktype = 'advisory' AND objsubid = 1 AND granted"
                        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                    )
                )
            )
        return keys - held
    if dialect == "sqlite" and (database := _sqlite_file(store)) is not None:
        return {key for key in keys if not _file_held(_holder_path(database, key), remove=True)}
    with _live_guard:
        return {key for key in keys if (store.url, key) not in _live}


def _new_key() -> int:
    """A fresh positive 63-bit key, none of the jobs' keys (PostgreSQL shares one key space)."""
    while True:
        key = secrets.randbits(63)
        if key and key not in LOCK_IDS.values():
            return key


class _PgHolder(Holder):
    def __init__(self, store: Store) -> None:
        connection = store.engine.connect()
        try:
            self._connection = connection.execution_options(isolation_level="AUTOCOMMIT")
            while True:
                key = _new_key()
                if self._connection.scalar(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}):
                    break
        except BaseException:
            connection.close()
            raise
        self.key = key

    def release(self) -> None:
        try:
            self._connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self.key})
        except BaseException:
            # never back into the pool with the lock still held: closed for good, the server lets go
            self._connection.invalidate()
            raise
        finally:
            self._connection.close()


def _holder_path(database: Path, key: int) -> Path:
    return database.with_name(f"{database.name}.claim-{key:016x}.lock")


def _file_held(path: Path, *, remove: bool) -> bool:
    """Whether a process holds the lock file ``path`` (a missing file is held by nobody);
    ``remove``: a file nobody holds is removed."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        if remove:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        return False
    finally:
        os.close(fd)


class _FileHolder(Holder):
    def __init__(self, database: Path) -> None:
        import fcntl

        _sweep(database)
        self.key = _new_key()
        self._path = _holder_path(database, self.key)
        self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)  # a new file: nobody else has it

    def release(self) -> None:
        try:
            os.unlink(self._path)  # while still held: whoever looks after this finds it gone
        except FileNotFoundError:
            pass
        finally:
            os.close(self._fd)  # and the kernel lets go


def _sweep(database: Path) -> None:
    """Remove the lock files of holders that ended without removing theirs (a process killed
    after taking a holder, before its claim named it or after the claim was done). A file is
    left alone while it is held, and for ``STALE_FILE`` seconds after it was made (its maker
    may not have locked it yet)."""
    cutoff = time.time() - STALE_FILE
    for path in database.parent.glob(f"{database.name}.claim-*.lock"):
        try:
            if path.stat().st_mtime < cutoff:
                _file_held(path, remove=True)
        except FileNotFoundError:
            continue


class _LocalHolder(Holder):
    def __init__(self, url: str) -> None:
        self._url = url
        with _live_guard:
            while True:
                self.key = _new_key()
                if (url, self.key) not in _live:
                    _live.add((url, self.key))
                    break

    def release(self) -> None:
        with _live_guard:
            _live.discard((self._url, self.key))
