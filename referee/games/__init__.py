"""Pure rules engines, one module per game, all following :mod:`referee.games.base`.

:data:`GAMES` maps each game's name to its engine. A game's package is imported when the
game is first looked up (``GAMES[name]``, ``GAMES.get(name)``): a command that shows one
match (``referee status``) imports that match's game only, and importing one game's module
imports no other. Names (``in``, iterating, ``len``) cost no import; ``values()``,
``items()`` and :func:`playable` import every game.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from importlib import import_module

from referee.games.base import HOUSE, SEASON_ACCOUNT, Game

# each game's name and the module that holds its engine as ``GAME``, in the registry's order
MODULES = {
    "stationary-roulette": "referee.games.stationary_roulette",
    "indian-poker": "referee.games.indian_poker",
    "rewind-holdem": "referee.games.rewind_holdem",
    "betting-minority": "referee.games.betting_minority",
    "matchjack": "referee.games.matchjack.engine",
    "nomination": "referee.games.nomination",
}


class Registry(MutableMapping[str, Game]):
    """Name -> engine, importing an engine's module when it is first looked up. Games set
    into it (``GAMES[name] = game``: a test's, a plug-in's) are kept as given."""

    def __init__(self, modules: dict[str, str]):
        self._entries: dict[str, Game | str] = dict(modules)  # a str: the module not imported yet

    def __getitem__(self, name: str) -> Game:
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = self._entries[name] = import_module(entry).GAME
        return entry

    def __setitem__(self, name: str, game: Game) -> None:
        self._entries[name] = game

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({list(self._entries)})"


GAMES: MutableMapping[str, Game] = Registry(MODULES)


def playable() -> dict[str, Game]:
    """The games a season file may schedule: all but the season's own steps (the nomination)."""
    return {
        name: game
        for name, game in GAMES.items()
        if not getattr(getattr(game, "game_type", None), "season_step", False)
    }


def accounts() -> dict[str, str]:
    """The accounts of the ledgers that are no player, each with what a reader calls it: the
    season's own (the house, the season) and every game's (``GameType.accounts``: a pot, a
    bank). Imports every game."""
    named = {HOUSE: "the LGT (the house)", SEASON_ACCOUNT: "the season"}
    for game in GAMES.values():
        for account, name in getattr(getattr(game, "game_type", None), "accounts", {}).items():
            named.setdefault(account, name)
    return named


__all__ = ["GAMES", "MODULES", "Game", "Registry", "accounts", "playable"]
