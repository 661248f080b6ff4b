"""Outbound messages (pure, deterministic).

The same inputs always give the same bytes: the caller supplies the Message-ID and
the Date, and the MIME boundary of a multipart message is derived from its content.
Output uses ``email.policy.SMTP`` (CRLF line ends, non-ASCII headers RFC 2047-encoded,
body lines within 78 columns). Headers are folded only past 998 characters: at 78
columns the email package folds a subject such as "[Game] ..." right after "Subject:",
which clients then show with a leading space. Text parts are UTF-8 and 7bit when they can
be, quoted-printable otherwise, so they pass any relay.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Mapping, Sequence

from referee.mail.guards import LOOP_HEADER

__all__ = ["compose", "make_message_id"]

_MANAGED = frozenset(h.lower() for h in (
    "From", "To", "Reply-To", "Subject", "Date", "Message-ID", "In-Reply-To",
    "References", "Auto-Submitted", LOOP_HEADER, "MIME-Version", "Content-Type",
    "Content-Transfer-Encoding",
))
_AUTO_SUBMITTED = frozenset({"auto-generated", "auto-replied", "no"})
_OUTPUT = policy.SMTP.clone(max_line_length=998)  # bodies are encoded at 78 columns before this applies


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
) -> bytes:
    """An RFC 5322 message, serialised for SMTP.

    *message_id*, *in_reply_to* and *references* are given without angle brackets
    (brackets are tolerated). *date* must be timezone-aware; it is written in UTC.
    *auto_submitted* is RFC 3834's "auto-replied" for answers to a mail,
    "auto-generated" otherwise. *extra_headers* may not replace a header set here.
    """
    if date.tzinfo is None or date.utcoffset() is None:
        raise ValueError("date must be timezone-aware")
    if auto_submitted not in _AUTO_SUBMITTED:
        raise ValueError(f"unknown Auto-Submitted value: {auto_submitted!r}")
    clashes = sorted(name for name in extra_headers if name.lower() in _MANAGED)
    if clashes:
        raise ValueError(f"extra_headers may not set {', '.join(clashes)}")

    msg = EmailMessage(policy=policy.SMTP)
    msg["From"] = Address(display_name=_one_line(from_name), addr_spec=from_addr)
    msg["To"] = Address(display_name=_one_line(to_name), addr_spec=to_addr)
    if reply_to:
        msg["Reply-To"] = Address(addr_spec=reply_to)
    msg["Subject"] = _one_line(subject)
    msg["Date"] = format_datetime(date.astimezone(timezone.utc))
    msg["Message-ID"] = _bracket(message_id)
    if in_reply_to:
        msg["In-Reply-To"] = _bracket(in_reply_to)
    if references:
        msg["References"] = " ".join(_bracket(r) for r in references)
    msg["Auto-Submitted"] = auto_submitted
    msg[LOOP_HEADER] = loop_value
    for name, value in extra_headers.items():
        msg[name] = _one_line(value)

    msg.set_content(text, subtype="plain", charset="utf-8", cte=_cte(text))
    if html is not None:
        msg.add_alternative(html, subtype="html", charset="utf-8", cte=_cte(html))
        for part in msg.iter_parts():
            del part["MIME-Version"]  # only the top level carries it (RFC 2045 section 4)
        seed = "\0".join((message_id, text, html)).encode("utf-8", "surrogatepass")
        msg.set_boundary("=_" + hashlib.sha256(seed).hexdigest()[:40])
    return msg.as_bytes(policy=_OUTPUT)


def make_message_id(key: str, domain: str) -> str:
    """A Message-ID (without brackets) that is the same for the same dedupe *key*.

    ``<16 hex of sha1(key)>.<key with unsafe characters replaced>@domain``; the hash
    keeps ids unique when sanitising makes two keys look alike.
    """
    digest = hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    readable = re.sub(r"[^A-Za-z0-9_-]+", "-", key).strip("-")[:64].rstrip("-")
    local = f"{digest}.{readable}" if readable else digest
    return f"{local}@{domain}"


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
