"""The archive's static site: every page valid HTML5, escaped, linked relatively, free of
addresses; the incremental build; safe paths; the feeds, the chain files and the server."""

from __future__ import annotations

import json
import random
import re
import threading
import urllib.request
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import html5lib
import pytest
from sqlalchemy import delete, select

from referee.archive import site
from referee.archive.pages import Paths, segment

from .match_files import match_html
from referee.archive.serve import make_server
from referee.archive.site import build, inside
from referee.store.models import Match, Seat

from .league import DAY, EVIL_NAME, EVIL_SEASON, START, League, load, match_dict, season_dict

MATCHES = [
    match_dict("r1", "stationary-roulette", ["alice", "carol"], seed=1),
    match_dict("r2", "stationary-roulette", ["bob", "dave"], seed=2),
    match_dict("p1", "indian-poker", ["alice", "bob"], seed=3),
    match_dict("p2", "indian-poker", ["carol", "dave"], seed=4),
    match_dict("h1", "rewind-holdem", ["carol", "alice"], seed=5),
    match_dict("h2", "rewind-holdem", ["bob", "carol"], seed=6),
    match_dict("later", "stationary-roulette", ["dave", "alice"], seed=7, start=START + 30 * DAY),
]


@pytest.fixture
def league(store):
    """A season with an evil name: one finished and one running match of every game, one
    match not started; carol's name is a script tag."""
    load(store, season_dict(MATCHES, name=EVIL_SEASON))
    league = League(store)
    for key in ("r1", "p1", "h1"):
        league.play(key, random.Random(key))
    for key, events in (("r2", 9), ("p2", 5), ("h2", 4)):
        league.play(key, random.Random(key), events=events)
    return league


def files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def html_pages(out: Path) -> dict[str, str]:
    return {path: data.decode() for path, data in files(out).items() if path.endswith(".html")}


# ---------------------------------------------------------------------------- every page


def test_every_page_is_valid_html5_and_every_file_readable(league, tmp_path):
    out = tmp_path / "site"
    report = build(league.store, out, now=START)
    everything = files(out)
    assert report.written == len(everything) - 1  # all but the manifest
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    pages = html_pages(out)
    # the index, "For players", the season, its schedule, 4 players, the matches (and their
    # rounds', ledger's... pages)
    assert len([p for p in pages if "/matches/" not in p]) == 4 + 4
    assert len([p for p in pages if p.endswith("/index.html") and "/matches/" in p]) == len(MATCHES)
    for path, text in pages.items():
        try:
            document = parser.parse(text)
        except html5lib.html5parser.ParseError as exc:
            raise AssertionError(f"{path}: {exc}") from None
        assert document.get("lang") == "en", path
        assert document.find(".//meta[@name='viewport']") is not None, path
        assert document.find(".//a[@class='skip']").get("href") == "#main", path
        for table in document.iter("table"):
            assert table.find("caption") is not None, path
            assert all(th.get("scope") in ("col", "row") for th in table.iter("th")), path
    for path, data in everything.items():
        if path.endswith(".atom"):
            root = ET.fromstring(data)
            assert root.tag == "{http://www.w3.org/2005/Atom}feed", path
        elif path.endswith(".json"):
            json.loads(data)
    assert "style.css" in everything


def test_no_page_holds_an_address_or_unescaped_markup(league, tmp_path):
    out = tmp_path / "site"
    build(league.store, out, now=START)
    escaped_season = "Season &amp; &lt;b&gt;&#34;quoted&#34;&lt;/b&gt; &#39;it&#39;"
    escaped_name = "&lt;script&gt;alert(1)&lt;/script&gt;"
    for path, data in files(out).items():
        text = data.decode()
        assert "@example.test" not in text, path
        assert "<script" not in text and "<b>" not in text, path
    pages = html_pages(out)
    for path, text in pages.items():
        assert escaped_season in text or path == Paths.GUIDE, path  # "For players" names no season
    carol = [Paths.season("s1"), Paths.schedule("s1", 1), Paths.player("s1", "carol")]
    carol += [Paths.match("s1", key) for key in ("r1", "p2", "h1", "h2")]
    for path in carol:
        assert escaped_name in pages[path], path
    # the feeds and the chain file carry the names as text, escaped by their own rules
    feed = ET.fromstring(files(out)[Paths.season_feed("s1")])
    assert EVIL_SEASON in feed.findtext("{http://www.w3.org/2005/Atom}title")
    assert any(EVIL_NAME in (e.text or "") for e in feed.iter("{http://www.w3.org/2005/Atom}content"))


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.found += [value for name, value in attrs if name in ("href", "src") and value]


def test_every_link_is_relative_and_leads_to_a_file_of_the_site(league, tmp_path):
    out = tmp_path / "site"
    build(league.store, out, now=START)
    for path, text in html_pages(out).items():
        parser = _Links()
        parser.feed(text)
        for href in parser.found:
            if href.startswith("#") or href == "data:,":  # a fragment; the empty icon (no request at all)
                continue
            assert not re.match(r"^[a-z]+:|^/", href), (path, href)
            target = (out / path).parent / href.split("#")[0]
            assert target.resolve().is_file(), (path, href)


