"""The players' commands by mail (docs/players.md) through the real service: HELP, STATUS,
STANDINGS, HISTORY, TIMEZONE and RESIGN, to the general address or a personal reply
address, authenticated as moves are, answered once in the same tick; a forged From is never
obeyed; RESIGN needs the code; a time zone chosen by mail survives a reload of the unchanged
season file. On SQLite and on PostgreSQL; the hidden-information check and the parser last."""

from __future__ import annotations

import copy
import random
import re
from datetime import timedelta

import pytest
from sqlalchemy import select

from referee.config import parse_season
from referee.games import GAMES
from referee.pipeline.player_commands import status_lines
from referee.season.player_orders import is_commands_mail, read_commands
from referee.seasons import load_season
from referee.store.models import Match, Player
from tests.games.mail_context import mail_context
from tests.games.test_conformance import playouts

from .harness import SEASON, START, World, outbox_rows
from .test_mail_safety import ROULETTE, deliver, inbound_rows, raw_mail, reply_address

HOUR = timedelta(hours=1)
T1 = START + HOUR
GENERAL = "referee@example.test"


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path, db_url)
    w.tick(START)
    yield w
    w.store.dispose()


_ids = iter(range(10**6))


def mail(world: World, text: str, at=T1, *, frm="Alice <alice@example.test>", to=GENERAL, extra="") -> None:
    deliver(world, raw_mail(frm=frm, to=to, body=text, message_id=f"<c{next(_ids)}@example.test>", extra=extra), at)


def answers(world: World, key: str = "alice") -> list:
    return [m for m in world.client(key).all() if "command" in m.subject.lower()]


def last_answer(world: World, key: str = "alice"):
    found = answers(world, key)
    assert found, [m.subject for m in world.client(key).all()]
    return found[-1]


def flat(text: str) -> str:
    return " ".join(text.split())


def assert_readable(found) -> None:
    assert all(len(line) <= 78 for line in found.text.splitlines()), found.text


def match(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


def alice(world: World) -> Player:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Player).where(Player.key == "alice"))


# ---------------------------------------------------------------------- each command


def test_help_to_the_general_address_lists_the_commands_and_what_to_send_now(world):
    mail(world, "HELP")
    world.tick(T1)
    [row] = inbound_rows(world)
    assert (row.status, row.rule) == ("accepted", "commands")
    found = last_answer(world)
    text = flat(found.text)
    assert found.subject == "Your command: HELP"
    assert "STATUS" in text and "HISTORY <match>" in text and "RESIGN <match>" in text
    assert "Stationary Roulette m1:" in found.text
    assert "is open for you, until" in text and "CET" in text  # alice's deadline in Berlin time
    assert "ROULETTE" in found.text  # the form to send
    assert reply_address(world, "bob") not in found.text  # never another player's address
    assert found.message["To"].endswith("<alice@example.test>") or "alice@example.test" in found.message["To"]
    assert found.message["Auto-Submitted"] == "auto-replied"
    assert_readable(found)
    assert not world.client("bob").all()[1:]  # bob heard nothing


def test_status_to_the_personal_address_shows_the_match_as_the_player_sees_it(world):
    secret = "ROULETTE\nWinning colour: Silver\nGold: 27\nSilver: 13\nBlack: 0"
    world.send("bob", secret, T1 - timedelta(minutes=5))  # bob's secret roulette
    world.tick(T1 - timedelta(minutes=1))
    assert match(world).state["pending"]["bob"]["roulette"] is not None
    world.send("alice", "STATUS", T1)
    world.tick(T1)
    row = inbound_rows(world)[-1]
    assert (row.status, row.rule) == ("accepted", "commands")
    found = last_answer(world)
    assert "Stationary Roulette m1 (Test season)" in found.text
    assert "Bob" in found.text and "bob@" not in found.text
    # nothing of the organizer's status (who has submitted), nothing of bob's roulette
    assert "submitted" not in found.text.lower() and "awaiting" not in found.text
    assert "Gold: 27" not in found.text and "Silver: 13" not in found.text
    assert "CET" in found.text  # the deadline in alice's zone
    assert_readable(found)
    assert match(world).state["pending"]["alice"]["roulette"] is None  # no move was read


