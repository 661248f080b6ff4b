"""The protocol every game engine follows.

A game engine is pure: no I/O, no clock, no global random. The service owns time
and storage; the engine owns the rules.

* A match **state** is plain JSON-serialisable data (dicts, lists, str, int, float,
  bool, None). Engines never mutate the state they are given; they return a new one,
  which may share unchanged parts with it (MatchJack's stay choice copies one dict, not
  the whole state): so no caller changes a state in place either (a step that changes
  one works on a copy of its own: :func:`clone`).
* ``initial_state(seed, players, options)`` builds the state. All randomness comes
  from :func:`rng`, derived from the match seed, so the seed plus the log of
  accepted moves and closed deadlines rebuilds any match exactly.
* ``step(state)`` says what is open now: a :class:`Step` with a key unique within
  the match, a *kind* (the service looks its deadline up per game and per kind),
  who may act, and whether the step is simultaneous (as ``game_type.dynamics`` says; a
  sequential step lists at most one player). ``None`` means the match is over.
* ``awaiting(state)`` names the players whose submission for the open step is
  still missing (reminders go to them; ``referee status`` shows it).
* **Concurrent steps.** A game whose ``game_type.concurrent`` is true may have several
  steps open at once (MatchJack's two tables), each opened at its own instant and closed
  at its own deadline: ``steps(state)`` lists them in the game's order (keys unique, empty
  once the match is over; ``step(state)`` is the first of them), ``awaiting`` names the
  players missing in any of them, ``apply_timeout(state, key)`` closes the one whose
  deadline passed (and must not leave it open), and ``audience(state, step)`` says who is
  told when that step opens. A step with ``waiting=True`` has no deadline and lists nobody:
  its part of the match waits until a move or a deadline elsewhere moves the match on (a
  table that has played its hand out waits for the other). Any other game has one step
  open at a time; :func:`open_steps` and :func:`time_out` read both kinds alike.
* ``parse(state, player, text)`` reads the cleaned text of a mail and returns a
  :class:`Parsed`: the moves, in order, and the lines (or the parts of lines) that
  were read but are not part of any move (``ignored``, in order; the receipt lists
  them, so the player sees what was read). A mistake raises :class:`ParseError`
  quoting the offending line; a text holding nothing of the game at all (no section,
  no command) raises :class:`NoMoves`, a ParseError, so the service can tell
  "nothing here" from a real mistake and try another reading of the mail. Any text
  gives a Parsed or a ParseError, never another exception, in time linear in its
  length. A mail that does not parse never changes state.
* ``apply_move(state, player, move)`` returns an :class:`Applied`. A legal move is
  accepted. A well-formed move the rules forbid is rejected with a reason; where
  the rule text punishes such a move, the engine returns the penalised state with
  ``changed=True`` so the service logs it and a replay reproduces it.
* ``apply_timeout(state)`` closes the open step at its deadline: players who have
  not acted get the game's default action. It may open an *extension* step, never
  leave the same step open. Once the match is over, ``apply_move`` rejects every move
  (``changed=False``) and ``apply_timeout`` raises :class:`GameError`.
* ``with_holdings(state, {currency: {player: n}})`` (a game whose ``game_type.reads``
  names season currencies besides the chips, e.g. garnets) returns a copy of the state
  that knows the players' live balances of them: the service calls it before every mail's
  moves and every settlement, and records them in the event, so a replay does the same.
* ``with_balances(state, balances)`` returns a copy of the state whose chips are the
  given live season balances of its players (``{player: chips}``, whole numbers, not
  negative; anything else is a :class:`GameError`). A player's chips are one season
  balance shared by all their matches, so the service calls it right before each
  ``apply_timeout`` (each settlement) with the ledger's balances, and records them in
  the event so a replay does the same: every settlement is judged on what the players
  really hold at that moment.
* ``view(state, player)`` is the only path from state to anything a player sees;
  ``view(state, None)`` is the public view (archive). Hidden information must never
  appear in a view before the rules reveal it.
* ``result(state)`` is ``None`` while the match runs, then a :class:`Result`.
* ``forfeit(state, player)`` returns the state after ``player`` forfeits the match (the
  season's abandonment rule, or the organizer's ``referee forfeit``; RULINGS, "Seasons": a
  loss, with the chips as they stand), recorded so that the public view says it. A match of
  two sides ends at once, the forfeiter last of the ranking with the outcome "loss"; a
  MatchJack forfeiter leaves the match as one who reached 0 in that hand and the others play
  on. A match that is over, a player who is not an acting seat (or has left the match), and
  a season step (the nomination) raise :class:`GameError`. Each game's page says what
  becomes of a hand or round in progress, under "Rulings".
* ``handover(state, old, new, name)`` (optional; else :func:`hand_over`'s generic one) is
  the state after the organizer hands ``old``'s seat to ``new`` (``referee substitute``;
  RULINGS, "Seasons"): the seat as it stands (chips, cards, pending moves, its record so
  far) is ``new``'s from then on, ``name`` their display name. A season step and a match
  that is over raise :class:`GameError`.
* ``form(state, player)`` is the fill-in template for the open step, in exactly
  the grammar ``parse`` reads; ``""`` when the player has nothing to send.
* ``standings(state)`` is one line per player for organizers (``referee status``),
  built from public information only.
* ``audience(state)`` names the players who are told when the state's step opens (or
  the match ends): in the games so far every player, in seat order; a game with seats
  that never act, or players who learn of a step only when it concerns them, says so
  here. The service mails each of them the step mail, except the player whose move
  opened the step: their receipt says what happens now (with the form, when it is their
  turn again).
* ``game_type`` (a :class:`GameType`) describes the game as a whole, after OpenSpiel's
  ``GameType``: its dynamics (simultaneous, sequential or mixed steps), the roles of its
  seats (and which are silent: seats that never act, may have no address, are never mailed
  and have no outcome), whether it reads the seats' display names, the currencies its
  transfers move, its step kinds, its match options and whether it uses chance. ``name``,
  ``title``, ``min_players``, ``max_players`` and ``step_kinds`` stay attributes of their
  own (``step_kinds`` mirrors ``game_type.step_kinds``).
* ``sample_moves(state, player, rnd)`` gives a few legal moves ``player`` may make now,
  drawn with the given :class:`random.Random` (for tests, demos and automated players);
  ``[]`` when the player has nothing to do. Every one is accepted by ``apply_move`` on
  that state. In a simultaneous step that includes revisions of a submission already
  made.
* ``hidden_variants(state, player, rnd)`` gives a few states that differ from ``state``
  only in information ``player`` may not know yet (the opponent's hidden cards, secret
  choices, unrevealed submissions ...; in Stationary Roulette the winning colour and
  points of the opponent's pending roulette, the opponent's pending bet, and the
  winning colours of the opponent's prepared but not yet revealed roulettes), each a
  valid state of the game. ``view``, ``form`` (and so every mail), the public
  ``view(state, None)``, ``standings`` and whether ``apply_move`` accepts the player's
  moves must be the same on each of them: the conformance suite
  (``tests/games/test_conformance.py``) checks this on random playouts of every game.
* ``result(state).awards`` are season currencies the match awards at its end (booked
  into the season ledger under their currency) and ``result(state).signals`` what the
  match tells the season (recorded with the result). ``result(state).ranking`` lists the
  acting players from best to worst (a game whose ``game_type.ranked`` is true): the season
  reads a main match's winner and EC from it (:mod:`referee.season`); a drawn duel ranks
  as its rules say (Stationary Roulette: fewer chips at the end last, then a lot).
* A game's object (``GAME``) is an :class:`Engine` given the game package's modules (``play``,
  ``grammar``, ``views``, ``samples``): the wiring every engine shares is written there once,
  with the defaults most games keep (``awaiting``: the open step's players; ``audience``: every
  player; ``with_balances``: the match's own chips, checked and unchanged; ``result``: the
  stored one, ranked by :func:`ranked_by_outcome`), which a game overrides where it plays
  otherwise. :func:`opponent`, :func:`require_player`, :func:`rejected`, :func:`check_forfeit`
  and :func:`result_record` are the small pieces the engines' rules share.
* Chip movements are appended to ``state["transfers"]`` as
  ``{"from": account, "to": account, "amount": n, "reason": str, "step": key}``;
  the service copies new entries into the season ledger (double entry), so chips
  are conserved. ``"LGT"`` is the house account. The list is append-only: the service
  copies the entries beyond the ones it has already seen.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Protocol, Sequence

import orjson

State = dict[str, Any]
Move = dict[str, Any]

HOUSE = "LGT"  # the house's account in the transfers and the season ledger
SEASON_ACCOUNT = "SEASON"  # where awards and grants come from, what penalties go to
SEASON_CHIPS = "chips"  # the season's chips (one balance per player, in the season ledger)
MATCH_CHIPS = "stack"  # chips that exist only inside a match (a duel's stacks), never the season's


class GameError(Exception):
    """Base class of rule-engine errors."""


class ParseError(GameError):
    """A mail could not be read as a move. Never costs anything."""

    def __init__(self, reason: str, line: str | None = None):
        super().__init__(reason if line is None else f"{reason}: {line!r}")
        self.reason = reason
        self.line = line


class NoMoves(ParseError):
    """The text holds no section or command of the game at all: nothing here to read
    (another reading of the mail may hold the moves). Never costs anything."""


@dataclass(frozen=True)
class Parsed:
    """What :meth:`Game.parse` read in a mail."""

    moves: list[Move]  # in the order written
    ignored: list[str] = field(default_factory=list)  # read, but part of no move, in order


@dataclass(frozen=True)
class Step:
    key: str  # unique within the match, e.g. "round-3"
    kind: str  # deadline lookup key, e.g. "round", "turn", "extension"
    players: tuple[str, ...]  # who may act now
    simultaneous: bool  # True: revisions allowed until the deadline
    title: str = ""  # human name, e.g. "Round 3 of 10"
    # the key of the step this one extends (a missed turn's extension): a reply to a mail
    # about that step still counts in this one
    extends: str | None = None
    # a step nobody acts in and that has no deadline: its part of the match waits until a move
    # or a deadline elsewhere moves the match on (a MatchJack table that has played its hand
    # out waits there for the other table); only a game of concurrent steps has one
    waiting: bool = False


@dataclass
class Applied:
    state: State
    accepted: bool
    reason: str | None = None  # why it was rejected (shown to the player)
    changed: bool = True  # the state changed (accepted, or a penalty was applied)


@dataclass
class Result:
    outcome: dict[str, str]  # player -> "win" | "loss" | "draw" (or a game's own word)
    victory_points: dict[str, float]  # player -> 1, 0.5 or 0
    reason: str  # one sentence: why the match ended so
    scores: dict[str, Any] = field(default_factory=dict)
    # season currencies the match awards at its end: {currency: {player: whole amount}}
    # (e.g. CoLs); the service books each into the season ledger from the "SEASON" account
    awards: dict[str, dict[str, int]] = field(default_factory=dict)
    # what the match tells the season: [{"kind": ..., "player": ..., ...}], e.g. a player
    # sent to a death match; recorded with the result, logged
    signals: list[dict[str, Any]] = field(default_factory=list)
    # the acting players (every seat but the silent ones) from best to worst, as the rules
    # rank them at the end (a game whose ``game_type.ranked`` is true): a season reads a main
    # match's winner (the first) and its EC (the last who is still live) from it
    ranking: list[str] = field(default_factory=list)


SIMULTANEOUS = "simultaneous"  # every listed player acts in a step and may revise until its deadline
SEQUENTIAL = "sequential"  # one player acts in a step; a turn is final once accepted
# some steps simultaneous, some sequential: each Step's ``simultaneous`` flag says which it is
# (a simultaneous step of such a game may take each submission as final and close as soon
# as every listed player has sent one, as Betting Minority's placement steps do)
MIXED = "mixed"
DYNAMICS = (SIMULTANEOUS, SEQUENTIAL, MIXED)


@dataclass(frozen=True)
class GameType:
    """What kind of game an engine plays (after OpenSpiel's ``GameType``)."""

    dynamics: str  # SIMULTANEOUS, SEQUENTIAL or MIXED
    roles: tuple[str, ...]  # the seats' roles in seat order, e.g. ("player", "player")
    currencies: tuple[str, ...]  # what the transfers move: SEASON_CHIPS and/or MATCH_CHIPS
    step_kinds: dict[str, float]  # step kind -> default length in hours
    options: dict[str, str] = field(default_factory=dict)  # match option -> one-line meaning
    chance: bool = False  # does the game use chance (draws from rng(seed, ...))?
    # step kinds whose length follows another kind's: kind -> (base kind, fraction), e.g.
    # {"extension": ("turn", 2 / 3)}: unless a season file sets it, its length is that
    # fraction of the base kind's length as configured (a phase_length sets the base only)
    derived_steps: dict[str, tuple[str, float]] = field(default_factory=dict)
    # roles whose seats never act (no step ever lists them): a season may seat a player
    # without an address there, and such a player is never mailed (Betting Minority's
    # participants); a silent seat has no outcome in the result
    silent_roles: tuple[str, ...] = ()
    # does the engine read the seats' display names (to match them in mail)? Then the
    # match book passes them at the start as options["names"] = {player: name}, stored
    # with the match's options, so a replay reads the same names
    names: bool = False
    # may several steps be open at once, each with its own deadline (MatchJack's two tables)?
    # Then ``steps(state)`` lists them, ``apply_timeout(state, key)`` closes the one named,
    # and ``audience(state, step)`` says who is told when each one opens
    concurrent: bool = False
    # season currencies other than the season's chips whose live balances the engine reads
    # (e.g. ("garnets",)): the match book passes them at the start as options["holdings"] =
    # {currency: {player: n}} and before every move and settlement through ``with_holdings``
    # (recorded in the event, so a replay reads the same); their movements are transfers
    # under that currency, booked in the season ledger like any other
    reads: tuple[str, ...] = ()
    # does ``result(state).ranking`` rank every acting player from best to worst? Only such a
    # game can be a season's main match (its EC is the last of the ranking: RULINGS, "Seasons")
    ranked: bool = False
    # a step of the season frame played as a match (the EC's nomination of the DMO): opened
    # by the referee itself, never scheduled by a season file (referee.season)
    season_step: bool = False
    # can the game be a death match? Its first seat is then the EC's, its second the DMO's (an
    # option "dmo", when the game has one, names the DMO), and any further seats are silent
    # participants, which the season fills (RULINGS, "Seasons")
    death_match: bool = False
    # the abandonment rule's default (RULINGS, "Seasons"): after this many missed steps in a
    # row a player forfeits the match (0: off; a season file may set its own)
    abandon_after: int = 0
    # the accounts of the game's transfers that are no player (a pot, a bank), each with what
    # a reader calls it: the archive's ledger says "the pot", and a season file may not give
    # a player such an id (:func:`referee.games.accounts`)
    accounts: dict[str, str] = field(default_factory=dict)
    # what a reader calls the game's steps, as its mails title them, for pages that have only a
    # step's key (the archive's ledger and events): (a pattern the whole key matches, the title
    # with the pattern's groups as {0}, {1}...), the first match wins, e.g.
    # (r"round-(\d+)", "Round {0}"); a key no pattern matches is "a step of the match"
    step_titles: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.dynamics not in DYNAMICS:
            raise ValueError(f"dynamics must be one of {', '.join(DYNAMICS)}, not {self.dynamics!r}")
        if not set(self.silent_roles) <= set(self.roles) or set(self.silent_roles) == set(self.roles):
            raise ValueError("silent roles must be roles of the game, and some seat must act")
        unknown = set(self.currencies) - {SEASON_CHIPS, MATCH_CHIPS} - set(self.reads)
        if unknown or not self.currencies:
            raise ValueError(
                "currencies must be SEASON_CHIPS, MATCH_CHIPS and/or currencies the game reads, "
                f"not {self.currencies!r}"
            )
        if SEASON_CHIPS in self.reads or MATCH_CHIPS in self.reads:
            raise ValueError("reads names season currencies other than the season's chips")
        if not self.roles:
            raise ValueError("a game has at least one seat role")
        for pattern, title in self.step_titles:
            groups = re.compile(pattern).groups
            try:
                title.format(*["1"] * groups)
            except (IndexError, KeyError, ValueError) as exc:
                raise ValueError(f"step title {title!r} names a group the pattern {pattern!r} lacks") from exc
        if set(self.accounts) & {HOUSE, SEASON_ACCOUNT}:
            raise ValueError(f"a game's own accounts cannot be {HOUSE} or {SEASON_ACCOUNT}: the season's")
        if not self.step_kinds or any(hours <= 0 for hours in self.step_kinds.values()):
            raise ValueError("every step kind needs a positive default length in hours")
        for kind, (base, fraction) in self.derived_steps.items():
            if kind not in self.step_kinds or base not in self.step_kinds or base in self.derived_steps:
                raise ValueError(f"derived step kind {kind!r} must follow a plain step kind of the game, not {base!r}")
            if not 0 < fraction:
                raise ValueError(f"derived step kind {kind!r} needs a positive fraction")


class Game(Protocol):
    name: str  # registry key, e.g. "stationary-roulette"
    title: str  # human name, e.g. "Stationary Roulette"
    min_players: int
    max_players: int
    step_kinds: dict[str, float]  # kind -> default length in hours (= game_type.step_kinds)
    game_type: GameType

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State: ...
    def step(self, state: State) -> Step | None: ...
    def awaiting(self, state: State) -> tuple[str, ...]: ...
    def parse(self, state: State, player: str, text: str) -> Parsed: ...
    def apply_move(self, state: State, player: str, move: Move) -> Applied: ...
    def apply_timeout(self, state: State, key: str | None = None) -> State: ...
    def with_balances(self, state: State, balances: dict[str, int]) -> State: ...
    def view(self, state: State, player: str | None) -> dict[str, Any]: ...
    def result(self, state: State) -> Result | None: ...
    def forfeit(self, state: State, player: str) -> State: ...
    def form(self, state: State, player: str) -> str: ...
    def standings(self, state: State) -> list[str]: ...
    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]: ...
    def sample_moves(self, state: State, player: str, rnd: random.Random) -> list[Move]: ...
    def hidden_variants(self, state: State, player: str, rnd: random.Random) -> list[State]: ...


