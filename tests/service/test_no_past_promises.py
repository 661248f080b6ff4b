"""Issue 25, item 4: every receipt and notice speaks of the moment it is written and sent.

A mail that reached the server before a deadline counts (timeliness is judged by arrival),
even when the referee reads it only after that deadline (it was down, the mailbox could not
be read, the mail came just before the deadline). Its receipt must then not say "you may
revise until" a time already past: it says the step has closed, that the mail counted, and
that the results come in the next mail (``templates/mail/common/passed.txt``). A mail whose
delivery is held up past the deadline it names is not sent as it was: a reminder is dropped
(``expired``), any other mail goes with a note that it comes late
(:mod:`referee.pipeline.deliver`). A deadline that is not on a whole minute is shown with its
seconds.

Each test checks, besides its own sentences, the rule for every mail the players got: no
time it promises ("until", "by", "Deadline:", "closes at" ...) had passed when it was
written, and a mail delivered after such a time carries the late note.
"""

from __future__ import annotations

import email
import email.policy
import logging
import re
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from referee.mail.client import ScriptedClient
from referee.mail.bodytext import shown_text
from referee.mail.compose import LATE_NOTE, LATE_SUBJECT
from referee.pipeline.seat_mail import Sent
from referee.mail.maildir import MaildirSender
from referee.mail.transport import OutboundMail, SendResult
from referee.status import status_text
from referee.store.models import Match
from referee.timefmt import exact_time

from .harness import DAY, SEASON, START, World, outbox_rows
from .test_duels_by_mail import duel_season
from .test_matchjack_service import MORE, form_mail, form_of, mj_season

MINUTE = timedelta(minutes=1)
ROULETTE = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0"
NOTE = LATE_NOTE.split("\n", 1)[0]

# A time as the mails show it (referee.timefmt.local_time / exact_time), e.g.
# "Wed 2 Dec 2026, 19:00 CET (18:00 UTC)", "Wed 2 Dec 2026, 18:00:30 UTC".
TIME = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<day>\d{1,2}) (?P<month>[A-Z][a-z]{2}) (?P<year>\d{4}), "
    r"(?P<local>\d{2}:\d{2}(?::\d{2})?) (?P<zone>[A-Za-z][A-Za-z0-9+-]*)(?: \((?P<utc>\d{2}:\d{2}(?::\d{2})?) UTC\))?"
)
# the words that make the time after them a promise (a time still to come)
PROMISE = re.compile(r"(?:until|by|Deadline:|closes at|closes \(|ends|deadline is) $")


def _seconds(clock: str) -> int:
    parts = [int(p) for p in clock.split(":")] + [0]
    return parts[0] * 3600 + parts[1] * 60 + parts[2]


def instant(found: re.Match[str]) -> datetime:
    """The UTC instant a shown time stands for (its local time less the offset the UTC time beside it gives)."""
    local = datetime.strptime(f"{found['day']} {found['month']} {found['year']}", "%d %b %Y")
    local += timedelta(seconds=_seconds(found["local"]))
    if found["utc"] is None:
        assert found["zone"] in ("UTC", "GMT"), found.group(0)
        return local.replace(tzinfo=timezone.utc)
    offset = (_seconds(found["local"]) - _seconds(found["utc"])) % 86400
    if offset > 14 * 3600:
        offset -= 86400
    return (local - timedelta(seconds=offset)).replace(tzinfo=timezone.utc)


def flat(text: str) -> str:
    return " ".join(text.split())


def promises(text: str) -> list[datetime]:
    """Every time ``text`` promises: the times after "until", "by", "Deadline:" ..."""
    text = flat(text)
    return [instant(m) for m in TIME.finditer(text) if PROMISE.search(text[max(0, m.start() - 16) : m.start()])]


def body(message: bytes) -> tuple[str, str]:
    parsed = email.message_from_bytes(message, policy=email.policy.default)
    return str(parsed["Subject"]), parsed.get_body(preferencelist=("plain",)).get_content()


def assert_no_past_promise(world: World) -> None:
    """Every mail sent: no time it promises had passed when it was written; one delivered
    after such a time says it comes late (and a reminder never is)."""
    rows = outbox_rows(world)
    for row in rows:
        if row.status != "sent":
            continue
        subject, text = body(row.message)
        promised = promises(text)
        assert all(at > row.created_at for at in promised), (row.kind, row.created_at, text)
        if any(at <= row.sent_at for at in promised):
            assert row.kind != "reminder", text
            assert NOTE in text and subject.startswith(LATE_SUBJECT), (row.kind, row.sent_at, text)


