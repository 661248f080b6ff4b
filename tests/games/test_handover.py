"""A seat handed to another player (``referee substitute``; RULINGS, "Seasons"), on the
conformance suite's random playouts of every game: :func:`referee.games.base.hand_over`
at sampled states of each match, for every acting seat.

* The old key is gone from the state (as a key, a value, a word of a text), the state is
  JSON, and handing the seat back gives the very state it was.
* The new player sees exactly what the old one saw (their view, form and sample moves,
  with the key and the display name written as the new player's); every other player's
  view and the public view change only by the name.
* The match plays on to a result with the new player in the seat (their moves accepted,
  the deadlines closing), and the result ranks the new player, never the old one.
* A season step, a match that is over, a player with no seat and a new key that the
  state mentions already are refused (GameError).
"""

from __future__ import annotations

import functools
import json
import random
import re
from typing import Any

import pytest

from referee.games import GAMES
from referee.games.base import GameError, hand_over, open_steps, time_out, timed_steps

from .test_conformance import MAX_EVENTS, NAMES, Playout, acting, as_json, play

STATES = 12  # sampled (state, seat) pairs per game
NEW, NEW_NAME = "zed", "Zed Newcomer"


def renamed(data: Any, old: str, old_name: str | None) -> Any:
    """``data`` as the new player's: the key and (where the game keeps names) the name."""
    text = json.dumps(data)
    text = re.sub(r"(?<![\w@.+-])" + re.escape(old) + r"(?![\w@-]|\.\w)", NEW, text)  # a whole word
    if old_name:
        text = re.sub(re.escape(old_name) + r"(?!\w)", NEW_NAME, text)
    return json.loads(text)


@functools.cache
def playouts(name: str) -> tuple[Playout, ...]:
    """Two of the conformance suite's random playouts (its own are many more: time)."""
    return tuple(play(GAMES[name], seed) for seed in (0, 1))


def cases(name: str) -> list[tuple[Any, int, str]]:
    pick = random.Random(f"handover:{name}")
    pool = [(out, k, p) for out in playouts(name) for k in range(len(out.states) - 1) for p in acting(out)]
    return pick.sample(pool, min(STATES, len(pool)))


@pytest.mark.parametrize("name", NAMES)
def test_a_seat_handed_over_is_the_same_seat_under_a_new_player(name: str) -> None:
    game = GAMES[name]
    for out, k, p in cases(name):
        state = out.states[k]
        old_name = (out.options.get("names") or {}).get(p)
        if game.game_type.season_step:
            with pytest.raises(GameError, match="not handed over"):
                hand_over(game, state, p, NEW, NEW_NAME)
            continue
        handed = hand_over(game, state, p, NEW, NEW_NAME)
        assert as_json(handed) == handed
        text = json.dumps(handed)
        assert f'"{p}"' not in text and f" {p} " not in text, (name, out.seed, k, p)
        assert hand_over(game, handed, NEW, p, old_name or NEW_NAME) == state, "handing back restores the seat"
        # the new player sees what the old one saw; the others only see the name change
        assert game.view(handed, NEW) == renamed(game.view(state, p), p, old_name)
        assert game.form(handed, NEW) == renamed(game.form(state, p), p, old_name)
        assert game.view(handed, None) == renamed(game.view(state, None), p, old_name)
        for q in acting(out):
            if q != p:
                assert game.view(handed, q) == renamed(game.view(state, q), p, old_name)
        assert list(game.awaiting(handed)) == [NEW if q == p else q for q in game.awaiting(state)]
        rnd = random.Random(f"{name}:{out.seed}:{k}")
        moves = game.sample_moves(state, p, random.Random(1))
        assert game.sample_moves(handed, NEW, random.Random(1)) == renamed(moves, p, old_name)
        # ... and plays the match out in that seat
        players = [NEW if q == p else q for q in out.players]
        result = play_out(out, handed, players, p, rnd)
        assert p not in result.outcome and NEW in result.outcome
        if game.game_type.ranked:
            assert sorted(result.ranking) == sorted(NEW if q == p else q for q in acting(out))


def play_out(out: Any, state: Any, players: list[str], old: str, rnd: random.Random) -> Any:
    game = out.game
    start = {(NEW if q == old else q): n for q, n in out.season_start.items()}
    holdings0 = {
        m: {(NEW if q == old else q): n for q, n in h.items()} for m, h in out.options.get("holdings", {}).items()
    }
    for _ in range(MAX_EVENTS):
        steps = open_steps(game, state)
        if not steps:
            result = game.result(state)
            assert result is not None
            return result
        if game.game_type.reads:
            state = game.with_holdings(state, holdings(state, holdings0, players))  # type: ignore[attr-defined]
        movers = [
            (q, m)
            for q in dict.fromkeys(q for s in steps for q in s.players)
            if (m := game.sample_moves(state, q, rnd))
        ]
        assert old not in dict(movers)
        if movers and rnd.random() < 0.8:
            q, moves = rnd.choice(movers)
            applied = game.apply_move(state, q, rnd.choice(moves))
            assert applied.accepted, applied.reason
            state = applied.state
        else:
            step = rnd.choice(timed_steps(game, state))
            balances = {q: start[q] + net(state, q, "chips") for q in players}
            state = time_out(game, game.with_balances(state, balances), step.key)
    raise AssertionError(f"{game.name}: no end after {MAX_EVENTS} events after a handover")


def net(state: Any, account: str, money: str) -> int:
    total = 0
    for t in state["transfers"]:
        if t.get("currency", "chips") == money:
            total += t["amount"] if t["to"] == account else -t["amount"] if t["from"] == account else 0
    return total


def holdings(state: Any, start: dict[str, dict[str, int]], players: list[str]) -> dict[str, dict[str, int]]:
    return {m: {q: start[m][q] + net(state, q, m) for q in players} for m in start}


@pytest.mark.parametrize("name", NAMES)
def test_a_handover_is_refused_when_it_cannot_be_told_apart(name: str) -> None:
    game = GAMES[name]
    out = playouts(name)[0]
    with pytest.raises(GameError):
        hand_over(game, out.states[-1], acting(out)[0], NEW, NEW_NAME)  # the match is over
    if game.game_type.season_step:
        return
    state = out.states[0]
    with pytest.raises(GameError, match="no seat"):
        hand_over(game, state, "nobody", NEW, NEW_NAME)
    with pytest.raises(GameError, match="already appears"):
        hand_over(game, state, acting(out)[0], acting(out)[1], NEW_NAME)  # another seat's key
