"""Bounce addresses (signed per outbox row) and delivery reports (RFC 3464) read: samples
written as Postfix, Exim, Exchange Online and Gmail write them, a delay, plain bounces,
forged addresses, and hostile reports (bounded, linear, never raising)."""

from __future__ import annotations

import base64
import time
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.mail import tokens
from referee.mail.auth import authenticate
from referee.mail.bounces import (
    RECIPIENT_LIMIT,
    REPORT_LIMIT,
    BounceAddress,
    bounce_address,
    find_bounce_addresses,
    looks_like_report,
    read_bounce,
    read_plain_bounce,
    read_report,
    smtp_status,
    status_of,
)
from referee.mail.guards import automated_reason
from referee.mail.parse import parse_headers
from tests.timing import growth

SECRET = b"0123456789abcdef0123456789abcdef"
LOCAL, DOMAIN = "referee", "example.test"


def bounce(outbox_id: int, secret: bytes = SECRET) -> str:
    return bounce_address(secret, LOCAL, DOMAIN, outbox_id)


def crlf(text: str) -> bytes:
    return text.replace("\r\n", "\n").replace("\n", "\r\n").encode("utf-8")


# ---------------------------------------------------------------------------- samples

POSTFIX = """\
Return-Path: <>
Delivered-To: {to}
Received: by mailstack.localhost (Postfix) id 4Tq2; Tue,  1 Dec 2026 18:00:07 +0000 (UTC)
Date: Tue,  1 Dec 2026 18:00:07 +0000 (UTC)
From: MAILER-DAEMON@mailstack.localhost (Mail Delivery System)
Subject: Undelivered Mail Returned to Sender
To: {to}
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
	boundary="4Tq2.1796148007/mailstack.localhost"
Message-Id: <20261201180007.4Tq2@mailstack.localhost>

This is a MIME-encapsulated message.

--4Tq2.1796148007/mailstack.localhost
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mailstack.localhost.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients. It's attached below.

<lost@example.test>: host 127.0.0.1[127.0.0.1] said: 550 5.1.1
    <lost@example.test> User doesn't exist: lost@example.test (in reply to
    RCPT TO command)

--4Tq2.1796148007/mailstack.localhost
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mailstack.localhost
X-Postfix-Queue-ID: 4Tq2
X-Postfix-Sender: rfc822; {to}
Arrival-Date: Tue,  1 Dec 2026 18:00:06 +0000 (UTC)

Final-Recipient: rfc822; lost@example.test
Original-Recipient: rfc822;lost@example.test
Action: failed
Status: 5.1.1
Remote-MTA: dns; 127.0.0.1
Diagnostic-Code: smtp; 550 5.1.1 <lost@example.test> User doesn't exist:
    lost@example.test

--4Tq2.1796148007/mailstack.localhost
Content-Description: Undelivered Message Headers
Content-Type: text/rfc822-headers

From: Referee <referee@example.test>
To: Lost <lost@example.test>
Subject: [Stationary Roulette m1] Preparation phase is open

--4Tq2.1796148007/mailstack.localhost--
"""

POSTFIX_DELAYED = """\
Return-Path: <>
From: MAILER-DAEMON@mx.example.net (Mail Delivery System)
Subject: Delayed Mail (still being retried)
To: {to}
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.example.net.

####################################################################
# THIS IS A WARNING ONLY.  YOU DO NOT NEED TO RESEND YOUR MESSAGE. #
####################################################################

--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net
Arrival-Date: Tue,  1 Dec 2026 18:00:06 +0000 (UTC)

Final-Recipient: rfc822; alice@example.net
Action: delayed
Status: 4.4.1
Diagnostic-Code: X-Postfix; connect to mx.alice.example[192.0.2.1]:25: Connection timed out
Will-Retry-Until: Tue,  6 Dec 2026 18:00:06 +0000 (UTC)

--B--
"""

