"""Betting Minority's rule text as numbers and pure functions, each named for its rule (rule
text: ``seeds/betting-minority.txt``; the rulings: ``docs/games/betting-minority.md``): the
participants' lists, the rooms and the sends, the betting limits, the payout, the loss for
missed turns, the names a mail may use. The match as it runs is
:mod:`referee.games.betting_minority.play`, its phases
:mod:`referee.games.betting_minority.phases`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from referee.games.base import State, plural, rng
from referee.games.betting import normal_name as normal_name  # shared with the nomination

NAME = "betting-minority"

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
BET_COMMANDS = ("bet", "raise", "call")  # the betting's commands (BET, RAISE, CALL)


def opponent(state: State, player: str) -> str:
    """The other DM player."""
    return state["dmo"] if player == state["ec"] else state["ec"]


def role(state: State, player: str | None) -> str | None:
    """The seat's role: EC, DMO, a participant, or None (not in the match)."""
    if player is None:
        return None
    if player == state["ec"]:
        return EC
    if player == state["dmo"]:
        return DMO
    return PARTICIPANT if player in state["participants"] else None


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
    swap_mix(grid, list(range(n)), list(range(ROUNDS)), rnd, 40 * n * ROUNDS)
    rnd.shuffle(grid)
    order = list(range(ROUNDS))
    rnd.shuffle(order)
    return {p: [grid[i][r] for r in order] for i, p in enumerate(participants)}


def swap_mix(grid: list[list[str]], rows: list[int], cols: list[int], rnd: random.Random, tries: int) -> None:
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


def bet_figures(state: State, player: str) -> tuple[int, int, int]:
    """(the player's chips, the opponent's chips, the opponent's standing bet in all): what
    every limit of the player's bet is judged on."""
    opp = opponent(state, player)
    return state["chips"][player], state["chips"][opp], total(state["betting"]["placements"][opp])


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


# ---------------------------------------------------------------------- names and placements in mail


def short_ids(participants: Sequence[str]) -> dict[str, str]:
    return {p: f"P{i + 1}" for i, p in enumerate(participants)}


def step_reference(text: str) -> str:
    """``"Round 2, placement 3"`` -> ``"round 2 placement 3"``."""
    return normal_name(text)


def format_placement(placement: dict[str, int] | None) -> str:
    if not placement:
        return "nothing"
    return " ".join(f"{room} {placement[room]}" for room in ROOMS if room in placement)
