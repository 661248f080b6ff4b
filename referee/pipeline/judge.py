"""Judging: one stored inbound mail -> one decision (accepted, rejected, ignored).

The order of the checks is the order of trust:

0. bounces (:mod:`referee.pipeline.bounce_book`): a mail to one of the outbox's signed bounce
   addresses, or a delivery report, is recorded as a bounce (``ignored``, rule ``bounce``);
   a mail to a bounce address is never answered, whatever it is;
1. the RFC 3834 / loop guards, on the headers (never answered: ``ignored`` by the rule);
2. authentication, on the headers (:mod:`referee.mail.auth`): only a mail to a seat's
   signed reply address from its registered player is obeyed; other claims get a true
   answer to the registered address, strangers get nothing; with ``[mail]
   trusted_authserv_id``, a seat's mail also needs a pass of the trusted server; the
   organizer's mail to the organizer's command address, authenticated the same way, holds
   the organizer's commands (:mod:`referee.pipeline.organizer_mail`), and mail to that
   address from anyone else is ignored, never answered;
2a. a registered player's commands (HELP, STATUS, ...: :mod:`referee.pipeline.player_commands`),
   in a mail to the general address that passes the sender checks, or in a seat's mail whose
   every written line is a command (else it is a mail of moves);
2b. the per-sender rate limit (:class:`SenderLimiter`): past ``mails_per_sender_hour`` a mail
   is ignored (rule ``rate-limited``) unread and unanswered, and touches no match;
3. only then is the body read, a bounded prefix of it (:func:`referee.mail.parse.parse_body`),
   and its readings tried in order until one holds moves.

A mail that fails while being judged (a bug) is tried once more on its own; failing
twice, it is quarantined with the reason, and everything else goes on.
"""

from __future__ import annotations

import hashlib
import logging
from bisect import bisect_right, insort
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, or_, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from referee.pipeline import BATCH, batch_work
from referee.config import seat_role, silent_roles
from referee.games import GAMES
from referee.games.base import SEQUENTIAL, Game, NoMoves, ParseError, Parsed, State, Step, open_steps
from referee.mail import guards, tokens
from referee.mail.auth import Claim, authenticate, from_is_group
from referee.mail.identity import bounded, split_head
from referee.mail.parse import Body, Headers, parse_body, parse_headers, shown_text
from referee.mail.reply import Against, read_against
from referee.match import opensteps
from referee.match.book import MATCH_CONTEXT
from referee.pipeline.bounce_book import BounceBook
from referee.pipeline.ingest import TOO_LARGE
from referee.pipeline.organizer_mail import NOT_ORGANIZER, ORGANIZER, OrganizerMail
from referee.pipeline.player_commands import COMMANDS_RULE, PlayerCommands
from referee.pipeline.report import TickReport
from referee.store import rows as plain_rows
from referee.store.models import Event, Inbound, Match, Outbox, Player, Seat
from referee.timefmt import local_time

if TYPE_CHECKING:
    from referee.config import ServiceConfig
    from referee.match.book import MatchBook
    from referee.match.notices import Notices
    from referee.pipeline.clock import Clock
    from referee.store.db import Store

log = logging.getLogger("referee.judge")

MAX_ATTEMPTS = 2  # a mail that failed this often is quarantined
QUOTE_LINES = 40  # an error reply quotes at most this many lines of what was read...
QUOTE_WIDTH = 200  # ...each cut to this many characters
AGAINST_MAILS = 4  # our mails a reply is read against at most: the one it answers, then the latest
UNCHANGED_FORM = (
    "Your reply only quotes our mail: the form in it is just as we sent it, and a form left "
    "unchanged is never taken as a move (it shows an example or your current choice). To keep "
    "what you have sent so far, do nothing. To send a move, change the form where it stands in "
    "the quote, or write your lines above the quote, and send it again."
)
REPEAT_WINDOW = timedelta(days=7)  # the same text again within this time gets no second error
# Replies that are not receipts are limited per address (ReplyLimiter), in two budgets
# by whether the mail they answer is authenticated (True: a seat's own mail) or not
REPLY_KINDS = {True: ("error",), False: ("spoof", "unaddressed", "commands-general")}
THROTTLED = {True: "throttled", False: "throttled-notices"}  # the rule of a reply held back by its budget
REPEATED = {True: "repeated", False: "repeated-notice"}  # ... by the repeat rule
RATE_WINDOW = timedelta(hours=1)  # mails_per_sender_hour counts the mails of this long before each one
RATE_LIMITED = "rate-limited"  # the rule of a mail past its sender's limit


