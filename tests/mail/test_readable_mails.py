"""Issue 20, "mails people can read": every mail of every game, as the players get it.

Each game plays whole matches through the real service (``tests/service/harness.py``),
driven by scripted players who answer their forms, miss deadlines (the reminders, then
the defaults), send a move the rules refuse, answer an old mail, write from another
address and to the general address, so that step mails, reminders, receipts, errors,
results and the end-of-match mails all occur. Then every mail in the players' Maildirs is
checked, one test per property and game (so one game's failure is its own test id):

* every line at most 78 characters (RFC 3676; a lone unbreakable token, or a seal's
  ``printf ... | sha256sum`` command, may stand alone on a longer line), LF line ends in
  the Maildir files;
* names, never player keys: the season's keys (``p_alice``) differ from the names
  (``Alice Martin``), and no key appears in any mail body (but inside a seal's check
  command, which must hold the very line that was fingerprinted);
* plurals right: no "1 chips", "there are 1 ...", "3 chip";
* news first: the paragraph after the greeting is neither the seals section nor the
  rules; the seals section, when a mail has one, is its last before the signature;
* every abbreviation of ``referee.render.ABBREVIATIONS`` explained at its first use.
"""

from __future__ import annotations

import email
import email.policy
import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.games.betting_minority.demo import PARTICIPANTS, MinorityPlayer
from referee.games.indian_poker.demo import DuelPlayer
from referee.games import GAMES
from referee.mail.client import ScriptedClient
from referee.mail.maildir import deliver_to_maildir
from referee.render import ABBREVIATIONS, LINE_MAX, unbreakable
from referee.store.models import Match, Outbox
from tests.service.harness import DAY, START, World

HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
GAME_NAMES = ["stationary-roulette", "indian-poker", "rewind-holdem", "betting-minority", "matchjack", "season"]
# the mails of the season frame and the organizer's controls (the "season" entry above)
SEASON_KINDS = {"step", "receipt", "organizer", "handover", "standings", "adjusted", "announcement"}

# client key (the address's local part) -> (player key, name, time zone): keys and names differ
PEOPLE = {
    "alice": ("p_alice", "Alice Martin", "Europe/Berlin"),
    "bob": ("p_bob", "Bob Stone", "America/New_York"),
    "carol": ("p_carol", "Carol Diaz", "UTC"),
    "dave": ("p_dave", "Dave Ito", "Asia/Tokyo"),
    "erin": ("p_erin", "Erin Moss", "UTC"),
    "frank": ("p_frank", "Frank Silva", "America/Sao_Paulo"),
}
STEP_LINE = re.compile(r"^(?:Step|Turn): .+$", re.MULTILINE)


def key_of(client: str) -> str:
    return PEOPLE[client][0] if client in PEOPLE else f"p_{client}"


def client_of(key: str) -> str:
    return key.removeprefix("p_")


def person(client: str) -> dict:
    key, name, zone = PEOPLE[client]
    return {"id": key, "name": name, "email": f"{client}@example.test", "timezone": zone}


def season(game: str, seed: int, players: list[dict], options: dict | None = None, **extra) -> dict:
    match = {
        "id": "m1",
        "game": game,
        "players": [p["id"] for p in players],
        "start": START.isoformat(),
        "seed": seed,
        "reminders": ["2h"],
    }
    if options:
        match["options"] = options
    return {
        "season": {"id": "test", "name": "Test season", "starting_chips": 200, **extra},
        "players": players,
        "matches": [match],
    }


