"""MatchJack: six players in two sets, each set at its own table with two automated
players, over 15 hands of a blackjack-flavoured poker.

Rule text: ``seeds/matchjack.txt``; the authoritative reading is the "MatchJack" section
of ``RULINGS.md``; decisions of our own are the numbered "Rulings" of
``docs/games/matchjack.md`` (each names its tests in ``tests/games/test_matchjack*.py``).
The cards, hand ranks and pots are :mod:`referee.games.matchjack.hands`, the bots' rules
:mod:`referee.games.matchjack.bots`, the betting rounds :mod:`referee.games.matchjack.table`
and the mail grammar :mod:`referee.games.matchjack.grammar`.

A game of **concurrent steps** (``GameType.concurrent``): ``steps(state)`` lists every open
step, each with its own deadline, and ``apply_timeout(state, key)`` closes the one named.
A hand ``h``:

1. ``h<h>-stay`` (kind ``stay``, simultaneous): every player still in the match, both
   tables at once, chooses ``STAY``, ``FOLD`` or ``FOLD STAYSET`` (revisable, secret until
   the deadline closes the step; a missing choice is a FOLD).
2. Then each table on its own: betting round 1 (``h<h>-<table>-bet1-<turn>``, kind
   ``bet``), the top pile card turned up, one action each (``h<h>-<table>-act-<seat>``, kind
   ``action``; the bots act inside the engine when their turn comes), betting round 2
   (``...-bet2-<turn>``), the showdown. ``<table>`` is ``main`` or ``lost``.
3. A table that has finished while the other plays has the waiting step
   ``h<h>-<table>-done`` (kind ``wait``, no deadline). When both have finished: after hands
   5 and 10 the ``break-<h>`` step (kind ``break``, nobody acts, its deadline ends it),
   then the next hand; after hand 15, or when at most one player is left with chips, the
   end: the match is over at once, its result names the winner and the EC and ranks the six
   (``Result.ranking``). The EC's nomination of the DMO is the season's step, not the
   match's.

Chips are the match's own (``MATCH_CHIPS``), 20 each: accounts are the players,
``pot-main`` and ``pot-lost`` (each table's pot), ``bots`` (where the bots' antes come
from), ``discard`` (split remainders, bots' shares, pots nobody can win), ``bank`` (the
6-chip reward of a correct guess). Garnets are the season's (``"garnets"``, read through
``with_holdings``): ``FOLD STAYSET`` pays 5 to ``LGT``, a correct guess is paid 3 from
``SEASON``.

State (plain JSON data)::

    players      the six player keys, in seat order of the season file
    seed         the match seed
    names        {player: display name} (options["names"], else the keys)
    hand         the open hand 1..15 (once over: the last hand played)
    phase        "stay", "play", "break" or "over"
    chips        {player: chips behind} (not in a pot)
    garnets      {player: garnets as last known} (options["holdings"], with_holdings)
    sets         {player: "Main" | "Lost" | None (eliminated)}: the set of the open hand
    seats        {player: seat number 1..6 at their set's table | None}
    rules        {bot: rule id}: secret until the match is over
    stay         {player: None | "stay" | "fold" | "stayset"}: the open stay step's choices
    tables       {"Main": table, "Lost": table}: the open (or last) hand at each table
    winners      {"Main": seat | None, "Lost": seat | None}: the seat that most recently
                 won at that table (human winners only)
    eliminated   [{"player", "hand", "table", "batch", "told"}] in the order they reached 0
                 (one batch per moment; told: the key of the step whose mail told them); a
                 forfeiter's entry has "forfeit": True and told "forfeit" (ruling 21)
    guesses      {player: [{"hand", "bot", "rule", "right", "paid"}]}: secret to the guesser
    rewards      [{"player", "hand"}]: the correct guesses paid (public: no bot, no rule)
    chips_after  [{player: chips}] after hand 0 (the start), 1, 2 ...
    history      [public record of every finished hand: per table the seats, who stayed,
                 folded or paid to keep their set, the hands shown, the chips won and
                 discarded, and the hand as played (stay results, starting seat, betting
                 rounds, actions without their cards, later folds, the showdown); every
                 player's chips after the hand; the set moves; who left the match at 0
                 chips (eliminated) and who forfeited it in the hand (forfeited)]
    final        None, or once the match is over {"winner", "ec", "how", "hands"}
    transfers    chip and garnet movements, see referee.games.base.transfer
    result       None while the match runs, else the fields of Result

A table (``tables[name]``)::

    name, key       "Main", "main"
    dealt           [player ...] the humans dealt in this hand, in seat order
    seats           {player: seat}
    bots            the table's two bots, in their action order
    hands           {player or bot: [[card, face up?], ...]} in position order
    pile, up        the undealt cards (top first) and the face-up pile card (None before
                    the action phase, or when the pile had nothing)
    spent           face-up pile cards covered by a newer one (a refill shuffles them)
    refills         how many refills so far; refilled: the pile is a refill (its cards
                    were all seen face up at the table)
    contrib         {player or bot: chips put in this hand (antes and bets)}
    stay            None until the stay step closes, then {player: {"choice": "stayed" |
                    "folded" | "stayset", "timeout": bool}} (public)
    refused         [player ...] whose FOLD STAYSET counted as FOLD (told to them only)
    stayed, hall    the stayers and the stay folders, in seat order
    moving          the folders who move to the other set after the hand
    folded          who folded later (betting, or a missed action turn)
    all_in          who has no chips behind in this hand
    starter         the seat that starts (ruling 7), order: the stayers from it round the table
    status          "stay", "bet", "action" or "done"
    rounds          the betting rounds so far (referee.games.matchjack.table)
    turned          the card turned up when the action phase began
    action_order    the humans still in, then the bots; next: who of it acts now (index)
    actions         [action entry ...] of the action phase
    showdown        None, or the showdown: hands, ranks, pots, winners, discarded
    revealed        who showed their cards at the showdown
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from referee.games.base import (
    HOUSE,
    MATCH_CHIPS,
    MIXED,
    Applied,
    GameError,
    GameType,
    Move,
    Parsed,
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
from referee.games.matchjack import bots as botlib
from referee.games.matchjack import grammar, hands, table

# ---------------------------------------------------------------------- the rule text's numbers

PLAYERS = 6
HANDS = 15  # "After 15 Hands"
STARTING_CHIPS = 20  # "(Players start with 20 chips)"
SETS = ("Main", "Lost")
KEYS = {"Main": "main", "Lost": "lost"}
OTHER = {"Main": "Lost", "Lost": "Main"}
PILE = 22  # RULINGS: the 44 cards split into two 22-card piles
STAYSET_FEE = 5  # "you may pay a fee of 5 garnets to avoid swapping sets"
GUESS_GARNETS = 3  # "You will gain 3 garnets, as well as an additional 6 chips!"
GUESS_CHIPS = 6
BOT_ANTE = 1  # "They will ante 1 chip, and bet nothing else"
BREAKS = (5, 10)  # "After Hand 5 and 10, you will get 10 minutes of break"
COLS = 2  # "the winner of the Main Match and gain 2 CoLs"
GARNETS = "garnets"
SEASON = "SEASON"
POTS = {"Main": "pot-main", "Lost": "pot-lost"}
BOTS_ACCOUNT, DISCARD, BANK = "bots", "discard", "bank"
RULE_IDS = tuple(rule.id for rule in botlib.CATALOGUE)
ALL_BOTS = tuple(b for name in SETS for b in botlib.BOTS[name])
ACTIONS = ("hit", "swap", "draw", "new")
# Live minutes become hours (ruling 1): "3 minutes to decide on actions", a 10-minute break.
STEP_HOURS = {"stay": 24.0, "bet": 12.0, "action": 12.0, "break": 24.0}
VICTORY_POINTS = {"win": 1.0, "loss": 0.0}


def ante_for(hand_no: int) -> int:
    """Rule text: 1 chip; "After Hand 7, both antes raise by 1 chip, and after hand 13 it
    raises by one more": 1 in hands 1-7, 2 in 8-13, 3 in 14-15 (the bots always 1)."""
    return 1 if hand_no <= 7 else 2 if hand_no <= 13 else 3


# ---------------------------------------------------------------------- small readers


def _alive(s: State) -> list[str]:
    out = {e["player"] for e in s["eliminated"]}
    return [p for p in s["players"] if p not in out]


def _is_out(s: State, p: str) -> bool:
    return any(e["player"] == p for e in s["eliminated"])


def _forfeited(s: State) -> set[str]:
    """The players who forfeited the match (ruling 21)."""
    return {e["player"] for e in s["eliminated"] if e.get("forfeit")}


