"""Conformance: every game in ``referee.games.GAMES`` against the protocol of
:mod:`referee.games.base`, on seeded random playouts (after OpenSpiel's random-simulation
test). A game joins by being registered; nothing here names a game except one check
of the Stationary Roulette variants at the end.

A playout (``PLAYOUTS`` seeds per game, fewer for a game whose playouts reach
``MAX_STATES`` states first, ``MIN_PLAYOUTS`` at least) starts from ``initial_state(seed, players,
options)`` with ``min_players`` players and the options the service passes when a
match starts (``MatchBook.start``: the match options, empty here, plus ``chips``, the
players' season balances, for every game). At each event it either applies one of the
``sample_moves`` of a player of the open step (``apply_move``, logged as the service
logs a move) or closes the step (``with_balances`` with the live season balances, the
starting ones plus the season-chip transfers so far, then ``apply_timeout``, logged
with those balances as ``MatchBook.close_step`` does). In a game of concurrent steps the
moves come from the players of every open step, and a deadline closes one of the timed
steps (``apply_timeout(state, key)``, logged with its key); a game that reads season
currencies gets their live holdings before every move and deadline (``with_holdings``,
logged). A simultaneous step of a game of mixed steps in which everyone has sent a move
closes at its deadline half the time (revisions go on otherwise). What is checked, per property:

* protocol: ``game_type`` is a :class:`GameType`, ``step_kinds`` mirrors it, the roles
  fit ``min_players``..``max_players``; a game of concurrent steps lists them (open steps
  have distinct keys, ``step`` is the first, a waiting step lists nobody, and some open
  step always has a deadline); every step's kind is a declared kind, its
  ``simultaneous`` flag matches the dynamics (either, in a game of mixed steps), a step
  that is not simultaneous lists at most one player, no step lists a silent seat, an
  extension names the step whose deadline opened it; ``awaiting`` is within the step's
  players; ``step`` is None exactly when ``result`` is not; a deadline always moves the
  step on; a player outside the step has no sample moves; no call changes the state it
  is given.
* termination: every playout ends within ``MAX_EVENTS`` events with ``result()`` not
  None (an outcome and victory points per player, silent seats aside) and ``step()`` None; then nobody is
  awaited or has sample moves, ``apply_timeout`` raises GameError and a move is
  rejected without change.
* ranking: a game whose ``game_type.ranked`` is true ends every playout with a
  ``result.ranking`` that lists the acting players (every seat but the silent ones), each
  once; when some player has the outcome "win", the first of the ranking is a winner and
  the last has the outcome "loss"; the ranking is the same on the final state rebuilt by
  replaying the logged events, and on its JSON round trip (a season reads a main match's
  winner and EC from it: RULINGS, "Seasons").
* conservation: transfers are append-only (the service copies only the entries beyond
  the old length), each a positive whole amount between two different accounts in a
  declared currency; per currency they sum to zero over the accounts (true by
  construction, checked anyway); a player's season balance (starting chips plus
  season-chip transfers) is never below 0; at the end no season chips are left in an
  account that is neither a player nor the house (a pot nobody won). Reported chips
  must match the transfers where the public view exposes them: ``view["stacks"][p]``
  (match chips) must move by exactly the player's net match-chip transfers since the
  initial state, and ``view["standings"][p]["chips"]`` (season chips) must equal the
  live season balance. A game that exposes neither is checked on the transfers only
  (pots and other accounts of a game's own are not looked at).
* replay: :func:`referee.match.book.replay` itself (with stand-ins for the Match and
  Event rows) rebuilds the final state and a few intermediate ones from the seed, the
  stored (JSON) options and the logged events; a game without chance gives every player
  the same views when the log is replayed from another seed.
* JSON: every state (and every view) survives ``json.dumps``/``json.loads`` unchanged
  (no tuples, no non-string keys, no NaN), and play continued from a round-tripped state
  mid-match ends in the same final state.
* sample moves: every one of them, on every state, is accepted.
* forms: when a player has something to do (has sample moves), ``form`` is not empty
  and ``parse`` reads it back to moves that ``apply_move`` accepts, in order; when not,
  ``form`` is empty (the templates then say there is nothing to send).
* indistinguishability (``tests/games/test_conformance_hidden.py``, a file of its own so that
  two workers run it beside the rest): for every state and every player, every ``hidden_variants``
  state gives that player the same view, form and rendered mails (``step``; while the
  match runs ``receipt``, ``reminder``, ``error`` with the game's ``now.txt`` and
  ``spoof``; once it is over in a game of turns, the last ``receipt``; with a context built as
  ``Notices.context`` builds it: the same context, which is all a template sees, and every
  kind of mail is rendered on the state itself), the same step and result, and accepts a sample move
  of that player (legality never depends on what the player cannot know); the public
  view and the organizers' standings are the same on it too, so the public view never
  shows what a player may not know. Every acting player is checked at every state (of
  a seeded sample of the states, ``HIDDEN_CHECKS`` (state, player) pairs, when a game's
  playouts hold more); the
  silent seats (which never act) one per state, in turn. Every variant is JSON; the
  first of each state and player is also shown valid: the sample moves of every player
  checked are accepted on it, their views and forms can be built, and a deadline can
  close it.
"""

