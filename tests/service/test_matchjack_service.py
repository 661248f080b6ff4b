"""MatchJack through the real service, by mail: six players (four more than the harness's two,
each with a scripted mail client) and garnets from the season ledger (``starting_garnets``,
and two of carol's spent elsewhere). The first mail of each player holds their own two cards
(their face-down card in no other mailbox), the stay form and the deadline; the stay step
closes at its deadline and the two tables' steps open at once, each with its own deadline and
told only to the players dealt at that table; a finished table waits, its players told so;
FOLD STAYSET spends garnets from the ledger, and is refused to a player who holds too few; a
guess is answered to the guesser only and paid in the ledger; a stale reply is refused; a
whole match driven by mail and deadlines ends with its last hand, replays from its events,
books its award and stores its ranking (the winner first, the EC last). On SQLite and on
PostgreSQL."""

from __future__ import annotations

import copy
import random
import re
from collections import Counter
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from referee.games import GAMES
from referee.games.base import MATCH_CHIPS
from referee.mail.client import Received, ScriptedClient
from referee.service import replay
from referee.store.models import Event, LedgerEntry, Match
from referee.timefmt import local_time

from .harness import SEASON, START, World, outbox_rows

HOUR = timedelta(hours=1)
STAY = 24 * HOUR  # the default step lengths (docs/games/matchjack.md, ruling 1)
TURN = 12 * HOUR
G = GAMES["matchjack"]
PLAYERS = ("alice", "bob", "carol", "dave", "erin", "frank")
MORE = {"carol": "UTC", "dave": "Asia/Tokyo", "erin": "UTC", "frank": "America/Sao_Paulo"}
ZONES = {"alice": "Europe/Berlin", "bob": "America/New_York", **MORE}
SEED = 3  # Main: dave, carol, alice (seats 1-3); Lost: frank, erin, bob
STEP_LINE = re.compile(r"^Step: .+$", re.MULTILINE)


def mj_season(seed: int = SEED) -> dict:
    season = copy.deepcopy(SEASON)
    season["season"]["starting_garnets"] = 5
    season["players"] += [
        {"id": key, "name": key.title(), "email": f"{key}@example.test", "timezone": zone}
        for key, zone in MORE.items()
    ]
    season["matches"] = [
        {"id": "m1", "game": "matchjack", "players": list(PLAYERS), "start": START.isoformat(), "seed": seed,
         "reminders": [], "abandon_after": 0}  # players here let many steps pass: no abandonment rule
    ]
    return season


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path / "world", db_url, mj_season())
    for key in MORE:
        w.clients[key] = ScriptedClient(
            f"{key}@example.test", key.title(), w.config.mail.outbox / f"{key}@example.test", w.config.mail.inbox
        )
    with w.store.unit_of_work() as session:  # carol spent 2 of her 5 garnets elsewhere: she holds 3
        season_id = session.scalar(select(Match.season_id).where(Match.key == "m1"))
        session.add(
            LedgerEntry(season_id=season_id, match_id=None, seq=None, from_account="carol", to_account="LGT",
                        amount=2, reason="spent elsewhere", at=START - HOUR, currency="garnets")
        )
    yield w
    w.store.dispose()


# ---------------------------------------------------------------------------- helpers


