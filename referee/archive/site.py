"""Building the archive's static site, incrementally.

Layout (every link relative, so the folder works from ``file://`` and any web root)::

    index.html                                    the seasons
    style.css                                     the one stylesheet
    seasons/<season>/index.html                   standings, open now, latest results
    seasons/<season>/feed.atom                    the season's latest 100 closed rounds
    seasons/<season>/schedule/page-<n>.html       the schedule, 200 matches a page
    seasons/<season>/players/<player>.html        a player's matches
    seasons/<season>/matches/<match>/index.html   a match: summary, result, charts, an index of its pages
    seasons/<season>/matches/<match>/rounds-<n>.html   a few of its rounds (:func:`pages.round_page`)
    seasons/<season>/matches/<match>/ledger-<n>.html   its ledger, events-<n>.html its event log,
                                                  seals-<n>.html its sealed moves (long parts paged)
    seasons/<season>/matches/<match>/feed.atom    its closed rounds
    seasons/<season>/matches/<match>/chain.json   its public event records (``referee archive verify --site``)
    .archive.json                                 the manifest: what the last build wrote, from what

**Incremental.** Every page has a *fingerprint*: a digest of what it is made of (for a
match page the match's id, ``version``, ``last_event_seq``, status and seats; for a season
page those of all its matches; and for every page the season's name and players, the
templates and the code). The manifest keeps each file's fingerprint; a build renders only
the files whose fingerprint changed (or that are missing), and writes a file only if its
bytes changed, atomically (a temporary file, then ``os.replace``). An unchanged match
costs its light row only (:func:`referee.archive.model.stamps`). ``full=True`` renders
every page. A file the site no longer has (a match removed) is deleted only if the
manifest says this builder wrote it.

The database is only read, in a transaction that takes no write lock (on SQLite a
deferred one: the service's ticks go on meanwhile).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import create_engine, event
from sqlalchemy.orm import Session

from referee.mail.calendar import player_calendar
from referee.archive import feeds, model, pages
from referee.archive.model import MatchRounds, MatchStamp, SeasonData, SeasonHeader, SeasonLedger
from referee.archive.pages import Paths
from referee.config import ArchiveSettings
from referee.render import template_dir
from referee.store.db import Store, json_dumps

__all__ = ["BuildReport", "build", "keep_current"]

log = logging.getLogger("referee.archive")

SCHEDULE_PAGE = 200  # matches per schedule page
FEED_ROUNDS = 100  # closed rounds in a season's feed
MATCH_BATCH = 50  # match pages loaded together
WHOLE_LEDGER = 200  # from this many match pages of a season on, its ledger is read once, whole
MANIFEST_FORMAT = 2
RENDER_ORDER = ("match", "player", "schedule", "season", "index", "static")

# the code whose output is on the pages: a change to any of it renders every page again
CODE = ("referee/archive", "referee/games", "referee/render.py", "referee/timefmt.py")


@dataclass
class BuildReport:
    written: int = 0  # files whose bytes changed (or that are new)
    unchanged: int = 0  # rendered again, same bytes: left as they were
    skipped: int = 0  # not rendered: their inputs are as the last build found them
    removed: int = 0  # files of a former build the site no longer has

    def summary(self) -> str:
        return f"{self.written} written, {self.unchanged} unchanged, {self.skipped} skipped (inputs unchanged)" + (
            f", {self.removed} removed" if self.removed else ""
        )


def build(
    store: Store, outdir: Path | str, *, now: datetime, full: bool = False, base_url: str | None = None
) -> BuildReport:
    """Bring the site in ``outdir`` up to date with the database (every page with ``full``).
    ``base_url``: where the site is published, for the feeds' absolute links. ``now`` is
    when the build ran (logged); no page depends on it, so an unchanged page stays so."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    with reading(store) as session:
        report = _Build(session, out.resolve(), full=full, base_url=base_url).run()
    log.info("archive %s built at %s: %s", out, now.isoformat(), report.summary())
    return report


def keep_current(store: Store, settings: ArchiveSettings, now: datetime) -> BuildReport:
    """The incremental build ``referee run`` does after a cycle that changed something
    (``[archive]`` in the service config)."""
    return build(store, settings.dir, now=now, base_url=settings.base_url)


# ---------------------------------------------------------------------------- reading


