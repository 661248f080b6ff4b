"""Every performance goal of the issues, measured in one run and printed side by side.

    .venv/bin/python bench/goals.py [--quick] [--url postgresql+psycopg://postgres@127.0.0.1:5432/postgres]

Runs, one after the other (run nothing else meanwhile):

* ``bench_inbound.py --messages 2000``: inbound submissions end to end on SQLite (goal
  >= 1,000/s);
* ``bench_close.py --matches 2000 --start fast --rounds 0,10``: a close at round 10 against
  one at round 0 on SQLite (goal <= 1.2 x);
* ``bench_close.py --matches 10000 --start fast --rounds 0 --url URL``: closing 10,000
  matches at one deadline on PostgreSQL (goal <= 20 s); with ``--quick``, 2,000 matches,
  extrapolated (said so in the table);
* ``referee status`` on a loaded season (the example season of ``deploy/``, started),
  best of 7, against a bare interpreter (``python -c pass``), best of 7 (goal <= 3 x).

Each figure is read from the scripts' ``--json`` output; the table says met / not met,
never asserts. Exit status 0 unless a script failed (its figure would mean nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def _bench(script: str, args: list[str], out: Path) -> dict:
    cmd = [sys.executable, str(HERE / script), *args, "--json", str(out)]
    print("$", " ".join(cmd[1:]), flush=True)
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"{script} failed (exit {done.returncode})")
    return json.loads(out.read_text())


def _best(cmd: list[str], cwd: Path, runs: int = 7) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    return best


def status_figures(tmp: Path) -> dict:
    """``referee status`` in a folder with the example season loaded and started."""
    folder = tmp / "status"
    folder.mkdir()
    referee = str(Path(sys.executable).with_name("referee"))
    env = {**os.environ, "REFEREE_CONFIG": str(folder / "referee.toml")}
    subprocess.run([referee, "init"], cwd=folder, check=True, env=env, capture_output=True)
    shutil.copy(ROOT / "deploy" / "example-season.toml", folder / "season.toml")
    subprocess.run(
        [referee, "season", "load", "--allow-past", "season.toml"], cwd=folder, check=True, env=env, capture_output=True
    )
    subprocess.run([referee, "tick"], cwd=folder, check=True, env=env, capture_output=True)
    # the referee's bytecode compiled, as an installation leaves it (`pip install .` compiles
    # every module whatever PYTHONDONTWRITEBYTECODE says; an editable install of a checkout
    # with that variable set would compile the modules status imports at every run)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "referee")], check=True)
    status = _best([referee, "status"], folder)
    bare = _best([sys.executable, "-c", "pass"], folder)
    return {"status": status, "bare": bare}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="PostgreSQL close with 2,000 matches, extrapolated")
    parser.add_argument("--url", default=PG_URL, help=f"the PostgreSQL server (default {PG_URL})")
    args = parser.parse_args(argv)
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="referee-goals-") as name:
        tmp = Path(name)
        inbound = _bench("bench_inbound.py", ["--messages", "2000"], tmp / "inbound.json")
        rate = inbound["rate"]
        rows.append(("inbound, SQLite, 2,000 mails", ">= 1,000/s", f"{rate:,.0f}/s", _met(rate >= 1000)))

        close = _bench("bench_close.py", ["--matches", "2000", "--start", "fast", "--rounds", "0,10"], tmp / "c.json")
        r0, r10 = close["rounds"]["0"], close["rounds"]["10"]
        ratio, cpu_ratio = r10["seconds"] / r0["seconds"], r10["cpu"] / r0["cpu"]
        rows.append(
            (
                "close round 10 / round 0, SQLite",
                "<= 1.2",
                f"{ratio:.2f} ({r10['per_match_ms']:.2f} / {r0['per_match_ms']:.2f} ms; CPU {cpu_ratio:.2f})",
                _met(ratio <= 1.2),
            )
        )
        sqlite_10k = r0["per_match_ms"] * 10
        rows.append(
            ("close 10k, SQLite, round 0 (extrapolated)", "<= 20 s", f"{sqlite_10k:.1f} s", _met(sqlite_10k <= 20))
        )

        n = 2000 if args.quick else 10_000
        pg = _bench(
            "bench_close.py",
            ["--matches", str(n), "--start", "fast", "--rounds", "0", "--url", args.url],
            tmp / "pg.json",
        )
        seconds = pg["rounds"]["0"]["seconds"] * 10_000 / n
        cpu = pg["rounds"]["0"]["cpu"] * 10_000 / n
        what = "close 10k, PostgreSQL, round 0" + (" (extrapolated from 2,000)" if args.quick else "")
        rows.append((what, "<= 20 s", f"{seconds:.1f} s (referee CPU {cpu:.1f} s)", _met(seconds <= 20)))

        st = status_figures(tmp)
        times = st["status"] / st["bare"]
        rows.append(
            (
                "`referee status`, best of 7",
                "<= 3 x bare interpreter",
                f"{times:.1f} x ({1000 * st['status']:.0f} ms / {1000 * st['bare']:.0f} ms)",
                _met(times <= 3),
            )
        )
    width = [max(len(r[i]) for r in rows + [HEADER]) for i in range(4)]
    for row in [HEADER, tuple("-" * w for w in width), *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, width, strict=True)).rstrip())
    return 0


HEADER = ("figure", "goal", "measured", "met?")


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


if __name__ == "__main__":
    sys.exit(main())
