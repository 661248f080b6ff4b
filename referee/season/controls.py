"""The organizer's controls (`referee cancel`, `pause`, `resume`, `extend`, `adjust`,
`announce`): each one unit of work that changes the match or the ledger, records it (an
event in the match's hash chain; a ledger entry for an adjustment), and mails the players
concerned. Undone by nothing but another command: a paused match stays paused until
`referee resume`, a cancelled one stays cancelled.

Each method takes ``now`` (the instant the command is given) and returns the lines the
command prints; a refusal is a :class:`referee.config.ConfigError`, which changes nothing.
Given a ``session``, a method works in that unit of work (the judge's, for a command by
mail: the command and the mail's decision commit together); else in one of its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.config import ConfigError
from referee.games import GAMES
from referee.games.base import SEASON_ACCOUNT, SEASON_CHIPS, GameError, open_steps
from referee.match import opensteps
from referee.match.book import MATCH_CONTEXT, MatchBook
from referee.match.notices import Notices
from referee.store.balances import season_balances
from referee.season.record import log_season_event
from referee.standings import one_season
from referee.store.db import Store
from referee.store.models import Event, LedgerEntry, Match, Player
from referee.timefmt import duration, iso, local_time

__all__ = ["CURRENCIES", "Controls"]

CURRENCIES = (SEASON_CHIPS, "garnets", "cols")  # what `referee adjust` may move
OPEN = ("scheduled", "running", "paused")


class Controls:
    def __init__(self, store: Store, book: MatchBook, notices: Notices):
        self.store = store
        self.book = book
        self.notices = notices

    # ------------------------------------------------------------------ matches

    def cancel(self, key: str, reason: str, now: datetime, session: Session | None = None) -> list[str]:
        with self._work(session) as session:
            match = _match(session, key)
            if match.status not in OPEN:
                raise ConfigError(
                    f"match {key} is {match.status}: only a scheduled, running or paused match is cancelled"
                )
            self.book.cancel(session, match, now, reason)
            self._tell(session, match, now, "cancelled", reason=reason)
            lines = [f"match {key}: cancelled ({reason}); its players are told"]
            if self.book.frame.cancelled(session, match, now):  # it was the season's last match
                self.notices.standings(session, match, now)
                lines.append(
                    f"season {match.season.key}: ended (nothing is left to play); every player gets the final standings"
                )
            return lines

    def pause(
        self, keys: list[str] | None, season: str | None, reason: str, now: datetime, session: Session | None = None
    ) -> list[str]:
        lines = []
        with self._work(session) as session:
            for match in _matches(session, keys, season, "running"):
                self.book.pause(session, match, now, reason)
                self._tell(session, match, now, "paused", reason=reason)
                lines.append(f"match {match.key}: paused; `referee resume {match.key}` starts its clock again")
        return lines or ["nothing to pause: no running match"]

    def resume(
        self, keys: list[str] | None, season: str | None, now: datetime, session: Session | None = None
    ) -> list[str]:
        lines = []
        with self._work(session) as session:
            for match in _matches(session, keys, season, "paused"):
                paused_at = session.scalar(
                    select(Event.at)
                    .where(Event.match_id == match.id, Event.kind == "pause")
                    .order_by(Event.seq.desc())
                    .limit(1)
                )
                gone = self.book.resume(session, match, now, paused_at or now)
                self._tell(session, match, now, "resumed", paused=duration(gone))
                lines.append(f"match {match.key}: resumed; its deadlines moved on by {duration(gone)}")
        return lines or ["nothing to resume: no paused match"]

    def extend(
        self, key: str, step: str | None, by: timedelta, now: datetime, session: Session | None = None
    ) -> list[str]:
        with self._work(session) as session:
            match = _match(session, key)
            if match.status != "running":
                raise ConfigError(f"match {key} is {match.status}: only a running match has a deadline to extend")
            try:
                extended = self.book.extend(session, match, now, step, by)
            except GameError as exc:
                raise ConfigError(str(exc)) from None
            entry = next(e for e in opensteps.listed(match) if e.key == extended)
            self._tell(session, match, now, "extended", by=duration(by))
            step = next((st for st in open_steps(GAMES[match.game], match.state) if st.key == extended), None)
            title = step.title if step is not None else extended
            until = local_time(entry.deadline, "UTC")  # type: ignore[arg-type]
            return [f"match {key}: {title} extended by {duration(by)}, to {until}"]

    def forfeit(self, key: str, player: str, reason: str, now: datetime, session: Session | None = None) -> list[str]:
        """``player`` forfeits the running match (the game's own rule: a loss with the chips as
        they stand; in MatchJack the player leaves and the others play on)."""
        with self._work(session) as session:
            match = _match(session, key)
            if match.status != "running":
                raise ConfigError(f"match {key} is {match.status}: only a running match is forfeited")
            seat = next((s for s in match.seats if s.player.key == player), None)
            if seat is None:
                raise ConfigError(f"{player} does not sit in match {key}")
            before = [entry.key for entry in opensteps.listed(match)]
            try:
                self.book.forfeit(session, match, player, now, reason, "organizer")
            except GameError as exc:
                raise ConfigError(f"match {key}: {exc}") from None
            self._tell(session, match, now, "forfeited", forfeiter=seat.player.name, reason=reason)
            self.notices.announce_step(session, match, now, since=before)
            state = "is over" if match.status == "finished" else "goes on"
            return [f"match {key}: {player} forfeits ({reason}); the match {state}; its players are told"]

    def substitute(
        self, key: str, old: str, new: str, reason: str, now: datetime, session: Session | None = None
    ) -> list[str]:
        """Hand ``old``'s seat in a running or paused match to ``new``, a live player of the
        season with an address who has no seat in it: the seat as it stands is ``new``'s from
        now on (:meth:`MatchBook.substitute`); ``new`` gets the handover mail, ``old`` and the
        other players are told."""
        with self._work(session) as session:
            match = _match(session, key)
            if match.status not in ("running", "paused"):
                raise ConfigError(
                    f"match {key} is {match.status}: only a running or paused match has a seat to hand over"
                    + (
                        " (a match that has not started takes its players from the season file)"
                        if match.status == "scheduled"
                        else ""
                    )
                )
            game = GAMES[match.game]
            if game.game_type.season_step:
                raise ConfigError(
                    f"match {key} is the EC's nomination: it is not handed over (cancel it, or let it time out)"
                )
            seat = next((s for s in match.seats if s.player.key == old), None)
            if seat is None:
                raise ConfigError(f"{old} does not sit in match {key}")
            roles = game.game_type.roles
            if roles[min(seat.position, len(roles) - 1)] in game.game_type.silent_roles:
                raise ConfigError(f"{old} is a silent participant of match {key}: a silent seat is not handed over")
            who = session.scalar(select(Player).where(Player.season_id == match.season_id, Player.key == new))
            if who is None:
                raise ConfigError(
                    f"no player {new!r} in season {match.season.key}: add them to the season file and load it first"
                )
            if who.email is None:
                raise ConfigError(f"{new} has no email address: a seat that acts needs one")
            if who.eliminated_at is not None:
                raise ConfigError(f"{new} has been eliminated from the season: they play no more matches")
            if any(s.player_id == who.id for s in match.seats):
                raise ConfigError(f"{new} sits in match {key} already")
            leaving = seat.player
            try:
                self.book.substitute(session, match, leaving, who, now, reason)
            except GameError as exc:
                raise ConfigError(f"match {key}: {exc}") from None
            self.notices.handover(session, match, leaving, who, now, reason)
            return [
                f"match {key}: {new} takes over {old}'s seat ({reason}); "
                f"{new} gets a handover mail, the others are told"
            ]

    @contextmanager
    def _work(self, session: Session | None) -> Iterator[Session]:
        """The caller's unit of work (a command by mail is judged in the judge's), else one of
        its own."""
        if session is not None:
            yield session
            return
        with self.store.unit_of_work() as own:
            yield own

    def _tell(self, session: Session, match: Match, at: datetime, what: str, **extra: Any) -> None:
        self.notices.tell(session, match, at, what, **extra)

    # ------------------------------------------------------------------ the season

    def adjust(
        self,
        season: str | None,
        player: str,
        currency: str,
        amount: int,
        reason: str,
        now: datetime,
        session: Session | None = None,
    ) -> list[str]:
        if currency not in CURRENCIES:
            raise ConfigError(f"currency {currency!r}: adjust moves one of {', '.join(CURRENCIES)}")
        if amount == 0:
            raise ConfigError("an adjustment of 0 changes nothing")
        with self._work(session) as session:
            row = one_season(session, season)
            who = session.scalar(select(Player).where(Player.season_id == row.id, Player.key == player))
            if who is None:
                raise ConfigError(f"no player {player!r} in season {row.key}")
            session.flush()  # an adjustment earlier in this unit of work (a mail of several) counts
            held = season_balances(session, row.id).get((player, currency), 0)
            if held + amount < 0:
                raise ConfigError(
                    f"{player} holds {held} {currency}: an adjustment of {amount} would leave less than 0"
                )
            entry = LedgerEntry(
                season_id=row.id,
                match_id=None,
                seq=None,
                from_account=SEASON_ACCOUNT if amount > 0 else player,
                to_account=player if amount > 0 else SEASON_ACCOUNT,
                amount=abs(amount),
                reason=f"adjusted by the organizer: {reason}",
                at=now,
                currency=currency,
            )
            session.add(entry)
            self.book.balances(session).post(entry)  # the live balances of this unit of work move too
            payload = {
                "player": player,
                "currency": currency,
                "amount": amount,
                "held": held + amount,
                "reason": reason,
            }
            log_season_event(session, row, "adjust", payload, now)
            count = session.scalar(select(LedgerEntry.id).order_by(LedgerEntry.id.desc()).limit(1))
            self.notices.mail_player(
                session,
                "adjusted",
                None,
                who,
                dedupe=f"adjusted:{row.key}:{count}:{player}",
                at=now,
                extra={
                    "season": row.name,
                    "currency": currency,
                    "amount": amount,
                    "held": held + amount,
                    "reason": reason,
                },
            )
            return [f"player {player}: {currency} {held} -> {held + amount} ({reason}); they are told"]

    def announce(
        self,
        text: str,
        now: datetime,
        *,
        season: str | None = None,
        match: str | None = None,
        session: Session | None = None,
    ) -> list[str]:
        """Mail ``text`` to every player of a match, or of the season (with an address)."""
        text = text.strip()
        if not text:
            raise ConfigError("the announcement is empty")
        with self._work(session) as session:
            if match is not None:
                row = _match(session, match)
                players = [seat.player for seat in row.seats]
                name, about = row.season.name, f"match {row.key}"
            else:
                found = one_season(session, season)
                players = list(session.scalars(select(Player).where(Player.season_id == found.id).order_by(Player.id)))
                name, about = found.name, f"season {found.key}"
            full = hashlib.sha256(text.encode()).hexdigest()
            digest = full[:16]
            told = 0
            for player in players:
                if player.email is None:
                    continue
                self.notices.mail_player(
                    session,
                    "announcement",
                    None,
                    player,
                    dedupe=f"announce:{about}:{iso(now)}:{digest}:{player.key}",
                    at=now,
                    extra={"season": name, "text": text, "sent": local_time(now, player.zone)},
                )
                told += 1
            # recorded without its text (which is the players'): who was told, and its SHA-256
            payload = {"told": told, "sha256": full}
            if match is not None:
                self.book.log_event(session, row, "announce", None, payload, now)
            else:
                log_season_event(session, found, "announce", payload, now)
            return [f"{about}: the announcement goes to {told} players"]


def _match(session: Session, key: str) -> Match:
    match = session.scalar(select(Match).where(Match.key == key).options(*MATCH_CONTEXT))
    if match is None:
        raise ConfigError(f"no match {key!r}")
    return match


def _matches(session: Session, keys: list[str] | None, season: str | None, status: str) -> list[Match]:
    if keys:
        found = [_match(session, key) for key in keys]
        wrong = [m for m in found if m.status != status]
        if wrong:
            m = wrong[0]
            raise ConfigError(f"match {m.key} is {m.status}, not {status}: nothing was changed")
        return found
    row = one_season(session, season)
    return list(
        session.scalars(
            select(Match)
            .where(Match.season_id == row.id, Match.status == status)
            .order_by(Match.key)
            .options(*MATCH_CONTEXT)
        )
    )
