"""Who a mail speaks for, judged on its headers alone, before any body is read.

A mail speaks for a seat only when BOTH hold: it went to that seat's personal reply
address (``referee+<token>@domain``, the token signed with the server secret) and it
came from the seat player's registered address (a seat whose player has none, a silent
seat, is never claimed by a mail), with no DMARC failure recorded by our MTA; and, when
``[mail] trusted_authserv_id`` names our receiving server, that server's
Authentication-Results header shows a pass for the From domain (:mod:`referee.mail.authres`).
Everything else is a :class:`Claim` of another kind, which the service answers
(to the registered address only) or ignores, and never obeys.

The organizer's mail is judged the same way: it is the organizer's (an ``organizer`` claim,
its commands read by :mod:`referee.season.orders`) only when it went to the organizer's
command address (``referee+<token>@domain``, the token of seat id 0 signed for ``[mail]
organizer``: :func:`referee.mail.tokens.organizer_address`) AND came from exactly that
address, with no DMARC failure and, with ``trusted_authserv_id``, a pass of the trusted
server. A mail to the command address that fails any of these is ``not-organizer``: never
obeyed, never answered (its From may be forged), whatever else it is addressed to.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal

from referee.mail import authres, guards, tokens
from referee.mail.parse import Headers

__all__ = ["Claim", "authenticate", "from_is_group", "general_sender", "names_a_group"]

Kind = Literal["seat", "organizer", "not-organizer", "spoofed", "damaged", "general"]


@dataclass(frozen=True)
class Claim:
    """``seat``: obey it, for ``seat``. ``spoofed``: a genuine reply address of ``seat``, but
    not from its player (``found`` is what the From said, "" when nothing usable). ``damaged``:
    sent to a personal reply address whose token is not valid (``address`` as found).
    ``general``: sent to the general address only. ``organizer``: obey it, as the organizer's
    commands. ``not-organizer``: sent to the organizer's genuine command address, but not from
    the organizer (``found``), or with ``dmarc_failed`` or ``unconfirmed``."""

    kind: Kind
    seat: Any = None  # the ORM Seat (with .match and .player) for "seat" and "spoofed"
    found: str = ""
    address: str = ""
    dmarc_failed: bool = False  # spoofed: the From was right, but our MTA recorded a DMARC failure
    # spoofed: the From was right, but the trusted server's Authentication-Results did not confirm it
    unconfirmed: bool = False


def authenticate(
    headers: Headers,
    *,
    secret: bytes,
    local: str,
    domain: str,
    find_seat: Callable[[int], Any],
    trusted_authserv_id: str | Collection[str] | None = None,
    organizer: str | None = None,
) -> Claim:
    """Judge *headers*. ``find_seat(seat_id)`` returns the seat or None; it is called once per
    token (at most ``tokens.MAX_TOKENS``), with an id in the range of real seats (no mail
    can make it query an absurd id). With ``trusted_authserv_id``, a mail from the right
    address is the seat's only if :func:`referee.mail.authres.sender_confirmed` says so.
    ``organizer``: ``[mail] organizer`` (None: no mail is the organizer's)."""
    found = tokens.tokens_from_addresses(headers.to_addrs, local, domain)
    if not found:
        detail = tokens.detail_addresses(headers.to_addrs, local, domain)
        return Claim("damaged", address=detail[0]) if detail else Claim("general")
    # The organizer's genuine command address among the recipients decides, whatever else
    # the mail is addressed to: the organizer's, or never obeyed.
    if organizer and any(tokens.is_organizer_token(secret, token, organizer) for token in found):
        return _organizer(headers, organizer, trusted_authserv_id)
    # Every genuine token among the recipients: the one of the sender's own seat wins (a mail
    # Cc'd to the other player's reply address is still the sender's own).
    genuine = []
    for token in found:
        seat_id, _ = tokens.split_token(token)  # well-formed, so never None
        if seat_id == tokens.ORGANIZER_SEAT:
            continue  # no seat has id 0: a command address that is not the organizer's is damaged
        seat = find_seat(seat_id)
        if seat is not None and tokens.verify_token(secret, token, seat.match.key, seat.player.key):
            genuine.append(seat)
    if not genuine:
        return Claim("damaged", address=f"{local}+{found[0]}@{domain}")
    group = from_is_group(headers)
    for seat in genuine:
        # a seat whose player has no address (a silent seat) is never claimed by a mail
        address = seat.player.email
        if address is not None and headers.from_count == 1 and headers.from_addr == address.lower() and not group:
            if guards.sender_authentication_failed(headers.message):
                return Claim("spoofed", seat=seat, found=headers.from_header, dmarc_failed=True)
            if trusted_authserv_id and not authres.sender_confirmed(
                headers.message, trusted_authserv_id, headers.from_addr.rpartition("@")[2]
            ):
                return Claim("spoofed", seat=seat, found=headers.from_header, unconfirmed=True)
            return Claim("seat", seat=seat)
    return Claim("spoofed", seat=genuine[0], found=headers.from_header)


def _organizer(headers: Headers, organizer: str, trusted_authserv_id: str | Collection[str] | None) -> Claim:
    """A mail to the organizer's genuine command address: the organizer's only from exactly
    the organizer's address (one From, not a group), with no DMARC failure and, with a
    trusted server, its pass; else ``not-organizer``."""
    found = headers.from_header
    if headers.from_count != 1 or headers.from_addr != organizer.strip().lower() or from_is_group(headers):
        return Claim("not-organizer", found=found)
    if guards.sender_authentication_failed(headers.message):
        return Claim("not-organizer", found=found, dmarc_failed=True)
    if trusted_authserv_id and not authres.sender_confirmed(
        headers.message, trusted_authserv_id, headers.from_addr.rpartition("@")[2]
    ):
        return Claim("not-organizer", found=found, unconfirmed=True)
    return Claim("organizer")


def general_sender(headers: Headers, trusted_authserv_id: str | Collection[str] | None = None) -> str:
    """How far a mail to the general address (no token) may be taken for its From's, for the
    players' commands (:mod:`referee.pipeline.player_commands`): ``"ok"`` when it has one
    From, not a group, no DMARC failure recorded and, with a trusted server, its pass (the
    checks a seat's mail passes besides its token); else ``"dmarc-failed"``,
    ``"unconfirmed"`` or ``"no-sender"``. The caller still looks the From up among the
    registered addresses, and answers only there."""
    if headers.from_count != 1 or not headers.from_addr or from_is_group(headers):
        return "no-sender"
    if guards.sender_authentication_failed(headers.message):
        return "dmarc-failed"
    if trusted_authserv_id and not authres.sender_confirmed(
        headers.message, trusted_authserv_id, headers.from_addr.rpartition("@")[2]
    ):
        return "unconfirmed"
    return "ok"


def from_is_group(headers: Headers) -> bool:
    """Is the From a group? Judged on the header as written (encoded words still encoded:
    a colon inside one is text, not a group's), bounded."""
    try:
        values = headers.message.get_all("From") or []
    except Exception:
        return False
    return names_a_group(" ".join(str(value) for value in values)[:2000])


def names_a_group(value: str) -> bool:
    """Is this From a group (``name: addr, ...;``)? RFC 5322 allows only mailboxes in From,
    so a group, even one holding the registered address, is not the player's own mail.
    One pass: quoted strings, comments and angle addresses are skipped."""
    if ":" not in value:
        return False  # only a colon outside them makes a group
    depth, quoted, angle, escaped = 0, False, False, False
    for char in value:
        if escaped:
            escaped = False
        elif char == "\\" and (quoted or depth):
            escaped = True
        elif quoted:
            quoted = char != '"'
        elif depth:
            depth += {"(": 1, ")": -1}.get(char, 0)
        elif angle:
            angle = char != ">"
        elif char == '"':
            quoted = True
        elif char == "(":
            depth = 1
        elif char == "<":
            angle = True
        elif char == ":":
            return True
    return False