def test_standings_names_players_not_ids(world):
    mail(world, "standings")
    world.tick(T1)
    found = last_answer(world)
    assert "Standings of Test season" in found.text
    assert "1. Alice: 0 VP, 200 chips" in found.text or "1. Bob: 0 VP, 200 chips" in found.text
    assert "(alice)" not in found.text and "(bob)" not in found.text
    assert_readable(found)


def test_history_shows_every_step_mail_of_the_match(world):
    world.send("alice", ROULETTE, T1)
    world.tick(T1)
    first = world.client("alice").all()[0].subject
    mail(world, "HISTORY m1", T1 + HOUR)
    world.tick(T1 + HOUR)
    found = last_answer(world)
    assert "Stationary Roulette m1 (Test season), running" in found.text
    assert flat(first) in flat(found.text)
    assert "Your roulette" in found.text or "receipt" in found.text.lower() or len(found.text.splitlines()) > 8
    assert_readable(found)
    mail(world, "HISTORY m9", T1 + 2 * HOUR)
    world.tick(T1 + 2 * HOUR)
    refused = last_answer(world)
    assert refused.subject.startswith("Nothing done") and "you play in no match m9" in flat(refused.text)


def test_several_commands_in_one_mail_are_answered_in_one_mail(world):
    before = len(outbox_rows(world))
    world.send("alice", "HELP\nSTATUS\nSTANDINGS\nHISTORY m1", T1)
    world.tick(T1)
    assert len(outbox_rows(world)) == before + 1
    found = last_answer(world)
    assert found.subject.startswith("Your commands: HELP, STATUS")
    for heading in ("== HELP ==", "== STATUS ==", "== STANDINGS ==", "== HISTORY m1 =="):
        assert heading in found.text
    assert_readable(found)


def test_a_line_not_understood_does_nothing_and_lists_the_commands(world):
    mail(world, "TIMEZONE Mars/Olympus\nSTATUS")
    world.tick(T1)
    row = inbound_rows(world)[-1]
    assert (row.status, row.rule) == ("rejected", "commands")
    found = last_answer(world)
    assert found.subject.startswith("Nothing done")
    assert "line 1: TIMEZONE Mars/Olympus" in found.text and "not a time zone I know" in flat(found.text)
    assert "HISTORY <match>" in found.text
    assert_readable(found)


def test_a_mail_of_moves_with_a_command_line_is_read_as_moves(world):
    """The ruling: a mail to a personal reply address is a mail of commands only when every
    line is a command; else it is read as moves, as always, and no command in it is done."""
    world.send("alice", "STATUS\n" + ROULETTE, T1)
    world.tick(T1)
    assert inbound_rows(world)[-1].rule != "commands"
    assert not answers(world)
    assert match(world).state["pending"]["alice"]["roulette"] is not None or outbox_rows(world, kind="error")


# ---------------------------------------------------------------------- time zones


def test_timezone_is_confirmed_used_in_the_next_mail_and_survives_a_reload(world):
    world.send("alice", "TIMEZONE asia/tokyo", T1)
    world.tick(T1)
    found = last_answer(world)
    assert "Your time zone is now Asia/Tokyo" in flat(found.text)
    assert alice(world).timezone_chosen == "Asia/Tokyo" and alice(world).timezone == "Europe/Berlin"
    # the unchanged season file, loaded again: the zone chosen by mail stays
    load_season(world.store, parse_season(SEASON, "test season"), T1 + HOUR)
    assert alice(world).zone == "Asia/Tokyo"
    # the next mail (a receipt) shows alice's deadline in Tokyo time
    world.client("alice").reply(world.client("alice").all()[0], ROULETTE, T1 + HOUR)
    world.tick(T1 + HOUR)
    receipt = [m for m in world.client("alice").all() if "command" not in m.subject.lower()][-1]
    assert "JST" in receipt.text and "CET" not in receipt.text
    mail(world, "STATUS", T1 + 2 * HOUR)
    world.tick(T1 + 2 * HOUR)
    assert "JST" in last_answer(world).text
    # the file changes alice's zone: the file's wins from then on
    changed = copy.deepcopy(SEASON)
    changed["players"][0]["timezone"] = "Europe/Lisbon"
    lines = load_season(world.store, parse_season(changed, "test season"), T1 + 3 * HOUR)
    assert any("gives way" in line for line in lines)
    assert alice(world).timezone_chosen is None and alice(world).zone == "Europe/Lisbon"


