"""Outbound mail by SMTP (aiosmtplib): the outbox's transport for a mailbox at a provider.

* Connections are reused: a mail goes out on an idle connection when there is one; up
  to ``concurrency`` connections send at once (the outbox never has more mails in flight).
* What the server answers decides (:mod:`referee.mail.transport`): its 250 after the
  message data is ``sent`` (and only that: a mail is sent once the server has it); a 5xx
  for a recipient, the sender or the data is ``permanent``; a 4xx, a connection that
  cannot be made, drops or times out, or a login the server refuses (a password changed:
  the organizer fixes it and the mail goes out) is ``temporary``. Its cause
  (:data:`~referee.mail.transport.CAUSES`): a 4xx for one recipient is the ``recipient``'s; the
  rest (no connection, a login refused, a 4xx for the sender or the data, 421) the ``server``'s.
* TLS (``security``): ``"tls"`` from the first byte (465), ``"starttls"`` required (587: a
  server that does not offer it is refused before any login), ``"none"``. The certificate
  is verified, against ``ca_file``'s CAs when set, else the system's; one that is not
  accepted is said in words (a TransportError from :meth:`SmtpSender.check`, a temporary
  failure of the mail).
* The password comes from the configuration or the environment and is never logged.

Connections belong to the event loop that made them; a send on another loop (each
synchronous ``Referee.tick`` runs its own) opens new ones.
"""

from __future__ import annotations

import asyncio
import logging
import ssl

import aiosmtplib
from aiosmtplib import (
    SMTPAuthenticationError,
    SMTPException,
    SMTPRecipientsRefused,
    SMTPResponseException,
)

from referee.config import SmtpSettings
from referee.mail.tls import certificate_failure, settings_context
from referee.mail.transport import OutboundMail, Outcome, SendResult, TransportError

__all__ = ["SmtpSender", "SmtpSettings"]

log = logging.getLogger("referee.smtp")


def _outcome(code: int) -> Outcome:
    return "permanent" if 500 <= code < 600 else "temporary"


def _recipient_cause(codes: list[int]) -> str:
    """The cause of recipients refused for now: theirs, unless the server closes (421)."""
    return "server" if 421 in codes else "recipient"