class Concurrent(Protocol):
    """What a game of concurrent steps (``game_type.concurrent``) adds to :class:`Game`."""

    def steps(self, state: State) -> tuple[Step, ...]: ...
    def with_holdings(self, state: State, holdings: dict[str, dict[str, int]]) -> State: ...


def open_steps(game: Game, state: State) -> tuple[Step, ...]:
    """Every step open in ``state``: a game of concurrent steps lists them (``steps``), any
    other game has its one ``step`` or none. Empty once the match is over."""
    if game.game_type.concurrent:
        return tuple(game.steps(state))  # type: ignore[attr-defined]
    one = game.step(state)
    return () if one is None else (one,)


def time_out(game: Game, state: State, key: str | None) -> State:
    """``apply_timeout`` for the step ``key``: a game of concurrent steps is told which step's
    deadline passed; any other has one step open, and is asked as it always was."""
    return game.apply_timeout(state, key) if game.game_type.concurrent else game.apply_timeout(state)


def timed_steps(game: Game, state: State) -> tuple[Step, ...]:
    """The open steps that have a deadline (every one but the waiting steps)."""
    return tuple(s for s in open_steps(game, state) if not s.waiting)


def stored_result(state: State) -> Result | None:
    """``result(state)`` of a game that keeps its result in ``state["result"]`` (the fields of
    :class:`Result`, None while the match runs): a fresh copy, so no caller changes the state."""
    return None if state["result"] is None else Result(**clone(state["result"]))


