"""The season frame (RULINGS, "Seasons"): main matches, the EC's nomination of the DMO, the
death matches that follow, eliminations. :mod:`referee.season.frame` does it.

The names below are looked up in :mod:`referee.season.frame` when first used, so that a
module of this package that needs no database (:mod:`referee.season.words`, for
``referee status``) is imported without it."""

from __future__ import annotations

from typing import Any

__all__ = ["DEATH", "MAIN", "NOMINATION", "SeasonFrame", "live_players"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from referee.season import frame

        return getattr(frame, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