def test_a_match_page_shows_rounds_ledger_chain_and_charts(league, tmp_path):
    out = tmp_path / "site"
    build(league.store, out, now=START)
    summary = html_pages(out)[Paths.match("s1", "r1")]
    assert '<section class="round"' not in summary and "rounds-3.html#round-11" in summary  # an index of the rounds
    page = match_html(out, "s1", "r1")
    assert page.count('<section class="round"') == 11  # the preparation phase and rounds 1-10
    assert 'id="round-11"' in page and "Result of Stationary Roulette r1" in page
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img"') == 2
    assert "<bdi>Alice</bdi>: Chips (with the season balance after each)" in page
    chain = json.loads((out / Paths.chain("s1", "r1")).read_text())
    assert chain["match"] == "r1" and chain["events"] and chain["head"] == chain["events"][-1]["hash"]
    assert all(record["payload"] is not None for record in chain["events"])  # the match is over
    assert chain["head"] in page
    running = json.loads((out / Paths.chain("s1", "r2")).read_text())
    assert all(record["payload"] is None for record in running["events"])


def test_the_chain_files_verify_against_the_database(league, tmp_path):
    from referee.archive.verify import verify_site

    out = tmp_path / "site"
    build(league.store, out, now=START)
    checks = verify_site(league.store, out)
    assert len(checks) == len(MATCHES) and all(c.ok for c in checks), [str(c) for c in checks]


# ---------------------------------------------------------------------------- incremental


def test_a_rebuild_with_nothing_changed_writes_nothing(league, tmp_path):
    out = tmp_path / "site"
    first = build(league.store, out, now=START)
    before = files(out)
    again = build(league.store, out, now=START + DAY)
    assert (again.written, again.unchanged, again.removed) == (0, 0, 0)
    assert again.skipped == first.written
    assert files(out) == before
    full = build(league.store, out, now=START + DAY, full=True)
    assert (full.written, full.unchanged, full.skipped) == (0, first.written, 0)


def test_after_a_deadline_only_that_match_its_players_the_season_and_its_schedule_page_change(
    league, tmp_path, monkeypatch
):
    monkeypatch.setattr(site, "SCHEDULE_PAGE", 2)  # four schedule pages: "r2" is on one of them
    out = tmp_path / "site"
    build(league.store, out, now=START)
    before = files(out)
    league.close("r2")
    report = build(league.store, out, now=START + DAY)
    after = files(out)
    changed = {path for path in after if before.get(path) != after[path]} - {Paths.MANIFEST}
    with league.store.unit_of_work() as session:
        order = [key for (key,) in session.execute(select(Match.key).order_by(Match.starts_at, Match.key))]
    page = order.index("r2") // 2 + 1
    parts = {p for p in changed if "/matches/" in p and re.fullmatch(r"[a-z]+-\d+\.html", p.rpartition("/")[2])}
    assert parts and all(path.startswith(Paths.match("s1", "r2", "")) for path in parts)  # r2's rounds, ledger...
    assert changed - parts == {
        Paths.match("s1", "r2"),
        Paths.match_feed("s1", "r2"),
        Paths.chain("s1", "r2"),
        Paths.player("s1", "bob"),
        Paths.player_calendar("s1", "bob"),  # r2's deadline left their calendars
        Paths.player("s1", "dave"),
        Paths.player_calendar("s1", "dave"),
        Paths.season("s1"),
        Paths.season_feed("s1"),
        Paths.schedule("s1", page),
    }
    assert report.written == len(changed)
    assert report.skipped == len(before) - 1 - len(changed) - report.unchanged


def test_a_file_is_written_atomically_and_only_when_its_bytes_change(tmp_path):
    assert site.write_if_changed(tmp_path, "a/b.html", b"one")
    assert not site.write_if_changed(tmp_path, "a/b.html", b"one")
    assert site.write_if_changed(tmp_path, "a/b.html", b"two")
    assert (tmp_path / "a" / "b.html").read_bytes() == b"two"
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["b.html"]  # no temporary file left


def test_only_files_the_manifest_names_are_removed(league, tmp_path):
    out = tmp_path / "site"
    build(league.store, out, now=START)
    (out / "seasons" / "s1" / "notes.txt").write_text("the organizer's own file")
    with league.store.unit_of_work() as session:
        later = session.scalar(select(Match).where(Match.key == "later"))
        session.execute(delete(Seat).where(Seat.match_id == later.id))
        session.delete(later)
    report = build(league.store, out, now=START)
    assert report.removed == 3
    assert not (out / "seasons" / "s1" / "matches" / "later").exists()
    assert (out / "seasons" / "s1" / "notes.txt").exists()
    # a manifest that names a file outside the site is refused, not obeyed
    manifest = json.loads((out / Paths.MANIFEST).read_text())
    manifest["files"]["../outside.txt"] = "x"
    (tmp_path / "outside.txt").write_text("keep me")
    (out / Paths.MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="outside the site"):
        build(league.store, out, now=START)
    assert (tmp_path / "outside.txt").read_text() == "keep me"


