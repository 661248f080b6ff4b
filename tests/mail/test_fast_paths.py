"""The fast paths of the inbound and outbound mail code give exactly what the slower code
they stand in for gives: the stdlib's header parser, ``getaddresses``, quoted-printable
encoder, the HMAC signature, Jinja's attribute lookup, the two-pass quote stripping.
Each is compared on random input built from the pieces that make the cases differ."""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
from email import policy, quoprimime
from email.parser import BytesHeaderParser
from email.utils import getaddresses
from pathlib import Path

import pytest
from jinja2 import Environment, StrictUndefined, UndefinedError

from referee.mail import tokens
from referee.mail.bodytext import _INVISIBLE, _normalise
from referee.mail.charsets import CONTROL, LONE_SURROGATES
from referee.mail.compose import _qp_body
from referee.mail.headers import _head_message, _simple_addresses, _unfold
from referee.mail.parse import parse_message
from referee.mail.quotes import _strip, text_and_uncut, QuoteLines
from referee.render import environment
from tests.composed import referee_mail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _model(msg):
    return msg._headers, msg._unixfrom, msg._payload, [(type(d), str(d)) for d in msg.defects]


def _stdlib_head(data: bytes):
    return _model(BytesHeaderParser(policy=policy.compat32).parsebytes(data))


HEAD_PIECES = [
    b"From ",
    b"From: a@b",
    b"Subject: x",
    b" cont",
    b"\tcont",
    b":bad",
    b"X-H:",
    b"X-H: v",
    b"\r\n",
    b"\n",
    b"\r",
    b"body line",
    b"\xc3\xa9",
    b"\xff",
    b"\x0b",
    b"\x0c",
    b"\x1c",
    b"\x85",
    b"Na me: v",
    b"a:b:c",
    b" ",
    b"From x\r\n",
    b"To: <x@y>, z@w",
    b"=?utf-8?q?x?=",
    b"\x00",
    b"--",
    b"\r\r",
    b"\n\n",
]


def test_header_block_reads_as_the_stdlib_reads_it() -> None:
    rnd = random.Random(1)
    for _ in range(20000):
        data = b"".join(rnd.choice(HEAD_PIECES) for _ in range(rnd.randint(0, 14)))
        assert _model(_head_message(data)) == _stdlib_head(data), data


def test_header_block_of_real_mails_reads_as_the_stdlib_reads_it() -> None:
    mails = sorted(CORPUS.glob("*.eml")) + sorted(p for p in FIXTURES.iterdir() if p.is_file())
    assert mails
    for path in mails:
        raw = path.read_bytes()
        for data in (raw, raw[:300], raw[:1000], raw.replace(b"\n", b"\r\n")):
            assert _model(_head_message(data)) == _stdlib_head(data), path.name


ATEXT = "ABCabcxyz0129!#$%&'*+/=?^_`{|}~-"


def _atom(rnd: random.Random) -> str:
    return "".join(rnd.choice(ATEXT) for _ in range(rnd.randint(1, 4)))


def _simple_value(rnd: random.Random) -> str:
    def address() -> str:
        local = ".".join(_atom(rnd) for _ in range(rnd.randint(1, 3)))
        domain = ".".join(
            "".join(rnd.choice("abZ09-") for _ in range(rnd.randint(1, 4))) for _ in range(rnd.randint(1, 3))
        )
        return f"{local}@{domain}"

    def mailbox() -> str:
        kind = rnd.randint(0, 2)
        if kind == 0:
            return address()
        if kind == 1:
            return f"<{address()}>"
        return " ".join(_atom(rnd) for _ in range(rnd.randint(1, 3))) + f" <{address()}>"

    return rnd.choice([",", ", ", " ,", " , "]).join(mailbox() for _ in range(rnd.randint(1, 3)))


def test_simple_addresses_read_as_getaddresses_reads_them() -> None:
    rnd = random.Random(2)
    for _ in range(20000):
        value = _unfold(_simple_value(rnd))
        assert _simple_addresses(value) == getaddresses([value]), value


def test_anything_else_is_left_to_getaddresses() -> None:
    rnd = random.Random(3)
    pieces = [
        "a",
        "B",
        "x.y",
        "@",
        "<",
        ">",
        " ",
        ",",
        ";",
        ":",
        '"',
        "(",
        ")",
        "\\",
        "[",
        "]",
        "é",
        "..",
        ".",
        "p@x.test",
        "Name <n@x.test>",
        "=?utf-8?q?x?=",
    ]
    for _ in range(30000):
        value = _unfold("".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 10))))
        simple = _simple_addresses(value)
        if simple is not None:  # claimed simple: must be exactly what getaddresses says
            assert simple == getaddresses([value]), value
    for value in [
        '"Smith, J" <j@x.test>',
        "Dr. Who <w@x.test>",
        "a@b.test (comment)",
        "group: a@b.test;",
        "é <e@x.test>",
    ]:
        assert _simple_addresses(value) is None


