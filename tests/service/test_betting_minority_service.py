"""Betting Minority through the real service, by mail: a season of twelve players (ten
participants, some of them without an address) loads; the first mail goes to the DM
players and to the participants with an address, and to nobody else ever after; a
placement step closes on the second send; a reply to a betting turn's mail counts in the
turn's extension, a reply to an earlier placement step does not; a whole match plays to
its end and replays; and no mail to a DM player shows a participant's entry before the
payout of its round reveals it. On SQLite and on PostgreSQL."""

from __future__ import annotations

import email
import email.policy
import random
import re
from datetime import timedelta

import pytest
from sqlalchemy import select

from referee.games.betting_minority.demo import STEP_LINE, MinorityPlayer
from referee.games import GAMES
from referee.games.base import MATCH_CHIPS
from referee.mail.client import Received, ScriptedClient
from referee.service import replay
from referee.store.models import Event, Inbound, LedgerEntry, Match, Outbox, Player

from tests.games.mail_context import flat

from .harness import SEASON, START, World, outbox_rows

HOUR = timedelta(hours=1)
GAME = GAMES["betting-minority"]

# the ten participants in seat order (P1..P10): id -> (name, has an address)
PARTICIPANTS = {
    "jose": ("José Núñez", True),
    "annlee": ("Ann Lee", False),
    "annsmith": ("Ann Smith", True),
    "bjorn": ("Björn Larsson", False),
    "chen": ("Chen Wei", False),
    "francois": ("François Dupré", True),
    "ngozi": ("Ngozi Okafor", False),
    "siobhan": ("Siobhán Kelly", False),
    "martins": ("Mārtiņš Ozols", True),
    "zoe": ("Zoë Ångström", False),
}
ADDRESSED = [key for key, (_name, address) in PARTICIPANTS.items() if address]
SILENT = [key for key, (_name, address) in PARTICIPANTS.items() if not address]
SEATS = ["alice", "bob", *PARTICIPANTS]


def bm_season(seed: int = 4) -> dict:
    """A season file's content: alice (the EC), bob (the DMO), ten participants of whom
    four have an address."""
    participants = [
        {"id": key, "name": name, **({"email": f"{key}@example.test"} if address else {}), "timezone": "UTC"}
        for key, (name, address) in PARTICIPANTS.items()
    ]
    return {
        "season": dict(SEASON["season"]),
        "players": [*SEASON["players"], *participants],  # alice and bob, then the participants
        "matches": [
            {
                "id": "m1",
                "game": "betting-minority",
                "players": SEATS,
                "start": START.isoformat(),
                "seed": seed,
                "reminders": ["2h"],
            }
        ],
    }


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path, db_url, bm_season())
    yield w
    w.store.dispose()