# ---------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    "key, expected",
    [
        ("m1", "m1"),
        ("a.b_c-D9", "a.b_c-D9"),
        ("..", "~2E."),
        (".hidden", "~2Ehidden"),
        ("a/b", "a~2Fb"),
        ("../../etc/passwd", "~2E.~2F..~2Fetc~2Fpasswd"),
        ("<script>", "~3Cscript~3E"),
        ("ä", "~C3~A4"),
        ("a~b", "a~7Eb"),
        ("", "~"),
    ],
)
def test_a_key_becomes_one_safe_path_segment(key, expected):
    assert segment(key) == expected
    assert "/" not in segment(key) and segment(key) not in (".", "..")


def test_inside_refuses_paths_that_leave_the_site(tmp_path):
    assert inside(tmp_path, "seasons/s/index.html") == tmp_path / "seasons/s/index.html"
    for bad in ("../x", "seasons/../../x", "/etc/passwd"):
        with pytest.raises(ValueError):
            inside(tmp_path, bad)


def test_a_match_key_that_is_a_path_stays_in_its_folder(league, tmp_path):
    with league.store.unit_of_work() as session:
        session.scalar(select(Match).where(Match.key == "later")).key = "../../../escape"
    out = tmp_path / "deep" / "site"
    build(league.store, out, now=START)
    assert not (tmp_path / "escape").exists() and not (tmp_path / "deep" / "escape").exists()
    assert (out / "seasons" / "s1" / "matches" / "~2E.~2F..~2F..~2Fescape" / "index.html").is_file()


# ---------------------------------------------------------------------------- serving


def test_the_server_serves_the_site_and_the_feeds_as_atom(league, tmp_path):
    out = tmp_path / "site"
    build(league.store, out, now=START)
    server = make_server(out, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        with urllib.request.urlopen(f"http://{host}:{port}/index.html", timeout=10) as answer:
            assert answer.status == 200 and answer.headers["Content-Type"].startswith("text/html")
            assert b"All seasons" in answer.read()
        with urllib.request.urlopen(f"http://{host}:{port}/{Paths.season_feed('s1')}", timeout=10) as answer:
            assert answer.headers["Content-Type"] == "application/atom+xml"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_a_build_reads_without_holding_up_the_service(league):
    """On SQLite the service's units of work take the write lock as they begin; the build's
    read transaction must not stop them (WAL: readers never block the writer)."""
    import time

    with site.reading(league.store) as session:
        assert session.scalar(select(Match.key).where(Match.key == "later")) == "later"
        t0 = time.monotonic()
        with league.store.unit_of_work() as writer:
            writer.scalar(select(Match).where(Match.key == "later")).seed = 99
        assert time.monotonic() - t0 < 5
        # and the build keeps the snapshot it began with
        assert session.scalar(select(Match.seed).where(Match.key == "later")) == 7


def test_a_players_page_shows_each_deadline_in_utc_and_in_the_players_zone(league, tmp_path):
    from referee.timefmt import local_time

    out = tmp_path / "site"
    build(league.store, out, now=START)
    deadline = league.match("r2").deadline
    page = html_pages(out)[Paths.player("s1", "bob")]
    assert "Deadline (America/New_York)" in page
    assert local_time(deadline, "UTC") in page and local_time(deadline, "America/New_York") in page
    assert "EST (" in local_time(deadline, "America/New_York")


def test_each_player_has_a_calendar_of_their_open_deadlines(league, tmp_path):
    """issue 22: a per-player .ics of the open deadlines, linked from the player's page."""
    import icalendar

    out = tmp_path / "site"
    build(league.store, out, now=START)
    found = 0
    for ics in sorted((out / "seasons" / "s1" / "players").glob("*.ics")):
        calendar = icalendar.Calendar.from_ical(ics.read_bytes())
        assert str(calendar["METHOD"]) == "PUBLISH"
        events = list(calendar.walk("VEVENT"))
        assert len({str(e["UID"]) for e in events}) == len(events)
        assert all(str(e["SUMMARY"]).startswith("Deadline") for e in events)
        found += len(events)
        page = (ics.with_suffix(".html")).read_text()
        assert f'href="{ics.name}"' in page
    assert found, "no open deadline in any player's calendar"


def test_the_page_for_players_is_linked_from_every_page_and_lists_every_command(league, tmp_path):
    """issue 22: "For players" is a click away from every page (and mails link it); every
    command docs/players.md lists is on it (so the two cannot drift apart)."""
    out = tmp_path / "site"
    build(league.store, out, now=START)
    guide = (out / Paths.GUIDE).read_text()
    doc = (Path(__file__).resolve().parents[2] / "docs" / "players.md").read_text()
    commands = re.findall(r"^\| `([A-Z]+)", doc, re.MULTILINE)
    assert {"HELP", "STATUS", "STANDINGS", "HISTORY", "TIMEZONE", "RESIGN"} <= set(commands)
    assert all(f"<code>{c}" in guide for c in commands), commands
    for page in out.rglob("*.html"):
        assert "For players: how to play by mail" in page.read_text(), page
