"""Mail HTML to plain text in one linear pass (``html.parser`` is quadratic on unclosed
``<a``, ``<!--``, ``<![``, ``</``): see :func:`html_to_text`."""

from __future__ import annotations

import html as _html
import re

from referee.mail.quotes import _join_lines

__all__ = ["html_to_text"]


def html_to_text(html: str, *, quote_blockquotes: bool = False) -> str:
    """Readable text from mail HTML. The ``<blockquote>`` (the quoted reply) is dropped,
    or with *quote_blockquotes* kept as ``>``-quoted lines (so the quote rules drop it from
    what the player wrote, and the "quoted" reading finds a form edited inside it).

    One left-to-right pass of our own (``html.parser`` is quadratic on unclosed
    ``<a``, ``<!--``, ``<![``, ``</``): tags, comments and declarations are skipped,
    entities decoded in text runs, the contents of script, style, head, title,
    template and blockquote dropped; block tags and ``<br>`` end lines, ``<pre>``
    keeps its lines, table cells are separated by a space. A construct that never
    ends (``<a`` without ``>``, ``<!--`` without ``-->``) is text up to the next
    ``>`` (else ``<``), as html.parser reads it at the end of the data.
    """
    out = _HtmlText(quote_blockquotes)
    try:
        _scan_html(html, out)
    except Exception:  # keep whatever was read so far
        pass
    return _join_lines(" ".join(line.split()) for line in out.lines())


def _scan_html(html: str, out: _HtmlText) -> None:
    n = len(html)
    gt, comment_end = _Finder(html, ">"), _Finder(html, "-->")

    def unclosed(lt: int) -> int:
        """A construct that never ends: as html.parser reads it at the end of the data,
        its text up to the next ">" is text; go on after it. Without a ">" left, every
        "<" left is such a construct: the rest is text."""
        close = gt.find(lt + 1)
        stop = n if close < 0 else close + 1
        out.data(html[lt:stop])
        return stop

    pos = 0
    while pos < n:
        lt = html.find("<", pos)
        if lt < 0:
            out.data(html[pos:])
            return
        if lt > pos:
            out.data(html[pos:lt])
        pos = lt
        nxt = html[lt + 1:lt + 2]
        if nxt.isascii() and nxt.isalpha():
            if gt.find(lt) < 0:
                pos = unclosed(lt)
                continue
            tag = _START_TAG.match(html, lt)
            if tag is None:  # every ">" left is inside a quoted value that never ends
                out.data(html[lt:])
                return
            name = tag.group(1).lower()
            pos = tag.end()
            if html[pos - 2] == "/":  # <br/>, <p/>: XHTML-style empty element
                out.start(name)
                out.end(name)
                continue
            out.start(name)
            raw_end = _RAW_TEXT_END.get(name)
            if raw_end is not None:  # script, style: no markup inside, up to the end tag
                found = raw_end.search(html, pos)
                if found is None:
                    return  # the rest is script
                close = gt.find(found.end())
                pos = n if close < 0 else close + 1
                out.end(name)
            continue
        if nxt == "/":
            close = gt.find(lt + 2)
            if close < 0:
                pos = unclosed(lt)
                continue
            pos = close + 1
            after = html[lt + 2:lt + 3]
            if after.isascii() and after.isalpha():
                out.end(_TAG_NAME.match(html, lt + 2).group().lower())
            else:
                spaced = _SPACED_END_TAG.match(html, lt, close + 1)  # "</ p>", as html.parser reads it
                if spaced is not None:
                    out.end(spaced.group(1).lower())
            continue  # "</>" and "</ x y>" are ignored
        if html.startswith("<!--", lt):
            close = comment_end.find(lt + 2)  # "<!-->" and "<!--->" are empty comments
            if close < 0:
                pos = unclosed(lt)
                continue
            pos = close + 3
            continue
        if nxt in ("!", "?"):  # <!DOCTYPE>, <![CDATA[ .. ]]>, <![if ..]>, <?xml ?>: to the next ">"
            close = gt.find(lt + 2)
            if close < 0:
                pos = unclosed(lt)
                continue
            pos = close + 1
            continue
        out.data("<")
        pos = lt + 1


class _Finder:
    """``str.find`` of one needle that remembers its answer: asked again from a later
    position it searches only past the last occurrence found, so over a whole scan no
    character is searched twice (an unclosed ``<!--`` or ``<a`` repeated is linear)."""

    __slots__ = ("text", "needle", "start", "found")

    def __init__(self, text: str, needle: str) -> None:
        self.text, self.needle = text, needle
        self.start, self.found = 0, -2  # the last search: from where, and its answer

    def find(self, pos: int) -> int:
        if self.found != -2 and self.start <= pos and (self.found < 0 or pos <= self.found):
            return self.found
        self.start, self.found = pos, self.text.find(self.needle, pos)
        return self.found


