"""No single mail or file stops the referee: poison mails, column overflows, unreadable files,
duplicates and collisions, loops and floods, replies that tell the truth. On both backends."""

from __future__ import annotations

import email
import email.policy
import logging
import os
import unicodedata
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from referee.games import GAMES
from referee.mail.maildir import deliver_to_maildir
from referee.mail.tokens import make_token
from referee.status import quarantine_text, requeue_quarantined, status_text
from referee.store.models import InboxProblem, Inbound, Match, Seat

from .harness import DAY, START, World, outbox_rows

ROULETTE = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0"
T1 = START + timedelta(hours=1)
HOUR = timedelta(hours=1)


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path, db_url)
    w.tick(START)
    yield w
    w.store.dispose()


def raw_mail(
    *,
    frm: str = "Alice <alice@example.test>",
    to: str = "referee@example.test",
    body: str = ROULETTE,
    message_id: str | None = "<m1@example.test>",
    extra: str = "",
) -> bytes:
    head = f"From: {frm}\r\nTo: {to}\r\nSubject: Re: round\r\nDate: Tue, 01 Dec 2026 19:00:00 +0000\r\n"
    if message_id is not None:
        head += f"Message-ID: {message_id}\r\n"
    return (
        extra + head + "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n"
    ).encode("utf-8", "surrogateescape")


def reply_address(world: World, key: str) -> str:
    return world.client(key).latest().reply_address


def deliver(world: World, data: bytes, at=T1):
    return deliver_to_maildir(world.config.mail.inbox, data, delivered_at=at)


def inbound_rows(world: World) -> list[Inbound]:
    with world.store.unit_of_work() as session:
        return list(session.scalars(select(Inbound).order_by(Inbound.id)))


def pending_roulette(world: World, key: str):
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1")).state["pending"][key]["roulette"]


def token_address(world: World, seat_id: int) -> str:
    """A well-formed token naming ``seat_id`` (signed for a match and player that do not exist)."""
    return f"referee+{make_token(world.config.secret, seat_id, 'nope', 'nobody')}@example.test"


# ---------------------------------------------------------------------- poison mails


@pytest.mark.parametrize("seat_id", [2**63, 2**63 - 1, 2**31, 10**19])
def test_a_token_naming_an_absurd_seat_id_stops_nothing(world, seat_id):
    deliver(world, raw_mail(frm="x@stranger.test", to=token_address(world, seat_id), message_id="<evil@x>"))
    world.send("alice", ROULETTE, T1 + timedelta(minutes=1))
    world.tick(T1 + timedelta(minutes=5))
    assert pending_roulette(world, "alice")["winning"] == "Gold"
    rows = inbound_rows(world)
    assert [(r.status, r.rule) for r in rows] == [("ignored", "unknown-sender"), ("accepted", None)]
    world.tick(START + DAY)  # and the deadline still closes
    with world.store.unit_of_work() as session:
        assert session.scalar(select(Match).where(Match.key == "m1")).state["round"] == 1


@pytest.mark.parametrize("length", [400, 999, 5000])
def test_a_message_id_of_any_length_is_stored_and_the_mail_processed(world, length):
    mid = "<" + "a" * (length - len("@example.test") - 2) + "@example.test>"
    deliver(world, raw_mail(to=reply_address(world, "alice"), message_id=mid))
    world.tick(T1)
    [row] = inbound_rows(world)
    assert row.status == "accepted"
    assert len(row.message_id) <= 255
    [receipt] = outbox_rows(world, kind="receipt")
    assert all(len(line) <= 998 for line in receipt.message.split(b"\r\n"))


def test_non_ascii_and_encoded_word_ids_do_not_break_the_reply(world):
    extra = (
        "In-Reply-To: <caf\u00e9-\u00fcber@example.test>\r\n"
        "References: <=?utf-8?q?caf=C3=A9?=@x> <r\u00e9f@example.test> "
        + " ".join(f"<r{i}@x.test>" for i in range(3000))
        + "\r\n"
    )
    deliver(
        world, raw_mail(to=reply_address(world, "alice"), message_id="<id-\u00e9t\u00e9@example.test>", extra=extra)
    )
    world.tick(T1)
    [row] = inbound_rows(world)
    assert row.status == "accepted"
    [receipt] = outbox_rows(world, kind="receipt")
    data = receipt.message
    data.decode("ascii")  # every header is ASCII
    assert all(len(line) <= 998 for line in data.split(b"\r\n"))
    references = [line for line in data.split(b"\r\n") if line.startswith(b"References:")]
    assert len(references) == 1 and b"<r2999@x.test>" in references[0]  # the newest ids are kept


