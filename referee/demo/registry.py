"""Each game's demo, found through the game registry (:data:`referee.games.GAMES`).

By convention a game's demo is the ``DEMO`` (a :class:`~referee.demo.base.Demo`) of the
module ``demo`` in the game's own package: the package that holds the module defining the
game's class (``referee.games.matchjack.engine`` -> ``referee.games.matchjack.demo``), or
that module itself when it is a package (``referee.games.stationary_roulette`` ->
``referee.games.stationary_roulette.demo``). A game without such a module has no demo (the
nomination: the season's own step). So a new game brings its demo in its package, and
``referee demo --game`` offers it; nothing here or in the command line names a game.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

from referee.config import ConfigError
from referee.demo.base import Demo
from referee.games import GAMES, Game

MODULE = "demo"  # the module of a game's package that holds its demo
NAME = "DEMO"  # the object in it


def package_of(game: Game) -> str:
    """The dotted name of the package the game's class lives in."""
    module = sys.modules[type(game).__module__]
    return module.__name__ if hasattr(module, "__path__") else module.__name__.rpartition(".")[0]


def demo_of(game: Game) -> Demo | None:
    """The game's demo, else None."""
    package = package_of(game)
    name = f"{package}.{MODULE}"
    if not package or importlib.util.find_spec(name) is None:
        return None
    found = getattr(importlib.import_module(name), NAME, None)
    if found is not None and not isinstance(found, Demo):
        raise TypeError(f"{name}.{NAME} is a {type(found).__name__}, not a referee.demo.base.Demo")
    return found


def demos() -> dict[str, Demo]:
    """Every registered game that has a demo (game name -> its demo), in the registry's order."""
    found = {}
    for name, game in GAMES.items():
        demo = demo_of(game)
        if demo is not None:
            found[name] = demo
    return found


def default_game() -> str:
    """The game ``referee demo`` plays without ``--game``: the first of the registry that has a demo."""
    return next(iter(demos()))


def find(game: str) -> tuple[Game, Demo]:
    """The engine and the demo of the game named ``game``; a ConfigError when it has none."""
    demo = demo_of(GAMES[game]) if game in GAMES else None
    if demo is None:
        raise ConfigError(f"no demo for {game!r}: choose one of {', '.join(demos())}")
    return GAMES[game], demo


def seated(game: str) -> dict[str, tuple[str, str, bool]]:
    """The demo match's players in seat order: key -> (name, time zone, has an address)."""
    return dict(find(game)[1].seats)


def mailed(game: str) -> dict[str, str]:
    """The demo match's players who have an address (key -> name): the ones with a mailbox."""
    return {key: name for key, (name, _tz, address) in seated(game).items() if address}


def has_demo(game: str) -> bool:
    """Is ``game`` a registered game that has a demo?"""
    return game in GAMES and demo_of(GAMES[game]) is not None
