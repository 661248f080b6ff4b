from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email import message_from_bytes, policy
from typing import Any

import pytest

from referee.mail.compose import compose, make_message_id
from referee.mail.guards import LOOP_HEADER, automated_reason
from referee.mail.parse import parse_message

REFEREE = "referee@pbem.example.org"
LOOP = "pbem.example.org"
DATE = datetime(2024, 3, 12, 10, 15, tzinfo=timezone.utc)
FORM = "Round 3 of 10 — Match m-17\n\nBET:\nCALL:\n\n-- \nThe Referee\n"


def make(**overrides: Any) -> bytes:
    args: dict[str, Any] = dict(
        from_addr="referee+3x4kqz7mfw2hbpd@pbem.example.org",
        from_name="Referee",
        to_addr="alice.martin@gmail.com",
        to_name="Alice Martin",
        reply_to="referee+3x4kqz7mfw2hbpd@pbem.example.org",
        subject="[m-17] Round 3 of 10",
        text=FORM,
        message_id="20240312101500.m17-r3-seat3@pbem.example.org",
        date=DATE,
        loop_value=LOOP,
    )
    args.update(overrides)
    return compose(**args)


def test_headers_present() -> None:
    msg = message_from_bytes(
        make(
            in_reply_to="<abc@mail.gmail.com>",
            references=["x@y", "<abc@mail.gmail.com>"],
            auto_submitted="auto-replied",
        ),
        policy=policy.default,
    )
    assert msg["From"] == "Referee <referee+3x4kqz7mfw2hbpd@pbem.example.org>"
    assert msg["To"] == "Alice Martin <alice.martin@gmail.com>"
    assert msg["Reply-To"] == "referee+3x4kqz7mfw2hbpd@pbem.example.org"
    assert msg["Subject"] == "[m-17] Round 3 of 10"
    assert msg["Date"] == "Tue, 12 Mar 2024 10:15:00 +0000"
    assert msg["Message-ID"] == "<20240312101500.m17-r3-seat3@pbem.example.org>"
    assert msg["In-Reply-To"] == "<abc@mail.gmail.com>"
    assert msg["References"] == "<x@y> <abc@mail.gmail.com>"
    assert msg["Auto-Submitted"] == "auto-replied"
    assert msg[LOOP_HEADER] == LOOP
    assert msg["MIME-Version"] == "1.0"
    assert msg.get_content_type() == "text/plain"
    assert msg.get_content_charset() == "utf-8"


def test_optional_headers_absent_by_default() -> None:
    msg = message_from_bytes(make(reply_to=None), policy=policy.default)
    for name in ("Reply-To", "In-Reply-To", "References"):
        assert name not in msg
    assert msg["Auto-Submitted"] == "auto-generated"


def test_crlf_and_line_length() -> None:
    data = make(text="BET: " + "1" * 300 + "\n", subject="s" * 200)
    lines = data.split(b"\r\n")
    assert b"\n" not in b"".join(lines)
    assert all(len(line) <= 998 for line in lines)
    assert all(len(line) <= 78 for line in lines[lines.index(b"") + 1 :])


def test_round_trip_through_parse_message() -> None:
    data = make(in_reply_to="abc@mail.gmail.com", references=["abc@mail.gmail.com"])
    inbound = parse_message(data)
    assert inbound.message_id == "20240312101500.m17-r3-seat3@pbem.example.org"
    assert inbound.from_addr == "referee+3x4kqz7mfw2hbpd@pbem.example.org"
    assert inbound.from_name == "Referee"
    assert inbound.to_addrs == ("alice.martin@gmail.com",)
    assert inbound.subject == "[m-17] Round 3 of 10"
    assert inbound.in_reply_to == "abc@mail.gmail.com"
    assert inbound.references == ("abc@mail.gmail.com",)
    assert inbound.raw_body == FORM
    assert inbound.body == "Round 3 of 10 — Match m-17\n\nBET:\nCALL:"


def test_non_ascii_names_and_subject_are_encoded_and_survive() -> None:
    data = make(
        from_name="Le Référé, PBEM",
        to_name="Jürgen Weiß",
        subject="[m-17] Runde 3 — dein Zug, 第3ラウンド",
    )
    head = data.split(b"\r\n\r\n", 1)[0]
    assert head.isascii()
    inbound = parse_message(data)
    assert inbound.from_name == "Le Référé, PBEM"
    assert inbound.subject == "[m-17] Runde 3 — dein Zug, 第3ラウンド"
    msg = message_from_bytes(data, policy=policy.default)
    assert msg["To"].addresses[0].display_name == "Jürgen Weiß"


def test_long_and_non_ascii_lines_use_quoted_printable() -> None:
    long_text = "BET: " + "7" * 500 + "\nCALL: red\n"
    data = make(text=long_text)
    assert b"Content-Transfer-Encoding: quoted-printable" in data
    assert parse_message(data).raw_body == long_text

    accented = make(text="Réponse: oui\n")
    assert b"Content-Transfer-Encoding: quoted-printable" in accented
    assert parse_message(accented).body == "Réponse: oui"


def test_short_ascii_is_7bit() -> None:
    data = make(text="BET:\nCALL:\n")
    assert b"Content-Transfer-Encoding: 7bit" in data


