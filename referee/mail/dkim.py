"""DKIM signing of outbound mail (RFC 6376, with dkimpy), when ``[dkim]`` configures a key.

Every mail is signed as it is handed to the transport (:class:`referee.pipeline.deliver.Delivery`),
whatever the transport: the outbox row keeps the message as it was composed, and each delivery
attempt signs a copy of it. The signature is ``rsa-sha256`` with relaxed/relaxed
canonicalization (header and body), so that the usual rewrapping on the way (header folding,
trailing whitespace) does not break it; the signed headers are, by default, those RFC 6376
recommends that the mail has (From, To, Subject, Date, Message-ID, In-Reply-To, References,
Reply-To, MIME-Version, Content-Type, ...), with From signed once more so that no second From
can be added.

dkimpy computes RSA in Python (about 20 ms a mail with a 2048-bit key): the outbox signs in a
worker thread, one mail at a time as it sends them.

The key is read and checked when the configuration is loaded (:func:`load_private_key`), so a
missing, unreadable or unparsable key file stops the service at start with one line, not at
the first mail. dkimpy is imported only where a key is configured.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.mail.transport import OutboundMail

__all__ = [
    "CANONICALIZATION",
    "DkimError",
    "DkimSettings",
    "DkimSigner",
    "check_headers",
    "check_selector",
    "load_private_key",
]

CANONICALIZATION = (b"relaxed", b"relaxed")
ALGORITHM = b"rsa-sha256"
KEY_FILE_LIMIT = 64 * 1024  # bytes of a key file read (an RSA key in PEM is a few KiB)
_SELECTOR = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62}))*$")
_HEADER_NAME = re.compile(r"^[\x21-\x39\x3b-\x7e]{1,76}$")  # RFC 5322 field name: printable, no colon
# a test mail signed when the key is loaded: every check dkimpy makes is made once, at start
_PROBE = b"From: probe@example.org\r\nTo: probe@example.org\r\nSubject: probe\r\n\r\nprobe\r\n"


@dataclass(frozen=True)
class DkimSettings:
    """``[dkim]``: the key outbound mail is signed with (:mod:`referee.mail.dkim`)."""

    selector: str  # the DNS name of the public key is <selector>._domainkey.<domain>
    domain: str  # the signing domain (d=): by default the domain of [mail] address
    key_file: Path
    private_key: bytes = field(default=b"", repr=False)  # PEM, read and checked at load; never shown
    headers: tuple[str, ...] | None = None  # header names to sign (None: RFC 6376's recommended ones)


class DkimError(ValueError):
    """A key or a setting dkimpy cannot sign with (said in one line)."""


def load_private_key(path: Path) -> bytes:
    """The PEM RSA private key (PKCS#1 ``RSA PRIVATE KEY`` or unencrypted PKCS#8 ``PRIVATE
    KEY``, as ``openssl genrsa`` writes them) in *path*, checked by parsing it; raises
    :class:`DkimError` (or ``OSError`` for a file that cannot be read)."""
    with open(path, "rb") as fh:
        data = fh.read(KEY_FILE_LIMIT + 1)
    if len(data) > KEY_FILE_LIMIT:
        raise DkimError(f"larger than {KEY_FILE_LIMIT} bytes: not a PEM private key")
    data = data.replace(b"\r\n", b"\n")  # dkimpy's PEM reader wants plain line ends
    if b"ENCRYPTED" in data:
        raise DkimError("the key is encrypted: give an unencrypted key (openssl genrsa writes one)")
    if b"-----BEGIN" not in data:
        raise DkimError("not a PEM private key (no -----BEGIN line)")
    from dkim.crypto import UnparsableKeyError, parse_pem_private_key

    try:
        key = parse_pem_private_key(data)
    except (UnparsableKeyError, ValueError, TypeError, IndexError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DkimError(f"not an RSA private key dkimpy can read ({first})") from None
    bits = int(key["modulus"]).bit_length()
    if bits < 1024:
        raise DkimError(f"the RSA key has {bits} bits; receivers ignore keys below 1024 bits (use 2048)")
    return data


def check_headers(names: Sequence[str]) -> tuple[str, ...]:
    """The header names to sign, lowercased, checked: From must be among them (RFC 6376
    section 5.4), and none that changes on the way (Received, Return-Path, ...)."""
    import dkim

    found = []
    for name in names:
        if not isinstance(name, str) or not _HEADER_NAME.match(name.strip()):
            raise DkimError(f"{name!r} is not a header name")
        found.append(name.strip().lower())
    if "from" not in found:
        raise DkimError('the headers to sign must include "From"')
    for name in found:
        if name.encode() in dkim.DKIM.SHOULD_NOT:
            raise DkimError(f'"{name}" changes on the way and must not be signed')
    return tuple(found)


def check_selector(selector: str) -> str:
    if not _SELECTOR.match(selector):
        raise DkimError(f"selector {selector!r} must be DNS labels (letters, digits, '-', '_', dots between)")
    return selector


@dataclass(frozen=True)
class DkimSigner:
    """Signs a whole message (bytes, CRLF line ends) for ``domain`` with ``selector``."""

    selector: str
    domain: str
    private_key: bytes = field(repr=False)
    headers: tuple[str, ...] | None = None  # None: those RFC 6376 recommends, as dkimpy picks them

    @classmethod
    def from_settings(cls, settings: DkimSettings) -> DkimSigner:
        return cls(settings.selector, settings.domain, settings.private_key, settings.headers)

    def signature(self, message: bytes) -> bytes:
        """The ``DKIM-Signature`` header field for *message* (folded, ending in CRLF)."""
        import dkim

        try:
            return dkim.sign(
                message,
                self.selector.encode("ascii"),
                self.domain.encode("ascii"),
                self.private_key,
                canonicalize=CANONICALIZATION,
                signature_algorithm=ALGORITHM,
                include_headers=None if self.headers is None else [name.encode("ascii") for name in self.headers],
                linesep=b"\r\n",
            )
        except dkim.DKIMException as exc:
            raise DkimError(f"{type(exc).__name__}: {exc}") from None

    def sign(self, message: bytes) -> bytes:
        """*message* with its signature on top (a new object: *message* is left as it was)."""
        return self.signature(message) + message

    def sign_mail(self, mail: OutboundMail) -> OutboundMail:
        """A copy of *mail* whose data is signed."""
        return replace(mail, data=self.sign(mail.data))

    def check(self) -> None:
        """Sign a test mail: raises :class:`DkimError` where dkimpy would refuse every mail."""
        self.signature(_PROBE)
