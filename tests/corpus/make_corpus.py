#!/usr/bin/env python3
"""(Re)generate the inbound mail corpus: ``tests/corpus/*.eml`` and ``tests/corpus/index.toml``.

Run ``python tests/corpus/make_corpus.py`` from anywhere; the output is deterministic (no
clock, no randomness: every id is derived from the file name), so a re-run changes nothing
unless this script changed. ``tests/service/test_corpus.py`` delivers the mails to a whole
referee and checks each outcome against the index.

Placeholders (HEADERS only; bodies may be QP/base64/any charset, so they never hold one),
substituted by the test just before delivery:

``{{ALICE}}`` / ``{{BOB}}``
    the registered addresses (alice@example.test, bob@example.test)
``{{REPLY_ALICE}}`` / ``{{REPLY_BOB}}``
    the player's personal reply address for match m1 (``referee+<token>@example.test``),
    the Reply-To of the latest referee mail to that player that has one
``{{REPLY_ALICE_CUT}}`` / ``{{REPLY_ALICE_PLUS}}`` / ``{{REPLY_ALICE_NONASCII}}``
    alice's reply address damaged on the way: the token's last 4 characters cut; one
    character (``q``) added at its end; its 4th character replaced by ``é`` (raw UTF-8)
``{{REPLY_ALICE_UPPER}}``
    alice's reply address in upper case (token and domain)
``{{REFEREE}}``
    the general address, referee@example.test
``{{INREPLYTO_ALICE}}`` / ``{{INREPLYTO_BOB}}``
    the Message-ID (with brackets) of the latest referee mail to that player
``{{STEP0_ALICE}}`` / ``{{STEP1_ALICE}}`` (and ``_BOB``)
    the Message-ID (with brackets) of the referee's step mail that opened round 0 (the
    preparation phase) / round 1 for that player, however many mails came after it
``{{DATE}}``
    the RFC 5322 date of the arrival time

Index keys, one ``[[mail]]`` table per mail: ``file``, ``round`` (0: preparation, roulettes
only; 1: bets and roulettes), ``expect`` (accepted | rejected | ignored | quarantined),
``move`` (accepted: the move that stands after it; a table, or an array of tables when the
mail holds both a ROULETTE and a BET), ``phrase`` (rejected: a key phrase of the reason the
reply must contain, case-insensitive), ``rule`` (ignored: the named rule; rejected, where
given: the rule recorded, e.g. ``spoofed``), ``reply`` (whether the referee answers at all),
``note`` (one line: the case and why), and where they apply:
``player`` (whose seat the mail speaks for: whose pending move is checked, to whom the reply
goes), ``shows`` (a placeholder string the reply must contain, e.g. the right reply address),
``same_as`` (this file is a re-delivery of that earlier file: the test substitutes its
placeholders with the values used for that file, so the two differ only by trace headers),
``generate`` (the mail is not stored: the test builds it from this spec, ``big-body:N`` or
``big-line:N``), ``after`` (the mail is delivered later than its round's mails: ``"round-1"``
once round 1 has closed, during round 2; ``"match"`` once the match has ended; such mails
have ``round = 1``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import quopri
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------- placeholders

ADDR = {"alice": "{{ALICE}}", "bob": "{{BOB}}"}
REPLY = {"alice": "{{REPLY_ALICE}}", "bob": "{{REPLY_BOB}}"}
INREPLYTO = {"alice": "{{INREPLYTO_ALICE}}", "bob": "{{INREPLYTO_BOB}}"}
REFEREE = "{{REFEREE}}"
DATE = "{{DATE}}"
NAME = {"alice": "Alice Martin", "bob": "Bob Keller"}
FIRST = {"alice": "Alice", "bob": "Bob"}
OTHER = {"alice": "Bob", "bob": "Alice"}
LITERAL = {"alice": "alice@example.test", "bob": "bob@example.test"}  # as quoted in bodies

SUBJECT = {
    0: "[Stationary Roulette m1] Preparation phase is open - prepare your first roulette",
    1: "[Stationary Roulette m1] Preparation phase result - Round 1 of 10 is open",
}

# ---------------------------------------------------------------------------- the mail answered

ROUND0 = """Dear {me},

This is the referee of your Stationary Roulette match m1 against {other} (Test season).

=== Now: Preparation phase ===

* Prepare a roulette for {other} to bet on in round 1.
  Choose its winning colour (you may still choose Gold 5, Silver 5, Black 5 more times)
  and place exactly 40 points: Gold at least 25, Silver at least 5, Black 0.
  {other} will see the points but not the winning colour.

* There is nothing to bet on in the preparation phase; betting starts in round 1.

Deadline: Wed 2 Dec 2026, 19:00 CET (18:00 UTC).
The round closes then, not earlier; until then you may send again and your last valid
submission counts.

To answer, reply to this mail and keep the lines below, changing only the colour
and the numbers:

{form}
{dashdash}
The referee (an automated service; replies to this address are read by the program)"""

ROUND1 = """Dear {me},

This is the referee of your Stationary Roulette match m1 against {other} (Test season).

=== Result of Preparation phase ===

{me} prepared a roulette for the next round.
{other} prepared a roulette for the next round.

Chip movements:
  none.

=== Now: Round 1 of 10 ===

* Prepare a roulette for {other} to bet on in round 2.
  Choose its winning colour (you may still choose Gold 4, Silver 5, Black 5 more times)
  and place exactly 40 points: Gold at least 25, Silver at least 5, Black 0.

* Bet on the roulette {other} prepared in the preparation phase.
  Its points: Gold 30, Silver 10, Black 0. Its winning colour stays secret until this round closes.
  You have 40 points to bet on at most 2 colours (Gold, Silver, Black);
  points you leave unbet are simply not used.

Deadline: Thu 3 Dec 2026, 19:00 CET (18:00 UTC).

To answer, reply to this mail and keep the lines below, changing only the colour
and the numbers:

