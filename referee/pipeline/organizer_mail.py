"""The organizer's commands by mail (docs/organizer-mail.md): a mail that
:func:`referee.mail.auth.authenticate` found to be the organizer's (to the organizer's
command address, from ``[mail] organizer``, authenticated as a player's mail is), judged in
the judge's unit of work.

* Only what the organizer wrote is read: the ``text`` reading of the body (quoted lines,
  attributions, forwarded and Outlook header blocks and the signature taken off,
  :mod:`referee.mail.quotes`), cut where an unmarked copy of one of our mails to the
  organizer begins (``Dear organizer,``). Nothing quoted is ever done.
* Its commands (:func:`referee.season.orders.read_orders`) are done in order, all or none:
  in a SAVEPOINT of the judge's transaction; a command the controls refuse
  (:class:`ConfigError`, :class:`GameError`) rolls back the ones before it. A line that is
  not a command, or more than :data:`referee.season.orders.MAX_ORDERS` of them, and
  nothing is done. The mail's decision commits with the commands: a crash redoes both or
  neither.
* Each command takes effect at the mail's arrival (as a player's move does), but never
  before the latest event of what it touches (a match's chain, a season's record), so no
  record goes back in time.
* The organizer gets one answer, threaded under the mail, saying what each command did,
  or what was refused and why, with the list of commands. A refusal of a mail in which
  nothing could be read as a command is not answered twice within
  :data:`referee.pipeline.verdict.REPEAT_WINDOW` for the same text (an autoresponder's loop).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from referee.config import ConfigError
from referee.games.base import GameError
from referee.mail import tokens
from referee.mail.parse import Headers, parse_body
from referee.pipeline.clock import utc
from referee.pipeline.ingest import TOO_LARGE
from referee.pipeline.verdict import REPEAT_WINDOW, MailRow, Stages, before_our_mail, clean_note
from referee.render import LINE_MAX, wrap_text
from referee.season.controls import Controls
from referee.season.orders import COMMANDS, MAX_ORDERS, Order, Problem, read_orders
from referee.standings import header_of, one_season, rows_of, standings_text
from referee.status import status_of
from referee.store import rows as plain_rows
from referee.store.models import Event, Inbound, Match, SeasonEvent

__all__ = ["NOT_ORGANIZER", "ORGANIZER", "OrganizerMail"]

log = logging.getLogger("referee.judge")

ORGANIZER = "organizer"  # the rule of every organizer's mail judged (done or refused)
NOT_ORGANIZER = "not-organizer"  # the rule of a mail to the command address not from the organizer
GREETING = "organizer"  # our mails to the organizer open with "Dear organizer,"
SHOWN_LINES = 60  # lines of an announcement's text shown back in the answer
NOTE_COMMANDS = 5  # commands named in the mail's note
VERBATIM = ("status", "standings")  # commands whose lines the answer shows as they are


@dataclass
class Outcome:
    """What one organizer's mail came to: its status and note, and the answer to write."""

    status: str  # accepted | rejected
    note: str
    answer: dict[str, Any] = field(default_factory=dict)
    repeatable: bool = False  # nothing was read as a command: the repeat rule may hold the answer back


