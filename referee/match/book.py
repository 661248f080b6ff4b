"""The match book: starts, applies and closes matches, and writes their events, states and
ledger entries (one row per movement, under its currency: the season's chips, which every
match of a player shares, a match's own stacks, or a result's awards). It sends no mail:
whoever moves a match on asks :mod:`referee.match.notices` to tell the players.

Every effect is stamped with the instant it belongs to (a mail's arrival, a step's
deadline, a match's start), never with when the referee got to it. The event log plus
the match seed rebuilds any match (:func:`replay`).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session, joinedload, selectinload

from referee.archive import chain
from referee.games import GAMES
from referee.games.base import SEASON_CHIPS, Game, GameError, State
from referee.match import seals
from referee.store import rows
from referee.store.balances import Balances
from referee.store.models import Event, LedgerEntry, Match, Seat
from referee.timefmt import iso

__all__ = ["MATCH_CONTEXT", "MatchBook", "next_reminder", "replay", "replayed"]

log = logging.getLogger("referee")

EVENTS = Event.__table__

# Everything a mail about a match needs, loaded with the match instead of one query at a time.
MATCH_CONTEXT = (selectinload(Match.seats).joinedload(Seat.player), joinedload(Match.season))


def replay(game: Game, match: Match, events: Sequence[Event]) -> State:
    """Rebuild a match's state from its seed, options and event log."""
    (_, state) = deque(replayed(game, match, events), maxlen=1)[0]  # only the last is kept
    return state


def replayed(game: Game, match: Match, events: Sequence[Event]) -> Iterator[tuple[Event | None, State]]:
    """The match rebuilt from its seed and options, step by step: (None, the initial state),
    then each event with the state after it (a start changes nothing)."""
    players = [seat.player.key for seat in match.seats]
    state = game.initial_state(match.seed, players, match.options)
    yield None, state
    for ev in events:
        if ev.kind == "move":
            state = game.apply_move(state, ev.player, ev.payload["move"]).state
        elif ev.kind == "timeout":
            if "balances" in ev.payload:
                state = game.with_balances(state, ev.payload["balances"])
            state = game.apply_timeout(state)
        yield ev, state


