"""Inbound mail to a clean submission.

Everything here is pure and total: :func:`parse_message` never raises, whatever
bytes it is given. Headers are read from their raw form and decoded here
(RFC 2047, 8-bit bytes, unknown charsets), so a header the stdlib's structured
parser chokes on costs that one field, never the message.

The text a player wrote is found in three steps:

1. :func:`extract_text` picks the body part (first inline ``text/plain``, else
   ``text/html`` turned into text), decodes transfer encoding and charset, undoes
   ``format=flowed`` and normalises line ends and invisible characters.
2. :func:`strip_quoted` removes what the player did not write: quoted lines,
   attribution lines, Outlook and forward header blocks, signatures, mobile footers.
3. The result is :attr:`Inbound.body`; :attr:`Inbound.raw_body` keeps step 1's
   output for quoting back in error replies.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.header import decode_header
from email.message import EmailMessage, Message
from email.parser import BytesHeaderParser
from email.utils import getaddresses
from html.parser import HTMLParser
from typing import Iterable, Iterator

__all__ = [
    "Inbound",
    "decode_bytes",
    "extract_text",
    "header_addresses",
    "header_values",
    "html_to_text",
    "parse_message",
    "strip_quoted",
    "unflow",
]

SYNTHETIC_ID_DOMAIN = "referee.invalid"


@dataclass(frozen=True)
class Inbound:
    """One inbound mail, reduced to what the referee needs."""

    message_id: str               # without angle brackets; synthetic when absent
    from_addr: str                # bare address, lowercased ("" when unknown)
    from_name: str                # display name, decoded
    to_addrs: tuple[str, ...]     # To, Cc, Delivered-To, X-Original-To; bare, lowercased, unique
    subject: str
    in_reply_to: str | None       # without angle brackets
    references: tuple[str, ...]   # without angle brackets, oldest first
    body: str                     # what the player wrote (quotes and signature removed)
    raw_body: str                 # the decoded text before quote stripping
    message: Message = field(repr=False, compare=False)  # the parsed message, for guards


# --------------------------------------------------------------------------- parsing


def parse_message(raw: bytes) -> Inbound:
    """Parse raw RFC 5322 bytes. Never raises: unreadable parts become empty fields."""
    raw = bytes(raw)
    try:
        # compat32 is four times faster than policy.default; headers are decoded by the
        # helpers below from their raw values either way.
        msg: Message = message_from_bytes(raw, policy=policy.compat32)
    except Exception:  # the feed parser is lenient, but a parse must never fail
        msg = EmailMessage()

    senders = [pair for pair in header_addresses(msg, "From") if "@" in pair[1]]
    from_name, from_addr = senders[0] if senders else ("", "")
    recipients = header_addresses(msg, "To", "Cc", "Delivered-To", "X-Original-To")
    raw_body = extract_text(msg)
    return Inbound(
        message_id=_message_id(msg, raw),
        from_addr=from_addr,
        from_name=from_name,
        to_addrs=tuple(dict.fromkeys(addr for _, addr in recipients if "@" in addr)),
        subject=_first(header_values(msg, "Subject")),
        in_reply_to=_first_id(_first(header_values(msg, "In-Reply-To"))),
        references=_all_ids(" ".join(header_values(msg, "References"))),
        body=strip_quoted(raw_body),
        raw_body=raw_body,
        message=msg,
    )


def message_id_of(raw: bytes) -> str:
    """The ``message_id`` :func:`parse_message` gives, read from the headers alone (cheap)."""
    raw = bytes(raw)
    try:
        msg: Message = BytesHeaderParser(policy=policy.compat32).parsebytes(raw)
    except Exception:
        msg = EmailMessage()
    return _message_id(msg, raw)


def _message_id(msg: Message, raw: bytes) -> str:
    """The Message-ID without brackets; when absent, a stable id from the bytes."""
    return _first_id(_first(header_values(msg, "Message-ID"))) or (
        f"sha256-{hashlib.sha256(raw).hexdigest()}@{SYNTHETIC_ID_DOMAIN}"
    )


def header_values(msg: Message, name: str) -> tuple[str, ...]:
    """Every value of header *name*, decoded and unfolded. Never raises."""
    return tuple(_decode_words(value) for value in _raw_header(msg, name))


def header_addresses(msg: Message, *names: str) -> list[tuple[str, str]]:
    """``(display name, bare address lowercased)`` for each address in the headers.

    Headers are taken in the order given; addresses without an address part
    (groups, garbage) are skipped. Never raises.
    """
    found: list[tuple[str, str]] = []
    for name in names:
        values = [_unfold(value) for value in _raw_header(msg, name)]
        try:
            pairs = getaddresses(values)
        except Exception:  # getaddresses is lenient; this is the last line of defence
            continue
        for display, addr in pairs:
            addr = addr.strip().lower()
            if addr:
                found.append((_decode_words(display), addr))
    return found


def _raw_header(msg: Message, name: str) -> list[str]:
    """Raw values of a header, with 8-bit bytes decoded (UTF-8, else Windows-1252)."""
    wanted = name.lower()
    try:
        values = [v for k, v in msg.raw_items() if k.lower() == wanted]
    except Exception:
        return []
    return [_desurrogate(v if isinstance(v, str) else str(v)) for v in values]


def _desurrogate(text: str) -> str:
    """Turn bytes smuggled in as surrogate escapes back into text."""
    if not _SURROGATES.search(text):
        return text
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeError:
        return _SURROGATES.sub("\ufffd", text)
    return decode_bytes(data, None)


def _unfold(value: str) -> str:
    return _LONE_SURROGATES.sub("\ufffd", _CONTROL.sub("", " ".join(value.split())))


def _decode_words(value: str) -> str:
    """Decode RFC 2047 encoded words; unknown charsets fall back like bodies do."""
    text = _unfold(value)
    if "=?" not in text:
        return text
    try:
        chunks = decode_header(text)
    except Exception:
        return text
    decoded = [
        chunk if isinstance(chunk, str) else decode_bytes(chunk, charset)
        for chunk, charset in chunks
    ]
    return _unfold("".join(decoded))


def _first(values: tuple[str, ...]) -> str:
    return values[0] if values else ""


def _first_id(value: str) -> str | None:
    ids = _all_ids(value)
    return ids[0] if ids else None


def _all_ids(value: str) -> tuple[str, ...]:
    """Message ids in a Message-ID / In-Reply-To / References value, brackets stripped."""
    ids = ["".join(found.split()) for found in _ID.findall(value)]
    if not ids and "<" not in value and ">" not in value:
        ids = value.split()  # some clients omit the brackets
    return tuple(dict.fromkeys(i for i in ids if i))


_ID = re.compile(r"<([^<>]*)>")
_SURROGATES = re.compile("[\udc80-\udcff]")
_LONE_SURROGATES = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # C0 controls but TAB, LF, CR


# --------------------------------------------------------------------------- body text


def extract_text(msg: Message) -> str:
    """The body as plain text: first inline text/plain part, else converted text/html.

    A blank text/plain part (some clients send one next to the HTML) does not count.
    Attachments and attached messages are ignored. Never raises.
    """
    leaves = [leaf for leaf in _leaves(msg, 0) if not _is_attachment(leaf)]
    for wanted in ("text/plain", "text/html"):
        for leaf in leaves:
            if _content_type(leaf) != wanted:
                continue
            text = _part_text(leaf)
            if wanted == "text/html":
                text = html_to_text(text)
            text = _normalise(text)
            if text.strip():
                return text
    return ""


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode with the declared charset, else UTF-8, else Windows-1252, else Latin-1.

    A charset that is unknown or does not fit the bytes falls through to the next
    candidate; Latin-1 maps every byte, so this never raises.
    """
    candidates: list[str] = []
    label = (charset or "").strip().strip("\"'").lower()
    if label and "escape" not in label:  # *_escape codecs would interpret backslashes
        candidates += [_SUPERSETS.get(label, label), label]
    candidates += ["utf-8", "cp1252"]
    for encoding in dict.fromkeys(candidates):
        try:
            return data.decode(encoding)
        except (LookupError, UnicodeError, ValueError, TypeError):
            continue
    return data.decode("latin-1")


