"""Inbound mail to a clean submission, safe on any bytes from anyone.

Everything here is pure and total: nothing raises, whatever bytes it is given, and
every step is linear in its input or works on a bounded part of it, so a hostile mail
costs about what an ordinary one of the same size does (``tests/mail/test_parse_linear.py``
checks it, ``bench/bench_parse.py`` measures it):

* :func:`parse_headers` reads the header block only (at most :data:`HEADER_LIMIT`
  bytes), so the guards and the sender check run before any body byte is looked at.
  Headers are read from their raw form and decoded here (RFC 2047, 8-bit bytes, unknown
  charsets), so a header the stdlib's structured parser chokes on costs that one field.
* :func:`parse_body` reads the body from the first :data:`RAW_LIMIT` bytes with a MIME
  walker of its own (at most :data:`MIME_DEPTH_LIMIT` levels and :data:`MIME_PART_LIMIT`
  parts), picks the part the player wrote in, cuts its text at :data:`TEXT_LIMIT`
  characters and gives the ways of reading it (:class:`Reading`), best first.
* :func:`parse_message` is both, as one :class:`Inbound`.

The text a player wrote is found in three steps:

1. the body part is picked (first inline ``text/plain``, else ``text/html`` turned into
   text by a linear scanner of our own), transfer encoding and charset are decoded,
   ``format=flowed`` is undone, line ends and invisible characters are normalised;
2. :func:`strip_quoted` removes what the player did not write: quoted lines,
   attribution lines, Outlook and forward header blocks, signatures, mobile footers;
3. the result is the ``"text"`` reading (:attr:`Inbound.body`); :attr:`Body.shown`
   (:attr:`Inbound.raw_body`) keeps step 1's output for quoting back in error replies.

No regular expression here can backtrack over its input more than once: there are no
nested or overlapping quantifiers, and the patterns that used to be anchored ``.+`` /
``.*`` matches are plain string tests (``startswith``, ``endswith``, ``find``) or use
possessive quantifiers.
"""

from __future__ import annotations

import binascii
import codecs
import encodings
import encodings.aliases
import functools
import hashlib
import io
import pkgutil
import re
from dataclasses import dataclass, field
from email import errors, policy
from email.message import Message
from email.parser import BytesHeaderParser
from email.utils import getaddresses
from typing import Callable, Iterable, Iterator

from referee.mail.html_text import html_to_text
from referee.mail.quotes import _QuoteLines, _quoted_only, _text_and_uncut, strip_quoted

__all__ = [
    "ADDRESS_LIMIT",
    "Body",
    "FROM_HEADER_LIMIT",
    "HEADER_LIMIT",
    "Headers",
    "Inbound",
    "MIME_DEPTH_LIMIT",
    "MIME_PART_LIMIT",
    "RAW_LIMIT",
    "REFERENCES_LIMIT",
    "Reading",
    "TEXT_LIMIT",
    "decode_bytes",
    "extract_text",
    "header_addresses",
    "header_values",
    "html_to_text",
    "message_id_of",
    "parse_body",
    "parse_headers",
    "parse_message",
    "shown_text",
    "strip_quoted",
    "unflow",
]

SYNTHETIC_ID_DOMAIN = "referee.invalid"

HEADER_LIMIT = 256 * 1024  # bytes of header block read; a larger block is cut at a line end
RAW_LIMIT = 2 * 1024 * 1024  # bytes of the message given to the MIME walker
TEXT_LIMIT = 256 * 1024  # characters of the chosen part's decoded text
ADDRESS_LIMIT = 8 * 1024  # characters of one address header value given to getaddresses
ADDRESS_TOTAL_LIMIT = 2 * ADDRESS_LIMIT  # characters of all values of one address header name
FROM_HEADER_LIMIT = 200  # characters of Headers.from_header
REFERENCES_LIMIT = 100  # message ids kept from References: the first and the latest
MIME_DEPTH_LIMIT = 32  # multipart levels descended into
MIME_PART_LIMIT = 200  # MIME parts (leaves and multiparts) looked at
PARAM_LIMIT = 4 * 1024  # characters of a Content-Type / -Disposition value read for parameters
PARAM_COUNT_LIMIT = 100  # parameters read from one such value
PART_HEADER_LIMIT = 16 * 1024  # bytes of one body part's header block (all of them: HEADER_LIMIT)


@dataclass(frozen=True)
class Inbound:
    """One inbound mail, reduced to what the referee needs."""

    message_id: str  # without angle brackets; synthetic when absent
    from_addr: str  # bare address, lowercased ("" when unknown)
    from_name: str  # display name, decoded
    to_addrs: tuple[str, ...]  # To, Cc, Delivered-To, X-Original-To, (X-)Envelope-To; bare, lowercased, unique
    subject: str
    in_reply_to: str | None  # without angle brackets
    references: tuple[str, ...]  # without angle brackets, oldest first
    body: str  # what the player wrote (quotes and signature removed)
    raw_body: str  # the decoded text before quote stripping
    message: Message = field(repr=False, compare=False)  # the header-only message, for guards


@dataclass(frozen=True)
class Headers:
    """What the header block says, read without the body (:func:`parse_headers`)."""

    message_id: str | None  # without angle brackets; None when absent
    from_addr: str  # first usable From address: bare, lowercased ("" when none)
    from_name: str  # its display name, decoded
    from_header: str  # the decoded From header as written: one line, <= 200 chars
    from_count: int  # number of usable (with "@") addresses in From; one more
    #                               when From is longer than ADDRESS_LIMIT (it may hold more)
    to_addrs: tuple[str, ...]  # To, Cc, Delivered-To, X-Original-To, (X-)Envelope-To; bare, lowercased, unique
    subject: str
    in_reply_to: str | None  # without angle brackets
    references: tuple[str, ...]  # without angle brackets, oldest first (at most REFERENCES_LIMIT)
    message: Message = field(repr=False, compare=False)  # header-only compat32 message, for guards
    # where the body starts (None: not known), so that parse_body(raw, head=...) need not read
    # the header block again
    body_at: int | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Reading:
    """One way of reading what the player wrote; see :class:`Body`."""

    source: str  # "text", "html", "uncut" or "quoted"
    text: str


