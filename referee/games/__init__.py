"""Pure rules engines, one module per game, all following :mod:`referee.games.base`."""

from referee.games.base import Game
from referee.games.stationary_roulette import GAME as STATIONARY_ROULETTE

GAMES: dict[str, Game] = {game.name: game for game in (STATIONARY_ROULETTE,)}

__all__ = ["GAMES", "Game"]