# Labels that mail clients use for a narrower charset than they actually send.
_SUPERSETS = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "iso-2022-jp": "iso2022_jp_ext",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
}


def _leaves(part: Message, depth: int) -> Iterator[Message]:
    """Non-multipart parts in order, not descending into attached messages."""
    if depth > 32:
        return
    ctype = _content_type(part)
    if ctype.startswith("message/"):
        return  # a forwarded or bounced message is not what the player wrote
    try:
        payload = part.get_payload()
    except Exception:
        return
    if isinstance(payload, list):
        for sub in payload:
            if isinstance(sub, Message):
                yield from _leaves(sub, depth + 1)
        return
    yield part


def _content_type(part: Message) -> str:
    try:
        return part.get_content_type()
    except Exception:
        return "application/octet-stream"


def _is_attachment(part: Message) -> bool:
    try:
        return part.get_content_disposition() == "attachment" or bool(part.get_filename())
    except Exception:
        return False


def _param(part: Message, name: str) -> str:
    try:
        value = part.get_param(name)
    except Exception:
        return ""
    return value.strip().lower() if isinstance(value, str) else ""


def _part_text(part: Message) -> str:
    try:
        data = part.get_payload(decode=True)
    except Exception:
        data = None
    if not isinstance(data, bytes):
        return ""
    try:
        charset = part.get_content_charset()
    except Exception:
        charset = None
    text = decode_bytes(data, charset).replace("\r\n", "\n").replace("\r", "\n")
    if _content_type(part) == "text/plain" and _param(part, "format") == "flowed":
        text = unflow(text, delsp=_param(part, "delsp") == "yes")
    return text


