"""The season frame: what follows a match's end, and who may sit at a match's start.

RULINGS, "Seasons", read so:

* A **main match** (``Match.kind == "main"``) ends with a ranking (``Result.ranking``). Its
  EC is the last of it who is still live (a two-player main match: its loser only; when
  that player is already eliminated, no nomination follows). Its winner is the first.
* The EC's **nomination** of the DMO is a match of its own (the game ``nomination``,
  :mod:`referee.games.nomination`), created here when the main match ends and started by
  the clock at once: seats, the EC and the eligible players (the live players but the EC
  and the winner, in the season's order). No eligible player: the winner is the DMO (the
  season's final) and the death match follows at once.
* The **death match** is created when the nomination ends, and starts after the season's
  gap: the game the main match names, else the next of the season's rotation (in the
  order death matches are created); the EC in the first seat, the DMO in the second (and
  the game's ``dmo`` option, where it has one); a game with more seats (Betting Minority)
  gets the other live players drawn by lot, filled up with the silent participants in the
  season file's order.
* The death match's **loser** (the last of its ranking) is eliminated: plays no later
  match of the season. A match of ``seating == "live"`` takes the live players at its
  start; a match that would seat an eliminated player does not start (its problem says
  why, as for any start that fails).

Nothing here writes mail: the matches it creates are scheduled, and the clock starts them
and tells their players, as it does every match. Every lot is drawn from the season's seed
(``Season.settings["frame"]["seed"]``) and the match it is for, so it is the same however
often it is drawn.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from referee.games import GAMES
from referee.games.base import GameError, rng
from referee.season.words import WAITING
from referee.store.models import Match, Player, Season, Seat
from referee.timefmt import iso

__all__ = ["DEATH", "MAIN", "NOMINATION", "WAITING", "SeasonFrame", "Waiting", "live_players"]

log = logging.getLogger("referee")

MAIN, NOMINATION, DEATH = "main", "nomination", "death"
KEY_ROOM = 48  # of a main match's key in the keys of the matches that follow it (64 at most)


class Waiting(GameError):
    """A match of the live players cannot start yet: a nomination or a death match of its
    season is still open, and its end may change who is live. Not a failure: the match waits
    (``Match.problem`` starts with :data:`WAITING`) and the frame starts it when they end."""


def pending(session: Session, season_id: int) -> list[Match]:
    """The season's open nominations and death matches (scheduled, running or paused)."""
    return list(
        session.scalars(
            select(Match)
            .where(
                Match.season_id == season_id,
                Match.kind.in_((NOMINATION, DEATH)),
                Match.status.in_(("scheduled", "running", "paused")),
            )
            .order_by(Match.id)
        )
    )


def live_players(session: Session, season_id: int) -> list[Player]:
    """The season's live players, in the season's order: every player with an address (a
    player without one is a silent participant, no season player) not yet eliminated."""
    return list(
        session.scalars(
            select(Player)
            .where(Player.season_id == season_id, Player.email.is_not(None), Player.eliminated_at.is_(None))
            .order_by(Player.id)
        )
    )


def frame_of(season: Season) -> dict[str, Any]:
    """The season's frame settings (as :meth:`referee.config.FrameSpec.settings` stores them)."""
    return (season.settings or {}).get("frame") or {}