# A start tag: its name, then attributes up to ">"; a quote opens a value only after
# "=", and an unterminated quoted value is read as plain characters. Every branch is
# atomic and consumes at least one character: one pass, no backtracking.
_START_TAG = re.compile(
    r"""<([a-zA-Z][^\t\n\r\f />\x00]*+)(?>[^>"'=]++|=[\t\n\r\f ]*+(?>"[^"]*+"|'[^']*+'|)|["'])*+>"""
)
_TAG_NAME = re.compile(r"[^\t\n\r\f />\x00]*+")
_SPACED_END_TAG = re.compile(r"</\s*+([a-zA-Z][-.a-zA-Z0-9:_]*+)\s*+>")
_RAW_TEXT_END = {
    "script": re.compile(r"</script(?=[\t\n\r\f />]|\Z)", re.IGNORECASE),
    "style": re.compile(r"</style(?=[\t\n\r\f />]|\Z)", re.IGNORECASE),
}


class _HtmlText:
    """The text of the HTML, line by line, from the scanner's tags and text runs."""

    _SKIP = frozenset({"script", "style", "head", "title", "template", "blockquote"})
    _BLOCK = frozenset({
        "address", "article", "aside", "center", "dd", "div", "dl", "dt", "fieldset",
        "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
        "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table",
        "tbody", "tfoot", "thead", "tr", "ul",
    })

    def __init__(self, quote_blockquotes: bool = False) -> None:
        self._done: list[str] = []
        self._line: list[str] = []
        self._skip: dict[str, int] = {}
        self._skipping = False
        self._pre = 0
        self._quoting = quote_blockquotes
        self._depth = 0  # blockquotes open, with quote_blockquotes

    def lines(self) -> list[str]:
        return self._done + ["".join(self._line)]

    def start(self, tag: str) -> None:
        if tag == "body":  # a <head> that was never closed ends here
            self._skip.pop("head", None)
            self._skip.pop("title", None)
            self._skipping = any(self._skip.values())
        if tag == "blockquote" and self._quoting:
            if not self._skipping:
                self._soft_break()
                self._depth += 1
            return
        if tag in self._SKIP:
            self._skip[tag] = self._skip.get(tag, 0) + 1
            self._skipping = True
        if self._skipping:
            return
        if tag == "br":
            self._break()
        elif tag in self._BLOCK:
            self._soft_break()
            if tag == "pre":
                self._pre += 1
        elif tag in ("td", "th"):
            self._line.append(" ")

    def end(self, tag: str) -> None:
        if tag == "blockquote" and self._quoting:
            if not self._skipping and self._depth:
                self._soft_break()
                self._depth -= 1
            return
        if tag in self._SKIP:
            if self._skip.get(tag):
                self._skip[tag] -= 1
                self._skipping = any(self._skip.values())
            if tag == "blockquote":
                self._soft_break()
            return
        if self._skipping:
            return
        if tag in self._BLOCK:
            self._soft_break()
            if tag == "pre" and self._pre:
                self._pre -= 1

    def data(self, text: str) -> None:
        if self._skipping or not text:
            return
        text = _unescape(text)
        if self._pre:
            for i, piece in enumerate(text.split("\n")):
                if i:
                    self._break()
                self._line.append(piece)
        else:
            self._line.append(_HTML_SPACE.sub(" ", text))

    def _break(self) -> None:
        line = "".join(self._line)
        if self._depth and line.strip():
            line = "> " * self._depth + line
        self._done.append(line)
        self._line = []

    def _soft_break(self) -> None:
        """End the current line unless it holds only collapsible whitespace.

        A block holding just ``&nbsp;`` is how Outlook writes an empty line, so it counts.
        """
        if _HTML_SPACE.sub("", "".join(self._line)):
            self._break()
        else:
            self._line = []


def _unescape(text: str) -> str:
    """html.unescape, one reference at a time (a numeric one of thousands of digits
    would make int() raise or take long; it is out of range anyway)."""
    if "&" not in text:
        return text
    return _CHARREF.sub(_charref, text)


def _charref(found: re.Match[str]) -> str:
    ref = found.group()
    if ref.startswith("&#") and len(ref[2:].lstrip("xX").rstrip(";").lstrip("0")) > 8:
        return "\ufffd"  # beyond U+10FFFF
    return _html.unescape(ref)


# html.unescape's own pattern: numeric references, or up to 32 name characters.
_CHARREF = re.compile(r"&(?:#[0-9]++;?|#[xX][0-9a-fA-F]++;?|[^\t\n\f <&#;]{1,32};?)")
_HTML_SPACE = re.compile(r"[ \t\n\r\f\v]+")  # HTML whitespace; &nbsp; is not collapsed
