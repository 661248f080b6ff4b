"""Rows a batch writes without building ORM objects: plain INSERTs sent together.

A batch of 200 mails or matches appends hundreds of events and outbox mails, which
nobody reads back inside the batch. Building an ORM object for each and letting the unit
of work insert them one by one is most of the time a batch spends in the database layer;
instead :func:`add` keeps the row as a dict, and the rows go to the database in one
executemany per table when the session flushes or commits (:func:`install` hooks the
session factory), inside the same transaction, so they commit or roll back with
everything else the batch does. A query that must see them calls :func:`flush`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, event, insert
from sqlalchemy.orm import Session, sessionmaker

__all__ = ["add", "flush", "install"]

_KEY = "referee.rows"  # session.info key of the rows waiting: {table: [row, ...]}


def add(session: Session, table: Table, row: dict[str, Any]) -> None:
    """Insert ``row`` into ``table`` with the session's next flush or its commit."""
    session.info.setdefault(_KEY, {}).setdefault(table, []).append(row)


def write(session: Session) -> None:
    """Send the rows waiting, one executemany per table, in the order tables were first used."""
    waiting: dict[Table, list[dict[str, Any]]] | None = session.info.pop(_KEY, None)
    if not waiting:
        return
    connection = session.connection()
    for table, rows in waiting.items():
        connection.execute(insert(table), rows)


def flush(session: Session) -> None:
    """The rows waiting and the ORM's pending changes, so that a query sees them all."""
    write(session)
    session.flush()


def install(factory: sessionmaker) -> None:
    """Write the waiting rows before each flush and each commit; forget them on rollback."""

    @event.listens_for(factory, "before_flush")
    def _before_flush(session: Session, _context: Any, _instances: Any) -> None:
        write(session)

    @event.listens_for(factory, "before_commit")
    def _before_commit(session: Session) -> None:
        write(session)

    @event.listens_for(factory, "after_rollback")
    def _after_rollback(session: Session) -> None:
        session.info.pop(_KEY, None)
