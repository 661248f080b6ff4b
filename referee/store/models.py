"""SQLAlchemy 2 models: the ledger of everything the referee knows.

Tables
------
seasons, players      what the organizer loaded from a season TOML file
matches, seats        one row per match (with a snapshot of its state) and per player in it
events                the append-only log of accepted moves and closed deadlines; with the
                      match seed it rebuilds any match (``referee.match.book.replay``); each
                      event carries the hash of the one before (``referee.archive.chain``)
inbound               every mail that reached us, committed before its file is marked processed
inbox_problems        inbox files that could not be read or moved (shown by ``referee status``)
outbox                every mail we owe somebody, written in the same transaction as the
                      change that caused it, then delivered with retries
bounces               what became of outbox mail that did not arrive: delivery reports and
                      bounces read from inbound mail, and the transport's permanent refusals
ledger                movements of each currency between accounts (players, "LGT", "SEASON",
                      a match's "pot" ...): double entry, one currency per row; a player's
                      season balance is the sum over the season's chips ("chips") only
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    func,
)
from sqlalchemy.ext.hybrid import hybrid_property
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from referee.archive.chain import GENESIS


class UTCDateTime(TypeDecorator):
    """Stores naive UTC, returns aware UTC. All times inside the referee are UTC."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; all times must be aware UTC")
        return value.astimezone(timezone.utc).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        return None if value is None else value.replace(tzinfo=timezone.utc)


NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Season(Base):
    __tablename__ = "seasons"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)

    players: Mapped[list[Player]] = relationship(back_populates="season")


class Player(Base):
    __tablename__ = "players"
    __table_args__ = (
        UniqueConstraint("season_id", "key", name="uq_players_season_key"),
        UniqueConstraint("season_id", "email", name="uq_players_season_email"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    season_id: Mapped[int] = mapped_column(ForeignKey("seasons.id"))
    key: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(200))
    # None: a player without an address, never mailed, who sits only at silent seats (seats
    # that never act, such as Betting Minority's participants); addresses that are set are
    # unique per season (NULLs are distinct in the unique constraint on both backends)
    email: Mapped[str | None] = mapped_column(String(320), index=True, nullable=True)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")  # the season file's
    # the zone the player chose by mail (TIMEZONE, referee.pipeline.player_commands), None if
    # none: it wins over the file's until the file changes this player's zone (referee.seasons)
    timezone_chosen: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # when the player lost a death match, and which (its key): an eliminated player plays no
    # later match of the season (referee.season); None for a live player
    eliminated_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    eliminated_in: Mapped[str | None] = mapped_column(String(64), nullable=True)

    season: Mapped[Season] = relationship(back_populates="players")

    @hybrid_property
    def zone(self) -> str:
        """The zone a player's times are shown in: the one they chose by mail, else the file's."""
        return self.timezone_chosen or self.timezone

    @zone.inplace.expression
    @classmethod
    def _zone_expression(cls) -> Any:
        return func.coalesce(cls.timezone_chosen, cls.timezone)


class Match(Base):
    __tablename__ = "matches"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    season_id: Mapped[int] = mapped_column(ForeignKey("seasons.id"))
    key: Mapped[str] = mapped_column(String(64), unique=True)
    game: Mapped[str] = mapped_column(String(64))
    seed: Mapped[int] = mapped_column(BigInteger)
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # step lengths in seconds per step kind, and reminder offsets in seconds before a deadline
    timing: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # scheduled -> running -> finished
    status: Mapped[str] = mapped_column(String(16), default="scheduled", index=True)
    state: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # the open step whose deadline comes first (with step_kind, step_opened_at, deadline): in
    # most games the only open step; a game of concurrent steps lists them all in open_steps
    step_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    step_kind: Mapped[str | None] = mapped_column(String(64), nullable=True)
    step_opened_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    deadline: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True, index=True)
    # when the next reminder for an open step is due (None: no reminder pending)
    remind_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True, index=True)
    # every open step, in the game's order: [{"key", "kind", "opened_at", "deadline",
    # "remind_at"}], instants as ISO 8601 UTC, deadline and remind_at None for a waiting step
    # (referee.match.opensteps); the columns above are the one of these whose deadline is first
    open_steps: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    # optimistic lock: every change bumps it, so two closers cannot both close a step
    version: Mapped[int] = mapped_column(Integer, default=0)
    # seq of the match's last event (saves a MAX() query per event; events are unique by seq)
    last_event_seq: Mapped[int] = mapped_column(Integer, default=0)
    # hash of the match's last event (the head of its hash chain, referee.archive.chain)
    last_event_hash: Mapped[str] = mapped_column(String(64), default=GENESIS, server_default=GENESIS)
    # commitments to the sealed moves of the open step, told to their movers in receipts, and
    # those of the step that closed last, revealed in its mails: {"open": {player: [seal]},
    # "revealed": {"step": key, "players": {player: [seal]}}} (referee.match.seals)
    seals: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # why the match could not start (set by the clock, cleared by the next season load,
    # after which its start is tried again); None once started or never tried
    problem: Mapped[str | None] = mapped_column(Text, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # what the match is to its season (referee.season): "main", "nomination" or "death"; None
    # for a match of no season frame
    kind: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # the match this one follows: a nomination's main match, a death match's nomination
    follows_id: Mapped[int | None] = mapped_column(ForeignKey("matches.id"), nullable=True)
    # "live": the seats are the season's live players, taken at the start; None: as loaded
    seating: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # {player: steps missed in a row} (the abandonment rule: timing["abandon_after"]); a step
    # closed at its deadline without the player's submission counts one, a move resets it
    absences: Mapped[dict[str, int] | None] = mapped_column(JSON, nullable=True)

    __mapper_args__ = {"version_id_col": version}

    seats: Mapped[list[Seat]] = relationship(back_populates="match", order_by="Seat.position")
    season: Mapped[Season] = relationship()
    follows: Mapped[Match | None] = relationship(remote_side=[id], back_populates="followers")
    followers: Mapped[list[Match]] = relationship(back_populates="follows", order_by="Match.id")


class Seat(Base):
    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("match_id", "player_id", name="uq_seats_match_player"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), index=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)

    match: Mapped[Match] = relationship(back_populates="seats")
    player: Mapped[Player] = relationship()


