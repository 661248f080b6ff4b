"""What the player wrote: quoted lines, attributions, forwarded and Outlook header
blocks, signatures and mobile footers removed (:func:`strip_quoted`), in linear time.

The rules look at each line a bounded number of times (:class:`QuoteLines` computes
what they ask of a line at most once); attribution rules are plain string tests, not
anchored ``.+`` patterns, which backtrack."""

from __future__ import annotations

import re
from typing import Iterable

__all__ = ["QuoteLines", "quoted_only", "strip_quoted", "text_and_uncut"]


def strip_quoted(text: str) -> str:
    """Only what the player wrote: no quoted lines, attributions, forwarded or
    Outlook header blocks, signatures or mobile footers.

    Unquoted text *below* a quote (bottom-posting, inline answers) is kept: an
    attribution line is dropped when quoted lines (or nothing) follow it, and the
    quoted lines go by the ``>`` rule. An attribution naming an address but
    followed by unquoted text introduces an unprefixed quote (Yahoo, AOL) and
    drops the rest, like the other cut rules (signature, Original Message,
    forwarded, Outlook header block).
    """
    return _strip(text, cut=True)


def _strip(text: str | QuoteLines, *, cut: bool) -> str:
    """:func:`strip_quoted`; with ``cut=False`` (the ``"uncut"`` reading) an attribution
    naming an address does not end the text: it is dropped itself and what follows is
    kept. A signature, a header block, an Original Message or forward marker still end it
    (what follows them is a quoted or forwarded mail, never the player's move)."""
    return _strip_reading(text, cut)[0]


def text_and_uncut(q: QuoteLines) -> tuple[str, str]:
    """``(_strip(q, cut=True), _strip(q, cut=False))``: the two differ only when the first
    pass meets an attribution naming an address (the one place ``cut`` decides), so the
    second pass is made only then."""
    text, met = _strip_reading(q, True)
    return text, (_strip_reading(q, False)[0] if met else text)


def _strip_reading(text: str | QuoteLines, cut: bool) -> tuple[str, bool]:
    """:func:`_strip`, and whether it met an attribution naming an address followed by
    unquoted text (where *cut* decides what happens)."""
    q = text if isinstance(text, QuoteLines) else QuoteLines(text)
    lines = q.lines
    quoted = q.quoted_flags()
    kept: list[str] = []
    met = False
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not line or line.isspace():  # the common case, and nothing below applies to it
            kept.append("")
            i += 1
            continue
        if quoted[i]:
            i += 1
            continue
        if q.cut_kind(i):
            break
        span, attribution = q.attribution(i)
        if span:
            following = q.next_nonblank(i + span)
            if following is None or q.quoted(following):
                i += span  # the quote below goes by the ">" rule
                continue
            if "@" in attribution:
                met = True
                if cut:
                    break
                i += span
                continue
        if not q.footer(i):
            kept.append(line.rstrip())
        i += 1
    return _join_lines(kept), met


def quoted_only(text: str | QuoteLines) -> str:
    """The ``>``-quoted lines, one level of ``>`` and one space after it removed."""
    q = text if isinstance(text, QuoteLines) else QuoteLines(text)
    kept = []
    for line, quoted in zip(q.lines, q.quoted_flags(), strict=True):
        if quoted:
            content = line.lstrip(" \t")[1:]
            kept.append((content[1:] if content[:1] == " " else content).rstrip())
    return _join_lines(kept)