EXIM = """\
Return-path: <>
From: Mail Delivery System <Mailer-Daemon@mail.example.net>
To: {to}
Subject: Mail delivery failed: returning message to sender
Auto-Submitted: auto-replied
X-Failed-Recipients: carol@example.net
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary=1796148007-eximdsn-1804289383

--1796148007-eximdsn-1804289383
Content-type: text/plain; charset=us-ascii

This message was created automatically by mail delivery software.

A message that you sent could not be delivered to one or more of its
recipients. This is a permanent error. The following address(es) failed:

  carol@example.net
    host mx.example.net [192.0.2.9]
    SMTP error from remote mail server after RCPT TO:<carol@example.net>:
    550 5.1.1 <carol@example.net>: Recipient address rejected: User unknown

--1796148007-eximdsn-1804289383
Content-type: message/delivery-status

Reporting-MTA: dns; mail.example.net

action: Failed
final-recipient: rfc822;CAROL@example.net
status: 5.0.0
Remote-MTA: dns; mx.example.net
Diagnostic-Code: smtp; 550 5.1.1 <carol@example.net>: Recipient address rejected: User unknown

--1796148007-eximdsn-1804289383
Content-type: message/rfc822

From: Referee <referee@example.test>
To: carol@example.net
Subject: a mail

Dear Carol,
--1796148007-eximdsn-1804289383--
"""

EXCHANGE = """\
Received: from AM0PR10MB1234.EURPRD10.PROD.OUTLOOK.COM with mapi id 15.20.7452.049; Tue, 1 Dec 2026 18:00:06 +0000
From: Microsoft Outlook
 <MicrosoftExchange329e71ec88ae4615bbc36ab6ce41109e@contoso.example>
To: <{to}>
Date: Tue, 1 Dec 2026 18:00:06 +0000
Subject: Undeliverable: [Stationary Roulette m1] Preparation phase is open
Content-Type: multipart/report; report-type=delivery-status;
	boundary="0ccf0b43-9d7e-4d3c-9a44-2c5f1f1f1f1f"
X-MS-Exchange-Message-Is-Ndr:
Auto-Submitted: auto-replied
MIME-Version: 1.0

--0ccf0b43-9d7e-4d3c-9a44-2c5f1f1f1f1f
Content-Type: multipart/alternative; differences=Content-Type;
	boundary="5c0a0b43-9d7e-4d3c-9a44-2c5f2f2f2f2f"

--5c0a0b43-9d7e-4d3c-9a44-2c5f2f2f2f2f
Content-Type: text/plain; charset="us-ascii"
Content-Transfer-Encoding: quoted-printable

Your message to bob@contoso.example couldn't be delivered.
bob wasn't found at contoso.example.

--5c0a0b43-9d7e-4d3c-9a44-2c5f2f2f2f2f
Content-Type: text/html; charset="us-ascii"
Content-Transfer-Encoding: quoted-printable

<html><body><b>bob</b> wasn't found at contoso.example.</body></html>

--5c0a0b43-9d7e-4d3c-9a44-2c5f2f2f2f2f--

--0ccf0b43-9d7e-4d3c-9a44-2c5f1f1f1f1f
Content-Type: message/delivery-status

Reporting-MTA: dns;AM0PR10MB1234.EURPRD10.PROD.OUTLOOK.COM
Received-From-MTA: dns;EUR01-VE1-obe.outbound.protection.outlook.com
Arrival-Date: Tue, 1 Dec 2026 18:00:05 +0000

Original-Recipient: rfc822;bob@contoso.example
Final-Recipient: rfc822;bob@contoso.example
Action: failed
Status: 5.1.10
Diagnostic-Code: smtp;550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not
 found by SMTP address lookup
X-Display-Name: Bob

--0ccf0b43-9d7e-4d3c-9a44-2c5f1f1f1f1f
Content-Type: message/rfc822

From: Referee <referee@example.test>
To: Bob <bob@contoso.example>
Subject: [Stationary Roulette m1] Preparation phase is open

Dear Bob,

--0ccf0b43-9d7e-4d3c-9a44-2c5f1f1f1f1f--
"""

GMAIL_STATUS = """\
Reporting-MTA: dns; googlemail.com
Received-From-MTA: dns; referee@example.test
Arrival-Date: Tue, 01 Dec 2026 10:00:05 -0800 (PST)
X-Original-Message-ID: <0d1f8a2b3c4e5f60.step-m1-alice@example.test>

Final-Recipient: rfc822; nobody.here@gmail.com
Action: failed
Status: 5.1.1
Remote-MTA: dns; gmail-smtp-in.l.google.com. (142.250.1.26, the server for the
 domain gmail.com.)
Diagnostic-Code: smtp; 550-5.1.1 The email account that you tried to reach does
 not exist. Please try 550-5.1.1 double-checking the recipient's email address
 for typos or 550-5.1.1 unnecessary spaces. 550 5.1.1
 https://support.google.com/mail/?p=NoSuchUser a4csp1.42 - gsmtp
Last-Attempt-Date: Tue, 01 Dec 2026 10:00:06 -0800 (PST)
"""

