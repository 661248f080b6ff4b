"""Print the reply corpus's table: ``python -m tests.replies.report [GAME ...]``."""

from __future__ import annotations

import sys
import time

from .corpus import GAME_NAMES, run, table


def main(argv: list[str]) -> int:
    games = tuple(argv) or GAME_NAMES
    began = time.monotonic()
    results = run(games=games)
    print(table(results))
    print(f"{len(results)} replies judged in {time.monotonic() - began:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