def body_digest(raw: bytes) -> str:
    """A digest of a mail's body bytes (line ends normalised), to spot the same text sent again."""
    _, body = split_head(raw)
    return hashlib.sha256(body[: 1 << 20].replace(b"\r\n", b"\n").strip()).hexdigest()


class ReplyLimiter:
    """Replies that are not receipts, per address, in two budgets that never mix:

    * **errors** answering a seat's authenticated mail: at most ``per_hour`` an hour;
    * **notices** caused by mail that is not authenticated (a forged sender, a mail to the
      general address): at most ``notices_per_hour`` an hour, a small budget of its own.

    Once a budget is spent, that kind of reply goes to the address no more until none has been
    held back for ``quiet``. Nothing an unauthenticated mail did (its notices, its throttling,
    its text) ever holds back the reply to a player's own mail.

    The *repeat rule*: the same text from the same sender, refused for the same reason within
    :data:`REPEAT_WINDOW`, gets no second reply. It stops loops with responders that send the
    same words every time without saying they are automated. It applies to mail that is not
    authenticated and to authenticated mail in which nothing was read as a move; a player's
    move that the rules refuse is always answered (the same ``RAISE 30`` refused out of turn,
    then as too much, gets both answers). Receipts for valid moves never pass through here."""

    def __init__(self, per_hour: int, quiet_minutes: int, notices_per_hour: int = 3):
        self.budget = {True: per_hour, False: notices_per_hour}  # authenticated? -> replies an hour
        self.quiet = timedelta(minutes=quiet_minutes)
        self._sent: dict[tuple[str, bool], int] = {}  # replies written in this (unflushed) batch
        self._throttled: set[tuple[int, bool]] = set()  # (player, authenticated?) throttled in this batch
        self._texts: set[tuple[str, str, str, bool]] = set()  # (sender, digest, reason, authenticated?) answered

    def suppress(
        self,
        session: Session,
        row: _Mail,
        player: Player,
        now: datetime,
        *,
        trusted: bool,
        reason: str,
        repeatable: bool = True,
    ) -> str | None:
        """Why no reply may go to ``player`` for ``row``, else None (and the reply is counted).

        ``trusted``: ``row`` is a seat's authenticated mail (the reply is an error), else a
        notice about a mail that is not. ``reason``: why ``row`` is refused, as recorded in its
        note. ``repeatable``: the repeat rule may hold the reply back (False for a refused move).
        A suppressed reply is recorded on ``row`` (its rule, and the player it was for), which
        is what the quiet period of later batches looks at."""
        note = _clean(reason)
        if row.sender and row.body_digest and repeatable:
            key = (row.sender, row.body_digest, note, trusted)
            repeated = key in self._texts or session.scalar(
                select(Inbound.id)
                .where(
                    Inbound.sender == row.sender,
                    Inbound.body_digest == row.body_digest,
                    Inbound.note == note,
                    Inbound.id != row.id,
                    Inbound.status == "rejected",
                    Inbound.received_at >= row.received_at - REPEAT_WINDOW,
                    _answered_as(trusted),
                )
                .limit(1)
            )
            if repeated:
                return REPEATED[trusted]
        throttled = (player.id, trusted) in self._throttled or session.scalar(
            select(Inbound.id)
            .where(
                Inbound.player_id == player.id,
                Inbound.rule == THROTTLED[trusted],
                Inbound.processed_at >= now - self.quiet,
            )
            .limit(1)
        )
        address = player.email.lower()
        if not throttled:
            sent = self._sent.get((address, trusted), 0) + session.scalar(
                select(func.count())
                .select_from(Outbox)
                .where(
                    Outbox.to_addr == address,
                    Outbox.kind.in_(REPLY_KINDS[trusted]),
                    Outbox.created_at > now - RATE_WINDOW,
                )
            )
            throttled = sent >= self.budget[trusted]
        if throttled:
            self._throttled.add((player.id, trusted))
            return THROTTLED[trusted]
        self._sent[(address, trusted)] = self._sent.get((address, trusted), 0) + 1
        if row.sender and row.body_digest:
            self._texts.add((row.sender, row.body_digest, note, trusted))
        return None


