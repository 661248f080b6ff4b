"""Replies in the shapes real mail clients give them, built from the real mail the referee
sent (issue 20).

A shape is two things: how the client puts our mail into the editor (quote prefix,
attribution or header block in the client's language, re-wrapping, mis-decoding) and how
it sends what the player left there (plain, HTML beside it or alone, format=flowed,
quoted-printable, base64, CRLF). The player's edit in between is a function over the editor
text (``edit``), the same for every shape: typed above, typed below, changed inside the
copy, chat, or nothing changed.

:func:`build` is the one entry point: ``build(shape, original, edit, from_addr=, name=)``
-> the raw reply. The clients themselves (mutt, s-nail ...) are in ``real_clients.py``.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import html
import textwrap
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from email.message import EmailMessage

__all__ = ["SHAPES", "Shape", "build", "original_text"]

WHEN = datetime(2026, 12, 1, 19, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Original:
    """What a client knows of the mail it answers."""

    text: str
    subject: str
    message_id: str
    references: str
    sender_name: str
    sender_addr: str
    reply_to: str
    to: str


@lru_cache(maxsize=256)
def original_text(raw: bytes) -> Original:
    """Our mail as a client shows it to the player (its plain text and headers), read with
    the stdlib's parser; remembered, as the corpus answers each of a few mails many times
    (a stdlib parse of one of our mails costs some 15 ms; the result is immutable)."""
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    part = msg.get_body(preferencelist=("plain",))
    text = part.get_content().replace("\r\n", "\n") if part is not None else ""
    name, addr = email.utils.parseaddr(str(msg.get("From", "")))
    return Original(
        text=text.rstrip("\n"),
        subject=str(msg.get("Subject", "")),
        message_id=str(msg.get("Message-ID", "")).strip(),
        references=str(msg.get("References", "") or ""),
        sender_name=name or "Referee",
        sender_addr=addr,
        reply_to=str(msg.get("Reply-To") or msg.get("From")),
        to=str(msg.get("To", "")),
    )


# ---------------------------------------------------------------------- quoting


def prefixed(text: str, prefix: str = "> ", empty: str | None = None) -> str:
    """Every line with ``prefix``; an empty line with ``empty`` (default: the prefix
    without its trailing space, as mutt and Gmail write it)."""
    blank = prefix.rstrip() if empty is None else empty
    return "\n".join(prefix + line if line else blank for line in text.split("\n"))


def rewrapped(text: str, width: int) -> str:
    """Every line re-wrapped at ``width`` (leading spaces kept on the first piece)."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        out.extend(textwrap.wrap(line, width) or [""])
    return "\n".join(out)


def mojibake(text: str) -> str:
    """UTF-8 read as Latin-1 (``Tomás`` -> ``TomÃ¡s``)."""
    return text.encode("utf-8").decode("latin-1")


def mojibake_greeting(text: str) -> str:
    first, _, rest = text.partition("\n")
    return mojibake(first) + "\n" + rest


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


# ---------------------------------------------------------------------- header blocks

