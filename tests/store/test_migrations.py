"""The Alembic migrations build exactly the schema the models describe, on both backends."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from referee.store.db import Store
from referee.store.models import Base


def test_migrated_schema_matches_the_models(db_url):
    store = Store(db_url)
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    store.dispose()
    assert diff == []


def test_the_head_revision_the_schema_check_compares_with_is_alembics_head():
    """``referee status`` checks the schema without Alembic (referee.store.dbapi)."""
    from alembic.script import ScriptDirectory

    from referee.store.db import alembic_config
    from referee.store.dbapi import HEAD_REVISION

    assert ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head() == HEAD_REVISION


def test_migrate_is_idempotent_and_current(db_url):
    store = Store(db_url)
    store.migrate()
    assert store.has_schema() and store.is_current()
    store.dispose()


def test_migrate_starts_alembic_only_when_needed_and_leaves_no_connection_open(tmp_path, monkeypatch):
    """A database at the newest migration is left alone (Alembic not started); either way
    no connection of the check stays open (a SQLite file migrated, then replaced, as the
    reply corpus's snapshots do, opens again)."""
    from alembic import command

    url = f"sqlite:///{tmp_path / 'referee.db'}"
    store = Store(url)
    store.migrate()  # a new file: Alembic builds it
    assert store.is_current() and store.engine.pool.checkedin() == 1
    store.dispose()
    upgrades = []
    monkeypatch.setattr(command, "upgrade", lambda *args: upgrades.append(args))
    store.migrate()  # current: nothing to do
    assert upgrades == [] and store.engine.pool.checkedin() == 0
    (tmp_path / "referee.db").rename(tmp_path / "elsewhere.db")
    store.migrate()  # a new file again: Alembic would build it
    assert len(upgrades) == 1 and store.engine.pool.checkedin() == 0


def test_upgrade_keeps_stored_mail_and_turns_old_re_deliveries_into_duplicates(tmp_path):
    """0001 -> 0002 on data: Message-IDs are kept (cut to 255), each mail gets its content
    digest, a re-delivery that 0001 stored twice becomes a duplicate, failed mail quarantined."""
    from alembic import command
    from sqlalchemy import select, text

    from referee.mail.identity import content_digest
    from referee.store.db import alembic_config
    from referee.store.models import Inbound

    url = f"sqlite:///{tmp_path / 'old.db'}"
    command.upgrade(alembic_config(url), "0001")
    store = Store(url)
    mail = b"From: a@x\r\nSubject: s\r\n\r\nbody\r\n"
    rows = [
        ("<one@x>", b"Message-ID: <one@x>\r\n" + mail, "accepted"),
        ("sha256-aaa@referee.invalid", mail, "accepted"),
        ("sha256-bbb@referee.invalid", b"Received: by relay\r\n" + mail, "failed"),
        ("x" * 900, b"Message-ID: <long>\r\n" + mail, "rejected"),
    ]
    with store.engine.begin() as conn:
        for key, raw, status in rows:
            conn.execute(
                text(
                    "INSERT INTO inbound (message_key, source, raw, received_at, status)"
                    " VALUES (:k, 'f', :r, '2026-12-01 10:00:00', :s)"
                ),
                {"k": key, "r": raw, "s": status},
            )
    store.migrate()
    with store.unit_of_work() as session:
        got = session.scalars(select(Inbound).order_by(Inbound.id)).all()
        assert [r.message_id for r in got] == ["<one@x>", None, None, "x" * 254 + "\u2026"]
        assert got[0].dedupe_key == content_digest(rows[0][1])
        assert got[1].dedupe_key == content_digest(mail) and got[2].dedupe_key is None
        assert got[2].duplicate_of == got[1].id and got[2].status == "quarantined"
    store.dispose()


def test_upgrade_to_the_event_chain_chains_the_events_already_stored(tmp_path, db_url):
    """0004 -> 0005 on data: events written before the chain existed get the digests and
    hashes the referee writes now, and each match keeps its head."""
    from alembic import command
    from sqlalchemy import select

    from referee.archive.verify import verify_database
    from referee.store.db import alembic_config
    from referee.store.models import Event, Match
    from tests.archive.test_trust import events_of, play_rounds
    from tests.service.harness import World

    world = World(tmp_path, db_url)
    play_rounds(world, 2)
    written = [(ev.seq, ev.digest, ev.hash) for ev in events_of(world)]
    world.store.dispose()
    command.downgrade(alembic_config(db_url), "0004")
    store = Store(db_url)
    assert not store.is_current()
    store.migrate()
    assert [(ev.seq, ev.digest, ev.hash) for ev in events_of(world)] == written
    with store.unit_of_work() as session:
        head = session.scalar(select(Match.last_event_hash).where(Match.key == "m1"))
        assert head == session.scalar(select(Event.hash).order_by(Event.seq.desc()).limit(1))
    assert all(check.ok for check in verify_database(store))
    store.dispose()


def test_upgrade_to_open_steps_lists_the_open_step_of_every_running_match(tmp_path, db_url):
    """0006 -> 0007 on data: a running match gets its one open step listed in open_steps,
    with the same instants; the referee then goes on with it as before."""
    from alembic import command
    from sqlalchemy import select

    from referee.match import opensteps
    from referee.store.db import alembic_config
    from referee.store.models import Match
    from tests.archive.test_trust import play_rounds
    from tests.service.harness import World

    world = World(tmp_path, db_url)
    play_rounds(world, 2)
    with world.store.unit_of_work() as session:
        before = opensteps.listed(session.scalar(select(Match).where(Match.key == "m1")))
    assert [s.key for s in before] == ["round-2"]
    world.store.dispose()
    command.downgrade(alembic_config(db_url), "0006")
    store = Store(db_url)
    store.migrate()
    with store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == "m1"))
        assert match.open_steps is not None and opensteps.listed(match) == before
    store.dispose()


def test_the_large_columns_are_compressed_with_lz4_on_postgresql(db_url):
    """The outbox's mails, the inbound mails, the states and the events' payloads (TOAST
    compresses a value over about 2 KB; lz4 costs the server a third of pglz's CPU)."""
    from sqlalchemy import text

    store = Store(db_url)
    try:
        if store.engine.dialect.name != "postgresql":
            assert store.is_current()  # nothing to do on SQLite
            return
        with store.engine.connect() as conn:
            found = dict(
                conn.execute(
                    text(
                        "SELECT c.relname || '.' || a.attname, a.attcompression FROM pg_attribute a "
                        "JOIN pg_class c ON c.oid = a.attrelid WHERE (c.relname, a.attname) IN "
                        "(('outbox', 'message'), ('inbound', 'raw'), ('matches', 'state'), ('events', 'payload'))"
                    )
                ).all()
            )
        assert found == dict.fromkeys(["outbox.message", "inbound.raw", "matches.state", "events.payload"], "l")
    finally:
        store.dispose()
