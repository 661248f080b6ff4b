"""The quick paths of the mail text: the line breaker (:func:`referee.render.greedy_wrap`)
breaks every line where textwrap breaks it (random lines of words, space runs, long words,
indents and hanging bullets, at many widths), and the abbreviations are explained where the
line-by-line reading (kept here as the reference) explains them."""

from __future__ import annotations

import random
import textwrap

import pytest

import re
from collections.abc import Iterable

from jinja2 import DictLoader, Environment
from jinja2.filters import do_wordwrap

from referee.render import (
    _ABBREVIATION,
    _HANGING,
    _PLURALS,
    ABBREVIATIONS,
    _wordwrap_filter,
    environment,
    first_template,
    explain_abbreviations,
    greedy_wrap,
    unbreakable,
    wrap_line,
)


def textwrap_lines(line: str, width: int, rest_indent: str) -> list[str]:
    return textwrap.wrap(
        line, width=width, subsequent_indent=rest_indent, break_long_words=False, break_on_hyphens=False
    )


def random_line(rnd: random.Random) -> str:
    parts = [" " * rnd.choice([0, 0, 0, 1, 2, 4, 9])]
    parts.append(rnd.choice(["", "", "* ", "- ", "| ", "1. "]))
    for _ in range(rnd.randint(0, 30)):
        word = "".join(rnd.choice("abcdefghij-.,()é") for _ in range(rnd.choice([1, 2, 3, 5, 8, 13, 40, 90])))
        parts.append(word + " " * rnd.choice([1, 1, 1, 1, 2, 3, 0]))
    if rnd.random() < 0.05:
        parts.append(rnd.choice(["\t", "\r", "\x0c"]) + "x")
    return "".join(parts)


@pytest.mark.parametrize("seed", range(4))
def test_greedy_wrap_breaks_where_textwrap_breaks(seed):
    rnd = random.Random(seed)
    for _ in range(5000):
        line, width = random_line(rnd), rnd.choice([10, 20, 40, 72, 78])
        rest = rnd.choice(["", "  ", "    ", "| ", "   ", " " * 12])
        assert greedy_wrap(line, width, rest) == textwrap_lines(line, width, rest), (line, width, rest)


def test_edges():
    for line, width, rest in [
        ("", 10, ""),
        ("     ", 3, ""),
        ("          word", 4, "  "),
        ("a" * 20, 10, "  "),
        ("ab cd", 5, ""),
        ("ab  cd ef", 5, ""),
        ("ab cd", 4, ""),
        ("  ab cd ef gh", 6, "    "),
        ("x y", 2, "xx"),
        ("x y", 2, "xxx"),
    ]:
        assert greedy_wrap(line, width, rest) == textwrap_lines(line, width, rest), (line, width, rest)


@pytest.mark.parametrize("seed", range(2))
def test_the_wordwrap_filter_gives_what_jinjas_gives(seed):
    """The templates' ``wordwrap`` (words kept whole: the quick path) writes what Jinja's
    own writes, for texts of several lines (tabs among them) and any wrapstring; with words
    broken it is Jinja's own."""
    env, rnd = environment(), random.Random(seed)
    for _ in range(2000):
        text = "\n".join(random_line(rnd) for _ in range(rnd.choice([1, 1, 2, 3])))
        width, wrapstring = rnd.choice([10, 20, 40, 70, 72]), rnd.choice([None, "\n  ", "\n| ", "\n"])
        for words, hyphens in ((False, False), (True, False), (False, True), (True, True)):
            args = (width, words, wrapstring, hyphens)
            assert _wordwrap_filter(env, text, *args) == do_wordwrap(env, text, *args), (text, args)
    template = env.from_string('{{ t | wordwrap(12, break_long_words=false, break_on_hyphens=false, wrapstring="/") }}')
    assert template.render(t="a well-known word\tand more") == "a well-known/word\tand/more"


