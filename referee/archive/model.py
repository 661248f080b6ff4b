"""The archive's page model: what each page of the site says, as plain dataclasses read from
the database, without any HTML (the templates under ``templates/archive/`` lay it out).

Only public data gets here:

* what a match holds comes from its public view, ``view(state, None)``, through
  :mod:`referee.archive.rounds`; the raw state is read for nothing else but the open step
  (its title and kind, which every player of the match is mailed, and which no hidden
  information can change: the conformance suite checks it on every hidden variant);
* the event log only as :func:`referee.archive.chain.public_events` shows it (the open
  step's moves left out, payloads once the match has finished);
* players by id, name and time zone: never an address;
* the ledger, the results and the schedule, which are public by the rules.

Reading is shaped for a season of ten thousand matches: :func:`stamps` is the one light
query the incremental build compares with its manifest; the season's aggregates
(:class:`SeasonData`) are a few grouped queries; match pages are loaded in batches
(:func:`match_pages`), each batch in a handful of queries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, defer, selectinload

from referee.archive.chain import public_events
from referee.bidi import FSI, PDI, isolate_names
from referee.archive.rounds import Round, match_rounds, public_view
from referee.config import seat_role, silent_roles
from referee.games import GAMES, accounts
from referee.games.base import MATCH_CHIPS, SEASON_CHIPS, SIMULTANEOUS, open_steps
from referee.match.seals import seal
from referee.season.record import control_record, season_events, sentence
from referee.store.balances import season_balances
from referee.store.models import Event, LedgerEntry, Match, Player, Season, SeasonEvent, Seat

__all__ = [
    "FSI",
    "PDI",
    "LedgerHistory",
    "LedgerLine",
    "MatchPage",
    "MatchRounds",
    "MatchRow",
    "MatchStamp",
    "OpenStep",
    "PlayerPage",
    "PlayerRef",
    "ResultView",
    "SchedulePage",
    "SeasonData",
    "SeasonHeader",
    "SeasonPage",
    "Standing",
    "match_pages",
    "match_rows",
    "played",
    "player_pages",
    "schedule_order",
    "season_headers",
    "season_page",
    "stamps",
]


OUTCOMES = ("win", "draw", "loss")


# ---------------------------------------------------------------------------- the light rows


@dataclass(frozen=True)
class PlayerRef:
    key: str
    name: str


@dataclass(frozen=True)
class SeasonHeader:
    """A season as every one of its pages names it: what a rename or a new player changes."""

    id: int
    key: str
    name: str
    created_at: datetime
    players: tuple[tuple[str, str, str], ...]  # (key, name, time zone), by key
    # the last hash of the season's own chain (referee.season.record): the season page lists
    # that record, so a new entry (an adjustment, an announcement) changes the page
    record: str = ""
    # the players without an address: silent participants (Betting Minority's), no season
    # players (RULINGS); named in their matches, never counted or listed as players
    silent: frozenset[str] = frozenset()

    @property
    def names(self) -> dict[str, str]:
        return {key: name for key, name, _ in self.players}

    @property
    def season_players(self) -> list[tuple[str, str, str]]:
        """The players of the season (the silent participants left out)."""
        return [p for p in self.players if p[0] not in self.silent]


@dataclass(frozen=True)
class MatchStamp:
    """The light row of a match: everything an unchanged match costs an incremental build."""

    id: int
    key: str
    season_id: int
    game: str
    status: str
    version: int
    last_event_seq: int
    starts_at: datetime
    finished_at: datetime | None
    step_opened_at: datetime | None
    players: tuple[str, ...]  # player keys in seat order

    @property
    def fingerprint(self) -> tuple[Any, ...]:
        """What the match's own pages are made of: any change to the match bumps its version
        (the optimistic lock) or its last event; the seats are here as a reload may move them."""
        return (self.id, self.key, self.game, self.version, self.last_event_seq, self.status, self.players)

    @property
    def last_change(self) -> datetime | None:
        """No round of the match closed after this instant: a round closes at an event that
        opens the next step (or ends the match) at its own instant."""
        return self.finished_at or self.step_opened_at


def stamps(session: Session) -> list[MatchStamp]:
    """Every match's light row (two queries: the matches, their seats)."""
    seats: dict[int, list[str]] = defaultdict(list)
    for match_id, key in session.execute(
        select(Seat.match_id, Player.key)
        .join(Player, Player.id == Seat.player_id)
        .order_by(Seat.match_id, Seat.position)
    ):
        seats[match_id].append(key)
    rows = session.execute(
        select(
            Match.id,
            Match.key,
            Match.season_id,
            Match.game,
            Match.status,
            Match.version,
            Match.last_event_seq,
            Match.starts_at,
            Match.finished_at,
            Match.step_opened_at,
        ).order_by(Match.id)
    )
    return [MatchStamp(*row, players=tuple(seats.get(row[0], ()))) for row in rows]


