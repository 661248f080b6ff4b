"""Season players without an email address: they may sit only at silent seats (seats that
never act, ``GameType.silent_roles``), a reload may give them an address or take it away,
the service never mails them and no mail ever speaks for their seat, ``referee status``
says they have none, and the schema migration that allows them. The store tests run on
SQLite and on PostgreSQL."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone

import pytest
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined
from sqlalchemy import select

import referee.render
from referee.config import ConfigError, parse_season
from referee.games import GAMES
from referee.mail.maildir import deliver_to_maildir
from referee.mail.tokens import make_token, reply_address
from referee.seasons import load_season
from referee.status import status_text
from referee.store.db import Store
from referee.store.models import Inbound, Match, Outbox, Player, Seat
from tests.service import watched
from tests.service.harness import START, World, outbox_rows

NOW = datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc)
HOUR = timedelta(hours=1)
TURN = 12 * HOUR  # Countdown's turn length

SEASON = {
    "season": {"id": "s", "name": "Season", "starting_chips": 100},
    "players": [
        {"id": "alice", "name": "Alice", "email": "alice@example.test", "timezone": "Europe/Berlin"},
        {"id": "bob", "name": "Bob", "email": "bob@example.test", "timezone": "America/New_York"},
        {"id": "quiet", "name": "Quiet"},  # no address: sits only at silent seats
    ],
    "matches": [
        {
            "id": "m1",
            "game": "watched",
            "players": ["alice", "bob", "quiet"],
            "start": START.isoformat(),
            "seed": 3,
            "reminders": ["2h"],
        }
    ],
}


@pytest.fixture
def watched_game(monkeypatch, tmp_path):
    """Watched Countdown in the registry and its templates beside the project's."""
    monkeypatch.setitem(GAMES, "watched", watched.GAME)
    folder = watched.write_templates(tmp_path / "templates")
    env = Environment(
        loader=ChoiceLoader([FileSystemLoader(str(folder)), FileSystemLoader(str(referee.render.template_dir()))]),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    monkeypatch.setattr(referee.render, "environment", lambda: env)


def season(**changes) -> dict:
    data = copy.deepcopy(SEASON)
    data["matches"][0].update(changes)
    return data


def load(store, data, now=NOW, **kwargs):
    return load_season(store, parse_season(data, "season.toml"), now, **kwargs)


def email_of(store: Store, key: str) -> str | None:
    with store.unit_of_work() as session:
        return session.scalar(select(Player.email).where(Player.key == key))


# ---------------------------------------------------------------------------- the season file


def test_a_player_without_an_address_may_sit_at_silent_seats(watched_game):
    spec = parse_season(SEASON, "season.toml")
    assert [(p.key, p.email) for p in spec.players] == [
        ("alice", "alice@example.test"),
        ("bob", "bob@example.test"),
        ("quiet", None),
    ]
    # a game with fewer roles than seats: every seat beyond them has the last role (a watcher)
    data = season(players=["alice", "bob", "quiet", "hush"])
    data["players"].append({"id": "hush"})
    assert [p.email for p in parse_season(data, "season.toml").players][2:] == [None, None]


@pytest.mark.parametrize(
    "players, seat",
    [(["quiet", "alice", "bob"], 1), (["alice", "quiet", "bob"], 2)],
    ids=["first-seat", "second-seat"],
)
def test_a_player_without_an_address_at_a_seat_that_acts_is_refused(watched_game, players, seat):
    with pytest.raises(ConfigError) as exc:
        parse_season(season(players=players), "season.toml")
    assert str(exc.value) == (
        "season.toml match 'm1': player 'quiet' has no email address, so they can only sit at a silent seat "
        f"(watcher), but seat {seat} is a 'player' seat: give them an email address or another seat"
    )


def test_a_player_without_an_address_in_a_game_without_silent_seats_is_refused():
    data = season(game="stationary-roulette", players=["alice", "quiet"])
    with pytest.raises(ConfigError) as exc:
        parse_season(data, "season.toml")
    assert str(exc.value) == (
        "season.toml match 'm1': player 'quiet' has no email address, so they can only sit at a silent seat "
        "and Stationary Roulette has none, but seat 2 is a 'player' seat: give them an email address or another seat"
    )


def test_the_silent_seat_rule_holds_in_every_match_a_player_is_listed_in(watched_game):
    data = season()
    data["matches"].append(
        {**data["matches"][0], "id": "m2", "game": "stationary-roulette", "players": ["quiet", "bob"]}
    )
    with pytest.raises(ConfigError, match=r"^season.toml match 'm2': player 'quiet' has no email address"):
        parse_season(data, "season.toml")


def test_a_player_without_an_address_and_without_a_match_is_accepted():
    data = season(game="stationary-roulette", players=["alice", "bob"])
    assert parse_season(data, "season.toml").players[2].email is None


def test_addresses_are_unique_only_where_they_are_given(watched_game):
    data = season()
    data["players"].append({"id": "hush"})  # a second player without an address
    assert [p.email for p in parse_season(data, "season.toml").players].count(None) == 2
    data["players"][3]["email"] = "Alice@Example.test"
    with pytest.raises(ConfigError, match="email 'alice@example.test' is used by another player"):
        parse_season(data, "season.toml")


@pytest.mark.parametrize("value", ["", "  ", 7], ids=["empty", "blank", "number"])
def test_an_email_that_is_given_must_be_an_address(watched_game, value):
    data = season()
    data["players"][2]["email"] = value
    with pytest.raises(ConfigError, match=r"season.toml player 'quiet': 'email' must be a non-empty string"):
        parse_season(data, "season.toml")


# ---------------------------------------------------------------------------- loading and reloading


def test_a_player_without_an_address_is_stored_without_one(store, watched_game):
    changes = load(store, SEASON)
    assert "player quiet: added (no address, UTC)" in changes
    assert email_of(store, "quiet") is None
    assert load(store, SEASON) == []


def test_a_reload_gives_a_player_an_address_and_takes_it_away(store, watched_game):
    load(store, SEASON)
    data = copy.deepcopy(SEASON)
    data["players"][2]["email"] = "Quiet@Example.test"
    assert load(store, data) == ["player quiet: email no address -> quiet@example.test"]
    assert email_of(store, "quiet") == "quiet@example.test"
    assert load(store, SEASON) == ["player quiet: email quiet@example.test -> no address"]
    assert email_of(store, "quiet") is None


def test_an_address_may_pass_to_another_player_as_its_owner_loses_it(store, watched_game):
    data = copy.deepcopy(SEASON)
    data["players"][2]["email"] = "quiet@example.test"
    load(store, data)
    # in one load: quiet loses the address, alice takes it (the unique constraint holds throughout)
    data = copy.deepcopy(SEASON)
    data["players"][0]["email"] = "quiet@example.test"
    assert load(store, data) == [
        "player alice: email alice@example.test -> quiet@example.test",
        "player quiet: email quiet@example.test -> no address",
    ]
    assert (email_of(store, "alice"), email_of(store, "quiet")) == ("quiet@example.test", None)


def _with_a_second_match(status: str | None, store) -> dict:
    """quiet, with an address, also sits at seat 1 of stored match m2, which the returned
    file (quiet without an address) no longer lists."""
    data = copy.deepcopy(SEASON)
    data["players"][2]["email"] = "quiet@example.test"
    data["matches"].append(
        {"id": "m2", "game": "stationary-roulette", "players": ["quiet", "bob"], "start": START.isoformat(), "seed": 1}
    )
    load(store, data)
    if status is not None:
        with store.unit_of_work() as session:
            session.scalar(select(Match).where(Match.key == "m2")).status = status
    return copy.deepcopy(SEASON)


@pytest.mark.parametrize("status", [None, "running"], ids=["scheduled", "running"])
def test_losing_the_address_while_at_a_seat_that_acts_in_a_stored_match_is_refused(store, watched_game, status):
    data = _with_a_second_match(status, store)
    with pytest.raises(ConfigError) as exc:
        load(store, data)
    assert str(exc.value) == (
        "player quiet has no email address, so they can only sit at a silent seat, but they sit at seat 1 "
        "(player) of match m2, which the season file does not list: give them an email address"
    )
    assert email_of(store, "quiet") == "quiet@example.test"  # nothing was loaded


def test_a_finished_match_does_not_keep_a_player_from_losing_their_address(store, watched_game):
    data = _with_a_second_match("finished", store)
    assert load(store, data) == ["player quiet: email quiet@example.test -> no address"]


# ---------------------------------------------------------------------------- the service


@pytest.fixture
def world(tmp_path, db_url, watched_game):
    w = World(tmp_path / "world", db_url, SEASON)
    yield w
    w.store.dispose()


def quiet_rows(world: World) -> list[Outbox]:
    """Outbox rows to no address, or about the player without one."""
    return [row for row in outbox_rows(world) if row.to_addr is None or "quiet" in row.dedupe_key]


def match_row(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


def test_the_step_mails_of_an_audience_leave_out_the_player_without_an_address(world):
    world.tick(START)
    match = match_row(world)
    assert "quiet" in watched.GAME.audience(match.state)  # the premise: the silent seat is told
    assert sorted(row.to_addr for row in outbox_rows(world, kind="step")) == ["alice@example.test", "bob@example.test"]
    world.send("alice", "TAKE 2", START + HOUR)
    world.tick(START + HOUR)
    assert [row.to_addr for row in outbox_rows(world, kind="receipt")] == ["alice@example.test"]
    assert [row.to_addr for row in outbox_rows(world, kind="step")][2:] == ["bob@example.test"]
    # the reminder before bob's deadline: bob only (awaited), and never the silent seat
    world.tick(START + HOUR + TURN - 2 * HOUR)
    assert [row.to_addr for row in outbox_rows(world, kind="reminder")] == ["bob@example.test"]
    # the deadline passes, and the match goes on: still nothing for quiet
    world.tick(START + HOUR + TURN)
    assert match_row(world).step_key == "turn-3"
    assert quiet_rows(world) == []


def test_mail_player_writes_nothing_for_a_player_without_an_address(world):
    world.tick(START)
    before = len(outbox_rows(world))
    with world.store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == "m1"))
        quiet = next(seat.player for seat in match.seats if seat.player.key == "quiet")
        world.referee.notices.mail_player(session, "step", match, quiet, dedupe="step:m1:x:quiet", at=START)
        world.referee.notices.mail_player(session, "unaddressed", None, quiet, dedupe="unaddressed:x", at=START)
        assert world.referee.notices.remind(session, match, START + TURN - 2 * HOUR) == 1  # alice, who is awaited
    assert len(outbox_rows(world)) == before + 1 and quiet_rows(world) == []


