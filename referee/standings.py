"""A season's standings for the organizer (`referee standings`): every season player with
victory points, chips, garnets, CoLs and matches played, from the finished matches' results
and the season ledger (RULINGS, "Seasons": by victory points, then chips, then garnets).

Silent participants (players who sit only at seats that never act, such as Betting
Minority's participants) are no season players: they are left out. Live players come
first; eliminated players after them, the latest eliminated first, each with the death
match they lost (RULINGS, "Seasons"; the order is :class:`referee.archive.model.SeasonData`'s).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.config import ConfigError, seat_role, silent_roles
from referee.games import GAMES
from referee.store.db import Store
from referee.store.models import Match, Player, Season, Seat
from referee.timefmt import iso

if TYPE_CHECKING:
    from referee.archive.model import SeasonHeader

# The season's figures are the archive's read model (:class:`referee.archive.model.SeasonData`),
# imported when standings are first worked out: a tick that ends no season match (and the
# `referee tick` processes that start for it) reads none of it.

__all__ = ["Row", "header_of", "one_season", "rows_of", "season_standings", "silent_only", "standings_text"]

GARNETS = "garnets"
COLS = "cols"


@dataclass(frozen=True)
class Row:
    rank: int
    player: str  # key
    name: str
    victory_points: float
    chips: int
    garnets: int
    cols: int
    played: int  # finished matches
    eliminated_in: str | None = None  # the death match the player lost (None: live)
    eliminated_at: str | None = None  # when, ISO 8601 UTC


def silent_only(session: Session, season_id: int) -> set[str]:
    """The keys of the season's players who have seats and sit only at silent seats."""
    seats: dict[str, list[bool]] = {}
    for key, game, position in session.execute(
        select(Player.key, Match.game, Seat.position)
        .join(Seat, Seat.player_id == Player.id)
        .join(Match, Match.id == Seat.match_id)
        .where(Player.season_id == season_id)
    ):
        engine = GAMES.get(game)
        seats.setdefault(key, []).append(engine is not None and seat_role(engine, position) in silent_roles(engine))
    return {key for key, silent in seats.items() if all(silent)}


def season_standings(store: Store, season: str | None = None) -> tuple[str, list[Row]]:
    """(season name, rows) of season ``season`` (its id; None: the only season)."""
    with store.unit_of_work() as session:
        header = header_of(session, one_season(session, season).id)
        return header.name, rows_of(session, header)


def one_season(session: Session, key: str | None) -> Season:
    """The season a command names (``--season``), or the only one loaded; else a
    :class:`ConfigError` saying which exist."""
    seasons = list(session.scalars(select(Season).order_by(Season.key)))
    if key is not None:
        seasons = [s for s in seasons if s.key == key]
        if not seasons:
            raise ConfigError(f"no season {key!r} is loaded")
    if not seasons:
        raise ConfigError("no season is loaded")
    if len(seasons) > 1:
        raise ConfigError(f"several seasons are loaded ({', '.join(s.key for s in seasons)}): name one with --season")
    return seasons[0]


def header_of(session: Session, season_id: int) -> SeasonHeader:
    """The season's header (its name and players), as the archive reads it."""
    from referee.archive.model import season_headers

    return next(h for h in season_headers(session) if h.id == season_id)


def rows_of(session: Session, header: SeasonHeader) -> list[Row]:
    """The standings of the season ``header`` names, as of this unit of work."""
    from referee.archive.model import SeasonData

    data = SeasonData.load(session, header)
    silent = silent_only(session, header.id)
    ordered = [s for s in data.standings if s.player.key not in silent]  # in the season's order
    return [
        Row(
            rank=i + 1,
            player=s.player.key,
            name=s.player.name,
            victory_points=s.victory_points,
            chips=s.chips,
            garnets=s.awards.get(GARNETS, 0),
            cols=s.awards.get(COLS, 0),
            played=s.played,
            eliminated_in=s.eliminated_in,
            eliminated_at=iso(s.eliminated_at) if s.eliminated_at else None,
        )
        for i, s in enumerate(ordered)
    ]


def standings_text(name: str, rows: list[Row]) -> str:
    """The standings as a table for a terminal."""
    head = ("#", "player", "VP", "chips", "garnets", "CoLs", "played", "")
    cells = [
        (
            str(r.rank),
            f"{r.name} ({r.player})",
            f"{r.victory_points:g}",
            str(r.chips),
            str(r.garnets),
            str(r.cols),
            str(r.played),
            f"eliminated in {r.eliminated_in}" if r.eliminated_in else "",
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(head)]

    def line(values: tuple[str, ...]) -> str:
        return "  ".join(
            v.ljust(w) if i in (1, 7) else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ).rstrip()

    out = [f"Standings of {name} (VP: victory points; CoLs: certificates of life)", line(head)]
    out += [line(c) for c in cells]
    if not rows:
        out.append("(no players)")
    return "\n".join(out)


def standings_json(name: str, rows: list[Row]) -> dict[str, Any]:
    return {"season": name, "standings": [asdict(r) for r in rows]}
