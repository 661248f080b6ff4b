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

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from referee.pipeline import BATCH, batch_work
from referee.games import GAMES
from referee.mail import guards, tokens
from referee.mail.auth import Claim, authenticate, from_is_group
from referee.mail.identity import bounded
from referee.mail.parse import Headers, parse_headers
from referee.match.book import MATCH_CONTEXT
from referee.match.press import PressError
from referee.pipeline.bounce_book import BounceBook
from referee.pipeline.organizer_mail import NOT_ORGANIZER, ORGANIZER, OrganizerMail
from referee.pipeline.player_commands import PlayerCommands
from referee.pipeline.prereading import Prereading
from referee.pipeline.report import TickReport
from referee.pipeline.limits import RATE_LIMITED, REPEATED, ReplyLimiter, SenderLimiter, body_digest
from referee.pipeline.seat_mail import SENT_COLUMNS, Batch, SeatMail, Sent
from referee.pipeline.verdict import DECIDE, Decision, MailRow, clean_note
from referee.store.models import Inbound, Match, Outbox, Player, Seat

if TYPE_CHECKING:
    from referee.config import ServiceConfig
    from referee.match.book import MatchBook
    from referee.match.notices import Notices
    from referee.pipeline.clock import Clock
    from referee.store.db import Store

log = logging.getLogger("referee.judge")


MAX_ATTEMPTS = 2  # a mail that failed this often is quarantined


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

        The batch's answers (receipts, errors) are made together, with the press's workers
        (:meth:`~referee.match.notices.Notices.defer`). One that cannot be made rolls the
        batch back too; it is redone with each answer made as it is written, so that the
        mail whose answer fails is the one that fails.
        """
        report = TickReport()
        inline = False  # True: the batch is redone, each answer made as it is written
        while True:
            batch = TickReport()
            failing: int | None = None  # the id of the mail in hand
            try:
                with batch_work(), self.store.unit_of_work(autoflush=False) as session:
                    query = select(Inbound.id).where(Inbound.status == "pending", Inbound.received_at <= now)
                    if before is not None:
                        query = query.where(Inbound.received_at < before)
                    found = session.execute(
                        query.with_only_columns(*MailRow.READ).order_by(Inbound.received_at, Inbound.id).limit(BATCH)
                    ).all()
                    if not found:
                        return report
                    rows = [MailRow(*values) for values in found]
                    # in arrival order up to a mail that failed before, which is then judged alone
                    cut = next((i for i, row in enumerate(rows) if row.attempts), len(rows))
                    rows = rows[: cut or 1]
                    heads = [parse_headers(row.raw) for row in rows]
                    mail = self.config.mail
                    context = self._load(session, heads)
                    context.senders = SenderLimiter(self.config.mails_per_sender_hour).load(session, rows)
                    limiter = ReplyLimiter(
                        self.config.replies_per_hour, self.config.quiet_minutes, self.config.notices_per_hour
                    )
                    if not inline:
                        self.notices.defer(session, len(rows))  # the answers, made together
                        # the replies read by the press's workers while the batch is judged
                        context.readings = Prereading(
                            self.notices.press,
                            rows,
                            heads,
                            answered=context.answered,
                            sent=context.sent,
                            matches=context.matches,
                            senders=context.senders,
                            local=mail.local,
                            domain=mail.domain,
                        )
                    for row, head in zip(rows, heads, strict=True):
                        failing = row.id
                        decision = self._judge(session, row, head, now, context, limiter)
                        self._finish(row, decision, now)
                        setattr(batch, decision.status, getattr(batch, decision.status) + 1)
                    failing = None
                    self.notices.made(session)
                    self._write(session, rows)
            except (StaleDataError, OperationalError):
                raise  # another process got there first, or the database is away: roll back, retry next tick
            except PressError as exc:  # an answer of the batch, made together: whose is found inline
                if inline:
                    raise
                log.warning("an answer of a batch of mails could not be made (%s): judged again, one by one", exc)
                inline = True
                continue
            except Exception as exc:  # a bug must never lose the mail or stop the service
                if failing is None:
                    raise
                report.failed += self._failed(failing, exc, now)
                continue
            report.merge(batch)
            inline = False
            if len(found) < BATCH and len(rows) == len(found):
                return report  # the batch held every mail that was waiting: no query for an empty one

    @staticmethod
    def _write(session: Session, rows: list[MailRow]) -> None:
        """The batch's decisions, one UPDATE for all its mails; each must still be pending
        (else another process judged it meanwhile: the batch is rolled back)."""
        matched = session.connection().execute(DECIDE, [row.decided() for row in rows]).rowcount
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
                row.note = clean_note(reason)
                return 1
            log.warning(
                "inbound %s (%s): failed (%s); it will be tried once more on its own",
                row.id,
                row.source,
                reason,
                exc_info=exc,
            )
            row.note = clean_note(reason)
            return 0

    def _load(self, session: Session, heads: list[Headers]) -> Batch:
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
        batch = Batch()
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
                    Outbox.message_id, Outbox.id, Outbox.match_id, Outbox.step_key, Outbox.step_title, *SENT_COLUMNS
                ).where(Outbox.message_id.in_(ordered[start : start + 500]), Outbox.step_key.is_not(None))
            )
            for message_id, oid, match_id, step, title, shown, message, form in found:
                batch.answered[message_id] = (oid, match_id, step, title)
                batch.sent[oid] = Sent.of(shown, message, form)
        return batch

    # ------------------------------------------------------------------ one mail

    def _judge(
        self, session: Session, row: MailRow, head: Headers, now: datetime, batch: Batch, limiter: ReplyLimiter
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
        return SeatMail(self, session, row, head, claim.seat, now, batch, limiter).judge()

    def _not_organizer(self, row: MailRow, head: Headers, claim: Claim) -> Decision:
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

    def _rate_limited(self, row: MailRow, claim: Claim, senders: SenderLimiter) -> Decision:
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
        self, session: Session, row: MailRow, head: Headers, claim: Claim, now: datetime, limiter: ReplyLimiter
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
            self.notice(
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
        self.notice(
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

    def notice(
        self,
        session: Session,
        row: MailRow,
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
    def _finish(row: MailRow, decision: Decision, now: datetime) -> None:
        row.status, row.processed_at = decision.status, now
        row.rule = row.rule or decision.rule  # a throttled reply keeps "throttled"
        row.note = clean_note(decision.note)
