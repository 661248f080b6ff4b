"""The archive's layout in a real browser, phone first: the five demo games and a demo
season (``referee demo``), every page of every kind (index, season, schedule, player, match
and a match's pages of rounds, ledger, event log and sealed moves) read at 390 px (a phone)
and 1280 px (a desktop). On every page: nothing wider than the window, no raw JSON, no step
id, no email address, no page taller than the bound; on a phone every chart's text at least
11 px. One browser and one set of built sites for the whole module; a screenshot of the first
page of each kind of each game is kept (its folder is printed).
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ..demo_runs import shared_demo
from .conftest import DESKTOP, PHONE

GAMES = ("stationary-roulette", "indian-poker", "rewind-holdem", "betting-minority", "matchjack")
TALLEST = {1280: 8_000, 390: 16_000}  # px; the bound is at 1280, a phone's column is longer
SMALLEST_CHART_TEXT = 11  # px, on a phone

MEASURE_JS = """() => ({
  width: document.scrollingElement.scrollWidth,
  inner: window.innerWidth,
  height: document.scrollingElement.scrollHeight,
  text: document.body.innerText,
  chartText: Math.min(Infinity, ...[...document.querySelectorAll('svg.chart text')].map(
    t => Math.hypot(t.getScreenCTM().a, t.getScreenCTM().b) * parseFloat(getComputedStyle(t).fontSize))),
})"""

JSON = re.compile(r'[{\[]\s*"[^"\n]*"\s*:|"\s*:\s*[{\["]')  # {"key": ... or "key": {
ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")
STEP_ID = re.compile(r"\(step [^)]+\)|\bhand-\d+-\d+\b|\bh\d+-[a-z]+\b|\bpot-main\b")


def kind(path: Path) -> str:
    """What kind of page a file of the site is."""
    parts = path.parts
    if "matches" in parts:
        return "match" if path.name == "index.html" else path.name.split("-")[0]
    if "players" in parts:
        return "player"
    if "schedule" in parts:
        return "schedule"
    return "season" if "seasons" in parts else "index"


# the demos as their own tests play them (tests/demo_runs.py: one run each for the whole test run)
DEMOS = {
    "stationary-roulette": ("--seed", "7", "--dir", "{dir}"),
    **{game: ("--game", game, "--seed", "5", "--dir", "{dir}") for game in GAMES[1:]},
    "season": ("--season", "{dir}", "--seed", "5"),
}


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The five demo games and the demo season, each played by ``referee demo`` (which builds
    its archive), in parallel: name -> the archive's folder."""

    def play(name: str) -> Path:
        run = shared_demo(tmp_path_factory, *DEMOS[name])
        assert run.code == 0, f"referee demo {name}: {run.out[-2000:]}{run.err[-2000:]}"
        return run.folder / "archive"

    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip(DEMOS, pool.map(play, DEMOS), strict=True))


@pytest.mark.parametrize("device", ["phone", "desktop"])
def test_every_page_of_every_game_fits_and_shows_no_internals(open_tab, sites, tmp_path, device):
    options: dict[str, Any] = PHONE if device == "phone" else DESKTOP
    width = options["viewport"]["width"]
    tab = open_tab(**options)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    problems: list[str] = []
    seen: dict[str, set[str]] = {}
    started = time.monotonic()
    for name, site in sites.items():
        for path in sorted(site.rglob("*.html")):
            where = f"{name}/{path.relative_to(site)} at {width} px"
            page_kind = kind(path.relative_to(site))
            tab.open(path.as_uri())
            got = tab.page.evaluate(MEASURE_JS)
            if got["width"] > got["inner"]:
                problems.append(f"{where}: {got['width']} px wide in a {got['inner']} px window")
            if got["height"] > TALLEST[width]:
                problems.append(f"{where}: {got['height']} px tall (at most {TALLEST[width]})")
            text = got["text"]
            for what, pattern in (("raw JSON", JSON), ("an email address", ADDRESS), ("a step id", STEP_ID)):
                if page_kind in ("events", "seals") and what != "an email address":
                    continue  # the record itself: each event with its step, each seal with its line
                if found := pattern.search(text):
                    problems.append(f"{where}: {what}: {found.group(0)!r}")
            if device == "phone" and got["chartText"] < SMALLEST_CHART_TEXT:
                problems.append(f"{where}: chart text {got['chartText']:.1f} px")
            if page_kind not in seen.setdefault(name, set()):
                seen[name].add(page_kind)
                # one pixel per CSS pixel (a phone's is half as wide and tall as at its
                # device scale: the layout shows as well, at a quarter of the encoding;
                # tests/browser/test_archive_site.py keeps its screenshots at device scale)
                shot = shots / f"{name}-{page_kind}-{device}.png"
                tab.page.screenshot(path=str(shot), full_page=True, scale="css")
    print(
        f"\n{device}: {sum(1 for s in sites.values() for _ in s.rglob('*.html'))} pages in "
        f"{time.monotonic() - started:.1f} s; screenshots in {shots}"
    )
    assert {"index", "season", "schedule", "player", "match", "rounds", "ledger", "events"} <= set().union(
        *seen.values()
    )
    assert problems == [], "\n".join(problems)
    assert tab.problems == []
