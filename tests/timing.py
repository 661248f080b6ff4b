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
    small: Callable[[], object],
    large: Callable[[], object],
    bound: float,
    rounds: int = 3,
    slack: float = 0.0,
    floor: float = 0.0,
    measure: Callable[[Callable[[], object]], float] = cpu_cost,
) -> tuple[float, float]:
    """``(measure(small), measure(large))``, measured again (up to ``rounds`` times in all)
    while ``large`` costs ``bound`` times ``small`` (at least ``floor`` seconds; plus
    ``slack`` seconds) or more; the
    pair with the lowest ratio. A millisecond's work on a busy machine can lose its caches
    to another process once (a ratio of 12.4 was seen for a linear parse at 4x the input);
    work that really grows faster than ``bound`` does so every time, and is still caught.
    The caller asserts on the pair it gets, with the same bound, so a failure shows it."""
    best: tuple[float, float] | None = None
    for _ in range(rounds):
        pair = measure(small), measure(large)
        if best is None or pair[1] / max(pair[0], 1e-9) < best[1] / max(best[0], 1e-9):
            best = pair
        if best[1] < bound * max(best[0], floor) + slack:
            break
    assert best is not None
    return best
