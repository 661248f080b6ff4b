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
from referee.games.base import (
    SEASON_ACCOUNT,
    SEASON_CHIPS,
    Game,
    GameError,
    State,
    Step,
    hand_over,
    open_steps,
    time_out,
)
from referee.match import opensteps, seals
from referee.season.frame import SeasonFrame
from referee.store import rows
from referee.store.balances import Balances
from referee.store.models import Event, LedgerEntry, Match, Player, Seat
from referee.timefmt import iso

__all__ = ["MATCH_CONTEXT", "MatchBook", "first_seating", "replay", "replayed"]

log = logging.getLogger("referee")

EVENTS = Event.__table__

# Everything a mail about a match needs, loaded with the match instead of one query at a time.
MATCH_CONTEXT = (selectinload(Match.seats).joinedload(Seat.player), joinedload(Match.season))


def replay(game: Game, match: Match, events: Sequence[Event]) -> State:
    """Rebuild a match's state from its seed, options and event log."""
    (_, state) = deque(replayed(game, match, events), maxlen=1)[0]  # only the last is kept
    return state


def first_seating(seated: Sequence[str], handovers: Sequence[tuple[str, str]]) -> list[str]:
    """The players a match started with: ``seated`` (its seats now) with each handover
    ((old, new), in the order made: ``referee substitute``) undone, the last first."""
    players = list(seated)
    for old, new in reversed(handovers):
        players = [old if key == new else key for key in players]
    return players


def replayed(game: Game, match: Match, events: Sequence[Event]) -> Iterator[tuple[Event | None, State]]:
    """The match rebuilt from its seed and options, step by step: (None, the initial state),
    then each event with the state after it (a start changes nothing). A handover of a seat
    (``referee substitute``) is replayed where it was made: the match starts with the
    players it started with."""
    handovers = [(ev.payload["old"], ev.payload["new"]) for ev in events if ev.kind == "substitute"]
    players = first_seating([seat.player.key for seat in match.seats], handovers)
    state = game.initial_state(match.seed, players, match.options)
    yield None, state
    for ev in events:
        if "holdings" in ev.payload:  # a game that reads season currencies read these then
            state = game.with_holdings(state, ev.payload["holdings"])  # type: ignore[attr-defined]
        if ev.kind == "move":
            state = game.apply_move(state, ev.player, ev.payload["move"]).state
        elif ev.kind == "timeout":
            if "balances" in ev.payload:
                state = game.with_balances(state, ev.payload["balances"])
            state = time_out(game, state, getattr(ev, "step_key", None))  # the step whose deadline passed
        elif ev.kind == "forfeit":
            state = game.forfeit(state, ev.player)
        elif ev.kind == "substitute":
            state = hand_over(game, state, ev.payload["old"], ev.payload["new"], ev.payload["name"])
            if "balances" in ev.payload:  # a game of the season's chips: the new player's
                state = game.with_balances(state, ev.payload["balances"])
        yield ev, state


