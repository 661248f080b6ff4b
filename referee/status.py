"""``referee status``: what an organizer needs to know at a glance.

One implementation, in plain SQL through the DB-API connection (:mod:`referee.store.dbapi`):
:func:`report` reads what it shows with a :class:`~referee.store.dbapi.Reader`. The command
opens its own (:func:`referee.commands.cmd_status`: no SQLAlchemy, no ORM, no Alembic, only the
games of the matches shown); a STATUS command by mail runs it in the judge's unit of work
(:func:`status_of`: the session's connection, in its transaction).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from referee.config.common import ConfigError
from referee.games import GAMES
from referee.games.base import open_steps
from referee.match import opensteps
from referee.pipeline.unreachable import unreachable_key
from referee.season.words import CONTROLS, WAITING, control_record, sentence
from referee.store.dbapi import Reader, json_value, marks, utc
from referee.timefmt import duration

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from referee.config import MailConfig
    from referee.store.db import Store


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


def status_of(
    session: Session,
    now: datetime,
    match_key: str | None = None,
    *,
    mail: MailConfig | None = None,
    secret: bytes | None = None,
) -> str:
    """:func:`status_text` in the caller's unit of work (a STATUS command by mail: the judge's)."""
    return report(Reader.of_session(session), now, match_key, mail=mail, secret=secret)


def organizer_line(mail: MailConfig | None, secret: bytes | None) -> list[str]:
    """The organizer's command address (docs/organizer-mail.md), when there is an organizer."""
    if mail is None or secret is None or not mail.organizer:
        return []
    from referee.mail import tokens  # here: only with an organizer (its HMAC needs OpenSSL's hashlib)

    address = tokens.organizer_address(secret, mail.local, mail.domain, mail.organizer)
    return [f"organizer commands by mail: {address}"]


RECORD_LINES = 3  # the latest entries of a match's or season's organizer's record shown
CHUNK = 500  # ids in one IN (...)

# how the columns of a match come back (the rest as stored)
MATCH_VALUES = {
    "starts_at": utc,
    "finished_at": utc,
    "step_opened_at": utc,
    "deadline": utc,
    "remind_at": utc,
    "state": json_value,
    "result": json_value,
    "open_steps": json_value,
}
MATCH_COLUMNS = ("id", "key", "game", "season_id", "starts_at", "state", "result", "problem", "finished_at", "seating")
MATCH_COLUMNS += tuple(c for c in opensteps.LISTED_COLUMNS if c not in MATCH_COLUMNS)


def report(
    db: Reader,
    now: datetime,
    match_key: str | None = None,
    *,
    mail: MailConfig | None = None,
    secret: bytes | None = None,
) -> str:
    """The text of ``referee status`` (one match's, with ``match_key``), read through ``db``."""
    lines: list[str] = []
    query = f"SELECT {', '.join(MATCH_COLUMNS)} FROM matches"
    if match_key:
        matches = db.rows(f"{query} WHERE key = ? ORDER BY starts_at, key", (match_key,), **MATCH_VALUES)
    else:
        matches = db.rows(f"{query} ORDER BY starts_at, key", **MATCH_VALUES)
    if match_key and not matches:
        raise ConfigError(f"no match {match_key!r}")
    if not matches:
        lines.append("No matches yet: load a season with `referee season load FILE.toml`.")
    ids = [m.id for m in matches]
    seats: dict[int, list[Any]] = {}
    for chunk in _chunks(ids):
        for seat in db.rows(
            "SELECT s.match_id, p.key, p.email FROM seats s JOIN players p ON p.id = s.player_id"
            f" WHERE s.match_id IN ({marks(len(chunk))}) ORDER BY s.match_id, s.position",
            chunk,
        ):
            seats.setdefault(seat.match_id, []).append(seat)
    seasons = _seasons(db, sorted({m.season_id for m in matches}))
    record = _control_events(db, ids)
    for match in matches:
        match.seats = seats.get(match.id, [])
        match.season = seasons[match.season_id]
        lines.extend(match_lines(match, now))
        for at, text in control_record(record.get(match.id, []), match.season.names)[-RECORD_LINES:]:
            lines.append(f"  {at:%Y-%m-%d %H:%M} UTC: {text}")
        lines.append("")
    lines.extend(season_record_lines(db, seasons))
    lines.extend(mail_lines(db, now))
    limit, window = (mail.bounce_limit, mail.bounce_window) if mail else (3, timedelta(days=7))
    lines.extend(bounce_lines(db, now, limit, window))
    lines.extend(organizer_line(mail, secret))
    return "\n".join(lines).rstrip()


