"""A Stationary Roulette match played entirely by mail, on SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from referee.games import GAMES
from referee.render import named
from referee.service import replay
from referee.store.models import Event, Inbound, LedgerEntry, Match

from .harness import DAY, SEASON, START, World, outbox_rows

GAME = GAMES["stationary-roulette"]
ROULETTE = "ROULETTE\nWinning colour: {w}\nGold: 30\nSilver: 10\nBlack: 0"


def reply_for(world: World, key: str, colour: str = "Gold", bet: str = "Gold: 20\nSilver: 20") -> str:
    """Fill in whatever the player's latest mail asks for."""
    text = world.last_text(key)
    parts = []
    if "\nROULETTE" in "\n" + text:
        parts.append(ROULETTE.format(w=colour))
    if "\nBET" in "\n" + text:
        parts.append("BET\n" + bet)
    return "\n\n".join(parts)


def match_row(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path, db_url)
    yield w
    w.store.dispose()


def test_whole_match_by_mail(world):
    world.tick(START)
    assert "Preparation" in world.client("alice").latest().subject and "ROULETTE" in world.last_text("alice")
    colours = ["Gold", "Silver", "Black", "Gold", "Silver", "Gold", "Silver", "Gold", "Silver", "Gold"]
    for r in range(11):
        opened = START + r * DAY
        for i, key in enumerate(("alice", "bob")):
            world.send(key, reply_for(world, key, colours[r % 10]), opened + timedelta(hours=1 + i))
            world.tick(opened + timedelta(hours=1 + i))
            assert "Received:" in world.client(key).latest().subject, world.last_text(key)
        world.tick(opened + DAY)
    match = match_row(world)
    assert match.status == "finished"
    assert match.result["outcome"].keys() == {"alice", "bob"}
    # the mail names the players (issue 20) and wraps its lines at 72
    reason = named(match.result["reason"], {"alice": "Alice", "bob": "Bob"})
    assert " ".join(reason.split()) in " ".join(world.last_text("alice").split())

    with world.store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == "m1"))
        events = session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)).all()
        assert replay(GAME, match, events) == match.state  # the log plus the seed rebuilds the match
        # double entry: every chip that moved is accounted for, and balances match the state
        total = session.scalar(select(func.sum(LedgerEntry.amount)))
        assert total > 0
        balances = {}
        for e in session.scalars(select(LedgerEntry)):
            balances[e.from_account] = balances.get(e.from_account, 0) - e.amount
            balances[e.to_account] = balances.get(e.to_account, 0) + e.amount
        assert sum(balances.values()) == 0
        assert balances["alice"] == match.state["chips"]["alice"]
        assert balances["bob"] == match.state["chips"]["bob"]
        assert balances["LGT"] == 2 * 10  # alice's Black roulette (round 2) and bob's, each pays the LGT 10
        statuses = session.execute(select(Inbound.status, func.count()).group_by(Inbound.status)).all()
        assert dict(statuses) == {"accepted": 22}


def test_prompt_shows_deadline_in_player_time_zone(world):
    world.tick(START)
    alice = world.last_text("alice")
    bob = world.last_text("bob")
    # START + 24 h = 2026-12-02 18:00 UTC: 19:00 in Berlin, 13:00 in New York
    assert "19:00 CET" in alice and "18:00 UTC" in alice
    assert "13:00 EST" in bob


def test_receipt_restates_and_revision_replaces(world):
    world.tick(START)
    world.send("alice", ROULETTE.format(w="Gold"), START + timedelta(hours=1))
    world.tick(START + timedelta(hours=1))
    first = world.client("alice").latest()
    assert "Gold" in first.text
    world.send("alice", "ROULETTE\nWinning colour: Silver\nGold: 25\nSilver: 15\nBlack: 0", START + timedelta(hours=2))
    world.tick(START + timedelta(hours=2))
    receipt = world.last_text("alice")
    assert "Silver" in receipt and "25" in receipt and "15" in receipt
    state = match_row(world).state
    assert state["pending"]["alice"]["roulette"]["winning"] == "Silver"
    # the receipt is a reply to the player's mail
    assert world.client("alice").latest().message["In-Reply-To"]


def test_unreadable_mail_gets_error_quoting_the_line_and_changes_nothing(world):
    world.tick(START)
    before = match_row(world).state
    world.send(
        "alice", "ROULETTE\nWinning colour: Gold\nGold: thirty\nSilver: 10\nBlack: 0", START + timedelta(hours=1)
    )
    world.tick(START + timedelta(hours=1))
    error = world.last_text("alice")
    assert "Gold: thirty" in error
    assert "ROULETTE" in error and "Winning colour" in error  # the template to fill in
    assert match_row(world).state == before