{form}
{dashdash}
The referee (an automated service; replies to this address are read by the program)"""

FORM0 = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0\n"
FORM1 = FORM0 + "\nBET\nGold: 20\nSilver: 20\nBlack: 0\n"


def original(player: str, rnd: int, form: str | None = None) -> str:
    template = ROUND0 if rnd == 0 else ROUND1
    return template.format(
        me=FIRST[player], other=OTHER[player], form=form or (FORM0 if rnd == 0 else FORM1), dashdash="-- "
    )


def quote(text: str, prefix: str = "> ") -> str:
    return "\n".join(prefix + line if line else prefix.rstrip() for line in text.split("\n"))


# ---------------------------------------------------------------------------- forms and moves


def roulette(w: str = "Gold", g: int = 30, s: int = 10, b: int = 0) -> str:
    return f"ROULETTE\nWinning colour: {w}\nGold: {g}\nSilver: {s}\nBlack: {b}"


def bet(g: int = 20, s: int = 20, b: int = 0) -> str:
    return f"BET\nGold: {g}\nSilver: {s}\nBlack: {b}"


def R(w: str, g: int, s: int, b: int = 0) -> dict:
    return {"type": "roulette", "winning": w, "points": {"Gold": g, "Silver": s, "Black": b}}


def B(g: int, s: int, b: int = 0) -> dict:
    return {"type": "bet", "bets": {"Gold": g, "Silver": s, "Black": b}}


# ---------------------------------------------------------------------------- MIME building


@dataclass
class Part:
    headers: list[tuple[str, str | bytes]]
    body: bytes


def _h(value: str, n: int = 16) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:n]


def qp(data: bytes) -> bytes:
    return quopri.encodestring(data)


def b64(data: bytes) -> bytes:
    return base64.encodebytes(data)


def encode_body(data: bytes, cte: str) -> bytes:
    if cte == "quoted-printable":
        return qp(data)
    if cte == "base64":
        return b64(data)
    return data


def text_part(
    text: str,
    *,
    subtype: str = "plain",
    charset: str = "utf-8",
    cte: str = "7bit",
    ctype: str | None = None,
    headers: tuple[tuple[str, str], ...] = (),
    errors: str = "strict",
) -> Part:
    data = text.encode(charset if charset not in ("us-ascii",) else "ascii", errors)
    ct = ctype or f'text/{subtype}; charset="{charset}"'
    hs: list[tuple[str, str | bytes]] = [("Content-Type", ct)]
    if cte:
        hs.append(("Content-Transfer-Encoding", cte))
    hs.extend(headers)
    return Part(hs, encode_body(data, cte))


def raw_part(ctype: str, body: bytes, *, cte: str | None = None, headers: tuple = ()) -> Part:
    hs: list[tuple[str, str | bytes]] = [("Content-Type", ctype)]
    if cte:
        hs.append(("Content-Transfer-Encoding", cte))
    hs.extend(headers)
    return Part(hs, body)


def render_part(part: Part) -> bytes:
    return _render_headers(part.headers) + b"\n" + part.body


def multipart(
    subtype: str, parts: list[Part], boundary: str, *, preamble: str = "", close: bool = True, params: str = ""
) -> Part:
    chunks = []
    if preamble:
        chunks.append(preamble.encode() + b"\n")
    for p in parts:
        body = render_part(p)
        if not body.endswith(b"\n"):
            body += b"\n"
        chunks.append(
            b"\n--" + boundary.encode() + b"\n" + body if chunks else b"--" + boundary.encode() + b"\n" + body
        )
    if close:
        chunks.append(b"\n--" + boundary.encode() + b"--\n")
    ct = f'multipart/{subtype}; boundary="{boundary}"{params}'
    return Part([("Content-Type", ct)], b"".join(chunks))


def _render_headers(headers: list[tuple[str, str | bytes]]) -> bytes:
    out = []
    for name, value in headers:
        v = value if isinstance(value, bytes) else value.encode("utf-8")
        out.append(name.encode() + b": " + v + b"\n" if name else v + b"\n")
    return b"".join(out)


def message(headers: list[tuple[str, str | bytes]], part: Part, *, mime: bool = True, nl: str = "\n") -> bytes:
    hs = list(headers)
    if mime and not any(n.lower() == "mime-version" for n, _ in hs):
        hs.append(("MIME-Version", "1.0"))
    raw = _render_headers(hs + part.headers) + b"\n" + part.body
    if not raw.endswith(b"\n"):
        raw += b"\n"
    if nl != "\n":
        raw = raw.replace(b"\n", nl.encode())
    return raw


def html_lines(text: str, tag: str = "div", style: str = "") -> str:
    attr = f' style="{style}"' if style else ""
    out = []
    for line in text.split("\n"):
        out.append(f"<{tag}{attr}>{html.escape(line) if line else '<br>'}</{tag}>")
    return "\n".join(out)


def html_br(text: str) -> str:
    return "<br>\n".join(html.escape(line) for line in text.split("\n"))


# ---------------------------------------------------------------------------- common headers


@dataclass
class Ctx:
    file: str
    player: str = "alice"
    rnd: int = 0

    @property
    def frm(self) -> str:
        return f"{NAME[self.player]} <{ADDR[self.player]}>"

    @property
    def to(self) -> str:
        return f"Referee <{REPLY[self.player]}>"

    @property
    def irt(self) -> str:
        return INREPLYTO[self.player]

    @property
    def subject(self) -> str:
        return "Re: " + SUBJECT[self.rnd]

    def hx(self, n: int = 16) -> str:
        return _h(self.file, n)

    def uuid(self, upper: bool = False) -> str:
        x = _h(self.file, 32)
        u = f"{x[:8]}-{x[8:12]}-4{x[13:16]}-a{x[17:20]}-{x[20:32]}"
        return u.upper() if upper else u

    def digits(self, n: int = 10) -> str:
        return str(int(_h(self.file, 24), 16))[:n]

    def orig(self, form: str | None = None) -> str:
        return original(self.player, self.rnd, form)

    @property
    def when_en(self) -> str:
        return "Tue, Dec 1, 2026" if self.rnd == 0 else "Wed, Dec 2, 2026"

    @property
    def sent_en(self) -> str:
        return "Tuesday, December 1, 2026" if self.rnd == 0 else "Wednesday, December 2, 2026"


def mx_received(c: Ctx, helo: str, ip: str, rcpt: str | None = None) -> tuple[str, str]:
    return (
        "Received",
        f"from {helo} ({helo} [{ip}])\n\tby mx.example.test (Postfix) with ESMTPS id 4{c.hx(11).upper()}\n"
        f"\tfor <{rcpt or REPLY[c.player]}>; {DATE}",
    )


def bare(address: str) -> str:
    """The address inside ``Name <address>`` (or the value itself)."""
    return address[address.find("<") + 1 : address.rfind(">")] if "<" in address and ">" in address else address


# ---------------------------------------------------------------------------- client shapes
# Each takes the context, what the player typed, and returns the whole message.

GMAIL_ATTR = {
    "en": ("On {w} at 7:00\u202fPM Referee <\nreferee@example.test> wrote:", None),
    "de": ("Am {d} um 19:00 Uhr schrieb Referee <\nreferee@example.test>:", ("Di., 1. Dez. 2026", "Mi., 2. Dez. 2026")),
    "fr": ("Le {d} à 19:00, Referee <referee@example.test> a\nécrit\u202f:", ("mar. 1 déc. 2026", "mer. 2 déc. 2026")),
    "es": ("El {d} a las 19:00, Referee (<referee@example.test>)\nescribió:", ("mar, 1 dic 2026", "mié, 2 dic 2026")),
    "nl": ("Op {d} om 19:00 schreef Referee <referee@example.test>:", ("di 1 dec. 2026", "wo 2 dec. 2026")),
    "it": (
        "Il giorno {d} alle ore 19:00 Referee <referee@example.test>\nha scritto:",
        ("mar 1 dic 2026", "mer 2 dic 2026"),
    ),
    "pt": (
        "Em {d} às 19:00, Referee <referee@example.test>\nescreveu:",
        ("ter., 1 de dez. de 2026", "qua., 2 de dez. de 2026"),
    ),
}


def gmail(
    c: Ctx,
    typed: str,
    *,
    lang: str = "en",
    below: bool = False,
    quoted: str | None = None,
    html_part: bool = True,
    extra: tuple = (),
    msgid: bool = True,
) -> bytes:
    fmt, days = GMAIL_ATTR[lang]
    attr = fmt.format(w=c.when_en, d=days[c.rnd] if days else "")
    q = quote(quoted if quoted is not None else c.orig())
    if below:
        plain = f"{attr}\n\n{q}\n\n{typed}\n"
    else:
        plain = f"{typed}\n\n{attr}\n\n{q}\n" if typed else f"{attr}\n\n{q}\n"
    orig_html = html_br(quoted if quoted is not None else c.orig())
    body_html = (
        f'<div dir="ltr">{html_lines(typed)}</div><br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">'
        f'{html.escape(attr.replace(chr(10), " "))}<br></div><blockquote class="gmail_quote" style="margin:0px 0px 0px'
        f' 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex">{orig_html}</blockquote></div>\n'
    )
    if below:
        body_html = (
            f'<div dir="ltr"><div class="gmail_quote"><div dir="ltr" class="gmail_attr">{html.escape(attr)}<br></div>'
            f'<blockquote class="gmail_quote">{orig_html}</blockquote></div>{html_lines(typed)}</div>\n'
        )
    boundary = "000000000000" + c.hx(12)
    plain_part = text_part(plain, charset="UTF-8", cte="quoted-printable", ctype='text/plain; charset="UTF-8"')
    if html_part:
        part = multipart(
            "alternative",
            [
                plain_part,
                text_part(body_html, charset="UTF-8", cte="quoted-printable", ctype='text/html; charset="UTF-8"'),
            ],
            boundary,
        )
    else:
        part = plain_part
    hs = [
        ("Delivered-To", REPLY[c.player]),
        ("Received", f"by 2002:a05:7300:5c8f:b0:12a:9d4e:7f31 with SMTP id {c.hx(6)}csp612311dyb;\n        {DATE}"),
        mx_received(c, "mail-sor-f41.google.com", "209.85.220.41"),
        (
            "DKIM-Signature",
            f"v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.test; s=20230601; t=1796148000;\n"
            f"        h=to:subject:message-id:date:from:in-reply-to:references:mime-version;\n"
            f"        bh={c.hx(43)}=;\n        b={c.hx(64)}",
        ),
        ("MIME-Version", "1.0"),
        ("References", c.irt),
        ("In-Reply-To", c.irt),
        ("From", c.frm),
        ("Date", DATE),
    ]
    if msgid:
        hs.append(("Message-ID", f"<CA+{c.hx(30)}{c.hx(8).upper()}w@mail.gmail.com>"))
    hs += [("Subject", c.subject), ("To", c.to), *extra]
    return message(hs, part)


def android_gmail(c: Ctx, typed: str) -> bytes:
    day = "Tue, 1 Dec 2026" if c.rnd == 0 else "Wed, 2 Dec 2026"
    attr = f"On {day}, 19:00 Referee, <referee@example.test> wrote:"
    plain = f"{typed}\n\n{attr}\n\n{quote(c.orig())}\n"
    body_html = (
        f'<div dir="auto">{html_lines(typed, tag="div", style="")}</div><br><div class="gmail_quote">'
        f'<div dir="ltr" class="gmail_attr">{html.escape(attr)}<br></div><blockquote class="gmail_quote" '
        'style="margin:0 0 0 .8ex;border-left:1px #ccc solid;padding-left:1ex">'
        f"{html_br(c.orig())}</blockquote></div>\n"
    )
    part = multipart(
        "alternative",
        [
            text_part(plain, charset="UTF-8", cte="quoted-printable", ctype='text/plain; charset="UTF-8"'),
            text_part(body_html, charset="UTF-8", cte="quoted-printable", ctype='text/html; charset="UTF-8"'),
        ],
        "000000000000" + c.hx(12),
    )
    hs = [
        mx_received(c, "mail-yw1-f170.google.com", "209.85.128.170"),
        ("MIME-Version", "1.0"),
        ("References", c.irt),
        ("In-Reply-To", c.irt),
        ("From", c.frm),
        ("Date", DATE),
        ("Message-ID", f"<CAK{c.hx(36)}@mail.gmail.com>"),
        ("Subject", c.subject),
        ("To", c.to),
    ]
    return message(hs, part)


OUTLOOK_BLOCK = {
    "en": "________________________________\nFrom: Referee <referee@example.test>\nSent: {sent} 7:00 PM\n"
    "To: {me} <{addr}>\nSubject: {subject}\n",
    "de": "-----Ursprüngliche Nachricht-----\nVon: Referee <referee@example.test> \nGesendet: {sent_de} 19:00\n"
    "An: {me} <{addr}>\nBetreff: {subject}\n",
}


def outlook(c: Ctx, typed: str, *, lang: str = "en", charset: str = "Windows-1252", extra: tuple = ()) -> bytes:
    block = OUTLOOK_BLOCK[lang].format(
        sent=c.sent_en,
        sent_de="Dienstag, 1. Dezember 2026" if c.rnd == 0 else "Mittwoch, 2. Dezember 2026",
        me=FIRST[c.player],
        addr=LITERAL[c.player],
        subject=SUBJECT[c.rnd],
    )
    plain = f"{typed}\n\n{block}\n{c.orig()}\n"
    div = (
        'class="elementToProof" style="font-family: Aptos, Aptos_EmbeddedFont, Aptos_MSFontService, Calibri, '
        'Helvetica, sans-serif; font-size: 12pt; color: rgb(0, 0, 0);"'
    )
    typed_html = "\n".join(f"<div {div}>\n{html.escape(line) if line else '<br>'}</div>" for line in typed.split("\n"))
    body_html = (
        '<html>\n<head>\n<meta http-equiv="Content-Type" content="text/html; charset=Windows-1252">\n'
        '<style type="text/css" style="display:none;"> P {margin-top:0;margin-bottom:0;} </style>\n</head>\n'
        f'<body dir="ltr">\n{typed_html}\n<div id="appendonsend"></div>\n<hr style="display:inline-block;width:98%" '
        f'tabindex="-1">\n<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt" '
        f'color="#000000">{html_br(block)}</font>\n<div>&nbsp;</div>\n</div>\n<div class="BodyFragment"><font size="2">'
        f'<span style="font-size:11pt;">\n<div class="PlainText">{html_br(c.orig())}</div>\n</span></font></div>\n'
        "</body>\n</html>\n"
    )
    boundary = f"_000_AM0PR07MB{c.hx(12).upper()}AM0PR07MB4129eurp_"
    part = multipart(
        "alternative",
        [
            text_part(plain, charset=charset, cte="quoted-printable", ctype=f'text/plain; charset="{charset}"'),
            text_part(body_html, charset=charset, cte="quoted-printable", ctype=f'text/html; charset="{charset}"'),
        ],
        boundary,
    )
    mid = f"AM0PR07MB{c.hx(20).upper()}@AM0PR07MB4129.eurprd07.prod.outlook.com"
    hs = [
        (
            "Received",
            f"from AM0PR07MB4129.eurprd07.prod.outlook.com (2603:10a6:208:1a6::17)\n by "
            f"AM0PR07MB4129.eurprd07.prod.outlook.com with HTTPS; {DATE}",
        ),
        mx_received(c, "EUR05-AM6-obe.outbound.protection.outlook.com", "40.107.22.100"),
        ("From", c.frm),
        ("To", c.to),
        ("Subject", "RE: " + SUBJECT[c.rnd]),
        ("Thread-Topic", SUBJECT[c.rnd]),
        ("Thread-Index", f"AQHa{c.hx(20)}AAE="),
        ("Date", DATE),
        ("Message-ID", f"\n <{mid}>"),
        ("References", c.irt),
        ("In-Reply-To", c.irt),
        ("Accept-Language", "en-GB, en-US" if lang == "en" else "de-DE, en-US"),
        ("Content-Language", "en-GB" if lang == "en" else "de-DE"),
        ("X-MS-Has-Attach", ""),
        ("X-MS-TNEF-Correlator", ""),
        ("msip_labels", ""),
        *extra,
    ]
    return message(hs, part)


def outlook_html_only(c: Ctx, typed: str) -> bytes:
    paras = "\n".join(
        f"<p class=3DMsoNormal>{html.escape(line) if line else '<o:p>&nbsp;</o:p>'}<o:p></o:p></p>"
        for line in typed.split("\n")
    )
    body = (
        '<html xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" '
        'xmlns:w="urn:schemas-microsoft-com:office:word" xmlns="http://www.w3.org/TR/REC-html40">\n<head>\n'
        '<meta http-equiv=Content-Type content="text/html; charset=windows-1252">\n'
        '<meta name=Generator content="Microsoft Word 15 (filtered medium)">\n<style><!--\n'
        "p.MsoNormal, li.MsoNormal, div.MsoNormal\n\t{margin:0cm;\n\tfont-size:11.0pt;\n\t"
        'font-family:"Calibri",sans-serif;}\n--></style><!--[if gte mso 9]><xml>\n<o:shapedefaults v:ext="edit" '
        'spidmax="1026" />\n</xml><![endif]-->\n</head>\n<body lang=EN-GB link="#0563C1" vlink="#954F72" '
        "style='word-wrap:break-word'>\n<div class=WordSection1>\n"
        + paras.replace("=3D", "=")
        + "\n<p class=MsoNormal><o:p>&nbsp;</o:p></p>\n<div style='border:none;border-top:solid #E1E1E1 1.0pt;"
        "padding:3.0pt 0cm 0cm 0cm'>\n<p class=MsoNormal><b><span lang=EN-US>From:</span></b><span lang=EN-US> "
        f"Referee &lt;referee@example.test&gt; <br><b>Sent:</b> {c.sent_en} 19:00<br><b>To:</b> {FIRST[c.player]} "
        f"&lt;{LITERAL[c.player]}&gt;<br><b>Subject:</b> {html.escape(SUBJECT[c.rnd])}<o:p></o:p></span></p>\n</div>\n"
        + "\n".join(
            f"<p class=MsoNormal>{html.escape(line) or '<o:p>&nbsp;</o:p>'}<o:p></o:p></p>"
            for line in c.orig().split("\n")
        )
        + "\n</div>\n</body>\n</html>\n"
    )
    part = text_part(body, charset="windows-1252", cte="quoted-printable", ctype='text/html;\n\tcharset="windows-1252"')
    hs = [
        ("Return-Path", f"<{ADDR[c.player]}>"),
        mx_received(c, "mail.fabrikam.example", "203.0.113.44"),
        ("From", f'"{NAME[c.player]}" <{ADDR[c.player]}>'),
        ("To", f'"Referee" <{REPLY[c.player]}>'),
        ("References", c.irt),
        ("In-Reply-To", c.irt),
        ("Subject", "RE: " + SUBJECT[c.rnd]),
        ("Date", DATE),
        ("Message-ID", f"<000001da{c.hx(4)}${c.hx(8)}${c.hx(8)}$@fabrikam.example>"),
        ("MIME-Version", "1.0"),
        ("X-Mailer", "Microsoft Outlook 16.0"),
        ("Thread-Index", f"AQHa{c.hx(24)}"),
        ("Content-Language", "en-gb"),
    ]
    return message(hs, part)


def apple_mail(c: Ctx, typed: str, *, below: bool = False, alternative: bool = False, lang: str = "en") -> bytes:
    if lang == "de":
        attr = f"Am {'01.12.2026' if c.rnd == 0 else '02.12.2026'} um 19:00 schrieb Referee <referee@example.test>:"
    else:
        attr = f"On {'1' if c.rnd == 0 else '2'} Dec 2026, at 19:00, Referee <referee@example.test> wrote:"
    if below:
        plain = f"\n\n> {attr}\n>\n{quote(c.orig())}\n\n{typed}\n"
    else:
        plain = f"{typed}\n\n{attr}\n\n{quote(c.orig())}\n"
    plain_part = text_part(
        plain,
        cte="quoted-printable",
        ctype="text/plain;\n\tcharset=utf-8;\n\tformat=flowed"
        if not alternative
        else "text/plain;\n\tcharset=us-ascii",
    )
    if alternative:
        body_html = (
            '<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"></head><body style="'
            'overflow-wrap: break-word; -webkit-nbsp-mode: space; line-break: after-white-space;">'
            + html_lines(typed)
            + f'<div><br><blockquote type="cite"><div>{html.escape(attr)}</div><br><div><div>{html_br(c.orig())}'
            "</div></div></blockquote></div><br></body></html>\n"
        )
        part = multipart(
            "alternative",
            [
                plain_part,
                text_part(body_html, cte="quoted-printable", ctype="text/html;\n\tcharset=utf-8"),
            ],
            f"Apple-Mail={c.uuid(True)}",
        )
    else:
        part = plain_part
    hs = [
        ("Return-Path", f"<{ADDR[c.player]}>"),
        mx_received(c, "ms11p00im-qufo17291401.me.com", "17.58.38.52"),
        ("Mime-Version", "1.0 (Mac OS X Mail 16.0 \\(3826.200.121\\))"),
        ("Subject", c.subject),
        ("From", c.frm),
        ("In-Reply-To", c.irt),
        ("Date", DATE),
        ("Message-Id", f"<{c.uuid(True)}@icloud.com>"),
        ("References", c.irt),
        ("To", c.to),
        ("X-Mailer", "Apple Mail (2.3826.200.121)"),
    ]
    return message(hs, part)


def iphone(c: Ctx, typed: str) -> bytes:
    attr = f"On {'1' if c.rnd == 0 else '2'} Dec 2026, at 19:00, Referee <referee@example.test> wrote:"
    plain = f"{typed}\n\nSent from my iPhone\n\n> {attr}\n> \n{quote(c.orig())}\n"
    part = text_part(plain, cte="quoted-printable", ctype="text/plain;\n\tcharset=utf-8")
    hs = [
        mx_received(c, "st43p00im-ztfb10073301.me.com", "17.58.63.179"),
        ("From", c.frm),
        ("Mime-Version", "1.0 (1.0)"),
        ("Subject", c.subject),
        ("Date", DATE),
        ("Message-Id", f"<{c.uuid(True)}@me.com>"),
        ("References", c.irt),
        ("In-Reply-To", c.irt),
        ("To", c.to),
        ("X-Mailer", "iPhone Mail (22B83)"),
    ]
    return message(hs, part)


TB_ATTR = {
    "en": "On {d} 19:00, Referee wrote:",
    "de": "Am {dd} um 19:00 schrieb Referee:",
    "fr": "Le {d} à 19:00, Referee a écrit\u00a0:",
}


def thunderbird(
    c: Ctx,
    typed: str,
    *,
    below: bool = False,
    lang: str = "en",
    sig: str | None = "-- \nAlice Martin",
    extra: tuple = (),
    msgid: str | None = None,
    date: str = DATE,
    top: tuple = (),
) -> bytes:
    d = "01/12/2026" if c.rnd == 0 else "02/12/2026"
    dd = "01.12.26" if c.rnd == 0 else "02.12.26"
    attr = TB_ATTR[lang].format(d=d, dd=dd)
    signature = f"\n\n{sig}" if sig else ""
    if below:
        body = f"{attr}\n{quote(c.orig())}\n\n{typed}{signature}\n"
    else:
        body = f"{typed}{signature}\n\n{attr}\n{quote(c.orig())}\n"
    part = text_part(body, charset="UTF-8", cte="8bit", ctype="text/plain; charset=UTF-8; format=flowed")
    hs = [
        *top,
        ("Return-Path", f"<{ADDR[c.player]}>"),
        ("Delivered-To", REPLY[c.player]),
        mx_received(c, "mout01.posteo.de", "185.67.36.65"),
        ("Message-ID", msgid if msgid is not None else f"<{c.uuid()}@posteo.de>"),
        ("Date", date),
        ("MIME-Version", "1.0"),
        ("User-Agent", "Mozilla Thunderbird"),
        ("Subject", c.subject),
        ("Content-Language", {"en": "en-GB", "de": "de-DE", "fr": "fr"}[lang]),
        ("To", c.to),
        ("References", c.irt),
        ("From", c.frm),
        ("In-Reply-To", c.irt),
        *extra,
    ]
    if msgid == "":
        hs = [h for h in hs if h[0] != "Message-ID"]
    return message(hs, part)


def yahoo(c: Ctx, typed: str, *, mobile: bool = False) -> bytes:
    attr = (
        f"On {'Tuesday, December 1' if c.rnd == 0 else 'Wednesday, December 2'}, 2026 at 07:00:00 PM GMT+1, "
        "Referee <referee@example.test> wrote:"
    )
    footer = "\n\nSent from Yahoo Mail for iPhone" if mobile else ""
    plain = f"{typed}{footer}\n\n\n    {attr}  \n \n {c.orig()}\n"
    body_html = (
        f'<html><head></head><body><div class="ydp{c.hx(8)}yahoo-style-wrap" style="font-family:Helvetica Neue, '
        f'Helvetica, Arial, sans-serif;font-size:16px;">{html_lines(typed)}</div>'
        f'<div id="yahoo_quoted_{c.digits()}" class="yahoo_quoted"><div style="font-family:\'Helvetica Neue\', '
        f'Helvetica, Arial, sans-serif;font-size:13px;color:#26282a;"><div>{html.escape(attr)}</div><div><br></div>'
        f'<div><br></div><div><div dir="ltr">{html_br(c.orig())}</div></div></div></div></body></html>\n'
    )
    boundary = f"----=_Part_{c.digits(7)}_{c.digits(9)}.1796148000000"
    part = multipart(
        "alternative",
        [
            text_part(
                plain,
                charset="UTF-8",
                cte="7bit" if plain.isascii() else "quoted-printable",
                ctype="text/plain; charset=UTF-8",
            ),
            text_part(body_html, charset="UTF-8", cte="quoted-printable", ctype="text/html; charset=UTF-8"),
        ],
        boundary,
    )
    hs = [
        mx_received(c, "sonic309-21.consmr.mail.ir2.yahoo.com", "77.238.179.86"),
        ("Date", DATE),
        ("From", c.frm),
        ("To", c.to),
        ("Message-ID", f"<{c.digits(10)}.{c.digits(7)}.1796148000000@mail.yahoo.com>"),
        ("In-Reply-To", c.irt),
        ("References", c.irt),
        ("Subject", c.subject),
        ("MIME-Version", "1.0"),
        ("X-Mailer", "WebService/1.1.22941 YMailNorrin" if not mobile else "Yahoo Mail for iPhone 7.12.0"),
    ]
    return message(hs, part)


def aol(c: Ctx, typed: str) -> bytes:
    block = (
        f"-----Original Message-----\nFrom: Referee <referee@example.test>\nTo: {LITERAL[c.player]}\n"
        f"Sent: {c.when_en.replace(', 2026', ' 2026')} 7:00 pm\nSubject: {SUBJECT[c.rnd]}\n"
    )
    plain = f"{typed}\n\n\n{block}\n{c.orig()}\n"
    body_html = (
        f'<div style="font-family:Arial, Helvetica, sans-serif; font-size:10pt;">{html_lines(typed)}</div>'
        f'<div><br></div><div style="font-family:Arial;">{html_br(block)}<br>{html_br(c.orig())}</div>\n'
    )
    part = multipart(
        "alternative",
        [
            text_part(plain, charset="UTF-8", cte="7bit", ctype="text/plain; charset=UTF-8"),
            text_part(body_html, charset="UTF-8", cte="7bit", ctype="text/html; charset=UTF-8"),
        ],
        f"----=_Part_{c.digits(7)}_{c.digits(8)}.1796148012345",
    )
    hs = [
        mx_received(c, "sonic317-20.consmr.mail.gq1.yahoo.com", "98.137.66.146"),
        ("Date", DATE),
        ("From", c.frm),
        ("To", REPLY[c.player]),
        ("Message-ID", f"<{c.digits(9)}.{c.digits(6)}.1796148012345@mail.aol.com>"),
        ("In-Reply-To", c.irt),
        ("References", c.irt),
        ("Subject", c.subject),
        ("MIME-Version", "1.0"),
        ("X-Mailer", "WebService/1.1.22941 AolMailNorrin"),
    ]
    return message(hs, part)


def proton(c: Ctx, typed: str, *, html_only: bool = True) -> bytes:
    attr = (
        f"On {'Tuesday, December 1st' if c.rnd == 0 else 'Wednesday, December 2nd'}, 2026 at 7:00 PM, "
        'Referee &lt;<a href="mailto:referee@example.test">referee@example.test</a>&gt; wrote:'
    )
    div = 'style="font-family: Arial, sans-serif; font-size: 14px;"'
    body_html = (
        '<html><head><meta charset="utf-8"><title>Re</title><style>p { margin: 0 }</style></head>\n<body>'
        + "\n".join(f"<div {div}>{html.escape(line) if line else '<br>'}</div>" for line in typed.split("\n"))
        + f'\n<div class="protonmail_signature_block" {div}><div class="protonmail_signature_block-proton">'
        'Sent with <a target="_blank" href="https://proton.me/">Proton Mail</a> secure email.</div></div>\n'
        f'<div class="protonmail_quote">\n        {attr}<br><br>\n        <blockquote class="protonmail_quote" '
        f'type="cite">\n            {html_br(c.orig())}\n        </blockquote><br>\n    </div>\n</body></html>\n'
    )
    html_p = text_part(body_html, cte="base64", ctype="text/html; charset=utf-8")
    if html_only:
        part = html_p
    else:
        plain_attr = html.unescape(attr.replace('<a href="mailto:referee@example.test">', "").replace("</a>", ""))
        plain = f"{typed}\n\nSent with Proton Mail secure email.\n\n{plain_attr}\n\n{quote(c.orig())}\n"
        part = multipart(
            "mixed",
            [
                multipart(
                    "alternative",
                    [text_part(plain, cte="quoted-printable", ctype="text/plain; charset=utf-8"), html_p],
                    f"b2_{c.hx(40)}",
                ),
            ],
            f"b1_{c.hx(40)}",
        )
    hs = [
        ("Return-Path", f"<{ADDR[c.player]}>"),
        mx_received(c, "mail-4316.protonmail.ch", "185.70.43.16"),
        ("Date", DATE),
        ("To", c.to),
        ("From", c.frm),
        ("Subject", c.subject),
        ("Message-ID", f"<{base64.b64encode(bytes.fromhex(c.hx(48))).decode()}=@proton.me>"),
        ("In-Reply-To", c.irt),
        ("References", c.irt),
        ("Feedback-ID", f"{c.digits(8)}:user:proton"),
        ("X-Pm-Message-ID", c.hx(40)),
        ("MIME-Version", "1.0"),
    ]
    return message(hs, part)


def fastmail(c: Ctx, typed: str, *, attachment: Part | None = None) -> bytes:
    day = "Tue, 1 Dec 2026" if c.rnd == 0 else "Wed, 2 Dec 2026"
    attr = f"On {day}, at 19:00, Referee wrote:"
    plain = f"{typed}\n\n{attr}\n{quote(c.orig())}\n"
    body_html = (
        f"<!DOCTYPE html><html><head><title></title></head><body>{html_lines(typed)}<div><br></div>"
        f'<div>{html.escape(attr)}</div><blockquote type="cite" id="qt" style="">{html_br(c.orig())}</blockquote>'
        "<div><br></div></body></html>\n"
    )
    alt = multipart(
        "alternative",
        [
            text_part(plain, cte="7bit", ctype="text/plain"),
            text_part(body_html, cte="7bit", ctype="text/html"),
        ],
        c.hx(32),
    )
    part = alt if attachment is None else multipart("mixed", [alt, attachment], c.hx(32)[::-1])
    hs = [
        ("Return-Path", f"<{ADDR[c.player]}>"),
        mx_received(c, "fout-a1-smtp.messagingengine.com", "103.168.172.144"),
        ("X-ME-Sender", f"<xms:{c.hx(40)}>"),
        ("MIME-Version", "1.0"),
        ("Date", DATE),
        ("From", c.frm),
        ("To", c.to),
        ("Message-Id", f"<{c.uuid()}@app.fastmail.com>"),
        ("In-Reply-To", c.irt),
        ("References", c.irt),
        ("Subject", c.subject),
        ("User-Agent", "Cyrus-JMAP/3.13.0-alpha0-1080-g9fd9e4a1d-fm-20261124.001-g9fd9e4a1"),
    ]
    return message(hs, part)


def k9(c: Ctx, typed: str) -> bytes:
    attr = (
        f"On {'December 1' if c.rnd == 0 else 'December 2'}, 2026 7:00:00 PM GMT+01:00, "
        "Referee <referee@example.test> wrote:"
    )
    plain = (
        f"{typed}\n-- \nSent from my Android device with K-9 Mail. Please excuse my brevity.\n\n"
        f"{attr}\n{quote(c.orig())}\n"
    )
    part = text_part(plain, cte="quoted-printable", ctype="text/plain; charset=utf-8")
    hs = [
        mx_received(c, "mail.mailbox.org", "80.241.60.212"),
        ("Date", DATE),
        ("From", c.frm),
        ("To", c.to),
        ("Subject", c.subject),
        ("User-Agent", "K-9 Mail for Android"),
        ("In-Reply-To", c.irt),
        ("References", c.irt),
        ("Message-ID", f"<{c.uuid().upper()}@email.android.com>"),
    ]
    return message(hs, part)


def roundcube(c: Ctx, typed: str, *, below: bool = False) -> bytes:
    attr = f"Am 2026-12-0{1 if c.rnd == 0 else 2} 19:00, schrieb Referee:"
    if below:
        plain = f"{attr}\n{quote(c.orig())}\n\n{typed}\n\n-- \nAlice\n"
    else:
        plain = f"{typed}\n\n\n{attr}\n{quote(c.orig())}\n"
    part = text_part(plain, charset="US-ASCII", cte="7bit", ctype="text/plain; charset=US-ASCII;\n format=flowed")
    hs = [
        mx_received(c, "webmail.example.de", "192.0.2.80"),
        ("MIME-Version", "1.0"),
        ("Date", DATE),
        ("From", ADDR[c.player]),
        ("To", c.to),
        ("Subject", c.subject),
        ("In-Reply-To", c.irt),
        ("References", c.irt),
        ("Message-ID", f"<{c.hx(32)}@example.de>"),
        ("X-Sender", ADDR[c.player]),
        ("User-Agent", "Roundcube Webmail/1.6.9"),
    ]
    return message(hs, part)


def mutt(c: Ctx, typed: str, *, inline: bool = True) -> bytes:
    attr = f"On {'Tue, Dec 01' if c.rnd == 0 else 'Wed, Dec 02'}, 2026 at 06:00:00PM +0000, Referee wrote:"
    text = c.orig()
    head, _, tail = text.partition("ROULETTE\n")
    if inline:
        body = f"{attr}\n{quote(head.rstrip())}\n\n{typed}\n\n{quote('ROULETTE' + chr(10) + tail)}\n\n-- \nalice\n"
    else:
        body = f"{typed}\n\n{attr}\n{quote(text)}\n"
    part = text_part(
        body,
        charset="us-ascii",
        cte="",
        ctype="text/plain; charset=us-ascii",
        headers=(("Content-Disposition", "inline"),),
    )
    hs = [
        mx_received(c, "alice-laptop.home.example", "198.51.100.23"),
        ("Date", DATE),
        ("From", c.frm),
        ("To", c.to),
        ("Subject", c.subject),
        ("Message-ID", f"<20261201180{c.digits(3)}.GA{c.digits(4)}@alice-laptop>"),
        ("References", c.irt),
        ("MIME-Version", "1.0"),
        ("In-Reply-To", c.irt),
        ("User-Agent", "Mutt/2.2.13 (2024-03-09)"),
    ]
    return message(hs, part)


def evolution(c: Ctx, typed: str) -> bytes:
    attr = f"On {'Tue, 2026-12-01' if c.rnd == 0 else 'Wed, 2026-12-02'} at 18:00 +0000, Referee wrote:"
    body = f"{typed}\n\n-- \nAlice Martin <alice@example.test>\n\n{attr}\n{quote(c.orig())}\n"
    part = text_part(body, charset="UTF-8", cte="7bit", ctype='text/plain; charset="UTF-8"')
    hs = [
        mx_received(c, "smtp.example.org", "192.0.2.25"),
        ("Message-ID", f"<{c.hx(40)}.camel@example.org>"),
        ("Subject", c.subject),
        ("From", c.frm),
        ("To", c.to),
        ("Date", DATE),
        ("In-Reply-To", c.irt),
        ("References", c.irt),
        ("User-Agent", "Evolution 3.52.4 (3.52.4-1.fc40)"),
        ("MIME-Version", "1.0"),
    ]
    return message(hs, part)


def owa(c: Ctx, typed: str) -> bytes:
    block = (
        f"From: Referee <referee@example.test>\nSent: {c.sent_en} 19:00\nTo: {NAME[c.player]} "
        f"<{LITERAL[c.player]}>\nSubject: {SUBJECT[c.rnd]}"
    )
    plain = f"{typed}\n\n________________________________\n{block}\n\n{c.orig()}\n"
    body_html = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=us-ascii"></head>'
        '<body dir="ltr"><div style="font-family: Calibri, Arial, Helvetica, sans-serif; font-size: 12pt;">'
        + html_lines(typed)
        + '</div><hr style="display:inline-block;width:98%" tabindex="-1"><div id="divRplyFwdMsg" dir="ltr">'
        f'<font face="Calibri, sans-serif" style="font-size:11pt" color="#000000">{html_br(block)}</font>'
        f"<div>&nbsp;</div></div><div>{html_br(c.orig())}</div></body></html>\n"
    )
    part = multipart(
        "alternative",
        [
            text_part(plain, charset="us-ascii", cte="quoted-printable", ctype='text/plain; charset="us-ascii"'),
            text_part(body_html, charset="us-ascii", cte="quoted-printable", ctype='text/html; charset="us-ascii"'),
        ],
        f"_000_DB9PR10MB{c.hx(10).upper()}DB9PR10MB5900EURP_",
    )
    hs = [
        mx_received(c, "EUR02-DB5-obe.outbound.protection.outlook.com", "40.107.21.49"),
        ("From", c.frm),
        ("To", c.to),
        ("Subject", "Re: " + SUBJECT[c.rnd]),
        ("Thread-Topic", SUBJECT[c.rnd]),
        ("Thread-Index", f"AQHa{c.hx(16)}"),
        ("Date", DATE),
        ("Message-ID", f"\n <DB9PR10MB{c.hx(18).upper()}@DB9PR10MB5900.EURPRD10.PROD.OUTLOOK.COM>"),
        ("References", c.irt),
        ("In-Reply-To", c.irt),
        ("Accept-Language", "en-US"),
        ("Content-Language", "en-US"),
        ("X-MS-Exchange-Organization-AuthAs", "Internal"),
        ("X-OriginatorOrg", "example.test"),
        ("MIME-Version", "1.0"),
    ]
    return message(hs, part)


def _gmx_block(c: Ctx) -> str:
    day = "Dienstag, 01. Dezember 2026" if c.rnd == 0 else "Mittwoch, 02. Dezember 2026"
    return (
        f'Gesendet: {day} um 19:00 Uhr\nVon: "Referee" <referee@example.test>\nAn: {LITERAL[c.player]}\n'
        f"Betreff: {SUBJECT[c.rnd]}"
    )


def gmx(c: Ctx, typed: str) -> bytes:
    # GMX writes the original below its header block without any ">" prefix.
    plain = f"{typed}\n \n \n\n{_gmx_block(c)}\n{c.orig()}\n"
    body_html = (
        '<html><head></head><body><div style="font-family: Verdana;font-size: 12.0px;">'
        + html_lines(typed)
        + '<div>&nbsp;\n<div>&nbsp;</div>\n<div name="quote" style="margin:10.0px 5.0px 5.0px 10.0px;'
        "padding: 10.0px 0 "
        f"10.0px 10.0px;border-left:2.0px solid #C3D9E5;word-wrap: break-word; -webkit-nbsp-mode: space; "
        f'-webkit-line-break: after-white-space;">\n<div style="margin:0 0 10.0px 0;">{html_br(_gmx_block(c))}</div>\n'
        f'<div name="quoted-content">{html_br(c.orig())}</div>\n</div>\n</div></div></body></html>\n'
    )
    part = multipart(
        "alternative",
        [
            text_part(plain, charset="UTF-8", cte="quoted-printable", ctype="text/plain; charset=UTF-8"),
            text_part(body_html, charset="UTF-8", cte="quoted-printable", ctype="text/html; charset=UTF-8"),
        ],
        f"=_{c.hx(40)}",
    )
    hs = [
        mx_received(c, "mout.gmx.net", "212.227.17.20"),
        ("MIME-Version", "1.0"),
        ("Message-ID", f"<trinity-{c.uuid()}-1796148{c.digits(6)}@3c-app-gmx-bap52>"),
        ("From", c.frm),
        ("To", c.to),
        ("Subject", c.subject),
        ("Date", DATE),
        ("Importance", "normal"),
        ("Sensitivity", "Normal"),
        ("In-Reply-To", c.irt),
        ("References", c.irt),
        ("X-Priority", "3"),
        ("X-UI-Message-Type", "mail"),
        ("X-Provags-ID", f"V03:K1:{c.hx(40)}"),
    ]
    return message(hs, part)


def webde(c: Ctx, typed: str) -> bytes:
    # Web.de: HTML only; the original sits in a <div name="quote">, not in a <blockquote>.
    body_html = (
        '<html><head></head><body><div style="font-family: Verdana;font-size: 12.0px;">'
        + html_lines(typed)
        + '<div>&nbsp;</div><div>&nbsp;</div><div name="quote" style="margin:10.0px 5.0px 5.0px 10.0px;'
        'padding: 10.0px 0 10.0px 10.0px;border-left:2.0px solid #C3D9E5;">'
        f'<div style="margin:0 0 10.0px 0;"><b>Gesendet:</b>&nbsp;{_gmx_block(c).split(chr(10))[0][11:]}<br/>'
        "<b>Von:</b>&nbsp;&quot;Referee&quot; &lt;referee@example.test&gt;<br/>"
        f"<b>An:</b>&nbsp;{LITERAL[c.player]}<br/>"
        f'<b>Betreff:</b>&nbsp;{html.escape(SUBJECT[c.rnd])}</div><div name="quoted-content">{html_br(c.orig())}</div>'
        "</div></div></body></html>\n"
    )
    part = text_part(body_html, charset="UTF-8", cte="quoted-printable", ctype="text/html; charset=UTF-8")
    hs = [
        mx_received(c, "mout.web.de", "212.227.17.11"),
        ("MIME-Version", "1.0"),
        ("Message-ID", f"<trinity-{c.uuid()}-1796148{c.digits(6)}@3c-app-webde-bs41>"),
        ("From", c.frm),
        ("To", c.to),
        ("Subject", "Aw: " + SUBJECT[c.rnd]),
        ("Date", DATE),
        ("Importance", "normal"),
        ("Sensitivity", "Normal"),
        ("In-Reply-To", c.irt),
        ("References", c.irt),
        ("X-UI-Message-Type", "mail"),
    ]
    return message(hs, part)


def orange(c: Ctx, typed: str) -> bytes:
    day = "01/12/26" if c.rnd == 0 else "02/12/26"
    block = (
        f'> Message du {day} 19:00\n> De : "Referee" <referee@example.test>\n> A : {LITERAL[c.player]}\n'
        f"> Copie à : \n> Objet : {SUBJECT[c.rnd]}\n>\n"
    )
    plain = f"{typed}\n\n\n{block}{quote(c.orig())}\n"
    body_html = (
        f'<html><head></head><body><p>{html_br(typed)}</p><br><blockquote style="border-left:2px solid '
        f'blue">{html_br(block)}{html_br(c.orig())}</blockquote></body></html>\n'
    )
    part = multipart(
        "alternative",
        [
            text_part(plain, charset="UTF-8", cte="quoted-printable", ctype="text/plain; charset=UTF-8"),
            text_part(body_html, charset="UTF-8", cte="quoted-printable", ctype="text/html; charset=UTF-8"),
        ],
        f"----=_Part_{c.digits(6)}_{c.digits(9)}.1796148000000",
    )
    hs = [
        mx_received(c, "smtp.smtpout.orange.fr", "80.12.242.128"),
        ("Date", DATE),
        ("From", c.frm),
        ("Reply-To", ADDR[c.player]),
        ("To", c.to),
        ("Message-ID", f"<{c.digits(9)}.{c.digits(5)}.1796148000000.JavaMail.www@wwinf2229>"),
        ("In-Reply-To", c.irt),
        ("References", c.irt),
        ("Subject", c.subject),
        ("MIME-Version", "1.0"),
        ("X-Originating-IP", "[90.12.34.56]"),
        ("X-WUM-FROM", f"|~|{ADDR[c.player]}|~|"),
        ("X-WUM-TO", f"|~|{REPLY[c.player]}|~|"),
        ("X-WUM-REPLYTO", f"|~|{ADDR[c.player]}|~|"),
    ]
    return message(hs, part)


def samsung(c: Ctx, typed: str) -> bytes:
    block = (
        f"-------- Original message --------\nFrom: Referee <referee@example.test> \nDate: "
        f"{'01/12/2026' if c.rnd == 0 else '02/12/2026'} 19:00  (GMT+01:00) \nTo: {FIRST[c.player]} "
        f"<{LITERAL[c.player]}> \nSubject: {SUBJECT[c.rnd]} \n"
    )
    plain = f"{typed}\n\n\n\nSent from my Galaxy\n\n\n{block}\n{c.orig()}\n"
    body_html = (
        f'<html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8"></head><body '
        f'dir="auto">{html_lines(typed, style="")}<div dir="auto"><br></div><div id="composer_signature" '
        f'dir="auto"><div style="font-size:12px;color:#575757" dir="auto">Sent from my Galaxy</div></div>'
        f'<div><br></div><div align="left" dir="auto" style="font-size:100%;color:#000000"><div>'
        f"{html_br(block)}</div>{html_br(c.orig())}</div></body></html>\n"
    )
    part = multipart(
        "alternative",
        [
            text_part(plain, cte="base64", ctype="text/plain; charset=utf-8"),
            text_part(body_html, cte="base64", ctype="text/html; charset=utf-8"),
        ],
        f"--_com.samsung.android.email_{c.digits(15)}",
    )
    hs = [
        mx_received(c, "mail-wm1-f53.google.com", "209.85.128.53"),
        ("Message-ID", f"<{c.hx(24)}.{c.digits(6)}@email.android.com>"),
        ("Date", DATE),
        ("Subject", c.subject),
        ("In-Reply-To", c.irt),
        ("References", c.irt),
        ("From", c.frm),
        ("To", c.to),
        ("MIME-Version", "1.0"),
        ("Importance", "Normal"),
        ("X-Priority", "3"),
        ("X-MSMail-Priority", "Normal"),
    ]
    return message(hs, part)


def simple(
    c: Ctx,
    typed: str,
    *,
    frm: str | None = None,
    to: str | None = None,
    subject: str | None = None,
    extra: tuple = (),
    top: tuple = (),
    msgid: str | None = None,
    irt: bool = True,
    part: Part | None = None,
    nl: str = "\n",
    date: str = DATE,
    charset: str = "utf-8",
    cte: str = "8bit",
    drop: tuple[str, ...] = (),
) -> bytes:
    """A plain mail (Thunderbird-like, no quote) with every header under control."""
    hs = [
        *top,
        mx_received(c, "mail.example.net", "192.0.2.10", bare(to) if to else None),
        ("From", frm if frm is not None else c.frm),
        ("To", to if to is not None else c.to),
        ("Subject", subject if subject is not None else c.subject),
        ("Date", date),
        ("Message-ID", msgid if msgid is not None else f"<{c.uuid()}@example.net>"),
    ]
    if irt:
        hs += [("In-Reply-To", c.irt), ("References", c.irt)]
    hs += [("User-Agent", "Mozilla Thunderbird"), *extra]
    hs = [h for h in hs if h[0] not in drop]
    if part is None:
        part = text_part(typed + "\n", charset=charset, cte=cte, ctype=f"text/plain; charset={charset}; format=flowed")
    return message(hs, part, nl=nl)


def stranger(c: Ctx, typed: str, *, to: str, frm: str = "Eve Mallory <eve@evil.test>", **kw) -> bytes:
    return simple(c, typed, frm=frm, to=to, irt=False, **kw)


# ---------------------------------------------------------------------------- the corpus


@dataclass
class Case:
    file: str
    round: int
    expect: str
    note: str
    raw: bytes | None = None
    move: dict | list | None = None
    phrase: str | None = None
    rule: str | None = None
    reply: bool | None = None
    player: str | None = None
    shows: str | None = None
    same_as: str | None = None
    generate: str | None = None
    after: str | None = None


@dataclass
class Corpus:
    cases: list[Case] = field(default_factory=list)
    round: int = 0

    def ctx(self, file: str, player: str = "alice") -> Ctx:
        return Ctx(file, player, self.round)

    def add(self, case: Case) -> None:
        assert not any(x.file == case.file for x in self.cases), case.file
        assert case.file.endswith(".eml"), case.file
        self.cases.append(case)

    def acc(self, c: Ctx, raw: bytes, move, note: str) -> None:
        self.add(Case(c.file, self.round, "accepted", note, raw, move=move, reply=True, player=c.player))

    def rej(self, c: Ctx, raw: bytes, phrase: str, note: str, shows: str | None = None) -> None:
        self.add(
            Case(c.file, self.round, "rejected", note, raw, phrase=phrase, reply=True, player=c.player, shows=shows)
        )

    def ign(self, c: Ctx, raw: bytes, rule: str, note: str, same_as: str | None = None) -> None:
        self.add(
            Case(c.file, self.round, "ignored", note, raw, rule=rule, reply=False, player=c.player, same_as=same_as)
        )


def build() -> list[Case]:
    corpus = Corpus()
    add_cases(corpus)
    return corpus.cases


# ---------------------------------------------------------------------------- hostile helpers


def base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def nested(depth: int, leaf: Part) -> Part:
    part = leaf
    for i in range(depth):
        part = multipart("mixed", [part], f"nest-{depth - i:03d}")
    return part


def many_parts(first: Part, count: int, boundary: str = "p") -> Part:
    chunks = [b"--" + boundary.encode() + b"\n" + render_part(first).rstrip(b"\n") + b"\n"]
    for i in range(count - 1):
        chunks.append(b"--" + boundary.encode() + b"\n\n" + str(i).encode() + b"\n")
    chunks.append(b"--" + boundary.encode() + b"--\n")
    return Part([("Content-Type", f'multipart/mixed; boundary="{boundary}"')], b"".join(chunks))


def message_id_of_length(n: int, domain: str = "example.net") -> str:
    """``<...@domain>`` of exactly n characters, brackets included."""
    return "<" + "m" * (n - len(domain) - 3) + "@" + domain + ">"


PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def attachment(ctype: str, name: str, data: bytes) -> Part:
    return raw_part(
        f'{ctype}; name="{name}"',
        b64(data),
        cte="base64",
        headers=(("Content-Disposition", f'attachment; filename="{name}"'),),
    )


def dsn_part(kind: str, reporting: str, recipient: str, status: str, diag: str, original_headers: str) -> list[Part]:
    human = text_part(
        f"This is the mail system at host {reporting}.\n\nI'm sorry to have to inform you that your message could not\n"
        "be delivered to one or more recipients. It's attached below.\n\n                   The mail system\n\n"
        f"<{recipient}>: {diag}\n",
        charset="us-ascii",
        cte="",
        ctype="text/plain; charset=us-ascii",
        headers=(("Content-Description", "Notification"),),
    )
    machine = raw_part(
        "message/delivery-status",
        (
            f"Reporting-MTA: dns; {reporting}\nArrival-Date: Tue, 01 Dec 2026 18:00:05 +0000\n\n"
            f"Final-Recipient: rfc822; {recipient}\nOriginal-Recipient: rfc822;{recipient}\nAction: {kind}\n"
            f"Status: {status}\nDiagnostic-Code: smtp; {diag}\n"
        ).encode(),
        headers=(("Content-Description", "Delivery report"),),
    )
    headers = raw_part(
        "text/rfc822-headers",
        original_headers.encode(),
        headers=(("Content-Description", "Undelivered Message Headers"),),
    )
    return [human, machine, headers]


OUR_HEADERS = (
    "From: Referee <referee@example.test>\nTo: Alice <alice@example.test>\n"
    "Subject: [Stationary Roulette m1] Received: your submission for Preparation phase\n"
    "Date: Tue, 01 Dec 2026 18:10:00 +0000\nMessage-ID: <0d1f8a2b3c4e5f60.receipt-m1-alice@example.test>\n"
    "Auto-Submitted: auto-replied\nX-Referee-Loop: example.test\n"
)


def mdn_part(reporting_ua: str, recipient: str, disposition: str) -> list[Part]:
    human = text_part(
        "This is a Return Receipt for the mail that you sent to " + recipient + ".\n\n"
        "Note: This Return Receipt only acknowledges that the message was displayed on the recipient's computer. "
        "There is no guarantee that the recipient has read or understood the message contents.\n",
        cte="7bit",
        ctype="text/plain; charset=UTF-8",
    )
    machine = raw_part(
        "message/disposition-notification; name=MDNPart2.txt",
        (
            f"Reporting-UA: {reporting_ua}\nFinal-Recipient: rfc822;{recipient}\n"
            f"Original-Message-ID: <14a0e51be2524269.thread-m1-alice@example.test>\nDisposition: {disposition}\n"
        ).encode(),
        cte="7bit",
        headers=(("Content-Disposition", "inline"),),
    )
    headers = raw_part(
        "text/rfc822-headers; name=MDNPart3.txt",
        OUR_HEADERS.encode(),
        cte="7bit",
        headers=(("Content-Disposition", "inline"),),
    )
    return [human, machine, headers]


ROTATE_R = [
    ("Gold", 30, 10),
    ("Silver", 28, 12),
    ("Black", 33, 7),
    ("Silver", 26, 14),
    ("Gold", 31, 9),
    ("Black", 27, 13),
    ("Silver", 29, 11),
    ("Gold", 35, 5),
    ("Black", 32, 8),
    ("Gold", 25, 15),
    ("Silver", 34, 6),
    ("Black", 28, 12),
]
ROTATE_B = [
    (20, 20, 0),
    (25, 15, 0),
    (10, 30, 0),
    (0, 40, 0),
    (15, 0, 25),
    (30, 10, 0),
    (5, 35, 0),
    (40, 0, 0),
    (18, 22, 0),
    (12, 28, 0),
    (0, 0, 40),
    (21, 19, 0),
    (22, 18, 0),
    (23, 17, 0),
    (24, 16, 0),
    (26, 14, 0),
]


def add_cases(corpus: Corpus) -> None:
    round0(corpus)
    review_round0(corpus)
    round1(corpus)
    review_round1(corpus)
    review_after(corpus)


def round0(k: Corpus) -> None:
    k.round = 0
    rot = iter(ROTATE_R * 10)

    def nxt():
        w, g, s = next(rot)
        return roulette(w, g, s), R(w, g, s)

    # ---- accepted: real client shapes -------------------------------------------------------------
    shapes = [
        (
            "gmail-roulette-top-posted.eml",
            lambda c, t: gmail(c, t + "\n\nThanks!"),
            "Gmail web reply, multipart/alternative QP, top-posted, wrapped attribution, quote holds the form",
        ),
        (
            "android-gmail-roulette.eml",
            android_gmail,
            "Gmail for Android: dir=auto divs, short attribution, quote below",
        ),
        (
            "outlook-desktop-roulette.eml",
            lambda c, t: outlook(
                c, "Hi,\n\n" + t + "\n\nBest regards\nAlice", extra=(("X-Auto-Response-Suppress", "All"),)
            ),
            "Outlook desktop: cp1252 QP, underscore line + From/Sent/To/Subject block, original unprefixed below; "
            "X-Auto-Response-Suppress on a human mail is no reason to ignore it",
        ),
        (
            "outlook-de-roulette.eml",
            lambda c, t: outlook(c, "Hallo,\n\n" + t + "\n\nViele Grüße\nAlice", lang="de"),
            "Outlook in German: -----Ursprüngliche Nachricht----- with Von/Gesendet/An/Betreff, original unprefixed",
        ),
        (
            "outlook-html-only-roulette.eml",
            lambda c, t: outlook_html_only(c, t + "\n\nRegards,\nAlice"),
            "Outlook HTML-only (windows-1252 QP, MsoNormal paragraphs), header block and original as paragraphs",
        ),
        ("apple-mail-roulette.eml", apple_mail, "Apple Mail (macOS): format=flowed QP, attribution + > quote"),
        (
            "apple-mail-de-bottom-posted.eml",
            lambda c, t: apple_mail(c, t, below=True, lang="de"),
            "Apple Mail, German attribution inside the quote, answer bottom-posted",
        ),
        ("iphone-roulette.eml", iphone, "iPhone Mail: 'Sent from my iPhone' footer, attribution inside the > quote"),
        (
            "thunderbird-de-bottom-posted.eml",
            lambda c, t: thunderbird(c, t, below=True, lang="de", sig="-- \nAlice Martin\nhttps://alice.example/"),
            "Thunderbird German 'Am ... schrieb Referee:' + quote, answer below, -- signature",
        ),
        ("thunderbird-en-top-posted.eml", thunderbird, "Thunderbird top-posted, format=flowed 8bit, -- signature"),
        (
            "thunderbird-fr-bottom-posted.eml",
            lambda c, t: thunderbird(c, "Voici ma roulette :\n\n" + t, below=True, lang="fr"),
            "Thunderbird French 'Le ... a écrit :' (nbsp), answer with a greeting below the quote",
        ),
        ("yahoo-roulette.eml", yahoo, "Yahoo web: attribution then the original NOT prefixed with >"),
        ("aol-roulette.eml", aol, "AOL: -----Original Message----- block, original unprefixed"),
        ("proton-html-only-roulette.eml", proton, "Proton Mail HTML-only base64, protonmail_quote blockquote"),
        ("fastmail-roulette.eml", fastmail, "Fastmail multipart/alternative, 'On ..., at 19:00, Referee wrote:'"),
        ("k9-roulette.eml", k9, "K-9 Mail: -- signature 'Sent from my Android device with K-9 Mail' above the quote"),
        ("roundcube-roulette.eml", roundcube, "Roundcube 'Am 2026-12-01 19:00, schrieb Referee:' format=flowed"),
        ("mutt-inline-roulette.eml", mutt, "Mutt inline reply: answer between quoted parts, -- signature"),
        ("evolution-roulette.eml", evolution, "Evolution: -- signature with an address, then attribution + quote"),
        ("owa-roulette.eml", owa, "Outlook on the web: divRplyFwdMsg, plain part with unprefixed original"),
        (
            "gmx-roulette.eml",
            lambda c, t: gmx(c, t + "\n\nLG Alice"),
            "GMX: 'Gesendet:' first, then Von/An/Betreff, original unprefixed (holds the form again)",
        ),
        (
            "webde-roulette.eml",
            lambda c, t: webde(c, t + "\n\nGruß\nAlice"),
            "Web.de HTML-only: original in a <div name=quote>, not a blockquote (its form appears as text)",
        ),
        (
            "orange-roulette.eml",
            lambda c, t: orange(c, "Bonjour,\n\n" + t + "\n\nCordialement,\nAlice"),
            "Orange webmail: '> Message du ...' / '> De :' block, French",
        ),
        ("samsung-roulette.eml", samsung, "Samsung Email: base64, '-------- Original message --------', unprefixed"),
    ]
    for file, fn, note in shapes:
        text, move = nxt()
        c = k.ctx(file)
        k.acc(c, fn(c, text), move, note)

    for lang in ("de", "fr", "es", "nl", "it", "pt"):
        text, move = nxt()
        c = k.ctx(f"gmail-{lang}-attribution.eml")
        k.acc(c, gmail(c, text, lang=lang), move, f"Gmail reply with the {lang} attribution line above the > quote")
    text, move = nxt()
    c = k.ctx("gmail-es-bottom-posted.eml")
    k.acc(c, gmail(c, text, lang="es", below=True), move, "Gmail, Spanish attribution, answer below the quote")

    # ---- accepted: what players type ---------------------------------------------------------------
    c = k.ctx("abbreviated-keys.eml")
    k.acc(
        c,
        thunderbird(c, "roulette\nwin: sil\ng 28\ns 12\nb -\n\ncheers"),
        R("Silver", 28, 12),
        "lower-case header, 'win: sil', prefixes, no separators, '-' as 0 (documented tolerances)",
    )
    c = k.ctx("bullets-and-spellings.eml")
    k.acc(
        c,
        thunderbird(
            c, "My roulette:\n\nRoulette:\n- Winning color = black\n* gold: 30 points\n\u2022 Silver 10pts\n- Black: 0."
        ),
        R("Black", 30, 10),
        "bullets, 'color', '=' and whitespace separators, 'points'/'pts', trailing dot",
    )
    c = k.ctx("prose-after-numbers.eml")
    k.acc(
        c,
        thunderbird(c, "ROULETTE\nWinning colour: Gold\nGold: 32 (feeling lucky)\nSilver: 8 (just in case)\nBlack: 0"),
        R("Gold", 32, 8),
        "prose after the numbers: 'Gold: 32 (feeling lucky)' reads as 32",
    )
    c = k.ctx("signature-dashdash-entry-like.eml")
    k.acc(
        c,
        thunderbird(
            c, roulette("Silver", 27, 13), sig="-- \nAlice Martin\nGold: medal collector since 2019\nPhone: 030 1234567"
        ),
        R("Silver", 27, 13),
        "a '-- ' signature whose lines look like entries is not read",
    )
    c = k.ctx("signature-tel-no-dashes.eml")
    k.acc(
        c,
        thunderbird(
            c, roulette("Black", 31, 9) + "\n\nAlice Martin\nTel: +49 30 1234567\nMobil: +49 170 9876543", sig=None
        ),
        R("Black", 31, 9),
        "signature without '-- ': name, 'Tel: +49 ...', 'Mobil: +49 ...' after the form",
    )
    c = k.ctx("signature-tel-after-blank.eml")
    k.acc(
        c,
        thunderbird(
            c, roulette("Gold", 29, 11) + "\n\nTel: +49 30 1234567\nFax: +49 30 1234568\nwww.alice.example", sig=None
        ),
        R("Gold", 29, 11),
        "signature starting right with 'Tel: +49 ...' after a blank line, no '-- '",
    )
    c = k.ctx("subject-looks-automatic.eml")
    k.acc(
        c,
        simple(c, roulette("Silver", 33, 7), subject="Automatic reply: Out of office? No, here is my roulette"),
        R("Silver", 33, 7),
        "a human mail whose Subject reads like an auto-reply (subjects are not a rule)",
    )
    c = k.ctx("view-in-browser-stub.eml")
    stub = "This message contains formatting that your mail program cannot show.\nView it in your browser: https://mail.example.net/view/7f3a9c\n"
    k.acc(
        c,
        simple(
            c,
            "",
            part=multipart(
                "alternative",
                [
                    text_part(stub, cte="7bit", ctype="text/plain; charset=utf-8"),
                    text_part(
                        "<html><body>"
                        + html_lines("Hi!\n\n" + roulette("Black", 26, 14) + "\n\nAlice")
                        + "</body></html>\n",
                        cte="quoted-printable",
                        ctype="text/html; charset=utf-8",
                    ),
                ],
                f"alt-{c.hx(12)}",
            ),
        ),
        R("Black", 26, 14),
        "plain part is only a 'view in browser' stub; the HTML part beside it holds the roulette",
    )
    c = k.ctx("edited-quote-roulette.eml")
    edited = "ROULETTE\nWinning colour: Silver\nGold: 27\nSilver: 13\nBlack: 0\n"
    k.acc(
        c,
        gmail(c, "Filled in below.", quoted=c.orig(form=edited)),
        R("Silver", 27, 13),
        "the player edited the form inside the > quote instead of writing above it",
    )
    c = k.ctx("attribution-kept-quote-deleted.eml")
    k.acc(
        c,
        simple(
            c, "On Tue, Dec 1, 2026 at 7:00\u202fPM Referee <referee@example.test> wrote:\n\n" + roulette("Gold", 34, 6)
        ),
        R("Gold", 34, 6),
        "quote deleted but its attribution line (with the address) kept above the roulette",
    )
    c = k.ctx("attachments-beside-roulette.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=multipart(
                "mixed",
                [
                    text_part(
                        "Roulette below, my notes attached.\n\n" + roulette("Black", 25, 15) + "\n",
                        cte="7bit",
                        ctype="text/plain; charset=utf-8",
                    ),
                    attachment("application/pdf", "strategy.pdf", PDF),
                    attachment("image/png", "table.png", PNG),
                    raw_part(
                        'text/plain; charset=utf-8; name="notes.txt"',
                        (roulette("Gold", 40, 0) + "\n").encode(),
                        cte="7bit",
                        headers=(("Content-Disposition", 'attachment; filename="notes.txt"'),),
                    ),
                    raw_part(
                        "message/rfc822",
                        b"From: Someone <else@example.net>\nSubject: old\n\n"
                        + roulette("Silver", 30, 10).encode()
                        + b"\n",
                        headers=(("Content-Disposition", "inline"),),
                    ),
                ],
                f"mixed-{c.hx(12)}",
            ),
        ),
        R("Black", 25, 15),
        "attachments (pdf, png, a .txt holding another roulette, a forwarded message) beside the real one",
    )
    c = k.ctx("auto-submitted-no-comment.eml")
    k.acc(
        c,
        simple(c, roulette("Silver", 30, 10), extra=(("Auto-Submitted", "no (sent by a person)"),)),
        R("Silver", 30, 10),
        "'Auto-Submitted: no (a comment)' marks a human mail (RFC 3834: comments allowed)",
    )
    c = k.ctx("auto-submitted-no-uppercase.eml")
    k.acc(
        c,
        simple(c, roulette("Gold", 28, 12), extra=(("Auto-Submitted", "No"),)),
        R("Gold", 28, 12),
        "'Auto-Submitted: No' (case-insensitive) is a human mail",
    )
    c = k.ctx("uppercase-from-address.eml")
    k.acc(
        c,
        simple(c, roulette("Black", 30, 10), frm="Alice Martin <ALICE@Example.TEST>"),
        R("Black", 30, 10),
        "registered address written in another case: addresses compare case-insensitively",
    )

    # ---- accepted: encodings and line ends ---------------------------------------------------------
    c = k.ctx("qp-soft-breaks.eml")
    body = b"Bonne journ=C3=A9e !\n\nROULETTE\nWinning col=\nour: Silver\nGold: 3=\n1\nSilver: 9\nBlack: 0\n\nAlice\n"
    k.acc(
        c,
        simple(c, "", part=raw_part("text/plain; charset=utf-8", body, cte="quoted-printable")),
        R("Silver", 31, 9),
        "QP soft line breaks inside 'colour' and inside a number",
    )
    c = k.ctx("base64-utf8-roulette.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=text_part(
                "Привет!\n\n" + roulette("Gold", 26, 14) + "\n\nСпасибо\n",
                cte="base64",
                ctype="text/plain; charset=utf-8",
            ),
        ),
        R("Gold", 26, 14),
        "base64 UTF-8 body",
    )
    c = k.ctx("latin1-8bit-roulette.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=text_part(
                "Grüße aus Köln!\n\n" + roulette("Black", 29, 11) + "\n\nJürgen's Frau\n",
                charset="iso-8859-1",
                cte="8bit",
                ctype="text/plain; charset=iso-8859-1",
            ),
        ),
        R("Black", 29, 11),
        "ISO-8859-1 8bit body",
    )
    c = k.ctx("cp1252-dash-means-zero.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=text_part(
                "Hi \u2013 here\u2019s mine:\n\nROULETTE\nWinning colour: Silver\nGold: 34\n"
                "Silver: 6\nBlack: \u2013\n\n\u201cThanks\u201d\n",
                charset="windows-1252",
                cte="quoted-printable",
                ctype='text/plain; charset="windows-1252"',
            ),
        ),
        R("Silver", 34, 6),
        "windows-1252 QP with smart quotes; Outlook autocorrected '-' to an en dash (means 0)",
    )
    c = k.ctx("iso-2022-jp-roulette.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=text_part(
                "よろしくお願いします。\n\n" + roulette("Gold", 33, 7) + "\n\n山田花子\n",
                charset="iso-2022-jp",
                cte="7bit",
                ctype='text/plain; charset="ISO-2022-JP"',
            ),
        ),
        R("Gold", 33, 7),
        "ISO-2022-JP body (Japanese greeting and signature)",
    )
    c = k.ctx("utf8-8bit-emoji.eml")
    k.acc(
        c,
        simple(c, "\U0001f3b2 Here goes!\n\n" + roulette("Black", 35, 5) + "\n\nAlice \U0001f340"),
        R("Black", 35, 5),
        "UTF-8 8bit body with emoji around the form",
    )
    c = k.ctx("flowed-roulette-trailing-space.eml")
    k.acc(
        c,
        simple(c, "ROULETTE \nWinning colour: Silver\nGold: 25\nSilver: 15\nBlack: 0\n"),
        R("Silver", 25, 15),
        "format=flowed and a trailing space after ROULETTE: the next line is joined ('ROULETTE Winning colour: ...')",
    )
    c = k.ctx("flowed-delsp.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=raw_part(
                "text/plain; charset=utf-8; format=flowed; delsp=yes",
                b"ROULETTE\nWinning colour: Go \nld\nGold: 32\nSilver: 8\nBlack: 0\n",
                cte="7bit",
            ),
        ),
        R("Gold", 32, 8),
        "format=flowed; delsp=yes splits 'Gold' across two lines",
    )
    c = k.ctx("crlf-line-ends.eml")
    k.acc(c, simple(c, roulette("Black", 26, 14), nl="\r\n"), R("Black", 26, 14), "CRLF line ends throughout")
    c = k.ctx("cr-only-line-ends.eml")
    k.acc(
        c, simple(c, roulette("Silver", 32, 8), nl="\r"), R("Silver", 32, 8), "CR-only line ends (old Mac) throughout"
    )
    c = k.ctx("missing-content-type.eml")
    k.acc(
        c,
        message(
            [
                mx_received(c, "mail.example.net", "192.0.2.10"),
                ("From", c.frm),
                ("To", c.to),
                ("Subject", c.subject),
                ("Date", DATE),
                ("Message-ID", f"<{c.uuid()}@example.net>"),
                ("In-Reply-To", c.irt),
            ],
            Part([], (roulette("Gold", 27, 13) + "\n").encode()),
            mime=False,
        ),
        R("Gold", 27, 13),
        "no MIME-Version, no Content-Type: plain US-ASCII by default",
    )
    c = k.ctx("unknown-charset.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=text_part(
                roulette("Black", 34, 6) + "\n",
                charset="us-ascii",
                cte="7bit",
                ctype='text/plain; charset="x-klingon-pIqaD"',
            ),
        ),
        R("Black", 34, 6),
        "an unknown charset label on an ASCII body",
    )
    c = k.ctx("broken-qp.eml")
    body = b"Hi =ZZ there=\n, =\n\nROULETTE\nWinning colour: Silver\nGold: 28\nSilver: 12\nBlack: 0\n\n=E9t=E9 =\n"
    k.acc(
        c,
        simple(c, "", part=raw_part("text/plain; charset=iso-8859-1", body, cte="quoted-printable")),
        R("Silver", 28, 12),
        "broken quoted-printable (=ZZ, soft break at the end); the form itself is intact",
    )
    c = k.ctx("broken-base64-truncated.eml")
    enc = base64.b64encode(("Here:\n\n" + roulette("Gold", 31, 9) + "\n\nAlice\n\n").encode()).decode().rstrip("=")[:-1]
    k.acc(
        c,
        simple(
            c,
            "",
            part=raw_part(
                "text/plain; charset=utf-8",
                "\n".join(enc[i : i + 76] for i in range(0, len(enc), 76)).encode() + b"\n",
                cte="base64",
            ),
        ),
        R("Gold", 31, 9),
        "base64 cut short (no padding, last quantum incomplete); the decodable part holds the form",
    )
    c = k.ctx("unclosed-boundary.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=multipart(
                "mixed",
                [
                    text_part(roulette("Black", 33, 7) + "\n", cte="7bit", ctype="text/plain; charset=utf-8"),
                    attachment("image/png", "x.png", PNG),
                ],
                "never-closed",
                close=False,
            ),
        ),
        R("Black", 33, 7),
        "multipart whose boundary never closes",
    )
    c = k.ctx("nul-bytes-body.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=raw_part(
                "text/plain; charset=utf-8",
                b"Hi\x00 there\x00\n\n" + roulette("Silver", 29, 11).encode() + b"\n\n\x00\x00bye\n",
                cte="8bit",
            ),
        ),
        R("Silver", 29, 11),
        "NUL bytes in the greeting and after the form",
    )
    c = k.ctx("nul-in-headers.eml")
    k.acc(
        c,
        simple(
            c,
            roulette("Gold", 25, 15),
            subject="Re: [Stationary Roulette m1]\x00 Preparation phase",
            extra=(("X-Junk", "a\x00b\x00c"),),
        ),
        R("Gold", 25, 15),
        "NUL bytes in the Subject and another header",
    )
    c = k.ctx("invalid-utf8-headers.eml")
    k.acc(
        c,
        simple(
            c,
            roulette("Black", 27, 13),
            frm=b"Alice M\xfcller <{{ALICE}}>",
            subject=b"Re: \xff\xfe caf\xe9 roulette \xc3(",
            extra=(("X-Note", b"\x80\x81\xfe"),),
        ),
        R("Black", 27, 13),
        "raw 8-bit invalid UTF-8 in From display name, Subject and another header",
    )
    c = k.ctx("invalid-utf8-body.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=raw_part(
                "text/plain; charset=utf-8",
                ("Grüße!\n\n" + roulette("Silver", 35, 5) + "\n").encode("latin-1"),
                cte="8bit",
            ),
        ),
        R("Silver", 35, 5),
        "body declared UTF-8 but holding Latin-1 bytes",
    )

    # ---- accepted: odd identifiers and sizes -------------------------------------------------------
    c = k.ctx("no-message-id.eml")
    k.acc(
        c,
        simple(c, roulette("Gold", 30, 10), drop=("Message-ID",)),
        R("Gold", 30, 10),
        "no Message-ID at all: processed, and the receipt is still composed",
    )
    c = k.ctx("non-ascii-message-id.eml")
    k.acc(
        c,
        simple(
            c,
            roulette("Black", 28, 12),
            msgid="<ünïcødé.4711@exämple.test>",
            extra=(("References", "<vörher.1@exämple.test> {{INREPLYTO_ALICE}}"),),
        ),
        R("Black", 28, 12),
        "raw UTF-8 Message-ID and References: the reply must still be composed",
    )
    c = k.ctx("encoded-word-message-id.eml")
    k.acc(
        c,
        simple(
            c,
            roulette("Silver", 26, 14),
            msgid="=?utf-8?q?=3C4712=2Eenc=40example=2Enet=3E?=",
            extra=(("References", "=?utf-8?b?PGVuYy4xQGV4YW1wbGUubmV0Pg==?= {{INREPLYTO_ALICE}}"),),
        ),
        R("Silver", 26, 14),
        "RFC 2047 encoded words as Message-ID and in References",
    )
    c = k.ctx("references-3000-ids.eml")
    refs = "\n ".join(f"<thread.{i:05d}.{_h(str(i), 12)}@mail.example.net>" for i in range(3000))
    k.acc(
        c,
        simple(
            c,
            roulette("Gold", 34, 6),
            irt=False,
            extra=(("In-Reply-To", "{{INREPLYTO_ALICE}}"), ("References", refs + "\n {{INREPLYTO_ALICE}}")),
        ),
        R("Gold", 34, 6),
        "References chain of 3000 ids (about 140 KB): the reply's References must stay bounded",
    )
    for n in (400, 999, 5000):
        c = k.ctx(f"message-id-{n}-chars.eml")
        text, move = nxt()
        k.acc(
            c,
            simple(c, text, msgid=message_id_of_length(n)),
            move,
            f"a Message-ID of {n} characters: processed, the reply composed without overflowing a header line",
        )
    c = k.ctx("header-100kb.eml")
    k.acc(
        c,
        simple(c, roulette("Black", 32, 8), extra=(("X-Long-Header", "x" * 102400),)),
        R("Black", 32, 8),
        "one unfolded header line of 100 KB",
    )
    c = k.ctx("headers-10000.eml")
    k.acc(
        c,
        simple(c, roulette("Silver", 31, 9), top=tuple(("X-Filler", str(i)) for i in range(10000))),
        R("Silver", 31, 9),
        "10,000 header fields before the real ones",
    )
    c = k.ctx("mime-nested-100-deep.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=multipart(
                "mixed",
                [
                    text_part(roulette("Gold", 26, 14) + "\n", cte="7bit", ctype="text/plain; charset=utf-8"),
                    nested(100, text_part("deep inside\n", cte="7bit", ctype="text/plain; charset=utf-8")),
                ],
                "top-level",
            ),
        ),
        R("Gold", 26, 14),
        "the form in the first part; beside it MIME nested 100 deep",
    )
    c = k.ctx("html-160kb-unclosed-a.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=text_part(
                "<html><body>" + html_lines(roulette("Black", 29, 11)) + "\n" + "<a" * 81920 + "\n",
                cte="7bit",
                ctype="text/html; charset=utf-8",
            ),
        ),
        R("Black", 29, 11),
        "HTML-only: the form, then 160 KB of '<a' (quadratic for naive HTML parsers)",
    )
    c = k.ctx("schrieb-200kb-after-form.eml")
    k.acc(
        c,
        simple(c, roulette("Silver", 30, 10) + "\n\nAm 1" + " schrieb" * 25600),
        R("Silver", 30, 10),
        "the form, then a line 'Am 1' + 200 KB of ' schrieb' (attribution regex bait), under 256 KB",
    )
    c = k.ctx("spaces-80kb-line.eml")
    k.acc(
        c,
        simple(c, roulette("Gold", 32, 8) + "\nx" + " " * 81920 + "y"),
        R("Gold", 32, 8),
        "the form, then a line 'x' + 80 KB of spaces + 'y' (split regex bait)",
    )

    # bob revises his roulette (the one that stands is what alice bets on in round 1)
    c = k.ctx("bob-outlook-roulette.eml", "bob")
    k.acc(
        c,
        outlook(c, "Hi,\n\n" + roulette("Black", 26, 14) + "\n\nBob"),
        R("Black", 26, 14),
        "bob (Outlook) revises the roulette he sent through the scripted client",
    )
    c = k.ctx("bob-thunderbird-roulette.eml", "bob")
    k.acc(
        c, thunderbird(c, roulette("Gold", 33, 7), sig="-- \nBob"), R("Gold", 33, 7), "bob revises again (Thunderbird)"
    )

    # ---- duplicates ---------------------------------------------------------------------------------
    c = k.ctx("dup-original.eml")
    dup_date = "Tue, 01 Dec 2026 21:02:11 +0100"
    first = thunderbird(c, roulette("Silver", 27, 13), msgid="<dup.original.7781@posteo.de>", date=dup_date)
    k.acc(c, first, R("Silver", 27, 13), "a mail the MTA will deliver a second time (see dup-redelivered.eml)")
    c = k.ctx("dup-in-between.eml")
    k.acc(
        c,
        thunderbird(c, roulette("Gold", 28, 12)),
        R("Gold", 28, 12),
        "a revision between a mail and its re-delivery: the re-delivery must not undo it",
    )
    c = k.ctx("dup-redelivered.eml")
    extra_hop = (
        b"Received: from relay2.example.net (relay2.example.net [192.0.2.99])\n\tby mx.example.test (Postfix) "
        b"with ESMTPS id 4RETRY0001\n\tfor <{{REPLY_ALICE}}>; Tue, 01 Dec 2026 20:40:00 +0000\n"
    )
    k.add(
        Case(
            c.file,
            0,
            "ignored",
            "the same mail delivered again with one more Received header",
            extra_hop + first,
            rule="duplicate",
            reply=False,
            player="alice",
            same_as="dup-original.eml",
        )
    )
    c = k.ctx("dup-no-message-id-original.eml")
    first = thunderbird(c, roulette("Black", 30, 10), msgid="", date="Tue, 01 Dec 2026 21:20:00 +0100")
    k.acc(c, first, R("Black", 30, 10), "a mail without Message-ID that will be delivered twice")
    c = k.ctx("dup-no-message-id-redelivered.eml")
    k.add(
        Case(
            c.file,
            0,
            "ignored",
            "re-delivery of a mail without Message-ID (one more Received): still a duplicate",
            extra_hop.replace(b"4RETRY0001", b"4RETRY0002") + first,
            rule="duplicate",
            reply=False,
            player="alice",
            same_as="dup-no-message-id-original.eml",
        )
    )

    # ---- rejected: moves the rules forbid ----------------------------------------------------------
    bad = [
        ("roulette-gold-under-25.eml", roulette("Gold", 20, 20), "at least 25", "Gold 20: Gold needs at least 25"),
        ("roulette-silver-under-5.eml", roulette("Gold", 37, 3), "at least 5", "Silver 3: Silver needs at least 5"),
        ("roulette-black-points.eml", roulette("Gold", 30, 5, 5), "Black cannot", "points on Black in a roulette"),
        ("roulette-sum-35.eml", roulette("Gold", 30, 5), "exactly 40", "points add up to 35, not 40"),
        ("roulette-sum-45.eml", roulette("Silver", 35, 10), "exactly 40", "points add up to 45, not 40"),
        ("roulette-winning-purple.eml", roulette("Purple", 30, 10), "not a colour", "winning colour Purple"),
        ("roulette-winning-red.eml", roulette("Red", 30, 10), "not a colour", "winning colour Red"),
        ("bet-in-round-0.eml", bet(20, 20), "nothing to bet on", "a BET in the preparation phase"),
        ("roulette-gold-thirty.eml", roulette("Gold", "thirty", 10), "whole number", "'Gold: thirty' is unreadable"),
        ("roulette-decimal.eml", roulette("Gold", "30.5", "9.5"), "whole number", "'Gold: 30.5' is not a whole number"),
        (
            "roulette-missing-silver.eml",
            "ROULETTE\nWinning colour: Gold\nGold: 30\nBlack: 0",
            "missing",
            "Silver line missing from the ROULETTE",
        ),
        (
            "roulette-missing-winning.eml",
            "ROULETTE\nGold: 30\nSilver: 10\nBlack: 0",
            "missing",
            "winning colour missing from the ROULETTE",
        ),
        (
            "two-roulette-sections.eml",
            roulette("Gold", 30, 10) + "\n\n" + roulette("Silver", 30, 10),
            "two roulette sections",
            "two ROULETTE sections in one mail",
        ),
        (
            "roulette-gold-twice.eml",
            "ROULETTE\nWinning colour: Gold\nGold: 30\nGold: 25\nSilver: 10\nBlack: 0",
            "twice",
            "Gold written twice in one ROULETTE",
        ),
        (
            "number-5000-digits.eml",
            roulette("Gold", "3" + "0" * 4999, 10),
            "digits",
            "a number of 5,000 digits (Python's int() refuses over 4,300)",
        ),
    ]
    for file, text, phrase, note in bad:
        c = k.ctx(file)
        k.rej(c, thunderbird(c, text), phrase, note)
    c = k.ctx("no-section-question.eml")
    k.rej(
        c,
        simple(c, "Hi referee,\n\nhow do I play this? What am I supposed to send?\n\nAlice"),
        "no ROULETTE or BET section",
        "a question, no form at all (and no quote to fall back on)",
    )
    c = k.ctx("thanks-only.eml")
    k.rej(
        c,
        simple(c, "Thanks, got it!\n\nAlice"),
        "no ROULETTE or BET section",
        "a thank-you note without a quote: nothing to record",
    )

    # ---- rejected: from a registered player, but not a valid way in --------------------------------
    for file, placeholder, note in [
        ("damaged-token-cut.eml", "{{REPLY_ALICE_CUT}}", "reply address with the token's last 4 characters cut"),
        ("damaged-token-extra-char.eml", "{{REPLY_ALICE_PLUS}}", "reply address with one character added to the token"),
        (
            "damaged-token-non-ascii.eml",
            "{{REPLY_ALICE_NONASCII}}",
            "reply address with a non-ASCII character in the token",
        ),
    ]:
        c = k.ctx(file)
        text = roulette(*ROTATE_R[len(k.cases) % len(ROTATE_R)]) + f"\n\n({file[:-4]})"
        k.rej(
            c,
            simple(c, text, to=f"Referee <{placeholder}>"),
            "damaged",
            note + ": alice is told it was damaged and shown the right one",
            shows="{{REPLY_ALICE}}",
        )
    for file, frm, note in [
        ("spoof-eve-valid-token.eml", "Eve Mallory <eve@evil.test>", "a stranger uses alice's valid reply address"),
        (
            "from-bob-to-alice-token.eml",
            "Bob Keller <{{BOB}}>",
            "bob (registered, but not this seat) writes to alice's address",
        ),
        ("from-lookalike-domain.eml", "Alice Martin <alice@example.test.evil.test>", "a look-alike From address"),
        ("from-empty.eml", "", "an empty From"),
        ("from-group-undisclosed.eml", "undisclosed-recipients:;", "a group From with no address"),
        (
            "from-group-with-alice.eml",
            "Team Alice: {{ALICE}};",
            "a group From (groups are not mailboxes) holding alice",
        ),
        (
            "from-encoded-word.eml",
            "=?utf-8?b?" + base64.b64encode(b"Alice Martin <alice@example.test>").decode() + "?=",
            "From is one encoded word hiding alice's address (RFC 2047 forbids that)",
        ),
    ]:
        c = k.ctx(file)
        text = roulette(*ROTATE_R[len(k.cases) % len(ROTATE_R)]) + f"\n\n({file[:-4]})"
        k.rej(
            c,
            simple(c, text, frm=frm),
            "not your registered address",
            note + ": not obeyed; alice is told, the reply naming what was found",
        )
    c = k.ctx("from-missing.eml")
    k.rej(
        c,
        simple(c, roulette("Silver", 31, 9), drop=("From",)),
        "not your registered address",
        "no From header at all: not obeyed; alice is told that no sender was found",
    )
    c = k.ctx("general-address-new-mail.eml")
    k.rej(
        c,
        simple(
            c,
            "Here is my roulette.\n\n" + roulette("Gold", 29, 11),
            to="Referee <{{REFEREE}}>",
            irt=False,
            subject="my roulette",
        ),
        "general address",
        "alice writes a new mail to the general address",
    )
    c = k.ctx("general-address-reply-to-from.eml")
    k.rej(
        c,
        gmail(c, roulette("Black", 33, 7)).replace(b"{{REPLY_ALICE}}", b"{{REFEREE}}"),
        "general address",
        "alice's client ignored Reply-To and answered the From (general) address",
    )
    c = k.ctx("body-over-256kb.eml")
    log = "".join(
        f"2026-12-01 18:{i // 60 % 60:02d}:{i % 60:02d} INFO worker[{i % 7}] processed item {i} ok\n"
        for i in range(5200)
    )
    k.add(
        Case(
            c.file,
            k.round,
            "accepted",
            "the form, then over 256 KB of a pasted log: only the first 256 KB are read, the form among them;"
            " the receipt says the mail was cut",
            simple(c, roulette("Gold", 30, 10) + "\n\nmy log, in case it helps:\n\n" + log),
            move={"type": "roulette", "winning": "Gold", "points": {"Gold": 30, "Silver": 10, "Black": 0}},
            reply=True,
            player=c.player,
            shows="only its beginning was read",
        )
    )
    c = k.ctx("schrieb-256kb.eml")
    k.rej(
        c,
        simple(c, "Am 1" + " schrieb" * 33000),
        "256 KB",
        "a line 'Am 1' + 264 KB of ' schrieb' (attribution regex bait); over 256 KB",
    )

    # ---- ignored: automated mail (RFC 3834 and loop rules) ------------------------------------------
    c = k.ctx("gmail-vacation-auto-replied.eml")
    k.ign(
        c,
        simple(
            c,
            "",
            extra=(("Auto-Submitted", "auto-replied"),),
            part=multipart(
                "alternative",
                [
                    text_part(
                        "I'm hiking in the Alps until 7 December, no signal. I'll answer when I'm back.\n",
                        cte="7bit",
                        ctype='text/plain; charset="UTF-8"',
                    ),
                    text_part(
                        '<div dir="ltr">I&#39;m hiking in the Alps until 7 December, no signal.</div>\n',
                        cte="7bit",
                        ctype='text/plain; charset="UTF-8"'.replace("plain", "html"),
                    ),
                ],
                "0000000000004c5f2a0613729d17",
            ),
        ),
        "auto-submitted",
        "Gmail vacation responder (Auto-Submitted: auto-replied)",
    )
    c = k.ctx("exchange-ooo-auto-generated.eml")
    k.ign(
        c,
        simple(
            c,
            "Thank you for your message. I am out of the office until 7 December with no access to email.",
            subject="Automatic reply: " + SUBJECT[0],
            extra=(
                ("auto-submitted", "auto-generated"),
                ("X-Auto-Response-Suppress", "All"),
                ("x-ms-exchange-generated-message-source", "Mailbox Rules Agent"),
            ),
        ),
        "auto-submitted",
        "Exchange out-of-office (auto-submitted: auto-generated, lower-case field name)",
    )
    c = k.ctx("precedence-bulk.eml")
    k.ign(
        c,
        simple(c, roulette("Black", 30, 10), extra=(("Precedence", "bulk"),)),
        "precedence",
        "Precedence: bulk (a mail-merge tool), even with a valid form in it",
    )
    c = k.ctx("precedence-junk.eml")
    k.ign(c, simple(c, roulette("Black", 30, 10), extra=(("Precedence", "junk"),)), "precedence", "Precedence: junk")
    c = k.ctx("x-autoreply.eml")
    k.ign(
        c,
        simple(c, "This is an automatic reply. Your mail has been received.", extra=(("X-Autoreply", "yes"),)),
        "autoresponder-header",
        "X-Autoreply: yes (a hosting panel autoresponder)",
    )
    c = k.ctx("list-id.eml")
    k.ign(
        c,
        simple(
            c,
            roulette("Black", 30, 10),
            extra=(
                ("List-Id", "Roulette players <players.example.test>"),
                ("List-Post", "<mailto:players@example.test>"),
                ("List-Help", "<mailto:players-request@example.test?subject=help>"),
            ),
        ),
        "list-traffic",
        "came through a mailing list (List-Id, List-Post, List-Help)",
    )
    c = k.ctx("return-path-null.eml")
    k.ign(
        c,
        simple(c, roulette("Black", 30, 10), top=(("Return-Path", "<>"),)),
        "null-return-path",
        "Return-Path: <> (null envelope sender) and nothing else automated",
    )
    c = k.ctx("mailer-daemon-delay-warning.eml")
    k.ign(
        c,
        simple(
            c,
            "This is the mail system at host mx.example.net.\n\n####################################\n"
            "# THIS IS A WARNING ONLY.  YOU DO NOT NEED TO RESEND YOUR MESSAGE. #\n",
            frm="Mail Delivery System <MAILER-DAEMON@mx.example.net>",
            to="{{REFEREE}}",
            irt=False,
            subject="Delayed Mail (still being retried)",
        ),
        "mailer-daemon",
        "From MAILER-DAEMON@, a plain-text warning with no other marker",
    )
    c = k.ctx("postfix-dsn.eml")
    k.ign(
        c,
        message(
            [
                ("Return-Path", "<>"),
                ("Delivered-To", "{{REFEREE}}"),
                (
                    "Received",
                    "by mx.example.test (Postfix)\n\tid 4TvF3k1Q2Sz9sPq; Tue, 01 Dec 2026 18:00:07 +0000 (UTC)",
                ),
                ("Date", DATE),
                ("From", "MAILER-DAEMON@mx.example.test (Mail Delivery System)"),
                ("Subject", "Undelivered Mail Returned to Sender"),
                ("To", "{{REFEREE}}"),
                ("Auto-Submitted", "auto-replied"),
                ("Message-Id", "<20261201180007.4TvF3k1Q2Sz9sPq@mx.example.test>"),
            ],
            multipart(
                "report",
                dsn_part(
                    "failed", "mx.example.test", "alice@example.test", "5.2.2", "552 5.2.2 mailbox full", OUR_HEADERS
                ),
                "4TvF3k1Q2Sz9sPq.1796148007/mx.example.test",
                preamble="This is a MIME-encapsulated message.",
                params="; report-type=delivery-status",
            ),
        ),
        "bounce",
        "Postfix DSN (multipart/report; also null Return-Path, Auto-Submitted, MAILER-DAEMON):"
        " recorded as an unverified bounce (to the plain address)",
    )
    c = k.ctx("thunderbird-mdn.eml")
    k.ign(
        c,
        message(
            [
                mx_received(c, "mout01.posteo.de", "185.67.36.65"),
                ("Message-ID", f"<{c.uuid()}@posteo.de>"),
                ("Date", DATE),
                ("MIME-Version", "1.0"),
                ("User-Agent", "Mozilla Thunderbird"),
                ("From", c.frm),
                ("Subject", "Return Receipt (displayed) - " + SUBJECT[0]),
                ("To", c.to),
            ],
            multipart(
                "report",
                mdn_part(
                    "alice.example; Mozilla Thunderbird",
                    "alice@example.test",
                    "manual-action/MDN-sent-manually; displayed",
                ),
                f"------------{c.hx(24)}",
                params="; report-type=disposition-notification",
            ),
        ),
        "delivery-report",
        "Thunderbird read receipt (MDN) from alice to her reply address",
    )
    c = k.ctx("our-loop-header.eml")
    k.ign(
        c,
        simple(
            c,
            "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0",
            subject="Fwd: [Stationary Roulette m1] Received: your submission for Preparation phase",
            extra=(
                ("X-Referee-Loop", "example.test"),
                ("Auto-Submitted", "auto-replied"),
                ("X-Forwarded-For", "alice@example.test alice@else.example"),
            ),
        ),
        "our-loop-header",
        "our own receipt, forwarded back by alice's forwarding rule (X-Referee-Loop: example.test)",
    )
    c = k.ctx("own-address-from.eml")
    k.ign(
        c,
        simple(c, roulette("Black", 30, 10), frm="Referee <{{REFEREE}}>"),
        "own-address",
        "From: referee@example.test (our own address) to alice's reply address",
    )

    # ---- ignored: strangers (never answered) --------------------------------------------------------
    sig = "abcdefghijklm"
    for file, to, note in [
        ("stranger-general-address.eml", "{{REFEREE}}", "a stranger writes to the general address"),
        (
            "stranger-token-seat-2-63.eml",
            f"referee+{base36(2**63)}x{sig}@example.test",
            "a stranger's token whose seat id is 2^63 (past any database integer)",
        ),
        (
            "stranger-token-seat-10-30.eml",
            f"referee+{base36(10**30)}x{sig}@example.test",
            "a stranger's token whose seat id is 10^30",
        ),
        ("stranger-garbage-token.eml", "referee+%41%42'--drop-table@example.test", "a stranger's garbage token"),
        (
            "stranger-token-unknown-seat.eml",
            f"referee+zzzx{sig}@example.test",
            "a well-formed token of a seat that does not exist",
        ),
    ]:
        c = k.ctx(file)
        k.ign(
            c,
            stranger(
                c,
                "Hi, I would like to join.\n\n" + roulette("Gold", 30, 10),
                to=to,
                msgid="<stranger.general.0001@evil.test>" if file == "stranger-general-address.eml" else None,
            ),
            "unknown-sender",
            note + ": no reply to strangers, ever",
        )
    c = k.ctx("stranger-html-spam.eml")
    k.ign(
        c,
        stranger(
            c,
            "",
            to="{{REFEREE}}",
            frm="Casino Royale <win@casino.example>",
            subject="You won 1000 chips!!!",
            part=text_part(
                "<html><body><h1>WINNER</h1><p>Claim your <a href='http://casino.example'>chips</a>"
                "</p></body></html>\n",
                cte="quoted-printable",
                ctype="text/html; charset=utf-8",
            ),
        ),
        "unknown-sender",
        "HTML spam to the general address",
    )
    c = k.ctx("stranger-message-id-5000.eml")
    k.ign(
        c,
        stranger(c, roulette("Gold", 30, 10), to="{{REFEREE}}", msgid=message_id_of_length(5000, "evil.test")),
        "unknown-sender",
        "a stranger's mail with a 5,000-character Message-ID",
    )
    c = k.ctx("stranger-nul-invalid-utf8.eml")
    k.ign(
        c,
        stranger(
            c,
            "",
            to="{{REFEREE}}",
            frm=b"M\xe4llory\x00 <mallory@evil.test>",
            subject=b"\xff\xfe\x00hi",
            part=raw_part("text/plain; charset=utf-8", b"\x00\xff\xfeROULETTE\x00\n\xc3\x28\n", cte="8bit"),
        ),
        "unknown-sender",
        "a stranger's mail with NUL bytes and invalid UTF-8 in headers and body",
    )
    c = k.ctx("stranger-garbage.eml")
    k.ign(
        c,
        (
            b'Return-Path: <>?\nFrom: <<<@@@>>> "unterminated\nTo: =?utf-8?q?broken <a@b\n'
            b"Cc: undisclosed-recipients:;\n"
            b"Subject: =?x-unknown?b?!!!?= \xff\xfe caf\xe9\nMessage-ID: <<<junk\nIn-Reply-To: <<<\n"
            b"References: <a@b> <<c@d\n"
            b'Date: yesterday-ish\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="never-used"\n'
            b"Content-Transfer-Encoding: base64\n\n--wrong-boundary\nContent-Type: text/plain; charset=x-bogus\n\n"
            b"  caf\xe9\n--wrong-boundary--\n"
        ),
        "unknown-sender",
        "garbage in every header (no usable From, no usable recipient): a stranger",
    )


def round1(k: Corpus) -> None:
    k.round = 1
    rot = iter(ROTATE_B * 10)

    def nxt():
        g, s, b = next(rot)
        lines = ["BET"] + [f"{name}: {n}" for name, n in (("Gold", g), ("Silver", s), ("Black", b))]
        return "\n".join(lines), B(g, s, b)

    shapes = [
        ("gmail-bet-top-posted.eml", gmail, "Gmail web reply, top-posted, quote holds ROULETTE and BET forms"),
        ("android-gmail-bet.eml", android_gmail, "Gmail for Android"),
        (
            "outlook-bet.eml",
            lambda c, t: outlook(c, "Hi,\n\n" + t + "\n\nKind regards\nAlice"),
            "Outlook desktop, original (with both forms) unprefixed below the header block",
        ),
        ("outlook-de-bet.eml", lambda c, t: outlook(c, t + "\n\nMfG", lang="de"), "Outlook in German"),
        (
            "apple-mail-bet-alternative.eml",
            lambda c, t: apple_mail(c, t, alternative=True),
            "Apple Mail multipart/alternative (us-ascii plain + HTML blockquote type=cite)",
        ),
        ("iphone-bet.eml", iphone, "iPhone Mail"),
        (
            "thunderbird-bet-bottom-posted.eml",
            lambda c, t: thunderbird(c, t, below=True),
            "Thunderbird, English attribution, answer below the quote",
        ),
        (
            "yahoo-bet-mobile.eml",
            lambda c, t: yahoo(c, t, mobile=True),
            "Yahoo Mail for iPhone, footer, unprefixed original",
        ),
        ("aol-bet.eml", aol, "AOL, -----Original Message----- block"),
        (
            "proton-bet-alternative.eml",
            lambda c, t: proton(c, t, html_only=False),
            "Proton Mail multipart/mixed > alternative, 'Sent with Proton Mail' line",
        ),
        (
            "fastmail-bet-with-attachment.eml",
            lambda c, t: fastmail(
                c, t, attachment=attachment("image/jpeg", "lucky.jpg", b"\xff\xd8\xff\xe0fakejpeg\xff\xd9")
            ),
            "Fastmail with a photo attached beside the bet",
        ),
        ("k9-bet.eml", k9, "K-9 Mail"),
        (
            "roundcube-bet-bottom-posted.eml",
            lambda c, t: roundcube(c, t, below=True),
            "Roundcube, answer below, -- signature",
        ),
        ("mutt-inline-bet.eml", mutt, "Mutt inline reply between quoted parts"),
        ("evolution-bet.eml", evolution, "Evolution"),
        ("owa-bet.eml", owa, "Outlook on the web"),
        ("gmx-bet.eml", gmx, "GMX, original with both forms unprefixed"),
        ("webde-bet.eml", webde, "Web.de HTML-only, original in <div name=quote>"),
        ("orange-bet.eml", orange, "Orange webmail"),
        ("samsung-bet.eml", samsung, "Samsung Email, base64"),
    ]
    for file, fn, note in shapes:
        text, move = nxt()
        c = k.ctx(file)
        k.acc(c, fn(c, text), move, note)
    for lang in ("de", "fr", "es", "nl", "it", "pt"):
        text, move = nxt()
        c = k.ctx(f"gmail-{lang}-bet.eml")
        k.acc(c, gmail(c, text, lang=lang), move, f"Gmail reply with the {lang} attribution line")

    c = k.ctx("flowed-bet-trailing-space.eml")
    k.acc(
        c,
        simple(c, "BET \nGold: 16\nSilver: 24\nBlack: 0"),
        B(16, 24, 0),
        "format=flowed with a trailing space after BET: decoded, 'BET Gold: 16' is one line",
    )
    c = k.ctx("ps-more-rounds.eml")
    k.acc(
        c,
        thunderbird(c, bet(17, 23) + "\n\nPS: 2 more rounds to go!", sig=None),
        B(17, 23, 0),
        "'PS: 2 more rounds to go!' after the bet is prose, not an entry",
    )
    c = k.ctx("round-3-was-fun.eml")
    k.acc(
        c,
        thunderbird(c, bet(19, 21) + "\n\nRound 3 was fun", sig=None),
        B(19, 21, 0),
        "'Round 3 was fun' after the bet is prose, not an entry",
    )
    c = k.ctx("prose-after-bet-numbers.eml")
    k.acc(
        c,
        thunderbird(c, "BET\nGold: 20 (feeling lucky)\nSilver: 15 (hedge)\nBlack: 0"),
        B(20, 15, 0),
        "prose after the numbers in a BET",
    )
    c = k.ctx("view-in-browser-bet.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=multipart(
                "alternative",
                [
                    text_part(
                        "View this email in your browser: https://mail.example.net/v/91c2\n",
                        cte="7bit",
                        ctype="text/plain; charset=utf-8",
                    ),
                    text_part(
                        "<html><body>" + html_lines(bet(11, 29)) + "</body></html>\n",
                        cte="7bit",
                        ctype="text/html; charset=utf-8",
                    ),
                ],
                f"alt-{c.hx(12)}",
            ),
        ),
        B(11, 29, 0),
        "'view in browser' plain stub beside the HTML part that holds the bet",
    )
    c = k.ctx("edited-quote-bet.eml")
    k.acc(
        c,
        gmail(c, "", quoted=c.orig(form="BET\nGold: 10\nSilver: 30\nBlack: 0\n")),
        B(10, 30, 0),
        "nothing typed above: the player filled in the BET inside the > quote",
    )
    c = k.ctx("attribution-kept-bet.eml")
    k.acc(
        c,
        simple(c, "On Wed, Dec 2, 2026 at 7:00\u202fPM Referee <referee@example.test> wrote:\n\n" + bet(13, 27)),
        B(13, 27, 0),
        "quote deleted, attribution line kept above the bet",
    )
    c = k.ctx("bet-and-roulette-bet-first.eml")
    k.acc(
        c,
        thunderbird(c, bet(20, 0, 20) + "\n\n" + roulette("Silver", 25, 15)),
        [B(20, 0, 20), R("Silver", 25, 15)],
        "both sections, BET first",
    )
    c = k.ctx("bets-header-equals.eml")
    k.acc(c, thunderbird(c, "BETS:\nG = 14\nBlack = 26"), B(14, 0, 26), "'BETS:' header, '=' separators, prefix 'G'")
    c = k.ctx("bet-under-40.eml")
    k.acc(c, thunderbird(c, "BET\nGold: 15"), B(15, 0, 0), "a bet under 40 is legal; omitted colours mean 0")
    c = k.ctx("bet-all-zero.eml")
    k.acc(c, thunderbird(c, bet(0, 0, 0)), B(0, 0, 0), "a submitted bet of 0 everywhere is a valid bet")
    c = k.ctx("bet-omitted-colours.eml")
    k.acc(c, thunderbird(c, "BET\nSilver: 33\n\nthanks"), B(0, 33, 0), "only Silver named")
    c = k.ctx("tabs-separators.eml")
    k.acc(c, thunderbird(c, "BET\nGold\t12\nSilver\t\t28\nBlack\t0"), B(12, 28, 0), "tabs as separators")
    c = k.ctx("roulette-round1-revision.eml")
    k.acc(c, thunderbird(c, roulette("Black", 27, 13)), R("Black", 27, 13), "a roulette for round 2, sent in round 1")
    c = k.ctx("html-only-bet.eml")
    k.acc(
        c,
        simple(
            c,
            "",
            part=text_part(
                "<html><body><p>BET<br>Gold: 24<br>Silver: 16<br>Black: 0</p><p>Alice</p></body></html>\n",
                cte="quoted-printable",
                ctype="text/html; charset=utf-8",
            ),
        ),
        B(24, 16, 0),
        "HTML-only with <br> line breaks inside one paragraph",
    )
    c = k.ctx("subject-1000-encoded-words.eml")
    subject = "\n ".join(f"=?utf-8?q?w{i}=C3=A9?=" for i in range(1000))
    k.acc(c, simple(c, bet(9, 31), subject=subject), B(9, 31, 0), "a Subject of 1,000 encoded words")
    c = k.ctx("mime-5000-parts.eml")
    k.acc(
        c,
        simple(
            c, "", part=many_parts(text_part(bet(8, 32) + "\n", cte="7bit", ctype="text/plain; charset=utf-8"), 5000)
        ),
        B(8, 32, 0),
        "5,000 MIME parts; the first holds the bet",
    )
    c = k.ctx("bob-bet-message-id-collision.eml", "bob")
    k.acc(
        c,
        thunderbird(c, bet(30, 0, 10), msgid=_gmail_message_id("gmail-roulette-top-posted.eml"), sig="-- \nBob"),
        B(30, 0, 10),
        "bob's genuine bet reuses the Message-ID of alice's earlier gmail-roulette-top-posted.eml: "
        "a collision, not a duplicate",
    )
    c = k.ctx("alice-bet-message-id-of-stranger.eml")
    k.acc(
        c,
        thunderbird(c, bet(7, 33), msgid="<stranger.general.0001@evil.test>"),
        B(7, 33, 0),
        "alice's bet reuses the Message-ID of stranger-general-address.eml (ignored earlier): still processed",
    )
    c = k.ctx("bob-outlook-bet.eml", "bob")
    k.acc(c, outlook(c, bet(0, 25, 15) + "\n\nBob"), B(0, 25, 15), "bob bets (Outlook)")

    # duplicate: a byte-identical re-delivery with one more Received header
    c = k.ctx("dup-bet-original.eml")
    first = thunderbird(c, bet(6, 34), msgid="<dup.bet.9912@posteo.de>", date="Wed, 02 Dec 2026 20:30:00 +0100")
    k.acc(c, first, B(6, 34, 0), "a bet that is delivered a second time")
    c = k.ctx("dup-bet-redelivered.eml")
    k.add(
        Case(
            c.file,
            1,
            "ignored",
            "the same bet delivered again (one more Received): a duplicate",
            b"Received: from backup-mx.example.test (backup-mx.example.test [192.0.2.98])\n\tby mx.example.test "
            b"(Postfix) with ESMTP id 4RETRY0003\n\tfor <{{REPLY_ALICE}}>; Wed, 02 Dec 2026 19:50:00 +0000\n" + first,
            rule="duplicate",
            reply=False,
            player="alice",
            same_as="dup-bet-original.eml",
        )
    )

    # ---- rejected ----------------------------------------------------------------------------------
    bad = [
        ("bet-three-colours.eml", bet(10, 10, 10) + "\n\nThanks!", "at most 2 colours", "a bet on all three colours"),
        ("bet-over-40.eml", bet(30, 20), "40 points", "a bet adding up to 50"),
        ("bet-negative.eml", "BET\nGold: -5\nSilver: 20", "negative", "a negative bet"),
        (
            "bet-with-winning-colour.eml",
            "BET\nWinning colour: Gold\nGold: 20\nSilver: 20",
            "no winning colour",
            "a winning colour inside a BET",
        ),
        ("bet-empty-section.eml", "BET\n\nThanks", "BET section", "a BET header with no colour lines"),
        ("bet-decimal.eml", "BET\nGold: 20.5\nSilver: 19.5", "whole number", "decimal points in a bet"),
        ("two-bet-sections.eml", bet(20, 20) + "\n\n" + bet(10, 30), "two bet sections", "two BET sections"),
        ("roulette-round1-gold-under-25.eml", roulette("Gold", 24, 16), "at least 25", "round-1 roulette with Gold 24"),
    ]
    for file, text, phrase, note in bad:
        c = k.ctx(file)
        k.rej(c, thunderbird(c, text), phrase, note)
    c = k.ctx("outlook-bet-three-colours.eml")
    k.rej(c, outlook(c, bet(15, 15, 10)), "at most 2 colours", "Outlook shape, three colours bet")
    c = k.ctx("broken-base64-garbage.eml")
    k.rej(
        c,
        simple(
            c, "", part=raw_part("text/plain; charset=utf-8", b"!!!!####$$$$%%%%\n****....\n~~~~^^^^\n", cte="base64")
        ),
        "recorded",
        "base64 that decodes to nothing readable: rejected, any reason will do",
    )
    c = k.ctx("html-image-only.eml")
    k.rej(
        c,
        simple(
            c,
            "",
            part=text_part(
                '<html><body><p>My bet is in the screenshot.</p><img src="cid:bet.png" alt=""></body></html>\n',
                cte="7bit",
                ctype="text/html; charset=utf-8",
            ),
        ),
        "no ROULETTE or BET section",
        "HTML with only an image (a screenshot of the bet): nothing to read",
    )
    c = k.ctx("alice-writes-to-bob-token.eml", "bob")
    k.rej(
        c,
        simple(c, bet(17, 17), frm="Alice Martin <{{ALICE}}>"),
        "not your registered address",
        "alice writes to bob's reply address: not obeyed, bob is told",
    )
    c = k.ctx("general-address-bob.eml", "bob")
    k.rej(
        c,
        simple(c, bet(20, 15), to="{{REFEREE}}", irt=False, subject="bet"),
        "general address",
        "bob writes to the general address",
    )
    c = k.ctx("generated-20mb.eml")
    k.add(
        Case(
            c.file,
            1,
            "accepted",
            "a 20 MB mail from alice (a bet, then 20 MB): a bounded prefix is read, the bet stands;"
            " the receipt says the mail was cut and stays small",
            None,
            move={"type": "bet", "bets": {"Gold": 20, "Silver": 20, "Black": 0}},
            reply=True,
            player="alice",
            shows="only its beginning was read",
            generate="big-body:20000000",
        )
    )
    c = k.ctx("generated-2mb-single-line.eml")
    k.add(
        Case(
            c.file,
            1,
            "rejected",
            "alice sends a 2 MB body on a single line: over 256 KB",
            None,
            phrase="256 KB",
            reply=True,
            player="alice",
            generate="big-line:2000000",
        )
    )

    # ---- ignored: automated ------------------------------------------------------------------------
    for file, value in [("precedence-list.eml", "list"), ("precedence-auto-reply.eml", "auto_reply")]:
        c = k.ctx(file)
        k.ign(c, simple(c, bet(20, 20), extra=(("Precedence", value),)), "precedence", f"Precedence: {value}")
    c = k.ctx("x-autorespond.eml")
    k.ign(c, simple(c, "I am away.", extra=(("X-Autorespond", "I am away"),)), "autoresponder-header", "X-Autorespond")
    c = k.ctx("list-unsubscribe.eml")
    k.ign(
        c,
        simple(
            c,
            bet(20, 20),
            extra=(("List-Unsubscribe", "<mailto:leave@lists.example.net>, <https://lists.example.net/u/1>"),),
        ),
        "list-traffic",
        "List-Unsubscribe only (a newsletter-like mail)",
    )
    c = k.ctx("auto-submitted-auto-notified.eml")
    k.ign(
        c,
        simple(c, "Sieve notification: you have new mail.", extra=(("Auto-Submitted", "auto-notified"),)),
        "auto-submitted",
        "Auto-Submitted: auto-notified (RFC 5436): any value but 'no'",
    )
    c = k.ctx("postmaster-from.eml")
    k.ign(
        c,
        simple(
            c,
            "Your message to alice@example.test was held for review.",
            frm="postmaster@example.net",
            to="{{REFEREE}}",
            irt=False,
            subject="Message held",
        ),
        "mailer-daemon",
        "From postmaster@",
    )
    c = k.ctx("noreply-from.eml")
    k.ign(
        c,
        simple(
            c,
            "A new sign-in to your account.",
            frm="Example Service <noreply@service.example>",
            to="{{REFEREE}}",
            irt=False,
            subject="New sign-in",
        ),
        "mailer-daemon",
        "From noreply@",
    )
    c = k.ctx("exchange-ndr.eml")
    k.ign(
        c,
        message(
            [
                ("Received", "from DB9PR10MB5900.EURPRD10.PROD.OUTLOOK.COM with mapi id 15.20.7452.049; " + DATE),
                ("From", "Microsoft Outlook\n <MicrosoftExchange329e71ec88ae4615bbc36ab6ce41109e@contoso.example>"),
                ("To", "<{{REFEREE}}>"),
                ("Date", DATE),
                ("Subject", "Undeliverable: " + SUBJECT[1]),
                ("Message-ID", f"<{c.uuid()}@DB9PR10MB5900.EURPRD10.PROD.OUTLOOK.COM>"),
                ("X-MS-Exchange-Message-Is-Ndr", ""),
                ("Content-Language", "en-US"),
                ("MIME-Version", "1.0"),
            ],
            multipart(
                "report",
                dsn_part(
                    "failed",
                    "DB9PR10MB5900.EURPRD10.PROD.OUTLOOK.COM",
                    "bob@example.test",
                    "5.1.10",
                    "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup",
                    OUR_HEADERS,
                ),
                f"_{c.hx(8)}-{c.hx(4)}_",
                params="; report-type=delivery-status",
            ),
        ),
        "bounce",
        "Exchange NDR (multipart/report from MicrosoftExchange...): recorded as an unverified bounce",
    )
    c = k.ctx("gmail-dsn.eml")
    k.ign(
        c,
        message(
            [
                ("Return-Path", "<>"),
                ("Received", "by 2002:a05:6870:e0c4:b0:1e9:9b83:2f1e with SMTP id a4csp1; " + DATE),
                ("From", "Mail Delivery Subsystem <mailer-daemon@googlemail.com>"),
                ("To", "{{REFEREE}}"),
                ("Auto-Submitted", "auto-replied"),
                ("Subject", "Delivery Status Notification (Failure)"),
                ("References", "<0d1f8a2b3c4e5f60.receipt-m1-alice@example.test>"),
                ("In-Reply-To", "<0d1f8a2b3c4e5f60.receipt-m1-alice@example.test>"),
                ("Message-ID", f"<{c.hx(12)}.{c.digits(6)}@mx.google.com>"),
                ("Date", DATE),
            ],
            multipart(
                "report",
                dsn_part(
                    "failed",
                    "googlemail.com",
                    "alice@example.test",
                    "5.1.1",
                    "550 5.1.1 The email account that you tried to reach does not exist.",
                    OUR_HEADERS,
                ),
                "000000000000" + c.hx(12),
                params="; report-type=delivery-status",
            ),
        ),
        "bounce",
        "Gmail DSN (multipart/report from mailer-daemon@googlemail.com): recorded as an unverified bounce",
    )
    c = k.ctx("outlook-mdn-read-receipt.eml")
    k.ign(
        c,
        message(
            [
                mx_received(c, "EUR05-AM6-obe.outbound.protection.outlook.com", "40.107.22.100"),
                ("From", c.frm),
                ("To", c.to),
                ("Subject", "Read: " + SUBJECT[1]),
                ("Date", DATE),
                ("Message-ID", f"<AM0PR07MB{c.hx(20).upper()}@AM0PR07MB4129.eurprd07.prod.outlook.com>"),
                ("Content-Language", "en-GB"),
                ("MIME-Version", "1.0"),
            ],
            multipart(
                "report",
                mdn_part(
                    "AM0PR07MB4129.eurprd07.prod.outlook.com",
                    "alice@example.test",
                    "automatic-action/MDN-sent-automatically; displayed",
                ),
                f"_{c.hx(8)}_",
                params="; report-type=disposition-notification",
            ),
        ),
        "delivery-report",
        "Outlook read receipt (MDN) from alice to her reply address",
    )
    c = k.ctx("gmail-mdn-read-receipt.eml")
    k.ign(
        c,
        message(
            [
                mx_received(c, "mail-sor-f41.google.com", "209.85.220.41"),
                ("From", c.frm),
                ("To", c.to),
                ("Subject", "Read: " + SUBJECT[1]),
                ("Date", DATE),
                ("Message-ID", f"<CA+{c.hx(30)}@mail.gmail.com>"),
                ("MIME-Version", "1.0"),
            ],
            multipart(
                "report",
                mdn_part("Gmail; Google Workspace", "alice@example.test", "manual-action/MDN-sent-manually; displayed"),
                "000000000000" + c.hx(12),
                params="; report-type=disposition-notification",
            ),
        ),
        "delivery-report",
        "Google Workspace read receipt (MDN)",
    )
    c = k.ctx("our-loop-header-uppercase.eml")
    k.ign(
        c,
        simple(c, bet(20, 20), extra=(("X-REFEREE-LOOP", "example.test"),)),
        "our-loop-header",
        "our loop header, field name in upper case",
    )
    c = k.ctx("own-address-plus-detail.eml")
    k.ign(
        c,
        simple(c, bet(20, 20), frm="Referee <referee+1xabcdefghijklm@example.test>"),
        "own-address",
        "From one of our own reply addresses (referee+token@example.test)",
    )

    # ---- ignored: strangers, hostile -----------------------------------------------------------------
    c = k.ctx("stranger-headers-10000.eml")
    k.ign(
        c,
        stranger(c, bet(20, 20), to="{{REFEREE}}", top=tuple(("X-Filler", str(i)) for i in range(10000))),
        "unknown-sender",
        "a stranger's mail with 10,000 header fields",
    )
    c = k.ctx("stranger-mime-nested-100-deep.eml")
    k.ign(
        c,
        stranger(
            c,
            "",
            to="{{REFEREE}}",
            part=nested(100, text_part(bet(20, 20) + "\n", cte="7bit", ctype="text/plain; charset=utf-8")),
        ),
        "unknown-sender",
        "a stranger's mail nested 100 MIME levels deep",
    )
    c = k.ctx("stranger-mime-5000-parts.eml")
    k.ign(
        c,
        stranger(
            c, "", to="{{REFEREE}}", part=many_parts(text_part("hi\n", cte="7bit", ctype="text/plain"), 5000, "q")
        ),
        "unknown-sender",
        "a stranger's mail with 5,000 MIME parts",
    )
    c = k.ctx("stranger-html-160kb.eml")
    k.ign(
        c,
        stranger(
            c,
            "",
            to="{{REFEREE}}",
            part=text_part("<html><body>" + "<a" * 81920 + "\n", cte="7bit", ctype="text/html; charset=utf-8"),
        ),
        "unknown-sender",
        "a stranger's HTML body of 160 KB of '<a'",
    )
    c = k.ctx("stranger-spaces-80kb.eml")
    k.ign(
        c,
        stranger(c, "BET\nx" + " " * 81920 + "y", to="{{REFEREE}}"),
        "unknown-sender",
        "a stranger's form line 'x' + 80 KB of spaces + 'y'",
    )
    c = k.ctx("stranger-schrieb-256kb.eml")
    k.ign(
        c,
        stranger(c, "Am 1" + " schrieb" * 33000, to="{{REFEREE}}"),
        "unknown-sender",
        "a stranger's 'Am 1' + 264 KB of ' schrieb'",
    )
    c = k.ctx("stranger-bad-signature-bob-token.eml")
    k.ign(
        c,
        stranger(c, bet(20, 20), to="referee+2xaaaaaaaaaaaaa@example.test"),
        "unknown-sender",
        "a stranger with a well-formed token whose signature is wrong",
    )
    c = k.ctx("stranger-reply-with-references.eml")
    k.ign(
        c,
        stranger(
            c,
            "Who are you? Please stop writing to me.",
            to="{{REFEREE}}",
            extra=(("In-Reply-To", "<14a0e51be2524269.thread-m1-alice@example.test>"),),
        ),
        "unknown-sender",
        "a stranger answers a forwarded referee mail (In-Reply-To one of ours)",
    )


def _gmail_message_id(file: str) -> str:
    c = Ctx(file)
    return f"<CA+{c.hx(30)}{c.hx(8).upper()}w@mail.gmail.com>"


# ---------------------------------------------------------------------------- the review's probes
# Ported from an independent review's probe mails (the file name is the probe's name; the
# expected outcome, move, phrase and rule are the probe's). Where a probe accepted any reason
# for a rejection, the phrase is the one every error reply holds ("could not be recorded").
# Left out: an 8bit mail re-delivered by a relay downgraded to quoted-printable (a duplicate
# the referee cannot recognise yet: a known open limit).

SUBJECT_ROUND2 = "[Stationary Roulette m1] Round 1 of 10 result - Round 2 of 10 is open"
SUBJECT_END = "[Stationary Roulette m1] Final result"
ANY_ERROR = "could not be recorded"  # in every error reply: "... could not be recorded."

# The referee's round mails as they are (only the reply address is left out of the body):
# longer than ROUND0/ROUND1 above, with the totals, the colours left and the scoring rules.
FULL_ROUND0 = """Dear {me},

