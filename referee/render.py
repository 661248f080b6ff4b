"""Jinja2 templates for mail (plain text) and, later, archive pages (HTML).

Templates live in ``templates/`` at the top of the checkout; a wheel ships them as the
package data ``referee/templates``. StrictUndefined everywhere: a template that names a
missing variable fails loudly in tests instead of mailing a blank to a player.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateNotFound, select_autoescape

from referee.games.base import plural


def template_dir() -> Path:
    """The templates folder of an installed wheel (``referee/templates``), else of the checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "templates", here.parent / "templates"):
        if (candidate / "mail").is_dir():
            return candidate
    raise RuntimeError("referee templates not found: reinstall the package (pip install .)")


_DICT_ATTRIBUTES = frozenset(dir(dict))


class _Environment(Environment):
    """Jinja's environment, with ``a.b`` on a plain dict looked up as Jinja does it, only
    faster: Jinja tries ``getattr(a, "b")`` first, which fails (an exception) for every key
    of the dicts our contexts are made of; a plain dict has no attribute but those of
    ``dict``, so for any other name the item is what Jinja would find too."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


# The filters the templates have beyond Jinja's own (an environment built elsewhere, as the
# template tests build theirs, adds these): ``{{ n | plural("chip") }}`` is "1 chip", "2 chips"
# (:func:`referee.games.base.plural`)
FILTERS = {"plural": plural}


@cache
def environment() -> Environment:
    env = _Environment(
        loader=FileSystemLoader(str(template_dir())),
        undefined=StrictUndefined,
        autoescape=select_autoescape(enabled_extensions=("html", "xml"), default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    return env


@dataclass(frozen=True)
class RenderedMail:
    subject: str
    text: str


def render_mail(game: str, name: str, context: dict[str, Any]) -> RenderedMail:
    """Render ``mail/<game>/<name>.txt``, else ``mail/common/<name>.txt``.

    A mail template's first line is ``Subject: ...``; the body follows a blank line.
    """
    env = environment()
    try:
        template = env.get_template(f"mail/{game}/{name}.txt")
    except TemplateNotFound:
        template = env.get_template(f"mail/common/{name}.txt")
    rendered = template.render(**context)
    head, _, body = rendered.partition("\n")
    if not head.startswith("Subject:"):
        raise ValueError(f"template {template.name} must start with a 'Subject:' line")
    return RenderedMail(subject=head[len("Subject:") :].strip(), text=body.lstrip("\n").rstrip() + "\n")
