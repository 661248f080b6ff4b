"""The season frame through the real service, by mail (RULINGS, "Seasons"): a main match
ends; its EC is mailed a nomination; a nominee uses a CoL; the EC nominates again; the
death match is created with the EC and the DMO in their seats and starts after the gap;
its loser is eliminated, and a later main match of the live players seats only the live.
On SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from referee.config import parse_season
from referee.games import GAMES
from referee.season.controls import Controls
from referee.seasons import load_season
from referee.status import status_text
from referee.standings import season_standings
from referee.store.models import LedgerEntry, Match, Player, Season

from .harness import START, World

HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
NAMES = {"alice": "Alice", "bob": "Bob", "carol": "Carol", "dave": "Dave", "erin": "Erin"}


def frame_season(**season) -> dict:
    return {
        "season": {
            "id": "test",
            "name": "Test season",
            "starting_chips": 200,
            "seed": 11,
            "death_matches": ["indian-poker"],
            "death_match_gap": "2h",
            "nomination_length": "6h",
            **season,
        },
        # death matches by timeouts to the end: no abandonment rule (tested on its own below)
        "games": {"indian-poker": {"phase_length": "1h", "abandon_after": 0}},
        "players": [
            {"id": key, "name": name, "email": f"{key}@example.test", "timezone": "UTC"} for key, name in NAMES.items()
        ],
        "matches": [
            {
                "id": "main1",
                "game": "stationary-roulette",
                "kind": "main",
                "players": ["alice", "bob"],
                "start": START.isoformat(),
                "seed": 1,
                "phase_length": "1h",
                "reminders": [],
            },
        ],
    }


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path, db_url, frame_season())
    for key in ("carol", "dave", "erin"):
        w.clients[key] = w.clients["alice"].__class__(
            f"{key}@example.test",
            NAMES[key],
            w.config.mail.outbox / f"{key}@example.test",
            w.config.mail.inbox,
        )
    yield w
    w.store.dispose()


def match(world: World, key: str) -> Match | None:
    with world.store.unit_of_work() as session:
        found = session.scalar(select(Match).where(Match.key == key))
        if found is not None:
            _ = [seat.player.key for seat in found.seats]
        return found


def seats(world: World, key: str) -> list[str]:
    with world.store.unit_of_work() as session:
        found = session.scalar(select(Match).where(Match.key == key))
        return [seat.player.key for seat in found.seats]


def grant_col(world: World, key: str) -> None:
    with world.store.unit_of_work() as session:
        season_id = session.scalar(select(Player.season_id).where(Player.key == key))
        session.add(
            LedgerEntry(
                season_id=season_id,
                match_id=None,
                seq=None,
                from_account="SEASON",
                to_account=key,
                amount=1,
                reason="test grant",
                at=START,
                currency="cols",
            )
        )


def play_main_out(world: World) -> Match:
    """Every step of the main match closes at its deadline (11 steps of an hour)."""
    world.tick(START)
    world.tick(START + 11 * HOUR)
    main = match(world, "main1")
    assert main.status == "finished", main.status
    return main


def test_a_main_match_ends_with_a_nomination_the_ec_answers_and_a_death_match_follows(world):
    grant_col(world, "carol")
    main = play_main_out(world)
    ranking = main.result["ranking"]
    ec, winner = ranking[-1], ranking[0]
    ended = main.finished_at

    nomination = match(world, "main1-nomination")
    assert nomination is not None and nomination.status == "running"
    assert nomination.kind == "nomination" and nomination.starts_at == ended
    # the EC first, then the live players but the EC and the winner, in the season's order
    assert seats(world, "main1-nomination") == [ec, "carol", "dave", "erin"]
    assert nomination.deadline == ended + 6 * HOUR

    # the main match's players get the standings, with the news of its end
    for key in ("alice", "bob"):
        told = about(world, key, "Standings after Stationary Roulette main1")
        text = told.text.replace("\n", " ")
        assert f"{NAMES[ec]} is the EC (elimination candidate) and is asked to nominate a DMO" in text
        assert "1. " in told.text and all(NAMES[k] in text for k in NAMES)
        assert all(len(line) <= 78 for line in told.text.splitlines())
    assert not [m for m in world.client("carol").all() if "Standings" in m.subject]

    mail = about(world, ec, "nominate your DMO")
    assert "Carol, Dave and Erin" in mail.text.replace("\n", " ")
    assert NAMES[winner] in mail.text  # named as the one who may not be nominated
    assert all(len(line) <= 78 for line in mail.text.splitlines())

    # the EC nominates Carol, who holds a CoL: Carol is asked, the EC is told
    world.client(ec).reply(mail, "NOMINATE carol\n" + _step_line(mail), ended + HOUR)
    world.tick(ended + HOUR)
    receipt = about(world, ec, "Received")
    assert "holds 1 CoL" in receipt.text.replace("\n", " ")
    asked = about(world, "carol", "use a CoL")
    world.client("carol").reply(asked, "USE COL\n" + _step_line(asked), ended + 2 * HOUR)
    world.tick(ended + 2 * HOUR)
    assert "You used a CoL" in about(world, "carol", "Received").text

    # the EC nominates again, among the rest
    again = about(world, ec, "nominate your DMO")
    assert again.message["Message-ID"] != mail.message["Message-ID"]
    assert "Carol" not in again.text.split("You may nominate")[1].split(".")[0]
    world.client(ec).reply(again, "NOMINATE Dave\n" + _step_line(again), ended + 3 * HOUR)
    world.tick(ended + 3 * HOUR)
    nomination = match(world, "main1-nomination")
    assert nomination.status == "finished"
    assert nomination.result["scores"] == {"ec": ec, "dmo": "dave", "by": "ec", "winner": winner}
    with world.store.unit_of_work() as session:
        cols = session.scalars(
            select(LedgerEntry).where(LedgerEntry.currency == "cols", LedgerEntry.to_account == "SEASON")
        ).all()
        assert [(c.from_account, c.amount) for c in cols] == [("carol", 1)]

    # the death match: Indian Poker, the EC first, the DMO second and named as the DMO
    death = match(world, "main1-death")
    assert death.kind == "death" and death.game == "indian-poker" and death.status == "scheduled"
    assert seats(world, "main1-death") == [ec, "dave"]
    assert death.options["dmo"] == "dave"
    assert death.starts_at == ended + 5 * HOUR  # two hours after the nomination ended
    told = about(world, "dave", "The DMO is Dave")
    assert "Indian Poker" in told.text and "main1-death" in told.text

    # it starts after the gap, and its loser is eliminated
    world.tick(ended + 5 * HOUR)
    assert match(world, "main1-death").status == "running"
    world.tick(ended + 500 * HOUR)
    death = match(world, "main1-death")
    assert death.status == "finished"
    loser = death.result["ranking"][-1]
    with world.store.unit_of_work() as session:
        out = session.scalar(select(Player).where(Player.key == loser))
        assert out.eliminated_in == "main1-death" and out.eliminated_at == death.finished_at
        live = session.scalars(select(Player.key).where(Player.eliminated_at.is_(None))).all()
        assert sorted(live) == sorted(k for k in NAMES if k != loser)

    # the death match ended the season (nothing else is scheduled): every player gets the
    # final standings, the eliminated player too, last
    for key in NAMES:
        final = about(world, key, "Final standings")
        text = final.text.replace("\n", " ")
        assert "The season Test season is over: its last match has ended." in text
        assert "The last match to end was Indian Poker match main1-death" in text
        assert f"{NAMES[loser]} lost this death match and is eliminated from the season." in text
        assert "eliminated in main1-death" in text
        assert all(len(line) <= 78 for line in final.text.splitlines())
    assert not [m for m in world.client("alice").all() if "Standings after Indian Poker" in m.subject]

    # the standings: the eliminated last, with the match; victory points from the main match
    # only (the death match gives none); a nomination is no match played
    _, rows = season_standings(world.store)
    assert rows[-1].player == loser and rows[-1].eliminated_in == "main1-death"
    assert all(r.eliminated_in is None for r in rows[:-1])
    points = main.result["victory_points"]
    assert {r.player: r.victory_points for r in rows} == {k: points.get(k, 0.0) for k in NAMES}
    assert {r.player: r.played for r in rows} == {
        "alice": 1 + (ec == "alice"),
        "bob": 1 + (ec == "bob"),
        "carol": 0,
        "dave": 1,
        "erin": 0,
    }


def test_the_unchanged_file_reloads_cleanly_while_the_frame_runs(world):
    from referee.config import parse_season
    from referee.seasons import load_season

    spec = parse_season(frame_season(), "test season")
    main = play_main_out(world)
    assert load_season(world.store, spec, main.finished_at, dry_run=True) == []
    world.tick(main.finished_at + 6 * HOUR)  # the nomination's lot; the death match is scheduled
    assert match(world, "main1-death").status == "scheduled"
    assert load_season(world.store, spec, main.finished_at + 6 * HOUR) == []


def test_the_nomination_times_out_to_a_lot_among_the_eligible(world):
    main = play_main_out(world)
    ended = main.finished_at
    world.tick(ended + 6 * HOUR)
    nomination = match(world, "main1-nomination")
    assert nomination.status == "finished" and nomination.result["scores"]["by"] == "lot"
    dmo = nomination.result["scores"]["dmo"]
    assert dmo in ("carol", "dave", "erin")
    assert seats(world, "main1-death")[1] == dmo


def test_an_eliminated_player_sits_at_no_later_match_and_live_seats_take_the_live(tmp_path, db_url):
    season = frame_season()
    season["matches"].append(
        {
            "id": "main2",
            "game": "stationary-roulette",
            "kind": "main",
            "players": ["alice", "carol"],
            "start": (START + 100 * HOUR).isoformat(),
            "seed": 2,
        }
    )
    w = World(tmp_path, db_url, season)
    try:
        with w.store.unit_of_work() as session:
            alice = session.scalar(select(Player).where(Player.key == "alice"))
            alice.eliminated_at, alice.eliminated_in = START, "main0-death"
        w.tick(START + 100 * HOUR)
        main2 = match(w, "main2")
        assert main2.status == "scheduled"
        assert "Alice was eliminated in main0-death" in main2.problem
    finally:
        w.store.dispose()


def test_a_season_file_refuses_a_frame_it_cannot_run(tmp_path):
    from referee.config import ConfigError, parse_season

    season = frame_season(death_matches=[])
    with pytest.raises(ConfigError, match="needs the death match that follows it"):
        parse_season(season, "t")
    season = frame_season(death_matches=["stationary-roulette"])
    with pytest.raises(ConfigError, match="no death-match game"):
        parse_season(season, "t")
    season = frame_season()
    season["matches"][0]["game"] = "nomination"
    with pytest.raises(ConfigError, match="the season's own step"):
        parse_season(season, "t")
    season = frame_season(death_matches=["betting-minority"])
    with pytest.raises(ConfigError, match="may need 7 silent participants"):
        parse_season(season, "t")
    assert GAMES["nomination"].game_type.season_step


def about(world: World, key: str, subject: str):
    """``key``'s latest mail whose subject says ``subject``."""
    return [m for m in world.client(key).all() if subject in m.subject][-1]