This is the referee of your Stationary Roulette match m1 against {other} (Test season).

=== Now: Preparation phase ===

* Prepare a roulette for {other} to bet on in round 1.
  Choose its winning colour (you may still choose Gold 5, Silver 5, Black 5 more times)
  and place exactly 40 points: Gold at least 25, Silver at least 5, Black 0.
  {other} will see the points but not the winning colour.

* There is nothing to bet on in the preparation phase; betting starts in round 1.

Deadline: Wed 2 Dec 2026, {clock} (18:00 UTC).
The round closes then, not earlier; until then you may send again and your last valid
submission counts. If nothing arrives from you by then: no roulette gives {other}
60 points, no bet counts as 0 on every colour, and each miss costs you 5 chips (paid to the LGT).

To answer, reply to this mail and keep the lines
below, changing only the colour and the numbers:

{form}
{scoring}"""

FULL_ROUND1 = """Dear {me},

This is the referee of your Stationary Roulette match m1 against {other} (Test season).

=== Result of Preparation phase ===

{me} prepared a roulette for the next round.
{other} prepared a roulette for the next round.

Chip movements:
  none.

Totals after Preparation phase:
  {me}: 0 points (+0 this round), 200 chips; lost to Black takes 0 of 100; taken through own Black roulettes 0.
  {other}: 0 points (+0 this round), 200 chips; lost to Black takes 0 of 100; taken through own Black roulettes 0.
