"""Personal reply addresses carrying a signed seat token.

A token is ``base36(seat_id) + "x" + signature`` where the signature is the first
13 characters of the lowercase base32 HMAC-SHA256 of the seat, match and player.
Tokens use lowercase letters and digits only, so they survive MTAs that fold the
case of local parts; they are compared case-insensitively.

The seat part may itself contain an ``x`` (base36 digit); the signature has a
fixed length, so a token is split from the right.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import re
from typing import Iterable

__all__ = [
    "ORGANIZER_SEAT",
    "is_organizer_token",
    "make_token",
    "organizer_address",
    "organizer_token",
    "reply_address",
    "detail_addresses",
    "split_token",
    "token_from_addresses",
    "tokens_from_addresses",
    "verify_token",
]

SIGNATURE_LENGTH = 13
MAX_LOCAL_PART = 64  # RFC 5321 section 4.5.3.1.1
# Seat ids are database ids; a token naming a larger one is not ours (and must not reach a
# query: SQLite refuses integers past 2**63, PostgreSQL's integer column past 2**31).
MAX_SEAT_ID = 2**31 - 1
MAX_TOKENS = 8  # tokens of one mail looked at (one player's seats, or a mail Cc'd to both seats)
# The detail of the outbox's bounce addresses (``local+bounce-<outbox id>-<signature>@domain``,
# :mod:`referee.mail.bounces`): never a seat token (a token has no "-"), never a reply address.
BOUNCE_DETAIL = "bounce-"

# The organizer's command address (:func:`organizer_address`) carries a token of seat id 0,
# which no seat has (database ids start at 1), signed for this match key and the organizer's
# address: a seat's token never verifies as the organizer's, nor the organizer's as a seat's.
ORGANIZER_SEAT = 0
ORGANIZER_MATCH = "organizer"

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_SEAT = re.compile(r"0|[1-9a-z][0-9a-z]{0,12}")
_SIGNATURE = re.compile(rf"[a-z2-7]{{{SIGNATURE_LENGTH}}}")


def make_token(secret: bytes, seat_id: int, match_key: str, player_key: str) -> str:
    """The token for one player's seat in one match."""
    if seat_id < 0:
        raise ValueError(f"seat id must not be negative: {seat_id}")
    return f"{_base36(seat_id)}x{_signature(secret, seat_id, match_key, player_key)}"


def split_token(token: str) -> tuple[int, str] | None:
    """``(seat_id, signature)`` of a well-formed token (any case), else None."""
    token = token.strip().lower()
    head, signature = token[:-SIGNATURE_LENGTH], token[-SIGNATURE_LENGTH:]
    seat = head[:-1]
    well_formed = head.endswith("x") and _SEAT.fullmatch(seat) and _SIGNATURE.fullmatch(signature)
    if not well_formed:
        return None
    seat_id = int(seat, 36)  # at most 13 base36 digits: cheap
    if seat_id > MAX_SEAT_ID:
        return None
    return seat_id, signature


def verify_token(secret: bytes, token: str, match_key: str, player_key: str) -> bool:
    """Is *token* the genuine token of its seat for this match and player?"""
    parts = split_token(token)
    if parts is None:
        return False
    seat_id, signature = parts
    expected = _signature(secret, seat_id, match_key, player_key)
    return hmac.compare_digest(expected.encode("ascii"), signature.encode("ascii"))


def reply_address(local: str, domain: str, token: str) -> str:
    """``local+token@domain``; raises ValueError if the local part would exceed 64 octets."""
    local_part = f"{local}+{token}"
    if len(local_part.encode("utf-8")) > MAX_LOCAL_PART:
        raise ValueError(f"local part longer than {MAX_LOCAL_PART} octets: {local_part!r}")
    return f"{local_part}@{domain}"


def organizer_token(secret: bytes, organizer: str) -> str:
    """The token of the organizer's command address, for ``[mail] organizer`` *organizer*."""
    return make_token(secret, ORGANIZER_SEAT, ORGANIZER_MATCH, organizer.strip().lower())


def organizer_address(secret: bytes, local: str, domain: str, organizer: str) -> str:
    """The organizer's command address, ``local+<token>@domain``: mail to it from the
    organizer's own address is read as the organizer's commands (:mod:`referee.season.orders`)."""
    return reply_address(local, domain, organizer_token(secret, organizer))


def is_organizer_token(secret: bytes, token: str, organizer: str | None) -> bool:
    """Is *token* the genuine token of the command address of *organizer* (None: no
    organizer is configured, so no token is)?"""
    parts = split_token(token)
    if organizer is None or parts is None or parts[0] != ORGANIZER_SEAT:
        return False
    return verify_token(secret, token, ORGANIZER_MATCH, organizer.strip().lower())


def tokens_from_addresses(addrs: Iterable[str], local: str, domain: str) -> list[str]:
    """The tokens of every ``local+token@domain`` among *addrs* (case-insensitive), in order,
    once each, lowercased. Addresses whose detail part is not a well-formed token are skipped;
    at most ``limit`` are returned (a mail may list thousands of addresses)."""
    found: dict[str, None] = {}
    for address in detail_addresses(addrs, local, domain):
        token = address.rpartition("@")[0][len(local.strip().lower()) + 1 :]
        if split_token(token) is not None:
            found.setdefault(token)
            if len(found) >= MAX_TOKENS:
                break
    return list(found)


def token_from_addresses(addrs: Iterable[str], local: str, domain: str) -> str | None:
    """The first of :func:`tokens_from_addresses`, or None."""
    found = tokens_from_addresses(addrs, local, domain)
    return found[0] if found else None


def detail_addresses(addrs: Iterable[str], local: str, domain: str) -> list[str]:
    """The ``local+detail@domain`` addresses among *addrs* (lowercased): mail that was meant
    for a personal reply address, whether or not its token survived the way here. Bounce
    addresses (``local+bounce-...@domain``) are not among them: they are no reply address,
    damaged or not (:mod:`referee.mail.bounces` reads them)."""
    prefix = f"{local.strip().lower()}+"
    bounce = prefix + BOUNCE_DETAIL
    domain = domain.strip().lower()
    found = []
    for addr in addrs:
        local_part, at, addr_domain = addr.strip().strip("<>").strip().lower().rpartition("@")
        if at and addr_domain == domain and local_part.startswith(prefix) and not local_part.startswith(bounce):
            found.append(f"{local_part}@{addr_domain}")
    return found


@functools.lru_cache(maxsize=32768)  # a seat's token is made for every mail to it and checked on every reply
def _signature(secret: bytes, seat_id: int, match_key: str, player_key: str) -> str:
    message = f"{seat_id}\0{match_key}\0{player_key}".encode("utf-8")
    digest = hmac.digest(secret, message, hashlib.sha256)
    # base32 encodes 5 bytes at a time: the first 10 bytes give the first 16 characters
    return base64.b32encode(digest[:10]).decode("ascii").lower()[:SIGNATURE_LENGTH]


def _base36(number: int) -> str:
    digits = []
    while True:
        number, remainder = divmod(number, 36)
        digits.append(_DIGITS[remainder])
        if not number:
            return "".join(reversed(digits))