class SeasonFrame:
    """Called by the match book inside its caller's unit of work: :meth:`seat` before a match
    starts, :meth:`finished` when one ends. ``book``: the match book (a lapse cancels)."""

    def __init__(self, book: Any):
        self.book = book

    # ------------------------------------------------------------------ at a start

    def seat(self, session: Session, match: Match) -> None:
        """Seat a match of live seats with the season's live players; refuse (a GameError,
        the match's problem) a start that would seat an eliminated player."""
        if match.seating == "live":
            open_now = pending(session, match.season_id)
            if open_now:
                raise Waiting(
                    f"for {_and([m.key for m in open_now])} to end: a match of the live players starts once "
                    "the season's nominations and death matches are over"
                )
            self._seat_live(session, match)
        out = [seat.player for seat in match.seats if seat.player.eliminated_at is not None]
        if out:
            who = out[0]
            raise GameError(
                f"{who.name} was eliminated in {who.eliminated_in}: an eliminated player plays no later "
                "match of the season (change the seats in the season file and load it again)"
            )

    @staticmethod
    def _seat_live(session: Session, match: Match) -> None:
        game = GAMES[match.game]
        live = live_players(session, match.season_id)
        if not game.min_players <= len(live) <= game.max_players:
            need = (
                str(game.min_players)
                if game.min_players == game.max_players
                else f"{game.min_players} to {game.max_players}"
            )
            raise GameError(
                f"{game.title} needs {need} players, and the season has {len(live)} live players "
                f"({', '.join(p.name for p in live) or 'none'})"
            )
        if [seat.player_id for seat in match.seats] == [p.id for p in live]:
            return  # seated by an earlier try of this start
        for seat in list(match.seats):
            session.delete(seat)
        session.flush()
        session.expire(match, ["seats"])
        for position, player in enumerate(live):
            session.add(Seat(match_id=match.id, player_id=player.id, position=position))
        session.flush()
        session.expire(match, ["seats"])

    # ------------------------------------------------------------------ at an end

    def finished(self, session: Session, match: Match, at: datetime) -> None:
        """What follows ``match``, which has just ended at ``at``."""
        if match.result is None:
            return
        if match.kind == MAIN:
            self._after_main(session, match, at)
        elif match.kind == NOMINATION:
            self._after_nomination(session, match, at)
        elif match.kind == DEATH:
            self._after_death(session, match, at)
        if match.kind is not None:  # a match of the frame (a match on its own ends no season)
            self._release(session, match.season_id, at)
            self._season_end(session, match, at)

    @staticmethod
    def _release(session: Session, season_id: int, at: datetime) -> None:
        """Once no nomination or death match of the season is open, the matches of the live
        players that wait for them are due: each starts at ``at`` (the instant the last one
        ended), or at its own start time if that is later. The start the season file gives
        stays in ``timing["planned_start"]``, which a reload compares with the file."""
        session.flush()  # what this end created or cancelled (no autoflush in a batch)
        if pending(session, season_id):
            return
        waiting = session.scalars(
            select(Match).where(
                Match.season_id == season_id, Match.status == "scheduled", Match.problem.startswith(WAITING)
            )
        ).all()
        for match in waiting:
            match.problem = None
            if match.starts_at < at:
                match.timing = {**match.timing, "planned_start": iso(match.starts_at)}
                match.starts_at = at
            log.info("match %s: the season's death matches are over; it starts at %s", match.key, iso(match.starts_at))

    def cancelled(self, session: Session, match: Match, at: datetime) -> bool:
        """A match of the frame was cancelled: nothing follows it, but it may end the season
        (its last match). True when it did."""
        if match.kind is None:
            return False
        self._release(session, match.season_id, at)
        self._season_end(session, match, at)
        return (match.season.settings or {}).get("ended_by") == match.key

    @staticmethod
    def _season_end(session: Session, match: Match, at: datetime) -> None:
        """RULINGS: the season ends when one live player is left, or when its last scheduled
        match ends (nothing scheduled or running is left, nothing follows). Recorded in the
        season's settings (``ended_at``, ``ended_by``: the match whose end ended it), once;
        the notices mail the final standings to every player."""
        season = match.season
        settings = season.settings or {}
        if settings.get("ended_at") or not frame_of(season):
            return
        session.flush()  # what lapsed with this end is cancelled already (no autoflush in a batch)
        live = live_players(session, match.season_id)
        open_matches = session.scalar(
            select(func.count())
            .select_from(Match)
            .where(
                Match.season_id == match.season_id,
                Match.id != match.id,
                Match.status.in_(("scheduled", "running", "paused")),
            )
        )
        if len(live) > 1 and open_matches:
            return
        season.settings = {**settings, "ended_at": iso(at), "ended_by": match.key}
        why = f"{live[0].key} is the last live player" if len(live) == 1 else "its last match has ended"
        log.info("season %s ended at %s: %s", season.key, iso(at), why)

    def _after_main(self, session: Session, main: Match, at: datetime) -> None:
        ranking = list(main.result.get("ranking") or [])
        if not ranking:
            log.warning("main match %s ended without a ranking: no nomination follows", main.key)
            return
        live_keys = {p.key for p in live_players(session, main.season_id)}
        # a two-player main match: its loser only; more players: the last still live (RULINGS)
        candidates = [ranking[-1]] if len(ranking) == 2 else list(reversed(ranking))
        ec = next((p for p in candidates if p in live_keys), None)
        if ec is None:
            log.info("main match %s: its EC is already eliminated: no nomination follows", main.key)
            return
        self._nominate(session, main, ec, at)

    @staticmethod
    def _winner(main: Match, ec: str) -> str | None:
        """The main match's winner for the DMO rule: the first of its ranking but the EC."""
        return next((p for p in (main.result or {}).get("ranking") or [] if p != ec), None)

    def _nominate(self, session: Session, main: Match, ec: str, at: datetime) -> None:
        """Open the EC's nomination of the DMO among the live players but the EC and the
        winner (again, when a DMO was eliminated before the death match): RULINGS."""
        live = live_players(session, main.season_id)
        by_key = {p.key: p for p in live}
        winner = self._winner(main, ec)
        eligible = [p for p in live if p.key not in (ec, winner)]
        frame = frame_of(main.season)
        if not eligible:
            if winner in by_key:  # the season's final: the winner is the DMO
                log.info("main match %s: nobody else is live, so %s is the DMO (the final)", main.key, winner)
                self._death_match(session, main, main, by_key[ec], by_key[winner], at)
            return
        title = GAMES[main.game].title
        length = frame.get("nomination", 86400)
        timing = {"steps": {"nominate": length, "col": length}, "reminders": list(main.timing.get("reminders", []))}
        tries = session.scalar(
            select(func.count()).select_from(Match).where(Match.follows_id == main.id, Match.kind == NOMINATION)
        )
        suffix = f"-{tries + 1}" if tries else ""  # a nomination opened again after a DMO was eliminated
        nomination = Match(
            season_id=main.season_id,
            key=f"{main.key[:KEY_ROOM]}-nomination{suffix}",
            game=NOMINATION,
            seed=_seed(frame, NOMINATION + suffix, main.key),
            options={
                "winner": winner,
                "winner_name": _name(main, winner),
                "main": f"{title} match {main.key}",
                "col": bool(frame.get("cols", True)),
            },
            timing=timing,
            starts_at=at,
            status="scheduled",
            state=None,
            kind=NOMINATION,
            follows=main,
        )
        self._add(session, nomination, [by_key[ec], *eligible])
        log.info("main match %s: %s is the EC and nominates the DMO (match %s)", main.key, ec, nomination.key)

    def _after_nomination(self, session: Session, nomination: Match, at: datetime) -> None:
        scores = nomination.result.get("scores") or {}
        players = {seat.player.key: seat.player for seat in nomination.seats}
        ec, dmo = players.get(scores.get("ec")), players.get(scores.get("dmo"))
        if ec is None or dmo is None:
            return
        main = nomination.follows or nomination
        if ec.eliminated_at is not None:  # the nomination lapses (RULINGS)
            log.info("nomination %s: the EC %s was eliminated meanwhile: no death match", nomination.key, ec.key)
            return
        if dmo.eliminated_at is not None:  # the DMO was eliminated meanwhile: the EC nominates again
            log.info("nomination %s: the DMO %s was eliminated meanwhile: a new nomination", nomination.key, dmo.key)
            self._nominate(session, main, ec.key, at)
            return
        self._death_match(session, main, nomination, ec, dmo, at)

    def _lapse(self, session: Session, out: Player, death: Match, at: datetime) -> None:
        """RULINGS, on an elimination: a nomination whose EC is out lapses, and so does a death
        match not started yet whose EC is out (no death match follows); a death match not
        started yet whose DMO is out is cancelled, and its EC nominates again; so does a
        nomination open while one of the players it lets the EC nominate is out (a new one
        opens among the live players: an eliminated player is never nominated). What lapses is
        cancelled (an event in its chain) and listed in ``session.info["lapsed"]`` (match id,
        why), so the notices tell its players."""
        pending = session.scalars(
            select(Match)
            .where(
                Match.season_id == death.season_id,
                Match.id != death.id,
                Match.kind.in_((NOMINATION, DEATH)),
                Match.status.in_(("scheduled", "running", "paused")),
            )
            .order_by(Match.id)
        ).all()
        for match in pending:
            seats = [seat.player for seat in match.seats]
            if len(seats) < 2 or (match.kind == DEATH and match.status != "scheduled"):
                continue
            ec, second = seats[0], seats[1]
            if ec.id == out.id:
                why = f"the EC, {out.name}, was eliminated in {death.key}: no death match follows"
            elif match.kind == DEATH and second.id == out.id:
                why = f"the DMO, {out.name}, was eliminated in {death.key}: {ec.name} nominates again"
            elif match.kind == NOMINATION and any(p.id == out.id for p in seats[1:]):
                why = (
                    f"{out.name}, whom {ec.name} could nominate, was eliminated in {death.key}: "
                    f"{ec.name} nominates again among the live players"
                )
            else:
                continue
            self.book.cancel(session, match, at, why)
            session.info.setdefault("lapsed", []).append((match.id, why))
            if ec.id != out.id and match.follows is not None:
                main = match.follows.follows or match.follows  # death -> nomination -> main
                self._nominate(session, main, ec.key, at)

    def _death_match(
        self, session: Session, main: Match, follows: Match, ec: Player, dmo: Player, at: datetime
    ) -> None:
        season = main.season
        frame = frame_of(season)
        base = f"{main.key[:KEY_ROOM]}-death"
        # a death match of this main match made before (cancelled: its DMO was eliminated
        # before it started): the new one plays the same game, under a key of its own
        before = session.scalars(
            select(Match).where(Match.season_id == main.season_id, Match.kind == DEATH, Match.key.startswith(base))
        ).all()
        name = before[0].game if before else (frame.get("death_match") or {}).get(main.key)
        if name is None:
            rotation = frame.get("death_matches") or []
            if not rotation:
                log.warning("main match %s: the season names no death match: none follows", main.key)
                return
            made = session.scalar(
                select(func.count()).select_from(Match).where(Match.season_id == main.season_id, Match.kind == DEATH)
            )
            name = rotation[(made or 0) % len(rotation)]
        game = GAMES[name]
        timing = (frame.get("timing") or {}).get(name) or {}
        options = dict(timing.get("options") or {})
        if "dmo" in game.game_type.options:
            options["dmo"] = dmo.key
        key = f"{base}-{len(before) + 1}" if before else base
        seats = [ec, dmo, *self._participants(session, season, game, key, ec, dmo)]
        starts = at + timedelta(seconds=float(frame.get("gap", 0)))
        death = Match(
            season_id=main.season_id,
            key=key,
            game=name,
            seed=_seed(frame, DEATH if not before else f"{DEATH}-{len(before) + 1}", main.key),
            options=options,
            timing={
                "steps": dict(timing.get("steps") or {k: h * 3600 for k, h in game.step_kinds.items()}),
                "reminders": list(timing.get("reminders") or []),
                "abandon_after": int(timing.get("abandon_after", getattr(game.game_type, "abandon_after", 0))),
            },
            starts_at=starts,
            status="scheduled",
            state=None,
            kind=DEATH,
            follows=follows,
        )
        self._add(session, death, seats)
        log.info("death match %s (%s): %s (EC) against %s (DMO), starts %s", key, name, ec.key, dmo.key, iso(starts))

    @staticmethod
    def _participants(session: Session, season: Season, game: Any, key: str, ec: Player, dmo: Player) -> list[Player]:
        """The seats beyond the EC's and the DMO's (Betting Minority's participants): the other
        live players drawn by lot, filled up with the silent participants in the file's order."""
        room = game.max_players - 2 if game.game_type.silent_roles else 0
        if room <= 0:
            return []
        others = [p for p in live_players(session, season.id) if p.id not in (ec.id, dmo.id)]
        frame = frame_of(season)
        drawn = rng(frame.get("seed", 0), "participants", key).sample(others, min(room, len(others)))
        silent_keys = list(frame.get("silent") or [])
        silent = {
            p.key: p
            for p in session.scalars(select(Player).where(Player.season_id == season.id, Player.key.in_(silent_keys)))
        }
        fill = [silent[k] for k in silent_keys if k in silent][: room - len(drawn)]
        return [*drawn, *fill]

    def _after_death(self, session: Session, death: Match, at: datetime) -> None:
        ranking = list(death.result.get("ranking") or [])
        outcome = death.result.get("outcome") or {}
        loser = ranking[-1] if ranking else next((p for p, o in outcome.items() if o == "loss"), None)
        player = next((seat.player for seat in death.seats if seat.player.key == loser), None)
        if player is None or player.eliminated_at is not None:
            return
        player.eliminated_at, player.eliminated_in = at, death.key
        log.info("death match %s: %s is eliminated", death.key, player.key)
        session.flush()  # the queries of the live players below must see it (no autoflush in a batch)
        self._lapse(session, player, death, at)

    @staticmethod
    def _add(session: Session, match: Match, players: list[Player]) -> None:
        """A match that follows another, with its seats; the clock starts it when it is due."""
        if session.scalar(select(Match.id).where(Match.key == match.key)) is not None:
            log.warning("match %s exists already: not created again", match.key)
            return
        session.add(match)
        session.flush()
        for position, player in enumerate(players):
            session.add(Seat(match_id=match.id, player_id=player.id, position=position))
        session.flush()


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _name(match: Match, key: str | None) -> str | None:
    return next((seat.player.name for seat in match.seats if seat.player.key == key), key)


def _seed(frame: dict[str, Any], what: str, key: str) -> int:
    """A seed for a match the season creates: from the season's seed, what it is and the
    main match it follows (the same however often it is drawn)."""
    return rng(frame.get("seed", 0), what, key).getrandbits(62)