def _gone(s: State, p: str) -> str:
    """How ``p``, out of the match, left it, for the answers they get."""
    return "You have forfeited the match" if p in _forfeited(s) else "You have left the match (0 chips)"


def _dealt_at(s: State, p: str) -> str | None:
    """The table ``p`` was dealt at in the open (or last) hand."""
    for name in SETS:
        if p in s["tables"][name]["dealt"]:
            return name
    return None


def _in_hand(t: dict[str, Any]) -> list[str]:
    """The humans still in the hand at this table, in action order."""
    out = set(t["hall"]) | set(t["folded"])
    return [p for p in t["order"] if p not in out]


def _guess_hand(s: State) -> int:
    """The hand a guess made now counts for (ruling 16: a break's guess counts for the next)."""
    return s["hand"] + 1 if s["phase"] == "break" else s["hand"]


def _can_guess(s: State, p: str) -> str | None:
    """Why ``p`` may not guess now (None: they may)."""
    if s["result"] is not None:
        return "The match is over; no more guesses."
    if _is_out(s, p):
        return f"{_gone(s, p)}; you may not guess any more."
    hand_no = _guess_hand(s)
    if any(g["hand"] == hand_no for g in s["guesses"][p]):
        return f"You have already guessed in hand {hand_no}; one guess per hand."
    return None


# ---------------------------------------------------------------------- steps


def _table_step(s: State, name: str) -> Step | None:
    t = s["tables"][name]
    h, key = s["hand"], KEYS[name]
    if t["status"] == "bet":
        rnd = t["rounds"][-1]
        p = rnd["to_act"]
        return Step(
            f"h{h}-{key}-bet{rnd['number']}-{rnd['turn']}",
            "bet",
            (p,),
            False,
            f"Hand {h}, {name} table, betting round {rnd['number']}, turn {rnd['turn']}",
        )
    if t["status"] == "action":
        p = t["action_order"][t["next"]]
        seat = t["seats"][p]
        return Step(f"h{h}-{key}-act-{seat}", "action", (p,), False, f"Hand {h}, {name} table, action of seat {seat}")
    if t["status"] == "done":
        return Step(
            f"h{h}-{key}-done",
            "wait",
            (),
            False,
            f"Hand {h}, {name} table: waiting for the {OTHER[name]} table",
            waiting=True,
        )
    return None


def _steps(s: State) -> tuple[Step, ...]:
    """Every open step: the timed ones first (Main before Lost), then the waiting one."""
    if s["result"] is not None:
        return ()
    h, phase = s["hand"], s["phase"]
    if phase == "stay":
        return (Step(f"h{h}-stay", "stay", tuple(_alive(s)), True, f"Hand {h}, stay or fold"),)
    if phase == "break":
        return (Step(f"break-{h}", "break", (), False, f"Break after hand {h}"),)
    found = [step for name in SETS if (step := _table_step(s, name)) is not None]
    return tuple(sorted(found, key=lambda step: step.waiting))


def _player_step(s: State, p: str) -> Step | None:
    """The open step ``p`` acts in (at most one at a time)."""
    for step in _steps(s):
        if p in step.players:
            return step
    return None


# ---------------------------------------------------------------------- hands


def _new_table(name: str, dealt: list[str], seats: dict[str, int], pile: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "key": KEYS[name],
        "dealt": dealt,
        "seats": {p: seats[p] for p in dealt},
        "bots": list(botlib.BOTS[name]),
        "hands": {},
        "pile": pile,
        "up": None,
        "spent": [],
        "refills": 0,
        "refilled": False,
        "contrib": {},
        "stay": None,
        "refused": [],
        "stayed": [],
        "hall": [],
        "moving": [],
        "folded": [],
        "all_in": [],
        "starter": None,
        "order": [],
        "status": "stay",
        "rounds": [],
        "turned": None,
        "action_order": [],
        "next": 0,
        "actions": [],
        "showdown": None,
        "revealed": [],
    }


def _start_hand(s: State, h: int) -> None:
    """Hand ``h``: a fresh shuffle of the 44 cards from ``rng(seed, "deck", h)``, the first
    22 to the Main table's pile, the rest to the Lost table's; antes (a player short of
    chips antes all they have); two cards each from the pile top (the first face up, the
    second face down), the humans in seat order, then the bots; the stay step opens."""
    s["hand"], s["phase"] = h, "stay"
    deck = list(hands.DECK)
    rng(s["seed"], "deck", h).shuffle(deck)
    ante = ante_for(h)
    key = f"h{h}-stay"
    for i, name in enumerate(SETS):
        dealt = sorted((p for p in _alive(s) if s["sets"][p] == name), key=lambda p: s["seats"][p])
        t = _new_table(name, dealt, s["seats"], deck[i * PILE : (i + 1) * PILE])
        s["tables"][name] = t
        for p in dealt:
            put = min(ante, s["chips"][p])
            s["chips"][p] -= put
            t["contrib"][p] = put
            transfer(s, p, POTS[name], put, f"ante, hand {h}", key, currency=MATCH_CHIPS)
        for bot in t["bots"]:
            t["contrib"][bot] = BOT_ANTE
        bots_ante = BOT_ANTE * len(t["bots"])
        transfer(s, BOTS_ACCOUNT, POTS[name], bots_ante, f"the bots' antes, hand {h}", key, currency=MATCH_CHIPS)
        seats = dealt + t["bots"]
        for who in seats:
            t["hands"][who] = [[t["pile"].pop(0), True]]
        for who in seats:
            t["hands"][who].append([t["pile"].pop(0), False])
    s["stay"] = {p: None for p in _alive(s)}


def _eliminate(s: State, players: Sequence[str]) -> None:
    """Players at 0 chips leave the match at once (ruling 12), all of one call in one batch
    (the same moment); each is recorded with the table they were dealt at in this hand."""
    fresh = [p for p in players if not _is_out(s, p)]
    if not fresh:
        return
    batch = 1 + max((e["batch"] for e in s["eliminated"]), default=0)
    for p in fresh:
        s["eliminated"].append({"player": p, "hand": s["hand"], "table": _dealt_at(s, p), "batch": batch, "told": None})


def _close_stay(s: State) -> None:
    """The stay step's deadline (RULINGS): a missing choice is a FOLD; FOLD STAYSET pays 5
    garnets to the LGT from the garnets held now, else it counts as FOLD (ruling 5);
    stayers pay the second ante (all they have when short); a folder at 0 chips leaves
    the match (ruling 12). Then each table plays on."""
    h = s["hand"]
    key = f"h{h}-stay"
    ante = ante_for(h)
    broke: list[str] = []
    for name in SETS:
        t = s["tables"][name]
        record: dict[str, Any] = {}
        for p in t["dealt"]:
            if _is_out(s, p):  # forfeited while the step was open (ruling 21): in the hall
                t["hall"].append(p)
                record[p] = {"choice": "forfeited", "timeout": False}
                continue
            choice = s["stay"].get(p)
            timeout = choice is None
            if choice == "stay":
                put = min(ante, s["chips"][p])
                s["chips"][p] -= put
                t["contrib"][p] += put
                transfer(s, p, POTS[name], put, f"second ante, hand {h}", key, currency=MATCH_CHIPS)
                t["stayed"].append(p)
                record[p] = {"choice": "stayed", "timeout": False}
                continue
            t["hall"].append(p)
            if choice == "stayset" and s["garnets"][p] >= STAYSET_FEE:
                s["garnets"][p] -= STAYSET_FEE
                transfer(s, p, HOUSE, STAYSET_FEE, f"FOLD STAYSET, hand {h}", key, currency=GARNETS)
                record[p] = {"choice": "stayset", "timeout": False}
            else:
                if choice == "stayset":
                    t["refused"].append(p)
                t["moving"].append(p)
                record[p] = {"choice": "folded", "timeout": timeout}
            if s["chips"][p] == 0:
                broke.append(p)
        t["stay"] = record
    s["stay"] = {}
    s["phase"] = "play"
    _eliminate(s, broke)
    for name in SETS:
        _begin_play(s, name)
    for name in SETS:
        _advance(s, name)
    _after_tables(s)


def _begin_play(s: State, name: str) -> None:
    """Ruling 7: the starting seat is the seat that most recently won at this table, when a
    stayer able to bet sits there; else the lowest seat of a stayer able to bet (else of
    any stayer). Every phase of the hand goes round the table from it."""
    t = s["tables"][name]
    stayers = t["stayed"]
    t["all_in"] = [p for p in stayers if s["chips"][p] == 0]
    able = [p for p in stayers if p not in t["all_in"]]
    won = s["winners"][name]
    holder = next((p for p in stayers if t["seats"][p] == won), None)
    if holder is not None and holder in able:
        first = holder
    elif able:
        first = able[0]
    elif stayers:
        first = stayers[0]
    else:
        first = None
    if first is not None:
        i = stayers.index(first)
        t["starter"] = t["seats"][first]
        t["order"] = stayers[i:] + stayers[:i]
    _start_round(s, t, 1)