def _step_line(mail) -> str:
    return next(line for line in mail.text.splitlines() if line.startswith("Step:"))


def two_mains(tmp_path, db_url) -> World:
    """main1 (Alice, Bob) ends at T = START + 11h; main2 (Carol, Dave) at T + 2h30m; death
    matches are Indian Poker of one-minute turns (about an hour each), two hours after their
    nomination."""
    season = frame_season()
    season["games"]["indian-poker"] = {"phase_length": "1m", "reminders": [], "abandon_after": 0}
    season["matches"].append(
        {
            "id": "main2",
            "game": "stationary-roulette",
            "kind": "main",
            "players": ["carol", "dave"],
            "start": (START + 2 * HOUR + 30 * MINUTE).isoformat(),
            "seed": 2,
            "phase_length": "1h",
            "reminders": [],
        }
    )
    w = World(tmp_path, db_url, season)
    for key in ("carol", "dave", "erin"):
        w.clients[key] = w.clients["alice"].__class__(
            f"{key}@example.test", NAMES[key], w.config.mail.outbox / f"{key}@example.test", w.config.mail.inbox
        )
    return w


def nominate(world: World, ec: str, who: str, at) -> None:
    mail = about(world, ec, "nominate your DMO")
    world.client(ec).reply(mail, f"NOMINATE {who}\n" + _step_line(mail), at)
    world.tick(at)


