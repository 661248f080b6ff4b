"""Loading a season file into the store (``referee season load``).

Loading is idempotent: loading the same file again changes nothing. New players and
matches are added; players' names, addresses and time zones and matches that have not
started yet are updated; a started match keeps its game, players, seed and start.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.config import ConfigError, SeasonSpec
from referee.store.db import Store
from referee.store.models import LedgerEntry, Match, Player, Season, Seat

GRANT_REASON = "starting chips"


def load_season(store: Store, spec: SeasonSpec, now: datetime) -> list[str]:
    """Apply ``spec``; returns one line per change made."""
    changes: list[str] = []
    with store.unit_of_work() as session:
        season = session.scalar(select(Season).where(Season.key == spec.key))
        if season is None:
            season = Season(
                key=spec.key, name=spec.name, settings={"starting_chips": spec.starting_chips}, created_at=now
            )
            session.add(season)
            session.flush()
            changes.append(f"season {spec.key}: created")
        elif season.name != spec.name:
            season.name = spec.name
            changes.append(f"season {spec.key}: renamed to {spec.name!r}")

        players = {p.key: p for p in session.scalars(select(Player).where(Player.season_id == season.id))}
        # Addresses are unique per season: park changed ones first, so two players may swap.
        moving = [p for ps in spec.players if (p := players.get(ps.key)) is not None and p.email != ps.email]
        for player in moving:
            player.email = f"{player.key}.{player.id}@moving.invalid"
        session.flush()
        for ps in spec.players:
            player = players.get(ps.key)
            if player is None:
                player = Player(season_id=season.id, key=ps.key, name=ps.name, email=ps.email, timezone=ps.timezone)
                session.add(player)
                players[ps.key] = player
                changes.append(f"player {ps.key}: added ({ps.email}, {ps.timezone})")
            elif (player.name, player.email, player.timezone) != (ps.name, ps.email, ps.timezone):
                player.name, player.email, player.timezone = ps.name, ps.email, ps.timezone
                changes.append(f"player {ps.key}: updated ({ps.email}, {ps.timezone})")
        session.flush()
        for ps in spec.players:
            _grant_starting_chips(session, season, ps.key, spec.starting_chips, now, changes)

        for ms in spec.matches:
            match = session.scalar(select(Match).where(Match.key == ms.key))
            timing = {"steps": ms.steps, "reminders": ms.reminders}
            if match is not None and match.season_id != season.id:
                raise ConfigError(f"match {ms.key!r} already belongs to another season")
            if match is None:
                match = Match(
                    season_id=season.id,
                    key=ms.key,
                    game=ms.game,
                    seed=ms.seed,
                    options=ms.options,
                    timing=timing,
                    starts_at=ms.starts_at,
                    status="scheduled",
                    state=None,
                )
                session.add(match)
                session.flush()
                _seat(session, match, [players[k] for k in ms.players])
                changes.append(
                    f"match {ms.key}: {ms.game} for {', '.join(ms.players)}, starts {ms.starts_at:%Y-%m-%d %H:%M} UTC"
                )
                continue
            current = [seat.player.key for seat in match.seats]
            if match.status == "scheduled":
                if (match.game, current, match.starts_at, match.options, match.timing) != (
                    ms.game,
                    ms.players,
                    ms.starts_at,
                    ms.options,
                    timing,
                ) or (ms.seed_given and ms.seed != match.seed):
                    match.game, match.starts_at, match.options, match.timing = ms.game, ms.starts_at, ms.options, timing
                    if ms.seed_given:
                        match.seed = ms.seed
                    if current != ms.players:
                        for seat in list(match.seats):
                            session.delete(seat)
                        session.flush()
                        session.expire(match, ["seats"])
                        _seat(session, match, [players[k] for k in ms.players])
                    changes.append(f"match {ms.key}: updated (not started yet)")
                continue
            started_options = {k: v for k, v in match.options.items() if k != "chips"}  # chips: set at start
            if (match.game, current, match.starts_at, started_options) != (
                ms.game,
                ms.players,
                ms.starts_at,
                ms.options,
            ) or (ms.seed_given and ms.seed != match.seed):
                raise ConfigError(
                    f"match {ms.key!r} has started: its game, players, seed, start and options can no longer change"
                )
            if match.timing != timing:
                match.timing = timing
                changes.append(f"match {ms.key}: step lengths and reminders updated (from its next step on)")
    return changes


def _seat(session: Session, match: Match, players: list[Player]) -> None:
    for position, player in enumerate(players):
        session.add(Seat(match_id=match.id, player_id=player.id, position=position))
    session.flush()


def _grant_starting_chips(
    session: Session, season: Season, key: str, amount: int, now: datetime, changes: list[str]
) -> None:
    granted = session.scalar(
        select(LedgerEntry.id).where(
            LedgerEntry.season_id == season.id,
            LedgerEntry.to_account == key,
            LedgerEntry.from_account == "SEASON",
            LedgerEntry.reason == GRANT_REASON,
        )
    )
    if granted is None and amount > 0:
        session.add(
            LedgerEntry(
                season_id=season.id,
                match_id=None,
                seq=None,
                from_account="SEASON",
                to_account=key,
                amount=amount,
                reason=GRANT_REASON,
                at=now,
            )
        )
        changes.append(f"player {key}: granted {amount} starting chips")
