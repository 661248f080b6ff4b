"""An authenticated mail for one seat, judged against its match (:class:`SeatMail`): the
reply read against the mail of ours it answers, moves applied and recorded, a late or stale
reply told so, a refusal that quotes what was read."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import case, select
from sqlalchemy.orm import Session

from referee.config import seat_role, silent_roles
from referee.games import GAMES
from referee.games.base import SEQUENTIAL, Game, NoMoves, ParseError, Parsed, State, Step, open_steps
from referee.mail.parse import Body, Headers, parse_body, shown_text
from referee.mail.reply import Against
from referee.match import opensteps
from referee.pipeline.ingest import TOO_LARGE
from referee.pipeline.player_commands import COMMANDS_RULE, PlayerCommands
from referee.pipeline.prereading import FirstReading, Prereading, against_ours
from referee.pipeline.limits import ReplyLimiter, SenderLimiter
from referee.pipeline.verdict import Decision, MailRow, Stages, before_our_mail
from referee.store import rows as plain_rows
from referee.store.models import Event, Match, Outbox, Seat
from referee.timefmt import exact_time

if TYPE_CHECKING:
    pass

log = logging.getLogger("referee.judge")

QUOTE_LINES = 40  # an error reply quotes at most this many lines of what was read...
QUOTE_WIDTH = 200  # ...each cut to this many characters
AGAINST_MAILS = 4  # our mails a reply is read against at most: the one it answers, then the latest
UNCHANGED_FORM = (
    "Your reply only quotes our mail: the form in it is just as we sent it, and a form left "
    "unchanged is never taken as a move (it shows an example or your current choice). To keep "
    "what you have sent so far, do nothing. To send a move, change the form where it stands in "
    "the quote, or write your lines above the quote, and send it again."
)


@dataclass(frozen=True)
class Sent:
    """A mail of ours as a reply is read against it: the text a reader sees of it, and the
    form it carried."""

    shown: str
    form: str | None

    @classmethod
    def of(cls, shown: str | None, message: bytes | None, form: str | None) -> Sent:
        """From the columns :data:`SENT_COLUMNS` reads: the shown text the press kept, else
        (a mail written before it kept one, or rewritten on delivery) read from the bytes."""
        if shown is None:
            shown = shown_text(message) if message is not None else ""
        return cls(shown, form)


# Outbox columns a reply is read against: the message's bytes only where no shown text was kept
SENT_COLUMNS = (
    Outbox.shown,
    case((Outbox.shown.is_(None), Outbox.message), else_=None).label("message"),
    Outbox.form,
)


@dataclass
class Batch:
    # our Message-ID -> (outbox id, match id, step key, step title) of the mail it is
    answered: dict[str, tuple[int, int | None, str, str | None]] = field(default_factory=dict)
    # outbox id -> Sent (shown text, form) of those mails: what a reply is read against first
    sent: dict[int, Any] = field(default_factory=dict)
    matches: list[Match] = field(default_factory=list)  # held so the session keeps them
    senders: SenderLimiter | None = None  # mails per sender and hour (None: not limited)
    readings: Prereading | None = None  # the replies the press's workers read ahead


class SeatMail:
    """An authenticated mail for one seat: judged against its match."""

    def __init__(
        self,
        judge: Stages,
        session: Session,
        row: MailRow,
        head: Headers,
        seat: Seat,
        now: datetime,
        batch: Batch,
        limiter: ReplyLimiter,
    ):
        self.judge_, self.notices = judge, judge.notices
        self.session, self.row, self.head, self.now, self.batch, self.limiter = session, row, head, now, batch, limiter
        self.match, self.player, self.seat = seat.match, seat.player, seat
        self.game: Game = GAMES[self.match.game]
        # a seat that never acts (Betting Minority's participants): whatever its mail answers,
        # the game's own plain answer ("you have nothing to send"), never one about a step
        self.silent = seat_role(self.game, seat.position) in silent_roles(self.game)
        self.own: list[str] | None = None  # the player's lines, when the reply was read against our mail
        row.match_id, row.player_id = self.match.id, self.player.id
        # the body, and the reply read against the mail it answers, when a worker read them ahead
        self.first: FirstReading | None = batch.readings.get(row.id) if batch.readings is not None else None

    def judge(self) -> Decision:
        match, session = self.match, self.session
        # Timeliness is judged by arrival: close every deadline that passed before this mail came.
        if self.judge_.clock.close_until(session, match, self.row.received_at):
            plain_rows.flush(session)  # the late-reply check below reads the closing events
        body: Body | None = None
        if self.row.rule != TOO_LARGE:  # a mail of the player's commands (referee.pipeline.player_commands)
            body = self._body()
            commands = PlayerCommands.personal(self.judge_, session, self.row, self.head, self.now, self.seat, body)
            if commands is not None:
                return Decision(commands[0], COMMANDS_RULE, commands[1])
        if match.status == "paused":
            return self.reject(
                "The organizer has paused this match, so nothing was recorded. You get a mail when it "
                "goes on; send your move again then."
            )
        if match.status == "cancelled":
            return self.reject("The organizer has cancelled this match; nothing more can be submitted.")
        if match.status != "running":
            return self.reject("This match is over; nothing more can be submitted.")
        if self.row.rule == TOO_LARGE:  # the source read only its beginning: nothing of it is taken
            return self.reject(
                f"Your mail was too large for the referee ({self.row.note or 'over the limit'}), "
                "so nothing in it was read. Send your move again in a short plain mail, without attachments."
            )
        # a reply to a mail about a step that is over: in a game of turns always stale; else
        # late when the step closed at its deadline, stale when moves closed it
        if self.silent:
            late = None
        elif self.game.game_type.dynamics == SEQUENTIAL:
            late = self._stale_reply()
        else:
            late = self._late_reply() or self._stale_reply()
        if late is not None:
            return self.reject(late)
        body = body or self._body()
        parsed, error = self._read(body)
        if parsed is None:
            assert error is not None
            return self.reject(error.reason, error.line, body=body, move=not isinstance(error, NoMoves))
        # A game that reads season currencies (garnets) judges the moves on the live holdings,
        # recorded with the first move for a replay.
        state, held = self.judge_.book.with_holdings(session, match, match.state)
        # A mail is all or nothing: every move in it is accepted, or none is recorded -- except
        # where the rules punish a well-formed illegal move: the penalty stands (with the moves
        # before it, on which it was computed).
        steps_before = [entry.key for entry in opensteps.listed(match)]  # what the mail's moves open is news
        logged: list[dict[str, Any]] = []
        for move in parsed.moves:
            applied = self.game.apply_move(state, self.player.key, move)
            if applied.changed:
                state = applied.state
                logged.append({"move": move, "accepted": applied.accepted, **({} if logged else held)})
            if not applied.accepted:
                if applied.changed:
                    self._record(logged, state)
                return self.reject(
                    applied.reason or "That move is not allowed now.", penalised=applied.changed, body=body, move=True
                )
        sealed = self._record(logged, state)
        self.notices.mail_player(
            session,
            "receipt",
            match,
            self.player,
            dedupe=f"receipt:{self.row.id}",
            reply_to_mail=self.head,
            at=self.now,
            inbound_id=self.row.id,
            extra={
                "ignored": quote(parsed.ignored),
                "truncated": body.truncated,
                "sealed": sealed,
                # the receipt of a mail read after the deadline it met says so (Notices.context)
                "arrived": exact_time(self.row.received_at, self.player.zone),
                "open_before": steps_before,
            },
        )
        # the others hear of each new step (or the end); the mover's receipt above says what happens now
        self.notices.announce_step(session, match, self.row.received_at, since=steps_before, mover=self.player.key)
        return Decision("accepted", None, f"{len(logged)} move(s) for {match.key}")

    def _body(self) -> Body:
        """The mail's body (:func:`parse_body`), as a worker read it ahead if it did."""
        return self.first.body if self.first is not None else parse_body(self.row.raw, head=self.head)

    def _read(self, body: Body) -> tuple[Parsed | None, ParseError | None]:
        """The moves of the player's part of a reply read against the mail of ours it
        quotes (:mod:`referee.mail.reply`); for a mail that quotes none of ours,
        :meth:`_read_readings`."""
        against = self._against_sent(body)
        if against is None:
            return self._read_readings(body)
        self.own = list(against.own)
        state, player = self.match.state, self.player.key
        try:
            parsed = self.game.parse(state, player, against.text)
        except NoMoves as exc:
            return None, NoMoves(UNCHANGED_FORM) if against.form_untouched else exc
        except ParseError as exc:
            return None, exc
        if not parsed.moves:
            return None, NoMoves(UNCHANGED_FORM if against.form_untouched else "I found nothing to read in your mail")
        return parsed, None

    def _against_sent(self, body: Body) -> Against | None:
        """The reply read against the mail of ours it copies: the first, in this order, that
        it holds a copy of among the one it answers (In-Reply-To) and those its References
        name (latest first); failing those, as a guess, the one of our latest mails to the
        player in this match that it holds the most of a copy of (there a copy must hold
        our prose, not only the form's lines). At most :data:`AGAINST_MAILS` mails are
        read; a reply that answers a mail of ours and copies it, as nearly every reply
        does, costs one reading and no query (the batch loaded that mail). None when it
        quotes none of them."""
        if not body.shown.strip():
            return None
        answered = self._answered()
        linked = [answered[0]] if answered is not None else []
        if linked:
            first = self.first
            if first is not None and first.outbox_id == linked[0] and first.body is body:
                got = first.against  # read by a worker, the same way
            else:
                got = self._read_against(body, self.batch.sent.get(linked[0]), linked=True)
            if got is not None:
                return got
        named = [oid for oid in self._referenced_mails() if oid not in linked]
        named = named[: AGAINST_MAILS - len(linked)]
        sent = self._sent_texts(named)
        for oid in named:
            got = self._read_against(body, sent.get(oid), linked=True)
            if got is not None:
                return got
        linked += named
        guessed = self._latest_mails(exclude=linked)[: AGAINST_MAILS - len(linked)]
        sent = self._sent_texts(guessed)
        best: Against | None = None
        for oid in guessed:
            got = self._read_against(body, sent.get(oid), linked=False)
            if got is not None and (best is None or got.copied > best.copied):
                best = got
        return best

    def _referenced_mails(self) -> list[int]:
        """Our mails about this match that the reply's References name, latest first;
        outbox ids, each once."""
        refs = [r for r in reversed(self.head.references) if len(r) <= 400][:AGAINST_MAILS]
        if not refs:
            return []
        found = dict(
            self.session.execute(
                select(Outbox.message_id, Outbox.id).where(
                    Outbox.message_id.in_(refs), Outbox.match_id == self.match.id
                )
            ).all()
        )
        return list(dict.fromkeys(found[r] for r in refs if r in found))

    def _latest_mails(self, exclude: list[int]) -> list[int]:
        """Our two latest mails to the player in this match, but those in ``exclude``."""
        if not self.player.email:
            return []
        latest = self.session.scalars(
            select(Outbox.id)
            .where(Outbox.match_id == self.match.id, Outbox.to_addr == self.player.email)
            .order_by(Outbox.id.desc())
            .limit(2)
        )
        return [oid for oid in latest if oid not in exclude]

    def _sent_texts(self, ids: list[int]) -> dict[int, Sent]:
        """Our mails ``ids`` (their message and form), by outbox id, in one query."""
        if not ids:
            return {}
        query = select(Outbox.id, *SENT_COLUMNS).where(Outbox.id.in_(ids))
        return {row.id: Sent.of(row.shown, row.message, row.form) for row in self.session.execute(query)}

    @staticmethod
    def _read_against(body: Body, sent: Sent | None, *, linked: bool) -> Against | None:
        """The reply read against our mail ``sent`` (:func:`against_ours`); None without it."""
        return None if sent is None else against_ours(body, sent.shown, sent.form, linked=linked)

    def _read_readings(self, body: Body) -> tuple[Parsed | None, ParseError | None]:
        """The moves of the first reading that holds any; else the error to tell the player.

        Every reading ends where a copy of our own mail begins (:func:`before_our_mail`),
        whatever the client and language put above it. A mistake in what the player wrote
        (the first reading) is theirs to hear about, unless the HTML part holds the moves
        (a plain part mangled by the client); the uncut and quoted readings count only for a
        reply to a mail of ours, and only where they differ from that mail's own form (the
        player's edit, not our quote).
        """
        state, player = self.match.state, self.player.key
        error: ParseError | None = None
        sent: list[Any] | None = None
        for reading in body.each():  # each reading made only if the ones before held no moves
            if reading.source in ("uncut", "quoted"):
                if error is not None and not isinstance(error, NoMoves):
                    break  # what the player wrote has a mistake: that is the answer
                if sent is None:
                    sent = self._sent_moves()
                if sent is False:
                    continue
            text = reading.text if reading.source == "quoted" else before_our_mail(reading.text, self.player.name)
            try:
                parsed = self.game.parse(state, player, text)
            except NoMoves as exc:
                error = error or exc
                continue
            except ParseError as exc:
                if reading.source in ("text", "html") and (error is None or isinstance(error, NoMoves)):
                    error = exc
                continue
            if not parsed.moves:
                continue
            if reading.source in ("uncut", "quoted") and parsed.moves == sent:
                continue  # our own mail quoted back untouched: the player changed nothing in it
            return parsed, None
        return None, error or NoMoves("I found nothing to read in your mail")

    def _answered(self) -> tuple[int, int | None, str, str | None] | None:
        """The outbox row of our mail about this match that this mail replies to (its
        In-Reply-To), if it is one of ours."""
        entry = self.batch.answered.get(self.head.in_reply_to or "")
        return entry if entry is not None and entry[1] == self.match.id else None

    def _sent_moves(self) -> list[Any] | bool:
        """What the form in the mail this one answers says (our mails carry a filled-in form:
        the example, or the player's current submission), so that a quote of it is not taken
        for the player's move. False when the mail answers no mail of ours: then a quote in
        it may be anything (the player's own old mail, a forward), and is never read."""
        answered = self._answered()
        if answered is None:
            return False
        sent = self.session.scalar(select(Outbox.message).where(Outbox.id == answered[0]))
        written = parse_body(sent).written if sent is not None else ""
        if not written:
            return []
        try:
            return self.game.parse(self.match.state, self.player.key, written).moves
        except ParseError:
            return []

    def _record(self, logged: list[dict[str, Any]], state: State) -> list[dict[str, Any]]:
        """Record the mail's moves; returns the seals of those a simultaneous step keeps secret."""
        return self.judge_.book.record_moves(
            self.session, self.match, self.player.key, logged, state, self.row.received_at, inbound_id=self.row.id
        )

    def _still_open(self, answered_step: str) -> bool:
        """Is the step a mail of ours was about still open, or extended by an open step?"""
        return any(s.key == answered_step or s.extends == answered_step for s in self._open())

    def _open(self) -> tuple[Step, ...]:
        return open_steps(self.game, self.match.state) if self.match.status == "running" else ()

    def _now_open(self) -> Step | None:
        """The open step to name in an answer: the one the player may act in, else the one due first."""
        return opensteps.step_for(self._open(), self.player.key, self.match.step_key)

    def _stale_reply(self) -> str | None:
        """In a game of turns, a reply to one of our mails about a turn that is over is not
        moved to the turn open now, however that turn ended: the player wrote it without
        knowing what happened since. Only the mail it replies to (In-Reply-To) decides."""
        answered = self._answered()
        if answered is None or self._still_open(answered[2]):
            return None
        was = answered[3] or "an earlier turn"
        step = self._now_open()
        if step is None:
            return None  # the match is over: said before this check
        if self._passed(step):  # the mail's "now" part says it has closed (templates/mail/common/passed.txt)
            now = f"{step.title} followed, and its deadline too has passed."
        elif self.player.key in step.players:
            now = (
                f"Now it is {step.title}, and your turn: the choices you have now and the form are below, "
                "as in our latest mail to you."
            )
        else:
            others = ", ".join(s.player.name for s in self.match.seats if s.player.key in step.players)
            whose = f", {others}'s turn" if others else ""
            now = f"Now it is {step.title}{whose}: you have nothing to send until you get our next mail."
        return f"Your mail answers our mail about {was}, which is over; so nothing in it was recorded. {now}"

    def _late_reply(self) -> str | None:
        """A reply to one of our mails about a step that has closed since is not moved to the next step.

        Only the mail it replies to (In-Reply-To) decides: References name the whole thread,
        whose root is the match's first mail."""
        answered = self._answered()  # the mail it replies to, not the thread it belongs to
        if answered is None:
            return None
        step = answered[2]
        if self._still_open(step):
            return None  # still open, or extended by the open step: it still counts
        now_open = self._now_open()
        closed = self.session.scalars(
            select(Event).where(Event.match_id == self.match.id, Event.kind == "timeout", Event.step_key == step)
        ).first()
        if closed is None:
            return None
        title = closed.payload.get("title") or step
        if now_open is not None and self._passed(now_open):  # the mail's "now" part says it has closed
            now = f"{now_open.title} followed, and its deadline too has passed."
        else:
            now = f"{now_open.title if now_open else 'The next step'} is open now: use the form below."
        return (
            f"Your mail answers our mail about {title}, which closed at its deadline, "
            f"{exact_time(closed.at, self.player.zone)}, before your mail arrived; so nothing in it was recorded. "
            + now
        )

    def _passed(self, step: Step) -> bool:
        """Has the deadline of ``step`` (open) passed as the mail is judged? Then the step
        closes right after, and no answer may send the player to it."""
        deadline = next((e.deadline for e in opensteps.listed(self.match) if e.key == step.key), None)
        return deadline is not None and deadline <= self.now

    def reject(
        self,
        reason: str,
        line: str | None = None,
        *,
        penalised: bool = False,
        body: Body | None = None,
        move: bool = False,
    ) -> Decision:
        """Refuse the mail and tell the player why. ``move``: something in it was read as a
        move (a line of the game's grammar, a move the rules refuse): such a refusal is always
        answered, never held back by the repeat rule (:class:`ReplyLimiter`)."""
        written = ("\n".join(self.own) if self.own is not None else body.written) if body is not None else ""
        self.judge_.notice(
            self.session,
            self.row,
            self.limiter,
            self.now,
            "error",
            self.match,
            self.player,
            head=self.head,
            extra={
                "error": {"reason": reason, "line": cut(line) if line else None, "penalised": penalised},
                "quoted": quote(written.splitlines()),
                "truncated": body.truncated if body is not None else False,
                "arrived": exact_time(self.row.received_at, self.player.zone),
            },
            reason=reason,
            repeatable=not move,
        )
        log.info("inbound %s for %s/%s rejected: %s", self.row.id, self.match.key, self.player.key, reason)
        return Decision("rejected", None, reason)


def cut(line: str) -> str:
    return line if len(line) <= QUOTE_WIDTH else line[: QUOTE_WIDTH - 1] + "\u2026"


def quote(lines: list[str]) -> dict[str, Any]:
    """At most QUOTE_LINES lines, each cut to QUOTE_WIDTH, and how many were left out."""
    shown = [cut(line) for line in lines[:QUOTE_LINES]]
    return {"lines": shown, "more": max(0, len(lines) - QUOTE_LINES)}