Winning colours left (each colour at most 5 times per player):
  You: {left}.
  {other} (as far as revealed): Gold 5, Silver 5, Black 5.

=== Now: Round 1 of 10 ===

* Prepare a roulette for {other} to bet on in round 2.
  Choose its winning colour (you may still choose {left} more times)
  and place exactly 40 points: Gold at least 25, Silver at least 5, Black 0.
  {other} will see the points but not the winning colour.

* Bet on the roulette {other} prepared in the preparation phase.
  Its points: Gold 30, Silver 10, Black 0. Its winning colour stays secret until this round closes.
  You have 40 points to bet on at most 2 colours (Gold, Silver, Black);
  points you leave unbet are simply not used.

{other} is betting this round on your roulette: winning colour {mine}, points Gold 30, Silver 10, Black 0.

Deadline: Thu 3 Dec 2026, {clock} (18:00 UTC).
The round closes then, not earlier; until then you may send again and your last valid
submission counts. If nothing arrives from you by then: no roulette gives {other}
60 points, no bet counts as 0 on every colour, and each miss costs you 5 chips (paid to the LGT).

To answer, reply to this mail and keep the lines
below, changing only the colour and the numbers:

{form}
{scoring}"""

SCORING = """How scoring works, in short: on a Gold or Silver roulette both players earn their points
on the winning colour (the preparer the points placed there, the bettor the points bet
there). A bettor who puts all 40 points on one colour earns 20 bonus points if it is the
winning colour; if not, the preparer earns the 20. On a Black roulette nobody earns points
(bonus aside): the preparer takes 40 chips minus the bet on Black from the bettor, then
pays the LGT 10 chips. A player who loses 100 chips to Black takes, or owes more chips
than they hold, loses at once. After round 10 the most points wins, and the winner takes
1 chip from the loser per 10 points of lead.

