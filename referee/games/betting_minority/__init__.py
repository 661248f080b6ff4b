"""Betting Minority: two DM players send ten participants into three rooms, then bet on
the rooms they expect to win, and the payout doubles what they staked.

Rule text: ``seeds/betting-minority.txt``; the authoritative reading is the "Betting
Minority" section of ``RULINGS.md``; decisions of our own are listed under "Rulings" in
``docs/games/betting-minority.md`` (numbered; each names its test).

Seats, in the season file's order: the **EC**, the **DMO**, then ten **participants**.
The participants never act (``GameType.silent_roles``): each has a private list of 8
entries, 4 naming the EC and 4 the DMO, with exactly 5 of each in every round
(:func:`make_lists`, from the match seed). A participant with an address gets their list
in the match's first mail, and nothing after it.

A match is 8 rounds, after a starting-marker step (the DMO gives the starting marker to
themself or to the EC). Each round:

* **Minority phase**, in placement steps (kind ``"send"``, simultaneous): each DM player
  sends one unplaced participant to a room (``SEND <participant> TO <room>``); a step
  closes as soon as both have sent (a send is final) or at its deadline. Collisions as
  :func:`resolve_sends` rules them.
* **Betting phase**, in turns (kind ``"bet"``, one player each): the marker holder opens;
  each bet replaces the bettor's placement (one or two rooms, each >= 1 chip), a RAISE
  must top the opponent's total, a CALL match it (or be the most the caller may bet) and
  ends the betting; the limits are :func:`bet_cap`. A well-formed bet that breaks them
  costs 1 chip and is asked again. A missed turn gets one extension (kind
  ``"extension"``, 2/3 of a turn) and counts as missed.
* **Payout**: :func:`payout`, a pure function of the two placements and the room winners
  (:func:`room_winners`). Then the zero-chip checks, in RULINGS' order: a player at 0
  after the payout loses at once (both at 0: the DMO wins), and no k/5 loss is taken;
  else the k/5 chip loss of a player who missed a betting turn in the round
  (:func:`missed_turn_loss`), and a player it leaves at 0 loses (both: the DMO wins).
  A penalty chip that leaves a player at 0 during betting ends the betting as their
  call (``ended`` "penalty"), and the round is paid out before the checks.

After 8 rounds the most chips wins; a tie goes to the DMO.

Chips are the match's own (``MATCH_CHIPS``): 4 each at the start. Stakes go to the
``"table"`` account when betting ends; the doubling is paid into the table by the
``"bank"`` and the table pays every room out; penalty chips go ``"out"`` of play.

State (plain JSON data)::

    players       [ec, dmo, participant x 10] (seat order)
    seed          the match seed
    ec, dmo       the DM players
    participants  the ten participants, in seat order (short ids P1..P10)
    names         {player: display name} (options["names"], else the keys)
    lists         {participant: [8 entries, each "EC" or "DMO"]}: hidden until each
                  round's payout reveals that round's entries
    round         the open round 1..8 (once over: the last round played)
    phase         "marker", "send", "bet" or "over"
    marker        who holds the starting marker (None before the marker step closes)
    marker_given  how the marker step ended: {"by", "to", "timeout"} (None before)
    chips         {dm player: chips held}
    missed        {dm player: betting turns missed so far in the match}
    positions     {participant: room or None} of the open round
    send          the open placement step: {"step": i, "sent": {dm: send or None}}, or None
    placements    [record of each closed placement step of the open round]
    betting       the open betting: opener, to_act, turn, extension, switched,
                  placements {dm: {room: n} or None}, actions, missed {dm: n}; or None
    history       [record of every finished round, see _end_betting]
    transfers     chip movements (currency MATCH_CHIPS), see referee.games.base.transfer
    result        None while the match runs, else the fields of Result
    forfeit       only once a DM player forfeited: {"player", "round", "phase", and the open
                  round as it stood: "positions", "placements", "betting"} (ruling 21)
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Sequence
from typing import Any

from referee.games.betting import turn_reference
from referee.games.lines import clean_line
from referee.games.base import (
    MATCH_CHIPS,
    MIXED,
    Applied,
    GameError,
    GameType,
    Move,
    NoMoves,
    Parsed,
    ParseError,
    Result,
    State,
    Step,
    check_balances,
    clone,
    plural,
    rng,
    stored_result,
    transfer,
)
from referee.games.base import ranked_by_outcome as ranking

# ---------------------------------------------------------------------- the rule text's numbers

EC, DMO = "EC", "DMO"  # the two DM roles, and the two kinds of list entry
PARTICIPANT = "participant"
PARTICIPANTS = 10  # "5 players will have EC's name ... and 5 ... DMO's"
ROUNDS = 8  # "The game is divided into 8 rounds"
ENTRIES_EACH = 4  # "a list containing the EC's name 4 times and DMO's name 4 times"
PER_ROUND_EACH = 5  # "In each round, 5 players will have EC's name ... and 5 ... DMO's"
ROOMS = ("Uno", "Dos", "Tres")  # "Changing the names of the rooms to: Uno, Dos, Tres"
STARTING_CHIPS = 4  # "DM players will receive 4 chips"
CAP_NUMERATOR, CAP_DENOMINATOR = 3, 4  # "not exceeding 3/4 of total number of chips your opponent has"
MIN_BET = 1  # "Every bet has to be a natural number of chips ... the minimum bet is 1"
PENALTY = 1  # "you will lose one chip as a penalty"
LOSS_FIFTHS = 5  # "you will lose 1/5 of your chips. Increased by a fifth for missing more than once"
# "You have 1:30 to select where people go, and 3 mins to decide on betting ... the time
# will be extended by 2 mins": live minutes become hours by default, keeping the ratios.
SEND_HOURS = 12.0
BET_HOURS = 24.0
MARKER_HOURS = 24.0
EXTENSION_FRACTION = 2 / 3

BANK, TABLE, OUT = "bank", "table", "out"  # the match's own accounts in the transfers
VICTORY_POINTS = {"win": 1.0, "loss": 0.0}


# ---------------------------------------------------------------------- the lists


def make_lists(seed: int, participants: Sequence[str]) -> dict[str, list[str]]:
    """Every participant's 8 entries: 4 EC and 4 DMO per list, 5 of each in every round
    (ruling 1). A fixed design (participant i of 10 has EC in the 4 rounds from
    s = floor(8i/10) on, cyclically: the starts 0,0,1,2,3,4,4,5,6,7 put exactly 5 in every
    stretch of 4 rounds, so every round has 5 EC entries) mixed by permuting participants and
    rounds and by many random 2x2 swaps, which keep both margins, all drawn from
    ``rng(seed, "lists")``."""
    rnd = rng(seed, "lists")
    n = len(participants)
    grid = [[EC if (r - i * ROUNDS // n) % ROUNDS < ENTRIES_EACH else DMO for r in range(ROUNDS)] for i in range(n)]
    _swap_mix(grid, list(range(n)), list(range(ROUNDS)), rnd, 40 * n * ROUNDS)
    rnd.shuffle(grid)
    order = list(range(ROUNDS))
    rnd.shuffle(order)
    return {p: [grid[i][r] for r in order] for i, p in enumerate(participants)}


def _swap_mix(grid: list[list[str]], rows: list[int], cols: list[int], rnd: random.Random, tries: int) -> None:
    """Random 2x2 swaps (EC/DMO on a diagonal -> the other diagonal) within the given rows
    and columns: every row and column keeps its count of each entry."""
    nr, nc = len(rows), len(cols)
    if nr < 2 or nc < 2:
        return
    below = rnd.randrange
    for _ in range(tries):
        i, j = below(nr), below(nr - 1)
        u, v = below(nc), below(nc - 1)
        a, b = rows[i], rows[j + (j >= i)]  # two different rows, two different columns
        x, y = cols[u], cols[v + (v >= u)]
        if grid[a][x] == grid[b][y] != grid[a][y] == grid[b][x]:
            grid[a][x], grid[a][y] = grid[a][y], grid[a][x]
            grid[b][x], grid[b][y] = grid[b][y], grid[b][x]


# ---------------------------------------------------------------------- rooms and sends


def third_room(a: str, b: str) -> str:
    """The room neither named."""
    return next(room for room in ROOMS if room not in (a, b))


def resolve_sends(sends: dict[str, dict[str, str] | None]) -> list[dict[str, str]]:
    """One placement step's sends -> the participants placed (RULINGS): different
    participants, both placed where sent; the same one to the same room, placed there;
    the same one to two rooms, placed in the third room. A missing send places nobody.
    Each placement: {"participant", "room", "how"}; how is "sent", "agreed" or "clash"."""
    made = [(dm, s) for dm, s in sends.items() if s is not None]
    if len(made) == 2 and made[0][1]["participant"] == made[1][1]["participant"]:
        (_, a), (_, b) = made
        if a["room"] == b["room"]:
            return [{"participant": a["participant"], "room": a["room"], "how": "agreed"}]
        return [{"participant": a["participant"], "room": third_room(a["room"], b["room"]), "how": "clash"}]
    return [{"participant": s["participant"], "room": s["room"], "how": "sent", "by": dm} for dm, s in made]


def room_counts(entries: dict[str, str], positions: dict[str, str | None]) -> dict[str, dict[str, int]]:
    """{room: {"EC": n, "DMO": n}}: the entries of each room's occupants."""
    counts = {room: {EC: 0, DMO: 0} for room in ROOMS}
    for participant, room in positions.items():
        if room is not None:
            counts[room][entries[participant]] += 1
    return counts


