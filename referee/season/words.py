"""What ``referee status`` shows of the season frame and the organizer's records, in words:
pure functions over rows, without the database layer (so that ``referee status`` imports
no SQLAlchemy). :mod:`referee.season.record` and :mod:`referee.season.frame` use them and
re-export them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from referee.timefmt import duration, local_time

__all__ = ["CONTROLS", "WAITING", "control_record", "sentence"]

WAITING = "waiting: "  # the start of Match.problem of a match of the live players that waits

# the events of a match that came from outside its rules (the organizer, the abandonment rule)
CONTROLS = ("cancel", "pause", "resume", "extend", "forfeit", "substitute", "announce")


def sentence(event: Any, names: dict[str, str]) -> str:
    """One season event in words (names, never ids); an announcement's text is for the
    players it went to, so the public record says only that it went out."""
    p = event.payload or {}
    if event.kind == "adjust":
        who = names.get(p.get("player", ""), p.get("player", ""))
        amount = int(p.get("amount", 0))
        return f"The organizer adjusted {who}'s {p.get('currency')} by {amount:+d}: {p.get('reason')}."
    if event.kind == "announce":
        return f"The organizer mailed an announcement to the {p.get('told', 0)} players of the season."
    return f"{event.kind}: {p}"


def control_record(events: Sequence[Any], names: dict[str, str]) -> list[tuple[datetime, str]]:
    """The match's record of what came from outside its rules, in words: the organizer's
    controls (``referee cancel``, ``pause``, ``resume``, ``extend``, ``forfeit``,
    ``substitute``) and the abandonment rule's forfeits. Their payloads hide nothing of the
    game (a reason, a time), so a running match shows them too."""
    out: list[tuple[datetime, str]] = []
    for ev in events:
        p = ev.payload or {}
        who = names.get(ev.player or "", ev.player or "")
        if ev.kind == "cancel":
            text = f"The organizer cancelled the match: {p.get('reason')}."
        elif ev.kind == "pause":
            text = f"The organizer paused the match: {p.get('reason')}."
        elif ev.kind == "resume":
            gone = duration(timedelta(seconds=float(p.get("paused_seconds") or 0)))
            text = f"The organizer resumed the match; its deadlines moved on by {gone}."
        elif ev.kind == "extend":
            more = duration(timedelta(seconds=float(p.get("seconds") or 0)))
            try:
                until = local_time(datetime.fromisoformat(str(p.get("deadline")).replace("Z", "+00:00")), "UTC")
            except ValueError:
                until = str(p.get("deadline"))
            text = f"The organizer gave {more} more time: the deadline is now {until}."
        elif ev.kind == "forfeit":
            if p.get("by") == "rule":
                text = f"{who} forfeits by the abandonment rule: {p.get('reason')}."
            else:
                text = f"The organizer recorded a forfeit by {who}: {p.get('reason')}."
        elif ev.kind == "announce":
            text = f"The organizer mailed an announcement to the {p.get('told', 0)} players of the match."
        elif ev.kind == "substitute":
            old, new = names.get(p.get("old"), p.get("old")), p.get("name") or names.get(p.get("new"), p.get("new"))
            text = f"The organizer handed {old}'s seat to {new}: {p.get('reason')}."
        else:
            continue
        out.append((ev.at, text))
    return out