from __future__ import annotations

import functools
import gc
import json
import marshal
import os
import pickle
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from jinja2 import TemplateNotFound

from referee.games import GAMES
from referee.games.base import (
    DYNAMICS,
    HOUSE,
    MATCH_CHIPS,
    MIXED,
    SEASON_CHIPS,
    SIMULTANEOUS,
    Game,
    GameError,
    GameType,
    State,
    open_steps,
    time_out,
    timed_steps,
)
from referee.match.book import replay
from referee.render import environment, render_mail
from tests import demo_runs
from tests.games.mail_context import mail_context as shared_context

# seeds per game; REFEREE_CONFORMANCE_PLAYOUTS=300 for a long run
PLAYOUTS = int(os.environ.get("REFEREE_CONFORMANCE_PLAYOUTS", "30"))
MAX_EVENTS = 5000  # a generous bound on the events (moves and deadlines) of a random match
# a game's playouts stop once they hold this many states (after MIN_PLAYOUTS of them at
# least): a game of many steps and seats (MatchJack: some 230 a match, six players) costs no
# more than the others; the rest play all PLAYOUTS seeds (Betting Minority: 3,244 states)
MAX_STATES = 120 * PLAYOUTS
MIN_PLAYOUTS = min(PLAYOUTS, 10)
# the hidden-information check looks at about this many (state, acting player) pairs of a
# game's playouts (all of them when they hold fewer; else a seeded sample of the states,
# spread over every playout): a game of many small steps or many seats costs no more than
# the longest of the others (two players: 1,500 states)
HIDDEN_CHECKS = 100 * PLAYOUTS
# ... and, when it samples, about this many pairs more of other states, drawn with the run's
# rotating seed (printed in the test run's header and summary; REFEREE_CONFORMANCE_SEED=N
# draws them again), so that run after run the check reaches states the fixed sample misses
HIDDEN_ROTATING = 20 * PLAYOUTS
NAMES = sorted(GAMES)


def as_json(data: Any) -> Any:
    """``data`` as the store gives it back (a JSON column): through orjson, as the store
    writes it (several times quicker than the stdlib's json on a large state), else the
    stdlib's for what orjson refuses (a non-string key, an integer beyond 64 bits: the key
    comes back a string, so the round trip differs and the check fails as it did with
    json). A tuple comes back a list, NaN comes back None (json refused it): either way the
    round trip is not equal and the check fails."""
    try:
        return orjson.loads(orjson.dumps(data))
    except TypeError:  # orjson.JSONEncodeError is one
        return json.loads(json.dumps(data, allow_nan=False))


def currency(t: dict[str, Any]) -> str:
    return str(t.get("currency", SEASON_CHIPS))


def net(transfers: list[dict[str, Any]], account: str, money: str) -> int:
    """What ``account`` received minus what it paid, in ``money``."""
    return sum(t["amount"] * ((t["to"] == account) - (t["from"] == account)) for t in transfers if currency(t) == money)


def nets(transfers: list[dict[str, Any]], money: str) -> Counter[str]:
    """:func:`net` of every account at once, in one pass over the transfers (a late state of
    MatchJack holds some 170 transfers, read for each player before every event)."""
    found: Counter[str] = Counter()
    for t in transfers:
        if currency(t) == money:
            found[t["to"]] += t["amount"]
            found[t["from"]] -= t["amount"]
    return found