@contextmanager
def reading(store: Store) -> Iterator[Session]:
    """A session that only reads, from one snapshot of the database throughout (the light
    rows and the pages agree). The store's own transactions on SQLite begin IMMEDIATE (they
    take the write lock, to serialise ticks); a build that held it for minutes would stop
    the service, so on SQLite this is a deferred transaction on an engine of its own: in
    WAL mode a reader never blocks a writer. On PostgreSQL, a REPEATABLE READ transaction."""
    if store.engine.dialect.name != "sqlite" or store.engine.url.database in (None, "", ":memory:"):
        with store.unit_of_work() as session:
            if store.engine.dialect.name == "postgresql":
                session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            yield session
        return
    engine = create_engine(
        store.engine.url, connect_args={"timeout": 30}, json_serializer=json_dumps, json_deserializer=orjson.loads
    )

    @event.listens_for(engine, "connect")
    def _deferred(dbapi_conn, _record):  # pragma: no cover - trivial
        dbapi_conn.isolation_level = None
        dbapi_conn.execute("PRAGMA busy_timeout=30000")

    @event.listens_for(engine, "begin")
    def _begin(conn):  # pragma: no cover - trivial
        conn.exec_driver_sql("BEGIN")

    try:
        with Session(engine) as session, session.begin():
            yield session
    finally:
        engine.dispose()


# ---------------------------------------------------------------------------- fingerprints


def digest(*parts: Any) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


@cache
def code_digest() -> str:
    """The templates of the archive and the code that renders them, as one digest."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent.parent
    sources = [root / part for part in CODE]
    sources.append(template_dir() / "archive")
    for source in sources:
        files = sorted(source.rglob("*")) if source.is_dir() else [source]
        for path in files:
            if path.is_file() and path.suffix in (".py", ".html", ".txt", ".css"):
                h.update(path.relative_to(source).as_posix().encode())
                h.update(path.read_bytes())
    try:
        h.update(metadata.version("referee").encode())
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        pass
    h.update(str(MANIFEST_FORMAT).encode())
    return h.hexdigest()


def header_digest(header: SeasonHeader) -> str:
    """What every page of a season shows of it: its name and its players' names."""
    return digest(header.key, header.name, header.created_at.isoformat(), header.players)


# ---------------------------------------------------------------------------- the plan


@dataclass
class Job:
    """Files rendered together from one load of their inputs."""

    kind: str  # static | index | season | schedule | player | match
    files: tuple[str, ...]
    fingerprint: str
    season: SeasonHeader | None = None
    key: Any = None  # the index's seasons, a schedule page's (number, stamps), a player's key, a match's stamp
    # a match's pages beyond its three fixed files (rounds-<n>.html ...): as many as it has
    # rounds, rows, so known only once rendered; until then those the last build wrote
    extra: list[str] = field(default_factory=list)

    @property
    def all_files(self) -> list[str]:
        return [*self.files, *self.extra]