def test_a_mail_to_a_silent_seat_is_never_obeyed_nor_answered(world):
    world.tick(START)
    with world.store.unit_of_work() as session:
        seat = session.scalar(select(Seat).join(Player).where(Player.key == "quiet"))
        token = make_token(world.config.secret, seat.id, "m1", "quiet")
    to = reply_address(world.config.mail.local, world.config.mail.domain, token)
    before = len(outbox_rows(world))
    for n, frm in enumerate(["Alice <alice@example.test>", "Someone <quiet@example.test>"]):
        raw = (
            f"From: {frm}\r\nTo: {to}\r\nSubject: Re: Turn 1\r\nDate: Tue, 01 Dec 2026 19:00:00 +0000\r\n"
            f"Message-ID: <q{n}@example.test>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nTAKE 1\r\n"
        ).encode()
        deliver_to_maildir(world.config.mail.inbox, raw, delivered_at=START + HOUR)
    world.tick(START + HOUR)
    with world.store.unit_of_work() as session:
        rows = session.scalars(select(Inbound).order_by(Inbound.id)).all()
        assert [(row.status, row.rule) for row in rows] == [("rejected", "spoofed")] * 2
    assert len(outbox_rows(world)) == before and match_row(world).step_key == "turn-1"


def test_status_says_who_has_no_address(world):
    """The heading names the seats that play; the silent seats and who has no address
    follow on lines of their own."""
    world.tick(START)
    text = status_text(world.store, START + HOUR)
    first = text.splitlines()
    assert first[0] == "m1  Watched Countdown  (Season)  alice vs bob"
    assert first[1] == "  watchers (never act): quiet"
    assert first[2] == "  no address (never mailed): quiet"


