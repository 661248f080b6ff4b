"""The bounds on what one sender's mail may cause: replies that are not receipts, per address
and budget (:class:`ReplyLimiter`: throttled, or held back as a repeat of the same text), and
mails judged per sender and hour (:class:`SenderLimiter`: past the limit a mail is ignored
unread)."""

from __future__ import annotations

import hashlib
import logging
from bisect import bisect_right, insort
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from referee.mail.identity import split_head
from referee.pipeline.organizer_mail import ORGANIZER
from referee.pipeline.verdict import REPEAT_WINDOW, MailRow, clean_note
from referee.store.models import Inbound, Outbox, Player

if TYPE_CHECKING:
    pass

log = logging.getLogger("referee.judge")

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
        row: MailRow,
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
        note = clean_note(reason)
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
                    answered_as(trusted),
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


def answered_as(trusted: bool) -> Any:
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

    def load(self, session: Session, rows: list[MailRow]) -> SenderLimiter:
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

    def trial(self) -> SenderLimiter:
        """A copy that counts apart, to try a batch's mails before the judge counts them
        (:mod:`referee.pipeline.prereading`)."""
        copy = SenderLimiter(self.per_hour)
        copy._seen = {key: list(arrivals) for key, arrivals in self._seen.items()}
        return copy

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