def test_timezone_to_the_general_address_needs_the_code(world):
    mail(world, "TIMEZONE America/Chicago")
    world.tick(T1)
    found = last_answer(world)
    code = re.search(r"TIMEZONE America/Chicago ([a-z2-7]{8})", found.text).group(1)
    assert alice(world).timezone_chosen is None
    mail(world, "TIMEZONE America/Chicago abcdefgh", T1 + HOUR)
    mail(world, f"TIMEZONE America/Chicago {code.upper()}", T1 + 2 * HOUR)
    world.tick(T1 + 2 * HOUR)
    assert [r.status for r in inbound_rows(world)] == ["accepted", "rejected", "accepted"]
    assert alice(world).timezone_chosen == "America/Chicago"


# ---------------------------------------------------------------------- resigning


def test_resign_needs_the_code_then_forfeits(world):
    world.send("alice", "RESIGN m1", T1)
    world.tick(T1)
    assert match(world).status == "running"
    found = last_answer(world)
    code = re.search(r"RESIGN m1 ([a-z2-7]{8})", found.text).group(1)
    assert "Nothing changed yet" in flat(found.text)
    assert "as they stand, and the match ends." in flat(found.text)  # a duel: no others play on
    mail(world, "RESIGN m1 aaaaaaaa", T1 + HOUR)  # a wrong code
    world.tick(T1 + HOUR)
    assert match(world).status == "running"
    assert "not the one of our latest answer" in flat(last_answer(world).text)
    mail(world, f"RESIGN m1 {code}", T1 + 2 * HOUR)  # the code, to the general address
    world.tick(T1 + 2 * HOUR)
    found = match(world)
    assert found.status == "finished" and found.result["outcome"] == {"alice": "loss", "bob": "win"}
    assert "You resigned from Stationary Roulette m1" in flat(last_answer(world).text)
    assert [m for m in world.client("bob").all() if "Alice forfeits" in m.subject]


def test_a_code_is_the_players_own(world):
    world.send("alice", "RESIGN m1", T1)
    world.tick(T1)
    code = re.search(r"RESIGN m1 ([a-z2-7]{8})", last_answer(world).text).group(1)
    mail(world, f"RESIGN m1 {code}", T1 + HOUR, frm="Bob <bob@example.test>")  # bob with alice's code
    world.tick(T1 + HOUR)
    assert match(world).status == "running"
    assert "not the one" in flat(last_answer(world, "bob").text)


# ---------------------------------------------------------------------- never obeyed