class Event(Base):
    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("match_id", "seq", name="uq_events_match_seq"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"))
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))  # start | move | timeout
    # the open step whose deadline comes first (with step_kind, step_opened_at, deadline): in
    # most games the only open step; a game of concurrent steps lists them all in open_steps
    step_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    player: Mapped[str | None] = mapped_column(String(64), nullable=True)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    at: Mapped[datetime] = mapped_column(UTCDateTime)  # effective time (arrival or deadline)
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound.id"), nullable=True)
    # the hash chain (referee.archive.chain): SHA-256 of the event's canonical body, and of
    # the previous event's hash followed by that digest
    digest: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class SeasonEvent(Base):
    """The season's own hash chain: the organizer's commands about the season rather than one
    match (an adjustment, an announcement to the season), chained as a match's events are
    (:mod:`referee.season.record`)."""

    __tablename__ = "season_events"
    __table_args__ = (UniqueConstraint("season_id", "seq", name="uq_season_events_season_seq"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    season_id: Mapped[int] = mapped_column(ForeignKey("seasons.id"))
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))  # adjust | announce
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    at: Mapped[datetime] = mapped_column(UTCDateTime)
    digest: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class Inbound(Base):
    """One delivered copy of a mail. Every value taken from the mail is bounded to its column
    (long ones cut, the full raw mail kept), so no mail can overflow a column."""

    __tablename__ = "inbound"
    __table_args__ = (
        Index("ix_inbound_status_received", "status", "received_at"),
        Index("ix_inbound_sender_body", "sender", "body_digest"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # what makes two deliveries the same mail: a digest of its content without trace headers
    # (see referee.mail.identity); None on the record of a duplicate delivery
    dedupe_key: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    duplicate_of: Mapped[int | None] = mapped_column(ForeignKey("inbound.id"), nullable=True)
    message_id: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)  # cut to 255
    source: Mapped[str] = mapped_column(String(500))  # transport's name for it (file name, UID), cut to 500
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)  # reached our server
    # pending -> accepted | rejected | ignored | quarantined (after failing twice)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    rule: Mapped[str | None] = mapped_column(String(64), nullable=True)  # the named rule that decided
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # processing attempts that failed
    sender: Mapped[str | None] = mapped_column(String(320), nullable=True)  # From address, when usable
    body_digest: Mapped[str | None] = mapped_column(String(64), nullable=True)  # of what the player wrote
    match_id: Mapped[int | None] = mapped_column(ForeignKey("matches.id"), nullable=True)
    player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id"), nullable=True)
    processed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class InboxProblem(Base):
    """A file in the inbox the referee could not read or move: skipped, logged, shown in status."""

    __tablename__ = "inbox_problems"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source: Mapped[str] = mapped_column(String(500), unique=True)
    reason: Mapped[str] = mapped_column(Text)
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    count: Mapped[int] = mapped_column(Integer, default=1)


