"""Bounces through the whole referee: every outbox mail leaves with its own signed bounce
address; a bounce that comes back to it is recorded for its row and recipient, never
answered, and changes no match; after ``bounce_limit`` hard bounces of one player's address
the organizer is told once, by mail through the outbox (or a warning is logged without an
organizer); the transport's permanent refusals count the same; forged bounce addresses and
auto-replies count for nothing; ``referee status`` shows it all."""

from __future__ import annotations

import email
import email.policy
import itertools
import logging
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from referee.mail.bounces import bounce_address
from referee.mail.maildir import deliver_to_maildir
from referee.status import status_text
from referee.store.models import Bounce, Event, Inbound, Match, Outbox, Player

from .harness import DAY, START, World, outbox_rows
from .test_delivery import Sender

ORGANIZER = "organizer@example.test"
_serial = itertools.count(1)

# alice plays three matches at once: three step mails to her at the start
THREE = {
    "season": {"id": "b", "name": "Bounce season", "starting_chips": 200},
    "players": [
        {"id": key, "name": key.title(), "email": f"{key}@example.test"} for key in ("alice", "bob", "carol", "dave")
    ],
    "matches": [
        {
            "id": f"m{i}",
            "game": "stationary-roulette",
            "players": ["alice", other],
            "start": START.isoformat(),
            "seed": i,
        }
        for i, other in enumerate(("bob", "carol", "dave"), 1)
    ],
}


@pytest.fixture
def world(tmp_path, db_url):
    """On SQLite and PostgreSQL (the organizer's notice is inserted once by each one's own
    INSERT ... ON CONFLICT DO NOTHING)."""
    w = World(tmp_path, db_url, THREE)
    w.config.mail.organizer = ORGANIZER  # the referee's parts share this configuration
    yield w
    w.store.dispose()


def bounce_of(world: World, outbox_id: int) -> str:
    mail = world.config.mail
    return bounce_address(world.config.secret, mail.local, mail.domain, outbox_id)


def dsn(to: str, recipient: str, *, status: str = "5.1.1", action: str = "failed", diagnostic: str = "") -> bytes:
    """A Postfix delivery report for *recipient*, to *to* (unique each time: its own Message-ID)."""
    n = next(_serial)
    diagnostic = diagnostic or f"smtp; 550 {status} <{recipient}>: Recipient address rejected: User unknown"
    return (
        "Return-Path: <>\n"
        f"Delivered-To: {to}\n"
        "From: MAILER-DAEMON@mx.example.net (Mail Delivery System)\n"
        "Subject: Undelivered Mail Returned to Sender\n"
        f"To: {to}\n"
        "Auto-Submitted: auto-replied\n"
        f"Message-Id: <dsn.{n}@mx.example.net>\n"
        "MIME-Version: 1.0\n"
        'Content-Type: multipart/report; report-type=delivery-status; boundary="B"\n\n'
        "--B\nContent-Type: text/plain\n\nYour message could not be delivered.\n\n"
        "--B\nContent-Type: message/delivery-status\n\n"
        f"Reporting-MTA: dns; mx.example.net\nX-Postfix-Queue-ID: Q{n}\n\n"
        f"Final-Recipient: rfc822; {recipient}\nOriginal-Recipient: rfc822;{recipient}\n"
        f"Action: {action}\nStatus: {status}\nDiagnostic-Code: {diagnostic}\n\n"
        "--B--\n"
    ).encode()


def text_of(row: Outbox) -> str:
    message = email.message_from_bytes(row.message, policy=email.policy.default)
    return message.get_body(preferencelist=("plain",)).get_content()


def to_alice(world: World) -> list[Outbox]:
    return outbox_rows(world, to_addr="alice@example.test")


def snapshot(world: World):
    """What a bounce must not change: the matches and their events."""
    with world.store.unit_of_work() as session:
        matches = [(m.key, m.state, m.step_key, m.deadline, m.version) for m in session.scalars(select(Match))]
        return matches, session.scalar(select(func.count()).select_from(Event))


