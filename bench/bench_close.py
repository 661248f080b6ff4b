"""Closing one round of 10,000 concurrent Stationary Roulette matches (SQLite or PostgreSQL).

Setup: a season of M matches (default 10,000) and 2 x M players (``--players`` reuses
fewer players across matches), loaded by bulk INSERTs (the rows ``load_season`` writes).
All matches start at the same instant, so all share one deadline.

  start     ``Referee.start_due(start)`` starts all M matches (timed and printed:
            chips from the ledger, initial state, start event, two "round is open"
            mails composed into the outbox table per match). ``--start fast`` runs the
            same start_due in this process as untimed setup, for iterating on close_due.
  submit    both players' submissions for the round (a ROULETTE in rounds 0-9, a BET in
            rounds 1-10), applied through the game engine (``parse`` + ``apply_move``)
            and recorded by ``MatchBook.record_moves``, as the judge records an accepted
            mail (not timed: the mail path is bench_inbound.py).
  close     ``Referee.close_due(deadline)``: M rounds settled, M timeout events, the
            next round opened, 2 x M result mails composed into the outbox table.
            Timed, in a fresh process, with its memory: ru_maxrss (peak) and VmRSS
            sampled every 10 ms while it runs.

``--rounds 0,10`` closes round 0 and round 10 of the same matches in one run: the rounds
in between are played (submissions + close_due) as untimed setup, so that round 10 is
closed with ten rounds of history in every state and result mail. ``--round R`` is
``--rounds R``.

``--url postgresql+psycopg://USER@HOST:PORT/DB`` runs on a scratch database created on
that server (connected to DB to create it), migrated as ``referee init`` migrates and
dropped afterwards; the default is a SQLite file opened as the service opens it.

Goals (issue): a close of 10,000 matches <= 20 s, in round 10 as in round 0 (a close at
round 10 <= 1.2 x a close at round 0), memory <= 300 MB with 10,000 active matches.

    .venv/bin/python bench/bench_close.py [--matches N] [--players P] [--start referee|fast]
        [--rounds 0,10] [--url URL] [--profile] [--stages] [--gc MODE]

``--stages`` closes a copy of each timed round again with timers around its steps (and
Python's garbage collector): what each step costs per match, round 0 against round 10,
without cProfile's distortion. ``--gc`` measures a garbage-collector setting the service
could adopt (an experiment).
"""

from __future__ import annotations

import json
import argparse
import cProfile
import io
import multiprocessing
import pstats
import resource
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from queue import Empty

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
from common import BET, GAME, ROULETTE, ROUND, START, copy_world_on, new_world_on, open_world, table  # noqa: E402
from common import temp_folder  # noqa: E402
from sqlalchemy import event, func, select  # noqa: E402
from sqlalchemy.orm import selectinload  # noqa: E402

from referee.games import GAMES  # noqa: E402
from referee.match.book import MatchBook  # noqa: E402
from referee.service import Referee  # noqa: E402
from referee.store.models import Event, LedgerEntry, Match, Outbox, Seat  # noqa: E402

GOAL_SECONDS = 20.0
GOAL_MATCHES = 10_000
GOAL_MB = 300.0
GOAL_RATIO = 1.2  # a close at round 10 costs at most this much more than one at round 0
LAST_ROUND = 10  # Stationary Roulette: the preparation phase (round 0), then rounds 1-10
SUBMIT_BATCH = 500


def deadline_of(round_no: int):
    return START + (round_no + 1) * ROUND


# ----------------------------------------------------------------------------- workers (fresh processes)


class RssSampler(threading.Thread):
    """Samples VmRSS while the timed call runs."""

    def __init__(self, interval: float = 0.01):
        super().__init__(daemon=True)
        self.interval = interval
        self.samples: list[float] = []
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            self.samples.append(common.rss_mb())
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()