def match_row(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


def participant_client(world: World, key: str) -> ScriptedClient:
    address = f"{key}@example.test"
    return ScriptedClient(address, PARTICIPANTS[key][0], world.config.mail.outbox / address, world.config.mail.inbox)


def with_step(mails: list[Received]) -> list[Received]:
    """The mails that hold a form (its Step line)."""
    return [m for m in mails if STEP_LINE.search(m.text)]


def step_line(mail: Received) -> str:
    return STEP_LINE.search(mail.text).group(0)


def send(world: World, key: str, text: str, at, mail: Received | None = None) -> None:
    """``key`` answers ``mail`` (default: their latest mail with a form), arriving at ``at``."""
    client = world.client(key)
    mail = mail or with_step(client.all())[-1]
    client.reply(mail, f"{text}\n{step_line(mail)}", at)
    world.tick(at)


def inbound(world: World) -> list[Inbound]:
    with world.store.unit_of_work() as session:
        return list(session.scalars(select(Inbound).order_by(Inbound.id)))


# ---------------------------------------------------------------------------- the season and the first tick


def test_a_season_of_twelve_loads_and_the_first_tick_mails_only_who_has_an_address(world):
    with world.store.unit_of_work() as session:
        players = {p.key: p.email for p in session.scalars(select(Player))}
        match = session.scalar(select(Match).where(Match.key == "m1"))
        seats = [seat.player.key for seat in sorted(match.seats, key=lambda s: s.position)]
    assert seats == SEATS
    assert {key for key, email in players.items() if email is None} == set(SILENT)
    world.tick(START)
    rows = outbox_rows(world)
    assert {r.to_addr for r in rows} == {f"{key}@example.test" for key in ("alice", "bob", *ADDRESSED)}
    assert [r.kind for r in rows] == ["step"] * len(rows) and len(rows) == 2 + len(ADDRESSED)
    state = match_row(world).state
    for key in ADDRESSED:
        [mail] = participant_client(world, key).all()
        short = f"P{SEATS.index(key) - 1}"
        assert mail.subject.endswith(f"Your list: you are {short} in this match")
        listed = re.findall(r"^  Round \d: (?:Alice|Bob) \((EC|DMO)\)$", mail.text, re.MULTILINE)
        assert listed == state["lists"][key]
    # the DM players get the starting-marker step: the DMO decides, the EC waits
    bob = world.client("bob").latest()
    assert "MARKER ME\nStep: The starting marker" in bob.text
    assert not STEP_LINE.search(world.client("alice").latest().text)


# ---------------------------------------------------------------------------- placement steps


def test_a_placement_step_closes_on_the_second_send_and_a_reply_to_it_later_is_stale(world):
    world.tick(START)
    send(world, "bob", "MARKER OPPONENT", START + HOUR)
    # bob's receipt holds the first placement step's form; alice got the step's mail
    assert step_line(world.client("bob").latest()) == "Step: Round 1, placement 1"
    first = world.client("alice").latest()
    assert step_line(first) == "Step: Round 1, placement 1"
    assert "Bob (the DMO) gave the starting marker to you." in flat(first.text)
    before = {key: len(world.client(key).all()) for key in ("alice", "bob")}

    send(world, "alice", "SEND P1 TO Uno", START + 2 * HOUR)
    assert match_row(world).step_key == "r1-send-1"  # one send: the step waits for bob
    receipt = world.client("alice").latest()
    assert "Received: SEND P1 TO Uno" in receipt.subject and not STEP_LINE.search(receipt.text)
    assert "A send is final" in receipt.text and "José Núñez" in receipt.text
    assert len(world.client("bob").all()) == before["bob"]  # nothing tells bob of alice's send

    send(world, "bob", "SEND jose nunez TO Dos", START + 3 * HOUR)  # the same participant, another room
    match = match_row(world)
    assert match.step_key == "r1-send-2"  # the second send closed the step at once
    assert match.state["positions"]["jose"] == "Tres"  # sent to two rooms: the third
    alice, bob = world.client("alice").all(), world.client("bob").all()
    assert len(alice) == before["alice"] + 2 and len(bob) == before["bob"] + 1
    # alice: the mail of the new step; bob, whose send closed the step: a receipt with the new form
    assert "Round 1, placement 2" in alice[-1].subject and step_line(alice[-1]) == "Step: Round 1, placement 2"
    assert "Received: SEND P1 TO Dos" in bob[-1].subject
    assert step_line(bob[-1]) == "Step: Round 1, placement 2"
    for mail in (alice[-1], bob[-1]):
        assert "P1 José Núñez goes to Tres (sent to two different rooms: the room neither named)" in flat(mail.text)
    with world.store.unit_of_work() as session:
        kinds = [(r.to_addr, r.kind) for r in session.scalars(select(Outbox).where(Outbox.step_key == "r1-send-2"))]
    assert sorted(kinds) == [("alice@example.test", "step"), ("bob@example.test", "receipt")]

    # alice answers the mail of the first step, which is over: refused, nothing recorded
    send(world, "alice", "SEND P2 TO Uno", START + 4 * HOUR, mail=first)
    error = world.client("alice").latest()
    assert "Not recorded" in error.subject
    assert "Your mail answers our mail about Round 1, placement 1, which is over" in flat(error.text)
    assert "Now it is Round 1, placement 2, and your turn" in flat(error.text)
    match = match_row(world)
    assert match.state["positions"]["annlee"] is None and match.state["send"]["sent"]["alice"] is None
    assert [r.status for r in inbound(world)][-1] == "rejected"
    # the same command on the mail of the open step is recorded
    send(world, "alice", "SEND P2 TO Uno", START + 5 * HOUR)
    assert "Received: SEND P2 TO Uno" in world.client("alice").latest().subject


# ---------------------------------------------------------------------------- a missed turn's extension


def place_everyone(world: World, at) -> object:
    """Round 1's minority phase by mail: each step alice and bob send the first two
    participants not yet placed. Returns the time of the last send."""
    while (match := match_row(world)).state["phase"] == "send":
        free = [p for p in match.state["participants"] if match.state["positions"][p] is None]
        short = {p: f"P{i + 1}" for i, p in enumerate(match.state["participants"])}
        at += HOUR
        send(world, "alice", f"SEND {short[free[0]]} TO Uno", at)
        if len(free) > 1:
            at += HOUR
            send(world, "bob", f"SEND {short[free[1]]} TO Dos", at)
        else:
            world.tick(match.deadline)
            at = match.deadline
    return at


def test_a_reply_to_the_turns_mail_in_its_extension_counts(world):
    world.tick(START)
    send(world, "bob", "MARKER ME", START + HOUR)
    place_everyone(world, START + HOUR)
    match = match_row(world)
    assert match.step_key == "r1-bet-1" and GAME.step(match.state).players == ("bob",)
    turn_mail = with_step(world.client("bob").all())[-1]
    assert step_line(turn_mail) == "Step: Round 1, betting turn 1"
    # the deadline passes: a missed betting turn, and one extension (2/3 of the 24-hour turn)
    deadline = match.deadline
    world.tick(deadline)
    match = match_row(world)
    assert match.step_key == "r1-bet-1-extension" and match.deadline == deadline + timedelta(hours=16)
    extension = world.client("bob").latest()
    assert "Round 1, betting turn 1 (extended)" in extension.subject
    assert "A reply to the mail of the turn still counts." in flat(extension.text)
    assert step_line(extension) == "Step: Round 1, betting turn 1"
    # bob answers the turn's own mail (not the extension's): it counts
    send(world, "bob", "BET Uno 1", deadline + 3 * HOUR, mail=turn_mail)
    assert "Received: BET Uno 1" in world.client("bob").latest().subject
    assert inbound(world)[-1].status == "accepted"
    match = match_row(world)
    assert match.step_key == "r1-bet-2" and match.state["missed"] == {"alice": 0, "bob": 1}
    kinds = [a["kind"] for a in match.state["betting"]["actions"]]
    assert kinds == ["missed", "open"]
    # alice calls; after the payout bob loses 1/5 of his chips for the missed turn
    send(world, "alice", "CALL Dos 1", deadline + 4 * HOUR)
    [entry] = match_row(world).state["history"]
    assert set(entry["missed_loss"]) == {"bob"}
    assert entry["missed_loss"]["bob"] == entry["chips_after_payout"]["bob"] // 5


# ---------------------------------------------------------------------------- a whole match


def play(world: World, seed: int) -> int:
    """The whole match: the scripted DM players of the demo answer their latest form (both
    sending in a placement step, the one to bet in a betting turn); now and then a deadline
    passes instead: a placement step with one send, or a missed betting turn (answered in
    its extension, or missed again). Returns the steps played."""
    rnd = random.Random(seed)
    players = {k: MinorityPlayer(k, world.client(k), random.Random(f"{seed}:{k}")) for k in ("alice", "bob")}
    world.tick(START)
    steps = 0
    while (match := match_row(world)).status == "running":
        steps += 1
        assert steps < 400, "the match does not end"
        step = GAME.step(match.state)
        at = match.step_opened_at + HOUR
        if step.kind == "marker":
            send(world, "bob", players["bob"].marker(), at)
        elif step.kind == "send":
            order = ["alice", "bob"] if rnd.random() < 0.5 else ["bob", "alice"]
            if rnd.random() < 0.1:
                order.pop()  # one of them sends nobody: the step closes at its deadline
            for key in order:
                send(world, key, players[key].send_command(*players[key].choose()), at)
                at += HOUR
            if len(order) == 1:
                world.tick(match.deadline)
        elif rnd.random() < (0.5 if step.kind == "extension" else 0.15):
            world.tick(match.deadline - 2 * HOUR)  # the reminder
            world.tick(match.deadline)
        else:
            key = step.players[0]
            send(world, key, players[key].bet_command(), at)
            assert "Not recorded" not in world.client(key).latest().subject, world.client(key).latest().text
    return steps


def revealed_round(step_key: str | None) -> int:
    """The rounds whose entries a mail written when ``step_key`` was open may show: those
    before its round (the payout of round r opens round r + 1; None: the match is over)."""
    if step_key is None:
        return 9
    found = re.match(r"r(\d+)-", step_key)
    return int(found.group(1)) if found else 1


ENTRY = re.compile(r"P\d+ [^\n,()]+ \((?:Alice|Bob)\)")


def test_a_whole_match_by_mail_keeps_every_entry_hidden_until_its_payout(world):
    play(world, 4)
    match = match_row(world)
    assert match.status == "finished" and match.result["reason"]
    state = match.state
    assert state["phase"] == "over" and len(state["history"]) >= 1
    with world.store.unit_of_work() as session:
        stored = session.get(Match, match.id)
        events = list(session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)))
        assert replay(GAME, stored, events) == stored.state
        rows = list(session.scalars(select(LedgerEntry).where(LedgerEntry.match_id == match.id)))
        outbox = list(session.scalars(select(Outbox).where(Outbox.match_id == match.id).order_by(Outbox.id)))
        statuses = [r.status for r in session.scalars(select(Inbound).where(Inbound.match_id == match.id))]
    # the match's own chips only, conserved; the season's chips untouched
    assert rows and {r.currency for r in rows} == {MATCH_CHIPS}
    assert set(statuses) == {"accepted"}
    assert any(e.kind == "timeout" for e in events)
    # the participants: one mail each for those with an address (their list), none for the others
    to = [r.to_addr for r in outbox]
    for key in ADDRESSED:
        assert to.count(f"{key}@example.test") == 1
    assert not [a for a in to if a.split("@")[0] in SILENT]
    assert {a.split("@")[0] for a in to} == {"alice", "bob", *ADDRESSED}
    # the DM players: no entry of a round before that round's payout
    names = {"EC": "Alice", "DMO": "Bob"}
    short = {p: f"P{i + 1}" for i, p in enumerate(state["participants"])}
    checked = 0
    for row in outbox:
        if row.to_addr not in ("alice@example.test", "bob@example.test"):
            continue
        text = text_of(row)
        assert not re.search(r"\b(?:Alice|Bob) \((?:EC|DMO)\)", text), "a DM player's mail shows a list"
        shown = revealed_round(row.step_key)
        for r in range(1, len(state["history"]) + 1):
            header = f"The entries of round {r}, revealed"
            if r >= shown:
                assert header not in text, f"{row.kind} for {row.step_key} shows round {r}'s entries"
        # every participant-and-entry line is within a payout already made
        outside = re.sub(r"=== Round (\d+): payout ===.*?(?=\n===|\Z)", _earlier(shown), text, flags=re.S)
        assert not ENTRY.search(outside), f"{row.kind} for {row.step_key}: {ENTRY.search(outside).group(0)!r}"
        checked += 1
        # and the entries it does show are those of rounds already paid out
        for r, entry in enumerate(state["history"], 1):
            if f"The entries of round {r}, revealed" in text:
                assert r < shown
                for p, role in entry["entries"].items():
                    assert f"{short[p]} {state['names'][p]} ({names[role]})" in text
    assert checked > 50