# ---------------------------------------------------------------------------- the migration


def test_the_migration_to_players_without_an_address_and_back(db_url, watched_game):
    """0005 -> 0006 keeps the players; 0006 -> 0005 refuses while a player has no address
    (and changes nothing), and goes through once every player has one."""
    from alembic import command
    from sqlalchemy import inspect

    from referee.store.db import alembic_config

    def email_nullable() -> bool:
        with Store(db_url).engine.connect() as conn:
            return next(c for c in inspect(conn).get_columns("players") if c["name"] == "email")["nullable"]

    store = Store(db_url)
    load(store, SEASON)
    store.dispose()
    assert email_nullable()
    def revision() -> str | None:
        from alembic.runtime.migration import MigrationContext

        with Store(db_url).engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()

    command.downgrade(alembic_config(db_url), "0006")  # the revisions after 0006 have nothing to refuse here
    with pytest.raises(RuntimeError, match=r"cannot downgrade below 0006: players without an email address \(quiet\)"):
        command.downgrade(alembic_config(db_url), "0005")
    store = Store(db_url)
    assert revision() == "0006" and email_nullable() and email_of(store, "quiet") is None
    store.migrate()
    assert store.is_current()
    data = copy.deepcopy(SEASON)
    data["players"][2]["email"] = "quiet@example.test"
    load(store, data)
    store.dispose()
    command.downgrade(alembic_config(db_url), "0005")
    store = Store(db_url)
    assert not store.is_current() and not email_nullable()
    assert email_of(store, "quiet") == "quiet@example.test"
    store.migrate()
    assert store.is_current() and email_nullable()
    assert [email_of(store, key) for key in ("alice", "bob", "quiet")] == [
        "alice@example.test",
        "bob@example.test",
        "quiet@example.test",
    ]
    store.dispose()
