"""The end of a demo: the final standings, where the mail is, the archive of the demo
season (built, and where to open it) and a ``status`` command that works as printed from
where the demo was run (``referee`` when that is this installation, else its full path).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from referee.config import ServiceConfig
from referee.games import Game
from referee.store.db import Store
from referee.store.models import Match

if TYPE_CHECKING:
    from referee.demo.mail import RealMail
    from referee.demo.transport import MaildirMail


def report_end(
    folder: Path,
    config: ServiceConfig,
    store: Store,
    engine: Game,
    post: MaildirMail | RealMail,
    out: TextIO,
    notes: Sequence[str] = (),
    *,
    match: str = "demo-1",
) -> bool:
    """The final standings, where the mails are (and the ``notes`` on them), the archive and
    the status command; True if the match finished."""
    with store.unit_of_work() as session:
        row = session.query(Match).filter_by(key=match).one()
        print("\nFinal standings:", file=out)
        for line in engine.standings(row.state):
            print(f"  {line}", file=out)
        if row.result:
            print(f"  {row.result['reason']}", file=out)
        finished = row.status == "finished"
        ended = row.finished_at or datetime.now(timezone.utc)
    print("", file=out)
    for line in [*post.keep(folder), *notes]:
        print(line, file=out)
    print(archive_note(folder, config, store, ended), file=out)
    print(f"Try: {status_command(folder)}", file=out)
    store.dispose()
    return finished


def archive_note(folder: Path, config: ServiceConfig, store: Store, now: datetime) -> str:
    """Build the archive of the demo season (its ``[archive] dir``) and say where to open it."""
    from referee.archive.site import build

    assert config.archive is not None  # write_config sets it
    site = config.archive.dir
    report = build(store, site, now=now)
    serve = f"{referee_command()} --config {shlex.quote(shown(folder / 'referee.toml'))} archive serve"
    return (
        f"The archive of the season ({report.written} files written): open {(site / 'index.html').as_uri()}"
        f" in a browser,\nor serve it at http://127.0.0.1:8000/ with: {serve}"
    )


def shown(path: Path) -> str:
    """``path`` as ``./relative`` to the current folder when it is below it."""
    try:
        return f"./{path.relative_to(Path.cwd().resolve())}"
    except ValueError:
        return str(path)


def status_command(folder: Path) -> str:
    """``referee --config ./referee-demo/referee.toml status``, runnable from the current folder."""
    return f"{referee_command()} --config {shlex.quote(shown(folder / 'referee.toml'))} status"


def referee_command() -> str:
    """``referee`` if that is on PATH and is this installation, else the path of this one's script."""
    candidates = []
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "referee" and argv0.is_file():
        candidates.append(argv0.absolute())  # the console script that is running now
    candidates.append(Path(sys.executable).with_name("referee"))  # the venv's console script
    ours = next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)
    on_path = shutil.which("referee")
    if on_path and (ours is None or Path(on_path).resolve() == ours.resolve()):
        return "referee"
    if ours is not None:
        return shlex.quote(str(ours))
    return f"{shlex.quote(sys.executable)} -m referee.cli"