def schedule_order(stamp: MatchStamp) -> tuple[datetime, str]:
    """The schedule lists matches by start, then key."""
    return stamp.starts_at, stamp.key


def season_headers(session: Session) -> list[SeasonHeader]:
    """Every season with its players (two queries)."""
    players: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
    silent: dict[int, set[str]] = defaultdict(set)
    for season_id, key, name, tz, no_address in session.execute(
        select(Player.season_id, Player.key, Player.name, Player.zone, Player.email.is_(None)).order_by(
            Player.season_id, Player.key
        )
    ):
        players[season_id].append((key, name, tz))
        if no_address:
            silent[season_id].add(key)
    heads = dict(
        session.execute(select(SeasonEvent.season_id, SeasonEvent.hash).order_by(SeasonEvent.seq)).tuples().all()
    )  # in seq order: each season's last hash wins
    return [
        SeasonHeader(
            id, key, name, created_at, tuple(players.get(id, ())), heads.get(id, ""), frozenset(silent.get(id, ()))
        )
        for id, key, name, created_at in session.execute(
            select(Season.id, Season.key, Season.name, Season.created_at).order_by(Season.key)
        )
    ]


# ---------------------------------------------------------------------------- schedule rows


@dataclass(frozen=True)
class OpenStep:
    key: str
    title: str
    deadline: datetime | None


@dataclass(frozen=True)
class MatchRow:
    """A match as a line of the schedule, of a player's page or of "open now"."""

    key: str
    game: str
    game_title: str
    players: tuple[PlayerRef, ...]
    starts_at: datetime
    status: str  # scheduled | running | finished
    step: OpenStep | None  # the open step of a running match
    finished_at: datetime | None
    outcome: dict[str, str]  # player key -> win | draw | loss (or a game's own word), once finished
    victory_points: dict[str, float]
    # the keys of the players at the game's silent seats (Betting Minority's participants):
    # named in the match, never as its players
    silent: frozenset[str] = frozenset()

    @property
    def acting(self) -> tuple[PlayerRef, ...]:
        """The players who play (the silent seats left out)."""
        return tuple(p for p in self.players if p.key not in self.silent)

    @property
    def participants(self) -> tuple[PlayerRef, ...]:
        """The silent seats' players."""
        return tuple(p for p in self.players if p.key in self.silent)


def open_step(match: Match, state: dict[str, Any] | None) -> OpenStep | None:
    """The open step of a running match, named as its mails name it. ``game.step`` is the
    one thing read from the raw state: the step is told to every player of the match, and
    the conformance suite checks that no hidden variant of a state changes it."""
    if match.status != "running" or state is None or match.step_key is None:
        return None
    game = GAMES[match.game]
    step = next((s for s in open_steps(game, state) if s.key == match.step_key), None)
    title = step.title if step is not None else match.step_key
    return OpenStep(match.step_key, title or match.step_key, match.deadline)


