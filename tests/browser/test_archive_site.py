"""The archive site in a real browser: a season whose Stationary Roulette match was played
to the end by mail, built with ``referee.archive.site.build``, served over HTTP by
``referee.archive.serve.make_server`` and read in headless Chromium the way a visitor reads
it: by following links, on a desktop and on a phone, with and without JavaScript.

SQLite only: what is tested here is what the browser shows; the store's backends are
tested elsewhere.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import cycle
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

import pytest
from sqlalchemy import select

from referee.archive.serve import make_server
from referee.archive.site import build
from referee.games import GAMES
from referee.games.base import SEASON_CHIPS
from referee.store.models import LedgerEntry, Match, Season

from ..service.harness import DAY, SEASON, START, World
from ..service.test_match_by_mail import reply_for
from .conftest import DESKTOP, PHONE, Tab

SEASON_KEY = SEASON["season"]["id"]
MATCH = "m1"
STANDINGS_HEADER = ["Rank", "Player", "Played", "Wins", "Draws", "Losses", "Victory points", "Chips"]
# the players bet differently, so that the match has a winner (bob's all-on-one bets win or
# lose the single-colour bonus)
BETS = {"alice": "Gold: 20\nSilver: 20", "bob": "Gold: 40"}
MOST_ROUNDS = 30  # Stationary Roulette ends after 11 phases; this only bounds a match that never ends
MOST_PAGES = 200  # the crawl's bound (this little site has a handful)

# the rows of a table's bodies, each a list of its cells' visible texts
ROWS_JS = "t => [...t.tBodies].flatMap(b => [...b.rows]).map(r => [...r.cells].map(c => c.innerText.trim()))"
HEADER_JS = "t => [...t.tHead.rows[0].cells].map(c => c.innerText.trim())"
FITS_JS = "() => [document.documentElement.scrollWidth, window.innerWidth]"
STYLED_JS = "() => [...document.styleSheets].some(s => s.cssRules.length > 0)"


# ---------------------------------------------------------------------------- the season


def match_status(world: World) -> str:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match.status).where(Match.key == MATCH))


def play_to_the_end(world: World) -> datetime:
    """Both players answer every step by mail within its first hours, each round with the
    next winning colour and their own bet, until the match is over; returns the instant of
    the last tick."""
    world.tick(START)
    colours = cycle(("Gold", "Silver", "Black", "Gold", "Silver"))
    for day in range(MOST_ROUNDS):
        opened, colour = START + day * DAY, next(colours)
        for hour, key in enumerate(("alice", "bob"), start=1):
            world.send(key, reply_for(world, key, colour, BETS[key]), opened + timedelta(hours=hour))
            world.tick(opened + timedelta(hours=hour))
        world.tick(opened + DAY)
        if match_status(world) == "finished":
            return opened + DAY
    raise AssertionError(f"{MATCH} did not finish in {MOST_ROUNDS} rounds")


@dataclass(frozen=True)
class Truth:
    """What the database says, read directly (not through the archive's page model), for
    the pages to be checked against."""

    season: str  # the season's name
    names: dict[str, str]  # player key -> name, in seat order
    outcome: dict[str, str]  # player key -> win | draw | loss
    victory_points: dict[str, float]
    chips: dict[str, int]  # the season balance of each player
    rounds: int  # closed rounds in the public view's history

    @classmethod
    def read(cls, world: World) -> Truth:
        with world.store.unit_of_work() as session:
            match = session.scalar(select(Match).where(Match.key == MATCH))
            season = session.get(Season, match.season_id)
            names = {seat.player.key: seat.player.name for seat in match.seats}
            chips = dict.fromkeys(names, 0)
            for entry in session.scalars(select(LedgerEntry).where(LedgerEntry.currency == SEASON_CHIPS)):
                for account, sign in ((entry.to_account, 1), (entry.from_account, -1)):
                    if account in chips:
                        chips[account] += sign * entry.amount
            return cls(
                season=season.name,
                names=names,
                outcome=dict(match.result["outcome"]),
                victory_points={key: float(vp) for key, vp in match.result["victory_points"].items()},
                chips=chips,
                rounds=len(GAMES[match.game].view(match.state, None)["history"]),
            )

    def standing_cells(self, key: str) -> list[str]:
        """The standings row of ``key`` after this one match, rank left out."""
        tally = [str(int(self.outcome[key] == word)) for word in ("win", "draw", "loss")]
        return [self.names[key], "1", *tally, shown(self.victory_points[key]), str(self.chips[key])]

    def ranking(self) -> list[str]:
        """The player keys by victory points, most first (the match has a winner: no tie-break)."""
        return sorted(self.names, key=lambda key: -self.victory_points[key])


def shown(value: float) -> str:
    """A number as a reader expects it: ``1``, ``0.5``."""
    return f"{value:g}"


@dataclass(frozen=True)
class Site:
    url: str  # the served site's root, ending in /
    truth: Truth

    def page(self, path: str) -> str:
        return urljoin(self.url, path)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The season played, the site built once and served on a free loopback port for the
    module's tests (they only read it)."""
    root = tmp_path_factory.mktemp("archive-site")
    world = World(root / "referee", f"sqlite:///{root / 'referee.db'}")
    try:
        finished = play_to_the_end(world)
        truth = Truth.read(world)
        assert sorted(truth.outcome.values()) == ["loss", "win"], "the standings are tested with a winner"
        build(world.store, root / "site", now=finished)
    finally:
        world.store.dispose()
    server = make_server(root / "site", "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, name="archive-server", daemon=True)
    thread.start()
    try:
        yield Site(f"http://127.0.0.1:{server.server_address[1]}/", truth)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=60)


# ---------------------------------------------------------------------------- reading pages


def table_rows(tab: Tab, selector: str) -> list[list[str]]:
    return tab.page.locator(selector).evaluate(ROWS_JS)


def table_header(tab: Tab, selector: str) -> list[str]:
    return tab.page.locator(selector).evaluate(HEADER_JS)


def to_season(tab: Tab, site: Site) -> None:
    """From the front page to the season's, by its link."""
    tab.open(site.url)
    tab.page.get_by_role("link", name=site.truth.season, exact=True).first.click()
    tab.page.wait_for_url(f"**/seasons/{SEASON_KEY}/index.html", wait_until="load")


def to_match(tab: Tab, site: Site) -> None:
    """From the front page to the season's, then to the match's, by clicking links."""
    to_season(tab, site)
    tab.page.get_by_role("link", name=MATCH, exact=True).first.click()
    tab.page.wait_for_url(f"**/seasons/{SEASON_KEY}/matches/{MATCH}/index.html", wait_until="load")


def assert_standings(tab: Tab, truth: Truth) -> None:
    assert table_header(tab, "#standings-table") == STANDINGS_HEADER
    rows = table_rows(tab, "#standings-table")
    assert [row[0] for row in rows] == [str(rank) for rank in range(1, len(truth.names) + 1)]
    assert {row[1]: row[1:] for row in rows} == {truth.names[key]: truth.standing_cells(key) for key in truth.names}
    assert [row[1] for row in rows] == [truth.names[key] for key in truth.ranking()]


def assert_result(tab: Tab, truth: Truth) -> None:
    rows = table_rows(tab, "#result-table")
    # player, outcome, victory points, in seat order (then the game's own columns: points)
    expected = [[truth.names[key], truth.outcome[key], shown(truth.victory_points[key])] for key in truth.names]
    assert [row[:3] for row in rows] == expected, "the result table: player, outcome, victory points, in seat order"


def assert_charts_drawn(tab: Tab) -> list[str]:
    """Every chart on the page is drawn with a size and at least one line, and named by its
    ``<title>``; returns the titles."""
    charts = tab.page.locator("svg[role=img]")
    assert charts.count() >= 1, "no chart on the page"
    titles = []
    for chart in charts.all():
        box = chart.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 50, f"chart box {box}"
        line = chart.locator("polyline").first.bounding_box()
        assert line is not None and line["width"] > 0, "the chart has no line drawn"
        title = chart.locator("title").first.text_content() or ""
        assert title.strip(), "a chart without a <title>"
        titles.append(title.strip())
    return titles


def assert_fits(tab: Tab) -> None:
    scroll_width, inner_width = tab.page.evaluate(FITS_JS)
    assert scroll_width <= inner_width, f"{tab.page.url}: {scroll_width}px wide in a {inner_width}px window"


def png_size(path: Path) -> tuple[int, int]:
    """The width and height a PNG file's header gives (and that it is a PNG)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


# ---------------------------------------------------------------------------- the tests


def test_season_page_shows_the_standings_as_the_database_says(open_tab, site):
    tab = open_tab()
    to_season(tab, site)
    assert site.truth.season in tab.page.title()
    assert tab.page.locator("h1").inner_text() == site.truth.season
    assert_standings(tab, site.truth)
    assert tab.problems == []


def test_match_page_is_a_click_away_with_its_result_and_charts(open_tab, site):
    tab = open_tab()
    to_match(tab, site)
    assert MATCH in tab.page.title() and site.truth.season in tab.page.title()
    assert_result(tab, site.truth)
    titles = assert_charts_drawn(tab)
    assert any(MATCH in title for title in titles), titles
    # the match's page indexes its rounds, a few a page, and links to its event log
    assert tab.page.locator("ol.toc a[href*='#round-']").count() == site.truth.rounds
    tab.page.locator("ul.toc a[href*='events-1.html']").click()
    tab.page.wait_for_url("**/events-1.html", wait_until="load")
    assert table_rows(tab, "#chain-table"), "the hash chain table is empty"
    assert tab.problems == []


def test_pages_fit_a_phone_screen(open_tab, site):
    tab = open_tab(**PHONE)
    to_season(tab, site)
    assert_fits(tab)
    first = site.truth.names[site.truth.ranking()[0]]
    tab.page.locator("#standings-table").get_by_role("link", name=first, exact=True).click()
    tab.page.wait_for_url(f"**/seasons/{SEASON_KEY}/players/*.html", wait_until="load")
    assert tab.page.locator("h1").inner_text() == first
    assert_fits(tab)
    to_match(tab, site)
    assert_fits(tab)
    assert_charts_drawn(tab)
    for chart in tab.page.locator("svg[role=img]").all():
        assert chart.bounding_box()["width"] <= PHONE["viewport"]["width"]
    assert tab.problems == []


def test_pages_work_without_javascript(open_tab, site):
    tab = open_tab(java_script_enabled=False)
    to_season(tab, site)
    assert_standings(tab, site.truth)
    to_match(tab, site)
    assert_result(tab, site.truth)
    assert_charts_drawn(tab)
    assert tab.problems == []


def crawl(tab: Tab, start: str) -> dict[str, int]:
    """Every address inside the site that a page links to, from ``start``: HTML pages are
    opened in the tab (so their stylesheets and images load too), anything else (feeds,
    chain.json) fetched; address -> HTTP status."""
    seen: dict[str, int] = {}
    queue = [start]
    while queue and len(seen) < MOST_PAGES:
        url = queue.pop(0)
        if url in seen:
            continue
        if not url.endswith((".html", "/")):
            seen[url] = tab.page.request.get(url).status
            continue
        seen[url] = tab.page.goto(url, wait_until="load").status
        assert tab.page.evaluate(STYLED_JS), f"{url}: no stylesheet applied"
        hrefs = tab.page.locator("a[href], link[href]").evaluate_all("els => els.map(e => e.href)")
        queue += [urldefrag(href).url for href in hrefs if href.startswith(start)]
    return seen


def test_every_link_inside_the_site_loads(open_tab, site):
    tab = open_tab()
    statuses = crawl(tab, site.url)
    assert {url: status for url, status in statuses.items() if status != 200} == {}
    assert site.page(f"seasons/{SEASON_KEY}/matches/{MATCH}/index.html") in statuses
    assert site.page("style.css") in statuses
    assert tab.problems == [], "failed loads or console errors while reading the site"


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_screenshots(open_tab, site, artifacts, device):
    """Screenshots of the season and match pages for a person to look at; each one a PNG
    of the whole page at the device's resolution."""
    options: dict[str, Any] = DESKTOP if device == "desktop" else PHONE
    scale = options.get("device_scale_factor", 1)
    tab = open_tab(**options)
    for name, go in (("season", to_season), ("match", to_match)):
        go(tab, site)
        path = artifacts / f"{name}-{device}.png"
        tab.page.screenshot(path=str(path), full_page=True)
        width, height = png_size(path)
        assert width == options["viewport"]["width"] * scale, (path, width)
        assert height >= options["viewport"]["height"] * scale, (path, height)
        assert path.stat().st_size > 20_000, f"{path} is nearly empty ({path.stat().st_size} bytes)"
    assert tab.problems == []
