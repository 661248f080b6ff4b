"""The players' commands by mail (docs/players.md): HELP, STATUS, STANDINGS, HISTORY,
TIMEZONE and RESIGN (:mod:`referee.season.player_orders` reads them), judged in the judge's
unit of work and answered once, in the same tick.

Who may send them (authenticated as moves are, :mod:`referee.mail.auth`):

* to a seat's personal reply address from its registered player (the seat's claim): a mail
  whose every written line is a command (any other line: a mail of moves, as always);
* to the general address from a registered player's address, with one From, no DMARC
  failure recorded and, with ``[mail] trusted_authserv_id``, that server's pass
  (:func:`referee.mail.auth.general_sender`): a mail with any command line. The general
  address carries no secret, so what such a mail may change needs a code: TIMEZONE there is
  answered with a code to send back; a mail that fails the checks is ignored, unanswered.

Answers go to the registered address only, so a forged From learns nothing. What changes
something needs more than a From:

* ``TIMEZONE <zone>``: done at once from a personal reply address; from the general address
  confirmed by ``TIMEZONE <zone> <code>``. Stored apart from the season file's zone
  (``players.timezone_chosen``), used by every mail from the next on.
* ``RESIGN <match>``: always answered with a code (HMAC of the server secret, the match, the
  player and the UTC day: :func:`referee.season.player_orders.confirm_code`); ``RESIGN
  <match> <code>`` from the registered address (either address) does the season's forfeit
  (:meth:`referee.season.controls.Controls.forfeit`, reason "resigned by mail"). The code
  reaches nobody but the registered address.

Hidden information never leaks: STATUS and HELP are built from the game's own step mail
(``Notices.context``: ``view(state, player)`` and ``form(state, player)``); HISTORY from the
mails the player was sent in that match (each built from the view of its time); STANDINGS
from the season's standings (names, never ids). A mail's commands are done all together or
not at all, in a SAVEPOINT (a refused RESIGN undoes a TIMEZONE before it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from referee.config import ConfigError, seat_role, silent_roles
from referee.games import GAMES
from referee.games.base import GameError, plural
from referee.mail.auth import general_sender
from referee.mail.compose import LATE_NOTE
from referee.mail.parse import Body, Headers, parse_body, parse_headers, shown_text
from referee.match.book import MATCH_CONTEXT
from referee.pipeline.clock import utc
from referee.pipeline.verdict import MailRow, Stages, before_our_mail
from referee.render import LINE_MAX, render_mail, wrap_text
from referee.season.controls import Controls
from referee.season.player_orders import (
    COMMANDS,
    MAX_COMMANDS,
    Command,
    Problem,
    check_code,
    confirm_code,
    is_commands_mail,
    read_commands,
)
from referee.standings import header_of, rows_of
from referee.store import rows as plain_rows
from referee.store.models import Event, Match, Outbox, Player, Seat
from referee.timefmt import local_time

if TYPE_CHECKING:
    from referee.match.notices import Notices
    from referee.pipeline.limits import ReplyLimiter

__all__ = ["COMMANDS_RULE", "PlayerCommands", "history_lines", "status_lines"]

log = logging.getLogger("referee.judge")

COMMANDS_RULE = "commands"  # the rule of every player's commands mail judged (done or refused)
UNCONFIRMED = "commands-unconfirmed"  # to the general address, failing the sender checks
PERSONAL_KIND = "commands"  # the answer to a mail to a personal reply address (always sent)
GENERAL_KIND = "commands-general"  # ... to the general address (a notice: limited per hour)
WIDTH = LINE_MAX - 3  # an answer's own lines: at most 75 characters (78 with an indent)
HISTORY_MAILS = 40  # mails a HISTORY answer shows (the latest)
NEWS_LINES = 12  # lines of each mail's first paragraph shown by HISTORY
HISTORY_KINDS = ("step", "receipt", "organizer", "handover")  # the mails of a match's steps


@dataclass
class _Outcome:
    status: str  # accepted | rejected
    note: str
    answer: dict[str, Any] = field(default_factory=dict)


class PlayerCommands:
    """One mail of a player's commands: read, done (all or nothing), answered once."""

    def __init__(
        self,
        judge: Stages,
        session: Session,
        row: MailRow,
        head: Headers,
        now: datetime,
        players: list[Player],
        *,
        seat: Seat | None,
    ):
        self.judge_, self.session, self.row, self.head, self.now = judge, session, row, head, now
        self.config = judge.config
        self.notices: Notices = judge.notices
        self.players = players  # the registered players of this address (one per season)
        self.player = seat.player if seat is not None else players[0]
        self.seat = seat  # the seat whose personal reply address the mail went to (None: general)

    # ------------------------------------------------------------------ entry points

    @classmethod
    def personal(
        cls, judge: Stages, session: Session, row: MailRow, head: Headers, now: datetime, seat: Seat, body: Body
    ) -> tuple[str, str] | None:
        """A seat's authenticated mail: (status, note) when it is a mail of commands, else None
        (a mail of moves)."""
        text = written(body, seat.player.name)
        if not is_commands_mail(text, general=False):
            return None
        return cls(judge, session, row, head, now, [seat.player], seat=seat)._judge(text, PERSONAL_KIND, None)

    @classmethod
    def general(
        cls,
        judge: Stages,
        session: Session,
        row: MailRow,
        head: Headers,
        now: datetime,
        players: list[Player],
        limiter: ReplyLimiter,
    ) -> tuple[str, str | None, str] | None:
        """A mail to the general address from a registered player's address: (status, rule,
        note) when it holds commands, else None (the general address's notice, as before)."""
        body = parse_body(row.raw, head=head)
        text = written(body, players[0].name)
        if body.truncated or not is_commands_mail(text, general=True):
            return None
        checked = general_sender(head, judge.config.mail.trusted_authserv_id)
        if checked != "ok":
            note = f"commands to the general address from {head.from_addr or '(none)'}: {checked}; not obeyed"
            log.warning("inbound %s: %s, not answered", row.id, note)
            return "ignored", UNCONFIRMED, note
        row.player_id = players[0].id
        mail = cls(judge, session, row, head, now, [p for p in players if p.email], seat=None)
        status, note = mail._judge(text, GENERAL_KIND, limiter)
        return status, COMMANDS_RULE, note

    # ------------------------------------------------------------------ judging

    def _judge(self, text: str, kind: str, limiter: ReplyLimiter | None) -> tuple[str, str]:
        outcome = self._outcome(text)
        self._answer(outcome, kind, limiter)
        log.info("inbound %s: a player's commands: %s", self.row.id, outcome.note)
        return outcome.status, outcome.note

    def _outcome(self, text: str) -> _Outcome:
        read = read_commands(text)
        problems = list(read.problems)
        for command in read.commands:  # what the state refuses is known before anything is done
            why = self._refusal(command)
            if why is not None:
                problems.append(Problem(command.number, command.line, why))
        if problems:
            problems.sort(key=lambda p: p.number)
            first = problems[0]
            return self._refused(
                "a line is not a command as written" if len(problems) == 1 else "some lines are not commands",
                f"nothing done: line {first.number} ({first.line}): {first.reason}",
                problems,
                read.commands,
            )
        plain_rows.flush(self.session)  # a rollback of the savepoint must forget only ours
        lapsed = list(self.session.info.get("lapsed", []))
        results: list[dict[str, Any]] = []
        current: Command | None = None
        try:
            with self.session.begin_nested():
                for current in read.commands:
                    results.append({"line": current.line, "lines": self._do(current)})
                    plain_rows.flush(self.session)
        except (ConfigError, GameError) as exc:
            assert current is not None
            if lapsed:
                self.session.info["lapsed"] = lapsed
            else:
                self.session.info.pop("lapsed", None)
            self.session.info.pop("balances", None)
            problem = Problem(current.number, current.line, str(exc))
            return self._refused("a command was refused", f"nothing done: {current.line}: {exc}", [problem], ())
        self.session.info.pop("balances", None)
        listed = "; ".join(c.line for c in read.commands[:5])
        return _Outcome("accepted", f"commands done: {listed}", {"done": True, "results": results})

    def _refused(self, why: str, note: str, problems: list[Problem], commands: tuple[Command, ...]) -> _Outcome:
        answer = {
            "done": False,
            "why": why,
            "problems": [
                {"number": p.number, "line": p.line, "reason": wrap_text(p.reason, width=WIDTH - 4).split("\n")}
                for p in problems
            ],
            "results": [],
        }
        return _Outcome("rejected", note, answer)

    def _refusal(self, command: Command) -> str | None:
        """Why the state refuses *command* (before anything is done), else None."""
        if command.verb in ("history", "resign"):
            seat = self._seat_in(command.match or "")
            if seat is None:
                return f"you play in no match {command.match}"
            if command.verb == "resign":
                match = seat.match
                if match.status != "running":
                    return f"match {match.key} is {match.status}: only a running match is resigned"
                game = GAMES[match.game]
                if seat_role(game, seat.position) in silent_roles(game):
                    return f"you sit in match {match.key} as a silent participant: there is nothing to resign"
                if command.code is not None and not check_code(
                    self.config.secret, command.code, "resign", match.key, self._who(seat.player), self._day()
                ):
                    return "that code is not the one of our latest answer (send RESIGN <match> for a new one)"
        if command.verb == "timezone" and command.code is not None:
            assert command.zone is not None
            if not check_code(self.config.secret, command.code, "timezone", command.zone, self._who(), self._day()):
                return "that code is not the one of our latest answer (send TIMEZONE <zone> for a new one)"
        return None

    # ------------------------------------------------------------------ doing

    def _do(self, command: Command) -> list[str]:
        verb = command.verb
        if verb == "help":
            return self._help()
        if verb == "status":
            return self._status()
        if verb == "standings":
            return self._standings()
        if verb == "history":
            seat = self._seat_in(command.match or "")
            assert seat is not None
            return history_lines(self.session, seat.match, seat.player)
        if verb == "timezone":
            return self._timezone(command)
        if verb == "resign":
            return self._resign(command)
        raise AssertionError(f"no such command: {verb}")

    def _help(self) -> list[str]:
        out = _wrapped(
            "Write each command on a line of its own, to the referee's general address or to a "
            "reply address of one of your matches (keywords in any case; only what you write "
            "above any quote is read):"
        )
        for form, what in COMMANDS:
            out.append(f"  {form}")
            out.extend(_wrapped(what, "      "))
        seats = self._running()
        if not seats:
            out += ["", "You have no running match at the moment."]
        for seat in seats:
            context = self.notices.context(seat.match, seat.player, at=self.now)
            match = context["match"]
            out += ["", f"{match['title']} {match['id']}:"]
            mine = [s for s in context["steps"] if seat.player.key in s["players"]]
            if not mine:
                step = context["step"]
                what = f"{step['title']} is open" if step else "The match waits"
                out.extend(_wrapped(f"{what}: you have nothing to send now; we mail you when you have.", "  "))
                continue
            if all(step["passed"] for step in mine):  # read after the deadline: it closes now
                for step in mine:
                    out.extend(_wrapped(_closed(step), "  "))
                continue
            for step in mine:
                if step["passed"]:
                    out.extend(_wrapped(_closed(step), "  "))
                    continue
                until = f", until {step['deadline']}" if step["deadline"] else ""
                out.extend(_wrapped(f"{step['title']} is open for you{until}.", "  "))
            out.extend(_wrapped(f"Reply to our latest mail about it, or write to {context['reply_to']}:", "  "))
            form = context["form"] or ""
            if form:
                out.append("  Send this form, filled in:")
                out.extend(f"    {line}" if line else "" for line in form.split("\n"))
        return out

    def _status(self) -> list[str]:
        seats = self._running()
        if not seats:
            return ["You have no running match at the moment."]
        out: list[str] = []
        for seat in seats:
            if out:
                out += ["", "-" * 40, ""]
            context = self.notices.context(seat.match, seat.player, at=self.now)
            out.extend(status_lines(seat.match.game, context))
        return out

    def _standings(self) -> list[str]:
        out: list[str] = []
        for player in self.players:
            header = header_of(self.session, player.season_id)
            if out:
                out.append("")
            out.append(f"Standings of {header.name} (VP: victory points):")
            for r in rows_of(self.session, header):
                line = (
                    f"{r.rank}. {r.name}: {r.victory_points:g} VP, {plural(r.chips, 'chip')}, "
                    f"{plural(r.garnets, 'garnet')}, {plural(r.cols, 'CoL')}, "
                    f"{plural(r.played, 'match', 'matches')} played"
                )
                if r.eliminated_in:
                    line += f"; eliminated in {r.eliminated_in}"
                out.extend(_wrapped(line, "  ", hang="     "))
        return out

    def _timezone(self, command: Command) -> list[str]:
        zone = command.zone
        assert zone is not None
        if self.seat is None and command.code is None:  # the general address: confirmed by a code
            code = confirm_code(self.config.secret, "timezone", zone, self._who(), self._day())
            return (
                _wrapped(
                    f"To show your times in {zone}, send this line (today or tomorrow, UTC) to the "
                    f"referee or a reply address of yours:"
                )
                + ["", f"    TIMEZONE {zone} {code}", ""]
                + _wrapped(
                    "This mail went to the general address, which anyone can write to in your name: "
                    "the code, which only reaches your address, confirms it is you. Nothing changed yet."
                )
            )
        for player in self.players:
            player.timezone_chosen = zone
        self.session.flush()
        return _wrapped(
            f"Your time zone is now {zone}: our mails show your times in it from the next "
            f"one on (it is {local_time(self.now, zone)} now). It stays yours when the season "
            "file is loaded again, until the organizer changes your zone there."
        )

    def _resign(self, command: Command) -> list[str]:
        seat = self._seat_in(command.match or "")
        assert seat is not None
        match = seat.match
        game = GAMES[match.game]
        title = f"{game.title} {match.key}"
        if command.code is None:
            silent = silent_roles(game)
            acting = [s for s in match.seats if seat_role(game, s.position) not in silent]
            after = "you leave and the others play on" if len(acting) > 2 else "the match ends"
            code = confirm_code(self.config.secret, "resign", match.key, self._who(seat.player), self._day())
            return (
                _wrapped(
                    f"To resign from {title}, send this line (today or tomorrow, UTC) from your "
                    "address to the referee or a reply address of yours:"
                )
                + ["", f"    RESIGN {match.key} {code}", ""]
                + _wrapped(
                    "Resigning is a forfeit: you lose the match with your chips as they stand, "
                    f"and {after}. Nothing changed yet."
                )
            )
        controls = Controls(self.judge_.store, self.judge_.book, self.notices)
        controls.forfeit(match.key, seat.player.key, "resigned by mail", self._at(match), session=self.session)
        state = "is over" if match.status == "finished" else "goes on without you"
        return _wrapped(f"You resigned from {title}: you forfeit it, and the match {state}. Its players are told.")

    # ------------------------------------------------------------------ helpers

    def _running(self) -> list[Seat]:
        """The player's seats that act in running matches, by start."""
        ids = [p.id for p in self.players]
        match_ids = set(
            self.session.scalars(
                select(Seat.match_id)
                .join(Match, Match.id == Seat.match_id)
                .where(Seat.player_id.in_(ids), Match.status == "running")
            )
        )
        if not match_ids:
            return []
        matches = self.session.scalars(
            select(Match).where(Match.id.in_(match_ids)).options(*MATCH_CONTEXT).order_by(Match.starts_at, Match.key)
        ).all()
        out = []
        for match in matches:
            game = GAMES[match.game]
            for seat in match.seats:
                if seat.player_id in ids and seat_role(game, seat.position) not in silent_roles(game):
                    out.append(seat)
        return out

    def _seat_in(self, key: str) -> Seat | None:
        ids = [p.id for p in self.players]
        match = self.session.scalar(select(Match).where(Match.key == key).options(*MATCH_CONTEXT))
        if match is None:
            return None
        return next((s for s in match.seats if s.player_id in ids), None)

    def _who(self, player: Player | None = None) -> str:
        player = player or self.player
        return f"{player.season_id}:{player.key}"

    def _day(self):
        return self.row.received_at.date()

    def _at(self, match: Match) -> datetime:
        """The mail's arrival, but never before the match's latest event (no chain goes back)."""
        at = self.row.received_at
        latest = utc(self.session.scalar(select(func.max(Event.at)).where(Event.match_id == match.id)))
        return latest if latest is not None and latest > at else at

    # ------------------------------------------------------------------ answering

    def _answer(self, outcome: _Outcome, kind: str, limiter: ReplyLimiter | None) -> None:
        row, player = self.row, self.player
        results = outcome.answer.get("results", [])
        verbatim = [line for r in results for line in r["lines"]]
        verbatim += [line for p in outcome.answer.get("problems", []) for line in p["reason"]]
        context = {
            **outcome.answer,
            "received": local_time(row.received_at, player.zone),
            "reference": [{"form": form, "what": what} for form, what in COMMANDS],
            "max_commands": MAX_COMMANDS,
            "general": self.config.mail.address,
            "personal": self.seat is not None,
            "listing": [r["line"] for r in results],
            # the answers' own lines come wrapped already: kept as they are, like a form's
            "form": "\n".join(line for line in verbatim if line.strip()) or None,
        }
        if limiter is None:
            self.notices.mail_player(
                self.session,
                kind,
                None,
                player,
                dedupe=f"{kind}:{row.id}",
                at=self.now,
                reply_to_mail=self.head,
                extra=context,
                inbound_id=row.id,
            )
            return
        self.judge_.notice(
            self.session,
            row,
            limiter,
            self.now,
            kind,
            None,
            player,
            head=self.head,
            extra=context,
            reason=outcome.note,
            repeatable=False,
        )