class Outbox(Base):
    __tablename__ = "outbox"
    __table_args__ = (
        Index("ix_outbox_status_next", "status", "next_attempt_at"),
        Index("ix_outbox_to_created", "to_addr", "created_at"),  # replies per address, for throttling
        Index("ix_outbox_sent_at", "sent_at"),  # the latest success, for a cause of failure that cleared
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dedupe_key: Mapped[str] = mapped_column(String(300), unique=True)
    message_id: Mapped[str] = mapped_column(String(400), index=True)
    kind: Mapped[str] = mapped_column(String(32))  # step | receipt | error | reminder | notice
    match_id: Mapped[int | None] = mapped_column(ForeignKey("matches.id"), nullable=True, index=True)
    # the open step whose deadline comes first (with step_kind, step_opened_at, deadline): in
    # most games the only open step; a game of concurrent steps lists them all in open_steps
    step_key: Mapped[str | None] = mapped_column(String(64), nullable=True)  # the step open when written
    step_title: Mapped[str | None] = mapped_column(String(200), nullable=True)  # its title, for a stale reply
    to_addr: Mapped[str] = mapped_column(String(320))
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound.id"), nullable=True, index=True)  # answers
    message: Mapped[bytes] = mapped_column(LargeBinary)
    # the game's form the mail carried, as written (None: no form): a reply is read against it
    form: Mapped[str | None] = mapped_column(Text, nullable=True)
    # the text a reader sees of it (its plain part, decoded), kept when it was made: a reply is
    # read against it (NULL: read from the message, as for a mail noted late on delivery)
    shown: Mapped[str | None] = mapped_column(Text, nullable=True)
    # pending -> sent | failed; sent -> bounced (a hard bounce came back for it)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # delivery (referee.pipeline.deliver): the holder of a claim under way (referee.store.lease:
    # taken over at once when that holder has ended), NULL when unclaimed
    claimed_by: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # the cause of the last failed attempt: disk | server | recipient | other (NULL: none failed),
    # and when it failed: mail waiting for the disk or the server is due once it works again
    fail_cause: Mapped[str | None] = mapped_column(String(16), nullable=True)
    failed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # the step's deadline the mail names as still to come, written with it (referee.match.notices;
    # a step mail's as delivery last found it: retries come before it, status says when it passed
    # with the mail undelivered); delivery past it drops a reminder, notes any other mail as late
    deadline: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class Bounce(Base):
    """One recipient's failure (or delay) for one outbox mail: from a delivery report or a
    bounce that came back (``inbound_id``), or from the transport's permanent refusal.
    ``verified``: it names its outbox row by a signed bounce address (or our own transport
    said it), so it counts for the unreachable rule; a report to the plain address is kept,
    and counts for nothing (anyone can write one)."""

    __tablename__ = "bounces"
    __table_args__ = (Index("ix_bounces_address_received", "address", "received_at"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    outbox_id: Mapped[int | None] = mapped_column(ForeignKey("outbox.id"), nullable=True, index=True)
    player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id"), nullable=True, index=True)
    address: Mapped[str] = mapped_column(String(320))  # the recipient that failed, lowercased
    # failed | delayed | delivered | relayed | expanded, as the report says ("" when it says none)
    action: Mapped[str] = mapped_column(String(32))
    status: Mapped[str | None] = mapped_column(String(16), nullable=True)  # enhanced status code, e.g. 5.1.1
    diagnostic: Mapped[str | None] = mapped_column(Text, nullable=True)  # bounded (referee.mail.bounces)
    source: Mapped[str] = mapped_column(String(16))  # dsn | plain (a bounce that is no report) | refused
    hard: Mapped[bool] = mapped_column(Boolean)  # a permanent failure: failed, no 4.x.x status
    verified: Mapped[bool] = mapped_column(Boolean)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)  # the bounce's arrival (or the refusal)
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound.id"), nullable=True, index=True)


class LedgerEntry(Base):
    __tablename__ = "ledger"
    __table_args__ = (
        UniqueConstraint("match_id", "seq", name="uq_ledger_match_seq"),
        # a player's balance is the sum of what came in minus what went out
        Index("ix_ledger_season_to", "season_id", "to_account"),
        Index("ix_ledger_season_from", "season_id", "from_account"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    season_id: Mapped[int] = mapped_column(ForeignKey("seasons.id"))
    match_id: Mapped[int | None] = mapped_column(ForeignKey("matches.id"), nullable=True)
    # position of the movement within the match's transfers (None for season grants)
    seq: Mapped[int | None] = mapped_column(Integer, nullable=True)
    from_account: Mapped[str] = mapped_column(String(64))
    to_account: Mapped[str] = mapped_column(String(64))
    # what moves: "chips" (the season's chips, shared by a player's matches), "stack" (a
    # match's own chips, e.g. a duel's), or a season currency a result awards
    currency: Mapped[str] = mapped_column(String(32), default="chips", server_default="chips")
    amount: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(200))
    # the open step whose deadline comes first (with step_kind, step_opened_at, deadline): in
    # most games the only open step; a game of concurrent steps lists them all in open_steps
    step_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime)