def _row(match: Match, state: dict[str, Any] | None) -> MatchRow:
    result = match.result if match.status == "finished" else None
    return MatchRow(
        key=match.key,
        game=match.game,
        game_title=GAMES[match.game].title if match.game in GAMES else match.game,
        players=tuple(PlayerRef(seat.player.key, seat.player.name) for seat in match.seats),
        starts_at=match.starts_at,
        status=match.status,
        step=open_step(match, state),
        finished_at=match.finished_at,
        outcome=dict((result or {}).get("outcome") or {}),
        # a death match's stake is survival, a nomination's nothing: no victory points (RULINGS)
        victory_points={}
        if match.kind in ("death", "nomination")
        else dict((result or {}).get("victory_points") or {}),
        silent=_silent_seats(match),
    )


def _silent_seats(match: Match) -> frozenset[str]:
    """The players of ``match`` at its game's silent seats (``GameType.silent_roles``)."""
    game = GAMES.get(match.game)
    if game is None or not silent_roles(game):
        return frozenset()
    quiet = silent_roles(game)
    return frozenset(seat.player.key for seat in match.seats if seat_role(game, seat.position) in quiet)


def match_rows(session: Session, ids: Iterable[int]) -> dict[int, MatchRow]:
    """The schedule rows of these matches; only the running ones' states are read (for
    the open step's title), and those one batch at a time."""
    found: dict[int, MatchRow] = {}
    for chunk in _chunks(sorted(set(ids)), 500):
        matches = session.scalars(
            select(Match)
            .where(Match.id.in_(chunk))
            .options(defer(Match.state), defer(Match.seals), selectinload(Match.seats).joinedload(Seat.player))
        ).all()
        running = [m.id for m in matches if m.status == "running"]
        states = {}
        if running:
            states = {
                i: state for i, state in session.execute(select(Match.id, Match.state).where(Match.id.in_(running)))
            }
        found.update((m.id, _row(m, states.get(m.id))) for m in matches)
    return found


# ---------------------------------------------------------------------------- the season


@dataclass(frozen=True)
class Standing:
    rank: int
    player: PlayerRef
    played: int  # finished matches
    wins: int
    draws: int
    losses: int
    victory_points: float
    chips: int  # the season balance now
    awards: dict[str, int]  # other season currencies the player holds now (e.g. CoLs)
    eliminated_at: datetime | None = None  # when the player lost a death match (None: live)
    eliminated_in: str | None = None  # which (its key)


