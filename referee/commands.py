"""The ``referee`` subcommands (:mod:`referee.cli` parses the command line and calls them).

Kept apart from the parser so that ``referee --help`` imports none of this: the
configuration, the database layer and the engines come with the command that uses them.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from referee.config import (
    CONFIG_NAME,
    ConfigError,
    ServiceConfig,
    find_config,
    load_service_config,
    new_secret,
    parse_instant,
)
from referee.config.new_file import PASSWORD_ENV, init_config_text

if TYPE_CHECKING:  # the database layer is imported by the commands that use it
    from referee.store.db import Store

# where database errors come from: SQLAlchemy, and the drivers that `referee status` uses
# directly (referee.store.dbapi); "Error" is SQLAlchemyError in SQLAlchemy
_ERROR_MODULES = ("sqlalchemy.exc", "sqlite3", "psycopg")


def _is_database_error(exc: BaseException, kind: str = "Error") -> bool:
    """Is ``exc`` a database error (of this DB-API ``kind``, e.g. ``OperationalError``)?
    Looked up among the modules loaded only: a command that never loaded one cannot get
    its errors."""
    for name in _ERROR_MODULES:
        module = sys.modules.get(name)
        base = getattr(module, "SQLAlchemyError" if kind == "Error" and name == "sqlalchemy.exc" else kind, None)
        if base is not None and isinstance(exc, base):
            return True
    return False


def _database_error_text(exc: BaseException) -> str:
    """One line: the driver's own message for an operational error, else SQLAlchemy's."""
    if _is_database_error(exc, "OperationalError"):
        return " ".join(str(getattr(exc, "orig", None) or exc).split())
    return str(exc)


# ---------------------------------------------------------------------------- commands


def cmd_init(args: argparse.Namespace) -> int:
    """All or nothing: if the database cannot be set up, what this run created is removed.
    Given a mailbox's servers (``--imap-host``, ``--smtp-host``), the new file reads and
    sends through them, and the checks of ``referee check-mail`` run at the end."""
    from referee.store.db import Store

    path = Path(args.config or os.environ.get("REFEREE_CONFIG") or CONFIG_NAME)
    hosted = bool(args.imap_host or args.smtp_host)
    _check_init_options(args, path, hosted)
    created: list[Path] = []  # files and folders this run made, in order
    store: Store | None = None
    db_files: list[Path] = []
    try:
        if not path.exists():
            text = init_config_text(
                args.database or "sqlite:///referee.db",
                new_secret(),
                address=args.address,
                imap_host=args.imap_host,
                smtp_host=args.smtp_host,
                user=args.user,
                ca_file=str(Path(args.ca_file).resolve()) if args.ca_file else None,
                smtp_login=not args.smtp_no_login,
            )
            _mkdirs(path.parent, created)
            # the file holds the secret: readable by its owner only
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            created.append(path)
            with os.fdopen(fd, "w") as handle:
                handle.write(text)
            wrote = True
        else:
            wrote = False
        config = load_service_config(path)
        db_file = sqlite_file(config.database)
        if db_file is not None and not db_file.exists():
            db_files = [db_file.with_name(db_file.name + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
        store = Store(config.database)
        store.migrate()
        store.dispose()
        store = None
        # the Maildirs the configuration uses (none for a mailbox read by IMAP and sent to by SMTP)
        for folder in (
            config.mail.inbox if config.mail.transport == "maildir" else None,
            config.mail.outbox if config.mail.outbound == "maildir" else None,
        ):
            if folder is not None:
                _mkdirs(folder, created)
    except BaseException:
        if store is not None:
            store.dispose()
        for leftover in db_files:
            leftover.unlink(missing_ok=True)
        for made in reversed(created):
            if made.is_dir():
                try:
                    made.rmdir()
                except OSError:
                    pass
            else:
                made.unlink(missing_ok=True)
        raise
    if wrote:
        print(f"wrote {path}" + ("" if args.address else " (edit [mail] address before real use)"))
    print(f"database ready: {safe_url(config.database)}")
    if not (wrote and hosted):
        return 0
    import asyncio

    from referee.mailcheck import check_mail

    print("checking the mail set-up (as `referee check-mail` does):")
    results = asyncio.run(check_mail(config))
    for ok, what in results:
        print(f"{'ok' if ok else 'FAILED'}: {what}")
    if all(ok for ok, _ in results):
        print(f"mail works; `referee check-mail --send-to YOU@EXAMPLE.ORG` sends a test mail through {path}")
        return 0
    print(f"fix {path} as the line above says, then run `referee check-mail` again")
    return 1


def _check_init_options(args: argparse.Namespace, path: Path, hosted: bool) -> None:
    """The options that describe a new file: only for a new file; a mailbox's servers need
    the address, and the password in the environment (never on the command line)."""
    given = [
        option
        for option, value in (
            ("--database", args.database),
            ("--address", args.address),
            ("--imap-host", args.imap_host),
            ("--smtp-host", args.smtp_host),
            ("--user", args.user),
            ("--ca-file", args.ca_file),
            ("--smtp-no-login", args.smtp_no_login),
        )
        if value
    ]
    if given and path.exists():
        raise ConfigError(f"{path} exists already; edit it instead of passing {', '.join(given)}")
    if (args.user or args.ca_file) and not hosted:
        raise ConfigError("--user and --ca-file are for a mailbox's servers: give --imap-host and/or --smtp-host")
    if hosted and not args.address:
        raise ConfigError("--imap-host and --smtp-host need --address, the mailbox's address (referee@example.org)")
    if args.smtp_no_login and not args.smtp_host:
        raise ConfigError("--smtp-no-login is for the server of --smtp-host")
    logs_in = args.imap_host or (args.smtp_host and not args.smtp_no_login)
    if logs_in and not os.environ.get(PASSWORD_ENV):
        raise ConfigError(
            f"set {PASSWORD_ENV} to the mailbox's password (an app password) in the environment first, "
            f"e.g. read -rs {PASSWORD_ENV} && export {PASSWORD_ENV}; it is never given on the command line"
        )


def _mkdirs(folder: Path, created: list[Path]) -> None:
    """``mkdir -p`` that records the folders it made."""
    missing = []
    for parent in [folder, *folder.parents]:
        if parent.exists():
            break
        missing.append(parent)
    for made in reversed(missing):
        made.mkdir()
        created.append(made)


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (None for other databases and in-memory SQLite)."""
    from referee.store.dbapi import sqlite_file

    name = sqlite_file(url)
    return None if name is None else Path(name)


