"""Loading a season file into the store (``referee season load``).

Loading is idempotent: loading the same file again changes nothing. New players and
matches are added; players' names, addresses and time zones and matches that have not
started yet are updated (a player may gain an address, or lose it while they sit only
at silent seats: such a player is never mailed); a started match keeps its game,
players, seed, start and options (a file that changes them is refused), while its phase
lengths and reminders may change (from its next phase on).

Every change is reported as one line, ``old -> new``. A match whose start is in the past
is refused unless ``allow_past`` is set: the next tick would close every phase whose
deadline has passed at once, with the rules' inactivity penalties.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from referee.config import ConfigError, MatchSpec, SeasonSpec, seat_role, silent_roles
from referee.games import GAMES
from referee.match.book import MatchBook, first_seating
from referee.season.frame import WAITING
from referee.store.db import Store
from referee.games.base import SEASON_ACCOUNT, SEASON_CHIPS, open_steps, time_out
from referee.store.models import Event, LedgerEntry, Match, Player, Season, Seat
from referee.timefmt import duration

GRANT_REASON = "starting chips"
GARNETS = "garnets"  # a season currency: granted by starting_garnets, read by MatchJack


class _DryRun(Exception):
    """Raised inside the transaction of a dry run, so that it rolls back."""


def load_season(
    store: Store, spec: SeasonSpec, now: datetime, *, allow_past: bool = False, dry_run: bool = False
) -> list[str]:
    """Apply ``spec`` in one transaction; returns one line per change.

    ``dry_run``: work out the same lines and refusals, then roll everything back.
    Any refusal raises :class:`ConfigError` and nothing is applied.
    """
    changes: list[str] = []
    try:
        with store.unit_of_work() as session:
            _apply(session, spec, now, allow_past, changes)
            if dry_run:
                raise _DryRun
    except _DryRun:
        return changes
    if changes:
        analyze_after_load(store)
    return changes


def analyze_after_load(store: Store) -> None:
    """On PostgreSQL, the planner's statistics of the tables a season load fills, at once:
    a season of thousands of matches may start (and close) before autovacuum has looked at
    them, and a plan made for a table it believes empty scans the whole season's ledger
    for every batch of balances (bench/README.md). SQLite plans by its indexes alone."""
    if store.engine.dialect.name != "postgresql":
        return
    from sqlalchemy import text

    with store.engine.connect() as connection:
        connection.execute(text("ANALYZE players, matches, seats, ledger"))
        connection.commit()


def check_past_starts(matches: list[MatchSpec], now: datetime, *, allow_past: bool = False) -> list[str]:
    """Refuse (or with ``allow_past``, report) matches whose start is before ``now``.

    ``matches`` are the ones whose start this load would set: new matches, and matches
    not started yet whose start changes. Returns the warning lines for ``allow_past``.
    """
    past = [ms for ms in matches if ms.starts_at < now]
    if not past:
        return []
    if allow_past:
        return [
            f"match {ms.key}: warning: starts {utc(ms.starts_at)}, {ago(now - ms.starts_at)} ago "
            f"(--allow-past): {what_a_past_start_does(ms, now)}"
            for ms in past
        ]
    first = past[0]
    others = ""
    if len(past) > 1:
        rest = [ms.key for ms in past[1:]]
        many = len(rest) > 1
        others = f" (match{'es' if many else ''} {_and(rest)} also start{'' if many else 's'} in the past)"
    raise ConfigError(
        f"match {first.key} would start {utc(first.starts_at)}, {ago(now - first.starts_at)} ago: "
        f"{what_a_past_start_does(first, now)}{others}. "
        "Give a future start, or --allow-past to load it anyway."
    )


def season_plan(spec: SeasonSpec, now: datetime) -> list[str]:
    """What the season file would start, and when (``referee season load --check``): each
    match in start order, with its first deadline; then what the season frame adds after
    each main match (RULINGS, "Seasons")."""
    lines = []
    for ms in sorted(spec.matches, key=lambda m: (m.starts_at, m.key)):
        game = GAMES[ms.game]
        when = f"in {ago(ms.starts_at - now)}" if ms.starts_at > now else f"{ago(now - ms.starts_at)} ago"
        who = "the live players at its start" if ms.live else ", ".join(ms.players)
        main = ", a main match" if ms.kind else ""
        first = _first_deadline(ms)
        closes = f"; its first step closes {utc(first)}" if first else ""
        lines.append(f"{utc(ms.starts_at)} ({when}): {ms.key}, {game.title}{main}, for {who}{closes}")
    frame = spec.frame
    mains = [ms for ms in spec.matches if ms.kind]
    if frame is not None and mains:
        gap = f"{short(frame.gap)} after the nomination" if frame.gap else "as the nomination ends"
        lines.append(
            f"after each main match: its EC nominates the DMO ({short(frame.nomination)} to answer; "
            f"CoLs {'on' if frame.cols else 'off'}), and the death match starts {gap}"
        )
        turn = 0  # the rotation goes by the order death matches are made: foreseen in start order
        for ms in sorted(mains, key=lambda m: (m.starts_at, m.key)):
            if ms.death_match:
                follows = f"a death match of {GAMES[ms.death_match].title} (its own)"
            elif frame.death_matches:
                place = turn % len(frame.death_matches)
                name = frame.death_matches[place]
                follows = f"a death match of {GAMES[name].title} (the rotation's {_ordinal(place + 1)})"
                turn += 1
            else:
                follows = "no death match (the season names none)"
            lines.append(f"  {ms.key}: followed by {follows}")
        if any(not ms.death_match for ms in mains) and len(frame.death_matches) > 1:
            lines.append(
                "  (the rotation goes by the order in which death matches are made; if main matches end "
                "in another order, so do their games)"
            )
    return lines


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _first_deadline(ms: MatchSpec) -> datetime | None:
    """The first deadline of a match that starts as the file says (None if it cannot tell)."""
    if ms.live:
        return None
    try:
        game = GAMES[ms.game]
        state = game.initial_state(ms.seed, ms.players, ms.options)
        timed = [s for s in open_steps(game, state) if not s.waiting]
        return ms.starts_at + timedelta(seconds=min(ms.steps[s.kind] for s in timed)) if timed else None
    except Exception:  # an engine that needs what only the start gives (balances): no deadline shown
        return None


def ago(td: timedelta) -> str:
    """``3 days 2 hours``: to the minute, seconds only under a minute."""
    if td >= timedelta(minutes=1):
        td = timedelta(minutes=round(td.total_seconds() / 60))
    return duration(td)


def what_a_past_start_does(ms: MatchSpec, now: datetime) -> str:
    """What the next tick would do to a match that starts at ``ms.starts_at``, as of ``now``."""
    closed, over, first_length = phases_due(ms, now)
    penalties = "with inactivity penalties for players who did not act"
    if closed is None:
        return f"the next tick would close at once every phase whose deadline has passed, {penalties}"
    if over:
        return f"the next tick would play the whole match out at once (all {closed} phases), {penalties}"
    if closed == 0:
        left = ms.starts_at + timedelta(seconds=first_length) - now
        return (
            f"the next tick would open its first phase late, leaving {ago(left)} "
            f"of its {duration(timedelta(seconds=first_length))} to act"
        )
    what = "its first phase" if closed == 1 else f"its first {closed} phases"
    return f"the next tick would close {what} at once, {penalties}"


def phases_due(ms: MatchSpec, now: datetime) -> tuple[int | None, bool, float]:
    """Phases whose deadline is at or before ``now`` for a match starting at ``ms.starts_at``.

    Worked out with the match's own engine and timing, every phase closing by default:
    ``(count, the match would be over, length of the first phase in seconds)``;
    ``count`` is None if the engine cannot tell.
    """
    game = GAMES[ms.game]
    try:
        state = game.initial_state(ms.seed, ms.players, ms.options)
        closed = 0
        first_length: float = 0
        deadlines: dict[str, datetime] = {}  # each open step's deadline (a game of concurrent steps has several)
        at = ms.starts_at
        for _ in range(100_000):
            steps = open_steps(game, state)
            if not steps:
                return closed, True, first_length
            timed = [s for s in steps if not s.waiting]
            deadlines = {s.key: deadlines.get(s.key) or at + timedelta(seconds=ms.steps[s.kind]) for s in timed}
            first_length = first_length or ms.steps[timed[0].kind]
            key = min(deadlines, key=lambda k: deadlines[k])
            at = deadlines.pop(key)
            if at > now:
                return closed, False, first_length
            state = time_out(game, state, key)
            closed += 1
    except Exception:  # an engine that cannot be simulated here: say it in general terms
        pass
    return None, False, first_length


def _apply(session: Session, spec: SeasonSpec, now: datetime, allow_past: bool, changes: list[str]) -> None:
    season = session.scalar(select(Season).where(Season.key == spec.key))
    if season is None:
        settings = {"starting_chips": spec.starting_chips, "starting_garnets": spec.starting_garnets}
        season = Season(key=spec.key, name=spec.name, settings=settings, created_at=now)
        session.add(season)
        session.flush()
        changes.append(f"season {spec.key}: created")
    else:
        if season.name != spec.name:
            changes.append(f"season {spec.key}: name {season.name!r} -> {spec.name!r}")
            season.name = spec.name
        old_chips = (season.settings or {}).get("starting_chips")
        if old_chips != spec.starting_chips:
            changes.append(
                f"season {spec.key}: starting_chips {old_chips} -> {spec.starting_chips} "
                "(players granted chips before keep their grant; new players get the new amount)"
            )
            season.settings = {**(season.settings or {}), "starting_chips": spec.starting_chips}
        old_garnets = (season.settings or {}).get("starting_garnets", 0)
        if old_garnets != spec.starting_garnets:
            changes.append(
                f"season {spec.key}: starting_garnets {old_garnets} -> {spec.starting_garnets} "
                "(players granted garnets before keep their grant; new players get the new amount)"
            )
            season.settings = {**(season.settings or {}), "starting_garnets": spec.starting_garnets}

    _frame(season, spec, changes)
    players = {p.key: p for p in session.scalars(select(Player).where(Player.season_id == season.id))}
    before = {key: (p.name, p.email, p.timezone) for key, p in players.items()}
    # Addresses are unique per season: park changed ones first, so two players may swap.
    # A parked player has no address for the moment (NULLs never clash); a player may also
    # gain an address or lose theirs (one who sits only at silent seats).
    moving = [p for ps in spec.players if (p := players.get(ps.key)) is not None and p.email != ps.email]
    for player in moving:
        player.email = None
    session.flush()
    for ps in spec.players:
        player = players.get(ps.key)
        if player is None:
            player = Player(season_id=season.id, key=ps.key, name=ps.name, email=ps.email, timezone=ps.timezone)
            session.add(player)
            players[ps.key] = player
            changes.append(f"player {ps.key}: added ({_address(ps.email)}, {ps.timezone})")
            continue
        old_name, old_email, old_tz = before[ps.key]
        if old_name != ps.name:
            changes.append(f"player {ps.key}: name {old_name!r} -> {ps.name!r}")
        if old_email != ps.email:
            changes.append(f"player {ps.key}: email {_address(old_email)} -> {_address(ps.email)}")
        if old_tz != ps.timezone:
            changes.append(f"player {ps.key}: time zone {old_tz} -> {ps.timezone}")
            if player.timezone_chosen is not None:  # the file changed the zone: the file's wins now
                changes.append(f"player {ps.key}: the time zone chosen by mail ({player.timezone_chosen}) gives way")
                player.timezone_chosen = None
        player.name, player.email, player.timezone = ps.name, ps.email, ps.timezone
    session.flush()
    granted = _granted(session, season)
    for ps in spec.players:
        _grant_starting_chips(session, season, granted, ps.key, spec.starting_chips, now, changes)
        _grant_starting_chips(session, season, granted, ps.key, spec.starting_garnets, now, changes, currency=GARNETS)

    new_starts: list[MatchSpec] = []  # matches whose start this load sets
    stored = _stored_matches(session, [ms.key for ms in spec.matches])
    for ms in spec.matches:
        match = stored.get(ms.key)
        timing = {"steps": ms.steps, "reminders": ms.reminders, "abandon_after": ms.abandon_after}
        if match is not None and match.season_id != season.id:
            raise ConfigError(f"match {ms.key!r} already belongs to another season")
        if match is None:
            match = Match(
                season_id=season.id,
                key=ms.key,
                game=ms.game,
                seed=ms.seed,
                options=ms.options,
                timing=timing,
                starts_at=ms.starts_at,
                status="scheduled",
                state=None,
                kind=ms.kind,
                seating="live" if ms.live else None,
            )
            # the seats with it, all of the file's new matches written together at the end
            match.seats = [Seat(player=players[k], position=i) for i, k in enumerate(ms.players)]
            session.add(match)
            who = "the live players" if ms.live else ", ".join(ms.players)
            main = " (a main match)" if ms.kind else ""
            changes.append(f"match {ms.key}: added: {ms.game}{main} for {who}, starts {utc(ms.starts_at)}")
            new_starts.append(ms)
            continue
        current = [seat.player.key for seat in match.seats]
        if match.status == "scheduled" and match.problem and not match.problem.startswith(WAITING):
            # its start failed: this load is the fix
            changes.append(f"match {ms.key}: its start will be tried again (it {match.problem})")
            match.problem = None
        if match.status == "scheduled":
            lines = _fixed_changes(match, current, ms, match.options) + _timing_changes(match.timing, timing)
            if not lines:
                continue
            changes.extend(f"match {ms.key}: {line}" for line in lines)
            if planned_start(match) != ms.starts_at:
                new_starts.append(ms)
                match.starts_at = ms.starts_at
            elif "planned_start" in match.timing:  # released late by the season frame: keeps that start
                timing = {**timing, "planned_start": match.timing["planned_start"]}
            match.game, match.options, match.timing = ms.game, ms.options, timing
            match.kind, match.seating = ms.kind, "live" if ms.live else None
            if ms.seed_given:
                match.seed = ms.seed
            if current != ms.players:
                for seat in list(match.seats):
                    session.delete(seat)
                session.flush()
                session.expire(match, ["seats"])
                _seat(session, match, [players[k] for k in ms.players])
            continue
        # what the organizer wrote: the match book adds its own options at the start, and a
        # seat handed over by `referee substitute` is still the file's player's
        handovers = session.execute(
            select(Event.payload).where(Event.match_id == match.id, Event.kind == "substitute").order_by(Event.seq)
        ).scalars()
        current = first_seating(current, [(h["old"], h["new"]) for h in handovers])
        started_options = {k: v for k, v in match.options.items() if k not in MatchBook.ADDED_AT_START}
        refused = _fixed_changes(match, current, ms, started_options)
        if refused:
            state = "finished" if match.status == "finished" else "started"
            raise ConfigError(
                f"match {ms.key} has {state} (at {utc(match.starts_at)}), so its game, players, seed, start and "
                f"options can no longer change, but the file changes its {_and(refused)}. Nothing was loaded: "
                "put the old values back (only phase lengths and reminders of a started match may change)"
            )
        lines = _timing_changes(match.timing, timing)
        if lines:
            match.timing = timing
            changes.extend(f"match {ms.key}: {line} (from its next phase on)" for line in lines)

    session.flush()
    addressless = [players[ps.key] for ps in spec.players if ps.email is None]
    _check_addressless_seats(session, addressless, {ms.key for ms in spec.matches})
    changes.extend(check_past_starts(new_starts, now, allow_past=allow_past))


def _check_addressless_seats(session: Session, addressless: list[Player], listed: set[str]) -> None:
    """A player without an address may sit only at silent seats: the season file's matches
    are checked as it is read (:func:`referee.config.parse_season`); this checks the stored
    matches that have not finished and that the file does not list (``listed``)."""
    if not addressless:
        return
    seats = session.scalars(
        select(Seat)
        .join(Match)
        .where(Seat.player_id.in_([p.id for p in addressless]), Match.status != "finished", Match.key.not_in(listed))
        .order_by(Match.key, Seat.position)
    ).all()
    for seat in seats:
        game = GAMES.get(seat.match.game)
        role = seat_role(game, seat.position)
        if game is not None and role in silent_roles(game):
            continue
        raise ConfigError(
            f"player {seat.player.key} has no email address, so they can only sit at a silent seat, but they sit "
            f"at seat {seat.position + 1} ({role or 'no role'}) of match {seat.match.key}, which the season "
            "file does not list: give them an email address"
        )


def planned_start(match: Match) -> datetime:
    """The start the season file gave: a match of the live players that waited for the
    season's death matches starts later (``timing["planned_start"]`` keeps the file's)."""
    planned = (match.timing or {}).get("planned_start")
    return datetime.fromisoformat(planned.replace("Z", "+00:00")) if planned else match.starts_at


def _fixed_changes(match: Match, current: list[str], ms: MatchSpec, options: dict[str, Any]) -> list[str]:
    """``what old -> new`` for a match's game, players, seed, start and options."""
    lines = []
    if match.game != ms.game:
        lines.append(f"game {match.game} -> {ms.game}")
    if (match.kind, match.seating) != (ms.kind, "live" if ms.live else None):
        lines.append(f"kind {_kind(match.kind, match.seating)} -> {_kind(ms.kind, 'live' if ms.live else None)}")
    if current != ms.players and not (match.seating == "live" and ms.live):
        lines.append(f"players {', '.join(current) or 'none'} -> {', '.join(ms.players) or 'the live players'}")
    if ms.seed_given and ms.seed != match.seed:
        lines.append(f"seed {match.seed} -> {ms.seed}")
    if planned_start(match) != ms.starts_at:
        lines.append(f"start {utc(planned_start(match))} -> {utc(ms.starts_at)}")
    if options != ms.options:
        lines.append(f"options {_options(options)} -> {_options(ms.options)}")
    return lines


