"""Jinja2 templates for mail (plain text) and, later, archive pages (HTML).

Templates live in ``templates/`` at the top of the checkout; a wheel ships them as the
package data ``referee/templates``. StrictUndefined everywhere: a template that names a
missing variable fails loudly in tests instead of mailing a blank to a player.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from jinja2 import (
    Environment,
    FileSystemLoader,
    StrictUndefined,
    Template,
    TemplateNotFound,
    pass_environment,
    select_autoescape,
)
from jinja2.filters import do_wordwrap

from referee.games import GAMES
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


# Mail text is read in plain-text clients and quoted in replies (issue 20, RFC 3676): every
# line at most LINE_MAX characters, prose wrapped at WRAP_AT. A line that cannot be broken
# (one long token: an address, a hash) or a command to copy whole (``printf ... | sha256sum``)
# stands alone on its line, however long.
WRAP_AT = 72
LINE_MAX = 78
_BLANK_RUNS = re.compile(r"\n(?:[ \t]*\n){2,}")  # two blank lines or more: one is enough
_COMMAND = re.compile(r"^\s*printf '%s' .* \| sha256sum$")
_HANGING = re.compile(r"^(\s*)((?:[-*\u2022] |\| |\d+\. )?)")


def unbreakable(line: str) -> bool:
    """A line no wrapping may break: a single token, or a seal's check command."""
    return len(line.split()) <= 1 or bool(_COMMAND.match(line))


def wrap_line(line: str, width: int = WRAP_AT) -> list[str]:
    """One line as lines of at most ``width`` characters, broken at spaces only: the
    continuation lines keep the line's indent (and hang under a bullet, ``- ``, ``* ``,
    or a quote bar, ``| ``, which they repeat; an indented line's continuations hang two
    further in). A token longer than the width stands alone on its line; a seal's check
    command is never broken."""
    if len(line) <= width or unbreakable(line):
        return [line]
    return list(_wrapped(line, width))


@lru_cache(maxsize=8192)
def _wrapped(line: str, width: int) -> tuple[str, ...]:
    """:func:`wrap_line` of a long line, remembered: most long lines of a mail are the
    same sentence in every match's mail (the rules, the what-now paragraph)."""
    indent, mark = _HANGING.match(line).groups()  # type: ignore[union-attr]
    # an indented line (a row of a table, an entry of a list) hangs two further in
    rest_indent = indent + ("| " if mark == "| " else " " * len(mark)) + ("  " if indent and not mark else "")
    return tuple(greedy_wrap(line, width, rest_indent) or [line])


_OTHER_SPACE = re.compile(r"[\t\n\x0b\x0c\r]")  # whitespace textwrap reads that is not a space


def _textwrap(line: str, width: int, rest_indent: str) -> list[str]:
    """textwrap's wrap of a mail line: words kept whole, never broken at hyphens."""
    return textwrap.wrap(
        line, width=width, subsequent_indent=rest_indent, break_long_words=False, break_on_hyphens=False
    )


def greedy_wrap(line: str, width: int, rest_indent: str) -> list[str]:
    """``textwrap.wrap(line, width, subsequent_indent=rest_indent, break_long_words=False,
    break_on_hyphens=False)``, the same lines (``tests/test_render_quick.py`` compares them), found
    by looking for the break of each line from its end instead of adding word after word:
    a closing round wraps the lines that differ in every mail (names, times) by the
    thousand. What it does not handle quickly (tabs and other whitespace, an indent as wide
    as the line) goes to textwrap itself."""
    avail = width - len(rest_indent)
    if avail <= 0 or _OTHER_SPACE.search(line) or len(line) - len(line.lstrip(" ")) >= width:
        return _textwrap(line, width, rest_indent)
    lines: list[str] = []
    rest, room = line, width  # the first line: no indent of its own, its leading spaces kept
    while rest:
        if len(rest) <= room:
            cut = len(rest)
        elif (rest[room - 1] == " ") != (rest[room] == " "):  # a word or a space run ends right there
            cut = room
        elif rest[room] == " ":  # inside a run of spaces: the line ends before it
            cut = len(rest[:room].rstrip(" "))
        else:  # inside a word: the line ends before it, or the word stands alone
            cut = rest.rfind(" ", 0, room) + 1
            if cut == 0:
                cut = rest.find(" ")
                cut = len(rest) if cut < 0 else cut
        if cut <= 0:  # cannot happen (see the conditions above); never a loop that does not end
            return _textwrap(line, width, rest_indent)
        taken = rest[:cut].rstrip(" ")
        if not taken:  # only the first line's leading spaces fitted: dropped, as textwrap does
            rest = rest[cut:]
            continue
        lines.append(taken if not lines else rest_indent + taken)
        rest, room = rest[cut:].lstrip(" "), avail
    return lines


