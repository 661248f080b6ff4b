"""The HTML part of a step mail: the text mail as HTML, with one-tap answer buttons.

The HTML is made from the text mail itself (so both say the same): paragraphs of prose
(lines that were wrapped joined again, so a phone reflows them), ``=== Heading ===``
lines as headings, and anything laid out in columns (the form, tables, indented blocks,
seal commands) as a preformatted block that scrolls inside its own box. Each quick answer
(:mod:`referee.games.quick`) is a ``mailto:`` button: to the player's personal reply
address, the subject "Re: " and the mail's subject, the answer's text as the body, which
the player's client opens as a new mail to send (or change first).

Only what every client shows: inline CSS, no scripts, no images, no web fonts, no
``<style>`` block (Gmail drops it in some views), a table-free layout that Outlook's Word
engine renders too. Everything taken from the text is escaped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from html import escape
from urllib.parse import quote

__all__ = ["mailto", "to_html"]

_FONT = "font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"
_BODY = f"margin:0;padding:16px;background:#ffffff;color:#1f2328;{_FONT};font-size:16px;line-height:1.5"
_WRAP = "max-width:640px;margin:0 auto"
_P = "margin:0 0 12px 0"
_H = "margin:20px 0 8px 0;font-size:17px;font-weight:bold"
_PRE = (
    "margin:0 0 12px 0;padding:10px 12px;background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;"
    "font-family:Menlo,Consolas,'Courier New',monospace;font-size:14px;line-height:1.4;"
    "white-space:pre;overflow-x:auto"
)
_FORM_PRE = _PRE.replace("#f6f8fa", "#fff8c5").replace("#d0d7de", "#d4a72c")
_BOX = "margin:0 0 16px 0;padding:12px;border:1px solid #d0d7de;border-radius:6px;background:#f6f8fa"
_BUTTON = (
    "display:inline-block;margin:4px 8px 4px 0;padding:10px 18px;background:#0b5cad;color:#ffffff;"
    "border-radius:6px;text-decoration:none;font-weight:bold;font-size:16px;line-height:1.2"
)
_SIGNATURE = "margin:20px 0 0 0;padding-top:8px;border-top:1px solid #d0d7de;color:#57606a;font-size:13px"
_UL = "margin:0 0 12px 0;padding-left:22px"
_LI = "margin:0 0 6px 0"
_BULLETS = ("* ", "- ", "\u2022 ")
_HEADING = re.compile(r"^=== (.+) ===$")
_PROSE_WIDTH = 60  # a line at least this long, followed by more prose, was wrapped: join them again


def mailto(address: str, subject: str, body: str) -> str:
    """A ``mailto:`` URL (RFC 6068): ``address``, ``subject`` and ``body`` (line ends as
    CRLF), every character outside the unreserved ones percent-encoded as UTF-8."""
    body = body.replace("\r\n", "\n").replace("\n", "\r\n")
    return f"mailto:{quote(address, safe='@+.-_')}?subject={quote(subject, safe='')}&body={quote(body, safe='')}"


def to_html(
    text: str,
    *,
    subject: str,
    reply_to: str | None = None,
    answers: Sequence[tuple[str, str]] = (),
    form: str | None = None,
) -> str:
    """The HTML document of the text mail ``text`` (see the module docstring). ``answers``:
    (label, body) pairs, a button each (with ``reply_to``); they stand right before the
    form (``form``: its text, when the mail holds one), else before the signature."""
    body, _, signature = text.replace("\r\n", "\n").partition("\n-- \n")
    blocks = _blocks(body)
    form_lines = [line for line in (form or "").strip("\n").split("\n") if line.strip()]
    buttons = _buttons(answers, reply_to, subject) if reply_to and answers else ""
    out: list[str] = []
    placed = not buttons
    form_set = frozenset(line.strip() for line in form_lines)
    for block in blocks:
        is_form = bool(form_set) and all(line.strip() in form_set for line in block)
        if is_form and not placed:
            out.append(buttons)
            placed = True
        out.append(_block_html(tuple(block), is_form))
    if not placed:
        out.append(buttons)
    if signature.strip():
        out.append(f'<p style="{_SIGNATURE}">{_lines(signature.strip().split(chr(10)))}</p>')
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(subject)}</title>\n</head>\n"
        f'<body style="{_BODY}">\n<div style="{_WRAP}">\n' + "\n".join(out) + "\n</div>\n</body>\n</html>\n"
    )


def _blocks(text: str) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for line in text.strip("\n").split("\n"):
        if line.strip():
            out[-1].append(line.rstrip())
        elif out[-1]:
            out.append([])
    return [b for b in out if b]


def _laid_out(block: Sequence[str]) -> bool:
    """A block whose spacing means something: indented lines, columns, a table."""
    return any(line.startswith((" ", "\t")) or "  " in line.strip() or line.lstrip().startswith("|") for line in block)


@lru_cache(maxsize=4096)
def _block_html(block: tuple[str, ...], is_form: bool) -> str:
    """A paragraph as HTML; remembered, since most paragraphs of a mail are the same in
    every match's mail (the rules, the what-now text)."""
    if is_form:
        return f'<pre style="{_FORM_PRE}">{escape(chr(10).join(block))}</pre>'
    out: list[str] = []
    rest = block
    while rest and _HEADING.match(rest[0]):  # "=== The match is over ===" and what follows it
        out.append(f'<h3 style="{_H}">{escape(_HEADING.match(rest[0]).group(1))}</h3>')  # type: ignore[union-attr]
        rest = rest[1:]
    if not rest:
        return "\n".join(out)
    first_item = next((i for i, line in enumerate(rest) if line.startswith(_BULLETS)), None)
    if first_item is not None and (items := _list_items(rest[first_item:])) and not _laid_out(rest[:first_item]):
        if first_item:  # a caption before the list
            out.append(f'<p style="{_P}">{_prose(rest[:first_item])}</p>')
        lis = "".join(f'<li style="{_LI}">{_lines(item)}</li>\n' for item in items)
        out.append(f'<ul style="{_UL}">\n{lis}</ul>')
        return "\n".join(out)
    if _laid_out(rest):
        # the unindented lines before an indented run are prose (a caption), the rest kept as laid out
        lead = 0
        while lead < len(rest) and not _laid_out([rest[lead]]):
            lead += 1
        if 0 < lead < len(rest):
            out.append(f'<p style="{_P}">{_prose(rest[:lead])}</p>')
            rest = rest[lead:]
        out.append(f'<pre style="{_PRE}">{escape(chr(10).join(rest))}</pre>')
    else:
        out.append(f'<p style="{_P}">{_prose(rest)}</p>')
    return "\n".join(out)