def test_wrap_line_keeps_its_hanging_indents():
    line = "  * " + "word " * 30
    indent, mark = _HANGING.match(line).groups()
    assert wrap_line(line, 40) == textwrap_lines(line, 40, indent + " " * len(mark))
    assert all(len(out) <= 40 for out in wrap_line(line, 40))


# the reading before the quick one, line by line: the reference
def line_by_line(text: str, keep: Iterable[str] = ()) -> str:
    """``text`` with each abbreviation of ABBREVIATIONS explained where it first appears
    ("the LGT" -> "the LGT (the house)"), unless the text explains it there already (the
    abbreviation followed by a parenthesis). Lines of ``keep`` (the form) are left alone,
    and so are seal check commands."""
    if not _ABBREVIATION.search(text):
        return text
    kept = {line.strip() for line in keep if line.strip()}
    seen: set[str] = set()
    out: list[str] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if len(seen) == len(ABBREVIATIONS):  # each explained once: the rest stays as it is
            out.extend(lines[i:])
            break
        if not _ABBREVIATION.search(line) or line.strip() in kept or unbreakable(line):
            out.append(line)
            continue
        # a text wrapped already may carry the explanation on the next line
        following = lines[i + 1].lstrip() if i + 1 < len(lines) else ""

        def explain(m: re.Match[str], line: str = line, following: str = following) -> str:
            word = m.group(1)
            if word in seen:
                return m.group(0)
            seen.add(word)
            after = line[m.end() : m.end() + 2]
            if after.startswith(" (") or after.startswith("("):
                return m.group(0)
            if not line[m.end() :].strip() and following.startswith("("):
                return m.group(0)
            meaning = _PLURALS.get(word, ABBREVIATIONS[word]) if m.group(2) else ABBREVIATIONS[word]
            return f"{m.group(0)} ({meaning})"

        out.append(_ABBREVIATION.sub(explain, line))
    return "\n".join(out)


def random_text(rnd: random.Random) -> str:
    words = [
        "the",
        "LGT",
        "LGTs",
        "EC",
        "ECs",
        "DMO",
        "DM",
        "DMs",
        "CoL",
        "CoLs",
        "(the house)",
        "(",
        "x-EC",
        "EC's",
        "xDMO",  # an abbreviation at the end of a longer word: none
        "DMEC",
        "oCoLs",
        "'LGT",
        "word",
        "ECx",
        "printf '%s' abc | sha256sum",
        "LGT(",
        "\n",
        "\n",
        "\n  ",
        "\n(",
        "  ",
    ]
    return " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 40)))


@pytest.mark.parametrize("seed", range(3))
def test_abbreviations_are_explained_as_line_by_line(seed):
    rnd = random.Random(seed)
    for _ in range(4000):
        text = random_text(rnd)
        keep = [line for line in text.split("\n") if rnd.random() < 0.2]
        assert explain_abbreviations(text, keep) == line_by_line(text, keep), (text, keep)


def test_a_missing_own_template_is_looked_for_once_per_loader():
    """``first_template``: the game's own template when it has one, else the common one; a
    missing own template is not looked for on disk again (Jinja caches only what it finds)."""
    looked: list[str] = []

    class Counting(DictLoader):
        def get_source(self, environment, template):
            looked.append(template)
            return super().get_source(environment, template)

    env = Environment(loader=Counting({"mail/g/step.txt": "own", "mail/common/step.txt": "common"}))
    for _ in range(3):
        assert first_template(env, "mail/g/step.txt", "mail/common/step.txt")[1] is False
        template, common = first_template(env, "mail/h/step.txt", "mail/common/step.txt")
        assert common and template.render() == "common"
    assert looked.count("mail/h/step.txt") == 1 and looked.count("mail/g/step.txt") == 1
    env.loader = Counting({"mail/h/step.txt": "h's own", "mail/common/step.txt": "common"})  # another loader
    assert first_template(env, "mail/h/step.txt", "mail/common/step.txt")[0].render() == "h's own"