def _old_unfold(value: str) -> str:
    return LONE_SURROGATES.sub("\ufffd", CONTROL.sub("", " ".join(value.split())))


def _old_normalise(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return LONE_SURROGATES.sub("\ufffd", CONTROL.sub("", text).translate(_INVISIBLE))


def test_text_clean_up_is_unchanged() -> None:
    rnd = random.Random(4)
    alphabet = [chr(c) for c in range(0x80)] + [chr(k) for k in _INVISIBLE] + ["\ud800", "\udcff", "é", "\u2028", "日"]
    for _ in range(20000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 20)))
        assert _normalise(text) == _old_normalise(text), repr(text)
        assert _unfold(text) == _old_unfold(text), repr(text)


def test_quoted_printable_is_the_stdlib_encoding() -> None:
    for c in range(256):  # every byte, alone, between others and in runs, as the stdlib writes it
        for data in (bytes([c]), b"a" + bytes([c]) + b"b", bytes([c, c, c]) + b"=" + bytes([c])):
            if c in b"\r\n":
                data = data.replace(b"\r", b"\n")
            expected = quoprimime.body_encode(data.decode("latin-1"), maxlinelen=76, eol="\r\n")
            assert _qp_body(data) == expected, (c, data)
    rnd = random.Random(5)
    pieces = [
        "a",
        "=",
        " ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "é",
        "日",
        "x" * 70,
        "y" * 75,
        "=" * 5,
        "\x00",
        "\x0b",
        "\x85",
        "~",
        "-- ",
        "z" * 150,
    ]
    for _ in range(20000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 30)))
        data = text.replace("\r\n", "\n").encode("utf-8", "surrogatepass")
        assert _qp_body(data) == quoprimime.body_encode(data.decode("latin-1"), maxlinelen=76, eol="\r\n"), repr(text)
    # a few distinct bytes to quote are replaced one by one, many (another script) run by
    # run: either way, and at the border between the two, the stdlib's text
    from referee.mail.compose import _QP_REPLACES

    scripts = "éèàçœ—’“”…" + "Привет мир" + "Γειά σου" + "日本語のテキスト" + "🎲🃏"
    for _ in range(3000):
        chars = rnd.sample(scripts, rnd.randint(1, len(scripts)))
        text = "".join(rnd.choice([*chars, "a", " ", "=", "\n", "x" * 80]) for _ in range(rnd.randint(1, 60)))
        data = text.encode("utf-8")
        assert _qp_body(data) == quoprimime.body_encode(data.decode("latin-1"), maxlinelen=76, eol="\r\n"), repr(text)
    for n in (_QP_REPLACES - 1, _QP_REPLACES, _QP_REPLACES + 1):
        data = b"x=" + bytes(range(0x80, 0x80 + n)) + b" y\n"
        assert _qp_body(data) == quoprimime.body_encode(data.decode("latin-1"), maxlinelen=76, eol="\r\n"), n


def test_a_long_ascii_line_goes_quoted_printable_and_comes_back() -> None:
    text = (
        "Dear Player 0,\n\n"
        + "You may still choose Gold 5, Silver 5, Black 5 more times as the winning colour. " * 3
        + "\n"
    )
    data = referee_mail(text, domain="league.test", to_addr="p@players.test", to_name="Player 0", subject="s")
    assert b"Content-Transfer-Encoding: quoted-printable" in data
    assert all(len(line) <= 76 for line in data.split(b"\r\n\r\n", 1)[1].split(b"\r\n"))
    assert parse_message(data).raw_body == text


def test_signature_is_the_full_base32_hmac_cut() -> None:
    rnd = random.Random(6)
    for _ in range(500):
        secret = rnd.randbytes(rnd.randint(1, 40))
        seat, match, player = rnd.randint(0, 2**31 - 1), f"m{rnd.randint(0, 999)}", f"p{rnd.randint(0, 999)}é"
        message = f"{seat}\0{match}\0{player}".encode("utf-8")
        full = base64.b32encode(hmac.new(secret, message, hashlib.sha256).digest()).decode("ascii").lower()
        assert tokens._signature(secret, seat, match, player) == full[: tokens.SIGNATURE_LENGTH]


def test_text_and_uncut_readings_are_the_two_passes() -> None:
    rnd = random.Random(7)
    lines = [
        "ROULETTE",
        "Gold: 30",
        "",
        "> quoted",
        ">",
        "On Tue, 1 Dec 2026 at 18:00, Ref <r@x.test> wrote:",
        "On Tue, 1 Dec 2026, Referee wrote:",
        "-- ",
        "Sent from my iPhone",
        "From: Referee <r@x.test>",
        "Sent: Tuesday 1",
        "Subject: Round 1",
        "-----Original Message-----",
        "  indented",
        "Am 1. Dez. 2026 schrieb x:",
    ]
    for _ in range(5000):
        text = "\n".join(rnd.choice(lines) for _ in range(rnd.randint(0, 12)))
        assert text_and_uncut(QuoteLines(text)) == (_strip(text, cut=True), _strip(text, cut=False)), text