# (label, module, object in it, attribute): the steps of a close, timed by wrapping them
STAGES = [
    ("Clock.in_batches: the whole close", "referee.pipeline.clock", "Clock", "in_batches"),
    ("  Session.scalars (the batch SELECT, rows -> objects)", "sqlalchemy.orm", "Session", "scalars"),
    ("  MatchBook.close_step", "referee.match.book", "MatchBook", "close_step"),
    ("    game.with_balances", "referee.games.stationary_roulette", "StationaryRoulette", "with_balances"),
    ("    game.apply_timeout", "referee.games.stationary_roulette", "StationaryRoulette", "apply_timeout"),
    ("    MatchBook.log_event", "referee.match.book", "MatchBook", "log_event"),
    ("    MatchBook.save_state", "referee.match.book", "MatchBook", "save_state"),
    ("  Notices.announce_step (the result mails)", "referee.match.notices", "Notices", "announce_step"),
    ("    Notices.context", "referee.match.notices", "Notices", "context"),
    ("      game.view", "referee.games.stationary_roulette", "StationaryRoulette", "view"),
    ("      game.form", "referee.games.stationary_roulette", "StationaryRoulette", "form"),
    ("    render_mail (Jinja)", "referee.match.press", None, "render_mail"),
    ("    compose (MIME)", "referee.match.press", None, "compose"),
    ("  commit of each batch", "sqlalchemy.orm.session", "SessionTransaction", "commit"),
    ("    Session.flush (INSERTs, versioned UPDATEs)", "sqlalchemy.orm", "Session", "flush"),
    (
        "      DBAPI executemany (the database's own work)",
        "sqlalchemy.engine.default",
        "DefaultDialect",
        "do_executemany",
    ),
    ("      DBAPI execute (the database's own work)", "sqlalchemy.engine.default", "DefaultDialect", "do_execute"),
    ("    COMMIT (on SQLite: the WAL's fsync)", "sqlalchemy.engine.default", "DefaultDialect", "do_commit"),
]


def install_stage_timers() -> dict[str, list[float]]:
    """Wrap the steps of a close (STAGES) and the JSON columns' (de)serialisers in timers:
    label -> [calls, wall s, CPU s]. Unlike cProfile this leaves the code's own speed alone
    (a few timer calls per match), so it can say what costs how much at round 0 and 10."""
    import importlib
    import inspect

    found: dict[str, list[float]] = {}

    def timed(label: str, fn):
        acc = found.setdefault(label, [0, 0.0, 0.0])

        def run(*args, **kwargs):
            c0, t0 = time.process_time(), time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                acc[0] += 1
                acc[1] += time.perf_counter() - t0
                acc[2] += time.process_time() - c0

        return run

    for label, module, owner, name in STAGES:
        target = importlib.import_module(module)
        if owner is not None:
            target = getattr(target, owner)
        wrapped = timed(label, getattr(target, name))
        if isinstance(inspect.getattr_static(target, name), staticmethod):
            wrapped = staticmethod(wrapped)
        setattr(target, name, wrapped)
    time_garbage_collection(found)
    return found


GC_LABELS = {g: f"(cyclic GC, generation {g}, within whichever step allocated)" for g in (0, 1, 2)}


def time_garbage_collection(found: dict[str, list[float]]) -> None:
    """The time Python's cyclic garbage collector takes (it runs inside whatever step
    allocates when a generation is full, and its passes cost more the more objects live)."""
    import gc

    started = [0.0, 0.0]

    def callback(phase: str, info: dict) -> None:
        if phase == "start":
            started[:] = [time.perf_counter(), time.process_time()]
            return
        acc = found.setdefault(GC_LABELS[info["generation"]], [0, 0.0, 0.0])
        acc[0] += 1
        acc[1] += time.perf_counter() - started[0]
        acc[2] += time.process_time() - started[1]

    gc.callbacks.append(callback)


def time_json_columns(engine, found: dict[str, list[float]]) -> None:
    """Time the JSON columns' serialisers (set before any statement is compiled)."""
    import json

    dialect = engine.dialect
    for attr, label, default in (
        ("_json_deserializer", "  json.loads of the JSON columns read", json.loads),
        ("_json_serializer", "  json.dumps of the JSON columns written", json.dumps),
    ):
        fn = getattr(dialect, attr, None) or default
        acc = found.setdefault(label, [0, 0.0, 0.0])

        def run(value, fn=fn, acc=acc):
            c0, t0 = time.process_time(), time.perf_counter()
            try:
                return fn(value)
            finally:
                acc[0] += 1
                acc[1] += time.perf_counter() - t0
                acc[2] += time.process_time() - c0

        setattr(dialect, attr, run)