class Body:
    """The body, bounded (:func:`parse_body`).

    :attr:`readings`, best first, each only when non-empty and different from the
    ones before (:meth:`each` gives them one at a time, reading the next only when
    asked: most mails are settled by the first):

    ``"text"``
        what the player wrote in the preferred part (first non-blank inline
        text/plain, else text/html converted), as :func:`strip_quoted` leaves it;
    ``"html"``
        when the preferred part is text/plain and there is an inline text/html
        part too: that HTML converted and stripped (a plain "view this mail in your
        browser" stub must not hide the HTML that holds the real content);
    ``"uncut"``
        the preferred part without quoted lines, but not cut at an attribution
        naming an address, an Outlook header block, an "Original Message" or a
        forward marker (the player deleted the quote, kept "On ... <x@y> wrote:"
        and wrote below it);
    ``"quoted"``
        only the ``>``-quoted lines of the preferred part, one level of ``>``
        (and one space after it) removed (the player filled in the form inside
        the quote).
    """

    __slots__ = ("shown", "truncated", "_readings", "_later", "_seen")

    def __init__(
        self,
        readings: tuple[Reading, ...],
        shown: str,
        truncated: bool,
        *,
        later: Iterable[tuple[str, Callable[[], str]]] = (),
    ) -> None:
        self.shown = shown  # decoded text of the chosen part before quote stripping (bounded)
        # a bound (raw_limit, text_limit, MIME_PART_LIMIT, part headers) left something unread
        self.truncated = truncated
        self._readings: list[Reading] = []
        self._seen: set[str] = set()
        for reading in readings:
            self._add(reading.source, reading.text)
        self._later = list(later)  # (source, how to read it), in order, not read yet

    def _add(self, source: str, text: str) -> None:
        if text and text not in self._seen:
            self._readings.append(Reading(source, text))
            self._seen.add(text)

    def each(self) -> Iterator[Reading]:
        """The readings best first; each is made only when the ones before it were taken."""
        i = 0
        while True:
            while i >= len(self._readings) and self._later:
                source, read = self._later.pop(0)
                self._add(source, read())
            if i >= len(self._readings):
                return
            yield self._readings[i]
            i += 1

    @property
    def readings(self) -> tuple[Reading, ...]:
        """All the readings, best first."""
        for _ in self.each():
            pass
        return tuple(self._readings)

    @property
    def written(self) -> str:
        """The first reading's text (what the player wrote, as best read), else ""."""
        return next((reading.text for reading in self.each()), "")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Body):
            return NotImplemented
        return (self.readings, self.shown, self.truncated) == (other.readings, other.shown, other.truncated)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Body(readings={self.readings!r}, shown={self.shown!r}, truncated={self.truncated!r})"


# --------------------------------------------------------------------------- entry points


def parse_message(raw: bytes) -> Inbound:
    """Parse raw RFC 5322 bytes: :func:`parse_headers` + :func:`parse_body`. Never raises."""
    raw = _as_bytes(raw)
    top = _read_head(raw, 0, len(raw), HEADER_LIMIT, search=HEADER_LIMIT)
    headers = _safe_headers(top[0], top[1])
    body = _parse_body(raw, RAW_LIMIT, TEXT_LIMIT, top if top[1] is not None else None)
    text = next((r.text for r in body.readings if r.source == "text"), "")
    return Inbound(
        message_id=headers.message_id or _synthetic_id(raw),
        from_addr=headers.from_addr,
        from_name=headers.from_name,
        to_addrs=headers.to_addrs,
        subject=headers.subject,
        in_reply_to=headers.in_reply_to,
        references=headers.references,
        body=text,
        raw_body=body.shown,
        message=headers.message,
    )


def parse_headers(raw: bytes, *, header_limit: int = HEADER_LIMIT) -> Headers:
    """The header block of *raw*, read up to the first blank line and at most
    *header_limit* bytes (a larger block is cut at a line end). Never raises; the
    body is not looked at.

    The same header block is read once: ingest reads a mail's headers when it stores the
    mail, and the judge reads them again when it judges it (in the same tick, as a rule);
    the last blocks read are remembered (:data:`_HEADS`, keyed by the block's exact bytes).
    The :class:`Headers` given back are shared: their ``message`` must not be changed."""
    raw = _as_bytes(raw)
    end = len(raw)
    stop = min(end, header_limit)
    blank = _blank_line_end(raw, 0, stop)
    key = (header_limit, raw[:blank] if blank is not None else raw[:stop], blank is None and stop == end)
    found = _HEADS.get(key)
    if found is None:
        msg, body = _read_head(raw, 0, end, header_limit, search=header_limit)
        found = _safe_headers(msg, body)
        _HEADS.remember(key, found, len(key[1]))
    return found


class _Remembered(dict):
    """The header blocks read last and what they said, at most ``entries`` of them holding
    at most ``size`` bytes of header blocks together (the oldest go first)."""

    def __init__(self, entries: int, size: int) -> None:
        super().__init__()
        self.entries, self.size, self.held = entries, size, 0

    def remember(self, key: tuple[int, bytes, bool], value: Headers, size: int) -> None:
        if size > self.size // 64:
            return  # a huge block is not worth keeping
        self[key] = value
        self.held += size
        while len(self) > self.entries or self.held > self.size:
            oldest = next(iter(self))
            self.held -= len(oldest[1])
            del self[oldest]

    def forget(self) -> None:
        """Forget every block (the tests that time the parser itself)."""
        self.clear()
        self.held = 0


_HEADS = _Remembered(entries=4096, size=8 << 20)


def parse_body(
    raw: bytes, *, head: Headers | None = None, raw_limit: int = RAW_LIMIT, text_limit: int = TEXT_LIMIT
) -> Body:
    """The body of *raw*: only its first *raw_limit* bytes are read, the chosen part's
    decoded text is cut at *text_limit* characters. *head*: what :func:`parse_headers`
    gave for *raw* (its header block is then not read again). Never raises."""
    raw = _as_bytes(raw)
    top = None
    if head is not None and head.body_at is not None:
        top = (head.message, head.body_at)
    return _parse_body(raw, raw_limit, text_limit, top)


def message_id_of(raw: bytes) -> str:
    """The ``message_id`` :func:`parse_message` gives, read from the headers alone (cheap)."""
    raw = _as_bytes(raw)
    msg, _ = _read_head(raw, 0, len(raw), HEADER_LIMIT, search=HEADER_LIMIT)
    return _first_id(_first(header_values(msg, "Message-ID"))) or _synthetic_id(raw)


