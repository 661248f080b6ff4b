"""Outbound messages (pure, deterministic).

The same inputs always give the same bytes: the caller supplies the Message-ID and
the Date, and the MIME boundary of a multipart message is derived from its content.
The message is written out directly (CRLF line ends, non-ASCII header text as RFC 2047
encoded words, body lines within 78 columns) rather than through ``EmailMessage``,
which is over ten times slower and folds a subject such as "[Game] ..." right after
"Subject:". Free-text headers are not folded unless encoded; every header stays under
998 characters. Text parts are UTF-8 and 7bit when they can be, quoted-printable
otherwise, so they pass any relay.
"""

from __future__ import annotations

import functools
import hashlib
import re
from datetime import datetime, timezone
from email.header import Header
from email.utils import format_datetime, formataddr
from typing import Mapping, Sequence

from referee.mail.guards import LOOP_HEADER

__all__ = ["LATE_NOTE", "compose", "make_message_id", "trim_references", "with_late_note"]

_MANAGED = frozenset(
    h.lower()
    for h in (
        "From",
        "To",
        "Reply-To",
        "Subject",
        "Date",
        "Message-ID",
        "In-Reply-To",
        "References",
        "Auto-Submitted",
        LOOP_HEADER,
        "MIME-Version",
        "Content-Type",
        "Content-Transfer-Encoding",
    )
)
_AUTO_SUBMITTED = frozenset({"auto-generated", "auto-replied", "no"})
CRLF = "\r\n"
MAX_ID_LENGTH = 250  # an id longer than this is not written (it could not share a line)
REFERENCES_BUDGET = 980  # "References: " + this stays within 998 characters