def set_gc(mode: str) -> None:
    """``--gc``: Python's cyclic garbage collector as the service runs it ("default"), or
    as a change to the service would (an experiment: the service does not do this yet):
    "freeze" (gc.freeze() once loaded: what is alive then is never scanned again),
    "threshold=N" (a first generation of N allocations instead of 700) or "off"."""
    import gc

    if mode == "off":
        gc.disable()
    elif mode == "freeze":
        gc.freeze()
    elif mode.startswith("threshold="):
        gc.set_threshold(int(mode.split("=", 1)[1]), *gc.get_threshold()[1:])
    elif mode != "default":
        raise ValueError(f"--gc {mode!r}")


def worker(
    kind: str,
    folder: str,
    profile_top: int,
    queue,
    round_no: int = 0,
    stages: bool = False,
    gc_mode: str = "default",
    mail_workers: int | None = None,
) -> None:
    """Run start_due or close_due once in this (fresh) process; report time and memory
    (``profile_top``: under cProfile; ``stages``: with stage timers)."""
    import gc

    found = install_stage_timers() if stages else None
    world = open_world(Path(folder))
    if found is not None:
        time_json_columns(world.store.engine, found)
    referee = Referee(world.store, world.config)  # no transports: the mails stay in the outbox table
    if mail_workers is not None:
        referee.notices.press.workers = mail_workers
    deadline = deadline_of(round_no)
    call = (lambda: referee.start_due(START)) if kind == "start" else (lambda: referee.close_due(deadline))
    backend = None
    with world.store.unit_of_work() as session:  # connect, and load what every tick needs, before timing
        session.scalar(select(func.count()).select_from(Match))
        if world.store.engine.dialect.name == "postgresql":  # the server's process for this connection
            from sqlalchemy import text

            backend = session.scalar(text("SELECT pg_backend_pid()"))
            # the planner's statistics, as autovacuum has them when a round closes a day after
            # the last (the setup fills the tables by bulk INSERTs a moment before)
            session.execute(text("ANALYZE"))
    statements = [0]
    event.listen(world.store.engine, "before_cursor_execute", lambda *_a: statements.__setitem__(0, statements[0] + 1))
    gc.collect()
    set_gc(gc_mode)
    before = common.rss_mb()
    out: dict = {"rss_before": before}
    if profile_top:
        profiler = cProfile.Profile()
        t0 = time.perf_counter()
        profiler.enable()
        result = call()
        profiler.disable()
        out["seconds"] = time.perf_counter() - t0
        buf = io.StringIO()
        stats = pstats.Stats(profiler, stream=buf)
        buf.write(common.profile_breakdown(stats) + "\n\n")
        stats.sort_stats("cumulative").print_stats(profile_top)
        stats.sort_stats("tottime").print_stats(profile_top)
        out["profile"] = buf.getvalue()
    else:
        sampler = RssSampler()
        sampler.start()
        s0 = server_cpu(backend)
        c0, t0 = time.process_time(), time.perf_counter()
        result = call()
        out["seconds"] = time.perf_counter() - t0
        out["cpu"] = time.process_time() - c0  # this process only (not the database server's)
        out["server_cpu"] = None if s0 is None else server_cpu(backend) - s0
        sampler.stop()
        referee.notices.close()  # the mail workers end: their CPU is the children's
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        out["cpu_workers"] = children.ru_utime + children.ru_stime
        out["by_workers"] = referee.notices.press.by_workers
        out["waited"] = referee.notices.press.waited
        if found is not None:
            out["stages"] = found
        out["rss_peak_sampled"] = max(sampler.samples, default=before)
        out["rss_samples"] = len(sampler.samples)
    out["statements"] = statements[0]
    out["result"] = result  # start_due: matches started; close_due: steps closed
    out["rss_after"] = common.rss_mb()
    out["maxrss"] = common.maxrss_mb()
    out["hwm"] = common.hwm_mb()
    world.store.dispose()
    queue.put(out)