def _as_bytes(raw: bytes) -> bytes:
    return raw if type(raw) is bytes else bytes(raw)


def _synthetic_id(raw: bytes) -> str:
    """A stable id for a mail without Message-ID: a hash of all its bytes."""
    return f"sha256-{hashlib.sha256(raw).hexdigest()}@{SYNTHETIC_ID_DOMAIN}"


# --------------------------------------------------------------------------- header block


def _read_head(data: bytes, start: int, end: int, limit: int, *, search: int | None) -> tuple[Message, int | None]:
    """Parse the header block of the part ``data[start:end]``.

    Returns the header-only compat32 message and where the part's body starts (None
    when the blank line was not searched for far enough to know). The blank line is
    looked for in the first *search* bytes (all of the part when None); at most
    *limit* bytes of header block are parsed. As in the stdlib's feed parser, a line
    that is no header ends the block and starts the body.
    """
    stop = end if search is None else min(end, start + search)
    blank = _blank_line_end(data, start, stop)
    head_stop = end if blank is None else blank
    cut = head_stop
    if cut - start > limit:
        cut = data.rfind(b"\n", start, start + limit) + 1
        if cut <= start:
            cut = start + limit
    msg = _parse_head(data[start:cut])
    leftover = msg._payload
    if isinstance(leftover, str) and leftover:
        body: int | None = cut - len(leftover)  # the line that was no header, and what follows
    elif blank is not None:
        body = blank
    elif stop == end:
        body = end  # headers only
    else:
        body = None
    msg._payload = ""  # header-only: nothing of the body is kept
    return msg, body


def _blank_line_end(data: bytes, start: int, stop: int) -> int | None:
    """The index just after the first empty line in ``data[start:stop]`` (line ends
    CRLF, LF or lone CR, as the feed parser reads them), else None."""
    if start < stop and data[start] in b"\r\n":  # no header at all
        return start + (2 if data.startswith(b"\r\n", start) else 1)
    best = None
    for pair in (b"\n\n", b"\n\r", b"\r\r"):
        found = data.find(pair, start, stop if best is None else min(stop, best + 1))
        if found >= 0 and (best is None or found < best):
            best = found
    if best is None:
        return None
    line = best + 1  # the empty line starts here
    return line + 2 if data.startswith(b"\r\n", line) else line + 1


def _safe_headers(msg: Message, body_at: int | None = None) -> Headers:
    try:
        return _headers_of(msg, body_at)
    except Exception:  # the helpers are total; this is the last line of defence
        return Headers(None, "", "", "", 0, (), "", None, (), msg, body_at)


def _parse_head(head: bytes) -> Message:
    """The header block as ``BytesHeaderParser(policy=compat32).parsebytes(head)`` reads it."""
    try:
        return _head_message(head)
    except Exception:  # not expected; the stdlib's own parser then decides
        pass
    try:
        return BytesHeaderParser(policy=policy.compat32).parsebytes(head)
    except Exception:  # the feed parser is lenient, but a parse must never fail
        return Message()


def _head_message(head: bytes) -> Message:
    """The stdlib's headers-only feed parser (compat32), without its machinery: the same
    headers, unix-from line, defects and leftover payload (``tests/mail/test_fast_paths.py``
    compares the two on random header blocks and the corpus), in a third of the time. The
    first line that is no header (feedparser's ``headerRE``) ends the block: a blank one is
    dropped, another one starts the payload; then the header lines are read as
    ``FeedParser._parse_headers`` reads them."""
    text = head.decode("ascii", "surrogateescape")
    lines = io.StringIO(text, newline="").readlines()  # the feed parser's line split (CRLF, LF, CR)
    msg = Message()
    n = len(lines)
    end = body = n  # the header lines are lines[:end]; the payload starts at lines[body]
    for k, line in enumerate(lines):
        if _FEED_HEADER.match(line) is None:
            end = body = k
            if line[0] in "\r\n":
                body = k + 1  # the separator line is thrown away
            else:
                msg.defects.append(errors.MissingHeaderBodySeparatorDefect())
            break
    headers = msg._headers
    pushed_back = None
    value: list[str] | None = None  # the lines of the header being read
    for lineno in range(end):
        line = lines[lineno]
        if line[0] in " \t":
            if value is None:
                msg.defects.append(errors.FirstHeaderLineIsContinuationDefect(line))
            else:
                value.append(line)
            continue
        if value is not None:
            headers.append(_source_header(value))
            value = None
        if line.startswith("From "):
            if lineno == 0:
                msg._unixfrom = line.rstrip("\r\n")  # a line holds one line end, at its end
                continue
            if lineno == end - 1:
                pushed_back = line  # probably the first line of the body
                break
            msg.defects.append(errors.MisplacedEnvelopeHeaderDefect(line))
            continue
        if line[0] == ":":
            msg.defects.append(errors.InvalidHeaderDefect("Missing header name."))
            continue
        value = [line]
    if value is not None:
        headers.append(_source_header(value))
    rest = lines[body:]
    if pushed_back is not None:
        rest.insert(0, pushed_back)
    msg._payload = "".join(rest)
    return msg


def _source_header(lines: list[str]) -> tuple[str, str]:
    """``compat32.header_source_parse``."""
    name, value = lines[0].split(":", 1)
    value = value.lstrip(" \t") + "".join(lines[1:])
    return name, value.rstrip("\r\n")


_FEED_HEADER = re.compile(r"From |[\041-\071\073-\176]*+:|[\t ]")  # feedparser.headerRE


def _headers_of(msg: Message, body_at: int | None = None) -> Headers:
    index = _header_index(msg)
    from_pairs, from_cut = _addresses_of(index, "from")
    senders = [pair for pair in from_pairs if "@" in pair[1]]
    from_name, from_addr = senders[0] if senders else ("", "")
    recipients = _addresses(index, "to", "cc", "delivered-to", "x-original-to", "envelope-to", "x-envelope-to")
    from_values = _values(index, "from")
    return Headers(
        message_id=_first_id(_first(_decoded(index, "message-id"))),
        from_addr=from_addr,
        from_name=from_name,
        from_header=_decode_words(from_values[0])[:FROM_HEADER_LIMIT] if from_values else "",
        from_count=len(senders) + from_cut,  # a From too long to read whole may hold more
        to_addrs=tuple(dict.fromkeys(addr for _, addr in recipients if "@" in addr)),
        subject=_first(_decoded(index, "subject")),
        in_reply_to=_first_id(_first(_decoded(index, "in-reply-to"))),
        references=_bounded_ids(_all_ids(" ".join(_decoded(index, "references")))),
        message=msg,
        body_at=body_at,
    )