class QuoteLines:
    """The lines of a text, with what the quote rules ask of each line computed at
    most once (the readings make several passes; a header block looks at the labels
    of the lines after it). Every question costs O(length of the line)."""

    __slots__ = ("lines", "_quoted", "_stripped", "_labels", "_cuts", "_attributions")

    def __init__(self, text: str) -> None:
        self.lines = _lines(text)
        self._quoted: list[bool] | None = None
        self._stripped: dict[int, str] = {}
        self._labels: dict[int, str] = {}
        self._cuts: dict[int, str | None] = {}
        self._attributions: dict[int, tuple[int, str]] = {}

    def stripped(self, i: int) -> str:
        found = self._stripped.get(i)
        if found is None:
            found = self._stripped[i] = self.lines[i].strip()
        return found

    def blank(self, i: int) -> bool:
        line = self.lines[i]
        return not line or line.isspace()

    def quoted(self, i: int) -> bool:
        return self.quoted_flags()[i]

    def quoted_flags(self) -> list[bool]:
        """For each line: is it ``>``-quoted? (Computed once, for all lines: every reading asks.)"""
        flags = self._quoted
        if flags is None:
            match = _QUOTED.match
            flags = self._quoted = [match(line) is not None for line in self.lines]
        return flags

    def label(self, i: int) -> str:
        found = self._labels.get(i)
        if found is None:
            # A label of interest is a short word: the match is bounded to the start of the line.
            match = _LABEL.match(self.lines[i], 0, 200)
            found = self._labels[i] = match.group(1).lower() if match else ""
        return found

    def next_nonblank(self, start: int) -> int | None:
        for j in range(start, len(self.lines)):
            if not self.blank(j):
                return j
        return None

    def cut_kind(self, i: int) -> str | None:
        """Does line *i* start something that runs to the end and is not the player's?
        ``"signature"``, ``"marker"`` (Original Message, forwarded, the underscore line
        above an Outlook header block), ``"header-block"``, else None."""
        found = self._cuts.get(i, False)
        if found is False:
            found = self._cuts[i] = self._cut_kind(i)
        return found

    def _cut_kind(self, i: int) -> str | None:
        line = self.lines[i]
        if line in ("-- ", "--"):
            return "signature"
        stripped = self.stripped(i)
        first = stripped[:1]
        if first in ("-", "B", "b"):
            if _ORIGINAL.match(stripped) or _FORWARDED.match(stripped):
                return "marker"
        elif first == "_":
            if _UNDERSCORES.match(stripped):
                following = self.next_nonblank(i + 1)
                if following is not None and self.label(following) in _FROM_LABELS:
                    return "marker"
        elif first in _BLOCK_INITIALS and self.label(i) in _BLOCK_START_LABELS and self.is_header_block(i):
            return "header-block"
        return None

    def is_header_block(self, start: int) -> bool:
        """A quoted mail's header block: From:, Sent:/Date: and Subject: lines before the next
        blank line, starting with From: (Outlook, Gmail's forward) or Sent: (GMX, Web.de put
        "Gesendet:" first)."""
        first = self.label(start)
        sent, subject = first in _SENT_LABELS, False
        seen_from = first in _FROM_LABELS
        lines, labels = self.lines, self._labels
        for j in range(start + 1, min(len(lines), start + 10)):
            line = lines[j]
            if not line or line.isspace():
                break
            label = labels.get(j)
            if label is None:
                label = self.label(j)
            if label in _SENT_LABELS:
                sent = True
            elif label in _SUBJECT_LABELS:
                subject = True
            elif label in _FROM_LABELS:
                seen_from = True
            if sent and subject and seen_from:
                return True
        return False

    def header_block_end(self, start: int) -> int:
        """The line after the header block starting at *start*."""
        end = start + 1
        while end < min(len(self.lines), start + 10) and not self.blank(end):
            end += 1
        return end

    def attribution(self, i: int) -> tuple[int, str]:
        """``(number of lines, joined text)`` of an attribution starting at line *i*.

        Gmail wraps long attributions, so up to three lines are joined. An attribution
        must contain a digit (its date); ``(0, "")`` when there is none.
        """
        found = self._attributions.get(i)
        if found is None:
            found = self._attributions[i] = self._attribution(i)
        return found

    def _attribution(self, i: int) -> tuple[int, str]:
        first = self.stripped(i)[:3]
        rule = _ATTRIBUTION_RULES.get(first[:2])
        if rule is None or len(first) < 3 or not first[2].isspace():
            rule = _generic_attribution
        parts: list[str] = []
        for j in range(i, min(i + 3, len(self.lines))):
            if self.blank(j) or self.quoted(j):
                break
            part = self.stripped(j)
            parts.append(part)
            if part.endswith(":"):  # as every attribution does
                joined = " ".join(parts)
                # a wrapped attribution without a known opener must name the address on its
                # first line, so that prose above an attribution is never taken for part of it
                wrapped_ok = j == i or rule is not _generic_attribution or "@" in parts[0]
                if wrapped_ok and rule(joined) and _DIGIT.search(joined):
                    return j - i + 1, joined
        return 0, ""

    def footer(self, i: int) -> bool:
        stripped = self.stripped(i)
        return stripped[:1] in _FOOTER_INITIALS and _FOOTER.match(stripped) is not None


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _join_lines(lines: Iterable[str]) -> str:
    """Join lines, dropping leading blank lines, runs of blank lines beyond one, and trailing ones."""
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def _ends_with(text: str, verb: str, aux: str = "", *, space_before_colon: bool = True) -> bool:
    """``^XX\\s.+\\s[aux\\s+]verb\\s*:$`` (XX, the opener, checked by the caller),
    with string tests: the anchored ``.+`` of the regex backtracks."""
    if not text.endswith(":"):
        return False
    rest = text[:-1].rstrip() if space_before_colon else text[:-1]
    if not rest.endswith(verb):
        return False
    rest = rest[: -len(verb)]
    if aux:
        trimmed = rest.rstrip()
        if len(trimmed) == len(rest) or not trimmed.endswith(aux):
            return False
        rest = trimmed[: -len(aux)]
    # rest is the opener, a space, at least one character, a space
    return len(rest) >= 5 and rest[2].isspace() and rest[-1].isspace()


def _has_word_then_colon(text: str, word: str) -> bool:
    """``^XX\\s.+\\sword\\b.*:$``: the first fitting occurrence of *word* decides."""
    if not text.endswith(":") or not text[2:3].isspace():
        return False
    at = text.find(word, 5)
    while at >= 0:
        after = at + len(word)
        if text[at - 1].isspace() and not (text[after : after + 1].isalnum() or text[after : after + 1] == "_"):
            return after <= len(text) - 1
        at = text.find(word, at + 1)
    return False


