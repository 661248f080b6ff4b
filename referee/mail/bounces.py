"""Bounces: signed bounce addresses per outbox row (VERP), and delivery reports read (pure).

Every outbox mail leaves with an envelope sender of its own, the row's **bounce address**
``<local>+bounce-<outbox id>-<signature>@<domain>``: the same mailbox as the reply addresses
(the ``+`` detail), and the signature (HMAC-SHA256 with the server secret, the first
:data:`SIGNATURE_LENGTH` characters of its lowercase base32) says the address is ours and
names that row. A bounce that comes back to it says which mail, and so which recipient,
bounced, whatever the report holds; a report to a bounce address whose signature does not
hold is forged (or damaged) and counts for nothing. Mail to a bounce address is never
answered (:data:`referee.mail.tokens.BOUNCE_DETAIL` keeps it out of the reply addresses).

Delivery reports (RFC 3464, in a ``multipart/report; report-type=delivery-status``) are read
by :func:`read_report`: the ``message/delivery-status`` part's per-recipient fields
(Final-Recipient, Original-Recipient, Action, Status, Diagnostic-Code). Bounded and linear:
only the first :data:`REPORT_LIMIT` bytes of a mail, at most :data:`PART_LIMIT` MIME parts
:data:`DEPTH_LIMIT` levels deep, and :data:`RECIPIENT_LIMIT` recipients are read; values are
cut (:data:`VALUE_LIMIT`, :data:`DIAGNOSTIC_LIMIT`). A bounce that is no proper report but
comes from a mail system (:func:`read_plain_bounce`: From MAILER-DAEMON@ or postmaster@, or a
null return path with a bounce's subject) is read as one failure, its status taken from the
text when it holds one.

``Action: delayed`` (and any 4.x.x status) is recorded but is no *hard* bounce; ``failed``
with a 5.x.x status (or none) is (:attr:`Recipient.hard`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from email.message import Message
from typing import Iterable

from referee.mail.charsets import decode_bytes
from referee.mail.headers import Headers, read_head
from referee.mail.mime import Leaf, content_type, header_text, params, parts
from referee.mail.tokens import BOUNCE_DETAIL, MAX_LOCAL_PART

__all__ = [
    "BounceAddress",
    "Recipient",
    "Report",
    "bounce_address",
    "find_bounce_addresses",
    "looks_like_report",
    "read_bounce",
    "read_plain_bounce",
    "read_report",
    "smtp_status",
    "status_of",
]

SIGNATURE_LENGTH = 10  # base32 characters of the HMAC: 50 bits
MAX_OUTBOX_ID = 2**31 - 1  # outbox ids are database ids; a larger one is not ours
MAX_ADDRESSES = 8  # bounce addresses of one mail looked at

REPORT_LIMIT = 256 * 1024  # bytes of a mail read for its report
PART_LIMIT = 32  # MIME parts looked at
DEPTH_LIMIT = 4  # multipart levels descended into
PART_HEADER_LIMIT = 8 * 1024  # bytes of one part's header block
STATUS_TEXT_LIMIT = 64 * 1024  # characters of the delivery-status part read
RECIPIENT_LIMIT = 20  # per-recipient groups read
FIELD_LIMIT = 64  # fields read per group
VALUE_LIMIT = 320  # characters kept of a field's value (an address's length)
DIAGNOSTIC_LIMIT = 1000  # characters kept of a diagnostic
PLAIN_TEXT_LIMIT = 64 * 1024  # bytes of a plain bounce's body searched for a status

_REPORT_PARTS = frozenset({"message/delivery-status", "message/global-delivery-status"})
_SIGNATURE = re.compile(rf"[a-z2-7]{{{SIGNATURE_LENGTH}}}")
_ID = re.compile(r"[1-9][0-9]{0,9}|0")
_STATUS = re.compile(r"\s*+([245])\.(\d{1,3})\.(\d{1,3})(?!\d)")
# an enhanced status code in running text: not part of a longer dotted number or a word
_STATUS_IN_TEXT = re.compile(rb"(?<![\w.])([45])\.(\d{1,3})\.(\d{1,3})(?![\w.])")
_SMTP_CODE = re.compile(r"\s*+([245])\d\d(?!\d)")
_DAEMONS = frozenset({"mailer-daemon", "mailer_daemon", "mailerdaemon", "postmaster"})
_DAEMON_PREFIXES = ("microsoftexchange",)  # Exchange's NDRs: MicrosoftExchange<hex>@
_BOUNCE_SUBJECT = re.compile(
    r"undeliver|undelivered|returned mail|returned to sender|delivery (?:status|failure|has failed|failed)"
    r"|failure notice|could not be delivered|mail delivery failed|non[- ]remis|unzustellbar|nicht zugestellt",
    re.IGNORECASE,
)
_DELAY_SUBJECT = re.compile(r"delay|still being retried|warning", re.IGNORECASE)
_NULL_PATH = re.compile(r"^<\s*+>$")


# ---------------------------------------------------------------------------- bounce addresses


@dataclass(frozen=True)
class BounceAddress:
    """A ``local+bounce-...@domain`` address found among a mail's recipients."""

    address: str  # as found, lowercased
    outbox_id: int | None  # the outbox row it names when its signature is genuine, else None