def _header_index(msg: Message) -> dict[str, list[str]]:
    """Raw header values by lowercased name, in order; one pass over the headers."""
    index: dict[str, list[str]] = {}
    try:
        for name, value in msg.raw_items():
            index.setdefault(str(name).lower(), []).append(value)
    except Exception:
        pass
    return index


def _values(index: dict[str, list[str]], name: str) -> list[str]:
    """Raw values of a header, with 8-bit bytes decoded (UTF-8, else Windows-1252)."""
    return [_desurrogate(v if isinstance(v, str) else str(v)) for v in index.get(name, ())]


def _decoded(index: dict[str, list[str]], name: str) -> tuple[str, ...]:
    return tuple(_decode_words(value) for value in _values(index, name))


def header_values(msg: Message, name: str) -> tuple[str, ...]:
    """Every value of header *name*, decoded and unfolded. Never raises."""
    return tuple(_decode_words(value) for value in _raw_header(msg, name))


def header_addresses(msg: Message, *names: str) -> list[tuple[str, str]]:
    """``(display name, bare address lowercased)`` for each address in the headers.

    Headers are taken in the order given; addresses without an address part
    (groups, garbage) are skipped. Each value is read up to :data:`ADDRESS_LIMIT`
    characters, each header name up to :data:`ADDRESS_TOTAL_LIMIT`. Never raises.
    """
    return _addresses(_header_index(msg), *(name.lower() for name in names))


def _addresses(index: dict[str, list[str]], *names: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for name in names:
        found += _addresses_of(index, name)[0]
    return found


def _addresses_of(index: dict[str, list[str]], name: str) -> tuple[list[tuple[str, str]], bool]:
    """The addresses of header *name*, and whether the bounds left some of it unread
    (getaddresses costs microseconds per character)."""
    found: list[tuple[str, str]] = []
    budget, cut = ADDRESS_TOTAL_LIMIT, False
    for raw in index.get(name, ()):
        if budget <= 0:
            cut = True
            break
        value = _unfold(_desurrogate(raw if isinstance(raw, str) else str(raw)))
        bounded = _bounded_address_value(value, min(budget, ADDRESS_LIMIT))
        cut = cut or len(bounded) < len(value)
        budget -= len(bounded)
        found += _address_pairs(bounded)
    return found, cut


def _address_pairs(value: str) -> tuple[tuple[str, str], ...]:
    """``(decoded display name, bare address lowercased)`` of each address in one bounded
    value, as ``getaddresses`` reads it. A mail's From and To are read more than once (by
    ingest, the judge and the guards): the last values are remembered."""
    if len(value) > _PAIRS_CACHED_LENGTH:
        return _read_address_pairs(value)
    return _cached_address_pairs(value)


def _read_address_pairs(value: str) -> tuple[tuple[str, str], ...]:
    pairs = _simple_addresses(value)
    if pairs is None:
        try:
            pairs = getaddresses([value])
        except Exception:  # getaddresses is lenient; this is the last line of defence
            return ()
    found = []
    for display, addr in pairs:
        addr = _unquoted_local(addr.strip().lower())
        if addr:
            found.append((_decode_words(display), addr))
    return tuple(found)


_PAIRS_CACHED_LENGTH = 1000  # characters; longer values are rare and read each time
_cached_address_pairs = functools.lru_cache(maxsize=16384)(_read_address_pairs)


def _simple_addresses(value: str) -> list[tuple[str, str]] | None:
    """What ``getaddresses([value])`` gives, for the shapes nearly every mail has
    (``Name Words <local@domain>``, ``<local@domain>``, ``local@domain``, comma-separated,
    ASCII atoms only); None for anything else, which ``getaddresses`` then reads.
    ``tests/mail/test_fast_paths.py`` checks the two agree on random values."""
    pairs = []
    for piece in value.split(","):
        match = _SIMPLE_MAILBOX.fullmatch(piece.strip(" "))
        if match is None:
            return None
        display, angle, bare = match.groups()
        pairs.append((display or "", angle or bare))
    return pairs


_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_SIMPLE_ADDRESS = rf"{_ATEXT}++(?:\.{_ATEXT}++)*+@[A-Za-z0-9-]++(?:\.[A-Za-z0-9-]++)*+"
_SIMPLE_MAILBOX = re.compile(rf"(?:({_ATEXT}++(?: {_ATEXT}++)*+) )?+<({_SIMPLE_ADDRESS})>|({_SIMPLE_ADDRESS})")


def _unquoted_local(addr: str) -> str:
    """``"alice"@example.org`` is ``alice@example.org`` (RFC 5322 3.4.1: a quoted local
    part that is a plain dot-atom means the same); other quoted local parts stay as they are."""
    if not addr.startswith('"'):
        return addr
    local, at, domain = addr.rpartition("@")
    inner = local[1:-1] if len(local) > 2 and local.endswith('"') else ""
    if at and inner and _DOT_ATOM.fullmatch(inner):
        return f"{inner}@{domain}"
    return addr


_DOT_ATOM = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]++(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]++)*+")


def _bounded_address_value(value: str, limit: int) -> str:
    """At most *limit* characters, cut at the last comma when there is one (so no half
    address is read)."""
    if len(value) <= limit:
        return value
    comma = value.rfind(",", 0, limit)
    return value[:comma] if comma > 0 else value[:limit]


def _raw_header(msg: Message, name: str) -> list[str]:
    """Raw values of a header, with 8-bit bytes decoded (UTF-8, else Windows-1252)."""
    wanted = name.lower()
    try:
        values = [v for k, v in msg.raw_items() if str(k).lower() == wanted]
    except Exception:
        return []
    return [_desurrogate(v if isinstance(v, str) else str(v)) for v in values]


def _desurrogate(text: str) -> str:
    """Turn bytes smuggled in as surrogate escapes back into text."""
    if text.isascii() or not _SURROGATES.search(text):
        return text
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeError:
        return _SURROGATES.sub("\ufffd", text)
    return decode_bytes(data, None)