def test_a_bug_while_judging_a_mail_quarantines_it_after_two_tries_and_others_go_on(world, monkeypatch):
    game = GAMES["stationary-roulette"]
    real_parse = game.parse

    def buggy(state, player, text):
        if "Silver: 11" in text:
            raise RuntimeError("a bug in the engine")
        return real_parse(state, player, text)

    monkeypatch.setattr(game, "parse", buggy)
    world.send("alice", ROULETTE.replace("Gold: 30\nSilver: 10", "Gold: 29\nSilver: 11"), T1)
    world.send("bob", ROULETTE, T1 + timedelta(minutes=1))
    world.tick(T1 + timedelta(minutes=2))
    rows = inbound_rows(world)
    assert [r.status for r in rows] == ["quarantined", "accepted"]
    assert rows[0].attempts == 2 and "a bug in the engine" in rows[0].note
    assert pending_roulette(world, "bob") is not None
    text = status_text(world.store, T1 + timedelta(minutes=3))
    assert "quarantined inbound mail: 1" in text and "a bug in the engine" in text
    assert "a bug in the engine" in quarantine_text(world.store)
    # after the fix, it is requeued and judged by its arrival time
    monkeypatch.setattr(game, "parse", real_parse)
    assert requeue_quarantined(world.store, [rows[0].id]) == 1
    world.tick(T1 + timedelta(minutes=10))
    assert inbound_rows(world)[0].status == "accepted"
    assert pending_roulette(world, "alice")["points"]["Silver"] == 11


def test_a_huge_number_is_a_parse_error_not_a_failed_mail(world):
    world.send("alice", "ROULETTE\nWinning colour: Gold\nGold: " + "9" * 5000 + "\nSilver: 10\nBlack: 0", T1)
    world.tick(T1)
    [row] = inbound_rows(world)
    assert row.status == "rejected"
    [error] = outbox_rows(world, kind="error")
    assert len(error.message) < 20_000  # the line is quoted cut, not echoed whole


def test_a_20_mb_mail_costs_a_bounded_read_and_gets_a_small_reply(world):
    body = ROULETTE + "\n" + ("All work and no play makes Jack a dull boy. " * 40 + "\n") * 12_000
    assert len(body) > 20_000_000
    deliver(world, raw_mail(to=reply_address(world, "alice"), body=body))
    world.tick(T1)
    [row] = inbound_rows(world)
    assert row.status == "accepted" and len(row.raw) > 20_000_000  # the raw mail is kept whole
    [receipt] = outbox_rows(world, kind="receipt")
    assert len(receipt.message) < 50_000
    assert b"only its beginning was read" in receipt.message


# ---------------------------------------------------------------------- files


def test_an_unreadable_file_is_skipped_and_shown_while_everything_else_goes_on(world, monkeypatch):
    bad = deliver(world, raw_mail(to=reply_address(world, "bob"), message_id="<bad@x>"))
    world.send("alice", ROULETTE, T1 + timedelta(minutes=1))
    real_read = world.inbox.read

    def read(item):
        if item.path == bad:
            raise PermissionError(13, "Permission denied", str(item.path))
        return real_read(item)

    monkeypatch.setattr(world.inbox, "read", read)
    world.tick(T1 + timedelta(minutes=2))
    assert pending_roulette(world, "alice") is not None
    text = status_text(world.store, T1 + timedelta(minutes=3))
    assert "inbox files the referee cannot handle: 1" in text and "Permission denied" in text
    world.tick(START + DAY)  # deadlines do not wait on ingest
    with world.store.unit_of_work() as session:
        assert session.scalar(select(Match).where(Match.key == "m1")).state["round"] == 1
    monkeypatch.undo()  # the organizer fixes the file's mode: it is read, and the problem is gone
    world.tick(START + DAY + timedelta(minutes=1))
    with world.store.unit_of_work() as session:
        assert session.scalar(select(func.count()).select_from(InboxProblem)) == 0
    assert len(inbound_rows(world)) == 2


def test_a_maildir_where_nothing_can_be_moved_does_not_stop_deadlines_or_delivery(world, monkeypatch):
    world.send("alice", ROULETTE, T1)

    def refuse(item):
        raise PermissionError(13, "Permission denied", str(item.path))

    monkeypatch.setattr(world.inbox, "mark_processed", refuse)
    world.tick(T1)
    world.tick(T1 + timedelta(minutes=5))  # offered again: stored once, still not moved
    rows = inbound_rows(world)
    assert [r.status for r in rows] == ["accepted"]
    assert len(outbox_rows(world, kind="receipt")) == 1
    assert "cannot be moved" in status_text(world.store, T1)
    world.tick(START + DAY)
    assert len(world.client("alice").all()) >= 3  # start prompt, receipt, round 0 results