# (From, Sent, To, Subject) labels of Outlook's header block, and a date as it writes it
OUTLOOK_LANGUAGES: dict[str, tuple[str, str, str, str, str]] = {
    "en": ("From", "Sent", "To", "Subject", "Tuesday, December 1, 2026 7:00 PM"),
    "de": ("Von", "Gesendet", "An", "Betreff", "Dienstag, 1. Dezember 2026 19:00"),
    "fr": ("De", "Envoyé", "À", "Objet", "mardi 1 décembre 2026 19:00"),
    "es": ("De", "Enviado", "Para", "Asunto", "martes, 1 de diciembre de 2026 19:00"),
    "it": ("Da", "Inviato", "A", "Oggetto", "martedì 1 dicembre 2026 19:00"),
    "nl": ("Van", "Verzonden", "Aan", "Onderwerp", "dinsdag 1 december 2026 19:00"),
    "sv": ("Från", "Skickat", "Till", "Ämne", "den 1 december 2026 19:00"),
    "pl": ("Od", "Wysłano", "Do", "Temat", "wtorek, 1 grudnia 2026 19:00"),
    "ru": ("От", "Отправлено", "Кому", "Тема", "1 декабря 2026 г. 19:00"),
    "ja": ("差出人", "送信日時", "宛先", "件名", "2026年12月1日 19:00"),
    "zh": ("发件人", "发送时间", "收件人", "主题", "2026年12月1日 19:00"),
    "ko": ("보낸 사람", "보낸 날짜", "받는 사람", "제목", "2026년 12월 1일 화요일 오후 7:00"),
    "tr": ("Kimden", "Gönderildi", "Kime", "Konu", "1 Aralık 2026 Salı 19:00"),
    "pt": ("De", "Enviada em", "Para", "Assunto", "terça-feira, 1 de dezembro de 2026 19:00"),
    "da": ("Fra", "Sendt", "Til", "Emne", "1. december 2026 19:00"),
}


def outlook_block(o: Original, lang: str, *, original_message: bool = False) -> str:
    frm, sent, to, subject, date = OUTLOOK_LANGUAGES[lang]
    sep = "-----Original Message-----" if original_message else "_" * 32
    return (
        f"{sep}\n{frm}: {o.sender_name} <{o.sender_addr}>\n{sent}: {date}\n"
        f"{to}: {o.to}\n{subject}: {o.subject}\n\n{o.text}"
    )


# ---------------------------------------------------------------------- the shapes


@dataclass(frozen=True)
class Shape:
    """How one client shows our mail in the editor (``editor``) and sends the result
    (``plain``: the text part's transform, ``html``: send an HTML part, alone or beside the
    text, ``flowed``: the width of format=flowed, ``cte``: the transfer encoding, ``crlf``)."""

    name: str
    group: str
    editor: Callable[[Original], str]
    html: str = ""  # "" | "alternative" | "only"
    flowed: int = 0
    cte: str = "8bit"
    crlf: bool = False
    thread: bool = True
    notes: str = field(default="", compare=False)


def _attr(text: str) -> Callable[[Original], str]:
    return lambda o: text.format(o=o)


def _gmail(o: Original) -> str:
    return f"On Tue, Dec 1, 2026 at 7:00 PM {o.sender_name} <{o.sender_addr}> wrote:\n\n{prefixed(o.text)}"


def _gmail_android(o: Original) -> str:
    return f"On Tue, 1 Dec 2026, 19:00 {o.sender_name}, <{o.sender_addr}> wrote:\n\n{prefixed(o.text)}"


def _apple(o: Original) -> str:
    return f"> On Dec 1, 2026, at 19:00, {o.sender_name} <{o.sender_addr}> wrote:\n>\n{prefixed(o.text)}"


def _iphone(o: Original) -> str:
    return (
        f"Sent from my iPhone\n\n> On Dec 1, 2026, at 7:00 PM, {o.sender_name} <{o.sender_addr}> wrote:\n>\n"
        f"{prefixed(o.text)}"
    )


def _thunderbird(o: Original) -> str:
    return f"On 01/12/2026 19:00, {o.sender_name} wrote:\n{prefixed(o.text)}"


def _yahoo(o: Original) -> str:
    return (
        f"On Tuesday, December 1, 2026 at 07:00:00 PM GMT+1, {o.sender_name} <{o.sender_addr}> wrote: \n\n{o.text}"
    )


def _zoho(o: Original) -> str:
    return f"---- On Tue, 01 Dec 2026 19:00:00 +0100 {o.sender_name} <{o.sender_addr}> wrote ----\n\n{o.text}"


def _oe(o: Original) -> str:
    return (
        f"----- Original Message -----\nFrom: \"{o.sender_name}\" <{o.sender_addr}>\nTo: {o.to}\n"
        f"Sent: Tuesday, December 01, 2026 7:00 PM\nSubject: {o.subject}\n\n\n{prefixed(o.text)}"
    )