def test_a_dmo_eliminated_before_the_death_match_starts_makes_the_ec_nominate_again(tmp_path, db_url):
    w = two_mains(tmp_path, db_url)
    try:
        T = START + 11 * HOUR
        w.tick(START)
        w.tick(T)
        ec1 = match(w, "main1").result["ranking"][-1]
        nominate(w, ec1, "Erin", T + MINUTE)  # the first death match: ec1 against Erin, at T + 2h01m
        w.tick(T + 2 * HOUR + 30 * MINUTE)
        ec2 = match(w, "main2").result["ranking"][-1]
        # these seeds make ec1 lose the first death match (checked below): ec2 nominates ec1
        # before it ends, and that death match is scheduled for T + 4h31m
        nominate(w, ec2, NAMES[ec1], T + 2 * HOUR + 31 * MINUTE)
        assert match(w, "main2-death").status == "scheduled"
        w.tick(T + 4 * HOUR + 20 * MINUTE)
        first = match(w, "main1-death")
        assert first.status == "finished" and first.result["ranking"][-1] == ec1, first.result
        second = match(w, "main2-death")
        assert second.status == "cancelled"  # its DMO was eliminated before it started
        again = match(w, "main2-nomination-2")
        assert again is not None and again.status == "running", (again.status, again.problem, again.starts_at)
        assert seats(w, "main2-nomination-2")[0] == ec2 and ec1 not in seats(w, "main2-nomination-2")
        told = about(w, ec2, "It has lapsed")
        text = told.text.replace("\n", " ")
        assert "Your Indian Poker match main2-death (Test season) has lapsed" in text
        assert f"the DMO (death-match opponent), {NAMES[ec1]}, was eliminated in main1-death" in text
        assert about(w, ec2, "nominate your DMO").message["Message-ID"] != told.message["Message-ID"]
        # the new nomination leads to a new death match of the same game, under a key of its own
        nominate(w, ec2, "Erin", T + 4 * HOUR + 30 * MINUTE)
        third = match(w, "main2-death-2")
        assert third is not None and third.game == second.game and third.status == "scheduled"
        assert seats(w, "main2-death-2") == [ec2, "erin"]
    finally:
        w.store.dispose()


