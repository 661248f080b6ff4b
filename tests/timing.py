"""Timing for the tests that check that a parser's work grows linearly with its input: the
CPU time of the measuring thread (``time.thread_time``: not the wall clock, which counts the
time another process of a busy machine had the core), with the garbage collector held off
while it runs (a collection costs with the whole heap of the test process, not with the
input), the best of a few tries."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def cpu_cost(work: Callable[[], object], tries: int = 3) -> float:
    """The least CPU time ``work()`` took in ``tries`` runs, in seconds."""
    best = float("inf")
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(tries):
            start = time.thread_time()
            work()
            best = min(best, time.thread_time() - start)
    finally:
        if enabled:
            gc.enable()
    return best


def growth(
    small: Callable[[], object], large: Callable[[], object], bound: float, rounds: int = 3
) -> tuple[float, float]:
    """``(cpu_cost(small), cpu_cost(large))``, measured again (up to ``rounds`` times in all)
    while ``large`` costs ``bound`` times ``small`` or more; the pair with the lowest ratio.
    A millisecond's work on a busy machine can lose its caches to another process once (a
    ratio of 12.4 was seen for a linear parse at 4x the input); work that really grows
    faster than ``bound`` does so every time, and is still caught."""
    best: tuple[float, float] | None = None
    for _ in range(rounds):
        pair = cpu_cost(small), cpu_cost(large)
        if best is None or pair[1] / max(pair[0], 1e-9) < best[1] / max(best[0], 1e-9):
            best = pair
        if best[1] < bound * max(best[0], 1e-4):
            break
    assert best is not None
    return best
