"""Beyond the signed reply token: the trusted server's Authentication-Results ([mail]
trusted_authserv_id) and the per-sender rate limit ([service] mails_per_sender_hour). On
both backends."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from referee.config import ConfigError, load_service_config
from referee.store.models import Event, Match

from .harness import START, World, outbox_rows
from .test_mail_safety import ROULETTE, T1, deliver, inbound_rows, pending_roulette, raw_mail, reply_address

TRUSTED = "mx.example.test"


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path, db_url)
    w.tick(START)
    yield w
    w.store.dispose()


def roulette(gold: int) -> str:
    """A valid roulette move (Gold 26 to 35) that differs by Gold."""
    assert 26 <= gold <= 35
    return ROULETTE.replace("Gold: 30\nSilver: 10", f"Gold: {gold}\nSilver: {40 - gold}")


def alice_mail(world: World, *results: str, body: str = ROULETTE, n: int = 1, **kwargs) -> bytes:
    extra = "".join(f"Authentication-Results: {value}\r\n" for value in results)
    return raw_mail(
        to=reply_address(world, "alice"), extra=extra, body=body, message_id=f"<a{n}@example.test>", **kwargs
    )


def moves(world: World) -> int:
    with world.store.unit_of_work() as session:
        return session.scalar(select(func.count()).select_from(Event).where(Event.kind == "move"))


# ---------------------------------------------------------------------- trusted Authentication-Results


@pytest.mark.parametrize(
    "result",
    [
        f"{TRUSTED}; spf=pass smtp.mailfrom=alice@example.test; dkim=pass header.d=example.test; dmarc=pass "
        "(p=reject dis=none) header.from=example.test",
        f"{TRUSTED}; dkim=pass (2048-bit key) header.d=example.test header.s=mail",
        f"{TRUSTED}; dkim=pass header.i=@mail.example.test",
        f"{TRUSTED}; spf=pass smtp.mailfrom=bounces+alice@eu.example.test",
        "MX.EXAMPLE.TEST 1; dmarc=pass header.from=EXAMPLE.TEST",
    ],
    ids=["all-three", "dkim", "dkim-i-subdomain", "spf-subdomain", "case-and-version"],
)
def test_a_mail_the_trusted_server_confirms_is_obeyed(world, result):
    world.config.mail.trusted_authserv_id = TRUSTED
    deliver(world, alice_mail(world, result))
    world.tick(T1)
    [row] = inbound_rows(world)
    assert (row.status, row.rule) == ("accepted", None)
    assert pending_roulette(world, "alice")["winning"] == "Gold"


@pytest.mark.parametrize(
    "results",
    [
        (),
        (f"{TRUSTED}; spf=none smtp.mailfrom=alice@example.test; dkim=none; dmarc=none",),
        (f"{TRUSTED}; spf=softfail smtp.mailfrom=example.test", f"{TRUSTED}; dmarc=pass header.from=example.test"),
        ("mx.elsewhere.test; dmarc=pass header.from=example.test",),
        (f"{TRUSTED}; dmarc=pass header.from=evil.test; dkim=pass header.d=evil.test",),
        (f"{TRUSTED}; spf=pass smtp.mailfrom=eve@example.test.evil.test",),
        (f"{TRUSTED}; dkim=fail (dkim=pass header.d=example.test) header.d=example.test",),
        (f'{TRUSTED}; spf=pass smtp.mailfrom="x; dmarc=pass header.from=example.test"@evil.test',),
        ("spf=pass smtp.mailfrom=example.test; dmarc=pass action=none header.from=example.test",),
    ],
    ids=[
        "none",
        "nothing-passed",
        "forged-below",
        "other-server",
        "pass-for-another-domain",
        "lookalike",
        "comment",
        "quoted",
        "no-authserv-id",
    ],
)
def test_a_mail_it_does_not_confirm_is_not_obeyed_and_the_player_is_told(world, results):
    world.config.mail.trusted_authserv_id = TRUSTED
    deliver(world, alice_mail(world, *results))
    world.tick(T1)
    [row] = inbound_rows(world)
    assert (row.status, row.rule) == ("rejected", "sender-unconfirmed")
    assert TRUSTED in row.note
    assert pending_roulette(world, "alice") is None and moves(world) == 0
    [notice] = outbox_rows(world, kind="spoof")
    assert notice.to_addr == "alice@example.test"
    mail = world.client("alice").latest()
    text = " ".join(mail.text.split())
    assert "could not be confirmed" in mail.subject
    assert "could not confirm that it was really sent from there" in text
    assert "(DMARC, DKIM or SPF) for example.test" in text
    assert "writing from another account" not in text


def test_a_recorded_dmarc_failure_is_still_said_as_such(world):
    world.config.mail.trusted_authserv_id = TRUSTED
    deliver(
        world, alice_mail(world, f"{TRUSTED}; dkim=pass header.d=example.test; dmarc=fail header.from=example.test")
    )
    world.tick(T1)
    [row] = inbound_rows(world)
    assert (row.status, row.rule) == ("rejected", "spoofed")
    text = " ".join(world.last_text("alice").split())
    assert "(DMARC) says it was not really sent from that address" in text


def test_several_trusted_servers_each_one_confirms(world):
    world.config.mail.trusted_authserv_id = ("mx1.example.test", "mx2.example.test")
    for i, server in enumerate(["mx2.example.test", "mx1.example.test", "mx3.example.test"]):
        result = f"{server}; dmarc=pass header.from=example.test"
        deliver(world, alice_mail(world, result, body=roulette(30 + i), n=i), T1 + timedelta(minutes=i))
    world.tick(T1 + timedelta(minutes=5))
    assert [r.rule for r in inbound_rows(world)] == [None, None, "sender-unconfirmed"]
    assert "mx1.example.test or mx2.example.test" in inbound_rows(world)[2].note


def test_without_the_option_the_header_is_not_needed(world):
    assert world.config.mail.trusted_authserv_id is None
    deliver(world, alice_mail(world))
    world.tick(T1)
    assert [r.status for r in inbound_rows(world)] == ["accepted"]


def test_mail_from_someone_else_is_spoofed_whatever_its_header_says(world):
    world.config.mail.trusted_authserv_id = TRUSTED
    deliver(world, alice_mail(world, f"{TRUSTED}; dmarc=pass header.from=evil.test", frm="eve@evil.test"))
    world.tick(T1)
    [row] = inbound_rows(world)
    assert (row.status, row.rule) == ("rejected", "spoofed")
    assert "came from eve@evil.test" in " ".join(world.last_text("alice").split())


def test_trusted_authserv_id_in_the_configuration(tmp_path):
    path = tmp_path / "referee.toml"
    base = 'secret = "test-secret-0123456789abcdef"\n[mail]\naddress = "referee@example.org"\n'
    path.write_text(base + 'trusted_authserv_id = "MX.Example.ORG"\n')
    assert load_service_config(path).mail.trusted_authserv_id == ("mx.example.org",)
    path.write_text(base + 'trusted_authserv_id = ["mx1.example.org", "MX2.example.org", "mx1.example.org"]\n')
    assert load_service_config(path).mail.trusted_authserv_id == ("mx1.example.org", "mx2.example.org")
    path.write_text(base)
    assert load_service_config(path).mail.trusted_authserv_id is None
    for wrong in ('"mx.example.org; dmarc=pass"', '"two words"', '""', "1", '["mx.example.org", 2]', "[]"):
        path.write_text(base + f"trusted_authserv_id = {wrong}\n")
        with pytest.raises(ConfigError, match="trusted_authserv_id"):
            load_service_config(path)


# ---------------------------------------------------------------------- per-sender rate limit


def test_a_flood_from_one_player_is_judged_up_to_the_limit_then_ignored_unread(world, caplog):
    world.config.mails_per_sender_hour = 3
    caplog.set_level(logging.DEBUG, logger="referee.judge")
    for i in range(6):
        world.send("alice", roulette(30 + i), T1 + timedelta(minutes=i))
    world.tick(T1 + timedelta(minutes=10))  # one batch
    rows = inbound_rows(world)
    assert [(r.status, r.rule) for r in rows] == [("accepted", None)] * 3 + [("ignored", "rate-limited")] * 3
    assert all("more than 3 mails from alice@example.test" in r.note for r in rows[3:])
    assert all(r.body_digest is None for r in rows[3:])  # the body was not read
    assert pending_roulette(world, "alice")["points"]["Gold"] == 32  # the third mail's move stands
    assert moves(world) == 3
    assert len(outbox_rows(world, kind="receipt")) == 3  # never answered past the limit
    assert len(outbox_rows(world)) == 2 + 3
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "within an hour" in r.getMessage()]
    assert len(warnings) == 1  # once per sender and batch; the others at DEBUG


def test_the_hour_slides_and_counts_across_batches(world):
    world.config.mails_per_sender_hour = 3
    for i in range(2):
        world.send("alice", roulette(31 + i), T1 + timedelta(minutes=i))
    world.tick(T1 + timedelta(minutes=5))
    for i in range(2, 4):
        world.send("alice", roulette(31 + i), T1 + timedelta(minutes=i + 5))
    world.tick(T1 + timedelta(minutes=10))
    assert [r.rule for r in inbound_rows(world)] == [None, None, None, "rate-limited"]
    # an hour after the first, one more fits in the hour before it (the limited one is not counted)
    later = T1 + timedelta(hours=1, seconds=1)
    world.send("alice", roulette(35), later)
    world.tick(later)
    assert inbound_rows(world)[-1].status == "accepted"
    assert pending_roulette(world, "alice")["points"]["Gold"] == 35


def test_a_rate_limited_mail_changes_no_match_even_after_a_deadline(world):
    world.config.mails_per_sender_hour = 1
    deadline = START + timedelta(hours=24)  # round 0 closes here
    world.send("alice", roulette(31), deadline - timedelta(minutes=1))
    world.tick(deadline - timedelta(minutes=1))

    def match() -> tuple[int, int]:
        with world.store.unit_of_work() as session:
            found = session.scalar(select(Match).where(Match.key == "m1"))
            return found.version, found.state["round"]

    before = match()
    assert before[1] == 0
    # past the limit, and arrived after the deadline: judged, it would close the round first
    late = deadline + timedelta(minutes=1)
    deliver(world, alice_mail(world, body=roulette(35), n=2), late)
    world.referee.ingest(late)
    world.referee.process_inbound(late)  # the mail alone, not the clock's work
    assert inbound_rows(world)[-1].rule == "rate-limited"
    assert match() == before and moves(world) == 1
    # the same mail within the limit is judged against its arrival: the round closes first
    world.config.mails_per_sender_hour = 60
    deliver(world, alice_mail(world, body=roulette(34), n=3), late + timedelta(seconds=1))
    world.referee.ingest(late + timedelta(seconds=1))
    world.referee.process_inbound(late + timedelta(seconds=1))
    assert inbound_rows(world)[-1].status == "accepted"
    assert match()[1] == 1 and moves(world) == 2


def test_duplicates_automated_mail_and_our_own_mail_do_not_count(world):
    world.config.mails_per_sender_hour = 3
    first = alice_mail(world, body=roulette(31), n=1)
    for i in range(4):  # one mail delivered four times: judged once
        deliver(world, b"Received: from relay%d by mx\r\n" % i + first, T1 + timedelta(seconds=i))
    for i in range(5):  # her out-of-office answering our mails
        deliver(
            world,
            raw_mail(body="I am away", message_id=f"<ooo{i}@example.test>", extra="Auto-Submitted: auto-replied\r\n"),
            T1 + timedelta(minutes=1, seconds=i),
        )
    for i in range(5):  # our own mail come back
        deliver(
            world,
            raw_mail(frm="Referee <referee@example.test>", message_id=f"<own{i}@example.test>"),
            T1 + timedelta(minutes=2, seconds=i),
        )
    for i in range(2, 5):
        deliver(world, alice_mail(world, body=roulette(30 + i), n=i), T1 + timedelta(minutes=3 + i))
    world.tick(T1 + timedelta(minutes=10))
    rules = [(r.status, r.rule) for r in inbound_rows(world)]
    assert rules.count(("ignored", "duplicate")) == 3
    assert rules.count(("ignored", "auto-submitted")) == 5
    assert rules.count(("ignored", "own-address")) == 5
    assert [r for r in rules if r[0] != "ignored" or r[1] == "rate-limited"] == [("accepted", None)] * 3 + [
        ("ignored", "rate-limited")
    ]


def test_mail_forged_in_a_players_name_does_not_use_up_her_own_allowance(world):
    world.config.mails_per_sender_hour = 3
    for i in range(6):  # someone writes as alice to the general address
        deliver(world, raw_mail(body=f"spam {i}", message_id=f"<f{i}@evil.test>"), T1 + timedelta(seconds=i))
    world.send("alice", roulette(31), T1 + timedelta(minutes=1))  # her own move, to her reply address
    world.tick(T1 + timedelta(minutes=2))
    rows = inbound_rows(world)
    assert [r.rule for r in rows[:6]] == ["general-address"] * 3 + ["rate-limited"] * 3
    assert len(outbox_rows(world, kind="unaddressed")) == 3  # no notice past the limit
    assert (rows[6].status, rows[6].rule) == ("accepted", None)
    assert pending_roulette(world, "alice")["points"]["Gold"] == 31


def test_strangers_are_limited_too(world):
    world.config.mails_per_sender_hour = 2
    for i in range(4):
        deliver(world, raw_mail(frm="x@stranger.test", message_id=f"<x{i}@stranger.test>"), T1 + timedelta(seconds=i))
    deliver(world, raw_mail(frm="y@stranger.test", message_id="<y@stranger.test>"), T1 + timedelta(seconds=5))
    world.tick(T1 + timedelta(minutes=1))
    assert [r.rule for r in inbound_rows(world)] == ["unknown-sender"] * 2 + ["rate-limited"] * 2 + ["unknown-sender"]
    assert outbox_rows(world, kind="unaddressed") == []


def test_the_default_limit_lets_an_ordinary_player_through(world):
    assert world.config.mails_per_sender_hour == 60
    for i in range(20):
        world.send("alice", roulette(26 + i % 10), T1 + timedelta(minutes=i))
    world.tick(T1 + timedelta(minutes=30))
    assert {r.status for r in inbound_rows(world)} == {"accepted"}


def test_mails_per_sender_hour_in_the_configuration(tmp_path):
    path = tmp_path / "referee.toml"
    base = 'secret = "test-secret-0123456789abcdef"\n[mail]\naddress = "referee@example.org"\n'
    path.write_text(base + "[service]\nmails_per_sender_hour = 30\n")
    assert load_service_config(path).mails_per_sender_hour == 30
    for wrong in ("0", "-1", "1.5", "true", '"60"'):
        path.write_text(base + f"[service]\nmails_per_sender_hour = {wrong}\n")
        with pytest.raises(ConfigError, match="mails_per_sender_hour must be a positive integer"):
            load_service_config(path)
