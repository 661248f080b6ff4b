"""Atom feeds (RFC 4287) of the archive: pure, deterministic, no I/O.

The archive site publishes a feed per season and per match, one entry per closed round or
hand, so that a reader's feed program shows each result as it is archived. Most of the
text in an entry comes from players (their names, the commands they wrote), so
everything goes through :mod:`xml.etree.ElementTree`, which escapes ``&``, ``<`` and
quotes, and first loses the characters XML 1.0 cannot carry at all (control characters,
lone surrogates, U+FFFE/U+FFFF): one such character would make the whole feed unreadable
for every subscriber.

Ids are ``tag:`` URIs (RFC 4151) that the caller makes with :func:`tag_uri`: an id must
never change once published (a reader shows a changed id as a new entry), so it is built
from the season, match and round keys, not from the site's address.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import quote
from xml.etree import ElementTree as ET

__all__ = ["ATOM_NS", "FeedEntry", "clean_text", "feed", "rfc3339", "tag_uri"]

ATOM_NS = "http://www.w3.org/2005/Atom"

# What XML 1.0 forbids (C0 controls but tab, LF and CR; surrogates; U+FFFE, U+FFFF), and
# what it only discourages but feed readers refuse or show as garbage (DEL, C1 controls).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")

# RFC 4151: taggingEntity = authorityName "," date; a DNS name or an email address, and a
# date YYYY, YYYY-MM or YYYY-MM-DD
_AUTHORITY_DATE = re.compile(
    r"(?:[A-Za-z0-9._~!$&'()*+;=-]+@)?[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?,\d{4}(?:-\d{2}(?:-\d{2})?)?"
)


@dataclass(frozen=True)
class FeedEntry:
    """One entry: a closed round or hand, told in plain text.

    *updated* (and *published*, when given) must be timezone-aware; *link* is the
    address of the entry's page (the round on its match page).
    """

    id: str
    title: str
    updated: datetime
    text: str
    link: str
    published: datetime | None = None


def tag_uri(authority_date: str, *parts: str) -> str:
    """``tag:<authority_date>:<part>/<part>...``, each part percent-escaped (so a key with
    ``/``, ``:``, spaces or non-ASCII letters cannot make two ids alike or an invalid URI).

    *authority_date* is RFC 4151's tagging entity, e.g. ``referee.example.org,2026``
    (a domain the organizer held on that date), checked here because a wrong one would be
    published in every id and could never be corrected.
    """
    if not _AUTHORITY_DATE.fullmatch(authority_date):
        raise ValueError(f"not a tag URI authority and date (like example.org,2026): {authority_date!r}")
    if not parts:
        raise ValueError("a tag URI needs at least one part after the authority")
    return f"tag:{authority_date}:" + "/".join(quote(str(part), safe="") for part in parts)


def clean_text(text: str) -> str:
    """*text* without the characters an XML 1.0 document may not hold."""
    return _NOT_XML.sub("", text)


def rfc3339(at: datetime) -> str:
    """An aware instant in RFC 3339 UTC, to the second: ``2026-12-01T18:00:00Z``."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError("feed times must be timezone-aware")
    return at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def feed(
    *,
    feed_id: str,
    title: str,
    self_href: str,
    alternate_href: str,
    updated: datetime,
    entries: Sequence[FeedEntry],
    author: str = "referee",
) -> bytes:
    """The Atom document, UTF-8, with the entries in the order given (newest first is
    what readers expect).

    The feed carries what RFC 4287 requires (id, title, updated, an author, which every
    entry inherits, and a ``rel="self"`` link) plus the page it mirrors
    (``rel="alternate"``); each entry its id, title, updated, the link to its page and its
    text as ``<content type="text">``.
    """
    root = ET.Element("feed", {"xmlns": ATOM_NS})
    _text(root, "id", feed_id)
    _text(root, "title", title)
    _text(root, "updated", rfc3339(updated))
    _text(ET.SubElement(root, "author"), "name", author)
    _link(root, "self", self_href, "application/atom+xml")
    _link(root, "alternate", alternate_href, "text/html")
    for entry in entries:
        root.append(_entry(entry))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return ('<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n").encode("utf-8")


def _entry(entry: FeedEntry) -> ET.Element:
    element = ET.Element("entry")
    _text(element, "id", entry.id)
    _text(element, "title", entry.title)
    _text(element, "updated", rfc3339(entry.updated))
    if entry.published is not None:
        _text(element, "published", rfc3339(entry.published))
    _link(element, "alternate", entry.link, "text/html")
    _text(element, "content", entry.text, type="text")
    return element


def _text(parent: ET.Element, tag: str, text: str, **attributes: str) -> ET.Element:
    child = ET.SubElement(parent, tag, attributes)
    child.text = clean_text(text)
    return child


def _link(parent: ET.Element, rel: str, href: str, media_type: str) -> None:
    ET.SubElement(parent, "link", {"rel": rel, "href": clean_text(href), "type": media_type})
