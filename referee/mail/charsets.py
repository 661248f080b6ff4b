"""Mail bytes to text in whatever charset a mail declares, and the characters no text keeps.

:func:`decode_bytes` decodes with the declared charset, else UTF-8, else Windows-1252, else
Latin-1, which maps every byte: it never raises. Labels that mail clients use for a narrower
charset than they actually send are widened (``iso-8859-1`` is read as Windows-1252). Only
codecs Python ships are looked up (the labels come from anyone's mail, and the codec
registry remembers every name it is asked for), and never one that is quadratic
(``punycode``, ``idna``) or reads the bytes as something else than text in a charset
(``*_escape``), so decoding is linear in the bytes given. Header values
(:mod:`referee.mail.headers`), MIME parameters (:mod:`referee.mail.mime`) and body parts
(:mod:`referee.mail.bodytext`) are all decoded here.

:data:`CONTROL` and :data:`LONE_SURROGATES` are the characters no text read from a mail
keeps: C0 controls (PostgreSQL rejects NUL in text columns) and lone surrogates (they
cannot be encoded).
"""

from __future__ import annotations

import codecs
import encodings
import encodings.aliases
import functools
import pkgutil
import re

__all__ = ["CONTROL", "LONE_SURROGATES", "decode", "decode_bytes"]


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode with the declared charset, else UTF-8, else Windows-1252, else Latin-1.

    A charset that is unknown or does not fit the bytes falls through to the next
    candidate; Latin-1 maps every byte, so this never raises. Codecs that interpret
    the bytes as something else than text in a charset (``*_escape``) or are
    quadratic (``punycode``, ``idna``) are never used.
    """
    return decode(data, charset, partial=False)


def decode(data: bytes, charset: str | None, partial: bool) -> str:
    """:func:`decode_bytes`; with *partial*, the bytes are a prefix of the real ones and
    an incomplete character at their end is dropped instead of failing the charset."""
    candidates: list[str] = []
    label = (charset or "").strip().strip("\"'").lower()
    if label and len(label) <= 40:
        candidates += [_SUPERSETS.get(label, label), label]
    candidates += ["utf-8", "cp1252"]
    for encoding in dict.fromkeys(candidates):
        if not _usable_codec(encoding):
            continue
        try:
            return data.decode(encoding)
        except UnicodeDecodeError as exc:
            if partial and exc.end >= len(data) and exc.start >= len(data) - 16:
                try:
                    return data[: exc.start].decode(encoding)
                except (LookupError, UnicodeError, ValueError, TypeError):
                    pass
            continue
        except (LookupError, UnicodeError, ValueError, TypeError):
            continue
    return data.decode("latin-1")


@functools.lru_cache(maxsize=256)
def _usable_codec(label: str) -> bool:
    """A codec Python ships, that decodes text in a charset in linear time.

    Labels that name no shipped codec are not looked up at all: the codec registry
    remembers every name it was asked for, and the labels come from anyone's mail."""
    norm = encodings.normalize_encoding(label).lower()
    if norm not in _SHIPPED_CODECS and norm.replace(".", "_") not in _SHIPPED_CODECS:
        return False
    try:
        name = codecs.lookup(label).name
    except (LookupError, ValueError, TypeError):
        return False
    return name not in _UNUSABLE_CODECS and "escape" not in name


_UNUSABLE_CODECS = frozenset({"punycode", "idna"})
_SHIPPED_CODECS = frozenset(
    {name for name, _ in encodings.aliases.aliases.items()}
    | set(encodings.aliases.aliases.values())
    | {module.name for module in pkgutil.iter_modules(encodings.__path__)}
)

# Labels that mail clients use for a narrower charset than they actually send.
_SUPERSETS = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "iso-2022-jp": "iso2022_jp_ext",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
}


LONE_SURROGATES = re.compile("[\ud800-\udfff]")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # C0 controls but TAB, LF, CR
