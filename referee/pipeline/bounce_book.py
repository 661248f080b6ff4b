"""Bounces: recorded per recipient, and the organizer told once when a player's address keeps bouncing.

Two ways a mail of ours is known not to have arrived:

* a **bounce** comes back (judged before the RFC 3834 guards, :meth:`BounceBook.judge`): a
  mail to one of the outbox's signed bounce addresses (:mod:`referee.mail.bounces`), read as
  a delivery report or as a plain bounce, names its outbox row and so its recipient; a
  delivery report to any other address is recorded too, but *unverified* (anyone can write
  one), and counts for nothing. A mail to a bounce address is never answered, whatever it is;
* the transport refuses it for good (a 5xx at RCPT or after the data: :meth:`BounceBook.refused`,
  called by :mod:`referee.pipeline.deliver` in the transaction that marks the row failed).

Each is a :class:`~referee.store.models.Bounce` row. A **hard** one (failed, no 4.x.x status)
of a verified kind counts: when ``[mail] bounce_limit`` outbox mails to one player's address
failed so within ``[mail] bounce_window``, the organizer (``[mail] organizer``) is told by
mail, once per player and address, in the same transaction (without an organizer, a
warning is logged instead). The outbox row of a hard bounce is marked ``bounced``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from referee.games import GAMES
from referee.mail import bounces
from referee.mail.bounces import Recipient, Report
from referee.mail.parse import Headers
from referee.pipeline.unreachable import unreachable_key
from referee.store.models import Bounce, Match, Outbox, Player, Seat
from referee.timefmt import duration

if TYPE_CHECKING:
    from referee.config import ServiceConfig
    from referee.match.notices import Notices

__all__ = ["BounceBook", "Judged", "unreachable_key"]

log = logging.getLogger("referee.bounces")

RECENT_ERRORS = 5  # errors listed in the organizer's mail
ERROR_WIDTH = 300  # characters of each

_BOUNCES = Bounce.__table__
_OUTBOX = Outbox.__table__


@dataclass(frozen=True)
class Judged:
    """What became of a mail the bounce book took: ``ignored`` by ``rule`` (None: the mail was
    to a bounce address but is no bounce of ours; the RFC 3834 rule that holds, else
    ``bounce-address``), with a note; the match and player it was about, when known."""

    rule: str | None
    note: str
    match_id: int | None = None
    player_id: int | None = None


class BounceBook:
    def __init__(self, config: ServiceConfig, notices: Notices):
        self.config = config
        self.notices = notices

    # ------------------------------------------------------------------ inbound

    def judge(self, session: Session, row: Any, head: Headers, now: datetime) -> Judged | None:
        """A bounce (recorded), a mail to a bounce address (never answered), else None (the
        judge goes on). ``row``: the stored inbound mail (``id``, ``raw``, ``received_at``).
        Ordinary mail costs a look at its recipients and its Content-Type."""
        mail = self.config.mail
        found = bounces.find_bounce_addresses(self.config.secret, head.to_addrs, mail.local, mail.domain)
        if found:
            genuine = next((b for b in found if b.outbox_id is not None), None)
            outbox = None
            if genuine is not None:
                outbox = session.execute(
                    select(Outbox.id, Outbox.to_addr, Outbox.match_id).where(Outbox.id == genuine.outbox_id)
                ).first()
            if outbox is None:
                log.info("inbound %s: to a forged or unknown bounce address %s; ignored", row.id, found[0].address)
                return Judged(None, f"sent to a forged or unknown bounce address ({found[0].address}); never answered")
            report = bounces.read_bounce(row.raw, head)
            if report is None:
                return Judged(
                    None,
                    f"to the bounce address of outbox {outbox.id} ({outbox.to_addr}), but no bounce"
                    " (an auto-reply?); never answered",
                    match_id=outbox.match_id,
                )
            return self._bounced(session, row, report, outbox, now)
        if not bounces.looks_like_report(head):
            return None
        report = bounces.read_report(row.raw)
        if report is None:
            return None  # a read receipt, or a report that cannot be read: the guards ignore it
        return self._bounced(session, row, report, None, now)

    def _bounced(self, session: Session, row: Any, report: Report, outbox: Any, now: datetime) -> Judged | None:
        """Record what *report* says, per recipient; for a bounce address's own row (*outbox*)
        the recipient is the row's (a report names it as it was on its way, perhaps after a
        forward), and a hard failure counts."""
        entries: list[dict[str, Any]] = []
        counted: list[tuple[Player, str]] = []
        single = len(report.recipients) == 1
        for recipient in report.recipients:
            mine = outbox is not None and (
                single or recipient.address == outbox.to_addr or recipient.final_recipient == outbox.to_addr
            )
            address = outbox.to_addr if mine else recipient.address
            if not address:
                continue
            player = self._player(session, address, outbox.match_id if mine else None)
            entries.append(
                _entry(
                    recipient,
                    address=address,
                    outbox_id=outbox.id if outbox is not None else None,
                    player=player,
                    source=report.kind,
                    verified=mine,
                    at=row.received_at,
                    inbound_id=row.id,
                )
            )
            if mine and recipient.hard and player is not None:
                counted.append((player, address))
        if not entries:
            return None
        session.connection().execute(insert(_BOUNCES), entries)
        first = entries[0]
        if outbox is not None and any(e["hard"] and e["verified"] for e in entries):
            session.connection().execute(
                update(_OUTBOX)
                .where(_OUTBOX.c.id == outbox.id, _OUTBOX.c.status == "sent")
                .values(status="bounced", last_error=_describe(first))
            )
        for player, address in dict.fromkeys(counted):
            self._unreachable(session, player, address, now)
        described = "; ".join(f"{e['address']}: {_describe(e)}" for e in entries[:3])
        if outbox is not None:
            note = f"bounce for outbox {outbox.id}: {described}"
        else:
            note = f"delivery report to an address that names no outbox mail (unverified, not counted): {described}"
        log.info("inbound %s: %s", row.id, note)
        return Judged(
            "bounce",
            note,
            match_id=outbox.match_id if outbox is not None else None,
            player_id=first["player_id"],
        )

    # ------------------------------------------------------------------ the transport's refusals

    def refused(self, session: Session, refusals: list[dict[str, Any]], now: datetime) -> None:
        """The transport refused these outbox mails for good (``outbox_id``, ``to_addr``,
        ``match_id``, ``detail``: the server's reply): each a hard bounce of its recipient."""
        entries = []
        counted: list[tuple[Player, str]] = []
        for refusal in refusals:
            address = refusal["to_addr"].lower()
            detail = refusal["detail"] or "refused"
            player = self._player(session, address, refusal["match_id"])
            recipient = Recipient(
                address,
                action="failed",
                status=bounces.smtp_status(detail) or "5.0.0",
                diagnostic=" ".join(detail.split())[: bounces.DIAGNOSTIC_LIMIT],
            )
            entries.append(
                _entry(
                    recipient,
                    address=address,
                    outbox_id=refusal["outbox_id"],
                    player=player,
                    source="refused",
                    verified=True,
                    at=now,
                    inbound_id=None,
                )
            )
            if player is not None and recipient.hard:
                counted.append((player, address))
        if not entries:
            return
        session.connection().execute(insert(_BOUNCES), entries)
        for player, address in dict.fromkeys(counted):
            self._unreachable(session, player, address, now)

    # ------------------------------------------------------------------ the unreachable rule

    def _unreachable(self, session: Session, player: Player, address: str, now: datetime) -> None:
        mail = self.config.mail
        since = now - mail.bounce_window
        count = session.scalar(
            select(func.count(func.distinct(Bounce.outbox_id))).where(
                Bounce.address == address,
                Bounce.hard.is_(True),
                Bounce.verified.is_(True),
                Bounce.received_at >= since,
            )
        )
        if count < mail.bounce_limit:
            return
        key = unreachable_key(player.id, address)
        if session.scalar(select(Outbox.id).where(Outbox.dedupe_key == key)) is not None:
            return  # told already
        window = duration(mail.bounce_window)
        if not mail.organizer:
            log.warning(
                "player %s is unreachable at %s: %d mails to it failed for good within %s;"
                " no [mail] organizer is configured to tell",
                player.key,
                address,
                count,
                window,
            )
            return
        errors = session.execute(
            select(Bounce.received_at, Bounce.action, Bounce.status, Bounce.diagnostic)
            .where(Bounce.address == address, Bounce.hard.is_(True), Bounce.verified.is_(True))
            .order_by(Bounce.received_at.desc(), Bounce.id.desc())
            .limit(RECENT_ERRORS)
        ).all()
        running = session.scalars(
            select(Match)
            .join(Seat, Seat.match_id == Match.id)
            .where(Seat.player_id == player.id, Match.status == "running")
            .order_by(Match.key)
        ).all()
        extra = {
            "player": {"id": player.key, "name": player.name, "email": player.email},
            "season": player.season.name,
            "address": address,
            "count": count,
            "limit": mail.bounce_limit,
            "window": window,
            "errors": [
                {
                    "at": f"{at:%Y-%m-%d %H:%M}",
                    "action": action,
                    "status": status or "",
                    "diagnostic": (diagnostic or "")[:ERROR_WIDTH],
                }
                for at, action, status, diagnostic in errors
            ],
            "matches": [{"id": m.key, "title": GAMES[m.game].title} for m in running],
        }
        if self.notices.mail_organizer(session, "unreachable", dedupe=key, at=now, extra=extra):
            log.warning(
                "player %s is unreachable at %s (%d hard bounces within %s): the organizer %s is told",
                player.key,
                address,
                count,
                window,
                mail.organizer,
            )

    @staticmethod
    def _player(session: Session, address: str, match_id: int | None) -> Player | None:
        """The player the address is of: the one of the match the mail was about, else the
        latest player with that address."""
        query = select(Player).where(Player.email == address)
        if match_id is not None:
            found = session.scalars(
                query.join(Seat, Seat.player_id == Player.id).where(Seat.match_id == match_id).limit(1)
            ).first()
            if found is not None:
                return found
        return session.scalars(query.order_by(Player.id.desc()).limit(1)).first()


def _entry(
    recipient: Recipient,
    *,
    address: str,
    outbox_id: int | None,
    player: Player | None,
    source: str,
    verified: bool,
    at: datetime,
    inbound_id: int | None,
) -> dict[str, Any]:
    return {
        "outbox_id": outbox_id,
        "player_id": player.id if player is not None else None,
        "address": address[:320],
        "action": recipient.action[:32],
        "status": recipient.status or None,
        "diagnostic": recipient.diagnostic or None,
        "source": source,
        "hard": recipient.hard,
        "verified": verified,
        "received_at": at,
        "inbound_id": inbound_id,
    }


def _describe(entry: dict[str, Any]) -> str:
    """``failed 5.1.1 (550 5.1.1 no such user)``."""
    text = entry["action"] or "no action given"
    if entry["status"]:
        text += f" {entry['status']}"
    if entry["diagnostic"]:
        text += f" ({entry['diagnostic'][:200]})"
    return text
