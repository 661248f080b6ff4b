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

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from referee.config import ServiceConfig
from referee.games import GAMES
from referee.mail import tokens
from referee.mail.compose import compose, make_message_id
from referee.mail.parse import Headers
from referee.match.book import next_reminder
from referee.render import render_mail
from referee.store import rows
from referee.store.models import Match, Outbox, Player
from referee.timefmt import duration, local_time

OUTBOX = Outbox.__table__

__all__ = ["Notices", "person"]


class Notices:
    def __init__(self, config: ServiceConfig):
        self.config = config
        self.loop_value = config.mail.domain

    def announce_step(
        self, session: Session, match: Match, at: datetime, *, first: bool = False, mover: str | None = None
    ) -> None:
        """The mail each player of the game's audience gets when a step opens (or the match
        ends): what happened, what to do now, by when. The first one of a match starts each
        player's thread. ``mover``, whose move opened the step, is not among them: the
        receipt for that move tells them (with the form when it is their turn again). A
        player without an address (at a silent seat) is never mailed."""
        step = match.step_key or "final"
        told = set(GAMES[match.game].audience(match.state)) - {mover}
        for seat in match.seats:
            if seat.player.key not in told or seat.player.email is None:
                continue
            self.mail_player(
                session,
                "step",
                match,
                seat.player,
                dedupe=f"step:{match.key}:{step}:{seat.player.key}",
                at=at,
                thread_root=first,
            )

    def remind(self, session: Session, match: Match, now: datetime) -> int:
        """Remind the players who still owe a submission, once per configured offset (a
        player without an address is never mailed)."""
        game = GAMES[match.game]
        offset = int((match.deadline - match.remind_at).total_seconds())
        sent = 0
        for seat in match.seats:
            if seat.player.key in game.awaiting(match.state) and seat.player.email is not None:
                self.mail_player(
                    session,
                    "reminder",
                    match,
                    seat.player,
                    at=now,
                    dedupe=f"reminder:{match.key}:{match.step_key}:{seat.player.key}:{offset}",
                    extra={"left": duration(match.deadline - now)},
                )
                sent += 1
        match.remind_at = next_reminder(match, after=now)
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
    ) -> None:
        """Render, compose and put one mail in the outbox (see the module docstring). A
        player without an address (who sits only at silent seats) is never mailed: nothing
        is written for them."""
        if player.email is None:
            return
        context = self.context(match, player)
        context.update(extra or {})
        game_name = match.game if match is not None else "common"
        rendered = render_mail(game_name, kind, context)
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
            references.extend(reply_to_mail.references)  # compose keeps each id once and trims the chain
            references.append(reply_to_mail.message_id)
        data = compose(
            from_addr=self.config.mail.address,
            from_name=self.config.mail.name,
            to_addr=player.email,
            to_name=player.name,
            reply_to=context.get("reply_to"),
            subject=rendered.subject,
            text=rendered.text,
            message_id=message_id,
            date=at,
            in_reply_to=in_reply_to,
            references=references,
            auto_submitted="auto-replied" if reply_to_mail is not None else "auto-generated",
            loop_value=self.loop_value,
        )
        rows.add(  # a plain row, written with the batch (referee.store.rows)
            session,
            OUTBOX,
            _outbox_row(
                dedupe,
                message_id,
                kind,
                player.email,
                data,
                at,
                match_id=match.id if match else None,
                step_key=match.step_key if match else None,
                step_title=context["step"]["title"] if context["step"] else None,
                inbound_id=inbound_id,
            ),
        )

    def mail_organizer(self, session: Session, kind: str, *, dedupe: str, at: datetime, extra: dict[str, Any]) -> bool:
        """Render ``templates/mail/common/<kind>.txt`` with *extra* and put it in the outbox for
        the organizer (``[mail] organizer``), once per *dedupe* key: a key already there (from
        this transaction, or another process's) writes nothing. False when no organizer is
        configured or the mail was there already."""
        organizer = self.config.mail.organizer
        if not organizer:
            return False
        rendered = render_mail("common", kind, extra)
        domain = self.config.mail.domain
        message_id = make_message_id(dedupe, domain)
        data = compose(
            from_addr=self.config.mail.address,
            from_name=self.config.mail.name,
            to_addr=organizer,
            to_name="",
            reply_to=None,
            subject=rendered.subject,
            text=rendered.text,
            message_id=message_id,
            date=at,
            auto_submitted="auto-generated",
            loop_value=self.loop_value,
        )
        values = _outbox_row(dedupe, message_id, kind, organizer, data, at)
        # Written now, not with the batch: the key is unique, and a second writer must find it.
        return rows.insert_once(session, OUTBOX, values, "dedupe_key")

    def context(self, match: Match | None, player: Player) -> dict[str, Any]:
        ctx: dict[str, Any] = {
            "player": person(player),
            "match": None,
            "opponent": None,
            "players": [],
            "view": None,
            "form": None,
            "step": None,
            "deadline": None,
            "result": None,
            "reply_to": None,
            "sealed": [],  # a receipt's seals of the moves it accepted (referee.match.seals)
            "revealed": None,  # the seals of the player's moves in the step that closed last
        }
        if match is None:
            return ctx
        game = GAMES[match.game]
        seat = next(s for s in match.seats if s.player_id == player.id)
        others = [person(s.player) for s in match.seats if s.player_id != player.id]
        state = match.state
        step = game.step(state) if state is not None else None
        token = tokens.make_token(self.config.secret, seat.id, match.key, player.key)
        ctx.update(
            {
                "match": {"id": match.key, "title": game.title, "game": game.name, "season": match.season.name},
                "opponent": others[0] if len(others) == 1 else None,
                "players": [person(s.player) for s in match.seats],
                "view": game.view(state, player.key) if state is not None else None,
                "form": game.form(state, player.key) if step is not None else None,
                "step": {"key": step.key, "kind": step.kind, "title": step.title} if step else None,
                "deadline": local_time(match.deadline, player.timezone) if step and match.deadline else None,
                "result": match.result if match.status == "finished" else None,
                "reply_to": tokens.reply_address(self.config.mail.local, self.config.mail.domain, token),
                "revealed": _revealed(match, player.key),
            }
        )
        return ctx


def _revealed(match: Match, player: str) -> dict[str, Any] | None:
    """The player's seals of the step that closed last: {"step": key, "seals": [...]}."""
    revealed = (match.seals or {}).get("revealed")
    if not revealed or not revealed["players"].get(player):
        return None
    return {"step": revealed["step"], "seals": revealed["players"][player]}


def person(player: Player) -> dict[str, str | None]:
    """A player as the templates see them; ``email`` is None for a player without an address."""
    return {"id": player.key, "name": player.name, "email": player.email, "timezone": player.timezone}


def _outbox_row(
    dedupe: str,
    message_id: str,
    kind: str,
    to_addr: str,
    message: bytes,
    at: datetime,
    *,
    match_id: int | None = None,
    step_key: str | None = None,
    step_title: str | None = None,
    inbound_id: int | None = None,
) -> dict[str, Any]:
    """An outbox row as a plain dict: a mail to send from ``at`` on."""
    return {
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
