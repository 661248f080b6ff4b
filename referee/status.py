"""``referee status``: what an organizer needs to know at a glance."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, load_only, selectinload

from referee.config import ConfigError, MailConfig
from referee.games import GAMES
from referee.games.base import open_steps
from referee.mail import tokens
from referee.match import opensteps
from referee.pipeline.bounce_book import unreachable_key
from referee.store.db import Store
from referee.season.frame import WAITING
from referee.season.record import CONTROLS, control_record, season_events, sentence
from referee.store.models import Bounce, Event, InboxProblem, Inbound, Match, Outbox, Player, Season, Seat
from referee.timefmt import duration


def status_text(
    store: Store,
    now: datetime,
    match_key: str | None = None,
    *,
    mail: MailConfig | None = None,
    secret: bytes | None = None,
) -> str:
    """``mail``: the configuration's ``[mail]``, for the unreachable rule (its defaults without);
    with ``secret`` too, and ``[mail] organizer`` set, the organizer's command address."""
    with store.unit_of_work() as session:
        return status_of(session, now, match_key, mail=mail, secret=secret)


def organizer_line(mail: MailConfig | None, secret: bytes | None) -> list[str]:
    """The organizer's command address (docs/organizer-mail.md), when there is an organizer."""
    if mail is None or secret is None or not mail.organizer:
        return []
    address = tokens.organizer_address(secret, mail.local, mail.domain, mail.organizer)
    return [f"organizer commands by mail: {address}"]


def status_of(
    session: Session,
    now: datetime,
    match_key: str | None = None,
    *,
    mail: MailConfig | None = None,
    secret: bytes | None = None,
) -> str:
    """:func:`status_text` in the caller's unit of work (a STATUS command by mail: the judge's)."""
    lines: list[str] = []
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
    record = _control_events(session, [m.id for m in matches])
    for match in matches:
        lines.extend(match_lines(match, now))
        names = {p.key: p.name for p in match.season.players}
        for at, text in control_record(record.get(match.id, []), names)[-RECORD_LINES:]:
            lines.append(f"  {at:%Y-%m-%d %H:%M} UTC: {text}")
        lines.append("")
    lines.extend(season_record_lines(session, {m.season_id: m.season for m in matches}))
    lines.extend(mail_lines(session, now))
    limit, window = (mail.bounce_limit, mail.bounce_window) if mail else (3, timedelta(days=7))
    lines.extend(bounce_lines(session, now, limit, window))
    lines.extend(organizer_line(mail, secret))
    return "\n".join(lines).rstrip()


RECORD_LINES = 3  # the latest entries of a match's or season's organizer's record shown


def _control_events(session: Session, ids: list[int]) -> dict[int, list[Event]]:
    """The events from outside the rules (the organizer's controls, the abandonment rule) of
    these matches, by match, in order: one query."""
    found: dict[int, list[Event]] = {}
    for start in range(0, len(ids), 500):
        for event in session.scalars(
            select(Event)
            .where(Event.match_id.in_(ids[start : start + 500]), Event.kind.in_(CONTROLS))
            .order_by(Event.match_id, Event.seq)
        ):
            found.setdefault(event.match_id, []).append(event)
    return found


def season_record_lines(session: Session, seasons: dict[int, Season]) -> list[str]:
    """The latest entries of each season's own record (adjustments, announcements)."""
    out: list[str] = []
    for season_id, season in sorted(seasons.items()):
        events = season_events(session, season_id)
        if not events:
            continue
        names = {p.key: p.name for p in season.players}
        count = "1 entry" if len(events) == 1 else f"{len(events)} entries"
        out.append(f"The organizer's record of {season.name} ({count}; the latest):")
        for event in events[-RECORD_LINES:]:
            out.append(f"  {event.at:%Y-%m-%d %H:%M} UTC: {sentence(event, names)}")
        out.append("")
    return out


