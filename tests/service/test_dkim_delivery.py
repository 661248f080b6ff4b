"""DKIM at delivery: with [dkim] configured every mail leaves signed, whatever the transport,
and verifies against the published key; the outbox row keeps the mail as composed; without
[dkim] the transport gets the stored bytes unchanged."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import dkim
import pytest

from referee.config import load_service_config
from referee.mail.dkim import DkimSigner
from referee.service import Referee
from tests.mail.test_dkim import KEY, dnsfunc_for

from .harness import START, World, outbox_rows
from .test_delivery import Sender

ROULETTE = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0"
LOOKUP = dnsfunc_for(KEY, name=b"s1._domainkey.example.test.")


def dkim_world(tmp_path: Path, db_url: str, season: dict | None = None) -> World:
    """The harness's world, its referee.toml with a [dkim] table (the key beside the file)."""
    world = World(tmp_path, db_url, season)
    shutil.copy(KEY, tmp_path / "dkim.pem")
    with open(tmp_path / "referee.toml", "a") as fh:
        fh.write('\n[dkim]\nselector = "s1"\nprivate_key_file = "dkim.pem"\n')
    world.config = load_service_config(tmp_path / "referee.toml")
    world.referee = Referee(world.store, world.config, inbox=world.inbox, outbox=world.outbox)
    return world


@pytest.fixture
def world(tmp_path, sqlite_store):
    w = dkim_world(tmp_path, sqlite_store.url)
    yield w
    w.store.dispose()


@pytest.fixture
def plain_world(tmp_path, sqlite_store):
    w = World(tmp_path, sqlite_store.url)
    yield w
    w.store.dispose()


def files(world: World, address: str) -> list[bytes]:
    folder = world.config.mail.outbox / address
    return [path.read_bytes() for path in sorted((folder / "new").iterdir()) + sorted((folder / "cur").iterdir())]


def test_every_mail_leaves_signed_and_the_outbox_keeps_it_as_composed(world):
    assert world.config.dkim is not None and world.config.dkim.domain == "example.test"
    world.tick(START)  # the match starts: a step mail to each player
    rows = outbox_rows(world)
    assert len(rows) == 2 and all(r.status == "sent" for r in rows)
    for row in rows:
        [data] = files(world, row.to_addr)
        assert b"DKIM-Signature:" not in row.message  # the stored mail is as composed
        assert b"\r" not in data  # a Maildir file has the local line ends (LF)
        assert data.endswith(row.message.replace(b"\r\n", b"\n"))  # the file: Return-Path, the signature, the mail
        head = data.split(b"\n\n", 1)[0]
        assert b"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.test;" in head
        assert dkim.verify(data, dnsfunc=LOOKUP)


def test_a_receipt_is_signed_and_the_player_reads_it_as_ever(world):
    world.tick(START)
    world.send("alice", ROULETTE, START + timedelta(hours=1))
    world.tick(START + timedelta(hours=1))
    [receipt] = outbox_rows(world, kind="receipt")
    assert receipt.status == "sent"
    assert dkim.verify(files(world, "alice@example.test")[-1], dnsfunc=LOOKUP)
    assert "Dear Alice" in world.last_text("alice")


def test_whatever_the_transport_it_gets_signed_mail_and_a_retry_is_signed_again(world):
    tried: set[str] = set()

    def answer(mail):  # each mail's first attempt fails for now, its second is taken
        first = mail.key not in tried
        tried.add(mail.key)
        return ("temporary", "451 4.3.0 try later") if first else ("sent", "250 ok")

    world.referee.outbox = sender = Sender(answer)
    world.tick(START)
    assert [r.status for r in outbox_rows(world)] == ["pending", "pending"]
    world.referee.flush_outbox(START + timedelta(minutes=2))
    rows = outbox_rows(world)
    assert [r.status for r in rows] == ["sent", "sent"]
    assert len(sender.sent) == 4  # two attempts of each
    for mail in sender.sent:
        assert dkim.verify(mail.data, dnsfunc=LOOKUP)
        [row] = [r for r in rows if r.dedupe_key == mail.key]
        assert mail.data.endswith(row.message) and mail.data != row.message
        assert b"DKIM-Signature:" not in row.message


def test_without_dkim_the_transport_gets_the_stored_bytes_unchanged(plain_world):
    assert plain_world.config.dkim is None and plain_world.referee.dkim is None
    plain_world.referee.outbox = sender = Sender()
    plain_world.tick(START)
    rows = {r.dedupe_key: r for r in outbox_rows(plain_world)}
    assert len(sender.sent) == 2
    for mail in sender.sent:
        assert mail.data == rows[mail.key].message
        assert b"DKIM-Signature" not in mail.data


def test_a_mail_that_cannot_be_signed_is_not_sent_unsigned_but_tried_again(world, monkeypatch):
    world.referee.outbox = sender = Sender()

    def broken(self, message: bytes) -> bytes:
        raise RuntimeError("a bug in signing")

    monkeypatch.setattr(DkimSigner, "sign", broken)
    world.tick(START)
    rows = outbox_rows(world)
    assert sender.sent == []
    assert all(r.status == "pending" and "DKIM signing failed" in r.last_error for r in rows)
    monkeypatch.undo()  # fixed: the next attempt goes out signed
    world.referee.flush_outbox(START + timedelta(minutes=2))
    assert [r.status for r in outbox_rows(world)] == ["sent", "sent"]
    assert all(dkim.verify(mail.data, dnsfunc=LOOKUP) for mail in sender.sent)
