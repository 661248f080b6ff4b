"""`referee substitute MATCH OLD NEW` through the real service (RULINGS, "Seasons"; the
organizer's controls): the new player takes the seat as it stands and gets a handover mail
with the match as that seat sees it; the old player is told and their reply address stops
working; the others are told; the match plays on and its replay, its archive chain and a
reload of the unchanged season file agree. On SQLite and on PostgreSQL."""

from __future__ import annotations

import copy
import html
from datetime import timedelta

import pytest
from sqlalchemy import select

from referee.archive.site import build
from referee.archive.verify import verify_database
from referee.config import ConfigError, parse_season
from referee.games import GAMES
from referee.match.book import replay
from referee.season.controls import Controls
from referee.seasons import load_season
from referee.store.models import Event, Match

from .harness import SEASON, START, World

HOUR = timedelta(hours=1)
ROULETTE = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0"


def season() -> dict:
    data = copy.deepcopy(SEASON)
    data["players"].append({"id": "carol", "name": "Carol", "email": "carol@example.test", "timezone": "Asia/Tokyo"})
    data["players"].append({"id": "dave", "name": "Dave", "email": "dave@example.test", "timezone": "UTC"})
    return data


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path, db_url, season())
    for key in ("carol", "dave"):
        w.clients[key] = w.clients["alice"].__class__(
            f"{key}@example.test", key.title(), w.config.mail.outbox / f"{key}@example.test", w.config.mail.inbox
        )
    w.tick(START)
    yield w
    w.store.dispose()


def controls(world: World) -> Controls:
    return Controls(world.store, world.referee.book, world.referee.notices)


def match(world: World) -> Match:
    with world.store.unit_of_work() as session:
        found = session.scalar(select(Match).where(Match.key == "m1"))
        _ = [seat.player.key for seat in found.seats]
        return found


def seats(world: World) -> list[str]:
    with world.store.unit_of_work() as session:
        found = session.scalar(select(Match).where(Match.key == "m1"))
        return [seat.player.key for seat in found.seats]


def test_the_new_player_takes_the_seat_as_it_stands_and_plays_on(world):
    world.send("alice", ROULETTE, START + HOUR)  # alice's sealed roulette for round 1
    world.tick(START + HOUR)
    lines = controls(world).substitute("m1", "alice", "carol", "Alice moved abroad", START + 2 * HOUR)
    world.tick(START + 2 * HOUR)
    assert "carol takes over alice's seat" in lines[0]
    assert seats(world) == ["carol", "bob"]

    # carol's handover: what happened, and the match as the seat sees it, with the form
    (handover,) = [m for m in world.client("carol").all() if "You take over Alice's seat" in m.subject]
    text = handover.text
    assert "handed Alice's seat" in text.replace("\n", " ") and "Alice moved abroad" in text.replace("\n", " ")
    assert "Gold: 30" in text  # the form holds the roulette alice sent for the seat
    assert handover.reply_address.startswith("referee+")  # carol's own address for the seat
    assert all(len(line) <= 78 for line in text.splitlines() if not line.startswith("printf")), text
    assert "alice" not in text.replace("Alice", "")  # names, never ids
    # alice is told she plays no more; bob who sits there now
    (left,) = [m for m in world.client("alice").all() if "Carol takes over your seat" in m.subject]
    assert "You no longer play in this match" in left.text.replace("\n", " ")
    (told,) = [m for m in world.client("bob").all() if "Carol takes Alice's seat" in m.subject]
    assert "Your own seat" in told.text.replace("\n", " ")

    # alice's old reply address no longer speaks for the seat: nothing recorded, no receipt
    before = match(world).last_event_seq
    world.clients["alice"].reply(world.client("alice").all()[0], ROULETTE, START + 3 * HOUR)
    world.tick(START + 3 * HOUR)
    assert match(world).last_event_seq == before
    # carol plays the seat by replying to her handover mail
    revised = ROULETTE.replace("Gold: 30", "Gold: 25").replace("Silver: 10", "Silver: 15")
    world.clients["carol"].reply(handover, revised, START + 4 * HOUR)
    world.tick(START + 4 * HOUR)
    assert match(world).last_event_seq == before + 1
    assert any("Gold: 25" in m.text for m in world.client("carol").all() if m is not handover)

    # the match plays out; its replay is what is stored; the winner or loser is carol or bob
    world.tick(START + 12 * 24 * HOUR)
    done = match(world)
    assert done.status == "finished"
    assert set(done.result["ranking"]) == {"carol", "bob"}
    with world.store.unit_of_work() as session:
        row = session.scalar(select(Match).where(Match.key == "m1"))
        events = list(session.scalars(select(Event).where(Event.match_id == row.id).order_by(Event.seq)))
        assert [e.kind for e in events].count("substitute") == 1
        assert replay(GAMES[row.game], row, events) == row.state

    # the archive: the chain verifies; the match page names the handover and both players
    assert all(check.ok for check in verify_database(world.store, "m1"))
    site = world.dir / "site"
    build(world.store, site, now=START + 12 * 24 * HOUR)
    page = html.unescape((site / "seasons" / "test" / "matches" / "m1" / "index.html").read_text())
    assert "The organizer handed Alice's seat to Carol: Alice moved abroad." in page

    # the unchanged season file reloads cleanly: the file's alice is the seat's first player
    lines = load_season(world.store, parse_season(season(), "test season"), START + 12 * 24 * HOUR)
    assert not [line for line in lines if "m1" in line], lines


def test_a_substitution_is_refused_where_it_cannot_be_made(world):
    c = controls(world)
    for old, new, why in (
        ("alice", "bob", "sits in match m1 already"),
        ("alice", "zoe", "no player 'zoe'"),
        ("carol", "dave", "carol does not sit in match m1"),
    ):
        with pytest.raises(ConfigError, match=why):
            c.substitute("m1", old, new, "test", START + HOUR)
    with pytest.raises(ConfigError, match="no match"):
        c.substitute("m9", "alice", "carol", "test", START + HOUR)
    c.cancel("m1", "test over", START + HOUR)
    with pytest.raises(ConfigError, match="only a running or paused match"):
        c.substitute("m1", "alice", "carol", "test", START + 2 * HOUR)
    assert seats(world) == ["alice", "bob"]


def test_a_paused_match_is_handed_over_and_the_handover_says_it_is_paused(world):
    c = controls(world)
    c.pause(["m1"], None, "looking for a substitute", START + HOUR)
    c.substitute("m1", "bob", "dave", "Bob stepped down", START + 2 * HOUR)
    world.tick(START + 2 * HOUR)
    (handover,) = [m for m in world.client("dave").all() if "You take over Bob's seat" in m.subject]
    assert "The match is paused for now" in handover.text.replace("\n", " ")
    c.resume(["m1"], None, START + 3 * HOUR)
    world.tick(START + 3 * HOUR)
    assert seats(world) == ["alice", "dave"] and match(world).status == "running"