# Attributions in other languages ("Den 1 dec. 2026 kl. 19:00 skrev Referee <r@x>:",
# "W dniu ... napisał:", "..., Referee <r@x> написал:"): a line (or up to three) ending in
# one of these verbs and a colon, with a digit (its date); plain string tests.
_ATTRIBUTION_VERBS = (
    "wrote",
    "schrieb",
    "geschrieben",
    "écrit",
    "escribió",
    "schreef",
    "scritto",
    "escreveu",
    "skrev",
    "napisał",
    "napisała",
    "napisał(a)",
    "napsal",
    "napsala",
    "napísal",
    "написал",
    "написала",
    "написал(а)",
    "kirjoitti",
    "írta",
    "yazdı",
    "έγραψε",
    "scrise",
    "写道",
    "寫道",
    "が書きました",
    "님이 작성",
)


def _generic_attribution(text: str) -> bool:
    if not text.endswith(":"):
        return False
    rest = text[:-1].rstrip().lower()
    return len(rest) > 8 and rest.endswith(_ATTRIBUTION_VERBS)


_ATTRIBUTION_RULES = {
    "On": lambda t: _ends_with(t, "wrote", space_before_colon=False),
    "Am": lambda t: _has_word_then_colon(t, "schrieb"),
    "Le": lambda t: _ends_with(t, "écrit", "a"),
    "El": lambda t: _ends_with(t, "escribió"),
    "Op": lambda t: _has_word_then_colon(t, "schreef"),
    "Il": lambda t: _ends_with(t, "scritto", "ha"),
    "Em": lambda t: _ends_with(t, "escreveu"),
}


_DIGIT = re.compile(r"\d")
_QUOTED = re.compile(r"[ \t]*+>")
_ORIGINAL = re.compile(
    r"-{2,}+\s*+(?:Original Message|Ursprüngliche Nachricht|Message d'origine"
    r"|Mensaje original|Messaggio originale|Oorspronkelijk bericht|Ursprungligt meddelande"
    r"|Oprindelig meddelelse|Opprinnelig melding|Oryginalna wiadomość|Původní zpráva"
    r"|Pôvodná správa|Исходное сообщение|Mensagem original|Alkuperäinen viesti|Eredeti üzenet"
    r"|Orijinal İleti|Orijinal Mesaj|Αρχικό μήνυμα|原始邮件|原始郵件|元のメッセージ|원본 메시지)\s*+-{2,}+$",
    re.IGNORECASE,
)
_FORWARDED = re.compile(r"(?:-{2,}+\s*+Forwarded message\s*+-{2,}+|Begin forwarded message:)$", re.IGNORECASE)
_UNDERSCORES = re.compile(r"_{20,}+$")
_LABEL = re.compile(r"\s*+\*?([^\W\d_]++(?: [^\W\d_]++)?+)\s?\*?:")
# The labels of a quoted mail's header block (Outlook and the clients that copy it), by language.
_FROM_LABELS = frozenset(
    {
        "from",
        "von",
        "de",
        "från",
        "fra",
        "od",
        "от",
        "van",
        "da",
        "kimden",
        "lähettäjä",
        "feladó",
        "差出人",
        "发件人",
        "寄件者",
        "보낸 사람",
        "από",
    }
)
_FOOTER_INITIALS = frozenset("SsGg")
_SENT_LABELS = frozenset(
    {
        "sent",
        "date",
        "gesendet",
        "datum",
        "envoyé",
        "enviado",
        "fecha",
        "enviado el",
        "enviada em",
        "enviado em",
        "skickat",
        "sendt",
        "wysłano",
        "data",
        "odesláno",
        "odoslané",
        "отправлено",
        "дата",
        "verzonden",
        "inviato",
        "gönderildi",
        "tarih",
        "lähetetty",
        "elküldve",
        "送信日時",
        "发送时间",
        "日期",
        "傳送時間",
        "보낸 날짜",
        "στάλθηκε",
    }
)
_SUBJECT_LABELS = frozenset(
    {
        "subject",
        "betreff",
        "objet",
        "asunto",
        "ämne",
        "emne",
        "temat",
        "předmět",
        "predmet",
        "тема",
        "onderwerp",
        "oggetto",
        "konu",
        "aihe",
        "tárgy",
        "assunto",
        "件名",
        "主题",
        "主旨",
        "제목",
        "θέμα",
    }
)
_BLOCK_START_LABELS = _FROM_LABELS | _SENT_LABELS
_BLOCK_INITIALS = frozenset("".join({label[0] + label[0].upper() for label in _BLOCK_START_LABELS}) + "*")
_FOOTER = re.compile(
    r"(?:Sent from my (?:iPhone|iPad|Android(?: phone| device)?|Samsung Galaxy smartphone"
    r"|Galaxy|BlackBerry)"
    r"|Get Outlook for (?:iOS|Android)"
    r"|Sent from (?:Outlook|Mail|Yahoo Mail) for (?:iOS|iPhone|iPad|Android|Windows(?: 10| 11)?))"
    r"\.?(?:\s*+<[^<>\s]*+>)?$",
    re.IGNORECASE,
)