@dataclass
class Playout:
    game: Game
    seed: int
    players: list[str]
    options: dict[str, Any]
    season_start: dict[str, int]  # the players' season balances when the match starts
    events: list[SimpleNamespace]  # kind, player, payload: as MatchBook logs them
    states: list[State]  # states[0] the initial state, states[k + 1] the state after events[k]

    def balances(self, state: State) -> dict[str, int]:
        """The live season balances: the starting ones plus the season-chip transfers so far."""
        moved = nets(state["transfers"], SEASON_CHIPS)
        return {p: self.season_start[p] + moved[p] for p in self.players}

    def holdings(self, state: State) -> dict[str, dict[str, int]]:
        """The live balances of the season currencies the game reads (``GameType.reads``):
        the starting ones plus the transfers so far, as ``MatchBook.holdings`` gives them."""
        start = self.options.get("holdings", {})
        return {
            money: {p: start[money][p] + moved[p] for p in self.players}
            for money in self.game.game_type.reads
            for moved in [nets(state["transfers"], money)]
        }

    def held(self, state: State) -> tuple[State, dict[str, Any]]:
        """``state`` with the live holdings, and the payload entry that records them, as
        ``MatchBook.with_holdings`` does before every move and deadline (nothing for most games)."""
        if not self.game.game_type.reads:
            return state, {}
        holdings = self.holdings(state)
        return pure(self.game.with_holdings, state, holdings), {"holdings": holdings}  # type: ignore[attr-defined]

    def rnd(self, *labels: object) -> random.Random:
        return random.Random(":".join(map(str, (self.game.name, self.seed, *labels))))


def acting(out: Playout) -> list[str]:
    """The players at seats that act (every seat but the game's silent ones)."""
    roles = out.game.game_type.roles
    silent = set(out.game.game_type.silent_roles)
    return [p for i, p in enumerate(out.players) if roles[min(i, len(roles) - 1)] not in silent]


def unchanged(state: State) -> bytes:
    """The state's exact contents: a marshal (exact for plain data, types and key order
    included, and a quarter quicker than a pickle on a large state), else a pickle (for
    anything marshal cannot write). Version 2, which writes no back-references: later
    versions mark an object shared only while something else holds it too, so the same
    state could give other bytes after a call that kept a reference to a part of it."""
    try:
        return marshal.dumps(state, 2)
    except ValueError:
        return pickle.dumps(state, pickle.HIGHEST_PROTOCOL)


def pure(call: Callable[..., Any], state: State, *args: Any) -> Any:
    """``call(state, *args)``, checking that it leaves ``state`` as it was."""
    before = unchanged(state)
    answer = call(state, *args)
    assert unchanged(state) == before, f"{getattr(call, '__name__', call)} changed the state it was given"
    return answer


def play(game: Game, seed: int) -> Playout:
    """One random match, checking the step-level protocol on the way."""
    rnd = random.Random(f"{game.name}:{seed}")
    players = [f"p{i + 1}" for i in range(game.min_players)]
    # mostly well-off players, now and then a poor one (bankruptcies)
    season_start = {p: rnd.randint(0, 30) if rnd.random() < 0.2 else rnd.randint(100, 400) for p in players}
    options: dict[str, Any] = {"chips": season_start}  # MatchBook.start passes the season balances to every game
    if game.game_type.names:  # ... and the seats' names to a game that reads them
        options["names"] = {p: f"Player {p.upper()}" for p in players}
    if game.game_type.reads:  # ... and the holdings of the season currencies it reads (garnets)
        options["holdings"] = {
            money: {p: rnd.choice([0, 2, 5, 9, 30]) for p in players} for money in game.game_type.reads
        }
    options = as_json(options)
    state = game.initial_state(seed, players, options)
    out = Playout(game, seed, players, options, season_start, [], [state])
    # how often a deadline passes instead of a move: some matches diligent, some sloppy
    deadlines = rnd.choice([0.15, 0.3, 0.5]) if game.game_type.dynamics == SIMULTANEOUS else rnd.choice([0.02, 0.1])
    for _ in range(MAX_EVENTS):
        steps = open_steps(game, state)
        assert (not steps) == (game.result(state) is not None)
        assert (game.step(state) is None) == (not steps) and (not steps or game.step(state) in steps)
        if not steps:
            return out
        assert len({s.key for s in steps}) == len(steps), "two open steps share a key"
        timed = timed_steps(game, state)
        assert timed, "only waiting steps are open: nothing can move the match on"
        acting_now = list(dict.fromkeys(p for s in steps for p in s.players))
        movers = [(p, moves) for p in acting_now if (moves := pure(game.sample_moves, state, p, rnd))]
        # a simultaneous step of a game of mixed steps in which everyone has sent a move is
        # only revised now and then before its deadline (else its revisions would be endless)
        awaited = set(game.awaiting(state))
        settled = [s for s in timed if s.simultaneous and s.players and not awaited & set(s.players)]
        if gt_mixed(game) and settled and rnd.random() < 0.5:
            movers, timed = [], tuple(settled)
        if movers and rnd.random() >= deadlines:
            player, moves = rnd.choice(movers)
            move = rnd.choice(moves)
            state, held = out.held(state)
            logged = as_json({"move": move, "accepted": True, **held})
            applied = pure(game.apply_move, state, player, move)
            assert applied.accepted and applied.changed, (move, applied.reason)
            assert move == logged["move"], "apply_move changed the move it was given"
            out.events.append(SimpleNamespace(kind="move", player=player, payload=logged, step_key=None))
            state = applied.state
        else:
            # the deadline of one timed step passes (in a game of concurrent steps, any of them)
            step = rnd.choice(timed) if len(timed) > 1 else timed[0]
            balances = out.balances(state)
            assert min(balances.values()) >= 0, f"a season balance went below 0: {balances}"
            missing = [p for p in game.awaiting(state) if p in step.players]
            state, held = out.held(state)
            payload = as_json({"missing": missing, "title": step.title, "balances": balances, **held})
            state = pure(functools.partial(time_out, game), pure(game.with_balances, state, balances), step.key)
            after = open_steps(game, state)
            assert all(s.key != step.key for s in after), f"apply_timeout left step {step.key} open"
            assert all(s.extends in (None, step.key) or s in steps for s in after), "an extension names another step"
            out.events.append(SimpleNamespace(kind="timeout", player=None, payload=payload, step_key=step.key))
        out.states.append(state)
    raise AssertionError(f"{game.name} seed {seed}: no end after {MAX_EVENTS} events")


