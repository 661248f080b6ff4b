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