def _chunks(ids: list[Any]) -> list[list[Any]]:
    return [ids[start : start + CHUNK] for start in range(0, len(ids), CHUNK)]


def _seasons(db: Reader, ids: list[int]) -> dict[int, SimpleNamespace]:
    """The seasons of these ids: their names, and their players' names by key."""
    seasons: dict[int, SimpleNamespace] = {}
    for chunk in _chunks(ids):
        for row in db.rows(f"SELECT id, name FROM seasons WHERE id IN ({marks(len(chunk))})", chunk):
            seasons[row.id] = SimpleNamespace(name=row.name, names={})
        for season_id, key, name in db.tuples(
            f"SELECT season_id, key, name FROM players WHERE season_id IN ({marks(len(chunk))})", chunk
        ):
            seasons[season_id].names[key] = name
    return seasons


def _control_events(db: Reader, ids: list[int]) -> dict[int, list[Any]]:
    """The events from outside the rules (the organizer's controls, the abandonment rule) of
    these matches, by match, in order: one query."""
    found: dict[int, list[Any]] = {}
    for chunk in _chunks(ids):
        for event in db.rows(
            "SELECT match_id, kind, player, payload, at FROM events"
            f" WHERE match_id IN ({marks(len(chunk))}) AND kind IN ({marks(len(CONTROLS))})"
            " ORDER BY match_id, seq",
            [*chunk, *CONTROLS],
            payload=json_value,
            at=utc,
        ):
            found.setdefault(event.match_id, []).append(event)
    return found


def season_record_lines(db: Reader, seasons: dict[int, SimpleNamespace]) -> list[str]:
    """The latest entries of each season's own record (adjustments, announcements)."""
    out: list[str] = []
    for season_id, season in sorted(seasons.items()):
        events = db.rows(
            "SELECT kind, payload, at FROM season_events WHERE season_id = ? ORDER BY seq",
            (season_id,),
            payload=json_value,
            at=utc,
        )
        if not events:
            continue
        count = "1 entry" if len(events) == 1 else f"{len(events)} entries"
        out.append(f"The organizer's record of {season.name} ({count}; the latest):")
        for event in events[-RECORD_LINES:]:
            out.append(f"  {event.at:%Y-%m-%d %H:%M} UTC: {sentence(event, season.names)}")
        out.append("")
    return out


def match_lines(match: Any, now: datetime) -> list[str]:
    """One match: ``match`` is its row of :data:`MATCH_COLUMNS`, with ``seats`` (each seat's
    player's ``key`` and ``email``, in seat order) and ``season`` (its ``name``)."""
    game = GAMES[match.game]
    roles = game.game_type.roles
    silent_roles = set(game.game_type.silent_roles)
    seats = [(seat.key, roles[min(i, len(roles) - 1)]) for i, seat in enumerate(match.seats)]
    players = [key for key, role in seats if role not in silent_roles]  # the seats that play
    who = " vs ".join(players) or ("the live players at its start" if match.seating == "live" else "no players")
    out = [f"{match.key}  {game.title}  ({match.season.name})  {who}"]
    silent = [key for key, role in seats if role in silent_roles]
    if silent:  # seats that never act (Betting Minority's participants)
        out.append(f"  {', '.join(sorted(silent_roles))}s (never act): {', '.join(silent)}")
    addressless = [seat.key for seat in match.seats if seat.email is None]
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


