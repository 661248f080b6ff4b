"""Trust: the hash-chained event log, seals of sealed moves, `archive verify` and `replay`."""

from __future__ import annotations

import hashlib
import re
import subprocess
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from referee.archive import chain
from referee.archive.verify import replay_match, verify_database
from referee.cli import main
from referee.store.models import Event, Match

from ..service.harness import DAY, START, World
from .match_files import match_html
from ..service.test_match_by_mail import reply_for

COMMITMENT = re.compile(r"^  ([0-9a-f]{64})$", re.M)
CHECK = re.compile(r"^ +(printf '%s' .* \| sha256sum)$", re.M)


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path, db_url)
    yield w
    w.store.dispose()


def play_rounds(world: World, rounds: int, colours=("Black", "Silver", "Gold")) -> dict[str, list[str]]:
    """Both players submit in each of the first ``rounds`` rounds; returns each player's receipts."""
    world.tick(START)
    receipts: dict[str, list[str]] = {"alice": [], "bob": []}
    for r in range(rounds):
        opened = START + r * DAY
        for i, key in enumerate(("alice", "bob")):
            at = opened + timedelta(hours=1 + i)
            world.send(key, reply_for(world, key, colours[r % len(colours)]), at)
            world.tick(at)
            receipts[key].append(world.last_text(key))
        world.tick(opened + DAY)
    return receipts


def events_of(world: World, key: str = "m1") -> list[Event]:
    with world.store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == key))
        return list(session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)))


def test_every_event_is_chained_to_the_one_before(world):
    play_rounds(world, 2)
    events = events_of(world)
    assert [ev.seq for ev in events] == list(range(1, len(events) + 1))
    previous = chain.GENESIS
    for ev in events:
        body = chain.event_body("m1", ev.seq, ev.kind, ev.step_key, ev.player, ev.at, ev.payload)
        assert ev.digest == hashlib.sha256(body).hexdigest()
        assert ev.hash == hashlib.sha256((previous + ev.digest).encode()).hexdigest()
        previous = ev.hash
    with world.store.unit_of_work() as session:
        assert session.scalar(select(Match.last_event_hash).where(Match.key == "m1")) == previous
    # every move carries a nonce the players cannot compute, so its digest says nothing of it
    moves = [ev for ev in events if ev.kind == "move"]
    assert moves and all(re.fullmatch(r"[0-9a-f]{32}", ev.payload["nonce"]) for ev in moves)
    assert len({ev.payload["nonce"] for ev in moves}) == len(moves)
    assert all(c.ok for c in verify_database(world.store))


def tamper(world: World, seq: int, **values) -> None:
    with world.store.unit_of_work() as session:
        match_id = session.scalar(select(Match.id).where(Match.key == "m1"))
        session.execute(update(Event).where(Event.match_id == match_id, Event.seq == seq).values(**values))


def test_verify_finds_the_first_changed_event(world, capsys):
    play_rounds(world, 2)
    moves = [ev for ev in events_of(world) if ev.kind == "move"]
    target = moves[1]
    changed = dict(target.payload, move={**target.payload["move"]})
    changed["move"]["winning"] = "Gold" if changed["move"].get("winning") != "Gold" else "Silver"
    tamper(world, target.seq, payload=changed)
    [check] = verify_database(world.store, "m1")
    assert not check.ok and check.problem.seq == target.seq
    assert "content does not match its digest" in check.problem.reason
    # the command line says so, and fails
    assert main(["--config", str(world.dir / "referee.toml"), "archive", "verify"]) == 1
    out = capsys.readouterr().out
    assert f"BROKEN: m1: event {target.seq}:" in out and "0 chain(s) hold, 1 broken" in out


def test_verify_finds_a_rewritten_chain_and_a_removed_event(world):
    play_rounds(world, 1)
    events = events_of(world)
    # whoever rewrites an event and its digest still breaks the link to the next event
    ev = events[2]
    payload = dict(ev.payload, accepted=False)
    digest = chain.event_digest(chain.event_body("m1", ev.seq, ev.kind, ev.step_key, ev.player, ev.at, payload))
    tamper(world, ev.seq, payload=payload, digest=digest)
    [check] = verify_database(world.store, "m1")
    assert check.problem.seq == ev.seq and "hash does not follow" in check.problem.reason
    tamper(world, ev.seq, payload=ev.payload, digest=ev.digest)
    assert verify_database(world.store, "m1")[0].ok
    with world.store.unit_of_work() as session:
        session.execute(Event.__table__.delete().where(Event.id == events[1].id))
    [check] = verify_database(world.store, "m1")
    assert check.problem.seq == events[2].seq and "missing" in check.problem.reason


