"""Inbound submissions per second, end to end, against the floor.

Setup (not timed): a season of ``ceil(N / K)`` Stationary Roulette matches (two players
each) is loaded and started; the "round is open" mails are delivered to the players'
Maildirs. Then N real .eml files are written into the referee's inbox Maildir, as the
scripted mail client writes them (``referee.mail.client.ScriptedClient.reply``): each a
reply to the player's step mail, From the registered address, To the personal reply
address ``referee+<token>@domain`` (computed with ``tokens.make_token`` from the seat id
in the database and checked against the Reply-To of the step mail), the ROULETTE typed
on top and the step mail quoted below. K submissions per match alternate between the two
players (K = 4: two players x two revisions). Every mail is valid and accepted.

Timed, each on its own copy of the same world (database + Maildirs):

  tick      ``Referee.tick(now)``: ingest -> process_inbound -> flush_outbox (start_due,
            close_due and send_reminders find nothing due)
  phases    the same work with each phase called separately, with the same ``now``
  floor     the least any ingest can do: list the Maildir, read each file, parse it
            with the stdlib's compat32 policy (``email.message_from_bytes(raw)``), one
            plain INSERT of the raw mail per message into a simple table, committed every
            200 messages (the referee's batch), on the same kind of database opened by
            ``referee.store.db.make_engine`` (SQLite: same pragmas, WAL, synchronous=FULL,
            BEGIN IMMEDIATE)

Database: ``--url`` (default: a SQLite file in each world folder). A PostgreSQL URL
(``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``) gives every world a scratch
database of its own on that server (``common.scratch_databases``): the first one migrated
with Alembic as the service does, the copies made with ``CREATE DATABASE ... TEMPLATE``,
all dropped at the end.

Goals (issue): SQLite >= 1,000 messages/s end to end AND >= 30 % of the floor measured
in the same run; PostgreSQL >= 500 messages/s. The figures are printed, not asserted.

    .venv/bin/python bench/bench_inbound.py [--messages N] [--per-match K] [--url URL] [--profile]
"""

from __future__ import annotations

import json
import argparse
import cProfile
import email
import email.policy
import io
import math
import os
import pstats
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
from common import (  # noqa: E402
    GAME,
    ROULETTE,
    START,
    ScratchDatabases,
    World,
    copy_world_on,
    database_version,
    is_sqlite_url,
    new_world_on,
    open_world,
    scratch_databases,
    table,
    temp_folder,
)
from sqlalchemy import Column, Integer, LargeBinary, MetaData, Table, Text, event, func, select, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from referee.mail import maildir, tokens  # noqa: E402
from referee.mail.client import Received, ScriptedClient  # noqa: E402
from referee.mail.maildir import MaildirInbox, MaildirOutbox  # noqa: E402
from referee.render import environment  # noqa: E402
from referee.service import BATCH, Referee  # noqa: E402
from referee.store.db import make_engine  # noqa: E402
from referee.store.models import Inbound, Match, Outbox, Player, Seat  # noqa: E402

GOALS = {"SQLite": 1000.0, "PostgreSQL": 500.0}  # messages per second, end to end
FLOOR_GOAL = 0.30  # referee / floor, on SQLite
NOW = START + timedelta(hours=20)  # every mail has arrived; the deadline (24 h) has not passed
COLOURS = ("Gold", "Silver", "Black")


# ----------------------------------------------------------------------------- setup


def build(folder: Path, n_messages: int, per_match: int, setup: str, database: str | None) -> dict[str, float]:
    """A started season and N inbound mails waiting in inbox/new (on *database*, a URL;
    None: a SQLite file in *folder*); returns setup timings."""
    n_matches = math.ceil(n_messages / per_match)
    world = new_world_on(folder, database)
    timings = {"load season": common.setup_season(world, n_matches, 2 * n_matches, how=setup)}
    referee = referee_for(world)
    t0 = time.perf_counter()
    started = referee.start_due(START)
    timings["start_due (step mails into the outbox table)"] = time.perf_counter() - t0
    assert started == n_matches, started
    t0 = time.perf_counter()
    sent, errors = referee.flush_outbox(START)
    timings["flush step mails to the players' Maildirs"] = time.perf_counter() - t0
    assert (sent, errors) == (2 * n_matches, 0), (sent, errors)
    t0 = time.perf_counter()
    write_submissions(world, n_messages, per_match)
    timings["write inbound .eml files"] = time.perf_counter() - t0
    world.store.dispose()
    return timings