def match_lines(match: Match, now: datetime) -> list[str]:
    game = GAMES[match.game]
    roles = game.game_type.roles
    silent_roles = set(game.game_type.silent_roles)
    seats = [(seat.player.key, roles[min(i, len(roles) - 1)]) for i, seat in enumerate(match.seats)]
    players = [key for key, role in seats if role not in silent_roles]  # the seats that play
    who = " vs ".join(players) or ("the live players at its start" if match.seating == "live" else "no players")
    out = [f"{match.key}  {game.title}  ({match.season.name})  {who}"]
    silent = [key for key, role in seats if role in silent_roles]
    if silent:  # seats that never act (Betting Minority's participants)
        out.append(f"  {', '.join(sorted(silent_roles))}s (never act): {', '.join(silent)}")
    addressless = [seat.player.key for seat in match.seats if seat.player.email is None]
    if addressless:  # players at silent seats may have no address: nobody mails them
        out.append(f"  no address (never mailed): {', '.join(addressless)}")
    if match.status == "scheduled":
        out.append(
            f"  scheduled: starts {match.starts_at:%Y-%m-%d %H:%M} UTC"
            f" ({'due now' if match.starts_at <= now else 'in ' + duration(match.starts_at - now)})"
        )
        if match.problem and match.problem.startswith(WAITING):  # a match of the live players
            out.append(f"  {match.problem}")
        elif match.problem:  # its start failed: tried again after the next season load
            out.append(f"  START FAILED, {match.problem}; fix the season file and load it again")
        return out
    if match.status == "cancelled":
        out.append(f"  cancelled {match.finished_at:%Y-%m-%d %H:%M} UTC by the organizer")
        return out
    state = match.state
    if match.status == "paused":
        out.append("  PAUSED by the organizer: no deadline passes until `referee resume " + match.key + "`")
    for line in game.standings(state):
        out.append(f"  {line}")
    if match.status == "finished":
        result = match.result or {}
        out.append(f"  finished {match.finished_at:%Y-%m-%d %H:%M} UTC: {result.get('reason', '')}")
        return out
    steps = {s.key: s for s in open_steps(game, state)}
    awaiting = set(game.awaiting(state))
    for entry in opensteps.listed(match):  # one open step, or several at once in a game of concurrent steps
        step = steps.get(entry.key)
        title = step.title if step else entry.key
        if entry.deadline is None:
            out.append(f"  {title}: waiting, no deadline (it ends when the match moves on elsewhere)")
            continue
        overdue = entry.deadline <= now
        when = "overdue, closes at the next tick" if overdue else f"in {duration(entry.deadline - now)}"
        if match.status == "paused":
            when = "as it stands: it moves on by the time paused when the match resumes"
        out.append(f"  {title}: deadline {entry.deadline:%Y-%m-%d %H:%M} UTC ({when})")
        players = step.players if step else ()
        done = [p for p in players if p not in awaiting]
        owed = sorted(p for p in awaiting if p in players)
        out.append(f"  submitted: {', '.join(done) or 'nobody yet'}; awaiting: {', '.join(owed) or 'nobody'}")
    if match.remind_at and match.status == "running":  # a pause moves it on with the deadlines
        out.append(f"  next reminder {match.remind_at:%Y-%m-%d %H:%M} UTC")
    return out


def mail_lines(session, now: datetime | None = None) -> list[str]:
    """Mail queues, and what is wrong with them: quarantined mail with its reason, mail
    waiting for delivery with its last error (and what it waits for), step mails not
    delivered by their deadline (with ``now``), inbox files that cannot be read."""
    inbound = dict(session.execute(select(Inbound.status, func.count()).group_by(Inbound.status)).all())
    outbox = dict(session.execute(select(Outbox.status, func.count()).group_by(Outbox.status)).all())
    lines = [
        "mail in:  " + (", ".join(f"{k} {v}" for k, v in sorted(inbound.items())) or "none yet"),
        "mail out: " + (", ".join(f"{k} {v}" for k, v in sorted(outbox.items())) or "none yet"),
    ]
    quarantined = session.scalars(
        select(Inbound).where(Inbound.status == "quarantined").order_by(Inbound.id.desc()).limit(5)
    ).all()
    if quarantined:
        lines.append(
            f"  quarantined inbound mail: {inbound.get('quarantined', 0)}"
            " (`referee quarantine` lists them; `referee quarantine --requeue ID` after a fix)"
        )
    for row in quarantined:
        lines.append(f"    inbound {row.id} from {row.sender or '?'} ({row.source}): {row.note}")
    retrying = session.scalars(
        select(Outbox)
        .where(Outbox.status == "pending", Outbox.last_error.is_not(None))
        .order_by(Outbox.next_attempt_at)
        .limit(5)
    ).all()
    if retrying:
        count = session.scalar(
            select(func.count()).select_from(Outbox).where(Outbox.status == "pending", Outbox.last_error.is_not(None))
        )
        causes = dict(
            session.execute(
                select(Outbox.fail_cause, func.count())
                .where(Outbox.status == "pending", Outbox.last_error.is_not(None))
                .group_by(Outbox.fail_cause)
            ).all()
        )
        why = ", ".join(f"{WAITING_FOR.get(cause, WAITING_FOR[None])} {n}" for cause, n in sorted_causes(causes))
        lines.append(f"  waiting for another delivery attempt: {count} ({why}; `referee requeue` retries them now)")
    for row in retrying:
        lines.append(
            f"    to {row.to_addr}: {row.attempts} attempt(s), next {row.next_attempt_at:%Y-%m-%d %H:%M} UTC;"
            f" last error: {row.last_error}"
        )
    failed = session.scalars(select(Outbox).where(Outbox.status == "failed").order_by(Outbox.id.desc()).limit(5)).all()
    for row in failed:
        lines.append(f"  undeliverable to {row.to_addr} after {row.attempts} attempts: {row.last_error}")
    if now is not None:
        lines.extend(late_step_mail_lines(session, now))
    problems = session.scalars(select(InboxProblem).order_by(InboxProblem.first_seen).limit(5)).all()
    if problems:
        count = session.scalar(select(func.count()).select_from(InboxProblem))
        lines.append(f"  inbox files the referee cannot handle: {count} (skipped; fix their owner or mode)")
    for problem in problems:
        lines.append(
            f"    {problem.source}: {problem.reason} (since {problem.first_seen:%Y-%m-%d %H:%M} UTC, {problem.count}x)"
        )
    return lines