def test_the_inbox_listing_failing_stops_nothing_else(world, monkeypatch):
    def broken():
        raise PermissionError(13, "Permission denied", "new")

    monkeypatch.setattr(world.inbox, "pending", broken)
    report = world.tick(START + DAY)
    assert report.closed == 1
    assert "cannot list the inbox" in status_text(world.store, START + DAY)


def test_leftovers_in_tmp_are_removed_after_a_day(world):
    for maildir in (world.config.mail.inbox, world.config.mail.outbox / "alice@example.test"):
        old, fresh = maildir / "tmp" / "old.1", maildir / "tmp" / "fresh.1"
        old.write_bytes(b"x")
        fresh.write_bytes(b"y")
        stamp = (T1 - timedelta(hours=25)).timestamp()
        os.utime(old, (stamp, stamp))
        stamp = (T1 - timedelta(hours=2)).timestamp()
        os.utime(fresh, (stamp, stamp))
    world.tick(T1)
    for maildir in (world.config.mail.inbox, world.config.mail.outbox / "alice@example.test"):
        assert sorted(p.name for p in (maildir / "tmp").iterdir()) == ["fresh.1"]


# ---------------------------------------------------------------------- duplicates and collisions


def test_a_mail_without_message_id_delivered_twice_is_applied_once(world):
    data = raw_mail(to=reply_address(world, "alice"), message_id=None)
    deliver(world, data, T1)
    deliver(world, b"Received: from relay2 by mx; Tue, 1 Dec 2026 19:01:00 +0000\r\n" + data, T1 + timedelta(minutes=1))
    world.tick(T1 + timedelta(minutes=2))
    rows = inbound_rows(world)
    assert [(r.status, r.rule) for r in rows] == [("accepted", None), ("ignored", "duplicate")]
    assert rows[1].duplicate_of == rows[0].id
    assert len(outbox_rows(world, kind="receipt")) == 1


def test_a_message_id_collision_with_different_content_is_processed(world):
    deliver(world, raw_mail(frm="x@stranger.test", message_id="<same@x>", body="hello"), T1)
    deliver(world, raw_mail(to=reply_address(world, "alice"), message_id="<same@x>"), T1 + timedelta(minutes=1))
    world.tick(T1 + timedelta(minutes=2))
    rows = inbound_rows(world)
    assert [r.status for r in rows] == ["ignored", "accepted"]
    assert pending_roulette(world, "alice") is not None


# ---------------------------------------------------------------------- loops and floods


def test_an_out_of_office_responder_without_headers_does_not_loop(world, caplog):
    """It answers every mail from the referee with the same text, and sets neither
    Auto-Submitted nor Precedence. The referee answers it once, then stays quiet."""
    alice = world.client("alice")
    caplog.set_level(logging.WARNING)
    now = T1
    for _ in range(6):
        latest = alice.latest()
        alice.reply(latest, "I am away until January and will read your mail then.", now, quote=False)
        world.tick(now)
        now += timedelta(minutes=30)
    assert len(outbox_rows(world, kind="error")) == 1
    assert "the same text was answered before" in caplog.text
    statuses = {(r.status, r.rule) for r in inbound_rows(world)}
    assert statuses == {("rejected", None), ("rejected", "repeated")}


def test_a_flood_of_different_bad_mails_is_throttled_but_receipts_never_are(world, caplog):
    caplog.set_level(logging.WARNING)
    limit = world.config.replies_per_hour
    for i in range(limit + 5):
        world.send(
            "alice", f"ROULETTE\nWinning colour: Purple{i}\nGold: 30\nSilver: 10\nBlack: 0", T1 + timedelta(seconds=i)
        )
    world.send("alice", ROULETTE, T1 + timedelta(seconds=limit + 10))
    world.tick(T1 + timedelta(minutes=1))
    assert len(outbox_rows(world, kind="error")) == limit
    assert len(outbox_rows(world, kind="receipt")) == 1
    assert "too many replies to this address" in caplog.text
    # quiet for the quiet period, then answered again
    world.send("alice", "ROULETTE\nWinning colour: Mauve\nGold: 30\nSilver: 10\nBlack: 0", T1 + timedelta(minutes=30))
    world.tick(T1 + timedelta(minutes=30))
    assert len(outbox_rows(world, kind="error")) == limit
    later = T1 + timedelta(minutes=30) + timedelta(minutes=world.config.quiet_minutes + 1)
    world.send("alice", "ROULETTE\nWinning colour: Teal\nGold: 30\nSilver: 10\nBlack: 0", later)
    world.tick(later)
    assert len(outbox_rows(world, kind="error")) == limit + 1