def unflow(text: str, *, delsp: bool = False) -> str:
    """Undo RFC 3676 ``format=flowed``: join soft-broken lines, keep quote depth."""
    out: list[str] = []
    pending: str | None = None
    pending_depth = 0
    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if content.startswith(" "):
            content = content[1:]  # space-stuffing
        flowed = content.endswith(" ") and content != "-- "
        if flowed and delsp:
            content = content[:-1]
        if pending is not None:
            if depth == pending_depth:
                content = pending + content
            else:
                out.append(_requote(pending_depth, pending))
            pending = None
        if flowed:
            pending, pending_depth = content, depth
        else:
            out.append(_requote(depth, content))
    if pending is not None:
        out.append(_requote(pending_depth, pending))
    return "\n".join(out)


def _requote(depth: int, content: str) -> str:
    if not depth:
        return content
    return ">" * depth + (" " + content if content else "")


def _normalise(text: str) -> str:
    """LF line ends, no control characters (but TAB), no invisible characters.

    Control characters are dropped and lone surrogates replaced so the text can be
    stored anywhere (PostgreSQL rejects NUL in text columns).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text).translate(_INVISIBLE)
    return _LONE_SURROGATES.sub("\ufffd", text)


_INVISIBLE = {
    0x00A0: " ",   # no-break space
    0x2007: " ",   # figure space
    0x202F: " ",   # narrow no-break space (French "a écrit :")
    0x200B: None,  # zero-width space
    0x200C: None,  # zero-width non-joiner
    0x200D: None,  # zero-width joiner
    0x200E: None,  # left-to-right mark
    0x200F: None,  # right-to-left mark
    0x2060: None,  # word joiner
    0x180E: None,  # Mongolian vowel separator
    0xFEFF: None,  # byte order mark / zero-width no-break space
}


# --------------------------------------------------------------------------- HTML


def html_to_text(html: str) -> str:
    """Readable text from mail HTML. The ``<blockquote>`` (the quoted reply) is dropped."""
    parser = _TextExtractor()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser is lenient; keep whatever was read so far
        pass
    return _join_lines(" ".join(line.split()) for line in parser.lines())


class _TextExtractor(HTMLParser):
    _SKIP = frozenset({"script", "style", "head", "title", "template", "blockquote"})
    _BLOCK = frozenset({
        "address", "article", "aside", "center", "dd", "div", "dl", "dt", "fieldset",
        "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
        "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table",
        "tbody", "tfoot", "thead", "tr", "ul",
    })

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._done: list[str] = []
        self._line: list[str] = []
        self._skip: dict[str, int] = {}
        self._pre = 0

    def lines(self) -> list[str]:
        return self._done + ["".join(self._line)]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":  # a <head> that was never closed ends here
            self._skip.pop("head", None)
            self._skip.pop("title", None)
        if tag in self._SKIP:
            self._skip[tag] = self._skip.get(tag, 0) + 1
        if self._skipping():
            return
        if tag == "br":
            self._break()
        elif tag in self._BLOCK:
            self._soft_break()
            if tag == "pre":
                self._pre += 1
        elif tag in ("td", "th"):
            self._line.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            if self._skip.get(tag):
                self._skip[tag] -= 1
            if tag == "blockquote":
                self._soft_break()
            return
        if self._skipping():
            return
        if tag in self._BLOCK:
            self._soft_break()
            if tag == "pre" and self._pre:
                self._pre -= 1

    def handle_data(self, data: str) -> None:
        if self._skipping():
            return
        if self._pre:
            for i, piece in enumerate(data.split("\n")):
                if i:
                    self._break()
                self._line.append(piece)
        else:
            self._line.append(_HTML_SPACE.sub(" ", data))

    def _skipping(self) -> bool:
        return any(self._skip.values())

    def _break(self) -> None:
        self._done.append("".join(self._line))
        self._line = []

    def _soft_break(self) -> None:
        """End the current line unless it holds only collapsible whitespace.

        A block holding just ``&nbsp;`` is how Outlook writes an empty line, so it counts.
        """
        if _HTML_SPACE.sub("", "".join(self._line)):
            self._break()
        else:
            self._line = []


_HTML_SPACE = re.compile(r"[ \t\n\r\f\v]+")  # HTML whitespace; &nbsp; is not collapsed


# --------------------------------------------------------------------------- quotes


def strip_quoted(text: str) -> str:
    """Only what the player wrote: no quoted lines, attributions, forwarded or
    Outlook header blocks, signatures or mobile footers.

    Unquoted text *below* a quote (bottom-posting, inline answers) is kept: an
    attribution line is dropped when quoted lines (or nothing) follow it, and the
    quoted lines go by the ``>`` rule. An attribution naming an address but
    followed by unquoted text introduces an unprefixed quote (Yahoo, AOL) and
    drops the rest, like the other cut rules (signature, Original Message,
    forwarded, Outlook header block).
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _QUOTED.match(line):
            i += 1
            continue
        if _cuts_here(lines, i):
            break
        span, attribution = _attribution(lines, i)
        if span:
            following = _next_nonblank(lines, i + span)
            if following is None or _QUOTED.match(lines[following]):
                i += span  # the quote below goes by the ">" rule
                continue
            if "@" in attribution:
                break
        if not _FOOTER.match(line.strip()):
            kept.append(line.rstrip())
        i += 1
    return _join_lines(kept)


