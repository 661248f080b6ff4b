"""The service on a game of concurrent steps (tests/service/twopiles.py), apart from any real
game: two steps open at once, each opened at its own instant and closed at its own deadline,
each told to its own audience; a waiting step without a deadline; reminders per step;
replies judged against the step they answer; a season currency the game reads (garnets),
judged on the live ledger and replayed; seals of a simultaneous step. On SQLite and on
PostgreSQL."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined
from sqlalchemy import select

import referee.render
from referee.games import GAMES
from referee.mail.client import ScriptedClient
from referee.service import replay
from referee.status import status_text
from referee.store.models import Event, LedgerEntry, Match
from tests.service import twopiles

from .harness import SEASON, START, World

HOUR = timedelta(hours=1)
TURN = 12 * HOUR
PLAYERS = ("alice", "bob", "carol", "dave")


@pytest.fixture
def world(tmp_path, db_url, monkeypatch):
    monkeypatch.setitem(GAMES, "twopiles", twopiles.GAME)
    folder = twopiles.write_templates(tmp_path / "templates")
    env = Environment(
        loader=ChoiceLoader([FileSystemLoader(str(folder)), FileSystemLoader(str(referee.render.template_dir()))]),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    monkeypatch.setattr(referee.render, "environment", lambda: env)
    season = copy.deepcopy(SEASON)
    season["players"] += [
        {"id": "carol", "name": "Carol", "email": "carol@example.test", "timezone": "UTC"},
        {"id": "dave", "name": "Dave", "email": "dave@example.test", "timezone": "Asia/Tokyo"},
    ]
    season["matches"] = [
        {"id": "m1", "game": "twopiles", "players": list(PLAYERS), "start": START.isoformat(), "seed": 5,
         "reminders": ["2h"]}
    ]
    w = World(tmp_path / "world", db_url, season)
    for key in ("carol", "dave"):
        w.clients[key] = ScriptedClient(
            f"{key}@example.test", key.title(), w.config.mail.outbox / f"{key}@example.test", w.config.mail.inbox
        )
    with w.store.unit_of_work() as session:  # garnets in the season ledger: carol holds 3
        session.add(
            LedgerEntry(season_id=match(w).season_id, match_id=None, seq=None, from_account="SEASON",
                        to_account="carol", amount=3, reason="grant", at=START - HOUR, currency="garnets")
        )
    yield w
    w.store.dispose()


def match(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


def replayed(session, row: Match):
    events = session.scalars(select(Event).where(Event.match_id == row.id).order_by(Event.seq)).all()
    return replay(twopiles.GAME, row, events)


def unread(world: World) -> dict[str, list]:
    """The new mail of each player who has any."""
    found = {key: world.client(key).unread() for key in PLAYERS}
    return {key: mail for key, mail in found.items() if mail}


def subjects(mail: dict[str, list]) -> dict[str, list[str]]:
    return {key: [m.subject for m in found] for key, found in mail.items() if found}


def test_two_tables_open_at_once_each_told_to_its_own_players_with_its_own_deadline(world):
    world.tick(START)
    m = match(world)
    assert [(e["key"], e["deadline"]) for e in m.open_steps] == [
        ("left-1", (START + TURN).isoformat()),
        ("right-1", (START + TURN).isoformat()),
    ]
    first = unread(world)
    # one mail each, the thread root, about the step of their own table
    assert {k: len(v) for k, v in first.items()} == dict.fromkeys(PLAYERS, 1)
    assert "Your step: Left table, turn 1" in first["alice"][0].text and "TAKE 1" in first["alice"][0].text
    assert "Your step: Right table, turn 1" in first["carol"][0].text
    assert "Your step: Left table, turn 1" in first["bob"][0].text and "TAKE" not in first["bob"][0].text

    # a move at the left table opens its next turn at the mail's arrival; the right one is untouched
    world.send("alice", "TAKE 1", START + HOUR)
    world.tick(START + HOUR)
    m = match(world)
    assert [(e["key"], e["opened_at"], e["deadline"]) for e in m.open_steps] == [
        ("left-2", (START + HOUR).isoformat(), (START + HOUR + TURN).isoformat()),
        ("right-1", START.isoformat(), (START + TURN).isoformat()),
    ]
    # the columns name the step due first
    assert (m.step_key, m.deadline) == ("right-1", START + TURN)
    mail = unread(world)
    assert set(mail) == {"alice", "bob"} and len(mail["alice"]) == 1 and len(mail["bob"]) == 1
    assert "Received" in mail["alice"][0].subject
    assert "Your step: Left table, turn 2" in mail["bob"][0].text and "TAKE 1" in mail["bob"][0].text
    assert not any(mail.get(k) for k in ("carol", "dave")), "the other table hears nothing of this table's turns"

    # the right table's deadline passes: it closes alone, its players told; the left turn keeps its own
    world.tick(START + TURN)
    m = match(world)
    assert [e["key"] for e in m.open_steps] == ["left-2", "right-2"]
    assert m.deadline == START + HOUR + TURN and m.step_key == "left-2"
    mail = unread(world)
    assert set(mail) == {"bob", "carol", "dave"}
    assert ["reminder" in m.subject.lower() for m in mail["bob"]] == [True], "bob: only his own step's reminder"
    assert "Your step: Right table, turn 2" in mail["dave"][0].text and "TAKE 1" in mail["dave"][0].text
    with world.store.unit_of_work() as session:
        [closed] = session.scalars(select(Event).where(Event.kind == "timeout")).all()
        assert (closed.step_key, closed.at, closed.payload["missing"]) == ("right-1", START + TURN, ["carol"])


def test_a_table_that_has_finished_waits_without_a_deadline_then_all_vote_in_secret(world):
    world.tick(START)
    unread(world)
    t = START
    for who in ("alice", "bob", "alice"):  # the left pile (3): 1 + 1 + 1
        t += HOUR
        world.send(who, "TAKE 1", t)
        world.tick(t)
    m = match(world)
    assert [(e["key"], e["deadline"]) for e in m.open_steps] == [
        ("left-done", None),
        ("right-1", (START + TURN).isoformat()),
    ]
    mail = unread(world)
    # the waiting step is told to the left table (the mover's receipt says it for alice)
    assert "Your step: Left table done (deadline none)" in mail["bob"][-1].text
    assert "open: Right table, turn 1 until" in mail["bob"][-1].text
    status = status_text(world.store, t)
    assert "Left table done: waiting, no deadline" in status and "Right table, turn 1: deadline" in status
    # the right table plays on: a deadline, then a move
    world.tick(START + TURN)
    unread(world)
    world.send("dave", "TAKE 2", START + TURN + HOUR)
    world.tick(START + TURN + HOUR)
    m = match(world)
    assert [e["key"] for e in m.open_steps] == ["vote"]
    assert m.deadline == START + TURN + HOUR + 24 * HOUR
    mail = unread(world)
    # everyone is told of the vote, once
    assert {k: len(v) for k, v in mail.items() if v} == {"alice": 1, "bob": 1, "carol": 1, "dave": 1}
    assert all("VOTE LEFT" in v[0].text or "Received" in v[0].subject for v in mail.values())

    # a vote is sealed until the step closes
    world.send("carol", "VOTE RIGHT", START + TURN + 2 * HOUR)
    world.tick(START + TURN + 2 * HOUR)
    [receipt] = world.client("carol").unread()
    assert "Sealed" in receipt.text
    world.tick(START + TURN + HOUR + 24 * HOUR)
    m = match(world)
    assert m.status == "finished" and m.open_steps == [] and m.result["scores"] == {"left": 0, "right": 1}
    final = world.client("carol").unread()
    # the seal's line and the command that checks it
    assert final and "Check: printf '%s' 'm1 vote carol {\"vote\":\"right\"}" in final[-1].text
    assert "Result: The right table won the vote" in final[-1].text
    with world.store.unit_of_work() as session:
        row = session.scalar(select(Match).where(Match.key == "m1"))
        assert replayed(session, row) == row.state


def test_reminders_come_per_step_at_each_ones_own_time(world):
    world.tick(START)
    unread(world)
    world.send("alice", "TAKE 1", START + HOUR)
    world.tick(START + HOUR)
    unread(world)
    # right-1 closes at START + 12h, left-2 at START + 13h: each reminded 2 hours before its deadline
    world.tick(START + TURN - 2 * HOUR)
    mail = unread(world)
    assert subjects(mail).keys() == {"carol"} and "reminder" in mail["carol"][0].subject.lower()
    world.tick(START + HOUR + TURN - 2 * HOUR - timedelta(minutes=1))
    assert unread(world) == {}
    world.tick(START + HOUR + TURN - 2 * HOUR)
    mail = unread(world)
    assert subjects(mail).keys() == {"bob"} and "reminder" in mail["bob"][0].subject.lower()
    assert "Left table, turn 2" in mail["bob"][0].text


def test_a_reply_is_judged_against_the_step_it_answers(world):
    world.tick(START)
    carol_first = world.client("carol").latest()  # about right-1, carol's turn
    alice_first = world.client("alice").latest()  # about left-1
    unread(world)
    world.send("alice", "TAKE 1", START + HOUR)  # left-1 closes by a move
    world.tick(START + HOUR)
    unread(world)
    # carol answers her mail about right-1, which the left table's move did not close: it counts
    world.client("carol").reply(carol_first, "TAKE 2", START + 2 * HOUR)
    world.tick(START + 2 * HOUR)
    assert "Received" in world.client("carol").unread()[0].subject
    assert match(world).state["tables"]["right"]["pile"] == 1
    # alice answers her mail about left-1, which is over: refused, naming what is open now
    before = match(world).state
    world.client("alice").reply(alice_first, "TAKE 1", START + 3 * HOUR)
    world.tick(START + 3 * HOUR)
    [error] = world.client("alice").unread()
    text = " ".join(error.text.split())
    assert "answers our mail about Left table, turn 1, which is over" in text
    assert match(world).state == before


def test_a_season_currency_the_game_reads_is_judged_on_the_ledger_and_replayed(world):
    world.tick(START)
    t = START
    for who, table_moves in (("alice", 1), ("bob", 1), ("alice", 1), ("carol", 2), ("dave", 1)):
        t += HOUR
        world.send(who, f"TAKE {table_moves}", t)
        world.tick(t)
    assert [e["key"] for e in match(world).open_steps] == ["vote"]
    unread(world)
    world.send("carol", "VOTE LEFT\nTIP 4", t + HOUR)  # she holds 3
    world.tick(t + HOUR)
    [error] = world.client("carol").unread()
    assert "You hold 3 garnets" in " ".join(error.text.split())
    world.send("carol", "VOTE LEFT\nTIP 2", t + 2 * HOUR)
    world.tick(t + 2 * HOUR)
    assert "Received" in world.client("carol").unread()[0].subject
    with world.store.unit_of_work() as session:
        row = session.scalar(select(Match).where(Match.key == "m1"))
        garnets = session.scalars(
            select(LedgerEntry).where(LedgerEntry.currency == "garnets", LedgerEntry.match_id == row.id)
        ).all()
        assert [(g.from_account, g.to_account, g.amount) for g in garnets] == [("carol", "LGT", 2)]
        # the move's event records the holdings it was judged on, so a replay reads the same
        moves = session.scalars(select(Event).where(Event.kind == "move", Event.player == "carol")).all()
        judged = [ev for ev in moves if "holdings" in ev.payload]  # with the first move of each mail
        assert judged[-1].payload["holdings"] == {"garnets": {"alice": 0, "bob": 0, "carol": 3, "dave": 0}}
        assert row.options["holdings"]["garnets"]["carol"] == 3
        assert replayed(session, row) == row.state