def server_cpu(pid: int | None) -> float | None:
    """The CPU seconds (user + system) of the PostgreSQL backend ``pid`` so far, read from
    /proc (the server runs on this machine); None without one."""
    import os

    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fresh_processes():
    """Workers forked from a server started while this process is still small.

    A process made by fork + exec (``spawn``) inherits the ru_maxrss of its parent, which
    after the setup would hide the worker's own peak; a forkserver started before the
    setup keeps ru_maxrss honest (VmHWM is per address space and honest either way).
    """
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["common"])
    from multiprocessing import forkserver

    forkserver.ensure_running()
    return ctx


def in_fresh_process(
    ctx,
    kind: str,
    folder: Path,
    profile_top: int = 0,
    round_no: int = 0,
    stages: bool = False,
    gc_mode="default",
    mail_workers: int | None = None,
) -> dict:
    queue = ctx.Queue()
    proc = ctx.Process(
        target=worker, args=(kind, str(folder), profile_top, queue, round_no, stages, gc_mode, mail_workers)
    )
    proc.start()
    while True:
        try:
            out = queue.get(timeout=1.0)
            break
        except Empty:
            if not proc.is_alive():
                raise SystemExit(f"{kind} worker died with exit code {proc.exitcode}") from None
    proc.join()
    return out


# ----------------------------------------------------------------------------- setup


def fast_start(world) -> int:
    """``Referee.start_due`` in this process, as untimed setup (the balances it reads are
    loaded per batch of matches by two grouped queries: referee.store.balances)."""
    return Referee(world.store, world.config).start_due(START)


def submit_all(world, round_no: int = 0) -> int:
    """Both players' submissions for the open round (a ROULETTE in rounds 0-9, a BET in rounds
    1-10): parsed and applied by the game engine, recorded by ``MatchBook.record_moves`` as
    the judge records an accepted mail (its move events, then the state)."""
    game = GAMES[GAME]
    book = MatchBook(world.config.secret)
    at = START + round_no * ROUND + timedelta(hours=3)
    submitted = 0
    last = 0
    while True:
        with world.store.unit_of_work() as session:
            matches = session.scalars(
                select(Match)
                .where(Match.status == "running", Match.id > last)
                .order_by(Match.id)
                .limit(SUBMIT_BATCH)
                .options(selectinload(Match.seats).selectinload(Seat.player))
            ).all()
            if not matches:
                return submitted
            for match in matches:
                for i, seat in enumerate(match.seats):
                    player = seat.player.key
                    parts = []
                    if round_no < LAST_ROUND:  # Gold and Silver in turn: never more than 5 times each
                        parts.append(ROULETTE.format(colour=("Gold", "Silver")[(round_no + i) % 2]))
                    if round_no > 0:
                        parts.append(BET)
                    state = match.state
                    logged = []
                    for move in game.parse(state, player, "\n\n".join(parts)).moves:
                        applied = game.apply_move(state, player, move)
                        assert applied.accepted, applied.reason
                        state = applied.state
                        logged.append({"move": move, "accepted": True})
                    book.record_moves(session, match, player, logged, state, at)
                    submitted += 1
            last = matches[-1].id


def close_untimed(world, round_no: int) -> float:
    """close_due at the round's deadline in this process (setup); its seconds."""
    t0 = time.perf_counter()
    closed = Referee(world.store, world.config).close_due(deadline_of(round_no))
    if closed != counts(world)["matches"]:
        raise SystemExit(f"setup: closing round {round_no} closed {closed} matches")
    return time.perf_counter() - t0


def time_ab(ctx, tmp: Path, r: int, m: int, pairs: int, workers: int, gc_mode: str) -> dict[int, list[dict]]:
    """``pairs`` closes of round ``r`` with no mail workers and as many with ``workers``,
    alternating, each on its own copy of the world (``ab-{r}-{k}``)."""
    runs: dict[int, list[dict]] = {0: [], workers: []}
    for k in range(2 * pairs):
        n = 0 if k % 2 == 0 else workers
        print(f"round {r}: A/B close {k + 1} of {2 * pairs} (mail workers: {n}) ...", flush=True)
        common.settle()
        out = in_fresh_process(ctx, "close", tmp / f"ab-{r}-{k}", round_no=r, gc_mode=gc_mode, mail_workers=n)
        if out["result"] != m:
            raise SystemExit(f"the A/B close closed {out['result']} of {m} matches")
        runs[n].append(out)
    return runs