def cmd_season_load(args: argparse.Namespace) -> int:
    from referee.config import load_season
    from referee.seasons import check_past_starts, season_plan
    from referee.seasons import load_season as load_into_store

    spec = load_season(args.file)
    now = datetime.now(timezone.utc)
    players, matches = len(spec.players), len(spec.matches)
    summary = (
        f"{args.file}: season {spec.key}: {players} player{'' if players == 1 else 's'}, "
        f"{matches} match{'' if matches == 1 else 'es'}"
    )
    store, why = None, f"no {CONFIG_NAME} here"
    if not args.check:
        store = open_store(args)[1]
    elif args.config or os.environ.get("REFEREE_CONFIG") or Path(CONFIG_NAME).exists():
        try:
            store = open_store(args)[1]
        except Exception as exc:  # --check works on the file alone, unless --config names a service
            if args.config or not (isinstance(exc, ConfigError) or _is_database_error(exc, "OperationalError")):
                raise
            why = str(exc) if isinstance(exc, ConfigError) else f"database error: {_database_error_text(exc)}"
    try:
        if store is None:  # --check with no database to compare with: every match counts as new
            warnings = check_past_starts(spec.matches, now, allow_past=args.allow_past)
        else:
            changes = load_into_store(store, spec, now, allow_past=args.allow_past, dry_run=args.check)
    except ConfigError as exc:
        raise ConfigError(f"{args.file}: {exc}") from None
    finally:
        if store is not None:
            store.dispose()
    if store is None:
        print(f"{summary}: OK (not compared with a database: {why})")
        for line in warnings:
            print(f"  {line}")
    elif args.check:
        print(f"{summary}: OK; loading it would change:" if changes else f"{summary}: OK; loading it changes nothing")
        for line in changes:
            print(f"  {line}")
    if args.check:
        print("what the season would start, and when (UTC):")
        for line in season_plan(spec, now):
            print(f"  {line}")
    else:
        for line in changes or ["no changes"]:
            print(line)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    import logging

    from scheduler.runner import ServiceRunner

    config, store = open_store(args)
    logging.getLogger().setLevel(logging.DEBUG if args.debug else config.log_level)
    if not args.debug:
        logging.getLogger("apscheduler").setLevel(logging.WARNING)  # it logs every job run at INFO
        logging.getLogger("alembic").setLevel(logging.WARNING)  # its set-up lines at every start
    referee = make_referee(config, store)
    runner = ServiceRunner(referee, poll_seconds=config.poll_seconds, grace_seconds=config.arrival_grace_seconds)
    import asyncio

    asyncio.run(runner.run())
    return 0