def _nested(o: Original) -> str:
    return f"On Tue, Dec 1, 2026 at 7:00 PM {o.sender_name} wrote:\n{prefixed(o.text, '> > ', '> >')}"


def _rewrap72(o: Original) -> str:
    return f"On 1 Dec 2026, {o.sender_name} wrote:\n{prefixed(rewrapped(o.text, 72))}"


def _rewrap_quoted(width: int) -> Callable[[Original], str]:
    return lambda o: f"On 1 Dec 2026, {o.sender_name} wrote:\n{prefixed(rewrapped(o.text, width))}"


def _mojibake_greeting(o: Original) -> str:
    return f"On 1 Dec 2026, {o.sender_name} wrote:\n{prefixed(mojibake_greeting(o.text))}"


def _mojibake_all(o: Original) -> str:
    return f"{o.sender_name} wrote:\n\n{mojibake(o.text)}"


def _mojibake_quoted(o: Original) -> str:
    return f"On 1 Dec 2026, {o.sender_name} wrote:\n{prefixed(mojibake(o.text))}"


def _nfd(o: Original) -> str:
    return f"On 1 Dec 2026, {o.sender_name} wrote:\n{prefixed(nfd(o.text))}"


def _nfd_unquoted(o: Original) -> str:
    return outlook_block(Original(**{**o.__dict__, "text": nfd(o.text)}), "en")


def _outlook(lang: str, *, original_message: bool = False) -> Callable[[Original], str]:
    return lambda o: "\n" + outlook_block(o, lang, original_message=original_message)


def _pipe(o: Original) -> str:
    return f"On 1 Dec 2026, {o.sender_name} wrote:\n{prefixed(o.text, '| ')}"


SHAPES: tuple[Shape, ...] = (
    Shape("gmail-web", "gmail", _gmail, html="alternative", cte="quoted-printable"),
    Shape("gmail-web-plain", "gmail", _gmail),
    Shape("gmail-android", "gmail", _gmail_android, html="alternative", cte="base64"),
    *(Shape(f"outlook-{lang}", "outlook", _outlook(lang), html="alternative", cte="quoted-printable", crlf=True)
      for lang in OUTLOOK_LANGUAGES),
    Shape("outlook-original-message", "outlook", _outlook("en", original_message=True), cte="quoted-printable"),
    Shape("outlook-de-original-message", "outlook", _outlook("de", original_message=True)),
    Shape("outlook-web-no-thread", "outlook", _outlook("en"), thread=False),
    Shape("apple-mail", "apple", _apple),
    Shape("iphone", "apple", _iphone, cte="quoted-printable"),
    Shape("thunderbird", "thunderbird", _thunderbird, flowed=72),
    Shape("yahoo", "yahoo", _yahoo, html="alternative"),
    Shape("zoho", "zoho", _zoho),
    Shape("outlook-express", "outlook", _oe),
    Shape("html-only", "html", _gmail, html="only"),
    Shape("html-only-apple", "html", _apple, html="only", cte="quoted-printable"),
    Shape("flowed-66", "flowed", _gmail, flowed=66),
    Shape("flowed-40", "flowed", _gmail, flowed=40),
    Shape("crlf", "encoding", _thunderbird, crlf=True),
    Shape("quoted-printable", "encoding", _thunderbird, cte="quoted-printable"),
    Shape("base64", "encoding", _gmail, cte="base64"),
    Shape("rewrapped-72", "wrap", _rewrap72),
    Shape("rewrapped-50", "wrap", _rewrap_quoted(50)),
    Shape("nested", "wrap", _nested),
    Shape("pipe-prefix", "wrap", _pipe),
    Shape("mojibake-greeting", "unicode", _mojibake_greeting),
    Shape("mojibake-quoted", "unicode", _mojibake_quoted),
    Shape("mojibake-unquoted", "unicode", _mojibake_all),
    Shape("nfd-copy", "unicode", _nfd),
    Shape("nfd-unquoted", "unicode", _nfd_unquoted),
    Shape("no-thread", "gmail", _gmail, thread=False),
)
BY_NAME = {shape.name: shape for shape in SHAPES}


