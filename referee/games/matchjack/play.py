"""A hand of MatchJack as it is played, on the engine's private copy of the state: the deal
and the antes, each table's betting rounds, the action phase (the players' actions and the
bots'), the showdown and its pots, a player leaving a table, and the end of the hand (the
folders move set; a break, the next hand or the end of the match); and the start of the
match, which deals hand 1. The match as it runs is :mod:`referee.games.matchjack.engine`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.base import MATCH_CHIPS, GameError, State, clone, rng, transfer
from referee.games.matchjack import bots as botlib
from referee.games.matchjack import hands, table
from referee.games.matchjack.rules import (
    BOT_ANTE,
    BOTS_ACCOUNT,
    BREAKS,
    DISCARD,
    GARNETS,
    HANDS,
    KEYS,
    OTHER,
    PILE,
    PLAYERS,
    POTS,
    SETS,
    STARTING_CHIPS,
    alive_players,
    ante_for,
    eliminate,
    end_match,
    in_hand,
)

# ---------------------------------------------------------------------- the start


def initial_state(seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
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
    start_hand(s, 1)
    return s


# ---------------------------------------------------------------------- a hand


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


def start_hand(s: State, h: int) -> None:
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
        dealt = sorted((p for p in alive_players(s) if s["sets"][p] == name), key=lambda p: s["seats"][p])
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
    s["stay"] = {p: None for p in alive_players(s)}


def begin_play(s: State, name: str) -> None:
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
    t["rounds"].append(table.open_round(number, in_hand(t), s["chips"], t["all_in"]))
    t["status"] = "bet"


# ---------------------------------------------------------------------- betting rounds


def booked_bet(s: State, name: str, new_round: dict[str, Any]) -> None:
    """A betting action (the last of ``new_round``) booked at table ``name``: the round as it
    stands now, the chips put in moved to the pot, a fold and an all-in noted."""
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


# ---------------------------------------------------------------------- the action phase


def _start_action(s: State, t: dict[str, Any]) -> None:
    """The top pile card is turned face up; the humans still in act in turn order, then the
    bots."""
    card, refilled = _draw_top(s, t)
    t["up"] = card
    t["turned"] = {"card": card, "refill": refilled}
    t["action_order"] = in_hand(t) + list(t["bots"])
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


def do_action(s: State, t: dict[str, Any], who: str, action: dict[str, Any]) -> dict[str, Any]:
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


# ---------------------------------------------------------------------- a table plays on, the showdown


def advance(s: State, name: str) -> None:
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
            do_action(s, t, who, dict(action))
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
    live = sorted(in_hand(t), key=lambda p: t["seats"][p])
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
    eliminate(s, [p for p in t["dealt"] if s["chips"][p] == 0])


def leave_table(s: State, name: str, p: str) -> None:
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


# ---------------------------------------------------------------------- the end of a hand


def public_action(entry: dict[str, Any]) -> dict[str, Any]:
    """An action as everyone may know it: who did what, no card."""
    return {k: v for k, v in entry.items() if k not in ("took", "gave", "drawn", "face_up")}


def end_hand(s: State) -> None:
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
            "actions": [public_action(e) for e in t["actions"]],
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
    if h >= HANDS or len(alive_players(s)) <= 1:
        end_match(s)
    elif h in BREAKS:
        s["phase"] = "break"
    else:
        start_hand(s, h + 1)