FORGED = {
    "stranger": {"frm": "Eve <eve@evil.test>"},
    "dmarc-fail": {"extra": "Authentication-Results: mx.example.test; dmarc=fail header.from=example.test\r\n"},
    "two-froms": {"frm": "alice@example.test, eve@evil.test"},
    "group": {"frm": "friends: alice@example.test;"},
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_forged_from_is_never_obeyed(world, case):
    world.send("alice", "RESIGN m1", T1)
    world.tick(T1)
    code = re.search(r"RESIGN m1 ([a-z2-7]{8})", last_answer(world).text).group(1)
    before = len(outbox_rows(world))
    mail(world, f"RESIGN m1 {code}\nTIMEZONE UTC", T1 + HOUR, **FORGED[case])
    world.tick(T1 + HOUR)
    row = inbound_rows(world)[-1]
    assert row.status == "ignored" or row.rule != "commands"
    assert match(world).status == "running" and alice(world).timezone_chosen is None
    assert len(outbox_rows(world)) == before or case in ("two-froms", "group")  # those get the old notice


def test_an_unconfirmed_sender_is_not_obeyed_with_a_trusted_server(world):
    world.config.mail.trusted_authserv_id = ("mx.example.test",)
    mail(world, "STATUS")
    passed = "Authentication-Results: mx.example.test; dmarc=pass header.from=example.test\r\n"
    mail(world, "STATUS", T1 + HOUR, extra=passed)
    world.tick(T1 + HOUR)
    assert [(r.status, r.rule) for r in inbound_rows(world)] == [
        ("ignored", "commands-unconfirmed"),
        ("accepted", "commands"),
    ]
    assert len(answers(world)) == 1


def test_a_forged_mail_to_a_personal_address_is_never_obeyed(world):
    to = reply_address(world, "alice")
    mail(world, "TIMEZONE UTC", frm="Bob <bob@example.test>", to=to)
    world.tick(T1)
    assert inbound_rows(world)[-1].rule == "spoofed"
    assert alice(world).timezone_chosen is None and not answers(world) and not answers(world, "bob")


# ---------------------------------------------------------------------- hidden information


@pytest.mark.parametrize("name", sorted(GAMES))
def test_status_answers_are_the_same_on_every_hidden_variant(name):
    """STATUS is built from the game's own step mail (view and form): on every state that
    differs only in what the player may not know, the answer is the same, word for word."""
    for out in playouts(name, first=2):
        game = out.game
        roles, silent = game.game_type.roles, set(game.game_type.silent_roles)
        players = [p for i, p in enumerate(out.players) if roles[min(i, len(roles) - 1)] not in silent]
        names = {p: f"Player {p.upper()}" for p in out.players}
        for k, state in enumerate(out.states[:: max(1, len(out.states) // 6)]):
            if game.result(state) is not None:
                continue
            for p in players[:3]:
                answer = status_lines(game.name, {**mail_context(game, state, p, names), "names": names})
                for variant in game.hidden_variants(state, p, random.Random(f"{name}:{k}:{p}")):
                    again = status_lines(game.name, {**mail_context(game, variant, p, names), "names": names})
                    assert again == answer


# ---------------------------------------------------------------------- the parser, unit


def test_the_parser_reads_every_command_and_refuses_what_it_does_not_know():
    read = read_commands(
        "help\nSTATUS\nStandings\nHISTORY m1\ntimezone europe/paris\nTIMEZONE UTC abcdefgh\n"
        "RESIGN m1\nRESIGN m1 ABCDEFGH\n-- \nRESIGN m2"
    )
    assert not read.problems
    assert [c.verb for c in read.commands] == [
        "help",
        "status",
        "standings",
        "history",
        "timezone",
        "timezone",
        "resign",
        "resign",
    ]
    assert read.commands[4].zone == "Europe/Paris" and read.commands[5].code == "abcdefgh"
    assert read.commands[7].code == "abcdefgh"
    for line, says in [
        ("HISTORY", "HISTORY <match>"),
        ("HELP me", "alone on its line"),
        ("TIMEZONE Nowhere/City", "not a time zone"),
        ("TIMEZONE ../../etc/passwd", "not a time zone"),
        ("RESIGN m1 short", "the code is"),
        ("Hello", "not a command"),
    ]:
        [problem] = read_commands(line).problems
        assert says in problem.reason, (line, problem.reason)
    assert len(read_commands("STATUS\n" * 1000).problems) == 1  # bounded


def test_which_mail_holds_commands():
    assert is_commands_mail("STATUS\n\nHELP", general=False)
    assert not is_commands_mail("STATUS\nROULETTE\nGold: 30", general=False)
    assert is_commands_mail("Hi,\nSTATUS", general=True)
    assert not is_commands_mail("Hi, what is the status?", general=True)
    assert not is_commands_mail("", general=True)