def mail_lines(db: Reader, now: datetime | None = None) -> list[str]:
    """Mail queues, and what is wrong with them: quarantined mail with its reason, mail
    waiting for delivery with its last error (and what it waits for), step mails not
    delivered by their deadline (with ``now``), inbox files that cannot be read."""
    inbound = dict(db.tuples("SELECT status, count(*) FROM inbound GROUP BY status"))
    outbox = dict(db.tuples("SELECT status, count(*) FROM outbox GROUP BY status"))
    lines = [
        "mail in:  " + (", ".join(f"{k} {v}" for k, v in sorted(inbound.items())) or "none yet"),
        "mail out: " + (", ".join(f"{k} {v}" for k, v in sorted(outbox.items())) or "none yet"),
    ]
    quarantined = db.rows(
        "SELECT id, sender, source, note FROM inbound WHERE status = 'quarantined' ORDER BY id DESC LIMIT 5"
    )
    if quarantined:
        lines.append(
            f"  quarantined inbound mail: {inbound.get('quarantined', 0)}"
            " (`referee quarantine` lists them; `referee quarantine --requeue ID` after a fix)"
        )
    for row in quarantined:
        lines.append(f"    inbound {row.id} from {row.sender or '?'} ({row.source}): {row.note}")
    waiting = "FROM outbox WHERE status = 'pending' AND last_error IS NOT NULL"
    retrying = db.rows(
        f"SELECT to_addr, attempts, next_attempt_at, last_error {waiting} ORDER BY next_attempt_at LIMIT 5",
        next_attempt_at=utc,
    )
    if retrying:
        count = db.scalar(f"SELECT count(*) {waiting}")
        causes = dict(db.tuples(f"SELECT fail_cause, count(*) {waiting} GROUP BY fail_cause"))
        why = ", ".join(f"{WAITING_FOR.get(cause, WAITING_FOR[None])} {n}" for cause, n in sorted_causes(causes))
        lines.append(f"  waiting for another delivery attempt: {count} ({why}; `referee requeue` retries them now)")
    for row in retrying:
        lines.append(
            f"    to {row.to_addr}: {row.attempts} attempt(s), next {row.next_attempt_at:%Y-%m-%d %H:%M} UTC;"
            f" last error: {row.last_error}"
        )
    failed = db.rows(
        "SELECT to_addr, attempts, last_error FROM outbox WHERE status = 'failed' ORDER BY id DESC LIMIT 5"
    )
    for row in failed:
        lines.append(f"  undeliverable to {row.to_addr} after {row.attempts} attempts: {row.last_error}")
    if now is not None:
        lines.extend(late_step_mail_lines(db, now))
    problems = db.rows(
        "SELECT source, reason, first_seen, count FROM inbox_problems ORDER BY first_seen LIMIT 5", first_seen=utc
    )
    if problems:
        count = db.scalar("SELECT count(*) FROM inbox_problems")
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

# the columns opensteps.listed reads of a match (not its state), as m_<name> beside an outbox row's
_LISTED = ", ".join(f"m.{name} AS m_{name}" for name in opensteps.LISTED_COLUMNS)
_LISTED_VALUES = {f"m_{name}": MATCH_VALUES[name] for name in opensteps.LISTED_COLUMNS if name in MATCH_VALUES}


def late_step_mail_lines(db: Reader, now: datetime) -> list[str]:
    """Step mails (the mail that opens a step with its deadline) not delivered (waiting for
    another attempt, or given up) although their step's deadline has passed: the step's
    deadline while it is open, else the one delivery kept in the row (a step mail never
    tried, whose step is over, says that instead)."""
    rows = db.rows(
        f"SELECT o.to_addr, o.step_key, o.step_title, o.deadline, o.status, m.key AS m_key, {_LISTED}"
        " FROM outbox o JOIN matches m ON m.id = o.match_id"
        " WHERE o.kind = 'step' AND o.status IN ('pending', 'failed') ORDER BY o.id DESC",
        deadline=utc,
        **_LISTED_VALUES,
    )
    late: list[str] = []
    for row in rows:
        match = SimpleNamespace(**{name: getattr(row, f"m_{name}") for name in opensteps.LISTED_COLUMNS})
        open_now = {step.key: step for step in opensteps.listed(match)}
        step = open_now.get(row.step_key)
        deadline = step.deadline if step is not None else row.deadline
        what = f"{row.m_key}/{row.step_key}" + (f" ({row.step_title})" if row.step_title else "")
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