def _list_items(lines: Sequence[str]) -> list[list[str]] | None:
    """A bulleted list with hanging indents, as the templates write one, else None: each
    item's lines as the template wrote them, its bullet taken off and its wrapped lines
    joined again (a line indented deeper than the item's text continues the one before; a
    line at the item's text continues a long one, as in :func:`_prose`). Not a list: a line
    that is neither a bullet's nor indented, or one laid out in columns."""
    items: list[list[str]] = []
    before = ""
    for line in lines:
        text = line.strip()
        if "  " in text or text.startswith("|"):
            return None
        if line.startswith(_BULLETS):
            items.append([text[2:].lstrip()])
        elif not items or not line.startswith(" "):
            return None
        elif line.startswith("   ") or len(before) >= _PROSE_WIDTH:  # a wrapped line
            items[-1][-1] += " " + text
        else:
            items[-1].append(text)
        before = line
    return items


def _prose(lines: Sequence[str]) -> str:
    """Lines of prose: a wrapped line joined to the next with a space, a short one (the end
    of a sentence the template ended there, a list item) with a line break."""
    parts: list[str] = []
    for i, line in enumerate(lines):
        parts.append(escape(line))
        if i < len(lines) - 1:
            nxt = lines[i + 1]
            joined = len(line) >= _PROSE_WIDTH and not nxt.lstrip().startswith(("* ", "- ", "\u2022 "))
            parts.append(" " if joined else "<br>\n")
    return "".join(parts)


def _lines(lines: Iterable[str]) -> str:
    return "<br>\n".join(escape(line) for line in lines)


def _buttons(answers: Sequence[tuple[str, str]], reply_to: str, subject: str) -> str:
    reply_subject = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    links = "\n".join(
        f'<a href="{escape(mailto(reply_to, reply_subject, body))}" style="{_BUTTON}">{escape(label)}</a>'
        for label, body in answers
    )
    return (
        f'<div style="{_BOX}">\n<p style="margin:0 0 8px 0;font-weight:bold">Answer with one tap</p>\n'
        f'<p style="margin:0 0 8px 0;font-size:14px">Each button opens a new mail to the referee with the '
        f"answer filled in: send it as it is, or change it first.</p>\n{links}\n</div>"
    )