def compose(
    *,
    from_addr: str,
    from_name: str,
    to_addr: str,
    to_name: str,
    reply_to: str | None,
    subject: str,
    text: str,
    html: str | None = None,
    message_id: str,
    date: datetime,
    in_reply_to: str | None = None,
    references: Sequence[str] = (),
    auto_submitted: str = "auto-generated",
    loop_value: str,
    extra_headers: Mapping[str, str] = {},
    attachments: Sequence[tuple[str, str, str]] = (),
) -> bytes:
    """An RFC 5322 message, serialised for SMTP.

    *message_id*, *in_reply_to* and *references* are given without angle brackets
    (brackets are tolerated). *date* must be timezone-aware; it is written in UTC.
    *auto_submitted* is RFC 3834's "auto-replied" for answers to a mail,
    "auto-generated" otherwise. *extra_headers* may not replace a header set here.
    Ids that cannot be written (non-ASCII, spaces, over 250 characters) are left out, and
    the References chain is trimmed to one line (:func:`trim_references`).
    *html*: an HTML alternative of *text* (``multipart/alternative``, the text first).
    *attachments*: ``(content type, file name, text)`` parts after the body, e.g. a
    deadline's ``application/ics`` event (the whole is then
    ``multipart/mixed``: the body, then each attachment).
    """
    if date.tzinfo is None or date.utcoffset() is None:
        raise ValueError("date must be timezone-aware")
    if auto_submitted not in _AUTO_SUBMITTED:
        raise ValueError(f"unknown Auto-Submitted value: {auto_submitted!r}")
    clashes = sorted(name for name in extra_headers if name.lower() in _MANAGED)
    if clashes:
        raise ValueError(f"extra_headers may not set {', '.join(clashes)}")

    headers = [
        ("From", _address(from_name, from_addr)),
        ("To", _address(to_name, to_addr)),
    ]
    if reply_to:
        headers.append(("Reply-To", _address("", reply_to)))
    headers += [
        ("Subject", _unstructured(_one_line(subject))),
        ("Date", _date(date)),
        ("Message-ID", _bracket(message_id)),
    ]
    if in_reply_to and _usable_id(in_reply_to):
        headers.append(("In-Reply-To", _bracket(in_reply_to)))
    chain = trim_references([r for r in references if _usable_id(r)])
    if chain:
        headers.append(("References", " ".join(_bracket(r) for r in chain)))
    headers += [("Auto-Submitted", auto_submitted), (LOOP_HEADER, _one_line(loop_value))]
    headers += [(name, _unstructured(_one_line(value))) for name, value in extra_headers.items()]
    headers.append(("MIME-Version", "1.0"))

    if html is None:
        cte = _cte(text)
        content_headers = _part_headers("plain", text, cte)
        body = _encode_body(text, cte)
    else:
        seed = "\0".join((message_id, text, html)).encode("utf-8", "surrogatepass")
        boundary = "=_" + hashlib.sha256(seed).hexdigest()[:40]
        content_headers = [("Content-Type", f'multipart/alternative; boundary="{boundary}"')]
        parts = []
        for subtype, content in (("plain", text), ("html", html)):
            cte = _cte(content)
            part_head = "".join(f"{name}: {value}{CRLF}" for name, value in _part_headers(subtype, content, cte))
            # the CRLF before a boundary belongs to the boundary (RFC 2046 5.1.1)
            parts.append(f"--{boundary}{CRLF}{part_head}{CRLF}{_encode_body(content, cte)}{CRLF}")
        body = "".join(parts) + f"--{boundary}--{CRLF}"
    if attachments:
        seed = "\0".join((message_id, body, *(a for att in attachments for a in att)))
        outer = "=_m" + hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:40]
        inner_head = "".join(f"{name}: {value}{CRLF}" for name, value in content_headers)
        parts = [f"--{outer}{CRLF}{inner_head}{CRLF}{body}{CRLF}"]
        for content_type, filename, content in attachments:
            if any(c in filename for c in '"\\\r\n') or not filename.isascii():
                raise ValueError(f"attachment file name must be plain ASCII: {filename!r}")
            cte = _cte(content)
            charset = '; charset="utf-8"' if content_type.startswith("text/") else ""
            part_head = (
                f'Content-Type: {content_type}{charset}; name="{filename}"{CRLF}'
                f'Content-Disposition: attachment; filename="{filename}"{CRLF}'
                f"Content-Transfer-Encoding: {cte}{CRLF}"
            )
            parts.append(f"--{outer}{CRLF}{part_head}{CRLF}{_encode_body(content, cte)}{CRLF}")
        body = "".join(parts) + f"--{outer}--{CRLF}"
        content_headers = [("Content-Type", f'multipart/mixed; boundary="{outer}"')]
    headers += content_headers
    head = "".join(f"{name}: {value}{CRLF}" for name, value in headers)
    return (head + CRLF + body).encode("ascii")


# The note a mail carries when it is delivered after the deadline it names
# (referee.pipeline.deliver): its first paragraph after the greeting, wrapped at 72.
LATE_NOTE = (
    "This mail comes late: it could be delivered only after the deadline it\n"
    "names had passed (its date is when we wrote it). That step has closed,\n"
    "so what this mail says you may still send or change there no longer\n"
    "holds. A later mail of ours about the match, or the STATUS command,\n"
    "tells you where it stands now."
)
LATE_SUBJECT = "Delivered late:"  # before the subject of such a mail


