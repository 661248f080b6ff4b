"""The season frame (RULINGS, "Seasons"): main matches, the EC's nomination of the DMO, the
death matches that follow, eliminations. :mod:`referee.season.frame` does it."""

from referee.season.frame import DEATH, MAIN, NOMINATION, SeasonFrame, live_players

__all__ = ["DEATH", "MAIN", "NOMINATION", "SeasonFrame", "live_players"]
