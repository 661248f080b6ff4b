"""The organizer's controls through the real service (referee.season.controls): extend,
pause and resume, cancel, adjust and announce; each recorded (an event in the match's
chain, a ledger entry) and mailed to the players concerned; a paused match lets no
deadline pass and records no move. On SQLite and on PostgreSQL."""

from __future__ import annotations

import html
from datetime import timedelta

import pytest
from sqlalchemy import select

from referee.store.balances import season_balances
from referee.config import ConfigError
from referee.match.book import replay
from referee.games import GAMES
from referee.season.controls import Controls
from referee.archive.site import build
from referee.archive.verify import verify_database
from referee.status import status_text
from referee.store.models import Event, LedgerEntry, Match, SeasonEvent

from .harness import START, World

HOUR = timedelta(hours=1)


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path, db_url)
    w.tick(START)
    yield w
    w.store.dispose()


def controls(world: World) -> Controls:
    return Controls(world.store, world.referee.book, world.referee.notices)


def row(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


def events(world: World) -> list[str]:
    with world.store.unit_of_work() as session:
        return list(session.scalars(select(Event.kind).order_by(Event.seq)))


def mails(world: World, key: str, subject: str) -> list:
    return [m for m in world.client(key).all() if subject in m.subject]


def test_extend_moves_the_deadline_records_it_and_tells_the_players(world):
    before = row(world).deadline
    lines = controls(world).extend("m1", None, 12 * HOUR, START + HOUR)
    world.tick(START + HOUR)
    assert row(world).deadline == before + 12 * HOUR
    assert "extended by 12 hours" in lines[0]
    assert events(world)[-1] == "extend"
    for key in ("alice", "bob"):
        (told,) = mails(world, key, "More time")
        assert "12 hours more time" in told.text.replace("\n", " ")
        assert all(len(line) <= 78 for line in told.text.splitlines())
    world.tick(before + HOUR)  # the old deadline passes: nothing closes
    assert row(world).step_key == "round-0"
    world.tick(before + 12 * HOUR)
    assert row(world).step_key != "round-0"
    with pytest.raises(ConfigError, match="no open step nope"):
        controls(world).extend("m1", "nope", HOUR, START + HOUR)


def test_a_paused_match_lets_no_deadline_pass_and_records_no_move_until_it_resumes(world):
    deadline = row(world).deadline
    controls(world).pause(["m1"], None, "a holiday", START + HOUR)
    world.tick(START + HOUR)
    assert row(world).status == "paused"
    assert mails(world, "alice", "The match is paused") and mails(world, "bob", "The match is paused")
    # a reply while paused is refused, and saying why
    world.send("alice", "Step: Preparation phase\nROULETTE: Gold\nGold: 30\nSilver: 10\nBlack: 0", START + 2 * HOUR)
    world.tick(deadline + 5 * HOUR)
    assert row(world).status == "paused" and row(world).deadline == deadline  # nothing closed
    refused = world.client("alice").latest()
    assert "paused this match" in refused.text.replace("\n", " ")
    # resumed ten hours after the pause: the deadline moves on by ten hours
    lines = controls(world).resume(["m1"], None, START + 11 * HOUR)
    world.tick(START + 11 * HOUR)
    assert "moved on by 10 hours" in lines[0]
    assert row(world).status == "running" and row(world).deadline == deadline + 10 * HOUR
    (told,) = mails(world, "bob", "The match goes on")
    assert "moved on by 10 hours" in told.text.replace("\n", " ")
    assert [k for k in events(world) if k in ("pause", "resume")] == ["pause", "resume"]
    with pytest.raises(ConfigError, match="is running, not paused"):
        controls(world).resume(["m1"], None, START + 12 * HOUR)


def test_cancel_ends_the_match_without_a_result_and_replays(world):
    controls(world).cancel("m1", "both players left the club", START + HOUR)
    world.tick(START + 100 * HOUR)
    match = row(world)
    assert match.status == "cancelled" and match.result is None and match.deadline is None
    assert events(world)[-1] == "cancel"
    for key in ("alice", "bob"):
        (told,) = mails(world, key, "The match is cancelled")
        assert "both players left the club" in told.text
    with world.store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == "m1"))
        evs = list(session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)))
        assert replay(GAMES[match.game], match, evs) == match.state
    with pytest.raises(ConfigError, match="is cancelled"):
        controls(world).cancel("m1", "again", START + 2 * HOUR)