def bounce_address(secret: bytes, local: str, domain: str, outbox_id: int) -> str:
    """The envelope sender of outbox row *outbox_id*: ``local+bounce-<id>-<signature>@domain``."""
    if not 0 <= outbox_id <= MAX_OUTBOX_ID:
        raise ValueError(f"not an outbox id: {outbox_id}")
    local_part = f"{local}+{BOUNCE_DETAIL}{outbox_id}-{_signature(secret, outbox_id)}"
    if len(local_part.encode("utf-8")) > MAX_LOCAL_PART:
        raise ValueError(f"local part longer than {MAX_LOCAL_PART} octets: {local_part!r}")
    return f"{local_part}@{domain}"


def find_bounce_addresses(secret: bytes, addrs: Iterable[str], local: str, domain: str) -> list[BounceAddress]:
    """The bounce addresses among *addrs* (case-insensitive), each once, in order, at most
    :data:`MAX_ADDRESSES`: every ``local+bounce-...@domain``, with the outbox id it names
    when its signature holds (compared in constant time)."""
    prefix = f"{local.strip().lower()}+{BOUNCE_DETAIL}"
    domain = domain.strip().lower()
    found: dict[str, BounceAddress] = {}
    for addr in addrs:
        local_part, at, addr_domain = addr.strip().strip("<>").strip().lower().rpartition("@")
        if not at or addr_domain != domain or not local_part.startswith(prefix):
            continue
        address = f"{local_part}@{addr_domain}"
        if address not in found:
            found[address] = BounceAddress(address, _verify(secret, local_part[len(prefix) :]))
            if len(found) >= MAX_ADDRESSES:
                break
    return list(found.values())


def _verify(secret: bytes, detail: str) -> int | None:
    """The outbox id of ``<id>-<signature>`` when the signature is genuine, else None."""
    number, dash, signature = detail.rpartition("-")
    if not dash or _ID.fullmatch(number) is None or _SIGNATURE.fullmatch(signature) is None:
        return None
    outbox_id = int(number)  # at most ten digits: cheap
    if outbox_id > MAX_OUTBOX_ID:
        return None
    expected = _signature(secret, outbox_id)
    return outbox_id if hmac.compare_digest(expected.encode("ascii"), signature.encode("ascii")) else None


def _signature(secret: bytes, outbox_id: int) -> str:
    # "bounce\0" keeps these signatures apart from the seat tokens' (referee.mail.tokens)
    digest = hmac.digest(secret, f"bounce\0{outbox_id}".encode("ascii"), hashlib.sha256)
    return base64.b32encode(digest[:10]).decode("ascii").lower()[:SIGNATURE_LENGTH]


# ---------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class Recipient:
    """What a report says of one recipient."""

    final_recipient: str  # bare address, lowercased ("" when not given)
    original_recipient: str = ""
    action: str = ""  # lowercased: failed | delayed | delivered | relayed | expanded ("" when not given)
    status: str = ""  # the enhanced status code, e.g. "5.1.1" ("" when not given or unreadable)
    diagnostic: str = ""  # Diagnostic-Code (or the line of a plain bounce that says why), one line, bounded

    @property
    def address(self) -> str:
        """The address our mail was sent to, as the report names it."""
        return self.original_recipient or self.final_recipient

    @property
    def hard(self) -> bool:
        """A permanent failure: ``failed``, and no 4.x.x status (a delay is recorded, not counted)."""
        return self.action == "failed" and not self.status.startswith("4")


@dataclass(frozen=True)
class Report:
    """A bounce, read: from a proper delivery report (``kind="dsn"``) or from the text of a
    bounce that is none (``kind="plain"``)."""

    kind: str
    recipients: tuple[Recipient, ...]
    reporting_mta: str = ""
    truncated: bool = False  # more recipients (or more of the report) than were read