def test_replay_rebuilds_the_stored_match_and_says_where_it_differs(world, capsys):
    play_rounds(world, 3)
    check = replay_match(world.store, "m1")
    assert check.ok, check.differences
    assert main(["--config", str(world.dir / "referee.toml"), "replay", "m1"]) == 0
    assert "ok: m1: rebuilt from its seed and" in capsys.readouterr().out
    with world.store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == "m1"))
        state = dict(match.state, points={**match.state["points"], "alice": match.state["points"]["alice"] + 7})
        match.state = state
    check = replay_match(world.store, "m1")
    assert not check.ok and check.differences == ["state.points.alice"]
    assert main(["--config", str(world.dir / "referee.toml"), "replay", "m1"]) == 1
    assert "DIFFERS: m1" in capsys.readouterr().out
    assert main(["--config", str(world.dir / "referee.toml"), "replay", "nope"]) != 0


def test_receipts_seal_moves_and_the_close_reveals_lines_that_hash_to_them(world):
    receipts = play_rounds(world, 2, colours=("Black",))
    # round 1 of alice: her roulette (winning colour Black) and her bet, each sealed
    receipt = receipts["alice"][1]
    sealed = COMMITMENT.findall(receipt.split("=== Your sealed move", 1)[1])
    assert len(sealed) == 2, receipt
    # the mail closing round 1 gives her the lines and the commands; each prints its seal
    closing = world.client("alice").latest().text
    assert "=== How to check the referee did not change your move ===" in closing
    commands = CHECK.findall(closing)
    assert len(commands) == 2
    printed = [
        subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=True).stdout.split()[0]
        for cmd in commands
    ]
    assert printed == sealed
    assert '"winning":"Black"' in closing.split("=== How to check the referee", 1)[1]
    # bob's mails never hold alice's seals, lines or nonces
    nonces = {ev.payload["nonce"] for ev in events_of(world) if ev.kind == "move" and ev.player == "alice"}
    for msg in world.client("bob").all():
        assert not any(n in msg.text for n in nonces)
        assert not any(s in msg.text for s in sealed)


def test_a_revision_is_sealed_anew_and_both_are_revealed(world):
    world.tick(START)
    for colour, hours in (("Gold", 1), ("Silver", 2)):
        world.send("alice", reply_for(world, "alice", colour), START + timedelta(hours=hours))
        world.tick(START + timedelta(hours=hours))
    first, second = (m.text for m in world.client("alice").all()[-2:])
    assert COMMITMENT.findall(first.split("=== Your sealed move", 1)[1]) != COMMITMENT.findall(second.split("=== Your sealed move", 1)[1])
    world.tick(START + DAY)
    closing = world.client("alice").latest().text
    revealed = closing.split("=== How to check the referee", 1)[1]
    assert revealed.index('"winning":"Gold"') < revealed.index('"winning":"Silver"')
    assert "Your last accepted submission is the one that counted." in revealed


def test_a_finished_match_page_lists_the_seals_of_every_receipt_and_verify_checks_the_site(world, tmp_path, capsys):
    from referee.archive.pages import Paths
    from referee.archive.site import build

    receipts = play_rounds(world, 11)
    with world.store.unit_of_work() as session:
        assert session.scalar(select(Match.status).where(Match.key == "m1")) == "finished"
    sealed = [c for key in receipts for text in receipts[key] for c in COMMITMENT.findall(text.split("=== Your sealed move", 1)[1])]
    assert len(sealed) == 2 * 20  # each player: 10 roulettes and 10 bets
    site = tmp_path / "site"
    build(world.store, site, now=START + 12 * DAY)
    page = match_html(site, "test", "m1")
    listed = re.findall(r'<td><code class="hash">([0-9a-f]{64})</code></td>\s*<td><code class="check">', page)
    assert sorted(listed) == sorted(sealed)
    # the site's chains hold and agree with the database; an edited chain.json is found
    config = str(world.dir / "referee.toml")
    assert main(["--config", config, "archive", "verify", "--site", str(site)]) == 0
    chain_file = site / Paths.chain("test", "m1")
    text = chain_file.read_text()
    chain_file.write_text(
        text.replace('"winning":"Black"', '"winning":"Gold"', 1).replace('"winning": "Black"', '"winning": "Gold"', 1)
    )
    capsys.readouterr()
    assert main(["--config", config, "archive", "verify", "--site", str(site)]) == 1
    assert "content does not match its digest" in capsys.readouterr().out
