"""``referee status``: what an organizer needs to know at a glance."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import selectinload

from referee.config import ConfigError
from referee.games import GAMES
from referee.store.db import Store
from referee.store.models import Inbound, Match, Outbox, Seat
from referee.timefmt import duration


def status_text(store: Store, now: datetime, match_key: str | None = None) -> str:
    lines: list[str] = []
    with store.unit_of_work() as session:
        query = (
            select(Match)
            .options(selectinload(Match.seats).selectinload(Seat.player), selectinload(Match.season))
            .order_by(Match.starts_at, Match.key)
        )
        if match_key:
            query = query.where(Match.key == match_key)
        matches = session.scalars(query).all()
        if match_key and not matches:
            raise ConfigError(f"no match {match_key!r}")
        if not matches:
            lines.append("No matches yet: load a season with `referee season load FILE.toml`.")
        for match in matches:
            lines.extend(match_lines(match, now))
            lines.append("")
        lines.extend(mail_lines(session))
    return "\n".join(lines).rstrip()


def match_lines(match: Match, now: datetime) -> list[str]:
    game = GAMES[match.game]
    players = [seat.player.key for seat in match.seats]
    out = [f"{match.key}  {game.title}  ({match.season.name})  {' vs '.join(players)}"]
    if match.status == "scheduled":
        out.append(
            f"  scheduled: starts {match.starts_at:%Y-%m-%d %H:%M} UTC"
            f" ({'due now' if match.starts_at <= now else 'in ' + duration(match.starts_at - now)})"
        )
        return out
    state = match.state
    for line in game.standings(state):
        out.append(f"  {line}")
    if match.status == "finished":
        result = match.result or {}
        out.append(f"  finished {match.finished_at:%Y-%m-%d %H:%M} UTC: {result.get('reason', '')}")
        return out
    step = game.step(state)
    title = step.title if step else match.step_key
    when = "overdue, closes at the next tick" if match.deadline <= now else f"in {duration(match.deadline - now)}"
    out.append(f"  {title}: deadline {match.deadline:%Y-%m-%d %H:%M} UTC ({when})")
    awaiting = set(game.awaiting(state))
    done = [p for p in (step.players if step else ()) if p not in awaiting]
    out.append(f"  submitted: {', '.join(done) or 'nobody yet'}; awaiting: {', '.join(sorted(awaiting)) or 'nobody'}")
    if match.remind_at:
        out.append(f"  next reminder {match.remind_at:%Y-%m-%d %H:%M} UTC")
    return out


def mail_lines(session) -> list[str]:
    inbound = dict(session.execute(select(Inbound.status, func.count()).group_by(Inbound.status)).all())
    outbox = dict(session.execute(select(Outbox.status, func.count()).group_by(Outbox.status)).all())
    lines = [
        "mail in:  " + (", ".join(f"{k} {v}" for k, v in sorted(inbound.items())) or "none yet"),
        "mail out: " + (", ".join(f"{k} {v}" for k, v in sorted(outbox.items())) or "none yet"),
    ]
    failed = session.scalars(select(Outbox).where(Outbox.status == "failed").order_by(Outbox.id.desc()).limit(5)).all()
    for row in failed:
        lines.append(f"  undeliverable to {row.to_addr} after {row.attempts} attempts: {row.last_error}")
    broken = session.scalars(
        select(Inbound).where(Inbound.status == "failed").order_by(Inbound.id.desc()).limit(5)
    ).all()
    for row in broken:
        lines.append(f"  inbound {row.id} ({row.message_key}) failed: {row.note}")
    return lines


def requeue_failed(store: Store, *, inbound: bool, outbound: bool) -> tuple[int, int]:
    """Put failed mail back in line: inbound to be processed again (judged by its arrival time
    against the step open now), outbound to be delivered again with a fresh set of attempts."""
    counts = [0, 0]
    with store.unit_of_work() as session:
        if inbound:
            result = session.execute(
                update(Inbound).where(Inbound.status == "failed").values(status="pending", processed_at=None)
            )
            counts[0] = result.rowcount
        if outbound:
            result = session.execute(
                update(Outbox).where(Outbox.status == "failed").values(status="pending", attempts=0)
            )
            counts[1] = result.rowcount
    return counts[0], counts[1]