@dataclass
class SeasonData:
    """What a season's pages share: the standings, from the finished matches' results and
    the ledger's balances, and the victory points as they came in. Computed once a build."""

    header: SeasonHeader
    standings: list[Standing]
    currencies: list[str]  # the award currencies anybody holds, sorted
    finished: list[tuple[str, datetime, dict[str, float]]]  # (match key, finished at, victory points), in order

    @classmethod
    def load(cls, session: Session, header: SeasonHeader) -> SeasonData:
        # a nomination is no match played; a death match gives no victory points (its stake is
        # survival): RULINGS, "Seasons"
        finished = [
            (
                key,
                at,
                {} if kind == "death" else dict((result or {}).get("victory_points") or {}),
                dict((result or {}).get("outcome") or {}),
            )
            for key, at, result, kind in session.execute(
                select(Match.key, Match.finished_at, Match.result, Match.kind)
                .where(Match.season_id == header.id, Match.status == "finished")
                .order_by(Match.finished_at, Match.id)
            )
            if kind != "nomination"
        ]
        out = {
            key: (at, match)
            for key, at, match in session.execute(
                select(Player.key, Player.eliminated_at, Player.eliminated_in).where(
                    Player.season_id == header.id, Player.eliminated_at.is_not(None)
                )
            )
        }
        balances = season_balances(session, header.id)
        # a player without an address is a silent participant, no season player (RULINGS)
        silent = set(session.scalars(select(Player.key).where(Player.season_id == header.id, Player.email.is_(None))))
        tally: dict[str, dict[str, float]] = {
            key: defaultdict(float) for key, _, _ in header.players if key not in silent
        }
        for _, _, points, outcome in finished:
            for player, word in outcome.items():
                if player in tally:
                    tally[player]["played"] += 1
                    tally[player][word] += 1
                    tally[player]["points"] += float(points.get(player, 0))
        currencies = sorted(
            {c for (account, c), amount in balances.items() if account in tally and amount and c != SEASON_CHIPS}
        )
        names = header.names
        unranked = [
            (
                PlayerRef(key, names[key]),
                tally[key],
                balances.get((key, SEASON_CHIPS), 0),
                {c: balances.get((key, c), 0) for c in currencies},
            )
            for key in tally
        ]

        def order(s: tuple[PlayerRef, dict[str, float], int, dict[str, int]]) -> tuple[Any, ...]:
            """RULINGS, "Seasons": live players first, by victory points, then chips, then
            garnets; eliminated players after them, the latest eliminated first (at the same
            instant, by name)."""
            ref, t, chips, awards = s
            if ref.key in out:
                return (1, -out[ref.key][0].timestamp(), 0, 0, ref.name.casefold(), ref.key)
            return (0, -t["points"], -chips, -awards.get("garnets", 0), ref.name.casefold(), ref.key)

        unranked.sort(key=order)
        standings = [
            Standing(
                rank=i + 1,
                player=ref,
                played=int(t["played"]),
                wins=int(t["win"]),
                draws=int(t["draw"]),
                losses=int(t["loss"]),
                victory_points=t["points"],
                chips=chips,
                awards=awards,
                eliminated_at=out.get(ref.key, (None, None))[0],
                eliminated_in=out.get(ref.key, (None, None))[1],
            )
            for i, (ref, t, chips, awards) in enumerate(unranked)
        ]
        return cls(header, standings, currencies, [(key, at, points) for key, at, points, _ in finished])

    def standing(self, key: str) -> Standing | None:
        return next((s for s in self.standings if s.player.key == key), None)

    def points_chart(self, players: int = 8, points: int = 40) -> dict[str, list[tuple[str, float]]]:
        """Cumulative victory points of the leading ``players`` against the matches finished
        so far, in finish order, at ``points`` evenly spaced moments at most (the last one
        always: the standings now)."""
        leaders = [s.player for s in self.standings[:players]]
        if not self.finished or not leaders:
            return {}
        n = len(self.finished)
        cuts = sorted({round(n * k / min(points, n)) for k in range(1, min(points, n) + 1)})
        totals = dict.fromkeys((p.key for p in leaders), 0.0)
        label = {p.key: isolate_names(p.name, [p.name]) for p in leaders}  # a chart's text holds no <bdi>
        series: dict[str, list[tuple[str, float]]] = {label[p.key]: [] for p in leaders}
        done = 0
        for cut in cuts:
            for _, _, vp in self.finished[done:cut]:
                for key in totals:
                    totals[key] += float(vp.get(key, 0))
            done = cut
            at = self.finished[cut - 1][1]
            at_label = f"{cut} ({at.day} {at:%b})"
            for p in leaders:
                series[label[p.key]].append((at_label, totals[p.key]))
        return series


@dataclass(frozen=True)
class SeasonPage:
    season: SeasonHeader
    standings: list[Standing]
    currencies: list[str]
    counts: dict[str, int]  # status -> matches
    open_now: list[MatchRow]  # running matches, nearest deadline first (the first ones)
    recent: list[MatchRow]  # finished matches, latest first (the last ones)
    schedule_pages: int
    points_chart: dict[str, list[tuple[str, float]]]
    record: list[tuple[datetime, str]] = field(default_factory=list)  # the season's own record, in words