def test_illegal_roulette_is_rejected_with_its_reason(world):
    world.tick(START)
    before = match_row(world).state
    world.send("alice", "ROULETTE\nWinning colour: Gold\nGold: 20\nSilver: 20\nBlack: 0", START + timedelta(hours=1))
    world.tick(START + timedelta(hours=1))
    error = world.last_text("alice")
    assert "25" in error and "Nothing in that mail was recorded" in error
    assert match_row(world).state == before


def test_spoofed_sender_is_never_obeyed(world):
    world.tick(START)
    before = match_row(world).state
    # eve got hold of alice's reply address
    world.send("alice", ROULETTE.format(w="Black"), START + timedelta(hours=1), from_addr="eve@evil.test")
    world.tick(START + timedelta(hours=1))
    assert match_row(world).state == before
    notice = outbox_rows(world, kind="spoof")
    assert [r.to_addr for r in notice] == ["alice@example.test"]
    assert not any(r.to_addr == "eve@evil.test" for r in outbox_rows(world))


def test_a_from_address_our_mta_found_forged_is_not_obeyed(world):
    world.tick(START)
    before = match_row(world).state
    world.send(
        "alice",
        ROULETTE.format(w="Gold"),
        START + timedelta(hours=1),
        extra_headers={"Authentication-Results": "mx.example.test; spf=fail; dkim=none; dmarc=fail"},
    )
    world.tick(START + timedelta(hours=1))
    assert match_row(world).state == before
    assert [r.to_addr for r in outbox_rows(world, kind="spoof")] == ["alice@example.test"]


def test_forged_token_from_registered_player_is_not_obeyed_and_explained(world):
    world.tick(START)
    before = match_row(world).state
    world.send(
        "alice", ROULETTE.format(w="Gold"), START + timedelta(hours=1), to_addr="referee+1xaaaaaaaaaaaaa@example.test"
    )
    world.tick(START + timedelta(hours=1))
    assert match_row(world).state == before
    rows = outbox_rows(world, kind="unaddressed")
    assert [r.to_addr for r in rows] == ["alice@example.test"]
    assert "is damaged" in world.last_text("alice")


def test_unknown_sender_without_token_is_dropped_silently(world):
    world.tick(START)
    count = len(outbox_rows(world))
    world.send(
        "alice", "hello", START + timedelta(hours=1), from_addr="stranger@else.test", to_addr="referee@example.test"
    )
    world.tick(START + timedelta(hours=1))
    assert len(outbox_rows(world)) == count


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto-Submitted": "auto-replied"},
        {"Precedence": "bulk"},
        {"List-Id": "<players.example.test>"},
        {"X-Referee-Loop": "example.test"},
    ],
    ids=["auto-submitted", "precedence", "list", "our-loop-header"],
)
def test_automated_mail_is_never_answered_nor_obeyed(world, headers):
    world.tick(START)
    before = match_row(world).state
    count = len(outbox_rows(world))
    world.send("alice", ROULETTE.format(w="Gold"), START + timedelta(hours=1), extra_headers=headers)
    world.tick(START + timedelta(hours=1))
    assert match_row(world).state == before
    assert len(outbox_rows(world)) == count
    with world.store.unit_of_work() as session:
        assert session.scalar(select(Inbound.status)) == "ignored"


def test_our_own_mail_delivered_back_is_ignored(world):
    world.tick(START)
    count = len(outbox_rows(world))
    own = outbox_rows(world)[0].message
    from referee.mail.maildir import deliver_to_maildir

    deliver_to_maildir(world.config.mail.inbox, own, delivered_at=START + timedelta(hours=1))
    world.tick(START + timedelta(hours=1))
    assert len(outbox_rows(world)) == count


def test_timeliness_is_judged_by_arrival_not_by_processing(world):
    world.tick(START)
    # alice's mail reaches the server an hour before the deadline, but the referee was down
    world.send("alice", ROULETTE.format(w="Gold"), START + DAY - timedelta(hours=1))
    # bob's arrives a minute after the deadline
    world.send("bob", ROULETTE.format(w="Gold"), START + DAY + timedelta(minutes=1))
    world.tick(START + DAY + timedelta(hours=5))
    state = match_row(world).state
    round0 = state["history"][0]
    assert round0["prepared"] == {"alice": True, "bob": False}
    # bob's late mail answered the preparation-phase mail: it is not moved into round 1
    assert state["pending"]["bob"]["roulette"] is None
    assert "closed" in world.last_text("bob") or "closed" in outbox_rows(world, kind="error")[-1].message.decode()