# ---------------------------------------------------------------------- sending


def flowed(text: str, width: int) -> str:
    """``text`` as format=flowed (RFC 3676) at ``width``: long lines cut at spaces, each
    piece but the last ending in a space; a quoted line's pieces keep its quote marks."""
    out = []
    for line in text.split("\n"):
        marks = len(line) - len(line.lstrip(">"))
        quote, body = line[:marks], line[marks:]
        if quote and body.startswith(" "):
            body = body[1:]
        stuff = " " if (quote or body.startswith((" ", "From ", ">"))) else ""
        head = quote + stuff
        if len(head + body) <= width or " " not in body.strip():
            out.append(head + body.rstrip(" "))
            continue
        pieces, current = [], ""
        for word in body.split(" "):
            if current and len(head + current + word) > width:
                pieces.append(current)
                current = ""
            current += word + " "
        pieces.append(current.rstrip(" "))
        out.extend(head + piece for piece in pieces)
    return "\n".join(out)


def as_html(text: str) -> str:
    """The editor text as a webmail's HTML: the player's lines as divs, the ``>`` quote as
    (nested) blockquotes."""
    out, depth = [], 0
    for line in text.split("\n"):
        marks = 0
        rest = line
        while rest.startswith(">"):
            marks += 1
            rest = rest[1:].lstrip(" ") if rest[1:2] == " " or rest[1:2] == ">" else rest[1:]
        while depth < marks:
            out.append('<blockquote class="gmail_quote" style="margin:0 0 0 .8ex;border-left:1px #ccc solid">')
            depth += 1
        while depth > marks:
            out.append("</blockquote>")
            depth -= 1
        out.append(f"<div>{html.escape(rest) if rest.strip() else '<br>'}</div>")
    out.extend(["</blockquote>"] * depth)
    return '<html><body><div dir="ltr">' + "\n".join(out) + "</div></body></html>"


_counter = [0]


def build(
    shape: Shape, original: bytes, edit: Callable[[str], str], *, from_addr: str, name: str, at: datetime = WHEN
) -> bytes:
    """The reply ``shape``'s client sends to ``original`` once the player made ``edit``
    to the editor text."""
    o = original_text(original)
    text = edit(shape.editor(o)).rstrip("\n") + "\n"
    _counter[0] += 1
    msg = EmailMessage(policy=email.policy.default)
    msg["From"] = email.utils.formataddr((name, from_addr))
    msg["To"] = o.reply_to
    msg["Subject"] = o.subject if o.subject.lower().startswith("re:") else f"Re: {o.subject}"
    msg["Date"] = email.utils.format_datetime(at)
    msg["Message-ID"] = f"<{shape.name}.{_counter[0]}.{at:%Y%m%d%H%M%S}@{from_addr.split('@')[1]}>"
    if shape.thread and o.message_id:
        msg["In-Reply-To"] = o.message_id
        msg["References"] = " ".join([*o.references.split(), o.message_id])
    cte = None if shape.cte == "8bit" else shape.cte
    if shape.html == "only":
        msg.set_content(as_html(text), subtype="html", cte=cte or "quoted-printable")
    else:
        plain = flowed(text, shape.flowed) if shape.flowed else text
        msg.set_content(plain, cte=cte or "8bit")
        if shape.flowed:
            msg.replace_header("Content-Type", 'text/plain; charset="utf-8"; format=flowed')
        if shape.html == "alternative":
            msg.add_alternative(as_html(text), subtype="html")
    data = msg.as_bytes(policy=email.policy.SMTP if shape.crlf else email.policy.default.clone(linesep="\n"))
    return data