def _unfold(value: str) -> str:
    text = " ".join(value.split())
    if text.isascii() and text.isprintable():  # no control character, no surrogate (the usual case)
        return text
    return _LONE_SURROGATES.sub("\ufffd", _CONTROL.sub("", text))


def _decode_words(value: str) -> str:
    """Decode RFC 2047 encoded words; unknown charsets fall back like bodies do.

    Our own decoder (``email.header.decode_header`` is quadratic in the number of
    words and in unterminated words): whitespace between two encoded words is
    dropped, adjacent words in one charset are decoded together (a character may be
    split between them), a word that does not decode is kept as written.
    """
    text = _unfold(value)
    if "=?" not in text:
        return text
    out: list[str] = []
    run: list[bytes] = []
    run_charset = ""

    def flush() -> None:
        if run:
            out.append(decode_bytes(b"".join(run), run_charset or None))
            run.clear()

    pos = 0
    for word in _ENCODED_WORD.finditer(text):
        between = text[pos : word.start()]
        pos = word.end()
        if between and not (run and between.isspace()):
            flush()
            out.append(between)
        data = _decode_word(word.group(2), word.group(3))
        if data is None:
            flush()
            out.append(word.group(0))
            continue
        charset = word.group(1).partition("*")[0].strip().lower()  # RFC 2231 language suffix
        if run and charset != run_charset:
            flush()
        run.append(data)
        run_charset = charset
    flush()
    out.append(text[pos:])
    return _unfold("".join(out))


_NOT_BASE64 = re.compile(rb"[^A-Za-z0-9+/]++")


def _lenient_base64(data: bytes) -> bytes:
    """Base64 as mail clients and relays leave it: line breaks, stray characters and padding
    ignored, an incomplete last group (a body cut short) dropped. Linear; never raises."""
    clean = _NOT_BASE64.sub(b"", data)
    rest = len(clean) % 4
    if rest == 1:  # one lone character carries no whole byte
        clean = clean[:-1]
    elif rest:
        clean += b"=" * (4 - rest)
    try:
        return binascii.a2b_base64(clean)
    except (binascii.Error, ValueError):
        return b""


def _decode_word(encoding: str, encoded: str) -> bytes | None:
    data = encoded.encode("utf-8", "replace")
    if encoding in "qQ":
        return binascii.a2b_qp(data, header=True)
    data = b"".join(data.split())
    for padding in (b"=" * (-len(data) % 4), b"", b"=="):
        try:
            return binascii.a2b_base64(data + padding)
        except (binascii.Error, ValueError):
            continue
    return None


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


def _bounded_ids(ids: tuple[str, ...]) -> tuple[str, ...]:
    """The first (the thread's root) and the latest ids, as RFC 5322 suggests trimming."""
    if len(ids) <= REFERENCES_LIMIT:
        return ids
    return (ids[0], *ids[len(ids) - REFERENCES_LIMIT + 1 :])


_ID = re.compile(r"<([^<>]*)>")
_ENCODED_WORD = re.compile(r"=\?([^?]*)\?([qQbB])\?([^?]*)\?=")  # each class stops at the next "?"
_SURROGATES = re.compile("[\udc80-\udcff]")
_LONE_SURROGATES = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # C0 controls but TAB, LF, CR


# --------------------------------------------------------------------------- MIME


class _Leaf:
    """A non-multipart part: its header-only message and where its body is."""

    __slots__ = ("msg", "ctype", "params", "data", "start", "end", "partial")

    def __init__(
        self, msg: Message, ctype: str, data: bytes | None = None, start: int = 0, end: int = 0, partial: bool = False
    ) -> None:
        self.msg = msg
        self.ctype = ctype
        self.params = _params(_header_text(msg, "content-type"))
        self.data = data  # None: msg is a parsed part holding its own payload
        self.start = start
        self.end = end
        self.partial = partial  # the body runs into the RAW_LIMIT cut

    def payload(self) -> bytes:
        """The body with its transfer encoding undone (by the stdlib, as before; base64 by
        :func:`_lenient_base64`, so a body cut short still gives what it holds)."""
        msg = self.msg
        if self.data is not None and _header_text(msg, "content-transfer-encoding").strip().lower() == "base64":
            return _lenient_base64(self.data[self.start : self.end])
        try:
            if self.data is None:
                data = msg.get_payload(decode=True)
            else:
                msg._payload = self.data[self.start : self.end].decode("ascii", "surrogateescape")
                try:
                    data = msg.get_payload(decode=True)
                finally:
                    msg._payload = ""
        except Exception:
            return b""
        return data if isinstance(data, bytes) else b""

    def attachment(self) -> bool:
        try:
            if self.msg.get_content_disposition() == "attachment":
                return True
        except Exception:
            return False
        disposition = _params(_header_text(self.msg, "content-disposition"))
        name = disposition.get("filename", self.params.get("name"))
        return bool(name and name.strip())


class _Walk:
    def __init__(self, data: bytes, cut: bool) -> None:
        self.data = data
        self.cut = cut  # data is a prefix of the message
        self.parts = 0
        self.skipped = False  # MIME_PART_LIMIT left parts unread
        self.header_budget = HEADER_LIMIT  # bytes of body part headers still to parse
        self.leaves: list[_Leaf] = []

    def part(
        self, start: int, end: int, depth: int, digest: bool, top: tuple[Message, int | None] | None = None
    ) -> None:
        """Walk the part ``data[start:end]``: *depth* 0 is the message itself, deeper
        ones are body parts of a multipart (*digest*: of a multipart/digest)."""
        if self.parts >= MIME_PART_LIMIT:
            self.skipped = True
            return
        self.parts += 1
        if depth > MIME_DEPTH_LIMIT:
            return
        if top is None or top[1] is None:
            if depth and self.header_budget <= 0:
                self.skipped = True  # HEADER_LIMIT bytes of part headers read already
                return
            limit = HEADER_LIMIT if depth == 0 else min(PART_HEADER_LIMIT, self.header_budget)
            top = _read_head(self.data, start, end, limit, search=None)
            if depth:
                self.header_budget -= min(limit, (top[1] or end) - start)
        msg, body = top
        if body is None:
            body = end
        if digest:
            msg.set_default_type("message/rfc822")
        ctype = _content_type(msg)
        if ctype.startswith("message/"):
            return  # a forwarded or bounced message is not what the player wrote
        if ctype.startswith("multipart/"):
            boundary = _params(_header_text(msg, "content-type")).get("boundary", "").rstrip()
            if boundary:
                for part_start, part_end in _parts(self.data, body, end, boundary):
                    self.part(part_start, part_end, depth + 1, ctype == "multipart/digest")
                    if self.skipped:
                        return
            return  # without a boundary the feed parser keeps it as one non-text leaf
        partial = self.cut and end == len(self.data)
        if depth:
            end = max(body, _without_line_end(self.data, start, end))
        self.leaves.append(_Leaf(msg, ctype, self.data, body, end, partial=partial))


