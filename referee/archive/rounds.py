"""The closed rounds of a match, for the archive: what every game's public view calls its
``history`` (the settled rounds of a roulette match, the finished hands of a duel), each
with the instant that closed it.

The content comes from the stored state through ``view(state, None)``, the one path from a
state to anything public, so the archive shows exactly what the rules have revealed. The
instants come from the event log: the match is replayed from its seed, and each step
close that lengthens the public history stamps the new entries with its event's instant.
A game joins by keeping a ``history`` list of dicts in its public view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from referee.games.base import Game, open_steps
from referee.match.book import replayed

__all__ = ["Round", "match_rounds", "public_view"]


@dataclass(frozen=True)
class Round:
    number: int  # 1-based position in the public history
    entry: dict[str, Any]  # the public history entry, as view(state, None)["history"] has it
    closed_at: datetime  # the instant of the event that closed it (a deadline, or a mail's arrival)
    step_key: str | None  # the step whose close closed it


def public_view(game: Game, match: Any) -> dict[str, Any] | None:
    """``view(match.state, None)``; None before the match has started."""
    return None if match.state is None else game.view(match.state, None)


def match_rounds(game: Game, match: Any, events: Sequence[Any], view: dict[str, Any] | None = None) -> list[Round]:
    """The closed rounds of ``match`` (a Match row with its seats) from its events in seq
    order. ``view``: its public view, when the caller has it already."""
    view = public_view(game, match) if view is None else view
    history: list[dict[str, Any]] = [] if view is None else list(view.get("history") or [])
    if not history:
        return []
    closes = _closing_events(game, match, events, len(history))
    fallback = match.finished_at or (events[-1].at if events else match.starts_at)
    return [
        Round(
            number=i + 1,
            entry=entry,
            closed_at=closes[i][0] if i < len(closes) else fallback,
            step_key=closes[i][1] if i < len(closes) else None,
        )
        for i, entry in enumerate(history)
    ]


def _closing_events(game: Game, match: Any, events: Sequence[Any], wanted: int) -> list[tuple[datetime, str | None]]:
    """(instant, step key) of the event that closed each history entry, by replaying the
    log; the public view is computed only where a step closed (the history grows only then)."""
    closes: list[tuple[datetime, str | None]] = []
    keys: set[str] = set()
    for ev, state in replayed(game, match, events):
        after = {s.key for s in open_steps(game, state)}
        if ev is None or ev.kind not in ("move", "timeout", "forfeit"):  # what may change the state
            keys = after
            continue
        if after and keys <= after:
            continue  # every step open before is still open: nothing closed
        keys = after
        grown = len(game.view(state, None).get("history") or [])
        closes.extend((ev.at, ev.step_key) for _ in range(grown - len(closes)))
        if len(closes) >= wanted:
            break
    return closes