def cmd_tick(args: argparse.Namespace) -> int:
    now = parse_instant(args.now, "--now") if args.now else datetime.now(timezone.utc)
    config, store = open_store(args)
    report = make_referee(config, store).tick(now)
    print(f"tick at {now:%Y-%m-%dT%H:%M:%SZ}: {report.summary()}")
    if report.start_failed:  # the organizer's to fix: say where to look, and fail the command
        print(f"{report.start_failed} match(es) could not start: see `referee status`", file=sys.stderr)
        return 1
    return 0


def cmd_check_mail(args: argparse.Namespace) -> int:
    import asyncio

    from referee.mailcheck import check_mail

    config = load_service_config(find_config(args.config))
    results = asyncio.run(check_mail(config, args.send_to))
    for ok, what in results:
        print(f"{'ok' if ok else 'FAILED'}: {what}")
    return 0 if all(ok for ok, _ in results) else 1


def cmd_status(args: argparse.Namespace) -> int:
    """Plain SQL through the driver (referee.store.dbapi): no SQLAlchemy, no Alembic; through
    SQLAlchemy only for a database URL that module does not open itself."""
    from referee.status import report
    from referee.store.dbapi import read_connection, schema_state

    now = parse_instant(args.now, "--now") if args.now else datetime.now(timezone.utc)
    config = load_service_config(find_config(args.config))
    with read_connection(config.database) as reader:
        if reader is not None:
            check_schema(schema_state(reader), config.database)
            text = report(reader, now, args.match, mail=config.mail, secret=config.secret)
    if reader is None:
        from referee.status import status_text

        config, store = open_store(args)
        try:
            text = status_text(store, now, match_key=args.match, mail=config.mail, secret=config.secret)
        finally:
            store.dispose()
    print(text)
    return 0


def cmd_standings(args: argparse.Namespace) -> int:
    import json

    from referee.standings import season_standings, standings_json, standings_text

    _config, store = open_store(args)
    name, rows = season_standings(store, args.season)
    if args.json:
        print(json.dumps(standings_json(name, rows), indent=2, ensure_ascii=False))
    else:
        print(standings_text(name, rows))
    return 0


def cmd_calendar(args: argparse.Namespace) -> int:
    """``referee calendar PLAYER [FILE]``: an .ics of every upcoming deadline of the player
    (``referee.mail.calendar``), to FILE or standard output."""
    from referee.mail.calendar import player_calendar
    from referee.standings import one_season

    now = parse_instant(args.now, "--now") if args.now else datetime.now(timezone.utc)
    _config, store = open_store(args)
    with store.unit_of_work() as session:
        season = one_season(session, args.season)
        try:
            data = player_calendar(session, season.id, args.player, now)
        except KeyError:
            raise ConfigError(f"no player {args.player!r} in season {season.key}") from None
    if args.file is None or str(args.file) == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        Path(args.file).write_bytes(data)
        print(f"{args.file}: the upcoming deadlines of {args.player}")
    return 0


