"""What judging a stored inbound mail writes and shares: its row as read (:class:`MailRow`),
the :class:`Decision`, the one statement that writes a batch of decisions (:data:`DECIDE`),
and the small rules every kind of judged mail follows (the repeat window, a note fit for a
column, where a copy of our own mail begins in a reply). The judge
(:mod:`referee.pipeline.judge`) and its helpers import this; it imports none of them."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam
from sqlalchemy.orm import Session

from referee.mail.identity import bounded
from referee.mail.parse import Headers
from typing import Protocol
from referee.store.models import Inbound, Match, Player

if TYPE_CHECKING:
    from referee.config import ServiceConfig
    from referee.match.book import MatchBook
    from referee.match.notices import Notices
    from referee.pipeline.clock import Clock
    from referee.store.db import Store

log = logging.getLogger("referee.judge")

REPEAT_WINDOW = timedelta(days=7)  # the same text again within this time gets no second error


@dataclass
class Decision:
    status: str  # accepted | rejected | ignored
    rule: str | None = None
    note: str = ""


class MailRow:
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


DECIDE = (
    Inbound.__table__.update()
    .where(Inbound.__table__.c.id == bindparam("w_id"), Inbound.__table__.c.status == "pending")
    .values({name: bindparam(name) for name in MailRow.DECIDED})
)


def clean_note(note: str) -> str:
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


class Stages(Protocol):
    """What the judge's helpers (a seat's mail, the organizer's and the players' commands)
    use of the judge: the service's stages, and its limited replies."""

    store: Store
    config: ServiceConfig
    book: MatchBook
    notices: Notices
    clock: Clock

    def notice(
        self,
        session: Session,
        row: MailRow,
        limiter: Any,
        now: datetime,
        kind: str,
        match: Match | None,
        player: Player,
        *,
        head: Headers | None = None,
        extra: dict[str, Any],
        reason: str,
        repeatable: bool = True,
    ) -> bool: ...
