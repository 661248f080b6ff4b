"""The press: a mail's bytes made from plain data, here or in a worker process beside us.

:class:`~referee.match.notices.Notices` decides who is told what and gathers, from the
match and the player, everything a mail needs into a :class:`MailSpec` (the template's
context, the seat names, the links, the one-tap answers, the deadline's event, the
envelope). :func:`make` turns a spec into the mail: the template rendered and wrapped,
names isolated, the link lines, the HTML part, the calendar, composed into RFC 5322 bytes.
It reads nothing but the spec (no database, no clock), so the same spec makes the same
bytes in any process.

A close of many matches writes two mails a match, and making them was most of its work
(bench/README.md). With worker processes (``[service] mail_workers``, one by default on a
machine of two cores or more), :class:`~referee.match.notices.Notices` defers a batch's
mails while a worker is ready (else each is made as it is written, as without workers):
each spec is pickled as it is written (the mail shows what was true then), every
``CHUNK`` of them is handed to a ready worker over a pipe (``AHEAD`` chunks a worker at
most) while the referee goes on with the batch, and before the batch commits
(:meth:`PressBatch.finish`) the referee makes the chunks no worker has from the front
while the workers are handed the last ones, a chunk each, until they meet. The workers
are started when a batch of many matches comes (``PARALLEL`` mails), and until one says it
is ready the referee makes every mail itself: nothing waits for a worker to start. A
worker that dies (killed, out of memory) costs only time: the chunks it had are made here,
and a later batch starts another. A worker ends when the referee's end of its pipe closes
(the referee stopped, or was killed). A spec a worker fails to make is made again here,
so that its error is raised with its real traceback, as :class:`PressError` naming its
match. Without workers every mail is made as it is written, as it always was.

A ready worker does other pure work too (:meth:`Press.jobs`, :class:`JobBatch`): a
function and its arguments, answered in the order handed out, mails and jobs alike; the
process that asked takes an answer when it has come and works it out itself otherwise
(the judge's replies read ahead: :mod:`referee.pipeline.prereading`).
"""

from __future__ import annotations

import logging
import os
import pickle
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from referee.bidi import isolate_names, turns
from referee.mail.bodytext import as_shown
from referee.mail.calendar import Deadline, calendar
from referee.mail.compose import compose
from referee.mail.html_mail import to_html
from referee.render import render_mail

__all__ = ["Job", "JobBatch", "Made", "MailSpec", "Press", "PressError", "default_workers", "make"]

log = logging.getLogger("referee")

ARCHIVE_LINE = "This match in the archive:"
GUIDE_LINE = "How to play by mail, and the archive:"
CALENDAR_TYPE = "application/ics"  # the deadline's event (an .ics file: METHOD:PUBLISH inside)

PARALLEL = 64  # a batch of at least this many mails (32 matches' closes) starts the workers
CHUNK = 8  # mails a worker makes at a time
AHEAD = 4  # chunks handed to each worker at once: the next is there when it finishes one
RESTART_AFTER = 60.0  # seconds after a worker died before another is started


@dataclass(frozen=True, slots=True)
class MailSpec:
    """Everything one mail is made of, as plain data (it travels to a worker by pickle)."""

    game: str  # the game whose templates render it ("common": a mail about no match)
    kind: str  # the template's name
    context: dict[str, Any]  # what the template sees (Notices.context)
    envelope: dict[str, Any]  # compose's arguments but the subject, the text and the parts
    seats: tuple[str, ...] | None = None  # the match's players' names, to isolate (None: no match)
    step_mail: bool = False  # a mail that opens a step: the archive's link, an HTML part
    link: str | None = None  # the archive's page of the match (a step mail), else its guide
    answers: tuple[tuple[str, str], ...] = ()  # the HTML part's one-tap answers
    deadline: Deadline | None = None  # the event of the deadline the mail sets
    zone: str = "UTC"  # the player's zone, for the event
    match_id: int | None = None  # the match it is about, for the errors' sake
    match_key: str | None = None


