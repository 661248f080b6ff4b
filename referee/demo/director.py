"""``referee demo``: a throwaway season in which scripted players play one whole match by
mail, on an accelerated clock; the game's own part (its players and its script) comes from
the game's demo (:mod:`referee.demo.registry`), and nothing here names a game.

Everything goes through the real path: the referee delivers prompts into per-address
Maildirs; the scripted players read them and reply like a mail client (quoting the
original), into the referee's inbox Maildir, with delivery times on the virtual clock;
``Referee.tick`` processes them and closes each step at its deadline.

:func:`run_demo` checks the folder, starts the mail (:mod:`referee.demo.transport`), sets
the folder up (:func:`set_up`: the files of :mod:`referee.demo.files`, the database, the
season, the referee and a scripted mail client per player with an address), says what is
played, ticks the referee at the match's start and has the game's script play the match
through a :class:`Director`, which advances the clock, delivers each player's reply, ticks
the referee at its arrival and collects the referee's answer. The end report
(:mod:`referee.demo.report`) follows.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from referee.config import ServiceConfig, load_season, load_service_config
from referee.demo.base import Demo
from referee.demo.files import check_folder, prepare_folder, write_files
from referee.demo.registry import default_game, find, mailed
from referee.demo.report import report_end
from referee.demo.transport import MaildirMail, mail_stack
from referee.games import Game
from referee.mail.client import Received, ScriptedClient
from referee.seasons import load_season as load_into_store
from referee.service import Referee
from referee.store.db import Store
from referee.store.models import Match

if TYPE_CHECKING:
    from referee.demo.mail import RealMail
    from referee.mailstack import MailStack

T = TypeVar("T")
MATCH = "demo-1"  # the demo match's id


def run_demo(
    folder: Path,
    *,
    seed: int,
    game: str | None = None,
    transport: str = "maildir",
    install: bool = False,
    out: TextIO = sys.stdout,
) -> int:
    """The demo match of ``game`` (by default the registry's first game that has a demo) on
    Maildirs, or over real mail (``transport="imap"``: a loopback stack of its own;
    ``install``: the Debian packages installed first when missing); 0 when it played as it should."""
    game = game or default_game()
    engine, demo = find(game)
    check_folder(folder)  # before a mail stack is started for nothing
    with mail_stack(transport, install, out, users=tuple(mailed(game))) as stack:
        return play(folder, seed, game, engine, demo, stack, out)


def play(folder: Path, seed: int, game: str, engine: Game, demo: Demo, stack: MailStack | None, out: TextIO) -> int:
    """Set the folder up, play the match by the game's script, report."""
    folder, start, config, store, post, clients = set_up(folder, seed, game, stack)
    director = Director(engine, store, post, clients, out, seed=seed, start=start)
    script = demo.script(director)
    pace = demo.pace
    director.say(f"referee demo in {folder}")
    director.say(
        f"{engine.title}, {demo.who}, seed {seed}; {pace}starting {start:%Y-%m-%d %H:%M} UTC ({post.clock_note})"
    )
    director.tick(start)
    for line in script.opening():
        director.say(line)
    director.say("")
    for _ in range(script.max_steps):
        if not script.play():
            break
    checked, notes = script.check()
    finished = report_end(folder, config, store, engine, post, out, notes)
    return 0 if finished and checked else 1


def set_up(
    folder: Path, seed: int, game: str, stack: MailStack | None = None
) -> tuple[Path, datetime, ServiceConfig, Store, MaildirMail | RealMail, dict]:
    """The demo folder with its files, database and season, the referee on its Maildirs (or
    on the ``stack``: IMAP and SMTP), its mail, and a scripted mail client per player with
    an address."""
    folder = prepare_folder(folder)
    start = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
    write_files(folder, start, seed, game=game, stack=stack)
    config = load_service_config(folder / "referee.toml")
    store = Store(config.database)
    store.migrate()
    load_into_store(store, load_season(folder / "season.toml"), start - timedelta(hours=1))
    referee = Referee.configured(store, config)
    people = mailed(game)
    if stack is not None:
        from referee.demo.mail import RealMail

        post = RealMail(referee, store, config, stack, start, people)
        return folder, start, config, store, post, post.clients
    clients = {
        key: ScriptedClient(f"{key}@demo.test", name, config.mail.outbox / f"{key}@demo.test", config.mail.inbox)
        for key, name in people.items()
    }
    return folder, start, config, store, MaildirMail(referee, config), clients


class Director:
    """The demo match on its way, for the game's script: the clock (``post``: advance it,
    tick the referee), the players' mail clients, the match as the last tick left it, and
    the output. :meth:`send` is a player's reply: the clock on to its arrival, the reply
    written, the referee ticked then, and the referee's answer (the player's latest mail)."""

    def __init__(
        self,
        engine: Game,
        store: Store,
        post: MaildirMail | RealMail,
        clients: dict[str, ScriptedClient],
        out: TextIO,
        *,
        seed: int,
        start: datetime,
        match: str = MATCH,
    ):
        self.engine, self.store, self.post, self.clients, self.out = engine, store, post, clients, out
        self.seed, self.start, self.match_key = seed, start, match

    def rng(self, key: str) -> random.Random:
        """A scripted player's own chance (from the seed and their key)."""
        return random.Random(f"{self.seed}:{key}")

    def match(self) -> Match:
        """The match row, read now."""
        with self.store.unit_of_work() as session:
            return session.query(Match).filter_by(key=self.match_key).one()

    def public(self) -> dict[str, Any]:
        """The match's public view (``view(state, None)``), read now."""
        return self.engine.view(self.match().state, None)

    def advance(self, at: datetime) -> None:
        """The clock on to ``at``: mail sent now arrives then."""
        self.post.advance(at)

    def tick(self, at: datetime) -> Any:
        """A tick of the referee at ``at`` (a deadline, or the arrival of the mail sent)."""
        return self.post.tick(at)

    def send(self, key: str, at: datetime, write: Callable[[datetime], T]) -> tuple[T, Received]:
        """``key`` replies (``write(at)``, arriving at ``at``), the referee ticks then; what
        ``write`` returned and the referee's answer (``key``'s latest mail)."""
        self.advance(at)
        sent = write(at)
        self.tick(at)
        return sent, self.clients[key].latest()

    def say(self, line: str) -> None:
        print(line, file=self.out)