def clone(data: Any) -> Any:
    """A deep copy of plain data (dicts, lists, str, int, float, bool, None): the JSON data a
    match state is, copied as the store would give it back.

    An orjson round trip: on a match state two to three times faster than a pickle round
    trip, itself five times faster than ``copy.deepcopy`` (which matters when ten thousand
    matches close at once). A tuple comes back a list, as it does from the store; what JSON
    cannot hold as it is (a key that is not a string, an integer beyond 64 bits, anything
    but plain data) is copied exactly by a pickle round trip.
    """
    try:
        return orjson.loads(orjson.dumps(data))
    except TypeError:  # orjson.JSONEncodeError is one
        import pickle  # here: rare, and a command that copies no state does without it

        return pickle.loads(pickle.dumps(data, pickle.HIGHEST_PROTOCOL))


def hand_over(game: Game, state: State, old: str, new: str, name: str) -> State:
    """The state after ``old``'s seat is handed to ``new`` (named ``name``): the game's own
    ``handover`` where it has one, else every mention of the player key ``old`` in the state
    (a dict key, a string that is the key, the key as a whole word in a text: the engines
    word their texts with keys) written as ``new``, and ``state["names"][new] = name`` in a
    game that keeps names. Refused (GameError) for a season step, a match that is over, a
    player who is not at an acting seat, and a ``new`` that the state mentions already (it
    could not be told from ``old`` afterwards)."""
    own = getattr(game, "handover", None)
    if own is not None:
        return own(state, old, new, name)
    if game.game_type.season_step:
        raise GameError(f"a {game.title} is the season's step of one player: it is not handed over")
    if game.result(state) is not None:
        raise GameError("the match is over: there is no seat to hand over")
    if old not in state.get("players", ()):
        raise GameError(f"{old} has no seat in this match")
    if _mentions(state, re.compile(_word(new))):
        raise GameError(f"{new} already appears in this match: a seat cannot be handed to them")
    renamed = _renamed(state, old, new, re.compile(_word(old)))
    if isinstance(renamed.get("names"), dict):
        renamed["names"][new] = name
    return renamed