def match(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


def unread(world: World) -> dict[str, list[Received]]:
    """The new mail of each player who has any."""
    found = {key: world.client(key).unread() for key in PLAYERS}
    return {key: mail for key, mail in found.items() if mail}


def flat(text: str) -> str:
    return " ".join(text.split())


EXAMPLE_CARD = re.compile(r"\b[RBYG]\d+ (is )?the (Red|Blue|Yellow|Green) \d+")  # "R7 is the Red 7" in the rules


def has_card(text: str, card: str) -> bool:
    """Does ``text`` name ``card`` (R1 is not R11; the rules' examples of card names do not count)?"""
    return re.search(rf"(?<![A-Za-z0-9]){card}(?![0-9])", EXAMPLE_CARD.sub("", text)) is not None


def dealt(state: dict, table: str) -> list[str]:
    return list(state["tables"][table]["dealt"])


def table_of(state: dict, player: str) -> str:
    return next(name for name in ("Main", "Lost") if player in state["tables"][name]["dealt"])


def form_mail(world: World, key: str) -> Received | None:
    """The player's latest mail with a form (its Step line)."""
    return next((m for m in reversed(world.client(key).all()) if STEP_LINE.search(m.text)), None)


def form_of(mail: Received) -> str:
    """The form a mail carries: the command line above its Step line, and the Step line."""
    step = STEP_LINE.search(mail.text)
    assert step is not None, mail.text
    command = mail.text[: step.start()].rstrip().splitlines()[-1]
    return f"{command}\n{step.group(0)}"


def answer(world: World, key: str, at: datetime, command: str | None = None, mail: Received | None = None) -> None:
    """``key`` answers ``mail`` (default: their latest mail with a form) with ``command`` and the
    mail's Step line (default: the mail's own form); the mail arrives at ``at``, and the referee
    runs then."""
    mail = mail or form_mail(world, key)
    assert mail is not None, f"{key} has no mail with a form"
    form = form_of(mail)
    text = form if command is None else f"{command}\n{form.splitlines()[-1]}"
    world.client(key).reply(mail, text, at)
    world.tick(at)


def events(world: World) -> list[Event]:
    with world.store.unit_of_work() as session:
        row = session.scalar(select(Match).where(Match.key == "m1"))
        return list(session.scalars(select(Event).where(Event.match_id == row.id).order_by(Event.seq)))


def ledger(world: World, currency: str, *, in_match: bool = True) -> list[tuple[str, str, int, str]]:
    with world.store.unit_of_work() as session:
        row = session.scalar(select(Match).where(Match.key == "m1"))
        query = select(LedgerEntry).where(LedgerEntry.currency == currency).order_by(LedgerEntry.id)
        if in_match:
            query = query.where(LedgerEntry.match_id == row.id)
        return [(e.from_account, e.to_account, e.amount, e.reason) for e in session.scalars(query)]


def held(world: World, player: str, currency: str) -> int:
    """A player's season balance of ``currency``, from the ledger."""
    rows = ledger(world, currency, in_match=False)
    return sum(n for _, to, n, _ in rows if to == player) - sum(n for frm, _, n, _ in rows if frm == player)


def open_steps(world: World) -> list[tuple[str, datetime | None, datetime | None]]:
    """(key, opened at, deadline) of each open step, as the match row keeps them."""
    def at(text: str | None) -> datetime | None:
        return None if text is None else datetime.fromisoformat(text)

    return [(e["key"], at(e["opened_at"]), at(e["deadline"])) for e in match(world).open_steps]


def stay_all(world: World, at: datetime, choices: dict[str, str]) -> None:
    """The named players send their stay choices at ``at`` (the others send nothing)."""
    for key, choice in choices.items():
        answer(world, key, at, choice)


# ---------------------------------------------------------------------------- (a) the first mail


def test_the_first_mail_gives_each_player_their_own_cards_the_stay_form_and_the_deadline(world):
    world.tick(START)
    state = match(world).state
    assert dealt(state, "Main") == ["dave", "carol", "alice"] and dealt(state, "Lost") == ["frank", "erin", "bob"]
    mail = unread(world)
    assert {k: len(v) for k, v in mail.items()} == dict.fromkeys(PLAYERS, 1), "one mail each, the thread root"
    for p in PLAYERS:
        text = mail[p][0].text
        table = table_of(state, p)
        (up, is_up), (down, is_down) = state["tables"][table]["hands"][p]
        assert is_up and not is_down
        assert has_card(text, up) and has_card(text, down), (p, up, down)
        assert form_of(mail[p][0]) == "STAY\nStep: Hand 1, stay or fold"
        assert f"Deadline: {local_time(START + STAY, ZONES[p])}" in text
        assert "FOLD STAYSET" in text
        for q in PLAYERS:
            if q == p:
                continue
            # the face-down card is in no other mailbox; the face-up one only at the same table
            assert not has_card(mail[q][0].text, down), f"{p}'s face-down card {down} is in {q}'s mail"
            if table_of(state, q) != table:
                assert not has_card(mail[q][0].text, up), f"{p}'s face-up card {up} is in {q}'s mail (other table)"
    # the match row: one open step, the stay step, both tables' (24 hours)
    assert open_steps(world) == [("h1-stay", START, START + STAY)]


# ---------------------------------------------------------------------------- (b) two tables at once


def test_the_stay_step_closes_at_its_deadline_then_the_two_tables_run_each_on_its_own_clock(world):
    world.tick(START)
    unread(world)
    # alice (Main, seat 3) sends nothing: at the deadline she folds, and will move to the Lost set
    stay_all(world, START + HOUR, {p: "STAY" for p in PLAYERS if p != "alice"})
    mail = unread(world)
    assert {k: len(v) for k, v in mail.items()} == {p: 1 for p in PLAYERS if p != "alice"}
    assert all("Received" in v[0].subject for v in mail.values()), "a receipt each, nobody else told"
    assert open_steps(world) == [("h1-stay", START, START + STAY)], "the stay step is open until its deadline"

    world.tick(START + STAY - timedelta(seconds=1))
    assert open_steps(world)[0][0] == "h1-stay"
    world.tick(START + STAY)
    m = match(world)
    closed = [ev for ev in events(world) if ev.kind == "timeout"]
    assert [(ev.step_key, ev.at, ev.payload["missing"]) for ev in closed] == [("h1-stay", START + STAY, ["alice"])]
    main = m.state["tables"]["Main"]
    assert main["stay"]["alice"] == {"choice": "folded", "timeout": True} and main["moving"] == ["alice"]
    assert main["hall"] == ["alice"] and main["stayed"] == ["dave", "carol"]
    # both tables' first betting turns open at once, each with its own deadline
    assert open_steps(world) == [
        ("h1-main-bet1-1", START + STAY, START + STAY + TURN),
        ("h1-lost-bet1-1", START + STAY, START + STAY + TURN),
    ]
    mail = unread(world)
    assert {k: len(v) for k, v in mail.items()} == dict.fromkeys(PLAYERS, 1), "each told of their own table only"
    for p in PLAYERS:
        table = table_of(m.state, p)
        assert f"Hand 1, {table} table, betting round 1, turn 1" in mail[p][0].subject, (p, mail[p][0].subject)
    assert form_of(mail["dave"][0]) == "CHECK\nStep: Hand 1, Main table, betting round 1, turn 1"
    assert form_of(mail["frank"][0]) == "CHECK\nStep: Hand 1, Lost table, betting round 1, turn 1"
    assert STEP_LINE.search(mail["alice"][0].text) is None, "alice, in the hall, has nothing to send"

    # a move at the Main table opens its next turn at the mail's arrival; the Lost turn keeps its clock
    moved = START + STAY + 3 * HOUR
    answer(world, "dave", moved, "BET 2")
    assert open_steps(world) == [
        ("h1-main-bet1-2", moved, moved + TURN),
        ("h1-lost-bet1-1", START + STAY, START + STAY + TURN),
    ]
    m = match(world)
    assert (m.step_key, m.deadline) == ("h1-lost-bet1-1", START + STAY + TURN), "the columns name the step due first"
    mail = unread(world)
    assert set(mail) == {"dave", "carol", "alice"}, "only the players dealt at Main hear of it"
    assert len(mail["dave"]) == 1 and "Received" in mail["dave"][0].subject, "the mover: the receipt only"
    assert form_of(mail["carol"][0]) == "CALL\nStep: Hand 1, Main table, betting round 1, turn 2"
    assert len(mail["alice"]) == 1 and STEP_LINE.search(mail["alice"][0].text) is None

    # the Lost turn's deadline passes: frank checks (free), the Lost table moves on, Main keeps its turn
    world.tick(START + STAY + TURN)
    assert open_steps(world) == [
        ("h1-main-bet1-2", moved, moved + TURN),
        ("h1-lost-bet1-2", START + STAY + TURN, START + STAY + 2 * TURN),
    ]
    m = match(world)
    first = m.state["tables"]["Lost"]["rounds"][0]["actions"][0]
    assert (first["player"], first["action"], first["timeout"]) == ("frank", "check", True)
    mail = unread(world)
    assert set(mail) == {"frank", "erin", "bob"}
    # still in betting round 1 at both tables: no mail so far shows a face-down card to another player
    hands = {p: m.state["tables"][table_of(m.state, p)]["hands"][p] for p in PLAYERS}
    for q in PLAYERS:
        for got in world.client(q).all():
            for p in PLAYERS:
                if p != q:
                    assert not has_card(got.text, hands[p][1][0]), f"{p}'s face-down card in {q}'s {got.subject!r}"

    # the deadlines play the hand out; alice, who timed out at the stay step, sits at Lost in hand 2
    for _ in range(30):
        m = match(world)
        if m.state["hand"] == 2:
            break
        world.tick(m.deadline)
    state = match(world).state
    assert state["hand"] == 2 and state["sets"]["alice"] == "Lost" and "alice" in dealt(state, "Lost")
    assert "at the Lost table" in world.client("alice").latest().subject


# ---------------------------------------------------------------------------- (c) a table that waits


def test_a_finished_table_waits_and_its_players_are_told_the_other_table_still_plays(world):
    world.tick(START)
    unread(world)
    # Main: everyone stays; Lost: frank alone stays (erin and bob fold)
    stay_all(world, START + HOUR, {"dave": "STAY", "carol": "STAY", "alice": "STAY", "frank": "STAY",
                                   "erin": "FOLD", "bob": "FOLD"})
    world.tick(START + STAY)
    unread(world)
    lost = match(world).state["tables"]["Lost"]
    assert lost["stayed"] == ["frank"] and lost["rounds"][0]["end"] == "skipped" and lost["status"] == "action"
    assert [k for k, _, _ in open_steps(world)] == ["h1-main-bet1-1", "h1-lost-act-1"]
    # frank's action; the bots act, round 2 is skipped, the showdown: the Lost table has finished
    done = START + STAY + 2 * HOUR
    answer(world, "frank", done, "NEW")
    assert open_steps(world) == [
        ("h1-main-bet1-1", START + STAY, START + STAY + TURN),
        ("h1-lost-done", done, None),
    ]
    state = match(world).state
    assert state["tables"]["Lost"]["showdown"] is not None and state["tables"]["Main"]["status"] == "bet"
    mail = unread(world)
    assert set(mail) == {"frank", "erin", "bob"}, "the Main table hears nothing of it"
    assert "Received" in mail["frank"][0].subject
    for p in ("erin", "bob", "frank"):
        text = flat(mail[p][-1].text)
        assert "Lost table has finished hand 1" in text or "finished" in mail[p][-1].subject, (p, text)
        assert "The Main table is still playing" in text, (p, text)
        assert "Showdown" in text, "the hand at their table is over: its showdown"
    assert "waiting for the Main table" in mail["erin"][0].subject
    assert STEP_LINE.search(mail["erin"][0].text) is None, "nothing to send while waiting"
    # the waiting step has no deadline: nothing closes it but the other table
    world.tick(START + STAY + TURN - timedelta(seconds=1))
    assert [k for k, _, _ in open_steps(world)] == ["h1-main-bet1-1", "h1-lost-done"]
    assert unread(world) == {}


# ---------------------------------------------------------------------------- (d) FOLD STAYSET


def test_fold_stayset_spends_5_garnets_from_the_season_ledger_and_is_refused_below_5(world):
    world.tick(START)
    unread(world)
    assert (held(world, "dave", "garnets"), held(world, "carol", "garnets")) == (5, 3)
    before, logged = match(world).state, len(events(world))
    answer(world, "carol", START + HOUR, "FOLD STAYSET")
    [error] = world.client("carol").unread()
    assert "FOLD STAYSET costs 5 garnets and you hold 3" in flat(error.text)
    assert "Received" not in error.subject
    assert match(world).state == before and len(events(world)) == logged, "refused: nothing recorded"
    answer(world, "dave", START + 2 * HOUR, "FOLD STAYSET")
    [receipt] = world.client("dave").unread()
    assert "Received" in receipt.subject and "FOLD STAYSET" in receipt.text
    assert ledger(world, "garnets") == [], "paid at the close, not before"
    stay_all(world, START + 3 * HOUR, {p: "STAY" for p in PLAYERS if p not in ("carol", "dave")})
    world.tick(START + STAY)
    assert ledger(world, "garnets") == [("dave", "LGT", 5, "FOLD STAYSET, hand 1")]
    assert (held(world, "dave", "garnets"), held(world, "carol", "garnets")) == (0, 3)
    main = match(world).state["tables"]["Main"]
    assert main["stay"]["dave"] == {"choice": "stayset", "timeout": False}
    assert "dave" in main["hall"] and "dave" not in main["moving"] and "carol" in main["moving"]
    # the stay close read the garnets from the ledger, and says so in its event
    [closed] = [ev for ev in events(world) if ev.kind == "timeout"]
    assert closed.payload["holdings"]["garnets"] == {"alice": 5, "bob": 5, "carol": 3, "dave": 5, "erin": 5, "frank": 5}


# ---------------------------------------------------------------------------- (e) guesses


def test_a_guess_is_answered_to_the_guesser_only_and_a_correct_one_is_paid_in_the_ledger(world):
    world.tick(START)
    unread(world)
    rules = match(world).state["rules"]
    wrong = next(r for r in G.view(match(world).state, "erin")["catalogue"] if r["id"] != rules["Gamma"])["id"]
    # erin guesses Delta right with her stay choice; bob guesses Gamma wrong, alone in a mail
    answer(world, "erin", START + HOUR, f"STAY\nGUESS Delta {rules['Delta']}")
    answer(world, "bob", START + 2 * HOUR, f"GUESS Gamma {wrong}")
    mail = unread(world)
    assert set(mail) == {"erin", "bob"}, "a guess opens no step: nobody else is mailed"
    erin, bob = flat(mail["erin"][0].text), flat(mail["bob"][0].text)
    assert f"GUESS Delta {rules['Delta']} - right! You are paid 3 garnets and 6 chips." in erin
    assert f"GUESS Gamma {wrong} - wrong." in bob
    assert ledger(world, "garnets") == [("SEASON", "erin", 3, "a correct guess")]
    assert ledger(world, MATCH_CHIPS)[-1] == ("bank", "erin", 6, "a correct guess")
    assert held(world, "erin", "garnets") == 8 and match(world).state["chips"]["erin"] == 19 + 6
    # through the stay close and a few turns, nobody else learns the rules or the guesses
    world.tick(START + STAY)
    world.tick(START + STAY + TURN)
    everyone = {p: [m.text for m in world.client(p).all()] for p in PLAYERS}
    for p, texts in everyone.items():
        for text in texts:
            if p != "erin":
                assert f"Delta {rules['Delta']}" not in text and "GUESS Delta" not in text, p
            if p != "bob":
                assert f"Gamma {wrong}" not in text and "GUESS Gamma" not in text, p
            assert f"Alpha {rules['Alpha']}" not in text and f"Beta {rules['Beta']}" not in text


# ---------------------------------------------------------------------------- (f) a stale reply


def test_a_reply_to_a_mail_about_a_turn_that_is_over_is_refused_and_changes_nothing(world):
    world.tick(START)
    stay_all(world, START + HOUR, dict.fromkeys(PLAYERS, "STAY"))
    world.tick(START + STAY)
    unread(world)
    turn_mail = form_mail(world, "dave")
    assert form_of(turn_mail) == "CHECK\nStep: Hand 1, Main table, betting round 1, turn 1"
    answer(world, "dave", START + STAY + HOUR, "CHECK", mail=turn_mail)
    mail = unread(world)
    assert set(mail) == {"dave", "carol", "alice"} and "Received" in mail["dave"][0].subject
    before, logged = match(world).state, len(events(world))
    opened = open_steps(world)
    # dave answers the same mail again, with its Step line: that turn is over
    world.client("dave").reply(turn_mail, "BET 3\nStep: Hand 1, Main table, betting round 1, turn 1",
                               START + STAY + 2 * HOUR)
    world.tick(START + STAY + 2 * HOUR)
    [error] = world.client("dave").unread()
    text = flat(error.text)
    assert "Your mail answers our mail about Hand 1, Main table, betting round 1, turn 1, which is over" in text
    assert "nothing in it was recorded" in text
    assert match(world).state == before and len(events(world)) == logged and open_steps(world) == opened
    assert set(unread(world)) == set(), "nobody else hears of it"


# ---------------------------------------------------------------------------- (g) a whole match


def test_a_whole_match_by_mail_and_deadlines_ends_replays_and_books_its_award_and_ranking(world):
    rnd = random.Random("matchjack service 1")
    t = START
    world.tick(t)
    answered: set[tuple[str, str]] = set()  # (player, step key): each answers a step at most once
    for _ in range(1000):
        m = match(world)
        if m.status == "finished":
            break
        state = m.state
        awaited = set(G.awaiting(state))
        mine = {p: s for s in G.steps(state) for p in s.players if p in awaited}
        movers = []
        for p, step in mine.items():
            key = step.key
            mail = form_mail(world, p)
            if mail is None or (p, key) in answered or f"Step: {step.title}" not in mail.text:
                continue  # no mail about this step (yet), or already answered or let pass
            answered.add((p, key))
            if rnd.random() < (0.5 if key.endswith("-stay") else 0.45):
                movers.append((p, mail))
        if movers:
            for p, mail in movers:
                t += timedelta(minutes=7)
                world.client(p).reply(mail, form_of(mail), t)
            world.tick(t)
        else:
            t = m.deadline
            assert t is not None, m.open_steps
            world.tick(t)
    m = match(world)
    assert m.status == "finished" and m.open_steps == []
    result = m.result
    state = m.state
    winner = state["final"]["winner"]
    assert result["outcome"][winner] == "win" and list(result["outcome"].values()).count("win") == 1
    with world.store.unit_of_work() as session:
        row = session.scalar(select(Match).where(Match.key == "m1"))
        stored = session.scalars(select(Event).where(Event.match_id == row.id).order_by(Event.seq)).all()
        assert replay(G, row, stored) == row.state
        kinds = Counter(ev.kind for ev in stored)
        closed = [ev.step_key for ev in stored if ev.kind == "timeout"]
    assert kinds["timeout"] > 0 and kinds["move"] > 0
    assert state["hand"] > 10 and {"break-5", "break-10"} <= set(closed), "the breaks end at their deadlines"
    # the ledger holds every movement of the match: the chips behind are 20 plus each player's net
    stacks = ledger(world, MATCH_CHIPS)
    for p in PLAYERS:
        net = sum(n for _, to, n, _ in stacks if to == p) - sum(n for frm, _, n, _ in stacks if frm == p)
        assert 20 + net == state["chips"][p], p
    assert len(stacks) + len(ledger(world, "garnets")) == len(state["transfers"])
    # the award: 2 CoLs to the winner, booked in the season ledger
    assert result["awards"] == {"cols": {winner: 2}}
    assert ledger(world, "cols") == [("SEASON", winner, 2, "award")]
    # no signals and no nomination (the season's step): the stored result ranks the six, the
    # winner first, the EC last, those who reached 0 below the others
    out = [e["player"] for e in state["eliminated"]]
    assert all(state["chips"][p] == 0 for p in out)
    assert result["signals"] == [] and "dmo" not in result["scores"] and "nomination" not in state
    ranking = result["ranking"]
    assert sorted(ranking) == sorted(PLAYERS) and ranking == G.result(state).ranking
    assert ranking[0] == winner == result["scores"]["winner"]
    assert ranking[-1] == state["final"]["ec"] == result["scores"]["ec"]
    assert set(ranking[len(ranking) - len(set(out) - {winner}) :]) == set(out) - {winner}
    assert "nominate" not in {ev.step_key for ev in stored}
    # a player who left the match is told by one step mail, then hears nothing but the result
    # (ruling 13)
    for e in state["eliminated"]:
        p = e["player"]
        rows = [r for r in outbox_rows(world, to_addr=f"{p}@example.test") if r.kind in ("step", "receipt")]
        if e["told"] == "end":  # they left in the last hand: the final mail (or their receipt) tells them
            assert rows[-1].dedupe_key == f"step:m1:final:{p}" or rows[-1].kind == "receipt", (e, rows[-1])
            continue
        # the mail that tells them: the step mail of that step, or their own receipt when their move opened it
        told = next(i for i, r in enumerate(rows) if r.step_key == e["told"])
        after = [r.dedupe_key if r.kind == "step" else r.kind for r in rows[told + 1 :]]
        assert set(after) <= {f"step:m1:final:{p}"}, (e, after)
    # every player's last mail is the final result (the last mover's, their receipt): it names
    # the EC, whom the season asks to nominate the DMO by a mail of its own
    ec_name = state["names"][state["final"]["ec"]]
    for p in PLAYERS:
        last = world.client(p).latest()
        assert "Final result" in last.subject or "(the match is over)" in last.subject, (p, last.subject)
        assert "=== The match is over ===" in last.text and result["reason"].split(";")[0] in flat(last.text)
        assert f"{ec_name} is the EC (elimination candidate)" in flat(last.text)
        assert "to nominate the DMO for the death match, by a separate mail." in flat(last.text)


@pytest.mark.parametrize("game", ["matchjack", "betting-minority"])
def test_the_unchanged_season_file_reloads_cleanly_after_the_match_started(tmp_path, db_url, game):
    """At its start the match book adds the season's balances, the seats' names and the
    holdings of season currencies to the match's options; a reload compares only what the
    organizer wrote, so the unchanged file loads again and changes nothing (issue 21)."""
    from referee.config import parse_season
    from referee.seasons import load_season

    from .test_betting_minority_service import bm_season

    data = mj_season() if game == "matchjack" else bm_season()
    w = World(tmp_path / "world", db_url, data)
    try:
        w.tick(START)
        with w.store.unit_of_work() as session:
            match = session.scalar(select(Match).where(Match.key == "m1"))
            assert match.status == "running" and "names" in match.options
            before = (dict(match.options), match.version)
        changes = load_season(w.store, parse_season(data, "season.toml"), START + HOUR)
        assert changes == []
        with w.store.unit_of_work() as session:
            match = session.scalar(select(Match).where(Match.key == "m1"))
            assert (dict(match.options), match.version) == before
    finally:
        w.store.dispose()


def test_resigning_says_the_others_play_on(world):
    """RESIGN's first answer says what a forfeit does in this match: in MatchJack the
    player leaves and the others play on (a duel ends; the wording comes from the seats, not
    from the game's name)."""
    world.tick(START)
    world.send("alice", "RESIGN m1", START + HOUR)
    world.tick(START + HOUR)
    [answer] = [m for m in world.client("alice").all() if "command" in m.subject.lower()]
    assert "as they stand, and you leave and the others play on. Nothing changed yet." in flat(answer.text)
    assert match(world).status == "running"