def test_mail_arriving_exactly_at_the_deadline_is_late(world):
    world.tick(START)
    world.send("alice", ROULETTE.format(w="Gold"), START + DAY)
    world.tick(START + DAY + timedelta(seconds=1))
    assert match_row(world).state["history"][0]["prepared"]["alice"] is False


def test_restart_after_missed_deadlines_replays_in_arrival_order(world):
    world.tick(START)
    # down for three days; mails kept arriving
    world.send("alice", ROULETTE.format(w="Gold"), START + timedelta(hours=2))
    world.send("bob", ROULETTE.format(w="Silver"), START + timedelta(hours=3))
    # a fresh mail (not a reply) in round 1, after round 0 closed: counts for round 1
    world.send(
        "alice",
        ROULETTE.format(w="Silver") + "\n\nBET\nGold: 40",
        START + DAY + timedelta(hours=2),
        quote=False,
        thread=False,
    )
    report = world.tick(START + 3 * DAY + timedelta(hours=1))
    assert report.closed == 3
    state = match_row(world).state
    assert state["round"] == 3
    assert state["history"][0]["prepared"] == {"alice": True, "bob": True}
    assert state["history"][1]["prepared"] == {"alice": True, "bob": False}
    bob_roulette_bet = [r for r in state["history"][1]["roulettes"] if r["preparer"] == "bob"][0]
    assert bob_roulette_bet["bet"]["Gold"] == 40
    # each closed round mailed both players once
    steps = outbox_rows(world, kind="step")
    assert len(steps) == 2 * 4
    match = match_row(world)
    assert match.deadline == START + 4 * DAY  # the schedule did not drift


def test_closing_twice_closes_once(world):
    world.tick(START)
    world.referee.close_due(START + DAY)
    world.referee.close_due(START + DAY)
    from referee.service import Referee

    other = Referee(world.store, world.config, inbox=None, outbox=None)  # a second process
    other.close_due(START + DAY + timedelta(minutes=5))
    with world.store.unit_of_work() as session:
        timeouts = session.scalar(select(func.count()).select_from(Event).where(Event.kind == "timeout"))
    assert timeouts == 1
    assert match_row(world).state["round"] == 1


def test_reminder_goes_once_to_players_who_have_not_submitted(world):
    world.tick(START)
    world.send("alice", ROULETTE.format(w="Gold"), START + timedelta(hours=1))
    world.tick(START + timedelta(hours=1))
    world.tick(START + DAY - timedelta(hours=2))
    world.tick(START + DAY - timedelta(hours=1))
    reminders = outbox_rows(world, kind="reminder")
    assert [r.to_addr for r in reminders] == ["bob@example.test"]
    assert "ROULETTE" in world.last_text("bob") and "Reminder" in world.client("bob").latest().subject


def test_missed_deadline_costs_the_inactivity_penalty(world):
    world.tick(START)
    world.send("alice", ROULETTE.format(w="Gold"), START + timedelta(hours=1))
    world.tick(START + DAY)
    state = match_row(world).state
    assert state["points"]["alice"] == 60
    assert state["chips"]["bob"] == 200 - 5
    with world.store.unit_of_work() as session:
        fee = session.scalars(select(LedgerEntry).where(LedgerEntry.to_account == "LGT")).all()
    assert [(f.from_account, f.amount) for f in fee] == [("bob", 5)]


def test_ingest_is_idempotent_by_message_id(world):
    world.tick(START)
    path = world.send("alice", ROULETTE.format(w="Gold"), START + timedelta(hours=1))
    data = path.read_bytes()
    world.tick(START + timedelta(hours=1))
    # the same mail delivered again (a crash before the file moved, or a duplicate delivery)
    from referee.mail.maildir import deliver_to_maildir

    deliver_to_maildir(world.config.mail.inbox, data, delivered_at=START + timedelta(hours=1))
    world.tick(START + timedelta(hours=2))
    with world.store.unit_of_work() as session:
        rows = session.scalars(select(Inbound).order_by(Inbound.id)).all()
        # the second copy is recorded as a duplicate of the first, and never processed
        assert [(r.status, r.rule, r.duplicate_of) for r in rows] == [
            ("accepted", None, None),
            ("ignored", "duplicate", rows[0].id),
        ]
        assert session.scalar(select(func.count()).select_from(Event).where(Event.kind == "move")) == 1