def with_late_note(message: bytes, note: str = LATE_NOTE) -> bytes:
    """*message*, one of ours as :func:`compose` wrote it, as delivery sends it after the
    deadline it names has passed: plain text, with *note* as its first paragraph after the
    greeting (``Dear <name>,``; at the top when there is none) and :data:`LATE_SUBJECT`
    before its subject, without the HTML part (its buttons answer a step that has closed)
    nor the attachments (the deadline's calendar event). Every other header is kept as it
    was: the same Message-ID, Date (when it was written), threading. Deterministic, and
    the same message again when it carries the note already, so that a retry sends the
    same bytes."""
    import email
    import email.policy

    head, sep, _ = message.partition(b"\r\n\r\n")
    if not sep:
        return message
    parsed = email.message_from_bytes(message, policy=email.policy.compat32)
    text = None
    for part in parsed.walk():
        if part.get_content_type() == "text/plain" and part.get_filename() is None:
            payload = part.get_payload(decode=True)
            text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else None
            break
    if text is None:
        return message
    lines = text.replace("\r\n", "\n").split("\n")
    first = note.split("\n", 1)[0]
    if first in lines:
        return message  # noted already
    greeting = lines[:1] if lines and lines[0].startswith("Dear ") else []
    at = len(greeting)
    while greeting and at < len(lines) and not lines[at].strip():
        at += 1
    new_lines = [*greeting, *([""] if greeting else []), *note.split("\n"), "", *lines[at:]]
    new_text = "\n".join(new_lines).rstrip("\n") + "\n"
    kept: list[str] = []
    dropping = False
    for line in head.decode("ascii").split("\r\n"):
        if line[:1] in (" ", "\t"):
            if not dropping:
                kept.append(line)
            continue
        name = line.split(":", 1)[0].strip().lower()
        dropping = name in ("content-type", "content-transfer-encoding")
        if name == "subject":  # an encoded subject is folded, and stays so: the mark on a line of its own
            value = line.split(":", 1)[1].strip()
            line = f"Subject: {LATE_SUBJECT}" + (f"{CRLF} " if value.startswith("=?") else " ") + value
        if not dropping:
            kept.append(line)
    cte = _cte(new_text)
    kept += [f"{name}: {value}" for name, value in _part_headers("plain", new_text, cte)]
    return ("".join(line + CRLF for line in kept) + CRLF + _encode_body(new_text, cte)).encode("ascii")


def make_message_id(key: str, domain: str) -> str:
    """A Message-ID (without brackets) that is the same for the same dedupe *key*.

    ``<16 hex of sha1(key)>.<key with unsafe characters replaced>@domain``; the hash
    keeps ids unique when sanitising makes two keys look alike.
    """
    digest = hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    readable = re.sub(r"[^A-Za-z0-9_-]+", "-", key).strip("-")[:64].rstrip("-")
    local = f"{digest}.{readable}" if readable else digest
    return f"{local}@{domain}"


@functools.lru_cache(maxsize=64)
def _date(date: datetime) -> str:
    """The Date header for *date*, in UTC (a batch stamps its mails with few instants)."""
    return format_datetime(date.astimezone(timezone.utc))


@functools.lru_cache(maxsize=16384)
def _address(name: str, addr: str) -> str:
    """``Name <addr>``; a non-ASCII name as an RFC 2047 encoded word, specials quoted
    (remembered: the same players are written to again and again)."""
    name = _one_line(name)
    return formataddr((name, addr), charset="utf-8") if name else addr


def _unstructured(value: str) -> str:
    """A free-text header value: as is when ASCII, else RFC 2047 encoded words (folded)."""
    if value.isascii():
        return value
    return Header(value, "utf-8", header_name="Subject").encode(linesep=CRLF)