def _start_round(s: State, t: dict[str, Any], number: int) -> None:
    t["rounds"].append(table.open_round(number, _in_hand(t), s["chips"], t["all_in"]))
    t["status"] = "bet"


def _start_action(s: State, t: dict[str, Any]) -> None:
    """The top pile card is turned face up; the humans still in act in turn order, then the
    bots."""
    card, refilled = _draw_top(s, t)
    t["up"] = card
    t["turned"] = {"card": card, "refill": refilled}
    t["action_order"] = _in_hand(t) + list(t["bots"])
    t["next"] = 0
    t["status"] = "action"


def _draw_top(s: State, t: dict[str, Any]) -> tuple[str | None, bool]:
    """The top card of the pile. An empty pile is first refilled by shuffling the table's
    spent face-up pile cards (``rng(seed, "refill", hand, table, n)``); with none, None."""
    refilled = False
    if not t["pile"] and t["spent"]:
        t["refills"] += 1
        cards = list(t["spent"])
        rng(s["seed"], "refill", s["hand"], t["key"], t["refills"]).shuffle(cards)
        t["pile"], t["spent"], t["refilled"] = cards, [], True
        refilled = True
    if not t["pile"]:
        return None, refilled
    return t["pile"].pop(0), refilled


def _index(cards: list[list[Any]], up: bool) -> int | None:
    return next((i for i, (_, face_up) in enumerate(cards) if face_up == up), None)


def _do_action(s: State, t: dict[str, Any], who: str, action: dict[str, Any]) -> dict[str, Any]:
    """One action of the action phase (rule text; RULINGS), by a player or a bot:

    * HIT: the pile's top card joins the hand, face up;
    * SWAP UP / DOWN: your face-up (first face-up) or face-down card and the face-up pile
      card change places; the card taken is face up in your hand, the card given is the
      new face-up pile card;
    * DRAW n: the pile's top card replaces your card at position n, face up or down like
      the card it replaces; the replaced card becomes the face-up pile card (the one it
      covers is spent);
    * NEW: the pile's top card becomes the face-up pile card (the one it covers is spent).

    With no card to take (an empty pile and nothing spent, or no face-up pile card for a
    SWAP) the action changes nothing (``noop``)."""
    cards = t["hands"][who]
    kind = action["action"]
    entry: dict[str, Any] = {
        "who": who,
        "seat": t["seats"].get(who),
        "bot": who in t["bots"],
        "action": kind,
        "noop": False,
        "refill": False,
        "timeout": False,
    }
    if kind == "swap":
        entry["card"] = action["card"]
        i = _index(cards, action["card"] == "up")
        if t["up"] is None or i is None:
            entry["noop"] = True
        else:
            entry["took"], entry["gave"] = t["up"], cards[i][0]
            t["up"] = cards[i][0]
            cards[i] = [entry["took"], True]
        t["actions"].append(entry)
        return entry
    if kind == "draw":
        entry["position"] = action["position"]
    drawn, entry["refill"] = _draw_top(s, t)
    if drawn is None:
        entry["noop"] = True
    elif kind == "hit":
        cards.append([drawn, True])
        entry["drawn"] = drawn
    elif kind == "draw":
        i = action["position"] - 1
        old, up = cards[i]
        cards[i] = [drawn, up]
        entry["drawn"], entry["face_up"], entry["gave"] = drawn, up, old
        if t["up"] is not None:
            t["spent"].append(t["up"])
        t["up"] = old
    else:  # new
        if t["up"] is not None:
            t["spent"].append(t["up"])
        t["up"] = drawn
        entry["drawn"] = drawn
    t["actions"].append(entry)
    return entry


def _bot_hand(t: dict[str, Any], bot: str) -> list[tuple[str, bool]]:
    return [(card, bool(up)) for card, up in t["hands"][bot]]


def _advance(s: State, name: str) -> None:
    """Play the table on while no human is to act: rounds that are over, the bots'
    actions, the showdown."""
    t = s["tables"][name]
    while True:
        if t["status"] == "bet":
            rnd = t["rounds"][-1]
            if not table.is_over(rnd):
                return
            if rnd["number"] == 1:
                _start_action(s, t)
            else:
                _showdown(s, name)
                return
        elif t["status"] == "action":
            if t["next"] >= len(t["action_order"]):
                _start_round(s, t, 2)
                continue
            who = t["action_order"][t["next"]]
            if who not in t["bots"]:
                return
            action = botlib.act(s["rules"][who], _bot_hand(t, who), t["up"])
            _do_action(s, t, who, dict(action))
            t["next"] += 1
        else:
            return


def _showdown(s: State, name: str) -> None:
    """The hands of those still in are shown (bots included) and ranked (``hands.rank``).
    A bet nobody called goes back to its bettor (``hands.uncalled_bet``); antes never do.
    The rest is cut into pots (``hands.side_pots``: side pots only at the levels where a
    human went all in; the bots, who anted, contest every pot) and each pot goes to its best
    contestants (``hands.award``): a split's remainder and any share a bot wins are
    discarded (rule text: "If any of the automated players win, the chips are discarded").
    The seat credited with the win (rulings 7, 11); a human left at 0 chips leaves the
    match."""
    t = s["tables"][name]
    h = s["hand"]
    key = f"h{h}-{t['key']}-showdown"
    live = sorted(_in_hand(t), key=lambda p: t["seats"][p])
    contenders = live + list(t["bots"])
    ranks = {x: hands.rank([c for c, _ in t["hands"][x]]) for x in contenders}
    contrib = dict(t["contrib"])
    bets = {p: sum(rnd["bets"].get(p, 0) for rnd in t["rounds"]) for p in t["dealt"]}
    returned: dict[str, int] = {}
    bettor, back = hands.uncalled_bet(contrib, bets, live)
    if back:
        contrib[bettor] -= back
        s["chips"][bettor] += back
        transfer(s, POTS[name], bettor, back, f"bet nobody called, hand {h}", key, currency=MATCH_CHIPS)
        returned[bettor] = back
    pots = hands.side_pots(contrib, live=live, all_in=t["all_in"], bots=t["bots"])
    got = hands.award(pots, ranks, bots=t["bots"])
    total = sum(contrib.values())
    assert sum(got.won.values()) + got.discarded == total
    for p in sorted(got.won, key=lambda p: t["seats"][p]):
        s["chips"][p] += got.won[p]
        transfer(s, POTS[name], p, got.won[p], f"pot, hand {h}", key, currency=MATCH_CHIPS)
    transfer(s, POTS[name], DISCARD, got.discarded, f"discarded, hand {h}", key, currency=MATCH_CHIPS)
    credited = None
    for winners in got.winners:
        humans = [p for p in winners if p not in t["bots"]]
        if humans:
            credited = min(t["seats"][p] for p in humans)
            break
    if credited is not None:
        s["winners"][name] = credited
    t["showdown"] = {
        "hands": {x: [c for c, _ in t["hands"][x]] for x in contenders},
        "described": {x: hands.describe([c for c, _ in t["hands"][x]]) for x in contenders},
        "bust": [x for x in contenders if ranks[x] is None],
        "pots": [
            {"amount": pot.amount, "eligible": list(pot.eligible), "winners": list(winners)}
            for pot, winners in zip(pots, got.winners, strict=True)
        ],
        "won": dict(got.won),
        "returned": returned,
        "discarded": got.discarded,
        "pot": total,
        "credited_seat": credited,
    }
    t["revealed"] = contenders
    t["status"] = "done"
    _eliminate(s, [p for p in t["dealt"] if s["chips"][p] == 0])


def _after_tables(s: State) -> None:
    if s["phase"] == "play" and all(s["tables"][name]["status"] == "done" for name in SETS):
        _end_hand(s)


def _public_action(entry: dict[str, Any]) -> dict[str, Any]:
    """An action as everyone may know it: who did what, no card."""
    return {k: v for k, v in entry.items() if k not in ("took", "gave", "drawn", "face_up")}


