"""No hidden information reaches the archive: for random unfinished matches of every game,
each player's hidden variants of the state (``game.hidden_variants``: states that differ
only in what that player may not know yet) give a byte-identical site, every file of it.
And once a match is over, its page shows what the rules then reveal."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from sqlalchemy import select, update

from referee.archive.pages import Paths

from .match_files import match_html
from referee.archive.site import build
from referee.games import GAMES
from referee.store.models import Event, Match

from .league import START, League, load, match_dict, season_dict

SEEDS = 3

# the seats after alice and bob of a game with more (Betting Minority's ten participants,
# silent seats: some of them without an address, as a season may have them)
PARTICIPANTS = [
    {"id": f"part{i}", "name": f"Participant {i}", **({"email": f"part{i}@example.test"} if i % 3 == 0 else {})}
    for i in range(1, 11)
]


def seats(game: str) -> list[str]:
    """alice and bob, then as many participants as the game seats beyond two."""
    return ["alice", "bob", *(p["id"] for p in PARTICIPANTS[: GAMES[game].min_players - 2])]


def season_of(game: str, matches: list[dict]) -> dict:
    """The archive tests' season, with the participants a game of more seats needs."""
    season = season_dict(matches)
    if GAMES[game].min_players > 2:
        # a player without an address may sit only at a silent seat: a game of more seats
        # that all act (MatchJack's six players) seats them with an address each
        silent = bool(GAMES[game].game_type.silent_roles)
        extra = PARTICIPANTS if silent else [{"email": f"{p['id']}@example.test", **p} for p in PARTICIPANTS]
        season["players"] = [*season["players"], *extra]
    return season


def site_files(out: Path) -> dict[str, bytes]:
    """Every file of a built site but the manifest (which holds fingerprints, not content)."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != Paths.MANIFEST
    }


def set_state(league: League, key: str, state: dict) -> None:
    with league.store.unit_of_work() as session:
        session.execute(update(Match).where(Match.key == key).values(state=state))


# every game but the season's nomination, which hides nothing (its lot is drawn at the
# deadline, and every nomination and CoL is public at once): checked below instead
HIDING = [name for name in sorted(GAMES) if not GAMES[name].game_type.season_step]


def test_a_season_step_hides_nothing():
    game = GAMES["nomination"]
    state = game.initial_state(3, ["alice", "bob", "carol"], {"holdings": {"cols": {"bob": 1}}})
    for s in (state, game.apply_move(state, "alice", {"nominate": "bob"}).state):
        assert game.hidden_variants(s, "alice", random.Random(1)) == [s]
        assert game.hidden_variants(s, "bob", random.Random(1)) == [s]


@pytest.mark.parametrize("game", HIDING)
def test_hidden_variants_give_the_same_site(store, tmp_path, game):
    engine = GAMES[game]
    matches = [match_dict(f"m{seed}", game, seats(game), seed=seed) for seed in range(SEEDS)]
    load(store, season_of(game, matches))
    league = League(store)
    differed = 0
    for seed in range(SEEDS):
        key = f"m{seed}"
        rnd = random.Random(f"{game}:{seed}")
        league.play(key, rnd, events=rnd.randint(2, 25), deadline_odds=0.2)
        match = league.match(key)
        if match.status != "running":
            continue
        state = match.state
        baseline = site_files(_built(league, tmp_path / f"{key}-baseline"))
        for player in seats(game)[:3]:  # a participant's variants too, where the game seats any
            for i, variant in enumerate(engine.hidden_variants(state, player, random.Random(seed))):
                differed += variant != state
                set_state(league, key, variant)
                out = _built(league, tmp_path / f"{key}-{player}-{i}")
                assert site_files(out) == baseline, f"{game} {key}: a hidden variant for {player} shows on the site"
        set_state(league, key, state)
    assert differed, f"{game}: no playout reached a state with hidden information; the test proved nothing"


def _built(league: League, out: Path) -> Path:
    build(league.store, out, now=START, full=True)
    return out


def _rounds(page: str) -> dict[int, str]:
    return {
        int(n): body
        for n, body in re.findall(r'<section class="round" id="round-(\d+)".*?>(.*?)</section>', page, re.S)
    }


# what each game's public history reveals of every closed round, as text a page must show
REVEALED = {
    "stationary-roulette": lambda entry: [rl["winning"] for rl in entry["roulettes"]],
    "indian-poker": lambda entry: [f'<td class="num">{card}</td>' for card in entry["cards"].values()],
    "rewind-holdem": lambda entry: [f'<td class="num">{card}</td>' for card in entry["hidden"].values()],
    # each participant's entry (PARTICIPANTS: part<i> is Participant <i>, seat P<i>; names isolated), each
    # room's counts
    "betting-minority": lambda entry: [
        *(
            f'<bdi>Participant {p[4:]}</bdi> <span class="muted">(P{p[4:]})</span>: '
            f"<bdi>{'Alice' if role == 'EC' else 'Bob'}</bdi>"
            for p, role in entry["entries"].items()
        ),
        *(f'<td class="num">{c["EC"]}</td>\n<td class="num">{c["DMO"]}</td>' for c in entry["counts"].values()),
    ],
}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_finished_match_shows_what_the_rules_reveal(store, tmp_path, game):
    load(store, season_of(game, [match_dict("m", game, seats(game), seed=11)]))
    league = League(store)
    league.play("m", random.Random(game))
    out = _built(league, tmp_path / "site")
    page = match_html(out, "s1", "m")
    history = GAMES[game].view(league.match("m").state, None)["history"]
    rounds = _rounds(page)
    assert sorted(rounds) == list(range(1, len(history) + 1))
    reveal = REVEALED.get(game)
    if reveal is not None:
        for number, entry in enumerate(history, 1):
            for fact in reveal(entry):
                assert fact in rounds[number], f"{game} round {number}: {fact!r} not on the page"
    # the event log's contents are published with the match's end, every move with its nonce
    chain = json.loads((out / Paths.chain("s1", "m")).read_text())
    moves = [record for record in chain["events"] if record["kind"] == "move"]
    assert moves and all(record["payload"]["nonce"] for record in moves)
    with store.unit_of_work() as session:
        assert session.scalar(select(Match.status).where(Match.key == "m")) == "finished"


def test_a_running_match_publishes_no_payload_and_nothing_of_its_open_step(store, tmp_path):
    load(store, season_dict([match_dict("m", "stationary-roulette", ["alice", "bob"], seed=2)]))
    league = League(store)
    league.play("m", random.Random(5), events=12, deadline_odds=0.1)
    match = league.match("m")
    assert match.status == "running"
    with store.unit_of_work() as session:
        open_moves = session.scalars(
            select(Event.seq).where(Event.match_id == match.id, Event.kind == "move", Event.step_key == match.step_key)
        ).all()
    assert open_moves, "the open step should hold a move for this test to mean anything"
    chain = json.loads((_built(league, tmp_path / "site") / Paths.chain("s1", "m")).read_text())
    assert all(record["payload"] is None for record in chain["events"])
    assert not [r for r in chain["events"] if r["kind"] == "move" and r["step"] == match.step_key]