def test_html_alternative() -> None:
    data = make(html="<p>Round 3 &mdash; <b>BET:</b></p>")
    msg = message_from_bytes(data, policy=policy.default)
    assert msg.get_content_type() == "multipart/alternative"
    parts = list(msg.iter_parts())
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    assert all("MIME-Version" not in p for p in parts)
    assert parse_message(data).raw_body == FORM


def test_deterministic() -> None:
    assert make() == make()
    assert make(html="<p>x</p>") == make(html="<p>x</p>")
    assert make(html="<p>x</p>") != make(html="<p>y</p>")


def test_date_is_written_in_utc() -> None:
    paris = DATE.astimezone(timezone(timedelta(hours=1)))
    assert make(date=paris) == make()


def test_naive_date_is_rejected() -> None:
    with pytest.raises(ValueError):
        make(date=datetime(2024, 3, 12, 10, 15))


def test_bad_auto_submitted_is_rejected() -> None:
    with pytest.raises(ValueError):
        make(auto_submitted="yes please")


def test_extra_headers() -> None:
    msg = message_from_bytes(
        make(extra_headers={"X-Referee-Match": "m-17", "List-Unsubscribe": "<mailto:x@y>"}),
        policy=policy.default,
    )
    assert msg["X-Referee-Match"] == "m-17"
    with pytest.raises(ValueError):
        make(extra_headers={"message-id": "<evil@x>"})


def test_newlines_in_headers_cannot_inject() -> None:
    data = make(subject="Round 3\r\nBcc: victim@example.org")
    msg = message_from_bytes(data, policy=policy.default)
    assert "Bcc" not in msg
    assert msg["Subject"] == "Round 3 Bcc: victim@example.org"


@pytest.mark.parametrize("auto_submitted", ["auto-generated", "auto-replied"])
def test_guards_never_answer_our_own_mail(auto_submitted: str) -> None:
    msg = message_from_bytes(make(auto_submitted=auto_submitted), policy=policy.default)
    assert automated_reason(msg, [REFEREE], LOOP) == "our-loop-header"
    # Even relayed by something that drops our loop header:
    del msg[LOOP_HEADER]
    assert automated_reason(msg, [REFEREE], LOOP) == "own-address"
    assert automated_reason(msg, [], LOOP) == "auto-submitted"


def test_make_message_id() -> None:
    first = make_message_id("m-17/round-3/seat-3/form", "pbem.example.org")
    assert first == make_message_id("m-17/round-3/seat-3/form", "pbem.example.org")
    local, domain = first.split("@")
    assert domain == "pbem.example.org"
    digest, readable = local.split(".", 1)
    assert len(digest) == 16 and readable == "m-17-round-3-seat-3-form"
    # keys that sanitise alike still differ
    assert make_message_id("a/b", "d") != make_message_id("a b", "d")
    assert make_message_id("", "d").count(".") == 0
    assert make_message_id("é" * 200, "d").isascii()
    odd = make_message_id("..a..<b>@c ", "d")
    assert "<" not in odd and ".." not in odd and odd.count("@") == 1


def test_long_bracketed_subject_stays_on_the_subject_line() -> None:
    subject = "[Stationary Roulette] Preparation phase is open - prepare your first roulette"
    data = make(subject=subject)
    assert f"Subject: {subject}\r\n".encode() in data
    assert parse_message(data).subject == subject


def test_a_mail_delivered_after_its_deadline_is_plain_text_with_the_late_note_first():
    """issue 25: referee.pipeline.deliver sends a mail past the deadline it names with a note
    first (after the greeting) and "Delivered late:" before its subject, without its HTML part
    and calendar event; every other header as it was; the same bytes when noted again."""
    from referee.mail.compose import LATE_NOTE, LATE_SUBJECT, with_late_note

    original = compose(
        from_addr="referee@example.org",
        from_name="Referee",
        to_addr="zoe@example.org",
        to_name="Zoë",
        reply_to="referee+t@example.org",
        subject="[Stationary Roulette m1] Round 1 of 10 is open for Zoë",
        text="Dear Zoë,\n\nNow Round 1 of 10 is open until Wed 2 Dec 2026, 19:00 CET.\n\n-- \nThe referee\n",
        html="<p>Now Round 1</p>",
        message_id="k1@example.org",
        date=datetime(2026, 12, 1, 18, tzinfo=timezone.utc),
        in_reply_to="p1@example.org",
        loop_value="example.org",
        attachments=[("application/ics", "deadline.ics", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n")],
    )
    noted = with_late_note(original)
    assert with_late_note(noted) == noted
    msg = message_from_bytes(noted, policy=policy.default)
    assert not msg.is_multipart() and msg.get_content_type() == "text/plain"
    assert str(msg["Subject"]) == f"{LATE_SUBJECT} [Stationary Roulette m1] Round 1 of 10 is open for Zoë"
    before = message_from_bytes(original, policy=policy.default)
    for name in ("From", "To", "Reply-To", "Date", "Message-ID", "In-Reply-To", "References", "Auto-Submitted"):
        assert msg[name] == before[name], name
    text = msg.get_content().replace("\r\n", "\n")
    assert text.startswith(f"Dear Zoë,\n\n{LATE_NOTE}\n\nNow Round 1 of 10 is open until")
    assert all(len(line) <= 78 for line in noted.decode("ascii").split("\r\n"))