def _end_hand(s: State) -> None:
    """Both tables have finished: the hand's public record; the folders move to the other
    set and take its lowest free seats (ruling 6); the eliminated leave their seats. Then
    a break (after hands 5 and 10), the next hand, or the end of the hands."""
    h = s["hand"]
    s["chips_after"].append(dict(s["chips"]))
    record: dict[str, Any] = {"hand": h, "ante": ante_for(h), "tables": {}, "moves": []}
    for name in SETS:
        t = s["tables"][name]
        shown = t["showdown"]
        record["tables"][name] = {
            "seats": dict(t["seats"]),
            "stayed": list(t["stayed"]),
            "folded": [p for p in t["hall"] if t["stay"][p]["choice"] == "folded"],
            "stayset": [p for p in t["hall"] if t["stay"][p]["choice"] == "stayset"],
            "hands": clone(shown["hands"]),
            "won": dict(shown["won"]),
            "discarded": shown["discarded"],
            "pot": shown["pot"],
            # the hand as it was played, all public (for the mails of the next step and the
            # archive): the stay results, the starting seat, the betting rounds, the actions
            # without their cards, who folded later, the showdown
            "stay": clone(t["stay"]),
            "starter": t["starter"],
            "rounds": clone(t["rounds"]),
            "actions": [_public_action(e) for e in t["actions"]],
            "folded_in_play": list(t["folded"]),
            "showdown": clone(shown),
        }
    record["chips"] = dict(s["chips"])  # every player's chips after the hand
    out = {e["player"] for e in s["eliminated"]}
    movers = {name: [p for p in s["tables"][name]["moving"] if p not in out] for name in SETS}
    for p in s["players"]:
        if p in out:
            s["sets"][p] = s["seats"][p] = None
    for name in SETS:
        for p in movers[name]:
            s["sets"][p] = s["seats"][p] = None
    for name in SETS:
        dest = OTHER[name]
        for p in movers[name]:  # in their old seat order
            taken = {s["seats"][q] for q in s["players"] if s["sets"][q] == dest}
            seat = min(n for n in range(1, PLAYERS + 1) if n not in taken)
            s["sets"][p], s["seats"][p] = dest, seat
            record["moves"].append({"player": p, "from": name, "to": dest, "seat": seat})
    record["eliminated"] = [e["player"] for e in s["eliminated"] if e["hand"] == h and not e.get("forfeit")]
    record["forfeited"] = [e["player"] for e in s["eliminated"] if e["hand"] == h and e.get("forfeit")]
    s["history"].append(record)
    if h >= HANDS or len(_alive(s)) <= 1:
        _end_match(s)
    elif h in BREAKS:
        s["phase"] = "break"
    else:
        _start_hand(s, h + 1)


def _order_key(s: State, p: str) -> tuple[int, ...]:
    """Chips after the last hand, then after each earlier hand going back (RULINGS)."""
    return tuple(row[p] for row in reversed(s["chips_after"]))


def _pick(s: State, candidates: list[str], best: bool, label: str) -> tuple[str, str]:
    """The player with the most (``best``) or fewest chips among ``candidates``: ties by the
    chips after earlier hands going back, then a lot from ``rng(seed, "lot", label)``."""
    last = [s["chips_after"][-1][p] for p in candidates]
    edge = max(last) if best else min(last)
    tied = [p for p in candidates if s["chips_after"][-1][p] == edge]
    if len(tied) == 1:
        return tied[0], "chips"
    keys = {p: _order_key(s, p) for p in tied}
    edge_key = max(keys.values()) if best else min(keys.values())
    still = sorted(p for p in tied if keys[p] == edge_key)
    if len(still) == 1:
        return still[0], "earlier hands"
    return rng(s["seed"], "lot", label).choice(still), "lot"


def _rank(s: State) -> tuple[list[str], dict[str, str]]:
    """The six from best to worst, and how the winner and the EC were picked.

    The winner, first, has the most chips (``_pick``: ties by the chips after earlier
    hands going back, then ``rng(seed, "lot", "winner")``). The others are placed from the
    last place up by the EC's rule, applied again to whoever is left each time: the first
    to reach 0 (the earliest batch of ``eliminated``; a tie within a batch goes to the
    fewest chips after earlier hands, then a lot), else the fewest chips (the same ties).
    So every player who reached 0 ranks below every player who did not, an earlier batch
    below a later one, and the players with chips by their chips; the last is the EC, and
    the one before them is whom the rule would name were the EC left out (a season that
    skips an EC eliminated elsewhere takes the next one up). The lot for the last place is
    ``rng(seed, "lot", "ec")``, for the place ``n`` above it ``rng(seed, "lot", f"place-{n}")``;
    the winner is never among the candidates, so the lots for the most and the fewest chips
    never pick the same player."""
    players = list(s["players"])
    # a forfeiter never wins (ruling 21): a loss, ranked as one who reached 0 in that hand
    candidates = [p for p in players if p not in _forfeited(s)] or players
    winner, how_winner = _pick(s, candidates, True, "winner")
    rest = [p for p in players if p != winner]
    gone = [e for e in s["eliminated"] if e["player"] != winner]
    worst_first: list[str] = []
    how_ec = ""
    while rest:
        place = len(rest) + 1  # the place decided now: the worst left (the winner is place 1)
        label = "ec" if not worst_first else f"place-{place}"
        batches = [e for e in gone if e["player"] in rest]
        if batches:
            first = min(e["batch"] for e in batches)
            tied = [e["player"] for e in batches if e["batch"] == first]
            if len(tied) == 1:
                p, how = tied[0], "first to 0"
            else:
                p, how = _pick(s, tied, False, label)
                how = "first to 0, " + how
        else:
            p, how = _pick(s, rest, False, label)
        if not worst_first:
            how_ec = how
        worst_first.append(p)
        rest.remove(p)
    return [winner, *reversed(worst_first)], {"winner": how_winner, "ec": how_ec}


def _ranking(s: State) -> list[str]:
    """The six from best to worst as the rules rank them at the end (``_rank``): the winner
    first, the EC last."""
    return _rank(s)[0]


def _end_match(s: State) -> None:
    """The hands are over (after hand 15, or when at most one player is left with chips):
    the match ends at once. The most chips wins (2 CoLs); the EC (elimination candidate) is
    the last of the ranking (``_rank``). The EC's nomination of the DMO (death-match
    opponent) is the season's next step, not the match's: the result only names the EC."""
    ranking, how = _rank(s)
    winner, ec = ranking[0], ranking[-1]
    names = s["names"]
    s["phase"] = "over"
    s["final"] = {"winner": winner, "ec": ec, "how": how, "hands": s["hand"]}
    forfeits = [e for e in s["eliminated"] if e.get("forfeit")]
    if s["hand"] < HANDS:
        left = "in the match" if forfeits else "with chips"
        why = f"after hand {s['hand']}, when at most one player was left {left}"
    else:
        why = f"after hand {s['hand']}"
    s["result"] = {
        "outcome": {p: "win" if p == winner else "loss" for p in s["players"]},
        "victory_points": {p: VICTORY_POINTS["win" if p == winner else "loss"] for p in s["players"]},
        "reason": (
            f"{names[winner]} wins with {plural(s['chips'][winner], 'chip')} {why}; {names[ec]} is the EC "
            "(elimination candidate) and will nominate the DMO (death-match opponent)."
            + "".join(f" {names[e['player']]} forfeited the match in hand {e['hand']}." for e in forfeits)
        ),
        "scores": {
            "chips": dict(s["chips"]),
            "hands": s["hand"],
            "winner": winner,
            "ec": ec,
            "eliminated": [_left(e) for e in s["eliminated"]],
            "how": dict(how),
        },
        "awards": {"cols": {winner: COLS}},
        "signals": [],
        "ranking": ranking,
    }


def _left(e: dict[str, Any]) -> dict[str, Any]:
    """A player who left the match, as the result and the views show it: who, in which hand,
    and ``"forfeit": True`` for a forfeiter (ruling 21)."""
    return {"player": e["player"], "hand": e["hand"], **({"forfeit": True} if e.get("forfeit") else {})}


def _forfeit(s: State, p: str) -> None:
    """``p`` forfeits the match (ruling 21), on the engine's private copy: they leave it at
    once as one who reached 0 now (a batch of their own in ``eliminated``, marked
    ``forfeit``), keeping their chips as they stand; what they put in a pot stays there.
    In the stay step their choice is dropped, and at its close they sit in the hall (stay
    choice "forfeited"); at a table where they are still in the hand they leave it as after
    a FOLD (their turn passes; a betting round with one human left is over; an action turn
    still to come is skipped), and the table plays on. In a break, with at most one player
    left in the match, the match ends at once; in a hand, as after any hand, when it ends;
    when nobody is left at all, at once (ruling 21). They are told by no step mail (the
    forfeit's notice tells them), only by the result."""
    _eliminate(s, [p])
    s["eliminated"][-1].update(forfeit=True, told="forfeit")
    phase = s["phase"]
    if phase == "stay":
        s["stay"].pop(p, None)
    elif phase == "play":
        name = _dealt_at(s, p)
        if name is not None:
            _leave_table(s, name, p)
            _advance(s, name)
            _after_tables(s)
    elif phase == "break" and len(_alive(s)) <= 1:
        _end_match(s)
    if s["result"] is None and not _alive(s):  # nobody is left to play: the match ends now
        _end_match(s)
    _mark_told(s)