def season_page(
    session: Session, data: SeasonData, season_stamps: Sequence[MatchStamp], *, schedule_pages: int, shown: int = 50
) -> SeasonPage:
    """The season's front page: the standings, what is open now (the ``shown`` nearest
    deadlines; the schedule lists the rest), the latest results."""
    counts: dict[str, int] = defaultdict(int)
    for s in season_stamps:
        counts[s.status] += 1
    running = session.scalars(
        select(Match.id)
        .where(Match.season_id == data.header.id, Match.status == "running")
        .order_by(Match.deadline, Match.key)
        .limit(shown)
    ).all()
    recent = sorted(
        (s for s in season_stamps if s.status == "finished"),
        key=lambda s: (s.finished_at or s.starts_at, s.key),
        reverse=True,
    )[: min(shown, 20)]
    rows = match_rows(session, [*running, *(s.id for s in recent)])
    return SeasonPage(
        season=data.header,
        standings=data.standings,
        currencies=data.currencies,
        counts=dict(counts),
        open_now=[rows[i] for i in running],
        recent=[rows[s.id] for s in recent],
        schedule_pages=schedule_pages,
        points_chart=data.points_chart(),
        record=[(e.at, sentence(e, data.header.names)) for e in season_events(session, data.header.id)],
    )


@dataclass(frozen=True)
class SchedulePage:
    season: SeasonHeader
    number: int  # 1-based
    pages: int
    first: int  # 1-based position of its first match in the whole schedule
    total: int
    rows: list[MatchRow]


# ---------------------------------------------------------------------------- a match


@dataclass(frozen=True)
class LedgerLine:
    seq: int | None
    at: datetime
    step_key: str | None
    counterparty: str  # the other account
    reason: str
    amount: int  # what the player received (negative: paid)
    balance: int  # after this movement: the season balance, or a match currency's total in the match


@dataclass(frozen=True)
class LedgerHistory:
    """One player's movements of one currency in one match."""

    player: PlayerRef
    currency: str
    in_season: bool  # the balance is the player's season balance (else: the total within this match)
    lines: list[LedgerLine]

    @property
    def net(self) -> int:
        return sum(line.amount for line in self.lines)


@dataclass(frozen=True)
class ResultView:
    outcome: dict[str, str]
    victory_points: dict[str, float]
    reason: str
    scores: dict[str, Any]
    awards: dict[str, dict[str, int]]
    ranking: list[str] = field(default_factory=list)  # best first, where the game ranks


@dataclass(frozen=True)
class MatchRounds:
    """A match with its public view and closed rounds: what its feed entries are made of."""

    row: MatchRow
    view: dict[str, Any] | None  # the public view, view(state, None)
    rounds: list[Round]