def bounce_lines(db: Reader, now: datetime, limit: int, window: timedelta) -> list[str]:
    """Bounces of the last ``window``: the verified ones (they name their outbox mail by a
    signed bounce address, or our transport said it) apart from the unverified delivery
    reports (anyone can write one: they count for nothing), how many of each; the
    unreachable addresses (``limit`` hard verified bounces or more:
    :mod:`referee.pipeline.bounce_book`); the latest five verified, the latest three
    unverified."""
    since = now - window
    within = "received_at >= ? AND received_at <= ?"
    total, hard, unverified = db.tuples(
        "SELECT count(id) FILTER (WHERE verified IS TRUE),"
        " count(id) FILTER (WHERE verified IS TRUE AND hard IS TRUE),"
        f" count(id) FILTER (WHERE verified IS NOT TRUE) FROM bounces WHERE {within}",
        (since, now),
    )[0]
    if not (total or unverified):
        return []
    lines = [f"  bounces in the last {duration(window)}: {total} ({hard} hard)"]
    unreachable = db.tuples(
        "SELECT address, count(DISTINCT outbox_id), max(received_at) AS last FROM bounces"
        " WHERE received_at >= ? AND hard IS TRUE AND verified IS TRUE"
        " GROUP BY address HAVING count(DISTINCT outbox_id) >= ? ORDER BY address LIMIT 20",
        (since, limit),
        last=utc,
    )
    for address, count, last in unreachable:
        players = db.tuples("SELECT id, key FROM players WHERE email = ? ORDER BY key", (address,))
        keys = [unreachable_key(player_id, address) for player_id, _ in players]
        told = bool(keys) and db.scalar(f"SELECT count(*) FROM outbox WHERE dedupe_key IN ({marks(len(keys))})", keys)
        lines.append(
            f"  unreachable: {', '.join(key for _, key in players) or 'no player now'} at {address}:"
            f" {count} mails failed for good,"
            f" the last {last:%Y-%m-%d %H:%M} UTC; {'the organizer was told' if told else 'the organizer was not told'}"
        )
    shown = (
        "SELECT received_at, address, outbox_id, action, status, source, diagnostic FROM bounces"
        f" WHERE {within} AND verified IS {{}} ORDER BY received_at DESC, id DESC LIMIT {{}}"
    )
    for row in db.rows(shown.format("TRUE", 5), (since, now), received_at=utc):
        lines.append(_bounce_line(row))
    if unverified:
        lines.append(
            f"  unverified delivery reports in the last {duration(window)}: {unverified}"
            " (to the plain address: anyone can write one, so they count for nothing)"
        )
        for row in db.rows(shown.format("NOT TRUE", 3), (since, now), received_at=utc):
            lines.append(_bounce_line(row))
    return lines


def _bounce_line(row: Any) -> str:
    what = row.action + (f" {row.status}" if row.status else "")
    where = f"outbox {row.outbox_id}" if row.outbox_id is not None else "no outbox mail named"
    how = {"dsn": "report", "plain": "bounce", "refused": "refused by the server"}.get(row.source, row.source)
    return f"    {row.received_at:%Y-%m-%d %H:%M} UTC {row.address} ({where}, {how}): {what}" + (
        f": {row.diagnostic[:200]}" if row.diagnostic else ""
    )


def quarantine_text(store: Store) -> str:
    """Every quarantined inbound mail with why it is there."""
    from sqlalchemy import select

    from referee.store.models import Inbound

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
    from sqlalchemy import update

    from referee.store.models import Inbound

    with store.unit_of_work() as session:
        query = update(Inbound).where(Inbound.status == "quarantined")
        if ids is not None:
            query = query.where(Inbound.id.in_(ids))
        return session.execute(query.values(status="pending", attempts=0, processed_at=None, rule=None)).rowcount


def requeue_failed(store: Store, *, inbound: bool, outbound: bool, now: datetime | None = None) -> tuple[int, int]:
    """Put failed mail back in line: inbound to be judged again (by its arrival time against
    the step open now), outbound to be delivered again with a fresh set of attempts. With
    ``now``, outbound mail waiting for a retry is also made due now."""
    from sqlalchemy import update

    from referee.store.models import Outbox

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
