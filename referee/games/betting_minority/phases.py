"""The phases of a round of Betting Minority, played on a private copy of the state: the
minority phase's placement steps, an illegal bet's penalty, the end of the betting with the
payout and the zero-chip checks, and the end of the match (RULINGS' order; the rulings named
in each)."""

from __future__ import annotations

from typing import Any

from referee.games.base import MATCH_CHIPS, State, clone, plural, result_record, rng, transfer
from referee.games.betting_minority.rules import (
    BANK,
    DMO,
    EC,
    OUT,
    PENALTY,
    ROOMS,
    ROUNDS,
    TABLE,
    cut_placement,
    format_placement,
    missed_turn_loss,
    opponent,
    payout,
    resolve_sends,
    room_counts,
    room_winners,
    total,
)


def open_round(s: State) -> None:
    """The open round's minority phase begins: nobody placed, placement step 1."""
    s["phase"] = "send"
    s["positions"] = {p: None for p in s["participants"]}
    s["placements"] = []
    s["send"] = {"step": 1, "sent": {s["ec"]: None, s["dmo"]: None}}
    s["betting"] = None


def close_send_step(s: State, *, timeout: bool) -> None:
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


def penalise(s: State, player: str, placement: dict[str, int], command: str, problem: str) -> None:
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
        end_betting(s, caller=player, how="penalty")


def penalty_reason(s: State, player: str, problem: str) -> str:
    """The answer to a bet that broke the limits: the penalty, and what is open now; or,
    when the penalty took the last chip, how the betting ended, the payout and the result."""
    cost = f"{problem}. That bet breaks the limits, so it costs you {plural(PENALTY, 'chip')}"
    if s["betting"] is not None:
        return f"{cost} (you hold {s['chips'][player]} now). Your turn is still open: your choices are below."
    h = s["history"][-1]  # the betting ended as the player's call (ended "penalty")
    r, opp, names = h["round"], opponent(s, player), s["names"]
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


def end_betting(s: State, *, caller: str | None, how: str) -> None:
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
        end_match(s, zero_reason(s, s["history"][-1], broke))
        return
    if r == ROUNDS:
        end_match(s, None)
        return
    s["round"] = r + 1
    open_round(s)


def zero_reason(s: State, h: dict[str, Any], broke: list[str]) -> str:
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


def end_match(s: State, why: str | None) -> None:
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
    s["result"] = match_result(s, winner, loser, f"{names[winner]} wins: {why}")


def match_result(s: State, winner: str, loser: str, reason: str) -> dict[str, Any]:
    """The result of the match as the state keeps it: ``winner`` wins, ``loser`` loses, the
    scores are the chips and the rounds played; no awards, no signals."""
    return result_record(
        {winner: "win", loser: "loss"},
        reason,
        {"chips": dict(s["chips"]), "rounds": len(s["history"])},
        awards={},
        signals=[],
    )