def gt_mixed(game: Game) -> bool:
    return game.game_type.dynamics == MIXED


# name -> the playouts played so far, seed after seed; the games whose playouts are all played
_PLAYED: dict[str, list[Playout]] = {}
_COMPLETE: set[str] = set()


def playouts(name: str, first: int | None = None) -> tuple[Playout, ...]:
    """The game's playouts: seeds 0, 1, 2, ... until ``PLAYOUTS`` of them or, after
    ``MIN_PLAYOUTS``, the state budget. ``first``: the first so many only (``playouts(name)[:first]``),
    played no further than that: a test that reads a few of a game's playouts does not play
    them all (MatchJack's take some 13 s). Each is played once per worker."""
    if first is None and name not in _COMPLETE and demo_runs.SHARED is not None:
        _shared_playouts(name, demo_runs.SHARED)
    played = _play(name, first)
    return tuple(played if first is None else played[:first])


def _play(name: str, first: int | None) -> list[Playout]:
    """The game's playouts played so far, played on to the first ``first`` (None: all)."""
    played = _PLAYED.setdefault(name, [])
    while name not in _COMPLETE and (first is None or len(played) < first):
        states = sum(len(o.states) for o in played)
        if len(played) >= PLAYOUTS or (len(played) >= MIN_PLAYOUTS and states >= MAX_STATES):
            _COMPLETE.add(name)
            break
        played.append(play(GAMES[name], len(played)))
        # the playouts stay for the whole worker: out of the garbage collector's way (it would
        # walk their millions of objects again at every full collection while states are cloned)
        gc.freeze()
    return played


def _shared_playouts(name: str, root: Path) -> None:
    """All of the game's playouts, played by the first worker that asks and read from its
    pickle by the others (three test files read all of MatchJack's: some 13 s to play, 3 s
    to read); each is played as :func:`playouts` plays it, seed after seed."""
    folder = root / "playouts"
    folder.mkdir(exist_ok=True)
    with demo_runs.made_once(folder, f"{name}.pickle") as pickled:
        if not pickled.exists():
            fields = [(o.seed, o.players, o.options, o.season_start, o.events, o.states) for o in _play(name, None)]
            pickled.with_suffix(".part").write_bytes(pickle.dumps(fields, pickle.HIGHEST_PROTOCOL))
            pickled.with_suffix(".part").rename(pickled)
            return
        fields = pickle.loads(pickled.read_bytes())
    _PLAYED[name] = [Playout(GAMES[name], *f) for f in fields]
    _COMPLETE.add(name)
    gc.freeze()  # as the playouts played here (see playouts)


# --------------------------------------------------------------------------- the mail