# ---------------------------------------------------------------------- replies that tell the truth


@pytest.mark.parametrize("damage", ["cut", "added", "non-ascii"])
def test_a_damaged_reply_address_is_called_damaged_and_the_right_one_shown(world, damage):
    right = reply_address(world, "alice")
    local, domain = right.split("@")
    wrong = {"cut": local[:-3], "added": local + "q", "non-ascii": local[:-1] + "\u00e9"}[damage] + "@" + domain
    deliver(world, raw_mail(to=wrong))
    world.tick(T1)
    [row] = inbound_rows(world)
    assert (row.status, row.rule) == ("rejected", "damaged-address")
    [notice] = outbox_rows(world, kind="unaddressed")
    assert notice.to_addr == "alice@example.test"
    text = world.last_text("alice")
    assert "damaged" in text and right in text
    assert "general address" not in text


@pytest.mark.parametrize(
    "frm, shown",
    [
        ("", "no sender address at all"),
        ("undisclosed-recipients:;", 'says "undisclosed-recipients:;", which is not one usable sender address'),
        ("=?utf-8?q?Eve_=C3=89vil?= <eve@evil.test>", "came from Eve \u00c9vil <eve@evil.test>"),
        (None, "no sender address at all"),
    ],
    ids=["empty", "group", "encoded-word", "missing"],
)
def test_a_spoof_notice_names_what_was_found_or_says_none_was(world, frm, shown):
    data = raw_mail(to=reply_address(world, "alice"), frm=frm or "")
    if frm is None:
        data = data.replace(b"From: \r\n", b"")
    deliver(world, data)
    world.tick(T1)
    [row] = inbound_rows(world)
    assert (row.status, row.rule) == ("rejected", "spoofed")
    text = " ".join(world.last_text("alice").split())
    assert shown in text and "not your registered address" in text
    assert "came from ," not in text


def test_a_registered_player_writing_to_the_general_address_is_told_so(world):
    right = reply_address(world, "alice")
    deliver(world, raw_mail())
    world.tick(T1)
    [row] = inbound_rows(world)
    assert (row.status, row.rule) == ("rejected", "general-address")
    text = world.last_text("alice")
    assert "general address" in text and right in text


def test_no_reply_goes_to_anyone_but_registered_players(world):
    seat_token = None
    with world.store.unit_of_work() as session:
        seat = session.scalar(select(Seat).order_by(Seat.id))
        seat_token = make_token(world.config.secret, seat.id, "m1", "alice")
    for i, to in enumerate(
        ["referee@example.test", f"referee+{seat_token}@example.test", "referee+garbage@example.test"]
    ):
        deliver(world, raw_mail(frm="eve@evil.test", to=to, message_id=f"<e{i}@evil.test>"), T1 + timedelta(seconds=i))
    world.tick(T1 + timedelta(minutes=1))
    assert {r.to_addr for r in outbox_rows(world)} <= {"alice@example.test", "bob@example.test"}


# ---------------------------------------------------------------------- readings of a reply


def quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def test_a_form_filled_in_inside_the_quote_is_the_players_move(world):
    alice = world.client("alice")
    prompt = alice.latest()
    edited = prompt.text.replace("Winning colour: Gold", "Winning colour: Silver").replace("Gold: 30", "Gold: 26")
    edited = edited.replace("Silver: 10", "Silver: 14")
    alice.reply(prompt, "On Tue, 1 Dec 2026, Referee wrote:\n" + quoted(edited), T1, quote=False)
    world.tick(T1)
    assert pending_roulette(world, "alice") == {"winning": "Silver", "points": {"Gold": 26, "Silver": 14, "Black": 0}}


def test_an_empty_reply_quoting_our_mail_is_not_taken_for_its_example_form(world):
    alice = world.client("alice")
    prompt = alice.latest()
    world.send("alice", "ROULETTE\nWinning colour: Black\nGold: 25\nSilver: 15\nBlack: 0", T1)
    world.tick(T1)
    alice.reply(prompt, "Thanks!", T1 + timedelta(minutes=5))  # quotes the prompt and its example form
    world.tick(T1 + timedelta(minutes=5))
    assert pending_roulette(world, "alice")["winning"] == "Black"  # the example did not replace it
    assert [r.status for r in inbound_rows(world)] == ["accepted", "rejected"]


def pending(world: World, key: str):
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1")).state["pending"][key]