def _word(key: str) -> str:
    """A player key as a whole word (as :func:`referee.render.named` finds it in a text)."""
    return r"(?<![\w@.+-])" + re.escape(key) + r"(?![\w@-]|\.\w)"


def _mentions(data: Any, word: re.Pattern[str]) -> bool:
    if isinstance(data, str):
        return word.search(data) is not None
    if isinstance(data, dict):
        return any(_mentions(k, word) or _mentions(v, word) for k, v in data.items())
    if isinstance(data, list):
        return any(_mentions(v, word) for v in data)
    return False


def _renamed(data: Any, old: str, new: str, word: re.Pattern[str]) -> Any:
    if isinstance(data, str):
        return new if data == old else (word.sub(new, data) if old in data else data)
    if isinstance(data, dict):
        return {_renamed(k, old, new, word): _renamed(v, old, new, word) for k, v in data.items()}
    if isinstance(data, list):
        return [_renamed(v, old, new, word) for v in data]
    return data


def rng(seed: int, *labels: object) -> random.Random:
    """A deterministic RNG for one purpose within a match.

    ``rng(seed, "deal", hand_no)`` always gives the same stream, so chance needs no
    hidden RNG object in the state: the state records which draws were made.
    """
    import hashlib  # here: OpenSSL's loading is a good part of `referee status`, which draws nothing

    material = ":".join([str(seed), *map(str, labels)]).encode()
    return random.Random(int.from_bytes(hashlib.sha256(material).digest()[:16], "big"))


