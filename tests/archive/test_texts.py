"""Round texts: every game's archive template renders every history entry of the random
matches of the conformance suite (finished and unfinished), with StrictUndefined, in
plain words that name the players and say what the entry holds."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from referee.archive.rounds import Round
from referee.archive.texts import fields, round_text
from referee.games import GAMES
from referee.render import environment
from tests.games.test_conformance import playouts

NAMES = {"p1": "Ann Able", "p2": "Bo Baker"}
T0 = datetime(2026, 12, 1, 18, 0, tzinfo=timezone.utc)
GAMES_WITH_TEMPLATES = [
    "betting-minority",
    "indian-poker",
    "matchjack",
    "nomination",
    "rewind-holdem",
    "stationary-roulette",
]


def context(game_name: str, view: dict[str, Any]) -> dict[str, Any]:
    game = GAMES[game_name]
    return {
        "match": {"id": "m7", "title": game.title, "game": game_name, "season": "Winter season"},
        "players": [{"id": key, "name": name} for key, name in NAMES.items()],
        "view": view,
    }


def rounds_of(view: dict[str, Any]) -> list[Round]:
    return [
        Round(number=i + 1, entry=entry, closed_at=T0 + i * timedelta(hours=25), step_key=None)
        for i, entry in enumerate(view["history"])
    ]


def texts(game_name: str, state: dict[str, Any]) -> list[tuple[Round, str, str]]:
    view = GAMES[game_name].view(state, None)
    return [(r, *round_text(game_name, context(game_name, view), r)) for r in rounds_of(view)]


def test_every_game_has_its_own_archive_template():
    for name in GAMES:
        assert environment().get_template(f"archive/{name}/round.txt"), name
    assert sorted(GAMES) == GAMES_WITH_TEMPLATES


@pytest.mark.parametrize("name", GAMES_WITH_TEMPLATES)
def test_every_entry_of_finished_and_unfinished_matches_renders(name):
    rendered = 0
    for out in playouts(name):
        for state in (out.states[len(out.states) // 2], out.states[-1]):
            for r, title, text in texts(name, state):
                rendered += 1
                assert title.startswith(f"{GAMES[name].title} m7: ") and "\n" not in title
                assert text.startswith(f"{title.split(': ', 1)[1]} of the {GAMES[name].title} match m7 (Winter season)")
                assert "Ann Able" in text and "Bo Baker" in text
                assert not re.search(r"\bp[12]\b", text), text  # players by their names, never their ids
                assert f"closed {(T0 + (r.number - 1) * timedelta(hours=25)):%a %-d %b %Y, %H:%M} UTC" in text
                assert "\n\n\n" not in text and all(line == line.rstrip() for line in text.splitlines())
    # a nomination settles in one to a few entries (the other games play tens of rounds)
    assert rendered > (30 if GAMES[name].game_type.season_step else 100)


def test_the_last_round_of_a_finished_match_tells_the_result():
    for name in GAMES_WITH_TEMPLATES:
        for out in playouts(name, first=5):
            (*earlier, (_, _, last)) = texts(name, out.states[-1])
            assert "=== The match is over ===" in last
            assert not any("The match is over" in text for _, _, text in earlier)
            outcome = GAMES[name].result(out.states[-1]).outcome
            assert f"Ann Able: {outcome['p1']}, victory points" in last


def roulette_entry(name: str, predicate) -> dict[str, Any]:
    for out in playouts("stationary-roulette"):
        for entry in GAMES["stationary-roulette"].view(out.states[-1], None)["history"]:
            if predicate(entry):
                return entry
    raise AssertionError(f"no {name} among the playouts")


def render_entry(game_name: str, entry: dict[str, Any], number: int = 2) -> str:
    view = {"history": [entry] * number, "final": None}
    return round_text(game_name, context(game_name, view), Round(number, entry, T0, None))[1]


def test_roulette_text_tells_colours_bets_points_chips_and_inactivity():
    entry = roulette_entry("round with a missed bet", lambda e: any(rl["bet_missed"] for rl in e["roulettes"]))
    text = render_entry("stationary-roulette", entry)
    for rl in entry["roulettes"]:
        preparer, bettor = NAMES[rl["preparer"]], NAMES[rl["bettor"]]
        assert f"Roulette prepared by {preparer}" in text and f"bet on by {bettor}:" in text
        assert f"Winning colour, revealed now: {rl['winning']}." in text
    assert "(no bet arrived, so 0 on every colour)" in text and "Inactivity:" in text
    for p, name in NAMES.items():
        assert f"  {name}: {entry['points'][p]} points (+{entry['points_gained'][p]} this round)" in text
        assert f"{entry['chips'][p]} chips" in text
    for pay in entry["payments"]:
        assert f"paid {NAMES.get(pay['to'], 'the LGT (the house)')} {pay['paid']} chips ({pay['reason']})" in text


def test_roulette_preparation_phase_keeps_the_prepared_colours_secret():
    entry = roulette_entry("preparation phase", lambda e: e["round"] == 0 and all(e["prepared"].values()))
    text = render_entry("stationary-roulette", entry, number=1)
    assert "there is nothing to bet on yet" in text
    assert "Ann Able prepared a roulette for round 1 (its winning colour stays secret until then)." in text
    assert not re.search(r"Gold|Silver|Black", text.split("Winning colours left")[0].split("Chip movements")[0])


def test_duel_texts_show_the_cards_the_actions_and_the_pot():
    out = playouts("indian-poker", first=1)[0]
    for r, _, text in texts("indian-poker", out.states[-1]):
        h = r.entry
        assert f"Cards: Ann Able had {h['cards']['p1']}, Bo Baker had {h['cards']['p2']}" in text
        assert all(f"{NAMES[a['seat']]}: {a['command']}" in text for a in h["actions"])
        assert f"Chips after hand {h['hand']}: Ann Able {h['stacks']['p1']}, Bo Baker {h['stacks']['p2']}" in text
        if not h["tie"]:
            assert f"{NAMES[h['winner']]} takes the pot of {h['pot']} chip" in text
    out = playouts("rewind-holdem", first=2)[1]
    for r, _, text in texts("rewind-holdem", out.states[-1]):
        h = r.entry
        assert f"Cards: Ann Able held {h['hidden']['p1']}, Bo Baker held {h['hidden']['p2']}" in text
        assert all(f"{NAMES[a['player']]}: {a['command']}" in text for a in h["actions"])
        assert f"Chips after round {h['round']}: Ann Able {h['chips']['p1']}, Bo Baker {h['chips']['p2']}." in text


def test_a_game_without_a_template_of_its_own_lists_the_entry():
    entry = {
        "round": 3,
        "winner": "p2",
        "cards": {"p1": [1, 2], "p2": [3]},
        "bets": [{"player": "p1", "amount": 4, "all_in": False}],
        "paid": [{"from": "p1", "to": "LGT"}],
        "penalty": None,
        "notes": [],
    }
    view = {"history": [entry]}
    round_ = Round(1, entry, T0, "round-3")
    ctx = {
        **context("stationary-roulette", view),
        "match": {"id": "x1", "title": "Tiny", "game": "tiny", "season": "S"},
    }
    title, text = round_text("tiny", ctx, round_)
    assert title == "Tiny x1: round 1"
    assert text.splitlines() == [
        "Round 1 of the Tiny match x1 (S), Ann Able against Bo Baker, closed Tue 1 Dec 2026, 18:00 UTC.",
        "",
        "round: 3",
        "winner: Bo Baker",
        "cards:",
        "  Ann Able: 1, 2",
        "  Bo Baker: 3",
        "bets:",
        "  1:",
        "    player: Ann Able",
        "    amount: 4",
        "    all_in: no",
        "paid:",
        "  1:",
        "    from: Ann Able",
        "    to: the LGT (the house)",
        "penalty: -",
        "notes: none",
    ]
    titled = {"title": "Round 3 of 5", **entry}
    assert (
        round_text("tiny", {**ctx, "view": {"history": [titled]}}, Round(1, titled, T0, None))[0]
        == "Tiny x1: Round 3 of 5"
    )


def test_fields_keeps_the_entry_order():
    assert list(fields({"b": 1, "a": {"z": True, "y": "p1"}}, {"p1": "Ann"})) == ["b: 1", "a:", "  z: yes", "  y: Ann"]