def write_submissions(world: World, n_messages: int, per_match: int) -> None:
    config = world.config
    with world.store.unit_of_work() as session:
        seats = session.execute(
            select(Seat.id, Seat.match_id, Seat.position, Match.key, Player.key, Player.name, Player.email)
            .join(Match, Seat.match_id == Match.id)
            .join(Player, Seat.player_id == Player.id)
            .order_by(Seat.match_id, Seat.position)
        ).all()
        step_mails = {
            (m, to): msg
            for m, to, msg in session.execute(
                select(Outbox.match_id, Outbox.to_addr, Outbox.message).where(Outbox.kind == "step")
            )
        }
    by_match: dict[int, list] = {}
    for seat in seats:
        by_match.setdefault(seat.match_id, []).append(seat)
    matches = sorted(by_match)
    clients: dict[str, ScriptedClient] = {}
    step = min(1.0, 18 * 3600 / max(n_messages, 1))  # all arrive within 1 h .. 19 h after the start
    written = 0
    for j in range(per_match):  # revision-major: a match's revisions are spread out
        for match_id in matches:
            if written == n_messages:
                return
            seat_id, _, position, mkey, pkey, pname, paddr = by_match[match_id][j % 2]
            original = Received(
                path=None, message=email.message_from_bytes(step_mails[match_id, paddr], policy=email.policy.default)
            )
            token = tokens.make_token(config.secret, seat_id, mkey, pkey)
            reply_to = tokens.reply_address(config.mail.local, config.mail.domain, token)
            assert original.reply_address == reply_to, (original.reply_address, reply_to)
            client = clients.get(paddr)
            if client is None:
                client = clients[paddr] = ScriptedClient(paddr, pname, config.mail.outbox / paddr, config.mail.inbox)
            at = START + timedelta(hours=1, seconds=written * step)
            client.reply(original, ROULETTE.format(colour=COLOURS[(j // 2) % 3]), at, to_addr=reply_to)
            written += 1


def referee_for(world: World, workers: int | None = None) -> Referee:
    """The referee of ``world``; ``workers``: its press's worker processes (--mail-workers;
    None: the service's default)."""
    referee = Referee(
        world.store,
        world.config,
        inbox=MaildirInbox(world.config.mail.inbox),
        outbox=MaildirOutbox(world.config.mail.outbox, per_address=world.config.mail.per_address),
    )
    if workers is not None:
        referee.notices.press.workers = workers
    return referee


# ----------------------------------------------------------------------------- instruments


class Counters:
    """Syncs made from Python (the Maildir code: os.fsync, os.fdatasync, and the
    ``syncfs`` helper of referee.mail.maildir where there is one) and database COMMITs,
    while active. Instrumentation only: each call is passed through unchanged."""

    def __init__(self, world: World):
        self.fsyncs = 0
        self.fsync_seconds = 0.0
        self.commits = 0
        self.statements = 0
        self._targets = [(os, "fsync"), (os, "fdatasync"), (maildir, "_syncfs")]
        self._saved: list[tuple[object, str, object]] = []
        self._active = False
        event.listen(world.store.engine, "commit", self._on_commit)
        event.listen(world.store.engine, "before_cursor_execute", self._on_statement)

    def _on_commit(self, _conn) -> None:
        if self._active:
            self.commits += 1

    def _on_statement(self, *_args) -> None:
        if self._active:
            self.statements += 1

    def _counting(self, real):
        def call(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                self.fsyncs += 1
                self.fsync_seconds += time.perf_counter() - t0

        return call

    def __enter__(self) -> Counters:
        self._active = True
        for owner, name in self._targets:
            real = getattr(owner, name, None)
            if real is not None:
                self._saved.append((owner, name, real))
                setattr(owner, name, self._counting(real))
        return self

    def __exit__(self, *exc) -> None:
        self._active = False
        for owner, name, real in self._saved:
            setattr(owner, name, real)
        self._saved.clear()


def warm() -> None:
    """A long-running service has its templates compiled; so does the benchmark."""
    env = environment()
    for name in ("receipt", "step", "error"):
        try:
            env.get_template(f"mail/{GAME}/{name}.txt")
        except Exception:
            env.get_template(f"mail/common/{name}.txt")


# ----------------------------------------------------------------------------- runs


def run_tick(folder: Path, n: int, workers: int | None) -> dict:
    world = open_world(folder)
    referee = referee_for(world, workers)
    warm()
    with Counters(world) as counters:
        t0 = time.perf_counter()
        report = referee.tick(NOW)
        seconds = time.perf_counter() - t0
    check(world, n, report.accepted, report.sent)
    world.store.dispose()
    referee.notices.close()
    return {
        "by_workers": referee.notices.press.by_workers,
        "read_by_workers": referee.notices.press.jobs_by_workers,
        "waited": referee.notices.press.waited,
        "workers": referee.notices.press.workers,
        "seconds": seconds,
        "report": report,
        "fsyncs": counters.fsyncs,
        "fsync_seconds": counters.fsync_seconds,
        "commits": counters.commits,
        "statements": counters.statements,
    }


def run_phases(folder: Path, n: int, workers: int | None) -> dict:
    world = open_world(folder)
    referee = referee_for(world, workers)
    warm()
    phases: dict[str, dict] = {}
    calls = [
        ("ingest", lambda: referee.ingest(NOW)),
        ("process_inbound", lambda: referee.process_inbound(NOW)),
        ("flush_outbox", lambda: referee.flush_outbox(NOW)),
        (
            "start_due + close_due + send_reminders (nothing due)",
            lambda: (referee.start_due(NOW), referee.close_due(NOW), referee.send_reminders(NOW)),
        ),
    ]
    results = {}
    for name, call in calls:
        with Counters(world) as counters:
            t0 = time.perf_counter()
            results[name] = call()
            seconds = time.perf_counter() - t0
        phases[name] = {
            "seconds": seconds,
            "fsyncs": counters.fsyncs,
            "fsync_seconds": counters.fsync_seconds,
            "commits": counters.commits,
            "statements": counters.statements,
        }
    assert results["ingest"] == n, results["ingest"]
    check(world, n, results["process_inbound"].accepted, results["flush_outbox"][0])
    world.store.dispose()
    return phases


def run_profile(folder: Path, top: int, workers: int | None) -> str:
    world = open_world(folder)
    referee = referee_for(world, workers)
    warm()
    # The phases one by one, not ``tick``: a tick judges in a worker thread, which cProfile
    # (enabled in this thread only) would not see.
    profiler = cProfile.Profile()
    profiler.enable()
    referee.ingest(NOW)
    referee.process_inbound(NOW)
    referee.flush_outbox(NOW)
    profiler.disable()
    world.store.dispose()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    out.write(common.profile_breakdown(stats) + "\n\n")
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def check(world: World, n: int, accepted: int, sent: int) -> None:
    """Every mail must have gone the whole way, or the figure means nothing."""
    with world.store.unit_of_work() as session:
        statuses = dict(session.execute(select(Inbound.status, func.count()).group_by(Inbound.status)).all())
        receipts = session.scalar(
            select(func.count()).select_from(Outbox).where(Outbox.kind == "receipt", Outbox.status == "sent")
        )
    if accepted != n or sent != n or statuses != {"accepted": n} or receipts != n:
        raise SystemExit(
            f"benchmark run incomplete: accepted {accepted}, sent {sent}, inbound {statuses}, "
            f"receipts sent {receipts}; expected {n} of each"
        )


def run_floor(inbox: Path, url: str) -> dict:
    """List, read, parse with the stdlib (compat32), one INSERT of the raw mail per
    message; 200 per transaction."""
    engine = make_engine(url)
    floor = Table(
        "floor_inbound",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("message_id", Text, nullable=False, unique=True),
        Column("raw", LargeBinary, nullable=False),
        Column("received_at", Text, nullable=False),
    )
    floor.metadata.create_all(engine)
    insert = floor.insert()
    t0 = time.perf_counter()
    found = []
    with os.scandir(inbox / "new") as entries:
        for entry in entries:
            if not entry.name.startswith("."):
                found.append((entry.stat().st_mtime_ns, entry.name, entry.path))
    found.sort()
    count = 0
    for start in range(0, len(found), BATCH):
        with engine.begin() as conn:
            for mtime, _name, path in found[start : start + BATCH]:
                with open(path, "rb") as fh:
                    raw = fh.read()
                msg = email.message_from_bytes(raw)  # the compat32 policy
                conn.execute(insert, {"message_id": str(msg["Message-ID"]), "raw": raw, "received_at": str(mtime)})
                count += 1
    seconds = time.perf_counter() - t0
    engine.dispose()
    return {"seconds": seconds, "count": count}


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000, help="inbound submissions (default 2000)")
    parser.add_argument(
        "--per-match",
        type=int,
        default=1,
        help="submissions per match, alternating players (default 1: N matches; 4: 2 players x 2 revisions)",
    )
    common.add_database_arguments(parser)
    parser.add_argument(
        "--profile", action="store_true", help="also run the tick under cProfile and print the top functions"
    )
    parser.add_argument("--top", type=int, default=35, help="rows of profile output (default 35)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--json", type=Path, help="also write the figures to this file (bench/goals.py reads it)")
    parser.add_argument(
        "--mail-workers",
        type=int,
        default=None,
        help="the press's worker processes (default: the service's, one on two cores or more; 0: none)",
    )
    args = parser.parse_args(argv)
    n, k = args.messages, args.per_match
    if n < 1 or k < 1:
        parser.error("--messages and --per-match must be positive")

    kind = "SQLite" if is_sqlite_url(args.url) else "PostgreSQL"
    where = "a SQLite file per world" if kind == "SQLite" else f"scratch databases on {make_url(args.url).host}"
    print(f"bench_inbound: {n:,} submissions, {k} per match ({math.ceil(n / k):,} matches), {where}")
    print(common.machine())
    with scratch_databases(args.url, prefix="referee_bench_inbound") as scratch, temp_folder(args.keep) as tmp:
        results = run_all(tmp, n, k, args, scratch)
    report(n, kind, *results, json_path=args.json)
    return 0


def run_all(tmp: Path, n: int, k: int, args: argparse.Namespace, scratch: ScratchDatabases) -> tuple:
    template = tmp / "template"
    setup = build(template, n, k, args.setup, scratch.new("template"))
    inbox = template / "mail" / "inbox"
    sizes = [p.stat().st_size for p in (inbox / "new").iterdir()]
    print(f"\nsetup (not timed in the figures): inbound mails average {sum(sizes) / len(sizes):,.0f} bytes")
    print(table([(name, seconds) for name, seconds in setup.items()], ("setup step", "s")))
    world = open_world(template)
    print(f"database: {database_version(world.store)}")
    world.store.dispose()

    copy_world_on(template, tmp / "tick", scratch, "tick")
    checkpoint(tmp / "tick")
    tick = run_tick(tmp / "tick", n, args.mail_workers)
    copy_world_on(template, tmp / "phases", scratch, "phases")
    checkpoint(tmp / "phases")
    phases = run_phases(tmp / "phases", n, args.mail_workers)
    floor_url = scratch.new("floor") or f"sqlite:///{tmp / 'floor.db'}"
    common.settle()
    floor = run_floor(inbox, floor_url)
    profile = None
    if args.profile:
        copy_world_on(template, tmp / "profile", scratch, "profile")
        profile = run_profile(tmp / "profile", args.top, args.mail_workers)
    return tick, phases, floor, profile


def checkpoint(folder: Path) -> None:
    """PostgreSQL: a CHECKPOINT, so that no timed commit pays for the setup's dirty pages
    (SQLite: ``common.settle`` has synced the copied file already)."""
    world = open_world(folder)
    if not world.store.url.startswith("sqlite"):
        with world.store.engine.connect() as conn:
            conn.execute(text("CHECKPOINT"))
    world.store.dispose()


def report(
    n: int, kind: str, tick: dict, phases: dict, floor: dict, profile: str | None, json_path: Path | None = None
) -> None:
    rows = [
        (
            "Referee.tick (whole cycle)",
            n,
            tick["seconds"],
            n / tick["seconds"],
            1000 * tick["seconds"] / n,
            tick["statements"] / n,
            tick["commits"],
            tick["fsyncs"],
            tick["fsync_seconds"],
        )
    ]
    phase_total = 0.0
    for name, p in phases.items():
        phase_total += p["seconds"]
        rows.append(
            (
                f"  {name}",
                n,
                p["seconds"],
                n / p["seconds"],
                1000 * p["seconds"] / n,
                p["statements"] / n,
                p["commits"],
                p["fsyncs"],
                p["fsync_seconds"],
            )
        )
    rows.append(("  sum of the phases", n, phase_total, n / phase_total, 1000 * phase_total / n, "", "", "", ""))
    rows.append(
        (
            "floor: list + read + compat32 parse + INSERT",
            floor["count"],
            floor["seconds"],
            floor["count"] / floor["seconds"],
            1000 * floor["seconds"] / floor["count"],
            1.0,
            math.ceil(n / BATCH),
            0,
            0.0,
        )
    )
    print(f"\nresults ({kind})")
    print(table(rows, ("what", "messages", "s", "msg/s", "ms/msg", "SQL/msg", "db commits", "Maildir syncs", "sync s")))
    rate = n / tick["seconds"]
    floor_rate = floor["count"] / floor["seconds"]
    ratio = rate / floor_rate
    goal = GOALS[kind]
    print(
        f"\nend to end ({kind}): {rate:,.0f} messages/s (goal >= {goal:,.0f}/s: "
        f"{'met' if rate >= goal else f'NOT met, {rate / goal:.0%} of it'})"
    )
    print(
        f"mail workers: {tick['workers']}; in the tick they made {tick['by_workers']:,} of the answers "
        f"and read {tick['read_by_workers']:,} of the replies ahead, and the referee waited "
        f"{tick['waited']:.2f} s for them (the worker starts when the tick finds many mails waiting, "
        "and is ready about a second later)"
    )
    if json_path:
        figures = {"database": kind, "messages": n, "rate": rate, "floor_rate": floor_rate, "goal": goal}
        json_path.write_text(json.dumps(figures, indent=1) + "\n")
    print(f"referee / floor: {ratio:.3f} (floor {floor_rate:,.0f} msg/s, {floor_rate / rate:.1f}x faster)", end="")
    if kind != "SQLite":
        print(" (the floor goal is SQLite's)")
    else:
        print(f" (goal >= {FLOOR_GOAL:.2f}: {'met' if ratio >= FLOOR_GOAL else 'NOT met'})")
    print(
        "(SQL/msg: statements sent to the database per message, BEGIN/SAVEPOINT included; db commits:\n"
        " COMMITs, each an fsync of the WAL (SQLite, synchronous=FULL); Maildir syncs: os.fsync /\n"
        " os.fdatasync / syncfs calls made from Python, and the seconds spent in them)"
    )
    if profile:
        print("\ncProfile of the phases (ingest, process_inbound, flush_outbox) on a third copy")
        print("(profiler overhead inflates the times):")
        print(profile)


if __name__ == "__main__":
    sys.exit(main())