def mail_context(game: Game, state: State, player: str, players: list[str]) -> dict[str, Any]:
    """What ``Notices.context`` gives a template, without a database."""
    names = {p: f"Player {p.upper()}" for p in players}
    return shared_context(
        game,
        state,
        player,
        names,
        match_id="m-1",
        season="Conformance season",
        reply_to="referee+m-1.token@example.org",
    )


# the extras the service adds to the match context for each kind of mail it sends while a step is open
RUNNING_MAIL_EXTRAS = {
    "receipt": {"ignored": {"lines": ["Hello!"], "more": 0}, "truncated": False},
    "reminder": {"left": "5 hours"},
    # an error reply shows what the player may do now (each game's now.txt)
    "error": {
        "error": {"reason": "That is not allowed now.", "line": "RAISE 99", "penalised": False},
        "quoted": {"lines": ["RAISE 99"], "more": 0},
        "truncated": False,
    },
    "spoof": {"sender": "eve@example.test", "from_line": "eve@example.test", "dmarc_failed": False, "received": None},
}
# the mails of a match that is over: the final step mail, and in a game of turns (whose last
# move ends it) the mover's receipt
FINAL_MAIL_EXTRAS = {"step": {}, "receipt": RUNNING_MAIL_EXTRAS["receipt"]}


@functools.cache
def has_template(game: str, kind: str) -> bool:
    for folder in (game, "common"):
        try:
            environment().get_template(f"mail/{folder}/{kind}.txt")
            return True
        except TemplateNotFound:
            pass
    return False


def mails(
    game: Game, state: State, player: str, players: list[str], context: dict[str, Any] | None = None
) -> list[tuple[str, str]]:
    """The mails ``player`` may get in this state, rendered as the service renders them
    (``context``: ``mail_context`` of the same arguments, when the caller has it already)."""
    if context is None:
        context = mail_context(game, state, player, players)
    # a template sees nothing but its context: a context rendered already (the same player's
    # context in another state that differs only in what the mails do not show) gives the
    # same mails, so they are rendered once
    try:
        key = (game.name, orjson.dumps(context, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS))
    except TypeError:
        key = None
    if key is not None and key in _RENDERED:
        return _RENDERED[key]
    if context["step"] is not None:  # a step is open (the first of open_steps: ``step`` is not None)
        kinds = {"step": {}, **RUNNING_MAIL_EXTRAS}
    elif game.game_type.dynamics != SIMULTANEOUS:  # a game whose last move can end it
        kinds = FINAL_MAIL_EXTRAS
    else:
        kinds = {"step": {}}
    rendered = []
    for kind, extra in kinds.items():
        if kind != "step" and not has_template(game.name, kind):
            continue
        mail = render_mail(game.name, kind, {**context, **extra})
        rendered.append((mail.subject, mail.text))
    if key is not None:
        if len(_RENDERED) >= 5_000:
            _RENDERED.clear()
        _RENDERED[key] = rendered
    return rendered


# (game, the context as JSON) -> its mails, as :func:`mails` rendered them
_RENDERED: dict[tuple[str, bytes], list[tuple[str, str]]] = {}


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("name", NAMES)
def test_declares_the_protocol(name: str) -> None:
    game = GAMES[name]
    assert game.name == name
    assert isinstance(game.game_type, GameType)
    gt = game.game_type
    assert gt.dynamics in DYNAMICS
    assert set(gt.currencies) <= {SEASON_CHIPS, MATCH_CHIPS, *gt.reads}
    assert gt.concurrent == callable(getattr(game, "steps", None)), "a game of concurrent steps lists them"
    if gt.reads:
        assert callable(getattr(game, "with_holdings", None)), f"{name} reads {gt.reads} but has no with_holdings"
    assert 1 <= game.min_players <= len(gt.roles) <= game.max_players
    assert dict(game.step_kinds) == dict(gt.step_kinds)
    assert all(isinstance(k, str) and isinstance(v, str) and v for k, v in gt.options.items())
    for method in ("sample_moves", "hidden_variants"):
        assert callable(getattr(game, method, None)), f"{name} has no {method}"