def test_a_bug_while_processing_never_loses_the_mail_nor_stops_the_service(world, monkeypatch):
    world.tick(START)
    before = match_row(world).state
    world.send("alice", ROULETTE.format(w="Gold"), START + timedelta(hours=1))

    def broken(*args, **kwargs):
        raise RuntimeError("engine bug")

    monkeypatch.setattr(GAME, "parse", broken)
    report = world.tick(START + timedelta(hours=1))
    assert report.failed == 1
    assert match_row(world).state == before
    with world.store.unit_of_work() as session:
        row = session.scalar(select(Inbound))
        # tried twice, then quarantined with the reason, the raw mail kept
        assert row.status == "quarantined" and row.attempts == 2 and b"ROULETTE" in row.raw
        assert "engine bug" in row.note


def test_outbox_retries_then_gives_up(world):
    class Flaky:
        def __init__(self):
            self.calls = 0

        def deliver(self, recipient, data, key, *, durable=True):
            self.calls += 1
            raise OSError("disk full")

        def sync(self):
            pass

    world.referee.outbox = Flaky()
    world.tick(START)
    rows = outbox_rows(world)
    assert rows and all(r.status == "pending" and r.attempts == 1 for r in rows)
    assert rows[0].next_attempt_at == START + timedelta(seconds=60)
    t = START
    for _ in range(12):
        t += timedelta(hours=13)
        world.referee.flush_outbox(t)
    rows = outbox_rows(world)
    assert all(r.status == "failed" and r.attempts == world.config.outbox_max_attempts for r in rows)


def test_a_match_starts_with_the_balance_after_every_earlier_settlement(tmp_path, db_url):
    season = {
        **SEASON,
        "players": [*SEASON["players"], {"id": "carol", "name": "Carol", "email": "carol@example.test"}],
        "matches": [
            SEASON["matches"][0],
            # starts exactly when m1's preparation phase closes, in which bob misses his roulette
            {
                "id": "m2",
                "game": "stationary-roulette",
                "players": ["bob", "carol"],
                "start": (START + DAY).isoformat(),
                "seed": 2,
            },
        ],
    }
    world = World(tmp_path, db_url, season)
    world.tick(START)
    world.send("alice", ROULETTE.format(w="Gold"), START + timedelta(hours=1))
    world.tick(START + 2 * DAY)  # the referee was down: both events are processed in one tick, in time order
    with world.store.unit_of_work() as session:
        m2 = session.scalar(select(Match).where(Match.key == "m2"))
        assert m2.options["chips"] == {"bob": 200 - 5, "carol": 200}
    world.store.dispose()


def test_a_bug_closing_one_match_leaves_it_open_and_closes_the_others(tmp_path, db_url, monkeypatch, caplog):
    season = {
        **SEASON,
        "players": [*SEASON["players"], {"id": "carol", "name": "Carol", "email": "carol@example.test"}],
        "matches": [SEASON["matches"][0], {**SEASON["matches"][0], "id": "m2", "players": ["bob", "carol"], "seed": 2}],
    }
    world = World(tmp_path, db_url, season)
    world.tick(START)
    real = GAME.apply_timeout

    def buggy(state):
        if state["seed"] == 2:
            raise RuntimeError("engine bug")
        return real(state)

    monkeypatch.setattr(GAME, "apply_timeout", buggy)
    report = world.tick(START + DAY)
    assert report.closed == 1
    with world.store.unit_of_work() as session:
        rounds = {m.key: m.state["round"] for m in session.scalars(select(Match))}
    assert rounds == {"m1": 1, "m2": 0}
    assert "match m2: closing its step failed" in caplog.text
    monkeypatch.setattr(GAME, "apply_timeout", real)  # fixed: the next tick closes it
    assert world.tick(START + DAY + timedelta(minutes=1)).closed == 1
    world.store.dispose()


def test_an_engine_that_does_not_close_its_step_cannot_hang_the_service(world, monkeypatch, caplog):
    world.tick(START)
    monkeypatch.setattr(GAME, "apply_timeout", lambda state: state)  # a bug: the round never closes
    report = world.tick(START + DAY)  # returns instead of closing the same round forever
    assert report.closed == 0
    assert "apply_timeout left step round-0 open" in caplog.text


def test_two_copies_of_a_mail_in_one_delivery_are_stored_once(world):
    world.tick(START)
    path = world.send("alice", ROULETTE.format(w="Gold"), START + timedelta(hours=1))
    from referee.mail.maildir import deliver_to_maildir

    deliver_to_maildir(world.config.mail.inbox, path.read_bytes(), delivered_at=START + timedelta(hours=1))
    report = world.tick(START + timedelta(hours=1))
    assert report.ingested == 1 and report.accepted == 1
    assert not list((world.config.mail.inbox / "new").iterdir())  # both files marked processed