def round_1(world: World) -> None:
    """Both prepare in round 0; round 1 opens (a ROULETTE and a BET to send)."""
    world.send("alice", ROULETTE, T1)
    world.send("bob", ROULETTE.replace("Gold", "Silver", 1), T1)
    world.tick(START + DAY)


def test_a_bet_edited_in_the_quote_leaves_the_roulette_typed_before_as_it_stands(world):
    """Issue 20, wrong move (1): a reply that edits only the BET inside the quote of the
    round mail is read against that mail section by section: the quoted example ROULETTE,
    untouched, never replaces the roulette the player typed before."""
    round_1(world)
    alice = world.client("alice")
    prompt = alice.latest()
    world.send("alice", "ROULETTE\nWinning colour: Black\nGold: 25\nSilver: 15\nBlack: 0", START + DAY + HOUR)
    world.tick(START + DAY + HOUR)
    edited = quoted(prompt.text).replace("> BET\n> Gold: 20\n> Silver: 20", "> BET\n> Gold: 5\n> Silver: 35")
    assert edited != quoted(prompt.text)
    alice.reply(prompt, "On Wed, 2 Dec 2026, Referee wrote:\n" + edited, START + DAY + 2 * HOUR, quote=False)
    world.tick(START + DAY + 2 * HOUR)
    assert [r.status for r in inbound_rows(world)][-2:] == ["accepted", "accepted"]
    mine = pending(world, "alice")
    assert mine["roulette"] == {"winning": "Black", "points": {"Gold": 25, "Silver": 15, "Black": 0}}
    assert mine["bet"] == {"Gold": 5, "Silver": 35, "Black": 0}


def test_a_bet_edited_in_the_quote_of_a_receipt_never_records_its_example_roulette(world):
    """Issue 20, wrong move (2): the receipt of a BET-only mail shows an example ROULETTE
    (and says it is one); editing the BET in a reply to that receipt records the bet only."""
    round_1(world)
    alice = world.client("alice")
    world.send("alice", "BET\nGold: 40", START + DAY + HOUR)
    world.tick(START + DAY + HOUR)
    receipt = alice.latest()
    assert "the ROULETTE part is only an example" in " ".join(receipt.text.split())
    edited = quoted(receipt.text).replace("> Gold: 40\n> Silver: 0", "> Gold: 10\n> Silver: 30")
    assert edited != quoted(receipt.text)
    alice.reply(receipt, "On Wed, 2 Dec 2026, Referee wrote:\n" + edited, START + DAY + 2 * HOUR, quote=False)
    world.tick(START + DAY + 2 * HOUR)
    mine = pending(world, "alice")
    assert mine["roulette"] is None and mine["bet"] == {"Gold": 10, "Silver": 30, "Black": 0}


def test_a_chat_reply_with_an_unquoted_copy_and_a_decomposed_name_records_nothing(world):
    """Issue 20, wrong move (3): the copy of our mail comes back without quote marks, the
    greeting decomposed (NFD) or mis-decoded: still ours, so only the chat is read, and the
    answer says an unchanged form is never a move."""
    alice = world.client("alice")
    prompt = alice.latest()
    for n, copy in enumerate((unicodedata.normalize("NFD", prompt.text), prompt.text.encode().decode("latin-1"))):
        alice.reply(prompt, "Thanks, see you tomorrow!\n\n" + copy, T1 + timedelta(minutes=n), quote=False)
    world.tick(T1 + timedelta(minutes=5))
    assert [r.status for r in inbound_rows(world)] == ["rejected", "rejected"]
    assert pending(world, "alice")["roulette"] is None
    answer = world.last_text("alice")
    assert "a form left unchanged is never taken as a move" in " ".join(answer.split())
    assert "Thanks, see you tomorrow!" in answer and "Dear Alice" not in answer.split("Thanks, see")[1]


def test_ok_same_as_below_is_answered_that_an_unchanged_form_is_no_move(world):
    """Kind E: the quote left untouched with "OK, same as below": nothing recorded, and the
    answer says why, in the player's terms."""
    alice = world.client("alice")
    alice.reply(alice.latest(), "OK, same as below.", T1)
    world.tick(T1)
    assert [r.status for r in inbound_rows(world)] == ["rejected"]
    answer = " ".join(world.last_text("alice").split())
    assert "Your reply only quotes our mail" in answer and "To keep what you have sent so far, do nothing" in answer


