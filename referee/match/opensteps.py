"""The open steps of a match, as the match row keeps them.

Most games have one step open at a time; a game of concurrent steps (``GameType.concurrent``,
MatchJack's two tables) may have several, each opened at its own instant and closing at its
own deadline. ``matches.open_steps`` lists every open step in the game's order; the columns
``step_key``, ``step_kind``, ``step_opened_at`` and ``deadline`` are the one whose deadline
comes first (what the clock closes next, what ``referee status`` and the archive show first),
and ``remind_at`` the earliest reminder of any. A waiting step (``Step.waiting``) has no
deadline and no reminder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the rows are read without SQLAlchemy too (referee.status): any object with these columns
    from referee.games.base import Step
    from referee.store.models import Match

__all__ = ["OpenStep", "due", "first_reminder", "listed", "next_reminder", "step_for", "store"]


@dataclass
class OpenStep:
    key: str
    kind: str
    opened_at: datetime
    deadline: datetime | None  # None: a waiting step, which closes when the match moves on elsewhere
    remind_at: datetime | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "kind": self.kind,
            "opened_at": _text(self.opened_at),
            "deadline": _text(self.deadline),
            "remind_at": _text(self.remind_at),
        }


def _text(at: datetime | None) -> str | None:
    # full precision: a step opened by a mail opens at the mail's arrival, microseconds and all
    return None if at is None else at.astimezone(timezone.utc).isoformat()


def _instant(text: str | None) -> datetime | None:
    if text is None:
        return None
    at = datetime.fromisoformat(text)
    return at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)


# the columns :func:`listed` reads of a match (not its state), by name: what a query that
# only lists the open steps loads (the outbox's load_only, ``referee status``'s SELECT)
LISTED_COLUMNS = ("status", "open_steps", "step_key", "step_kind", "step_opened_at", "deadline", "remind_at")


def listed(match: Match) -> list[OpenStep]:
    """The match's open steps, in the game's order (none once it is over)."""
    if match.status != "running":
        return []
    if match.open_steps is None:  # written by a referee that kept one step in the columns only
        if match.step_key is None or match.step_opened_at is None:
            return []
        kind = match.step_kind or ""
        return [OpenStep(match.step_key, kind, match.step_opened_at, match.deadline, match.remind_at)]
    return [
        OpenStep(e["key"], e["kind"], _instant(e["opened_at"]), _instant(e["deadline"]), _instant(e["remind_at"]))  # type: ignore[arg-type]
        for e in match.open_steps
    ]


def store(match: Match, steps: Sequence[OpenStep]) -> None:
    """Keep ``steps`` as the match's open steps, and the columns of the one due first."""
    match.open_steps = [s.as_json() for s in steps]  # a new value: the JSON column sees the change
    first = due(steps)
    if first is None:
        first = steps[0] if steps else None
    match.step_key = first.key if first else None
    match.step_kind = first.kind if first else None
    match.step_opened_at = first.opened_at if first else None
    match.deadline = first.deadline if first else None
    match.remind_at = first_reminder(steps)


def due(steps: Sequence[OpenStep]) -> OpenStep | None:
    """The step whose deadline comes first (the first in the game's order among equals);
    None when no open step has a deadline."""
    timed = [s for s in steps if s.deadline is not None]
    return min(timed, key=lambda s: s.deadline) if timed else None  # type: ignore[arg-type,return-value]


def first_reminder(steps: Sequence[OpenStep]) -> datetime | None:
    pending = [s.remind_at for s in steps if s.remind_at is not None]
    return min(pending) if pending else None


def next_reminder(reminders: Sequence[float], step: OpenStep, *, after: datetime) -> datetime | None:
    """The earliest reminder instant of ``step`` still ahead of ``after`` (``reminders``: the
    match's offsets in seconds before a deadline); None for a waiting step."""
    if step.deadline is None:
        return None
    for offset in sorted(reminders, reverse=True):
        at = step.deadline - timedelta(seconds=offset)
        if at > after and at > step.opened_at:
            return at
    return None


def step_for(steps: Sequence[Step], player: str, due_key: str | None, about: Step | None = None) -> Step | None:
    """The open step that concerns ``player`` (where their move belongs, what a mail to them
    is about): the one they may act in, else ``about`` when it is open, else the one due
    first (``due_key``: the match's ``step_key``), else the first; None when none is open.
    In most games the one open step."""
    return (
        next((s for s in steps if player in s.players), None)
        or (about if about is not None and about in steps else None)
        or next((s for s in steps if s.key == due_key), steps[0] if steps else None)
    )