def transfer(
    state: State, frm: str, to: str, amount: int, reason: str, step: str, *, currency: str = SEASON_CHIPS
) -> None:
    """Record a movement of ``currency`` (engines call this on their private copy of the state).

    A movement of the season's chips is ``{"from", "to", "amount", "reason", "step"}``;
    any other currency adds ``"currency"``. Accounts are player keys, ``HOUSE`` or an
    engine's own (e.g. ``"pot"``), so every currency is conserved within the transfers."""
    if amount < 0:
        raise ValueError("negative transfer")
    if amount == 0:
        return
    entry = {"from": frm, "to": to, "amount": amount, "reason": reason, "step": step}
    if currency != SEASON_CHIPS:
        entry["currency"] = currency
    state["transfers"].append(entry)


def opponent(state: State, player: str) -> str:
    """The other player of a match of two (``state["players"]`` is ``[a, b]``)."""
    a, b = state["players"]
    return str(b if player == a else a)


def require_player(state: State, player: str | None) -> None:
    """A :class:`GameError` unless ``player`` plays in the match (views, hidden variants)."""
    if player not in state["players"]:
        raise GameError(f"{player} is not playing in this match.")


def rejected(state: State, reason: str) -> Applied:
    """A move the rules refuse: the state as it was, unchanged, and why (shown to the player)."""
    return Applied(state, False, reason, changed=False)


