"""What makes two deliveries the same mail, and values cut to fit a column.

A mail can reach us twice: delivered again by a relay that retried, with one more
``Received`` header, or fetched twice. It is the same mail when its content is the
same, whatever the trace headers the hops added on the way. Its Message-ID alone does
not decide: a mail without one must still be recognised, and a Message-ID that collides
with an earlier mail of somebody else (careless clients reuse them) names a different
mail that must be processed.

:func:`content_digest` hashes the Message-ID, the headers the author's client writes
and the body, and nothing a hop adds. It reads the bytes once (linear).
"""

from __future__ import annotations

import hashlib

__all__ = ["ORIGIN_HEADERS", "bounded", "content_digest", "split_head"]

# Written by the author's client; never added or changed by the hops on the way.
ORIGIN_HEADERS = frozenset(
    {
        "message-id",
        "from",
        "sender",
        "to",
        "cc",
        "subject",
        "date",
        "in-reply-to",
        "references",
        "mime-version",
        "content-type",
        "content-transfer-encoding",
    }
)


def split_head(raw: bytes) -> tuple[bytes, bytes]:
    """``(header block, body)`` at the first empty line (CRLF or LF); no body: ``(raw, b"")``."""
    crlf, lf = raw.find(b"\r\n\r\n"), raw.find(b"\n\n")
    if crlf >= 0 and (lf < 0 or crlf < lf):
        return raw[:crlf], raw[crlf + 4 :]
    if lf >= 0:
        return raw[:lf], raw[lf + 2 :]
    return raw, b""


def content_digest(raw: bytes) -> str:
    """SHA-256 (hex) of the origin headers (in order, unfolded, names lowercased) and the
    body with line ends normalised: equal for re-deliveries of one mail, different for
    different mails that share a Message-ID."""
    head, body = split_head(bytes(raw))
    digest = hashlib.sha256()
    name = None
    for line in head.replace(b"\r\n", b"\n").split(b"\n"):
        if line[:1] in (b" ", b"\t"):
            if name in ORIGIN_HEADERS:
                digest.update(b" " + line.strip())
            continue
        field, colon, value = line.partition(b":")
        name = field.strip().lower().decode("latin-1") if colon else None
        if name in ORIGIN_HEADERS:
            digest.update(b"\n" + name.encode("latin-1") + b":" + value.strip())
    digest.update(b"\n\n")
    digest.update(body.replace(b"\r\n", b"\n").rstrip(b"\n"))
    return digest.hexdigest()


def bounded(value: str | None, limit: int) -> str | None:
    """``value`` fit for a text column of ``limit`` characters on any database: cut (an
    ellipsis marks the cut), without NUL (PostgreSQL refuses it) and without lone
    surrogates (they cannot be encoded). None stays None."""
    if value is None:
        return None
    if not value.isascii():
        value = value.encode("utf-8", "replace").decode("utf-8")
    value = value.replace("\x00", "")
    if len(value) <= limit:
        return value
    return value[: limit - 1] + "\u2026"
