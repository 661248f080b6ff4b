"""The demo's folder and the files it writes there: ``referee.toml`` (on Maildirs, or on a
loopback mail stack: IMAP in, SMTP out) and ``season.toml`` (one match, whose own lines
come from the game's demo: :attr:`~referee.demo.base.Demo.match_lines`).

The folder keeps the database, both files and every mail, so that ``referee status`` and
``referee tick`` work afterwards; a later demo may wipe it, and only a folder that is empty
or a demo's (its ``referee.toml`` starts with :data:`MARKER`).
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from referee.config import ConfigError, new_secret
from referee.demo.registry import default_game, find

if TYPE_CHECKING:
    from referee.mailstack import MailStack

MARKER = "# referee demo folder"


def check_folder(folder: Path) -> bool:
    """True when ``folder`` holds something (a demo of before); a ConfigError when it is not
    empty and not a demo folder."""
    folder = folder.resolve()
    config = folder / "referee.toml"
    if not (folder.exists() and any(folder.iterdir())):
        return False
    if not (config.exists() and config.read_text().startswith(MARKER)):
        raise ConfigError(f"{folder} is not empty and is not a demo folder; choose another --dir")
    return True


def prepare_folder(folder: Path) -> Path:
    folder = folder.resolve()
    if check_folder(folder):
        database = ("referee.db", "referee.db-wal", "referee.db-shm", "referee.db.decide.lock")
        written = (*database, "season.toml", "referee.toml")
        for name in written:
            (folder / name).unlink(missing_ok=True)
        shutil.rmtree(folder / "mail", ignore_errors=True)
        shutil.rmtree(folder / "archive", ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_config(folder: Path, stack: MailStack | None = None) -> str:
    """The demo's ``referee.toml`` (on Maildirs, or on the ``stack``: IMAP in, SMTP out); the
    mail domain of its players' addresses."""
    domain = stack.domain if stack is not None else "demo.test"
    (folder / "referee.toml").write_text(
        f"""{MARKER}: `referee demo` may wipe and rewrite it
database = "sqlite:///referee.db"
secret = "{new_secret()}"

[mail]
address = "referee@{domain}"
name = "Referee (demo)"
{_transport_lines(stack)}
[service]
poll_seconds = 5

[archive]
dir = "archive"
""",
        encoding="utf-8",
    )
    return domain


def write_files(
    folder: Path, start: datetime, seed: int, *, game: str | None = None, stack: MailStack | None = None
) -> None:
    """``referee.toml`` (on Maildirs, or on the ``stack``: IMAP in, SMTP out) and ``season.toml``
    (the demo match of ``game``, by default the one ``referee demo`` plays)."""
    game = game or default_game()
    _engine, demo = find(game)
    domain = write_config(folder, stack)
    players = "\n".join(
        player_table(key, name, f"{key}@{domain}" if address else None, tz)
        for key, (name, tz, address) in demo.seats.items()
    )
    seats = ", ".join(f'"{key}"' for key in demo.seats)
    (folder / "season.toml").write_text(
        f"""# written by `referee demo`
[season]
id = "demo"
name = "Demo season"
starting_chips = 200
{demo.season_lines}
{players}
[[matches]]
id = "demo-1"
game = "{game}"
players = [{seats}]
start = {start:%Y-%m-%dT%H:%M:%SZ}
seed = {seed}
{demo.match_lines}
""",
        encoding="utf-8",
    )


def player_table(key: str, name: str, email: str | None, tz: str) -> str:
    """A ``[[players]]`` table; without ``email`` for a participant who has no address (they
    sit at a silent seat and are never mailed)."""
    address = f'email = "{email}"\n' if email is not None else ""
    return f'[[players]]\nid = "{key}"\nname = "{name}"\n{address}timezone = "{tz}"\n'


def _transport_lines(stack: MailStack | None) -> str:
    if stack is None:
        return """inbound = "maildir"
inbox = "mail/inbox"
outbox = "mail/outbox"
per_address = true
"""
    # password_env: a variable of its own, so that a $REFEREE_IMAP_PASSWORD of a real set-up does not apply
    return f"""inbound = "imap"
outbound = "smtp"

# the demo's own loopback Dovecot and Postfix (stopped and removed when the demo ends)
[imap]
host = "{stack.host}"
port = {stack.imap_port}
security = "none"
username = "{stack.address("referee")}"
password = "{stack.password}"
password_env = "REFEREE_DEMO_IMAP_PASSWORD"
timeout_seconds = 30

[smtp]
host = "{stack.host}"
port = {stack.smtp_port}
security = "none"
timeout_seconds = 30
"""
