"""A batch's replies read ahead by the press's workers while the judge works.

Most of a reply's cost to the judge is reading it: its body (:func:`parse_body`), then
the player's lines told apart from the copy of the mail of ours it answers
(:func:`read_against`). Neither reads anything but the mail's bytes and the text of our
mail, so a worker of the press (:meth:`referee.match.press.Press.jobs`) can do both
beside the judge: at the start of a batch each reply that looks like a seat's answer to
one of our mails about its match (its To names a seat, its one From is that seat's
player's address, its In-Reply-To is our mail about that seat's match) is handed out,
and :class:`SeatMail <referee.pipeline.seat_mail.SeatMail>` takes the worker's reading
if it has come, else reads the mail itself, as without workers. Either way the reading
is the same: the judge still authenticates the mail first and decides everything; a
reading of a mail that is not obeyed is dropped unused. A mail the per-sender limit
(:class:`~referee.pipeline.limits.SenderLimiter`) will refuse unread is not read ahead
either: each of the batch's mails is tried against a copy of the limit, counted as the
judge counts a seat's mail whatever it turns out to be (so the copy refuses no later
than the judge does). The work a stranger can cause is the bounded reading of a mail
that names a player's address and one of our Message-IDs, on the worker's core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from referee.mail import tokens
from referee.mail.identity import bounded
from referee.mail.parse import Body, parse_body
from referee.mail.reply import Against, read_against
from referee.match.press import Job, JobBatch

if TYPE_CHECKING:
    from referee.mail.parse import Headers
    from referee.match.press import Press
    from referee.pipeline.limits import SenderLimiter
    from referee.store.models import Match, Seat
    from referee.pipeline.verdict import MailRow


@dataclass(frozen=True, slots=True)
class FirstReading:
    """A reply's body, and the reply read against our mail ``outbox_id`` (None: it holds
    no copy of that mail)."""

    outbox_id: int
    body: Body
    against: Against | None


def against_ours(body: Body, shown: str | None, form: str | None, *, linked: bool) -> Against | None:
    """The reply ``body`` read against a mail of ours (its shown text and form:
    :func:`read_against`); None when either has no text. The one reading the judge and the
    workers make alike."""
    if not shown or not body.shown.strip():
        return None
    return read_against(body.shown, shown, form, linked=linked)


def first_reading(raw: bytes, outbox_id: int, shown: str, form: str | None) -> FirstReading:
    """A worker's job: the body of the mail ``raw``, read against our mail ``outbox_id``
    (its shown text and form), which its In-Reply-To names: what :class:`SeatMail` reads
    first."""
    body = parse_body(raw)
    return FirstReading(outbox_id, body, against_ours(body, shown, form, linked=True))


class Prereading:
    """The first readings of one batch's replies, by the workers (see the module)."""

    def __init__(
        self,
        press: Press,
        rows: list[MailRow],
        heads: list[Headers],
        *,
        answered: dict[str, tuple[int, int | None, str, str | None]],
        sent: dict[int, Any],
        matches: list[Match],
        senders: SenderLimiter | None,
        local: str,
        domain: str,
    ):
        """``answered``, ``sent``, ``matches``: what the judge loaded for the batch (its
        :class:`~referee.pipeline.seat_mail.Batch`): our mails the replies answer, by
        Message-ID, their texts (:class:`~referee.pipeline.seat_mail.Sent`), by outbox id,
        and the matches of the seats the replies are addressed to, with their seats;
        ``senders``: the batch's per-sender limit (None: none)."""
        self.index: dict[int, int] = {}  # inbound id -> its job's index
        from referee.pipeline.ingest import TOO_LARGE  # not at the top: a worker imports this module, light

        jobs: list[Job] = []
        if press._ready():
            seats = {seat.id: seat for match in matches for seat in match.seats}
            trial = senders.trial() if senders is not None else None
            for row, head in zip(rows, heads, strict=True):
                # every mail of a sender counted as a seat's: the judge counts no more of them
                if trial is not None and not trial.admit(bounded(head.from_addr, 320) or None, True, row.received_at):
                    continue  # the judge will refuse it unread
                outbox_id = None if row.rule == TOO_LARGE else self._answered(head, answered, seats, local, domain)
                if outbox_id is not None and outbox_id in sent:
                    self.index[row.id] = len(jobs)
                    ours = sent[outbox_id]
                    jobs.append(Job(first_reading, (bytes(row.raw), outbox_id, ours.shown, ours.form)))
        self.jobs: JobBatch = press.jobs(jobs)

    @staticmethod
    def _answered(
        head: Headers,
        answered: dict[str, tuple[int, int | None, str, str | None]],
        seats: dict[int, Seat],
        local: str,
        domain: str,
    ) -> int | None:
        """The outbox id of our mail this one answers, when it looks like that seat's answer
        (not yet authenticated: the judge does that); else None."""
        entry = answered.get(head.in_reply_to or "")
        if entry is None or head.from_count != 1:
            return None
        for token in tokens.tokens_from_addresses(head.to_addrs, local, domain):
            seat = seats.get(tokens.split_token(token)[0])
            if seat is not None and seat.match_id == entry[1]:
                email = seat.player.email
                return entry[0] if email is not None and head.from_addr == email.lower() else None
        return None

    def get(self, inbound_id: int) -> FirstReading | None:
        """The worker's reading of the mail, if it has come (never waits)."""
        index = self.index.get(inbound_id)
        return None if index is None else self.jobs.answer(index)
