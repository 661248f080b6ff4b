"""TLS for the mail transports (IMAP in, SMTP out).

* :func:`client_context`: the server's certificate is verified by default (the chain and
  the host name), against the system's CAs or, with ``ca_file``, against that file's CAs
  only (a private CA); TLS 1.2 at least. ``validate_certs = false`` turns the checks off
  (a test server with a self-made certificate; never for a real provider).
* :func:`certificate_failure`: a certificate that was not accepted, said so that an
  organizer knows what to change (``ca_file``, the host name), instead of OpenSSL's
  ``[SSL: CERTIFICATE_VERIFY_FAILED]`` alone.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

__all__ = ["client_context", "certificate_failure", "is_encrypted", "settings_context"]


def client_context(ca_file: Path | str | None = None, *, verify: bool = True) -> ssl.SSLContext:
    """A client's TLS context. Raises OSError (ssl.SSLError) for a ``ca_file`` that cannot be
    read or holds no certificate."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(ca_file) if ca_file else None)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def settings_context(settings: Any) -> ssl.SSLContext:
    """The context of a transport's ``[imap]`` or ``[smtp]`` settings (``ca_file``,
    ``validate_certs``). Raises TransportError when the ``ca_file`` cannot be used."""
    from referee.mail.transport import TransportError

    try:
        return client_context(settings.ca_file, verify=settings.validate_certs)
    except OSError as exc:  # ssl.SSLError too
        raise TransportError(f"ca_file {settings.ca_file} cannot be used: {exc}") from exc


def _verification_error(exc: BaseException | None) -> ssl.SSLCertVerificationError | None:
    seen = 0
    while exc is not None and seen < 10:  # the transports wrap it (aiosmtplib's SMTPConnectError, ...)
        if isinstance(exc, ssl.SSLCertVerificationError):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def certificate_failure(exc: BaseException, where: str, ca_file: Path | str | None) -> str | None:
    """The reason a TLS handshake with ``where`` (host:port) failed on the server's
    certificate, in words, with what to do; None when ``exc`` is not such a failure."""
    error = _verification_error(exc)
    if error is None:
        return None
    reason = error.verify_message or error.reason or str(error)
    trusted = f"the CA in ca_file {ca_file}" if ca_file else "the system's CAs (no ca_file set)"
    if "hostname mismatch" in reason.lower() or "ip address mismatch" in reason.lower():
        advice = "set host to a name the certificate is for"
    else:
        advice = "set ca_file to the CA that signed the server's certificate, or check host and port"
    return f"TLS certificate of {where} not accepted ({reason}), checked against {trusted}: {advice}"


def is_encrypted(transport: object) -> bool:
    """Does this asyncio transport carry TLS (what a password may be sent over)?"""
    get = getattr(transport, "get_extra_info", None)
    return get is not None and get("ssl_object") is not None