def test_dict_lookups_in_templates_are_jinjas() -> None:
    ours = environment()
    plain = Environment(undefined=StrictUndefined)
    source = "{{ d.a }} {{ d['a'] }} {{ d.items is defined }} {{ d.get('a') }} {{ n.x }} {{ d.keys is callable }}"
    ctx = {"d": {"a": 1, "items": "shadow", "get": "g", "keys": "k"}, "n": type("N", (), {"x": 5})()}
    assert ours.from_string(source).render(**ctx) == plain.from_string(source).render(**ctx)
    with pytest.raises(UndefinedError):
        ours.from_string("{{ d.missing }}").render(d={})
    with pytest.raises(UndefinedError):
        ours.from_string("{{ d.missing.deeper }}").render(d={})


# --------------------------------------------------------------------------- read once


def test_a_header_block_read_again_gives_what_it_gave_and_another_block_is_read_anew():
    from referee.mail import parse as parse_module
    from referee.mail.parse import parse_body, parse_headers

    parse_module._HEADS.forget()
    raw = b"From: Alice <alice@example.test>\nTo: r@example.test\nSubject: Bet\n\nBET\nGold: 40\n"
    first = parse_headers(raw)
    assert parse_headers(bytes(raw)) is first  # the same bytes: remembered
    assert parse_headers(raw.replace(b"BET\n", b"ROULETTE\n")) is first  # only the header block counts
    other = parse_headers(raw.replace(b"alice@", b"mallory@"))
    assert other.from_addr == "mallory@example.test" and first.from_addr == "alice@example.test"
    # a block that ends where the mail ends is not the same as one that goes on into a body
    assert parse_headers(b"From: a@example.test\nSubject: x").body_at == len(b"From: a@example.test\nSubject: x")
    # the body read with the remembered head is the body read on its own
    assert parse_body(raw, head=first) == parse_body(raw)
    assert first == parse_module.parse_headers(raw, header_limit=1 << 20)  # another limit: read anew, same answer


def test_the_remembered_header_blocks_are_bounded():
    from referee.mail import parse as parse_module

    heads = parse_module._Remembered(entries=3, size=64 * 100)
    for i in range(10):
        heads.remember((0, b"x" * 50 + bytes([i]), False), None, 51)
    assert len(heads) == 3 and heads.held == 3 * 51
    heads.remember((0, b"y" * 200, False), None, 200)  # over a 64th of the size: not kept
    assert len(heads) == 3 and (0, b"y" * 200, False) not in heads
    big = parse_module._Remembered(entries=100, size=64 * 100)
    for i in range(10):
        big.remember((0, bytes([i]) * 100, False), None, 100)
    assert big.held <= 64 * 100 and len(big) == 10
    heads.forget()
    assert not heads and heads.held == 0


def test_body_readings_are_made_only_when_asked_for(monkeypatch):
    from referee.mail import bodytext
    from referee.mail import parse as parse_module

    asked = []
    real = bodytext.quoted_only
    monkeypatch.setattr(bodytext, "quoted_only", lambda lines: asked.append(1) or real(lines))
    raw = b"Subject: x\n\nGold: 40\n\nOn Mon, 1 Dec 2026 at 10:00, R <r@example.test> wrote:\n> Gold: 0\n"
    body = parse_module.parse_body(raw)
    assert next(body.each()).text == "Gold: 40" and not asked  # the first reading settles most mails
    assert [r.source for r in body.readings] == ["text", "quoted"] and asked == [1]  # "uncut" = "text" here
    assert body.readings[1].text == "Gold: 0" and asked == [1]  # made once


def test_the_shown_text_of_our_mail_does_not_convert_its_html_part(monkeypatch):
    """``shown_text`` (a mail of ours, read to line a reply up with it) reads only the part a
    reader sees: with a plain part, the HTML alternative is not converted; the text is the
    one a player's mail of the same bytes shows."""
    from referee.mail import bodytext
    from tests.mail.test_compose import make

    raw = make(text="Dear Bob,\n\nROULETTE\nGold: 40\n", html="<p>Dear Bob,</p><p>ROULETTE<br>Gold: 40</p>")
    converted = []
    real = bodytext.html_to_text
    monkeypatch.setattr(bodytext, "html_to_text", lambda *a, **k: converted.append(1) or real(*a, **k))
    shown = bodytext.shown_text(raw)
    assert shown == "Dear Bob,\n\nROULETTE\nGold: 40\n" and not converted
    assert bodytext.read_body(raw, 1 << 20, 1 << 20, None).shown == shown and converted == [1]