class SmtpSender:
    """A :class:`~referee.mail.transport.MailSender` on an SMTP server."""

    def __init__(self, settings: SmtpSettings, *, tls_context: ssl.SSLContext | None = None) -> None:
        self.settings = settings
        self.concurrency = max(1, settings.concurrency)
        self.tls_context = tls_context
        self._idle: list[aiosmtplib.SMTP] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self.connections_opened = 0  # for the logs, the tests and the benchmark

    # ------------------------------------------------------------------ sending

    async def send(self, mail: OutboundMail) -> SendResult:
        try:
            smtp = await self._connection()
        except SMTPAuthenticationError as exc:
            log.error("smtp: %s refused the login: %s %s", self._where(), exc.code, exc.message)
            return SendResult.every(mail, "temporary", f"login refused: {exc.code} {exc.message}", "server")
        except TransportError as exc:  # a certificate not accepted, a ca_file that cannot be used
            log.error("smtp: %s", exc)
            return SendResult.every(mail, "temporary", str(exc), "server")
        except (SMTPException, OSError, asyncio.TimeoutError) as exc:
            detail = f"cannot connect to {self._where()}: {_describe(exc)}"
            return SendResult.every(mail, "temporary", detail, "server")
        try:
            refused, reply = await smtp.sendmail(mail.sender, list(mail.recipients), mail.data)
        except SMTPRecipientsRefused as exc:  # every recipient refused; the connection is still good
            self._idle.append(smtp)
            codes = {r.recipient: (r.code, r.message) for r in exc.recipients}
            return SendResult(
                {
                    address: (_outcome(codes[address][0]), f"{codes[address][0]} {codes[address][1]}")
                    if address in codes
                    else ("temporary", "refused")
                    for address in mail.recipients
                },
                _recipient_cause([code for code, _ in codes.values()]),
            )
        except SMTPResponseException as exc:  # the sender or the data refused (aiosmtplib has sent RSET)
            if smtp.is_connected:
                self._idle.append(smtp)
            return SendResult.every(mail, _outcome(exc.code), f"{exc.code} {exc.message}", "server")
        except ValueError as exc:  # an address SMTP cannot carry (checked before anything is sent)
            self._idle.append(smtp)
            return SendResult.every(mail, "permanent", f"not an address SMTP can carry: {exc}")
        except (SMTPException, OSError, asyncio.TimeoutError) as exc:  # the connection failed mid-way
            await self._drop(smtp)
            detail = f"connection to {self._where()} lost: {_describe(exc)}"
            return SendResult.every(mail, "temporary", detail, "server")
        self._idle.append(smtp)
        results: dict[str, tuple[Outcome, str]] = {}
        for address in mail.recipients:
            if address in refused:
                response = refused[address]
                results[address] = (_outcome(response.code), f"{response.code} {response.message}")
            else:
                results[address] = ("sent", reply)
        return SendResult(results, _recipient_cause([refused[a].code for a in refused]) if refused else "")

    async def check(self) -> str:
        """Connect (TLS as configured) and log in: what ``referee check-mail`` asks of a new
        set-up. Raises the connection's error."""
        smtp = await self._connection()
        self._idle.append(smtp)
        s = self.settings
        login = f"logged in as {s.username}" if s.username else "no login configured"
        return f"SMTP {s.host}:{s.port} ({s.security}): connected, {login}"

    async def sync(self) -> None:
        """Nothing to do: the server's 250 means it has queued the mail."""

    async def close(self) -> None:
        """QUIT every idle connection of this event loop."""
        idle, self._idle = self._idle, []
        if self._loop is not None and self._loop is not asyncio.get_running_loop():
            return  # made on another loop, which is gone: nothing to say goodbye on
        for smtp in idle:
            await self._drop(smtp, polite=True)

    # ------------------------------------------------------------------ connections

    async def _connection(self) -> aiosmtplib.SMTP:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # connections of another (finished) loop cannot be used here
            self._idle, self._loop = [], loop
        while self._idle:
            smtp = self._idle.pop()
            if smtp.is_connected:
                return smtp
        s = self.settings
        smtp = aiosmtplib.SMTP(
            hostname=s.host,
            port=s.port,
            use_tls=s.security == "tls",
            start_tls=True if s.security == "starttls" else False,
            timeout=s.timeout,
            local_hostname=s.local_hostname,
            validate_certs=s.validate_certs,
            tls_context=self._tls_context() if s.security != "none" else None,
        )
        try:
            await smtp.connect()
        except (SMTPException, OSError) as exc:
            failure = certificate_failure(exc, self._where(), s.ca_file)
            if failure is not None:
                raise TransportError(failure) from exc
            raise
        try:
            if s.username:
                if not smtp.supports_extension("auth"):
                    raise TransportError(no_login_hint(s.security))
                await smtp.login(s.username, s.password or "")
        except BaseException:
            await self._drop(smtp)
            raise
        self.connections_opened += 1
        log.debug("smtp: connected to %s (%d opened so far)", self._where(), self.connections_opened)
        return smtp

    async def _drop(self, smtp: aiosmtplib.SMTP, *, polite: bool = False) -> None:
        """Let go of a connection: QUIT when it is still good (``polite``), else close it."""
        try:
            if polite and smtp.is_connected:
                await smtp.quit()
            else:
                smtp.close()
        except (SMTPException, OSError, asyncio.TimeoutError):
            smtp.close()

    def _tls_context(self) -> ssl.SSLContext:
        """The TLS context (made once: loading the CAs takes a while): the one given, else
        certificates verified against ``ca_file`` or the system's CAs."""
        if self.tls_context is None:
            self.tls_context = settings_context(self.settings)
        return self.tls_context

    def _where(self) -> str:
        return f"{self.settings.host}:{self.settings.port}"


def no_login_hint(security: str) -> str:
    """What to change when ``[smtp] username`` is set but the server offers no login (no
    AUTH in its EHLO answer: a relay that takes mail from this host without one): one line."""
    if security == "none":  # many servers offer AUTH only once the connection is encrypted
        return (
            "the server offers no login (no SMTP AUTH) on this unencrypted connection: if it takes mail without "
            'one, remove username from [smtp]; if it needs one, set security = "starttls" (or "tls")'
        )
    return (
        "the server offers no login (the SMTP AUTH extension is not supported by this server): it takes mail "
        "without one, so remove username (and password_env, password_file, password) from [smtp]"
    )


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text
