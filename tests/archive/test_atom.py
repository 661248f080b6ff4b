"""The Atom writer: what feed readers parse back (feedparser), what RFC 4287 requires, and
player text that would break a naive writer."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from xml.etree import ElementTree as ET

import feedparser
import pytest

from referee.archive.atom import ATOM_NS, FeedEntry, clean_text, feed, rfc3339, tag_uri

NS = {"a": ATOM_NS}
AUTHORITY = "referee.example.org,2026"
T0 = datetime(2026, 12, 1, 18, 0, tzinfo=timezone.utc)


def entry(n: int, **changes) -> FeedEntry:
    fields = {
        "id": tag_uri(AUTHORITY, "test", "m1", str(n)),
        "title": f"Stationary Roulette m1: Round {n} of 10",
        "updated": T0 + n * timedelta(days=1),
        "text": f"Round {n}: Alice against Bob.\nChip movements:\n  none.",
        "link": f"https://archive.example.org/test/m1/#round-{n}",
    }
    return FeedEntry(**{**fields, **changes})


def season_feed(entries: list[FeedEntry], **changes) -> bytes:
    arguments = {
        "feed_id": tag_uri(AUTHORITY, "test"),
        "title": "Test season: results",
        "self_href": "https://archive.example.org/test/feed.xml",
        "alternate_href": "https://archive.example.org/test/",
        "updated": entries[0].updated if entries else T0,
        "entries": entries,
    }
    return feed(**{**arguments, **changes})


def test_feed_readers_parse_it_back():
    entries = [entry(3), entry(2), entry(1, published=T0)]
    parsed = feedparser.parse(season_feed(entries))
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    assert parsed.feed.title == "Test season: results"
    assert parsed.feed.id == "tag:referee.example.org,2026:test"
    assert parsed.feed.updated == "2026-12-04T18:00:00Z"
    assert {(link.rel, link.href) for link in parsed.feed.links} == {
        ("self", "https://archive.example.org/test/feed.xml"),
        ("alternate", "https://archive.example.org/test/"),
    }
    assert parsed.feed.author == "referee"
    assert [e.title for e in parsed.entries] == [e.title for e in entries]
    assert [e.id for e in parsed.entries] == [e.id for e in entries]
    assert [e.link for e in parsed.entries] == [e.link for e in entries]
    assert [e.updated for e in parsed.entries] == [
        "2026-12-04T18:00:00Z",
        "2026-12-03T18:00:00Z",
        "2026-12-02T18:00:00Z",
    ]
    assert parsed.entries[2].published == "2026-12-01T18:00:00Z" and "published" not in parsed.entries[0]
    assert parsed.entries[0].content[0].type == "text/plain"
    assert parsed.entries[0].content[0].value == entries[0].text  # the lines as written


def test_it_holds_what_rfc_4287_requires():
    root = ET.fromstring(season_feed([entry(2), entry(1)]))
    assert root.tag == f"{{{ATOM_NS}}}feed"
    for required in ("a:id", "a:title", "a:updated", "a:author/a:name"):
        assert len(root.findall(required, NS)) == 1, required
    self_links = [link for link in root.findall("a:link", NS) if link.get("rel") == "self"]
    assert len(self_links) == 1 and self_links[0].get("href") == "https://archive.example.org/test/feed.xml"
    assert len(root.findall("a:entry", NS)) == 2
    for element in root.findall("a:entry", NS):
        for required in ("a:id", "a:title", "a:updated"):
            assert len(element.findall(required, NS)) == 1, required
        # an entry needs content or an alternate link with a summary: it has content
        (content,) = element.findall("a:content", NS)
        assert content.get("type") == "text" and content.text
        (link,) = element.findall("a:link", NS)
        assert link.get("rel") == "alternate"
    # dates are RFC 3339 in UTC
    assert root.find("a:updated", NS).text == "2026-12-03T18:00:00Z"


def test_player_text_is_escaped_and_characters_xml_forbids_are_dropped():
    nasty = "Bob </content><script>alert(1)</script> & co \x07\x1b[31m \ufffe\ud800 \x85 end"
    document = season_feed(
        [entry(1, title=f"Round 1: {nasty}", text=f"line one\n{nasty}\nline <three> & \t tab")],
        title="Season <b>&amp;</b>",
    )
    parsed = feedparser.parse(document)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    root = ET.fromstring(document)  # a strict XML parser accepts it too
    (content,) = root.findall("a:entry/a:content", NS)
    assert content.text == "line one\nBob </content><script>alert(1)</script> & co [31m   end\nline <three> & \t tab"
    assert root.find("a:entry/a:title", NS).text == "Round 1: Bob </content><script>alert(1)</script> & co [31m   end"
    assert root.find("a:title", NS).text == "Season <b>&amp;</b>"
    assert b"<script>" not in document and b"\x07" not in document
    assert parsed.entries[0].content[0].value.startswith("line one\nBob </content><script>")


def test_an_empty_feed_is_a_valid_feed():
    document = season_feed([])
    parsed = feedparser.parse(document)
    assert parsed.bozo == 0 and parsed.entries == []
    root = ET.fromstring(document)
    assert root.find("a:id", NS).text == "tag:referee.example.org,2026:test"
    assert root.find("a:updated", NS).text == "2026-12-01T18:00:00Z"
    assert root.findall("a:entry", NS) == []


def test_the_same_entries_give_the_same_bytes():
    assert season_feed([entry(2), entry(1)]) == season_feed([entry(2), entry(1)])
    assert season_feed([entry(1)]).startswith(b'<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="')


def test_tag_uris_escape_their_parts():
    assert tag_uri(AUTHORITY, "test", "m1", "3") == "tag:referee.example.org,2026:test/m1/3"
    # a key with a slash, a colon, a space or a non-ASCII letter cannot make two ids alike
    assert tag_uri(AUTHORITY, "a/b", "c") != tag_uri(AUTHORITY, "a", "b/c")
    assert tag_uri(AUTHORITY, "s:1", "Zürich 2") == "tag:referee.example.org,2026:s%3A1/Z%C3%BCrich%202"
    assert tag_uri("organizer@example.org,2026-12-01", "x") == "tag:organizer@example.org,2026-12-01:x"
    for wrong in ("example.org", "example.org,26", "http://example.org,2026", "example.org,2026-1"):
        with pytest.raises(ValueError):
            tag_uri(wrong, "x")
    with pytest.raises(ValueError):
        tag_uri(AUTHORITY)


def test_times_are_utc_and_must_be_aware():
    berlin = timezone(timedelta(hours=1))
    assert rfc3339(datetime(2026, 12, 1, 19, 0, 30, 999, tzinfo=berlin)) == "2026-12-01T18:00:30Z"
    with pytest.raises(ValueError):
        rfc3339(datetime(2026, 12, 1, 18, 0))
    with pytest.raises(ValueError):
        season_feed([entry(1, updated=datetime(2026, 12, 1))])


def test_clean_text_keeps_tabs_line_ends_and_letters():
    assert clean_text("a\tb\nc\r\nd é 漢 😀") == "a\tb\nc\r\nd é 漢 😀"
    assert clean_text("\x00\x08\x0b\x0c\x1f\x7f\x9f") == ""
