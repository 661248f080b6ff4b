"""Mail the referee must never answer (RFC 3834, loops, bounces, lists).

Each rule is a named predicate, checked in the order of :data:`RULES`; the first
that holds gives the reason. :func:`automated_reason` is pure and never raises on
odd headers. Every rule reads headers only, so it works on the header-only message of
:func:`referee.mail.parse.parse_headers`, before any body byte is read; the headers
are indexed once per call and each rule's work is linear in the values it reads.

``X-Auto-Response-Suppress`` is deliberately not a rule: Outlook puts it on
ordinary mail too; it asks *others* not to auto-reply and says nothing about the
mail itself. Subject lines ("Automatic reply:", "Out of office") are not used
either: players may write anything there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email.message import Message
from typing import Callable, Iterable

from referee.mail.headers import decode_words, header_index, header_values, indexed_addresses, indexed_values

__all__ = ["LOOP_HEADER", "RULES", "automated_reason", "normalise_address"]

LOOP_HEADER = "X-Referee-Loop"

AUTO_SUBMITTED_LIMIT = 1024  # characters of an Auto-Submitted value read for its keyword


@dataclass(frozen=True)
class _Context:
    own_addresses: frozenset[str]
    loop_value: str
    headers: dict[str, list[str]] = field(default_factory=dict)  # raw values by lowercased name
    cache: dict[str, object] = field(default_factory=dict)

    def values(self, name: str) -> tuple[str, ...]:
        """Every value of header *name*, decoded and unfolded (as ``header_values``)."""
        key = name.lower()
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = tuple(decode_words(v) for v in indexed_values(self.headers, key))
        return found  # type: ignore[return-value]

    def has(self, name: str) -> bool:
        return bool(self.headers.get(name.lower()))

    def sender(self) -> str | None:
        """The normalised first From address, or None without one."""
        if "sender" not in self.cache:
            senders = indexed_addresses(self.headers, "from")
            self.cache["sender"] = normalise_address(senders[0][1]) if senders else None
        return self.cache["sender"]  # type: ignore[return-value]


Rule = Callable[[Message, _Context], bool]


def automated_reason(msg: Message, own_addresses: Iterable[str], loop_value: str) -> str | None:
    """The name of the first rule saying *msg* must not be answered, else None."""
    ctx = _Context(
        own_addresses=frozenset(normalise_address(a) for a in own_addresses) - {""},
        loop_value=loop_value.strip(),
        headers=header_index(msg),
    )
    for name, rule in RULES:
        try:
            if rule(msg, ctx):
                return name
        except Exception:  # a rule that cannot read the mail has nothing to say
            continue
    return None


def normalise_address(address: str) -> str:
    """Bare address (no display name), lowercased, without ``+detail`` in the local part."""
    address = address.strip().strip("<>").strip().lower()
    local, at, domain = address.rpartition("@")
    if not at:
        return address.split("+", 1)[0]
    return f"{local.split('+', 1)[0]}@{domain}"


def _content_type(part: Message) -> str:
    try:
        return part.get_content_type()
    except Exception:
        return ""


def _our_loop_header(msg: Message, ctx: _Context) -> bool:
    return bool(ctx.loop_value) and any(v == ctx.loop_value for v in ctx.values(LOOP_HEADER))


def _own_address(msg: Message, ctx: _Context) -> bool:
    return ctx.sender() in ctx.own_addresses


def _delivery_report(msg: Message, ctx: _Context) -> bool:
    # From the top-level Content-Type alone: the body (and its parts) is not read yet.
    return _content_type(msg) in _REPORT_TYPES


def _auto_submitted(msg: Message, ctx: _Context) -> bool:
    # RFC 3834 section 5: any value but "no" marks automatic mail.
    return any(not is_human_auto_submitted(v) for v in ctx.values("Auto-Submitted"))


def is_human_auto_submitted(value: str) -> bool:
    """Is this Auto-Submitted value ``no`` (RFC 3834 section 5.1)? Comments and
    whitespace around the keyword and parameters after a ``;`` are allowed:
    ``No``, `` no ``, ``no;``, ``no (a comment)``, ``(sent by hand) no``."""
    keyword = _uncommented_keyword(value[:AUTO_SUBMITTED_LIMIT])
    return keyword is not None and keyword.lower() == "no"


def _uncommented_keyword(value: str) -> str | None:
    """The text before the first ``;`` outside comments, comments (nested, with
    ``\\`` quoting) removed and whitespace stripped; None when a comment is never
    closed. One pass over the value's specials."""
    kept: list[str] = []
    depth = start = 0
    skip = -1
    for special in _COMMENT_SPECIALS.finditer(value):
        at = special.start()
        if at == skip:
            continue
        char = special.group()
        if depth:  # inside a comment
            if char == "\\":
                skip = at + 1  # a quoted pair: the next character is plain
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if not depth:
                    start = at + 1
        elif char == ";":
            kept.append(value[start:at])
            return "".join(kept).strip()
        elif char == "(":
            kept.append(value[start:at])
            depth = 1
        # a ")" or "\\" outside a comment is a character of the keyword
    if depth:
        return None
    kept.append(value[start:])
    return "".join(kept).strip()