def bounces(world: World) -> list[Bounce]:
    with world.store.unit_of_work() as session:
        return list(session.scalars(select(Bounce).order_by(Bounce.id)))


def inbound(world: World) -> list[Inbound]:
    with world.store.unit_of_work() as session:
        return list(session.scalars(select(Inbound).order_by(Inbound.id)))


def answers(world: World, inbound_id: int) -> list[Outbox]:
    return outbox_rows(world, inbound_id=inbound_id)


def test_every_mail_leaves_with_its_own_bounce_address_and_the_referee_s_from(world):
    world.referee.outbox = sender = Sender()
    world.tick(START)
    rows = {row.dedupe_key: row for row in outbox_rows(world)}
    assert len(sender.sent) == 6
    for mail in sender.sent:
        assert mail.sender == bounce_of(world, rows[mail.key].id)
        assert b"\r\nFrom: Referee <referee@example.test>\r\n" in b"\r\n" + mail.data
    assert len({mail.sender for mail in sender.sent}) == 6


def test_the_maildir_outbox_writes_the_bounce_address_as_return_path(world):
    world.tick(START)
    (row, *_) = to_alice(world)
    mail = world.client("alice").all()[0]
    data = mail.path.read_bytes()
    assert data.startswith(f"Return-Path: <{bounce_of(world, row.id)}>\n".encode()) and b"\r" not in data
    assert mail.message["From"] == "Referee <referee@example.test>"


def test_a_bounce_is_recorded_for_its_row_never_answered_and_changes_no_match(world):
    world.tick(START)
    row = to_alice(world)[0]
    before = snapshot(world)
    deliver_to_maildir(
        world.inbox.path, dsn(bounce_of(world, row.id), "alice@example.test"), START + timedelta(hours=1)
    )
    world.tick(START + timedelta(hours=1))
    (mail,) = inbound(world)
    assert (mail.status, mail.rule) == ("ignored", "bounce")
    assert f"outbox {row.id}" in mail.note and "alice@example.test" in mail.note and "5.1.1" in mail.note
    assert mail.player_id is not None and mail.match_id == row.match_id
    (found,) = bounces(world)
    with world.store.unit_of_work() as session:
        alice = session.scalar(select(Player).where(Player.email == "alice@example.test"))
    assert (found.outbox_id, found.player_id, found.address, found.inbound_id) == (
        row.id,
        alice.id,
        "alice@example.test",
        mail.id,
    )
    assert (found.action, found.status, found.source, found.hard, found.verified) == (
        "failed",
        "5.1.1",
        "dsn",
        True,
        True,
    )
    assert "Recipient address rejected" in found.diagnostic
    assert found.received_at == START + timedelta(hours=1)
    assert answers(world, mail.id) == []  # never answered
    assert snapshot(world) == before
    assert outbox_rows(world, id=row.id)[0].status == "bounced"
    assert outbox_rows(world, kind="unreachable") == []  # one bounce is not enough


def test_the_organizer_is_told_once_after_repeated_hard_bounces(world):
    world.tick(START)
    rows = to_alice(world)
    assert len(rows) == 3
    at = START + timedelta(hours=1)
    for i, row in enumerate(rows):
        raw = dsn(
            bounce_of(world, row.id), "alice@example.test", status="5.2.1", diagnostic=f"smtp; 550 5.2.1 gone {i}"
        )
        deliver_to_maildir(world.inbox.path, raw, at + timedelta(minutes=i))
    before = snapshot(world)
    world.tick(at + timedelta(minutes=5))
    (notice,) = outbox_rows(world, kind="unreachable")
    assert notice.to_addr == ORGANIZER and notice.match_id is None and notice.inbound_id is None
    assert notice.status == "sent"  # through the outbox, in that tick's flush
    text = text_of(notice)
    message = email.message_from_bytes(notice.message, policy=email.policy.default)
    assert message["Subject"] == "Player Alice (alice) is unreachable at alice@example.test"
    assert message["To"] == ORGANIZER and message["From"] == "Referee <referee@example.test>"
    assert message["Auto-Submitted"] == "auto-generated"
    assert all(f"gone {i}" in text for i in range(3)) and "5.2.1" in text
    assert "m1" in text and "m2" in text and "m3" in text  # her running matches
    assert "referee season load" in text  # what the organizer can do
    organizer_mail = (world.outbox.path / ORGANIZER / "new").iterdir()
    assert len(list(organizer_mail)) == 1
    assert snapshot(world) == before
    assert all(answers(world, mail.id) == [] for mail in inbound(world))
    # more bounces: no second notice
    row = to_alice(world)[0]
    deliver_to_maildir(world.inbox.path, dsn(bounce_of(world, row.id), "alice@example.test"), at + timedelta(hours=1))
    world.tick(at + timedelta(hours=1))
    assert len(outbox_rows(world, kind="unreachable")) == 1 and len(bounces(world)) == 4
    status = status_text(world.store, at + timedelta(hours=2), mail=world.config.mail)
    assert "bounces in the last 7 days: 4 (4 hard)" in status
    assert "unreachable: alice at alice@example.test: 3 mails failed for good" in status
    assert "the organizer was told" in status