def _earlier(shown: int):
    def drop(found: re.Match) -> str:
        assert int(found.group(1)) < shown, f"a payout of round {found.group(1)} in a mail of round {shown}"
        return ""

    return drop


def text_of(row: Outbox) -> str:
    message = email.message_from_bytes(row.message, policy=email.policy.default)
    return message.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")


def test_the_dm_players_mail_is_the_same_whatever_the_lists_until_the_payout(tmp_path):
    """Two matches that differ only in the participants' lists (their seeds) send the DM
    players byte-identical mail, move for move, until the first payout reveals round 1."""
    seeds = (4, 5)
    worlds = [World(tmp_path / str(s), f"sqlite:///{tmp_path / f'{s}.db'}", bm_season(seed=s)) for s in seeds]
    try:
        for w in worlds:
            w.tick(START)
        lists = [match_row(w).state["lists"] for w in worlds]
        assert [entries[0] for entries in lists[0].values()] != [entries[0] for entries in lists[1].values()]
        for w in worlds:
            send(w, "bob", "MARKER OPPONENT", START + HOUR)
            place_everyone(w, START + HOUR)
            at = START + 30 * HOUR
            send(w, "alice", "BET Uno 1 Dos 1", at)
            send(w, "bob", "RAISE 2 on Dos and 1 on Tres", at + HOUR)
        assert mailboxes(worlds[0]) == mailboxes(worlds[1])
        assert match_row(worlds[0]).state["history"] == []
        for w in worlds:
            send(w, "alice", "CALL Uno 3", START + 33 * HOUR)  # the call ends betting: the payout reveals round 1
        assert mailboxes(worlds[0]) != mailboxes(worlds[1])
        assert len(match_row(worlds[0]).state["history"]) == 1
    finally:
        for w in worlds:
            w.store.dispose()


