"""The demo's mail: on Maildirs (:class:`MaildirMail`, the default) or over real mail
(``--transport imap``: :func:`mail_stack` starts a loopback stack of the demo's own, and
:class:`~referee.demo.mail.RealMail` runs the referee and the players on it).

Both give the director the same three things: ``advance(at)`` (a player's mail sent now
arrives at ``at``), ``tick(at)`` (the referee's tick at ``at``, once the mail on its way has
arrived) and ``keep(folder)`` (where the mail is, for the end report).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from referee.config import ConfigError, ServiceConfig
from referee.service import Referee

if TYPE_CHECKING:
    from referee.mailstack import MailStack

TRANSPORTS = ("maildir", "imap")


class MaildirMail:
    """The demo's mail on Maildirs: the referee's ticks at the demo's times, each mail there
    at once, delivered at the time its sender chose (``RealMail`` is the same over IMAP)."""

    clock_note = "virtual clock"

    def __init__(self, referee: Referee, config: ServiceConfig):
        self.referee = referee
        self.config = config

    def advance(self, at: datetime) -> None:
        """Nothing to do: a player's mail is delivered with the time it is sent at."""

    def tick(self, at: datetime):
        return self.referee.tick(at)

    async def atick(self, at: datetime, *, wait: bool = True):
        return await self.referee.atick(at)

    def keep(self, folder: Path) -> list[str]:
        """Where the mail is (it stays there)."""
        outbox, inbox = self.config.mail.outbox, self.config.mail.inbox
        mails = sum(1 for p in outbox.rglob("*") if p.is_file() and p.parent.name in ("new", "cur"))
        replies = sum(1 for p in inbox.rglob("*") if p.is_file() and p.parent.name in ("new", "cur"))
        return [
            f"{mails} mails from the referee are in {outbox}/<address>/new/,",
            f"{replies} replies from the players in {inbox}/cur/.",
        ]


@contextmanager
def mail_stack(transport: str, install: bool, out: TextIO, users: tuple[str, ...] = ()) -> Iterator[MailStack | None]:
    """None for Maildirs; over IMAP a running stack (with mailboxes for ``users`` too, beside
    the referee's, alice's and bob's), removed when the demo ends however it ends."""
    if transport not in TRANSPORTS:
        raise ConfigError(f"no demo over {transport!r}: choose one of {', '.join(TRANSPORTS)}")
    if transport == "maildir":
        yield None
        return
    from referee.demo.mail import demo_stack

    with demo_stack(install=install, out=out, users=users) as stack:
        yield stack