def _controls(args: argparse.Namespace):
    """The organizer's controls on the configured store, and the instant of the command."""
    from referee.season.controls import Controls

    config, store = open_store(args)
    referee = make_referee(config, store)
    now = parse_instant(args.now, "--now") if getattr(args, "now", None) else datetime.now(timezone.utc)
    return Controls(store, referee.book, referee.notices), now


def _print(lines: list[str]) -> int:
    for line in lines:
        print(line)
    print("(the mails go out with the next tick of the service)")
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    controls, now = _controls(args)
    return _print(controls.cancel(args.match, args.reason, now))


def cmd_pause(args: argparse.Namespace) -> int:
    controls, now = _controls(args)
    return _print(controls.pause(args.match or None, args.season, args.reason, now))


def cmd_resume(args: argparse.Namespace) -> int:
    controls, now = _controls(args)
    return _print(controls.resume(args.match or None, args.season, now))


def cmd_forfeit(args: argparse.Namespace) -> int:
    controls, now = _controls(args)
    return _print(controls.forfeit(args.match, args.player, args.reason, now))


def cmd_substitute(args: argparse.Namespace) -> int:
    controls, now = _controls(args)
    return _print(controls.substitute(args.match, args.old, args.new, args.reason, now))


def cmd_extend(args: argparse.Namespace) -> int:
    from referee.config import parse_duration

    controls, now = _controls(args)
    return _print(controls.extend(args.match, args.step, parse_duration(args.duration, "duration"), now))


def cmd_adjust(args: argparse.Namespace) -> int:
    try:
        amount = int(args.amount)
    except ValueError:
        raise ConfigError(f"amount {args.amount!r}: write +N or -N, a whole number") from None
    controls, now = _controls(args)
    return _print(controls.adjust(args.season, args.player, args.currency, amount, args.reason, now))


def cmd_announce(args: argparse.Namespace) -> int:
    try:
        text = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{args.file}: cannot read it as UTF-8 text ({exc})") from None
    controls, now = _controls(args)
    return _print(controls.announce(text, now, season=args.season, match=args.match))


def cmd_requeue(args: argparse.Namespace) -> int:
    from referee.status import requeue_failed

    _config, store = open_store(args)
    both = not (args.inbound or args.outbound)
    inbound, outbound = requeue_failed(
        store, inbound=both or args.inbound, outbound=both or args.outbound, now=datetime.now(timezone.utc)
    )
    print(f"requeued {inbound} inbound and {outbound} outbound mails; the next tick or poll processes them")
    return 0


def cmd_quarantine(args: argparse.Namespace) -> int:
    from referee.status import quarantine_text, requeue_quarantined

    _config, store = open_store(args)
    if not args.requeue:
        print(quarantine_text(store))
        return 0
    if args.requeue == ["all"]:
        ids = None
    else:
        try:
            ids = [int(value) for value in args.requeue]
        except ValueError:
            raise ConfigError(
                f"--requeue takes inbound ids (numbers) or 'all', got {' '.join(args.requeue)!r}"
            ) from None
    count = requeue_quarantined(store, ids)
    print(f"requeued {count} quarantined mail(s); the next tick or poll judges them by their arrival time")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from referee.demo import run_demo

    if args.install and args.transport != "imap":
        raise ConfigError("--install is for the demo over real mail: add --transport imap")
    if args.season is not None:
        from referee.demo.season import run_season_demo

        folder = args.dir if args.season is True else Path(args.season)
        return run_season_demo(folder, seed=args.seed, transport=args.transport, out=sys.stdout)
    return run_demo(
        args.dir, seed=args.seed, game=args.game, transport=args.transport, install=args.install, out=sys.stdout
    )