GMAIL = (
    """\
Return-Path: <>
Received: by 2002:a05:6870:e0c4:b0:1e9:9b83:2f1e with SMTP id a4csp1; Tue, 01 Dec 2026 10:00:06 -0800 (PST)
From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>
To: {to}
Auto-Submitted: auto-replied
Subject: Delivery Status Notification (Failure)
Message-ID: <8f62f1fcfd3c.443759@mx.google.com>
Date: Tue, 01 Dec 2026 10:00:06 -0800 (PST)
MIME-Version: 1.0
Content-Type: multipart/report; boundary="000000000000a1"; report-type=delivery-status

--000000000000a1
Content-Type: multipart/related; boundary="000000000000b2"

--000000000000b2
Content-Type: multipart/alternative; boundary="000000000000c3"

--000000000000c3
Content-Type: text/plain; charset="UTF-8"

** Address not found **

Your message wasn't delivered to nobody.here@gmail.com because the address
couldn't be found, or is unable to receive mail.

--000000000000c3
Content-Type: text/html; charset="UTF-8"

<html><body><h2>Address not found</h2></body></html>

--000000000000c3--
--000000000000b2
Content-Type: image/png; name="icon.png"
Content-Disposition: attachment; filename="icon.png"
Content-Transfer-Encoding: base64

iVBORw0KGgo=
--000000000000b2--
--000000000000a1
Content-Type: message/delivery-status
Content-Transfer-Encoding: base64

"""
    + base64.encodebytes(GMAIL_STATUS.encode()).decode()
    + """
--000000000000a1
Content-Type: message/rfc822

From: Referee <referee@example.test>
To: nobody.here@gmail.com
Subject: [Stationary Roulette m1] Preparation phase is open

Dear Nobody,

--000000000000a1--
"""
)

MDN = """\
From: Alice <alice@example.test>
To: {to}
Subject: Read: your mail
MIME-Version: 1.0
Content-Type: multipart/report; report-type=disposition-notification; boundary="M"

--M
Content-Type: text/plain

Your message was displayed.
--M
Content-Type: message/disposition-notification

Final-Recipient: rfc822;alice@example.test
Disposition: manual-action/MDN-sent-manually; displayed
--M--
"""

QMAIL = """\
Return-Path: <>
From: MAILER-DAEMON@mail.example.net
To: {to}
Subject: failure notice

Hi. This is the qmail-send program at mail.example.net.
I'm afraid I wasn't able to deliver your message to the following addresses.
This is a permanent error; I've given up. Sorry it didn't work out.

<dave@example.net>:
Sorry, no mailbox here by that name. (#5.1.1)
"""

OUT_OF_OFFICE = """\
Return-Path: <>
From: Alice <alice@example.test>
To: {to}
Subject: Out of office: [Stationary Roulette m1] Preparation phase is open
Auto-Submitted: auto-replied

I am away until Monday.
"""


def sample(template: str, to: str = "referee@example.test") -> bytes:
    return crlf(template.format(to=to))


# ---------------------------------------------------------------------------- bounce addresses


def test_a_bounce_address_names_its_outbox_row_and_reaches_the_referee_mailbox() -> None:
    address = bounce(1234)
    local_part, _, domain = address.partition("@")
    assert domain == DOMAIN and local_part.startswith("referee+bounce-1234-")
    assert len(local_part) <= tokens.MAX_LOCAL_PART
    assert address == bounce(1234)  # deterministic
    assert bounce(1235) != address
    found = find_bounce_addresses(SECRET, ["Someone <x@y.example>", address], LOCAL, DOMAIN)
    assert found == [BounceAddress(address, 1234)]


def test_bounce_addresses_are_read_case_insensitively_once_each_and_bounded() -> None:
    address = bounce(7)
    found = find_bounce_addresses(SECRET, [address.upper(), f"<{address}>", address], LOCAL, DOMAIN)
    assert found == [BounceAddress(address, 7)]
    many = [bounce(i) for i in range(50)]
    assert len(find_bounce_addresses(SECRET, many, LOCAL, DOMAIN)) == 8