@pytest.mark.parametrize("name", NAMES)
def test_random_playouts_terminate_with_a_result(name: str, record_property: Any) -> None:
    played = playouts(name)
    states = sum(len(o.states) for o in played)
    # the state budget: the playouts stop at the first one that reaches it (MIN_PLAYOUTS at least)
    assert len(played) <= MIN_PLAYOUTS or states - len(played[-1].states) < MAX_STATES, (len(played), states)
    assert len(played) == PLAYOUTS or states >= MAX_STATES
    record_property(
        "conformance-playouts", {"game": name, "playouts": len(played), "states": states, "budget": MAX_STATES}
    )
    for out in played:
        game, final = out.game, out.states[-1]
        assert game.step(final) is None
        result = game.result(final)
        assert result is not None
        assert set(result.outcome) == set(acting(out)) == set(result.victory_points)
        if not game.game_type.season_step:  # a season's step (the nomination) words its own
            assert set(result.outcome.values()) <= {"win", "loss", "draw"}
        assert result.reason
        assert game.awaiting(final) == ()
        assert all(game.sample_moves(final, p, out.rnd("final")) == [] for p in out.players)
        with pytest.raises(GameError):
            game.apply_timeout(final)
        for ev in out.events[-3:]:
            if ev.kind == "move":
                applied = game.apply_move(final, ev.player, ev.payload["move"])
                assert not applied.accepted and not applied.changed and applied.state == final


@pytest.mark.parametrize("name", [n for n in NAMES if GAMES[n].game_type.ranked])
def test_a_ranked_game_ranks_every_acting_player(name: str) -> None:
    game = GAMES[name]
    for out in playouts(name):
        result = game.result(out.states[-1])
        assert result is not None
        ranking = result.ranking
        assert sorted(ranking) == sorted(acting(out)), f"seed {out.seed}: {ranking} ranks not the acting players"
        if "win" in result.outcome.values():
            assert result.outcome[ranking[0]] == "win", (out.seed, ranking, result.outcome)
            assert result.outcome[ranking[-1]] == "loss", (out.seed, ranking, result.outcome)
        start = SimpleNamespace(kind="start", player=None, payload={"options": out.options}, step_key=None)
        replayed = game.result(replay(game, match_row(out), [start, *out.events]))
        assert replayed is not None and replayed.ranking == ranking, f"seed {out.seed}: a replay ranks otherwise"
        stored = game.result(as_json(out.states[-1]))
        assert stored is not None and stored.ranking == ranking


@pytest.mark.parametrize("name", NAMES)
def test_steps_follow_the_declared_type(name: str) -> None:
    for out in playouts(name):
        game, gt = out.game, out.game.game_type
        for k, state in enumerate(out.states):
            steps = open_steps(game, state)
            if not steps:
                continue
            assert gt.concurrent or len(steps) == 1
            for step in steps:
                if step.waiting:  # no deadline, nobody acts: it ends when the match moves on elsewhere
                    assert gt.concurrent and step.players == () and not step.simultaneous
                    continue
                assert step.kind in gt.step_kinds
                if gt.dynamics != MIXED:
                    assert step.simultaneous == (gt.dynamics == SIMULTANEOUS)
                if not step.simultaneous:
                    assert len(step.players) <= 1
                assert set(step.players) <= set(acting(out)), "a silent seat is asked to act"
            acting_now = {p for step in steps for p in step.players}
            assert set(game.awaiting(state)) <= acting_now
            for p in out.players:
                if p not in acting_now:
                    assert game.sample_moves(state, p, out.rnd(k, p)) == [], (steps, p)


@pytest.mark.parametrize("name", NAMES)
def test_chips_are_conserved(name: str) -> None:
    for out in playouts(name):
        game, gt = out.game, out.game.game_type
        initial = game.view(out.states[0], None)
        for before, after in zip(out.states, out.states[1:], strict=False):
            assert after["transfers"][: len(before["transfers"])] == before["transfers"], "transfers are append-only"
        for state in out.states:
            transfers = state["transfers"]
            for t in transfers:
                assert {"from", "to", "amount", "reason", "step"} <= set(t)
                assert isinstance(t["amount"], int) and not isinstance(t["amount"], bool) and t["amount"] > 0, t
                assert t["from"] != t["to"] and currency(t) in gt.currencies, t
            for money in gt.currencies:
                accounts = {t[side] for t in transfers if currency(t) == money for side in ("from", "to")}
                assert sum(net(transfers, a, money) for a in accounts) == 0
            assert min(out.balances(state).values()) >= 0, "a season balance went below 0"
            public = game.view(state, None)
            for p in out.players:
                if isinstance(public.get("stacks"), dict) and p in public["stacks"] and "stacks" in initial:
                    # what a stack holds moves only by transfers (the initial state may hold some: antes)
                    moved = net(transfers, p, MATCH_CHIPS) - net(out.states[0]["transfers"], p, MATCH_CHIPS)
                    assert public["stacks"][p] == initial["stacks"][p] + moved, (p, public["stacks"])
                row = public.get("standings", {}).get(p) if isinstance(public.get("standings"), dict) else None
                if SEASON_CHIPS in gt.currencies and isinstance(row, dict) and "chips" in row:
                    assert row["chips"] == out.balances(state)[p]
        final = out.states[-1]["transfers"]
        stuck = {t[side] for t in final if currency(t) == SEASON_CHIPS for side in ("from", "to")}
        stuck -= {*out.players, HOUSE}
        assert all(net(final, a, SEASON_CHIPS) == 0 for a in stuck), "season chips left in a pot"


