"""The stages of the service, each one job: ingest (transport -> stored rows), judging,
the clock, delivery (outbox -> transport). :mod:`referee.service` strings them together."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

BATCH = 200  # mails or matches per transaction, in every stage


@contextmanager
def batch_work() -> Iterator[None]:
    """The cyclic garbage collector paused for one batch.

    A batch makes and drops a few hundred thousand small objects (ORM states, parsed
    mails, views), which would start several full collections, each walking every live
    object of the process, for garbage that reference counting frees anyway. What is left
    in cycles is collected by the next collection after the batch; a batch is bounded
    (``BATCH`` items), and so is what it can leave."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
