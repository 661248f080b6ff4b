"""Notices: who is told what, rendered and put in the outbox.

Every mail is rendered from ``templates/mail/<game>/<kind>.txt`` (else
``templates/mail/common/<kind>.txt``) with a context built from ``view(state, player)``,
the only path from a match's state to what a player sees. Each mail is written once: its
dedupe key is unique in the outbox, and the transaction that writes it is the one that
moves the match or the inbound mail on, so it cannot come round again. Threading: the
match's first mail to a player is the root of that player's thread for the match. A
player without an address (one who sits only at silent seats) is never mailed.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.bidi import isolate
from referee.config import ServiceConfig
from referee.games import GAMES
from referee.games.base import Step, open_steps
from referee.games.quick import answers_of
from referee.mail import tokens
from referee.mail.bodytext import as_shown
from referee.mail.calendar import Deadline, summary
from referee.mail.compose import compose, make_message_id
from referee.mail.parse import Headers
from referee.match import opensteps
from referee.match.press import Made, MailSpec, Press, PressError, default_workers, make
from referee.render import named, render_mail
from referee.store import rows
from referee.store.models import Match, Outbox, Player
from referee.standings import header_of, rows_of
from referee.timefmt import duration, exact_time, local_time

OUTBOX = Outbox.__table__
SEASON_KINDS = ("main", "death")  # matches of the season frame whose end mails the standings
# the organizer's words (``tell``) for a change that moves the deadlines: its mail carries the
# moved deadline's calendar event again, SEQUENCE raised
MOVED_DEADLINE = frozenset({"extended", "resumed"})
# the mails that name the deadline of the step they are about (and the organizer's words above):
# their outbox row keeps it, and delivery notes or drops such a mail once it has passed
NAMING_DEADLINE = frozenset({"step", "receipt", "error", "reminder", "spoof", "handover"})
_PRESS = "press"  # the rows' hook (referee.store.rows.before_write) that makes a batch's mails

__all__ = ["Notices", "PressError", "person"]


class Notices:
    def __init__(self, config: ServiceConfig, press: Press | None = None):
        self.config = config
        self.loop_value = config.mail.domain
        workers = config.mail_workers if config.mail_workers is not None else default_workers()
        self.press = press if press is not None else Press(workers)

    # ------------------------------------------------------------------ making the mails

    def defer(self, session: Session, mails: int = 0) -> None:
        """With workers (``[service] mail_workers``), make the mails ``session`` writes from
        now on together, just before its rows are written (at a flush, at the commit, or at
        :meth:`made`), sharing them with the press's workers (:mod:`referee.match.press`) as
        they come; one batch's closes write hundreds, one batch of replies a receipt each.
        ``mails``: about how many the batch writes (the workers are started when they are
        many, while the referee does the batch's own work)."""
        if self.press.workers < 1:
            return  # no workers: each mail is made as it is written
        if mails >= self.press.parallel:
            self.press.warm()
        if rows.hook(session, _PRESS) is None:
            rows.before_write(session, _PRESS, _Deferred(self.press))

    def made(self, session: Session) -> None:
        """Make the mails waiting in ``session`` now (:class:`PressError` names the match of
        one that fails): a batch calls it before it commits, to know which match failed."""
        deferred = rows.hook(session, _PRESS)
        if deferred is not None:
            deferred(session)

    def close(self) -> None:
        """Stop the press's workers."""
        self.press.close()

    def announce_step(
        self,
        session: Session,
        match: Match,
        at: datetime,
        *,
        since: Collection[str] = (),
        first: bool = False,
        mover: str | None = None,
    ) -> None:
        """The mail each player of the game's audience gets when a step opens (or the match
        ends): what happened, what to do now, by when. ``since``: the keys of the steps open
        before the change; every step open now that is not among them has just opened, and
        its audience (``audience(state, step)``) is told, in the game's order (in most games
        one step opens as the one before closes). The first mail of a match starts each
        player's thread. ``mover``, whose move opened a step, is not told: the receipt for
        that move tells them (with the form when it is their turn again). A player without an
        address (at a silent seat) is never mailed."""
        game = GAMES[match.game]
        if match.status == "finished":
            if not (since or first):
                return
            news: list[tuple[str, Step | None, set[str]]] = [("final", None, set(game.audience(match.state)))]
        else:
            news = [
                (step.key, step, set(game.audience(match.state, step)))
                for step in open_steps(game, match.state)
                if step.key not in since
            ]
        if match.status == "finished" and match.kind in SEASON_KINDS:
            self.standings(session, match, at)
        rooted: set[str] = set()  # the thread root is the first mail a player gets of the match
        for key, step, told in news:
            for seat in match.seats:
                who = seat.player.key
                if who not in told or who == mover or seat.player.email is None:
                    continue
                self.mail_player(
                    session,
                    "step",
                    match,
                    seat.player,
                    dedupe=f"step:{match.key}:{key}:{who}",
                    at=at,
                    thread_root=first and who not in rooted,
                    about=step,
                )
                rooted.add(who)

    def tell(
        self,
        session: Session,
        match: Match,
        at: datetime,
        what: str,
        *,
        about: str = "",
        skip: Collection[str] = (),
        **extra: Any,
    ) -> None:
        """Mail each player of ``match`` (with an address, at a seat that acts) what happened to
        it from outside its rules (``what``: the organizer "cancelled", "paused", "resumed" or
        "extended" it, a player "forfeited" or "abandoned" it, or it "lapsed" in the season
        frame), once: the match's last event number, ``what`` and ``about`` (the forfeiter: two
        may forfeit at one deadline) are in the dedupe key."""
        game = GAMES[match.game]
        silent = set(game.game_type.silent_roles)
        roles = game.game_type.roles
        extra = {k: isolate(v) if k.endswith(("name", "forfeiter")) else v for k, v in extra.items()}
        for seat in match.seats:
            role = roles[min(seat.position, len(roles) - 1)]
            if seat.player.email is None or role in silent or seat.player.key in skip:
                continue
            self.mail_player(
                session,
                "organizer",
                match,
                seat.player,
                dedupe=f"organizer:{match.key}:{match.last_event_seq}:{what}:{about}:{seat.player.key}",
                at=at,
                extra={"what": what, "reason": None, "paused": None, "by": None, **extra},
            )

    def handover(self, session: Session, match: Match, old: Player, new: Player, at: datetime, reason: str) -> None:
        """``old``'s seat has been handed to ``new`` (``referee substitute``): ``new`` gets the
        handover mail (what happened, and the match as the seat sees it: the game's step mail,
        with the form and the deadline when the seat has something to send); ``old`` is told
        they play no more in it; the other players are told who sits there now."""
        about = f"{old.key}>{new.key}"
        self.tell(
            session,
            match,
            at,
            "substituted",
            about=about,
            skip=(new.key,),
            old_name=isolate(old.name),
            new_name=isolate(new.name),
            reason=reason,
        )
        game = GAMES[match.game]
        self.mail_player(
            session,
            "organizer",
            None,
            old,
            dedupe=f"organizer:{match.key}:{match.last_event_seq}:replaced:{about}:{old.key}",
            at=at,
            extra={
                "match": {"id": match.key, "title": game.title, "game": game.name, "season": match.season.name},
                "what": "replaced",
                "reason": reason,
                "new_name": isolate(new.name),
                "paused": None,
                "by": None,
            },
        )
        context = self.context(match, new, paused_too=True, at=at)
        seat_mail = render_mail(match.game, "step", context)
        body = seat_mail.text.split("\n-- \n")[0].rstrip()  # without its signature
        first, _, rest = body.partition("\n")
        if first.startswith("Dear "):  # the handover mail has its own greeting
            body = rest.strip("\n")
        self.mail_player(
            session,
            "handover",
            match,
            new,
            dedupe=f"handover:{match.key}:{match.last_event_seq}:{new.key}",
            at=at,
            extra={
                "old_name": isolate(old.name),
                "reason": reason,
                "paused": match.status == "paused",
                "death": match.kind == "death",
                "seat_subject": seat_mail.subject,
                "seat_mail": body,
            },
            paused_too=True,
        )

    def standings(self, session: Session, match: Match, at: datetime) -> None:
        """A match of the season frame has ended: each of its players with an address gets the
        season's standings, with what the end brought (an EC, a death match, an elimination);
        when it ended the season, every season player gets the final standings instead."""
        for lapsed_id, why in session.info.pop("lapsed", []):  # what this end made lapse
            lapsed = session.get(Match, lapsed_id)
            if lapsed is not None:
                self.tell(session, lapsed, at, "lapsed", reason=why)
        rows.flush(session)  # the standings read the result and the ledger of this batch
        season = match.season
        table = rows_of(session, header_of(session, season.id))
        news = _season_news(match)
        final = (season.settings or {}).get("ended_by") == match.key
        why = ""
        if final:
            told = list(session.scalars(select(Player).where(Player.season_id == season.id).order_by(Player.id)))
            live = [r for r in table if r.eliminated_in is None]
            why = (
                f": {isolate(live[0].name)} is the last live player" if len(live) == 1 else ": its last match has ended"
            )
        else:
            told = [seat.player for seat in match.seats]
        listed = {r.player for r in table}
        for player in told:
            if player.email is None or player.key not in listed:
                continue
            self.mail_player(
                session,
                "standings",
                None,
                player,
                dedupe=f"{'season-end' if final else 'standings'}:{season.key}:{match.key}:{player.key}",
                at=at,
                extra={
                    "season": season.name,
                    "final": final,
                    "why": why,
                    "ended": {"id": match.key, "title": GAMES[match.game].title, "kind": match.kind},
                    "news": news,
                    "rows": [_standing(r, player.zone) for r in table],
                },
            )

    def remind(self, session: Session, match: Match, now: datetime) -> int:
        """Remind the players who still owe a submission in an open step whose reminder is
        due, once per configured offset (a player without an address is never mailed)."""
        game = GAMES[match.game]
        steps = {s.key: s for s in open_steps(game, match.state)}
        awaited = set(game.awaiting(match.state))
        reminders = match.timing.get("reminders", [])
        entries = opensteps.listed(match)
        sent = 0
        for entry in entries:
            if entry.remind_at is None or entry.remind_at > now:
                continue
            step = steps.get(entry.key)
            if entry.deadline is not None and entry.deadline > now and step is not None:
                offset = int((entry.deadline - entry.remind_at).total_seconds())
                for seat in match.seats:
                    who = seat.player.key
                    if who in awaited and who in step.players and seat.player.email is not None:
                        self.mail_player(
                            session,
                            "reminder",
                            match,
                            seat.player,
                            at=now,
                            dedupe=f"reminder:{match.key}:{entry.key}:{who}:{offset}",
                            extra={"left": duration(entry.deadline - now)},
                            about=step,
                        )
                        sent += 1
            entry.remind_at = opensteps.next_reminder(reminders, entry, after=now)
        opensteps.store(match, entries)
        return sent

    def mail_player(
        self,
        session: Session,
        kind: str,
        match: Match | None,
        player: Player,
        *,
        dedupe: str,
        at: datetime,
        reply_to_mail: Headers | None = None,
        extra: dict[str, Any] | None = None,
        thread_root: bool = False,
        inbound_id: int | None = None,
        about: Step | None = None,
        paused_too: bool = False,
    ) -> None:
        """Render, compose and put one mail in the outbox (see the module docstring). A
        player without an address (who sits only at silent seats) is never mailed: nothing
        is written for them. ``about``: the step the mail is about (see :meth:`context`)."""
        if player.email is None:
            return
        context = self.context(match, player, about, paused_too=paused_too, at=at)
        context.update(extra or {})
        error = context.get("error")
        if isinstance(error, dict) and context["names"]:  # an engine's reason names players by key
            context["error"] = {**error, "reason": named(error.get("reason"), context["names"])}
        step_mail = match is not None and kind == "step"
        deadline = None
        if match is not None and (step_mail or (kind == "organizer" and context.get("what") in MOVED_DEADLINE)):
            deadline = self._deadline_event(match, player, context, at)
        if step_mail:
            assert match is not None
            answers = answers_of(GAMES[match.game], match.state, player.key) if context["form"] else []
            link = self.match_url(match)
        else:
            answers, link = [], self._guide_url()
        domain = self.config.mail.domain
        message_id = make_message_id(dedupe, domain)
        references: list[str] = []
        if match is not None:
            root = make_message_id(f"thread:{match.key}:{player.key}", domain)
            if thread_root:
                message_id = root
            else:
                references.append(root)
        in_reply_to = None
        if reply_to_mail is not None and reply_to_mail.message_id:
            in_reply_to = reply_to_mail.message_id
            # RFC 5322 3.6.4: the parent's References (else its In-Reply-To: a client that writes
            # no References still names the mail of ours it answers), then its Message-ID;
            # compose keeps each id once and trims the chain
            references.extend(reply_to_mail.references)
            if not reply_to_mail.references and reply_to_mail.in_reply_to:
                references.append(reply_to_mail.in_reply_to)
            references.append(reply_to_mail.message_id)
        spec = MailSpec(
            game=match.game if match is not None else "common",
            kind=kind,
            context=context,
            envelope={
                "from_addr": self.config.mail.address,
                "from_name": self.config.mail.name,
                "to_addr": player.email,
                "to_name": player.name,
                "reply_to": context.get("reply_to"),
                "message_id": message_id,
                "date": at,
                "in_reply_to": in_reply_to,
                "references": references,
                "auto_submitted": "auto-replied" if reply_to_mail is not None else "auto-generated",
                "loop_value": self.loop_value,
            },
            # names a game's own view writes as they are: isolated in the mail too
            seats=tuple(s.player.name for s in match.seats) if match is not None else None,
            step_mail=step_mail,
            link=link,
            answers=tuple(answers),
            deadline=deadline,
            zone=player.zone,
            match_id=match.id if match is not None else None,
            match_key=match.key if match is not None else None,
        )
        deferred = rows.hook(session, _PRESS)  # the session's mails made together (defer)
        row = _outbox_row(
            dedupe,
            message_id,
            kind,
            player.email,
            make(spec) if deferred is None else None,
            at,
            match_id=match.id if match else None,
            step_key=context["step"]["key"] if context["step"] else None,
            step_title=context["step"]["title"] if context["step"] else None,
            inbound_id=inbound_id,
            form=context.get("form"),
            deadline=_promised(context["deadline_at"], at)
            if kind in NAMING_DEADLINE or (kind == "organizer" and context.get("what") in MOVED_DEADLINE)
            else None,
        )
        if deferred is not None:
            deferred.add(spec, row)  # the row's mail filled in when the batch's mails are made
        rows.add(session, OUTBOX, row)  # a plain row, written with the batch (referee.store.rows)

    def match_url(self, match: Match) -> str | None:
        """The match's page in the archive, when ``[archive] base_url`` says where it is published."""
        archive = self.config.archive
        if archive is None or not archive.base_url:
            return None
        from referee.archive.pages import segment

        return f"{archive.base_url}seasons/{segment(match.season.key)}/matches/{segment(match.key)}/"

    def _guide_url(self) -> str | None:
        """The archive's "For players" page (from which every page of the archive is a click
        away), which every mail but a step's links, when ``[archive] base_url`` is set."""
        archive = self.config.archive
        if archive is None or not archive.base_url:
            return None
        from referee.archive.pages import Paths

        return f"{archive.base_url}{Paths.GUIDE}"

    def _deadline_event(self, match: Match, player: Player, context: dict[str, Any], at: datetime) -> Deadline | None:
        """The iCalendar event (``referee.mail.calendar``) of the deadline the mail sets for
        ``player``: of the step the mail is about, when the player acts in it and it has a
        deadline still ahead; None otherwise."""
        step = context.get("step")
        if not step or not context.get("form"):
            return None
        listed = next((s for s in context["steps"] if s["key"] == step["key"]), None)
        if listed is None or player.key not in listed["players"]:
            return None
        deadline = next((e.deadline for e in opensteps.listed(match) if e.key == step["key"]), None)
        if deadline is None or deadline <= at:
            return None
        game = GAMES[match.game]
        return Deadline(
            season=match.season.key,
            match=match.key,
            step=step["key"],
            player=player.key,
            at=deadline,
            summary=summary(game.title, match.key, step["title"] or step["key"]),
            description=(
                f"Send your move for {step['title'] or step['key']} of {game.title} match {match.key} "
                f"by mail to {context.get('reply_to') or self.config.mail.address}."
            ),
            url=self.match_url(match),
            sequence=match.last_event_seq,
        )

    def mail_organizer(
        self,
        session: Session,
        kind: str,
        *,
        dedupe: str,
        at: datetime,
        extra: dict[str, Any],
        reply_to_mail: Headers | None = None,
        reply_to: str | None = None,
        inbound_id: int | None = None,
    ) -> bool:
        """Render ``templates/mail/common/<kind>.txt`` with *extra* and put it in the outbox for
        the organizer (``[mail] organizer``), once per *dedupe* key: a key already there (from
        this transaction, or another process's) writes nothing. False when no organizer is
        configured or the mail was there already. ``reply_to_mail``: the organizer's mail this
        one answers (threaded under it, ``Auto-Submitted: auto-replied``); ``reply_to``: the
        Reply-To address (the organizer's command address, for an answer to commands)."""
        organizer = self.config.mail.organizer
        if not organizer:
            return False
        rendered = render_mail("common", kind, extra)
        domain = self.config.mail.domain
        message_id = make_message_id(dedupe, domain)
        in_reply_to, references = None, []
        if reply_to_mail is not None and reply_to_mail.message_id:
            in_reply_to = reply_to_mail.message_id  # RFC 5322 3.6.4, as mail_player threads an answer
            references = [*reply_to_mail.references]
            if not reply_to_mail.references and reply_to_mail.in_reply_to:
                references.append(reply_to_mail.in_reply_to)
            references.append(reply_to_mail.message_id)
        data = compose(
            from_addr=self.config.mail.address,
            from_name=self.config.mail.name,
            to_addr=organizer,
            to_name="",
            reply_to=reply_to,
            subject=rendered.subject,
            text=rendered.text,
            message_id=message_id,
            date=at,
            in_reply_to=in_reply_to,
            references=references,
            auto_submitted="auto-replied" if reply_to_mail is not None else "auto-generated",
            loop_value=self.loop_value,
        )
        made = Made(data, as_shown(rendered.text))  # its shown text too, as the press keeps it
        values = _outbox_row(dedupe, message_id, kind, organizer, made, at, inbound_id=inbound_id)
        # Written now, not with the batch: the key is unique, and a second writer must find it.
        return rows.insert_once(session, OUTBOX, values, "dedupe_key")

    def context(
        self,
        match: Match | None,
        player: Player,
        about: Step | None = None,
        *,
        paused_too: bool = False,
        at: datetime | None = None,
    ) -> dict[str, Any]:
        """What a template sees. ``step`` is the step the mail is about: the open step the
        player may act in, else ``about`` (the step just opened, or reminded of), else the
        open step due first; ``deadline`` is its deadline in the player's time zone (None for
        a waiting step), to the second when it is not on a whole minute
        (:func:`~referee.timefmt.exact_time`). ``steps`` lists every open step (several in a
        game of concurrent steps), each with its deadline; of a paused match only with
        ``paused_too`` (a handover shows what the seat will have to do once the match goes on).

        ``passed`` (and each listed step's ``passed``): the deadline is at or before ``at``,
        the instant the mail is written. That happens to a step still open when the referee
        reads, after its deadline, a mail that arrived before it (the referee was down, the
        mailbox could not be read, or the mail came just before the deadline): timeliness
        is judged by arrival, and the step closes right after. A mail must then promise
        nothing of that time: the templates say the step has closed and that the next mail
        brings its results (``templates/mail/common/passed.txt``). ``arrived``: the arrival
        of the player's mail this one answers (set by the judge), ``open_before``: the keys
        of the steps open before its moves were applied (a receipt's step among them is the
        step the move was for; else a step the move opened)."""
        ctx: dict[str, Any] = {
            "player": person(player),
            "match": None,
            "opponent": None,
            "players": [],
            "view": None,
            "form": None,
            "step": None,
            "deadline": None,
            "steps": [],
            "result": None,
            "reply_to": None,
            "sealed": [],  # a receipt's seals of the moves it accepted (referee.match.seals)
            "revealed": None,  # the seals of the player's moves in the step that closed last
            "names": {},  # player key -> name: a mail names players, never by key (`| named(names)`)
            "next": [],  # the matches the season created to follow this one (referee.season)
            "passed": False,  # the step's deadline is at or before the instant the mail is written
            "deadline_at": None,  # that deadline as an instant (UTC), for the outbox row
            "arrived": None,  # the arrival of the player's mail this one answers, in their zone
            "open_before": [],  # a receipt: the steps open before the mail's moves were applied
        }
        if match is None:
            return ctx
        game = GAMES[match.game]
        seat = next(s for s in match.seats if s.player_id == player.id)
        others = [person(s.player) for s in match.seats if s.player_id != player.id]
        state = match.state
        showing = ("running", "paused") if paused_too else ("running",)
        steps = open_steps(game, state) if state is not None and match.status in showing else ()
        step = opensteps.step_for(steps, player.key, match.step_key, about)
        deadlines = {e.key: e.deadline for e in opensteps.listed(match)}
        step_deadline = deadlines.get(step.key) if step else None
        token = tokens.make_token(self.config.secret, seat.id, match.key, player.key)
        names = {s.player.key: isolate(s.player.name) for s in match.seats}
        result = match.result if match.status == "finished" else None
        if result is not None:  # the engines word the reason with keys; a mail names the players
            result = {**result, "reason": named(result.get("reason"), names)}
        ctx.update(
            {
                "match": {"id": match.key, "title": game.title, "game": game.name, "season": match.season.name},
                "opponent": others[0] if len(others) == 1 else None,
                "players": [person(s.player) for s in match.seats],
                "view": game.view(state, player.key) if state is not None else None,
                "form": game.form(state, player.key) if step is not None else None,
                "step": {"key": step.key, "kind": step.kind, "title": step.title} if step else None,
                "deadline": _local(step_deadline, player.zone),
                "passed": _passed(step_deadline, at),
                "deadline_at": step_deadline,
                "steps": [
                    {
                        "key": s.key,
                        "kind": s.kind,
                        "title": s.title,
                        "players": list(s.players),
                        "deadline": _local(deadlines.get(s.key), player.zone),
                        "passed": _passed(deadlines.get(s.key), at),
                    }
                    for s in steps
                ],
                "result": result,
                "names": names,
                "reply_to": tokens.reply_address(self.config.mail.local, self.config.mail.domain, token),
                "revealed": _revealed(match, player.key),
                "next": [_following(m, player) for m in match.followers] if match.kind else [],
            }
        )
        return ctx


def _season_news(match: Match) -> list[str]:
    """What the end of a match of the season frame brought, in words (names, never ids)."""
    names = {seat.player.key: isolate(seat.player.name) for seat in match.seats}
    result = match.result or {}
    news = [named(result.get("reason"), names)] if result.get("reason") else []
    if match.status == "cancelled":
        news.append("The organizer cancelled it: it has no result.")
    for seat in match.seats:
        if seat.player.eliminated_in == match.key:
            news.append(f"{isolate(seat.player.name)} lost this death match and is eliminated from the season.")
    for follower in match.followers:
        seats = [isolate(seat.player.name) for seat in follower.seats]
        if follower.kind == "nomination" and seats:
            news.append(f"{seats[0]} is the EC (elimination candidate) and is asked to nominate a DMO by mail.")
        elif follower.kind == "death" and len(seats) >= 2:
            news.append(
                f"{seats[1]} is the DMO: {seats[0]} and {seats[1]} play the death match "
                f"({GAMES[follower.game].title}, match {follower.key})."
            )
    return news


def _standing(row: Any, tz: str) -> dict[str, Any]:
    """A row of the standings as a mail shows it."""
    from datetime import datetime as _dt

    out = None
    if row.eliminated_at:
        out = local_time(_dt.fromisoformat(row.eliminated_at.replace("Z", "+00:00")), tz)
    return {
        "rank": row.rank,
        "name": isolate(row.name),
        "vp": f"{row.victory_points:g}",
        "chips": row.chips,
        "garnets": row.garnets,
        "cols": row.cols,
        "played": row.played,
        "eliminated_in": row.eliminated_in,
        "eliminated_at": out,
    }


def _following(match: Match, player: Player) -> dict[str, Any]:
    """A match the season created to follow another, as a mail to ``player`` tells of it
    (``against``: the other players of its first two seats, the EC's and the DMO's)."""
    others = [isolate(seat.player.name) for seat in match.seats[:2] if seat.player_id != player.id]
    return {
        "id": match.key,
        "title": GAMES[match.game].title,
        "kind": match.kind,
        "starts": exact_time(match.starts_at, player.zone),
        "against": " and ".join(others),
    }


def _local(at: datetime | None, tz: str) -> str | None:
    """A deadline in the player's zone, to the second when it is not on a whole minute."""
    return None if at is None else exact_time(at, tz)


def _passed(deadline: datetime | None, at: datetime | None) -> bool:
    """Has ``deadline`` passed at ``at``, the instant a mail is written (see :meth:`Notices.context`)?"""
    return deadline is not None and at is not None and deadline <= at


def _promised(deadline: datetime | None, at: datetime) -> datetime | None:
    """The deadline a mail written at ``at`` names as still to come (the outbox row's
    ``deadline``: delivery judges by it whether the mail comes too late, see
    :mod:`referee.pipeline.deliver`); None when it names none, or one already passed."""
    return deadline if deadline is not None and deadline > at else None


def _revealed(match: Match, player: str) -> dict[str, Any] | None:
    """The player's seals of the step that closed last: {"step": key, "seals": [...]}."""
    revealed = (match.seals or {}).get("revealed")
    if not revealed or not revealed["players"].get(player):
        return None
    return {"step": revealed["step"], "seals": revealed["players"][player]}


def person(player: Player) -> dict[str, str | None]:
    """A player as the templates see them; ``email`` is None for a player without an address."""
    return {"id": player.key, "name": isolate(player.name), "email": player.email, "timezone": player.zone}


def _outbox_row(
    dedupe: str,
    message_id: str,
    kind: str,
    to_addr: str,
    made: Made | None,
    at: datetime,
    *,
    match_id: int | None = None,
    step_key: str | None = None,
    step_title: str | None = None,
    inbound_id: int | None = None,
    form: str | None = None,
    deadline: datetime | None = None,
) -> dict[str, Any]:
    """An outbox row as a plain dict: a mail to send from ``at`` on (``deadline``: the
    step's deadline the mail names as still to come). ``made``: the mail, with its shown
    text; None: both filled in before the row is written (a batch's mails made together)."""
    message, shown = made if made is not None else (None, None)
    return {
        "shown": shown,
        "form": form or None,
        "deadline": deadline,
        "dedupe_key": dedupe,
        "message_id": message_id,
        "kind": kind,
        "match_id": match_id,
        "step_key": step_key,
        "step_title": step_title,
        "to_addr": to_addr,
        "inbound_id": inbound_id,
        "message": message,
        "status": "pending",
        "attempts": 0,
        "next_attempt_at": at,
        "created_at": at,
        "last_error": None,
        "sent_at": None,
    }


class _Deferred:
    """The mails a session defers (:meth:`Notices.defer`): a batch of the press (which hands
    them to its workers as they come) and their outbox rows, in the order they were written;
    called before the session's rows are written, it fills in the rows' mails."""

    def __init__(self, press: Press):
        self.press = press
        self.batch = press.batch()
        self.rows: list[dict[str, Any]] = []

    def add(self, spec: MailSpec, row: dict[str, Any]) -> None:
        self.batch.add(spec)
        self.rows.append(row)

    def __call__(self, _session: Session) -> None:
        if not self.rows:
            return
        batch, out = self.batch, self.rows
        self.batch, self.rows = self.press.batch(), []
        for row, made in zip(out, batch.finish(), strict=True):
            row["message"], row["shown"] = made