def _kind(kind: str | None, seating: str | None) -> str:
    return f"{kind or 'a match on its own'}{' of the live players' if seating == 'live' else ''}"


def _frame(season: Season, spec: SeasonSpec, changes: list[str]) -> None:
    """Store the season frame (``Season.settings["frame"]``): a reload keeps the stored seed
    unless the file gives one; each changed setting is one line."""
    if spec.frame is None:
        return
    new = spec.frame.settings()
    new["death_match"] = {ms.key: ms.death_match for ms in spec.matches if ms.death_match}
    old = (season.settings or {}).get("frame")
    if old is not None and not spec.frame.seed_given:
        new["seed"] = old["seed"]
    if old == new:
        return
    if old is not None:
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name) and name != "timing":
                changes.append(f"season {spec.key}: {name} {old.get(name)!r} -> {new.get(name)!r}")
        if old.get("timing") != new.get("timing"):
            changes.append(f"season {spec.key}: death-match timing changed (from the next death match on)")
    season.settings = {**(season.settings or {}), "frame": new}


def _timing_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    lines = []
    old_steps, new_steps = old.get("steps", {}), new["steps"]
    for kind in sorted(set(old_steps) | set(new_steps)):
        a, b = old_steps.get(kind), new_steps.get(kind)
        if a != b:
            lines.append(f"{kind} length {short(a)} -> {short(b)}")
    a, b = [float(x) for x in old.get("reminders", [])], [float(x) for x in new["reminders"]]
    if a != b:
        lines.append(f"reminders {_reminders(a)} -> {_reminders(b)}")
    was, now = old.get("abandon_after", 0), new.get("abandon_after", 0)
    if was != now:
        lines.append(f"abandon_after {was or 'off'} -> {now or 'off'}")
    return lines


