"""The service on a game of turns (tests/service/countdown.py), apart from any real game:
who is told what when a turn passes, receipts that say what happens next, stale replies,
reminders to the one who must act, a match's own chips beside the season's, awards and
signals, hidden information, and replay. On SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined
from sqlalchemy import select

import referee.render
from referee.games import GAMES
from referee.games.base import MATCH_CHIPS, SEASON_CHIPS
from referee.service import replay
from referee.store.balances import balances_of
from referee.store.models import Event, Inbound, LedgerEntry, Match
from tests.service import countdown

from .harness import DAY, SEASON, START, World, outbox_rows

HOUR = timedelta(hours=1)
TURN = 12 * HOUR  # Countdown's turn length
HERE = __import__("pathlib").Path(__file__).parent


@pytest.fixture
def countdown_game(monkeypatch):
    """Countdown in the registry and its templates beside the project's."""
    monkeypatch.setitem(GAMES, "countdown", countdown.GAME)
    env = Environment(
        loader=ChoiceLoader(
            [FileSystemLoader(str(HERE / "templates")), FileSystemLoader(str(referee.render.template_dir()))]
        ),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    monkeypatch.setattr(referee.render, "environment", lambda: env)


def season(**match) -> dict:
    return {
        **SEASON,
        "matches": [
            {
                "id": "m1",
                "game": "countdown",
                "players": ["alice", "bob"],
                "start": START.isoformat(),
                "seed": 3,
                "reminders": ["2h"],
                **match,
            }
        ],
    }


@pytest.fixture
def world(tmp_path, db_url, countdown_game):
    w = World(tmp_path, db_url, season())
    yield w
    w.store.dispose()


def match_row(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


def secrets(world: World) -> dict[str, int]:
    return match_row(world).state["secrets"]


def new_mail(world: World) -> dict[str, list]:
    return {key: world.client(key).unread() for key in ("alice", "bob")}


def test_a_turn_tells_the_mover_once_and_the_other_player_of_their_turn(world):
    world.tick(START)
    first = new_mail(world)
    assert [m.subject for m in first["alice"]] == ["[Countdown m1] Turn 1: your turn"]
    assert [m.subject for m in first["bob"]] == ["[Countdown m1] Turn 1: Alice's turn"]
    assert "TAKE 1\nTurn: Turn 1" in first["alice"][0].text and "TAKE" not in first["bob"][0].text

    world.send("alice", "TAKE 2", START + HOUR)
    world.tick(START + HOUR)
    mail = new_mail(world)
    # one mail for the mover: the receipt, which says what happens now
    assert [m.subject for m in mail["alice"]] == ["[Countdown m1] Received: TAKE 2"]
    assert "Bob's turn (Turn 2)" in mail["alice"][0].text and "TAKE 1" not in mail["alice"][0].text
    assert [m.subject for m in mail["bob"]] == ["[Countdown m1] Turn 2: your turn"]
    assert "alice took 2" in mail["bob"][0].text and "Turn: Turn 2" in mail["bob"][0].text
    match = match_row(world)
    assert (match.step_key, match.state["pile"]) == ("turn-2", 5)
    # each turn has its own deadline, counted from when it opened (the mail's arrival)
    assert match.deadline == START + HOUR + TURN


def test_a_receipt_carries_the_form_when_the_mover_acts_again(world):
    world.tick(START)
    new_mail(world)
    world.send("alice", "TAKE 3", START + HOUR)  # taking 3 gives another turn
    world.tick(START + HOUR)
    mail = new_mail(world)
    assert [m.subject for m in mail["alice"]] == ["[Countdown m1] Received: TAKE 3"]
    assert "your turn (Turn 2)" in mail["alice"][0].text and "TAKE 1\nTurn: Turn 2" in mail["alice"][0].text
    assert [m.subject for m in mail["bob"]] == ["[Countdown m1] Turn 2: Alice's turn"]
    # the receipt is the mail to answer: a reply to it is for the turn it shows
    world.send("alice", "TAKE 1", START + 2 * HOUR)
    world.tick(START + 2 * HOUR)
    assert match_row(world).state["pile"] == 3


def test_a_reply_to_a_mail_about_a_turn_that_is_over_is_not_moved_to_the_next(world):
    world.tick(START)
    bob_first = world.client("bob").latest()  # "Turn 1: Alice's turn"
    world.send("alice", "TAKE 1", START + HOUR)
    world.tick(START + HOUR)
    new_mail(world)
    before = match_row(world)
    # Bob answers his old mail (about turn 1) although turn 2, his, is open now
    world.client("bob").reply(bob_first, "TAKE 3", START + 2 * HOUR)
    world.tick(START + 2 * HOUR)
    [error] = world.client("bob").unread()
    assert "Not recorded" in error.subject
    text = " ".join(error.text.split())
    assert "answers our mail about Turn 1, which is over" in text
    assert "Now it is Turn 2, and your turn" in text and "TAKE 1 Turn: Turn 2" in text
    after = match_row(world)
    assert (after.state, after.version) == (before.state, before.version)  # nothing changed
    # Alice, whose turn it is not, answering her receipt: not her turn, said with who must act
    world.send("alice", "TAKE 1", START + 3 * HOUR)
    world.tick(START + 3 * HOUR)
    [error] = world.client("alice").unread()
    # issue 20: the engine's reason names bob by key; the mail names him (Bob)
    assert "It is not your turn: Turn 2 is Bob's" in " ".join(error.text.split())
    assert "Bob's turn (Turn 2)" in error.text
    assert match_row(world).state == before.state
    with world.store.unit_of_work() as session:
        assert [r.status for r in session.scalars(select(Inbound).order_by(Inbound.id))] == [
            "accepted",
            "rejected",
            "rejected",
        ]


def test_a_stale_turn_line_is_refused_even_in_a_new_mail(world):
    world.tick(START)
    world.send("alice", "TAKE 1", START + HOUR)
    world.tick(START + HOUR)
    new_mail(world)
    # a new mail (no In-Reply-To) to Bob's reply address that keeps an old Turn line
    world.client("bob").reply(world.client("bob").latest(), "TAKE 1\nTurn: Turn 1", START + 2 * HOUR, thread=False)
    world.tick(START + 2 * HOUR)
    [error] = world.client("bob").unread()
    assert "answers Turn 1, which is over" in " ".join(error.text.split())
    assert match_row(world).state["pile"] == 6


def test_a_timeout_takes_one_and_tells_both_players(world):
    world.tick(START)
    new_mail(world)
    world.tick(START + TURN)
    mail = new_mail(world)
    assert [m.subject for m in mail["alice"]] == ["[Countdown m1] Turn 2: Bob's turn"]
    assert [m.subject for m in mail["bob"]] == ["[Countdown m1] Turn 2: your turn"]
    assert "alice took 1 (no answer by the deadline)" in mail["bob"][0].text
    match = match_row(world)
    assert match.state["pile"] == 6 and match.deadline == START + 2 * TURN
    # a mail that arrived before the deadline but is read after it still counts, for its turn
    world.send("bob", "TAKE 2", START + 2 * TURN - timedelta(seconds=1))
    world.tick(START + 2 * TURN + HOUR)
    assert match_row(world).state["pile"] == 4


def test_reminders_go_only_to_the_player_who_must_act(world):
    world.tick(START)
    new_mail(world)
    world.tick(START + TURN - 2 * HOUR)
    mail = new_mail(world)
    assert [m.subject for m in mail["alice"]] == ["[Countdown m1] Reminder: Turn 1 closes in 2 hours"]
    assert mail["bob"] == []
    assert "TAKE 1\nTurn: Turn 1" in mail["alice"][0].text


def play_out(world: World) -> None:
    """Alice and Bob alternate TAKE 2 / TAKE 1 on a pile of 7: 7-2-1-2-1-... Alice takes the last."""
    world.tick(START)
    at = START
    while match_row(world).status == "running":
        match = match_row(world)
        at += HOUR
        world.send(match.state["to_act"], "TAKE 1" if match.state["pile"] == 1 else "TAKE 2", at)
        world.tick(at)


def test_match_chips_season_chips_awards_and_signals_each_in_their_currency(world, caplog):
    caplog.set_level("INFO", logger="referee")
    play_out(world)
    match = match_row(world)
    assert match.status == "finished"
    winner = next(p for p, o in match.result["outcome"].items() if o == "win")
    loser = next(p for p in ("alice", "bob") if p != winner)
    secret = secrets(world)
    assert match.result["awards"] == {"cols": {winner: secret[winner]}}
    assert match.result["signals"] == [{"kind": "death-match", "player": loser}]
    assert f"match m1 signals the season: {{'kind': 'death-match', 'player': '{loser}'}}" in caplog.text
    with world.store.unit_of_work() as session:
        rows = list(session.scalars(select(LedgerEntry).where(LedgerEntry.match_id == match.id)))
        by_currency: dict[str, dict[str, int]] = {}
        for e in rows:
            totals = by_currency.setdefault(e.currency, {})
            totals[e.from_account] = totals.get(e.from_account, 0) - e.amount
            totals[e.to_account] = totals.get(e.to_account, 0) + e.amount
        assert set(by_currency) == {MATCH_CHIPS, SEASON_CHIPS, "cols"}
        taken = {p: sum(e["take"] for e in match.state["log"] if e["player"] == p) for p in ("alice", "bob")}
        assert by_currency[MATCH_CHIPS] == {"house": -7, "pile": 0, **taken}
        assert by_currency[SEASON_CHIPS] == {loser: -1, winner: 1}
        assert by_currency["cols"] == {"SEASON": -secret[winner], winner: secret[winner]}
        # the season balance counts the season's chips only: 200 granted, one won or lost
        season_id = match.season_id
        assert balances_of(session, season_id, ["alice", "bob"]) == {winner: 201, loser: 199}
        # the seed and the events rebuild the match
        events = list(session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)))
        stored = session.get(Match, match.id)
        assert replay(countdown.GAME, stored, events) == stored.state
    # both players hear the end, with both secrets now revealed
    for key in ("alice", "bob"):
        last = world.client(key).latest().text
        assert "The match is over" in last
        assert f"alice {secret['alice']}, bob {secret['bob']}" in last


