from __future__ import annotations

from email import message_from_bytes, policy
from email.message import Message
from pathlib import Path

import pytest

from referee.mail.guards import LOOP_HEADER, RULES, automated_reason, normalise_address

FIXTURES = Path(__file__).parent / "fixtures"
OWN = ("referee@pbem.example.org", "Admin@PBEM.example.org")
LOOP = "pbem.example.org"

PLAYER_HEADERS = (
    "From: Alice Martin <alice.martin@gmail.com>\n"
    "To: Referee <referee+3x4kqz7mfw2hbpd@pbem.example.org>\n"
    "Subject: Re: [m-17] Round 3\n"
    "Message-ID: <abc@mail.gmail.com>\n"
    "Return-Path: <alice.martin@gmail.com>\n"
)


def mail(extra: str = "", *, base: str = PLAYER_HEADERS, body: str = "BET: 5\n") -> Message:
    return message_from_bytes(f"{extra}{base}\n{body}".encode(), policy=policy.default)


def reason(msg: Message) -> str | None:
    return automated_reason(msg, OWN, LOOP)


def fixture(name: str) -> Message:
    return message_from_bytes((FIXTURES / name).read_bytes(), policy=policy.default)


# --------------------------------------------------------------------------- players pass


def test_plain_player_mail_passes() -> None:
    assert reason(mail()) is None


@pytest.mark.parametrize(
    "name",
    [
        "gmail_reply.eml", "outlook_reply.eml", "outlook_html_only.eml", "apple_mail_reply.eml",
        "iphone_reply.eml", "thunderbird_reply.eml", "base64_utf8.eml", "latin1_qp.eml",
        "html_only.eml", "iso2022jp.eml", "attachment.eml",
    ],
)
def test_real_player_replies_pass(name: str) -> None:
    assert reason(fixture(name)) is None


def test_auto_submitted_no_passes() -> None:
    assert reason(mail("Auto-Submitted: no\n")) is None


def test_x_auto_response_suppress_is_not_an_auto_reply_marker() -> None:
    # Outlook sets it on ordinary mail too; it asks others not to auto-reply.
    assert reason(mail("X-Auto-Response-Suppress: All\n")) is None


def test_other_referee_loop_value_passes() -> None:
    assert reason(mail(f"{LOOP_HEADER}: other-referee.example\n")) is None


def test_precedence_first_class_passes() -> None:
    assert reason(mail("Precedence: first-class\n")) is None


def test_return_path_with_address_passes() -> None:
    assert reason(mail()) is None  # PLAYER_HEADERS has one


# --------------------------------------------------------------------------- one test per rule


def test_rule_names() -> None:
    assert [name for name, _ in RULES] == [
        "our-loop-header", "own-address", "delivery-report", "auto-submitted",
        "autoresponder-header", "precedence", "list-traffic", "null-return-path",
        "mailer-daemon",
    ]


@pytest.mark.parametrize(
    "value", ["auto-generated", "auto-replied", "auto-notified", "Auto-Replied; owner=x"]
)
def test_auto_submitted(value: str) -> None:
    assert reason(mail(f"Auto-Submitted: {value}\n")) == "auto-submitted"


@pytest.mark.parametrize("value", ["bulk", "list", "junk", "auto_reply", " Bulk "])
def test_precedence(value: str) -> None:
    assert reason(mail(f"Precedence: {value}\n")) == "precedence"


@pytest.mark.parametrize("value", ["<>", "< >"])
def test_null_return_path(value: str) -> None:
    base = PLAYER_HEADERS.replace("Return-Path: <alice.martin@gmail.com>\n", "")
    assert reason(mail(f"Return-Path: {value}\n", base=base)) == "null-return-path"


@pytest.mark.parametrize(
    "header",
    [
        "List-Id: Players <players.pbem.example.org>",
        "List-Unsubscribe: <mailto:leave@lists.example.org>",
        "List-Post: <mailto:players@lists.example.org>",
        "List-Help: <mailto:help@lists.example.org>",
        "List-Subscribe: <mailto:join@lists.example.org>",
        "List-Owner: <mailto:owner@lists.example.org>",
        "List-Archive: <https://lists.example.org/archive/>",
        "X-Mailing-List: players@lists.example.org",
        "Mailing-List: contact players-help@lists.example.org; run by ezmlm",
    ],
)
def test_list_traffic(header: str) -> None:
    assert reason(mail(f"{header}\n")) == "list-traffic"


def test_our_loop_header() -> None:
    assert reason(mail(f"{LOOP_HEADER}: {LOOP}\n")) == "our-loop-header"


@pytest.mark.parametrize(
    "sender",
    [
        "referee@pbem.example.org",
        "Referee <REFEREE@PBEM.EXAMPLE.ORG>",
        "referee+3x4kqz7mfw2hbpd@pbem.example.org",
        "admin+anything@pbem.example.org",
    ],
)
def test_own_address(sender: str) -> None:
    base = PLAYER_HEADERS.replace("From: Alice Martin <alice.martin@gmail.com>", f"From: {sender}")
    assert reason(mail(base=base)) == "own-address"


