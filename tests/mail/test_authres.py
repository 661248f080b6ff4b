"""Authentication-Results (RFC 8601) as real receiving servers write it, and the trusted-server
check: only the topmost header counts, only with the trusted authserv-id, only a pass for
the From domain; comments and quoted strings hide nothing and separate nothing; the parser
is linear and bounded."""

from __future__ import annotations

import time

import pytest

from referee.mail import authres
from referee.mail.authres import aligned, parse, sender_confirmed
from referee.mail.parse import parse_headers
from tests.timing import growth

# as Gmail writes it (mx.google.com receiving mail from example.com)
# (the long lines of the samples are folded here where a server may fold them: at whitespace)
GMAIL = (
    "mx.google.com;\n"
    "       dkim=pass header.i=@example.com header.s=20230601 header.b=KxQwT0aB;\n"
    "       spf=pass (google.com: domain of alice@example.com designates 209.85.220.41 as permitted sender)\n"
    "        smtp.mailfrom=alice@example.com;\n"
    "       dmarc=pass (p=NONE sp=QUARANTINE dis=NONE) header.from=example.com"
)
# Exchange Online: no authserv-id at all, results run together after ";"
MICROSOFT = """spf=pass (sender IP is 209.85.128.41)
 smtp.mailfrom=example.com; dkim=pass (signature was verified)
 header.d=example.com;dmarc=pass action=none
 header.from=example.com;compauth=pass reason=100"""
FASTMAIL = """mx6.messagingengine.com;
    dkim=pass (2048-bit rsa key sha256) header.d=example.com header.i=@example.com header.b=AbCdEf12
      header.a=rsa-sha256 header.s=fm1 x-bits=2048;
    dmarc=pass policy.published-domain-policy=none policy.applied-disposition=none
      policy.evaluated-disposition=none (p=none,d=none,d.eval=none) policy.policy-from=p header.from=example.com;
    iprev=pass smtp.remote-ip=66.111.4.28 (out4-smtp.messagingengine.com);
    spf=pass smtp.mailfrom=alice@example.com smtp.helo=out4-smtp.messagingengine.com;
    x-aligned-from=pass (Address match);
    x-me-sender=none;
    x-tls=pass smtp.version=TLSv1.3 smtp.cipher=TLS_AES_256_GCM_SHA384 smtp.bits=256/256;
    x-vs=clean score=-100 state=0"""
# Postfix with OpenDMARC (topmost), OpenDKIM and an SPF milter, each writing its own header
OPENDMARC = "mx.example.org; dmarc=pass (p=none dis=none) header.from=example.com"
OPENDKIM = """mx.example.org;
\tdkim=pass (2048-bit key; unprotected) header.d=example.com header.i=@example.com
\t header.a=rsa-sha256 header.s=mail header.b=Ab1Cd2Ef;
\tdkim-atps=neutral"""
SPF_MILTER = (
    "mx.example.org; spf=pass (sender SPF authorized) smtp.mailfrom=example.com "
    "(client-ip=203.0.113.5; helo=mail.example.com; envelope-from=alice@example.com; receiver=<UNKNOWN>)"
)


def message(*results: str, frm: str = "Alice <alice@example.com>"):
    """A header-only message with these Authentication-Results values, topmost first."""
    head = "".join(f"Authentication-Results: {value}\r\n" for value in results)
    head += "Received: from mail.example.com by mx.example.org; Tue, 1 Dec 2026 19:00:00 +0000\r\n"
    return parse_headers(f"{head}From: {frm}\r\nTo: referee@example.org\r\nSubject: x\r\n\r\nbody\r\n".encode()).message


def confirmed(*results: str, trusted: str = "mx.example.org", domain: str = "example.com") -> bool:
    return sender_confirmed(message(*results), trusted, domain)


# ---------------------------------------------------------------------------- parsing


def test_gmail():
    parsed = parse(GMAIL)
    assert parsed.authserv_id == "mx.google.com"
    assert [(r.method, r.result) for r in parsed.results] == [("dkim", "pass"), ("spf", "pass"), ("dmarc", "pass")]
    dkim, spf, dmarc = parsed.results
    assert dkim.get("header.i") == "@example.com" and dkim.get("header.d") is None
    assert spf.get("smtp.mailfrom") == "alice@example.com"  # the comment is not a property
    assert dmarc.get("header.from") == "example.com"
    assert sender_confirmed(message(GMAIL), "mx.google.com", "example.com")


