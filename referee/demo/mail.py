"""``referee demo --transport imap``: the demo over real mail.

The demo starts a loopback mail stack of its own (:mod:`referee.mailstack`: Dovecot for
IMAP, Postfix for SMTP, in a fresh ``/tmp/mailstack-*``, stopped and removed at the end),
and the referee runs on it as configured in ``referee.toml`` (``inbound = "imap"``,
``outbound = "smtp"``): it reads the players' mail by IMAP and sends its own by SMTP. The
scripted players (:class:`~referee.mail.client.ImapClient`) send by SMTP and read their
mailboxes by IMAP.

**Time.** A round lasts a day; the demo plays one in seconds. Its clock
(:class:`DemoClock`) is the real clock plus an offset that only grows: to get to the next
reply time or deadline the demo *skips* ahead (the offset grows by the gap), and between
skips the clock runs at real speed. A mail's arrival is still what decides whether it was
on time, but it is read on the demo's clock: the server's INTERNALDATE (real time) plus the
offset in force when the mail came in (:class:`ShiftedSource`, around the configured IMAP
source). So a reply sent "three hours into the round" reaches the referee three hours (and a
second or so) into the round, a deadline closes at its deadline, and the referee judges
exactly as it does in service. The demo skips ahead only right before a player sends, or
when no mail is on its way, so no mail is read with the wrong offset.

Delivery takes real time (Postfix answers before the mail is stored), so the demo waits for
every mail by its Message-ID: the players' in the referee's mailbox before each tick, the
referee's in the players' mailboxes after it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy import select

from referee.config import ConfigError, ServiceConfig
from referee.mail.client import ImapClient
from referee.mailstack import INSTALL_SCRIPT, MailStack, MailStackUnavailable, StackControl
from referee.pipeline.report import TickReport
from referee.service import Referee
from referee.store.db import Store
from referee.store.models import Outbox

__all__ = ["DemoClock", "RealMail", "ShiftedSource", "demo_stack", "missing_programs"]

DELIVERY_TIMEOUT = 60.0  # seconds a mail may take through Postfix and Dovecot before the demo gives up
SECOND = timedelta(seconds=1)


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class DemoClock:
    """The real clock plus an offset that only grows (:meth:`skip_to`)."""

    def __init__(self, start: datetime, *, real: Callable[[], datetime] = _utcnow):
        self._real = real
        self._anchors: list[tuple[datetime, datetime]] = [(real(), start)]  # (real, demo) at each skip

    def now(self) -> datetime:
        real = self._real()
        anchor, at = self._anchor(real)
        return at + (real - anchor)

    def skip_to(self, when: datetime) -> None:
        """Move the clock on to ``when`` (nothing if it is there already: it never goes back)."""
        if when > self.now():
            self._anchors.append((self._real(), when))

    def arrival(self, stamp: datetime) -> datetime:
        """A mail's arrival on this clock, from the server's INTERNALDATE ``stamp`` (whole
        seconds: the mail came in within the second after it), never before the skip it
        came after."""
        anchor, at = self._anchor(stamp + SECOND)
        return max(at, at + (stamp - anchor))

    def _anchor(self, real: datetime) -> tuple[datetime, datetime]:
        return next((a for a in reversed(self._anchors) if a[0] <= real), self._anchors[0])


class ShiftedSource:
    """An inbound transport whose mail arrives on a :class:`DemoClock`: each item's
    ``delivered_at`` (the server's INTERNALDATE) read on the demo's clock; reading and
    moving the mail are the source's own."""

    def __init__(self, source: Any, clock: DemoClock):
        self.source = source
        self.clock = clock

    @property
    def path(self) -> str:
        return self.source.path

    async def pending(self) -> list[Any]:
        return [
            replace(item, delivered_at=self.clock.arrival(item.delivered_at)) for item in await self.source.pending()
        ]

    async def read(self, item: Any) -> bytes:
        return await self.source.read(item)

    async def read_many(self, items: list[Any]) -> list[Any]:
        return await self.source.read_many(items)

    async def mark_processed(self, item: Any) -> None:
        await self.source.mark_processed(item)

    async def mark_many(self, items: list[Any]) -> None:
        await self.source.mark_many(items)

    async def close(self) -> None:
        await self.source.close()


class RealMail:
    """The demo's mail through a running stack: the referee on IMAP and SMTP (its source's
    arrival times on the demo's clock), a scripted IMAP/SMTP client per player, and the
    waits that keep the demo in step with the mail."""

    clock_note = "the demo's clock, over real mail: it skips ahead between mails"

    def __init__(
        self,
        referee: Referee,
        store: Store,
        config: ServiceConfig,
        stack: MailStack,
        start: datetime,
        players: dict[str, str],
    ):
        assert config.mail.imap is not None and config.mail.transport == "imap"
        self.referee, self.store, self.stack = referee, store, stack
        self.clock = DemoClock(start)
        self.source = referee.inbox  # the configured ImapSource
        referee.inbox = ShiftedSource(self.source, self.clock)
        self.folders = (config.mail.imap.folder, config.mail.imap.processed_folder)
        self.clients = {key: self._client(stack.address(key), name) for key, name in players.items()}
        self.referee_box = self._client(config.mail.imap.username, "Referee")
        self._by_address = {client.address: client for client in self.clients.values()}
        self._awaited = dict.fromkeys(self.clients, 0)  # how many of each player's mails were seen arrive
        self._confirmed: set[int] = set()  # outbox rows seen in their recipient's mailbox

    def _client(self, address: str, name: str) -> ImapClient:
        s = self.stack
        return ImapClient(address, name, host=s.host, imap_port=s.imap_port, smtp_port=s.smtp_port, password=s.password)

    def advance(self, at: datetime) -> None:
        """The demo's clock on to ``at``: mail sent now arrives then."""
        self.clock.skip_to(at)

    def tick(self, at: datetime) -> TickReport:
        """Once the players' mail has arrived, the clock on to ``at`` and a referee tick; then
        wait until the referee's mail has reached the players."""
        self._arrived(at)
        report = self.referee.tick(self.clock.now())
        self._delivered()
        return report

    async def atick(self, at: datetime, *, wait: bool = True) -> TickReport:
        """:meth:`tick` on the running event loop (the referee's connections stay open from
        one tick to the next, as in ``referee run``); ``wait=False``: no waiting for mail
        either way (a server is down)."""
        if wait:
            await asyncio.to_thread(self._arrived, at)
        else:
            self.clock.skip_to(at)
        report = await self.referee.atick(self.clock.now())
        if wait:
            await asyncio.to_thread(self._delivered)
        return report

    def _arrived(self, at: datetime) -> None:
        """Every mail the players sent is in the referee's mailbox (waiting, or stored and
        moved already); then the clock on to ``at`` (after: what came in came in before)."""
        fresh = []
        for key, client in self.clients.items():
            fresh += [message_id for message_id, _ in client.sent[self._awaited[key] :]]
        self.referee_box.wait_for(fresh, folders=self.folders, timeout=DELIVERY_TIMEOUT)
        for key, client in self.clients.items():
            self._awaited[key] = len(client.sent)
        self.clock.skip_to(at)

    def _delivered(self) -> None:
        with self.store.unit_of_work() as session:
            rows = session.execute(select(Outbox.id, Outbox.to_addr, Outbox.message_id).where(Outbox.status == "sent"))
            fresh = [row for row in rows if row.id not in self._confirmed]
        for address in {row.to_addr for row in fresh}:
            client = self._by_address.get(address)
            if client is not None:
                client.wait_for([row.message_id for row in fresh if row.to_addr == address], timeout=DELIVERY_TIMEOUT)
        self._confirmed.update(row.id for row in fresh)

    def keep(self, folder: Path) -> list[str]:
        """Copy every mailbox of the stack into ``folder/mail/<address>/`` (a Maildir each, the
        referee's with its Processed folder) before the stack goes; what the demo says of them."""
        for client in [*self.clients.values(), self.referee_box]:
            client.close()  # their connections, before the stack goes
        copies = folder / "mail"
        base = self.stack.dir / "mail" / self.stack.domain
        for user in self.stack.users:
            mailbox = base / user / "Maildir"
            if mailbox.is_dir():
                shutil.copytree(
                    mailbox,
                    copies / self.stack.address(user),
                    ignore=shutil.ignore_patterns("dovecot*", "subscriptions", "maildirfolder", "tmp"),
                    dirs_exist_ok=True,
                )
        referee = self.referee_box.address
        mails = sum(_messages(copies / client.address) for client in self.clients.values())
        replies = _messages(copies / referee)
        s = self.stack
        return [
            f"{mails} mails from the referee went out by SMTP ({s.host}:{s.smtp_port}) to the players' mailboxes,",
            f"{replies} replies from the players were read by IMAP ({s.host}:{s.imap_port}) from {referee};",
            f"copies of the mailboxes are in {copies}/<address>/ (Maildirs; the mail stack is removed).",
        ]


def _messages(maildir: Path) -> int:
    """Messages in a Maildir and its subfolders (``.Processed``)."""
    return sum(1 for p in maildir.rglob("*") if p.is_file() and p.parent.name in ("new", "cur"))


# ---------------------------------------------------------------------------- the stack


def missing_programs() -> list[str]:
    """What start-mailstack.sh needs and this machine lacks (its own check: the programs)."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/local/sbin", "/usr/sbin", "/sbin"])
    missing = [program for program in ("dovecot", "postfix") if shutil.which(program, path=path) is None]
    if not os.access("/usr/lib/dovecot/lmtp", os.X_OK):
        missing.append("dovecot-lmtpd")
    return missing


def _is_root() -> bool:
    return os.geteuid() == 0


def ensure_packages(*, install: bool, out: TextIO) -> None:
    """Dovecot and Postfix are there, or installed now (``install``: the distribution's
    packages, by deploy/mailstack/install-mailstack.sh); else a ConfigError saying what to run."""
    missing = missing_programs()
    if missing and not install:
        raise ConfigError(
            f"the demo over real mail runs its own Dovecot and Postfix, and {', '.join(missing)} "
            f"is not installed: install them with `sudo bash {INSTALL_SCRIPT}` (Debian or Ubuntu), "
            "or let the demo do it: `referee demo --transport imap --install` (as root)"
        )
    if not _is_root():
        raise ConfigError(
            "the demo over real mail starts its own Dovecot and Postfix, which must be started as root "
            "(nothing of the system's mail set-up is used or changed): run it with sudo, "
            "e.g. `sudo .venv/bin/referee demo --transport imap`"
        )
    if not missing:
        return
    print(f"installing Dovecot and Postfix ({', '.join(missing)} missing): bash {INSTALL_SCRIPT}", file=out)
    done = subprocess.run(
        ["bash", str(INSTALL_SCRIPT)], stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )
    if done.returncode != 0 or missing_programs():
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise ConfigError(
            f"installing the mail stack's packages failed ({INSTALL_SCRIPT}, exit {done.returncode}):\n{tail}"
        )
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "installed", file=out)


@contextmanager
def demo_stack(*, install: bool, out: TextIO, users: Sequence[str] = ()) -> Iterator[MailStack]:
    """A loopback stack of the demo's own (with mailboxes for ``users`` too, beside the
    referee's, alice's and bob's), stopped and removed when the demo ends, also on an
    error, Ctrl-C or SIGTERM (one that comes while the stack starts or stops waits for it:
    a start cut off half-way would leave a daemon running)."""
    ensure_packages(install=install, out=out)
    control = StackControl(users)
    restore = _sigterm_raises()
    try:
        try:
            with _signals_held():
                stack = control.start()
        except MailStackUnavailable as exc:
            raise ConfigError(f"the demo's mail stack did not start: {exc}") from None
        print(
            f"mail stack: Dovecot (IMAP {stack.host}:{stack.imap_port}) and Postfix (SMTP {stack.host}:"
            f"{stack.smtp_port}) in {stack.dir}, for this demo only",
            file=out,
        )
        yield stack
    finally:
        try:
            with _signals_held():
                control.remove()
        finally:
            restore()


def _sigterm_raises() -> Callable[[], None]:
    """SIGTERM ends the demo as Ctrl-C does (cleaning up on the way out); what puts it back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    return lambda: signal.signal(signal.SIGTERM, previous)


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held until the block is done, then a KeyboardInterrupt if one came."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {
        s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if caught:
        raise KeyboardInterrupt
