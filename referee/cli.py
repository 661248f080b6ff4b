"""The ``referee`` command: the command line, parsed here; the commands themselves are
:mod:`referee.commands`, imported once the line is parsed (so ``--help`` and usage
errors cost no more than the parser).

Bad input never ends in a traceback: configuration and usage problems print one line
naming the problem and exit 2; an unexpected failure prints one line and exits 1
(``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

CONFIG_NAME = "referee.toml"  # = referee.config.CONFIG_NAME (not imported here: see above)


class Parser(argparse.ArgumentParser):
    """Usage errors in one line, like every other error of the command."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see: {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    """Runs one command line: ``argv``, else the process's own (``referee`` the program)."""
    program = argv is None
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    if program and args.light:  # a short run: no garbage collection (what it leaves goes with the process)
        gc.disable()
    from referee import commands
    from referee.commands import _database_error_text, _is_database_error
    from referee.config import ConfigError

    if args.debug or not args.light:  # a light command logs nothing: no logging module
        import logging

        logging.basicConfig(
            level=logging.DEBUG if args.debug else logging.INFO,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
            stream=sys.stderr,
        )
        if args.command != "run":
            # one-shot commands keep stderr quiet unless asked; `run` logs everything it does
            logging.getLogger().setLevel(logging.DEBUG if args.debug else logging.WARNING)
    try:
        code = getattr(commands, args.func)(args)
    except ConfigError as exc:
        print(f"referee: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"referee: error: {exc.strerror or exc}{': ' + str(exc.filename) if exc.filename else ''}", file=sys.stderr
        )
        if args.debug:
            raise
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if _is_database_error(exc):
            print(f"referee: database error: {_database_error_text(exc)}", file=sys.stderr)  # one line
        else:  # a bug: one line for the user, the traceback in the log with --debug
            print(
                f"referee: internal error: {type(exc).__name__}: {exc} (run with --debug for details)", file=sys.stderr
            )
        if args.debug:
            raise
        return 1
    if program and args.light:
        # the program ends now: the interpreter's last garbage collections would walk every
        # object the imports made (a tenth of `referee status`'s time), for nothing a light
        # command leaves to finalize
        gc.freeze()
    return code


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """A command line parsed as :func:`main` parses it, running nothing: the Namespace, or
    SystemExit as argparse raises it (2: a usage error, said on stderr; 0: --help, --version)."""
    parser = build_parser(only=_first_word(argv))
    args, extra = parser.parse_known_args(list(argv))
    # a command whose words end in a list (``archive mbox [MATCH] FILE``) takes its words on
    # both sides of its options: ``archive mbox m1 --season s out.mbox`` as the docs' order
    if extra and isinstance(getattr(args, "target", None), list) and not any(w.startswith("-") for w in extra):
        args.target += extra
    elif extra:
        parser.parse_args(list(argv))  # the usage error argparse gives for them
    return args


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog} {version()}")  # on stdout, as argparse's own version action
        parser.exit(0)