def test_microsoft_writes_no_authserv_id_so_it_is_never_trusted():
    parsed = parse(MICROSOFT)
    assert parsed.authserv_id is None
    assert [(r.method, r.result) for r in parsed.results] == [
        ("spf", "pass"),
        ("dkim", "pass"),
        ("dmarc", "pass"),
        ("compauth", "pass"),
    ]
    assert parsed.results[2].properties == (("action", "none"), ("header.from", "example.com"))
    assert parsed.results[3].reason == "100"
    for trusted in ("spf=pass", "protection.outlook.com", "mx.example.org"):
        assert not sender_confirmed(message(MICROSOFT), trusted, "example.com")


def test_fastmail():
    parsed = parse(FASTMAIL)
    assert parsed.authserv_id == "mx6.messagingengine.com"
    methods = [r.method for r in parsed.results]
    assert methods == ["dkim", "dmarc", "iprev", "spf", "x-aligned-from", "x-me-sender", "x-tls", "x-vs"]
    assert parsed.results[0].get("header.d") == "example.com"
    assert parsed.results[1].get("header.from") == "example.com"
    assert parsed.results[6].get("smtp.bits") == "256/256"
    assert sender_confirmed(message(FASTMAIL), "mx6.messagingengine.com", "example.com")


def test_postfix_with_opendmarc_opendkim_and_spf_milters():
    assert confirmed(OPENDMARC, OPENDKIM, SPF_MILTER)  # the topmost is OpenDMARC's
    parsed = parse(OPENDKIM)
    assert [(r.method, r.result) for r in parsed.results] == [("dkim", "pass"), ("dkim-atps", "neutral")]
    assert confirmed(OPENDKIM)  # a DKIM pass for the From domain is enough
    assert confirmed(SPF_MILTER)  # and so is an SPF pass
    assert parse(SPF_MILTER).results[0].get("smtp.mailfrom") == "example.com"


def test_version_none_case_and_a_quoted_authserv_id():
    parsed = parse("mx.example.org 1; none")
    assert (parsed.authserv_id, parsed.version, parsed.results) == ("mx.example.org", "1", ())
    assert not confirmed("mx.example.org 1; none")
    assert confirmed("mx.example.org 1; dmarc=pass header.from=example.com")
    assert confirmed("MX.Example.ORG; DMARC=Pass header.from=EXAMPLE.COM.")
    assert confirmed('"mx.example.org"; dkim=pass header.d="example.com"')
    assert confirmed("mx.example.org; dkim/1 = pass (good) header . d=x (nothing) ; spf=pass smtp.mailfrom=example.com")


# ---------------------------------------------------------------------------- what is trusted


def test_one_of_several_trusted_servers():
    trusted = ("mx1.example.org", "MX2.example.org")
    assert sender_confirmed(message("mx2.example.org; dmarc=pass header.from=example.com"), trusted, "example.com")
    assert not sender_confirmed(message("mx3.example.org; dmarc=pass header.from=example.com"), trusted, "example.com")


def test_no_header_or_another_authserv_id_is_not_confirmed():
    assert not sender_confirmed(message(), "mx.example.org", "example.com")
    assert not confirmed("mx.elsewhere.net; dmarc=pass header.from=example.com")
    assert not confirmed("mx.example.org.evil.test; dmarc=pass header.from=example.com")
    assert not confirmed("example.org; dmarc=pass header.from=example.com")


def test_a_forged_header_below_the_top_counts_for_nothing():
    forged = "mx.example.org; dmarc=pass header.from=example.com"
    # our server's own header on top says nothing passed; the sender's forgery is below it
    assert not confirmed("mx.example.org; spf=none smtp.mailfrom=example.com; dkim=none; dmarc=none", forged)
    # a server on the way (a list, a forwarder) wrote the top one: ours is not topmost
    assert not confirmed("lists.example.net; dmarc=pass header.from=example.com", forged)
    assert not confirmed("mx.example.org; dmarc=fail header.from=example.com", forged, forged)


@pytest.mark.parametrize(
    "value",
    [
        "mx.example.org; dmarc=pass header.from=evil.test",
        "mx.example.org; dmarc=pass header.from=mail.example.com",  # DMARC's verdict is for that domain only
        "mx.example.org; dkim=pass header.d=evil.test header.i=@evil.test",
        "mx.example.org; dkim=pass header.d=example.com.evil.test",
        "mx.example.org; dkim=pass header.d=notexample.com",
        "mx.example.org; spf=pass smtp.mailfrom=eve@evil.test",
        "mx.example.org; spf=pass smtp.mailfrom=example.com.evil.test",
        "mx.example.org; spf=pass smtp.helo=example.com",  # HELO is not the MAIL FROM domain
        "mx.example.org; dkim=pass header.s=example.com",  # no d=, no i=
    ],
)
def test_a_pass_for_another_domain_is_not_confirmed(value):
    assert not confirmed(value)