def _answered_as(trusted: bool) -> Any:
    """An earlier refused mail of the same class as the one judged: authenticated mail is held
    back only by authenticated mail (rows that got an error, or were held back as such)."""
    rules = (REPEATED[trusted], THROTTLED[trusted])
    if trusted:
        return or_(Inbound.rule.is_(None), Inbound.rule.in_(rules))
    return Inbound.rule.is_not(None) & Inbound.rule.not_in((REPEATED[True], THROTTLED[True]))


class SenderLimiter:
    """Mails judged per sender: at most ``per_hour`` within the hour before each one's arrival;
    beyond it, a mail is ignored (rule ``rate-limited``) before its body is read, and never
    answered. This bounds the work one sender can cause, whatever it sends.

    Counted are the mails judged: past the RFC 3834 guards and not limited themselves (in the
    database, the decided rows with a ``body_digest``), those of this batch and those decided
    before. So duplicates, automated and looping mail (our own mail too), bounces and mail
    that was itself limited are not counted. A sender's mails that speak for a seat (to its
    reply address, from its player's registered address, authenticated) are counted apart
    from its other mails (rows with a match and a player), so mail forged in a player's name
    to an address that does not carry the player's token cannot use up the allowance of the
    player's own moves (the organizer's authenticated mails, rule ``organizer``, are counted
    apart the same way). Mail without a From address is not limited: it is never obeyed, and
    the notices it may cause pass the :class:`ReplyLimiter`."""

    def __init__(self, per_hour: int):
        self.per_hour = per_hour
        self._seen: dict[tuple[str, bool], list[datetime]] = {}  # (sender, seat mail?) -> arrivals, sorted
        self._logged: set[tuple[str, bool]] = set()  # limited senders already logged in this batch

    def load(self, session: Session, rows: list[_Mail]) -> SenderLimiter:
        """The decided mails of the batch's senders that may count against its mails (one query
        per 500 senders, on the index of sender and body digest)."""
        senders = sorted({row.sender for row in rows if row.sender})
        if not senders:
            return self
        start = min(row.received_at for row in rows) - RATE_WINDOW
        end = max(row.received_at for row in rows)
        for at in range(0, len(senders), 500):
            found = session.execute(
                select(Inbound.sender, Inbound.received_at, Inbound.match_id, Inbound.player_id, Inbound.rule).where(
                    Inbound.sender.in_(senders[at : at + 500]),
                    Inbound.body_digest.is_not(None),
                    Inbound.received_at > start,
                    Inbound.received_at <= end,
                )
            )
            for sender, received_at, match_id, player_id, rule in found:
                # a seat's mail, or the organizer's (its commands): counted apart
                key = (sender, (match_id is not None and player_id is not None) or rule == ORGANIZER)
                self._seen.setdefault(key, []).append(received_at)
        for arrivals in self._seen.values():
            arrivals.sort()
        return self

    def admit(self, sender: str | None, seat: bool, at: datetime) -> bool:
        """Is the mail from *sender* that arrived *at* within the limit? If so it is counted."""
        if not sender:
            return True
        arrivals = self._seen.setdefault((sender, seat), [])
        if bisect_right(arrivals, at) - bisect_right(arrivals, at - RATE_WINDOW) >= self.per_hour:
            return False
        insort(arrivals, at)
        return True

    def first_refusal(self, sender: str, seat: bool) -> bool:
        """True the first time in this batch that *sender*'s mail is limited (logged once)."""
        key = (sender, seat)
        if key in self._logged:
            return False
        self._logged.add(key)
        return True


@dataclass
class Decision:
    status: str  # accepted | rejected | ignored
    rule: str | None = None
    note: str = ""


