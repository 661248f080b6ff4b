"""The outbox and its transport's answers: sent, temporary (tried again later), permanent
(recorded, never sent again); several mails in flight up to the transport's limit; a mail
is marked sent only once the transport has made it durable."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from referee.mail.transport import OutboundMail, SendResult
from referee.pipeline.deliver import RETRY_DELAYS

from .harness import START, World, outbox_rows


class Sender:
    """A transport that answers as told, per recipient, and counts what it was given."""

    def __init__(self, answer=("sent", ""), concurrency: int = 1, delay: float = 0.0):
        self.answer = answer
        self.concurrency = concurrency
        self.delay = delay
        self.sent: list[OutboundMail] = []
        self.in_flight = self.most_in_flight = 0
        self.synced = 0

    async def send(self, mail: OutboundMail) -> SendResult:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            answer = self.answer(mail) if callable(self.answer) else self.answer
            if isinstance(answer, Exception):
                raise answer
            self.sent.append(mail)
            return SendResult.every(mail, *answer)
        finally:
            self.in_flight -= 1

    async def sync(self) -> None:
        self.synced += 1

    async def close(self) -> None:
        pass


def duels(n: int) -> dict:
    """A season of ``n`` roulette matches between two new players each, all starting at START."""
    return {
        "season": {"id": "s", "name": "S", "starting_chips": 200},
        "players": [{"id": f"p{i}", "name": f"P{i}", "email": f"p{i}@example.test"} for i in range(2 * n)],
        "matches": [
            {
                "id": f"m{i}",
                "game": "stationary-roulette",
                "players": [f"p{2 * i}", f"p{2 * i + 1}"],
                "start": START.isoformat(),
                "seed": i,
            }
            for i in range(n)
        ],
    }


@pytest.fixture
def world(tmp_path, sqlite_store):
    w = World(tmp_path, sqlite_store.url)
    yield w
    w.store.dispose()


def test_a_permanent_refusal_is_recorded_and_never_tried_again(world):
    world.referee.outbox = sender = Sender(("permanent", "550 5.1.1 <alice@example.test>: no such user"))
    world.tick(START)  # the match starts: two step mails
    rows = outbox_rows(world)
    assert len(rows) == 2 and all(r.status == "failed" and r.attempts == 1 for r in rows)
    assert all("550 5.1.1" in r.last_error and "alice@example.test" in r.last_error for r in rows)
    world.referee.flush_outbox(START + timedelta(days=3))
    assert len(sender.sent) == 2  # never again


def test_a_temporary_failure_is_tried_again_after_the_delay_then_sent(world):
    world.referee.outbox = sender = Sender(("temporary", "451 4.3.0 try again later"))
    world.tick(START)
    rows = outbox_rows(world)
    assert all(r.status == "pending" and r.attempts == 1 and "451" in r.last_error for r in rows)
    assert all(r.next_attempt_at == START + timedelta(seconds=RETRY_DELAYS[0]) for r in rows)
    world.referee.flush_outbox(START + timedelta(seconds=RETRY_DELAYS[0] - 1))  # not yet
    assert len(sender.sent) == 2
    sender.answer = ("sent", "250 2.0.0 queued")
    world.referee.flush_outbox(START + timedelta(seconds=RETRY_DELAYS[0]))
    rows = outbox_rows(world)
    assert all(r.status == "sent" and r.attempts == 2 for r in rows) and len(sender.sent) == 4
    assert all(r.last_error is None for r in rows)  # the success clears the earlier error


def test_a_transport_that_raises_loses_nothing(world):
    world.referee.outbox = sender = Sender(lambda mail: RuntimeError("a bug in the transport"))
    world.tick(START)
    rows = outbox_rows(world)
    assert all(r.status == "pending" and "a bug in the transport" in r.last_error for r in rows)
    sender.answer = ("sent", "")
    world.referee.flush_outbox(START + timedelta(hours=1))
    assert all(r.status == "sent" for r in outbox_rows(world))


def test_a_mails_outcome_over_its_recipients():
    """Sent when every recipient has it; temporary while any may still get it; else permanent."""
    mail = OutboundMail("k", "referee@example.test", ("a@example.test", "b@example.test"), b"x")
    both = SendResult({"a@example.test": ("permanent", "550 no"), "b@example.test": ("temporary", "451 later")})
    assert both.outcome == "temporary"
    assert both.detail == "a@example.test: 550 no; b@example.test: 451 later"
    assert SendResult.every(mail, "permanent", "550").outcome == "permanent"
    assert SendResult({"a@example.test": ("sent", "250"), "b@example.test": ("permanent", "550")}).outcome == (
        "permanent"
    )
    assert SendResult({"a@example.test": ("sent", "250")}).outcome == "sent"


def test_mails_go_out_several_at_once_up_to_the_transports_limit(tmp_path, sqlite_store):
    world = World(tmp_path, sqlite_store.url, duels(6))
    try:
        world.referee.outbox = sender = Sender(concurrency=4, delay=0.01)
        world.tick(START)
        assert len(sender.sent) == 12 and sender.most_in_flight == 4
        assert sender.synced >= 1 and all(r.status == "sent" for r in outbox_rows(world))
    finally:
        world.store.dispose()


def test_a_mail_is_marked_sent_only_after_the_transport_made_it_durable(world):
    class Crash(BaseException):
        pass

    class Fragile(Sender):
        async def sync(self) -> None:
            raise Crash

    world.referee.outbox = Fragile()
    with pytest.raises(Crash):
        world.tick(START)
    assert all(r.status == "pending" and r.attempts == 0 for r in outbox_rows(world))
    world.referee.outbox = sender = Sender()
    # the claim ended with its holder (the flush that crashed): the next cycle sends the batch
    world.tick(START + timedelta(seconds=1))
    assert len(sender.sent) == 2 and all(r.status == "sent" for r in outbox_rows(world))


@pytest.mark.parametrize("flushes", [2, 3])
def test_flushes_at_once_send_each_mail_once(tmp_path, db_url, flushes):
    """Two or three outboxes on one database (as several processes would run): each claims
    its own batches; every mail is sent once. On PostgreSQL too (FOR UPDATE SKIP LOCKED)."""
    from referee.pipeline.deliver import Delivery

    world = World(tmp_path, db_url, duels(20))
    try:
        world.referee.outbox = None  # the tick writes the outbox only
        world.tick(START)
        sender = Sender(concurrency=4, delay=0.001)

        async def together() -> list[tuple[int, int]]:
            deliveries = [Delivery(world.store, sender, 10, "referee@example.test") for _ in range(flushes)]
            return await asyncio.gather(*(d.flush(START) for d in deliveries))

        counts = asyncio.run(together())
        assert sum(sent for sent, _ in counts) == 40
        assert sorted(mail.key for mail in sender.sent) == sorted({mail.key for mail in sender.sent})  # each once
        assert len(sender.sent) == 40 and all(r.status == "sent" for r in outbox_rows(world))
    finally:
        world.store.dispose()