def check_forfeit(state: State, player: str) -> None:
    """A forfeit is refused once the match is over, and from anyone not playing it."""
    if state["result"] is not None:
        raise GameError("The match is over; nobody can forfeit it any more.")
    if player not in state["players"]:
        raise GameError(f"{player} is not playing in this match, so cannot forfeit it.")


VICTORY_POINTS = {"win": 1.0, "loss": 0.0, "draw": 0.5}  # a result's victory points, by outcome


def result_record(outcome: dict[str, str], reason: str, scores: Any, **more: Any) -> dict[str, Any]:
    """The fields of a :class:`Result` as a game keeps them in ``state["result"]``: the
    outcome, the victory points it gives (:data:`VICTORY_POINTS`, in the outcome's order),
    the reason and the scores, then ``more`` (awards, signals, ranking) in the order given."""
    return {
        "outcome": outcome,
        "victory_points": {p: VICTORY_POINTS[o] for p, o in outcome.items()},
        "reason": reason,
        "scores": scores,
        **more,
    }


def check_balances(state: State, balances: dict[str, int]) -> None:
    """The shape :meth:`Game.with_balances` requires: a whole, non-negative number of
    season chips for every player of the match, else a :class:`GameError`."""
    for p in state["players"]:
        n = balances.get(p) if isinstance(balances, dict) else None
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise GameError(f"The season balance of {p} must be a whole number of chips, not negative; got {n!r}.")


