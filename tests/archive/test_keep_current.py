"""``[archive]`` in the service config, and ``referee run`` keeping the site current: a build
after each cycle that moved a match on, beside the cycles, whose failure stops nothing."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from referee.archive import site
from referee.archive.pages import Paths
from referee.config import ArchiveSettings, ConfigError, load_service_config
from scheduler.runner import ServiceRunner

from ..migrated import migrated_sqlite
from ..service.harness import DAY, START, World

TOP = 'database = "sqlite:///r.db"\nsecret = "0123456789abcdef-archive"\n'
MAIL = '[mail]\naddress = "referee@example.org"\n'


def config(tmp_path: Path, archive: str):
    path = tmp_path / "referee.toml"
    path.write_text(TOP + archive + MAIL)
    return load_service_config(path)


def test_archive_settings_are_read_relative_to_the_file(tmp_path):
    assert config(tmp_path, "").archive is None
    settings = config(tmp_path, '[archive]\ndir = "public/archive"\n').archive
    assert settings == ArchiveSettings(dir=(tmp_path / "public" / "archive").resolve(), base_url=None)
    settings = config(tmp_path, '[archive]\ndir = "/srv/site"\nbase_url = "https://example.org/archive"\n').archive
    assert settings == ArchiveSettings(dir=Path("/srv/site"), base_url="https://example.org/archive/")


@pytest.mark.parametrize(
    "table, error",
    [
        ("[archive]\n", "missing required key 'dir'"),
        ('[archive]\ndir = ""\n', "'dir' must be a non-empty string"),
        ('[archive]\ndir = "a"\nbase = "x"\n', "unknown key 'base' (allowed: base_url, dir)"),
        ('[archive]\ndir = "a"\nbase_url = "example.org"\n', "base_url must be an http(s) address"),
        ('[archive]\ndir = "a"\nbase_url = "ftp://example.org/"\n', "base_url must be an http(s) address"),
        ('[archive]\ndir = "a"\nbase_url = "https://example.org/?x=1"\n', "without query or fragment"),
        ('archive = "site"\n', "[archive] must be a table"),
    ],
)
def test_a_wrong_archive_table_is_said_in_one_line(tmp_path, table, error):
    with pytest.raises(ConfigError) as exc:
        config(tmp_path, table)
    assert error in str(exc.value) and "[archive]" in str(exc.value)


def test_a_dir_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "site").write_text("not a folder")
    with pytest.raises(ConfigError, match="is not a folder"):
        config(tmp_path, '[archive]\ndir = "site"\n')


def test_keep_current_builds_incrementally_with_the_base_url(tmp_path, sqlite_url):
    world = World(tmp_path / "world", sqlite_url)
    settings = ArchiveSettings(dir=tmp_path / "site", base_url="https://example.org/archive/")
    try:
        world.tick(START)
        first = site.keep_current(world.store, settings, START)
        assert first.written > 0
        assert site.keep_current(world.store, settings, START).written == 0
        feed = (settings.dir / Paths.season_feed("test")).read_text()
        assert 'href="https://example.org/archive/seasons/test/feed.atom"' in feed
        assert "tag:example.org," in feed
    finally:
        world.store.dispose()


@pytest.fixture
def sqlite_url(tmp_path):
    return migrated_sqlite(tmp_path / "referee.db")


def runner_for(world: World, at, tmp_path: Path) -> ServiceRunner:
    world.config.archive = ArchiveSettings(dir=tmp_path / "site")
    return ServiceRunner(world.referee, poll_seconds=3600, grace_seconds=0, clock=lambda: at[0])


async def test_each_cycle_that_moves_a_match_on_brings_the_site_up_to_date(tmp_path, sqlite_url):
    world = World(tmp_path / "world", sqlite_url)
    at = [START - DAY]
    runner = runner_for(world, at, tmp_path)
    try:
        await runner.cycle("first")  # nothing due yet: the first cycle builds the site all the same
        await runner._archive
        match_page = tmp_path / "site" / Paths.match("test", "m1")
        assert "scheduled" in match_page.read_text()
        built = runner._archive
        await runner.cycle("quiet")  # nothing changed: no build
        assert runner._archive is built
        at[0] = START
        await runner.cycle("start")  # the match starts: the site follows
        await runner._archive
        assert runner._archive is not built and "running" in match_page.read_text()
    finally:
        world.store.dispose()


async def test_a_failing_build_is_logged_and_the_service_goes_on(tmp_path, sqlite_url, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(site, "keep_current", broken)
    world = World(tmp_path / "world", sqlite_url)
    at = [START]
    runner = runner_for(world, at, tmp_path)
    try:
        with caplog.at_level(logging.ERROR, logger="referee.scheduler"):
            report = await runner.cycle("start")
            await asyncio.gather(runner._archive)
        assert report is not None and report.started == 1  # the cycle did its work
        assert "building the archive" in caplog.text and "disk full" in caplog.text
        at[0] = START + DAY
        report = await runner.cycle("deadline")  # and the next cycles still close deadlines
        assert report.closed == 1
    finally:
        await asyncio.gather(runner._archive, return_exceptions=True)
        world.store.dispose()