def _leave_table(s: State, name: str, p: str) -> None:
    """``p`` leaves the hand at table ``name`` as after a FOLD (ruling 21), if still in it."""
    t = s["tables"][name]
    if t["status"] not in ("bet", "action") or p in t["hall"] or p in t["folded"]:
        return
    if t["status"] == "bet":
        t["rounds"][-1] = table.forfeit(t["rounds"][-1], s["chips"], p)
    else:
        i = t["action_order"].index(p)
        if i == t["next"]:  # their action turn: it passes
            entry = {"who": p, "seat": t["seats"][p], "bot": False, "action": "fold", "noop": False}
            t["actions"].append({**entry, "refill": False, "timeout": False, "forfeit": True})
            t["next"] += 1
        elif i > t["next"]:  # a turn still to come: skipped
            t["action_order"].pop(i)
    t["folded"].append(p)


def _step_table(step: Step) -> str | None:
    """The table a table step (betting, action, waiting) belongs to."""
    parts = step.key.split("-")
    if step.kind not in ("bet", "action", "wait") or len(parts) < 2:
        return None
    return next((name for name in SETS if KEYS[name] == parts[1]), None)


def _mark_told(s: State) -> None:
    """Ruling 13: a player who leaves the match is told by the first step mail that opens
    after it, at the table they were dealt at (or the next hand's or a break's); nothing after
    that but the result (a player who leaves the match in its last hand is told by it)."""
    pending = [e for e in s["eliminated"] if e["told"] is None]
    if not pending:
        return
    opened = _steps(s)
    for e in pending:
        for step in opened:
            if step.kind in ("stay", "break") or (
                _step_table(step) == e["table"] and step.key.startswith(f"h{e['hand']}-")
            ):
                e["told"] = step.key
                break
        if e["told"] is None and s["result"] is not None:
            e["told"] = "end"


# ---------------------------------------------------------------------- the game


