"""The long-running service: APScheduler 3 on asyncio.

* ``poll`` (every ``poll_seconds``): the whole cycle -- inbound, starts, deadlines,
  reminders, outbox. It is also the safety net: whatever a missed job would have done,
  the next poll does.
* ``due:<instant>``: one job per distinct upcoming deadline, reminder or start time. It
  runs the same cycle at that instant, so a deadline closes on time even with a long poll.
* Everything runs ``grace`` seconds behind the clock (``arrival_grace_seconds``), so a
  mail delivered just before a deadline is in the inbox when that deadline closes.
* After every run the jobs are reconciled with the database, and on start-up the first
  poll processes everything that fell due while the service was down, judging mail by
  its arrival time.

Database work runs in a worker thread, one job at a time (a lock), so jobs never
interleave and the event loop stays responsive; the outbound transport's sending runs on
the event loop itself (its connections live there).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy import select, union

from referee.mail.transport import TransportError
from scheduler.faults import RepeatedFault
from referee.service import Referee, TickReport
from referee.store.models import Match

log = logging.getLogger("referee.scheduler")

RECONCILE_LIMIT = 500  # distinct upcoming instants kept as jobs; later ones are added as time moves on


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def upcoming_instants(referee: Referee, after: datetime, limit: int = RECONCILE_LIMIT) -> list[datetime]:
    """Distinct future instants at which something falls due (deadlines, reminders, starts)."""
    running = Match.status == "running"
    query = union(
        select(Match.deadline.label("at")).where(running, Match.deadline > after),
        select(Match.remind_at.label("at")).where(running, Match.remind_at > after),
        select(Match.starts_at.label("at")).where(Match.status == "scheduled", Match.starts_at > after),
    ).subquery()
    with referee.store.unit_of_work() as session:
        rows = session.execute(select(query.c.at).order_by(query.c.at).limit(limit)).scalars().all()
    return [r if r.tzinfo else r.replace(tzinfo=timezone.utc) for r in rows]


class ServiceRunner:
    def __init__(
        self,
        referee: Referee,
        *,
        poll_seconds: float,
        grace_seconds: float = 5.0,
        clock: Callable[[], datetime] = utcnow,
    ):
        self.referee = referee
        self.poll_seconds = poll_seconds
        self.grace = timedelta(seconds=grace_seconds)
        self.clock = clock
        self.scheduler = AsyncIOScheduler(
            timezone=timezone.utc, job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None}
        )
        self._lock = asyncio.Lock()
        self._stopped = asyncio.Event()
        # a fault that comes back every cycle is logged once, then a line a minute, then once
        # when it clears (scheduler.faults)
        self._faults = {
            what: RepeatedFault(what, log, clock)
            for what in ("the cycle", "building the archive", "reconciling the jobs")
        }
        self._cycles: set[asyncio.Future[TickReport | None]] = set()  # cycles under way
        # [archive]: the site build under way (beside the cycles), and whether a cycle
        # changed something since it began (then it runs once more when done)
        self._archive: asyncio.Future[None] | None = None
        self._archive_again = False

    async def cycle(self, reason: str) -> TickReport | None:
        """Run one whole cycle; never lets an error kill the service. A cycle once begun ends:
        a stop cancels the job that awaits it (the scheduler's shutdown does), not the cycle,
        which the stop then waits for before letting go of the connections."""
        work = asyncio.ensure_future(self._cycle(reason))
        self._cycles.add(work)
        work.add_done_callback(self._cycles.discard)
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            if not self._stopped.is_set():
                raise
            log.info("stopping: the cycle (%s) under way is finished first", reason)
            return None

    async def _cycle(self, reason: str) -> TickReport | None:
        async with self._lock:
            # Work `grace` behind the clock: a mail the MTA stamped just before a deadline but
            # has not finished moving into new/ is still seen before that deadline closes.
            now = self.clock() - self.grace
            try:
                report = await self.referee.atick(now)  # its database work runs in a worker thread
            except Exception as exc:
                self._faults["the cycle"].failed(exc, f"({reason}, at {now.isoformat()}) the next poll retries")
                return None
            self._faults["the cycle"].succeeded()
            if report.summary() != "nothing to do":
                log.info("cycle (%s): %s", reason, report.summary())
            await self.reconcile()
            self.archive_after(report)
            return report

    def archive_after(self, report: TickReport) -> None:
        """With ``[archive]`` configured, bring the static site up to date after a cycle that
        moved a match on (and after the first cycle: a new template or a missing site). The
        build runs in a worker thread beside the cycles, never inside one, so mail and
        deadlines never wait for it; one at a time (a cycle that changes something while one
        runs has it run once more). A failing build is logged, and the next one tries again."""
        settings = getattr(self.referee.config, "archive", None)
        if settings is None:
            return
        first = self._archive is None
        if not first and not (report.started or report.accepted or report.rejected or report.closed):
            return
        if self._archive is not None and not self._archive.done():
            self._archive_again = True
            return
        self._archive = asyncio.ensure_future(self._build_archive(settings))

    async def _build_archive(self, settings: Any) -> None:
        from referee.archive.site import keep_current  # only a service with [archive] loads the site's code

        while True:
            self._archive_again = False
            try:
                report = await asyncio.to_thread(keep_current, self.referee.store, settings, self.clock())
                if report.written or report.removed:
                    log.info("archive %s: %s", settings.dir, report.summary())
            except Exception as exc:
                self._faults["building the archive"].failed(exc, f"in {settings.dir}; mail and deadlines go on")
            else:
                self._faults["building the archive"].succeeded()
            if not self._archive_again:
                return

    async def reconcile(self) -> None:
        now = self.clock() - self.grace
        try:
            instants = await asyncio.to_thread(upcoming_instants, self.referee, now)
        except Exception as exc:
            self._faults["reconciling the jobs"].failed(exc, "polling continues")
            return
        self._faults["reconciling the jobs"].succeeded()
        wanted = {f"due:{at.isoformat()}": at + self.grace for at in instants}
        for job in self.scheduler.get_jobs():
            if job.id.startswith("due:") and job.id not in wanted:
                job.remove()
        for job_id, at in wanted.items():
            if self.scheduler.get_job(job_id) is None:
                self.scheduler.add_job(self.cycle, DateTrigger(run_date=at), args=[job_id], id=job_id)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self.stop)
            except (NotImplementedError, RuntimeError):  # pragma: no cover - non-main thread / Windows
                pass
        self.scheduler.add_job(
            self.cycle, IntervalTrigger(seconds=self.poll_seconds), args=["poll"], id="poll", next_run_time=self.clock()
        )
        self.scheduler.start()
        log.info("referee running: polling every %ss", self.poll_seconds)
        watcher = asyncio.ensure_future(self.watch())
        await self._stopped.wait()
        watcher.cancel()
        self.scheduler.shutdown(wait=False)
        if self._cycles:  # a cycle under way finishes its work (its mail, its transactions)
            await asyncio.gather(*self._cycles, return_exceptions=True)
        if self._archive is not None:  # and a site build its pages (each file is replaced whole)
            await asyncio.gather(self._archive, return_exceptions=True)
        async with self._lock:
            await self.referee.close_transports()  # log out of IMAP, QUIT SMTP
        self.referee.notices.close()  # the mail workers (referee.match.press)
        log.info("referee stopped")

    async def watch(self) -> None:
        """Where the inbound transport can say that mail arrived (IMAP IDLE), run a cycle
        then (``grace`` later, as the referee works that far behind the clock) instead of
        at the next poll. A failure waits a growing while (up to 5 minutes) and tries again;
        the poll goes on meanwhile."""
        source = self.referee.source
        wait = getattr(source, "wait_for_mail", None)
        if wait is None:
            return
        pause = 1.0
        while not self._stopped.is_set():
            try:
                arrived = await wait(min(self.poll_seconds, 25 * 60.0))
            except TransportError as exc:
                log.warning("waiting for new mail failed (%s); again in %.0f s, polling meanwhile", exc, pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 300.0)
                continue
            pause = 1.0
            if arrived:
                await asyncio.sleep(self.grace.total_seconds())
                await self.cycle("new mail")

    def stop(self) -> None:
        log.info("stop requested")
        self._stopped.set()
