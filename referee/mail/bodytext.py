"""The text of a mail's body: what its reader sees, and what the player wrote, bounded.

:func:`read_body` (:func:`referee.mail.parse.parse_body`) reads the body from the first
:data:`~referee.mail.limits.RAW_LIMIT` bytes with the MIME walker
(:mod:`referee.mail.mime`), picks the part the player wrote in, cuts its text at
:data:`TEXT_LIMIT` characters and gives the ways of reading it (:class:`Reading`), best
first, as a :class:`Body`. :func:`shown_text` is the part a reader sees of a mail of ours,
:func:`extract_text` the same on a message parsed elsewhere (at most
:data:`MIME_PART_LIMIT` parts).

The text a player wrote is found in three steps:

1. the body part is picked (first inline ``text/plain``, else ``text/html`` turned into
   text by a linear scanner of our own), transfer encoding and charset are decoded,
   ``format=flowed`` is undone, line ends and invisible characters are normalised;
2. :func:`strip_quoted` removes what the player did not write: quoted lines,
   attribution lines, Outlook and forward header blocks, signatures, mobile footers;
3. the result is the ``"text"`` reading (:attr:`referee.mail.parse.Inbound.body`); :attr:`Body.shown`
   (:attr:`referee.mail.parse.Inbound.raw_body`) keeps step 1's output for quoting back in error replies.

Each step is linear in the text it is given, which :data:`TEXT_LIMIT` bounds; the other
readings are made only when asked for (:meth:`Body.each`).
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import Message
from typing import Any, Callable, Iterable, Iterator

from referee.mail.charsets import LONE_SURROGATES, decode
from referee.mail.html_text import html_to_text
from referee.mail.limits import MIME_PART_LIMIT, RAW_LIMIT, TEXT_LIMIT
from referee.mail.mime import Leaf, Walk, content_type, parsed_leaves
from referee.mail.quotes import QuoteLines, quoted_only, strip_quoted, text_and_uncut

__all__ = ["Body", "Reading", "as_shown", "extract_text", "read_body", "shown_text", "unflow"]


@dataclass(frozen=True)
class Reading:
    """One way of reading what the player wrote; see :class:`Body`."""

    source: str  # "text", "html", "uncut" or "quoted"
    text: str


class Body:
    """The body, bounded (:func:`referee.mail.parse.parse_body`).

    :attr:`readings`, best first, each only when non-empty and different from the
    ones before (:meth:`each` gives them one at a time, reading the next only when
    asked: most mails are settled by the first):

    ``"text"``
        what the player wrote in the preferred part (first non-blank inline
        text/plain, else text/html converted), as :func:`strip_quoted` leaves it;
    ``"html"``
        when the preferred part is text/plain and there is an inline text/html
        part too: that HTML converted and stripped (a plain "view this mail in your
        browser" stub must not hide the HTML that holds the real content);
    ``"uncut"``
        the preferred part without quoted lines, but not cut at an attribution
        naming an address, an Outlook header block, an "Original Message" or a
        forward marker (the player deleted the quote, kept "On ... <x@y> wrote:"
        and wrote below it);
    ``"quoted"``
        only the ``>``-quoted lines of the preferred part, one level of ``>``
        (and one space after it) removed (the player filled in the form inside
        the quote).
    """

    __slots__ = ("shown", "truncated", "_readings", "_later", "_seen")

    def __init__(
        self,
        readings: tuple[Reading, ...],
        shown: str,
        truncated: bool,
        *,
        later: Iterable[tuple[str, Callable[[], str]]] = (),
    ) -> None:
        self.shown = shown  # decoded text of the chosen part before quote stripping (bounded)
        # a bound (raw_limit, text_limit, MIME_PART_LIMIT, part headers) left something unread
        self.truncated = truncated
        self._readings: list[Reading] = []
        self._seen: set[str] = set()
        for reading in readings:
            self._add(reading.source, reading.text)
        self._later = list(later)  # (source, how to read it), in order, not read yet

    def _add(self, source: str, text: str) -> None:
        if text and text not in self._seen:
            self._readings.append(Reading(source, text))
            self._seen.add(text)

    def each(self) -> Iterator[Reading]:
        """The readings best first; each is made only when the ones before it were taken."""
        i = 0
        while True:
            while i >= len(self._readings) and self._later:
                source, read = self._later.pop(0)
                self._add(source, read())
            if i >= len(self._readings):
                return
            yield self._readings[i]
            i += 1

    @property
    def readings(self) -> tuple[Reading, ...]:
        """All the readings, best first."""
        for _ in self.each():
            pass
        return tuple(self._readings)

    @property
    def written(self) -> str:
        """The first reading's text (what the player wrote, as best read), else ""."""
        return next((reading.text for reading in self.each()), "")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with every reading made (a body read by a worker of the press travels
        whole): the same readings, in the same order."""
        return (Body, (self.readings, self.shown, self.truncated))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Body):
            return NotImplemented
        return (self.readings, self.shown, self.truncated) == (other.readings, other.shown, other.truncated)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Body(readings={self.readings!r}, shown={self.shown!r}, truncated={self.truncated!r})"


def read_body(raw: bytes, raw_limit: int, text_limit: int, top: tuple[Message, int | None] | None) -> Body:
    try:
        raw_limit = max(0, raw_limit)
        data = raw[:raw_limit]
        walk = Walk(data, cut=len(raw) > raw_limit)
        if top is not None and (top[1] is None or top[1] > len(data)):
            top = None
        walk.part(0, len(data), 0, False, top)
        choice = _choose(walk.leaves, max(0, text_limit))
        return _body(choice, truncated=walk.cut or walk.skipped)
    except Exception:  # the helpers are total; this is the last line of defence
        return Body((), "", len(raw) > raw_limit)


class _Choice:
    __slots__ = ("shown", "html", "cut")

    def __init__(self, shown: str = "", html: str | None = None, cut: bool = False) -> None:
        self.shown = shown  # the preferred part's text
        self.html = html  # the converted text/html alternative, when the preferred part is plain
        self.cut = cut  # text_limit cut the preferred part's (or the alternative's) text


def _choose(leaves: Iterable[Leaf], text_limit: int, *, alternative: bool = True) -> _Choice:
    """The inline text/plain parts that are not blank, joined in order, else the first
    text/html one; with a plain part, the first non-blank text/html part too
    (``alternative``; a caller that reads only :attr:`_Choice.shown` leaves it out: the
    conversion of the HTML is most of the work)."""
    inline = [leaf for leaf in leaves if leaf.ctype in ("text/plain", "text/html") and not leaf.attachment()]
    choice = _Choice()
    plain: list[str] = []  # every inline text/plain part, in order (Apple Mail splits around images)
    left = text_limit
    for leaf in inline:
        if leaf.ctype == "text/plain" and left > 0:
            text, cut = _leaf_text(leaf, left)
            if text.strip():
                plain.append(text)
                left -= len(text)
                choice.cut = choice.cut or cut
    if plain:
        choice.shown = "\n\n".join(plain)
        if not alternative:
            return choice
    for leaf in inline:
        if leaf.ctype == "text/html":
            text, cut = _leaf_text(leaf, text_limit)
            if text.strip():
                if choice.shown:
                    choice.html = text
                    choice.cut = choice.cut or cut
                else:
                    choice.shown, choice.cut = text, cut
                break
    return choice


def _leaf_text(leaf: Leaf, text_limit: int) -> tuple[str, bool]:
    charset = leaf.params.get("charset")
    text = decode(leaf.payload(), charset if charset and charset.isascii() else None, leaf.partial)
    cut = len(text) > text_limit
    if cut:
        text = text[:text_limit]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if leaf.ctype == "text/plain":
        if leaf.params.get("format", "").strip().lower() == "flowed":
            text = unflow(text, delsp=leaf.params.get("delsp", "").strip().lower() == "yes")
    else:
        text = html_to_text(text, quote_blockquotes=True)
    return _normalise(text), cut


def _body(choice: _Choice, *, truncated: bool) -> Body:
    shown, html = choice.shown, choice.html
    lines = QuoteLines(shown)
    text, uncut = text_and_uncut(lines)  # one pass, as a rule: "uncut" differs from "text" rarely
    later: list[tuple[str, Callable[[], str]]] = []
    if html is not None:
        later.append(("html", lambda: strip_quoted(html)))
    later.append(("uncut", lambda: uncut))
    later.append(("quoted", lambda: quoted_only(lines)))
    return Body((Reading("text", text),), shown, truncated or choice.cut, later=later)


def shown_text(raw: bytes) -> str:
    """The decoded text of the part a reader sees (:attr:`Body.shown`), without the
    readings :func:`read_body` makes for a player's mail: what a mail of ours says, to read
    a reply against it (:mod:`referee.mail.reply`). Never raises."""
    try:
        data = (raw if type(raw) is bytes else bytes(raw))[:RAW_LIMIT]
        walk = Walk(data, cut=False)
        walk.part(0, len(data), 0, False, None)
        return _choose(walk.leaves, TEXT_LIMIT, alternative=False).shown
    except Exception:  # the helpers are total; this is the last line of defence
        return ""


def as_shown(text: str) -> str:
    """What :func:`shown_text` reads back of a mail whose one text/plain part (not flowed)
    holds ``text``: a mail of ours keeps it beside its bytes (``Outbox.shown``), so that a
    reply is read against it without walking the mail again."""
    return _normalise(text[:TEXT_LIMIT].replace("\r\n", "\n").replace("\r", "\n")) if text.strip() else ""


def extract_text(msg: Message) -> str:
    """The body of a parsed message as plain text: first inline text/plain part, else
    converted text/html (cut at :data:`TEXT_LIMIT` characters).

    A blank text/plain part (some clients send one next to the HTML) does not count.
    Attachments and attached messages are ignored. Never raises.
    """
    try:
        leaves = []
        for part in parsed_leaves(msg, 0):
            leaves.append(Leaf(part, content_type(part)))
            if len(leaves) >= MIME_PART_LIMIT:
                break
        return _choose(leaves, TEXT_LIMIT, alternative=False).shown
    except Exception:
        return ""


def unflow(text: str, *, delsp: bool = False) -> str:
    """Undo RFC 3676 ``format=flowed``: join soft-broken lines, keep quote depth."""
    out: list[str] = []
    pending: list[str] = []  # pieces of the paragraph being joined
    pending_depth = 0
    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if content.startswith(" "):
            content = content[1:]  # space-stuffing
        flowed = content.endswith(" ") and content != "-- "
        if flowed and delsp:
            content = content[:-1]
        if pending and depth != pending_depth:
            out.append(_requote(pending_depth, "".join(pending)))
            pending = []
        if flowed:
            if not pending:
                pending_depth = depth
            pending.append(content)
        elif pending:
            pending.append(content)
            out.append(_requote(depth, "".join(pending)))
            pending = []
        else:
            out.append(_requote(depth, content))
    if pending:
        out.append(_requote(pending_depth, "".join(pending)))
    return "\n".join(out)


def _requote(depth: int, content: str) -> str:
    if not depth:
        return content
    return ">" * depth + (" " + content if content else "")


def _normalise(text: str) -> str:
    """LF line ends, no control characters (but TAB), no invisible characters.

    Control characters are dropped and lone surrogates replaced so the text can be
    stored anywhere (PostgreSQL rejects NUL in text columns).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.isascii():  # no invisible character, no surrogate: only the controls go (fast, as bytes)
        return text.encode("ascii").translate(None, _CONTROL_BYTES).decode("ascii")
    text = text.translate(_CONTROL_AND_INVISIBLE)
    return LONE_SURROGATES.sub("\ufffd", text)


_INVISIBLE = {
    0x00A0: " ",  # no-break space
    0x2007: " ",  # figure space
    0x202F: " ",  # narrow no-break space (French "a écrit :")
    0x200B: None,  # zero-width space
    0x200C: None,  # zero-width non-joiner
    0x200D: None,  # zero-width joiner
    0x200E: None,  # left-to-right mark
    0x200F: None,  # right-to-left mark
    0x2060: None,  # word joiner
    0x180E: None,  # Mongolian vowel separator
    0xFEFF: None,  # byte order mark / zero-width no-break space
    0x00AD: None,  # soft hyphen
    0x061C: None,  # Arabic letter mark
    **{code: None for code in range(0x202A, 0x202F)},  # bidi embeddings and overrides
    **{code: None for code in range(0x2066, 0x206A)},  # bidi isolates
    0xFF1A: ":",  # full-width colon (CJK input methods)
    0xFF1D: "=",  # full-width equals sign
}
_CONTROL_CODES = (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F)  # what CONTROL matches
_CONTROL_BYTES = bytes(_CONTROL_CODES)
_CONTROL_AND_INVISIBLE = {**dict.fromkeys(_CONTROL_CODES), **_INVISIBLE}