def wrap_text(text: str, keep: Iterable[str] = (), width: int = WRAP_AT) -> str:
    """Every line of ``text`` longer than ``width`` wrapped (:func:`wrap_line`), except the
    lines listed in ``keep`` (the lines of the form, which the grammar reads and which must
    never be wrapped). Lines are never joined, so tables, forms and indented blocks keep
    their shape; a short line is left as it is."""
    kept = {line.strip() for line in keep if line.strip()}
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width or line.strip() in kept:
            out.append(line)
        else:
            out.extend(wrap_line(line, width))
    return "\n".join(out)


def named(text: Any, names: Mapping[str, str] | None) -> Any:
    """``text`` with every player key of ``names`` ({key: name}) written as the name:
    the engines word their reasons with keys ("alice wins: bob has no chips left"), and a
    mail says "Alice wins: Bob has no chips left". A key is replaced only as a whole word
    (not inside a longer word or an address), and never after "id: ", where a text gives
    the season id on purpose ("Alice Martin (id: alice)")."""
    if not isinstance(text, str) or not names:
        return text
    keys = sorted((k for k in names if k and k != names[k]), key=len, reverse=True)
    if not keys:
        return text
    pattern = re.compile(r"(?<![\w@.+-])(?<!id: )(" + "|".join(re.escape(k) for k in keys) + r")(?![\w@-]|\.\w)")
    return pattern.sub(lambda m: names[m.group(1)], text)


# Every abbreviation a player may meet in a mail, and what it means (RULINGS.md, "Seasons";
# the rule texts). A mail explains each at its first use: "the LGT (the house)". The plural
# (CoLs) counts as the word.
ABBREVIATIONS = {
    "LGT": "the house",
    "EC": "elimination candidate",
    "DMO": "death-match opponent",
    "DM": "death match",
    "CoL": "certificate of life",
}
_PLURALS = {
    "EC": "elimination candidates",
    "DMO": "death-match opponents",
    "DM": "death matches",
    "CoL": "certificates of life",
}
_WORDS = "|".join(sorted(ABBREVIATIONS, key=len, reverse=True))
_ABBREVIATION = re.compile(r"(?<![\w'-])(" + _WORDS + r")(s?)(?![\w'-])")
# the same without the look-behind, which the caller checks (_WORD_BEFORE): led by the words
# themselves, the engine skips to their first letters instead of trying every position
_ABBREVIATION_SCAN = re.compile(r"(" + _WORDS + r")(s?)(?![\w'-])")
_WORD_BEFORE = re.compile(r"[\w'-]")


def explain_abbreviations(text: str, keep: Iterable[str] = ()) -> str:
    """``text`` with each abbreviation of ABBREVIATIONS explained where it first appears
    ("the LGT" -> "the LGT (the house)"), unless the text explains it there already (the
    abbreviation followed by a parenthesis, on its line or at the start of the next). Lines
    of ``keep`` (the form) are left alone, and so are seal check commands: a use there is
    not the first. Only the uses themselves are looked at (a result mail has a few), not
    every line of the mail."""
    kept: set[str] | None = None
    seen: set[str] = set()
    out: list[str] = []
    done = 0  # text[:done] is in out
    for m in _ABBREVIATION_SCAN.finditer(text):
        word = m.group(1)
        if word in seen or (m.start() and _WORD_BEFORE.match(text, m.start() - 1)):
            continue  # (a word that only ends so: nothing inside it can be one)
        if kept is None:
            kept = {line.strip() for line in keep if line.strip()}
        line = _line_at(text, text.rfind("\n", 0, m.start()) + 1)
        end = m.end() + len(_line_at(text, m.end()))
        if line.strip() in kept or unbreakable(line):
            continue
        seen.add(word)
        rest = text[m.end() : end]
        if rest.startswith((" (", "(")):
            pass  # explained there already
        elif not rest.strip() and _line_at(text, end + 1).lstrip().startswith("("):
            pass  # a text wrapped already carries the explanation on the next line
        else:
            meaning = _PLURALS.get(word, ABBREVIATIONS[word]) if m.group(2) else ABBREVIATIONS[word]
            out.append(text[done : m.end()])
            out.append(f" ({meaning})")
            done = m.end()
        if len(seen) == len(ABBREVIATIONS):
            break
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _line_at(text: str, start: int) -> str:
    """The line of ``text`` that begins at ``start`` (empty past the end)."""
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