def room_winners(counts: dict[str, dict[str, int]]) -> dict[str, str | None]:
    """{room: "EC" | "DMO" | None}: a room is won by the DM role whose name appears strictly
    fewer times, but at least once, among its occupants' entries (RULINGS); tied,
    one-sided and empty rooms have no winner."""
    winners: dict[str, str | None] = {}
    for room in ROOMS:
        ec, dmo = counts[room][EC], counts[room][DMO]
        if ec == 0 or dmo == 0 or ec == dmo:
            winners[room] = None
        else:
            winners[room] = EC if ec < dmo else DMO
    return winners


# ---------------------------------------------------------------------- betting limits


def bet_cap(mine: int, theirs: int) -> int:
    """The most a player may bet in total: no more than they hold, nor than 3/4 of what
    the opponent holds (rounded down), but never below the minimum bet of 1 while they
    hold a chip (RULINGS: the minimum bet wins over the 3/4 cap)."""
    if mine < MIN_BET:
        return 0
    return min(mine, max(theirs * CAP_NUMERATOR // CAP_DENOMINATOR, MIN_BET))


def call_amount(mine: int, theirs: int, their_total: int) -> int:
    """What a CALL must total: the opponent's total, or the most the caller may bet."""
    return min(their_total, bet_cap(mine, theirs))


def total(placement: dict[str, int] | None) -> int:
    return sum(placement.values()) if placement else 0


# ---------------------------------------------------------------------- the payout


def doubled_portion(placement: dict[str, int] | None) -> int:
    """X, when a player bet X on one room and X+Y on another: X chips are doubled in each
    of the two rooms. A bet on one room doubles nothing at this stage."""
    if not placement or len(placement) < 2:
        return 0
    return min(placement.values())


def payout(placements: dict[str, dict[str, int] | None], winners: dict[str, str | None]) -> dict[str, Any]:
    """The payout phase, room by room (RULINGS), as a pure function.

    ``placements``: {"EC": {room: chips} or None, "DMO": ...}; ``winners``: {room: "EC" |
    "DMO" | None}. Per room: the winner takes ownership of min(winner's chips there,
    opponent's chips there) of the opponent's chips, from the opponent's doubled portion
    first; then each player's doubled portion X is doubled in each room they bet on (a
    doubled chip already taken doubles for its new owner); then every chip is doubled and
    returned to its owner.

    Returns {"rooms": {room: {"chips": {role: n}, "doubled": {role: n}, "winner": role |
    None, "claimed": n, "claimed_doubled": n, "owned": {role: n before the last doubling},
    "paid": {role: n}}}, "paid": {role: total paid back}, "staked": {role: total staked}}.
    """
    roles = (EC, DMO)
    placed = {role: dict(placements.get(role) or {}) for role in roles}
    doubled = {role: doubled_portion(placed[role]) for role in roles}
    rooms: dict[str, Any] = {}
    paid = {role: 0 for role in roles}
    for room in ROOMS:
        chips = {role: placed[role].get(room, 0) for role in roles}
        dbl = {role: doubled[role] if chips[role] else 0 for role in roles}
        winner = winners.get(room)
        claimed = claimed_doubled = 0
        # what each owns once the doubled portions are doubled: own chips plus own doubling
        owned = {role: chips[role] + dbl[role] for role in roles}
        if winner is not None:
            loser = DMO if winner == EC else EC
            claimed = min(chips[winner], chips[loser])
            claimed_doubled = min(claimed, dbl[loser])
            moved = 2 * claimed_doubled + (claimed - claimed_doubled)  # taken doubled chips double for the taker
            owned[winner] += moved
            owned[loser] -= moved
        room_paid = {role: 2 * owned[role] for role in roles}
        for role in roles:
            paid[role] += room_paid[role]
        rooms[room] = {
            "chips": chips,
            "doubled": dbl,
            "winner": winner,
            "claimed": claimed,
            "claimed_doubled": claimed_doubled,
            "owned": owned,
            "paid": room_paid,
        }
    return {"rooms": rooms, "paid": paid, "staked": {role: total(placed[role]) for role in roles}}


def missed_turn_loss(chips: int, missed: int) -> int:
    """The chips lost after a round in which the player missed a betting turn:
    floor(k/5 of their chips), k being their missed betting turns so far in the match
    (RULINGS); all of them from the fifth miss on."""
    return min(chips, chips * missed // LOSS_FIFTHS)


# ---------------------------------------------------------------------- names in mail


def normal_name(text: str) -> str:
    """A name as mail matches it: accents dropped, case folded, anything but letters and
    digits one space (``"José  Núñez"`` and ``"jose nunez"`` are the same)."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return turn_reference(plain.casefold())  # the duels' reading of a Turn line, on the plain text


def short_ids(participants: Sequence[str]) -> dict[str, str]:
    return {p: f"P{i + 1}" for i, p in enumerate(participants)}


def find_participant(state: State, written: str, line: str) -> str:
    """The participant a mail names (ruling 4): by short id (``P3``), season id or name,
    without regard to case or accents; a name may also be given by its first words
    (``Ann`` for ``Ann Lee``) when no name is exactly that; a short id wins over a season
    id, and that over a name. No match, or more than one,
    is a :class:`ParseError` that lists the candidates."""
    wanted = normal_name(written)
    if not wanted:
        raise ParseError("Name the participant to send (a name or a short id such as P3)", line)
    names, short = state["names"], short_ids(state["participants"])
    tiers = (  # the first kind of match that finds anyone decides: a short id, a season id, a name, its first words
        lambda p: normal_name(short[p]) == wanted,
        lambda p: normal_name(p) == wanted,
        lambda p: normal_name(names.get(p, p)) == wanted,
        lambda p: (normal_name(names.get(p, p)) + " ").startswith(wanted + " "),
    )
    exact: list[str] = []
    for matches in tiers:
        exact = [p for p in state["participants"] if matches(p)]
        if exact:
            break
    if len(exact) == 1:
        return exact[0]
    if not exact:
        listed = ", ".join(f"{short[p]} {names.get(p, p)}" for p in state["participants"])
        raise ParseError(f"No participant is called {written!r}. The participants are: {listed}", line)
    listed = ", ".join(f"{short[p]} {names.get(p, p)}" for p in exact)
    raise ParseError(
        f"{written!r} could be any of {len(exact)} participants: {listed}. Write the short id (such as "
        f"{short[exact[0]]}) or the whole name",
        line,
    )


# ---------------------------------------------------------------------- the mail grammar

MAX_LINE_CHARS = 300
_FILLERS = frozenset({"on", "in", "and", "chip", "chips", "room", "rooms", "&"})
_ROOM_NAMES = {room.lower(): room for room in ROOMS}
BET_COMMANDS = ("bet", "raise", "call")


def step_reference(text: str) -> str:
    """``"Round 2, placement 3"`` -> ``"round 2 placement 3"``."""
    return normal_name(text)


def _room(word: str) -> str | None:
    return _ROOM_NAMES.get(word.lower().strip(".,;:!?"))


def _read_rooms(words: list[str], line: str) -> dict[str, int]:
    """``Uno 3 Dos 2`` (also ``Uno: 3, Dos: 2``, ``3 on Uno and 2 on Dos``) -> {room: n}."""
    tokens: list[str] = []
    for word in words:
        for part in word.replace(",", " ").replace(":", " ").replace("=", " ").replace(";", " ").split():
            part = part.strip(".!?")
            if part and part.lower() not in _FILLERS:
                tokens.append(part)
    rooms: dict[str, int] = {}
    pending_room: str | None = None
    pending_n: int | None = None
    for token in tokens:
        room = _room(token)
        if room is not None:
            if pending_room is not None:
                raise ParseError(f"Give a number of chips after {pending_room}", line)
            if room in rooms:
                raise ParseError(f"{room} is named twice; name each room once", line)
            if pending_n is not None:
                rooms[room], pending_n = pending_n, None
            else:
                pending_room = room
            continue
        if token.isdecimal() and len(token) <= 6:
            n = int(token)
            if pending_room is not None:
                rooms[pending_room], pending_room = n, None
            elif pending_n is None:
                pending_n = n
            else:
                raise ParseError("Two numbers in a row: write each room with its chips, as in Uno 3 Dos 2", line)
            continue
        if any(c.isdigit() for c in token) and not any(c.isalpha() for c in token):  # 1_0, 1.5, -3
            raise ParseError(
                f"{token!r} is not a whole number of chips: write the number in digits only, as in RAISE Uno 10",
                line,
            )
        raise ParseError(
            f"{token!r} is neither a room (Uno, Dos, Tres) nor a whole number of chips; write it as in BET Uno 3 Dos 2",
            line,
        )
    if pending_room is not None:
        raise ParseError(f"Give a number of chips after {pending_room}", line)
    if pending_n is not None:
        raise ParseError(f"Name the room for the {plural(pending_n, 'chip')}", line)
    if not rooms:
        raise ParseError("Name the rooms and the chips on each, as in BET Uno 3 Dos 2", line)
    return rooms


def read_mail(state: State, text: str) -> Parsed:
    """One command per mail, and the ``Step:`` line of the form when it is kept:

    * ``MARKER ME`` / ``MARKER OPPONENT`` (the DMO, before round 1);
    * ``SEND <participant> TO <room>`` (a name, season id or short id; Uno, Dos or Tres);
    * ``BET``, ``RAISE`` or ``CALL`` followed by one or two rooms with their chips:
      ``RAISE Uno 3 Dos 2``.

    Words are read without regard to case; bullets and ``*emphasis*`` around words are
    dropped (:func:`referee.games.lines.clean_line`: ``1_0`` is no number, never ``1 0``); quoted
    lines (``>``) and other lines are read as not part of the move (the receipt lists
    them). Two commands, a malformed one or an unknown participant is a ParseError; no
    command at all is :class:`NoMoves`."""
    ignored: list[str] = []
    found: tuple[Move, str] | None = None
    reference: tuple[str, str] | None = None
    for raw in text.splitlines():
        written = raw.strip()
        if not written:
            continue
        if len(written) > MAX_LINE_CHARS or written.startswith(">"):
            ignored.append(written if len(written) <= 40 else written[:37] + "...")
            continue
        line = clean_line(written)
        words = line.split()
        if not words:
            ignored.append(written)
            continue
        head = words[0].lower().rstrip(".,;:!?")
        if head == "step" and (words[0].endswith(":") or (len(words) > 1 and words[1].startswith(":"))):
            ref = step_reference(line.split(":", 1)[1])
            if reference is not None and reference[0] != ref:
                raise ParseError(f"Your mail names two steps, {reference[1]!r} and {line!r}; keep only one", line)
            reference = (ref, line)
            continue
        move: Move | None = None
        if head == "marker":
            rest = [w.lower().strip(".,;:!?") for w in words[1:]]
            if rest in (["me"], ["myself"], ["keep"]):
                move = {"action": "marker", "to": "me"}
            elif rest in (["opponent"], ["ec"], ["give"], ["them"]):
                move = {"action": "marker", "to": "opponent"}
            else:
                raise ParseError("Write MARKER ME (you keep the starting marker) or MARKER OPPONENT", line)
        elif head == "send":
            lowered = [w.lower() for w in words]
            if "to" not in lowered[1:]:
                raise ParseError("Write SEND <participant> TO <room>, as in SEND P3 TO Uno", line)
            at = len(lowered) - 1 - lowered[::-1].index("to")
            room_words = [w for w in words[at + 1 :] if w.lower() not in ("room", "the")]
            room = _room(room_words[0]) if len(room_words) == 1 else None
            if room is None:
                raise ParseError("Name one room after TO: Uno, Dos or Tres", line)
            who = find_participant(state, " ".join(words[1:at]), line)
            move = {"action": "send", "participant": who, "room": room}
        elif head in BET_COMMANDS:
            move = {"action": head, "rooms": _read_rooms(words[1:], line)}
        if move is None:
            ignored.append(written)
            continue
        if found is not None:
            raise ParseError(f"Your mail has two commands, {found[1]!r} and {line!r}; send one command per mail", line)
        found = (move, line)
    if found is None:
        raise NoMoves("I found no command (MARKER, SEND ... TO ..., BET, RAISE or CALL) in your mail", None)
    move = found[0]
    if reference is not None:
        move["step"] = reference[0]
    return Parsed([move], ignored)


# ---------------------------------------------------------------------- the game


class BettingMinority:
    name = "betting-minority"
    title = "Betting Minority"
    min_players = 2 + PARTICIPANTS
    max_players = 2 + PARTICIPANTS

    def __init__(self) -> None:
        self.game_type = GameType(
            dynamics=MIXED,
            roles=(EC, DMO, *([PARTICIPANT] * PARTICIPANTS)),
            currencies=(MATCH_CHIPS,),
            step_kinds={"marker": MARKER_HOURS, "send": SEND_HOURS, "bet": BET_HOURS, "extension": BET_HOURS},
            derived_steps={"extension": ("bet", EXTENSION_FRACTION)},
            chance=True,
            silent_roles=(PARTICIPANT,),
            names=True,
            ranked=True,
            death_match=True,  # the first seat is the EC's, the second the DMO's (RULINGS, "Seasons")
        )
        self.step_kinds: dict[str, float] = self.game_type.step_kinds

    # ----------------------------------------------------------------- start

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
        """Seats: EC, DMO, then the ten participants (ruling 2). ``options["names"]`` (the
        match book passes the seats' names) lets mail name participants; other options
        are not read."""
        if len(players) != self.min_players or len(set(players)) != len(players):
            raise GameError(f"Betting Minority needs {self.min_players} different players: EC, DMO, 10 participants.")
        given = options.get("names") if isinstance(options, dict) else None
        names = {p: str(given.get(p, p)) if isinstance(given, dict) else p for p in players}
        ec, dmo, *participants = players
        state: State = {
            "players": list(players),
            "seed": seed,
            "ec": ec,
            "dmo": dmo,
            "participants": participants,
            "names": names,
            "lists": make_lists(seed, participants),
            "round": 1,
            "phase": "marker",
            "marker": None,
            "marker_given": None,
            "chips": {ec: STARTING_CHIPS, dmo: STARTING_CHIPS},
            "missed": {ec: 0, dmo: 0},
            "positions": {p: None for p in participants},
            "send": None,
            "placements": [],
            "betting": None,
            "history": [],
            "transfers": [],
            "result": None,
        }
        return state

    # ----------------------------------------------------------------- steps

    def step(self, state: State) -> Step | None:
        if state["result"] is not None:
            return None
        phase, r = state["phase"], state["round"]
        if phase == "marker":
            return Step("marker", "marker", (state["dmo"],), False, "The starting marker")
        if phase == "send":
            i = state["send"]["step"]
            return Step(f"r{r}-send-{i}", "send", (state["ec"], state["dmo"]), True, f"Round {r}, placement {i}")
        b = state["betting"]
        key, title = f"r{r}-bet-{b['turn']}", f"Round {r}, betting turn {b['turn']}"
        if b["extension"]:
            return Step(f"{key}-extension", "extension", (b["to_act"],), False, f"{title} (extended)", extends=key)
        return Step(key, "bet", (b["to_act"],), False, title)

    @staticmethod
    def reference(state: State) -> str | None:
        """The ``Step:`` reference of the open step: its form's title read as mail reads it
        (an extension keeps its turn's)."""
        if state["result"] is not None:
            return None
        return step_reference(BettingMinority.form_title(state))

    @staticmethod
    def form_title(state: State) -> str:
        phase, r = state["phase"], state["round"]
        if phase == "marker":
            return "The starting marker"
        if phase == "send":
            return f"Round {r}, placement {state['send']['step']}"
        return f"Round {r}, betting turn {state['betting']['turn']}"

    def awaiting(self, state: State) -> tuple[str, ...]:
        step = self.step(state)
        if step is None:
            return ()
        if state["phase"] == "send":
            return tuple(p for p in step.players if state["send"]["sent"][p] is None)
        return step.players

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        """The first mail of the match (the starting-marker step) goes to every seat, so the
        participants get their lists (those without an address are never mailed); every
        later step, and the end, only to the two DM players (ruling 3)."""
        if state["phase"] == "marker" and state["result"] is None:
            return tuple(state["players"])
        return (state["ec"], state["dmo"])

    # ----------------------------------------------------------------- mail text

    def parse(self, state: State, player: str, text: str) -> Parsed:
        """The mail's command (:func:`read_mail`); a participant's mail is never read: a
        participant has nothing to send (:func:`nothing_to_send`), whatever they wrote."""
        if player in state["participants"]:
            raise ParseError(nothing_to_send(state))
        return read_mail(state, text)

    def form(self, state: State, player: str) -> str:
        """The command for the open step, filled in with a legal choice, and its Step line."""
        move = self._default_move(state, player)
        if move is None:
            return ""
        return f"{command_text(state, move)}\nStep: {self.form_title(state)}\n"

    def _default_move(self, state: State, player: str) -> Move | None:
        step = self.step(state)
        if step is None or player not in step.players:
            return None
        phase = state["phase"]
        if phase == "marker":
            return {"action": "marker", "to": "me"}
        if phase == "send":
            if state["send"]["sent"][player] is not None:
                return None
            first = next(p for p in state["participants"] if state["positions"][p] is None)
            return {"action": "send", "participant": first, "room": ROOMS[0]}
        b = state["betting"]
        opp = self.opponent(state, player)
        theirs = total(b["placements"][opp])
        if theirs == 0:
            return {"action": "bet", "rooms": {ROOMS[0]: MIN_BET}}
        amount = call_amount(state["chips"][player], state["chips"][opp], theirs)
        return {"action": "call", "rooms": {ROOMS[0]: amount}}

    # ----------------------------------------------------------------- moves

    @staticmethod
    def opponent(state: State, player: str) -> str:
        return state["dmo"] if player == state["ec"] else state["ec"]

    @staticmethod
    def role(state: State, player: str | None) -> str | None:
        if player is None:
            return None
        if player == state["ec"]:
            return EC
        if player == state["dmo"]:
            return DMO
        return PARTICIPANT if player in state["participants"] else None

    def apply_move(self, state: State, player: str, move: Move) -> Applied:
        def reject(reason: str) -> Applied:
            return Applied(state, False, reason, changed=False)

        if state["result"] is not None:
            return reject("The match is over; no more moves are accepted.")
        if player not in state["players"]:
            return reject("You are not playing in this match.")
        if player in state["participants"]:
            return reject(nothing_to_send(state))
        if not isinstance(move, dict) or not isinstance(move.get("action"), str):
            return reject("A move is MARKER, SEND, BET, RAISE or CALL.")
        step = self.step(state)
        assert step is not None
        ref = move.get("step")
        if ref is not None and ref != self.reference(state):
            shown = ref if isinstance(ref, str) else repr(ref)
            now = self.form_title(state)
            if player in self.awaiting(state):
                return reject(
                    f"Your mail answers an earlier step ({shown}), which is over; now it is {now}. "
                    f"Send your command again with the line 'Step: {now}'."
                )
            return reject(
                f"Your mail answers an earlier step ({shown}), which is over; now it is {now}, "
                "and you have nothing to send until our next mail."
            )
        action = move["action"]
        phase = state["phase"]
        expected = {"marker": ("marker",), "send": ("send",), "bet": BET_COMMANDS}[phase]
        if action not in expected:
            return reject(f"{self.form_title(state)} is open: {self.what_now(state, player)}")
        if player not in step.players:
            return reject(f"It is not your turn: {self.what_now(state, player)}")
        if phase == "marker":
            return self._marker(state, player, move)
        if phase == "send":
            return self._send(state, player, move)
        return self._bet(state, player, move)

    def what_now(self, state: State, player: str) -> str:
        """One sentence: what ``player`` may do in the open step."""
        phase = state["phase"]
        step = self.step(state)
        assert step is not None
        names = state["names"]
        if player not in step.players:
            other = ", ".join(names[p] for p in step.players)
            return f"{step.title} is {other}'s to decide; you have nothing to send until our next mail."
        if phase == "marker":
            return "Give the starting marker: MARKER ME (you keep it) or MARKER OPPONENT."
        if phase == "send":
            if state["send"]["sent"][player] is not None:
                return f"You have sent your participant for this step; wait for {names[self.opponent(state, player)]}."
            return "Send one unplaced participant to a room: SEND <participant> TO <Uno|Dos|Tres>."
        return describe_bet_choices(state, player)

    def _marker(self, state: State, player: str, move: Move) -> Applied:
        to = move.get("to")
        if to not in ("me", "opponent"):
            return Applied(state, False, "Write MARKER ME or MARKER OPPONENT.", changed=False)
        new = clone(state)
        new["marker"] = player if to == "me" else self.opponent(state, player)
        new["marker_given"] = {"by": player, "to": new["marker"], "timeout": False}
        _open_round(new)
        return Applied(new, True)

    def _send(self, state: State, player: str, move: Move) -> Applied:
        who, room = move.get("participant"), move.get("room")
        if who not in state["participants"]:
            return Applied(state, False, f"{who!r} is not a participant of this match.", changed=False)
        if room not in ROOMS:
            return Applied(state, False, f"{room!r} is not a room: Uno, Dos or Tres.", changed=False)
        sent = state["send"]["sent"]
        if sent[player] is not None:
            return Applied(
                state,
                False,
                f"You have already sent a participant in this step, and a send is final; wait for "
                f"{state['names'][self.opponent(state, player)]} (or the step's deadline).",
                changed=False,
            )
        placed = state["positions"][who]
        if placed is not None:
            return Applied(
                state,
                False,
                f"{state['names'][who]} is already in {placed}. Send one of the participants not yet placed: "
                f"{', '.join(unplaced_names(state))}.",
                changed=False,
            )
        new = clone(state)
        new["send"]["sent"][player] = {"participant": who, "room": room}
        if all(s is not None for s in new["send"]["sent"].values()):
            _close_send_step(new, timeout=False)
        return Applied(new, True)

    def _bet(self, state: State, player: str, move: Move) -> Applied:
        rooms = move.get("rooms")
        if (
            not isinstance(rooms, dict)
            or not rooms
            or not all(
                r in ROOMS and isinstance(n, int) and not isinstance(n, bool) and n >= 0 for r, n in rooms.items()
            )
        ):
            return Applied(state, False, "Name one or two rooms with whole numbers of chips.", changed=False)
        b = state["betting"]
        opp = self.opponent(state, player)
        theirs = total(b["placements"][opp])
        command = move["action"]
        if theirs == 0 and command == "call":
            return Applied(
                state,
                False,
                "There is no bet to call yet: you open the betting. " + describe_bet_choices(state, player),
                changed=False,
            )
        kind, problem = judge_bet(state["chips"][player], state["chips"][opp], theirs, command, rooms)
        new = clone(state)
        nb = new["betting"]
        placement = {room: rooms[room] for room in ROOMS if room in rooms}
        if problem is not None:
            _penalise(new, player, placement, command, problem)
            return Applied(new, False, _penalty_reason(new, player, problem), changed=True)
        nb["placements"][player] = placement
        nb["actions"].append({"player": player, "kind": kind, "placement": placement, "total": total(placement)})
        nb["extension"] = False
        if kind == "call":
            _end_betting(new, caller=player, how="call")
        else:
            nb["to_act"] = opp
            nb["turn"] += 1
        return Applied(new, True)

    # ----------------------------------------------------------------- deadlines

    def apply_timeout(self, state: State, key: str | None = None) -> State:
        """The open step's deadline (RULINGS): the marker stays with the DMO; a DM player who
        sent nobody places nobody, and if neither sent, the remaining participants are placed
        at random and the phase ends; a missed betting turn is extended once and counts as
        missed; still missing after the extension, the opener's turn passes to the opponent,
        and anyone else's betting ends as if they called with their current placement."""
        if state["result"] is not None:
            raise GameError("The match is over; there is no step to close.")
        new = clone(state)
        phase = new["phase"]
        if phase == "marker":
            new["marker"] = new["dmo"]
            new["marker_given"] = {"by": new["dmo"], "to": new["dmo"], "timeout": True}
            _open_round(new)
        elif phase == "send":
            _close_send_step(new, timeout=True)
        else:
            b = new["betting"]
            absent = b["to_act"]
            if not b["extension"]:
                new["missed"][absent] += 1
                b["missed"][absent] += 1
                b["extension"] = True
                b["actions"].append({"player": absent, "kind": "missed", "placement": None, "total": None})
            else:
                b["extension"] = False
                b["actions"].append({"player": absent, "kind": "missed-extension", "placement": None, "total": None})
                opp = self.opponent(new, absent)
                if b["placements"][absent] is None and b["placements"][opp] is None:
                    if b["switched"]:
                        _end_betting(new, caller=None, how="nobody opened")
                    else:  # the absent player was to open: the opponent opens instead
                        b["switched"] = True
                        b["opener"] = b["to_act"] = opp
                        b["turn"] += 1
                else:  # as if the absent player called with their current placement
                    _end_betting(new, caller=absent, how="missed")
        return new

    def forfeit(self, state: State, player: str) -> State:
        """``player``, a DM player, forfeits the match (RULINGS, "Seasons": a loss, with the
        chips as they stand; ruling 21): it ends at once, the opponent winning. The open round
        is not played out: no placement is made, no stake leaves anybody's holdings (stakes
        leave them only when betting ends), no payout, no loss for missed turns; the chips stay
        as they are. ``state["forfeit"]`` records who forfeited, in which round and phase, and
        the open round as it stood (its positions, closed placement steps and betting so far,
        all public); the state's open round is cleared, as no round is open any more, and a
        send not yet revealed is dropped. The views show the record. A participant (a silent
        seat) cannot forfeit."""
        if state["result"] is not None:
            raise GameError("The match is over; nobody can forfeit it any more.")
        if player in state["participants"]:
            raise GameError(
                f"{player} is a participant, a silent seat of this match, and cannot forfeit it: only the EC and "
                "the DMO play it."
            )
        if player not in (state["ec"], state["dmo"]):
            raise GameError(f"{player} is not playing in this match, so cannot forfeit it.")
        new = clone(state)
        names = new["names"]
        winner = self.opponent(new, player)
        new["forfeit"] = {
            "player": player,
            "round": new["round"],
            "phase": new["phase"],
            "positions": new["positions"],
            "placements": new["placements"],
            "betting": new["betting"],
        }
        new["phase"] = "over"
        new["send"] = None
        new["positions"] = {p: None for p in new["participants"]}
        new["placements"] = []
        new["betting"] = None
        where = "before round 1" if state["phase"] == "marker" else f"in round {new['round']}"
        new["result"] = {
            "outcome": {winner: "win", player: "loss"},
            "victory_points": {winner: VICTORY_POINTS["win"], player: VICTORY_POINTS["loss"]},
            "reason": f"{names[winner]} wins: {names[player]} forfeited the match {where}.",
            "scores": {"chips": dict(new["chips"]), "rounds": len(new["history"])},
            "awards": {},
            "signals": [],
        }
        return new

    def with_balances(self, state: State, balances: dict[str, int]) -> State:
        """The match is played with its own chips: season balances are checked, not used."""
        check_balances(state, balances)
        return clone(state)

    # ----------------------------------------------------------------- views

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        """What ``player`` may see (None: the public, the archive). A participant sees their
        own list and who the DM players are, nothing of the play; a DM player sees the
        positions, both stacks, the betting so far with its split, the finished rounds
        (each with the entries its payout revealed) and what they may do now; never an
        entry of the open round or a later one, nor the opponent's send before the step
        closes. The public sees what both DM players see, without any send in progress."""
        role = self.role(state, player)
        names = state["names"]
        short = short_ids(state["participants"])
        base: dict[str, Any] = {
            "role": role,
            "me": player,
            "ec": state["ec"],
            "dmo": state["dmo"],
            "names": dict(names),
            "rounds": ROUNDS,
            "rooms": list(ROOMS),
            "participants": [{"id": p, "short": short[p], "name": names[p]} for p in state["participants"]],
        }
        if role == PARTICIPANT:
            base["entries"] = [names[state["ec"] if e == EC else state["dmo"]] for e in state["lists"][player]]
            base["entry_roles"] = list(state["lists"][player])
            base["short"] = short[player]
            base["final"] = state["result"]
            return clone(base)  # one copy of everything the view shares with the state
        step = self.step(state)
        b = state["betting"]
        base.update(
            {
                "round": state["round"],
                "phase": state["phase"],
                "step": None if step is None else {"key": step.key, "kind": step.kind, "title": step.title},
                "marker": state["marker"],
                "marker_given": state["marker_given"],
                "stacks": dict(state["chips"]),
                "missed": dict(state["missed"]),
                "positions": [
                    {"id": p, "short": short[p], "name": names[p], "room": state["positions"][p]}
                    for p in state["participants"]
                ],
                "occupants": {
                    room: [names[p] for p in state["participants"] if state["positions"][p] == room] for room in ROOMS
                },
                "unplaced": unplaced_names(state) if state["result"] is None else [],
                "placements": state["placements"],
                "betting": None
                if b is None
                else {
                    "opener": b["opener"],
                    "to_act": b["to_act"],
                    "turn": b["turn"],
                    "extension": b["extension"],
                    "switched": b["switched"],
                    "placements": b["placements"],
                    "totals": {p: total(pl) for p, pl in b["placements"].items()},
                    "actions": b["actions"],
                },
                "history": state["history"],
                "final": state["result"],
            }
        )
        if state.get("forfeit") is not None:  # only once a DM player forfeited (ruling 21)
            base["forfeit"] = state["forfeit"]
        if role in (EC, DMO):
            assert player is not None
            opp = self.opponent(state, player)
            base["opponent"] = opp
            sent = state["send"]["sent"][player] if state["phase"] == "send" and state["result"] is None else None
            base["sent"] = None if sent is None else {**sent, "name": names[sent["participant"]]}
            base["legal"] = self._legal(state, player)
            base["now"] = self.what_now(state, player) if step is not None else None
        return clone(base)  # one copy of everything the view shares with the state

    def _legal(self, state: State, player: str) -> dict[str, Any] | None:
        step = self.step(state)
        if step is None or player not in step.players:
            return None
        phase = state["phase"]
        if phase == "marker":
            return {"kind": "marker"}
        if phase == "send":
            if state["send"]["sent"][player] is not None:
                return None
            return {"kind": "send", "unplaced": unplaced_names(state)}
        mine, theirs, their_total = bet_figures(state, player)
        cap = bet_cap(mine, theirs)
        return {
            "kind": "bet",
            "cap": cap,
            "opening": their_total == 0,
            "call": None if their_total == 0 else call_amount(mine, theirs, their_total),
            "raise_from": their_total + 1 if cap > their_total else None,
        }

    def standings(self, state: State) -> list[str]:
        """Two lines, one per DM player, from the public view only."""
        public = self.view(state, None)
        lines = []
        for p in (state["ec"], state["dmo"]):
            line = f"{p} ({self.role(state, p)}): {plural(public['stacks'][p], 'chip')}"
            if public["marker"] == p:
                line += ", holds the starting marker"
            if public["missed"][p]:
                k = public["missed"][p]
                line += f", {plural(k, 'betting turn')} missed"
            b = public["betting"]
            if b is not None and b["placements"][p]:
                line += f"; bet {format_placement(b['placements'][p])}"
            lines.append(line)
        done = len(public["history"])
        lines.append(f"rounds finished: {done} of {ROUNDS}")
        return lines

    def result(self, state: State) -> Result | None:
        result = stored_result(state)
        if result is not None:
            result.ranking = ranking(state, result.outcome, state["chips"])
        return result

    # ----------------------------------------------------------------- for tests and bots

    def sample_moves(self, state: State, player: str, rnd: random.Random) -> list[Move]:
        """A few legal moves of ``player`` now (with the Step line now and then)."""
        step = self.step(state)
        if step is None or player not in step.players:
            return []
        phase = state["phase"]
        moves: list[Move] = []
        if phase == "marker":
            moves = [{"action": "marker", "to": "me"}, {"action": "marker", "to": "opponent"}]
        elif phase == "send":
            if state["send"]["sent"][player] is not None:
                return []
            free = [p for p in state["participants"] if state["positions"][p] is None]
            for _ in range(3):
                moves.append({"action": "send", "participant": rnd.choice(free), "room": rnd.choice(ROOMS)})
        else:
            mine, theirs, their_total = bet_figures(state, player)
            cap = bet_cap(mine, theirs)
            if their_total == 0:
                for _ in range(2):
                    moves.append(
                        {"action": rnd.choice(["bet", "raise"]), "rooms": random_split(rnd, rnd.randint(1, cap))}
                    )
            else:
                need = call_amount(mine, theirs, their_total)
                moves.append({"action": rnd.choice(["call", "bet"]), "rooms": random_split(rnd, need)})
                if cap > their_total:
                    moves.append({"action": "raise", "rooms": random_split(rnd, rnd.randint(their_total + 1, cap))})
        ref = self.reference(state)
        return [{**m, "step": ref} if rnd.random() < 0.3 else m for m in moves]

    def hidden_variants(self, state: State, player: str, rnd: random.Random) -> list[State]:
        """States that differ only in what ``player`` may not know yet: the entries of the
        open and later rounds (the revealed ones stay; for a participant, their own list
        stays too, and every list is re-drawn with both margins kept), and the other DM
        player's send of the open placement step (for a participant, both sends)."""
        if player not in state["players"]:
            raise GameError(f"{player} is not playing in this match.")
        if state["result"] is not None:
            return []
        variants = []
        for _ in range(2):
            new = clone(state)
            revealed = len(state["history"])
            rows = [i for i, p in enumerate(state["participants"]) if p != player]
            grid = [list(new["lists"][p]) for p in state["participants"]]
            _swap_mix(grid, rows, list(range(revealed, ROUNDS)), rnd, 60)
            for i, p in enumerate(state["participants"]):
                new["lists"][p] = grid[i]
            if state["phase"] == "send":
                free = [p for p in state["participants"] if state["positions"][p] is None]
                for dm, sent in new["send"]["sent"].items():
                    if sent is not None and dm != player:
                        new["send"]["sent"][dm] = {"participant": rnd.choice(free), "room": rnd.choice(ROOMS)}
            if new != state:
                variants.append(new)
        return variants


# ---------------------------------------------------------------------- the phases


def _open_round(s: State) -> None:
    """The open round's minority phase begins: nobody placed, placement step 1."""
    s["phase"] = "send"
    s["positions"] = {p: None for p in s["participants"]}
    s["placements"] = []
    s["send"] = {"step": 1, "sent": {s["ec"]: None, s["dmo"]: None}}
    s["betting"] = None


def _close_send_step(s: State, *, timeout: bool) -> None:
    """Place the step's participants (RULINGS); if both DM players timed out, the rest at
    random, from ``rng(seed, "placement", round, step)``. Then the next step, or betting."""
    sent = s["send"]["sent"]
    i = s["send"]["step"]
    record: dict[str, Any] = {"step": i, "sent": clone(sent), "placed": [], "random": False, "timeout": timeout}
    if all(v is None for v in sent.values()):
        rnd = rng(s["seed"], "placement", s["round"], i)
        for p in s["participants"]:
            if s["positions"][p] is None:
                room = rnd.choice(ROOMS)
                s["positions"][p] = room
                record["placed"].append({"participant": p, "room": room, "how": "random"})
        record["random"] = True
    else:
        for placed in resolve_sends(sent):
            s["positions"][placed["participant"]] = placed["room"]
            record["placed"].append(placed)
    s["placements"].append(record)
    if any(room is None for room in s["positions"].values()):
        s["send"] = {"step": i + 1, "sent": {s["ec"]: None, s["dmo"]: None}}
        return
    s["send"] = None
    s["phase"] = "bet"
    holder = s["marker"]
    s["betting"] = {
        "opener": holder,
        "to_act": holder,
        "turn": 1,
        "extension": False,
        "switched": False,
        "placements": {s["ec"]: None, s["dmo"]: None},
        "actions": [],
        "missed": {s["ec"]: 0, s["dmo"]: 0},
    }


def judge_bet(mine: int, theirs: int, their_total: int, command: str, rooms: dict[str, int]) -> tuple[str, str | None]:
    """What a well-formed bet is (``"open"``, ``"raise"`` or ``"call"``) and, if it breaks
    the limits (RULINGS), the problem. BET is read by its total: above the opponent's
    total a raise, equal to what a call must be a call."""
    cap = bet_cap(mine, theirs)
    amount = sum(rooms.values())
    need = call_amount(mine, theirs, their_total) if their_total else None
    kind = "open" if their_total == 0 else ("call" if command == "call" else "raise")
    if command == "bet" and need is not None:
        kind = "call" if amount == need else "raise"
    if len(rooms) > 2:
        return kind, "You may not bet on all three rooms; bet on one or two"
    if any(n < MIN_BET for n in rooms.values()):
        return kind, f"Every room you bet on needs at least {plural(MIN_BET, 'chip')}"
    if amount > mine:
        return kind, f"Your bet totals {plural(amount, 'chip')}, more than the {mine} you hold"
    if amount > cap:
        return (
            kind,
            f"Your bet totals {plural(amount, 'chip')}, more than the most you may bet now, {cap} "
            f"(3/4 of your opponent's {plural(theirs, 'chip')}, at least {MIN_BET})",
        )
    if kind == "call" and amount != need:
        return (
            kind,
            f"A call must total {plural(need, 'chip')}, your opponent's bet"
            f"{'' if need == their_total else ' as far as you may bet'}; yours totals {amount}",
        )
    if kind == "raise" and amount <= their_total:
        return (
            kind,
            f"A raise must total more than your opponent's {plural(their_total, 'chip')}; yours totals {amount}",
        )
    return kind, None


def _penalise(s: State, player: str, placement: dict[str, int], command: str, problem: str) -> None:
    """A well-formed bet that breaks the limits costs 1 chip (it leaves play) and is asked
    again (ruling 8); a placement the player can no longer cover is cut to their chips
    (:func:`cut_placement`, ruling 16). A penalty that leaves the player 0 chips ends the
    betting as if they called with their current placement, so cut to none: the round is
    paid out, the marker passes to them as for a call, then the zero-chip checks (RULINGS,
    "Order of the zero-chip checks"; ruling 13)."""
    b = s["betting"]
    step = f"r{s['round']}-bet-{b['turn']}"
    paid = min(PENALTY, s["chips"][player])
    s["chips"][player] -= paid
    transfer(s, player, OUT, paid, "illegal bet", step, currency=MATCH_CHIPS)
    b["actions"].append(
        {
            "player": player,
            "kind": "penalty",
            "placement": placement,
            "total": total(placement),
            "command": command,
            "problem": problem,
        }
    )
    own = b["placements"][player]
    if own and total(own) > s["chips"][player]:
        b["placements"][player] = cut_placement(own, s["chips"][player])
    if s["chips"][player] == 0:
        _end_betting(s, caller=player, how="penalty")


def cut_placement(placement: dict[str, int], most: int) -> dict[str, int] | None:
    """A placement cut to ``most`` chips (ruling 16), a chip at a time from the room that
    holds more (ties: the later room in the order Uno, Dos, Tres), each room kept at 1 chip
    or more, a room dropped when nothing else is left: both rooms stay in the bet as long
    as they can, at a split as even as the cut allows."""
    cut = dict(placement)
    while sum(cut.values()) > most:
        room = max(cut, key=lambda r: (cut[r], ROOMS.index(r)))
        if cut[room] > MIN_BET:
            cut[room] -= 1
        else:
            del cut[room]
    return cut or None


def _penalty_reason(s: State, player: str, problem: str) -> str:
    """The answer to a bet that broke the limits: the penalty, and what is open now; or,
    when the penalty took the last chip, how the betting ended, the payout and the result."""
    cost = f"{problem}. That bet breaks the limits, so it costs you {plural(PENALTY, 'chip')}"
    if s["betting"] is not None:
        return f"{cost} (you hold {s['chips'][player]} now). Your turn is still open: your choices are below."
    h = s["history"][-1]  # the betting ended as the player's call (ended "penalty")
    r, opp, names = h["round"], BettingMinority.opponent(s, player), s["names"]
    stake = h["stakes"][player]
    staked, paid = h["payout"]["staked"], h["payout"]["paid"]

    def some(n: int) -> str:
        return plural(n, "chip") if n else "nothing"

    text = (
        f"{cost}, your last one. With no chips left, the betting of round {r} ends as if you called with your "
        f"standing bet cut to the chips you hold, so with {format_placement(stake) if stake else 'no bet'}; "
        f"the starting marker passes to you, as for a call. Round {r} is paid out: you staked {some(staked[player])} "
        f"and are paid {some(paid[player])}; {names[opp]} staked {some(staked[opp])} and is paid {some(paid[opp])}."
    )
    result = s["result"]
    if result is None:
        return f"{text} You hold {plural(s['chips'][player], 'chip')} now."
    if result["outcome"][player] == "loss" and s["chips"][player] == 0:
        return f"{text} You hold no chips after the payout, so you lose the match; {names[opp]} wins."
    return f"{text} The match is over: {result['reason']}"


def _end_betting(s: State, *, caller: str | None, how: str) -> None:
    """Betting ends, ``how``: "call"; "missed" (a turn missed with its extension, taken as
    a call); "penalty" (a penalty chip that left the caller at 0, taken as their call); or
    "nobody opened" (both opening turns missed: no stakes, the marker stays). The stakes go
    on the table, the payout is made, and the marker passes to the caller. Then the zero-chip
    checks, in RULINGS' order ("Order of the zero-chip checks"; ruling 13): a player at 0
    after the payout loses at once (both at 0: the DMO wins), and the match, over, takes no
    k/5 loss (ruling 17); else the k/5 losses of the round's missed turns are taken, and a
    player they leave at 0 loses (both at 0: the DMO wins)."""
    b = s["betting"]
    r = s["round"]
    step = f"r{r}-payout"
    ec, dmo = s["ec"], s["dmo"]
    by_role = {EC: ec, DMO: dmo}
    entries = {p: s["lists"][p][r - 1] for p in s["participants"]}
    counts = room_counts(entries, s["positions"])
    winners = room_winners(counts)
    placements = {role: b["placements"][p] for role, p in by_role.items()}
    chips_before = dict(s["chips"])
    paid = payout(placements, winners)
    for role, p in by_role.items():
        stake = paid["staked"][role]
        s["chips"][p] -= stake
        transfer(s, p, TABLE, stake, "stake", step, currency=MATCH_CHIPS)
    created = sum(paid["paid"].values()) - sum(paid["staked"].values())
    transfer(s, BANK, TABLE, created, "doubling", step, currency=MATCH_CHIPS)
    for role, p in by_role.items():
        s["chips"][p] += paid["paid"][role]
        transfer(s, TABLE, p, paid["paid"][role], "payout", step, currency=MATCH_CHIPS)
    after_payout = dict(s["chips"])
    broke = [p for p in (ec, dmo) if s["chips"][p] == 0]
    zero_check = "payout" if broke else None
    losses = {}
    if not broke:  # a match over at the payout check takes no k/5 loss (ruling 17)
        for p in (ec, dmo):
            if b["missed"][p]:
                lost = missed_turn_loss(s["chips"][p], s["missed"][p])
                s["chips"][p] -= lost
                transfer(s, p, OUT, lost, f"missed betting turns ({s['missed'][p]} so far)", step, currency=MATCH_CHIPS)
                losses[p] = lost
        broke = [p for p in (ec, dmo) if s["chips"][p] == 0]
        zero_check = "loss" if broke else None
    marker_before = s["marker"]
    if caller is not None:
        s["marker"] = caller
    s["history"].append(
        {
            "round": r,
            "entries": entries,
            "positions": dict(s["positions"]),
            "placement_steps": clone(s["placements"]),
            "counts": counts,
            "winners": {room: (None if w is None else by_role[w]) for room, w in winners.items()},
            "opener": b["opener"],
            "actions": clone(b["actions"]),
            "ended": how,
            "caller": caller,
            "stakes": {p: clone(b["placements"][p]) for p in (ec, dmo)},
            "payout": {
                "rooms": {
                    room: {
                        "chips": {by_role[k]: v for k, v in info["chips"].items()},
                        "doubled": {by_role[k]: v for k, v in info["doubled"].items()},
                        "winner": None if info["winner"] is None else by_role[info["winner"]],
                        "claimed": info["claimed"],
                        "claimed_doubled": info["claimed_doubled"],
                        "owned": {by_role[k]: v for k, v in info["owned"].items()},
                        "paid": {by_role[k]: v for k, v in info["paid"].items()},
                    }
                    for room, info in paid["rooms"].items()
                },
                "paid": {by_role[k]: v for k, v in paid["paid"].items()},
                "staked": {by_role[k]: v for k, v in paid["staked"].items()},
            },
            "chips_before": chips_before,
            "chips_after_payout": after_payout,
            "missed_loss": losses,
            "missed": {p: b["missed"][p] for p in (ec, dmo)},
            "missed_total": dict(s["missed"]),  # k of the k/5 loss: the misses in the match so far
            "chips": dict(s["chips"]),
            # the zero-chip check that ended the match: "payout", "loss" (the k/5 loss), or None
            "zero_check": zero_check,
            "marker_before": marker_before,
            "marker": s["marker"],
        }
    )
    s["betting"] = None
    if broke:
        _end_match(s, _zero_reason(s, s["history"][-1], broke))
        return
    if r == ROUNDS:
        _end_match(s, None)
        return
    s["round"] = r + 1
    _open_round(s)


def _zero_reason(s: State, h: dict[str, Any], broke: list[str]) -> str:
    """Why a zero-chip check ended the match: which check, and who is at 0."""
    names, r = s["names"], h["round"]
    if len(broke) == 1:
        who = f"{names[broke[0]]} has"
    else:
        who = f"{names[broke[0]]} and {names[broke[1]]} both have"
    if h["zero_check"] == "payout":
        why = f"{who} no chips left after the payout of round {r}"
        if h["ended"] == "penalty":
            caller = names[h["caller"]]
            why += (
                f" (a penalty for an illegal bet took {caller}'s last chip, which ended the betting as "
                f"{caller}'s call; then the round was paid out)"
            )
        why += "."
        if any(h["missed"].values()):
            why += " The match ends at this check, so the loss for missed betting turns is not taken."
    else:
        why = f"{who} no chips left after the loss for missed betting turns in round {r}."
    if len(broke) == 2:
        why += " Both at 0: the DMO wins."
    return why


def _end_match(s: State, why: str | None) -> None:
    """The end. ``why`` None: after 8 rounds, the most chips wins, and a tie goes to the
    DMO. Else a zero-chip check ended the match and ``why`` says which (:func:`_zero_reason`):
    a player at 0 loses at once, and both at 0 the DMO wins."""
    ec, dmo = s["ec"], s["dmo"]
    a, b = s["chips"][ec], s["chips"][dmo]
    if why is not None and (a == 0) != (b == 0):
        winner = dmo if a == 0 else ec
    else:
        winner = ec if a > b else dmo
    loser = dmo if winner == ec else ec
    names = s["names"]
    if why is None:
        tie = a == b
        why = (
            f"after {ROUNDS} rounds {names[winner]} has {plural(s['chips'][winner], 'chip')}, "
            f"{names[loser]} {s['chips'][loser]}" + ("; the tie goes to the DMO." if tie else ".")
        )
    s["phase"] = "over"
    s["send"] = None
    s["result"] = {
        "outcome": {winner: "win", loser: "loss"},
        "victory_points": {winner: VICTORY_POINTS["win"], loser: VICTORY_POINTS["loss"]},
        "reason": f"{names[winner]} wins: {why}",
        "scores": {"chips": dict(s["chips"]), "rounds": len(s["history"])},
        "awards": {},
        "signals": [],
    }


# ---------------------------------------------------------------------- text helpers


def nothing_to_send(state: State) -> str:
    """The answer to any mail of a participant (a silent seat): they have nothing to send
    in this match, whatever they wrote, and never a word about the open step."""
    names = state["names"]
    return (
        f"You have nothing to send in this match: as a participant, you are sent to rooms by "
        f"{names[state['ec']]} and {names[state['dmo']]}, who bet on the rooms. "
        "Your list is in the first mail of the match."
    )


def unplaced_names(state: State) -> list[str]:
    short = short_ids(state["participants"])
    return [f"{short[p]} {state['names'][p]}" for p in state["participants"] if state["positions"][p] is None]


def format_placement(placement: dict[str, int] | None) -> str:
    if not placement:
        return "nothing"
    return " ".join(f"{room} {placement[room]}" for room in ROOMS if room in placement)


def random_split(rnd: random.Random, amount: int) -> dict[str, int]:
    """``amount`` chips on one room or split over two (each >= 1)."""
    if amount >= 2 and rnd.random() < 0.5:
        a, b = rnd.sample(ROOMS, 2)
        first = rnd.randint(1, amount - 1)
        return {room: n for room, n in sorted({a: first, b: amount - first}.items(), key=lambda kv: ROOMS.index(kv[0]))}
    return {rnd.choice(ROOMS): amount}


def command_text(state: State, move: Move) -> str:
    """A move written in the mail grammar (the form, and the receipts)."""
    action = move["action"]
    if action == "marker":
        return f"MARKER {'ME' if move['to'] == 'me' else 'OPPONENT'}"
    if action == "send":
        short = short_ids(state["participants"])[move["participant"]]
        return f"SEND {short} TO {move['room']}"
    return f"{action.upper()} {format_placement(move['rooms'])}"


def bet_figures(state: State, player: str) -> tuple[int, int, int]:
    """(the player's chips, the opponent's chips, the opponent's standing bet in all): what
    every limit of the player's bet is judged on."""
    opp = state["dmo"] if player == state["ec"] else state["ec"]
    return state["chips"][player], state["chips"][opp], total(state["betting"]["placements"][opp])


def describe_bet_choices(state: State, player: str) -> str:
    """The legal choices of the player to bet, in one or two sentences."""
    mine, theirs, their_total = bet_figures(state, player)
    cap = bet_cap(mine, theirs)
    if their_total == 0:
        return (
            f"Open the betting: BET on one or two rooms (each at least {plural(MIN_BET, 'chip')}), "
            f"{plural(cap, 'chip')} in all at most, as in BET {ROOMS[0]} {MIN_BET}."
        )
    need = call_amount(mine, theirs, their_total)
    text = f"CALL with {plural(need, 'chip')} in all on one or two rooms, as in CALL {ROOMS[0]} {need}"
    if cap == their_total + 1:
        text += f"; or RAISE to {plural(cap, 'chip')} in all"
    elif cap > their_total:
        text += f"; or RAISE to {their_total + 1} to {plural(cap, 'chip')} in all"
    else:
        text += "; you may not raise, as the most you may bet does not top your opponent's bet"
    return text + "."


GAME = BettingMinority()
