"""The MIME walk: the body parts of a mail, found in its raw bytes, bounded and linear.

:class:`Walk` reads a message's raw bytes (the caller gives it at most
:data:`~referee.mail.limits.RAW_LIMIT` of them) with a walker of its own, as the stdlib's
feed parser would read them, and gives its leaves (:class:`Leaf`: a non-multipart part's
header-only message and where its body is; the transfer encoding is undone only when
asked). Bounds: at most :data:`MIME_DEPTH_LIMIT` multipart levels are descended into and
:data:`MIME_PART_LIMIT` parts looked at; a part's header block is read up to
:data:`PART_HEADER_LIMIT` bytes, all of them together up to :data:`HEADER_LIMIT`; an
attached or forwarded message (``message/*``) is not descended into. The delimiter lines of
a multipart are found in one scan from left to right (:func:`parts`), the parameters of a
Content-Type or Content-Disposition by a linear reader of our own (:func:`params`: the first
:data:`PARAM_LIMIT` characters, :data:`PARAM_COUNT_LIMIT` parameters; the stdlib's is
quadratic). :mod:`referee.mail.bodytext` picks the part the player wrote in from the
leaves; :mod:`referee.mail.bounces` walks delivery reports with the same pieces.
"""

from __future__ import annotations

import binascii
import re
from email.message import Message
from typing import Iterator

from referee.mail.charsets import decode_bytes
from referee.mail.headers import read_head
from referee.mail.limits import (
    HEADER_LIMIT,
    MIME_DEPTH_LIMIT,
    MIME_PART_LIMIT,
    PARAM_COUNT_LIMIT,
    PARAM_LIMIT,
    PART_HEADER_LIMIT,
)

__all__ = ["Leaf", "Walk", "content_type", "header_text", "params", "parsed_leaves", "parts"]


class Leaf:
    """A non-multipart part: its header-only message and where its body is."""

    __slots__ = ("msg", "ctype", "params", "data", "start", "end", "partial")

    def __init__(
        self, msg: Message, ctype: str, data: bytes | None = None, start: int = 0, end: int = 0, partial: bool = False
    ) -> None:
        self.msg = msg
        self.ctype = ctype
        self.params = params(header_text(msg, "content-type"))
        self.data = data  # None: msg is a parsed part holding its own payload
        self.start = start
        self.end = end
        self.partial = partial  # the body runs into the RAW_LIMIT cut

    def payload(self) -> bytes:
        """The body with its transfer encoding undone (by the stdlib, as before; base64 by
        :func:`_lenient_base64`, so a body cut short still gives what it holds)."""
        msg = self.msg
        if self.data is not None and header_text(msg, "content-transfer-encoding").strip().lower() == "base64":
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
        disposition = params(header_text(self.msg, "content-disposition"))
        name = disposition.get("filename", self.params.get("name"))
        return bool(name and name.strip())


class Walk:
    """One walk over the parts of ``data`` (:meth:`part`, from the message down); the
    leaves it finds, in order, are :attr:`leaves`."""

    def __init__(self, data: bytes, cut: bool) -> None:
        self.data = data
        self.cut = cut  # data is a prefix of the message
        self.parts = 0
        self.skipped = False  # MIME_PART_LIMIT left parts unread
        self.header_budget = HEADER_LIMIT  # bytes of body part headers still to parse
        self.leaves: list[Leaf] = []

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
            top = read_head(self.data, start, end, limit, search=None)
            if depth:
                self.header_budget -= min(limit, (top[1] or end) - start)
        msg, body = top
        if body is None:
            body = end
        if digest:
            msg.set_default_type("message/rfc822")
        ctype = content_type(msg)
        if ctype.startswith("message/"):
            return  # a forwarded or bounced message is not what the player wrote
        if ctype.startswith("multipart/"):
            boundary = params(header_text(msg, "content-type")).get("boundary", "").rstrip()
            if boundary:
                for part_start, part_end in parts(self.data, body, end, boundary):
                    self.part(part_start, part_end, depth + 1, ctype == "multipart/digest")
                    if self.skipped:
                        return
            return  # without a boundary the feed parser keeps it as one non-text leaf
        partial = self.cut and end == len(self.data)
        if depth:
            end = max(body, _without_line_end(self.data, start, end))
        self.leaves.append(Leaf(msg, ctype, self.data, body, end, partial=partial))


def parts(data: bytes, start: int, end: int, boundary: str) -> Iterator[tuple[int, int]]:
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


def parsed_leaves(part: Message, depth: int) -> Iterator[Message]:
    """Non-multipart parts of a parsed message in order, not descending into attached
    messages (used by :func:`extract_text` on messages parsed elsewhere)."""
    if depth > MIME_DEPTH_LIMIT:
        return
    ctype = content_type(part)
    if ctype.startswith("message/"):
        return
    try:
        payload = part.get_payload()
    except Exception:
        return
    if isinstance(payload, list):
        for sub in payload:
            if isinstance(sub, Message):
                yield from parsed_leaves(sub, depth + 1)
        return
    yield part


def content_type(part: Message) -> str:
    try:
        return part.get_content_type()
    except Exception:
        return "application/octet-stream"


def header_text(msg: Message, name: str) -> str:
    try:
        value = msg.get(name)
    except Exception:
        return ""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def params(value: str) -> dict[str, str]:
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
