"""Player-supplied text in mails, feeds and pages: isolated, so that a right-to-left letter or
a directional control in a name cannot reverse the rest of its line (UAX #9). One place for
the mail notices (:mod:`referee.match.notices`) and the archive (:mod:`referee.archive`).

Only text that can turn a line around (a right-to-left letter, or a directional control) is
wrapped, between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE: left-to-right text reads
the same either way and stays as it is, so ordinary mails and feeds do not change.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

__all__ = ["FSI", "PDI", "isolate", "isolate_names", "turns"]

FSI, PDI = "\u2068", "\u2069"  # Unicode's first strong isolate and its pop
_TURNING = frozenset({"R", "AL", "AN", "RLE", "RLO", "LRE", "LRO", "PDF", "RLI", "LRI", "FSI", "PDI"})


def turns(text: str) -> bool:
    """Does ``text`` hold a right-to-left letter or a directional control?"""
    return any(unicodedata.bidirectional(ch) in _TURNING for ch in text)


def isolate(text: Any) -> Any:
    """One piece of player-supplied text (a name) between FSI and PDI when it can turn a
    line around; a stray PDI of its own, which would close the isolate early, is dropped.
    Anything else (left-to-right text, not a string) is returned as it is."""
    if not isinstance(text, str) or not text or not turns(text):
        return text
    depth, kept = 0, []
    for ch in text:
        if ch in "\u2066\u2067\u2068":  # LRI, RLI, FSI
            depth += 1
        elif ch == PDI:
            if depth == 0:
                continue
            depth -= 1
        kept.append(ch)
    return FSI + "".join(kept) + PDI


def isolate_names(text: str, names: Iterable[str]) -> str:
    """``text`` with every occurrence of each of ``names`` that can turn a line around
    wrapped between FSI and PDI, unless it stands so already (a text built from isolated
    names, with a game's own view that names players as they are). Longer names first, so
    a name inside another is not isolated twice. Linear in the text's length per name."""
    wanted = sorted({n for n in names if n and turns(n)}, key=len, reverse=True)
    if not wanted or not text:
        return text
    pattern = re.compile("|".join(f"{re.escape(FSI)}?{re.escape(n)}{re.escape(PDI)}?" for n in wanted))

    def wrap(m: re.Match[str]) -> str:
        found = m.group(0)
        if found.startswith(FSI) and found.endswith(PDI):
            return found  # isolated already
        return FSI + found.strip(FSI + PDI) + PDI

    return pattern.sub(wrap, text)