class Made(NamedTuple):
    """A mail made: its bytes, and the text a reader sees of it (its plain part, as
    :func:`referee.mail.bodytext.shown_text` reads it back from the bytes), kept beside them
    in the outbox so that a reply is read against it without walking the mail again."""

    message: bytes
    shown: str


class PressError(Exception):
    """Making a mail failed; ``match_id``, ``match_key``: the match it is about (None: none)."""

    def __init__(self, spec: MailSpec, cause: BaseException):
        super().__init__(f"the {spec.kind} mail could not be made: {type(cause).__name__}: {cause}")
        self.match_id = spec.match_id
        self.match_key = spec.match_key


def make(spec: MailSpec) -> Made:
    """The mail ``spec`` describes: its bytes for the outbox, and its shown text."""
    context = spec.context
    rendered = render_mail(spec.game, spec.kind, context)
    text, subject = rendered.text, rendered.subject
    if spec.seats is not None:  # names a game's own view writes as they are: isolated here too
        text, subject = _isolated(text, subject, spec.seats, context.get("form"))
    html = None
    if spec.step_mail:
        if spec.link is not None:
            text = last_line(text, ARCHIVE_LINE, spec.link)
        html = to_html(
            text, subject=subject, reply_to=context.get("reply_to"), answers=spec.answers, form=context["form"]
        )
    elif spec.link is not None:  # every other mail links the archive's "For players" page
        text = last_line(text, GUIDE_LINE, spec.link)
    attachments = []
    if spec.deadline is not None:
        # application/ics, not text/calendar: a client that quotes every text part of the
        # mail it answers (mutt) would quote the event too, and the reader would not know it
        ics = calendar([spec.deadline], spec.zone, stamp=spec.envelope["date"])
        attachments.append((CALENDAR_TYPE, "deadline.ics", ics))
    message = compose(subject=subject, text=text, html=html, attachments=attachments, **spec.envelope)
    return Made(message, as_shown(text))


def last_line(text: str, label: str, url: str) -> str:
    """``text`` with ``label url`` as its last paragraph before the signature (the address
    alone on its own line when the two do not fit in 78 columns)."""
    line = f"{label} {url}"
    if len(line) > 78:
        line = f"{label}\n{url}"
    body, sep, signature = text.partition("\n-- \n")
    return body.rstrip("\n") + "\n\n" + line + "\n" + sep + signature


def _isolated(text: str, subject: str, names: Sequence[str], form: str | None) -> tuple[str, str]:
    """``text`` and ``subject`` with every name that can turn a line around isolated
    (:func:`referee.bidi.isolate_names`), but in the lines of the form, which the player
    sends back and the grammar reads as written."""
    if not any(turns(name) for name in names):
        return text, subject
    names = list(names)
    keep = {line.strip() for line in (form or "").splitlines() if line.strip()}
    lines = [line if line.strip() in keep else isolate_names(line, names) for line in text.split("\n")]
    return "\n".join(lines), isolate_names(subject, names)


class Job(NamedTuple):
    """Pure work a worker does beside the mails (:meth:`Press.jobs`): ``run(*args)``, a
    function at the top of its module (pickled by name) that reads nothing but its
    arguments, so that its answer is the same in any process."""

    run: Callable[..., Any]
    args: tuple[Any, ...]


def _make_chunk(items: list[bytes | Job]) -> list[Any]:
    """A worker's part: each pickled spec's mail (or each job's answer), None where it
    failed (made again, and its error raised, in the process that asked)."""
    out: list[Any] = []
    for item in items:
        try:
            out.append(item.run(*item.args) if isinstance(item, Job) else make(pickle.loads(item)))
        except Exception:
            out.append(None)
    return out


