"""``referee archive mbox``: a season played by mail (tests/service/harness.py), exported
and read back with the standard library's mailbox reader, on SQLite and PostgreSQL."""

from __future__ import annotations

import copy
import mailbox
import re
import time
from datetime import timedelta
from email import message_from_bytes
from email.utils import getaddresses, parsedate_to_datetime

import pytest
from sqlalchemy import select

from referee.archive.mbox import PUBLIC_RECIPIENTS, export
from referee.archive.rounds import match_rounds
from referee.archive.texts import round_text
from referee.config import parse_season
from referee.games import GAMES
from referee.seasons import load_season
from referee.store.models import Event, Match, Outbox
from tests.service.harness import DAY, SEASON, START, World, outbox_rows
from tests.composed import referee_mail

REFEREE = "referee@example.test"
# a player's name that starts a line of the mails ("From Mars prepared a roulette ..."),
# so that the mbox must quote it
BOB = "From Mars"
# the roulettes prepared in round 2 (for round 3, still being bet on) and alice's submissions
# of round 3 (still open) are secret: their points must not appear in the public export
SECRET_ROULETTE = "ROULETTE\nWinning colour: Silver\nGold: 27\nSilver: 13\nBlack: 0"
SECRET_BET = "BET\nGold: 17\nBlack: 23"
ROULETTE = "ROULETTE\nWinning colour: {w}\nGold: 30\nSilver: 10\nBlack: 0"
BET = "BET\nGold: 20\nSilver: 20"


def other_season() -> dict:
    """A second season, whose match nobody answers: it runs on its deadlines alone."""
    return {
        "season": {"id": "other", "name": "Other season", "starting_chips": 100},
        "players": copy.deepcopy(SEASON["players"]),
        "matches": [
            {
                "id": "x1",
                "game": "stationary-roulette",
                "players": ["alice", "bob"],
                "start": (START + timedelta(hours=12)).isoformat(),
                "seed": 5,
            }
        ],
    }


def answer(world: World, key: str, text: str, at) -> None:
    """``key`` answers the latest mail of match m1 (the other season's mail is left alone)."""
    client = world.client(key)
    latest = [mail for mail in client.all() if " m1]" in mail.subject][-1]
    client.reply(latest, text, at)
    world.tick(at)


@pytest.fixture
def world(tmp_path, db_url):
    """Three rounds of m1 played by mail (alice and bob prepare and bet), round 3 open with
    alice's submissions in; x1 (another season) closed three rounds on its deadlines; and
    an organizer's notice that belongs to no match."""
    season = copy.deepcopy(SEASON)
    season["players"][1]["name"] = BOB
    w = World(tmp_path / "world", db_url, season)
    load_season(w.store, parse_season(other_season(), "other season"), START - DAY)
    w.tick(START)
    colours = ["Gold", "Black", None]
    for r, colour in enumerate(colours):
        opened = START + r * DAY
        roulette = SECRET_ROULETTE if colour is None else ROULETTE.format(w=colour)
        for i, key in enumerate(("alice", "bob")):
            answer(w, key, roulette if r == 0 else f"{roulette}\n\n{BET}", opened + timedelta(hours=1 + i))
        w.tick(opened + DAY)
    answer(w, "alice", f"{ROULETTE.format(w='Gold')}\n\n{SECRET_BET}", START + 3 * DAY + timedelta(hours=1))
    w.tick(START + 3 * DAY + timedelta(hours=3))
    add_organizer_notice(w)
    yield w
    w.store.dispose()


def add_organizer_notice(world: World) -> None:
    """A sent notice with no match (as ``unreachable`` notices are), a pending mail and a
    failed one (never sent: not in any export), and a sent mail that bounced later."""
    at = START + 3 * DAY + timedelta(hours=4)
    with world.store.unit_of_work() as session:
        for n, status, sent_at in ((1, "sent", at), (2, "pending", None), (3, "failed", None)):
            raw = referee_mail(
                "bob@example.test bounced three times.\n",
                to_addr="organizer@example.test",
                to_name="",
                subject="Player bob is unreachable",
                message_id=f"notice-{n}@example.test",
                date=at,
            )
            session.add(
                Outbox(
                    dedupe_key=f"notice:{n}",
                    message_id=f"notice-{n}@example.test",
                    kind="notice",
                    to_addr="organizer@example.test",
                    message=raw,
                    status=status,
                    next_attempt_at=at,
                    created_at=at,
                    sent_at=sent_at,
                )
            )
        first_step = session.scalars(select(Outbox).where(Outbox.kind == "step").order_by(Outbox.id)).first()
        first_step.status = "bounced"