def test_bounces_outside_the_window_or_below_the_limit_do_not_count(world):
    world.config.mail.bounce_limit = 2
    world.config.mail.bounce_window = timedelta(hours=6)
    world.tick(START)
    first, second, _ = to_alice(world)
    deliver_to_maildir(world.inbox.path, dsn(bounce_of(world, first.id), "alice@example.test"), START)
    world.tick(START + timedelta(minutes=1))
    later = START + timedelta(hours=7)  # the first bounce is out of the window now
    deliver_to_maildir(world.inbox.path, dsn(bounce_of(world, second.id), "alice@example.test"), later)
    world.tick(later)
    assert outbox_rows(world, kind="unreachable") == []
    # the same row bouncing twice is one mail that failed, not two
    deliver_to_maildir(world.inbox.path, dsn(bounce_of(world, second.id), "alice@example.test"), later)
    world.tick(later + timedelta(minutes=1))
    assert outbox_rows(world, kind="unreachable") == [] and len(bounces(world)) == 3


def test_a_delay_is_recorded_but_does_not_count(world):
    world.config.mail.bounce_limit = 1
    world.tick(START)
    row = to_alice(world)[0]
    raw = dsn(bounce_of(world, row.id), "alice@example.test", status="4.4.1", action="delayed")
    deliver_to_maildir(world.inbox.path, raw, START + timedelta(hours=1))
    world.tick(START + timedelta(hours=1))
    (found,) = bounces(world)
    assert (found.action, found.status, found.hard, found.verified) == ("delayed", "4.4.1", False, True)
    assert inbound(world)[0].rule == "bounce"
    assert outbox_rows(world, id=row.id)[0].status == "sent"  # not bounced
    assert outbox_rows(world, kind="unreachable") == []


def test_a_forged_bounce_address_counts_for_nothing_and_is_never_answered(world):
    world.config.mail.bounce_limit = 1
    world.tick(START)
    row = to_alice(world)[0]
    forged = bounce_of(world, row.id).replace(f"bounce-{row.id}-", f"bounce-{row.id + 1}-")
    deliver_to_maildir(world.inbox.path, dsn(forged, "alice@example.test"), START + timedelta(minutes=1))
    # a person's mail to a bounce address (forged or not) is not answered either, from a player too
    plain = (
        f"From: Alice <alice@example.test>\nTo: {forged}\nSubject: hello\nMessage-ID: <hello.1@example.test>\n\nhi\n"
    )
    deliver_to_maildir(world.inbox.path, plain.encode(), START + timedelta(minutes=2))
    genuine = plain.replace(forged, bounce_of(world, row.id)).replace("hello.1", "hello.2")
    deliver_to_maildir(world.inbox.path, genuine.encode(), START + timedelta(minutes=3))
    world.tick(START + timedelta(minutes=5))
    rows = inbound(world)
    assert [(m.status, m.rule) for m in rows] == [
        ("ignored", "delivery-report"),  # automated mail, as the guards say
        ("ignored", "bounce-address"),
        ("ignored", "bounce-address"),
    ]
    assert "forged" in rows[0].note and "no bounce" in rows[2].note
    assert bounces(world) == [] and outbox_rows(world, kind="unreachable") == []
    assert all(answers(world, mail.id) == [] for mail in rows)
    assert outbox_rows(world, id=row.id)[0].status == "sent"