def mailboxes(world: World) -> dict[str, dict[str, bytes]]:
    """Every file in alice's and bob's mailboxes."""
    out = {}
    for key in ("alice", "bob"):
        folder = world.config.mail.outbox / f"{key}@example.test"
        out[key] = {p.name: p.read_bytes() for sub in ("new", "cur") for p in sorted((folder / sub).glob("*"))}
    return out


def test_a_participant_who_writes_in_is_told_they_have_nothing_to_send_in_this_match(world):
    """A participant (a silent seat) who answers their list mail, with a command or with
    anything else, while the starting-marker step is open, gets one plain answer: they have
    nothing to send in this match; never a word of the open step, nor its form. So does a
    reply after the marker step has closed: a silent seat's mail is never judged late or
    stale (it answers no step)."""
    world.tick(START)
    key = ADDRESSED[0]
    client = participant_client(world, key)
    [first] = client.all()
    for i, text in enumerate(("SEND P1 TO Uno", "Hello! Where do I go, and what should I send?")):
        at = START + (i + 1) * HOUR
        client.reply(first, text, at)
        world.tick(at)
        answer = client.latest()
        assert "Not recorded" in answer.subject
        assert "Problem: You have nothing to send in this match: as a participant, you are sent to rooms" in flat(
            answer.text
        )
        assert "Step:" not in answer.text and "starting marker" not in answer.text.lower()
        assert "you have nothing to send in this match, now or later" in flat(answer.text)
    assert match_row(world).state["marker"] is None  # nothing changed
    send(world, "bob", "MARKER OPPONENT", START + 3 * HOUR)  # the marker step closes
    before = match_row(world).state
    client.reply(first, "SEND P1 TO Uno", START + 4 * HOUR)
    world.tick(START + 4 * HOUR)
    answer = client.latest()
    assert "Problem: You have nothing to send in this match" in flat(answer.text)
    assert "Step:" not in answer.text and "turn" not in flat(answer.text).split("Problem:")[1][:120]
    assert match_row(world).state == before
