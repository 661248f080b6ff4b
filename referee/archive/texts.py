"""The text of a closed round or hand, for everyone: the archive's feeds, its pages and the
public mbox tell each round in the same words.

A round's text is rendered from ``templates/archive/<game>/round.txt`` (else
``templates/archive/common/round.txt``, which lists the history entry's fields) from the
round's public history entry only, so it can never say more than the public view did.
Like a mail template, the first line is the title and the rest is the text.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any

from referee.archive.rounds import Round
from referee.games.base import HOUSE
from referee.render import environment, first_template
from referee.timefmt import local_time

__all__ = ["fields", "round_text"]


def round_text(game_name: str, context: dict[str, Any], round: Round) -> tuple[str, str]:
    """(title, text) of *round* of a *game_name* match.

    *context* holds ``match`` ({id, title, game, season}), ``players`` ([{id, name}], in
    seat order; nothing private such as an address is read) and ``view`` (the match's
    public view). The template also gets ``round``, ``entry`` (the round's public history
    entry), ``names`` (player id -> name, and the house), ``closed`` (when the round
    closed, in UTC, as the mails write times) and ``fields`` (:func:`fields`, for the
    generic template).
    """
    template, _ = first_template(environment(), f"archive/{game_name}/round.txt", "archive/common/round.txt")
    names = {HOUSE: "the LGT (the house)", **{p["id"]: p["name"] for p in context["players"]}}
    rendered = template.render(
        {
            **context,
            "round": round,
            "entry": round.entry,
            "names": names,
            "closed": local_time(round.closed_at, "UTC"),
            "fields": partial(fields, names=names),
        }
    )
    title, _, text = rendered.strip().partition("\n")
    if not title.strip():
        raise ValueError(f"{template.name} rendered no title line")
    return title.strip(), text.strip()


def fields(data: Mapping[str, Any], names: Mapping[str, str], indent: str = "") -> Iterator[str]:
    """*data*'s fields as lines ``key: value``, in its own order (an entry's order is the
    engine's: what was dealt before what was bet), a nested mapping or a list of them
    indented below its key, player ids (as keys or values) written as *names*."""
    for key, value in data.items():
        yield from _field(names.get(key, key), value, names, indent)


def _field(label: str, value: Any, names: Mapping[str, str], indent: str) -> Iterator[str]:
    if isinstance(value, Mapping) and value:
        yield f"{indent}{label}:"
        yield from fields(value, names, indent + "  ")
    elif isinstance(value, list) and any(isinstance(item, (Mapping, list)) for item in value):
        yield f"{indent}{label}:"
        for number, item in enumerate(value, 1):
            yield from _field(str(number), item, names, indent + "  ")
    else:
        yield f"{indent}{label}: {_scalar(value, names)}"


def _scalar(value: Any, names: Mapping[str, str]) -> str:
    """A value on one line: a list as its items, nothing as ``-``, yes/no, a player's name."""
    if isinstance(value, (list, Mapping)):
        return ", ".join(_scalar(item, names) for item in value) if value else "none"
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return names.get(value, value)
    return str(value)