def test_a_nomination_open_when_one_it_lists_is_eliminated_opens_again_without_them(tmp_path, db_url):
    """An eliminated player is never nominated: the nomination open at that moment lapses and
    a new one opens among the live players (its EC told why); and the standings say nothing
    of a season end while a nomination is open."""
    w = two_mains(tmp_path, db_url)
    try:
        T = START + 11 * HOUR
        w.tick(START)
        w.tick(T)
        ec1 = match(w, "main1").result["ranking"][-1]
        nominate(w, ec1, "Erin", T + MINUTE)
        w.tick(T + 2 * HOUR + 30 * MINUTE)
        ec2 = match(w, "main2").result["ranking"][-1]
        assert ec1 in seats(w, "main2-nomination")  # ec2 could nominate ec1 ...
        w.tick(T + 4 * HOUR + 20 * MINUTE)  # ... who loses the first death match meanwhile
        assert match(w, "main1-death").result["ranking"][-1] == ec1
        assert match(w, "main2-nomination").status == "cancelled"
        again = match(w, "main2-nomination-2")
        assert again is not None and again.status == "running"
        assert seats(w, "main2-nomination-2")[0] == ec2 and ec1 not in seats(w, "main2-nomination-2")
        told = about(w, ec2, "It has lapsed").text.replace("\n", " ")
        assert f"{NAMES[ec1]}, whom {NAMES[ec2]} could nominate, was eliminated in main1-death" in told
        with w.store.unit_of_work() as session:
            assert not (session.scalar(select(Season)).settings or {}).get("ended_at")
    finally:
        w.store.dispose()