def match_row(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


def receipts_to(world: World, address: str) -> list[str]:
    return [flat(body(row.message)[1]) for row in outbox_rows(world, kind="receipt", to_addr=address)]


@pytest.fixture
def make_world(tmp_path, db_url):
    made: list[World] = []

    def make(season: dict) -> World:
        world = World(tmp_path / f"w{len(made)}", db_url, season)
        made.append(world)
        return world

    yield make
    for world in made:
        world.store.dispose()


# --------------------------------------------------------------------------- receipts read late


def test_a_roulette_sent_before_the_deadline_and_read_after_it_counts_and_its_receipt_says_the_round_closed(
    make_world,
):
    world = make_world(SEASON)
    world.tick(START)
    deadline = START + DAY
    arrived = deadline - timedelta(seconds=30)
    world.send("alice", ROULETTE, arrived)
    world.send("bob", ROULETTE.replace("Black: 0", "Black: x"), deadline - timedelta(seconds=20))  # a mistake
    world.tick(deadline + 3 * MINUTE)  # the referee reads them after the deadline (it was down)
    state = match_row(world).state
    assert state["round"] == 1 and state["history"][0]["prepared"] == {"alice": True, "bob": False}  # it counted

    [receipt] = receipts_to(world, "alice@example.test")
    assert "Your submission for Preparation phase" in receipt and "is accepted" in receipt
    assert "This is what counts for you this round: Roulette for Bob" in receipt
    assert (
        f"Preparation phase closed at its deadline, {exact_time(deadline, 'Europe/Berlin')}, before we could read"
        f" your mail. Your mail arrived in time, at {exact_time(arrived, 'Europe/Berlin')}, so it counts, as"
        " recorded above. Nothing more can be sent for Preparation phase: our next mail about the match tells"
        " you its results and what you may do then."
    ) in receipt
    assert "Wed 2 Dec 2026, 18:59:30 CET (17:59:30 UTC)" in receipt  # the arrival, to the second
    assert "revise until" not in receipt and "Step:" not in receipt  # no promise, no form
    # bob's mail arrived in time too, but could not be read: he may not send it again
    [error] = [flat(body(r.message)[1]) for r in outbox_rows(world, kind="error")]
    assert (
        f"Preparation phase closed at its deadline, {exact_time(deadline, 'America/New_York')}, before we could"
        " read your mail: nothing more can be sent for it. Our next mail about the match tells you its results"
    ) in error
    assert "is open until" not in error and "Step:" not in error
    # the next mail brings the results, and the next round with a deadline still ahead
    step = flat(world.last_text("alice"))
    assert "Preparation phase of your Stationary Roulette match m1 against Bob has closed" in step
    assert f"Now Round 1 of 10 is open until {exact_time(deadline + DAY, 'Europe/Berlin')}" in step
    assert_no_past_promise(world)


@pytest.mark.parametrize("game", ["indian-poker", "rewind-holdem"])
def test_a_turn_sent_before_its_deadline_and_read_after_it_counts_and_no_receipt_promises_a_past_time(make_world, game):
    """A turn's move arriving a minute before its deadline, read two minutes after: it counts,
    and the next turn runs from the mail's arrival, so the receipt names a deadline still
    ahead. Read after the next turn's deadline too (the referee down longer than a turn), the
    receipt says that turn has closed as well, and the other player's mail about it, written
    at the arrival but delivered after its deadline, says it comes late."""
    world = make_world(duel_season(game, seed=7, dmo="alice"))
    world.tick(START)
    first = match_row(world)
    length = first.deadline - first.step_opened_at
    arrived = first.deadline - MINUTE
    world.send("alice", "CALL", arrived)
    world.tick(first.deadline + 2 * MINUTE)
    now = match_row(world)
    assert now.step_key != first.step_key and now.step_opened_at == arrived  # counted, at its arrival
    [receipt] = receipts_to(world, "alice@example.test")
    assert "accepted" in receipt and exact_time(arrived + length, "Europe/Berlin") in receipt
    assert "closed at its deadline" not in receipt and "too had passed" not in receipt  # the next turn is open

    # the next turn's answer arrives a minute before its deadline, read long after the turn after
    mover = next(iter(_players_of(world)))
    arrived = now.deadline - MINUTE
    world.send(mover, "CALL", arrived)
    world.tick(arrived + length + 5 * MINUTE)
    zone = "Europe/Berlin" if mover == "alice" else "America/New_York"
    receipt = receipts_to(world, f"{mover}@example.test")[-1]
    assert "accepted" in receipt
    after = match_row(world)
    closed_too = [e for e in _events(world) if e.kind == "timeout" and e.at == arrived + length]
    assert closed_too, "the turn after the move closed at its own deadline"
    assert (
        f"with its deadline at {exact_time(arrived + length, zone)}: that time too had passed when we read your"
        " mail, so"
    ) in receipt
    assert "has closed as well. Our next mail about the match tells you what happened in it" in receipt
    assert after.status == "finished" or after.deadline > arrived + length
    other = "bob" if mover == "alice" else "alice"
    late = [r for r in outbox_rows(world, kind="step", to_addr=f"{other}@example.test") if NOTE in r.message.decode()]
    assert late and body(late[-1].message)[0].startswith(LATE_SUBJECT)
    # a reply is read against what the player got: the text kept when the mail was made is
    # dropped with the note, and read from the new bytes (the note's paragraph included)
    assert late[-1].shown is None
    sent = Sent.of(late[-1].shown, late[-1].message, late[-1].form)
    assert sent.shown == shown_text(late[-1].message) and NOTE in sent.shown
    noted = {r.id for r in late}
    assert all(r.shown == shown_text(r.message) for r in outbox_rows(world, kind="step") if r.id not in noted)
    assert_no_past_promise(world)


def _players_of(world: World) -> set[str]:
    """The players who act in the open step."""
    from referee.games import GAMES

    match = match_row(world)
    return set(GAMES[match.game].step(match.state).players)


def _events(world: World) -> list:
    from referee.store.models import Event

    with world.store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == "m1"))
        return list(session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)))


