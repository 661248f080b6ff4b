"""Rows a batch writes without building ORM objects: plain INSERTs sent together.

A batch of 200 mails or matches appends hundreds of events and outbox mails, which
nobody reads back inside the batch. Building an ORM object for each and letting the unit
of work insert them one by one is most of the time a batch spends in the database layer;
instead :func:`add` keeps the row as a dict, and the rows go to the database in one
executemany per table when the session flushes or commits (:func:`install` hooks the
session factory), inside the same transaction, so they commit or roll back with
everything else the batch does. A query that must see them calls :func:`flush`.

The same goes for the changed rows of a versioned table (the matches, whose ``version``
column is an optimistic lock): the ORM sends one UPDATE per versioned row, so that it can
check each row count, which on PostgreSQL is one round trip per match. :func:`write_versioned`
sends them as one executemany per set of changed columns, each row guarded by the version
the session read (``WHERE id = ? AND version = ?``), checks that every row was matched
(else :class:`~sqlalchemy.orm.exc.StaleDataError`, as the ORM would raise), and marks the
objects clean with their new version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Table, bindparam, event, insert, select
from sqlalchemy.orm import Mapper, Session, sessionmaker
from sqlalchemy.orm.attributes import instance_state, set_committed_value
from sqlalchemy.orm.exc import StaleDataError

__all__ = ["add", "before_write", "flush", "hook", "insert_once", "install", "write_versioned"]

_KEY = "referee.rows"  # session.info key of the rows waiting: {table: [row, ...]}
_HOOKS = "referee.rows.hooks"  # session.info key of the hooks run before they are written


def add(session: Session, table: Table, row: dict[str, Any]) -> None:
    """Insert ``row`` into ``table`` with the session's next flush or its commit."""
    session.info.setdefault(_KEY, {}).setdefault(table, []).append(row)


def before_write(session: Session, name: str, hook: Callable[[Session], None]) -> None:
    """Call ``hook`` before the session's waiting rows are written, each time, until the
    transaction ends (a rollback forgets it): it may fill in values of rows it added, such
    as the mails of a batch made together (:meth:`referee.match.notices.Notices.defer`)."""
    session.info.setdefault(_HOOKS, {})[name] = hook


def hook(session: Session, name: str) -> Any:
    """The hook ``name`` of :func:`before_write`, or None."""
    return session.info.get(_HOOKS, {}).get(name)


def write(session: Session) -> None:
    """Send the rows waiting, one executemany per table, in the order tables were first used."""
    for before in list(session.info.get(_HOOKS, {}).values()):
        before(session)
    waiting: dict[Table, list[dict[str, Any]]] | None = session.info.pop(_KEY, None)
    if not waiting:
        return
    connection = session.connection()
    for table, rows in waiting.items():
        connection.execute(insert(table), rows)


def insert_once(session: Session, table: Table, row: dict[str, Any], unique: str) -> bool:
    """Insert ``row`` now unless a row with its ``unique`` column's value is there already
    (committed, or written earlier in this transaction; another process's insert of the same
    value meanwhile is no error either). True if this call inserted it."""
    connection = session.connection()
    dialect = connection.dialect.name
    if dialect in ("postgresql", "sqlite"):
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as dialect_insert
        else:
            from sqlalchemy.dialects.sqlite import insert as dialect_insert
        statement = dialect_insert(table).values(row).on_conflict_do_nothing(index_elements=[unique])
        return connection.execute(statement).rowcount == 1
    column = table.c[unique]
    if connection.execute(select(column).where(column == row[unique]).limit(1)).first() is not None:
        return False
    connection.execute(insert(table), [row])
    return True


def write_versioned(session: Session) -> None:
    """The pending changes of versioned rows (see the module's docstring), before the ORM's flush.

    An object is taken over only when all its changes are to plain columns of its one
    table (anything else, and every unversioned row, is left to the ORM)."""
    groups: dict[tuple[Mapper[Any], tuple[str, ...]], list[tuple[Any, Any, dict[str, Any]]]] = {}
    for obj in session.dirty:
        state = instance_state(obj)
        mapper = state.mapper
        version_column = mapper.version_id_col
        changed = state.committed_state
        if version_column is None or not changed or state.key is None or obj in session.deleted:
            continue
        version_key = mapper.get_property_by_column(version_column).key
        columns = mapper.column_attrs
        keys = tuple(sorted(changed))
        if (
            version_key in changed
            or version_key not in state.dict  # expired: the ORM loads it and checks it itself
            or not all(key in state.dict for key in changed)
            or len(state.key[1]) != 1
            or mapper.local_table is not mapper.persist_selectable
            or not all(key in columns for key in keys)
        ):
            continue
        old = state.dict[version_key]
        params = {f"v_{key}": state.dict[key] for key in keys}
        params.update(w_pk=state.key[1][0], w_version=old, v_version=old + 1)
        groups.setdefault((mapper, keys), []).append((obj, version_key, params))
    if not groups:
        return
    connection = session.connection()
    for (mapper, keys), objects in groups.items():
        table = mapper.local_table
        (pk,) = mapper.primary_key
        version_column = mapper.version_id_col
        values = {mapper.column_attrs[key].columns[0].name: bindparam(f"v_{key}") for key in keys}
        values[version_column.name] = bindparam("v_version")
        statement = (
            table.update().where(pk == bindparam("w_pk"), version_column == bindparam("w_version")).values(values)
        )
        matched = connection.execute(statement, [params for _, _, params in objects]).rowcount
        if matched != len(objects):
            raise StaleDataError(
                f"UPDATE statement on table '{table.name}' expected to update {len(objects)} row(s); "
                f"{matched} were matched."
            )
        for obj, version_key, params in objects:
            for key in keys:
                set_committed_value(obj, key, params[f"v_{key}"])
            set_committed_value(obj, version_key, params["v_version"])


def flush(session: Session) -> None:
    """The rows waiting and the ORM's pending changes, so that a query sees them all."""
    write(session)
    session.flush()


def install(factory: sessionmaker) -> None:
    """Write the waiting rows before each flush and each commit (the versioned rows before
    each flush: a commit flushes); forget the waiting rows on rollback."""

    @event.listens_for(factory, "before_flush")
    def _before_flush(session: Session, _context: Any, _instances: Any) -> None:
        write(session)
        write_versioned(session)

    @event.listens_for(factory, "before_commit")
    def _before_commit(session: Session) -> None:
        write(session)

    @event.listens_for(factory, "after_commit")
    def _after_commit(session: Session) -> None:
        session.info.pop(_HOOKS, None)

    @event.listens_for(factory, "after_rollback")
    def _after_rollback(session: Session) -> None:
        session.info.pop(_KEY, None)
        session.info.pop(_HOOKS, None)