def test_a_kept_attribution_above_the_move_does_not_hide_it(world):
    alice = world.client("alice")
    prompt = alice.latest()
    body = "On Tue, Dec 1, 2026 at 7:00 PM Referee <referee@example.test> wrote:\n\n" + ROULETTE.replace(
        "30", "31"
    ).replace("10", "9")
    alice.reply(prompt, body, T1, quote=False)
    world.tick(T1)
    assert pending_roulette(world, "alice")["points"] == {"Gold": 31, "Silver": 9, "Black": 0}


def test_the_html_part_holds_the_move_beside_a_plain_view_in_browser_stub(world):
    to = reply_address(world, "alice")
    html = "<html><body><p>ROULETTE<br>Winning colour: Gold<br>Gold: 32<br>Silver: 8<br>Black: 0</p></body></html>"
    data = (
        f"From: alice@example.test\r\nTo: {to}\r\nSubject: Re: x\r\nMessage-ID: <h1@example.test>\r\n"
        'MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary="b"\r\n\r\n'
        "--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThis message is best viewed in a browser.\r\n"
        f"--b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n--b--\r\n"
    ).encode()
    deliver(world, data)
    world.tick(T1)
    assert pending_roulette(world, "alice")["points"] == {"Gold": 32, "Silver": 8, "Black": 0}


def test_text_after_the_form_is_listed_as_ignored_in_the_receipt(world):
    world.send("alice", ROULETTE + "\nTel: +49 30 1234567\nPS: 2 more rounds to go!", T1, quote=False)
    world.tick(T1)
    receipt = world.last_text("alice")
    assert "were ignored" in receipt and "| PS: 2 more rounds to go!" in receipt


def test_a_flood_of_spoofed_mail_brings_the_player_at_most_the_small_budget_of_notices(world):
    to = reply_address(world, "alice")
    limit = world.config.notices_per_hour
    assert limit < world.config.replies_per_hour  # a budget of its own, and a small one
    for i in range(limit + 10):
        deliver(
            world,
            raw_mail(frm=f"eve{i}@evil.test", to=to, body=f"spam {i}", message_id=f"<s{i}@evil.test>"),
            T1 + timedelta(seconds=i),
        )
    world.tick(T1 + timedelta(minutes=1))
    assert len(outbox_rows(world, kind="spoof")) == limit
    rows = inbound_rows(world)
    assert sum(r.rule == "throttled-notices" for r in rows) == 10
    # still quiet half an hour later, as more arrive
    deliver(
        world,
        raw_mail(frm="eve@evil.test", to=to, body="again", message_id="<s-late@evil.test>"),
        T1 + timedelta(minutes=30),
    )
    world.tick(T1 + timedelta(minutes=30))
    assert len(outbox_rows(world, kind="spoof")) == limit


def test_forged_mail_in_a_players_name_never_silences_the_replies_to_her_own_mail(world):
    """A forger who knows only Alice's address writes to the general address in her name: ten
    mails, then one every 50 minutes, for ten hours. Alice's own mistakes, 2.5, 5 and 10 hours
    in, are each answered: the notices about forged mail spend a budget of their own."""
    general = world.config.mail.address
    alice = world.client("alice")
    round_mail = alice.latest()
    at = T1
    for i in range(10):
        deliver(world, raw_mail(frm="alice@example.test", to=general, body=f"hello {i}", message_id=f"<f{i}@x>"), at)
    world.tick(at)
    mistakes = {T1 + timedelta(hours=h): f"ROULETTE\nWinning colour: Pink{h}\nGold: 30" for h in (2.5, 5, 10)}
    for n in range(1, 13):
        at = T1 + timedelta(minutes=50 * n)
        deliver(world, raw_mail(frm="alice@example.test", to=general, body=f"hi {n}", message_id=f"<g{n}@x>"), at)
        for when, text in mistakes.items():
            if at - timedelta(minutes=50) < when <= at:
                alice.reply(round_mail, text, when, quote=False)
        world.tick(at)
    assert len(outbox_rows(world, kind="error")) == 3
    # the forger's mails were held back (the quiet period never ends: one comes every 50 minutes)
    assert len(outbox_rows(world, kind="unaddressed")) == world.config.notices_per_hour
    rules = [r.rule for r in inbound_rows(world)]
    assert rules.count("throttled-notices") == 10 - world.config.notices_per_hour + 12
    assert "throttled" not in rules and "repeated" not in rules


def test_a_move_refused_twice_is_answered_twice(world):
    """The repeat rule is for responders, not for a player's moves: the same refused move sent
    again is answered again."""
    bad = "ROULETTE\nWinning colour: Purple\nGold: 30\nSilver: 10\nBlack: 0"
    world.send("alice", bad, T1, quote=False)
    world.tick(T1)
    world.send("alice", bad, T1 + timedelta(minutes=5), quote=False)
    world.tick(T1 + timedelta(minutes=5))
    assert len(outbox_rows(world, kind="error")) == 2
    assert [r.rule for r in inbound_rows(world)] == [None, None]


