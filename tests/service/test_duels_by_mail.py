"""Indian Poker and Rewind Hold'em played whole by mail through the service: golden
transcripts of every mail each player got, the ledger of the duel's own chips, and the
answers to a command out of turn, a stale reply and an amount the rules forbid."""

from __future__ import annotations

import email
import email.policy
import os
import random
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.games.indian_poker.demo import DuelPlayer
from referee.games import GAMES
from referee.games.base import MATCH_CHIPS
from referee.service import replay
from referee.store.models import Event, Inbound, LedgerEntry, Match, Outbox

from ..migrated import migrated_sqlite
from .harness import SEASON, START, World

HOUR = timedelta(hours=1)
GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("REFEREE_UPDATE_GOLDEN") == "1"


def duel_season(game: str, seed: int, dmo: str = "bob") -> dict:
    return {
        **SEASON,
        "matches": [
            {
                "id": "m1",
                "game": game,
                "players": ["alice", "bob"],
                "start": START.isoformat(),
                "seed": seed,
                "reminders": ["2h"],
                "options": {"dmo": dmo},
            }
        ],
    }


def match_row(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


def play(world: World, seed: int, *, miss_every: int = 7) -> int:
    """The scripted players answer each turn two hours after it opens; every
    ``miss_every``-th turn nobody answers and the default applies. Returns the turns played."""
    players = {k: DuelPlayer(k, world.client(k), random.Random(f"{seed}:{k}")) for k in ("alice", "bob")}
    world.tick(START)
    turns = 0
    at = START
    while (match := match_row(world)).status == "running":
        turns += 1
        assert turns < 1000, "the duel does not end"
        if turns % miss_every == 0:
            world.tick(match.deadline)
            at = match.deadline
            continue
        at = max(match.step_opened_at + 2 * HOUR, at + HOUR)
        players[GAMES[match.game].step(match.state).players[0]].answer(at)
        world.tick(at)
    return turns


def transcript(world: World) -> str:
    """Every mail the referee wrote, per recipient in the order written: subject and text."""
    out = []
    with world.store.unit_of_work() as session:
        rows = list(session.scalars(select(Outbox).order_by(Outbox.to_addr, Outbox.id)))
        for row in rows:
            msg = email.message_from_bytes(row.message, policy=email.policy.default)
            body = msg.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")
            out.append(f"===== to {row.to_addr} ({row.kind}): {msg['Subject']}\n{body}")
    return "\n".join(out)


@pytest.fixture
def sqlite_url(tmp_path):
    return migrated_sqlite(tmp_path / "referee.db")


@pytest.mark.parametrize("game", ["indian-poker", "rewind-holdem"])
def test_golden_transcript_of_a_whole_duel(tmp_path, sqlite_url, game):
    world = World(tmp_path, sqlite_url, duel_season(game, seed=7))
    try:
        play(world, 7)
        text = transcript(world)
    finally:
        world.store.dispose()
    path = GOLDEN / f"{game}-seed7.txt"
    if UPDATE or not path.exists():
        path.write_text(text)
    assert text == path.read_text(), f"the mails differ from {path}; REFEREE_UPDATE_GOLDEN=1 rewrites it"


@pytest.mark.parametrize("game", ["indian-poker", "rewind-holdem"])
@pytest.mark.parametrize("seed", [3, 19])
def test_a_whole_duel_by_mail_keeps_its_books(tmp_path, db_url, game, seed):
    world = World(tmp_path, db_url, duel_season(game, seed, dmo="alice"))
    try:
        turns = play(world, seed)
        match = match_row(world)
        assert match.status == "finished" and match.result["reason"]
        engine = GAMES[game]
        final = engine.view(match.state, None)["stacks"]
        assert sum(final.values()) == 50 and 0 in final.values()
        with world.store.unit_of_work() as session:
            stored = session.get(Match, match.id)
            events = list(session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)))
            assert replay(engine, stored, events) == stored.state
            rows = list(session.scalars(select(LedgerEntry).where(LedgerEntry.match_id == match.id)))
            # every chip of the duel is its own: nothing reaches the season's chips
            assert rows and {r.currency for r in rows} == {MATCH_CHIPS}
            net: dict[str, int] = {}
            for r in rows:
                net[r.from_account] = net.get(r.from_account, 0) - r.amount
                net[r.to_account] = net.get(r.to_account, 0) + r.amount
            assert sum(net.values()) == 0
            assert {p: 25 + net.get(p, 0) for p in ("alice", "bob")} == final
            outbox = list(session.scalars(select(Outbox).where(Outbox.match_id == match.id)))
            inbound = [r.status for r in session.scalars(select(Inbound).where(Inbound.match_id == match.id))]
        kinds = [o.kind for o in outbox]
        # every mail got its answer: a receipt for each accepted command, an error for each refused one
        assert kinds.count("receipt") == inbound.count("accepted") and kinds.count("error") == inbound.count("rejected")
        assert set(inbound) <= {"accepted", "rejected"}
        # a turn is closed by an accepted command or by its deadline
        timeouts = sum(1 for e in events if e.kind == "timeout")
        assert timeouts == turns // 7  # the turns nobody answered, and no other
        assert inbound.count("accepted") + timeouts == len({e.step_key for e in events if e.kind != "start"})
        # each turn: the mover gets one receipt, and no step mail for the turn their move opened
        by_step: dict[tuple[str, str], list[str]] = {}
        for o in outbox:
            by_step.setdefault((o.step_key or "", o.to_addr), []).append(o.kind)
        assert all(ks.count("step") <= 1 for ks in by_step.values())
        assert all(not ("step" in ks and "receipt" in ks) for ks in by_step.values())
    finally:
        world.store.dispose()