def _archive_dir(args: argparse.Namespace, config: ServiceConfig) -> Path:
    if args.outdir is not None:
        return args.outdir
    if config.archive is None:
        raise ConfigError("give the site's folder, or set [archive] dir in the service config")
    return config.archive.dir


def cmd_archive_build(args: argparse.Namespace) -> int:
    from referee.archive.site import build

    config, store = open_store(args)
    outdir = _archive_dir(args, config)
    base_url = config.archive.base_url if config.archive is not None else None
    report = build(store, outdir, now=datetime.now(timezone.utc), full=args.full, base_url=base_url)
    print(f"archive {outdir}: {report.summary()}")
    print(f"open {(outdir / 'index.html').resolve()} or run `referee archive serve {outdir}`")
    return 0


def cmd_archive_serve(args: argparse.Namespace) -> int:
    from referee.archive.serve import serve

    config = load_service_config(find_config(args.config)) if args.outdir is None else None
    outdir = args.outdir if config is None else _archive_dir(args, config)
    if not (outdir / "index.html").is_file():
        raise ConfigError(f"{outdir} holds no built site: run `referee archive build {outdir}` first")
    print(f"serving {outdir} at http://{args.host}:{args.port}/ (Ctrl-C stops)")
    serve(outdir, host=args.host, port=args.port)
    return 0


def cmd_archive_mbox(args: argparse.Namespace) -> int:
    from referee.archive.mbox import export

    if len(args.target) > 2:
        raise ConfigError("archive mbox takes at most a match id and a file")
    *match, path = args.target
    config, store = open_store(args)
    try:
        count = export(
            store,
            Path(path),
            match_key=match[0] if match else None,
            season_key=args.season,
            public_only=args.public,
            from_addr=config.mail.address,
            from_name=config.mail.name,
        )
    except LookupError as exc:
        raise ConfigError(str(exc)) from None
    print(f"wrote {count} mail(s) to {path}")
    return 0


def cmd_archive_verify(args: argparse.Namespace) -> int:
    from referee.archive.verify import verify_database, verify_site

    _config, store = open_store(args)
    try:
        checks = verify_database(store, args.match)
        if args.site is not None:
            checks += [c for c in verify_site(store, args.site) if args.match in (None, c.match)]
    except LookupError as exc:
        raise ConfigError(str(exc)) from None
    for check in checks:
        print(check)
    broken = [c for c in checks if not c.ok]
    print(f"{len(checks) - len(broken)} chain(s) hold, {len(broken)} broken")
    return 1 if broken else 0


def cmd_replay(args: argparse.Namespace) -> int:
    from referee.archive.verify import replay_match

    _config, store = open_store(args)
    try:
        check = replay_match(store, args.match)
    except LookupError as exc:
        raise ConfigError(str(exc)) from None
    print(check)
    return 0 if check.ok else 1


# ---------------------------------------------------------------------------- helpers


def open_store(args: argparse.Namespace) -> tuple[ServiceConfig, Store]:
    from referee.store.db import Store

    config = load_service_config(find_config(args.config))
    store = Store(config.database)
    check_schema(store.schema_state(), config.database)
    return config, store


def check_schema(state: str, url: str) -> None:
    """A database the referee cannot use yet (``state``: referee.store.dbapi.schema_state) is
    the organizer's to set up."""
    from referee.store.dbapi import MISSING, OLD

    if state == MISSING:
        raise ConfigError(f"database {safe_url(url)} is not set up: run `referee init` first")
    if state == OLD:
        raise ConfigError(f"database {safe_url(url)} needs migrating: run `referee init`")


def make_referee(config: ServiceConfig, store: Store):
    from referee.service import Referee

    return Referee.configured(store, config)


def safe_url(url: str) -> str:
    """The database URL without its password."""
    from referee.store.dbapi import safe_url

    return safe_url(url)