{dashdash}
The referee (an automated service; replies to this address are read by the program)"""


def full_original(player: str, rnd: int) -> str:
    """The referee's round mail to ``player`` as a client shows it (no trailing newline)."""
    return (FULL_ROUND0 if rnd == 0 else FULL_ROUND1).format(
        me=FIRST[player],
        other=OTHER[player],
        clock="19:00 CET" if player == "alice" else "13:00 EST",
        left="Gold 4, Silver 5, Black 5" if player == "alice" else "Gold 5, Silver 4, Black 5",
        mine="Gold" if player == "alice" else "Silver",
        form=FORM0 if rnd == 0 else FORM1,
        scoring=SCORING.format(dashdash="-- "),
    )


def rv_roulette(w, g, s, b=0, sep: str = ": ") -> str:
    return f"ROULETTE\nWinning colour{sep}{w}\nGold{sep}{g}\nSilver{sep}{s}\nBlack{sep}{b}\n"


def rv_bet(g=None, s=None, b=None, sep: str = ": ") -> str:
    out = "BET\n"
    for name, value in (("Gold", g), ("Silver", s), ("Black", b)):
        if value is not None:
            out += f"{name}{sep}{value}\n"
    return out


def rv_esc(text: str) -> str:
    return html.escape(text, quote=False)


def rv_lines(text: str, tag: str = "div") -> str:
    return "".join(f"<{tag}>{rv_esc(line) or '<br>'}</{tag}>" for line in text.splitlines())


def rv_noise(c: Ctx, n: int, salt: str = "") -> bytes:
    """``n`` bytes that look random, derived from the file name (the output stays deterministic)."""
    out = b""
    i = 0
    while len(out) < n:
        out += hashlib.sha256(f"{c.file}:{salt}:{i}".encode()).digest()
        i += 1
    return out[:n]


def rv_head(
    c: Ctx,
    *,
    msgid: str,
    frm: str | bool | None = None,
    to: str | None = None,
    subject: str | None = None,
    irt: str | bool = True,
    cc: str | None = None,
    extra: tuple | list = (),
    top: tuple | list = (),
) -> list[tuple[str, str | bytes]]:
    """The header block of a probe: trace, From, To, (Cc,) Subject, Date, Message-ID,
    In-Reply-To and References (``irt``: True for the latest referee mail, a value, or False)."""
    hs: list[tuple[str, str | bytes]] = [*top, mx_received(c, "mail.example.net", "192.0.2.7")]
    if frm is not False:
        hs.append(("From", frm if frm is not None else c.frm))
    hs.append(("To", to if to is not None else c.to))
    if cc:
        hs.append(("Cc", cc))
    hs += [("Subject", subject if subject is not None else c.subject), ("Date", DATE)]
    if msgid:
        hs.append(("Message-ID", f"<{msgid}>"))
    if irt:
        ref = c.irt if irt is True else irt
        hs += [("In-Reply-To", ref), ("References", ref)]
    hs.extend(extra)
    return hs


def rv_mail(c: Ctx, part: Part, **head) -> bytes:
    return message(rv_head(c, **head), part)


def rv_plain(text: str, *, charset: str = "utf-8", cte: str = "8bit", flowed: bool = False, extra: tuple = ()) -> Part:
    ctype = f'text/plain; charset="{charset}"' + ("; format=flowed" if flowed else "")
    if cte == "qp-raw":  # labelled quoted-printable, the text as it is
        return raw_part(ctype, text.encode(charset), cte="quoted-printable", headers=extra)
    return text_part(text, charset=charset, cte=cte, ctype=ctype, headers=extra)


def rv_html(body: str, *, charset: str = "utf-8", cte: str = "quoted-printable") -> Part:
    return text_part(body, charset=charset, cte=cte, ctype=f'text/html; charset="{charset}"')


def rv_bytes(ctype: str, data: bytes, *, extra: tuple = ()) -> Part:
    return raw_part(ctype, b64(data), cte="base64", headers=extra)


def rv_block(c: Ctx, labels: tuple, date: str, *, underscores: bool = False) -> str:
    """An Outlook reply header block with localized labels, as the client writes it."""
    top = "________________________________\n" if underscores else ""
    return (
        f"{top}{labels[0]}: Referee <referee@example.test>\n{labels[1]}: {date}\n"
        f"{labels[2]}: {FIRST[c.player]} <{LITERAL[c.player]}>\n{labels[3]}: {SUBJECT[c.rnd]}\n\n"
    )


def rv_rej(k: Corpus, c: Ctx, raw: bytes, phrase: str, note: str, *, rule: str | None = None, reply: bool = True):
    k.add(Case(c.file, k.round, "rejected", note, raw, phrase=phrase, rule=rule, reply=reply, player=c.player))