@pytest.mark.parametrize(
    "forged",
    [
        bounce(7, secret=b"another-secret-0123456789"),  # signed with another secret
        bounce(7).replace("bounce-7-", "bounce-8-"),  # another row's id under row 7's signature
        bounce(7)[:-15] + "@" + DOMAIN,  # signature cut short
        bounce(7).replace("@", "x@"),  # one character too many
        f"referee+bounce-99999999999-{'a' * 10}@{DOMAIN}",  # an id past any row's
        f"referee+bounce--{'a' * 10}@{DOMAIN}",
        f"referee+bounce-07-{'a' * 10}@{DOMAIN}",
        "referee+bounce-@example.test",
        "referee+bounce-" + "1" * 5000 + "@example.test",  # absurd: no query, no cost
    ],
)
def test_a_forged_or_damaged_bounce_address_names_no_row(forged: str) -> None:
    (found,) = find_bounce_addresses(SECRET, [forged], LOCAL, DOMAIN)
    assert found.outbox_id is None


def test_only_the_referee_s_own_bounce_addresses_count() -> None:
    genuine = bounce(3)
    others = [genuine.replace(DOMAIN, "example.org"), genuine.replace("referee+", "alice+"), "referee@example.test"]
    assert find_bounce_addresses(SECRET, others, LOCAL, DOMAIN) == []


def test_bounce_addresses_are_no_reply_addresses_damaged_or_not() -> None:
    """A mail to a bounce address is never mistaken for one to a damaged reply address (which
    a registered player would be answered about)."""
    addresses = [bounce(3), f"referee+bounce-3-{'a' * 10}@{DOMAIN}"]
    assert tokens.tokens_from_addresses(addresses, LOCAL, DOMAIN) == []
    assert tokens.detail_addresses(addresses, LOCAL, DOMAIN) == []
    head = parse_headers(crlf(f"From: Alice <alice@example.test>\nTo: {bounce(3)}\nSubject: hi\n\nhello\n"))
    claim = authenticate(head, secret=SECRET, local=LOCAL, domain=DOMAIN, find_seat=lambda _: None)
    assert claim.kind == "general"  # not "damaged"; the judge takes such mail before authentication
    # an ordinary damaged reply address still is one
    assert tokens.detail_addresses([f"referee+bounced@{DOMAIN}"], LOCAL, DOMAIN) == [f"referee+bounced@{DOMAIN}"]


def test_bounce_address_bounds() -> None:
    with pytest.raises(ValueError):
        bounce_address(SECRET, LOCAL, DOMAIN, -1)
    with pytest.raises(ValueError):
        bounce_address(SECRET, "r" * 40, DOMAIN, 2**31 - 1)  # over 64 octets


# ---------------------------------------------------------------------------- reports


def test_postfix_dsn() -> None:
    raw = sample(POSTFIX, to=bounce(12))
    head = parse_headers(raw)
    assert looks_like_report(head)
    report = read_report(raw)
    assert report is not None and report.kind == "dsn" and not report.truncated
    assert report.reporting_mta == "mailstack.localhost"
    (recipient,) = report.recipients
    assert recipient.final_recipient == recipient.original_recipient == recipient.address == "lost@example.test"
    assert (recipient.action, recipient.status) == ("failed", "5.1.1")
    assert recipient.diagnostic == "550 5.1.1 <lost@example.test> User doesn't exist: lost@example.test"
    assert recipient.hard
    assert read_bounce(raw, head) == report


def test_postfix_delay_is_recorded_but_no_hard_bounce() -> None:
    report = read_report(sample(POSTFIX_DELAYED))
    (recipient,) = report.recipients
    assert (recipient.action, recipient.status) == ("delayed", "4.4.1")
    assert recipient.address == "alice@example.net"
    assert "Connection timed out" in recipient.diagnostic
    assert not recipient.hard


def test_exim_dsn_field_names_in_any_case_and_the_first_group_without_recipient() -> None:
    report = read_report(sample(EXIM))
    assert report.reporting_mta == "mail.example.net"
    (recipient,) = report.recipients
    assert recipient.final_recipient == "carol@example.net"  # lowercased
    assert (recipient.action, recipient.status) == ("failed", "5.0.0") and recipient.hard
    assert recipient.diagnostic.startswith("550 5.1.1 <carol@example.net>")


def test_exchange_ndr_with_its_alternative_part_first() -> None:
    raw = sample(EXCHANGE)
    report = read_report(raw)
    (recipient,) = report.recipients
    assert recipient.address == "bob@contoso.example"
    assert (recipient.action, recipient.status) == ("failed", "5.1.10")
    assert recipient.diagnostic == (
        "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup"
    )
    assert report.reporting_mta == "AM0PR10MB1234.EURPRD10.PROD.OUTLOOK.COM"


