"""The referee: a small facade over the stages that join rules, mail and storage.

Stages, each a module of one job:

* :mod:`referee.pipeline.ingest`: delivered mail -> stored inbound rows (committed
  before the transport forgets the mail);
* :mod:`referee.pipeline.judge`: one stored mail -> one decision, on headers first;
* :mod:`referee.pipeline.clock`: what is due (starts, deadlines, reminders), in batches;
* :mod:`referee.pipeline.deliver`: the outbox -> the transport, with retries;

over :mod:`referee.match.book` (matches, events, states and the season ledger; no mail)
and :mod:`referee.match.notices` (who is told what). Every change to a match happens in
one unit of work that also writes its events, ledger entries and the mail it causes.
Nothing here reads the clock: every entry point takes ``now``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
from collections.abc import Coroutine
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import bindparam, func, select

from referee.config import ServiceConfig
from referee.match.book import MATCH_CONTEXT, MatchBook, replay
from referee.match.notices import Notices
from referee.pipeline import BATCH
from referee.pipeline.clock import Clock
from referee.mail.bounces import bounce_address
from referee.mail.dkim import DkimSigner
from referee.mail.maildir import MaildirSender, MaildirSource
from referee.mail.transport import MailSender, MailSource
from referee.pipeline.deliver import Delivery
from referee.pipeline.ingest import Ingest
from referee.pipeline.judge import Judge
from referee.pipeline.report import TickReport
from referee.store.db import Store
from referee.store.lease import exclusive
from referee.store.models import Event

__all__ = ["BATCH", "MATCH_CONTEXT", "Referee", "TickReport", "replay"]

log = logging.getLogger("referee")

CLEAN_TMP_EVERY = timedelta(hours=1)  # tmp/ looked at, at most, this often: on a tick with nothing to do...
CLEAN_TMP_LATEST = timedelta(days=1)  # ...or on any tick once it has not been for this long
DECIDE_WAIT = 300.0  # seconds a tick waits for another process to finish deciding (referee.store.lease)

T = TypeVar("T")

# Asked at every tick: built once (SQLAlchemy then finds their compiled form without building
# and hashing them again)
_LAST_EVENT = select(func.coalesce(func.max(Event.id), 0))
_CLOSES_SINCE = select(func.count()).select_from(Event).where(Event.id > bindparam("since"), Event.kind == "timeout")


def run_now(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to its end from synchronous code (the command line, the tests). Called
    where an event loop runs already, it runs on a loop of its own in another thread (and
    the caller waits): code on an event loop should await the ``a...`` method instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


class Referee:
    def __init__(
        self,
        store: Store,
        config: ServiceConfig,
        inbox: MailSource | Any | None = None,
        outbox: MailSender | Any | None = None,
    ):
        """``inbox``: a :class:`~referee.mail.transport.MailSource`, or a Maildir inbox (read
        through a :class:`~referee.mail.maildir.MaildirSource`); ``outbox``: a
        :class:`~referee.mail.transport.MailSender`, or a Maildir outbox (anything with
        ``deliver`` and ``sync``), sent to through a :class:`~referee.mail.maildir.MaildirSender`."""
        self.store = store
        self.config = config
        self.inbox = inbox
        self.outbox = outbox
        self.book = MatchBook(config.secret)
        self.notices = Notices(config)
        self.clock = Clock(store, self.book, self.notices)
        self.judge = Judge(store, config, self.book, self.notices, self.clock)
        # [dkim]: every outbound mail is signed as it is sent, whatever the transport
        self.dkim = DkimSigner.from_settings(config.dkim) if config.dkim is not None else None
        self._tmp_cleaned: datetime | None = None  # when the Maildirs' tmp/ were last cleaned
        self._running_since: datetime | None = None  # the first tick of this process
        self._adapted: dict[type, tuple[Any, Any]] = {}  # adapter -> (what it adapts, the adapter)
        self.decide_wait = DECIDE_WAIT

    @classmethod
    def configured(cls, store: Store, config: ServiceConfig) -> Referee:
        """The referee on the transports ``referee.toml`` configures: mail in from a Maildir or
        an IMAP folder (``[mail] inbound = "imap"``); mail out to Maildirs, or to an SMTP
        server (``[mail] outbound = "smtp"``)."""
        from referee.config.service_file import require_password
        from referee.mail.maildir import MaildirInbox, MaildirOutbox

        outbox: Any
        if config.mail.outbound == "smtp":
            from referee.mail.smtp import SmtpSender

            assert config.mail.smtp is not None  # the configuration checks it
            require_password(config.mail.smtp)
            outbox = SmtpSender(config.mail.smtp)
        else:
            outbox = MaildirOutbox(config.mail.outbox, per_address=config.mail.per_address)
        inbox: Any
        if config.mail.transport == "imap":
            from referee.mail.imap import ImapSource

            assert config.mail.imap is not None  # the configuration checks it
            require_password(config.mail.imap)
            inbox = ImapSource(config.mail.imap)
        else:
            inbox = MaildirInbox(config.mail.inbox)
        return cls(store, config, inbox=inbox, outbox=outbox)

    # ------------------------------------------------------------------ the whole cycle

    def tick(self, now: datetime) -> TickReport:
        """:meth:`atick`, from synchronous code (the transport's connections closed after it:
        they belong to the event loop the call makes)."""
        return run_now(self._closing(self.atick(now)))

    async def _closing(self, work: Coroutine[Any, Any, T]) -> T:
        try:
            return await work
        finally:
            await self.close_transports()

    async def close_transports(self) -> None:
        """Let go of the transports' connections (the next use opens them again)."""
        for transport in (self.source, self.sender):
            if transport is not None:
                try:
                    await transport.close()
                except Exception:  # closing must not hide what happened before it
                    log.exception("closing %s failed", type(transport).__name__)

    async def atick(self, now: datetime) -> TickReport:
        """Everything due as of ``now``: mail in, then mail, starts and deadlines in time order,
        then reminders and mail out (the database work in a worker thread, the sending on
        the event loop that carries the transport's connections).

        Time order matters across matches too: a match that starts at T brings the season
        balance after every settlement before T, and a mail is judged before the deadline
        that follows its arrival. At the same instant a deadline comes before a start.
        """
        ingested = await self.aingest(now)
        report = await asyncio.to_thread(self._decide, now)
        report.ingested = ingested
        report.sent, report.send_errors = await self.aflush_outbox(now)
        self._clean_tmp(now, idle=report.summary() == TickReport().summary())
        return report

    def _decide(self, now: datetime) -> TickReport:
        """The database part of a tick: mail, starts and deadlines in time order, then reminders;
        held by one process at a time on a shared database (:mod:`referee.store.lease`)."""
        with exclusive(self.store, "decide", wait=self.decide_wait) as held:
            if not held:
                log.warning(
                    "another referee process has been deciding for over %.0f s; this tick leaves it to that one",
                    self.decide_wait,
                )
                return TickReport()
            return self._decide_held(now)

    def _decide_held(self, now: datetime) -> TickReport:
        report = TickReport()
        last_event: int | None = None  # read before the tick's first piece of work (none: nothing closed)
        self.clock.new_tick()
        while True:
            t_mail, t_start, t_deadline = self.clock.next_times(now)
            if t_start is None and t_deadline is None and t_mail is None:
                break  # nothing due (no mail waits that arrived by now)
            if last_event is None:
                last_event = self._last_event_id()
            if t_start is None and t_deadline is None:
                report.merge(self.process_inbound(now))
                break
            boundary = min(t for t in (t_start, t_deadline) if t is not None)
            if t_mail is not None and t_mail < boundary:
                report.merge(self.process_inbound(now, before=boundary))
            elif t_deadline is not None and t_deadline <= boundary:
                self.close_due(t_deadline)
            else:
                report.started += self.start_due(boundary)
        report.start_failed = self.clock.start_failures
        report.closed = 0 if last_event is None else self._closes_since(last_event)
        report.reminders = self.send_reminders(now)
        return report

    def ingest(self, now: datetime) -> int:
        """:meth:`aingest`, from synchronous code."""
        return run_now(self._closing(self.aingest(now)))

    async def aingest(self, now: datetime) -> int:
        """Copy delivered mail into the database, then mark it processed at the transport.
        Never raises for a file or a mail."""
        source = self.source
        if source is None:
            return 0
        return (await Ingest(self.store, source, listed=self._many_waiting).run(now)).stored

    def _many_waiting(self, count: int) -> None:
        """Many mails wait: the press's workers are started while they are stored, not at the
        first batch judged (a worker takes about a second to be ready; until then the judge
        reads every reply and makes every answer itself)."""
        if count >= self.notices.press.parallel:
            self.notices.press.warm()

    @property
    def source(self) -> MailSource | None:
        """The inbox's transport: ``inbox`` itself when it is one, else a Maildir source on it."""
        return self._transport(self.inbox, "pending", MaildirSource)

    def process_inbound(self, now: datetime, *, before: datetime | None = None) -> TickReport:
        """Judge pending mail that arrived by ``now`` (and before ``before``), in arrival order."""
        return self.judge.process(now, before=before)

    def start_due(self, now: datetime) -> int:
        return self.clock.start_due(now)

    def close_due(self, now: datetime, match_id: int | None = None) -> int:
        return self.clock.close_due(now, match_id)

    def send_reminders(self, now: datetime) -> int:
        return self.clock.send_reminders(now)

    def flush_outbox(self, now: datetime) -> tuple[int, int]:
        """:meth:`aflush_outbox`, from synchronous code."""
        return run_now(self._closing(self.aflush_outbox(now)))

    async def aflush_outbox(self, now: datetime) -> tuple[int, int]:
        """Deliver due outbox mail (:mod:`referee.pipeline.deliver`)."""
        sender = self.sender
        if sender is None:
            return 0, 0
        mail = self.config.mail
        delivery = Delivery(
            self.store,
            sender,
            self.config.outbox_max_attempts,
            mail.address,
            # each mail's envelope sender is its row's signed bounce address (referee.mail.bounces)
            bounce_address=lambda outbox_id: bounce_address(self.config.secret, mail.local, mail.domain, outbox_id),
            bounces=self.judge.bounces,
            signer=self.dkim,
        )
        return await delivery.flush(now)

    @property
    def sender(self) -> MailSender | None:
        """The outbox's transport: ``outbox`` itself when it sends, else a Maildir sender on it."""
        return self._transport(self.outbox, "send", MaildirSender)

    def _transport(self, given: Any, method: str, adapter: type) -> Any:
        """``given`` itself when its ``method`` is a coroutine (it is a transport), else an
        ``adapter`` on it, made once while ``given`` stays the same (tests swap it)."""
        if given is None:
            return None
        if inspect.iscoroutinefunction(getattr(given, method, None)):
            return given
        made = self._adapted.get(adapter)
        if made is None or made[0] is not given:
            made = self._adapted[adapter] = (given, adapter(given))
        return made[1]

    # ------------------------------------------------------------------ housekeeping

    def _clean_tmp(self, now: datetime, *, idle: bool) -> None:
        """Leftovers of interrupted deliveries in the Maildirs' tmp/ go after a day (Maildir's rule).

        Looking for them reads every Maildir (a per-address outbox has one per player), so it
        is done on a tick that had nothing to do, at most once an hour, and not in the middle
        of a burst of mail; a referee that is never idle still does it once a day."""
        self._running_since = self._running_since or now
        last = self._tmp_cleaned or self._running_since
        if self._tmp_cleaned is not None and now - last < CLEAN_TMP_EVERY:
            return
        if not idle and now - last < CLEAN_TMP_LATEST:
            return
        self._tmp_cleaned = now
        for transport in (self.inbox, self.outbox):
            clean = getattr(transport, "clean_tmp", None)
            if clean is None:
                continue
            try:
                removed = clean(now)
            except OSError as exc:
                log.warning("cleaning tmp/ of %s failed: %s", getattr(transport, "path", transport), exc)
                continue
            if removed:
                log.info("removed %d stale file(s) from tmp/ of %s", removed, getattr(transport, "path", transport))

    def _last_event_id(self) -> int:
        with self.store.unit_of_work() as session:
            return session.scalar(_LAST_EVENT)

    def _closes_since(self, event_id: int) -> int:
        """Steps closed (committed) since ``event_id``: also those a late-processed mail closed."""
        with self.store.unit_of_work() as session:
            return session.scalar(_CLOSES_SINCE, {"since": event_id})