_PLACES = {"win": 0, "draw": 1, "loss": 2}


def ranked_by_outcome(state: State, outcome: dict[str, str], chips: dict[str, int]) -> list[str]:
    """A result's ranking, best first, from its outcome (RULINGS, "Seasons": a two-player main
    match's EC is its loser): winners first, then draws, then losers; among draws the player
    with more ``chips`` at the end first, and with equal chips a lot from the match seed
    (``rng(state["seed"], "ranking")``). Only the players the outcome names are ranked (never
    silent seats). Worked out from the final state when the result is asked for, not kept in
    it: a game without chance keeps states and views that do not depend on the seed."""
    seats = [p for p in state["players"] if p in outcome]
    lot = list(seats)
    rng(state["seed"], "ranking").shuffle(lot)
    return sorted(seats, key=lambda p: (_PLACES.get(outcome[p], 1), -chips[p], lot.index(p)))


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``n`` and the noun agreeing with it, for the texts players read: ``plural(1, "chip")``
    is ``"1 chip"``, ``plural(2, "chip")`` ``"2 chips"`` and ``plural(0, "chip")`` ``"0 chips"``;
    ``nouns`` gives an irregular plural. The mail templates have it as the filter ``plural``
    (``{{ n | plural("chip") }}``, registered in :mod:`referee.render`)."""
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"


# --------------------------------------------------------------------------- the game object


class Engine:
    """A game object (:class:`Game`) assembled from its package's modules: the wiring every
    engine shares, written once.

    A game package (``referee/games/<game>/``) keeps each job in a module of its own, and its
    ``GAME`` is an instance of a subclass of this class, given them:

    * ``play``, the match as it runs: ``initial_state(seed, players, options)``,
      ``step(state)``, ``apply_move(state, player, move)``, ``apply_timeout(state, key)`` and
      ``forfeit(state, player)``;
    * ``grammar``, the mail: ``parse(state, player, text)`` and ``form(state, player)``;
    * ``views``: ``view(state, player)`` and ``standings(state)``;
    * ``samples``, for tests and automated players: ``sample_moves(state, player, rnd)`` and
      ``hidden_variants(state, player, rnd)``.

    The subclass names the game (``name``, ``title``, ``min_players``, ``max_players``,
    ``game_type``) and overrides what it does otherwise than every game here does by default:
    ``step_kinds`` is ``game_type.step_kinds``; the open step's players are awaited
    (``awaiting``); every player is told of every step and of the end (``audience``); the
    chips are the match's own, so ``with_balances`` checks the season balances for shape and
    changes nothing; ``result`` is the stored one (:func:`stored_result`), ranked by
    :func:`ranked_by_outcome` on the chips ``state[ranked_by]`` (``ranked_by`` None: the result
    keeps its own ranking). A game that plays some part itself (MatchJack) overrides those
    methods and need not be given that module.
    """

    name: str  # registry key
    title: str  # human name
    min_players: int
    max_players: int
    game_type: GameType
    ranked_by: str | None = "chips"  # the state's key of the chips a drawn result is ranked by
    # the mails: False (the default), each rendered mail is wrapped at 72 as a whole and its
    # abbreviations explained at first use (referee.render); True, the game's templates wrap
    # their own prose (the ``wrap`` filter) and explain its abbreviations in their own words
    wraps_own_mail: bool = False
    # the archive: a long match's rounds (or hands) are shown this many to a page
    archive_rounds_per_page: int = 5

    def __init__(
        self,
        *,
        play: ModuleType | None = None,
        grammar: ModuleType | None = None,
        views: ModuleType | None = None,
        samples: ModuleType | None = None,
    ) -> None:
        self.play: Any = play
        self.grammar: Any = grammar
        self.views: Any = views
        self.samples: Any = samples

    @property
    def step_kinds(self) -> dict[str, float]:
        """Step kind -> default length in hours (``game_type.step_kinds``)."""
        return self.game_type.step_kinds

    # ----------------------------------------------------------------- play

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
        return self.play.initial_state(seed, players, options)

    def step(self, state: State) -> Step | None:
        return self.play.step(state)

    def awaiting(self, state: State) -> tuple[str, ...]:
        """The players of the open step (none once the match is over)."""
        step = self.step(state)
        return () if step is None else step.players

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        """Every player is told of every step (and of the end)."""
        return tuple(state["players"])

    def apply_move(self, state: State, player: str, move: Move) -> Applied:
        return self.play.apply_move(state, player, move)

    def apply_timeout(self, state: State, key: str | None = None) -> State:
        return self.play.apply_timeout(state, key)

    def forfeit(self, state: State, player: str) -> State:
        return self.play.forfeit(state, player)

    def with_balances(self, state: State, balances: dict[str, int]) -> State:
        """The match is played with its own chips: the season balances are checked for
        shape, and change nothing."""
        check_balances(state, balances)
        return clone(state)

    def result(self, state: State) -> Result | None:
        result = stored_result(state)
        if result is not None and self.ranked_by is not None:
            result.ranking = ranked_by_outcome(state, result.outcome, state[self.ranked_by])
        return result

    # ----------------------------------------------------------------- mail

    def parse(self, state: State, player: str, text: str) -> Parsed:
        return self.grammar.parse(state, player, text)

    def form(self, state: State, player: str) -> str:
        return self.grammar.form(state, player)

    # ----------------------------------------------------------------- views

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        return self.views.view(state, player)

    def standings(self, state: State) -> list[str]:
        return self.views.standings(state)

    # ----------------------------------------------------------------- for tests and bots

    def sample_moves(self, state: State, player: str, rnd: random.Random) -> list[Move]:
        return self.samples.sample_moves(state, player, rnd)

    def hidden_variants(self, state: State, player: str, rnd: random.Random) -> list[State]:
        return self.samples.hidden_variants(state, player, rnd)