def test_gmail_dsn_nested_and_base64() -> None:
    report = read_report(sample(GMAIL))
    (recipient,) = report.recipients
    assert recipient.final_recipient == "nobody.here@gmail.com" and recipient.original_recipient == ""
    assert (recipient.action, recipient.status) == ("failed", "5.1.1")
    assert "The email account that you tried to reach does not exist" in recipient.diagnostic
    assert "\n" not in recipient.diagnostic  # one line


def test_a_read_receipt_is_no_delivery_report() -> None:
    raw = sample(MDN)
    assert looks_like_report(parse_headers(raw))
    assert read_report(raw) is None
    assert read_bounce(raw, parse_headers(raw)) is None


def test_several_recipients_each_with_its_own_fields() -> None:
    groups = "".join(
        f"Final-Recipient: rfc822; p{i}@example.net\nAction: {'failed' if i % 2 else 'delayed'}\n"
        f"Status: {'5.2.2' if i % 2 else '4.2.2'}\n\n"
        for i in range(4)
    )
    raw = crlf(
        "From: MAILER-DAEMON@x.example\nTo: referee@example.test\nSubject: s\n"
        'Content-Type: multipart/report; report-type=delivery-status; boundary="b"\n\n'
        f"--b\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; x.example\n\n{groups}--b--\n"
    )
    report = read_report(raw)
    assert [r.address for r in report.recipients] == [f"p{i}@example.net" for i in range(4)]
    assert [r.hard for r in report.recipients] == [False, True, False, True]


# ---------------------------------------------------------------------------- plain bounces


def test_a_plain_bounce_from_a_mail_system_is_one_failure_with_the_status_of_its_text() -> None:
    raw = sample(QMAIL)
    head = parse_headers(raw)
    assert read_report(raw) is None
    report = read_plain_bounce(raw, head)
    assert report.kind == "plain"
    (recipient,) = report.recipients
    assert (recipient.action, recipient.status, recipient.address) == ("failed", "5.1.1", "")
    assert "no mailbox here by that name" in recipient.diagnostic and recipient.hard
    assert read_bounce(raw, head) == report


def test_a_plain_delay_warning_is_no_hard_bounce() -> None:
    raw = crlf(
        "From: Mail Delivery System <MAILER-DAEMON@mx.example.net>\nTo: referee@example.test\n"
        "Subject: Warning: message delayed\n\nStill trying; will retry for 4 more days.\n"
    )
    (recipient,) = read_plain_bounce(raw, parse_headers(raw)).recipients
    assert recipient.action == "delayed" and not recipient.hard
    raw = crlf("From: postmaster@mx.example.net\nTo: r@x\nSubject: x\n\n421 4.4.2 connection dropped\n")
    (recipient,) = read_plain_bounce(raw, parse_headers(raw)).recipients
    assert (recipient.action, recipient.status) == ("delayed", "4.4.2")


def test_an_auto_reply_with_a_null_return_path_is_no_bounce() -> None:
    """Out-of-office replies go to the envelope sender with a null return path too (RFC 3834):
    they are no delivery failure."""
    raw = sample(OUT_OF_OFFICE, to=bounce(5))
    assert read_bounce(raw, parse_headers(raw)) is None
    raw = crlf("From: Alice <alice@example.test>\nSubject: Undeliverable: x\n\n550 5.1.1 sorry\n")
    assert read_bounce(raw, parse_headers(raw)) is None  # a bounce's subject alone: a person wrote it
    # a null return path and a bounce's subject: a mail system's bounce, whatever the From says
    for head in ("Return-Path: <>\nFrom: Exchange <alice@example.test>\n", "Return-Path: <>\n"):
        raw = crlf(f"{head}Subject: Undelivered Mail Returned to Sender\n\n550 5.1.1 no\n")
        assert read_bounce(raw, parse_headers(raw)).recipients[0].status == "5.1.1"


def test_status_codes() -> None:
    assert status_of("5.1.1") == "5.1.1" and status_of(" 4.4.7 (delivery expired)") == "4.4.7"
    assert status_of("5.1.10") == "5.1.10" and status_of("x 5.1.1") == "" and status_of("") == ""
    assert smtp_status("550 5.1.1 <gone@example.test>: Recipient address rejected") == "5.1.1"
    assert smtp_status("554 transaction failed") == "5.0.0"
    assert smtp_status("ValueError: no usable address") == ""
    assert smtp_status("550 from 127.0.0.1: no") == "5.0.0"  # an address is no status code


# ---------------------------------------------------------------------------- hostile reports