def print_ab(r: int, m: int, runs: dict[int, list[dict]]) -> None:
    import statistics

    print(f"\nround {r}, closes side by side (alternating; ms per match: wall / the referee's CPU / workers' CPU):")
    medians = {}
    for n, outs in runs.items():
        walls = [1000 * o["seconds"] / m for o in outs]
        medians[n] = statistics.median(walls)
        print(
            f"  mail workers {n}: "
            + ", ".join(
                f"{1000 * o['seconds'] / m:.2f} / {1000 * o['cpu'] / m:.2f} / {1000 * o.get('cpu_workers', 0) / m:.2f}"
                for o in outs
            )
            + f"; median wall {medians[n]:.2f} ms"
            + (f"; mails by the workers {', '.join(str(o.get('by_workers', 0)) for o in outs)}" if n else "")
        )
    (a, b) = sorted(medians)
    print(f"  wall with workers / without: {medians[b] / medians[a]:.2f}")


def counts(world, round_no: int = 0) -> dict[str, int]:
    deadline = deadline_of(round_no)
    with world.store.unit_of_work() as session:
        found = {
            "matches": session.scalar(select(func.count()).select_from(Match)),
            "running": session.scalar(select(func.count()).select_from(Match).where(Match.status == "running")),
            "finished": session.scalar(select(func.count()).select_from(Match).where(Match.status == "finished")),
            "timeout events": session.scalar(select(func.count()).select_from(Event).where(Event.kind == "timeout")),
            "result mails of this close": session.scalar(
                select(func.count()).select_from(Outbox).where(Outbox.kind == "step", Outbox.created_at == deadline)
            ),
            "outbox rows": session.scalar(select(func.count()).select_from(Outbox)),
            "ledger rows from matches": session.scalar(
                select(func.count()).select_from(LedgerEntry).where(LedgerEntry.match_id.is_not(None))
            ),
        }
        if round_no < LAST_ROUND:
            found[f"round-{round_no + 1} open, deadline {round_no + 2} days after the start"] = session.scalar(
                select(func.count())
                .select_from(Match)
                .where(Match.step_key == f"round-{round_no + 1}", Match.deadline == deadline + ROUND)
            )
    return found


def check_close(close: dict, found: dict[str, int], m: int, r: int) -> None:
    """The close did the whole job, or its figure means nothing: exit non-zero."""
    expected = {"timeout events": m * (r + 1), "result mails of this close": 2 * m}
    if r < LAST_ROUND:
        expected.update({"running": m, f"round-{r + 1} open, deadline {r + 2} days after the start": m})
    else:
        expected["finished"] = m
    print(f"  after close_due of round {r}: " + ", ".join(f"{k} {v:,}" for k, v in found.items()), flush=True)
    wrong = {k: (found[k], v) for k, v in expected.items() if found[k] != v}
    if close["result"] != m or wrong:
        raise SystemExit(f"close_due of round {r} did not do the whole job: closed {close['result']} of {m}; {wrong}")


def parse_rounds(text: str) -> list[int]:
    try:
        rounds = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of rounds: {text!r}") from None
    if not rounds or rounds[0] < 0 or rounds[-1] > LAST_ROUND:
        raise argparse.ArgumentTypeError(f"rounds are 0 .. {LAST_ROUND}, e.g. 0,10; got {text!r}")
    return rounds