def _autoresponder_header(msg: Message, ctx: _Context) -> bool:
    return any(ctx.has(name) and ctx.values(name) for name in _AUTORESPONDER_HEADERS)


def _precedence(msg: Message, ctx: _Context) -> bool:
    return any(v.strip().lower() in _BULK_PRECEDENCE for v in ctx.values("Precedence"))


def _list_traffic(msg: Message, ctx: _Context) -> bool:
    return any(ctx.has(name) and ctx.values(name) for name in _LIST_HEADERS)


def _null_return_path(msg: Message, ctx: _Context) -> bool:
    paths = ctx.values("Return-Path")
    return bool(paths) and _NULL_PATH.match(paths[0]) is not None  # the topmost is the last hop's


def _mailer_daemon(msg: Message, ctx: _Context) -> bool:
    sender = ctx.sender()
    if sender is None:
        return False
    local, at, _ = sender.rpartition("@")
    return (local if at else sender) in _DAEMON_LOCAL_PARTS


_COMMENT_SPECIALS = re.compile(r"[();\\]")
_REPORT_TYPES = frozenset(
    {
        "multipart/report",  # RFC 6522: DSNs, MDNs
        "message/delivery-status",  # RFC 3464
        "message/global-delivery-status",  # RFC 6533
        "message/disposition-notification",  # RFC 8098 read receipts
    }
)
_AUTORESPONDER_HEADERS = ("X-Autoreply", "X-Autorespond", "X-Autoresponder")
_BULK_PRECEDENCE = frozenset({"bulk", "list", "junk", "auto_reply", "auto-reply"})
_LIST_HEADERS = (
    "List-Id",
    "List-Unsubscribe",
    "List-Post",
    "List-Help",
    "List-Subscribe",
    "List-Owner",
    "List-Archive",
    "X-Mailing-List",
    "Mailing-List",
)
_NULL_PATH = re.compile(r"^<\s*+>$")
_DAEMON_LOCAL_PARTS = frozenset(
    {
        "mailer-daemon",
        "mailer_daemon",
        "mailerdaemon",
        "postmaster",
        "noreply",
        "no-reply",
        "no_reply",
        "donotreply",
        "do-not-reply",
        "do_not_reply",
    }
)

RULES: tuple[tuple[str, Rule], ...] = (
    ("our-loop-header", _our_loop_header),
    ("own-address", _own_address),
    ("delivery-report", _delivery_report),
    ("auto-submitted", _auto_submitted),
    ("autoresponder-header", _autoresponder_header),
    ("precedence", _precedence),
    ("list-traffic", _list_traffic),
    ("null-return-path", _null_return_path),
    ("mailer-daemon", _mailer_daemon),
)


_DMARC_FAIL = re.compile(r"\bdmarc\s*+=\s*+fail\b", re.IGNORECASE)


def sender_authentication_failed(msg: Message) -> bool:
    """True when a receiving MTA recorded that the From domain's DMARC check failed
    (``Authentication-Results: ...; dmarc=fail``, RFC 8601 / RFC 7489).

    Only a failure is used: a sender can add such a header itself, but a forged *fail*
    only hurts the forger, whereas a forged *pass* would be worth nothing to trust. Only
    the topmost header counts: it is the one our MTA prepended on arrival (RFC 8601
    section 5); those below it were written on the way here, e.g. by a forwarder, and say
    nothing about the mail as it reached us.
    """
    results = header_values(msg, "Authentication-Results")
    return bool(results) and _DMARC_FAIL.search(results[0]) is not None