def match_row(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


def add_client(world: World, client: str, name: str) -> None:
    address = f"{client}@example.test"
    world.clients[client] = ScriptedClient(address, name, world.config.mail.outbox / address, world.config.mail.inbox)


def stray_mails(world: World, at: datetime) -> None:
    """alice writes from another address (a spoof warning to her real one) and to the
    general address (the "which match?" answer)."""
    client = world.client("alice")
    mail = client.latest()
    client.reply(mail, "CALL", at, from_addr="alice@elsewhere.test")
    raw = client.compose_reply(mail, "Which match is this?", at + timedelta(minutes=1), to_addr="referee@example.test")
    deliver_to_maildir(world.config.mail.inbox, raw, delivered_at=at + timedelta(minutes=1))
    world.tick(at + timedelta(minutes=2))


# ---------------------------------------------------------------------------- Stationary Roulette

COLOURS = ["Gold", "Silver", "Black", "Gold", "Silver", "Gold", "Silver", "Gold", "Silver", "Gold"]


def roulette_reply(world: World, client: str, colour: str, *, gold: int = 30) -> str:
    """Fill in whatever the latest mail with a form asks for, keeping its Step line."""
    mail = next(m for m in reversed(world.client(client).all()) if "\nROULETTE" in m.text or "\nBET" in m.text)
    text = mail.text
    parts = []
    step = STEP_LINE.search(text)
    if step:
        parts.append(step.group(0))
    if "\nROULETTE" in text:
        parts.append(f"ROULETTE\nWinning colour: {colour}\nGold: {gold}\nSilver: {40 - gold}\nBlack: 0")
    if "\nBET" in text:
        parts.append("BET\nGold: 20\nSilver: 20")
    return "\n\n".join(parts)


def play_roulette(world: World) -> None:
    world.tick(START)
    for r in range(11):
        opened = START + r * DAY
        for i, client in enumerate(("alice", "bob")):
            at = opened + timedelta(hours=1 + i)
            if r == 2 and client == "bob":
                continue  # bob misses round 2: a reminder, then the defaults
            if r == 1 and client == "alice":
                world.send(client, roulette_reply(world, client, "Gold", gold=10), at - HOUR / 2)  # refused
                world.tick(at - HOUR / 2)
            world.send(client, roulette_reply(world, client, COLOURS[r % 10]), at)
            world.tick(at)
        if r == 1:  # bob's reply names the preparation phase, which is over: refused
            text = STEP_LINE.sub("Step: Preparation phase", roulette_reply(world, "bob", "Gold"))
            world.send("bob", text, opened + 3 * HOUR)
            world.tick(opened + 3 * HOUR)
        if r == 3:
            stray_mails(world, opened + 4 * HOUR)
        world.tick(opened + DAY - 2 * HOUR)
        if r == 4:  # a revision just before the deadline, read at it: its receipt says the round has closed
            world.send("alice", roulette_reply(world, "alice", "Silver"), opened + DAY - timedelta(seconds=30))
        world.tick(opened + DAY)
        if match_row(world).status != "running":
            break


# ---------------------------------------------------------------------------- the duels


def play_duel(world: World, seed: int) -> None:
    players = {c: DuelPlayer(c, world.client(c), random.Random(f"{seed}:{c}")) for c in ("alice", "bob")}
    world.tick(START)
    turns = 0
    at = START
    while (match := match_row(world)).status == "running":
        turns += 1
        assert turns < 1000, "the duel does not end"
        to_act = client_of(GAMES[match.game].step(match.state).players[0])
        other = "bob" if to_act == "alice" else "alice"
        if turns % 7 == 0:  # nobody answers: the reminder, then the default
            world.tick(match.deadline - 2 * HOUR)
            world.tick(match.deadline)
            at = match.deadline
            continue
        if turns == 9:  # a minute before the deadline, read after the next turn's deadline too (the referee was down)
            length = match.deadline - match.step_opened_at
            at = match.deadline - timedelta(minutes=1)
            players[to_act].answer(at)
            at += length + timedelta(minutes=1)
            world.tick(at)
            continue
        at = max(match.step_opened_at + 2 * HOUR, at + HOUR)
        if turns == 2:
            world.send(other, "CALL", at - HOUR / 2)  # out of turn: refused
            world.tick(at - HOUR / 2)
            players[to_act].answer(at - HOUR / 4, illegal=True)  # more than the rules allow: refused
            world.tick(at - HOUR / 4)
        if turns == 5:
            stray_mails(world, at - HOUR / 2)
        players[to_act].answer(at)
        world.tick(at)


# ---------------------------------------------------------------------------- Betting Minority


def play_minority(world: World, seed: int) -> None:
    rnd = random.Random(seed)
    players = {c: MinorityPlayer(c, world.client(c), random.Random(f"{seed}:{c}")) for c in ("alice", "bob")}
    game = GAMES["betting-minority"]
    world.tick(START)
    steps = 0
    while (match := match_row(world)).status == "running":
        steps += 1
        assert steps < 400, "the match does not end"
        step = game.step(match.state)
        at = match.step_opened_at + HOUR
        if steps == 3:
            stray_mails(world, at - HOUR / 2)
        if step.kind == "marker":
            players["bob"].reply(players["bob"].marker(), at)
            world.tick(at)
        elif step.kind == "send" and steps == 6:  # one send, a minute before the deadline, read after it
            players["alice"].reply(players["alice"].send_command(*players["alice"].choose()), match.deadline - MINUTE)
            world.tick(match.deadline + MINUTE)
        elif step.kind == "send":
            order = ["alice", "bob"] if rnd.random() < 0.5 else ["bob", "alice"]
            if rnd.random() < 0.1:
                order.pop()
            for c in order:
                players[c].reply(players[c].send_command(*players[c].choose()), at)
                world.tick(at)
                at += HOUR
            if len(order) == 1:
                world.tick(match.deadline)
        elif rnd.random() < (0.5 if step.kind == "extension" else 0.15):
            world.tick(match.deadline - 2 * HOUR)
            world.tick(match.deadline)
        else:
            c = client_of(step.players[0])
            if steps % 5 == 0:
                players[c].reply(players[c].over_the_cap(), at - HOUR / 2)
                world.tick(at - HOUR / 2)
                if match_row(world).step_key != match.step_key:
                    continue
            players[c].reply(players[c].bet_command(), at)
            world.tick(at)


# ---------------------------------------------------------------------------- a season


def season_frame() -> dict:
    """A main match of Stationary Roulette, its nomination and an Indian Poker death match."""
    four = [person(c) for c in ("alice", "bob", "carol", "dave")]
    return {
        "season": {
            "id": "test",
            "name": "Test season",
            "starting_chips": 200,
            "seed": 5,
            "death_matches": ["indian-poker"],
            "death_match_gap": "1h",
            "nomination_length": "6h",
        },
        "games": {"indian-poker": {"phase_length": "1h"}},
        "players": four,
        "matches": [
            {
                "id": "m1",
                "game": "stationary-roulette",
                "kind": "main",
                "players": ["p_alice", "p_bob"],
                "start": START.isoformat(),
                "seed": 1,
                "phase_length": "1h",
                "reminders": ["30m"],
            }
        ],
    }


def the_match(world: World, key: str) -> Match | None:
    with world.store.unit_of_work() as session:
        found = session.scalar(select(Match).where(Match.key == key))
        if found is not None:
            _ = [seat.player.key for seat in found.seats]
        return found


def play_season(world: World) -> None:
    """The season frame's mails and every organizer's control's: a main match with an extended
    deadline, a pause and an adjustment and an announcement on the way; the EC's nomination,
    a nominee's CoL, the nomination again; the death match, a seat handed over, a forfeit, the
    elimination and the season's end."""
    from referee.season.controls import Controls

    controls = Controls(world.store, world.referee.book, world.referee.notices)
    world.tick(START)
    world.send("alice", roulette_reply(world, "alice", "Gold"), START + HOUR / 4)
    world.tick(START + HOUR / 4)
    controls.extend("m1", None, HOUR, START + HOUR / 3)
    controls.pause(["m1"], None, "a power cut at the club", START + HOUR / 2)
    controls.resume(["m1"], None, START + HOUR)
    controls.adjust(None, "p_carol", "cols", 1, "won the autumn quiz", START + HOUR)
    controls.announce("The final is on Sunday.\nGood luck to everyone!", START + HOUR)
    at = START + HOUR
    while the_match(world, "m1").status != "finished" and at < START + 2 * DAY:
        at += HOUR / 2
        world.tick(at)
    nomination = the_match(world, "m1-nomination")
    ec, eligible = nomination.seats[0].player.key, [s.player.key for s in nomination.seats[1:]]
    first = "p_carol" if "p_carol" in eligible else eligible[0]
    world.send(client_of(ec), f"NOMINATE {PEOPLE[client_of(first)][1]}", at + HOUR)
    world.tick(at + HOUR)
    if first == "p_carol":  # carol holds a CoL: she is asked, and uses it
        world.send("carol", "USE COL", at + 2 * HOUR)
        world.tick(at + 2 * HOUR)
        second = next(k for k in eligible if k != first)
        world.send(client_of(ec), f"NOMINATE {PEOPLE[client_of(second)][1]}", at + 3 * HOUR)
        world.tick(at + 3 * HOUR)
    at += 5 * HOUR  # the gap has passed: the death match runs
    world.tick(at)
    death = the_match(world, "m1-death")
    assert death is not None and death.status == "running", death and death.status
    seated = [s.player.key for s in death.seats]
    free = next(k for k in ("p_alice", "p_bob", "p_carol", "p_dave") if k not in seated)
    controls.substitute("m1-death", seated[1], free, "the DMO is travelling", at)
    world.tick(at)
    controls.forfeit("m1-death", seated[0], "the EC gives up", at + HOUR / 2)
    world.tick(at + HOUR / 2)
    assert the_match(world, "m1-death").status == "finished"


# ---------------------------------------------------------------------------- MatchJack


def play_matchjack(world: World, seed: int) -> None:
    game = GAMES["matchjack"]
    rnd = random.Random(f"readable {seed}")
    t = START
    world.tick(t)
    answered: set[tuple[str, str]] = set()
    strayed = late = False
    for _ in range(1000):
        m = match_row(world)
        if m.status == "finished":
            break
        state = m.state
        awaited = set(game.awaiting(state))
        mine = {p: s for s in game.steps(state) for p in s.players if p in awaited}
        movers = []
        for p, step in mine.items():
            client = world.client(client_of(p))
            mail = next((x for x in reversed(client.all()) if STEP_LINE.search(x.text)), None)
            if mail is None or (p, step.key) in answered or f"Step: {step.title}" not in mail.text:
                continue
            answered.add((p, step.key))
            if rnd.random() < (0.5 if step.key.endswith("-stay") else 0.45):
                movers.append((client, mail))
        if movers:
            for client, mail in movers:
                t += timedelta(minutes=7)
                found = STEP_LINE.search(mail.text)
                command = mail.text[: found.start()].rstrip().splitlines()[-1]
                client.reply(mail, f"{command}\n{found.group(0)}", t)
            if not strayed:
                strayed = True
                first_client, first_mail = movers[0]
                t += timedelta(minutes=7)
                first_client.reply(first_mail, "HIT ME TWICE", t)  # not a command: refused
            world.tick(t)
        else:
            t = m.deadline
            assert t is not None, m.open_steps
            if m.remind_at is not None and m.remind_at < t:
                world.tick(m.remind_at)
            stay = next((p for p, s in mine.items() if s.key.endswith("-stay")), None)
            if not late and stay is not None and m.step_key == mine[stay].key:  # sent just before, read at it
                late = True
                client = world.client(client_of(stay))
                mail = next(x for x in reversed(client.all()) if STEP_LINE.search(x.text))
                client.reply(mail, f"STAY\n{STEP_LINE.search(mail.text).group(0)}", t - timedelta(seconds=10))
            world.tick(t)
    stray_mails(world, t + HOUR)


# ---------------------------------------------------------------------------- the matches


@dataclass
class Mail:
    path: Path
    raw: bytes
    subject: str
    text: str
    kind: str


def play(game: str, tmp: Path) -> tuple[list[Mail], set[str]]:
    """Play a whole match of ``game``; every mail the players got, and the player keys."""
    url = f"sqlite:///{tmp / 'referee.db'}"
    duo = [person("alice"), person("bob")]
    if game == "stationary-roulette":
        world = World(tmp, url, season(game, 1, duo))
    elif game in ("indian-poker", "rewind-holdem"):
        world = World(tmp, url, season(game, 7, duo, {"dmo": "p_bob"}))
    elif game == "betting-minority":
        participants = [
            {"id": f"p_{k}", "name": name, **({"email": f"{k}@example.test"} if addressed else {}), "timezone": zone}
            for k, (name, zone, addressed) in PARTICIPANTS.items()
        ]
        world = World(tmp, url, season(game, 4, duo + participants))
        for k, (name, _zone, addressed) in PARTICIPANTS.items():
            if addressed:
                add_client(world, k, name)
    elif game == "season":
        world = World(tmp, url, season_frame())
        for c in ("carol", "dave"):
            add_client(world, c, PEOPLE[c][1])
    else:
        six = [person(c) for c in ("alice", "bob", "carol", "dave", "erin", "frank")]
        world = World(tmp, url, season(game, 3, six, starting_garnets=5))
        for c in ("carol", "dave", "erin", "frank"):
            add_client(world, c, PEOPLE[c][1])
    try:
        keys = {p["id"] for p in _players(world)}
        if game == "stationary-roulette":
            play_roulette(world)
        elif game in ("indian-poker", "rewind-holdem"):
            play_duel(world, 7)
        elif game == "betting-minority":
            play_minority(world, 4)
        elif game == "season":
            play_season(world)
        else:
            play_matchjack(world, 3)
        assert match_row(world).status in ("finished", "cancelled")
        with world.store.unit_of_work() as session:
            outbox = list(session.scalars(select(Outbox)))
            kinds = {row.message_id: row.kind for row in outbox}
            _SHOWN[game] = [(f"{row.kind} mail {row.message_id}", row.shown, row.message) for row in outbox]
    finally:
        world.store.dispose()
    mails = []
    for path in sorted(world.config.mail.outbox.rglob("*")):
        if not path.is_file() or path.parent.name not in ("new", "cur") or path.name.startswith("."):
            continue
        raw = path.read_bytes()
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        text = msg.get_body(preferencelist=("plain",)).get_content()
        kind = kinds.get(str(msg["Message-ID"]).strip("<>"), "?")
        mails.append(Mail(path, raw, str(msg["Subject"]), text, kind))
    return mails, keys


def _players(world: World) -> list[dict]:
    from referee.store.models import Player

    with world.store.unit_of_work() as session:
        return [{"id": p.key} for p in session.scalars(select(Player))]


_PLAYED: dict[str, tuple[list[Mail], set[str]]] = {}
_SHOWN: dict[str, list[tuple[str, str | None, bytes]]] = {}  # game -> (which, Outbox.shown, message)


@pytest.fixture
def mails_of(tmp_path_factory):
    def get(game: str) -> tuple[list[Mail], set[str]]:
        if game not in _PLAYED:
            _PLAYED[game] = play(game, tmp_path_factory.mktemp(game))
        return _PLAYED[game]

    return get


def report(problems: list[str], limit: int = 25) -> str:
    shown = problems[:limit]
    more = f"\n... and {len(problems) - limit} more" if len(problems) > limit else ""
    return f"{len(problems)} problems:\n" + "\n".join(shown) + more


def where(mail: Mail) -> str:
    return f"{mail.path.parent.parent.name} ({mail.kind}) {mail.subject!r}"


# ---------------------------------------------------------------------------- the checks


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_kind_of_mail_occurs(mails_of, game):
    mails, _keys = mails_of(game)
    kinds = {m.kind for m in mails}
    if game == "season":
        assert SEASON_KINDS <= kinds, kinds
        assert any("final standings" in m.subject.lower() for m in mails), [m.subject for m in mails]
        return
    assert {"step", "receipt", "error", "reminder", "spoof", "unaddressed"} <= kinds, kinds
    assert any("Final result" in m.subject or "over" in m.subject.lower() for m in mails)


@pytest.mark.parametrize("game", [g for g in GAME_NAMES if g != "season"])
def test_a_mail_read_after_the_deadline_it_met_is_answered_without_a_past_time(mails_of, game):
    """Issue 25: each game's play sends a mail just before a deadline that the referee reads
    after it; the receipt says the step has closed (and the mail counted), never "until" it."""
    mails, _keys = mails_of(game)
    read_late = ("before we could read your mail", "too had passed when we read your mail")
    late = [m for m in mails if m.kind == "receipt" and any(w in " ".join(m.text.split()) for w in read_late)]
    assert late, "no receipt of a mail read after its deadline"
    for m in late:
        text = " ".join(m.text.split())
        assert "Your mail arrived in time" in text or "that time too had passed" in text, text
        assert "Step:" not in m.text, text  # no form: nothing more can be sent for that step


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_line_fits_in_78_characters(mails_of, game):
    mails, _keys = mails_of(game)
    problems = [
        f"{where(m)}: {len(line)} chars: {line[:100]!r}"
        for m in mails
        for line in m.text.splitlines()
        if len(line) > LINE_MAX and not unbreakable(line)
    ]
    assert not problems, report(problems)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_maildir_files_have_lf_line_ends(mails_of, game):
    mails, _keys = mails_of(game)
    assert mails
    assert not [where(m) for m in mails if b"\r\n" in m.raw]


_COMMAND = re.compile(r"^\s*printf '%s' .* \| sha256sum$")


@pytest.mark.parametrize("game", GAME_NAMES)
def test_no_player_key_in_any_mail(mails_of, game):
    mails, keys = mails_of(game)
    pattern = re.compile(r"(?<![\w@.+-])(?<!id: )(" + "|".join(map(re.escape, sorted(keys))) + r")(?![\w-])")
    problems = [
        f"{where(m)}: {found.group(1)!r} in {line.strip()[:100]!r}"
        for m in mails
        for line in m.text.splitlines()
        if not _COMMAND.match(line)
        for found in [pattern.search(line)]
        if found
    ]
    assert not problems, report(problems)


_UNITS = r"(?:chip|point|card|hand|round|garnet|CoL|turn|colour|player|participant|room|line|mail|step)"
_BAD_PLURALS = [
    re.compile(r"(?<![\d.,-])1 " + _UNITS + r"s\b"),  # 1 chips
    re.compile(r"\b(?:are|were) 1 " + _UNITS + r"\b"),  # there are 1 chip
    re.compile(r"\bthere (?:is|was) (?:[02-9]|\d\d+) " + _UNITS + r"s\b"),  # there is 3 chips
    re.compile(r"(?<![\d.,+-])(?:0|[2-9]|\d\d+) " + _UNITS + r"\b(?![-'])"),  # 3 chip
]


@pytest.mark.parametrize("game", GAME_NAMES)
def test_plurals_agree(mails_of, game):
    mails, _keys = mails_of(game)
    problems = [
        f"{where(m)}: {found.group(0)!r} in {line.strip()[:100]!r}"
        for m in mails
        for line in m.text.splitlines()
        for rule in _BAD_PLURALS
        for found in [rule.search(line)]
        if found
    ]
    assert not problems, report(problems)


def paragraphs(text: str) -> list[str]:
    body, _, _signature = text.partition("\n-- \n")
    return [p.strip("\n") for p in re.split(r"\n\s*\n", body) if p.strip()]


_HEX = re.compile(r"\b[0-9a-f]{64}\b")


def is_seals(paragraph: str) -> bool:
    return bool(_HEX.search(paragraph) or "sha256sum" in paragraph or "commitment" in paragraph.lower())


def is_rules(paragraph: str) -> bool:
    first = paragraph.splitlines()[0]
    return bool(re.match(r"(How .* works|The rules|How scoring works)", first))


@pytest.mark.parametrize("game", GAME_NAMES)
def test_news_first_and_the_seals_last(mails_of, game):
    mails, _keys = mails_of(game)
    problems = []
    for m in mails:
        paras = paragraphs(m.text)
        if len(paras) < 2:
            problems.append(f"{where(m)}: no paragraph after the greeting")
            continue
        if not paras[0].startswith("Dear "):
            problems.append(f"{where(m)}: the mail does not begin with the greeting: {paras[0][:60]!r}")
        if is_seals(paras[1]) or is_rules(paras[1]):
            problems.append(f"{where(m)}: the first paragraph is not the news: {paras[1][:70]!r}")
        seals = [i for i, p in enumerate(paras) if is_seals(p)]
        if seals:
            head = next((i for i in range(seals[0], -1, -1) if paras[i].startswith("=== ")), None)
            if head is None or any(not is_seals(p) for p in paras[head + 1 :] if not p.startswith("=== ")):
                problems.append(f"{where(m)}: the seals section is not the last before the signature")
            elif any(p.startswith("=== ") and not is_seals(p) for p in paras[head + 1 :]):
                problems.append(f"{where(m)}: a section follows the seals section")
    assert not problems, report(problems)


_ABBREVIATION = re.compile(r"(?<![\w'-])(" + "|".join(sorted(ABBREVIATIONS, key=len, reverse=True)) + r")s?(?![\w'-])")


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_abbreviation_is_explained_at_its_first_use(mails_of, game):
    mails, _keys = mails_of(game)
    problems = []
    for m in mails:
        seen: set[str] = set()
        text = "\n".join(line for line in m.text.splitlines() if not _COMMAND.match(line))
        for found in _ABBREVIATION.finditer(text):
            word = found.group(1)
            if word in seen:
                continue
            seen.add(word)
            if not text[found.end() :].lstrip().startswith("("):
                line = text[text.rfind("\n", 0, found.start()) + 1 : text.find("\n", found.end())]
                problems.append(f"{where(m)}: {word} unexplained in {line.strip()[:100]!r}")
    assert not problems, report(problems)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_the_scripted_client_reads_each_mail_as_the_stdlib_s_default_policy_does(mails_of, game):
    """The scripted players (the demo, the tests) read a mail's plain text through the
    compat32 parser, decoded by its charset: the text must be the default policy's
    ``get_content``, on every kind of mail of every game."""
    import email
    import email.policy

    from referee.mail.client import Received

    mails, _keys = mails_of(game)
    for m in mails:
        part = email.message_from_bytes(m.raw, policy=email.policy.default).get_body(preferencelist=("plain",))
        expected = part.get_content().replace("\r\n", "\n") if part is not None else ""
        assert Received(m.path, raw=m.raw).text == expected, where(m)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_the_shown_text_kept_with_each_mail_is_what_a_reader_finds_in_it(mails_of, game):
    """A reply is read against ``Outbox.shown``, the text the press kept when it made the
    mail: it must be exactly what the reader finds in the mail's bytes (``shown_text``), for
    every kind of mail of every game; only a mail the press did not make (the organizer's)
    or one rewritten on delivery has none."""
    from referee.mail.bodytext import shown_text

    mails_of(game)
    rows = _SHOWN[game]
    kept = [(which, shown, message) for which, shown, message in rows if shown is not None]
    none = [which for which, shown, message in rows if shown is None and not _late_or_organizer(which, message)]
    assert kept and not none, report(none)
    problems = [which for which, shown, message in kept if shown != shown_text(message)]
    assert not problems, report(problems)


def _late_or_organizer(which: str, message: bytes) -> bool:
    """A mail to the organizer (not made by the press), or one delivery noted as late."""
    from referee.mail.compose import LATE_SUBJECT

    return which.startswith("organizer") or f"Subject: {LATE_SUBJECT}".encode() in message
