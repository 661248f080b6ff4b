"""Building the archive's static site of a season of 10,000 finished matches (SQLite or PostgreSQL).

Setup (not timed): one real Stationary Roulette match is played to its end through the
match book (``MatchBook.start``, ``record_moves`` with moves from ``sample_moves``,
``close_step`` at every deadline), so its state, events (hash-chained) and ledger rows are
the service's own. The season is then written by bulk INSERTs: P players (default 1,000,
each playing 20 matches), their starting chips, and M copies (default 10,000) of that
finished match under new keys and seats (every player id in the state, the events, the
ledger rows and the result replaced, the events chained anew for the new key, the times
shifted by up to a day so the matches finish in a spread-out order). One more match is
started and left running, so a step can close later.

Timed, in this process, each with the files it wrote:

  full      ``referee.archive.site.build(store, outdir, now=..., full=True)`` into an empty folder
  nothing   the same build again: nothing has changed, so nothing is rendered or written
  one step  the running match's step is closed (``MatchBook.close_step``, not timed), then
            the incremental build: that match's three files, its two players' pages, the
            season page and feed and the schedule page it is on

``--url postgresql+psycopg://USER@HOST:PORT/DB`` runs on a scratch database created on
that server and dropped afterwards; the default is a SQLite file opened as the service
opens it. ``--profile`` runs the "one step" rebuild again under cProfile.

    .venv/bin/python bench/bench_archive.py [--matches N] [--players P] [--url URL] [--profile] [--keep]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import random
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
from common import GAME, START, new_world_on, player_key, table, temp_folder  # noqa: E402
from sqlalchemy import insert, select  # noqa: E402

from referee.archive import chain  # noqa: E402
from referee.archive.site import build  # noqa: E402
from referee.config import parse_season  # noqa: E402
from referee.games import GAMES  # noqa: E402
from referee.match.book import MATCH_CONTEXT, MatchBook  # noqa: E402
from referee.store.db import Store  # noqa: E402
from referee.store.models import Event, LedgerEntry, Match, Player, Seat  # noqa: E402

TEMPLATE_PLAYERS = ("tplA", "tplB")  # the played match's players, replaced in every copy
LIVE_PLAYERS = ("liveA", "liveB")  # the running match's: their chips are not moved by the copies
INSERT_BATCH = 1000


def season_dict(n_players: int) -> dict[str, Any]:
    """The season file: the players, the template match and the match left running."""
    players = [
        {
            "id": player_key(j),
            "name": f"Player {j}",
            "email": f"{player_key(j)}@{common.PLAYER_DOMAIN}",
            "timezone": common.TIMEZONES[j % len(common.TIMEZONES)],
        }
        for j in range(n_players)
    ] + [
        {"id": key, "name": f"Player {key}", "email": f"{key}@{common.PLAYER_DOMAIN}"}
        for key in TEMPLATE_PLAYERS + LIVE_PLAYERS
    ]
    return {
        "season": {"id": "bench", "name": "Benchmark season", "starting_chips": common.STARTING_CHIPS, "reminders": []},
        "players": players,
        "matches": [
            {"id": "template", "game": GAME, "players": list(TEMPLATE_PLAYERS), "start": START.isoformat(), "seed": 1},
            {"id": "live", "game": GAME, "players": list(LIVE_PLAYERS), "start": START.isoformat(), "seed": 2},
        ],
    }  # fmt: skip


def play_to_the_end(store: Store, book: MatchBook, key: str, rnd: random.Random) -> None:
    """Start ``key`` and play it out: each round both players' sample moves, then the deadline."""
    with store.unit_of_work() as session:
        book.start(session, session.scalar(select(Match).options(*MATCH_CONTEXT).where(Match.key == key)))
    while True:
        with store.unit_of_work() as session:
            match = session.scalar(select(Match).options(*MATCH_CONTEXT).where(Match.key == key))
            if match.status != "running":
                return
            game = GAMES[match.game]
            at = match.step_opened_at + timedelta(hours=1)
            for player in game.step(match.state).players:
                moves = game.sample_moves(match.state, player, rnd)
                if moves:
                    move = rnd.choice(moves)
                    applied = game.apply_move(match.state, player, move)
                    logged = [{"move": move, "accepted": True}]
                    book.record_moves(session, match, player, logged, applied.state, at)
                    at += timedelta(minutes=5)
            book.close_step(session, match)


def rekeyed(value: Any, keys: dict[str, str]) -> Any:
    """``value`` (plain JSON data) with the template's player ids replaced, in keys and values."""
    text = json.dumps(value)
    for old, new in keys.items():
        text = text.replace(f'"{old}"', f'"{new}"')
    return json.loads(text)


def copy_template(store: Store, n_matches: int, n_players: int) -> None:
    """M copies of the finished template match, each between two of the season's players."""
    with store.unit_of_work() as session:
        template = session.scalar(select(Match).where(Match.key == "template"))
        events = list(session.scalars(select(Event).where(Event.match_id == template.id).order_by(Event.seq)))
        ledger = list(session.scalars(select(LedgerEntry).where(LedgerEntry.match_id == template.id)))
        season_id = template.season_id
        player_ids = dict(session.execute(select(Player.key, Player.id).where(Player.season_id == season_id)).all())
        fields = {c: getattr(template, c) for c in ("game", "seed", "options", "timing", "state", "result")}
        times = (template.starts_at, template.finished_at, template.last_event_seq)
    seats = common.seating(n_matches, n_players)
    with store.engine.begin() as conn:
        for start in range(0, n_matches, INSERT_BATCH):
            batch = range(start, min(start + INSERT_BATCH, n_matches))
            copies = [_copy(i, seats[i], fields, times, events, ledger) for i in batch]
            for match, *_ in copies:
                match["season_id"] = season_id
            ids = dict(conn.execute(insert(Match).returning(Match.key, Match.id), [c[0] for c in copies]).all())
            event_rows, ledger_rows, seat_rows = [], [], []
            for match, chained, moved, players in copies:
                match_id = ids[match["key"]]
                event_rows += [{**row, "match_id": match_id} for row in chained]
                ledger_rows += [{**row, "season_id": season_id, "match_id": match_id} for row in moved]
                seat_rows += [
                    {"match_id": match_id, "player_id": player_ids[p], "position": pos} for pos, p in enumerate(players)
                ]
            conn.execute(insert(Event), event_rows)
            conn.execute(insert(LedgerEntry), ledger_rows)
            conn.execute(insert(Seat), seat_rows)