@pytest.mark.parametrize("result", ["fail", "softfail", "neutral", "none", "temperror", "permerror", "policy"])
def test_anything_but_pass_is_not_confirmed(result):
    assert not confirmed(f"mx.example.org; dmarc={result} header.from=example.com")
    assert not confirmed(f"mx.example.org; dkim={result} header.d=example.com")
    assert not confirmed(f"mx.example.org; spf={result} smtp.mailfrom=alice@example.com")


def test_comments_hide_nothing_and_say_nothing():
    assert not confirmed("mx.example.org; dkim=fail (dkim=pass header.d=example.com) header.d=example.com")
    assert not confirmed("mx.example.org; dmarc=pass (header.from=example.com) header.from=evil.test")
    assert not confirmed("mx.example.org (; dmarc=pass header.from=example.com); spf=none")
    assert not confirmed("mx.example.org; spf=none (nested (; dmarc=pass header.from=example.com) still) x=y")
    assert confirmed("mx.example.org; spf=none (a \\) quoted paren; dmarc=fail); dmarc=pass header.from=example.com")
    assert confirmed("mx.example.org (our MX); dmarc=pass (p=reject; dis=none) header.from=example.com")


def test_quoted_strings_separate_nothing():
    # a ";" inside a quoted value starts no result: the spf pass is for evil.test
    assert not confirmed('mx.example.org; spf=pass smtp.mailfrom="x;dmarc=pass header.from=example.com"@evil.test')
    assert not confirmed('mx.example.org; dkim=pass header.d=evil.test header.b="; dmarc=pass header.from=example.com"')
    assert not confirmed('mx.example.org; spf=pass reason="; dkim=pass header.d=example.com" smtp.mailfrom=e.test')
    assert confirmed('mx.example.org; spf=pass smtp.mailfrom="alice smith"@example.com')
    parsed = parse('mx.example.org; spf=pass smtp.mailfrom="a \\"b\\" c"@example.com')
    assert parsed.results[0].get("smtp.mailfrom") == 'a "b" c@example.com'


def test_broken_headers_never_raise_and_never_confirm():
    for value in ["", ";", ";;;", "(", '"', "\\", "mx.example.org; (", 'mx.example.org; dmarc="', "=;=;=", ")))"]:
        parse(value)
        assert not confirmed(value)
    assert not confirmed("mx.example.org; dmarc=pass header.from=example.com", domain="")


@pytest.mark.parametrize(
    "domain, from_domain, expected",
    [
        ("example.com", "example.com", True),
        ("EXAMPLE.com.", "example.COM", True),
        ("mail.example.com", "example.com", True),  # a subdomain of the From domain
        ("example.com", "eu.mail.example.com", True),  # the From domain a subdomain of it
        ("@example.com", "example.com", True),  # a DKIM i= with no local part
        ("alice@mail.example.com", "example.com", True),  # an SPF MAIL FROM address
        ("a.example.com", "b.example.com", False),  # siblings: no public suffix list here
        ("eve.co.uk", "alice.co.uk", False),  # never across a public suffix
        ("com", "example.com", False),  # never a bare top-level domain
        ("xample.com", "example.com", False),
        ("", "example.com", False),
        ("example.com", "", False),
    ],
)
def test_alignment(domain, from_domain, expected):
    assert aligned(domain, from_domain) is expected


# ---------------------------------------------------------------------------- bounded work


@pytest.mark.parametrize(
    "piece",
    ["(", ")", '"', "\\", ";", "=", "a=", "; a=b", "(a;b)", '"a;b"', "x.y=z ", "dkim/1=pass ", " \t"],
)
def test_the_parser_is_linear(monkeypatch, piece):
    monkeypatch.setattr(authres, "VALUE_LIMIT", 10**7)  # time the scanner itself, not the cap
    small, large = "mx.example.org; " + piece * 20_000, "mx.example.org; " + piece * 80_000
    t_small, t_large = growth(lambda: parse(small), lambda: parse(large), 12, floor=1e-4)
    assert t_large < 12 * max(t_small, 1e-4), f"{piece!r}: {t_small * 1e3:.2f} ms -> {t_large * 1e3:.2f} ms"


def test_only_the_first_part_of_a_huge_header_is_read():
    padding = "mx.example.org; " + "x-junk=pass (" + "a" * 100_000 + "); "
    start = time.process_time()
    assert not confirmed(padding + "dmarc=pass header.from=example.com")  # beyond VALUE_LIMIT: unread
    assert time.process_time() - start < 0.5
    many = "mx.example.org; " + "spf=none; " * 5000 + "dmarc=pass header.from=example.com"
    assert len(parse(many).results) <= authres.RESULT_LIMIT
    assert not confirmed(many)
