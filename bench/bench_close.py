"""Closing one round of 10,000 concurrent Stationary Roulette matches (SQLite).

Setup: a season of M matches (default 10,000) and 2 x M players (``--players`` reuses
fewer players across matches), loaded by bulk INSERTs (the rows ``load_season`` writes).
All matches start at the same instant, so all share one deadline.

  start     ``Referee.start_due(start)`` starts all M matches (timed and printed:
            chips from the ledger, initial state, start event, two "round is open"
            mails composed into the outbox table per match). ``--start fast`` runs the
            same start_due in this process as untimed setup, for iterating on close_due.
  submit    both players' submissions for the round (a ROULETTE in rounds 0-9, a BET in
            rounds 1-10), applied through the game engine (``parse`` + ``apply_move``)
            and the Referee's own ``_log_event`` / ``_save_state``, as ``process_inbound``
            records an accepted mail (not timed: the mail path is bench_inbound.py).
            ``--round R`` first plays rounds 0 .. R-1 this way, each closed by close_due
            (untimed), so that round R is closed with R rounds of history in the state.
  close     ``Referee.close_due(deadline)``: M rounds settled, M timeout events, the
            next round opened, 2 x M result mails composed into the outbox table.
            Timed, in a fresh process, with its memory: ru_maxrss (peak) and VmRSS
            sampled every 10 ms while it runs.

Goals (issue): close <= 20 s, memory <= 300 MB with 10,000 active matches.

    .venv/bin/python bench/bench_close.py [--matches N] [--players P] [--start referee|fast] [--round R] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import multiprocessing
import pstats
import sys
from queue import Empty
import threading
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
from common import BET, GAME, ROULETTE, ROUND, START, copy_world, new_world, open_world, table, temp_folder  # noqa: E402
from sqlalchemy import event, func, select  # noqa: E402
from sqlalchemy.orm import selectinload  # noqa: E402

from referee.games import GAMES  # noqa: E402
from referee.service import Referee  # noqa: E402
from referee.store.models import Event, LedgerEntry, Match, Outbox, Player, Seat  # noqa: E402

GOAL_SECONDS = 20.0
GOAL_MATCHES = 10_000
GOAL_MB = 300.0
LAST_ROUND = 10      # Stationary Roulette: the preparation phase (round 0), then rounds 1-10


def deadline_of(round_no: int):
    return START + (round_no + 1) * ROUND
SUBMIT_BATCH = 500


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


def worker(kind: str, folder: str, profile_top: int, queue, round_no: int = 0) -> None:
    """Run start_due or close_due once in this (fresh) process; report time and memory."""
    world = open_world(Path(folder))
    referee = Referee(world.store, world.config)  # no transports: the mails stay in the outbox table
    deadline = deadline_of(round_no)
    call = (lambda: referee.start_due(START)) if kind == "start" else (lambda: referee.close_due(deadline))
    with world.store.unit_of_work() as session:  # connect, and load what every tick needs, before timing
        session.scalar(select(func.count()).select_from(Match))
    statements = [0]
    event.listen(world.store.engine, "before_cursor_execute", lambda *_a: statements.__setitem__(0, statements[0] + 1))
    gc.collect()
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
        t0 = time.perf_counter()
        result = call()
        out["seconds"] = time.perf_counter() - t0
        sampler.stop()
        out["rss_peak_sampled"] = max(sampler.samples, default=before)
        out["rss_samples"] = len(sampler.samples)
    out["statements"] = statements[0]
    out["result"] = result  # start_due: matches started; close_due: steps closed
    out["rss_after"] = common.rss_mb()
    out["maxrss"] = common.maxrss_mb()
    out["hwm"] = common.hwm_mb()
    world.store.dispose()
    queue.put(out)


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


def in_fresh_process(ctx, kind: str, folder: Path, profile_top: int = 0, round_no: int = 0) -> dict:
    queue = ctx.Queue()
    proc = ctx.Process(target=worker, args=(kind, str(folder), profile_top, queue, round_no))
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
    1-10), recorded as an accepted mail's moves are: game engine + Referee internals."""
    game = GAMES[GAME]
    referee = Referee(world.store, world.config)
    at = START + round_no * ROUND + timedelta(hours=3)
    submitted = 0
    last = 0
    while True:
        with world.store.unit_of_work() as session:
            matches = session.scalars(
                select(Match).where(Match.status == "running", Match.id > last).order_by(Match.id)
                .limit(SUBMIT_BATCH).options(selectinload(Match.seats).selectinload(Seat.player))).all()
            if not matches:
                return submitted
            for match in matches:
                state = match.state
                for i, seat in enumerate(match.seats):
                    player = seat.player.key
                    parts = []
                    if round_no < LAST_ROUND:  # Gold and Silver in turn: never more than 5 times each
                        parts.append(ROULETTE.format(colour=("Gold", "Silver")[(round_no + i) % 2]))
                    if round_no > 0:
                        parts.append(BET)
                    for move in game.parse(state, player, "\n\n".join(parts)).moves:
                        applied = game.apply_move(state, player, move)
                        assert applied.accepted, applied.reason
                        state = applied.state
                        referee.book.log_event(session, match, "move", player, {"move": move, "accepted": True}, at)
                    submitted += 1
                referee.book.save_state(session, match, game, state, at)
            last = matches[-1].id


