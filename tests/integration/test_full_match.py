"""A whole Stationary Roulette match by real mail, with the trouble real mail brings.

Two scripted players send their moves by SMTP to the loopback stack and read their mail
by IMAP; the referee reads its mailbox by IMAP (:class:`~referee.mail.imap.ImapSource`) and
sends by SMTP (:class:`~referee.mail.smtp.SmtpSender`), ticking on the running event loop
so that its IMAP connection lives from one tick to the next, as in ``referee run``. In the
middle of rounds: the connection under the source is cut, Dovecot is stopped (a player's
mail waits in Postfix's queue meanwhile, a tick finds the mailbox unreachable) and started
again, and one mail is delivered twice. Nothing is lost and nothing applied twice: the
match ends exactly as the same match played on Maildirs, every event the same, and every
mail of the referee is in its recipient's mailbox once.

Rounds last 24 hours on the demo's clock (:mod:`referee.demo.mail`: the real clock plus
an offset that grows at each skip; arrival times are the server's INTERNALDATE read on it).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from datetime import timedelta
from pathlib import Path

from sqlalchemy import select

from referee.demo.base import PLAYERS
from referee.demo.director import set_up
from referee.games.stationary_roulette.demo import ROUND, ScriptedPlayer
from referee.games import GAMES
from referee.mail.client import ImapClient
from referee.service import replay
from referee.store.models import Event, InboxProblem, Inbound, Match, Outbox

from .conftest import StackControl

GAME = "stationary-roulette"
SEED = 11
DISCONNECT_ROUND = 2  # the connection under the referee's IMAP source is cut after alice's mail
DOVECOT_ROUND = 4  # Dovecot stopped before bob's mail, started again after a tick without it
DUPLICATE_ROUND = 6  # alice's mail reaches the referee twice (the same bytes)
REJECTED_ROUND = 3  # bob's first bet names three colours: an error mail, then a corrected bet


async def play(folder: Path, stack_control: StackControl | None) -> dict:
    """The match, on Maildirs (no stack) or through the stack with its outages; what the
    test compares, read from the database at the end."""
    stack = stack_control.stack if stack_control is not None else None
    folder, start, config, store, post, clients = set_up(folder, SEED, GAME, stack)
    players = {key: ScriptedPlayer(key, clients[key], random.Random(f"{SEED}:{key}")) for key in PLAYERS}
    problems_seen = 0
    try:
        await post.atick(start)
        for round_no in range(11):
            opened = start + round_no * ROUND
            at = opened + timedelta(hours=3)
            post.advance(at)
            players["alice"].send(round_no, at)
            if stack and round_no == DUPLICATE_ROUND:
                clients["alice"].send(clients["alice"].sent[-1][1])  # the same raw mail delivered again
            await post.atick(at)
            if stack and round_no == DISCONNECT_ROUND:
                connection = post.source._imap
                assert connection is not None, "the source keeps its connection between ticks"
                opened_before = post.source.connections_opened
                connection.protocol.transport.close()  # the connection goes, under the source
            at = opened + timedelta(hours=5)
            if round_no == REJECTED_ROUND:
                post.advance(at)
                players["bob"].send(round_no, at, illegal_bet=True)
                await post.atick(at)
                assert "Not recorded" in clients["bob"].latest().subject
                at += timedelta(hours=1)
            if stack and round_no == DOVECOT_ROUND:
                mail = clients["bob"].all()  # bob has read his mail; then the IMAP server goes away
                stack_control.stop_dovecot()
                clients["bob"].all = lambda mail=mail: mail  # his client shows what it has
                post.advance(at)
                players["bob"].send(round_no, at)  # Postfix takes it and keeps it queued
                report = await post.atick(at, wait=False)
                assert report.ingested == 0 and report.accepted == 0, report
                with store.unit_of_work() as session:
                    problems_seen = len(session.scalars(select(InboxProblem)).all())
                stack_control.start_dovecot()
                del clients["bob"].all
                await post.atick(at)  # Postfix delivers it now; the referee connects again and reads it
            else:
                post.advance(at)
                players["bob"].send(round_no, at)
                await post.atick(at)
            if stack and round_no == DISCONNECT_ROUND:
                assert post.source.connections_opened == opened_before + 1
            await post.atick(opened + ROUND)  # the deadline: the round is settled, results mailed
        return _read(store, problems_seen)
    finally:
        await post.referee.close_transports()
        store.dispose()


def _read(store, problems_seen: int) -> dict:
    with store.unit_of_work() as session:
        match = session.scalars(select(Match).where(Match.key == "demo-1")).one()
        events = session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)).all()
        inbound = session.scalars(select(Inbound).order_by(Inbound.id)).all()
        outbox = session.scalars(select(Outbox).order_by(Outbox.id)).all()
        return {
            "status": match.status,
            "state": match.state,
            "result": match.result,
            "replayed": replay(GAMES[GAME], match, events),
            # a move's nonce is keyed by the server secret, which each demo folder draws anew
            "events": [(e.kind, e.step_key, e.player, _without_nonce(e.payload)) for e in events],
            "inbound": [(r.message_id, r.status, r.rule) for r in inbound],
            "outbox": [(r.kind, r.step_key, r.to_addr, r.status, r.message_id) for r in outbox],
            "problems_seen": problems_seen,
            "problems_left": len(session.scalars(select(InboxProblem)).all()),
        }


def _without_nonce(payload: dict) -> dict:
    return {key: value for key, value in payload.items() if key != "nonce"}


async def test_a_whole_match_by_smtp_and_imap_loses_nothing_and_applies_nothing_twice(
    own_mailstack: StackControl, tmp_path
) -> None:
    expected = await play(tmp_path / "maildir", None)
    played = await play(tmp_path / "imap", own_mailstack)

    assert expected["status"] == played["status"] == "finished"
    assert played["state"] == expected["state"] == played["replayed"]
    assert played["result"] == expected["result"]
    assert played["events"] == expected["events"]  # every move applied once, every round closed once

    # the copy was recorded as a duplicate and never judged; every mail was judged as on Maildirs
    copies = [row for row in played["inbound"] if row[2] == "duplicate"]
    assert len(copies) == 1 and copies[0][1] == "ignored"
    assert [row[0] for row in played["inbound"]].count(copies[0][0]) == 2
    judged = [(status, rule) for _, status, rule in played["inbound"] if rule != "duplicate"]
    assert judged == [(status, rule) for _, status, rule in expected["inbound"]]

    # the mailbox was unreachable for one tick: a problem then, none left
    assert played["problems_seen"] == 1 and played["problems_left"] == 0

    # the referee sent the same mails (the results of every round to each player, receipts,
    # the error), each once, and each is in its recipient's mailbox once
    assert [_local(row) for row in played["outbox"]] == [_local(row) for row in expected["outbox"]]
    assert all(row[3] == "sent" for row in played["outbox"])
    assert sum(1 for row in played["outbox"] if row[0] == "step") >= 2 * 11
    found = await asyncio.to_thread(_in_mailboxes, own_mailstack.stack, {row[2] for row in played["outbox"]})
    assert found == Counter(f"<{row[4]}>" for row in played["outbox"])


def _local(row: tuple) -> tuple:
    """An outbox row's kind, step, recipient (its local part: demo.test on Maildirs,
    example.test on the stack) and status."""
    kind, step, to_addr, status, _message_id = row
    return kind, step, to_addr.split("@")[0], status


def _in_mailboxes(stack, addresses: set[str]) -> Counter:
    """The Message-IDs in these mailboxes, with how many times each is there."""
    found: Counter = Counter()
    for address in addresses:
        client = ImapClient(
            address,
            address,
            host=stack.host,
            imap_port=stack.imap_port,
            smtp_port=stack.smtp_port,
            password=stack.password,
        )
        found.update(mail.message_id for mail in client.all())
    return found