def print_stages(staged: dict[int, dict], m: int) -> None:
    """The stage timers of each round's close, per match; with several rounds, the growth."""
    rounds = sorted(staged)
    first = rounds[0]
    headers = ["step of close_due (nested steps are part of the step above)", "calls/match"]
    for r in rounds:
        headers += [f"r{r} wall ms", f"r{r} CPU ms"]
    if len(rounds) > 1:
        headers += [f"CPU r{rounds[-1]} - r{first}"]
    rows = []
    labels = (
        [label for label, *_ in STAGES[:1]]
        + ["  json.loads of the JSON columns read"]
        + [label for label, *_ in STAGES[1:]]
        + ["  json.dumps of the JSON columns written", *GC_LABELS.values()]
    )
    for label in labels:
        row: list = [label, staged[first]["stages"].get(label, [0, 0, 0])[0] / m]
        for r in rounds:
            calls, wall, cpu = staged[r]["stages"].get(label, [0, 0.0, 0.0])
            row += [1000 * wall / m, 1000 * cpu / m]
        if len(rounds) > 1:
            row.append(
                1000
                * (
                    staged[rounds[-1]]["stages"].get(label, [0, 0, 0])[2]
                    - staged[first]["stages"].get(label, [0, 0, 0])[2]
                )
                / m
            )
        rows.append(tuple(row))
    print("\nstage timers (a copy of each close, run with timers around its steps; ms per match):")
    print(table(rows, tuple(headers)))


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=10_000, help="concurrent matches (default 10000)")
    parser.add_argument(
        "--players", type=int, default=None, help="players in the season (default 2 x matches: nobody plays twice)"
    )
    parser.add_argument(
        "--start",
        choices=("referee", "fast"),
        default="referee",
        help="start the matches with Referee.start_due, timed in a fresh process (default), or "
        "'fast': the same start_due in this process, as untimed setup",
    )
    common.add_database_arguments(parser)
    parser.add_argument(
        "--rounds",
        type=parse_rounds,
        default=None,
        metavar="R[,R...]",
        help="the rounds whose close is timed, e.g. 0,10 (0 = the preparation phase, default; 1-10 = rounds "
        "with bets; 10 ends the matches); the rounds in between are played as untimed setup; with 0 and 10 the "
        "ratio round 10 / round 0 is printed",
    )
    parser.add_argument(
        "--round", type=int, default=None, choices=range(LAST_ROUND + 1), metavar="R", help="the same as --rounds R"
    )
    parser.add_argument("--profile", action="store_true", help="also run each timed close_due on a copy under cProfile")
    parser.add_argument("--top", type=int, default=35, help="rows of profile output (default 35)")
    parser.add_argument(
        "--stages",
        action="store_true",
        help="also run each timed close_due on a copy with stage timers (what each step of a close costs per "
        "match, wall and CPU, without a profiler's distortion; with several rounds, the difference to the first)",
    )
    parser.add_argument(
        "--gc",
        default="default",
        metavar="MODE",
        help="Python's garbage collector in the timed closes: 'default' (as the service runs it), or, to measure "
        "a change the service could make: 'freeze' (gc.freeze() before the close), 'threshold=N', 'off'",
    )
    parser.add_argument(
        "--mail-workers",
        type=int,
        default=None,
        metavar="N",
        help="worker processes that make the timed close's mails ([service] mail_workers; default: the "
        "service's, one on a machine of two cores or more; 0: all made in the referee's process)",
    )
    parser.add_argument(
        "--ab",
        type=int,
        default=0,
        metavar="K",
        help="also time K pairs of closes of each timed round on copies, alternating no mail workers and "
        "--mail-workers (default 1): the press's gain measured side by side on a machine whose speed varies",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (not a scratch database)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file (bench/goals.py reads it)")
    args = parser.parse_args(argv)
    if not (args.gc in ("default", "freeze", "off") or args.gc.startswith("threshold=")):
        parser.error(f"--gc: default, freeze, threshold=N or off, not {args.gc!r}")
    if args.rounds is not None and args.round is not None:
        parser.error("give --rounds or --round, not both")
    rounds = args.rounds or [args.round or 0]
    m = args.matches
    p = args.players or 2 * m
    if m < 1 or p < 2:
        parser.error("need at least one match and two players")

    ctx = fresh_processes()
    with common.scratch_databases(args.url) as scratch, temp_folder(args.keep) as tmp:
        folder = tmp / "world"
        world = new_world_on(folder, scratch.new("world"))
        print(
            f"bench_close: {m:,} Stationary Roulette matches, {p:,} players, one shared deadline, "
            f"{common.database_version(world.store)}; closing "
            + ", ".join("the preparation phase (round 0)" if r == 0 else f"round {r}" for r in rounds)
        )
        print(common.machine())
        if args.gc != "default":
            print(f"(an experiment: the timed closes run with --gc {args.gc}, which the service does not do)")
        rows: list[tuple] = []
        closes: dict[int, dict] = {}
        profiles: dict[int, dict] = {}
        staged: dict[int, dict] = {}
        ab: dict[int, dict[int, list[dict]]] = {}
        seconds = common.setup_season(world, m, p, how=args.setup)
        rows.append((f"load season ({args.setup})", m, seconds, m / seconds, "", "", "", "", ""))
        world.store.dispose()

        if args.start == "referee":
            print(f"starting {m:,} matches with Referee.start_due ...", flush=True)
            common.settle()
            start = in_fresh_process(ctx, "start", folder)
            if start["result"] != m:
                raise SystemExit(f"start_due started {start['result']} of {m} matches")
            rows.append(
                (
                    "Referee.start_due (2 step mails per match)",
                    m,
                    start["seconds"],
                    m / start["seconds"],
                    start["statements"] / m,
                    start["rss_before"],
                    start["rss_peak_sampled"],
                    start["hwm"],
                    start["maxrss"],
                )
            )
        else:
            world = open_world(folder)
            print(f"starting {m:,} matches (start_due, untimed setup) ...", flush=True)
            t0 = time.perf_counter()
            started = fast_start(world)
            seconds = time.perf_counter() - t0
            if started != m:
                raise SystemExit(f"start_due started {started} of {m} matches")
            rows.append(("start_due (setup)", m, seconds, m / seconds, "", "", "", "", ""))
            world.store.dispose()

        setup_seconds = 0.0
        for r in range(rounds[-1] + 1):
            world = open_world(folder)
            timed = r in rounds
            print(
                f"round {r}: submitting for {2 * m:,} players" + ("" if timed else ", then close_due (setup)"),
                flush=True,
            )
            t0 = time.perf_counter()
            submitted = submit_all(world, r)
            seconds = time.perf_counter() - t0
            assert submitted == 2 * m, submitted
            if not timed:
                setup_seconds += seconds + close_untimed(world, r)
                world.store.dispose()
                continue
            rows.append(
                (f"submit both players' round {r} (engine + MatchBook)", m, seconds, m / seconds, "", "", "", "", "")
            )
            world.store.dispose()
            if args.profile:
                copy_world_on(folder, tmp / f"profile-{r}", scratch, f"profile_{r}")
            if args.stages:
                copy_world_on(folder, tmp / f"stages-{r}", scratch, f"stages_{r}")
            for k in range(2 * args.ab):
                copy_world_on(folder, tmp / f"ab-{r}-{k}", scratch, f"ab_{r}_{k}")
            print(f"round {r}: closing {m:,} matches with Referee.close_due (timed) ...", flush=True)
            common.settle()
            close = closes[r] = in_fresh_process(
                ctx, "close", folder, round_no=r, gc_mode=args.gc, mail_workers=args.mail_workers
            )
            rows.append(
                (
                    f"Referee.close_due of round {r} (2 result mails per match)",
                    m,
                    close["seconds"],
                    m / close["seconds"],
                    close["statements"] / m,
                    close["rss_before"],
                    close["rss_peak_sampled"],
                    close["hwm"],
                    close["maxrss"],
                )
            )
            world = open_world(folder)
            check_close(close, counts(world, r), m, r)
            world.store.dispose()
            if args.profile:
                print(f"round {r}: closing a copy under cProfile ...", flush=True)
                profiles[r] = in_fresh_process(  # every mail made in the profiled process
                    ctx, "close", tmp / f"profile-{r}", args.top, round_no=r, mail_workers=0
                )
                if profiles[r]["result"] != m:
                    raise SystemExit(f"the profiled close closed {profiles[r]['result']} of {m} matches")
            if args.ab:
                ab[r] = time_ab(ctx, tmp, r, m, args.ab, args.mail_workers or 1, args.gc)
            if args.stages:
                print(f"round {r}: closing a copy with stage timers ...", flush=True)
                staged[r] = in_fresh_process(
                    ctx, "close", tmp / f"stages-{r}", round_no=r, stages=True, gc_mode=args.gc, mail_workers=0
                )
                if staged[r]["result"] != m:
                    raise SystemExit(f"the close with stage timers closed {staged[r]['result']} of {m} matches")
        if setup_seconds:
            rows.append(("rounds played as setup: submissions + close_due", m, setup_seconds, "", "", "", "", "", ""))

    print("\nresults (timed calls run in a fresh process; SQL/match: statements sent to the database; RSS in MB)")
    print(
        table(
            rows,
            (
                "step",
                "matches",
                "s",
                "matches/s",
                "SQL/match",
                "RSS before",
                "RSS peak (sampled)",
                "VmHWM",
                "ru_maxrss",
            ),
        )
    )
    print()
    per_match = {}
    for r, close in closes.items():
        secs = close["seconds"]
        per_match[r] = secs / m
        at_goal_size = per_match[r] * GOAL_MATCHES
        mb = max(close["maxrss"], close["hwm"], close["rss_peak_sampled"])
        print(
            f"close_due of round {r}: {secs:.1f} s for {m:,} matches, {1000 * per_match[r]:.2f} ms per match, "
            f"{2 * m / secs:,.0f} result mails/s"
            + ("" if m == GOAL_MATCHES else f"; at this rate {GOAL_MATCHES:,} matches take {at_goal_size:.1f} s")
            + f"; memory peak {mb:.0f} MB (RSS before {close['rss_before']:.0f}, after {close['rss_after']:.0f})"
        )
        print(
            f"  CPU time of the referee's process: {close['cpu']:.1f} s, {1000 * close['cpu'] / m:.2f} ms per match "
            f"(steadier than wall time on a shared machine)"
            + (
                f"; the mail workers' {close['cpu_workers']:.1f} s ({close['by_workers']:,} of the "
                f"{2 * m:,} mails; the referee waited {close['waited']:.1f} s for them)"
                if close.get("by_workers")
                else "; no mail workers"
            )
            + (
                f"; the PostgreSQL server's process {close['server_cpu']:.1f} s"
                if close.get("server_cpu") is not None
                else ""
            )
        )
        print(
            f"  goal: a round of {GOAL_MATCHES:,} matches closed in <= {GOAL_SECONDS:.0f} s: "
            + ("met" if at_goal_size <= GOAL_SECONDS else f"NOT met, {at_goal_size / GOAL_SECONDS:.2f}x over")
            + ("" if m == GOAL_MATCHES else " (extrapolated from this run)")
        )
        print(
            f"  goal: <= {GOAL_MB:.0f} MB with {GOAL_MATCHES:,} active matches: "
            + ("met" if mb <= GOAL_MB else "NOT met")
            + ("" if m == GOAL_MATCHES else f" (this run had {m:,}; run the default size for the real figure)")
        )
    if 0 in per_match and len(per_match) > 1:
        for r in sorted(per_match)[1:]:
            ratio = per_match[r] / per_match[0]
            cpu_ratio = closes[r]["cpu"] / closes[0]["cpu"]
            print(
                f"ratio round {r} / round 0: {ratio:.2f} ({1000 * per_match[r]:.2f} / {1000 * per_match[0]:.2f} ms "
                f"per match; CPU time of the referee's process: {cpu_ratio:.2f})"
            )
            if r == LAST_ROUND:
                print(
                    f"  goal: a close at round {LAST_ROUND} costs <= {GOAL_RATIO}x a close at round 0: "
                    + ("met" if ratio <= GOAL_RATIO else "NOT met")
                )
    else:
        print(f"(the ratio goal, round {LAST_ROUND} <= {GOAL_RATIO}x round 0: run --rounds 0,{LAST_ROUND})")
    if args.json:
        figures = {
            "matches": m,
            "rounds": {
                str(r): {
                    "seconds": c["seconds"],
                    "cpu": c["cpu"],
                    "cpu_workers": c.get("cpu_workers", 0.0),
                    "by_workers": c.get("by_workers", 0),
                    "per_match_ms": 1000 * c["seconds"] / m,
                }
                for r, c in closes.items()
            },
            "goal_matches": GOAL_MATCHES,
            "goal_seconds": GOAL_SECONDS,
            "goal_ratio": GOAL_RATIO,
        }
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    for r, runs in ab.items():
        print_ab(r, m, runs)
    if staged:
        print_stages(staged, m)
    for r, profile in profiles.items():
        print(f"\ncProfile of close_due of round {r} on a copy ({profile['seconds']:.1f} s under the profiler):")
        print(profile["profile"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