class _Mail:
    """A stored inbound mail being judged: what the judge reads of its row, and what it
    decides (written back for the whole batch in one statement: :meth:`Judge._write`)."""

    __slots__ = (
        "id",
        "source",
        "raw",
        "received_at",
        "attempts",
        "status",
        "rule",
        "note",
        "sender",
        "body_digest",
        "match_id",
        "player_id",
        "processed_at",
    )
    DECIDED = ("status", "rule", "note", "sender", "body_digest", "match_id", "player_id", "processed_at")
    READ = (
        Inbound.id,
        Inbound.source,
        Inbound.raw,
        Inbound.received_at,
        Inbound.attempts,
        *(getattr(Inbound, name) for name in DECIDED),
    )

    def __init__(self, *values: Any) -> None:
        for name, value in zip(self.__slots__, values, strict=True):
            setattr(self, name, value)

    def decided(self) -> dict[str, Any]:
        return {"w_id": self.id, **{name: getattr(self, name) for name in self.DECIDED}}


_DECIDE = (
    Inbound.__table__.update()
    .where(Inbound.__table__.c.id == bindparam("w_id"), Inbound.__table__.c.status == "pending")
    .values({name: bindparam(name) for name in _Mail.DECIDED})
)


@dataclass(frozen=True)
class _Sent:
    """A mail of ours as a reply is read against it: its bytes and the form it carried."""

    message: bytes
    form: str | None


@dataclass
class _Batch:
    # our Message-ID -> (outbox id, match id, step key, step title) of the mail it is
    answered: dict[str, tuple[int, int | None, str, str | None]] = field(default_factory=dict)
    # outbox id -> (message, form) of those mails: what a reply is read against first
    sent: dict[int, Any] = field(default_factory=dict)
    matches: list[Match] = field(default_factory=list)  # held so the session keeps them
    senders: SenderLimiter | None = None  # mails per sender and hour (None: not limited)


