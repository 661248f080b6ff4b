"""issue 23: delivery after a fault, by its cause (referee.pipeline.deliver).

Mail waiting for the disk or the server goes out as soon as it works again (the first
success after their failure makes every mail waiting for that cause due at once; while it is
down and nothing is due, its oldest mail is tried once a minute to find out); a recipient's
own refusal keeps its own backoff; a step mail is never put off past its step's deadline,
and `referee status` says so when it is still undelivered then; the failures are folded in
the log, one line per cause, not a line per mail per cycle. The clock is driven: a tick at
an instant is a cycle then."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from referee.mail.transport import OutboundMail, SendResult
from referee.pipeline.deliver import PROBE_EVERY, RETRY_DELAYS, SOONEST_RETRY
from referee.status import status_text

from .harness import START, World, outbox_rows

MINUTE = timedelta(minutes=1)


class Sender:
    """A transport that answers ``answer(mail)`` (a SendResult), and keeps every attempt
    (the instant, the recipient) and every mail it took."""

    concurrency = 1

    def __init__(self, answer: Callable[[OutboundMail], SendResult]):
        self.answer = answer
        self.now: datetime | None = None  # the cycle's instant, for the record (set by the test)
        self.attempts: list[tuple[datetime | None, str]] = []
        self.taken: list[OutboundMail] = []

    async def send(self, mail: OutboundMail) -> SendResult:
        self.attempts.append((self.now, mail.recipients[0]))
        result = self.answer(mail)
        if result.outcome == "sent":
            self.taken.append(mail)
        return result

    async def sync(self) -> None:
        pass

    async def close(self) -> None:
        pass


def sent(mail: OutboundMail) -> SendResult:
    return SendResult.every(mail, "sent", "250 2.0.0 queued")


def disk_full(mail: OutboundMail) -> SendResult:
    return SendResult.every(mail, "temporary", "OSError: [Errno 28] No space left on device", "disk")


def server_away(mail: OutboundMail) -> SendResult:
    return SendResult.every(mail, "temporary", "cannot connect to smtp.example.test:587: Connection refused", "server")


def greylisted(mail: OutboundMail) -> SendResult:
    address = mail.recipients[0]
    return SendResult({address: ("temporary", "450 4.2.0 greylisted, try again later")}, "recipient")


def season(starts: list[timedelta], round_length: str = "24h") -> dict:
    """One roulette match per start (offset from START), two players each, no reminders."""
    n = len(starts)
    return {
        "season": {"id": "s", "name": "S", "starting_chips": 200},
        "players": [{"id": f"p{i}", "name": f"P{i}", "email": f"p{i}@example.test"} for i in range(2 * n)],
        "matches": [
            {
                "id": f"m{i}",
                "game": "stationary-roulette",
                "players": [f"p{2 * i}", f"p{2 * i + 1}"],
                "start": (START + start).isoformat(),
                "seed": i,
                "steps": {"round": round_length},
                "reminders": [],
            }
            for i, start in enumerate(starts)
        ],
    }


@pytest.fixture
def make_world(tmp_path, sqlite_store):
    made: list[World] = []

    def make(spec: dict, answer: Callable[[OutboundMail], SendResult]) -> tuple[World, Sender]:
        world = World(tmp_path / f"w{len(made)}", sqlite_store.url, spec)
        made.append(world)
        world.referee.outbox = sender = Sender(answer)
        return world, sender

    yield make
    for world in made:
        world.store.dispose()


def tick(world: World, sender: Sender, at: datetime) -> None:
    sender.now = at
    world.tick(at)


def test_mail_waiting_for_the_disk_goes_out_with_the_first_success_whatever_its_retry_time(make_world):
    # three matches start ten minutes apart while the outbox disk is full: their step mails
    # fail at different times, each on its own backoff
    world, sender = make_world(season([timedelta(0), 10 * MINUTE, 20 * MINUTE]), disk_full)
    for minute in range(0, 45):
        tick(world, sender, START + minute * MINUTE)
    rows = outbox_rows(world)
    assert len(rows) == 6 and all(r.status == "pending" and r.fail_cause == "disk" for r in rows)
    after = START + 45 * MINUTE
    assert any(r.next_attempt_at > after + timedelta(minutes=10) for r in rows), [r.next_attempt_at for r in rows]
    counted = {r.id: r.attempts for r in rows}
    sender.answer = sent  # the space is back
    tick(world, sender, after)
    rows = outbox_rows(world)
    assert all(r.status == "sent" and r.sent_at == after for r in rows)
    assert all(r.last_error is None and r.fail_cause is None for r in rows)
    assert len(sender.taken) == 6
    # the attempts made because the disk worked again are not counted against the mails
    assert all(r.attempts == counted[r.id] + 1 for r in rows)


def test_while_the_server_is_away_one_mail_is_tried_a_minute_then_all_go(make_world):
    world, sender = make_world(season([timedelta(0), timedelta(0)]), server_away)
    tick(world, sender, START)  # attempt 1 of each: retry in a minute
    tick(world, sender, START + timedelta(seconds=RETRY_DELAYS[0]))  # attempt 2: retry in 5 minutes
    failed_at = START + timedelta(seconds=RETRY_DELAYS[0])
    assert len(sender.attempts) == 8
    rows = outbox_rows(world)
    assert all(r.attempts == 2 and r.next_attempt_at == failed_at + timedelta(seconds=RETRY_DELAYS[1]) for r in rows)
    tick(world, sender, failed_at + PROBE_EVERY / 2)  # nothing due, and no probe yet
    assert len(sender.attempts) == 8
    tick(world, sender, failed_at + PROBE_EVERY)  # the oldest waiting mail is tried: still away
    assert len(sender.attempts) == 9
    rows = outbox_rows(world)
    assert all(r.attempts == 2 for r in rows)  # a probe is not counted,
    assert all(r.next_attempt_at == failed_at + timedelta(seconds=RETRY_DELAYS[1]) for r in rows)  # nor moves it
    tick(world, sender, failed_at + PROBE_EVERY + timedelta(seconds=30))  # a probe a minute, no more
    assert len(sender.attempts) == 9
    sender.answer = sent  # the server is back
    back = failed_at + 2 * PROBE_EVERY
    tick(world, sender, back)  # the probe gets through, and every mail waiting for the server goes
    assert all(r.status == "sent" and r.sent_at == back for r in outbox_rows(world))
    assert len(sender.taken) == 4 and len(sender.attempts) == 9 + 4


def test_a_recipients_refusal_keeps_its_own_backoff(make_world):
    def answer(mail: OutboundMail) -> SendResult:
        return greylisted(mail) if mail.recipients[0] == "p0@example.test" else server_away(mail)

    world, sender = make_world(season([timedelta(0), timedelta(0)]), answer)
    for minute in (0, 1, 6):
        tick(world, sender, START + minute * MINUTE)
    greylisted_row = outbox_rows(world, to_addr="p0@example.test")[0]
    assert greylisted_row.fail_cause == "recipient" and greylisted_row.attempts == 3
    own_retry = greylisted_row.next_attempt_at
    assert own_retry == START + 6 * MINUTE + timedelta(seconds=RETRY_DELAYS[2])

    def back(mail: OutboundMail) -> SendResult:
        return greylisted(mail) if mail.recipients[0] == "p0@example.test" else sent(mail)

    sender.answer = back
    tick(world, sender, START + 8 * MINUTE)
    rows = {r.to_addr: r for r in outbox_rows(world)}
    assert all(rows[f"p{i}@example.test"].status == "sent" for i in (1, 2, 3))
    still = rows["p0@example.test"]
    assert still.status == "pending" and still.attempts == 3 and still.next_attempt_at == own_retry
    assert "p0@example.test" not in {to for at, to in sender.attempts if at == START + 8 * MINUTE}


def test_a_success_in_the_same_cycle_as_the_failure_does_not_retry_it_at_every_success(make_world):
    """A server that takes some mails and refuses others in one cycle is not down: mail it
    refused waits for its own retry time, not for the next success (which would retry it at
    every cycle that sends something)."""

    def answer(mail: OutboundMail) -> SendResult:
        return server_away(mail) if mail.recipients[0] == "p1@example.test" else sent(mail)

    world, sender = make_world(season([timedelta(0), timedelta(seconds=30)]), answer)
    tick(world, sender, START)  # p0 sent, p1 refused: the same cycle
    tick(world, sender, START + timedelta(seconds=30))  # m1 starts: p2, p3 sent
    assert [to for at, to in sender.attempts].count("p1@example.test") == 1
    waiting = outbox_rows(world, to_addr="p1@example.test")[0]
    assert waiting.status == "pending" and waiting.next_attempt_at == START + timedelta(seconds=RETRY_DELAYS[0])


def test_a_step_mail_is_tried_before_its_deadline_and_status_says_when_it_missed_it(make_world):
    """A recipient that refuses for an hour: the step mail's retries are brought before the
    round's deadline (plain backoff would try it at 0, 1, 6, 21 and 81 minutes), it is not
    given up before the deadline, and once the deadline has passed `referee status` lists it."""

    def answer(mail: OutboundMail) -> SendResult:
        return greylisted(mail) if mail.recipients[0] == "p0@example.test" else sent(mail)

    world, sender = make_world(season([timedelta(0)], round_length="1h"), answer)
    deadline = START + timedelta(hours=1)
    at = START
    while at < deadline + 2 * SOONEST_RETRY:  # a scheduler's cycle at every retry time
        tick(world, sender, at)
        row = outbox_rows(world, to_addr="p0@example.test", step_key="round-0")[0]
        if row.status != "pending":
            break
        assert row.deadline == deadline
        if at < deadline - 2 * SOONEST_RETRY:
            assert row.next_attempt_at < deadline, (at, row.next_attempt_at)
        at = row.next_attempt_at
    tries = [when for when, to in sender.attempts if to == "p0@example.test" and when is not None and when < deadline]
    assert len(tries) >= 8 and max(tries) >= deadline - 2 * SOONEST_RETRY, tries
    row = outbox_rows(world, to_addr="p0@example.test", step_key="round-0")[0]
    assert row.attempts >= world.config.outbox_max_attempts  # more than the budget: kept until the deadline
    text = status_text(world.store, deadline + timedelta(minutes=5))
    how = "given up" if row.status == "failed" else "still tried"
    assert (
        f"step mail to p0@example.test for m0/round-0 (Preparation phase) not delivered ({how});"
        f" its deadline passed at {deadline:%Y-%m-%d %H:%M} UTC"
    ) in text, text
    assert "p1@example.test for m0" not in text  # delivered: not listed
    before = status_text(world.store, deadline - MINUTE)
    assert "step mail to p0@example.test for m0" not in before  # not before its deadline


def test_a_fault_of_every_cycle_is_a_line_a_minute_per_cause_not_a_line_per_mail(make_world, caplog):
    world, sender = make_world(season([timedelta(0)] * 3), disk_full)
    caplog.set_level(logging.INFO, logger="referee")
    cycles = 0
    for second in range(0, 5 * 60, 10):  # a cycle every 10 s for 5 minutes: 6 mails, 30 cycles
        tick(world, sender, START + timedelta(seconds=second))
        cycles += 1
    assert len(sender.attempts) == 15  # 6 mails twice (retries in a minute), and a probe a minute since
    sender.answer = sent
    tick(world, sender, START + timedelta(minutes=5, seconds=30))
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.getMessage().startswith("outbox")]
    warnings = [text for level, text in lines if level == "WARNING"]
    assert warnings[0].startswith(
        "outbox: 6 mail(s) not delivered, the outbox disk cannot be written:"
        " p0@example.test: OSError: [Errno 28] No space left on device; 6 waiting (sent as soon as it works again)"
    ), warnings
    assert all("still not delivered, the outbox disk" in text for text in warnings[1:])
    assert len(warnings) == 5, warnings  # once, then a line a minute: not a line per failed attempt
    infos = [text for level, text in lines if level == "INFO"]
    assert len(infos) == 1 and infos[0].startswith("outbox: the outbox disk works again after 15 failed attempts")
    assert "6 mail(s) sent now" in infos[0], infos
    assert all(r.status == "sent" for r in outbox_rows(world))


# --------------------------------------------------------------------------- the transports' causes


def test_the_maildir_transport_names_a_full_or_read_only_disk_and_nothing_else(tmp_path):
    import asyncio
    import errno

    from referee.mail.maildir import MaildirSender

    class Outbox:
        def __init__(self, error: OSError) -> None:
            self.error = error

        def deliver(self, *args, **kwargs):
            raise self.error

    mail = OutboundMail("k", "referee@example.test", ("a@example.test",), b"Subject: x\r\n\r\nx\r\n")
    for code, cause in ((errno.ENOSPC, "disk"), (errno.EDQUOT, "disk"), (errno.EROFS, "disk"), (errno.EACCES, "")):
        result = asyncio.run(MaildirSender(Outbox(OSError(code, "failed"))).send(mail))
        assert (result.outcome, result.cause) == ("temporary", cause), code


async def test_the_smtp_transport_tells_the_server_from_one_recipient():
    from referee.config import SmtpSettings
    from referee.mail.smtp import SmtpSender

    from ..mail.test_starttls import fake_server

    def server(rcpt: bytes, mail_from: bytes = b"250 ok\r\n"):
        def answer(text: str) -> tuple[bytes, bool]:
            verb = text.split(" ")[0].upper()
            if verb == "EHLO":
                return b"250-fake\r\n250 8BITMIME\r\n", False
            if verb == "MAIL":
                return mail_from, False
            if verb == "RCPT":
                return rcpt, False
            if verb == "QUIT":
                return b"221 bye\r\n", True
            return b"250 ok\r\n", False

        return fake_server(b"220 fake ESMTP\r\n", answer)

    mail = OutboundMail("k", "referee@example.test", ("a@example.test",), b"Subject: x\r\n\r\nx\r\n")

    async def send(port: int) -> SendResult:
        sender = SmtpSender(SmtpSettings(host="127.0.0.1", port=port, security="none", timeout=10))
        try:
            return await sender.send(mail)
        finally:
            await sender.close()

    async with server(b"450 4.2.0 greylisted\r\n") as (port, _):
        result = await send(port)
        assert (result.outcome, result.cause) == ("temporary", "recipient"), result
    async with server(b"250 ok\r\n", mail_from=b"451 4.3.0 local problem, try later\r\n") as (port, _):
        result = await send(port)
        assert (result.outcome, result.cause) == ("temporary", "server"), result
    async with server(b"421 4.3.2 shutting down\r\n") as (port, _):
        result = await send(port)
        assert (result.outcome, result.cause) == ("temporary", "server"), result
    closed = port  # nothing listens there now
    result = await send(closed)
    assert (result.outcome, result.cause) == ("temporary", "server") and "cannot connect" in result.detail, result


def test_migration_0014_keeps_waiting_mail_and_delivery_goes_on(tmp_path, db_url):
    """0014 down and up again on data, on both databases: mail waiting for a retry keeps its
    row and retry time; the new columns start empty; the next cycle delivers it."""
    from alembic import command

    from referee.store.db import Store, alembic_config

    world = World(tmp_path / "w", db_url, season([timedelta(0)]))
    try:
        world.referee.outbox = sender = Sender(disk_full)
        tick(world, sender, START)
        before = [(r.id, r.attempts, r.next_attempt_at, r.last_error) for r in outbox_rows(world)]
        assert len(before) == 2 and all(r.fail_cause == "disk" for r in outbox_rows(world))
        world.store.dispose()
        command.downgrade(alembic_config(db_url), "0013")
        old = Store(db_url)
        assert not old.is_current()
        old.dispose()
        world.store.migrate()
        rows = outbox_rows(world)
        assert [(r.id, r.attempts, r.next_attempt_at, r.last_error) for r in rows] == before
        assert all(r.fail_cause is None and r.failed_at is None and r.claimed_by is None for r in rows)
        sender.answer = sent
        tick(world, sender, START + timedelta(seconds=RETRY_DELAYS[0]))
        assert all(r.status == "sent" for r in outbox_rows(world))
    finally:
        world.store.dispose()
