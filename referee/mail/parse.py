"""Inbound mail to a clean submission, safe on any bytes from anyone: the entry points.

Everything the parser does is pure and total: nothing raises, whatever bytes it is given,
and every step is linear in its input or works on a bounded part of it, so a hostile mail
costs about what an ordinary one of the same size does (``tests/mail/test_parse_linear.py``
checks it, ``bench/bench_parse.py`` measures it). It is three modules of one job each:

* :mod:`referee.mail.headers`: the header block (:func:`parse_headers`, at most
  :data:`HEADER_LIMIT` bytes, read before any body byte is looked at);
* :mod:`referee.mail.mime`: the MIME walk over the first :data:`RAW_LIMIT` bytes
  (:data:`MIME_DEPTH_LIMIT` levels, :data:`MIME_PART_LIMIT` parts);
* :mod:`referee.mail.bodytext`: the text of the part the player wrote in, cut at
  :data:`TEXT_LIMIT` characters, and the ways of reading it (:func:`parse_body`).

:func:`parse_message` is both, as one :class:`Inbound`. The bounds are
:mod:`referee.mail.limits`; bytes become text in :mod:`referee.mail.charsets`.

No regular expression in these modules can backtrack over its input more than once: there
are no nested or overlapping quantifiers, and the patterns that used to be anchored ``.+``
/ ``.*`` matches are plain string tests (``startswith``, ``endswith``, ``find``) or use
possessive quantifiers.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from email.message import Message

from referee.mail.bodytext import Body, Reading, extract_text, read_body, shown_text, unflow
from referee.mail.charsets import decode_bytes
from referee.mail.headers import (
    Headers,
    blank_line_end,
    first_id,
    header_addresses,
    header_values,
    read_head,
    safe_headers,
)
from referee.mail.html_text import html_to_text
from referee.mail.limits import (
    ADDRESS_LIMIT,
    FROM_HEADER_LIMIT,
    HEADER_LIMIT,
    MIME_DEPTH_LIMIT,
    MIME_PART_LIMIT,
    RAW_LIMIT,
    REFERENCES_LIMIT,
    TEXT_LIMIT,
)
from referee.mail.quotes import strip_quoted

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


def parse_message(raw: bytes) -> Inbound:
    """Parse raw RFC 5322 bytes: :func:`parse_headers` + :func:`parse_body`. Never raises."""
    raw = _as_bytes(raw)
    top = read_head(raw, 0, len(raw), HEADER_LIMIT, search=HEADER_LIMIT)
    headers = safe_headers(top[0], top[1])
    body = read_body(raw, RAW_LIMIT, TEXT_LIMIT, top if top[1] is not None else None)
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
    blank = blank_line_end(raw, 0, stop)
    key = (header_limit, raw[:blank] if blank is not None else raw[:stop], blank is None and stop == end)
    found = _HEADS.get(key)
    if found is None:
        msg, body = read_head(raw, 0, end, header_limit, search=header_limit)
        found = safe_headers(msg, body)
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
    return read_body(raw, raw_limit, text_limit, top)


def message_id_of(raw: bytes) -> str:
    """The ``message_id`` :func:`parse_message` gives, read from the headers alone (cheap)."""
    raw = _as_bytes(raw)
    msg, _ = read_head(raw, 0, len(raw), HEADER_LIMIT, search=HEADER_LIMIT)
    ids = header_values(msg, "Message-ID")
    return first_id(ids[0] if ids else "") or _synthetic_id(raw)


def _as_bytes(raw: bytes) -> bytes:
    return raw if type(raw) is bytes else bytes(raw)


def _synthetic_id(raw: bytes) -> str:
    """A stable id for a mail without Message-ID: a hash of all its bytes."""
    return f"sha256-{hashlib.sha256(raw).hexdigest()}@{SYNTHETIC_ID_DOMAIN}"
