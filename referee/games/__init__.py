"""Pure rules engines, one module per game, all following :mod:`referee.games.base`."""

from referee.games.base import Game
from referee.games.betting_minority import GAME as BETTING_MINORITY
from referee.games.indian_poker import GAME as INDIAN_POKER
from referee.games.matchjack.engine import GAME as MATCHJACK
from referee.games.rewind_holdem import GAME as REWIND_HOLDEM
from referee.games.stationary_roulette import GAME as STATIONARY_ROULETTE

GAMES: dict[str, Game] = {
    game.name: game for game in (STATIONARY_ROULETTE, INDIAN_POKER, REWIND_HOLDEM, BETTING_MINORITY, MATCHJACK)
}

__all__ = ["GAMES", "Game"]