def _copy(i, seat, fields, times, events, ledger):
    """The rows of copy ``i``: the match (its season filled in later), its events chained
    anew under its key, its ledger rows and its players, all moved by a shift in time."""
    players = (player_key(seat[0]), player_key(seat[1]))
    keys = dict(zip(TEMPLATE_PLAYERS, players, strict=True))
    shift = timedelta(minutes=(i * 7) % 1440)
    key = common.match_key(i)
    head = chain.GENESIS
    chained = []
    for ev in events:
        row = {"seq": ev.seq, "kind": ev.kind, "step_key": ev.step_key, "player": keys.get(ev.player, ev.player),
               "payload": rekeyed(ev.payload, keys), "at": ev.at + shift, "inbound_id": None}  # fmt: skip
        row["digest"], head = chain.stamp(head, key, row)
        chained.append({**row, "hash": head})
    moved = [
        {"seq": e.seq, "from_account": keys.get(e.from_account, e.from_account),
         "to_account": keys.get(e.to_account, e.to_account), "amount": e.amount, "reason": e.reason,
         "step_key": e.step_key, "at": e.at + shift, "currency": e.currency}
        for e in ledger
    ]  # fmt: skip
    match = {
        "season_id": None, "key": key, "status": "finished", "version": 1, "starts_at": times[0] + shift,
        "finished_at": times[1] + shift, "last_event_seq": times[2], "last_event_hash": head,
        **{name: rekeyed(value, keys) for name, value in fields.items()},
    }  # fmt: skip
    return match, chained, moved, players


def step_once(store: Store, book: MatchBook, key: str) -> None:
    with store.unit_of_work() as session:
        book.close_step(session, session.scalar(select(Match).options(*MATCH_CONTEXT).where(Match.key == key)))


def timed_build(store: Store, out: Path, now: datetime, **kwargs: Any) -> tuple[float, Any, float]:
    common.settle()
    cpu0, t0 = time.process_time(), time.perf_counter()
    report = build(store, out, now=now, **kwargs)
    return time.perf_counter() - t0, report, time.process_time() - cpu0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=10_000, help="finished matches in the season (default 10000)")
    parser.add_argument("--players", type=int, default=1_000, help="players in the season (default 1000)")
    parser.add_argument("--url", default=None, help="a PostgreSQL URL: run on a scratch database on that server")
    parser.add_argument("--profile", action="store_true", help="also profile the incremental build after one step")
    parser.add_argument("--top", type=int, default=30, help="rows of profile output (default 30)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (not a scratch database)")
    args = parser.parse_args(argv)
    if args.matches < 1 or args.players < 2:
        parser.error("need at least one match and two players")

    with common.scratch_databases(args.url) as scratch, temp_folder(args.keep) as tmp:
        world = new_world_on(tmp / "world", scratch.new("world"))
        store = world.store
        print(
            f"bench_archive: a season of {args.matches:,} finished {GAME} matches, {args.players:,} players, "
            f"{common.database_version(store)}; {common.machine()}"
        )
        t0 = time.perf_counter()
        from referee.seasons import load_season

        load_season(store, parse_season(season_dict(args.players), "bench season"), START - timedelta(days=1))
        book = MatchBook(world.config.secret)
        play_to_the_end(store, book, "template", random.Random(1))
        copy_template(store, args.matches, args.players)
        with store.unit_of_work() as session:
            book.start(session, session.scalar(select(Match).options(*MATCH_CONTEXT).where(Match.key == "live")))
        print(f"setup: {time.perf_counter() - t0:.1f} s (not timed)")

        out = tmp / "site"
        now = START + timedelta(days=30)
        rows = []
        seconds, report, cpu = timed_build(store, out, now, full=True)
        rows.append(("full build", seconds, cpu, report.written, report.unchanged, report.skipped))
        full_seconds = seconds
        seconds, report, cpu = timed_build(store, out, now)
        rows.append(("rebuild, nothing changed", seconds, cpu, report.written, report.unchanged, report.skipped))
        step_once(store, book, "live")
        seconds, report, cpu = timed_build(store, out, now)
        rows.append(("rebuild after one step closed", seconds, cpu, report.written, report.unchanged, report.skipped))
        files = sum(1 for p in out.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        print(table(rows, ("build", "wall s", "CPU s", "written", "unchanged", "skipped")))
        print(
            f"site: {files:,} files, {size / 1e6:.0f} MB; full build {files / full_seconds:.0f} files/s; "
            f"peak RSS {common.maxrss_mb():.0f} MB"
        )
        if args.profile:
            step_once(store, book, "live")
            profiler = cProfile.Profile()
            profiler.enable()
            build(store, out, now=now)
            profiler.disable()
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(args.top)
            print(text.getvalue())
        store.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
