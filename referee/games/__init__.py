"""Pure rules engines, one module per game, all following :mod:`referee.games.base`."""

from referee.games.base import Game
from referee.games.betting_minority import GAME as BETTING_MINORITY
from referee.games.indian_poker import GAME as INDIAN_POKER
from referee.games.matchjack.engine import GAME as MATCHJACK
from referee.games.nomination import GAME as NOMINATION
from referee.games.rewind_holdem import GAME as REWIND_HOLDEM
from referee.games.stationary_roulette import GAME as STATIONARY_ROULETTE

GAMES: dict[str, Game] = {
    game.name: game
    for game in (STATIONARY_ROULETTE, INDIAN_POKER, REWIND_HOLDEM, BETTING_MINORITY, MATCHJACK, NOMINATION)
}


def playable() -> dict[str, Game]:
    """The games a season file may schedule: all but the season's own steps (the nomination)."""
    return {
        name: game
        for name, game in GAMES.items()
        if not getattr(getattr(game, "game_type", None), "season_step", False)
    }


__all__ = ["GAMES", "playable", "Game"]