def _serve(conn: Any) -> None:
    """A worker process: says it is ready, then makes each chunk it is sent and sends the
    mails back, in order, until the referee's end of the pipe closes (the referee stopped,
    or was killed). A thread reads the chunks as they come, so that the referee never
    waits to send one while this process sends a chunk's mails back."""
    import queue
    import signal
    import threading

    # Ctrl-C in the referee's terminal reaches its whole process group: the referee stops
    # and closes the pipe, and this process ends then, without a traceback of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    chunks: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

    def read() -> None:
        try:
            while True:
                chunks.put(conn.recv_bytes())
        except (EOFError, OSError):
            chunks.put(None)

    threading.Thread(target=read, name="press-reader", daemon=True).start()
    try:
        conn.send_bytes(b"")  # ready
        while (chunk := chunks.get()) is not None:
            conn.send_bytes(pickle.dumps(_make_chunk(pickle.loads(chunk)), pickle.HIGHEST_PROTOCOL))
    except (EOFError, OSError):
        pass


def default_workers() -> int:
    """Worker processes by default: one beside us when this process may run on two cores
    or more (its CPU affinity, where the system has one: a container's cpuset)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return 1 if cores >= 2 else 0


class _Worker:
    """One worker process (spawned, not forked: the service has threads) and its pipe.
    Chunks come back in the order they were sent (``sent``: their indexes)."""

    def __init__(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self.conn, theirs = context.Pipe(duplex=True)
        self.process = context.Process(target=_serve, args=(theirs,), name="referee-press", daemon=True)
        self.process.start()
        theirs.close()
        self.ready = False
        self.sent: deque[tuple[PressBatch | JobBatch, int]] = deque()  # (the batch, the chunk's index)

    def is_ready(self) -> bool:
        """Has it said it is ready (its imports done)? Raises OSError/EOFError if it died."""
        if not self.ready and self.conn.poll():
            self.conn.recv_bytes()
            self.ready = True
        return self.ready

    def send(self, batch: PressBatch | JobBatch, index: int, chunk: list[bytes] | list[Job]) -> None:
        self.conn.send_bytes(pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL))
        self.sent.append((batch, index))

    def mail_chunks(self) -> int:
        """Chunks of mails it has yet to answer."""
        return sum(1 for batch, _index in self.sent if isinstance(batch, PressBatch))

    def collect(self, wait: bool = False, *, until: object = None) -> None:
        """Hand each answer the worker has to the batch that sent its chunk (``wait``: every
        answer it still owes, or with ``until`` every answer up to the last it owes that
        batch); OSError/EOFError if it died."""
        if until is not None and wait:
            while any(batch is until for batch, _index in self.sent):
                self.collect_one()
            wait = False
        while self.sent and (wait or self.conn.poll()):
            self.collect_one()

    def collect_one(self) -> None:
        """The next answer, to its batch (waiting for it)."""
        answers = pickle.loads(self.conn.recv_bytes())
        batch, index = self.sent.popleft()
        batch.receive(index, answers)

    def stop(self, wait: float) -> None:
        self.conn.close()  # the worker reads the end of its pipe, and ends
        self.process.join(wait)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)


class Press:
    """Makes the mails of a batch, sharing a large batch with ``workers`` processes."""

    def __init__(self, workers: int = 0, *, parallel: int = PARALLEL, chunk: int = CHUNK):
        self.workers = workers
        self.parallel = parallel
        self.chunk = chunk
        self._workers: list[_Worker] = []
        self._failed_at: float | None = None  # when a worker last died (monotonic)
        self.by_workers = 0  # mails the workers made (for the benchmarks and the tests)
        self.jobs_by_workers = 0  # jobs they answered (likewise)
        self.waited = 0.0  # seconds this process waited for them

    def warm(self) -> None:
        """Start the workers without waiting for them: a large batch is coming. Until one
        has said it is ready, this process makes every mail itself (a worker takes a
        second or so to start: nothing waits for it). After a worker died, none is started
        for ``RESTART_AFTER`` seconds (one that cannot start would otherwise be tried, and
        logged, at every batch)."""
        if self._failed_at is not None and time.monotonic() - self._failed_at < RESTART_AFTER:
            return
        while len(self._workers) < self.workers:
            try:
                self._workers.append(_Worker())
            except (OSError, ValueError) as exc:
                log.warning("a mail worker could not be started (%s): the mails are made here", exc)
                return

    def start(self) -> bool:
        """Start the workers now and wait until they are ready, rather than at the first large
        batch; False when there are none (``workers`` 0, or they cannot be started)."""
        self.warm()
        for worker in list(self._workers):
            try:
                worker.conn.poll(120)
                worker.is_ready()
            except (OSError, EOFError) as exc:
                self._broken(worker, exc)
        return bool(self._workers) and all(worker.ready for worker in self._workers)

    def batch(self) -> PressBatch:
        """A batch whose mails are handed to the workers (when they are ready) as they come."""
        return PressBatch(self)

    def _ready(self) -> bool:
        """Is a worker ready to take mails (it said so, and has not died since)?"""
        return self._free(ahead=None) is not None

    def _free(self, ahead: int | None) -> _Worker | None:
        """A ready worker with fewer than ``ahead`` chunks of mails to make (None: any), if
        any. (Chunks of jobs do not count: they are handed out at once, needed first, and
        done before the mails behind them.)"""
        for worker in list(self._workers):
            try:
                if (ahead is None or worker.mail_chunks() < ahead) and worker.is_ready():
                    return worker
            except (OSError, EOFError) as exc:
                self._broken(worker, exc)
        return None

    def jobs(self, jobs: Sequence[Job]) -> JobBatch:
        """``jobs`` handed to the ready workers at once, a chunk at a time, while this process
        goes on (:class:`JobBatch`); with no worker ready, a batch that has no answers."""
        return JobBatch(self, jobs)

    def _collect(self, only: _Worker | None = None, wait: bool = False, *, until: object = None) -> None:
        """The answers the workers have, each to its batch (``wait``: all that ``only`` still
        owes; ``until``: only until it owes that batch nothing)."""
        for worker in [only] if only is not None else list(self._workers):
            try:
                worker.collect(wait, until=until)
            except (OSError, EOFError) as exc:
                self._broken(worker, exc)

    def _least_busy(self) -> _Worker | None:
        """The ready worker with the fewest chunks to make, if any."""
        best: _Worker | None = None
        for worker in list(self._workers):
            try:
                if worker.is_ready() and (best is None or len(worker.sent) < len(best.sent)):
                    best = worker
            except (OSError, EOFError) as exc:
                self._broken(worker, exc)
        return best

    def _broken(self, worker: _Worker, exc: BaseException) -> None:
        """A worker that died: dropped (a later batch starts another); the chunks it had are
        made here (the batch finds them unanswered)."""
        log.warning("a mail worker failed (%s: %s): its mails are made here", type(exc).__name__, exc)
        self._failed_at = time.monotonic()
        if worker in self._workers:
            self._workers.remove(worker)
        try:
            worker.stop(0)
        except Exception:  # it is gone already
            pass

    def close(self) -> None:
        """Stop the workers, once they have made what they were given."""
        workers, self._workers = self._workers, []
        for worker in workers:
            worker.stop(30)


def _make_here(spec: MailSpec) -> Made:
    try:
        return make(spec)
    except Exception as exc:
        raise PressError(spec, exc) from exc


class PressBatch:
    """The mails of one batch, in the order they are added. While no worker is ready, a
    mail is made as it is added (a small batch, or the first of a close while the worker
    starts: no pickling for nothing). Else its spec is pickled as it comes (what the mail
    shows is fixed then, whatever changes after), and each full chunk is handed to a ready
    worker, ``AHEAD`` a worker at most (the rest wait); at :meth:`finish` this process
    makes the waiting chunks from the front while the workers are handed the last ones, a
    chunk each, until they meet."""

    def __init__(self, press: Press):
        self.press = press
        self.blobs: list[bytes] = []
        self.chunks: list[list[bytes]] = []
        self.waiting: deque[int] = deque()  # chunks nobody has yet
        self.made: dict[int, list[Made | None]] = {}
        self.cut = 0  # specs before this one are in a chunk

    def add(self, spec: MailSpec) -> None:
        if not self.press._ready():  # no worker to share with: made now, as without workers
            if self.cut < len(self.blobs):
                self._cut()  # the chunk begun keeps its place before this mail
            self.chunks.append([])
            self.made[len(self.chunks) - 1] = [_make_here(spec)]
            return
        self.blobs.append(pickle.dumps(spec, pickle.HIGHEST_PROTOCOL))
        if len(self.blobs) - self.cut >= self.press.chunk:
            self._cut()
            self._collect()
            self._hand_out(keep=0, ahead=AHEAD)

    def finish(self) -> list[Made]:
        """Every mail, in order (:class:`PressError` for the first this process fails to make)."""
        if self.cut < len(self.blobs):
            self._cut()
        while self.waiting:
            self._collect()
            self._hand_out(keep=1, ahead=1)  # no more than a chunk each left for the end
            index = self.waiting.popleft()
            self.made[index] = [_make_here(pickle.loads(blob)) for blob in self.chunks[index]]
        began = time.perf_counter()
        for worker in list(self.press._workers):  # what the workers still make of this batch
            self._collect(worker, wait=True)
        self.press.waited += time.perf_counter() - began
        out: list[Made] = []
        for index, chunk in enumerate(self.chunks):
            if not chunk:  # a mail made as it was added
                out.extend(self.made[index])
                continue
            mails = self.made.get(index) or [None] * len(chunk)  # a worker that died: made here
            out.extend(m if m is not None else _make_here(pickle.loads(b)) for b, m in zip(chunk, mails, strict=True))
        return out

    def _cut(self) -> None:
        self.chunks.append(self.blobs[self.cut :])
        self.waiting.append(len(self.chunks) - 1)
        self.cut = len(self.blobs)

    def _collect(self, only: _Worker | None = None, wait: bool = False) -> None:
        """The answers the workers have (``wait``: all that ``only`` still owes this batch,
        not the jobs handed after its last chunk)."""
        self.press._collect(only, wait, until=self)

    def receive(self, index: int, mails: list[Made | None]) -> None:
        """A worker's mails of chunk ``index`` (a batch that failed, or was rolled back, gets
        them too, and drops them with itself)."""
        self.made[index] = mails
        self.press.by_workers += sum(m is not None for m in mails)

    def _hand_out(self, keep: int, ahead: int) -> None:
        """Hand ready workers the last waiting chunks, up to ``ahead`` each, leaving ``keep``."""
        while len(self.waiting) > keep and (worker := self.press._free(ahead)) is not None:
            index = self.waiting.pop()
            try:
                worker.send(self, index, self.chunks[index])
            except (OSError, EOFError) as exc:
                self.waiting.append(index)
                self.press._broken(worker, exc)


class JobBatch:
    """Jobs whose answers a worker works out ahead of this process, which asks for each
    when it needs it (:meth:`answer`): one the workers have not answered yet is worked out
    by the caller (the worker's answer then comes for nothing). The jobs are handed out at
    once, in order, a chunk at a time, to the workers ready now; a worker makes its chunks
    in the order it got them, mails and jobs alike."""

    def __init__(self, press: Press, jobs: Sequence[Job]):
        self.press = press
        self.answers: dict[int, Any] = {}  # the job's index -> the worker's answer (None: it failed)
        self.handed = 0  # jobs handed to a worker
        if not jobs or not press._ready():
            return
        size = press.chunk
        for start in range(0, len(jobs), size):
            worker = press._least_busy()
            if worker is None:
                return
            chunk = list(jobs[start : start + size])
            try:
                worker.send(self, start, chunk)
            except (OSError, EOFError) as exc:
                press._broken(worker, exc)
                return
            self.handed = start + len(chunk)

    def receive(self, start: int, answers: list[Any]) -> None:
        for offset, answer in enumerate(answers):
            self.answers[start + offset] = answer
        self.press.jobs_by_workers += sum(answer is not None for answer in answers)

    def answer(self, index: int) -> Any | None:
        """The worker's answer to job ``index`` if it has come (without waiting), else None."""
        if index >= self.handed:
            return None
        if index not in self.answers:
            self.press._collect()
        return self.answers.get(index)