def test_matchjack_a_stay_choice_sent_before_the_deadline_and_read_after_it_counts_at_both_tables(make_world):
    """MatchJack's stay step is one step for both tables at once; then each table runs on its
    own clock. A choice that arrived ten seconds before the stay step's deadline, read five
    seconds after it, counts; its receipt says the step has closed (no "until then you may
    change it"), and the tables' turns that follow have deadlines still ahead."""
    world = make_world(mj_season())
    for key in MORE:
        world.clients[key] = ScriptedClient(
            f"{key}@example.test",
            key.title(),
            world.config.mail.outbox / f"{key}@example.test",
            world.config.mail.inbox,
        )
    world.tick(START)
    stay = match_row(world)
    assert stay.step_key == "h1-stay"
    mail = form_mail(world, "alice")
    arrived = stay.deadline - timedelta(seconds=10)
    world.client("alice").reply(mail, "STAY\n" + form_of(mail).splitlines()[-1], arrived)
    world.tick(stay.deadline + timedelta(seconds=5))
    main = match_row(world).state["tables"]["Main"]
    assert main["stay"]["alice"] == {"choice": "stayed", "timeout": False}  # it counted
    assert main["stay"]["dave"] == {"choice": "folded", "timeout": True}  # who sent nothing: the default
    [receipt] = receipts_to(world, "alice@example.test")
    assert "Your choice for hand 1: STAY. It stays secret until the step closes." in receipt
    assert "until then you may change it" not in receipt
    assert (
        f"Hand 1, stay or fold closed at its deadline, {exact_time(stay.deadline, 'Europe/Berlin')}, before we"
        f" could read your mail. Your mail arrived in time, at {exact_time(arrived, 'Europe/Berlin')}, so it counts"
    ) in receipt
    assert "Step:" not in receipt
    tables = match_row(world).open_steps
    assert len(tables) >= 2 and all(
        datetime.fromisoformat(s["deadline"]) > stay.deadline for s in tables if s["deadline"]
    )
    assert_no_past_promise(world)


# --------------------------------------------------------------------------- delivery held up


class Outage:
    """The Maildir outbox, with a disk that may be full (``down``): every mail then waits."""

    concurrency = 1

    def __init__(self, world: World):
        self.real = MaildirSender(world.outbox)
        self.down = False
        self.taken: list[OutboundMail] = []

    async def send(self, mail: OutboundMail) -> SendResult:
        if self.down:
            return SendResult.every(mail, "temporary", "OSError: [Errno 28] No space left on device", "disk")
        self.taken.append(mail)
        return await self.real.send(mail)

    async def sync(self) -> None:
        await self.real.sync()

    async def close(self) -> None:
        return None