def looks_like_report(head: Headers) -> bool:
    """Could this mail be a delivery report? From its top-level Content-Type alone (cheap:
    ordinary mail is not read further)."""
    return content_type(head.message) in ("multipart/report", *_REPORT_PARTS)


def read_bounce(raw: bytes, head: Headers) -> Report | None:
    """A proper report (:func:`read_report`), else a plain bounce (:func:`read_plain_bounce`), else None."""
    return read_report(raw) or read_plain_bounce(raw, head)


def read_report(raw: bytes, *, limit: int = REPORT_LIMIT, max_recipients: int = RECIPIENT_LIMIT) -> Report | None:
    """The delivery report in *raw* (RFC 3464), else None: its first ``message/delivery-status``
    (or ``message/global-delivery-status``) part, in a ``multipart/report`` (whatever its
    report-type says) or any multipart around one. Only the first *limit* bytes are read,
    at most *max_recipients* recipients; never raises."""
    try:
        data = bytes(raw[:limit])
        finder = _Finder(data, cut=len(raw) > limit)
        top = read_head(data, 0, len(data), PART_HEADER_LIMIT * 8, search=None)
        leaf = finder.find(0, len(data), 0, top)
        if leaf is None:
            return None
        text = decode_bytes(leaf.payload()[: STATUS_TEXT_LIMIT * 4], "utf-8")[:STATUS_TEXT_LIMIT]
        return _fields_report(text, max_recipients, truncated=finder.cut and leaf.partial)
    except Exception:  # a report that cannot be read is none
        return None


class _Finder:
    """The first delivery-status leaf of a bounded prefix, by a walk as bounded as it."""

    def __init__(self, data: bytes, cut: bool) -> None:
        self.data, self.cut, self.parts = data, cut, 0

    def find(self, start: int, end: int, depth: int, top: tuple[Message, int | None] | None = None) -> Leaf | None:
        self.parts += 1
        if self.parts > PART_LIMIT or depth > DEPTH_LIMIT:
            return None
        if top is None:
            top = read_head(self.data, start, end, PART_HEADER_LIMIT, search=None)
        msg, body = top
        body = end if body is None else body
        ctype = content_type(msg)
        if ctype in _REPORT_PARTS:
            return Leaf(msg, ctype, self.data, body, end, partial=end == len(self.data))
        if not ctype.startswith("multipart/"):
            return None  # the returned message (message/rfc822) and text parts hold no report
        boundary = params(header_text(msg, "content-type")).get("boundary", "").rstrip()
        if not boundary:
            return None
        for part_start, part_end in parts(self.data, body, end, boundary):
            found = self.find(part_start, part_end, depth + 1)
            if found is not None or self.parts > PART_LIMIT:
                return found
        return None


def _fields_report(text: str, max_recipients: int, *, truncated: bool) -> Report | None:
    """The groups of fields of a delivery-status part: the per-message group first, then one
    per recipient (a group is a run of header-style lines ending at a blank line). One pass."""
    groups = _groups(text, max_recipients + 2)
    if not groups:
        return None
    reporting = ""
    recipients: list[Recipient] = []
    more = truncated
    for group in groups:
        if not any(name in group for name in ("final-recipient", "original-recipient", "action")):
            if not recipients and not reporting:
                reporting = _typed(group.get("reporting-mta", ""))
            continue
        if len(recipients) >= max_recipients:
            more = True
            break
        recipients.append(
            Recipient(
                final_recipient=_address(group.get("final-recipient", "")),
                original_recipient=_address(group.get("original-recipient", "")),
                action=_one_line(group.get("action", ""), 32).lower(),
                status=status_of(group.get("status", "")),
                diagnostic=_one_line(_typed(group.get("diagnostic-code", "")), DIAGNOSTIC_LIMIT),
            )
        )
    if not recipients:
        return None
    return Report("dsn", tuple(recipients), reporting_mta=_one_line(reporting, VALUE_LIMIT), truncated=more)