def _join_lines(lines: Iterable[str]) -> str:
    """Join lines, dropping leading blank lines, runs of blank lines beyond one, and trailing ones."""
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def _cuts_here(lines: list[str], i: int) -> bool:
    """Is line *i* the start of something that runs to the end and is not the player's?"""
    line = lines[i]
    if line in ("-- ", "--"):
        return True
    stripped = line.strip()
    if _ORIGINAL.match(stripped) or _FORWARDED.match(stripped):
        return True
    if _UNDERSCORES.match(stripped):
        following = _next_nonblank(lines, i + 1)
        return following is not None and _label(lines[following]) in _FROM_LABELS
    if _label(line) in _FROM_LABELS:
        return _is_header_block(lines, i)
    return False


def _is_header_block(lines: list[str], start: int) -> bool:
    """From: at *start*, then Sent:/Date: and Subject: before the next blank line."""
    labels: set[str] = set()
    for line in lines[start + 1:start + 10]:
        if not line.strip():
            break
        labels.add(_label(line))
    return bool(labels & _SENT_LABELS) and bool(labels & _SUBJECT_LABELS)


def _label(line: str) -> str:
    found = _LABEL.match(line)
    return found.group(1).lower() if found else ""


def _next_nonblank(lines: list[str], start: int) -> int | None:
    for j in range(start, len(lines)):
        if lines[j].strip():
            return j
    return None