class MatchBook:
    """Match changes inside a caller's unit of work (the caller commits). ``secret`` (the
    server's) keys the nonces of moves (:func:`referee.archive.chain.move_nonce`)."""

    def __init__(self, secret: bytes):
        self.secret = secret
        # the season frame: who sits at a start, what follows an end (it writes no mail either)
        self.frame = SeasonFrame(self)

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

    def holdings(self, session: Session, match: Match) -> dict[str, dict[str, int]]:
        """The live season balances of the currencies the match's game reads besides the
        season's chips (``GameType.reads``): {currency: {player: n}}; {} for most games."""
        live = self.balances(session)
        return {
            currency: {seat.player.key: live.get(match.season_id, seat.player.key, currency) for seat in match.seats}
            for currency in GAMES[match.game].game_type.reads
        }

    def with_holdings(self, session: Session, match: Match, state: State) -> tuple[State, dict[str, Any]]:
        """``state`` with the live holdings of a game that reads season currencies, and what to
        record in the event for a replay (``{"holdings": ...}``); else ``state`` and {}."""
        game = GAMES[match.game]
        if not game.game_type.reads:
            return state, {}
        held = self.holdings(session, match)
        return game.with_holdings(state, held), {"holdings": held}  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ lifecycle

    # The options the match book adds to a match's own at its start (the season's balances,
    # the seats' names, the holdings of season currencies): stored with the match's options
    # for a replay, but never written by the organizer (a season file's reload compares the
    # rest: referee.seasons)
    ADDED_AT_START = ("chips", "names", "holdings")

    def start(self, session: Session, match: Match) -> None:
        """Start a scheduled match at its start time; its first step opens then."""
        game = GAMES[match.game]
        self.frame.seat(session, match)  # live seats taken now; an eliminated player refused
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
        if game.game_type.reads:
            # a game that reads season currencies (garnets) starts from the ledger's balances
            options["holdings"] = self.holdings(session, match)
        state = game.initial_state(match.seed, players, options)  # before any change: it may refuse
        match.options = options
        match.status, match.problem = "running", None
        self.log_event(session, match, "start", None, {"options": options}, match.starts_at)
        self.save_state(session, match, game, state, match.starts_at)
        log.info("match %s started at %s", match.key, iso(match.starts_at))

    # ------------------------------------------------------------------ the organizer's controls

    def cancel(self, session: Session, match: Match, at: datetime, reason: str) -> None:
        """End a scheduled, running or paused match at ``at`` without a result: no step is
        open any more, nothing follows it; an event in its chain says why."""
        self.log_event(session, match, "cancel", None, {"reason": reason}, at)
        match.status, match.finished_at, match.problem = "cancelled", at, None
        match.step_key = match.step_kind = match.step_opened_at = match.deadline = match.remind_at = None
        match.open_steps = []
        log.info("match %s cancelled at %s: %s", match.key, iso(at), reason)

    def pause(self, session: Session, match: Match, at: datetime, reason: str) -> None:
        """Stop a running match's clock at ``at``: no deadline passes, no reminder goes, no
        mail is taken until :meth:`resume`; its open steps keep their deadlines meanwhile."""
        self.log_event(session, match, "pause", None, {"reason": reason}, at)
        match.status = "paused"
        log.info("match %s paused at %s: %s", match.key, iso(at), reason)

    def resume(self, session: Session, match: Match, at: datetime, paused_at: datetime) -> timedelta:
        """Start a paused match's clock again at ``at``: every open step's deadline (and its
        reminder) moves on by the time the match was paused; returns that time."""
        gone = max(at - paused_at, timedelta(0))
        match.status = "running"
        entries = opensteps.listed(match)
        for entry in entries:
            if entry.deadline is not None:
                entry.deadline += gone
                entry.remind_at = opensteps.next_reminder(match.timing.get("reminders", []), entry, after=at)
        opensteps.store(match, entries)
        self.log_event(session, match, "resume", None, {"paused_seconds": gone.total_seconds()}, at)
        log.info("match %s resumed at %s after %s", match.key, iso(at), gone)
        return gone

    def extend(self, session: Session, match: Match, at: datetime, step_key: str | None, by: timedelta) -> str:
        """Move an open step's deadline (``step_key``, else the one due first) on by ``by``;
        returns the step's key."""
        entries = opensteps.listed(match)
        timed = [e for e in entries if e.deadline is not None]
        entry = next((e for e in timed if e.key == step_key), None) if step_key else opensteps.due(timed)
        if entry is None or entry.deadline is None:
            open_keys = ", ".join(e.key for e in timed) or "none"
            raise GameError(f"match {match.key} has no open step {step_key or ''} with a deadline (open: {open_keys})")
        entry.deadline += by
        entry.remind_at = opensteps.next_reminder(match.timing.get("reminders", []), entry, after=at)
        opensteps.store(match, entries)
        payload = {"step": entry.key, "seconds": by.total_seconds(), "deadline": iso(entry.deadline)}
        self.log_event(session, match, "extend", None, payload, at, step_key=entry.key)
        log.info("match %s: %s extended by %s, to %s", match.key, entry.key, by, iso(entry.deadline))
        return entry.key

    def forfeit(self, session: Session, match: Match, player: str, at: datetime, reason: str, by: str) -> None:
        """``player`` forfeits the running match at ``at`` (``by``: "organizer", or "rule", the
        abandonment rule): the game's own forfeit (a loss, with the chips as they stand; in
        MatchJack the player leaves and the others play on), an event in the chain."""
        game = GAMES[match.game]
        state = game.forfeit(match.state, player)  # before any change: it may refuse
        self.log_event(session, match, "forfeit", player, {"reason": reason, "by": by}, at)
        self.save_state(session, match, game, state, at)
        log.info("match %s: %s forfeits at %s (%s)", match.key, player, iso(at), reason)

    def substitute(self, session: Session, match: Match, old: Player, new: Player, at: datetime, reason: str) -> None:
        """Hand ``old``'s seat in the running (or paused) match to ``new`` at ``at``: the seat as
        it stands (its chips, cards, pending moves, its record in the match) is ``new``'s from
        now on (:func:`referee.games.base.hand_over`); ``old``'s reply address for the match
        stops working (the seat's token is signed with its player); the seat's run of missed
        steps starts again; a sealed move of the seat stays sealed, and its reveal goes to
        ``new``. An event in the chain; replayed where it was made."""
        game = GAMES[match.game]
        state = hand_over(game, match.state, old.key, new.key, new.name)  # before any change: it may refuse
        seat = next(seat for seat in match.seats if seat.player_id == old.id)
        payload: dict[str, Any] = {"old": old.key, "new": new.key, "name": new.name, "reason": reason}
        if SEASON_CHIPS in game.game_type.currencies:
            # a game that plays with the season's chips plays the seat with the new player's
            # (recorded, so a replay reads the same)
            live = self.balances(session)
            keys = [new.key if s.player_id == old.id else s.player.key for s in match.seats]
            balances = {key: live.get(match.season_id, key) for key in keys}
            state = game.with_balances(state, balances)
            payload["balances"] = balances
        self.log_event(session, match, "substitute", old.key, payload, at)
        seat.player_id, seat.player = new.id, new
        match.state = state
        if old.key in (match.absences or {}):
            match.absences = {p: n for p, n in match.absences.items() if p != old.key}  # type: ignore[union-attr]
        opened = (match.seals or {}).get("open") or {}
        if old.key in opened:
            moved = {new.key if p == old.key else p: made for p, made in opened.items()}
            match.seals = {**match.seals, "open": moved}  # type: ignore[dict-item]
        log.info("match %s: %s's seat handed to %s at %s (%s)", match.key, old.key, new.key, iso(at), reason)

    def abandon(self, session: Session, match: Match, at: datetime) -> list[tuple[str, str]]:
        """The abandonment rule (RULINGS, "Seasons"): every player of the running match who has
        missed ``timing["abandon_after"]`` steps in a row forfeits it now; returns (player, why)."""
        limit = int((match.timing or {}).get("abandon_after") or 0)
        gone: list[tuple[str, str]] = []
        if not limit:
            return gone
        for player, missed in sorted((match.absences or {}).items()):
            if missed >= limit and match.status == "running":
                why = f"missed {missed} steps in a row (the abandonment rule: {limit})"
                try:
                    self.forfeit(session, match, player, at, why, "rule")
                except GameError:  # already out of the match (MatchJack): nothing to forfeit
                    continue
                gone.append((player, why))
        if gone:
            out = {p for p, _ in gone}
            match.absences = {p: n for p, n in (match.absences or {}).items() if p not in out}
        return gone

    @staticmethod
    def close_due(match: Match, until: datetime) -> bool:
        """Is an open step's deadline at or before ``until``? (A step closes at its deadline,
        so a mail that arrives exactly then is late.)"""
        return match.status == "running" and match.deadline is not None and match.deadline <= until

    def close_step(self, session: Session, match: Match) -> datetime:
        """Close the open step whose deadline comes first, at that deadline, with the rules'
        defaults; returns the deadline."""
        game = GAMES[match.game]
        at = match.deadline
        step_key = match.step_key
        assert at is not None and step_key is not None
        step = next(s for s in open_steps(game, match.state) if s.key == step_key)
        missing = [p for p in game.awaiting(match.state) if p in step.players]
        # The settlement is judged against what each player holds in the season right now
        # (other matches settle too): the ledger's balance, recorded for replays.
        live = self.balances(session)
        balances = {seat.player.key: live.get(match.season_id, seat.player.key) for seat in match.seats}
        state, held = self.with_holdings(session, match, match.state)
        state = time_out(game, game.with_balances(state, balances), step_key)
        if any(s.key == step_key for s in open_steps(game, state)):
            # a deadline must move the match on, or its deadline would stay due forever
            raise GameError(f"{game.name}: apply_timeout left step {step_key} open")
        self.log_event(
            session,
            match,
            "timeout",
            None,
            {"missing": missing, "title": step.title, "balances": balances, **held},
            at,
            step_key=step_key,
        )
        self.save_state(session, match, game, state, at)
        absent = dict(match.absences or {})
        for player in missing:
            absent[player] = absent.get(player, 0) + 1
        if missing:
            match.absences = absent  # a new value: the JSON column sees the change
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
        step = self.step_of(match, player)
        sealing = step is not None and step.simultaneous
        made: list[dict[str, Any]] = []
        if (match.absences or {}).get(player) and any(p.get("accepted") for p in logged):
            match.absences = {**match.absences, player: 0}  # an accepted move ends a run of misses
        for payload in logged:
            # every move's event carries a nonce, so its digest in the public chain says nothing
            nonce = chain.move_nonce(self.secret, match.key, match.last_event_seq + 1)
            sealed = sealing and bool(payload.get("accepted"))
            # a sealed move says so in its event, so the archive lists the seals its receipts gave
            # (in a game of mixed steps only some moves are sealed)
            logged_payload = {**payload, "nonce": nonce, **({"sealed": True} if sealed else {})}
            self.log_event(
                session,
                match,
                "move",
                player,
                logged_payload,
                at,
                step_key=step.key if step is not None else None,
                inbound_id=inbound_id,
            )
            if sealed:
                made.append(seals.seal(match.key, step.key, player, payload["move"], nonce, match.last_event_seq))
        if made:
            current = match.seals or {}
            opened = dict(current.get("open") or {})
            opened[player] = [*opened.get(player, []), *made]
            match.seals = {**current, "open": opened}  # a new value: the JSON column sees the change
        self.save_state(session, match, game, state, at)
        return made

    @staticmethod
    def step_of(match: Match, player: str) -> Step | None:
        """The open step ``player`` may act in (in most games the one open step), else the
        open step due first: where a move of theirs belongs (its event's step)."""
        steps = open_steps(GAMES[match.game], match.state) if match.state is not None else ()
        return opensteps.step_for(steps, player, match.step_key)

    def save_state(self, session: Session, match: Match, game: Game, state: State, at: datetime) -> None:
        """Store the new state, copy its new movements into the ledger (each under its
        currency), and keep its open steps: a step that is new opens at ``at`` with its own
        deadline, a step still open keeps its own; at the end, book the result and its awards."""
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
        before = opensteps.listed(match)
        match.state = state
        steps = open_steps(game, state)
        if not steps:
            if match.status != "finished":
                self._reveal_seals(match, [s.key for s in before])
                self._finish(session, match, game, state, at)
            return
        kept = {s.key: s for s in before}
        now_open: list[opensteps.OpenStep] = []
        for step in steps:
            entry = kept.get(step.key)
            if entry is None:
                deadline = None if step.waiting else at + timedelta(seconds=match.timing["steps"][step.kind])
                entry = opensteps.OpenStep(step.key, step.kind, at, deadline)
                entry.remind_at = opensteps.next_reminder(match.timing.get("reminders", []), entry, after=at)
            now_open.append(entry)
        still = {s.key for s in steps}
        closed = [s.key for s in before if s.key not in still]
        if closed:
            self._reveal_seals(match, closed)
        opensteps.store(match, now_open)

    @staticmethod
    def _reveal_seals(match: Match, closed: Sequence[str]) -> None:
        """Steps are closing: their seals become the ones their closing mails reveal (those of
        the step closed before are no longer news); the seals of steps still open stay sealed.
        (Every seal names its step; in most games one step is open at a time.)"""
        opened = (match.seals or {}).get("open") or {}
        if not (opened or match.seals):
            return
        shut = set(closed)
        revealed: dict[str, list[dict[str, Any]]] = {}
        still: dict[str, list[dict[str, Any]]] = {}
        for player, made in opened.items():
            for one in made:
                (revealed if one["step"] in shut else still).setdefault(player, []).append(one)
        steps = [key for key in closed if any(one["step"] == key for made in revealed.values() for one in made)]
        told = {"step": steps[0], "players": revealed} if revealed else None
        match.seals = {"open": still, "revealed": told}

    def _finish(self, session: Session, match: Match, game: Game, state: State, at: datetime) -> None:
        result = game.result(state)
        match.status, match.finished_at = "finished", at
        match.result = asdict(result) if result else None
        match.step_key = match.step_kind = match.deadline = match.remind_at = None
        match.open_steps = []
        if result is not None:
            seq = len(state["transfers"])
            for currency, amounts in sorted(result.awards.items()):
                for player, amount in sorted(amounts.items()):
                    if amount:
                        self._post(session, match, seq, SEASON_ACCOUNT, player, amount, "award", None, at, currency)
                        seq += 1
            for signal in result.signals:
                log.info("match %s signals the season: %s", match.key, signal)
        log.info("match %s finished at %s: %s", match.key, iso(at), result.reason if result else "")
        self.frame.finished(session, match, at)  # a nomination, a death match, an elimination

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
        self.balances(session).post(entry)  # the live balances it keeps move with the entry

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