def _groups(text: str, most: int) -> list[dict[str, str]]:
    """At most *most* groups of fields, names lowercased, the first of each name kept, values
    unfolded (continuation lines joined) and cut to :data:`DIAGNOSTIC_LIMIT` characters."""
    groups: list[dict[str, str]] = []
    group: dict[str, list[str]] = {}
    current: list[str] | None = None  # the value being read: its first line and its continuations
    held = 0  # characters in current

    def close() -> None:
        if group:
            groups.append({name: " ".join(parts)[:DIAGNOSTIC_LIMIT] for name, parts in group.items()})
            group.clear()

    for line in text.splitlines():
        if not line.strip():
            close()
            current = None
            if len(groups) >= most:
                break
            continue
        if line[0] in " \t":
            if current is not None and held < DIAGNOSTIC_LIMIT:
                current.append(line.strip()[:DIAGNOSTIC_LIMIT])
                held += len(current[-1]) + 1
            continue
        name, colon, value = line.partition(":")
        name = name.strip().lower()
        if not colon or not name or " " in name:
            current = None
            continue
        if name in group or len(group) >= FIELD_LIMIT:
            current = None  # the first of each name counts; the rest is skipped
            continue
        current = group[name] = [value.strip()[:DIAGNOSTIC_LIMIT]]
        held = len(current[0])
    close()
    return groups[:most]


def status_of(value: str) -> str:
    """The enhanced status code at the start of *value* ("5.1.1"), else ""."""
    found = _STATUS.match(value[:64])
    return ".".join(found.groups()) if found else ""


def _typed(value: str) -> str:
    """A typed field's value without its type: ``smtp; 550 ...`` -> ``550 ...``."""
    kind, semicolon, rest = value.partition(";")
    return rest.strip() if semicolon and kind.strip() and " " not in kind.strip() else value.strip()


def _address(value: str) -> str:
    """The bare address of ``rfc822; <alice@example.org>``, lowercased, bounded."""
    address = _typed(value).strip().strip("<>").strip().lower()
    return address if "@" in address and len(address) <= VALUE_LIMIT and " " not in address else ""


def _one_line(value: str, limit: int) -> str:
    text = " ".join(value[: limit * 2].split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


# ---------------------------------------------------------------------------- plain bounces


def read_plain_bounce(raw: bytes, head: Headers) -> Report | None:
    """A bounce that is no proper report, as one failure (or delay) of an unnamed recipient,
    else None. A bounce: From a mail system (MAILER-DAEMON@, postmaster@, Exchange's
    MicrosoftExchange...@), or a null return path (or no sender at all) with a bounce's
    subject. A null return path alone is not enough: auto-replies (out of office) use one
    too (RFC 3834), and they are no failure. The status is the first 4.x.x or 5.x.x in the
    first :data:`PLAIN_TEXT_LIMIT` bytes of the body; a 4.x.x, or a delay in the subject,
    makes it a delay. Never raises."""
    try:
        msg = head.message
        sender = head.from_addr
        local = sender.rpartition("@")[0]
        daemon = local in _DAEMONS or local.startswith(_DAEMON_PREFIXES)
        if not daemon:
            paths = msg.get_all("Return-Path") or []
            null_path = bool(paths) and _NULL_PATH.match(str(paths[0]).strip()) is not None
            if not (null_path or not sender) or not _BOUNCE_SUBJECT.search(head.subject[:500]):
                return None
        start = head.body_at if head.body_at is not None else 0
        body = bytes(raw[start : start + PLAIN_TEXT_LIMIT])
        found = _STATUS_IN_TEXT.search(body)
        status, line = "", ""
        if found is not None:
            status = ".".join(part.decode("ascii") for part in found.groups())
            line_start = body.rfind(b"\n", 0, found.start()) + 1
            line_end = body.find(b"\n", found.end())
            line = decode_bytes(body[line_start : line_end if line_end >= 0 else len(body)], "utf-8")
        delayed = status.startswith("4") or (not status and _DELAY_SUBJECT.search(head.subject[:500]) is not None)
        diagnostic = _one_line(line or head.subject, DIAGNOSTIC_LIMIT)
        recipient = Recipient("", action="delayed" if delayed else "failed", status=status, diagnostic=diagnostic)
        return Report("plain", (recipient,), reporting_mta=_one_line(sender, VALUE_LIMIT))
    except Exception:
        return None


def smtp_status(reply: str) -> str:
    """The enhanced status code of an SMTP reply (``550 5.1.1 ...`` -> ``5.1.1``); from its
    basic code when it has none (``550 ...`` -> ``5.0.0``); "" when it has neither."""
    text = reply[:200]
    found = _STATUS_IN_TEXT.search(text.encode("utf-8", "replace"))
    if found is not None:
        return ".".join(part.decode("ascii") for part in found.groups())
    code = _SMTP_CODE.match(text)
    return f"{code.group(1)}.0.0" if code else ""
