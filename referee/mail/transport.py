"""What a transport promises the service, whatever carries the mail (a Maildir, SMTP, ...).

Outbound, a :class:`MailSender` takes one :class:`OutboundMail` at a time and says what
became of it for each recipient (:class:`SendResult`): **sent** (the transport has it:
a Maildir file written, an SMTP server's 250), a **temporary** failure (try again later:
a 4xx reply, a connection that failed or dropped, a full disk), or a **permanent** one
(a 5xx reply, an address no Maildir can be made for): recorded, never retried. A failure
names its **cause** where the transport knows it (:data:`CAUSES`): the outbox's ``disk`` (a
Maildir that cannot be written: full, read-only, out of quota), the ``server`` (an SMTP
server that cannot be reached or refuses the whole transaction for now), or one
``recipient`` (a refusal of that address alone); the outbox retries mail waiting for the disk
or the server as soon as it works again, and each recipient's on its own. A sender never
raises for what happens to a mail; an exception is a bug, and the outbox treats it as a
temporary failure so that nothing is lost.

Senders are asynchronous: the outbox sends up to ``concurrency`` mails at once, then
calls :meth:`MailSender.sync` before it marks them sent (a Maildir makes its batch
durable there; an SMTP server's 250 means it has queued the mail already).

Inbound, a :class:`MailSource` lists what waits (oldest first, each item with the time
the mail reached the server: the Maildir delivery time, IMAP's INTERNALDATE), reads an
item, and marks it processed once ingest has committed it. A source that cannot be
reached raises :class:`TransportError` (or ``OSError``): ingest records the problem and
tries again at the next tick.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

__all__ = [
    "CAUSES",
    "OUTCOMES",
    "InboundItem",
    "MailSender",
    "MailSource",
    "OutboundMail",
    "Outcome",
    "SendResult",
    "TransportError",
]

Outcome = Literal["sent", "temporary", "permanent"]
OUTCOMES: tuple[Outcome, ...] = ("sent", "temporary", "permanent")
CAUSES = ("disk", "server", "recipient")  # what failed ("": the transport does not say)


@dataclass(frozen=True)
class OutboundMail:
    key: str  # the outbox row's dedupe key: the same mail sent again has the same key
    sender: str  # the envelope sender (bounces come back to it)
    recipients: tuple[str, ...]
    data: bytes  # the whole message, CRLF line ends


@dataclass(frozen=True)
class SendResult:
    """What became of a mail, per recipient: ``{address: (outcome, detail)}``; detail is
    the server's reply or the error, for the outbox's ``last_error`` and the logs; ``cause``:
    what failed, one of :data:`CAUSES` ("" when the transport does not say, or nothing failed)."""

    recipients: dict[str, tuple[Outcome, str]]
    cause: str = ""

    @classmethod
    def every(cls, mail: OutboundMail, outcome: Outcome, detail: str = "", cause: str = "") -> SendResult:
        return cls({address: (outcome, detail) for address in mail.recipients}, cause)

    @property
    def outcome(self) -> Outcome:
        """The mail's outcome: sent when every recipient has it; else temporary when any
        recipient may still get it by trying again; else permanent."""
        outcomes = {outcome for outcome, _ in self.recipients.values()}
        if outcomes <= {"sent"}:
            return "sent"
        return "temporary" if "temporary" in outcomes else "permanent"

    @property
    def detail(self) -> str:
        """The replies of the recipients that do not have the mail, one per recipient."""
        return "; ".join(
            f"{address}: {detail or outcome}"
            for address, (outcome, detail) in self.recipients.items()
            if outcome != "sent"
        )


class MailSender(Protocol):
    """An outbound transport (see the module's docstring)."""

    concurrency: int  # mails the outbox may have in flight at once

    async def send(self, mail: OutboundMail) -> SendResult: ...

    async def sync(self) -> None:
        """Make every mail sent so far durable at the transport."""

    async def close(self) -> None:
        """Let go of connections (the next send opens them again)."""


class TransportError(Exception):
    """The transport cannot be reached or answered out of turn (nothing was lost)."""


class MailGone(TransportError):
    """The mail listed is no longer at the source: another process on the same mailbox took
    it (stored it and moved it), or someone removed it. Nothing to do."""


class InboundItem(Protocol):
    """A mail waiting at the source."""

    @property
    def key(self) -> str:
        """The source's name for it, unique in the source (a file name, a folder's UID)."""

    @property
    def delivered_at(self) -> datetime:
        """When it reached the server (aware, UTC): what timeliness is judged by."""


class MailSource(Protocol):
    """An inbound transport (see the module's docstring)."""

    async def pending(self) -> list[Any]:
        """The items waiting, oldest first (each an :class:`InboundItem`)."""

    async def read(self, item: Any) -> bytes:
        """The raw mail; raises :class:`MailGone` when it is no longer there."""

    async def mark_processed(self, item: Any) -> None:
        """Called only once the mail is committed; idempotent."""

    async def close(self) -> None: ...