OUTLOOK_LANGS = [
    ("sv", ("Från", "Skickat", "Till", "Ämne"), "den 1 december 2026 19:00", ("Gold", 27, 13), "Hej!"),
    ("da", ("Fra", "Sendt", "Til", "Emne"), "1. december 2026 19:00", ("Silver", 26, 14), "Hej"),
    ("pl", ("Od", "Wysłane", "Do", "Temat"), "wtorek, 1 grudnia 2026 19:00", ("Black", 29, 11), "Cześć"),
    ("cs", ("Od", "Odesláno", "Komu", "Předmět"), "úterý 1. prosince 2026 19:00", ("Gold", 35, 5), "Ahoj"),
    ("ru", ("От", "Отправлено", "Кому", "Тема"), "1 декабря 2026 г. 19:00", ("Silver", 31, 9), "Привет"),
    ("ja", ("差出人", "送信日時", "宛先", "件名"), "2026年12月1日 19:00", ("Gold", 25, 15), "よろしくお願いします"),
    ("zh", ("发件人", "发送时间", "收件人", "主题"), "2026年12月1日 19:00", ("Black", 30, 10), "你好"),
    ("tr", ("Kimden", "Gönderildi", "Kime", "Konu"), "1 Aralık 2026 Salı 19:00", ("Silver", 33, 7), "Merhaba"),
    ("it", ("Da", "Inviato", "A", "Oggetto"), "martedì 1 dicembre 2026 19:00", ("Gold", 29, 11), "Ciao"),
    ("nl", ("Van", "Verzonden", "Aan", "Onderwerp"), "dinsdag 1 december 2026 19:00", ("Black", 27, 13), "Hoi"),
    ("pt", ("De", "Enviado", "Para", "Assunto"), "terça-feira, 1 de dezembro de 2026 19:00", ("Silver", 32, 8), "Olá"),
    ("es", ("De", "Enviado el", "Para", "Asunto"), "martes, 1 de diciembre de 2026 19:00", ("Gold", 31, 9), "Hola"),
]


def review_round0(k: Corpus) -> None:
    k.round = 0

    # ---- accepted: client shapes ---------------------------------------------------------------------
    c = k.ctx("outlook-mac-roulette.eml")
    text = (
        "Hi referee,\n\n"
        + rv_roulette("Silver", 28, 12)
        + "\nAlice\n\n"
        + rv_block(c, ("From", "Date", "To", "Subject"), "Tuesday, 1 December 2026 at 19:00")
        + full_original("alice", 0)
    )
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(text, cte="quoted-printable"),
            msgid="OLMAC1@outlook.mac.example.net",
            extra=(("User-Agent", "Microsoft-MacOutlook/16.80.23121017"), ("Thread-Topic", "x")),
        ),
        R("Silver", 28, 12),
        "Outlook for Mac: From/Date/To/Subject block, original unprefixed",
    )

    c = k.ctx("spark-roulette.eml")
    attr = "On 1 Dec 2026 at 19:00 +0100, Referee <referee@example.test>, wrote:"
    text = (
        rv_roulette("Black", 25, 15) + "\nSent with Spark\n\n" + attr + "\n" + quote(full_original("alice", 0)) + "\n"
    )
    body = (
        "<html><body><div>"
        + rv_lines(rv_roulette("Black", 25, 15))
        + '</div><div>Sent with Spark</div><div class="gmail_quote">'
        + rv_esc(attr)
        + '<blockquote type="cite">'
        + rv_lines(full_original("alice", 0))
        + "</blockquote></div></body></html>"
    )
    k.acc(
        c,
        rv_mail(
            c,
            multipart("alternative", [rv_plain(text, cte="quoted-printable"), rv_html(body)], "spark-b1"),
            msgid="a1b2c3d4-spark@Spark",
        ),
        R("Black", 25, 15),
        "Spark: 'On 1 Dec 2026 at 19:00 +0100, Referee <...>, wrote:' + > quote",
    )

    c = k.ctx("airmail-roulette.eml")
    text = (
        rv_roulette("Gold", 32, 8)
        + "\n-- \nAlice\nSent with Airmail\n\n"
        + "On December 1, 2026 at 19:00:00, Referee (referee@example.test) wrote:\n\n"
        + quote(full_original("alice", 0))
        + "\n"
    )
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(text, cte="quoted-printable"),
            msgid="etPan.6571.2a.airmail@example.net",
            extra=(("X-Mailer", "Airmail (620)"),),
        ),
        R("Gold", 32, 8),
        "Airmail: 'On December 1, 2026 at 19:00:00, Referee (referee@...) wrote:' + > quote, X-Mailer Airmail",
    )

    c = k.ctx("superhuman-html-only.eml")
    body = (
        '<html><head><meta charset="utf-8"></head><body><div>'
        + rv_lines(rv_roulette("Silver", 27, 13))
        + '</div><br><div class="gmail_quote"><div dir="ltr">On Tue, Dec 01, 2026 at 7:00 PM, Referee '
        '&lt;<a href="mailto:referee@example.test">referee@example.test</a>&gt; wrote:<br></div>'
        '<blockquote class="gmail_quote" style="margin:0 0 0 .8ex;border-left:1px #ccc solid">'
        + rv_lines(full_original("alice", 0))
        + "</blockquote></div></body></html>"
    )
    k.acc(
        c,
        rv_mail(c, rv_html(body), msgid="lk3x9.superhuman@mail.superhuman.com"),
        R("Silver", 27, 13),
        "Superhuman: HTML-only, <div> lines, gmail_quote + blockquote",
    )

    c = k.ctx("zimbra-original-message.eml")
    text = (
        rv_roulette("Gold", 26, 14) + '\n----- Original Message -----\nFrom: "Referee" <referee@example.test>\n'
        'To: "Alice" <alice@example.test>\nSent: Tuesday, December 1, 2026 7:00:00 PM\n'
        f"Subject: {SUBJECT[0]}\n\n" + quote(full_original("alice", 0)) + "\n"
    )
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(text, cte="7bit"),
            msgid="1234567.89.1796148000000.JavaMail.zimbra@example.net",
            extra=(("X-Mailer", "Zimbra 9.0.0_GA_4546 (ZimbraWebClient - FF120)"),),
        ),
        R("Gold", 26, 14),
        "Zimbra: '----- Original Message -----' + From/To/Sent/Subject + > quote",
    )

    c = k.ctx("zimbra-fr-mail-original-unprefixed.eml")
    text = (
        rv_roulette("Silver", 29, 11)
        + '\nCordialement\n\n----- Mail original -----\nDe: "Referee" <referee@example.test>\n'
        '\u00c0: "Alice" <alice@example.test>\nEnvoy\u00e9: Mardi 1 D\u00e9cembre 2026 19:00:00\n'
        f"Objet: {SUBJECT[0]}\n\n" + full_original("alice", 0) + "\n"
    )
    k.acc(
        c,
        rv_mail(c, rv_plain(text, cte="quoted-printable"), msgid="2234567.1796148000001.JavaMail.zimbra@example.net"),
        R("Silver", 29, 11),
        "Zimbra in French: '----- Mail original -----' + De/\u00c0/Envoy\u00e9/Objet, original unprefixed",
    )

    c = k.ctx("lotus-notes-header-block.eml")
    text = (
        rv_roulette("Black", 31, 9) + "\nMit freundlichen Gruessen / Best regards\nAlice Martin\n\n\n\n"
        "From:   Referee <referee@example.test>\nTo:     alice@example.test\nDate:   01.12.2026 19:00\n"
        f"Subject:        {SUBJECT[0]}\n\n\n\n" + full_original("alice", 0) + "\n"
    )
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(text, charset="ISO-8859-1", cte="quoted-printable"),
            msgid="OFA1B2C3D4.E5F60718-ONC1258A1B.0063A1B2-C1258A1B.0063C3D4@example.net",
            extra=(
                ("X-Mailer", "IBM Notes Release 9.0.1FP10 SHF241 January 15, 2019"),
                ("X-MIMETrack", "Serialize by Router on Notes01/Example at 01.12.2026 19:05:00"),
            ),
        ),
        R("Black", 31, 9),
        "Lotus Notes: aligned 'From:   ' / 'To:     ' / 'Date:   ' / 'Subject:' block, original unprefixed",
    )

    c = k.ctx("yandex-roulette.eml")
    text = (
        "Добрый день!\n\n"
        + rv_roulette("Gold", 33, 7)
        + '\n-- \nС уважением,\nАлиса\n\n01.12.2026, 19:00, "Referee" <referee@example.test>:\n'
        + quote(full_original("alice", 0))
        + "\n"
    )
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(text, cte="base64"),
            msgid="1234561796148000@mail.yandex.ru",
            extra=(("X-Mailer", "Yamail [ http://yandex.ru ] 5.0"),),
        ),
        R("Gold", 33, 7),
        "Yandex: '01.12.2026, 19:00, \"Referee\" <...>:' attribution + > quote, base64 utf-8",
    )

    c = k.ctx("mailru-roulette.eml")
    attr = "Вторник, 1 декабря 2026, 19:00 +01:00 от Referee <referee@example.test>:"
    text = (
        rv_roulette("Silver", 30, 10)
        + "\n\n--\nАлиса\n\n>"
        + attr
        + "\n>\n"
        + quote(full_original("alice", 0), ">")
        + "\n"
    )
    body = (
        "<HTML><BODY>" + rv_lines(rv_roulette("Silver", 30, 10)) + "<div>--<br>Алиса</div><br><br>"
        '<blockquote style="border-left:1px solid #0857A6; margin:10px; padding:0 0 0 10px;">'
        + rv_esc(attr)
        + "<br>"
        + rv_lines(full_original("alice", 0))
        + "</blockquote></BODY></HTML>"
    )
    k.acc(
        c,
        rv_mail(
            c,
            multipart(
                "alternative", [rv_plain(text, cte="base64"), rv_html(body, cte="base64")], "--ALT--mailru1796148000"
            ),
            msgid="1796148000.123456789@f501.i.mail.ru",
            extra=(("X-Mailer", "Mail.Ru Mailer 1.0"),),
        ),
        R("Silver", 30, 10),
        "Mail.ru: plain with '>' on the attribution too ('Вторник, 1 декабря 2026, 19:00 +01:00 от Referee')",
    )

    c = k.ctx("qq-mail-html-original-unquoted.eml")
    body = (
        '<meta http-equiv="Content-Type" content="text/html; charset=GB18030"><div>'
        + rv_lines(rv_roulette("Gold", 34, 6))
        + "</div><div><br></div><div><br></div>"
        '<div style="font-size: 12px;font-family: Arial Narrow;padding:2px 0 2px 0;">'
        "------------------&nbsp;原始邮件&nbsp;------------------</div>"
        '<div style="font-size: 12px;background:#efefef;padding:8px;"><div><b>发件人:</b>&nbsp;'
        '"Referee"&lt;referee@example.test&gt;;<br></div>'
        "<div><b>发送时间:</b>&nbsp;2026年12月2日(星期三) 凌晨2:00</div><div><b>收件人:</b>&nbsp;"
        '"Alice"&lt;alice@example.test&gt;;<br></div>'
        f"<div></div><div><b>主题:</b>&nbsp;{rv_esc(SUBJECT[0])}</div></div><div><br></div>"
        + rv_lines(full_original("alice", 0))
    )
    k.acc(
        c,
        rv_mail(
            c,
            rv_html(body, charset="GB18030", cte="base64"),
            msgid="tencent_1A2B3C4D5E6F@qq.com",
            extra=(("X-QQ-mid", "esmtp10t1796148000"),),
        ),
        R("Gold", 34, 6),
        "QQ Mail: HTML-only, '------------------ 原始邮件 ------------------' + 发件人/发送时间/收件人/主题, "
        "original in a div (not a blockquote)",
    )

    c = k.ctx("naver-html-original-message.eml")
    body = (
        "<div style=\"font-family:'맑은 고딕'\"><p>"
        + "<br>".join(rv_roulette("Silver", 25, 15).splitlines())
        + '</p><p>&nbsp;</p><p>-----Original Message-----<br>From: "Referee"&lt;referee@example.test&gt;<br>'
        'To: "Alice"&lt;alice@example.test&gt;;<br>Cc: <br>Sent: 2026-12-02 (수) 03:00:00 (GMT+09:00)<br>'
        f"Subject: {rv_esc(SUBJECT[0])}<br>&nbsp;<br>"
        + "<br>".join(rv_esc(line) for line in full_original("alice", 0).splitlines())
        + "</p></div>"
    )
    k.acc(
        c,
        rv_mail(
            c,
            rv_html(body, cte="base64"),
            msgid="a1b2c3d4e5f6.1796148000@cweb010.nm.nfra.io",
            extra=(("X-Mailer", "NaverMail"),),
        ),
        R("Silver", 25, 15),
        "Naver Mail: HTML-only, '-----Original Message-----<br>From: ...<br>Sent: ...', original unquoted",
    )

    c = k.ctx("outlook-android-get-outlook.eml")
    text = (
        rv_roulette("Black", 28, 12)
        + "\nGet Outlook for Android<https://aka.ms/AAb9ysg>\n"
        + rv_block(c, ("From", "Sent", "To", "Subject"), "Tuesday, December 1, 2026 7:00:00 PM", underscores=True)
        + full_original("alice", 0)
    )
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(text, cte="quoted-printable"),
            msgid="DB9PR01MB1234ABCD@DB9PR01MB1234.eurprd01.prod.exchangelabs.com",
        ),
        R("Black", 28, 12),
        "Outlook for Android: 'Get Outlook for Android<https://aka.ms/AAb9ysg>' + underscores + From/Sent/To/Subject",
    )

    # ---- accepted: localized Outlook header blocks -----------------------------------------------------
    for lang, labels, date, (w, g, s), hi in OUTLOOK_LANGS:
        c = k.ctx(f"outlook-{lang}-header-block-unprefixed.eml")
        text = (
            f"{hi}\n\n"
            + rv_roulette(w, g, s)
            + "\nAlice\n\n"
            + rv_block(c, labels, date, underscores=lang in ("sv", "it", "pt"))
            + full_original("alice", 0)
        )
        k.acc(
            c,
            rv_mail(
                c,
                rv_plain(text, cte="quoted-printable"),
                subject=f"SV: {SUBJECT[0]}",
                msgid=f"AM0PR{lang.upper()}01MB4129@AM0PR07MB4129.eurprd07.prod.outlook.com",
                extra=(("Content-Language", lang), ("X-Auto-Response-Suppress", "All")),
            ),
            R(w, g, s),
            f"Outlook ({lang}): top-posted, '{labels[0]}:/{labels[1]}:/{labels[2]}:/{labels[3]}:' block, "
            "original (with its form) unprefixed below",
        )

    # ---- accepted: HTML forms ----------------------------------------------------------------------------
    c = k.ctx("html-table-form.eml")
    rows = [("Winning colour:", "Silver"), ("Gold:", "26"), ("Silver:", "14"), ("Black:", "0")]
    body = (
        '<html><body><p>Hello,</p><table border="1"><tr><th colspan="2">ROULETTE</th></tr>'
        + "".join(f"<tr><td>{a}</td><td>{b}</td></tr>" for a, b in rows)
        + "</table><p>Alice</p></body></html>"
    )
    k.acc(
        c,
        rv_mail(c, rv_html(body), msgid="html-table-1@example.net"),
        R("Silver", 26, 14),
        "HTML-only: the form as a two-column table",
    )
    c = k.ctx("html-div-per-line.eml")
    body = '<div dir="ltr">' + rv_lines("Hi\n\n" + rv_roulette("Gold", 30, 10) + "\nThanks") + "</div>"
    k.acc(
        c,
        rv_mail(c, rv_html(body), msgid="html-div-1@example.net"),
        R("Gold", 30, 10),
        "HTML-only: one <div> per line, <div><br></div> blank lines",
    )
    c = k.ctx("html-br-variants.eml")
    body = '<p>ROULETTE<BR>Winning colour: Black<br/>Gold: 29<br />Silver: 11<br clear="all">Black: 0<br></p>'
    k.acc(
        c,
        rv_mail(c, rv_html(body, cte="7bit"), msgid="html-br-1@example.net"),
        R("Black", 29, 11),
        "HTML-only: <BR>, <br/>, <br />, <br clear=all> in one paragraph",
    )
    c = k.ctx("html-nbsp-padding.eml")
    body = (
        "<p>&nbsp;ROULETTE&nbsp;</p><p>&nbsp;&nbsp;Winning colour:&nbsp;&nbsp;Silver&nbsp;</p>"
        "<p>Gold:&nbsp;&nbsp;&nbsp;35&nbsp;</p><p>Silver:&nbsp;5&nbsp;&nbsp;</p><p>Black:&nbsp;0</p><p>&nbsp;</p>"
    )
    k.acc(
        c,
        rv_mail(c, rv_html(body), msgid="html-nbsp-1@example.net"),
        R("Silver", 35, 5),
        "HTML-only: &nbsp; padding around keys and values",
    )
    c = k.ctx("html-hidden-preheader.eml")
    body = (
        "<html><head><style>.x{color:red} /* ROULETTE Gold: 99 */</style></head><body>"
        '<div style="display:none;max-height:0;overflow:hidden">My move for this round &zwnj;&nbsp;&zwnj;&nbsp;</div>'
        + rv_lines(rv_roulette("Gold", 28, 12))
        + '<img src="https://t.example.net/p.gif" width=1 height=1></body></html>'
    )
    k.acc(
        c,
        rv_mail(c, rv_html(body), msgid="html-pre-1@example.net"),
        R("Gold", 28, 12),
        "HTML-only: CSS-hidden preheader, a <style> block and a tracking pixel around the form",
    )
    c = k.ctx("html-rtl-dir.eml")
    body = '<div dir="rtl">שלום</div>' + "".join(
        f'<div dir="rtl">\u200f{line}\u200f</div>' for line in rv_roulette("Black", 26, 14).splitlines()
    )
    k.acc(
        c,
        rv_mail(c, rv_html(body), msgid="html-rtl-1@example.net"),
        R("Black", 26, 14),
        "HTML-only: dir=rtl with U+200F marks around the lines (Hebrew greeting)",
    )
    c = k.ctx("html-entity-colons.eml")
    body = "<p>ROULETTE<br>Winning colour&#58; Silver<br>Gold&colon; 27<br>Silver&#x3A; 13<br>Black&#58; 0</p>"
    k.acc(
        c,
        rv_mail(c, rv_html(body), msgid="html-ent-1@example.net"),
        R("Silver", 27, 13),
        "HTML-only: colons as &#58; / &colon; / &#x3A;",
    )
    c = k.ctx("html-ul-li.eml")
    body = "<p>ROULETTE</p><ul><li>Winning colour: Gold</li><li>Gold: 32</li><li>Silver: 8</li><li>Black: 0</li></ul>"
    k.acc(
        c,
        rv_mail(c, rv_html(body), msgid="html-ul-1@example.net"),
        R("Gold", 32, 8),
        "HTML-only: entries as <ul><li>",
    )
    c = k.ctx("html-edited-inside-blockquote.eml")
    orig = full_original("alice", 0)
    edited = orig.replace("Winning colour: Gold\nGold: 30\nSilver: 10", "Winning colour: Silver\nGold: 33\nSilver: 7")
    assert edited != orig, "the edit of the quoted form did not apply"
    body = (
        '<div>My move is in the form below.</div><div><br></div><div class="protonmail_quote">'
        "On Tuesday, December 1st, 2026 at 19:00, Referee &lt;referee@example.test&gt; wrote:<br>"
        '<blockquote class="protonmail_quote" type="cite">' + rv_lines(edited) + "</blockquote></div>"
    )
    k.acc(
        c,
        rv_mail(c, rv_html(body, cte="base64"), msgid="edited-bq-1@protonmail.com"),
        R("Silver", 33, 7),
        "HTML-only (Proton-like): the player edited the form inside the quoted blockquote (Silver 33/7 instead "
        "of the example Gold 30/10), wrote only 'see below' above",
    )

    # ---- accepted: encodings -----------------------------------------------------------------------------
    c = k.ctx("utf16-bom-base64.eml")
    text = "Hi\n\n" + rv_roulette("Gold", 29, 11) + "\nAlice\n"
    k.acc(
        c,
        rv_mail(
            c,
            raw_part('text/plain; charset="utf-16"', b64(text.replace("\n", "\r\n").encode("utf-16")), cte="base64"),
            msgid="utf16-1@example.net",
        ),
        R("Gold", 29, 11),
        "text/plain; charset=utf-16 with BOM, base64",
    )
    c = k.ctx("utf16le-no-bom.eml")
    data = b64(rv_roulette("Silver", 34, 6).replace("\n", "\r\n").encode("utf-16-le")).replace(b"\n", b"\r\n")
    k.acc(
        c,
        rv_mail(c, raw_part("text/plain; charset=UTF-16LE", data, cte="base64"), msgid="utf16le-1@example.net"),
        R("Silver", 34, 6),
        "text/plain; charset=UTF-16LE without BOM, base64 with CRLF lines",
    )
    c = k.ctx("utf7-body.eml")
    data = ("Grüße\n" + rv_roulette("Black", 33, 7)).encode("utf-7").replace(b": ", b"+ADo- ")
    k.acc(
        c,
        rv_mail(c, raw_part("text/plain; charset=utf-7", data, cte="7bit"), msgid="utf7-1@example.net"),
        R("Black", 33, 7),
        "text/plain; charset=utf-7 (colons encoded as +ADo-)",
    )
    c = k.ctx("mislabel-ascii-holding-utf8.eml")
    text = "Hallo 👋\n\nROULETTE\nWinning colour:\u00a0Gold\nGold:\u00a025\nSilver:\u00a015\nBlack:\u00a00\n\n— Alice\n"
    k.acc(
        c,
        rv_mail(c, raw_part("text/plain; charset=us-ascii", text.encode(), cte="8bit"), msgid="mislabel-1@example.net"),
        R("Gold", 25, 15),
        "declared us-ascii, 8bit UTF-8 with NBSP separators and emoji",
    )
    c = k.ctx("mislabel-utf8-holding-cp1252.eml")
    text = "\u201cHi\u201d \u2013 here it is\n\n" + rv_roulette("Silver", 28, 12, "\u2013")
    k.acc(
        c,
        rv_mail(
            c, raw_part("text/plain; charset=UTF-8", text.encode("cp1252"), cte="8bit"), msgid="mislabel-2@example.net"
        ),
        R("Silver", 28, 12),
        "declared UTF-8, body in cp1252 with an en dash as Black's value and smart quotes",
    )
    c = k.ctx("qp-soft-break-in-number-crlf.eml")
    data = b"ROULETTE\r\nWin=\r\nning colour: Black\r\nGold: 2=\r\n7\r\nSilver: 1=\r\n3\r\nBlack: 0\r\n"
    k.acc(
        c,
        rv_mail(c, raw_part("text/plain; charset=utf-8", data, cte="quoted-printable"), msgid="qp-crlf-1@example.net"),
        R("Black", 27, 13),
        "QP with CRLF line ends and soft breaks inside '27' and inside 'Winning'",
    )
    c = k.ctx("qp-equals-separators.eml")
    data = b"ROULETTE\nWinning colour=3DGold\nGold=3D31\nSilver=3D9\nBlack=3D0\n"
    k.acc(
        c,
        rv_mail(c, raw_part("text/plain; charset=utf-8", data, cte="quoted-printable"), msgid="qp-eq-1@example.net"),
        R("Gold", 31, 9),
        "QP with '=3D' separators ('Gold=3D31')",
    )
    c = k.ctx("charset-utf8-nohyphen-BASE64.eml")
    k.acc(
        c,
        rv_mail(
            c,
            raw_part(
                "TEXT/PLAIN; charset=utf8 (unicode); format=fixed",
                b64(rv_roulette("Silver", 30, 10).encode()).replace(b"\n", b"\r\n"),
                cte="BASE64 ",
            ),
            msgid="b64-upper-1@example.net",
        ),
        R("Silver", 30, 10),
        "charset=utf8 (no hyphen), CTE 'BASE64' in upper case with trailing space, content-type params with a comment",
    )
    c = k.ctx("bom-utf8-8bit.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain("\ufeff\ufeffROULETTE\nWinning colour: Gold\nGold: 33\nSilver: 7\nBlack: 0\n"),
            msgid="bom-1@example.net",
        ),
        R("Gold", 33, 7),
        "UTF-8 BOM at the start of an 8bit body, BOM also before the header line",
    )

    # ---- accepted and rejected: MIME structures ------------------------------------------------------------
    c = k.ctx("multipart-related-inline-image.eml")
    form = rv_roulette("Black", 25, 15)
    related = multipart(
        "related",
        [
            rv_html("<p>" + "<br>".join(form.splitlines()) + '</p><img src="cid:sig@x">'),
            rv_bytes(
                "image/png",
                b"\x89PNG\r\n\x1a\n" + rv_noise(c, 64),
                extra=(("Content-ID", "<sig@x>"), ("Content-Disposition", 'inline; filename="sig.png"')),
            ),
        ],
        "rel-b1",
        params='; type="text/html"',
    )
    k.acc(
        c,
        rv_mail(
            c,
            multipart("alternative", [rv_plain(form + "\n[sig.png]\n"), related], "alt-b1"),
            msgid="related-1@example.net",
        ),
        R("Black", 25, 15),
        "alternative{plain, related{html, image/png cid}}",
    )
    c = k.ctx("mixed-form-in-second-text-part.eml")
    parts = [
        rv_plain("Hi, here is a photo of my lucky charm:\n"),
        rv_bytes(
            'image/jpeg; name="IMG_0001.jpeg"',
            b"\xff\xd8\xff\xe0" + rv_noise(c, 64),
            extra=(("Content-Disposition", 'inline; filename="IMG_0001.jpeg"'),),
        ),
        rv_plain("\n\n" + rv_roulette("Silver", 29, 11) + "\nAlice\n"),
    ]
    k.acc(
        c,
        rv_mail(
            c,
            multipart("mixed", parts, "Apple-Mail=_A1B2C3D4"),
            msgid="8A1B2C3D-APPLE-INLINE@example.net",
            extra=(("X-Mailer", "Apple Mail (2.3774.300.61.1.2)"),),
        ),
        R("Silver", 29, 11),
        "Apple Mail with an inline image in the middle: mixed{text/plain 'Hi, here is a photo', image/jpeg inline, "
        "text/plain with the form}",
    )
    c = k.ctx("mixed-greeting-then-form-part.eml")
    parts = [
        rv_plain("Hi,\nmy move:\n"),
        rv_plain(rv_roulette("Gold", 35, 5), extra=(("Content-Disposition", "inline"),)),
    ]
    k.acc(
        c,
        rv_mail(c, multipart("mixed", parts, "mixed-two"), msgid="mixed-two-text-1@example.net"),
        R("Gold", 35, 5),
        "mixed{text/plain 'Hi', text/plain (inline, no filename) holding the form}",
    )
    c = k.ctx("forward-as-attachment-with-text.eml")
    inner = (
        b"From: Referee <referee@example.test>\nTo: Alice <alice@example.test>\nSubject: old\n"
        b"Content-Type: text/plain; charset=utf-8\n\n" + full_original("alice", 0).encode()
    )
    parts = [
        rv_plain("Forwarding your mail back, my roulette:\n\n" + rv_roulette("Black", 30, 10)),
        raw_part("message/rfc822", inner, headers=(("Content-Disposition", 'attachment; filename="old.eml"'),)),
    ]
    k.acc(
        c,
        rv_mail(c, multipart("mixed", parts, "fwd-att"), msgid="fwd-attach-1@example.net"),
        R("Black", 30, 10),
        "mixed{text/plain with the new roulette, message/rfc822 (our old mail, with the example form)}",
    )
    c = k.ctx("pgp-mime-signed.eml")
    sig = (
        "-----BEGIN PGP SIGNATURE-----\n\niQEzBAEBCAAdFiEEa1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8FAmVn\n=AbCd\n"
        "-----END PGP SIGNATURE-----\n"
    )
    parts = [
        rv_plain(rv_roulette("Silver", 31, 9) + "\n-- \nAlice\n", cte="quoted-printable"),
        raw_part(
            'application/pgp-signature; name="signature.asc"',
            sig.encode(),
            headers=(
                ("Content-Description", "OpenPGP digital signature"),
                ("Content-Disposition", 'attachment; filename="signature.asc"'),
            ),
        ),
    ]
    k.acc(
        c,
        rv_mail(
            c,
            multipart("signed", parts, "pgp-sig-b", params='; micalg=pgp-sha256; protocol="application/pgp-signature"'),
            msgid="pgp-signed-1@example.net",
        ),
        R("Silver", 31, 9),
        "multipart/signed (PGP/MIME), the signed part is text/plain QP",
    )
    c = k.ctx("smime-signed.eml")
    form = rv_roulette("Gold", 26, 14)
    alt = multipart(
        "alternative",
        [rv_plain(form, cte="quoted-printable"), rv_html("<p>" + "<br>".join(form.splitlines()) + "</p>")],
        "smime-alt",
    )
    parts = [
        alt,
        rv_bytes(
            'application/pkcs7-signature; name="smime.p7s"',
            rv_noise(c, 300),
            extra=(("Content-Disposition", 'attachment; filename="smime.p7s"'),),
        ),
    ]
    k.acc(
        c,
        rv_mail(
            c,
            multipart("signed", parts, "smime-b", params='; protocol="application/pkcs7-signature"; micalg=sha-256'),
            msgid="smime-signed-1@example.net",
        ),
        R("Gold", 26, 14),
        "multipart/signed (S/MIME) with alternative inside and application/pkcs7-signature",
    )
    c = k.ctx("pgp-inline-clearsigned.eml")
    text = (
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"
        + rv_roulette("Black", 32, 8)
        + "\n-----BEGIN PGP SIGNATURE-----\n\niQIzBAEBCgAdFiEEabcdefABCDEF0123456789abcdefABCDEF01FAmVnAAo\n"
        "Gold+Silver+Black/abcdefABCDEF0123456789abcdefABCDEF0123456789ab==\n=XyZw\n-----END PGP SIGNATURE-----\n"
    )
    k.acc(
        c,
        rv_mail(c, rv_plain(text, cte="7bit"), msgid="pgp-inline-1@example.net"),
        R("Black", 32, 8),
        "inline PGP clearsigned body (armor lines, Hash:, signature block)",
    )
    c = k.ctx("winmail-dat-beside.eml")
    parts = [
        rv_plain(rv_roulette("Silver", 27, 13), charset="Windows-1252", cte="quoted-printable"),
        rv_bytes(
            'application/ms-tnef; name="winmail.dat"',
            b"\x78\x9f\x3e\x22" + rv_noise(c, 200),
            extra=(("Content-Disposition", 'attachment; filename="winmail.dat"'),),
        ),
    ]
    k.acc(
        c,
        rv_mail(
            c,
            multipart("mixed", parts, "_tnef_b"),
            msgid="tnef-1@example.net",
            extra=(("X-MS-Has-Attach", "yes"), ("X-MS-TNEF-Correlator", "<a@b>")),
        ),
        R("Silver", 27, 13),
        "Outlook RTF: mixed{text/plain with the form, application/ms-tnef winmail.dat}",
    )
    c = k.ctx("calendar-invite-from-alice.eml")
    ics = (
        "BEGIN:VCALENDAR\nMETHOD:REQUEST\nPRODID:Microsoft Exchange Server 2010\nVERSION:2.0\nBEGIN:VEVENT\n"
        "DESCRIPTION;LANGUAGE=en-US:Let's talk about round 1\\nGold: 30\nSUMMARY:Roulette chat\n"
        "DTSTART:20261203T180000Z\nDTEND:20261203T183000Z\nEND:VEVENT\nEND:VCALENDAR\n"
    )
    alt = multipart(
        "alternative",
        [
            rv_plain("Let's talk about round 1 (calendar invite)\n"),
            raw_part('text/calendar; charset="utf-8"; method=REQUEST', ics.encode(), cte="7bit"),
        ],
        "cal-b",
    )
    k.rej(
        c,
        rv_mail(c, alt, subject="Invitation: Roulette chat", msgid="cal-1@example.net", irt=False),
        "no ROULETTE or BET section",
        "a meeting invite (text/calendar METHOD:REQUEST + description) from alice to her reply address: "
        "nothing to record, one error reply",
    )
    c = k.ctx("smime-opaque.eml")
    k.rej(
        c,
        rv_mail(
            c,
            rv_bytes(
                'application/pkcs7-mime; smime-type=signed-data; name="smime.p7m"',
                rv_noise(c, 400),
                extra=(("Content-Disposition", 'attachment; filename="smime.p7m"'),),
            ),
            msgid="smime-opaque-1@example.net",
        ),
        ANY_ERROR,
        "application/pkcs7-mime (opaque S/MIME): unreadable, one error reply (any reason)",
    )
    c = k.ctx("alternative-html-first.eml")
    form = rv_roulette("Gold", 34, 6)
    k.acc(
        c,
        rv_mail(
            c,
            multipart(
                "alternative", [rv_html("<p>" + "<br>".join(form.splitlines()) + "</p>"), rv_plain(form)], "alt-rev"
            ),
            msgid="alt-html-first-1@example.net",
        ),
        R("Gold", 34, 6),
        "multipart/alternative with text/html first, text/plain second",
    )

    # ---- text tolerances and rules -------------------------------------------------------------------------
    c = k.ctx("gmail-bold-keys.eml")
    text = "ROULETTE\n*Winning colour:* Silver\n*Gold:* 28\n*Silver:* 12\n*Black:* 0\n"
    body = (
        '<div dir="ltr"><div>ROULETTE</div><div><b>Winning colour:</b> Silver</div><div><b>Gold:</b> 28</div>'
        "<div><b>Silver:</b> 12</div><div><b>Black:</b> 0</div></div>"
    )
    k.acc(
        c,
        rv_mail(
            c,
            multipart("alternative", [rv_plain(text), rv_html(body)], "000000000000bold"),
            msgid="CAbold1@mail.gmail.com",
        ),
        R("Silver", 28, 12),
        "Gmail with bold keys: the plain part renders <b> as *...* ('*Winning colour:* Silver'), the HTML part has <b>",
    )
    c = k.ctx("winning-colour-two-colours.eml")
    k.rej(
        c,
        rv_mail(c, rv_plain(rv_roulette("Gold or Silver", 30, 10) + "\nunique-wc2\n"), msgid="wc-two-1@example.net"),
        "not a colour",
        "'Winning colour: Gold or Silver' is no colour: rejected quoting it",
    )
    c = k.ctx("roulette-gold-40-silver-0.eml")
    k.rej(
        c,
        rv_mail(c, rv_plain(rv_roulette("Gold", 40, 0) + "\nunique-g40\n"), msgid="g40-1@example.net"),
        "Silver",
        "Gold 40, Silver 0: Silver needs at least 5",
    )

    # ---- automated -----------------------------------------------------------------------------------------
    c = k.ctx("exim-bounce-plain.eml")
    text = (
        "This message was created automatically by mail delivery software.\n\nA message that you sent could not be "
        "delivered to one or more of its recipients. This is a permanent error.\n\n  bob@nowhere.test\n    "
        "host nowhere.test: 550 no such user\n\n------ This is a copy of the message, including all the headers. "
        "------\n\n" + rv_roulette("Gold", 30, 10)
    )
    k.ign(
        c,
        rv_mail(
            c,
            rv_plain(text, cte="7bit"),
            frm="Mail Delivery System <Mailer-Daemon@mx.example.net>",
            subject="Mail delivery failed: returning message to sender",
            msgid="E1abc-0001-Xy@mx.example.net",
            irt=False,
            extra=(("X-Failed-Recipients", "bob@nowhere.test"),),
        ),
        "mailer-daemon",
        "Exim bounce, plain text (no multipart/report), From 'Mail Delivery System <Mailer-Daemon@...>', "
        "X-Failed-Recipients",
    )
    c = k.ctx("qmail-bounce.eml")
    text = (
        "Hi. This is the qmail-send program at mail.example.net.\nI'm afraid I wasn't able to deliver your message "
        "to the following addresses.\nThis is a permanent error; I've given up. Sorry it didn't work out.\n\n"
        "<nobody@example.org>:\nSorry, no mailbox here by that name.\n"
    )
    k.ign(
        c,
        rv_mail(
            c,
            rv_plain(text, cte="7bit"),
            frm="MAILER-DAEMON@mail.example.net",
            subject="failure notice",
            msgid="qmail-1@mail.example.net",
            irt=False,
        ),
        "mailer-daemon",
        "qmail bounce: From MAILER-DAEMON@host, 'Hi. This is the qmail-send program'",
    )
    c = k.ctx("exchange-ndr-mixed-null-path.eml")
    parts = [
        rv_html("<p>Delivery has failed to these recipients or groups:</p><p>bob@nowhere.test</p>"),
        raw_part("message/rfc822", b"From: Referee <referee@example.test>\nSubject: x\n\nROULETTE\n"),
    ]
    k.ign(
        c,
        rv_mail(
            c,
            multipart("mixed", parts, "ndr-mixed"),
            top=(("Return-Path", "<>"),),
            frm="Microsoft Outlook <MicrosoftExchange329e71ec88ae4615bbc36ab6ce41109e@example.net>",
            subject="Undeliverable: " + SUBJECT[0],
            msgid="ndr-mixed-1@example.net",
            irt=False,
            extra=(("X-MS-Exchange-Message-Is-Ndr", ""),),
        ),
        "null-return-path",
        "Exchange NDR as multipart/mixed (not report) from MicrosoftExchange...@, Return-Path: <>",
    )
    c = k.ctx("gmail-bounce-plain.eml")
    k.ign(
        c,
        rv_mail(
            c,
            rv_plain("** Address not found **\n\nYour message wasn't delivered.\n"),
            frm="Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
            subject="Delivery Status Notification (Failure)",
            msgid="gbounce-1@mx.google.com",
            irt=False,
        ),
        "mailer-daemon",
        "Gmail bounce without multipart/report (plain), From mailer-daemon@googlemail.com",
    )
    away = "I am out of the office until 15 December with limited access to email.\nAlice\n"
    c = k.ctx("ooo-subject-only-first.eml")
    k.rej(
        c,
        rv_mail(c, rv_plain(away), subject="Out of Office: " + SUBJECT[0], msgid="ooo-1@example.net"),
        "no ROULETTE or BET section",
        "alice's out-of-office with only a Subject hint ('Out of Office: ...'), no headers: one error reply",
    )
    c = k.ctx("ooo-subject-only-again.eml")
    rv_rej(
        k,
        c,
        rv_mail(c, rv_plain(away), subject="Out of Office: Re: " + SUBJECT[0], msgid="ooo-2@example.net"),
        "no ROULETTE or BET section",
        "the same out-of-office again (new Message-ID, same text): no second error reply (no loop)",
        reply=False,
    )
    c = k.ctx("auto-submitted-comment-variants.eml")
    k.ign(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Gold", 30, 10)),
            subject="Automatic reply: " + SUBJECT[0],
            msgid="as-var-1@example.net",
            extra=(("AUTO-SUBMITTED", "Auto-Replied (vacation)"),),
        ),
        "auto-submitted",
        "'AUTO-SUBMITTED: Auto-Replied (vacation)' (field name and value in odd case, with a comment)",
    )
    c = k.ctx("x-autoresponder.eml")
    k.ign(
        c,
        rv_mail(c, rv_plain("Away.\n"), subject="Away", msgid="xar-1@example.net", extra=(("X-Autoresponder", "yes"),)),
        "autoresponder-header",
        "X-Autoresponder header (cPanel-like)",
    )
    c = k.ctx("return-path-null-spaced.eml")
    k.ign(
        c,
        rv_mail(c, rv_plain("x\n"), top=(("Return-Path", "< >"),), msgid="rp-sp-1@example.net"),
        "null-return-path",
        "Return-Path: < > (space inside)",
    )
    c = k.ctx("lotus-return-receipt.eml")
    k.rej(
        c,
        rv_mail(
            c,
            rv_plain(
                "Your document:  " + SUBJECT[0] + "\nwas received by:  Alice Martin/Example\nat:  01.12.2026 19:05:00\n"
            ),
            subject="Return Receipt",
            msgid="rr-1@example.net",
        ),
        ANY_ERROR,
        "Lotus Notes 'Return Receipt' (plain, no report type, no auto headers) from alice: one error reply at most "
        "(any reason)",
    )

    # ---- a quoted or forwarded example form is not a move ------------------------------------------------
    c = k.ctx("baseline-silver-before-fwd.eml")
    k.acc(
        c,
        rv_mail(c, rv_plain(rv_roulette("Silver", 26, 14)), msgid="baseline-silver@example.net"),
        R("Silver", 26, 14),
        "a plain roulette (sets a pending submission that differs from the example form)",
    )
    c = k.ctx("fwd-old-mail-question.eml")
    text = (
        "Hi, I don't understand what I have to do here, can you explain?\n\n---------- Forwarded message ---------\n"
        "From: Referee <referee@example.test>\nDate: Tue, Dec 1, 2026 at 7:00 PM\nSubject: "
        + SUBJECT[0]
        + "\nTo: Alice <alice@example.test>\n\n\n"
        + full_original("alice", 0)
        + "\n"
    )
    k.rej(
        c,
        rv_mail(
            c,
            rv_plain(text, cte="quoted-printable"),
            subject="Fwd: " + SUBJECT[0],
            msgid="CAfwd1@mail.gmail.com",
            irt=False,
        ),
        ANY_ERROR,
        "Gmail forward of our preparation-phase mail (example form, untouched) with a question, no In-Reply-To: "
        "the example form is not alice's move (the Silver roulette before stands)",
    )
    c = k.ctx("baseline-black-before-ooo.eml")
    k.acc(
        c,
        rv_mail(c, rv_plain(rv_roulette("Black", 31, 9) + "\nagain\n"), msgid="baseline-black@example.net"),
        R("Black", 31, 9),
        "a plain roulette again (the pending submission differs from the example form)",
    )
    c = k.ctx("ooo-quoting-original-no-irt.eml")
    k.rej(
        c,
        rv_mail(
            c,
            rv_plain("I am away until Monday.\n\n" + quote(full_original("alice", 0)) + "\n"),
            subject="Away: " + SUBJECT[0],
            msgid="ooo-quote-1@example.net",
            irt=False,
        ),
        ANY_ERROR,
        "an out-of-office without auto headers nor In-Reply-To that quotes our mail (example form, untouched) "
        "with '>': not alice's move",
    )
    c = k.ctx("own-thread-first.eml")
    k.acc(
        c,
        rv_mail(c, rv_plain(rv_roulette("Gold", 25, 15) + "\nAlice\n"), msgid="own-thread-A@mail.gmail.com"),
        R("Gold", 25, 15),
        "alice sends roulette A",
    )
    c = k.ctx("own-thread-revision.eml")
    k.acc(
        c,
        rv_mail(c, rv_plain(rv_roulette("Silver", 27, 13) + "\nAlice\n"), msgid="own-thread-B@mail.gmail.com"),
        R("Silver", 27, 13),
        "alice revises to roulette B",
    )
    c = k.ctx("own-thread-reply-to-own-A.eml")
    text = (
        "Hi, did my roulette arrive? Alice\n\nOn Tue, Dec 1, 2026 at 7:12 PM Alice Martin <alice@example.test> "
        "wrote:\n\n" + quote(rv_roulette("Gold", 25, 15) + "\nAlice") + "\n"
    )
    k.rej(
        c,
        rv_mail(c, rv_plain(text), msgid="own-thread-C@mail.gmail.com", irt="<own-thread-A@mail.gmail.com>"),
        ANY_ERROR,
        "alice replies to her OWN first mail (In-Reply-To her own-thread-first.eml, not ours) with a note and no "
        "form; the > quote holds her old roulette A: it must not undo revision B",
    )
    c = k.ctx("from-encoded-name-with-colon.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Gold", 34, 6) + "\nenc\n"),
            frm="=?utf-8?q?Alice_M=C3=BCller_=E2=80=93_Team=3A_Rot?= <{{ALICE}}>",
            msgid="enc-colon-1@example.net",
        ),
        R("Gold", 34, 6),
        "From: an RFC 2047 display name whose text holds a colon ('Alice Müller – Team: Rot'): one mailbox, "
        "not a group",
    )
    c = k.ctx("outlook-pt-no-underscores.eml")
    text = (
        "Olá\n\n"
        + rv_roulette("Black", 25, 15)
        + "\nAlice\n\n"
        + rv_block(c, ("De", "Enviado", "Para", "Assunto"), "terça-feira, 1 de dezembro de 2026 19:00")
        + full_original("alice", 0)
    )
    k.acc(
        c,
        rv_mail(c, rv_plain(text, cte="quoted-printable"), msgid="OLPT2@example.net"),
        R("Black", 25, 15),
        "classic Outlook (pt) without the underscore line: De/Enviado/Para/Assunto block, original unprefixed",
    )

    # ---- addressing and authentication ---------------------------------------------------------------------
    c = k.ctx("token-only-in-cc.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Gold", 27, 13)),
            to="Carol <carol@example.org>",
            cc="Referee <{{REPLY_ALICE}}>",
            msgid="cc-1@example.net",
        ),
        R("Gold", 27, 13),
        "To: a friend, Cc: alice's reply address",
    )
    c = k.ctx("bcc-delivered-to-only.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Black", 28, 12)),
            top=(("Delivered-To", "{{REPLY_ALICE}}"),),
            to="undisclosed-recipients:;",
            msgid="bcc-1@example.net",
        ),
        R("Black", 28, 12),
        "Bcc'd: To 'undisclosed-recipients:;', only Delivered-To holds the reply address",
    )
    c = k.ctx("bcc-envelope-to-only.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Silver", 25, 15)),
            top=(("Envelope-to", "{{REPLY_ALICE}}"),),
            to="undisclosed-recipients:;",
            msgid="envto-1@example.net",
        ),
        R("Silver", 25, 15),
        "Bcc'd, delivered by Exim: only 'Envelope-to:' holds the reply address",
    )
    c = k.ctx("token-and-domain-uppercase.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Gold", 29, 11)),
            to="REFEREE <{{REPLY_ALICE_UPPER}}>",
            msgid="upper-tok-1@example.net",
        ),
        R("Gold", 29, 11),
        "reply address in upper case (token and domain)",
    )
    c = k.ctx("two-tokens-own-first.eml")
    k.acc(
        c,
        rv_mail(c, rv_plain(rv_roulette("Silver", 32, 8)), cc="Referee <{{REPLY_BOB}}>", msgid="two-tok-1@example.net"),
        R("Silver", 32, 8),
        "alice writes To her reply address, Cc bob's reply address: counts for alice; bob gets nothing",
    )
    c = k.ctx("two-tokens-other-first.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Black", 34, 6)),
            to="Referee <{{REPLY_BOB}}>",
            cc="Referee <{{REPLY_ALICE}}>",
            msgid="two-tok-2@example.net",
        ),
        R("Black", 34, 6),
        "alice writes To bob's reply address, Cc her own reply address: she wrote to her own signed address from "
        "her registered From, so it counts for her",
    )
    c = k.ctx("from-with-comment.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Gold", 30, 10) + "\nfc\n"),
            frm="{{ALICE}} (Alice Martin)",
            msgid="from-comment-1@example.net",
        ),
        R("Gold", 30, 10),
        "From: alice@example.test (Alice Martin)",
    )
    c = k.ctx("from-quoted-local-part.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Silver", 29, 11)),
            frm='Alice <"alice"@example.test>',
            msgid="from-quoted-1@example.net",
        ),
        R("Silver", 29, 11),
        'From: "alice"@example.test (a quoted local part equal to the registered one, RFC 5322 3.4.1)',
    )
    c = k.ctx("from-quoted-name-comma-colon.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Black", 26, 14)),
            frm='"Martin, Alice: player" <{{ALICE}}>',
            msgid="from-qname-1@example.net",
        ),
        R("Black", 26, 14),
        'From: "Martin, Alice: player" <alice@...> (comma and colon inside a quoted name)',
    )
    c = k.ctx("from-idn-lookalike.eml")
    rv_rej(
        k,
        c,
        rv_mail(c, rv_plain(rv_roulette("Gold", 25, 15)), frm="Alice <alice@exämple.test>", msgid="idn-1@example.net"),
        "not your registered address",
        "From alice@exämple.test (IDN look-alike, raw UTF-8) to alice's reply address: not obeyed, alice told",
        rule="spoofed",
    )
    c = k.ctx("stranger-idn-general.eml")
    k.ign(
        c,
        rv_mail(
            c,
            rv_plain("Привет\n"),
            frm="Ева <eva@xn--80akhbyknj4f.xn--p1ai>",
            to="{{REFEREE}}",
            msgid="idn-2@example.net",
            irt=False,
        ),
        "unknown-sender",
        "stranger with a punycode domain to the general address",
    )

    # ---- hostile -------------------------------------------------------------------------------------------
    c = k.ctx("header-injection-encoded-crlf.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Gold", 31, 9)),
            frm="=?utf-8?q?Alice=0D=0ABcc=3A_eve=40evil=2Etest?= <{{ALICE}}>",
            subject="=?utf-8?q?Re=3A_x=0D=0ABcc=3A_eve=40evil=2Etest=0D=0A?=",
            msgid="inject-1@example.net",
            extra=(("In-Reply-To", "=?utf-8?q?=3Cx=3E=0D=0ABcc=3A_eve=40evil=2Etest?="),),
        ),
        R("Gold", 31, 9),
        "From name, Subject and a second In-Reply-To as encoded words holding CRLF + 'Bcc: eve@evil.test': "
        "the reply goes to alice only, no injected header",
    )
    c = k.ctx("subject-3000-chars.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_roulette("Silver", 30, 10) + "\ns3k\n"),
            subject="Re: " + "roulette " * 333,
            msgid="subj-3000@example.net",
        ),
        R("Silver", 30, 10),
        "an unfolded Subject of 3000 characters",
    )
    c = k.ctx("long-line-before-form.eml")
    k.acc(
        c,
        rv_mail(c, rv_plain("x" * 100_000 + "\n" + rv_roulette("Black", 29, 11)), msgid="longline-1@example.net"),
        R("Black", 29, 11),
        "a 100 KB line of text before the form",
    )
    c = k.ctx("form-lines-padded.eml")
    pad = " \t" * 2500
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain("\n".join(pad + line + pad for line in rv_roulette("Gold", 28, 12).splitlines())),
            msgid="padded-1@example.net",
        ),
        R("Gold", 28, 12),
        "every form line padded with 5000 spaces and tabs",
    )

    # ---- bob -----------------------------------------------------------------------------------------------
    c = k.ctx("bob-lotus-de.eml", "bob")
    text = (
        rv_roulette("Gold", 33, 7)
        + "\nGruss Bob\n\n\n\nVon:    Referee <referee@example.test>\nAn:     bob@example.test\n"
        f"Datum:  01.12.2026 19:00\nBetreff:        {SUBJECT[0]}\n\n\n\n" + full_original("bob", 0) + "\n"
    )
    k.acc(
        c,
        rv_mail(c, rv_plain(text, charset="ISO-8859-1", cte="quoted-printable"), msgid="OFBOB1@example.net"),
        R("Gold", 33, 7),
        "bob on Lotus Notes (German labels Von/An/Datum/Betreff), original unprefixed",
    )
    c = k.ctx("bob-outlook-sv.eml", "bob")
    text = (
        "Hej\n\n"
        + rv_roulette("Silver", 30, 10)
        + "\nBob\n\n"
        + rv_block(c, ("Från", "Skickat", "Till", "Ämne"), "den 1 december 2026 13:00")
        + full_original("bob", 0)
    )
    k.acc(
        c,
        rv_mail(c, rv_plain(text, cte="quoted-printable"), msgid="BOBSV1@outlook.example"),
        R("Silver", 30, 10),
        "bob on Outlook in Swedish (Från/Skickat/Till/Ämne), original unprefixed",
    )


