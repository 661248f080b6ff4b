"""The header block of a mail, read from its raw bytes and decoded: bounded, total, linear.

:func:`read_head` parses the header block of a message or of a body part as the stdlib's
compat32 feed parser reads it, without its machinery, and says where the body starts; a
block longer than its limit (for the message, :data:`~referee.mail.limits.HEADER_LIMIT`
bytes) is cut at a line end. :func:`safe_headers` reduces it to :class:`Headers`, so the
guards and the sender check run before any body byte is looked at
(:func:`referee.mail.parse.parse_headers`). Headers are read from their raw form and decoded
here (RFC 2047, 8-bit bytes, unknown charsets), so a header the stdlib's structured parser
chokes on costs that one field.

Bounds: each value of an address header is read up to :data:`ADDRESS_LIMIT` characters and
all values of one name up to :data:`ADDRESS_TOTAL_LIMIT` (``getaddresses`` costs
microseconds per character), the From header kept as written up to
:data:`FROM_HEADER_LIMIT` characters, References to :data:`REFERENCES_LIMIT` ids (the
first and the latest). The RFC 2047 decoder is our own (``email.header.decode_header`` is
quadratic), and no regular expression here backtracks over its input more than once.
"""

from __future__ import annotations

import binascii
import functools
import io
import re
from dataclasses import dataclass, field
from email import errors, policy
from email.message import Message
from email.parser import BytesHeaderParser
from email.utils import getaddresses

from referee.mail.charsets import CONTROL, LONE_SURROGATES, decode_bytes
from referee.mail.limits import ADDRESS_LIMIT, ADDRESS_TOTAL_LIMIT, FROM_HEADER_LIMIT, REFERENCES_LIMIT

__all__ = [
    "Headers",
    "blank_line_end",
    "decode_words",
    "first_id",
    "header_addresses",
    "header_index",
    "header_values",
    "indexed_addresses",
    "indexed_values",
    "raw_header",
    "read_head",
    "safe_headers",
]


@dataclass(frozen=True)
class Headers:
    """What the header block says, read without the body (:func:`referee.mail.parse.parse_headers`)."""

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


def read_head(data: bytes, start: int, end: int, limit: int, *, search: int | None) -> tuple[Message, int | None]:
    """Parse the header block of the part ``data[start:end]``.

    Returns the header-only compat32 message and where the part's body starts (None
    when the blank line was not searched for far enough to know). The blank line is
    looked for in the first *search* bytes (all of the part when None); at most
    *limit* bytes of header block are parsed. As in the stdlib's feed parser, a line
    that is no header ends the block and starts the body.
    """
    stop = end if search is None else min(end, start + search)
    blank = blank_line_end(data, start, stop)
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


def blank_line_end(data: bytes, start: int, stop: int) -> int | None:
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


def safe_headers(msg: Message, body_at: int | None = None) -> Headers:
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
    index = header_index(msg)
    from_pairs, from_cut = _addresses_of(index, "from")
    senders = [pair for pair in from_pairs if "@" in pair[1]]
    from_name, from_addr = senders[0] if senders else ("", "")
    recipients = indexed_addresses(index, "to", "cc", "delivered-to", "x-original-to", "envelope-to", "x-envelope-to")
    from_values = indexed_values(index, "from")
    return Headers(
        message_id=first_id(_first(_decoded(index, "message-id"))),
        from_addr=from_addr,
        from_name=from_name,
        from_header=decode_words(from_values[0])[:FROM_HEADER_LIMIT] if from_values else "",
        from_count=len(senders) + from_cut,  # a From too long to read whole may hold more
        to_addrs=tuple(dict.fromkeys(addr for _, addr in recipients if "@" in addr)),
        subject=_first(_decoded(index, "subject")),
        in_reply_to=first_id(_first(_decoded(index, "in-reply-to"))),
        references=_bounded_ids(_all_ids(" ".join(_decoded(index, "references")))),
        message=msg,
        body_at=body_at,
    )


def header_index(msg: Message) -> dict[str, list[str]]:
    """Raw header values by lowercased name, in order; one pass over the headers."""
    index: dict[str, list[str]] = {}
    try:
        for name, value in msg.raw_items():
            index.setdefault(str(name).lower(), []).append(value)
    except Exception:
        pass
    return index


def indexed_values(index: dict[str, list[str]], name: str) -> list[str]:
    """Raw values of a header, with 8-bit bytes decoded (UTF-8, else Windows-1252)."""
    return [_desurrogate(v if isinstance(v, str) else str(v)) for v in index.get(name, ())]


def _decoded(index: dict[str, list[str]], name: str) -> tuple[str, ...]:
    return tuple(decode_words(value) for value in indexed_values(index, name))


def header_values(msg: Message, name: str) -> tuple[str, ...]:
    """Every value of header *name*, decoded and unfolded. Never raises."""
    return tuple(decode_words(value) for value in raw_header(msg, name))


def header_addresses(msg: Message, *names: str) -> list[tuple[str, str]]:
    """``(display name, bare address lowercased)`` for each address in the headers.

    Headers are taken in the order given; addresses without an address part
    (groups, garbage) are skipped. Each value is read up to :data:`ADDRESS_LIMIT`
    characters, each header name up to :data:`ADDRESS_TOTAL_LIMIT`. Never raises.
    """
    return indexed_addresses(header_index(msg), *(name.lower() for name in names))


def indexed_addresses(index: dict[str, list[str]], *names: str) -> list[tuple[str, str]]:
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
            found.append((decode_words(display), addr))
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


def raw_header(msg: Message, name: str) -> list[str]:
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
    return LONE_SURROGATES.sub("\ufffd", CONTROL.sub("", text))


def decode_words(value: str) -> str:
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


def first_id(value: str) -> str | None:
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