def trim_references(ids: Sequence[str], budget: int = REFERENCES_BUDGET) -> list[str]:
    """The References chain cut to fit one header line, as RFC 5322 3.6.4 suggests: the
    first id (the thread's root) and as many of the most recent ones as fit in *budget*
    characters (brackets and spaces included)."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return []
    kept_tail: list[str] = []
    used = len(ids[0]) + 2
    for msg_id in reversed(ids[1:]):
        cost = len(msg_id) + 3
        if used + cost > budget:
            break
        kept_tail.append(msg_id)
        used += cost
    return [ids[0], *reversed(kept_tail)]


def _usable_id(msg_id: str) -> bool:
    """Can this id be written in a header as ``<id>``? Printable ASCII without spaces or
    brackets, short enough for one line (ids seen in the wild break all of these)."""
    bare = msg_id.strip().strip("<>").strip()
    return (
        0 < len(bare) <= MAX_ID_LENGTH and bare.isascii() and bare.isprintable() and not any(c in bare for c in " <>\t")
    )


def _part_headers(subtype: str, content: str, cte: str | None = None) -> list[tuple[str, str]]:
    return [
        ("Content-Type", f'text/{subtype}; charset="utf-8"'),
        ("Content-Transfer-Encoding", cte or _cte(content)),
    ]


def _encode_body(content: str, cte: str | None = None) -> str:
    """CRLF lines; quoted-printable (76 columns) unless plain short-lined ASCII (*cte*:
    what :func:`_cte` says of *content*, when the caller asked it already)."""
    if (cte or _cte(content)) == "7bit":
        return "".join(line + CRLF for line in content.splitlines())
    encoded = _qp_body(content.replace("\r\n", "\n").encode("utf-8", "surrogatepass"))
    return encoded if encoded.endswith(CRLF) else encoded + CRLF


def _qp_body(data: bytes, maxlinelen: int = 76) -> str:
    """``quoprimime.body_encode(data.decode("latin-1"), maxlinelen, eol=CRLF)``, the same
    text (``tests/mail/test_fast_paths.py`` compares them), without its character-by-character
    translation when no byte needs quoting (long ASCII lines are the usual reason for
    quoted-printable here)."""
    odd = data.translate(None, _QP_LITERAL_BYTES)  # the bytes to write as =XX
    if odd:
        # "=" by a plain replace (HTML has many), then the rarer others (UTF-8, controls):
        # a few distinct ones (a dash, quotes, an accent) by a replace each, a C pass that
        # writes only ASCII (an "=XX" is never quoted again); many (a text in another
        # script), run by run
        quoted = data.replace(b"=", b"=3D")
        others = set(odd)
        others.discard(0x3D)
        if len(others) <= _QP_REPLACES:
            for c in others:
                quoted = quoted.replace(_QP_BYTE[c], _QP_CODE[c])
        else:
            quoted = _QP_OTHER.sub(_qp_bytes, quoted)
        body = quoted.decode("ascii")
    else:
        body = data.decode("ascii")
    if not body:
        return body
    soft_break = "=" + CRLF
    maxlinelen1 = maxlinelen - 1
    encoded: list[str] = []
    append = encoded.append
    for line in body.splitlines():
        # break up the line into pieces no longer than maxlinelen - 1 (an =XX stays whole)
        start = 0
        laststart = len(line) - 1 - maxlinelen
        while start <= laststart:
            stop = start + maxlinelen1
            if line[stop - 2] == "=":
                append(line[start : stop - 1])
                start = stop - 2
            elif line[stop - 1] == "=":
                append(line[start:stop])
                start = stop - 1
            else:
                append(line[start:stop] + "=")
                start = stop
        # whitespace at the end of a line is quoted
        if line and line[-1] in " \t":
            room = start - laststart
            if room >= 3:
                q = f"={ord(line[-1]):02X}"
            elif room == 2:
                q = line[-1] + soft_break
            else:
                q = soft_break + f"={ord(line[-1]):02X}"
            append(line[start:-1] + q)
        else:
            append(line[start:])
    if body[-1] in "\r\n":
        append("")
    return CRLF.join(encoded)


# Bytes written as themselves in a quoted-printable body (quoprimime's set, and line ends).
_QP_LITERAL = frozenset(b"\t ") | (frozenset(range(0x21, 0x7F)) - {ord("=")})
_QP_LITERAL_BYTES = bytes(sorted(_QP_LITERAL | set(b"\r\n")))
_QP_OTHER = re.compile(rb"[^\t\n\r\x20-\x7e]+")  # after "=" is quoted: the bytes still to quote
_QP_REPLACES = 16  # distinct bytes to quote, at most, replaced one by one (else run by run)
_QP_BYTE = [bytes((c,)) for c in range(256)]
_QP_CODE = [b"=%02X" % c for c in range(256)]


def _qp_bytes(m: re.Match[bytes]) -> bytes:
    return b"".join(b"=%02X" % c for c in m.group(0))


def _cte(body: str) -> str:
    """7bit for short-lined ASCII, else quoted-printable (safe over any relay)."""
    lines = body.splitlines()
    if body.isascii() and all(len(line) <= 78 for line in lines):
        return "7bit"
    return "quoted-printable"


def _bracket(msg_id: str) -> str:
    return f"<{msg_id.strip().strip('<>').strip()}>"


def _one_line(value: str) -> str:
    return " ".join(value.split())