def sent_rows(world: World, match_keys: set[str | None]) -> list[Outbox]:
    """The outbox rows sent for these matches (None: mail of no match), as the export orders them."""
    with world.store.unit_of_work() as session:
        ids = {m.id: m.key for m in session.scalars(select(Match))}
    rows = [r for r in outbox_rows(world) if r.sent_at is not None and ids.get(r.match_id) in match_keys]
    return sorted(rows, key=lambda r: (r.sent_at, r.id))


def as_in_mbox(raw: bytes) -> bytes:
    """A stored message as an mbox holds it: LF line ends, body lines "From " quoted."""
    return raw.replace(b"\r\n", b"\n").replace(b"\nFrom ", b"\n>From ")


def read(path) -> list[tuple[str, bytes, mailbox.mboxMessage]]:
    box = mailbox.mbox(path, create=False)
    try:
        return [(box.get_message(key).get_from(), box.get_bytes(key), box.get_message(key)) for key in box.keys()]
    finally:
        box.close()


def test_the_full_export_is_every_mail_sent_as_it_was_sent_in_time_order(world, tmp_path):
    rows = sent_rows(world, {"m1", "x1", None})
    assert {r.status for r in rows} == {"sent", "bounced"} and any(r.match_id is None for r in rows)
    count = export(world.store, tmp_path / "all.mbox")
    messages = read(tmp_path / "all.mbox")
    assert count == len(messages) == len(rows) == len([r for r in outbox_rows(world) if r.sent_at]) > 20
    for row, (from_line, raw, message) in zip(rows, messages, strict=True):
        assert raw == as_in_mbox(row.message)
        assert message["Message-ID"] == f"<{row.message_id}>"
        assert from_line == f"{REFEREE} {time.asctime(row.sent_at.timetuple())}"
    subjects = [m["Subject"] for _, _, m in messages]
    assert subjects == [message_from_bytes(r.message)["Subject"] for r in rows]
    assert "Player bob is unreachable" in subjects


def test_a_match_or_a_season_exports_its_own_mail(world, tmp_path):
    for options, matches in (
        ({"match_key": "m1"}, {"m1"}),
        ({"season_key": "test"}, {"m1"}),
        ({"season_key": "other"}, {"x1"}),
        ({"match_key": "x1", "season_key": "other"}, {"x1"}),
        ({"match_key": "x1", "season_key": "test"}, set()),
    ):
        path = tmp_path / "part.mbox"
        rows = sent_rows(world, matches)
        assert export(world.store, path, **options) == len(rows), options
        assert [raw for _, raw, _ in read(path)] == [as_in_mbox(r.message) for r in rows]
        if matches:
            assert all(f" {next(iter(matches))}]" in m["Subject"] for _, _, m in read(path))
    with pytest.raises(LookupError):
        export(world.store, tmp_path / "none.mbox", match_key="m9")
    with pytest.raises(LookupError):
        export(world.store, tmp_path / "none.mbox", season_key="autumn")
    assert not (tmp_path / "none.mbox").exists()


def test_body_lines_starting_with_from_are_quoted(world, tmp_path):
    export(world.store, tmp_path / "m1.mbox", match_key="m1")
    data = (tmp_path / "m1.mbox").read_bytes()
    assert b"\n>From Mars prepared a roulette" in data  # a line of the round mails
    assert not any(line.startswith(b"From Mars") for line in data.splitlines())
    # every "From " line left is an envelope line, so the reader finds every message
    envelopes = [line for line in data.splitlines() if line.startswith(b"From ")]
    assert len(envelopes) == len(sent_rows(world, {"m1"})) == len(read(tmp_path / "m1.mbox"))
    assert all(line.startswith(f"From {REFEREE} ".encode()) for line in envelopes)


def test_an_export_replaces_the_file(world, tmp_path):
    path = tmp_path / "again.mbox"
    path.write_bytes(b"From someone Tue Dec  1 00:00:00 2026\nSubject: old\n\nold\n")
    first = export(world.store, path, match_key="m1")
    assert export(world.store, path, match_key="m1") == first == len(read(path))
    assert path.read_bytes().count(b"\nSubject: old") == 0