def _attribution(lines: list[str], i: int) -> tuple[int, str]:
    """``(number of lines, joined text)`` of an attribution starting at line *i*.

    Gmail wraps long attributions, so up to three lines are joined. An attribution
    must contain a digit (its date); ``(0, "")`` when there is none.
    """
    if not _OPENER.match(lines[i].strip()):
        return 0, ""
    for span in (1, 2, 3):
        chunk = lines[i:i + span]
        if len(chunk) < span or any(not part.strip() or _QUOTED.match(part) for part in chunk):
            break
        joined = " ".join(part.strip() for part in chunk)
        if any(p.match(joined) for p in _ATTRIBUTIONS) and re.search(r"\d", joined):
            return span, joined
    return 0, ""


_QUOTED = re.compile(r"^[ \t]*>")
_OPENER = re.compile(r"^(?:On|Am|Le|El|Op|Il|Em)\s")
_ATTRIBUTIONS = (
    re.compile(r"^On\s.+\swrote:$"),
    re.compile(r"^Am\s.+\sschrieb\b.*:$"),
    re.compile(r"^Le\s.+\sa\s+écrit\s*:$"),
    re.compile(r"^El\s.+\sescribió\s*:$"),
    re.compile(r"^Op\s.+\sschreef\b.*:$"),
    re.compile(r"^Il\s.+\sha\s+scritto\s*:$"),
    re.compile(r"^Em\s.+\sescreveu\s*:$"),
)
_ORIGINAL = re.compile(
    r"^-{2,}\s*(?:Original Message|Ursprüngliche Nachricht|Message d'origine"
    r"|Mensaje original|Messaggio originale|Oorspronkelijk bericht)\s*-{2,}$",
    re.IGNORECASE,
)
_FORWARDED = re.compile(
    r"^(?:-{2,}\s*Forwarded message\s*-{2,}|Begin forwarded message:)$", re.IGNORECASE
)
_UNDERSCORES = re.compile(r"^_{20,}$")
_LABEL = re.compile(r"^\s*\*?([^\W\d_]+)\s?\*?:")
_FROM_LABELS = frozenset({"from", "von", "de"})
_SENT_LABELS = frozenset({"sent", "date", "gesendet", "datum", "envoyé", "enviado", "fecha"})
_SUBJECT_LABELS = frozenset({"subject", "betreff", "objet", "asunto"})
_FOOTER = re.compile(
    r"^(?:Sent from my (?:iPhone|iPad|Android(?: phone| device)?|Samsung Galaxy smartphone"
    r"|Galaxy|BlackBerry)"
    r"|Get Outlook for (?:iOS|Android)"
    r"|Sent from (?:Outlook|Mail|Yahoo Mail) for (?:iOS|iPhone|iPad|Android|Windows(?: 10| 11)?))"
    r"\.?(?:\s*<[^<>\s]*>)?$",
    re.IGNORECASE,
)