@dataclass(frozen=True)
class MatchPage:
    season: SeasonHeader
    played: MatchRounds
    result: ResultView | None
    ledger: list[LedgerHistory]
    chain: list[dict[str, Any]]  # referee.archive.chain.public_events
    # what happened to the match from outside its rules (the organizer's controls, the
    # abandonment rule): (instant, a sentence with names), in order
    record: list[tuple[datetime, str]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.played.row.key

    @property
    def row(self) -> MatchRow:
        return self.played.row

    @property
    def view(self) -> dict[str, Any] | None:
        return self.played.view

    @property
    def rounds(self) -> list[Round]:
        return self.played.rounds

    @property
    def chain_head(self) -> str | None:
        """The hash of the last event shown: it vouches for every event before it."""
        return self.chain[-1]["hash"] if self.chain else None

    @property
    def seals(self) -> list[dict[str, Any]]:
        """The seals of a finished match's sealed moves (every accepted move of a game of
        simultaneous steps), recomputed from its published events: the commitments its
        receipts gave, with the lines and the commands that check them
        (:mod:`referee.match.seals`). None before the end: the lines hold the moves."""
        if self.row.status != "finished":
            return []
        # a move's event says whether it was sealed; one logged before events said so was
        # sealed when its game's steps are all simultaneous
        everyone = GAMES[self.row.game].game_type.dynamics == SIMULTANEOUS
        return [
            seal(self.key, ev["step"], ev["player"], ev["payload"]["move"], ev["payload"]["nonce"], ev["seq"])
            for ev in self.chain
            if ev["kind"] == "move"
            and ev["payload"]
            and ev["payload"].get("accepted")
            and "nonce" in ev["payload"]
            and ev["payload"].get("sealed", everyone)
        ]


def _with_events(session: Session, ids: Sequence[int]) -> list[tuple[Match, list[Any]]]:
    """These matches (with their seats and players) and their events in seq order: two queries."""
    matches = session.scalars(
        select(Match)
        .where(Match.id.in_(ids))
        .options(defer(Match.seals), selectinload(Match.seats).joinedload(Seat.player))
        .order_by(Match.id)
    ).all()
    events = _by_match(session, Event.__table__, ids)
    return [(m, events[m.id]) for m in matches]


def _by_match(session: Session, table: Any, ids: Sequence[int]) -> dict[int, list[Any]]:
    """The rows of ``table`` (events, ledger) of these matches, by match, in seq order: plain
    rows (attribute access, typed columns), not ORM objects, which a full build would pay
    for by the hundred thousand."""
    found: dict[int, list[Any]] = defaultdict(list)
    for row in session.execute(select(table).where(table.c.match_id.in_(ids)).order_by(table.c.match_id, table.c.seq)):
        found[row.match_id].append(row)
    return found


def _played(match: Match, events: list[Any]) -> MatchRounds:
    game = GAMES[match.game]
    view = public_view(game, match)
    rounds = match_rounds(game, match, events, view) if view is not None else []
    return MatchRounds(_row(match, match.state), view, rounds)


def played(session: Session, ids: Sequence[int]) -> dict[int, MatchRounds]:
    """The closed rounds of these matches, by match id."""
    return {m.id: _played(m, events) for m, events in _with_events(session, ids)}


def match_pages(session: Session, header: SeasonHeader, ids: Sequence[int], ledger: SeasonLedger) -> list[MatchPage]:
    """The pages of these matches of one season, in a few queries for the whole batch."""
    loaded = _with_events(session, ids)
    rows = _by_match(session, LedgerEntry.__table__, ids)
    ledger.prepare(session, [e for entries in rows.values() for e in entries])
    return [
        MatchPage(
            season=header,
            played=_played(match, events),
            result=_result(match),
            ledger=_ledger_histories(match, rows[match.id], ledger),
            chain=public_events(match, events),
            record=control_record(events, header.names),
        )
        for match, events in loaded
    ]


def _result(match: Match) -> ResultView | None:
    if match.status != "finished" or not match.result:
        return None
    result = match.result
    return ResultView(
        outcome=dict(result.get("outcome") or {}),
        victory_points=dict(result.get("victory_points") or {}),
        reason=str(result.get("reason") or ""),
        scores=dict(result.get("scores") or {}),
        awards=dict(result.get("awards") or {}),
        ranking=[str(p) for p in result.get("ranking") or []],
    )


def _ledger_histories(match: Match, entries: list[Any], ledger: SeasonLedger) -> list[LedgerHistory]:
    """Each player's movements per currency, in the match's order, with the balance after
    each: the season balance for a season currency, the running total for a match's own."""
    histories = []
    for seat in match.seats:
        player = PlayerRef(seat.player.key, seat.player.name)
        by_currency: dict[str, list[LedgerLine]] = {}
        total: dict[str, int] = defaultdict(int)
        for e in entries:
            if player.key not in (e.from_account, e.to_account) or e.from_account == e.to_account:
                continue
            amount = e.amount if e.to_account == player.key else -e.amount
            total[e.currency] += amount
            in_season = e.currency != MATCH_CHIPS
            balance = ledger.balance_after(e.id, player.key) if in_season else total[e.currency]
            by_currency.setdefault(e.currency, []).append(
                LedgerLine(
                    seq=e.seq,
                    at=e.at,
                    step_key=e.step_key,
                    counterparty=e.from_account if amount > 0 else e.to_account,
                    reason=e.reason,
                    amount=amount,
                    balance=balance,
                )
            )
        for currency in sorted(by_currency, key=lambda c: (c != SEASON_CHIPS, c != MATCH_CHIPS, c)):
            histories.append(LedgerHistory(player, currency, currency != MATCH_CHIPS, by_currency[currency]))
    return histories


class SeasonLedger:
    """A season's balances after each movement, per account and currency, in the order they
    moved (instant, then row): what a player held in the season right after a row of one
    of their matches, counting every other match they played meanwhile.

    For a few matches it reads the rows of their players only; for many (``whole``: a full
    build) it reads the season's rows once and keeps the balances for the whole build."""

    def __init__(self, season_id: int, *, whole: bool = False):
        self.season_id = season_id
        self.whole = whole
        self._after: dict[tuple[int, str], int] = {}
        self._loaded_whole = False

    def prepare(self, session: Session, entries: Sequence[Any]) -> None:
        """Have the balances after these ledger rows ready."""
        wanted = [e for e in entries if e.currency != MATCH_CHIPS and (e.id, e.to_account) not in self._after]
        if not wanted or self._loaded_whole:
            return
        query = select(
            LedgerEntry.id,
            LedgerEntry.from_account,
            LedgerEntry.to_account,
            LedgerEntry.currency,
            LedgerEntry.amount,
        ).where(LedgerEntry.season_id == self.season_id, LedgerEntry.currency != MATCH_CHIPS)
        if not self.whole:
            named = accounts()
            players = sorted({a for e in wanted for a in (e.from_account, e.to_account) if a not in named})
            last = max((e.at, e.id) for e in wanted)
            query = query.where(
                or_(LedgerEntry.to_account.in_(players), LedgerEntry.from_account.in_(players)),
                LedgerEntry.at <= last[0],
            )
        balance: dict[tuple[str, str], int] = defaultdict(int)
        for row_id, frm, to, currency, amount in session.execute(query.order_by(LedgerEntry.at, LedgerEntry.id)):
            balance[(frm, currency)] -= amount
            balance[(to, currency)] += amount
            self._after[(row_id, frm)] = balance[(frm, currency)]
            self._after[(row_id, to)] = balance[(to, currency)]
        self._loaded_whole = self.whole

    def balance_after(self, row_id: int, account: str) -> int:
        return self._after[(row_id, account)]


# ---------------------------------------------------------------------------- a player


@dataclass(frozen=True)
class PlayerPage:
    season: SeasonHeader
    player: PlayerRef
    timezone: str
    standing: Standing | None
    matches: list[MatchRow] = field(default_factory=list)  # by start


def player_pages(session: Session, data: SeasonData, players: Sequence[str]) -> list[PlayerPage]:
    """The pages of these players of the season: each one's matches and standing."""
    zones = {key: tz for key, _, tz in data.header.players}
    names = data.header.names
    ids: dict[str, list[int]] = defaultdict(list)
    for chunk in _chunks(sorted(players), 500):
        for key, match_id in session.execute(
            select(Player.key, Seat.match_id)
            .join(Seat, Seat.player_id == Player.id)
            .where(Player.season_id == data.header.id, Player.key.in_(chunk))
        ):
            ids[key].append(match_id)
    rows = match_rows(session, [i for found in ids.values() for i in found])
    return [
        PlayerPage(
            season=data.header,
            player=PlayerRef(key, names[key]),
            timezone=zones[key],
            standing=data.standing(key),
            matches=sorted((rows[i] for i in ids.get(key, ())), key=lambda r: (r.starts_at, r.key)),
        )
        for key in players
    ]


def _chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