def _report(status_text: str, preamble: str = "") -> bytes:
    return (
        "From: MAILER-DAEMON@x.example\nTo: referee@example.test\nSubject: s\n"
        'Content-Type: multipart/report; report-type=delivery-status; boundary="b"\n\n'
        f"{preamble}--b\nContent-Type: message/delivery-status\n\n{status_text}\n--b--\n"
    ).encode("utf-8", "surrogateescape")


def test_a_report_of_thousands_of_recipients_is_read_only_so_far() -> None:
    groups = "".join(
        f"Final-Recipient: rfc822; p{i}@example.net\nAction: failed\nStatus: 5.1.1\n\n" for i in range(5000)
    )
    report = read_report(_report(groups))
    assert len(report.recipients) == RECIPIENT_LIMIT and report.truncated


def test_a_huge_report_is_read_only_in_its_first_bytes() -> None:
    padding = "x" * 70 + "\n"
    raw = _report("Final-Recipient: rfc822; a@example.net\nAction: failed\n", preamble=padding * 300_000)
    assert len(raw) > 20 * 1024 * 1024
    started = time.process_time()
    assert read_report(raw) is None  # its report lies past REPORT_LIMIT
    assert time.process_time() - started < 1.0
    # within the limit it is found, cut where the limit falls
    cut = _report("Final-Recipient: rfc822; a@example.net\nAction: failed\nStatus: 5.1.1\n" + padding * 10_000)
    assert len(cut) > REPORT_LIMIT
    report = read_report(cut)
    assert report.recipients[0].status == "5.1.1" and report.truncated


def test_deep_nesting_and_many_parts_cost_nothing() -> None:
    nested = ['Content-Type: multipart/mixed; boundary="b0"\n\n']
    for i in range(1, 3000):
        nested.append(f'--b{i - 1}\nContent-Type: multipart/mixed; boundary="b{i}"\n\n')
    raw = ("From: MAILER-DAEMON@x\nTo: r@x\n" + "".join(nested)).encode()
    assert read_report(raw) is None
    parts = "".join("--b\nContent-Type: text/plain\n\nx\n" for _ in range(5000))
    raw = _report("Final-Recipient: rfc822; a@example.net\nAction: failed", preamble=parts)
    assert read_report(raw) is None  # the report is past the parts looked at


@pytest.mark.parametrize(
    "shape",
    [
        lambda n: "Diagnostic-Code: smtp; 550\n" + " x\n" * (n // 3),  # continuation lines
        lambda n: "Action: failed\n" + "X-F: v\n" * (n // 7),  # fields
        lambda n: "Action: failed\n\n" * (n // 16),  # groups
        lambda n: ":" * n,  # no field name
        lambda n: "Final-Recipient: " + "<" * n,
        lambda n: "Diagnostic-Code: " + "x" * n,  # one long line
        lambda n: "\r" * n,
        lambda n: "Status: " + "5." * (n // 2),
    ],
)
def test_reading_hostile_status_fields_is_linear(shape: Callable[[int], str]) -> None:
    small, large = _report(shape(40_000)), _report(shape(160_000))
    assert read_report(small) is None or read_report(small).recipients is not None
    t_small, t_large = growth(  # tests/timing.py
        lambda: read_report(small), lambda: read_report(large), 12, slack=0.005, measure=_cost
    )
    assert t_large < 12 * t_small + 0.005, (t_small, t_large)


def _cost(work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(3):
        rounds, started = 0, time.process_time()
        while True:
            work()
            rounds += 1
            spent = time.process_time() - started
            if spent > 0.01:
                break
        best = min(best, spent / rounds)
    return best


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_are_read_without_raising(junk: bytes) -> None:
    for raw in (junk, _report("") + junk, _report(junk.decode("latin-1"))):
        head = parse_headers(raw)
        read_report(raw)
        read_bounce(raw, head)
        find_bounce_addresses(SECRET, head.to_addrs, LOCAL, DOMAIN)


def test_the_guards_still_call_every_sample_automated() -> None:
    """What the bounce book does not take (a forged bounce address, a read receipt) the RFC
    3834 guards ignore: no sample is ever answered."""
    for template in (POSTFIX, POSTFIX_DELAYED, EXIM, EXCHANGE, GMAIL, MDN, QMAIL, OUT_OF_OFFICE):
        raw = sample(template, to=bounce(9))
        assert automated_reason(parse_headers(raw).message, ("referee@example.test",), DOMAIN) is not None