class Judge:
    def __init__(self, store: Store, config: ServiceConfig, book: MatchBook, notices: Notices, clock: Clock):
        self.store = store
        self.config = config
        self.book = book
        self.notices = notices
        self.clock = clock
        self.own_addresses = (self.config.mail.address,)
        self.bounces = BounceBook(config, notices)

    # ------------------------------------------------------------------ batches

    def process(self, now: datetime, *, before: datetime | None = None) -> TickReport:
        """Judge pending mail that arrived by ``now`` (and strictly before ``before``), in arrival order.

        A batch is one transaction that sends its writes together at commit. A mail whose
        judging fails (a bug) rolls the batch back; it is counted, and the batch is redone:
        a mail that failed once is judged alone, and quarantined when it fails again.
        """
        report = TickReport()
        while True:
            batch = TickReport()
            failing: int | None = None  # the id of the mail in hand
            try:
                with batch_work(), self.store.unit_of_work(autoflush=False) as session:
                    query = select(Inbound.id).where(Inbound.status == "pending", Inbound.received_at <= now)
                    if before is not None:
                        query = query.where(Inbound.received_at < before)
                    found = session.execute(
                        query.with_only_columns(*_Mail.READ).order_by(Inbound.received_at, Inbound.id).limit(BATCH)
                    ).all()
                    if not found:
                        return report
                    rows = [_Mail(*values) for values in found]
                    # in arrival order up to a mail that failed before, which is then judged alone
                    cut = next((i for i, row in enumerate(rows) if row.attempts), len(rows))
                    rows = rows[: cut or 1]
                    heads = [parse_headers(row.raw) for row in rows]
                    context = self._load(session, heads)
                    context.senders = SenderLimiter(self.config.mails_per_sender_hour).load(session, rows)
                    limiter = ReplyLimiter(
                        self.config.replies_per_hour, self.config.quiet_minutes, self.config.notices_per_hour
                    )
                    for row, head in zip(rows, heads, strict=True):
                        failing = row.id
                        decision = self._judge(session, row, head, now, context, limiter)
                        self._finish(row, decision, now)
                        setattr(batch, decision.status, getattr(batch, decision.status) + 1)
                    failing = None
                    self._write(session, rows)
            except (StaleDataError, OperationalError):
                raise  # another process got there first, or the database is away: roll back, retry next tick
            except Exception as exc:  # a bug must never lose the mail or stop the service
                if failing is None:
                    raise
                report.failed += self._failed(failing, exc, now)
                continue
            report.merge(batch)

    @staticmethod
    def _write(session: Session, rows: list[_Mail]) -> None:
        """The batch's decisions, one UPDATE for all its mails; each must still be pending
        (else another process judged it meanwhile: the batch is rolled back)."""
        matched = session.connection().execute(_DECIDE, [row.decided() for row in rows]).rowcount
        if matched != len(rows):
            raise StaleDataError(f"inbound: {len(rows) - matched} of {len(rows)} mails were judged by another process")

    def _failed(self, row_id: int, exc: Exception, now: datetime) -> int:
        """Count a failed attempt; quarantine the mail at the second. Returns 1 if quarantined."""
        with self.store.unit_of_work() as session:
            row = session.get(Inbound, row_id)
            row.attempts += 1
            reason = f"internal error: {type(exc).__name__}: {exc}"
            if row.attempts >= MAX_ATTEMPTS:
                log.error(
                    "inbound %s (%s): failed %d times, quarantined (`referee quarantine` lists it): %s",
                    row.id,
                    row.source,
                    row.attempts,
                    reason,
                    exc_info=exc,
                )
                row.status, row.rule, row.processed_at = "quarantined", "internal-error", now
                row.note = _clean(reason)
                return 1
            log.warning(
                "inbound %s (%s): failed (%s); it will be tried once more on its own",
                row.id,
                row.source,
                reason,
                exc_info=exc,
            )
            row.note = _clean(reason)
            return 0

    def _load(self, session: Session, heads: list[Headers]) -> _Batch:
        """What a batch needs in a few queries instead of a few per mail: the seats (with their
        matches) the mail speaks for, which authentication then finds in the session, and our
        mails they reply to, for the late-reply check and the quoted form."""
        local, domain = self.config.mail.local, self.config.mail.domain
        seat_ids, refs = set(), set()
        for head in heads:
            for token in tokens.tokens_from_addresses(head.to_addrs, local, domain):
                seat_ids.add(tokens.split_token(token)[0])
            if head.in_reply_to and len(head.in_reply_to) <= 400:
                refs.add(head.in_reply_to)
        batch = _Batch()
        if seat_ids:
            # The matches with their seats and players; the seats are then in the session too.
            # (Not one Seat query with the match graph joined in: SQLAlchemy 2.1.9's compiled
            # loaders crashed the interpreter on that shape with a few hundred seats.)
            match_ids = set(session.scalars(select(Seat.match_id).where(Seat.id.in_(seat_ids))))
            batch.matches = list(
                session.scalars(select(Match).where(Match.id.in_(match_ids)).options(*MATCH_CONTEXT)).all()
            )
            self.book.preload_balances(session, batch.matches)
        ordered = sorted(refs)
        for start in range(0, len(ordered), 500):
            found = session.execute(
                select(
                    Outbox.message_id,
                    Outbox.id,
                    Outbox.match_id,
                    Outbox.step_key,
                    Outbox.step_title,
                    Outbox.message,
                    Outbox.form,
                ).where(Outbox.message_id.in_(ordered[start : start + 500]), Outbox.step_key.is_not(None))
            )
            for message_id, oid, match_id, step, title, message, form in found:
                batch.answered[message_id] = (oid, match_id, step, title)
                batch.sent[oid] = _Sent(message, form)
        return batch

    # ------------------------------------------------------------------ one mail

    def _judge(
        self, session: Session, row: _Mail, head: Headers, now: datetime, batch: _Batch, limiter: ReplyLimiter
    ) -> Decision:
        bounced = self.bounces.judge(session, row, head, now)  # before the guards, which would ignore it
        why = guards.automated_reason(head.message, self.own_addresses, self.notices.loop_value)
        if bounced is not None:  # recorded, or to a bounce address: never answered
            row.match_id, row.player_id = bounced.match_id, bounced.player_id
            return Decision("ignored", bounced.rule or why or "bounce-address", bounced.note)
        if why:
            return Decision("ignored", why, f"{why}: automated or looping mail, never answered")
        row.sender = bounded(head.from_addr, 320) or None
        claim = authenticate(
            head,
            secret=self.config.secret,
            local=self.config.mail.local,
            domain=self.config.mail.domain,
            find_seat=lambda seat_id: session.get(Seat, seat_id),
            trusted_authserv_id=self.config.mail.trusted_authserv_id,
            organizer=self.config.mail.organizer,
        )
        # before any byte of the body is read, and before anything of a match is touched
        trusted = claim.kind in ("seat", ORGANIZER)  # counted apart from the sender's other mail
        if batch.senders is not None and not batch.senders.admit(row.sender, trusted, row.received_at):
            return self._rate_limited(row, claim, batch.senders)
        row.body_digest = body_digest(row.raw)
        if claim.kind == NOT_ORGANIZER:
            return self._not_organizer(row, head, claim)
        if claim.kind == ORGANIZER:  # the organizer's commands (docs/organizer-mail.md)
            status, note = OrganizerMail(self, session, row, head, now).judge()
            return Decision(status, ORGANIZER, note)
        if claim.kind != "seat":
            return self._unauthenticated(session, row, head, claim, now, limiter)
        return _SeatMail(self, session, row, head, claim.seat, now, batch, limiter).judge()

    def _not_organizer(self, row: _Mail, head: Headers, claim: Claim) -> Decision:
        """A mail to the organizer's command address that is not the organizer's: never obeyed,
        never answered (its From may be forged), whatever else it is addressed to; logged."""
        if claim.dmarc_failed:
            why = f"From {head.from_addr or '(none)'}, but the receiving server recorded a DMARC failure"
        elif claim.unconfirmed:
            why = f"From {head.from_addr or '(none)'}, not confirmed by the trusted receiving server"
        else:
            why = f"From {bounded(claim.found, 200) or '(none)'}, not the organizer's address"
        log.warning("inbound %s: to the organizer's command address, %s; ignored, not answered", row.id, why)
        return Decision(
            "ignored", NOT_ORGANIZER, f"to the organizer's command address, {why}: never obeyed, not answered"
        )

    def _rate_limited(self, row: _Mail, claim: Claim, senders: SenderLimiter) -> Decision:
        """Past ``mails_per_sender_hour``: ignored unread, never answered (an answer to a flood is
        more mail, and the From may be forged), nothing of a match touched."""
        limit = self.config.mails_per_sender_hour
        seat = claim.kind == "seat"
        if seat:
            row.match_id, row.player_id = claim.seat.match_id, claim.seat.player_id
        assert row.sender is not None  # admit() never limits mail without a sender
        row.rule = RATE_LIMITED  # also over a rule ingest gave it (too-large): this is what decided
        if senders.first_refusal(row.sender, seat):
            log.warning(
                "inbound %s: more than %d mails from %s%s within an hour; ignored unread, not answered "
                "(and the next ones from this sender in this batch, logged at DEBUG)",
                row.id,
                limit,
                row.sender,
                " for their seat" if seat else "",
            )
        else:
            log.debug("inbound %s from %s: rate-limited", row.id, row.sender)
        return Decision(
            "ignored",
            RATE_LIMITED,
            f"rate-limited: more than {limit} mails from {row.sender} within the hour before this one; "
            "not read, not answered",
        )

    def _unauthenticated(
        self, session: Session, row: _Mail, head: Headers, claim: Claim, now: datetime, limiter: ReplyLimiter
    ) -> Decision:
        """Never obey, never answer a stranger; tell a registered player what went wrong."""
        if claim.kind == "spoofed":
            seat = claim.seat
            row.match_id = seat.match_id
            found = claim.found
            if claim.dmarc_failed:
                what, note = "DMARC failure recorded", "the receiving server recorded a DMARC failure for the sender"
            elif claim.unconfirmed:
                trusted = self.config.mail.trusted_authserv_id
                server = trusted if isinstance(trusted, str) else " or ".join(trusted or ())
                what = f"From {head.from_addr} not confirmed by {server}"
                note = (
                    f"the trusted receiving server ({server}) did not confirm the sender: "
                    "no DMARC, DKIM or SPF pass for the From domain in its Authentication-Results"
                )
            else:
                what = f"From {found or '(none)'} is not the registered address"
                note = f"sender {found or '(none)'} is not the seat's registered address"
            log.warning("inbound %s: %s for %s in %s; ignored", row.id, what, seat.player.key, seat.match.key)
            rule = "sender-unconfirmed" if claim.unconfirmed else "spoofed"
            self._notice(
                session,
                row,
                limiter,
                now,
                "spoof",
                seat.match,
                seat.player,
                extra={
                    "sender": found if head.from_count and not from_is_group(head) else "",
                    "from_line": found,
                    "dmarc_failed": claim.dmarc_failed,
                    "unconfirmed": claim.unconfirmed,
                    "received": row.received_at,
                },
                reason=note,
            )
            return Decision("rejected", rule, note)
        players = []
        if head.from_addr and head.from_count == 1:
            players = session.scalars(select(Player).where(Player.email == head.from_addr)).all()
        rule = "damaged-address" if claim.kind == "damaged" else "general-address"
        if not players:
            log.info("inbound %s: %s from unknown sender %r; not answered", row.id, rule, head.from_addr[:100])
            return Decision("ignored", "unknown-sender", f"{rule}; unknown sender, not answered")
        player = players[0]
        if claim.kind == "general":  # a registered player's commands (referee.pipeline.player_commands)
            commands = PlayerCommands.general(self, session, row, head, now, list(players), limiter)
            if commands is not None:
                return Decision(*commands)
        seats = session.scalars(
            select(Seat).join(Match).where(Seat.player_id.in_([p.id for p in players]), Match.status == "running")
        ).all()
        running = []
        for seat in seats:
            token = tokens.make_token(self.config.secret, seat.id, seat.match.key, seat.player.key)
            address = tokens.reply_address(self.config.mail.local, self.config.mail.domain, token)
            running.append({"id": seat.match.key, "title": GAMES[seat.match.game].title, "reply_to": address})
        # match=None: this answer must carry no match's reply address in its headers, or a reply
        # to it could land in the wrong match of a player who plays several.
        note = "sent to a damaged reply address" if claim.kind == "damaged" else "sent to the general address"
        self._notice(
            session,
            row,
            limiter,
            now,
            "unaddressed",
            None,
            player,
            head=head,
            extra={"running": running, "damaged": claim.address if claim.kind == "damaged" else None},
            reason=note,
        )
        return Decision("rejected", rule, note)

    def _notice(
        self,
        session: Session,
        row: _Mail,
        limiter: ReplyLimiter,
        now: datetime,
        kind: str,
        match: Match | None,
        player: Player,
        *,
        head: Headers | None = None,
        extra: dict[str, Any],
        reason: str,
        repeatable: bool = True,
    ) -> bool:
        """A reply that is not a receipt, unless the :class:`ReplyLimiter` holds it back (an
        ``error`` answers a seat's authenticated mail; other kinds are notices about mail that
        is not authenticated). True if written."""
        if player.email is None:  # a player without an address is never mailed
            return False
        trusted = kind == "error"
        why = limiter.suppress(session, row, player, now, trusted=trusted, reason=reason, repeatable=repeatable)
        if why:
            log.warning(
                "inbound %s: no %s reply to %s (%s): %s",
                row.id,
                kind,
                player.email,
                why,
                "the same text was answered before for the same reason"
                if why in REPEATED.values()
                else "too many replies to this address" + ("" if trusted else " about mail not authenticated"),
            )
            row.rule = why
            row.player_id = row.player_id or player.id  # whom the reply was for: the quiet period's key
            return False
        self.notices.mail_player(
            session,
            kind,
            match,
            player,
            dedupe=f"{kind}:{row.id}",
            at=now,
            reply_to_mail=head,
            extra=extra,
            inbound_id=row.id,
        )
        return True

    @staticmethod
    def _finish(row: _Mail, decision: Decision, now: datetime) -> None:
        row.status, row.processed_at = decision.status, now
        row.rule = row.rule or decision.rule  # a throttled reply keeps "throttled"
        row.note = _clean(decision.note)


