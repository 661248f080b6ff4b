"""Headless Chromium for the browser tests, launched once for the package and driven
through Playwright's Python package. The browser is the system's (Debian's ``chromium``,
which .ci/run installs), never one that Playwright downloads (``playwright install`` is
never run). Without the browser or the package the tests skip, or fail when
REFEREE_REQUIRE_BROWSER or CI is set.

The machine has no network: the flags below keep Chromium from reaching out (updates,
sync, QUIC, background services), which would otherwise stall it on connections that never open.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest

from ..conftest import mark_users, unavailable

# Generous: every wait in these tests is for a condition, and must hold on a machine ten
# times slower than a developer's. Playwright counts in milliseconds.
TIMEOUT_MS = 120_000
LAUNCH_TIMEOUT_MS = 180_000

# Playwright adds --headless itself (headless=True) and starts every launch with a fresh,
# temporary user-data-dir, which it removes when the browser closes.
CHROMIUM_ARGS = [
    "--no-sandbox",  # the tests run as root in CI, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

DESKTOP = {"viewport": {"width": 1280, "height": 800}}
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}

REPO = Path(__file__).resolve().parents[2]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: needs headless Chromium and playwright (tests/browser)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the browser carries the marker (select or deselect with -m browser)."""
    mark_users(items, "browser", {"browser", "open_tab"})


def _unavailable(reason: str) -> NoReturn:
    unavailable(
        "REFEREE_REQUIRE_BROWSER",
        f"a headless browser is required here but is not available: {reason}",
        f"headless browser not available: {reason}",
    )


def chromium_path() -> str | None:
    """The system's Chromium: REFEREE_CHROMIUM if set, else the first on PATH."""
    if os.environ.get("REFEREE_CHROMIUM"):
        return os.environ["REFEREE_CHROMIUM"]
    return next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """One Chromium for all the browser tests (each test opens its own contexts: no state is
    shared), closed when they are done. Not for the whole session: while Playwright's sync
    API is started, this thread counts as running an event loop, between calls too, and the
    asyncio tests after this package would refuse to start (``asyncio.run`` from a running loop)."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError as exc:
        _unavailable(f"the playwright package is not installed ({exc}); pip install -e '.[test]'")
    executable = chromium_path()
    if executable is None:
        _unavailable("no chromium on PATH (Debian: apt-get install chromium)")
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(
                executable_path=executable, headless=True, args=CHROMIUM_ARGS, timeout=LAUNCH_TIMEOUT_MS
            )
        except Error as exc:
            _unavailable(f"{executable} did not start: {exc}")
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Tab:
    """A page with what went wrong while it loaded: responses of 400 and above, requests
    that failed, console errors and uncaught exceptions, for a test to assert on."""

    page: Any  # playwright.sync_api.Page
    problems: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.page.on("response", self._response)
        self.page.on("requestfailed", lambda req: self.problems.append(f"request failed: {req.url} ({req.failure})"))
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.problems.append(f"uncaught error: {exc}"))

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")

    def _console(self, message: Any) -> None:
        source = message.location.get("url", "")
        if message.type == "error":  # the pages name their icon (none), so Chromium asks for no favicon
            self.problems.append(f"console error: {message.text} ({source})")

    def open(self, url: str) -> Any:
        """Go to ``url`` and wait until it and everything it links in (the stylesheet) loaded."""
        response = self.page.goto(url, wait_until="load")
        assert response is not None and response.ok, f"{url}: {response and response.status}"
        return response


@pytest.fixture
def open_tab(browser: Any) -> Iterator[Callable[..., Tab]]:
    """``open_tab(**context_options)``: a fresh browser context (its own cookies, cache,
    viewport; e.g. ``java_script_enabled=False``) and a watched page in it; all closed after."""
    contexts: list[Any] = []

    def open_tab(**options: Any) -> Tab:
        context = browser.new_context(**{**DESKTOP, **options})
        contexts.append(context)
        context.set_default_timeout(TIMEOUT_MS)
        context.set_default_navigation_timeout(TIMEOUT_MS)
        return Tab(context.new_page())

    yield open_tab
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where the screenshots go, to be looked at by a person: $REFEREE_TEST_ARTIFACTS, else
    test-artifacts/browser/ in the checkout (ignored by git)."""
    folder = Path(os.environ.get("REFEREE_TEST_ARTIFACTS") or REPO / "test-artifacts" / "browser")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