# The filters the templates have beyond Jinja's own (an environment built elsewhere, as the
# template tests build theirs, adds these): ``{{ n | plural("chip") }}`` is "1 chip", "2 chips"
# (:func:`referee.games.base.plural`); ``{{ text | wrap }}`` wraps long lines at 72
# (:func:`wrap_text`; ``wrap(keep=form.splitlines())`` spares the form lines);
# ``{{ reason | named(names) }}`` writes player keys as names (:func:`named`)
def _wrap_filter(text: Any, keep: Iterable[str] = (), width: int = WRAP_AT) -> str:
    return wrap_text(str(text), keep, width)


def _wordwrap_filter(
    env: Environment,
    s: str,
    width: int = 79,
    break_long_words: bool = True,
    wrapstring: str | None = None,
    break_on_hyphens: bool = True,
) -> str:
    """Jinja's ``wordwrap``, the same text, with the lines that keep their words whole
    (``break_long_words=false, break_on_hyphens=false``, as the templates' prose asks)
    broken by :func:`greedy_wrap`: a mail of MatchJack wraps some forty such lines, and
    textwrap was a fifth of its rendering. A line with a tab, and every other call, goes
    to Jinja's own (``tests/test_render_quick.py`` compares the two)."""
    if break_long_words or break_on_hyphens:
        return do_wordwrap(env, s, width, break_long_words, wrapstring, break_on_hyphens)
    if wrapstring is None:
        wrapstring = env.newline_sequence
    return wrapstring.join(
        wrapstring.join(
            greedy_wrap(line, width, "")
            if "\t" not in line
            else textwrap.wrap(
                line,
                width=width,
                expand_tabs=False,
                replace_whitespace=False,
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
        for line in s.splitlines()
    )


FILTERS = {"plural": plural, "wrap": _wrap_filter, "named": named, "wordwrap": pass_environment(_wordwrap_filter)}

# Mails with no part of any game (a spoof warning, the "which match?" answer) are wrapped
# as a whole after rendering, abbreviations explained at first use; so are a game's mails
# (and the common templates it renders) unless the game wraps its own (``wraps_own_mail``:
# Betting Minority and MatchJack, with the `wrap` filter; their error.txt wraps the common
# error mail).
_GAMELESS = frozenset({"spoof", "unaddressed", "unreachable"})


def _wraps_own_mail(game: str) -> bool:
    return bool(getattr(GAMES.get(game), "wraps_own_mail", False))


@cache
def environment() -> Environment:
    env = _Environment(
        loader=FileSystemLoader(str(template_dir())),
        undefined=StrictUndefined,
        autoescape=select_autoescape(enabled_extensions=("html", "xml"), default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        # the templates are read once per process: no look at their files' times on every
        # render (a closing round renders thousands of mails); a changed template needs a restart
        auto_reload=False,
    )
    env.filters.update(FILTERS)
    return env


# (loader, template name) of the templates looked for and not there: Jinja caches the templates
# it finds, not those it does not, and a mail of a game without a template of its own for its
# kind (a spoof warning, an error) looked for it on disk again, at some milliseconds a time
_NOT_THERE: set[tuple[Any, str]] = set()


def first_template(env: Environment, own: str, common: str) -> tuple[Template, bool]:
    """The template ``own``, else ``common`` (then True): Jinja's ``select_template`` of the
    two, which looks for a missing ``own`` once per loader (the templates are read once per
    process: ``auto_reload`` is off)."""
    if (env.loader, own) not in _NOT_THERE:
        try:
            return env.get_template(own), False
        except TemplateNotFound:
            _NOT_THERE.add((env.loader, own))
    return env.get_template(common), True


@dataclass(frozen=True)
class RenderedMail:
    subject: str
    text: str


def render_mail(game: str, name: str, context: dict[str, Any]) -> RenderedMail:
    """Render ``mail/<game>/<name>.txt``, else ``mail/common/<name>.txt``.

    A mail template's first line is ``Subject: ...``; the body follows a blank line.
    """
    # the common templates are prose, wrapped whatever the game
    template, common = first_template(environment(), f"mail/{game}/{name}.txt", f"mail/common/{name}.txt")
    rendered = template.render(**context)
    head, _, body = rendered.partition("\n")
    if not head.startswith("Subject:"):
        raise ValueError(f"template {template.name} must start with a 'Subject:' line")
    body = body.lstrip("\n").rstrip() + "\n"
    if common or name in _GAMELESS or not _wraps_own_mail(game):
        form = context.get("form")
        keep = form.splitlines() if isinstance(form, str) else ()
        body = wrap_text(explain_abbreviations(_BLANK_RUNS.sub("\n\n", body), keep), keep)
    return RenderedMail(subject=head[len("Subject:") :].strip(), text=body)