def test_a_match_of_the_live_players_waits_for_the_death_match_and_starts_when_it_ends(tmp_path, db_url):
    """RULINGS, "Seasons": later main matches take the live players, and who is live is
    known only when the death matches before them have ended. The final (Stationary
    Roulette of the live players) is due while the death match runs: it waits (status says
    for what; no failure), and starts the moment the death match ends, with the two players
    left; its deadlines count from then. A reload of the unchanged file changes nothing."""
    season = frame_season()
    season["players"] = season["players"][:3]  # Alice, Bob, Carol
    season["games"]["indian-poker"] = {"phase_length": "1h", "reminders": [], "abandon_after": 0}
    final_start = START + 14 * HOUR  # the death match runs then
    season["matches"].append(
        {
            "id": "final",
            "game": "stationary-roulette",
            "kind": "main",
            "players": "live",
            "start": final_start.isoformat(),
            "seed": 3,
            "phase_length": "1h",
            "reminders": [],
        }
    )
    w = World(tmp_path, db_url, season)
    w.clients["carol"] = w.clients["alice"].__class__(
        "carol@example.test", "Carol", w.config.mail.outbox / "carol@example.test", w.config.mail.inbox
    )
    try:
        T = START + 11 * HOUR
        w.tick(START)
        w.tick(T)
        ec = match(w, "main1").result["ranking"][-1]
        nominate(w, ec, "Carol", T + MINUTE)  # the death match starts at T + 2h01m
        report = w.tick(final_start)
        assert report.start_failed == 0
        final = match(w, "final")
        assert final.status == "scheduled" and final.problem.startswith("waiting: for main1-death to end")
        assert "waiting: for main1-death to end" in status_text(w.store, final_start)
        assert "START FAILED" not in status_text(w.store, final_start)
        lines = load_season(w.store, parse_season(season, "test season"), final_start)
        assert not [line for line in lines if "final" in line], lines
        ended = final_start + 30 * MINUTE
        Controls(w.store, w.referee.book, w.referee.notices).forfeit("main1-death", ec, "gives up", ended)
        w.tick(ended)
        final = match(w, "final")
        assert final.status == "running" and final.starts_at == ended
        assert sorted(seats(w, "final")) == sorted(k for k in ("alice", "bob", "carol") if k != ec)
        assert final.deadline == ended + HOUR
        lines = load_season(w.store, parse_season(season, "test season"), ended + MINUTE)
        assert not [line for line in lines if "final" in line], lines
    finally:
        w.store.dispose()


def test_check_says_what_the_season_would_start_and_what_follows_a_main_match():
    from referee.config import parse_season
    from referee.seasons import season_plan

    lines = season_plan(parse_season(frame_season(), "t"), START - 2 * HOUR)
    assert lines == [
        "2026-12-01 18:00 UTC (in 2 hours): main1, Stationary Roulette, a main match, for alice, bob; "
        "its first step closes 2026-12-01 19:00 UTC",
        "after each main match: its EC nominates the DMO (6h to answer; CoLs on), and the death match "
        "starts 2h after the nomination",
        "  main1: followed by a death match of Indian Poker (the rotation's 1st)",
    ]


def test_cancelling_the_season_s_last_match_ends_the_season(world):
    from referee.season.controls import Controls

    world.tick(START)
    lines = Controls(world.store, world.referee.book, world.referee.notices).cancel(
        "main1", "the players agreed to stop", START + HOUR
    )
    world.tick(START + HOUR)
    assert lines[-1].startswith("season test: ended")
    assert match(world, "main1").status == "cancelled" and match(world, "main1-nomination") is None
    for key in NAMES:
        final = about(world, key, "Final standings")
        assert "The organizer cancelled it: it has no result." in final.text.replace("\n", " ")