def advance(world, rounds: int) -> float:
    """Play rounds 0 .. rounds-1 (submissions, then close_due at each deadline); untimed setup."""
    t0 = time.perf_counter()
    for round_no in range(rounds):
        print(f"  round {round_no}: submitting and closing ...", flush=True)
        submit_all(world, round_no)
        closed = Referee(world.store, world.config).close_due(deadline_of(round_no))
        if closed != counts(world)["matches"]:
            raise SystemExit(f"setup: closing round {round_no} closed {closed} matches")
    return time.perf_counter() - t0


def counts(world, round_no: int = 0) -> dict[str, int]:
    deadline = deadline_of(round_no)
    with world.store.unit_of_work() as session:
        found = {
            "matches": session.scalar(select(func.count()).select_from(Match)),
            "running": session.scalar(select(func.count()).select_from(Match).where(Match.status == "running")),
            "finished": session.scalar(select(func.count()).select_from(Match).where(Match.status == "finished")),
            "timeout events": session.scalar(select(func.count()).select_from(Event).where(Event.kind == "timeout")),
            "result mails of this close": session.scalar(select(func.count()).select_from(Outbox).where(
                Outbox.kind == "step", Outbox.created_at == deadline)),
            "outbox rows": session.scalar(select(func.count()).select_from(Outbox)),
            "ledger rows from matches": session.scalar(select(func.count()).select_from(LedgerEntry).where(
                LedgerEntry.match_id.is_not(None))),
        }
        if round_no < LAST_ROUND:
            found[f"round-{round_no + 1} open, deadline {round_no + 2} days after the start"] = session.scalar(
                select(func.count()).select_from(Match).where(
                    Match.step_key == f"round-{round_no + 1}", Match.deadline == deadline + ROUND))
    return found


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=10_000, help="concurrent matches (default 10000)")
    parser.add_argument("--players", type=int, default=None,
                        help="players in the season (default 2 x matches: nobody plays twice)")
    parser.add_argument("--start", choices=("referee", "fast"), default="referee",
                        help="start the matches with Referee.start_due, timed in a fresh process (default), or "
                             "'fast': the same start_due in this process, as untimed setup")
    parser.add_argument("--setup", choices=("bulk", "loader"), default="bulk",
                        help="load the season by bulk INSERTs (default) or through referee.seasons.load_season")
    parser.add_argument("--round", type=int, default=0, choices=range(LAST_ROUND + 1), metavar="R",
                        help="close round R (0 = the preparation phase, default; 1-10 = rounds with bets; "
                             "10 ends the matches). Rounds before R are played as untimed setup (slow at 10,000)")
    parser.add_argument("--profile", action="store_true",
                        help="also run close_due on a copy under cProfile and print the top functions")
    parser.add_argument("--top", type=int, default=35, help="rows of profile output (default 35)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    m = args.matches
    r = args.round
    p = args.players or 2 * m
    if m < 1 or p < 2:
        parser.error("need at least one match and two players")

    ctx = fresh_processes()
    print(f"bench_close: {m:,} Stationary Roulette matches, {p:,} players, one shared deadline, SQLite file; "
          f"closing {'the preparation phase (round 0)' if r == 0 else f'round {r}'}")
    print(common.machine())
    rows: list[tuple] = []
    with temp_folder(args.keep) as tmp:
        folder = tmp / "world"
        world = new_world(folder)
        seconds = common.setup_season(world, m, p, how=args.setup)
        rows.append((f"load season ({args.setup})", m, seconds, m / seconds, "", "", "", "", ""))
        world.store.dispose()

        if args.start == "referee":
            print(f"starting {m:,} matches with Referee.start_due ...", flush=True)
            common.settle()
            start = in_fresh_process(ctx, "start", folder)
            if start["result"] != m:
                raise SystemExit(f"start_due started {start['result']} of {m} matches")
            rows.append(("Referee.start_due (2 step mails per match)", m, start["seconds"], m / start["seconds"],
                         start["statements"] / m, start["rss_before"], start["rss_peak_sampled"], start["hwm"], start["maxrss"]))
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

        world = open_world(folder)
        if r:
            print(f"playing rounds 0-{r - 1} (untimed setup) ...", flush=True)
            seconds = advance(world, r)
            rows.append((f"play rounds 0-{r - 1}: submissions + close_due (setup)", m, seconds, m / seconds,
                         "", "", "", "", ""))
        print(f"submitting round {r} for {2 * m:,} players ...", flush=True)
        t0 = time.perf_counter()
        submitted = submit_all(world, r)
        seconds = time.perf_counter() - t0
        assert submitted == 2 * m, submitted
        rows.append((f"submit both players' round {r} (engine + Referee internals)", m, seconds, m / seconds,
                     "", "", "", "", ""))
        world.store.dispose()
        if args.profile:
            copy_world(folder, tmp / "profile")

        print(f"closing round {r} of {m:,} matches with Referee.close_due ...", flush=True)
        common.settle()
        close = in_fresh_process(ctx, "close", folder, round_no=r)
        rows.append(("Referee.close_due (2 result mails per match)", m, close["seconds"], m / close["seconds"],
                     close["statements"] / m, close["rss_before"], close["rss_peak_sampled"], close["hwm"], close["maxrss"]))
        world = open_world(folder)
        found = counts(world, r)
        world.store.dispose()
        profile = in_fresh_process(ctx, "close", tmp / "profile", args.top, round_no=r) if args.profile else None

    print("\nresults (timed calls run in a fresh process; SQL/match: statements sent to SQLite; RSS in MB)")
    print(table(rows, ("step", "matches", "s", "matches/s", "SQL/match", "RSS before", "RSS peak (sampled)", "VmHWM",
                       "ru_maxrss")))
    expected = {"timeout events": m * (r + 1), "result mails of this close": 2 * m}
    if r < LAST_ROUND:
        expected.update({"running": m, f"round-{r + 1} open, deadline {r + 2} days after the start": m})
    else:
        expected["finished"] = m
    print("\nafter close_due: " + ", ".join(f"{k} {v:,}" for k, v in found.items()))
    wrong = {k: (found[k], v) for k, v in expected.items() if found[k] != v}
    if close["result"] != m or wrong:
        raise SystemExit(f"close_due did not do the whole job: closed {close['result']} of {m}; {wrong}")
    secs, mb = close["seconds"], max(close["maxrss"], close["hwm"], close["rss_peak_sampled"])
    per_match = secs / m
    at_goal_size = per_match * GOAL_MATCHES
    print(f"\nclose_due of round {r}: {secs:.1f} s for {m:,} matches, {1000 * per_match:.2f} ms per match, "
          f"{2 * m / secs:,.0f} result mails/s"
          + ("" if m == GOAL_MATCHES else f"; at this rate {GOAL_MATCHES:,} matches take {at_goal_size:.0f} s"))
    print(f"  goal: a round of {GOAL_MATCHES:,} matches closed in <= {GOAL_SECONDS:.0f} s: "
          + ("met" if at_goal_size <= GOAL_SECONDS else f"NOT met, {at_goal_size / GOAL_SECONDS:.1f}x over"))
    print(f"memory during close_due: peak {mb:.0f} MB (RSS before {close['rss_before']:.0f} MB, "
          f"after {close['rss_after']:.0f} MB)")
    print(f"  goal: <= {GOAL_MB:.0f} MB with {GOAL_MATCHES:,} active matches: "
          + ("met" if mb <= GOAL_MB else "NOT met")
          + ("" if m == GOAL_MATCHES else f" (this run had {m:,}; run the default size for the real figure)"))
    if profile:
        print(f"\ncProfile of close_due on a copy ({profile['seconds']:.1f} s under the profiler):")
        print(profile["profile"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
