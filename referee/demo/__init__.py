"""``referee demo``: whole matches (or a whole season) by mail between scripted players, on
an accelerated clock, in a throwaway folder that ``referee status`` works on afterwards.

What lives where. This package is the generic part: but for the season demo (a season of
five games, named there), it knows no game by name.

* :mod:`referee.demo.director`: :func:`run_demo` (``referee demo [--game GAME]``), the
  folder's set-up and the :class:`~referee.demo.director.Director` that advances the clock,
  delivers the scripted players' replies, ticks the referee and collects its answers;
* :mod:`referee.demo.base`: :class:`~referee.demo.base.Demo` and
  :class:`~referee.demo.base.Script`, what a game's demo gives the director, and the mail
  reading every scripted player shares (the fill-in form, an error's ``Problem:`` line);
* :mod:`referee.demo.registry`: each game's demo, found through the game registry;
* :mod:`referee.demo.files`: the folder, ``referee.toml`` and ``season.toml``;
* :mod:`referee.demo.transport`: the mail on Maildirs, and the loopback stack over real mail;
* :mod:`referee.demo.mail`: the demo over real mail (``--transport imap``) and its clock;
* :mod:`referee.demo.report`: the end report (standings, mail, archive, ``status`` command);
* :mod:`referee.demo.season`: ``referee demo --season``, a whole small season of several games.

Each game's part (its scripted players, its script, its summary lines, its lines of the
season file and its checks) lives with the game, in ``referee/games/<game>/demo.py``, as a
module-level ``DEMO``: a new game brings its demo in its own package, and ``referee demo
--game`` offers it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["run_demo"]


def __getattr__(name: str) -> Any:
    """``run_demo``, imported when asked for: the package itself imports none of its
    modules, so a game's demo module importing :mod:`referee.demo.base` runs no other."""
    if name == "run_demo":
        from referee.demo.director import run_demo

        return run_demo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