# what mail waiting for another attempt waits for, by the cause of its last failure
# (referee.pipeline.deliver)
WAITING_FOR = {
    "disk": "for the outbox disk",
    "server": "for the mail server",
    "recipient": "for their recipients' servers",
    None: "after other errors",
}


def sorted_causes(causes: dict) -> list[tuple]:
    order = list(WAITING_FOR)
    return sorted(causes.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order))


LATE_STEP_MAILS = 5  # step mails past their deadline listed by status (the most recent first)


def late_step_mail_lines(session, now: datetime) -> list[str]:
    """Step mails (the mail that opens a step with its deadline) not delivered (waiting for
    another attempt, or given up) although their step's deadline has passed: the step's
    deadline while it is open, else the one delivery kept in the row (a step mail never
    tried, whose step is over, says that instead)."""
    rows = session.execute(
        select(Outbox.id, Outbox.to_addr, Outbox.step_key, Outbox.step_title, Outbox.deadline, Outbox.status, Match)
        .join(Match, Match.id == Outbox.match_id)
        .where(Outbox.kind == "step", Outbox.status.in_(("pending", "failed")))
        .order_by(Outbox.id.desc())
        .options(load_only(Match.key, *opensteps.LISTED_COLUMNS))  # not the state: what opensteps.listed reads
    ).all()
    late: list[str] = []
    for row in rows:
        match = row.Match
        open_now = {step.key: step for step in opensteps.listed(match)}
        step = open_now.get(row.step_key)
        deadline = step.deadline if step is not None else row.deadline
        what = f"{match.key}/{row.step_key}" + (f" ({row.step_title})" if row.step_title else "")
        how = "given up" if row.status == "failed" else "still tried"
        if deadline is not None and deadline <= now:
            late.append(
                f"  step mail to {row.to_addr} for {what} not delivered ({how}); its deadline passed at"
                f" {deadline:%Y-%m-%d %H:%M} UTC"
            )
        elif step is None and deadline is None:
            late.append(f"  step mail to {row.to_addr} for {what} not delivered ({how}); its step is over")
    if len(late) > LATE_STEP_MAILS:
        shown = late[:LATE_STEP_MAILS]
        shown.append(f"  ... and {len(late) - LATE_STEP_MAILS} more step mails not delivered by their deadline")
        return shown
    return late