@pytest.fixture
def poker(tmp_path, db_url):
    w = World(tmp_path, db_url, duel_season("indian-poker", seed=7, dmo="alice"))
    w.tick(START)
    yield w
    w.store.dispose()


def errors_to(world: World, key: str) -> list[str]:
    return [" ".join(m.text.split()) for m in world.client(key).unread() if "Not recorded" in m.subject]


def test_out_of_turn_stale_and_illegal_commands_are_answered_with_the_choices_now(poker):
    world = poker
    for key in ("alice", "bob"):
        world.client(key).unread()
    bob_first = world.client("bob").latest()
    # Bob acts out of turn: told whose turn it is; nothing changes
    world.send("bob", "RAISE 2", START + HOUR)
    world.tick(START + HOUR)
    [error] = errors_to(world, "bob")
    # issue 20: names, never player keys, in every mail
    assert "It is not your turn: Hand 1, action 1 is Alice's to act." in error
    assert "alice's" not in error
    assert "It is Alice's turn (Hand 1, action 1)" in error
    # Alice asks for more than Bob can call: the legal amounts now, and her form again
    world.send("alice", "RAISE 99\nStep: Hand 1, action 1", START + 2 * HOUR)
    world.tick(START + 2 * HOUR)
    [error] = errors_to(world, "alice")
    assert "RAISE 99 is too much" in error and "Your choices now: CALL or CHECK" in error
    assert "RAISE 1 to RAISE 24" in error and "CHECK Step: Hand 1, action 1" in error
    before = match_row(world).state
    # Alice raises; Bob answers his first mail (about Alice's turn), not the one about his
    # the "Turn:" line of a form mailed before issue 20 is still read
    world.send("alice", "RAISE 2\nTurn: Hand 1, action 1", START + 3 * HOUR)
    world.tick(START + 3 * HOUR)
    assert match_row(world).state != before
    world.client("bob").reply(bob_first, "CALL", START + 4 * HOUR)
    world.tick(START + 4 * HOUR)
    [error] = errors_to(world, "bob")
    assert "Your mail answers our mail about Hand 1, action 1, which is over" in error
    assert "Now it is Hand 1, action 2, and your turn" in error
    assert "Your choices now: CALL (2 chips" in error and "Step: Hand 1, action 2" in error
    # answering the right mail works
    world.send("bob", "CALL", START + 5 * HOUR)
    world.tick(START + 5 * HOUR)
    assert match_row(world).state["hand"] == 2


def test_the_command_edited_inside_the_quoted_form_is_the_move(poker):
    """Issue 20, kind C in a duel: the player changes the form's command inside the quote of
    our mail. The reply is read against that mail: the edited section (the command with its
    Step line) is read; our instruction lines around it never are."""
    world = poker
    alice = world.client("alice")
    prompt = alice.latest()
    lines = prompt.text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("Step: "))
    assert lines[at - 1] in ("CHECK", "CALL")
    lines[at - 1] = "RAISE 2"
    quoted = "\n".join(f"> {line}" if line else ">" for line in lines)
    alice.reply(prompt, "On Tue, 1 Dec 2026, Referee wrote:\n" + quoted, START + HOUR, quote=False)
    world.tick(START + HOUR)
    last = match_row(world).state["betting"]["actions"][-1]
    assert (last["seat"], last["action"]) == ("alice", "raise")


def test_a_match_that_cannot_start_is_a_counted_failure_shown_in_status_and_retried_after_a_load(
    tmp_path, sqlite_url, caplog
):
    """A start the game refuses (here a DMO who is no seat, stored before the season file was
    checked against the game) is no traceback and no endless "due now": the tick counts it,
    the match stays scheduled with the reason, `referee status` shows it, nobody is mailed,
    later ticks leave it alone, and the next season load tries it again (issue 21)."""
    import logging

    from referee.config import parse_season
    from referee.seasons import load_season
    from referee.status import status_text

    data = duel_season("indian-poker", seed=3)
    world = World(tmp_path, sqlite_url, data)
    try:
        with world.store.unit_of_work() as session:
            session.scalar(select(Match).where(Match.key == "m1")).options = {"dmo": "lenna"}
        caplog.set_level(logging.DEBUG, logger="referee")
        report = world.tick(START)
        assert (report.started, report.start_failed) == (0, 1)
        assert "could not start: The DMO must be one of the players" in caplog.text
        assert "Traceback" not in "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)
        match = match_row(world)
        assert match.status == "scheduled" and match.problem.startswith("could not start: The DMO")
        assert "START FAILED, could not start: The DMO must be one of the players" in status_text(
            world.store, START + HOUR
        )
        assert not world.client("alice").all() and not world.client("bob").all()
        assert world.tick(START + HOUR).start_failed == 0  # not tried again each tick
        changes = load_season(world.store, parse_season(data, "season.toml"), START + HOUR)
        assert changes == [
            "match m1: its start will be tried again "
            "(it could not start: The DMO must be one of the players (alice, bob); got 'lenna'.)",
            "match m1: options {dmo = 'lenna'} -> {dmo = 'bob'}",
        ]
        report = world.tick(START + 2 * HOUR)
        assert (report.started, report.start_failed) == (1, 0)
        assert match_row(world).status == "running" and match_row(world).problem is None
    finally:
        world.store.dispose()