def version() -> str:
    """The installed distribution's version, else the package's ``__version__``."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("referee")
    except PackageNotFoundError:
        import referee

        return getattr(referee, "__version__", "unknown")


CONFIG_HELP = f"service configuration file (default: $REFEREE_CONFIG or ./{CONFIG_NAME})"


def _first_word(argv: Sequence[str]) -> str | None:
    """The command a line names: its first word after the options that may come before it
    (``--config FILE``, ``--debug``); None when something else comes first."""
    words = iter(argv)
    for word in words:
        if word == "--config":
            next(words, None)
        elif not (word.startswith("--config=") or word == "--debug"):
            return word
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``only`` a command's name, that command's parser alone
    (argparse takes milliseconds to build the others, which a line that names its command
    never uses). When ``only`` names no command, the whole parser (to say so)."""
    parser = Parser(prog="referee", description="A play-by-email referee for betting games.")
    parser.add_argument("--config", help=CONFIG_HELP)
    parser.add_argument("--debug", action="store_true", help="verbose logs and full tracebacks")
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    # light: a command that reads and prints, logs nothing and leaves nothing to finalize at
    # exit (`referee status`): no logging set-up, no garbage collection at the program's end
    parser.set_defaults(light=False)
    # --config and --debug also after the command (`referee status --config FILE`); SUPPRESS
    # keeps a value given before the command when none is given after it
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", default=argparse.SUPPRESS, help=CONFIG_HELP)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="verbose logs and full tracebacks"
    )
    sub = _Sub(
        parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser), common, only
    )

    p = sub.add_parser("init", help="create or migrate the database (and a referee.toml if there is none)")
    p.add_argument("--database", help="database URL for a new referee.toml (default sqlite:///referee.db)")
    # a mailbox at a provider: the new referee.toml reads it by IMAP and sends by SMTP, then checks both
    p.add_argument("--address", help="the referee's address for a new referee.toml (e.g. referee@example.org)")
    p.add_argument(
        "--imap-host",
        metavar="HOST[:PORT]",
        help="read mail by IMAP from this server (port 993, TLS; 143: STARTTLS); "
        "the password from $REFEREE_MAIL_PASSWORD",
    )
    p.add_argument(
        "--smtp-host",
        metavar="HOST[:PORT]",
        help="send mail by SMTP through this server (port 587, STARTTLS; 465: TLS); "
        "the password from $REFEREE_MAIL_PASSWORD",
    )
    p.add_argument(
        "--smtp-no-login",
        action="store_true",
        help="the SMTP server takes mail without a login (a relay of your own): no username in [smtp]",
    )
    p.add_argument("--user", help="the mailbox's login name (default: --address)")
    p.add_argument("--ca-file", help="the CA (PEM) that signed the servers' certificate, for a private CA")
    p.set_defaults(func="cmd_init")

    p = sub.add_parser("season", help="season files")
    season_sub = _Sub(
        p.add_subparsers(dest="season_command", required=True, metavar="ACTION", parser_class=Parser), common
    )
    pl = season_sub.add_parser("load", help="load or update a season from a TOML file")
    pl.add_argument("file", type=Path)
    pl.add_argument(
        "--check", action="store_true", help="only check the file and say what loading it would change; change nothing"
    )
    pl.add_argument(
        "--allow-past",
        action="store_true",
        help="accept matches whose start is in the past (the next tick closes their overdue phases at once)",
    )
    pl.set_defaults(func="cmd_season_load")

    p = sub.add_parser("run", help="run the service until stopped")
    p.set_defaults(func="cmd_run")

    p = sub.add_parser("tick", help="process everything due as of an instant once, then exit")
    p.add_argument("--now", help="ISO 8601 instant with offset (default: the current time)")
    p.set_defaults(func="cmd_tick")

    p = sub.add_parser("status", help="matches, standings, deadlines and who has submitted")
    p.add_argument("match", nargs="?", help="one match id")
    p.add_argument("--now", help="ISO 8601 instant for 'time left' (default: the current time)")
    p.set_defaults(func="cmd_status", light=True)

    p = sub.add_parser("standings", help="a season's players: victory points, chips, garnets, CoLs, matches")
    p.add_argument("--season", help="the season's id (needed when several are loaded)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func="cmd_standings")

    p = sub.add_parser(
        "requeue",
        help="retry mail now: quarantined inbound mail, outbound mail that failed or waits for a retry",
    )
    p.add_argument("--inbound", action="store_true", help="only inbound mail")
    p.add_argument("--outbound", action="store_true", help="only outbound mail")
    p.set_defaults(func="cmd_requeue")

    p = sub.add_parser("quarantine", help="list quarantined inbound mail and why; requeue it after a fix")
    p.add_argument("--requeue", metavar="ID", nargs="+", help="put these inbound mails (ids, or 'all') back in line")
    p.set_defaults(func="cmd_quarantine")

    p = sub.add_parser("check-mail", help="check the configured mail set-up: log in, folders, a test mail")
    p.add_argument("--send-to", metavar="ADDRESS", help="also send a test mail to this address (the organizer's)")
    p.set_defaults(func="cmd_check_mail")

    p = sub.add_parser("archive", help="the archive of results: build or serve the site, export mbox, verify")
    archive_sub = _Sub(
        p.add_subparsers(dest="archive_command", required=True, metavar="ACTION", parser_class=Parser), common
    )
    pa = archive_sub.add_parser("build", help="write the static site (only the pages that changed)")
    pa.add_argument("outdir", nargs="?", type=Path, help="the site's folder (default: [archive] dir)")
    pa.add_argument("--full", action="store_true", help="render every page, ignoring what the last build wrote")
    pa.set_defaults(func="cmd_archive_build")
    pa = archive_sub.add_parser("serve", help="serve a built site on this machine for a look")
    pa.add_argument("outdir", nargs="?", type=Path, help="the site's folder (default: [archive] dir)")
    pa.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    pa.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    pa.set_defaults(func="cmd_archive_serve")
    pa = archive_sub.add_parser("mbox", help="every mail the referee sent (or the public results) as an mbox")
    pa.add_argument("target", nargs="+", metavar="[MATCH] FILE", help="a match id (optional), then the mbox file")
    pa.add_argument("--season", help="only the mails of this season's matches")
    pa.add_argument(
        "--public", action="store_true", help="only the public result mails: one per closed round, no private view"
    )
    pa.set_defaults(func="cmd_archive_mbox")
    pa = archive_sub.add_parser("verify", help="recompute the hash chains from the database (and a built site)")
    pa.add_argument("match", nargs="?", help="one match id (default: every match)")
    pa.add_argument("--site", type=Path, help="also check the chains this built site publishes")
    pa.set_defaults(func="cmd_archive_verify")

    # the organizer's controls (referee.season.controls): each recorded and mailed to the players
    p = sub.add_parser("cancel", help="end a match without a result (its players are told)")
    p.add_argument("match", help="the match id")
    p.add_argument("--reason", required=True, help="why: told to the players")
    p.add_argument("--now", help="ISO 8601 instant of the command (default: the current time)")
    p.set_defaults(func="cmd_cancel")
    for name, what in (("pause", "stop the clock of matches"), ("resume", "start the clock of paused matches again")):
        p = sub.add_parser(name, help=f"{what} (one match, or every one of --season)")
        p.add_argument("match", nargs="*", help="match ids (none: every match of the season)")
        p.add_argument("--season", help="the season's id (needed when several are loaded)")
        if name == "pause":
            p.add_argument("--reason", required=True, help="why: told to the players")
        p.add_argument("--now", help="ISO 8601 instant of the command (default: the current time)")
        p.set_defaults(func=f"cmd_{name}")
    p = sub.add_parser("forfeit", help="a player forfeits a running match (a loss; its players are told)")
    p.add_argument("match", help="the match id")
    p.add_argument("player", help="the player's id")
    p.add_argument("--reason", required=True, help="why: told to the players")
    p.add_argument("--now", help="ISO 8601 instant of the command (default: the current time)")
    p.set_defaults(func="cmd_forfeit")
    p = sub.add_parser("substitute", help="hand a player's seat in a match to another player (all are told)")
    p.add_argument("match", help="the match id")
    p.add_argument("old", help="the id of the player who leaves the seat")
    p.add_argument("new", help="the id of the player who takes it (a live player of the season)")
    p.add_argument("--reason", required=True, help="why: told to the players")
    p.add_argument("--now", help="ISO 8601 instant of the command (default: the current time)")
    p.set_defaults(func="cmd_substitute")
    p = sub.add_parser("extend", help="give an open step more time (its players are told)")
    p.add_argument("match", help="the match id")
    p.add_argument("duration", help='how much more, e.g. "12h"')
    p.add_argument("--step", help="the open step's key (default: the one due first)")
    p.add_argument("--now", help="ISO 8601 instant of the command (default: the current time)")
    p.set_defaults(func="cmd_extend")
    p = sub.add_parser("adjust", help="add to or take from a player's season balance (they are told)")
    p.add_argument("player", help="the player's id")
    p.add_argument("currency", choices=("chips", "garnets", "cols"))
    p.add_argument("amount", help="+N or -N")
    p.add_argument("--reason", required=True, help="why: told to the player")
    p.add_argument("--season", help="the season's id (needed when several are loaded)")
    p.add_argument("--now", help="ISO 8601 instant of the command (default: the current time)")
    p.set_defaults(func="cmd_adjust")
    p = sub.add_parser("announce", help="mail a text file to every player of a season or a match")
    p.add_argument("file", type=Path, help="the text to send (UTF-8)")
    p.add_argument("--season", help="the season's id (needed when several are loaded)")
    p.add_argument("--match", help="only the players of this match")
    p.add_argument("--now", help="ISO 8601 instant of the command (default: the current time)")
    p.set_defaults(func="cmd_announce")

    p = sub.add_parser("calendar", help="an .ics of every upcoming deadline of a player")
    p.add_argument("player", help="the player's id")
    p.add_argument("file", nargs="?", type=Path, help="where to write it (default: standard output)")
    p.add_argument("--season", help="the season's id (needed when several are loaded)")
    p.add_argument("--now", help="ISO 8601 instant of the command (default: the current time)")
    p.set_defaults(func="cmd_calendar")

    p = sub.add_parser("replay", help="rebuild a match from its seed and events; is it what is stored?")
    p.add_argument("match", help="the match id")
    p.set_defaults(func="cmd_replay")

    p = sub.add_parser("demo", help="play a whole match by mail between scripted players (--game: which game)")
    p.add_argument(
        "--dir", type=Path, default=Path("referee-demo"), help="folder for the demo (default ./referee-demo)"
    )
    p.add_argument("--seed", type=int, default=7, help="match seed and scripted players' choices (default 7)")
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--game",
        metavar="GAME",
        choices=_DemoGames(),
        help="the game to play: %(choices)s (default: the first)",
    )
    which.add_argument(
        "--season",
        nargs="?",
        const=True,
        default=None,
        metavar="DIR",
        help="a whole small season instead (in DIR, else --dir's folder): two main matches, each with "
        "its nomination and death match",
    )
    p.add_argument(
        "--transport",
        default="maildir",
        choices=("maildir", "imap"),
        help="maildir (default): mail files on disk; imap: real mail through a loopback Dovecot and Postfix "
        "the demo starts and stops (IMAP and SMTP; as root)",
    )
    p.add_argument(
        "--install",
        action="store_true",
        help="with --transport imap: install Dovecot and Postfix from the distribution when missing",
    )
    p.set_defaults(func="cmd_demo")
    if only is not None and not sub.built:
        return build_parser()
    return parser


class _DemoGames(Sequence[str]):
    """``--game``'s choices: the registered games that have a demo (referee.demo.registry),
    looked up only when a ``--game`` is given or the demo's help is shown (so that the
    parser, ``--help`` included, imports no game)."""

    def _names(self) -> list[str]:
        from referee.demo.registry import demos

        return list(demos())

    def __getitem__(self, index):  # type: ignore[override]
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        from referee.demo.registry import has_demo

        return isinstance(name, str) and has_demo(name)


class _Sub:
    """Adds every subcommand with the options shared by all commands; with ``only``, that
    one alone (the others are built on a :class:`_Skipped`, which keeps nothing)."""

    def __init__(self, action, common: argparse.ArgumentParser, only: str | None = None):
        self.action = action
        self.common = common
        self.only = only
        self.built = False  # the command ``only`` names was built

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        if self.only is not None and name != self.only:
            return _Skipped()  # type: ignore[return-value]
        self.built = True
        return self.action.add_parser(name, parents=[self.common], **kwargs)


class _Skipped:
    """The parser of a command the line does not name: takes its arguments, keeps none."""

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: self


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