class MatchBook:
    """Match changes inside a caller's unit of work (the caller commits). ``secret`` (the
    server's) keys the nonces of moves (:func:`referee.archive.chain.move_nonce`)."""

    def __init__(self, secret: bytes):
        self.secret = secret

    # ------------------------------------------------------------------ the season ledger

    @staticmethod
    def balances(session: Session) -> Balances:
        """The live season balances of this unit of work (:mod:`referee.store.balances`)."""
        found = session.info.get("balances")
        if found is None:
            found = session.info["balances"] = Balances(session)
        return found

    def preload_balances(self, session: Session, matches: Sequence[Match]) -> None:
        """The balances of every player of ``matches``, read at once when the batch first
        needs one (a batch of mails that closes no step and starts no match needs none)."""
        self.balances(session).expect((m.season_id, seat.player.key) for m in matches for seat in m.seats)

    # ------------------------------------------------------------------ lifecycle

    def start(self, session: Session, match: Match) -> None:
        """Start a scheduled match at its start time; its first step opens then."""
        game = GAMES[match.game]
        players = [seat.player.key for seat in match.seats]
        options = dict(match.options)
        if SEASON_CHIPS in game.game_type.currencies:
            # a game that plays with the season's chips starts from the ledger's balances
            # (a season file cannot set chips); a duel's own stacks come from its rules
            balances = self.balances(session)
            options["chips"] = {p: balances.get(match.season_id, p) for p in players}
        if game.game_type.names:
            # a game that matches seats by name in mail reads the names the season gives them
            # now; stored with the options, so a replay reads the same ones
            options["names"] = {seat.player.key: seat.player.name for seat in match.seats}
        match.options = options
        state = game.initial_state(match.seed, players, options)
        match.status = "running"
        self.log_event(session, match, "start", None, {"options": options}, match.starts_at)
        self.save_state(session, match, game, state, match.starts_at)
        log.info("match %s started at %s", match.key, iso(match.starts_at))

    @staticmethod
    def close_due(match: Match, until: datetime) -> bool:
        """Is the open step's deadline at or before ``until``? (A step closes at its deadline,
        so a mail that arrives exactly then is late.)"""
        return match.status == "running" and match.deadline is not None and match.deadline <= until

    def close_step(self, session: Session, match: Match) -> datetime:
        """Close the open step at its deadline with the rules' defaults; returns the deadline."""
        game = GAMES[match.game]
        at = match.deadline
        step_key = match.step_key
        step = game.step(match.state)
        missing = game.awaiting(match.state)
        # The settlement is judged against what each player holds in the season right now
        # (other matches settle too): the ledger's balance, recorded for replays.
        live = self.balances(session)
        balances = {seat.player.key: live.get(match.season_id, seat.player.key) for seat in match.seats}
        state = game.apply_timeout(game.with_balances(match.state, balances))
        after = game.step(state)
        if after is not None and after.key == step_key:
            # a deadline must move the match on, or its deadline would stay due forever
            raise GameError(f"{game.name}: apply_timeout left step {step_key} open")
        self.log_event(
            session,
            match,
            "timeout",
            None,
            {"missing": list(missing), "title": step.title, "balances": balances},
            at,
            step_key=step_key,
        )
        self.save_state(session, match, game, state, at)
        log.info(
            "match %s: %s closed at its deadline %s%s",
            match.key,
            step_key,
            iso(at),
            f" (no submission from {', '.join(missing)})" if missing else "",
        )
        return at

    def record_moves(
        self,
        session: Session,
        match: Match,
        player: str,
        logged: list[dict[str, Any]],
        state: State,
        at: datetime,
        *,
        inbound_id: int | None = None,
    ) -> list[dict[str, Any]]:
        """A mail's moves (accepted, or a penalised one) and the state they led to. Returns the
        seals of the accepted moves of a simultaneous step (:mod:`referee.match.seals`), for
        the receipt; the step's close reveals them."""
        game = GAMES[match.game]
        step = game.step(match.state)
        sealing = step is not None and step.simultaneous
        made: list[dict[str, Any]] = []
        for payload in logged:
            # every move's event carries a nonce, so its digest in the public chain says nothing
            nonce = chain.move_nonce(self.secret, match.key, match.last_event_seq + 1)
            sealed = sealing and bool(payload.get("accepted"))
            # a sealed move says so in its event, so the archive lists the seals its receipts gave
            # (in a game of mixed steps only some moves are sealed)
            logged_payload = {**payload, "nonce": nonce, **({"sealed": True} if sealed else {})}
            self.log_event(session, match, "move", player, logged_payload, at, inbound_id=inbound_id)
            if sealed:
                made.append(seals.seal(match.key, step.key, player, payload["move"], nonce, match.last_event_seq))
        if made:
            current = match.seals or {}
            opened = dict(current.get("open") or {})
            opened[player] = [*opened.get(player, []), *made]
            match.seals = {**current, "open": opened}  # a new value: the JSON column sees the change
        self.save_state(session, match, game, state, at)
        return made

    def save_state(self, session: Session, match: Match, game: Game, state: State, at: datetime) -> None:
        """Store the new state, copy its new movements into the ledger (each under its
        currency), and (re)open the step; at the end, book the result and its awards."""
        old = match.state or {"transfers": []}
        done = len(old["transfers"])
        for seq, t in enumerate(state["transfers"][done:], start=done):
            self._post(
                session,
                match,
                seq,
                t["from"],
                t["to"],
                t["amount"],
                t["reason"],
                t.get("step"),
                at,
                t.get("currency", SEASON_CHIPS),
            )
        match.state = state
        step = game.step(state)
        if step is None:
            if match.status != "finished":
                self._reveal_seals(match)
                self._finish(session, match, game, state, at)
            return
        if step.key != match.step_key:
            self._reveal_seals(match)
            match.step_key, match.step_kind, match.step_opened_at = step.key, step.kind, at
            match.deadline = at + timedelta(seconds=match.timing["steps"][step.kind])
            match.remind_at = next_reminder(match, after=at)

    @staticmethod
    def _reveal_seals(match: Match) -> None:
        """The open step is closing: its seals become the ones its closing mails reveal (the
        previous step's are no longer news)."""
        opened = (match.seals or {}).get("open") or {}
        if opened or match.seals:
            revealed = {"step": match.step_key, "players": opened} if opened else None
            match.seals = {"open": {}, "revealed": revealed}

    def _finish(self, session: Session, match: Match, game: Game, state: State, at: datetime) -> None:
        result = game.result(state)
        match.status, match.finished_at = "finished", at
        match.result = asdict(result) if result else None
        match.step_key = match.step_kind = match.deadline = match.remind_at = None
        if result is not None:
            seq = len(state["transfers"])
            for currency, amounts in sorted(result.awards.items()):
                for player, amount in sorted(amounts.items()):
                    if amount:
                        self._post(session, match, seq, "SEASON", player, amount, "award", None, at, currency)
                        seq += 1
            for signal in result.signals:
                log.info("match %s signals the season: %s", match.key, signal)
        log.info("match %s finished at %s: %s", match.key, iso(at), result.reason if result else "")

    def _post(
        self,
        session: Session,
        match: Match,
        seq: int,
        frm: str,
        to: str,
        amount: int,
        reason: str,
        step_key: str | None,
        at: datetime,
        currency: str,
    ) -> None:
        """One ledger row; the season's chips also move the live balances of this unit of work."""
        entry = LedgerEntry(
            season_id=match.season_id,
            match_id=match.id,
            seq=seq,
            from_account=frm,
            to_account=to,
            amount=amount,
            reason=reason,
            step_key=step_key,
            at=at,
            currency=currency,
        )
        session.add(entry)
        if currency == SEASON_CHIPS:
            self.balances(session).post(entry)

    @staticmethod
    def log_event(
        session: Session,
        match: Match,
        kind: str,
        player: str | None,
        payload: dict[str, Any],
        at: datetime,
        *,
        step_key: str | None = None,
        inbound_id: int | None = None,
    ) -> None:
        match.last_event_seq = seq = match.last_event_seq + 1
        row = {
            "match_id": match.id,
            "seq": seq,
            "kind": kind,
            "player": player,
            "payload": payload,
            "at": at,
            "step_key": step_key or match.step_key,
            "inbound_id": inbound_id,
        }
        # each event is chained to the one before (referee.archive.chain)
        row["digest"], row["hash"] = chain.stamp(match.last_event_hash or chain.GENESIS, match.key, row)
        match.last_event_hash = row["hash"]
        rows.add(session, EVENTS, row)  # a plain row, written with the batch (referee.store.rows)


def next_reminder(match: Match, *, after: datetime) -> datetime | None:
    """The earliest reminder instant for the open step that is still ahead of ``after``."""
    if match.deadline is None:
        return None
    for offset in sorted(match.timing.get("reminders", []), reverse=True):
        at = match.deadline - timedelta(seconds=offset)
        if at > after and at > (match.step_opened_at or after):
            return at
    return None