def written(body: Body, name: str) -> str:
    """What the player wrote: the first reading when it is the ``text`` or ``html`` one
    (quotes, attributions and the signature taken off), cut where a copy of one of our
    mails to the player begins (``Dear <name>,``)."""

    first = next(iter(body.each()), None)
    if first is None or first.source not in ("text", "html"):
        return ""
    return before_our_mail(first.text, name)


def _wrapped(text: str, indent: str = "", hang: str | None = None) -> list[str]:
    """*text* as lines of at most :data:`WIDTH` characters, each starting with ``indent``
    (continuations with ``hang``, else ``indent``)."""
    import textwrap

    return textwrap.wrap(
        text,
        width=WIDTH,
        initial_indent=indent,
        subsequent_indent=hang if hang is not None else indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def _closed(step: dict[str, Any]) -> str:
    """An open step whose deadline had passed when the command was read (the referee read
    it late: the step closes right after; templates/mail/common/passed.txt words it so too)."""
    return (
        f"{step['title']} closed at its deadline, {step['deadline']}, before we could read your mail: "
        "nothing more can be sent for it. Our next mail about the match tells you its results."
    )


def status_lines(game: str, context: dict[str, Any]) -> list[str]:
    """A running match as the player may see it: the game's own step mail (built from
    ``view(state, player)`` and ``form(state, player)`` alone, :meth:`Notices.context`),
    without its greeting and signature, under a heading of the match."""
    mail = render_mail(game, "step", context)
    body = mail.text.split("\n-- \n")[0].rstrip()
    first, _, rest = body.partition("\n")
    if first.startswith("Dear "):
        body = rest.strip("\n")
    match = context["match"]
    heading = f"{match['title']} {match['id']} ({match['season']})"
    lines = [heading, "=" * min(len(heading), WIDTH), ""]
    lines += wrap_text(body, keep=(context.get("form") or "").splitlines(), width=WIDTH).split("\n")
    return lines


def history_lines(session: Session, match: Match, player: Player) -> list[str]:
    """The match as the player saw it, step by step: the mails we sent them about it (each
    built from ``view(state, player)`` of its time), each as its date in the player's zone,
    its subject and its first paragraph (the news: what happened, what to do now)."""
    game = GAMES[match.game]
    heading = f"{game.title} {match.key} ({match.season.name}), {match.status}"
    out = [heading, "=" * min(len(heading), WIDTH)]
    if player.email is None:
        return out + ["", "We have sent you no mail about this match."]
    found = session.execute(
        select(Outbox.id, Outbox.created_at, Outbox.message)
        .where(Outbox.match_id == match.id, Outbox.to_addr == player.email, Outbox.kind.in_(HISTORY_KINDS))
        .order_by(Outbox.id.desc())
        .limit(HISTORY_MAILS + 1)
    ).all()
    more = len(found) > HISTORY_MAILS
    found = list(reversed(found[:HISTORY_MAILS]))
    if not found:
        return out + ["", "We have sent you no mail about this match yet."]
    if more:
        out += ["", f"(the latest {HISTORY_MAILS} of our mails about it; the earlier ones are in your mailbox)"]
    for _, created_at, message in found:
        subject = parse_headers(message).subject
        out += ["", f"{local_time(created_at, player.zone)}:"]
        out.extend(_wrapped(subject, "  "))
        news = _first_paragraph(shown_text(message))
        for line in news[:NEWS_LINES]:
            out.extend(_wrapped(line, "    "))
        if len(news) > NEWS_LINES:
            out.append("    ...")
    return out


def _first_paragraph(text: str) -> list[str]:
    """The first paragraph after the greeting (``Dear <name>,``) of one of our mails (after
    the note of a mail delivered late, :data:`~referee.mail.compose.LATE_NOTE`)."""
    lines = text.replace("\r\n", "\n").split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("Dear ")), -1) + 1
    while at < len(lines) and not lines[at].strip():
        at += 1
    if at < len(lines) and lines[at] == LATE_NOTE.split("\n", 1)[0]:
        while at < len(lines) and lines[at].strip():  # the note: the news is the paragraph after it
            at += 1
        while at < len(lines) and not lines[at].strip():
            at += 1
    out = []
    while at < len(lines) and lines[at].strip() and lines[at] != "-- ":
        out.append(lines[at].rstrip())
        at += 1
    return out
