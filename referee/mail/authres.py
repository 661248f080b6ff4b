"""Authentication-Results (RFC 8601): what a receiving server found when the mail arrived.

:func:`parse` reads one header value: the ``authserv-id`` (the name of the server that wrote
it), then each ``method=result`` with its properties (``header.from=``, ``header.d=``,
``smtp.mailfrom=``, ...). Comments (nested, with quoted pairs) are skipped, quoted strings
read whole (a ``;`` inside one separates nothing), the rest taken leniently: a word that is
not ``name=value`` is skipped. One pass, left to right, every step consuming at least one
character; at most :data:`VALUE_LIMIT` characters of the value and :data:`RESULT_LIMIT`
results are read, so the work is linear and bounded whatever the header holds.

:func:`sender_confirmed` is the check ``[mail] trusted_authserv_id`` turns on: the topmost
Authentication-Results header (the one the last server, ours, prepended; those below it were
written on the way, or by the sender) must carry the trusted authserv-id and show one of

* ``dmarc=pass`` with ``header.from`` equal to the From domain;
* ``dkim=pass`` with ``header.d`` (else the domain of ``header.i``) aligned with it;
* ``spf=pass`` with ``smtp.mailfrom`` (an address or a domain) aligned with it.

*Aligned* (:func:`aligned`) is the same domain, or one a subdomain of the other
(``mail.example.org`` and ``example.org``). Without a public suffix list this is stricter than
DMARC's relaxed alignment in one way: two sibling subdomains (``a.example.org`` and
``b.example.org``) do not align; and it never aligns two domains across a public suffix
(``alice.co.uk`` and ``eve.co.uk``), as a rule of "the last two labels" would.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from email.message import Message

from referee.mail.headers import raw_header

__all__ = ["AuthResults", "MethodResult", "aligned", "parse", "sender_confirmed", "topmost"]

VALUE_LIMIT = 8 * 1024  # characters of one header value read
RESULT_LIMIT = 64  # method results read from one header
PROPERTY_LIMIT = 32  # properties kept per result

_SPACE = frozenset(" \t\r\n")
_KEYWORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_PROPERTY = _KEYWORD | frozenset(".")
_DIGITS = frozenset("0123456789")
_VALUE_END = _SPACE | frozenset(";()")


@dataclass(frozen=True)
class MethodResult:
    """One ``method=result``: both lowercased (``dkim``, ``pass``), the method without its
    version; ``properties`` as ``(ptype.property lowercased, value as written)``."""

    method: str
    result: str
    properties: tuple[tuple[str, str], ...] = ()
    reason: str = ""

    def get(self, name: str) -> str | None:
        """The first value of property *name* (``header.from``), else None."""
        for key, value in self.properties:
            if key == name:
                return value
        return None


@dataclass(frozen=True)
class AuthResults:
    """A parsed header. ``authserv_id`` is lowercased; None when the header names none (a
    header that begins with a result, as Exchange Online writes it)."""

    authserv_id: str | None
    results: tuple[MethodResult, ...] = ()
    version: str | None = None


class _Scanner:
    __slots__ = ("text", "at", "end")

    def __init__(self, text: str):
        self.text, self.at, self.end = text, 0, len(text)

    def peek(self) -> str:
        return self.text[self.at] if self.at < self.end else ""

    def skip_cfws(self) -> None:
        """Whitespace and comments (nested; a backslash quotes the next character). A comment
        never closed runs to the end."""
        text, end = self.text, self.end
        while self.at < end:
            char = text[self.at]
            if char in _SPACE:
                self.at += 1
            elif char == "(":
                depth = 0
                while self.at < end:
                    char = text[self.at]
                    self.at += 1
                    if char == "\\":
                        self.at += 1
                    elif char == "(":
                        depth += 1
                    elif char == ")":
                        depth -= 1
                        if not depth:
                            break
                self.at = min(self.at, end)  # a quoted pair at the very end
            else:
                return

    def run(self, allowed: frozenset[str]) -> str:
        start, text, end = self.at, self.text, self.end
        while self.at < end and text[self.at] in allowed:
            self.at += 1
        return text[start : self.at]

    def value(self) -> str:
        """A value up to whitespace, ``;`` or a comment; quoted strings in it read whole (their
        quotes and quoted pairs removed), so ``"a b"@example.org`` is one value."""
        text, end = self.text, self.end
        out: list[str] = []
        start = self.at
        while self.at < end:
            char = text[self.at]
            if char == '"':
                out.append(text[start : self.at])
                self.at += 1
                chars: list[str] = []
                while self.at < end and text[self.at] != '"':
                    if text[self.at] == "\\" and self.at + 1 < end:
                        self.at += 1
                    chars.append(text[self.at])
                    self.at += 1
                self.at = min(self.at + 1, end)  # the closing quote, if there is one
                out.append("".join(chars))
                start = self.at
            elif char in _VALUE_END:
                break
            else:
                self.at += 1
        out.append(text[start : self.at])
        return "".join(out)

    def to_next_result(self) -> None:
        """Past whatever is left of this result, up to its ``;`` (quotes and comments respected)."""
        while self.at < self.end:
            self.skip_cfws()
            if self.peek() in ("", ";"):
                return
            before = self.at
            self.value()
            if self.at == before:
                self.at += 1  # a stray character ")": never stand still


def parse(value: str) -> AuthResults:
    """One Authentication-Results value (see the module's docstring). Never raises."""
    scan = _Scanner(value[:VALUE_LIMIT])
    scan.skip_cfws()
    start = scan.at
    authserv_id: str | None = scan.value()
    version = None
    if not authserv_id or "=" in authserv_id:  # no authserv-id: the header begins with a result
        authserv_id, scan.at = None, start
        first = True
    else:
        authserv_id = authserv_id.lower()
        scan.skip_cfws()
        if scan.peek() in _DIGITS:
            version = scan.run(_DIGITS)
        first = False
    results: list[MethodResult] = []
    while scan.at < scan.end and len(results) < RESULT_LIMIT:
        scan.skip_cfws()
        if not first:
            if scan.peek() != ";":
                scan.to_next_result()
                if scan.peek() != ";":
                    break
            scan.at += 1  # the ";"
        first = False
        result = _result(scan)
        if result is not None:
            results.append(result)
    return AuthResults(authserv_id, tuple(results), version)


def _result(scan: _Scanner) -> MethodResult | None:
    """``method[/version] = result [reason=...] [ptype.property=value ...]``, up to the next ``;``."""
    scan.skip_cfws()
    method = scan.run(_KEYWORD).lower()
    scan.skip_cfws()
    if method and scan.peek() == "/":
        scan.at += 1
        scan.skip_cfws()
        scan.run(_DIGITS)
        scan.skip_cfws()
    if not method or scan.peek() != "=":  # "none" (no result at all), or not a result
        scan.to_next_result()
        return None
    scan.at += 1
    scan.skip_cfws()
    outcome = scan.run(_KEYWORD).lower()
    if not outcome:
        scan.to_next_result()
        return None
    reason = ""
    properties: list[tuple[str, str]] = []
    while scan.at < scan.end:
        scan.skip_cfws()
        if scan.peek() in ("", ";"):
            break
        before = scan.at
        name = scan.run(_PROPERTY).lower()
        scan.skip_cfws()
        if not name or scan.peek() != "=":
            if not name:
                scan.value()
                if scan.at == before:
                    scan.at += 1
            continue  # a word that is no property: skipped
        scan.at += 1
        scan.skip_cfws()
        found = scan.value()
        if name == "reason":
            reason = found
        elif len(properties) < PROPERTY_LIMIT:
            properties.append((name, found))
    return MethodResult(method, outcome, tuple(properties), reason)


def topmost(msg: Message) -> AuthResults | None:
    """The topmost Authentication-Results header of *msg*, parsed; None without one."""
    values = raw_header(msg, "Authentication-Results")
    return parse(values[0]) if values else None


def aligned(domain: str, from_domain: str) -> bool:
    """Does *domain* (a DKIM ``d=``, an SPF MAIL FROM domain) align with the From domain: the
    same, or one a subdomain of the other (never a bare top-level domain)."""
    a, b = _domain(domain), _domain(from_domain)
    if not a or not b:
        return False
    if a == b:
        return True
    shorter, longer = (a, b) if len(a) < len(b) else (b, a)
    return "." in shorter and longer.endswith("." + shorter)


def _domain(value: str | None) -> str:
    """The domain of an address or a domain (``@example.org`` too), lowercased, no final dot."""
    if not value:
        return ""
    return value.rpartition("@")[2].strip().strip("<>").strip().rstrip(".").lower()


def sender_confirmed(msg: Message, authserv_id: str | Collection[str], from_domain: str) -> bool:
    """Does the topmost Authentication-Results header, written by *authserv_id* (or one of
    several), show a pass for *from_domain* (see the module's docstring)?"""
    trusted = {authserv_id} if isinstance(authserv_id, str) else set(authserv_id)
    top = topmost(msg)
    if top is None or top.authserv_id is None or top.authserv_id not in {name.strip().lower() for name in trusted}:
        return False
    domain = _domain(from_domain)
    if not domain:
        return False
    for result in top.results:
        if result.result != "pass":
            continue
        if result.method == "dmarc":
            if _domain(result.get("header.from")) == domain:
                return True
        elif result.method == "dkim":
            if aligned(result.get("header.d") or result.get("header.i") or "", domain):
                return True
        elif result.method == "spf":
            if aligned(result.get("smtp.mailfrom") or "", domain):
                return True
    return False