def _parts(data: bytes, start: int, end: int, boundary: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each body part between the delimiter lines of *boundary*.

    As the feed parser reads them: a delimiter is a whole line ``--boundary``
    (``--boundary--`` closes), optional spaces or tabs after it; delimiter lines
    right after one are skipped; lines before the first one are the preamble;
    without a closing delimiter the last part runs to the end. A part's end is where
    the next delimiter line starts: the line end before it is still in (see
    :func:`_without_line_end`). One scan from left to right (:class:`_Delimiters`).
    """
    if "\r" in boundary or "\n" in boundary:
        return  # no line can hold it
    try:
        sep = b"--" + boundary.encode("ascii", "surrogateescape")
    except UnicodeError:
        sep = b"--" + boundary.encode("utf-8", "replace")
    delimiters = _Delimiters(data, start, end, sep)
    part_start: int | None = None
    pos = start
    while True:
        found = delimiters.next(pos)
        if found is None:
            break
        at, line_end = found
        if part_start is not None:
            yield part_start, at
        if line_end < 0:  # the closing delimiter
            return
        part_start = pos = delimiters.skip(line_end)
    if part_start is not None:
        yield part_start, end


class _Delimiters:
    """The delimiter lines of one boundary in ``data[start:end]``, left to right.

    ``bytes.find`` of the line end + ``--boundary`` (no regex to compile for an
    ordinary mail), each needle's next occurrence remembered so no byte is searched
    twice; after many lines that start like a delimiter but are not one, a compiled
    regex takes over, so that a hostile body of them costs C time, not Python time.
    (A multipart is scanned once at each level it is nested in: at most
    MIME_DEPTH_LIMIT times.)
    """

    _MISSES = 32

    def __init__(self, data: bytes, start: int, end: int, sep: bytes) -> None:
        self.data, self.start, self.end, self.sep = data, start, end, sep
        self.needles = [b"\n" + sep, b"\r" + sep]
        self.found = [-2, -2]  # next occurrence of each needle; -2: not searched, -1: none
        self.misses = 0
        self.regex: re.Pattern[bytes] | None = None
        self.run: re.Pattern[bytes] | None = None

    def next(self, pos: int) -> tuple[int, int] | None:
        """``(where the delimiter line starts, index after its line end, negated for the
        closing delimiter)`` of the first delimiter line at or after *pos*, else None."""
        data, end = self.data, self.end
        if pos == self.start and (pos == 0 or data[pos - 1] not in b"\r\n"):
            line_end = _delimiter_line(data, pos, self.start, end, self.sep)
            if line_end is not None:
                return pos, line_end
        while self.regex is None:
            at = self._candidate(pos)
            if at is None:
                return None
            line_end = _delimiter_line(data, at, self.start, end, self.sep)
            if line_end is not None:
                return at, line_end
            pos = at + 1
            self.misses += 1
            if self.misses > self._MISSES:
                # The literal first (searched for as fast as bytes.find), then the line end
                # before it (a lookbehind): no candidate goes back to Python.
                sep = re.escape(self.sep)
                self.regex = re.compile(sep + b"(?<=[\r\n]" + sep + rb")(--)?[ \t]*+(?:\r\n|\r|\n|\Z)")
        match = self.regex.search(data, pos, end)
        if match is None:
            return None
        return match.start(), -match.end() if match.group(1) is not None else match.end()

    def skip(self, pos: int) -> int:
        """Past the delimiter lines (the closing one too) that start at *pos*: the feed
        parser makes no empty parts of them."""
        data, end = self.data, self.end
        while pos < end and self.run is None:
            following = _delimiter_line(data, pos, self.start, end, self.sep)
            if following is None:
                return pos
            pos = abs(following)
            self.misses += 1
            if self.misses > self._MISSES:
                self.run = re.compile(b"(?:" + re.escape(self.sep) + rb"(?:--)?[ \t]*+(?:\r\n|\r|\n|\Z))*+")
        if pos < end and self.run is not None:
            pos = self.run.match(data, pos, end).end()
        return pos

    def _candidate(self, pos: int) -> int | None:
        """The first line start at or after *pos* where ``--boundary`` begins."""
        best = None
        for k, needle in enumerate(self.needles):
            found = self.found[k]
            if found == -2 or (found >= 0 and found + 1 < pos):
                found = self.found[k] = self.data.find(needle, max(pos - 1, 0), self.end)
            if found >= 0 and (best is None or found + 1 < best):
                best = found + 1
        return best


def _delimiter_line(data: bytes, at: int, start: int, end: int, sep: bytes) -> int | None:
    """If a delimiter line starts at *at*: the index after its line end (negated for
    the closing delimiter), else None."""
    if not data.startswith(sep, at, end) or (at > start and data[at - 1] not in b"\r\n"):
        return None
    after = at + len(sep)
    close = data.startswith(b"--", after, end)
    if close:
        after += 2
    after = _BLANKS.match(data, after, end).end()
    if after < end and data[after] not in b"\r\n":
        return None  # more on the line: not a delimiter
    line_end = after + (2 if data.startswith(b"\r\n", after, end) else 1 if after < end else 0)
    return -line_end if close else line_end


def _without_line_end(data: bytes, start: int, end: int) -> int:
    """*end* less the one line end before it: the line end before a delimiter line
    belongs to the delimiter (RFC 2046), and the feed parser drops it from a leaf
    part that ends a multipart without one too."""
    if end - 2 >= start and data.startswith(b"\r\n", end - 2):
        return end - 2
    if end - 1 >= start and data[end - 1] in b"\r\n":
        return end - 1
    return end


_BLANKS = re.compile(rb"[ \t]*+")


def _leaves(part: Message, depth: int) -> Iterator[Message]:
    """Non-multipart parts of a parsed message in order, not descending into attached
    messages (used by :func:`extract_text` on messages parsed elsewhere)."""
    if depth > MIME_DEPTH_LIMIT:
        return
    ctype = _content_type(part)
    if ctype.startswith("message/"):
        return
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


def _header_text(msg: Message, name: str) -> str:
    try:
        value = msg.get(name)
    except Exception:
        return ""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _params(value: str) -> dict[str, str]:
    """The parameters of a Content-Type / Content-Disposition value, names lowercased,
    values unquoted (RFC 2231 continuations and charsets decoded), the first of each
    name winning. Linear (the stdlib's ``_parseparam`` is quadratic)."""
    if ";" not in value:
        return {}
    pieces = _split_params(value[:PARAM_LIMIT])[: PARAM_COUNT_LIMIT + 1]
    plain: dict[str, str] = {}
    extended: dict[str, list[tuple[int, str, bool]]] = {}
    for piece in pieces[1:]:
        name, _, raw = piece.partition("=")
        name, raw = name.strip().lower(), raw.strip()
        if "*" in name:
            base, _, rest = name.partition("*")
            number = rest.rstrip("*")
            if rest == "" or (number.isdigit() and len(number) <= 4 and rest in (number, number + "*")):
                extended.setdefault(base, []).append((int(number) if number else -1, _unquote(raw), name.endswith("*")))
                continue
        plain.setdefault(name, _unquote(raw))
    for base, pieces_of in extended.items():
        if base in plain:
            continue
        pieces_of.sort(key=lambda item: item[0])
        encoded = any(item[2] for item in pieces_of[:1])
        text = "".join(_percent_decode(s) if enc else s for _, s, enc in pieces_of)
        if encoded and text.count("'") >= 2:
            charset, _, rest = text.partition("'")
            _, _, text = rest.partition("'")
            text = decode_bytes(text.encode("latin-1", "replace"), charset or None)
        plain[base] = text
    return plain


def _split_params(value: str) -> list[str]:
    """*value* split at the ``;`` outside quoted strings (a quoted string never closed
    runs to the end), as the stdlib's ``_parseparam`` does, in one pass of finds."""
    if '"' not in value:
        return value.split(";")
    pieces: list[str] = []
    start = pos = 0
    quote = value.find('"')
    while True:
        semi = value.find(";", pos)
        if semi < 0:
            break
        if quote < 0 or semi < quote:
            pieces.append(value[start:semi])
            start = pos = semi + 1
            continue
        close = quote  # skip the quoted string (a \" inside does not close it)
        while True:
            close = value.find('"', close + 1)
            if close < 0 or value[close - 1] != "\\":
                break
        if close < 0:
            break
        pos = close + 1
        quote = value.find('"', pos)
    pieces.append(value[start:])
    return pieces


def _unquote(value: str) -> str:
    if len(value) > 1:
        if value.startswith('"') and value.endswith('"'):
            return value[1:-1].replace("\\\\", "\\").replace('\\"', '"')
        if value.startswith("<") and value.endswith(">"):
            return value[1:-1]
    return value


def _percent_decode(text: str) -> str:
    """RFC 2231 %XX escapes to the bytes they stand for (as Latin-1 characters)."""
    if "%" not in text:
        return text
    return _PERCENT.sub(lambda m: chr(int(m.group(1), 16)), text)


_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")


# --------------------------------------------------------------------------- body text


def _parse_body(raw: bytes, raw_limit: int, text_limit: int, top: tuple[Message, int | None] | None) -> Body:
    try:
        raw_limit = max(0, raw_limit)
        data = raw[:raw_limit]
        walk = _Walk(data, cut=len(raw) > raw_limit)
        if top is not None and (top[1] is None or top[1] > len(data)):
            top = None
        walk.part(0, len(data), 0, False, top)
        choice = _choose(walk.leaves, max(0, text_limit))
        return _body(choice, truncated=walk.cut or walk.skipped)
    except Exception:  # the helpers are total; this is the last line of defence
        return Body((), "", len(raw) > raw_limit)


class _Choice:
    __slots__ = ("shown", "html", "cut")

    def __init__(self, shown: str = "", html: str | None = None, cut: bool = False) -> None:
        self.shown = shown  # the preferred part's text
        self.html = html  # the converted text/html alternative, when the preferred part is plain
        self.cut = cut  # text_limit cut the preferred part's (or the alternative's) text


def _choose(leaves: Iterable[_Leaf], text_limit: int) -> _Choice:
    """The inline text/plain parts that are not blank, joined in order, else the first
    text/html one; with a plain part, the first non-blank text/html part too."""
    inline = [leaf for leaf in leaves if leaf.ctype in ("text/plain", "text/html") and not leaf.attachment()]
    choice = _Choice()
    plain: list[str] = []  # every inline text/plain part, in order (Apple Mail splits around images)
    left = text_limit
    for leaf in inline:
        if leaf.ctype == "text/plain" and left > 0:
            text, cut = _leaf_text(leaf, left)
            if text.strip():
                plain.append(text)
                left -= len(text)
                choice.cut = choice.cut or cut
    if plain:
        choice.shown = "\n\n".join(plain)
    for leaf in inline:
        if leaf.ctype == "text/html":
            text, cut = _leaf_text(leaf, text_limit)
            if text.strip():
                if choice.shown:
                    choice.html = text
                    choice.cut = choice.cut or cut
                else:
                    choice.shown, choice.cut = text, cut
                break
    return choice


def _leaf_text(leaf: _Leaf, text_limit: int) -> tuple[str, bool]:
    charset = leaf.params.get("charset")
    text = _decode(leaf.payload(), charset if charset and charset.isascii() else None, leaf.partial)
    cut = len(text) > text_limit
    if cut:
        text = text[:text_limit]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if leaf.ctype == "text/plain":
        if leaf.params.get("format", "").strip().lower() == "flowed":
            text = unflow(text, delsp=leaf.params.get("delsp", "").strip().lower() == "yes")
    else:
        text = html_to_text(text, quote_blockquotes=True)
    return _normalise(text), cut


def _body(choice: _Choice, *, truncated: bool) -> Body:
    shown, html = choice.shown, choice.html
    lines = _QuoteLines(shown)
    text, uncut = _text_and_uncut(lines)  # one pass, as a rule: "uncut" differs from "text" rarely
    later: list[tuple[str, Callable[[], str]]] = []
    if html is not None:
        later.append(("html", lambda: strip_quoted(html)))
    later.append(("uncut", lambda: uncut))
    later.append(("quoted", lambda: _quoted_only(lines)))
    return Body((Reading("text", text),), shown, truncated or choice.cut, later=later)


def shown_text(raw: bytes) -> str:
    """The decoded text of the part a reader sees (:attr:`Body.shown`), without the
    readings :func:`parse_body` makes for a player's mail: what a mail of ours says, to read
    a reply against it (:mod:`referee.mail.reply`). Never raises."""
    try:
        data = _as_bytes(raw)[:RAW_LIMIT]
        walk = _Walk(data, cut=False)
        walk.part(0, len(data), 0, False, None)
        return _choose(walk.leaves, TEXT_LIMIT).shown
    except Exception:  # the helpers are total; this is the last line of defence
        return ""


def extract_text(msg: Message) -> str:
    """The body of a parsed message as plain text: first inline text/plain part, else
    converted text/html (cut at :data:`TEXT_LIMIT` characters).

    A blank text/plain part (some clients send one next to the HTML) does not count.
    Attachments and attached messages are ignored. Never raises.
    """
    try:
        leaves = []
        for part in _leaves(msg, 0):
            leaves.append(_Leaf(part, _content_type(part)))
            if len(leaves) >= MIME_PART_LIMIT:
                break
        return _choose(leaves, TEXT_LIMIT).shown
    except Exception:
        return ""


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode with the declared charset, else UTF-8, else Windows-1252, else Latin-1.

    A charset that is unknown or does not fit the bytes falls through to the next
    candidate; Latin-1 maps every byte, so this never raises. Codecs that interpret
    the bytes as something else than text in a charset (``*_escape``) or are
    quadratic (``punycode``, ``idna``) are never used.
    """
    return _decode(data, charset, partial=False)


def _decode(data: bytes, charset: str | None, partial: bool) -> str:
    """:func:`decode_bytes`; with *partial*, the bytes are a prefix of the real ones and
    an incomplete character at their end is dropped instead of failing the charset."""
    candidates: list[str] = []
    label = (charset or "").strip().strip("\"'").lower()
    if label and len(label) <= 40:
        candidates += [_SUPERSETS.get(label, label), label]
    candidates += ["utf-8", "cp1252"]
    for encoding in dict.fromkeys(candidates):
        if not _usable_codec(encoding):
            continue
        try:
            return data.decode(encoding)
        except UnicodeDecodeError as exc:
            if partial and exc.end >= len(data) and exc.start >= len(data) - 16:
                try:
                    return data[: exc.start].decode(encoding)
                except (LookupError, UnicodeError, ValueError, TypeError):
                    pass
            continue
        except (LookupError, UnicodeError, ValueError, TypeError):
            continue
    return data.decode("latin-1")


@functools.lru_cache(maxsize=256)
def _usable_codec(label: str) -> bool:
    """A codec Python ships, that decodes text in a charset in linear time.

    Labels that name no shipped codec are not looked up at all: the codec registry
    remembers every name it was asked for, and the labels come from anyone's mail."""
    norm = encodings.normalize_encoding(label).lower()
    if norm not in _SHIPPED_CODECS and norm.replace(".", "_") not in _SHIPPED_CODECS:
        return False
    try:
        name = codecs.lookup(label).name
    except (LookupError, ValueError, TypeError):
        return False
    return name not in _UNUSABLE_CODECS and "escape" not in name


_UNUSABLE_CODECS = frozenset({"punycode", "idna"})
_SHIPPED_CODECS = frozenset(
    {name for name, _ in encodings.aliases.aliases.items()}
    | set(encodings.aliases.aliases.values())
    | {module.name for module in pkgutil.iter_modules(encodings.__path__)}
)

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


def unflow(text: str, *, delsp: bool = False) -> str:
    """Undo RFC 3676 ``format=flowed``: join soft-broken lines, keep quote depth."""
    out: list[str] = []
    pending: list[str] = []  # pieces of the paragraph being joined
    pending_depth = 0
    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if content.startswith(" "):
            content = content[1:]  # space-stuffing
        flowed = content.endswith(" ") and content != "-- "
        if flowed and delsp:
            content = content[:-1]
        if pending and depth != pending_depth:
            out.append(_requote(pending_depth, "".join(pending)))
            pending = []
        if flowed:
            if not pending:
                pending_depth = depth
            pending.append(content)
        elif pending:
            pending.append(content)
            out.append(_requote(depth, "".join(pending)))
            pending = []
        else:
            out.append(_requote(depth, content))
    if pending:
        out.append(_requote(pending_depth, "".join(pending)))
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
    if text.isascii():  # no invisible character, no surrogate: only the controls go (fast, as bytes)
        return text.encode("ascii").translate(None, _CONTROL_BYTES).decode("ascii")
    text = text.translate(_CONTROL_AND_INVISIBLE)
    return _LONE_SURROGATES.sub("\ufffd", text)


_INVISIBLE = {
    0x00A0: " ",  # no-break space
    0x2007: " ",  # figure space
    0x202F: " ",  # narrow no-break space (French "a écrit :")
    0x200B: None,  # zero-width space
    0x200C: None,  # zero-width non-joiner
    0x200D: None,  # zero-width joiner
    0x200E: None,  # left-to-right mark
    0x200F: None,  # right-to-left mark
    0x2060: None,  # word joiner
    0x180E: None,  # Mongolian vowel separator
    0xFEFF: None,  # byte order mark / zero-width no-break space
    0x00AD: None,  # soft hyphen
    0x061C: None,  # Arabic letter mark
    **{code: None for code in range(0x202A, 0x202F)},  # bidi embeddings and overrides
    **{code: None for code in range(0x2066, 0x206A)},  # bidi isolates
    0xFF1A: ":",  # full-width colon (CJK input methods)
    0xFF1D: "=",  # full-width equals sign
}
_CONTROL_CODES = (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F)  # what _CONTROL matches
_CONTROL_BYTES = bytes(_CONTROL_CODES)
_CONTROL_AND_INVISIBLE = {**dict.fromkeys(_CONTROL_CODES), **_INVISIBLE}