class OrganizerMail:
    """One authenticated organizer's mail: read, done (all or nothing), answered."""

    def __init__(self, judge: Stages, session: Session, row: MailRow, head: Headers, now: datetime):
        self.judge_, self.session, self.row, self.head, self.now = judge, session, row, head, now
        self.config = judge.config
        self.controls = Controls(judge.store, judge.book, judge.notices)

    def judge(self) -> tuple[str, str]:
        """Judge the mail: (status, note) of its decision (rule :data:`ORGANIZER`)."""
        outcome = self._outcome()
        self._answer(outcome)
        log.info("inbound %s: the organizer's commands: %s", self.row.id, outcome.note)
        return outcome.status, outcome.note

    # ------------------------------------------------------------------ reading

    def _outcome(self) -> Outcome:
        if self.row.rule == TOO_LARGE:  # the source read only its beginning: nothing of it is taken
            return self._refused(
                f"your mail was too large for the referee ({self.row.note or 'over the limit'}), so nothing "
                "in it was read; send the commands in a short plain mail, without attachments"
            )
        body = parse_body(self.row.raw, head=self.head)
        if body.truncated:
            return self._refused(
                "your mail was too long (only its beginning was read), so none of it was done: "
                f"send the commands in a short plain mail (at most {MAX_ORDERS} commands a mail)"
            )
        read = read_orders(self._written(body))
        if read.problems:
            count = len(read.problems)
            many = f"{count} lines are" + (" (at least: reading stopped there)" if read.stopped else "")
            return self._refused(
                f"{many} not commands as written" if count > 1 else "a line is not a command as written",
                problems=read.problems,
                orders=read.orders,
            )
        if not read.orders:
            return self._refused("I found no command in your mail (only the text above any quote is read)")
        return self._run(read.orders)

    @staticmethod
    def _written(body: Any) -> str:
        """What the organizer wrote: the first reading, when it is the ``text`` one (or, when
        the plain part holds nothing but a quote, the HTML part's), quotes, attributions,
        header blocks and the signature taken off; never the uncut or quoted readings, which
        hold what the mail quotes. Cut where a copy of one of our mails to the organizer
        begins, however it was copied."""

        first = next(iter(body.each()), None)
        if first is None or first.source not in ("text", "html"):
            return ""
        return before_our_mail(first.text, GREETING)

    # ------------------------------------------------------------------ doing

    def _run(self, orders: tuple[Order, ...]) -> Outcome:
        """Every command, in order, in a SAVEPOINT: all of them, or none (the first refusal
        rolls back the ones before it)."""
        session = self.session
        # What the batch wrote so far goes to the database first: a rollback of the savepoint
        # forgets the plain rows still waiting (referee.store.rows), and must forget only ours.
        plain_rows.flush(session)
        lapsed = list(session.info.get("lapsed", []))
        done: list[dict[str, Any]] = []
        current: Order | None = None
        try:
            with session.begin_nested():
                for current in orders:
                    done.append(self._result(current, self._do(current)))
                    plain_rows.flush(session)  # the next command (and STATUS) reads what this one did
        except (ConfigError, GameError) as exc:
            assert current is not None
            if lapsed:
                session.info["lapsed"] = lapsed
            else:
                session.info.pop("lapsed", None)
            session.info.pop("balances", None)  # moved by entries that were rolled back: read again
            return self._refused(
                "a command was refused",
                refused={"number": current.number, "line": current.line, "reason": _for_mail(str(exc))},
                orders=orders,
            )
        # the live balances of the batch (referee.store.balances): read again from the database
        # (all is flushed) by whatever needs them next, whatever the commands moved
        session.info.pop("balances", None)
        listed = "; ".join(order.line for order in orders[:NOTE_COMMANDS])
        more = f" and {len(orders) - NOTE_COMMANDS} more" if len(orders) > NOTE_COMMANDS else ""
        return Outcome(
            "accepted",
            f"organizer: {len(orders)} command(s) done: {listed}{more}",
            {"done": True, "results": done},
        )

    def _do(self, order: Order) -> list[str]:
        """One command, in the judge's unit of work; the lines it says."""
        session, c = self.session, self.controls
        if order.verb == "status":
            text = status_of(session, self.now, order.match, mail=self.config.mail, secret=self.config.secret)
            return _verbatim(text)
        if order.verb == "standings":
            header = header_of(session, one_season(session, order.season).id)
            return _verbatim(standings_text(header.name, rows_of(session, header)))
        at = self._at(order)
        if order.verb == "extend":
            assert order.match is not None and order.duration is not None
            return c.extend(order.match, order.step, order.duration, at, session=session)
        if order.verb == "pause":
            return c.pause(list(order.matches) or None, order.season, order.reason, at, session=session)
        if order.verb == "resume":
            return c.resume(list(order.matches) or None, order.season, at, session=session)
        if order.verb == "cancel":
            assert order.match is not None
            return c.cancel(order.match, order.reason, at, session=session)
        if order.verb == "forfeit":
            assert order.match is not None and order.player is not None
            return c.forfeit(order.match, order.player, order.reason, at, session=session)
        if order.verb == "substitute":
            assert order.match is not None and order.player is not None and order.new is not None
            return c.substitute(order.match, order.player, order.new, order.reason, at, session=session)
        if order.verb == "adjust":
            assert order.player is not None and order.currency is not None
            return c.adjust(order.season, order.player, order.currency, order.amount, order.reason, at, session=session)
        if order.verb == "announce":
            season = order.season if order.whole_season else None
            return c.announce(order.text, at, season=season, match=order.match, session=session)
        raise AssertionError(f"no such command: {order.verb}")  # read_orders reads no other

    def _at(self, order: Order) -> datetime:
        """When the command takes effect: the mail's arrival, but never before the latest
        event of the matches it touches (a season's command: every match of the season, and
        the season's own record), so that no chain or record goes back in time."""
        session = self.session
        at = self.row.received_at
        events = select(func.max(Event.at)).join(Match, Match.id == Event.match_id)
        latest: list[datetime | None] = []
        if order.matches:
            latest.append(session.scalar(events.where(Match.key.in_(order.matches))))
        else:
            try:
                season = one_season(session, order.season)
            except ConfigError:
                return at  # the command is refused with this error, at no time
            latest.append(session.scalar(events.where(Match.season_id == season.id)))
            latest.append(session.scalar(select(func.max(SeasonEvent.at)).where(SeasonEvent.season_id == season.id)))
        for value in latest:
            value = utc(value)
            if value is not None and value > at:
                at = value
        return at

    @staticmethod
    def _result(order: Order, lines: list[str]) -> dict[str, Any]:
        shown = order.text.split("\n") if order.verb == "announce" else []
        return {
            "number": order.number,
            "line": order.line,
            "lines": lines,
            "verbatim": order.verb in VERBATIM,
            "text": shown[:SHOWN_LINES],
            "more": max(0, len(shown) - SHOWN_LINES),
        }

    # ------------------------------------------------------------------ answering

    def _refused(
        self,
        why: str,
        *,
        refused: dict[str, Any] | None = None,
        problems: tuple[Problem, ...] = (),
        orders: tuple[Order, ...] = (),
    ) -> Outcome:
        if refused is not None:
            note = f"organizer: nothing done: line {refused['number']} ({refused['line']}) refused: {refused['reason']}"
        elif problems:
            first = problems[0]
            note = f"organizer: nothing done: line {first.number} ({first.line}): {first.reason}"
        else:
            note = f"organizer: nothing done: {why}"
        answer = {
            "done": False,
            "why": why,
            "refused": refused,
            "problems": [{"number": p.number, "line": p.line, "reason": p.reason} for p in problems],
            "orders": [{"number": o.number, "line": o.line} for o in orders],
        }
        # nothing read as a command (a text not understood): the repeat rule may hold the answer
        return Outcome("rejected", note, answer, repeatable=refused is None)

    def _answer(self, outcome: Outcome) -> None:
        """One mail to the organizer, threaded under theirs, unless it repeats the answer to
        the same text refused for the same reason within the repeat window."""

        row = self.row
        if outcome.repeatable and row.sender and row.body_digest:
            repeated = self.session.scalar(
                select(Inbound.id)
                .where(
                    Inbound.sender == row.sender,
                    Inbound.body_digest == row.body_digest,
                    Inbound.note == clean_note(outcome.note),
                    Inbound.rule == ORGANIZER,
                    Inbound.status == "rejected",
                    Inbound.id != row.id,
                    Inbound.received_at >= row.received_at - REPEAT_WINDOW,
                )
                .limit(1)
            )
            if repeated:
                log.warning(
                    "inbound %s: the organizer's mail repeats one refused before (inbound %s); not answered again",
                    row.id,
                    repeated,
                )
                return
        mail = self.config.mail
        assert mail.organizer is not None  # an organizer's claim needs one
        context = {
            **outcome.answer,
            "received": f"{row.received_at:%Y-%m-%d %H:%M} UTC",
            "subject": self.head.subject[:200],
            "reference": [{"form": form, "example": example} for form, example in COMMANDS],
            "max_orders": MAX_ORDERS,
            "address": tokens.organizer_address(self.config.secret, mail.local, mail.domain, mail.organizer),
            # the lines of STATUS and STANDINGS, wrapped already: kept as they are, like a form's
            # (not wrapped again, no abbreviation explained inside a table: referee.render)
            "form": "\n".join(line for r in outcome.answer.get("results", ()) if r["verbatim"] for line in r["lines"])
            or None,
        }
        self.judge_.notices.mail_organizer(
            self.session,
            "orders",
            dedupe=f"orders:{row.id}",
            at=self.now,
            extra=context,
            reply_to_mail=self.head,
            reply_to=context["address"],
            inbound_id=row.id,
        )


def _verbatim(text: str) -> list[str]:
    """The lines of ``referee status`` or ``referee standings``, each at most 75 characters
    (78 with the answer's indent): a longer line wrapped, its continuation hanging under it."""
    return wrap_text(text, width=LINE_MAX - 3).split("\n")


def _for_mail(reason: str) -> str:
    """A refusal of the controls as the organizer by mail reads it: the command line's
    ``--season`` is ``SEASON <season>`` in a mail."""
    return reason.replace("name one with --season", "name one with SEASON <season>")