def test_the_opponents_secret_never_reaches_a_player_before_the_end(world):
    play_out(world)
    secret = secrets(world)
    for key, other in (("alice", "bob"), ("bob", "alice")):
        mails = world.client(key).all()
        *during, last = mails
        assert len(during) > 3
        for mail in during:
            assert f"{other} {secret[other]}" not in mail.text
            assert mail.text.count("secret") == 1 and f"Your secret: {secret[key]}." in mail.text
        assert f"{other} {secret[other]}" in last.text
    # and the rows written for them agree: every mail went through view(state, player)
    assert len(outbox_rows(world, kind="step")) >= 4


def test_a_game_of_match_chips_only_gets_no_season_chips_in_its_options(world, monkeypatch):
    monkeypatch.setattr(
        countdown.Countdown,
        "game_type",
        countdown.Countdown.game_type.__class__(
            **{**countdown.Countdown.game_type.__dict__, "currencies": (MATCH_CHIPS,)}
        ),
    )
    world.tick(START)
    assert "chips" not in match_row(world).options
    assert match_row(world).state["balances"] == {}


def test_a_turn_deadline_is_per_step_kind_from_the_season_file(tmp_path, db_url, countdown_game):
    w = World(tmp_path, db_url, season(steps={"turn": "3h"}, options={"pile": 4}))
    try:
        w.tick(START)
        match = match_row(w)
        assert match.deadline == START + 3 * HOUR and match.state["pile"] == 4
        w.tick(START + 3 * HOUR)
        assert match_row(w).deadline == START + 6 * HOUR
    finally:
        w.store.dispose()


def test_an_unknown_option_is_refused_with_the_ones_the_game_knows(tmp_path, db_url, countdown_game):
    from referee.config import ConfigError

    with pytest.raises(ConfigError, match="allowed: pile"):
        World(tmp_path, db_url, season(options={"pyle": 4}))


def test_stale_files_in_the_maildirs_tmp_go_once_an_hour(tmp_path, sqlite_store, countdown_game):
    import os

    w = World(tmp_path / "w", sqlite_store.url, season())
    try:
        w.tick(START)
        w.tick(START + timedelta(minutes=1))  # the first quiet tick looks (and finds nothing)
        stale = w.config.mail.inbox / "tmp" / "1.M1P1Q1.host"
        stale.write_bytes(b"half a delivery")
        old = (START - 2 * DAY).timestamp()
        os.utime(stale, (old, old))
        w.tick(START + timedelta(minutes=2))  # quiet too, but looked for at most once an hour
        assert stale.exists()
        w.tick(START + HOUR + timedelta(minutes=1))
        assert not stale.exists()
    finally:
        w.store.dispose()