def test_adjust_moves_a_season_balance_and_tells_the_player(world):
    lines = controls(world).adjust(None, "alice", "cols", 2, "won the quiz", START + HOUR)
    assert lines[0].startswith("player alice: cols 0 -> 2")
    controls(world).adjust(None, "alice", "chips", -15, "late fee", START + HOUR)
    world.tick(START + HOUR)
    with world.store.unit_of_work() as session:
        held = season_balances(session, row(world).season_id)
        assert held[("alice", "cols")] == 2 and held[("alice", "chips")] == 185
        reasons = session.scalars(select(LedgerEntry.reason).where(LedgerEntry.to_account == "SEASON")).all()
        assert "adjusted by the organizer: late fee" in reasons
    (told,) = mails(world, "alice", "Your cols were adjusted")
    assert "added 2 cols" in told.text and "won the quiz" in told.text
    with pytest.raises(ConfigError, match="would leave less than 0"):
        controls(world).adjust(None, "bob", "garnets", -1, "oops", START + HOUR)


def test_announce_mails_every_player_the_text(world, tmp_path):
    lines = controls(world).announce("The final is on Sunday.\nGood luck!", START + HOUR)
    world.tick(START + HOUR)
    assert lines == ["season test: the announcement goes to 2 players"]
    for key in ("alice", "bob"):
        (told,) = mails(world, key, "An announcement from the organizer")
        assert "The final is on Sunday.\nGood luck!" in told.text


def test_forfeit_ends_the_match_with_a_loss_and_replays(world):
    lines = controls(world).forfeit("m1", "bob", "moved abroad", START + HOUR)
    world.tick(START + HOUR)
    assert "bob forfeits (moved abroad); the match is over" in lines[0]
    match = row(world)
    assert match.status == "finished"
    assert match.result["outcome"] == {"alice": "win", "bob": "loss"}
    assert match.result["ranking"] == ["alice", "bob"]
    assert events(world)[-1] == "forfeit"
    (told,) = mails(world, "alice", "Bob forfeits the match")
    assert "The organizer has recorded a forfeit" in told.text and "moved abroad" in told.text
    (own,) = mails(world, "bob", "You forfeit the match")
    assert "You forfeit your Stationary Roulette match m1" in own.text.replace("\n", " ")
    assert mails(world, "alice", "Final result")
    with world.store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == "m1"))
        evs = list(session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)))
        assert replay(GAMES[match.game], match, evs) == match.state
    with pytest.raises(ConfigError, match="only a running match"):
        controls(world).forfeit("m1", "alice", "again", START + 2 * HOUR)


def test_the_abandonment_rule_forfeits_a_player_who_misses_too_many_steps(tmp_path, db_url):
    from .harness import SEASON

    season = {**SEASON, "matches": [{**SEASON["matches"][0], "abandon_after": 3, "phase_length": "1h"}]}
    w = World(tmp_path, db_url, season)
    try:
        w.tick(START)
        w.tick(START + 2 * HOUR)  # both missed two steps: nothing yet
        assert row(w).status == "running" and row(w).absences == {"alice": 2, "bob": 2}
        # alice sends her form for the third step: her run of misses ends
        mail = [m for m in w.client("alice").all() if "Step:" in m.text][-1]
        form = mail.text[mail.text.index("Step:") :].split("\n\n--")[0]
        w.client("alice").reply(mail, form, START + 2 * HOUR + 10 * timedelta(minutes=1))
        w.tick(START + 3 * HOUR)
        match = row(w)
        assert match.status == "finished", match.absences
        assert match.result["outcome"] == {"alice": "win", "bob": "loss"}
        assert "forfeit" in events(w)
        (told,) = [m for m in w.client("bob").all() if "You forfeit the match" in m.subject]
        assert "missed 3 steps in a row" in told.text.replace("\n", " ")
    finally:
        w.store.dispose()


