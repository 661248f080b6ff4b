"""Loading a season into the store: starts in the past, what a reload reports, refusals
for started matches, dry runs. No service and no clock: `now` is passed in."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from referee.config import ConfigError, parse_season
from referee.seasons import load_season
from referee.store.models import Match, Player

NOW = datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc)
DAY = timedelta(days=1)

SEASON = {
    "season": {"id": "s", "name": "Season", "starting_chips": 100},
    "players": [
        {"id": "alice", "name": "Alice", "email": "alice@x.test", "timezone": "Europe/Berlin"},
        {"id": "bob", "name": "Bob", "email": "bob@x.test", "timezone": "Asia/Tokyo"},
    ],
    "matches": [
        {
            "id": "m1",
            "game": "stationary-roulette",
            "players": ["alice", "bob"],
            "start": "2026-12-02T18:00:00Z",
            "seed": 3,
            "reminders": ["2h"],
        }
    ],
}


def season(**match) -> dict:
    data = copy.deepcopy(SEASON)
    data["matches"][0].update(match)
    return data


def load(store, data, now=NOW, **kwargs):
    return load_season(store, parse_season(data, "season.toml"), now, **kwargs)


def set_status(store, status: str) -> None:
    with store.unit_of_work() as session:
        session.scalar(select(Match).where(Match.key == "m1")).status = status


# ---------------------------------------------------------------------------- starts in the past


@pytest.mark.parametrize(
    "start, phase, message",
    [
        (
            "2026-11-20T18:00:00Z",
            "24h",
            "match m1 would start 2026-11-20 18:00 UTC, 10 days 14 hours ago: the next tick would close its "
            "first 10 phases at once, with inactivity penalties for players who did not act. "
            "Give a future start, or --allow-past to load it anyway.",
        ),
        (
            "2026-11-30T07:00:00Z",
            "24h",
            "match m1 would start 2026-11-30 07:00 UTC, 1 day 1 hour ago: the next tick would close its "
            "first phase at once, with inactivity penalties for players who did not act. "
            "Give a future start, or --allow-past to load it anyway.",
        ),
        (
            "2026-11-29T08:00:00Z",
            "4h",
            "match m1 would start 2026-11-29 08:00 UTC, 2 days ago: the next tick would play the whole match "
            "out at once (all 11 phases), with inactivity penalties for players who did not act. "
            "Give a future start, or --allow-past to load it anyway.",
        ),
        (
            "2026-12-01T05:00:00Z",
            "24h",
            "match m1 would start 2026-12-01 05:00 UTC, 3 hours ago: the next tick would open its first phase "
            "late, leaving 21 hours of its 1 day to act. Give a future start, or --allow-past to load it anyway.",
        ),
    ],
    ids=["ten-phases", "one-phase", "whole-match", "first-phase-late"],
)
def test_a_start_in_the_past_is_refused_saying_what_would_happen(sqlite_store, start, phase, message):
    with pytest.raises(ConfigError) as exc:
        load(sqlite_store, season(start=start, phase_length=phase))
    assert str(exc.value) == message
    with sqlite_store.unit_of_work() as session:  # nothing was loaded
        assert session.scalar(select(Match)) is None and session.scalar(select(Player)) is None


def test_the_count_follows_the_match_timing(sqlite_store):
    with pytest.raises(ConfigError, match="close its first 4 phases at once"):
        load(sqlite_store, season(start="2026-11-29T07:00:00Z", phase_length="12h"))


def test_every_match_in_the_past_is_named(sqlite_store):
    data = season(start="2026-11-20T18:00:00Z")
    data["matches"] += [
        {**data["matches"][0], "id": "m2"},
        {**data["matches"][0], "id": "m3"},
        {**data["matches"][0], "id": "m4", "start": "2026-12-10T18:00:00Z"},
    ]
    with pytest.raises(ConfigError, match=r"\(matches m2 and m3 also start in the past\)\. Give a future start"):
        load(sqlite_store, data)


def test_allow_past_loads_it_and_says_so(sqlite_store):
    changes = load(sqlite_store, season(start="2026-11-20T18:00:00Z"), allow_past=True)
    assert changes[-1] == (
        "match m1: warning: starts 2026-11-20 18:00 UTC, 10 days 14 hours ago (--allow-past): the next tick "
        "would close its first 10 phases at once, with inactivity penalties for players who did not act"
    )
    with sqlite_store.unit_of_work() as session:
        assert session.scalar(select(Match)).starts_at == datetime(2026, 11, 20, 18, 0, tzinfo=timezone.utc)


def test_a_started_match_is_not_in_the_past_on_a_reload(sqlite_store):
    load(sqlite_store, SEASON, now=NOW)
    set_status(sqlite_store, "running")
    later = NOW + 5 * DAY
    renamed = copy.deepcopy(SEASON)
    renamed["players"][0]["name"] = "Alicia"
    assert load(sqlite_store, renamed, now=later) == ["player alice: name 'Alice' -> 'Alicia'"]


def test_a_scheduled_match_whose_unchanged_start_passed_is_not_refused(sqlite_store):
    """The start was in the future when it was loaded; the reload does not set it."""
    load(sqlite_store, SEASON, now=NOW)
    assert load(sqlite_store, SEASON, now=NOW + 2 * DAY) == []


def test_moving_a_scheduled_match_into_the_past_is_refused(sqlite_store):
    load(sqlite_store, SEASON, now=NOW)
    with pytest.raises(ConfigError, match="match m1 would start 2026-11-30 18:00 UTC, 14 hours ago"):
        load(sqlite_store, season(start="2026-11-30T18:00:00Z"))


# ---------------------------------------------------------------------------- what a reload says


def test_first_load_then_no_changes(sqlite_store):
    assert load(sqlite_store, SEASON) == [
        "season s: created",
        "player alice: added (alice@x.test, Europe/Berlin)",
        "player bob: added (bob@x.test, Asia/Tokyo)",
        "player alice: granted 100 starting chips",
        "player bob: granted 100 starting chips",
        "match m1: added: stationary-roulette for alice, bob, starts 2026-12-02 18:00 UTC",
    ]
    assert load(sqlite_store, SEASON) == []


def test_a_reload_says_every_change_old_to_new(sqlite_store):
    load(sqlite_store, SEASON)
    data = season(start="2026-12-03T18:00:00Z", phase_length="12h", reminders=["2h", "30m"], players=["bob", "carol"])
    data["season"].update(name="Winter", starting_chips=150)
    data["players"][0].update(name="Alicia", email="alicia@x.test", timezone="Europe/Paris")
    data["players"].append({"id": "carol", "email": "carol@x.test"})
    data["matches"].append({**SEASON["matches"][0], "id": "m2", "start": "2026-12-04T18:00:00Z"})
    assert load(sqlite_store, data) == [
        "season s: name 'Season' -> 'Winter'",
        "season s: starting_chips 100 -> 150 (players granted chips before keep their grant; "
        "new players get the new amount)",
        "player alice: name 'Alice' -> 'Alicia'",
        "player alice: email alice@x.test -> alicia@x.test",
        "player alice: time zone Europe/Berlin -> Europe/Paris",
        "player carol: added (carol@x.test, UTC)",
        "player carol: granted 150 starting chips",
        "match m1: players alice, bob -> bob, carol",
        "match m1: start 2026-12-02 18:00 UTC -> 2026-12-03 18:00 UTC",
        "match m1: round length 24h -> 12h",
        "match m1: reminders 2h -> 2h, 30m",
        "match m2: added: stationary-roulette for alice, bob, starts 2026-12-04 18:00 UTC",
    ]
    assert load(sqlite_store, data) == []


def test_a_changed_seed_of_a_scheduled_match_is_reported(sqlite_store):
    load(sqlite_store, SEASON)
    assert load(sqlite_store, season(seed=4)) == ["match m1: seed 3 -> 4"]


def test_phase_lengths_and_reminders_of_a_started_match_change_from_its_next_phase(sqlite_store):
    load(sqlite_store, SEASON)
    set_status(sqlite_store, "running")
    assert load(sqlite_store, season(phase_length="1h30m", reminders=[])) == [
        "match m1: round length 24h -> 1h30m (from its next phase on)",
        "match m1: reminders 2h -> none (from its next phase on)",
    ]


@pytest.mark.parametrize("status", ["running", "finished"])
def test_a_change_to_a_started_match_is_refused_and_nothing_is_loaded(sqlite_store, status):
    load(sqlite_store, SEASON)
    set_status(sqlite_store, status)
    data = season(start="2026-12-05T18:00:00Z", seed=9)
    data["players"][0]["name"] = "Alicia"  # would be fine on its own: not applied either
    with pytest.raises(ConfigError) as exc:
        load(sqlite_store, data)
    state = "started" if status == "running" else "finished"
    assert str(exc.value) == (
        f"match m1 has {state} (at 2026-12-02 18:00 UTC), so its game, players, seed, start and options can no "
        "longer change, but the file changes its seed 3 -> 9 and start 2026-12-02 18:00 UTC -> "
        "2026-12-05 18:00 UTC. Nothing was loaded: put the old values back (only phase lengths and reminders "
        "of a started match may change)"
    )
    with sqlite_store.unit_of_work() as session:
        assert session.scalar(select(Player).where(Player.key == "alice")).name == "Alice"


def test_a_dry_run_reports_the_same_and_changes_nothing(sqlite_store):
    first = load(sqlite_store, SEASON, dry_run=True)
    assert first[0] == "season s: created"
    with sqlite_store.unit_of_work() as session:
        assert session.scalar(select(Player)) is None
    assert load(sqlite_store, SEASON) == first


# ---------------------------------------------------------------------------- garnets


def test_starting_garnets_are_granted_once_per_player_as_a_season_currency(sqlite_store):
    """``starting_garnets`` grants each player garnets in the season ledger once, apart from
    the chips (MatchJack reads them: FOLD STAYSET costs 5); a reload grants nothing again,
    a new amount is reported and reaches only players added later."""
    from referee.store.balances import balances_of

    data = copy.deepcopy(SEASON)
    data["season"]["starting_garnets"] = 7
    changes = load(sqlite_store, data)
    assert "player alice: granted 7 starting garnets" in changes
    assert "player alice: granted 100 starting chips" in changes
    data["season"]["starting_garnets"] = 9
    data["players"].append({"id": "carol", "name": "Carol", "email": "carol@x.test"})
    again = load(sqlite_store, data)
    assert "season s: starting_garnets 7 -> 9 (players granted garnets before keep their grant; new players get the new amount)" in again
    assert "player carol: granted 9 starting garnets" in again and not any("alice: granted" in c for c in again)
    with sqlite_store.unit_of_work() as session:
        season_id = session.scalar(select(Player.season_id).where(Player.key == "alice"))
        assert balances_of(session, season_id, ["alice", "carol"], "garnets") == {"alice": 7, "carol": 9}
        assert balances_of(session, season_id, ["alice"]) == {"alice": 100}  # the chips are apart


def test_starting_garnets_must_be_a_whole_number(sqlite_store):
    data = copy.deepcopy(SEASON)
    data["season"]["starting_garnets"] = -1
    with pytest.raises(ConfigError, match="starting_garnets must be a whole number >= 0"):
        parse_season(data, "season.toml")


# ---------------------------------------------------------------------------- the planner's statistics


def test_a_load_gives_postgresql_the_statistics_of_what_it_filled(store):
    """A season of thousands of matches may start and close before autovacuum looks at the
    tables: the load analyzes them (on PostgreSQL; SQLite plans by its indexes)."""
    from sqlalchemy import text

    postgresql = store.engine.dialect.name == "postgresql"
    if postgresql:
        with store.engine.connect() as connection:
            before = connection.execute(text("SELECT clock_timestamp()")).scalar_one()
    load(store, SEASON)
    if not postgresql:
        return
    with store.engine.connect() as connection:
        analyzed = connection.execute(
            text("SELECT relname FROM pg_stat_user_tables WHERE last_analyze >= :before"), {"before": before}
        ).scalars()
        assert {"players", "matches", "seats", "ledger"} <= set(analyzed)
