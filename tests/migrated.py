"""A migrated, empty SQLite database for a test, as a copy of one this process migrated once.

Running the migrations (Alembic, sixteen revisions, table copies on SQLite) takes some 0.3 s
a database; copying the file they leave takes a millisecond, and gives the same database. A
test of the migrations themselves runs them (``tests/store/test_migrations.py``); a test that
needs a database to work on takes a copy (:func:`migrated_sqlite`; the ``sqlite_template``
fixture of ``tests/conftest.py`` is the same file)."""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
import threading
from contextlib import closing
from pathlib import Path

from referee.store.db import Store

_LOCK = threading.Lock()
_TEMPLATE: Path | None = None


def sqlite_template() -> Path:
    """This process's migrated, empty SQLite database, all of it in its one file (nothing
    left in a WAL); made on the first call."""
    global _TEMPLATE
    with _LOCK:
        if _TEMPLATE is None or not _TEMPLATE.exists():
            path = Path(tempfile.mkdtemp(prefix="referee-template-")) / "referee.db"
            store = Store(f"sqlite:///{path}")
            store.migrate()
            store.dispose()
            with closing(sqlite3.connect(path)) as conn:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            _TEMPLATE = path
            atexit.register(shutil.rmtree, path.parent, ignore_errors=True)
        return _TEMPLATE


def migrated_sqlite(path: Path) -> str:
    """A migrated, empty SQLite database at ``path`` (a copy of :func:`sqlite_template`);
    its URL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sqlite_template(), path)
    return f"sqlite:///{path}"