@dataclass
class Manifest:
    """What the last build wrote, from what (``.archive.json``): each file's fingerprint, and
    per season the told rounds of the matches its feed showed (:class:`feeds.RoundCache`)."""

    files: dict[str, str] = field(default_factory=dict)
    rounds: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, out: Path) -> Manifest:
        """The last build's manifest; an empty one when there is none or it cannot be read
        (then everything is rendered, and nothing is removed)."""
        try:
            data = json.loads((out / Paths.MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if (
            not isinstance(data, dict)
            or data.get("format") != MANIFEST_FORMAT
            or not isinstance(data.get("files"), dict)
        ):
            return cls()
        rounds = data.get("rounds")
        return cls({str(k): str(v) for k, v in data["files"].items()}, rounds if isinstance(rounds, dict) else {})

    def write(self, out: Path) -> None:
        data = {"format": MANIFEST_FORMAT, "files": dict(sorted(self.files.items())), "rounds": self.rounds}
        write_if_changed(out, Paths.MANIFEST, pages.json_file(data, indent=False))


@dataclass
class _Build:
    session: Session
    out: Path
    full: bool
    base_url: str | None
    report: BuildReport = field(default_factory=BuildReport)
    _data: dict[int, SeasonData] = field(default_factory=dict)
    _rounds: feeds.RoundCache = field(default_factory=feeds.RoundCache)
    _fingerprints: dict[str, str] = field(default_factory=dict)  # match key -> its pages' fingerprint
    _fed: dict[str, set[str]] = field(default_factory=dict)  # season -> the matches its feed shows

    def run(self) -> BuildReport:
        manifest = Manifest.read(self.out)
        if not self.full:
            self._rounds = feeds.RoundCache({k: v for kept in manifest.rounds.values() for k, v in kept.items()})
        headers = model.season_headers(self.session)
        by_season: dict[int, list[MatchStamp]] = defaultdict(list)
        for stamp in model.stamps(self.session):
            by_season[stamp.season_id].append(stamp)
        base = digest(code_digest(), self.base_url)
        jobs = list(self.plan(base, headers, by_season))
        self.known_extras(jobs, manifest.files)
        stale = [job for job in jobs if self.full or not self.current(job, manifest.files)]
        self.report.skipped = sum(len(job.all_files) for job in jobs) - sum(len(job.all_files) for job in stale)
        self.render(stale, by_season)
        wanted = {path: job.fingerprint for job in jobs for path in job.all_files}
        self.remove(set(manifest.files) - set(wanted))
        fed = {season: set(kept) for season, kept in manifest.rounds.items()} | self._fed
        rounds = {h.key: self._rounds.stored(fed[h.key]) for h in headers if h.key in fed}
        Manifest(wanted, rounds).write(self.out)
        return self.report

    def plan(self, base: str, headers: Sequence[SeasonHeader], by_season: dict[int, list[MatchStamp]]) -> Iterator[Job]:
        """Every file of the site, with the fingerprint of its inputs."""
        yield Job("static", (Paths.STYLE, Paths.GUIDE), digest(base, "style"))
        seasons = [(h, len(by_season.get(h.id, ()))) for h in headers]
        yield Job("index", (Paths.INDEX,), digest(base, [(header_digest(h), n) for h, n in seasons]), key=seasons)
        for header in headers:
            season = digest(base, header_digest(header))
            stamps = sorted(by_season.get(header.id, ()), key=model.schedule_order)
            everything = digest(season, header.record, [s.fingerprint for s in stamps])
            yield Job("season", (Paths.season(header.key), Paths.season_feed(header.key)), everything, header)
            chunks = [stamps[i : i + SCHEDULE_PAGE] for i in range(0, len(stamps), SCHEDULE_PAGE)] or [[]]
            for number, chunk in enumerate(chunks, 1):
                fingerprint = digest(season, number, len(chunks), len(stamps), [s.fingerprint for s in chunk])
                yield Job("schedule", (Paths.schedule(header.key, number),), fingerprint, header, (number, chunk))
            played: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
            for s in stamps:
                for player in s.players:
                    played[player].append(s.fingerprint)
            for player, _, _ in header.players:
                files = (Paths.player(header.key, player), Paths.player_calendar(header.key, player))
                yield Job("player", files, digest(season, played[player]), header, player)
            for s in stamps:
                files = (
                    Paths.match(header.key, s.key),
                    Paths.match_feed(header.key, s.key),
                    Paths.chain(header.key, s.key),
                )
                self._fingerprints[s.key] = fingerprint = digest(season, s.fingerprint)
                yield Job("match", files, fingerprint, header, s)

    @staticmethod
    def known_extras(jobs: Sequence[Job], files: dict[str, str]) -> None:
        """Give each match job the pages beyond its fixed files that the last build wrote for
        it (those in its folder: a match's folder holds its pages only)."""
        folders: dict[str, list[str]] = defaultdict(list)
        for path in files:
            folder, _, _ = path.rpartition("/")
            folders[folder].append(path)
        for job in jobs:
            if job.kind == "match":
                fixed = set(job.files)
                folder = job.files[0].rpartition("/")[0]
                job.extra = sorted(path for path in folders.get(folder, ()) if path not in fixed)

    def current(self, job: Job, files: dict[str, str]) -> bool:
        """Is every file of ``job`` there, from the inputs it has now? (Plain string paths:
        an unchanged season of ten thousand matches asks this thirty thousand times.)"""
        root = str(self.out)
        return all(
            files.get(path) == job.fingerprint and os.path.isfile(os.path.join(root, path)) for path in job.all_files
        )

    # ------------------------------------------------------------------ rendering

    def render(self, jobs: Sequence[Job], by_season: dict[int, list[MatchStamp]]) -> None:
        grouped: dict[tuple[str, int | None], list[Job]] = defaultdict(list)
        for job in jobs:
            grouped[(job.kind, job.season.id if job.season else None)].append(job)
        # the match pages first: the season feed reuses the rounds they told
        for (kind, season_id), group in sorted(grouped.items(), key=lambda item: RENDER_ORDER.index(item[0][0])):
            stamps = by_season.get(season_id, []) if season_id is not None else []
            getattr(self, f"_render_{kind}")(group, stamps)

    def _render_static(self, jobs: list[Job], _stamps: list[MatchStamp]) -> None:
        self.write(Paths.STYLE, pages.render_style())
        self.write(Paths.GUIDE, pages.render_guide())

    def _render_index(self, jobs: list[Job], _stamps: list[MatchStamp]) -> None:
        self.write(Paths.INDEX, pages.render_index(jobs[0].key))

    def _render_season(self, jobs: list[Job], stamps: list[MatchStamp]) -> None:
        [job] = jobs
        header = job.season
        schedule_pages = max(1, -(-len(stamps) // SCHEDULE_PAGE))
        page = model.season_page(self.session, self.season_data(header), stamps, schedule_pages=schedule_pages)
        self.write(Paths.season(header.key), pages.render_season(page))
        latest = feeds.latest(stamps, lambda chunk: self.told(header, chunk), FEED_ROUNDS)
        self._fed[header.key] = {r.match for r in latest}
        self.write(
            Paths.season_feed(header.key),
            feeds.season_feed(self.feed_site(header), header, latest, {s.key: s.game for s in stamps}),
        )

    def _render_schedule(self, jobs: list[Job], stamps: list[MatchStamp]) -> None:
        total = len(stamps)
        count = max(1, -(-total // SCHEDULE_PAGE))
        for job in jobs:
            number, chunk = job.key
            rows = model.match_rows(self.session, [s.id for s in chunk])
            page = model.SchedulePage(
                season=job.season,
                number=number,
                pages=count,
                first=(number - 1) * SCHEDULE_PAGE + 1,
                total=total,
                rows=[rows[s.id] for s in chunk],
            )
            self.write(job.files[0], pages.render_schedule(page))

    def _render_player(self, jobs: list[Job], _stamps: list[MatchStamp]) -> None:
        data = self.season_data(jobs[0].season)
        for start in range(0, len(jobs), 200):
            chunk = jobs[start : start + 200]
            for job, page in zip(chunk, model.player_pages(self.session, data, [j.key for j in chunk]), strict=True):
                self.write(job.files[0], pages.render_player(page))
                # the open deadlines as a calendar to subscribe to; stamped with the season's
                # creation, so that it depends on the database only (as every page does)
                ics = player_calendar(self.session, data.header.id, job.key, data.header.created_at)
                self.write(job.files[1], ics)

    def _render_match(self, jobs: list[Job], _stamps: list[MatchStamp]) -> None:
        header = jobs[0].season
        by_key = {job.key.key: job for job in jobs}
        ledger = SeasonLedger(header.id, whole=len(jobs) >= WHOLE_LEDGER)
        site = self.feed_site(header)
        for start in range(0, len(jobs), MATCH_BATCH):
            chunk = jobs[start : start + MATCH_BATCH]
            for page in model.match_pages(self.session, header, [job.key.id for job in chunk], ledger):
                told = self.keep_told(header, page.played)
                rendered = pages.render_match_pages(page, told)
                for path, data in rendered:
                    self.write(path, data)
                by_key[page.key].extra = [path for path, _ in rendered[1:]]
                self.write(Paths.match_feed(header.key, page.key), feeds.match_feed(site, header, page.played, told))
                self.write(Paths.chain(header.key, page.key), pages.render_chain(page))
            self.session.expunge_all()  # a full build holds one batch of matches at a time

    def keep_told(self, header: SeasonHeader, played: MatchRounds) -> list[feeds.ToldRound]:
        """A match's rounds told, kept for the season feed (under its pages' fingerprint)."""
        told = feeds.told(header, played)
        self._rounds.put(played.row.key, self._fingerprints[played.row.key], told)
        return told

    def told(self, header: SeasonHeader, chunk: list[MatchStamp]) -> dict[str, list[feeds.ToldRound]]:
        """The told rounds of these matches: kept from their pages or the last build when
        their fingerprint is the same, else read and told now."""
        found = {s.key: self._rounds.get(s.key, self._fingerprints[s.key]) for s in chunk}
        missing = [s.id for s in chunk if found[s.key] is None]
        if missing:
            for played in model.played(self.session, missing).values():
                found[played.row.key] = self.keep_told(header, played)
            self.session.expunge_all()
        return found

    def season_data(self, header: SeasonHeader) -> SeasonData:
        if header.id not in self._data:
            self._data[header.id] = SeasonData.load(self.session, header)
        return self._data[header.id]

    def feed_site(self, header: SeasonHeader) -> feeds.FeedSite:
        return feeds.FeedSite(self.base_url, feeds.feed_authority(self.base_url, header.created_at))

    # ------------------------------------------------------------------ files

    def write(self, relpath: str, data: bytes) -> None:
        if write_if_changed(self.out, relpath, data):
            self.report.written += 1
        else:
            self.report.unchanged += 1

    def remove(self, gone: set[str]) -> None:
        """Delete the files a former build wrote that the site no longer has, then the
        folders that leaves empty."""
        for relpath in sorted(gone):
            path = inside(self.out, relpath)
            if path.is_file():
                path.unlink()
                self.report.removed += 1
            parent = path.parent
            while parent != self.out and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent


def inside(out: Path, relpath: str) -> Path:
    """``out / relpath``, refusing a path that would lead outside ``out`` (a manifest edited
    by hand, a link planted in the folder): the builder never touches anything else."""
    path = out / relpath
    resolved = path.resolve()
    if resolved != out and out not in resolved.parents:
        raise ValueError(f"refusing to write outside the site: {relpath}")
    return path


def write_if_changed(out: Path, relpath: str, data: bytes) -> bool:
    """Write ``data`` to ``relpath`` unless the file holds exactly these bytes already;
    atomically (a temporary file beside it, then ``os.replace``). True if written."""
    path = inside(out, relpath)
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return True