def utc(at: datetime) -> str:
    return f"{at.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC"


def short(seconds: float | None) -> str:
    """``24h``, ``1h30m``, ``45s``: the season file's own notation."""
    if seconds is None:
        return "none"
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)
    return text or "0s"


def _reminders(offsets: list[float]) -> str:
    return ", ".join(short(x) for x in offsets) if offsets else "none"


def _options(options: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k} = {v!r}" for k, v in sorted(options.items())) + "}" if options else "none"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _address(email: str | None) -> str:
    """A player's address for a change line: ``no address`` for a player who has none."""
    return email if email is not None else "no address"


def _seat(session: Session, match: Match, players: list[Player]) -> None:
    for position, player in enumerate(players):
        session.add(Seat(match_id=match.id, player_id=player.id, position=position))
    session.flush()


def _stored_matches(session: Session, keys: list[str]) -> dict[str, Match]:
    """The stored matches of these keys (of any season), by key: a query per 500 keys, not
    one per match."""
    found: dict[str, Match] = {}
    for start in range(0, len(keys), 500):
        found.update((m.key, m) for m in session.scalars(select(Match).where(Match.key.in_(keys[start : start + 500]))))
    return found


def _granted(session: Session, season: Season) -> set[tuple[str, str, str]]:
    """The season's grants made so far: (player key, reason, currency) of each entry from
    the season's account, read once for every player of the file."""
    rows = session.execute(
        select(LedgerEntry.to_account, LedgerEntry.reason, LedgerEntry.currency).where(
            LedgerEntry.season_id == season.id, LedgerEntry.from_account == SEASON_ACCOUNT
        )
    )
    return {(key, reason, currency) for key, reason, currency in rows}


def _grant_starting_chips(
    session: Session,
    season: Season,
    granted: set[tuple[str, str, str]],
    key: str,
    amount: int,
    now: datetime,
    changes: list[str],
    *,
    currency: str = SEASON_CHIPS,
) -> None:
    """Grant a player the season's starting amount of ``currency`` (chips, or garnets), once
    (``granted``: :func:`_granted`, which this adds to)."""
    reason = GRANT_REASON if currency == SEASON_CHIPS else f"starting {currency}"
    if (key, reason, currency) not in granted and amount > 0:
        granted.add((key, reason, currency))
        session.add(
            LedgerEntry(
                season_id=season.id,
                match_id=None,
                seq=None,
                from_account=SEASON_ACCOUNT,
                to_account=key,
                amount=amount,
                reason=reason,
                at=now,
                currency=currency,
            )
        )
        changes.append(f"player {key}: granted {amount} {reason}")
