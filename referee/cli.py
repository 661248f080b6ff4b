"""The ``referee`` command.

Bad input never ends in a traceback: configuration and usage problems print one line
naming the problem and exit 2; an unexpected failure prints one line and exits 1
(``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy.exc import OperationalError, SQLAlchemyError

from referee.config import (
    CONFIG_NAME,
    ConfigError,
    ServiceConfig,
    find_config,
    load_season,
    load_service_config,
    new_secret,
    parse_instant,
)
from referee.store.db import Store

EXAMPLE_CONFIG = """\
# referee service configuration (see deploy/example-referee.toml for every option)
database = "{database}"
secret = "{secret}"          # signs players' reply addresses: keep it private

[mail]
address = "referee@example.test"   # our address; players reply to referee+<token>@example.test
name = "Referee"
transport = "maildir"
inbox = "mail/inbox"               # Maildir that receives the referee's mail
outbox = "mail/outbox"             # outbound mail is delivered here
per_address = true                 # one Maildir per recipient under outbox/

[service]
poll_seconds = 30
"""


class Parser(argparse.ArgumentParser):
    """Usage errors in one line, like every other error of the command."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see: {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if args.command != "run":
        # one-shot commands keep stderr quiet unless asked; `run` logs everything it does
        logging.getLogger().setLevel(logging.DEBUG if args.debug else logging.WARNING)
    try:
        return args.func(args)
    except ConfigError as exc:
        print(f"referee: error: {exc}", file=sys.stderr)
        return 2
    except OperationalError as exc:
        print(f"referee: database error: {exc.orig}", file=sys.stderr)
        if args.debug:
            raise
        return 1
    except SQLAlchemyError as exc:
        print(f"referee: database error: {exc}", file=sys.stderr)
        if args.debug:
            raise
        return 1
    except OSError as exc:
        print(
            f"referee: error: {exc.strerror or exc}{': ' + str(exc.filename) if exc.filename else ''}", file=sys.stderr
        )
        if args.debug:
            raise
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: one line for the user, the traceback in the log with --debug
        print(f"referee: internal error: {type(exc).__name__}: {exc} (run with --debug for details)", file=sys.stderr)
        if args.debug:
            raise
        return 1


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="referee", description="A play-by-email referee for betting games.")
    parser.add_argument("--config", help=f"service configuration file (default: $REFEREE_CONFIG or ./{CONFIG_NAME})")
    parser.add_argument("--debug", action="store_true", help="verbose logs and full tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    p = sub.add_parser("init", help="create or migrate the database (and a referee.toml if there is none)")
    p.add_argument("--database", help="database URL for a new referee.toml (default sqlite:///referee.db)")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("season", help="season files")
    season_sub = p.add_subparsers(dest="season_command", required=True, metavar="ACTION", parser_class=Parser)
    pl = season_sub.add_parser("load", help="load or update a season from a TOML file")
    pl.add_argument("file", type=Path)
    pl.add_argument("--check", action="store_true", help="only check the file; change nothing")
    pl.set_defaults(func=cmd_season_load)

    p = sub.add_parser("run", help="run the service until stopped")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("tick", help="process everything due as of an instant once, then exit")
    p.add_argument("--now", help="ISO 8601 instant with offset (default: the current time)")
    p.set_defaults(func=cmd_tick)

    p = sub.add_parser("status", help="matches, standings, deadlines and who has submitted")
    p.add_argument("match", nargs="?", help="one match id")
    p.add_argument("--now", help="ISO 8601 instant for 'time left' (default: the current time)")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser(
        "requeue", help="retry failed mail: inbound that failed to process, outbound that failed to send"
    )
    p.add_argument("--inbound", action="store_true", help="only inbound mail")
    p.add_argument("--outbound", action="store_true", help="only outbound mail")
    p.set_defaults(func=cmd_requeue)

    p = sub.add_parser("demo", help="play a whole match by mail between two scripted players")
    p.add_argument(
        "--dir", type=Path, default=Path("referee-demo"), help="folder for the demo (default ./referee-demo)"
    )
    p.add_argument("--seed", type=int, default=7, help="match seed and scripted players' choices (default 7)")
    p.set_defaults(func=cmd_demo)
    return parser


# ---------------------------------------------------------------------------- commands


def cmd_init(args: argparse.Namespace) -> int:
    path = Path(args.config or os.environ.get("REFEREE_CONFIG") or CONFIG_NAME)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # the file holds the secret: readable by its owner only
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(EXAMPLE_CONFIG.format(database=args.database or "sqlite:///referee.db", secret=new_secret()))
        print(f"wrote {path} (edit [mail] address before real use)")
    elif args.database:
        raise ConfigError(f"{path} exists already; set its 'database' key instead of passing --database")
    config = load_service_config(path)
    store = Store(config.database)
    store.migrate()
    for folder in (config.mail.inbox, config.mail.outbox):
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
    print(f"database ready: {safe_url(config.database)}")
    return 0


def cmd_season_load(args: argparse.Namespace) -> int:
    from referee.seasons import load_season as load_into_store

    spec = load_season(args.file)
    if args.check:
        print(f"{args.file}: season {spec.key}: {len(spec.players)} players, {len(spec.matches)} matches: OK")
        return 0
    config, store = open_store(args)
    changes = load_into_store(store, spec, datetime.now(timezone.utc))
    for line in changes or ["no changes"]:
        print(line)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from scheduler.runner import ServiceRunner

    config, store = open_store(args)
    logging.getLogger().setLevel(logging.DEBUG if args.debug else config.log_level)
    if not args.debug:
        logging.getLogger("apscheduler").setLevel(logging.WARNING)  # it logs every job run at INFO
    referee = make_referee(config, store)
    runner = ServiceRunner(referee, poll_seconds=config.poll_seconds, grace_seconds=config.arrival_grace_seconds)
    asyncio.run(runner.run())
    return 0


def cmd_tick(args: argparse.Namespace) -> int:
    now = parse_instant(args.now, "--now") if args.now else datetime.now(timezone.utc)
    config, store = open_store(args)
    report = make_referee(config, store).tick(now)
    print(f"tick at {now:%Y-%m-%dT%H:%M:%SZ}: {report.summary()}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from referee.status import status_text

    now = parse_instant(args.now, "--now") if args.now else datetime.now(timezone.utc)
    _config, store = open_store(args)
    text = status_text(store, now, match_key=args.match)
    print(text)
    return 0


def cmd_requeue(args: argparse.Namespace) -> int:
    from referee.status import requeue_failed

    _config, store = open_store(args)
    both = not (args.inbound or args.outbound)
    inbound, outbound = requeue_failed(store, inbound=both or args.inbound, outbound=both or args.outbound)
    print(f"requeued {inbound} inbound and {outbound} outbound mails; the next tick or poll processes them")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from referee.demo import run_demo

    return run_demo(args.dir, seed=args.seed, out=sys.stdout)


# ---------------------------------------------------------------------------- helpers


def open_store(args: argparse.Namespace) -> tuple[ServiceConfig, Store]:
    config = load_service_config(find_config(args.config))
    store = Store(config.database)
    if not store.has_schema():
        raise ConfigError(f"database {safe_url(config.database)} is not set up: run `referee init` first")
    if not store.is_current():
        raise ConfigError(f"database {safe_url(config.database)} needs migrating: run `referee init`")
    return config, store


def make_referee(config: ServiceConfig, store: Store):
    from referee.service import Referee

    return Referee.with_maildirs(store, config)


def safe_url(url: str) -> str:
    """The database URL without its password."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