def match_row(out: Playout, seed: int | None = None) -> SimpleNamespace:
    """A stand-in for the Match row ``replay`` reads: seed, stored options, seats."""
    seats = [SimpleNamespace(player=SimpleNamespace(key=p)) for p in out.players]
    return SimpleNamespace(seed=out.seed if seed is None else seed, options=as_json(out.options), seats=seats)


@pytest.mark.parametrize("name", NAMES)
def test_the_event_log_replays_the_match(name: str) -> None:
    for out in playouts(name):
        game = out.game
        start = SimpleNamespace(kind="start", player=None, payload={"options": out.options}, step_key=None)
        assert replay(game, match_row(out), [start, *out.events]) == out.states[-1]
        for k in out.rnd("replay").sample(range(len(out.events) + 1), min(3, len(out.events) + 1)):
            assert replay(game, match_row(out), [start, *out.events[:k]]) == out.states[k]
        if not game.game_type.chance:
            other = replay(game, match_row(out, seed=out.seed + 1000), out.events)
            for p in [*out.players, None]:
                assert game.view(other, p) == game.view(out.states[-1], p), "a game without chance depends on its seed"


@pytest.mark.parametrize("name", NAMES)
def test_states_and_views_survive_json(name: str) -> None:
    for out in playouts(name):
        game = out.game
        for state in out.states:
            assert as_json(state) == state
            for p in [*out.players, None]:
                view = game.view(state, p)
                assert as_json(view) == view
        k = out.rnd("json").randrange(len(out.states))
        state = as_json(out.states[k])
        for ev in out.events[k:]:
            if "holdings" in ev.payload:
                state = game.with_holdings(state, ev.payload["holdings"])  # type: ignore[attr-defined]
            if ev.kind == "move":
                state = game.apply_move(state, ev.player, ev.payload["move"]).state
            else:
                state = time_out(game, game.with_balances(state, ev.payload["balances"]), ev.step_key)
        assert state == out.states[-1]


@pytest.mark.parametrize("name", NAMES)
def test_sample_moves_are_accepted(name: str) -> None:
    for out in playouts(name):
        game = out.game
        for k, state in enumerate(out.states):
            before = unchanged(state)
            for p in out.players:
                for move in game.sample_moves(state, p, out.rnd("sample", k, p)):
                    applied = game.apply_move(state, p, move)
                    assert applied.accepted and applied.changed, (move, applied.reason)
                assert unchanged(state) == before, f"{p}'s sample moves changed the state they were given"


@pytest.mark.parametrize("name", NAMES)
def test_forms_parse_back_to_accepted_moves(name: str) -> None:
    for out in playouts(name):
        game = out.game
        for k, state in enumerate(out.states):
            for p in out.players:
                form = game.form(state, p)
                if not game.sample_moves(state, p, out.rnd("form", k, p)):
                    assert form == "", f"nothing to do, yet a form: {form!r}"
                    continue
                moves = game.parse(state, p, form).moves
                assert moves, form
                current = state
                for move in moves:
                    applied = game.apply_move(current, p, move)
                    assert applied.accepted, (form, move, applied.reason)
                    current = applied.state


# --------------------------------------------------------------------------- forfeits

# states per game (a seeded sample over its playouts, the final ones apart) at which every
# acting player forfeits in turn
FORFEIT_STATES = 10