def test_the_archive_builds_with_a_paused_and_a_cancelled_match(world, tmp_path):
    from referee.archive.site import build

    controls(world).pause(["m1"], None, "a holiday", START + HOUR)
    build(world.store, tmp_path / "site-paused", now=START + HOUR)
    controls(world).cancel("m1", "the club closed", START + 2 * HOUR)
    build(world.store, tmp_path / "site", now=START + 2 * HOUR)
    pages = [p.read_text() for p in (tmp_path / "site").rglob("*.html")]
    assert any("m1" in page for page in pages)


def test_several_players_forfeiting_at_one_deadline_are_each_told(tmp_path, db_url):
    from .test_matchjack_service import PLAYERS, mj_season

    season = mj_season()
    season["matches"][0]["abandon_after"] = 1  # a single missed step forfeits
    w = World(tmp_path, db_url, season)
    try:
        w.tick(START)
        first = row(w).deadline  # the stay step of hand 1: nobody answers it
        w.tick(first)
        match = row(w)
        forfeits = events(w).count("forfeit")
        assert forfeits >= 5 and match.status == "finished", (forfeits, match.status, match.open_steps)
        with w.store.unit_of_work() as session:
            from referee.store.models import Outbox

            notices = session.scalars(select(Outbox.dedupe_key).where(Outbox.kind == "organizer")).all()
        # each of the six players is told of each forfeit, once
        assert len(notices) == len(set(notices)) == forfeits * len(PLAYERS)
    finally:
        w.store.dispose()


def test_every_control_is_in_a_hash_chain_in_status_and_in_the_archive(world, tmp_path):
    """The season's own commands (adjust, a season announcement) are events of the season's
    chain; a match's (extend, pause, resume, announce to the match) of the match's; archive
    verify recomputes both; status and the archive list them in words, names not ids."""
    c = controls(world)
    c.extend("m1", None, 2 * HOUR, START + HOUR)
    c.pause(["m1"], None, "snow storm", START + HOUR)
    c.resume(["m1"], None, START + 2 * HOUR)
    c.announce("To the match only.", START + 2 * HOUR, match="m1")
    c.adjust(None, "alice", "cols", 1, "won the quiz", START + 3 * HOUR)
    c.announce("To everyone.", START + 3 * HOUR)
    world.tick(START + 3 * HOUR)
    with world.store.unit_of_work() as session:
        kinds = list(session.scalars(select(SeasonEvent.kind).order_by(SeasonEvent.seq)))
        assert kinds == ["adjust", "announce"]
    assert events(world)[-4:] == ["extend", "pause", "resume", "announce"]
    checks = verify_database(world.store)
    assert {check.match for check in checks} == {"m1", "season:test"} and all(check.ok for check in checks)

    text = status_text(world.store, START + 3 * HOUR)
    assert "The organizer paused the match: snow storm." in text
    assert "The organizer mailed an announcement to the 2 players of the match." in text
    assert "The organizer's record of Test season (2 entries; the latest):" in text
    assert "The organizer adjusted Alice's cols by +1: won the quiz." in text

    site = tmp_path / "site"
    build(world.store, site, now=START + 3 * HOUR)
    season_page = html.unescape((site / "seasons" / "test" / "index.html").read_text())
    assert "The organizer adjusted Alice's cols by +1: won the quiz." in season_page
    assert "To everyone" not in season_page  # the text is the players', not the public's
    match_page = html.unescape((site / "seasons" / "test" / "matches" / "m1" / "index.html").read_text())
    assert "The organizer gave 2 hours more time" in match_page and "snow storm" in match_page

    # a later adjustment changes the season page on the next incremental build
    c.adjust(None, "bob", "cols", 1, "second quiz", START + 4 * HOUR)
    build(world.store, site, now=START + 4 * HOUR)
    assert "Bob's cols by +1: second quiz" in html.unescape((site / "seasons" / "test" / "index.html").read_text())
    # a changed season event breaks the season's chain
    with world.store.unit_of_work() as session:
        first = session.scalar(select(SeasonEvent).where(SeasonEvent.seq == 1))
        first.payload = {**first.payload, "amount": 100}
    broken = [check for check in verify_database(world.store) if not check.ok]
    assert [check.match for check in broken] == ["season:test"]