def test_a_reminder_held_up_past_its_deadline_is_not_sent_and_a_held_up_receipt_says_it_comes_late(make_world, caplog):
    world = make_world(SEASON)  # reminders 2 hours before each deadline
    outage = Outage(world)
    world.referee.outbox = outage
    world.tick(START)
    deadline = START + DAY
    outage.down = True  # the outbox disk is full from here
    world.send("alice", ROULETTE, deadline - timedelta(hours=3))
    world.tick(deadline - timedelta(hours=3))  # alice's receipt: "you may revise until <deadline>"
    world.tick(deadline - timedelta(hours=2))  # bob's reminder: "closes at <deadline>, in 2 hours"
    [reminder] = outbox_rows(world, kind="reminder")
    [receipt] = outbox_rows(world, kind="receipt")
    assert reminder.status == receipt.status == "pending" and reminder.deadline == receipt.deadline == deadline
    caplog.set_level(logging.INFO, logger="referee")
    world.tick(deadline + MINUTE)  # the round closes: the step mails of round 1; the disk still full
    outage.down = False  # the disk works again, after the deadline
    world.tick(deadline + 10 * MINUTE)

    [reminder] = outbox_rows(world, kind="reminder")
    assert reminder.status == "expired" and reminder.sent_at is None
    assert reminder.last_error == (
        "not sent: its deadline passed at 2026-12-02 18:00:00 UTC before it could be delivered"
    )
    assert all("Reminder" not in str(mail.data) for mail in outage.taken)
    assert all("Reminder" not in m.subject for m in world.client("bob").all())
    [receipt] = outbox_rows(world, kind="receipt")
    assert receipt.status == "sent"
    subject, text = body(receipt.message)
    assert subject.startswith(f"{LATE_SUBJECT} [Stationary Roulette m1] Received:")
    assert flat(text).startswith(f"Dear Alice, {flat(LATE_NOTE)} Your submission for Preparation phase")
    got = world.client("alice").all()
    assert any(m.subject.startswith(LATE_SUBJECT) and NOTE in m.text for m in got)
    # what was sent is what the row keeps (a retry sends the same bytes; a reply is read against it)
    [sent] = [mail for mail in outage.taken if mail.key == receipt.dedupe_key]
    assert sent.data == receipt.message
    # the step mails of round 1 name a deadline still ahead: sent as written
    assert all(NOTE not in body(r.message)[1] for r in outbox_rows(world, kind="step"))
    assert all(r.status == "sent" for r in outbox_rows(world) if r.kind != "reminder")
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("outbox")]
    assert any(
        line.startswith(f"outbox {reminder.id}: reminder to bob@example.test for round-0 not sent: its deadline")
        for line in said
    ), said
    assert (
        "outbox: 1 reminder(s) not sent, their deadline had passed; 1 mail(s) past the deadline they name,"
        " given a note that they come late"
    ) in said
    assert "mail out: expired 1, sent" in status_text(world.store, deadline + 11 * MINUTE)
    # and again: nothing more is sent, nothing changes
    before = [(r.id, r.status, r.message) for r in outbox_rows(world)]
    world.tick(deadline + 20 * MINUTE)
    assert [(r.id, r.status, r.message) for r in outbox_rows(world)] == before
    assert_no_past_promise(world)


# --------------------------------------------------------------------------- seconds


def test_a_deadline_off_the_whole_minute_is_shown_with_its_seconds_in_text_and_html(make_world):
    """Steps of "90s" (or a turn opened at a mail's arrival) end at any second: the mails
    show the deadline to the second, in each player's zone, in the text and the HTML part;
    a deadline on the whole minute is shown as before."""
    season = {
        **SEASON,
        "matches": [{**SEASON["matches"][0], "steps": {"round": "90s"}, "reminders": ["45s"]}],
    }
    world = make_world(season)
    world.tick(START)
    deadline = START + timedelta(seconds=90)
    assert match_row(world).deadline == deadline
    alice, bob = world.client("alice").latest(), world.client("bob").latest()
    assert promises(alice.text) and set(promises(alice.text)) == {deadline}  # what the checks below read
    assert "Deadline: Tue 1 Dec 2026, 19:01:30 CET (18:01:30 UTC)." in alice.text
    assert "Deadline: Tue 1 Dec 2026, 13:01:30 EST (18:01:30 UTC)." in bob.text
    html = alice.message.get_body(preferencelist=("html",)).get_content()
    assert "19:01:30 CET (18:01:30 UTC)" in html
    world.tick(START + timedelta(seconds=45))
    reminder = world.client("bob").latest()
    assert "Reminder" in reminder.subject and "13:01:30 EST (18:01:30 UTC), in 45 seconds" in flat(reminder.text)
    world.tick(deadline)  # round 1: a deadline 90 s on, at 18:03:00, a whole minute again
    assert "Deadline: Tue 1 Dec 2026, 19:03 CET (18:03 UTC)." in world.last_text("alice")
    assert (
        exact_time(deadline + timedelta(microseconds=999_999), "UTC") == "Tue 1 Dec 2026, 18:01:30 UTC"
    )  # never later
    assert_no_past_promise(world)