def bounce_lines(session, now: datetime, limit: int, window: timedelta) -> list[str]:
    """Bounces of the last ``window``: the verified ones (they name their outbox mail by a
    signed bounce address, or our transport said it) apart from the unverified delivery
    reports (anyone can write one: they count for nothing), how many of each; the
    unreachable addresses (``limit`` hard verified bounces or more:
    :mod:`referee.pipeline.bounce_book`); the latest five verified, the latest three
    unverified."""
    since = now - window
    within = (Bounce.received_at >= since, Bounce.received_at <= now)
    total, hard, unverified = session.execute(
        select(
            func.count(Bounce.id).filter(Bounce.verified.is_(True)),
            func.count(Bounce.id).filter(Bounce.verified.is_(True), Bounce.hard.is_(True)),
            func.count(Bounce.id).filter(Bounce.verified.is_not(True)),
        ).where(*within)
    ).one()
    if not (total or unverified):
        return []
    lines = [f"  bounces in the last {duration(window)}: {total} ({hard} hard)"]
    unreachable = session.execute(
        select(Bounce.address, func.count(func.distinct(Bounce.outbox_id)), func.max(Bounce.received_at))
        .where(Bounce.received_at >= since, Bounce.hard.is_(True), Bounce.verified.is_(True))
        .group_by(Bounce.address)
        .having(func.count(func.distinct(Bounce.outbox_id)) >= limit)
        .order_by(Bounce.address)
        .limit(20)
    ).all()
    for address, count, last in unreachable:
        players = session.execute(
            select(Player.id, Player.key).where(Player.email == address).order_by(Player.key)
        ).all()
        keys = [unreachable_key(player_id, address) for player_id, _ in players]
        told = bool(keys) and session.scalar(
            select(func.count()).select_from(Outbox).where(Outbox.dedupe_key.in_(keys))
        )
        lines.append(
            f"  unreachable: {', '.join(key for _, key in players) or 'no player now'} at {address}:"
            f" {count} mails failed for good,"
            f" the last {last:%Y-%m-%d %H:%M} UTC; {'the organizer was told' if told else 'the organizer was not told'}"
        )
    verified = select(Bounce).where(*within, Bounce.verified.is_(True))
    for row in session.scalars(verified.order_by(Bounce.received_at.desc(), Bounce.id.desc()).limit(5)):
        lines.append(_bounce_line(row))
    if unverified:
        lines.append(
            f"  unverified delivery reports in the last {duration(window)}: {unverified}"
            " (to the plain address: anyone can write one, so they count for nothing)"
        )
        others = select(Bounce).where(*within, Bounce.verified.is_not(True))
        for row in session.scalars(others.order_by(Bounce.received_at.desc(), Bounce.id.desc()).limit(3)):
            lines.append(_bounce_line(row))
    return lines


def _bounce_line(row: Bounce) -> str:
    what = row.action + (f" {row.status}" if row.status else "")
    where = f"outbox {row.outbox_id}" if row.outbox_id is not None else "no outbox mail named"
    how = {"dsn": "report", "plain": "bounce", "refused": "refused by the server"}.get(row.source, row.source)
    return f"    {row.received_at:%Y-%m-%d %H:%M} UTC {row.address} ({where}, {how}): {what}" + (
        f": {row.diagnostic[:200]}" if row.diagnostic else ""
    )


def quarantine_text(store: Store) -> str:
    """Every quarantined inbound mail with why it is there."""
    with store.unit_of_work() as session:
        rows = session.scalars(select(Inbound).where(Inbound.status == "quarantined").order_by(Inbound.id)).all()
        if not rows:
            return "No quarantined mail."
        out = [f"{len(rows)} quarantined mail(s); after fixing the cause: referee quarantine --requeue ID (or all)"]
        for row in rows:
            out.append(
                f"inbound {row.id}: arrived {row.received_at:%Y-%m-%d %H:%M:%S} UTC, from {row.sender or '?'},"
                f" file {row.source}, Message-ID {row.message_id or '(none)'}, {row.attempts} failed attempt(s)"
            )
            out.append(f"  why: {row.note}")
        return "\n".join(out)


def requeue_quarantined(store: Store, ids: list[int] | None) -> int:
    """Put quarantined mail back in line (all of it when ``ids`` is None): judged again by
    its arrival time against the step open now."""
    with store.unit_of_work() as session:
        query = update(Inbound).where(Inbound.status == "quarantined")
        if ids is not None:
            query = query.where(Inbound.id.in_(ids))
        return session.execute(query.values(status="pending", attempts=0, processed_at=None, rule=None)).rowcount


def requeue_failed(store: Store, *, inbound: bool, outbound: bool, now: datetime | None = None) -> tuple[int, int]:
    """Put failed mail back in line: inbound to be judged again (by its arrival time against
    the step open now), outbound to be delivered again with a fresh set of attempts. With
    ``now``, outbound mail waiting for a retry is also made due now."""
    counts = [0, 0]
    if inbound:
        counts[0] = requeue_quarantined(store, None)
    with store.unit_of_work() as session:
        if outbound:
            result = session.execute(
                update(Outbox).where(Outbox.status == "failed").values(status="pending", attempts=0)
            )
            counts[1] = result.rowcount
            if now is not None:
                result = session.execute(
                    update(Outbox)
                    .where(Outbox.status == "pending", Outbox.next_attempt_at > now)
                    .values(next_attempt_at=now)
                )
                counts[1] += result.rowcount
    return counts[0], counts[1]