def public_rounds(world: World, key: str):
    with world.store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == key))
        events = list(session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)))
        game = GAMES[match.game]
        context = {
            "match": {"id": match.key, "title": game.title, "game": game.name, "season": match.season.name},
            "players": [{"id": s.player.key, "name": s.player.name} for s in match.seats],
            "view": game.view(match.state, None),
        }
        return [(r, *round_text(game.name, context, r)) for r in match_rounds(game, match, events)]


def test_public_round_mails_tell_the_closed_rounds_threaded_per_match(world, tmp_path):
    path = tmp_path / "public.mbox"
    count = export(world.store, path, public_only=True, from_addr=REFEREE, from_name="The Referee")
    rounds = {key: public_rounds(world, key) for key in ("m1", "x1")}
    assert [r.number for r, _, _ in rounds["m1"]] == [1, 2, 3]  # round 3 is still open
    assert len(rounds["x1"]) == 2  # its deadlines at START + 36 h and 60 h
    messages = [m for _, _, m in read(path)]
    assert count == len(messages) == 5
    expected = sorted(
        ((r.closed_at, key, r.number, title, text) for key, told in rounds.items() for r, title, text in told),
        key=lambda item: item[:3],
    )
    roots = {}
    for (closed_at, key, number, title, text), message in zip(expected, messages, strict=True):
        assert message["Subject"] == title
        assert message.get_payload(decode=True).decode() == re.sub("(?m)^From ", ">From ", text) + "\n"
        assert parsedate_to_datetime(message["Date"]) == closed_at
        assert message.get_from() == f"{REFEREE} {time.asctime(closed_at.timetuple())}"
        assert message["From"] == f"The Referee <{REFEREE}>" and message["To"] == PUBLIC_RECIPIENTS
        if number == 1:
            roots[key] = message["Message-ID"]
            assert message["In-Reply-To"] is None
        else:
            assert message["In-Reply-To"] == message["References"] == roots[key]
    assert roots["m1"] != roots["x1"]
    # stable: a second export gives the same Message-IDs (and the same bytes)
    again = tmp_path / "again.mbox"
    export(world.store, again, public_only=True, from_addr=REFEREE, from_name="The Referee")
    assert again.read_bytes() == path.read_bytes()
    # a match or a season alone
    assert export(world.store, again, public_only=True, from_addr=REFEREE, match_key="m1") == 3
    assert export(world.store, again, public_only=True, from_addr=REFEREE, season_key="other") == 2


def test_public_round_mails_hold_no_private_fact(world, tmp_path):
    export(world.store, tmp_path / "public.mbox", public_only=True, from_addr=REFEREE)
    export(world.store, tmp_path / "private.mbox", match_key="m1")
    public = b"\n".join(raw for _, raw, _ in read(tmp_path / "public.mbox"))
    private = b"\n".join(raw for _, raw, _ in read(tmp_path / "private.mbox"))
    # what the players were told privately: their addresses, their reply tokens, the
    # points of the roulettes in play and alice's bet of the open round
    for secret in (b"alice@example.test", b"bob@example.test", b"referee+", b"Gold: 27", b"Gold: 17", b"Black: 23"):
        assert secret in private, secret
        assert secret not in public, secret
    decoded = "\n".join(m.get_payload(decode=True).decode() for _, _, m in read(tmp_path / "public.mbox"))
    for secret in ("Gold 27", "Silver 13", "Gold 17", "Black 23", "@"):
        assert secret not in decoded, secret
    headers = [m[h] for _, _, m in read(tmp_path / "public.mbox") for h in ("From", "To", "Reply-To", "Cc") if m[h]]
    assert {addr for _, addr in getaddresses(headers)} == {REFEREE, ""}  # "" is the empty group
    assert "Winning colour, revealed now: Black." in decoded  # round 2's roulettes, closed, are told


def test_nothing_to_export(tmp_path, db_url):
    world = World(tmp_path / "world", db_url)  # m1 scheduled, not started: no mail, no round
    try:
        for options in ({}, {"season_key": "test"}, {"match_key": "m1"}):
            path = tmp_path / "empty.mbox"
            assert export(world.store, path, **options) == 0
            assert path.exists() and read(path) == []
            assert export(world.store, path, public_only=True, from_addr=REFEREE, **options) == 0
            assert read(path) == []
        with pytest.raises(ValueError):
            export(world.store, tmp_path / "x.mbox", public_only=True)
    finally:
        world.store.dispose()