def test_the_same_text_refused_for_another_reason_is_answered_again(world):
    """The repeat rule compares the reason too: the same chat-only text, first while its round
    is open (nothing to read in it), then again after the round closed (too late), gets both
    answers; a third time, for the same reason as the second, it gets none."""
    alice = world.client("alice")
    round_mail = alice.latest()
    alice.reply(round_mail, "Thanks, see you tomorrow!", T1, quote=False)
    world.tick(T1)
    late = START + DAY + HOUR
    alice.reply(round_mail, "Thanks, see you tomorrow!", late, quote=False)
    world.tick(late)
    alice.reply(round_mail, "Thanks, see you tomorrow!", late + HOUR, quote=False)
    world.tick(late + HOUR)
    errors = outbox_rows(world, kind="error")
    assert len(errors) == 2
    assert [r.rule for r in inbound_rows(world)] == [None, None, "repeated"]


# ---------------------------------------------------------------------- found by an independent review


def test_our_mail_quoted_without_prefix_under_a_header_block_in_any_language_is_cut(world):
    alice = world.client("alice")
    prompt = alice.latest()
    for i, labels in enumerate([("Från", "Skickat", "Till", "Ämne"), ("Xfrom", "Xsent", "Xto", "Xsubject")]):
        block = "\n".join(f"{label}: x" for label in labels)
        body = ROULETTE.replace("30", str(26 + i)).replace("10", str(14 - i)) + "\n\n" + block + "\n" + prompt.text
        alice.reply(prompt, body, T1 + timedelta(minutes=i), quote=False)
        world.tick(T1 + timedelta(minutes=i))
        assert pending_roulette(world, "alice")["points"] == {"Gold": 26 + i, "Silver": 14 - i, "Black": 0}


def test_a_forward_or_a_quote_of_the_players_own_old_mail_never_replaces_what_stands(world):
    alice = world.client("alice")
    prompt = alice.latest()
    world.send("alice", ROULETTE.replace("Gold: 30\nSilver: 10", "Gold: 26\nSilver: 14"), T1)
    world.tick(T1)
    standing = pending_roulette(world, "alice")
    # a forward of the old prompt, with nothing of her own
    alice.reply(
        prompt,
        "---------- Forwarded message ---------\n" + prompt.text,
        T1 + timedelta(minutes=1),
        quote=False,
        thread=False,
    )
    # a reply to her own first mail (not ours), quoting an older form of hers
    alice.reply(
        prompt,
        "Which one counts?\n\n" + quoted(ROULETTE.replace("Gold", "Silver", 1)),
        T1 + timedelta(minutes=2),
        quote=False,
        thread=False,
    )
    world.tick(T1 + timedelta(minutes=3))
    assert pending_roulette(world, "alice") == standing
    assert [r.status for r in inbound_rows(world)] == ["accepted", "rejected", "rejected"]


def test_the_players_own_reply_address_among_several_tokens_wins(world):
    alice_to, bob_to = reply_address(world, "alice"), reply_address(world, "bob")
    deliver(world, raw_mail(to=f"{bob_to}, {alice_to}"))
    world.tick(T1)
    assert pending_roulette(world, "alice") is not None
    assert outbox_rows(world, kind="spoof") == []


@pytest.mark.parametrize(
    "frm",
    ["=?utf-8?q?Alice_M=C3=BCller_=E2=80=93_Team=3A_Rot?= <alice@example.test>", 'Alice <"alice"@example.test>'],
    ids=["encoded-colon", "quoted-local-part"],
)
def test_unusual_but_genuine_from_lines_are_the_player(world, frm):
    deliver(world, raw_mail(to=reply_address(world, "alice"), frm=frm))
    world.tick(T1)
    assert pending_roulette(world, "alice") is not None


def test_the_token_only_in_envelope_to_and_an_upstream_dmarc_failure(world):
    to = reply_address(world, "alice")
    extra = (
        f"Envelope-to: {to}\r\nAuthentication-Results: mx.example.test; dmarc=pass\r\n"
        "Authentication-Results: list.example.org; dmarc=fail (p=none)\r\n"
    )
    deliver(world, raw_mail(to="players@list.example.org", extra=extra))
    world.tick(T1)
    assert pending_roulette(world, "alice") is not None