def test_an_auto_reply_to_a_bounce_address_is_no_bounce(world):
    world.config.mail.bounce_limit = 1
    world.tick(START)
    row = to_alice(world)[0]
    ooo = (
        f"Return-Path: <>\nFrom: Alice <alice@example.test>\nTo: {bounce_of(world, row.id)}\n"
        "Subject: Automatic reply: [Stationary Roulette m1] Preparation phase is open\n"
        "Auto-Submitted: auto-replied\nMessage-ID: <ooo.1@example.test>\n\nI am away until Monday.\n"
    )
    deliver_to_maildir(world.inbox.path, ooo.encode(), START + timedelta(minutes=1))
    world.tick(START + timedelta(minutes=1))
    (mail,) = inbound(world)
    assert (mail.status, mail.rule) == ("ignored", "auto-submitted")
    assert bounces(world) == [] and answers(world, mail.id) == []


def test_a_report_to_the_plain_address_is_recorded_unverified_and_counts_for_nothing(world):
    world.config.mail.bounce_limit = 1
    world.tick(START)
    deliver_to_maildir(world.inbox.path, dsn("referee@example.test", "alice@example.test"), START + timedelta(hours=1))
    world.tick(START + timedelta(hours=1))
    (mail,) = inbound(world)
    assert (mail.status, mail.rule) == ("ignored", "bounce") and "unverified" in mail.note
    (found,) = bounces(world)
    assert found.outbox_id is None and found.address == "alice@example.test" and not found.verified
    assert found.player_id is not None  # alice's address
    assert outbox_rows(world, kind="unreachable") == [] and answers(world, mail.id) == []
    # status lists it apart from the bounces that count (issue 23: forged reports filled the list)
    status = status_text(world.store, START + timedelta(hours=2))
    assert "bounces in the last 7 days: 0 (0 hard)" in status
    assert "unverified delivery reports in the last 7 days: 1 (to the plain address" in status


def test_the_transport_s_permanent_refusals_count_as_bounces(world):
    def answer(mail):
        if mail.recipients == ("alice@example.test",):
            return ("permanent", "550 5.1.1 <alice@example.test>: Recipient address rejected: User unknown")
        return ("sent", "250 2.0.0 Ok")

    world.referee.outbox = sender = Sender(answer)
    world.tick(START)
    found = bounces(world)
    assert len(found) == 3
    assert all(
        (b.source, b.action, b.status, b.hard, b.verified, b.inbound_id)
        == ("refused", "failed", "5.1.1", True, True, None)
        for b in found
    )
    assert sorted(b.outbox_id for b in found) == sorted(r.id for r in to_alice(world))
    assert all(r.status == "failed" for r in to_alice(world))
    (notice,) = outbox_rows(world, kind="unreachable")
    assert notice.status == "sent" and [m.recipients for m in sender.sent].count((ORGANIZER,)) == 1
    assert "Recipient address rejected" in text_of(notice)


def test_without_an_organizer_a_warning_is_logged_instead(world, caplog):
    world.config.mail.organizer = None
    world.referee.outbox = Sender(
        lambda mail: ("permanent", "550 5.1.1 no such user") if "alice" in mail.recipients[0] else ("sent", "")
    )
    with caplog.at_level(logging.WARNING, logger="referee.bounces"):
        world.tick(START)
    assert outbox_rows(world, kind="unreachable") == []
    assert any(
        "unreachable at alice@example.test" in r.getMessage() and "organizer" in r.getMessage() for r in caplog.records
    )
    status = status_text(world.store, START + DAY, mail=world.config.mail)
    assert "unreachable: alice at alice@example.test" in status and "the organizer was not told" in status
