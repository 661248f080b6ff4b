"""A whole referee on temporary Maildirs, with scripted players, for service tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import make_url

from referee.config import load_service_config, parse_season
from referee.mail.client import ScriptedClient
from referee.mail.maildir import MaildirInbox, MaildirOutbox
from referee.seasons import load_season
from referee.service import Referee
from referee.store.db import Store
from referee.store.models import Outbox
from tests.migrated import migrated_sqlite

START = datetime(2026, 12, 1, 18, 0, tzinfo=timezone.utc)
DAY = timedelta(hours=24)

SEASON = {
    "season": {"id": "test", "name": "Test season", "starting_chips": 200},
    "players": [
        {"id": "alice", "name": "Alice", "email": "alice@example.test", "timezone": "Europe/Berlin"},
        {"id": "bob", "name": "Bob", "email": "bob@example.test", "timezone": "America/New_York"},
    ],
    "matches": [
        {
            "id": "m1",
            "game": "stationary-roulette",
            "players": ["alice", "bob"],
            "start": START.isoformat(),
            "seed": 1,
            "reminders": ["2h"],
        },
    ],
}


class World:
    def __init__(self, tmp: Path, db_url: str, season: dict | None = None):
        self.dir = tmp
        tmp.mkdir(parents=True, exist_ok=True)
        (tmp / "referee.toml").write_text(
            f'database = "{db_url}"\nsecret = "test-secret-0123456789abcdef"\n'
            '[mail]\naddress = "referee@example.test"\ninbox = "inbox"\noutbox = "outbox"\n'
        )
        self.config = load_service_config(tmp / "referee.toml")
        database = make_url(self.config.database)
        if database.get_backend_name() == "sqlite" and database.database and not Path(database.database).exists():
            migrated_sqlite(Path(database.database))  # a new file: a copy of the migrated one
        self.store = Store(self.config.database)
        self.store.migrate()  # idempotent: already done by the db_url fixture or the copy
        self.inbox = MaildirInbox(self.config.mail.inbox)
        self.outbox = MaildirOutbox(self.config.mail.outbox, per_address=True)
        self.referee = Referee(self.store, self.config, inbox=self.inbox, outbox=self.outbox)
        load_season(self.store, parse_season(season or SEASON, "test season"), START - DAY)
        self.clients = {
            key: ScriptedClient(
                f"{key}@example.test",
                key.title(),
                self.config.mail.outbox / f"{key}@example.test",
                self.config.mail.inbox,
            )
            for key in ("alice", "bob")
        }

    def tick(self, at: datetime):
        return self.referee.tick(at)

    def client(self, key: str) -> ScriptedClient:
        return self.clients[key]

    def send(self, key: str, text: str, at: datetime, **kwargs) -> Path:
        client = self.clients[key]
        return client.reply(client.latest(), text, at, **kwargs)

    def last_text(self, key: str) -> str:
        return self.clients[key].latest().text


def outbox_rows(world: World, **where) -> list[Outbox]:
    """The outbox rows matching ``column=value`` pairs, oldest first."""
    with world.store.unit_of_work() as session:
        query = select(Outbox).order_by(Outbox.id)
        for key, value in where.items():
            query = query.where(getattr(Outbox, key) == value)
        return list(session.scalars(query))