def multipart(to: str, *parts: tuple[str, str], kind: str = "alternative") -> bytes:
    body = "".join(f"--b\r\nContent-Type: {ctype}; charset=utf-8\r\n\r\n{text}\r\n" for ctype, text in parts)
    return (
        f"From: alice@example.test\r\nTo: {to}\r\nSubject: Re: x\r\nMessage-ID: <mp@example.test>\r\n"
        f'MIME-Version: 1.0\r\nContent-Type: multipart/{kind}; boundary="b"\r\n\r\n{body}--b--\r\n'
    ).encode()


def test_a_plain_part_mangled_by_the_client_does_not_hide_a_valid_html_part(world):
    plain = "ROULETTE\n*Winning colour* Silver\nGold 33 Silver 7 Black 0"  # no colons: incomplete
    html = "<p>ROULETTE<br>Winning colour: Silver<br>Gold: 33<br>Silver: 7<br>Black: 0</p>"
    deliver(world, multipart(reply_address(world, "alice"), ("text/plain", plain), ("text/html", html)))
    world.tick(T1)
    assert pending_roulette(world, "alice") == {"winning": "Silver", "points": {"Gold": 33, "Silver": 7, "Black": 0}}


def test_the_form_in_a_second_text_part_beside_an_image_is_read(world):
    deliver(
        world,
        multipart(
            reply_address(world, "alice"),
            ("text/plain", "Here is my roulette, with a photo of my cat:"),
            ("image/png", "iVBORw0KGgo="),
            ("text/plain", ROULETTE),
            kind="mixed",
        ),
    )
    world.tick(T1)
    assert pending_roulette(world, "alice") is not None


def test_an_html_form_edited_inside_the_blockquote_is_the_players_move(world):
    alice = world.client("alice")
    prompt = alice.latest()
    form = "".join(
        f"<div>{line}</div>"
        for line in prompt.text.replace("Winning colour: Gold", "Winning colour: Silver").splitlines()
    )
    html = f"<div>My move is in the form below.</div><blockquote>{form}</blockquote>"
    data = (
        f"From: alice@example.test\r\nTo: {prompt.reply_address}\r\nSubject: Re: x\r\nMessage-ID: <bq@example.test>\r\n"
        f"In-Reply-To: {prompt.message_id}\r\nMIME-Version: 1.0\r\n"
        f"Content-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n"
    ).encode()
    deliver(world, data)
    world.tick(T1)
    assert pending_roulette(world, "alice")["winning"] == "Silver"


def test_a_receipt_references_the_mail_the_player_answered_even_without_their_references(world):
    """Issue 20 (RFC 5322 3.6.4): a receipt's References are the parent's References plus
    its Message-ID; a client that writes only In-Reply-To still gets the step mail it
    answered into the chain."""
    alice = world.client("alice")
    prompt = alice.latest()
    raw = alice.compose_reply(prompt, ROULETTE, T1)
    raw = b"\n".join(line for line in raw.split(b"\n") if not line.startswith(b"References:"))
    assert b"In-Reply-To:" in raw and b"References:" not in raw
    deliver(world, raw)
    world.tick(T1)
    receipt = alice.latest()
    chain = str(receipt.message["References"]).split()
    sent_id = email.message_from_bytes(raw, policy=email.policy.default)["Message-ID"]
    assert prompt.message_id in chain and chain[-1] == sent_id


def test_two_processes_recording_the_same_inbox_problem_refresh_one_row(world, monkeypatch, caplog):
    """Two `referee tick` processes meeting the same unmovable mail both record its problem:
    the second's insert meets the first's row (the unique source) and refreshes it instead
    of logging an error (seen in the three-process test: a MOVE the other process had done)."""
    from referee.pipeline import ingest as ingest_module
    from referee.pipeline.ingest import Ingest, IngestReport

    steps = Ingest(world.store, source=None)  # type: ignore[arg-type]
    at = START + timedelta(hours=1)
    steps._problem(IngestReport(), "imap:inbox:7", "cannot be moved", at)  # the other process's row
    original_select = ingest_module.select
    calls = {"n": 0}

    def racing_select(*args, **kwargs):  # the first read misses the row, as if it came just after
        calls["n"] += 1
        query = original_select(*args, **kwargs)
        return query.where(InboxProblem.id < 0) if calls["n"] == 1 else query

    monkeypatch.setattr(ingest_module, "select", racing_select)
    with caplog.at_level(logging.WARNING, logger="referee.ingest"):
        steps._problem(IngestReport(), "imap:inbox:7", "cannot be moved", at + timedelta(minutes=1))
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    with world.store.unit_of_work() as session:
        [row] = session.scalars(select(InboxProblem))
        assert (row.source, row.count) == ("imap:inbox:7", 2) and calls["n"] == 2