def play_on(out: Playout, state: State, rnd: random.Random) -> State:
    """``state`` played to its end as the playouts play: sample moves, now and then a deadline."""
    game = out.game
    for _ in range(MAX_EVENTS):
        steps = open_steps(game, state)
        if not steps:
            return state
        movers = [
            (p, moves)
            for p in dict.fromkeys(p for s in steps for p in s.players)
            if (moves := game.sample_moves(state, p, rnd))
        ]
        if movers and rnd.random() < 0.8:
            player, moves = rnd.choice(movers)
            state, _ = out.held(state)
            applied = game.apply_move(state, player, rnd.choice(moves))
            assert applied.accepted, applied.reason
            state = applied.state
        else:
            step = rnd.choice(timed_steps(game, state))
            state, _ = out.held(state)
            state = time_out(game, game.with_balances(state, out.balances(state)), step.key)
    raise AssertionError(f"{game.name} seed {out.seed}: no end after {MAX_EVENTS} events after a forfeit")


@pytest.mark.parametrize("name", NAMES)
def test_a_forfeit_is_a_loss_and_the_others_play_on(name: str) -> None:
    """``forfeit(state, player)`` (RULINGS, "Seasons") at states of the playouts, by every acting
    player: it never changes the state it is given and is deterministic; a match of two sides is
    over at once, the forfeiter last of the ranking with the outcome "loss"; in a game of
    concurrent steps (MatchJack) the match may go on: the forfeiter is in no open step, not
    awaited, has no sample moves, and the others play the match out to a result that ranks
    the forfeiter below every player who never left the match, with a "loss". The public view
    says the forfeit; the mails of the new state render; a forfeited state keeps hidden what
    a player may not know. A silent seat, a player who has left the match, and anyone in a
    match that is over cannot forfeit (GameError); nor anyone in a season's step."""
    games_playouts = playouts(name)
    game = GAMES[name]
    pick = random.Random(f"forfeit:{name}")
    pool = [(out, k) for out in games_playouts for k in range(len(out.states) - 1)]
    chosen = pick.sample(pool, min(FORFEIT_STATES, len(pool)))
    for out in games_playouts:  # nobody forfeits a match that is over
        for p in out.players:
            with pytest.raises(GameError):
                pure(game.forfeit, out.states[-1], p)
    for out, k in chosen:
        state = out.states[k]
        silent = [p for p in out.players if p not in acting(out)]
        for p in silent[:2]:
            with pytest.raises(GameError):
                pure(game.forfeit, state, p)
        for i, p in enumerate(acting(out)):
            if game.game_type.season_step:
                with pytest.raises(GameError, match="cannot be forfeited"):
                    pure(game.forfeit, state, p)
                continue
            try:
                new = pure(game.forfeit, state, p)
            except GameError:
                # only a player who has already left the match (a game of concurrent steps)
                assert game.game_type.concurrent and game.view(state, p)["out"], (name, out.seed, k, p)
                continue
            assert as_json(new) == new and pure(game.forfeit, state, p) == new, "a forfeit is deterministic"
            assert "forfeit" in json.dumps(game.view(new, None)), "the public view does not say the forfeit"
            for q in dict.fromkeys([p, acting(out)[(i + 1) % len(acting(out))]]):  # the forfeiter and another
                mails(game, new, q, out.players)
            result = game.result(new)
            if result is None:
                assert game.game_type.concurrent, "a match of two sides ends at its forfeit"
                assert p not in game.awaiting(new) and game.sample_moves(new, p, out.rnd("forfeit", k, p)) == []
                assert all(p not in s.players for s in open_steps(game, new))
                with pytest.raises(GameError):
                    game.forfeit(new, p)
                for q in acting(out):  # what a player may not know stays hidden after a forfeit
                    rnd = out.rnd("forfeit-hidden", k, p, q)
                    view, public, standings = game.view(new, q), game.view(new, None), game.standings(new)
                    for variant in game.hidden_variants(new, q, rnd):
                        assert game.view(variant, q) == view and game.form(variant, q) == game.form(new, q)
                        assert game.view(variant, None) == public and game.standings(variant) == standings
                if i % 2:  # half of them played out (time)
                    continue
                new = play_on(out, new, out.rnd("forfeit-on", k, p))
                result = game.result(new)
                assert result is not None
            assert result.outcome[p] == "loss" and result.victory_points[p] == 0
            assert game.step(new) is None and game.awaiting(new) == ()
            if game.game_type.ranked:
                ranking = result.ranking
                assert sorted(ranking) == sorted(acting(out))
                if game.game_type.concurrent:
                    left = {e["player"] for e in game.view(new, None)["eliminated"]}
                    assert all(ranking.index(q) < ranking.index(p) for q in ranking if q not in left), ranking
                else:
                    assert ranking[-1] == p and result.outcome[ranking[0]] == "win"