def test_own_address_needs_same_domain() -> None:
    base = PLAYER_HEADERS.replace("alice.martin@gmail.com>", "referee@elsewhere.example>")
    assert reason(mail(base=base)) is None


@pytest.mark.parametrize(
    "sender",
    [
        "MAILER-DAEMON@mx.example.net (Mail Delivery System)",
        "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
        "postmaster@example.net",
        "MAILER-DAEMON",
        "Shop <noreply@shop.example>",
        "no-reply@accounts.example",
        "do-not-reply@example.com",
    ],
)
def test_mailer_daemon(sender: str) -> None:
    base = PLAYER_HEADERS.replace("From: Alice Martin <alice.martin@gmail.com>", f"From: {sender}")
    assert reason(mail(base=base)) == "mailer-daemon"


def test_delivery_report_content_types() -> None:
    report = (
        "MIME-Version: 1.0\n"
        'Content-Type: multipart/report; report-type=disposition-notification; boundary="b"\n'
    )
    body = (
        "--b\nContent-Type: text/plain\n\nYour message was displayed.\n"
        "--b\nContent-Type: message/disposition-notification\n\nFinal-Recipient: rfc822; a@b\n"
        "--b--\n"
    )
    assert reason(mail(report, body=body)) == "delivery-report"

    status = "MIME-Version: 1.0\nContent-Type: message/delivery-status\n"
    status_body = "Reporting-MTA: dns; mx.example\n\nFinal-Recipient: rfc822; a@b\nAction: failed\n"
    assert reason(mail(status, body=status_body)) == "delivery-report"


def test_delivery_report_is_decided_from_the_top_level_content_type() -> None:
    # The guards run on the header-only message, before any body byte is read, so a
    # report is recognised by the top-level type alone (a DSN is multipart/report,
    # RFC 3464); the parts of a multipart/mixed are not walked.
    nested = 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="m"\n'
    nested_body = (
        "--m\nContent-Type: text/plain\n\nsee below\n"
        "--m\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.example\n\n"
        "Final-Recipient: rfc822; a@b\nAction: failed\nStatus: 5.0.0\n--m--\n"
    )
    assert reason(mail(nested, body=nested_body)) is None


@pytest.mark.parametrize(
    "header", ["X-Autoreply: yes", "X-Autorespond: Out of office", "X-Autoresponder: 1"]
)
def test_autoresponder_header(header: str) -> None:
    assert reason(mail(f"{header}\n")) == "autoresponder-header"


# --------------------------------------------------------------------------- realistic samples


def test_postfix_bounce() -> None:
    assert reason(fixture("bounce_dsn.eml")) == "delivery-report"


def test_bounce_without_report_structure_is_still_caught() -> None:
    # An old-style bounce: plain text, but sent with a null sender by the daemon.
    msg = mail(
        "Return-Path: <>\n",
        base=(
            "From: Mail Delivery System <MAILER-DAEMON@mx.example.net>\n"
            "To: referee@pbem.example.org\nSubject: Mail delivery failed\n"
        ),
    )
    assert reason(msg) == "null-return-path"


def test_exchange_out_of_office() -> None:
    assert reason(fixture("out_of_office_exchange.eml")) == "auto-submitted"


def test_gmail_vacation_responder() -> None:
    assert reason(fixture("gmail_vacation.eml")) == "auto-submitted"


# --------------------------------------------------------------------------- robustness


def test_compat32_messages_work_too() -> None:
    raw = f"Precedence: bulk\n{PLAYER_HEADERS}\nhi\n".encode()
    assert reason(message_from_bytes(raw)) == "precedence"


def test_garbage_headers_do_not_raise() -> None:
    raw = (FIXTURES / "garbage.eml").read_bytes()
    assert reason(message_from_bytes(raw, policy=policy.default)) is None


def test_no_own_addresses_and_empty_loop_value_disable_those_rules() -> None:
    msg = mail(f"{LOOP_HEADER}: \n")
    assert automated_reason(msg, [], "") is None


@pytest.mark.parametrize(
    ("address", "normal"),
    [
        ("Referee+abc@PBEM.example.org", "referee@pbem.example.org"),
        ("<x@y>", "x@y"),
        ("MAILER-DAEMON", "mailer-daemon"),
        ("a+b+c@d", "a@d"),
    ],
)
def test_normalise_address(address: str, normal: str) -> None:
    assert normalise_address(address) == normal


@pytest.mark.parametrize("value, failed", [
    ("mx.example.org; spf=pass smtp.mailfrom=a.test; dkim=pass; dmarc=pass (p=none)", False),
    ("mx.example.org; spf=fail smtp.mailfrom=a.test; dmarc=fail (p=reject) header.from=a.test", True),
    ("mx.example.org; DMARC = FAIL", True),
    ("mx.example.org; spf=softfail; dmarc=none", False),
], ids=["pass", "fail", "case-and-spaces", "none"])
def test_sender_authentication_failed_reads_dmarc_verdicts(value, failed):
    from email import message_from_string

    from referee.mail.guards import sender_authentication_failed

    msg = message_from_string(f"From: a@a.test\nAuthentication-Results: {value}\n\nhi\n")
    assert sender_authentication_failed(msg) is failed