ORIGINAL_MESSAGE_SEPS = [
    ("sv", "-----Ursprungligt meddelande-----", ("Från", "Skickat", "Till", "Ämne"), (18, 22)),
    ("pl", "-----Oryginalna wiadomość-----", ("Od", "Wysłano", "Do", "Temat"), (24, 16)),
    ("ru", "-----Исходное сообщение-----", ("От", "Отправлено", "Кому", "Тема"), (5, 35)),
    ("pt", "-----Mensagem original-----", ("De", "Enviada em", "Para", "Assunto"), (30, 10)),
    ("da", "-----Oprindelig meddelelse-----", ("Fra", "Sendt", "Til", "Emne"), (14, 26)),
]
MB = 1_000_000


def review_round1(k: Corpus) -> None:
    k.round = 1

    # ---- accepted: localized attributions and header blocks --------------------------------------------
    gmail_attributions = [
        (
            "sv",
            rv_bet(20, 20, 0),
            B(20, 20),
            "Den ons 2 dec. 2026 kl 19:00 skrev Referee <referee@example.test>:",
            "utf-8",
            "quoted-printable",
            "Gmail Swedish attribution 'Den ons 2 dec. 2026 kl 19:00 skrev Referee <...>:' + > quote",
        ),
        (
            "pl",
            rv_bet(25, 15),
            B(25, 15),
            "śr., 2 gru 2026 o 19:00 Referee <referee@example.test> napisał(a):",
            "utf-8",
            "quoted-printable",
            "Gmail Polish attribution 'śr., 2 gru 2026 o 19:00 Referee <...> napisał(a):' + > quote",
        ),
        (
            "ru",
            rv_bet(0, 40, 0),
            B(0, 40),
            "ср, 2 дек. 2026 г. в 19:00, Referee <referee@example.test>:",
            "utf-8",
            "base64",
            "Gmail Russian attribution 'ср, 2 дек. 2026 г. в 19:00, Referee <...>:' + > quote",
        ),
        (
            "ja",
            "よろしく\n\n" + rv_bet(10, 30),
            B(10, 30),
            "2026年12月2日(水) 19:00 Referee <referee@example.test>:",
            "ISO-2022-JP",
            "7bit",
            "Gmail Japanese attribution '2026年12月2日(水) 19:00 Referee <...>:' + > quote, ISO-2022-JP",
        ),
        (
            "zh",
            rv_bet(15, None, 25),
            B(15, 0, 25),
            "Referee <referee@example.test> 于2026年12月2日周三 19:00写道：",
            "gb2312",
            "base64",
            "Gmail Chinese attribution 'Referee <...> 于2026年12月2日周三 19:00写道：' + > quote, GB2312",
        ),
        (
            "tr",
            rv_bet(40),
            B(40, 0),
            "Referee <referee@example.test>, 2 Ara 2026 Çar, 19:00 tarihinde şunu yazdı:",
            "utf-8",
            "quoted-printable",
            "Gmail Turkish attribution 'Referee <...>, 2 Ara 2026 Çar, 19:00 tarihinde şunu yazdı:'",
        ),
    ]
    for lang, typed, move, attr, charset, cte, note in gmail_attributions:
        c = k.ctx(f"gmail-{lang}-attribution-bet.eml")
        text = typed + "\n" + attr + "\n\n" + quote(full_original("alice", 1)) + "\n"
        if charset == "gb2312":  # GB2312 as clients send it: the GB18030 superset under the older label
            part = raw_part(f'text/plain; charset="{charset}"', b64(text.encode("gb18030")), cte="base64")
        elif charset == "ISO-2022-JP":
            part = raw_part(f'text/plain; charset="{charset}"', text.encode("iso2022_jp"), cte="7bit")
        else:
            part = rv_plain(text, cte=cte)
        k.acc(c, rv_mail(c, part, msgid=f"CA{lang}1@mail.gmail.com"), move, note)

    c = k.ctx("thunderbird-cs-bottom-bet.eml")
    text = (
        "Dne 02. 12. 26 v 19:00 Referee napsal(a):\n"
        + quote(full_original("alice", 1))
        + "\n\n"
        + rv_bet(12, 28)
        + "\n-- \nAlice\n"
    )
    k.acc(
        c,
        rv_mail(
            c, rv_plain(text, flowed=True), msgid="tb-cs-1@example.net", extra=(("User-Agent", "Mozilla Thunderbird"),)
        ),
        B(12, 28),
        "Thunderbird Czech bottom-posted: 'Dne 02. 12. 26 v 19:00 Referee napsal(a):' + quote, answer below",
    )
    c = k.ctx("thunderbird-ru-bottom-bet.eml")
    text = "02.12.2026 19:00, Referee пишет:\n" + quote(full_original("alice", 1)) + "\n\n" + rv_bet(0, 0, 40) + "\n"
    k.acc(
        c,
        rv_mail(c, rv_plain(text, charset="KOI8-R", flowed=True), msgid="tb-ru-1@example.net"),
        B(0, 0, 40),
        "Thunderbird Russian bottom-posted: '02.12.2026 19:00, Referee пишет:'",
    )
    c = k.ctx("thunderbird-sv-bottom-bet.eml")
    text = (
        "Den 2026-12-02 kl. 19:00, skrev Referee:\n" + quote(full_original("alice", 1)) + "\n\n" + rv_bet(22, 18) + "\n"
    )
    k.acc(
        c,
        rv_mail(c, rv_plain(text, flowed=True), msgid="tb-sv-1@example.net"),
        B(22, 18),
        "Thunderbird Swedish bottom-posted: 'Den 2026-12-02 kl. 19:00, skrev Referee:'",
    )
    for lang, sep, labels, (g, s) in ORIGINAL_MESSAGE_SEPS:
        c = k.ctx(f"outlook-{lang}-original-message-bet.eml")
        text = (
            rv_bet(g, s, 0)
            + "\n"
            + sep
            + "\n"
            + rv_block(c, labels, "2 december 2026 19:00")
            + full_original("alice", 1)
        )
        k.acc(
            c,
            rv_mail(
                c,
                rv_plain(text, charset="windows-1250" if lang == "pl" else "utf-8", cte="quoted-printable"),
                msgid=f"OLD{lang}@example.net",
            ),
            B(g, s),
            f"older Outlook ({lang}): '{sep}' + localized block, original (with ROULETTE and BET forms) unprefixed",
        )
    c = k.ctx("yahoo-de-folgendes-geschrieben.eml")
    text = (
        rv_bet(26, 14)
        + "\n\n\nAm Mittwoch, 2. Dezember 2026, 19:00:00 MEZ hat Referee <referee@example.test> Folgendes "
        "geschrieben:\n\n\n" + full_original("alice", 1) + "\n"
    )
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(text, cte="quoted-printable"),
            msgid="1234567.yahoo-de@mail.yahoo.com",
            extra=(("X-Mailer", "WebService/1.1.21952 YMailNorrin"),),
        ),
        B(26, 14),
        "Yahoo German: 'Am Mittwoch, 2. Dezember 2026, 19:00:00 MEZ hat Referee <...> Folgendes geschrieben:' "
        "+ original unprefixed",
    )
    c = k.ctx("yahoo-sv-skrev.eml")
    text = (
        rv_bet(19, 21)
        + "\n\n\nDen onsdag 2 december 2026 19:00:00 CET skrev Referee <referee@example.test>:\n\n\n"
        + full_original("alice", 1)
        + "\n"
    )
    k.acc(
        c,
        rv_mail(c, rv_plain(text, cte="quoted-printable"), msgid="1234568.yahoo-sv@mail.yahoo.com"),
        B(19, 21),
        "Yahoo Swedish: 'Den onsdag 2 december 2026 19:00:00 CET skrev Referee <...>:' + original unprefixed",
    )

    # ---- grammar ---------------------------------------------------------------------------------------
    grammar = [
        (
            "zero-width-space-in-number",
            "BET\nGold\u200b: 2\u200b0\nSilver: \u200b20\nzw1\n",
            B(20, 20),
            "zero-width spaces inside the numbers ('2\\u200b0') and after keys",
            "zwsp-1@example.net",
        ),
        (
            "fullwidth-digits",
            "BET\nGold: ２０\nSilver: ２０\nBlack: ０\n",
            B(20, 20),
            "full-width digits (Japanese IME): 'Gold: ２０'",
            "fwd-digits-1@example.net",
        ),
        (
            "fullwidth-colon",
            "BET\nGold：30\nSilver：10\nBlack：0\n",
            B(30, 10),
            "full-width colons U+FF1A (Japanese IME): 'Gold：30'",
            "fw-colon-1@example.net",
        ),
        (
            "nbsp-tabs-separators",
            "BET\nGold:\u00a0\t11\nSilver\u202f:\u300029\n",
            B(11, 29),
            "NBSP and tab between key and value, narrow NBSP, ideographic space",
            "nbsp-tab-1@example.net",
        ),
        (
            "mixed-separator-spellings",
            "bet:\nGOLD: 20 pts\nsilver=20\nblack 0\n",
            B(20, 20, 0),
            "'GOLD: 20 pts', 'silver=20', 'black 0', header 'bet:'",
            "mixsep-1@example.net",
        ),
        (
            "header-with-entries-lowercase",
            "bet: gold 16 silver: 24\n",
            B(16, 24),
            "'bet: gold 16 silver: 24' on one line",
            "hdr-entries-1@example.net",
        ),
        (
            "my-bet-line-then-header",
            "My bet:\n\nBet:\nGold: 13\nSilver: 27\n",
            B(13, 27),
            "'My bet:' prose line, then 'Bet:' header",
            "mybet-1@example.net",
        ),
    ]
    for name, text, move, note, msgid in grammar:
        c = k.ctx(name + ".eml")
        k.acc(c, rv_mail(c, rv_plain(text), msgid=msgid), move, note)
    c = k.ctx("my-bet-no-header.eml")
    k.rej(
        c,
        rv_mail(c, rv_plain("My bet:\nGold: 13\nSilver: 27\nmb2\n"), msgid="mybet-2@example.net", irt=False),
        "no ROULETTE or BET section",
        "'My bet:' then entries, no BET header: NoMoves, clear reply",
    )
    c = k.ctx("rtl-embedding-marks.eml")
    text = "\u202bשלום\u202c\n" + "\n".join(f"\u202b{line}\u202c" for line in ["BET", "Gold: 21", "Silver: 19"]) + "\n"
    k.acc(
        c,
        rv_mail(c, rv_plain(text), msgid="rtl-emb-1@example.net"),
        B(21, 19),
        "Gmail RTL plain text: lines wrapped in U+202B ... U+202C (embedding marks, invisible)",
    )
    more = [
        (
            "bidi-isolates",
            "BET\nGold: \u206823\u2069\nSilver: \u206817\u2069\n",
            B(23, 17),
            "bidi isolates U+2068/U+2069 around values (copied from an RTL app)",
            "bidi-iso-1@example.net",
        ),
        (
            "unicode-line-separators",
            "BET\u2028Gold: 9\u2028Silver: 31\n",
            B(9, 31),
            "U+2028 LINE SEPARATOR between the lines of the form",
            "u2028-1@example.net",
        ),
        (
            "arabic-indic-digits",
            "BET\nGold: ٢٠\nSilver: ٢٠\n",
            B(20, 20),
            "Arabic-Indic digits '٢٠'",
            "arabic-1@example.net",
        ),
    ]
    for name, text, move, note, msgid in more:
        c = k.ctx(name + ".eml")
        k.acc(c, rv_mail(c, rv_plain(text), msgid=msgid), move, note)
    c = k.ctx("middle-dot-bullets.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain("BET\n·         Gold: 17\n·         Silver: 23\n", charset="windows-1252", cte="quoted-printable"),
            msgid="middot-1@example.net",
        ),
        B(17, 23),
        "Outlook plain text of a symbol bullet list: '·         Gold: 17' (U+00B7 + spaces)",
    )
    c = k.ctx("bet-exponent.eml")
    k.rej(
        c,
        rv_mail(c, rv_plain("BET\nGold: 1e1\nSilver: 20\nexp1\n"), msgid="exp-1@example.net"),
        "could not read",
        "'Gold: 1e1' is not a whole number: rejected quoting it",
    )
    c = k.ctx("bet-gold-twice-same.eml")
    k.rej(
        c,
        rv_mail(c, rv_plain("BET\nGold: 20\nSilver: 20\nGold: 20\n"), msgid="twice-1@example.net"),
        "appears twice",
        "Gold twice with the same value in a BET",
    )
    c = k.ctx("base64-crlf-bet.eml")
    data = b64(("Hi\r\n\r\n" + rv_bet(27, 13).replace("\n", "\r\n")).encode())
    k.acc(
        c,
        message(
            rv_head(c, msgid="b64crlf-1@example.net"),
            raw_part("text/plain; charset=utf-8", data, cte="base64"),
            nl="\r\n",
        ),
        B(27, 13),
        "CRLF line ends throughout; a base64 body with CRLF line ends inside",
    )
    c = k.ctx("ar-upstream-dmarc-fail.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_bet(8, 32)),
            top=(
                (
                    "Authentication-Results",
                    "mx.example.test; dkim=pass header.d=example.test; spf=pass; dmarc=pass header.from=example.test",
                ),
            ),
            msgid="ar-up-1@example.net",
            extra=(("Authentication-Results", "relay.example.org; dmarc=fail (p=none) header.from=example.test"),),
        ),
        B(8, 32),
        "our MTA's Authentication-Results (topmost) says dmarc=pass; an older one from an upstream forwarder says "
        "dmarc=fail",
    )
    c = k.ctx("reply-to-own-round0-mail-in-round1.eml")
    own = "<baseline-silver@example.net>"
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(
                rv_bet(6, 34)
                + "\nOn Tue, Dec 1, 2026 at 7:30 PM Alice Martin <alice@example.test> wrote:\n> ROULETTE\n"
                "> Winning colour: Silver\n"
            ),
            msgid="own-r0-reply@mail.gmail.com",
            irt=False,
            extra=(("In-Reply-To", own), ("References", "{{STEP0_ALICE}} " + own)),
        ),
        B(6, 34),
        "in round 1 alice replies to her OWN round-0 mail (In-Reply-To baseline-silver-before-fwd.eml; "
        "References: our round-0 mail, then hers) with a fresh round-1 bet: not a late reply",
    )
    c = k.ctx("outlook-sv-html-only.eml")
    orig = "".join(
        f"<p class=MsoNormal>{rv_esc(line) or '&nbsp;'}<o:p></o:p></p>"
        for line in full_original("alice", 1).splitlines()
    )
    body = (
        '<html xmlns:o="urn:schemas-microsoft-com:office:office"><head><style>p.MsoNormal{margin:0}</style></head>'
        "<body lang=SV><div class=WordSection1>"
        + "".join(f"<p class=MsoNormal>{line}<o:p></o:p></p>" for line in rv_bet(28, 12).splitlines())
        + "<p class=MsoNormal>&nbsp;<o:p></o:p></p>"
        "<div style='border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm'>"
        "<p class=MsoNormal><b>Från:</b> Referee &lt;referee@example.test&gt; <br><b>Skickat:</b> den 2 december "
        "2026 19:00<br>"
        f"<b>Till:</b> Alice &lt;alice@example.test&gt;<br><b>Ämne:</b> {rv_esc(SUBJECT[1])}<o:p></o:p></p></div>"
        "<p class=MsoNormal>&nbsp;<o:p></o:p></p>" + orig + "</div></body></html>"
    )
    k.acc(
        c,
        rv_mail(c, rv_html(body, charset="windows-1252"), msgid="OLSVHTML@example.net"),
        B(28, 12),
        "Outlook (sv) HTML-only: MsoNormal paragraphs, border-top div with <b>Från:</b>/<b>Skickat:</b>/"
        "<b>Till:</b>/<b>Ämne:</b>, original as paragraphs",
    )

    # ---- duplicates and Message-ID reuse ---------------------------------------------------------------
    c = k.ctx("dup-forwarder-original.eml")
    first = rv_mail(c, rv_plain(rv_bet(25, 15) + "\nsent once\n"), msgid="dup-fw-1@example.net")
    k.acc(c, first, B(25, 15), "a bet that a forwarder will deliver again (dup-forwarder-redelivered.eml)")
    c = k.ctx("dup-revision-between.eml")
    k.acc(
        c,
        rv_mail(c, rv_plain(rv_bet(0, 40)), msgid="dup-rev-1@example.net"),
        B(0, 40),
        "a revision between a mail and its re-delivery",
    )
    c = k.ctx("dup-forwarder-redelivered.eml")
    forwarder = (
        "Return-Path: <alice@example.test>\nDelivered-To: referee@example.test\n"
        "Received: from forwarder.example.org (forwarder.example.org [198.51.100.9]) by mx.example.test; "
        "Wed, 02 Dec 2026 21:40:00 +0000\n"
        "ARC-Seal: i=1; a=rsa-sha256; t=1796234400; cv=none; d=forwarder.example.org; s=arc; b=AbC123\n"
        "ARC-Message-Signature: i=1; a=rsa-sha256; c=relaxed/relaxed; d=forwarder.example.org; s=arc; "
        "h=from:to:subject; bh=x; b=y\n"
        "ARC-Authentication-Results: i=1; forwarder.example.org; dkim=pass; spf=pass; dmarc=pass\n"
        "DKIM-Signature: v=1; a=rsa-sha256; d=forwarder.example.org; s=fw; h=from:to; bh=x; b=y\n"
        "Authentication-Results: mx.example.test; dkim=pass; dmarc=pass header.from=example.test\n"
        "X-Spam-Status: No, score=-0.1 required=5.0 tests=DKIM_SIGNED,DKIM_VALID autolearn=ham\n"
        "X-Spam-Score: -0.1\n"
        "X-Forwarded-To: referee@example.test\n"
        "X-Forwarded-For: alice@example.test referee@example.test\n"
    ).encode()
    k.add(
        Case(
            c.file,
            1,
            "ignored",
            "the same mail again via a forwarder that added ARC-*, DKIM-Signature, Authentication-Results, X-Spam-*, "
            "X-Forwarded-*, Received, Return-Path, Delivered-To; the whole mail re-written with CRLF line ends; "
            "must not undo the revision",
            (forwarder + first).replace(b"\n", b"\r\n"),
            rule="duplicate",
            reply=False,
            player="alice",
            same_as="dup-forwarder-original.eml",
        )
    )
    c = k.ctx("dup-8bit-original.eml")
    k.acc(
        c,
        rv_mail(c, rv_plain(rv_bet(31, 9) + "\nGrüße\n"), msgid="dup8-1@example.net"),
        B(31, 9),
        "an 8bit UTF-8 bet ('Grüße'); its re-delivery downgraded to QP by a relay is left out of the corpus "
        "(not yet recognised as a duplicate: a known open limit)",
    )
    c = k.ctx("dup-8bit-revision.eml")
    k.acc(c, rv_mail(c, rv_plain(rv_bet(3, 37)), msgid="dup8-rev@example.net"), B(3, 37), "a revision after it")
    c = k.ctx("msgid-reuse-first.eml")
    k.acc(
        c,
        rv_mail(c, rv_plain(rv_bet(10, 30)), msgid="reused-by-client@example.net"),
        B(10, 30),
        "alice's client reuses one Message-ID for two different bets: the first",
    )
    c = k.ctx("msgid-reuse-second.eml")
    k.acc(
        c,
        rv_mail(c, rv_plain(rv_bet(35, 5) + "\nchanged my mind\n"), msgid="reused-by-client@example.net"),
        B(35, 5),
        "the second bet with the same Message-ID: it counts, last wins",
    )

    # ---- bob -----------------------------------------------------------------------------------------
    c = k.ctx("bob-outlook-ru-bet.eml", "bob")
    text = (
        rv_bet(20, None, 20)
        + "\nБоб\n\n"
        + rv_block(c, ("От", "Отправлено", "Кому", "Тема"), "2 декабря 2026 г. 13:00")
        + full_original("bob", 1)
    )
    k.acc(
        c,
        rv_mail(c, rv_plain(text, charset="koi8-r", cte="quoted-printable"), msgid="BOBRU1@outlook.example"),
        B(20, 0, 20),
        "bob on Outlook in Russian (От/Отправлено/Кому/Тема), original unprefixed",
    )
    c = k.ctx("bob-spark-bet.eml", "bob")
    text = (
        rv_bet(0, 25)
        + "\nOn 2 Dec 2026 at 13:00 -0500, Referee <referee@example.test>, wrote:\n"
        + quote(full_original("bob", 1))
        + "\n"
    )
    k.acc(c, rv_mail(c, rv_plain(text), msgid="bob-spark@Spark"), B(0, 25), "bob on Spark, > quote")

    # ---- hostile bodies of about 1 MB (each must be judged quickly) -----------------------------------
    perf = [
        (
            "perf-flowed-1mb-entries",
            "1 MB of 'Gold: 1 ' lines with format=flowed after 'BET ' (joined into one line)",
            lambda: rv_plain("BET \n" + "Gold: 1 \n" * (MB // 9), flowed=True),
            None,
        ),
        (
            "perf-html-1mb-lt",
            "HTML-only: 1 MB of '<' and '<a b=\"' fragments",
            lambda: rv_html("<p>x</p>" + '<a b="<' * (MB // 7), cte="8bit"),
            None,
        ),
        (
            "perf-html-1mb-charrefs",
            "HTML-only: 1 MB of '&#' and '&#x' and '&amp' fragments",
            lambda: rv_html("&#&#x&amp" * (MB // 9), cte="8bit"),
            None,
        ),
        (
            "perf-quote-1mb-gt",
            "the form, then one line of 1 MB of '>'",
            lambda: rv_plain(rv_bet(20, 20) + "\n" + ">" * MB + "\n"),
            B(20, 20),
        ),
        (
            "perf-attribution-lines",
            "1 MB of 'On 1 a' / 'b' / 'wrote' lines (3-line attribution candidates, none ending)",
            lambda: rv_plain("On 1 a\nb x\nwrote\n" * (MB // 18)),
            None,
        ),
        (
            "perf-header-block-lines",
            "1 MB of 'From: x' / 'Sent: y' lines (header-block look-ahead bait)",
            lambda: rv_plain("From: x\nSent: y\n" * (MB // 16)),
            None,
        ),
        (
            "perf-underscores-blank",
            "1 MB of underscore lines each followed by blank lines",
            lambda: rv_plain(("_" * 30 + "\n" + "\n" * 20) * (MB // 51)),
            None,
        ),
        (
            "perf-qp-soft-breaks",
            "QP body of 1 MB of '=\\n' soft breaks, then the form",
            lambda: rv_plain("=\n" * (MB // 2) + "BET\nGold: 20\nSilver: 20\n", cte="qp-raw"),
            B(20, 20),
        ),
        (
            "perf-bet-keys-one-line",
            "'BET ' then 1 MB of 'g: ' on one line",
            lambda: rv_plain("BET " + "g: " * (MB // 3) + "\n"),
            None,
        ),
        (
            "perf-many-sections",
            "1 MB alternating 'ROULETTE' / 'Winning colour' lines",
            lambda: rv_plain("ROULETTE\nWinning colour\n" * (MB // 24)),
            None,
        ),
        (
            "perf-words-after-complete",
            "a complete BET, then 1 MB of 'Gold colour colour Silver: x' lines",
            lambda: rv_plain(rv_bet(20, 20) + "Gold colour colour Silver: x\n" * (MB // 29)),
            B(20, 20),
        ),
        (
            "perf-boundary-lines",
            "multipart with boundary 'b': 1 MB of '--bx' lines before the first delimiter",
            lambda: Part(
                [("Content-Type", 'multipart/mixed; boundary="b"')],
                b"--bx\n" * (MB // 5) + b"--b\nContent-Type: text/plain\n\n" + rv_bet(20, 20).encode() + b"\n--b--\n",
            ),
            B(20, 20),
        ),
    ]
    for name, note, make, move in perf:
        c = k.ctx(name + ".eml")
        raw = rv_mail(c, make(), msgid=f"{name}@example.net")
        if move:
            k.acc(c, raw, move, note)
        else:
            k.rej(c, raw, ANY_ERROR, note + ": rejected (any reason), one error reply")
    c = k.ctx("perf-encoded-words-subject.eml")
    k.acc(
        c,
        rv_mail(
            c,
            rv_plain(rv_bet(20, 20)),
            msgid="perf-encoded-words-subject@example.net",
            extra=(("X-Note", "=?utf-8?q?" * 20000),),
        ),
        B(20, 20),
        "a header of 200 KB of '=?utf-8?q?' fragments, the form in the body",
    )
    c = k.ctx("perf-two-expensive-readings.eml")
    line = "BET " + "g: " * 83_000
    plain = "Hi,\n\nOn Tue, Dec 1, 2026 at 7:00 PM Referee <referee@example.test> wrote:\n" + line + "\n"
    k.rej(
        c,
        rv_mail(
            c,
            multipart(
                "alternative", [rv_plain(plain), rv_html("<p>Hi</p><p>" + line + "</p>", cte="8bit")], "perf-two-b"
            ),
            msgid="perf-two@example.net",
        ),
        ANY_ERROR,
        "alternative{plain: 'Hi' + attribution naming an address + 'BET g: g: g: ...' (250 KB), html: the same "
        "250 KB line}: text reading is NoMoves, the html and uncut readings each parse a 250 KB entry line",
    )
    c = k.ctx("perf-nested-paren-from.eml")
    rv_rej(
        k,
        c,
        rv_mail(c, rv_plain(rv_bet(20, 20)), frm="(" * 100_000 + "{{ALICE}}", msgid="perf-paren@example.net"),
        "not your registered address",
        "From: 100 KB of '(' then alice's address: spoofed/unreadable sender, one notice to alice at most, fast",
        rule="spoofed",
    )


def review_after(k: Corpus) -> None:
    """Probes of a later state: once round 1 has closed (in round 2), and after the match ended."""
    k.round = 1

    def add(case: Case, after: str) -> None:
        case.after = after
        k.add(case)

    c = k.ctx("late-reply-to-round-1.eml")
    add(
        Case(
            c.file,
            1,
            "rejected",
            "a bet answering our round-1 mail that arrives after round 1 closed: not moved into round 2",
            rv_mail(
                c,
                rv_plain(rv_bet(20, 20) + "\nlate1\n"),
                subject="Re: " + SUBJECT_ROUND2,
                msgid="late-1@example.net",
                irt="{{STEP1_ALICE}}",
            ),
            phrase="closed at its deadline",
            reply=True,
            player="alice",
        ),
        "round-1",
    )
    c = k.ctx("round2-bet-ok.eml")
    add(
        Case(
            c.file,
            1,
            "accepted",
            "a bet answering our latest mail in round 2",
            rv_mail(c, rv_plain(rv_bet(30, 10)), subject="Re: " + SUBJECT_ROUND2, msgid="r2-ok@example.net"),
            move=B(30, 10),
            reply=True,
            player="alice",
        ),
        "round-1",
    )

    over = "Re: " + SUBJECT_END
    c = k.ctx("over-bet.eml")
    add(
        Case(
            c.file,
            1,
            "rejected",
            "alice bets after the match ended: rejected 'match is over', one reply",
            rv_mail(c, rv_plain(rv_bet(20, 20) + "\nover1\n"), subject=over, msgid="over-1@example.net"),
            phrase="over",
            reply=True,
            player="alice",
        ),
        "match",
    )
    c = k.ctx("over-bob-roulette.eml", "bob")
    add(
        Case(
            c.file,
            1,
            "rejected",
            "bob sends a roulette after the match ended",
            rv_mail(c, rv_plain(rv_roulette("Gold", 30, 10) + "\nover2\n"), subject=over, msgid="over-2@example.net"),
            phrase="over",
            reply=True,
            player="bob",
        ),
        "match",
    )
    c = k.ctx("over-general-address.eml")
    add(
        Case(
            c.file,
            1,
            "rejected",
            "alice writes to the general address after the end: told she has no running match",
            rv_mail(c, rv_plain("Who won?\n"), to="{{REFEREE}}", subject=over, msgid="over-3@example.net", irt=False),
            phrase="no running match",
            rule="general-address",
            reply=True,
            player="alice",
        ),
        "match",
    )
    c = k.ctx("over-stranger.eml")
    add(
        Case(
            c.file,
            1,
            "ignored",
            "a stranger after the end",
            rv_mail(
                c,
                rv_plain("hi\n"),
                frm="eve@evil.test",
                to="{{REFEREE}}",
                subject=over,
                msgid="over-4@example.net",
                irt=False,
            ),
            rule="unknown-sender",
            reply=False,
            player="alice",
        ),
        "match",
    )
    c = k.ctx("over-ooo-auto.eml")
    add(
        Case(
            c.file,
            1,
            "ignored",
            "alice's auto-reply to the final mail",
            rv_mail(
                c,
                rv_plain("Away\n"),
                subject="Automatic reply: x",
                msgid="over-5@example.net",
                extra=(("Auto-Submitted", "auto-replied"),),
            ),
            rule="auto-submitted",
            reply=False,
            player="alice",
        ),
        "match",
    )


# ---------------------------------------------------------------------------- writing


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(value)


# A mail larger than this is not stored: the corpus test builds it with build_case().
STORED_LIMIT = 200_000


def build_case(file: str) -> bytes:
    """The raw bytes (with placeholders) of one case, as :func:`build` makes it."""
    for case in build():
        if case.file == file:
            assert case.raw is not None, file
            return case.raw
    raise KeyError(file)


def write(cases: list[Case], out: Path = HERE) -> None:
    for old in out.glob("*.eml"):
        old.unlink()
    lines = [
        "# The inbound mail corpus; generated by make_corpus.py (do not edit by hand).",
        "# Keys and placeholders: see the docstring of make_corpus.py.",
        "",
    ]
    for case in cases:
        if case.raw is not None:
            assert b"{{" not in _body(case.raw), f"{case.file}: placeholder in the body"
            if len(case.raw) > STORED_LIMIT:
                case.generate = "corpus"  # built again by the test (build_case), not stored
            else:
                (out / case.file).write_bytes(case.raw)
        lines.append("[[mail]]")
        for key in (
            "file",
            "round",
            "expect",
            "player",
            "move",
            "phrase",
            "shows",
            "rule",
            "reply",
            "same_as",
            "generate",
            "after",
            "note",
        ):
            value = getattr(case, key)
            if value is not None:
                lines.append(f"{key} = {_toml_value(value)}")
        lines.append("")
    (out / "index.toml").write_text("\n".join(lines), encoding="utf-8")


def _body(raw: bytes) -> bytes:
    for sep in (b"\r\n\r\n", b"\n\n", b"\r\r"):
        i = raw.find(sep)
        if i >= 0:
            return raw[i + len(sep) :]
    return b""


def main() -> int:
    cases = build()
    write(cases)
    counts: dict[str, int] = {}
    for case in cases:
        counts[case.expect] = counts.get(case.expect, 0) + 1
    print(f"{len(cases)} mails: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