class _SeatMail:
    """An authenticated mail for one seat: judged against its match."""

    def __init__(
        self,
        judge: Judge,
        session: Session,
        row: _Mail,
        head: Headers,
        seat: Seat,
        now: datetime,
        batch: _Batch,
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

    def judge(self) -> Decision:
        match, session = self.match, self.session
        # Timeliness is judged by arrival: close every deadline that passed before this mail came.
        if self.judge_.clock.close_until(session, match, self.row.received_at):
            plain_rows.flush(session)  # the late-reply check below reads the closing events
        body: Body | None = None
        if self.row.rule != TOO_LARGE:  # a mail of the player's commands (referee.pipeline.player_commands)
            body = parse_body(self.row.raw, head=self.head)
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
        body = body or parse_body(self.row.raw, head=self.head)
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
            extra={"ignored": _quote(parsed.ignored), "truncated": body.truncated, "sealed": sealed},
        )
        # the others hear of each new step (or the end); the mover's receipt above says what happens now
        self.notices.announce_step(session, match, self.row.received_at, since=steps_before, mover=self.player.key)
        return Decision("accepted", None, f"{len(logged)} move(s) for {match.key}")

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

    def _sent_texts(self, ids: list[int]) -> dict[int, _Sent]:
        """Our mails ``ids`` (their message and form), by outbox id, in one query."""
        if not ids:
            return {}
        query = select(Outbox.id, Outbox.message, Outbox.form).where(Outbox.id.in_(ids))
        return {row.id: _Sent(row.message, row.form) for row in self.session.execute(query)}

    @staticmethod
    def _read_against(body: Body, sent: _Sent | None, *, linked: bool) -> Against | None:
        """The reply read against our mail ``sent`` (:func:`read_against`); None without it."""
        text = shown_text(sent.message) if sent is not None else ""
        return read_against(body.shown, text, sent.form, linked=linked) if sent is not None and text else None

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
        if self.player.key in step.players:
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
        return (
            f"Your mail answers our mail about {title}, which closed at its deadline, "
            f"{local_time(closed.at, self.player.zone)}, before your mail arrived; so nothing in it was recorded. "
            f"{now_open.title if now_open else 'The next step'} is open now: use the form below."
        )

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
        self.judge_._notice(
            self.session,
            self.row,
            self.limiter,
            self.now,
            "error",
            self.match,
            self.player,
            head=self.head,
            extra={
                "error": {"reason": reason, "line": _cut(line) if line else None, "penalised": penalised},
                "quoted": _quote(written.splitlines()),
                "truncated": body.truncated if body is not None else False,
            },
            reason=reason,
            repeatable=not move,
        )
        log.info("inbound %s for %s/%s rejected: %s", self.row.id, self.match.key, self.player.key, reason)
        return Decision("rejected", None, reason)


def _cut(line: str) -> str:
    return line if len(line) <= QUOTE_WIDTH else line[: QUOTE_WIDTH - 1] + "\u2026"


def _quote(lines: list[str]) -> dict[str, Any]:
    """At most QUOTE_LINES lines, each cut to QUOTE_WIDTH, and how many were left out."""
    shown = [_cut(line) for line in lines[:QUOTE_LINES]]
    return {"lines": shown, "more": max(0, len(lines) - QUOTE_LINES)}


def _clean(note: str) -> str:
    """A note fit for any text column (see :func:`bounded`)."""
    return bounded(note, 2000) or ""


def before_our_mail(text: str, name: str) -> str:
    """*text* up to where a copy of one of our mails to this player begins: every mail of
    ours opens with ``Dear <name>,``. Clients quote or forward it below the reply in ways
    no rule can list (unprefixed, under a header block in any language); this line is ours."""
    marker = f"dear {' '.join(name.split()).lower()},"
    at = 0
    for line in text.split("\n"):
        if " ".join(line.split()).lower() == marker:
            return text[:at].rstrip("\n")
        at += len(line) + 1
    return text