class MatchJack:
    name = "matchjack"
    title = "MatchJack"
    min_players = PLAYERS
    max_players = PLAYERS

    def __init__(self) -> None:
        self.game_type = GameType(
            dynamics=MIXED,
            roles=("player",) * PLAYERS,
            currencies=(MATCH_CHIPS, GARNETS),
            step_kinds=dict(STEP_HOURS),
            options={},
            chance=True,
            names=True,
            concurrent=True,
            reads=(GARNETS,),
            abandon_after=5,  # RULINGS, "Seasons": a timeout costs little, so 5 missed steps forfeit
            ranked=True,  # result(state).ranking: the winner first, the EC last (_rank)
        )
        self.step_kinds: dict[str, float] = self.game_type.step_kinds

    # ----------------------------------------------------------------- start

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
        """The six start 3 per set, in seats 1-3 (ruling 6): ``rng(seed, "sets")`` shuffles
        them, the first three to Main. The bots draw their rules (``rng(seed, "bots")``).
        ``options["names"]`` names the seats for mail; ``options["holdings"]["garnets"]``
        the garnets each holds (absent: 0). Hand 1 is dealt."""
        if len(players) != PLAYERS or len(set(players)) != PLAYERS:
            raise GameError(f"MatchJack needs {PLAYERS} different players.")
        if any(not isinstance(p, str) or not p for p in players):
            raise GameError("Players are named by their keys (non-empty text).")
        options = options if isinstance(options, dict) else {}
        given = options.get("names")
        names = {p: str(given.get(p, p)) if isinstance(given, dict) else p for p in players}
        holdings = options.get("holdings") or {}
        garnets = holdings.get(GARNETS) if isinstance(holdings, dict) else None
        start = {}
        for p in players:
            n = garnets.get(p, 0) if isinstance(garnets, dict) else 0
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise GameError(f"The garnets of {p} must be a whole number, not negative; got {n!r}.")
            start[p] = n
        order = list(players)
        rng(seed, "sets").shuffle(order)
        s: State = {
            "players": list(players),
            "seed": seed,
            "names": names,
            "hand": 0,
            "phase": "stay",
            "chips": {p: STARTING_CHIPS for p in players},
            "garnets": start,
            "sets": {p: SETS[0] if order.index(p) < PLAYERS // 2 else SETS[1] for p in players},
            "seats": {p: order.index(p) % (PLAYERS // 2) + 1 for p in players},
            "rules": botlib.draw_rules(rng(seed, "bots")),
            "stay": {},
            "tables": {},
            "winners": {name: None for name in SETS},
            "eliminated": [],
            "guesses": {p: [] for p in players},
            "rewards": [],
            "chips_after": [{p: STARTING_CHIPS for p in players}],
            "history": [],
            "final": None,
            "transfers": [],
            "result": None,
        }
        _start_hand(s, 1)
        return s

    # ----------------------------------------------------------------- steps

    def steps(self, state: State) -> tuple[Step, ...]:
        return _steps(state)

    def step(self, state: State) -> Step | None:
        found = _steps(state)
        return found[0] if found else None

    def awaiting(self, state: State) -> tuple[str, ...]:
        """Who still owes a submission in an open step: in the stay step those with no
        choice yet; at a table the player to act."""
        if state["result"] is not None:
            return ()
        if state["phase"] == "stay":
            return tuple(p for p in _alive(state) if state["stay"].get(p) is None)
        owing = {p for step in _steps(state) if not step.waiting for p in step.players}
        return tuple(p for p in state["players"] if p in owing)

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        """Who is mailed when ``step`` opens (ruling 13; ``None``: the state's first open
        step, or once the match is over, the final result, to all six):

        * the stay step and a break: every player still in the match;
        * a table's step (betting, action, or its waiting step): the humans dealt at that
          table in this hand (stayers and folders), still in the match;
        * and in each, a player who has just left the match (0 chips) when it is the first
          step mail after it (it tells them); nothing after that but the result."""
        if step is None:
            if state["result"] is not None:
                return tuple(state["players"])
            step = self.step(state)
            if step is None:
                return ()
        alive = set(_alive(state))
        told = {e["player"] for e in state["eliminated"] if e["told"] == step.key}
        if step.kind in ("stay", "break"):
            base = alive
        else:
            name = _step_table(step)
            base = set(state["tables"][name]["dealt"]) & alive if name else set()
        members = base | told
        return tuple(p for p in state["players"] if p in members)

    # ----------------------------------------------------------------- mail

    def parse(self, state: State, player: str, text: str) -> Parsed:
        """See :mod:`referee.games.matchjack.grammar`. FOLD is a stay choice while the stay
        step is open, else a betting fold."""
        fold_means = "stay" if state["result"] is None and state["phase"] == "stay" else "bet"
        return grammar.read_mail(text, fold_means=fold_means, bots=ALL_BOTS, rules=RULE_IDS)

    def form(self, state: State, player: str) -> str:
        """The command for the player's open step, filled in with a legal choice, and its
        Step line; "" when they have nothing to send now (a GUESS needs no form)."""
        move = self._default_move(state, player)
        step = _player_step(state, player)
        if move is None or step is None:
            return ""
        return f"{grammar.command_text(move)}\nStep: {step.title}\n"

    def quick_answers(self, state: State, player: str) -> list[tuple[str, str]]:
        """The step mail's one-tap answers (referee.games.quick): STAY / FOLD in the stay step,
        the form's command, FOLD and RAISE 2 in a betting turn, the form's command, HIT and
        DRAW 1 in an action turn (those the rules refuse now are left out by the caller)."""
        from referee.games.quick import with_step

        form = self.form(state, player)
        if not form:
            return []
        first = form.split("\n", 1)[0].strip()
        step = _player_step(state, player)
        kind = step.kind if step is not None else ""
        if kind == "stay":
            commands = ["STAY", "FOLD", first]
        elif kind == "bet":
            commands = [first, "CALL", "FOLD", "RAISE 2"]
        else:
            commands = [first, "HIT", "DRAW 1"]
        return [(c, with_step(form, c)) for c in dict.fromkeys(commands)]

    def _default_move(self, state: State, player: str) -> Move | None:
        step = _player_step(state, player) if player in state["players"] else None
        if step is None:
            return None
        if step.kind == "stay":
            mine = state["stay"].get(player)
            if mine == "stayset" and state["garnets"][player] < STAYSET_FEE:
                mine = None
            return {"stay": mine or "stay"}
        if step.kind == "bet":
            t = state["tables"][_dealt_at(state, player)]
            owed = table.to_call(t["rounds"][-1], player)
            return {"bet": "check" if owed == 0 else "call"}
        return {"action": "new"}  # an action turn (the only other step a player acts in)

    # ----------------------------------------------------------------- moves

    def apply_move(self, state: State, player: str, move: Move) -> Applied:
        def reject(reason: str) -> Applied:
            return Applied(state, False, reason, changed=False)

        if state["result"] is not None:
            return reject("The match is over; no more moves are accepted.")
        if player not in state["players"]:
            return reject("You are not playing in this match.")
        kind = grammar.play_kind(move)
        if kind is None:
            return reject(
                "A move is one command: STAY, FOLD, FOLD STAYSET, a betting command, HIT, SWAP, DRAW, NEW or GUESS."
            )
        if kind == "guess":
            return self._guess(state, player, move)
        if _is_out(state, player):
            return reject(f"{_gone(state, player)}: you have nothing to send any more.")
        step = _player_step(state, player)
        ref = move.get("step")
        if ref is not None and (step is None or ref != grammar.reference(step.title)):
            shown = ref if isinstance(ref, str) else repr(ref)
            if step is not None:
                return reject(
                    f"Your mail answers an earlier step ({shown}), which is over; now it is {step.title}. "
                    f"{self.what_now(state, player)} Send your command again with the line 'Step: {step.title}'."
                )
            return reject(f"Your mail answers an earlier step ({shown}), which is over. {self.what_now(state, player)}")
        expected = {"stay": "stay", "bet": "bet", "action": "action"}[kind]
        if step is None or step.kind != expected:
            return reject(self._wrong_step(state, player, kind, step))
        handler = {"stay": self._stay, "bet": self._bet, "action": self._action}[kind]
        return handler(state, player, move)

    def _wrong_step(self, state: State, player: str, kind: str, step: Step | None) -> str:
        what = {
            "stay": "STAY, FOLD and FOLD STAYSET answer the stay step",
            "bet": "Betting commands (CHECK, CALL, BET, RAISE, ALL IN, FOLD) answer your betting turn",
            "action": "HIT, SWAP, DRAW and NEW answer your action turn",
        }[kind]
        if step is None:
            return f"{what}, and you have no step open now. {self.what_now(state, player)}"
        return f"{what}; now {step.title} is open for you. {self.what_now(state, player)}"

    def _stay(self, state: State, player: str, move: Move) -> Applied:
        choice = move.get("stay")
        if choice not in ("stay", "fold", "stayset"):
            return Applied(state, False, "Write STAY, FOLD or FOLD STAYSET.", changed=False)
        if choice == "stayset" and state["garnets"][player] < STAYSET_FEE:
            return Applied(
                state,
                False,
                f"FOLD STAYSET costs {STAYSET_FEE} garnets and you hold {state['garnets'][player]}: choose STAY or "
                "FOLD (nothing was recorded; it costs nothing).",
                changed=False,
            )
        new = clone(state)
        new["stay"][player] = choice
        return Applied(new, True)

    def _bet(self, state: State, player: str, move: Move) -> Applied:
        name = _dealt_at(state, player)
        assert name is not None
        t = state["tables"][name]
        rnd = t["rounds"][-1]
        action = {k: v for k, v in move.items() if k != "step"}
        try:
            new_round = table.act(rnd, state["chips"], player, action)
        except table.IllegalBet as illegal:
            return Applied(state, False, illegal.reason, changed=False)
        new = clone(state)
        self._booked_bet(new, name, new_round)
        _advance(new, name)
        _after_tables(new)
        _mark_told(new)
        return Applied(new, True)

    @staticmethod
    def _booked_bet(s: State, name: str, new_round: dict[str, Any]) -> None:
        t = s["tables"][name]
        entry = new_round["actions"][-1]
        p = entry["player"]
        t["rounds"][-1] = new_round
        if entry["put"]:
            s["chips"][p] -= entry["put"]
            t["contrib"][p] += entry["put"]
            key = f"h{s['hand']}-{t['key']}-bet{new_round['number']}-{new_round['turn'] - 1}"
            transfer(s, p, POTS[name], entry["put"], entry["command"], key, currency=MATCH_CHIPS)
        if entry["action"] == "fold":
            t["folded"].append(p)
        if entry["all_in"] and entry["action"] != "fold" and p not in t["all_in"]:
            t["all_in"].append(p)

    def _action(self, state: State, player: str, move: Move) -> Applied:
        def reject(reason: str) -> Applied:
            return Applied(state, False, reason, changed=False)

        kind = move.get("action")
        name = _dealt_at(state, player)
        assert name is not None
        t = state["tables"][name]
        size = len(t["hands"][player])
        if kind not in ACTIONS:
            return reject("Your action is HIT, SWAP UP, SWAP DOWN, DRAW 1, DRAW 2 or NEW.")
        action: dict[str, Any] = {"action": kind}
        if kind == "swap":
            if move.get("card") not in ("up", "down"):
                return reject("SWAP UP (your face-up card) or SWAP DOWN (your face-down card).")
            action["card"] = move["card"]
        if kind == "draw":
            position = move.get("position")
            if not isinstance(position, int) or isinstance(position, bool) or not 1 <= position <= size:
                return reject(f"DRAW takes the position of one of your cards, 1 to {size}: DRAW 1 or DRAW 2.")
            action["position"] = position
        new = clone(state)
        nt = new["tables"][name]
        _do_action(new, nt, player, action)
        nt["next"] += 1
        _advance(new, name)
        _after_tables(new)
        _mark_told(new)
        return Applied(new, True)

    def _guess(self, state: State, player: str, move: Move) -> Applied:
        """Ruling 16: GUESS <bot> <rule id>, at any time while the hands run, once per hand; a
        first correct guess on a bot pays 3 garnets (from the season) and 6 chips (from the
        bank). Whether it was right is told to the guesser only (their view)."""
        g = move.get("guess")
        bot = g.get("bot") if isinstance(g, dict) else None
        rule = g.get("rule") if isinstance(g, dict) else None
        by_bot = {b.lower(): b for b in ALL_BOTS}
        by_rule = {r.lower(): r for r in RULE_IDS}
        if not isinstance(bot, str) or bot.lower() not in by_bot:
            return Applied(state, False, f"GUESS names a bot: {', '.join(ALL_BOTS)}.", changed=False)
        if not isinstance(rule, str) or rule.lower() not in by_rule:
            return Applied(state, False, f"GUESS names a rule id: {', '.join(RULE_IDS)}.", changed=False)
        why = _can_guess(state, player)
        if why is not None:
            return Applied(state, False, why, changed=False)
        bot, rule = by_bot[bot.lower()], by_rule[rule.lower()]
        new = clone(state)
        hand_no = _guess_hand(new)
        right = new["rules"][bot] == rule
        paid = right and not any(x["bot"] == bot and x["paid"] for x in new["guesses"][player])
        new["guesses"][player].append({"hand": hand_no, "bot": bot, "rule": rule, "right": right, "paid": paid})
        if paid:
            key = f"h{hand_no}-guess"
            new["garnets"][player] += GUESS_GARNETS
            transfer(new, SEASON, player, GUESS_GARNETS, "a correct guess", key, currency=GARNETS)
            new["chips"][player] += GUESS_CHIPS
            transfer(new, BANK, player, GUESS_CHIPS, "a correct guess", key, currency=MATCH_CHIPS)
            new["rewards"].append({"player": player, "hand": hand_no, "chips": GUESS_CHIPS})
        return Applied(new, True)

    # ----------------------------------------------------------------- deadlines

    def apply_timeout(self, state: State, key: str | None = None) -> State:
        """Close the timed open step ``key`` (None: the only one) at its deadline (RULINGS):
        the stay step folds whoever has not chosen (they move set); a betting turn checks
        when checking is free, else folds; a missed action turn folds (out of the hand, no
        set move); a break ends (the next hand is dealt)."""
        if state["result"] is not None:
            raise GameError("The match is over; there is no step to close.")
        timed = [step for step in _steps(state) if not step.waiting]
        if key is None:
            if len(timed) != 1:
                raise GameError(f"Several steps are open ({', '.join(s.key for s in timed)}); name the one to close.")
            step = timed[0]
        else:
            found = [s for s in timed if s.key == key]
            if not found:
                raise GameError(f"No timed step {key!r} is open (open: {', '.join(s.key for s in timed) or 'none'}).")
            step = found[0]
        new = clone(state)
        if step.kind == "stay":
            _close_stay(new)
        elif step.kind == "bet":
            name = _dealt_at(new, step.players[0])
            assert name is not None
            rnd = new["tables"][name]["rounds"][-1]
            new_round = table.act(rnd, new["chips"], rnd["to_act"], table.default_action(rnd), timeout=True)
            self._booked_bet(new, name, new_round)
            _advance(new, name)
            _after_tables(new)
        elif step.kind == "action":
            p = step.players[0]
            name = _dealt_at(new, p)
            assert name is not None
            t = new["tables"][name]
            t["folded"].append(p)
            t["actions"].append(
                {
                    "who": p,
                    "seat": t["seats"][p],
                    "bot": False,
                    "action": "fold",
                    "noop": False,
                    "refill": False,
                    "timeout": True,
                }
            )
            t["next"] += 1
            if new["chips"][p] == 0:
                _eliminate(new, [p])
            _advance(new, name)
            _after_tables(new)
        else:  # a break
            _start_hand(new, new["hand"] + 1)
        _mark_told(new)
        return new

    def forfeit(self, state: State, player: str) -> State:
        """``player`` forfeits the match (RULINGS, "Seasons": a loss, with the chips as they
        stand; "a forfeiter ranks as one who reached 0 in that hand"): they leave it at once
        and the others play on (``_forfeit``; ruling 21). A player who has already left the
        match cannot forfeit it."""
        if state["result"] is not None:
            raise GameError("The match is over; nobody can forfeit it any more.")
        if player not in state["players"]:
            raise GameError(f"{player} is not playing in this match, so cannot forfeit it.")
        if _is_out(state, player):
            hand = next(e["hand"] for e in state["eliminated"] if e["player"] == player)
            raise GameError(f"{player} has already left the match (in hand {hand}), so cannot forfeit it.")
        new = clone(state)
        _forfeit(new, player)
        return new

    def with_balances(self, state: State, balances: dict[str, int]) -> State:
        """MatchJack plays with its own chips: the season balances are checked, not used."""
        check_balances(state, balances)
        return clone(state)

    def with_holdings(self, state: State, holdings: dict[str, dict[str, int]]) -> State:
        """A copy whose known garnets are the given live balances ({"garnets": {player: n}},
        whole numbers, not negative, for every player)."""
        got = holdings.get(GARNETS) if isinstance(holdings, dict) else None
        if not isinstance(got, dict):
            raise GameError(f"The holdings must give the {GARNETS} of every player.")
        for p in state["players"]:
            n = got.get(p)
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise GameError(f"The {GARNETS} of {p} must be a whole number, not negative; got {n!r}.")
        new = clone(state)
        new["garnets"] = {p: got[p] for p in state["players"]}
        return new

    # ----------------------------------------------------------------- views

    def what_now(self, state: State, player: str) -> str:
        """One sentence: what ``player`` may do now."""
        if state["result"] is not None:
            return "The match is over."
        if _is_out(state, player):
            return f"{_gone(state, player)}; you have nothing to send."
        step = _player_step(state, player)
        guess = "" if _can_guess(state, player) else " You may also GUESS <bot> <rule id> (once per hand)."
        if step is None:
            open_steps = [s.title for s in _steps(state) if not s.waiting]
            return f"You have nothing to send now (open: {'; '.join(open_steps)}).{guess}"
        if step.kind == "stay":
            mine = state["stay"].get(player)
            can_set = state["garnets"][player] >= STAYSET_FEE
            text = (
                f"Choose STAY (a second ante of {plural(ante_for(state['hand']), 'chip')}), "
                "FOLD (you move to the other set for the next hand)"
                + (f" or FOLD STAYSET ({STAYSET_FEE} garnets: you keep your set)" if can_set else "")
                + "; you may change your choice until the deadline."
            )
            if mine is not None:
                text += f" Your choice now: {grammar.command_text({'stay': mine})}."
            return text + guess
        if step.kind == "bet":
            t = state["tables"][_dealt_at(state, player)]
            return table.describe_legal(t["rounds"][-1], state["chips"], player) + guess
        t = state["tables"][_dealt_at(state, player)]  # an action turn
        text = "Take one action: HIT, SWAP UP, SWAP DOWN, DRAW 1, DRAW 2 or NEW."
        if not t["pile"] and not t["spent"]:
            text += " The pile is empty and nothing is spent: HIT, DRAW and NEW change nothing."
        return text + guess

    def _legal(self, state: State, player: str) -> dict[str, Any] | None:
        step = _player_step(state, player)
        if step is None:
            return None
        if step.kind == "stay":
            choices = ["STAY", "FOLD"] + (["FOLD STAYSET"] if state["garnets"][player] >= STAYSET_FEE else [])
            return {"kind": "stay", "commands": choices, "second_ante": ante_for(state["hand"])}
        if step.kind == "bet":
            t = state["tables"][_dealt_at(state, player)]
            legal = table.legal_actions(t["rounds"][-1], state["chips"], player)
            return {"kind": "bet", **(legal or {})}
        t = state["tables"][_dealt_at(state, player)]  # an action turn
        return {
            "kind": "action",
            "commands": ["HIT", "SWAP UP", "SWAP DOWN"]
            + [f"DRAW {i + 1}" for i in range(len(t["hands"][player]))]
            + ["NEW"],
            "pile_empty": not t["pile"] and not t["spent"],
        }

    def _table_view(self, state: State, name: str, viewer: str | None) -> dict[str, Any]:
        t = state["tables"][name]
        at = viewer is not None and viewer in t["dealt"]
        revealed = set(t["revealed"])
        view: dict[str, Any] = {
            "name": name,
            "hand": state["hand"],
            "seats": [{"seat": t["seats"][p], "player": p, "name": state["names"][p]} for p in t["dealt"]],
            "bots": list(t["bots"]),
            "status": t["status"],
            "pot": sum(t["contrib"].values()),
            "contributions": dict(t["contrib"]),
            "stay": t["stay"],
            "stayed": list(t["stayed"]),
            "hall": list(t["hall"]),
            "folded": list(t["folded"]),
            "all_in": list(t["all_in"]),
            "starter": t["starter"],
            "order": list(t["order"]),
            "rounds": t["rounds"],
            "action_order": list(t["action_order"]) if t["status"] in ("action", "done") else [],
            "showdown": t["showdown"],
            "pile": {"left": len(t["pile"]), "spent": len(t["spent"]), "refills": t["refills"]},
            "at_table": at,
        }
        if not at:
            view["actions"] = [_public_action(e) for e in t["actions"]]
            view["turned"] = None if t["turned"] is None else {"refill": t["turned"]["refill"]}
            view["cards"] = None
            view["pile"]["up"] = None
            return view
        actions = []
        for e in t["actions"]:
            shown = dict(e)
            if e["action"] == "draw" and not e.get("face_up", True) and e["who"] != viewer:
                shown.pop("drawn", None)
            actions.append(shown)
        view["actions"] = actions
        view["turned"] = t["turned"]
        view["pile"]["up"] = t["up"]
        view["pile"]["spent_cards"] = list(t["spent"])
        cards = {}
        for who in [*t["dealt"], *t["bots"]]:
            cards[who] = [
                {"card": c if (up or who == viewer or who in revealed) else None, "up": up} for c, up in t["hands"][who]
            ]
        view["cards"] = cards
        return view

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        """What ``player`` may know (None: the public, the archive; ruling 17): all stacks;
        seats and sets; per table the pot, the antes and bets, who stayed or folded once the
        stay step has closed, the actions taken (no cards), the showdowns; at their own
        table (the one they were dealt at this hand) the face-up cards, the face-up pile
        card and the spent cards, their own face-down card; their own pending stay choice,
        garnets, guesses and answers; what they may do now. Never a face-down card of
        another player before the showdown, the pile order, a bot's rule before the end,
        another player's pending choice or guess."""
        if player is not None and player not in state["players"]:
            raise GameError(f"{player} is not playing in this match.")
        over = state["result"] is not None
        h = state["hand"]
        steps = _steps(state)
        mine = None if player is None else _player_step(state, player)
        base: dict[str, Any] = {
            "game": self.name,
            "hand": h,
            "hands": HANDS,
            "phase": state["phase"],
            "over": over,
            "ante": ante_for(max(h, 1)),
            "bot_ante": BOT_ANTE,
            "players": list(state["players"]),
            "names": dict(state["names"]),
            "stacks": dict(state["chips"]),
            "sets": dict(state["sets"]),
            "seats": dict(state["seats"]),
            "eliminated": [_left(e) for e in state["eliminated"]],
            "steps": [
                {"key": s.key, "kind": s.kind, "title": s.title, "players": list(s.players), "waiting": s.waiting}
                for s in steps
            ],
            "tables": {name: self._table_view(state, name, player) for name in SETS},
            "winners": dict(state["winners"]),
            "catalogue": [{"id": r.id, "text": r.text} for r in botlib.CATALOGUE],
            "bots": {name: list(botlib.BOTS[name]) for name in SETS},
            "rules": dict(state["rules"]) if over else None,
            "rewards": list(state["rewards"]),
            "history": state["history"],
            "final": state["final"],
            "result": state["result"],
            "you": player,
        }
        if player is None:
            base.update({"guesses": None if not over else state["guesses"], "your_table": None})
            return clone(base)
        name = _dealt_at(state, player)
        t = state["tables"][name] if name else None
        base.update(
            {
                "name": state["names"][player],
                "out": _is_out(state, player),
                "your_table": name,
                "your_set": state["sets"][player],
                "your_seat": state["seats"][player],
                "your_cards": None if t is None else t["hands"][player],
                "your_stay": state["stay"].get(player) if state["phase"] == "stay" and not over else None,
                "stayset_refused": bool(t and player in t["refused"]),
                "garnets": state["garnets"][player],
                "guesses": state["guesses"] if over else {player: state["guesses"][player]},
                "guess": {
                    "allowed": _can_guess(state, player) is None,
                    "hand": _guess_hand(state),
                    "why_not": _can_guess(state, player),
                    "paid_bots": [g["bot"] for g in state["guesses"][player] if g["paid"]],
                },
                "step": None if mine is None else {"key": mine.key, "kind": mine.kind, "title": mine.title},
                "legal": self._legal(state, player),
                "now": self.what_now(state, player),
            }
        )
        return clone(base)

    def standings(self, state: State) -> list[str]:
        """One public line per player: set and seat, chips, in the hall, out."""
        lines = []
        out = {e["player"]: e["hand"] for e in state["eliminated"]}
        forfeited = _forfeited(state)
        for p in state["players"]:
            line = f"{state['names'][p]} ({p}): {plural(state['chips'][p], 'chip')}"
            if p in forfeited:
                line += f"; forfeited the match in hand {out[p]}"
            elif p in out:
                line += f"; left the match in hand {out[p]} (0 chips)"
            else:
                line += f"; {state['sets'][p]} set, seat {state['seats'][p]}"
                name = _dealt_at(state, p)
                if name is not None and state["tables"][name]["stay"] is not None:
                    t = state["tables"][name]
                    if p in t["hall"] and t["status"] != "done":
                        line += " (in the hall this hand)"
            lines.append(line)
        f = state["final"]
        done = len(state["history"])
        tail = f"hands finished: {done} of {HANDS}"
        if f is not None:
            tail += f"; winner {state['names'][f['winner']]}, EC {state['names'][f['ec']]}"
        lines.append(tail)
        return lines

    def result(self, state: State) -> Result | None:
        return stored_result(state)

    # ----------------------------------------------------------------- for tests and bots

    def sample_moves(self, state: State, player: str, rnd: random.Random) -> list[Move]:
        """A few legal moves of ``player`` now, [] when they have no step open (a GUESS is
        offered now and then, only alongside a step's moves, so playouts stay finite)."""
        if state["result"] is not None or player not in state["players"]:
            return []
        step = _player_step(state, player)
        if step is None:
            return []
        moves: list[Move] = []
        if step.kind == "stay":  # revisions too: the step is open until its deadline
            moves = [{"stay": "stay"}, {"stay": "fold"}]
            if state["garnets"][player] >= STAYSET_FEE:
                moves.append({"stay": "stayset"})
        elif step.kind == "bet":
            t = state["tables"][_dealt_at(state, player)]
            legal = table.legal_actions(t["rounds"][-1], state["chips"], player)
            assert legal is not None
            moves = [{"bet": "check"} if legal["check"] else {"bet": "call"}, {"bet": "fold"}]
            if legal["bet"] is not None and rnd.random() < 0.6:
                b = legal["bet"]
                moves.append({"bet": "bet", "amount": rnd.randint(b["min"], min(b["max"], b["min"] + 4))})
            if legal["raise"] is not None and rnd.random() < 0.6:
                r = legal["raise"]
                if rnd.random() < 0.5:
                    moves.append({"bet": "raise", "by": rnd.randint(r["min"], min(r["max"], 3))})
                else:
                    moves.append({"bet": "raise-to", "to": rnd.randint(r["to_min"], min(r["to_max"], r["to_min"] + 3))})
            if rnd.random() < 0.1:
                moves.append({"bet": rnd.choice(["all-in", "call"])})
        else:  # an action turn
            size = len(state["tables"][_dealt_at(state, player)]["hands"][player])
            every = [
                {"action": "hit"},
                {"action": "swap", "card": "up"},
                {"action": "swap", "card": "down"},
                {"action": "draw", "position": rnd.randint(1, size)},
                {"action": "new"},
            ]
            moves = rnd.sample(every, 3)
        ref = grammar.reference(step.title)
        moves = [{**m, "step": ref} if rnd.random() < 0.3 else m for m in moves]
        if _can_guess(state, player) is None and rnd.random() < 0.2:
            moves.append({"guess": {"bot": rnd.choice(ALL_BOTS), "rule": rnd.choice(RULE_IDS)}})
        return moves

    def hidden_variants(self, state: State, player: str, rnd: random.Random) -> list[State]:
        """A few states that differ from ``state`` only in what ``player`` may not know yet:
        the face-down cards of the others (humans and bots, not yet shown) and the undealt
        pile cards, at each table, shuffled among themselves (at a table the player sits at,
        a pile that is a refill keeps its cards, seen face up, and only changes order); the
        bots' rules (while secret), kept true to the player's own guesses and answers, with
        the other players' guesses rewritten to the same answers; the other players' pending
        stay choices."""
        if player not in state["players"]:
            raise GameError(f"{player} is not playing in this match.")
        if state["result"] is not None:
            return []
        variants = []
        for _ in range(2):
            new = clone(state)
            for name in SETS:
                _vary_cards(new["tables"][name], player, rnd)
            _vary_rules(new, player, rnd)
            if new["phase"] == "stay":
                for q, choice in new["stay"].items():
                    if q != player and choice is not None:
                        options = ["stay", "fold"] + (["stayset"] if new["garnets"][q] >= STAYSET_FEE else [])
                        new["stay"][q] = rnd.choice(options)
            if new != state:
                variants.append(new)
        return variants


def _vary_cards(t: dict[str, Any], player: str, rnd: random.Random) -> None:
    at = player in t["dealt"]
    revealed = set(t["revealed"])
    slots = [
        (who, i)
        for who in [*t["dealt"], *t["bots"]]
        if who != player and who not in revealed
        for i, (_, up) in enumerate(t["hands"].get(who, []))
        if not up
    ]
    pool = [t["hands"][who][i][0] for who, i in slots]
    with_pile = not (at and t["refilled"])
    if with_pile:
        pool += t["pile"]
    rnd.shuffle(pool)
    moved = {}
    for k, (who, i) in enumerate(slots):
        moved[t["hands"][who][i][0]] = pool[k]
        t["hands"][who][i][0] = pool[k]
    for e in t["actions"]:  # a face-down card drawn by another: the log follows the card
        if e["action"] == "draw" and e.get("face_up") is False and e["who"] != player and e.get("drawn") in moved:
            e["drawn"] = moved[e["drawn"]]
    if with_pile:
        t["pile"] = pool[len(slots) :]
    else:
        rnd.shuffle(t["pile"])


def _vary_rules(s: State, player: str, rnd: random.Random) -> None:
    own = s["guesses"][player]
    chosen = None
    for _ in range(12):
        candidate = dict(zip(ALL_BOTS, rnd.sample(RULE_IDS, len(ALL_BOTS)), strict=True))
        if all((candidate[g["bot"]] == g["rule"]) == g["right"] for g in own):
            chosen = candidate
            break
    if chosen is None:
        return
    s["rules"] = chosen
    for q, listed in s["guesses"].items():
        if q == player:
            continue
        for g in listed:
            if g["right"]:
                g["rule"] = chosen[g["bot"]]
            else:
                g["rule"] = rnd.choice([r for r in RULE_IDS if r != chosen[g["bot"]]])


GAME = MatchJack()
