"""Indian Poker as it is played: the state, the turns, the moves, the deadlines, the forfeit.

Play is in **turns**: one step per betting action, ``Step("hand-<h>-<i>", "turn",
(the player to act,), simultaneous=False)``; an accepted action is final. A hand with
nothing to decide (an all-in ante, or a player with 0 chips behind but chips in a
carried pot) is played out at once, and so is the settlement of every hand: after
each action the state is again at a turn or the match is over.

Chips are the match's own (``MATCH_CHIPS``): 25 each, never the season's. Every chip
movement is a transfer between the players and the ``"pot"`` account, so at every
moment the stacks plus the pot hold 50 chips.

State (plain JSON data)::

    players    [a, b]
    seed       the match seed (the deck order comes from rng(seed, "deck", k))
    dmo        the player chosen for the death match: first to act in hand 1
    hand       the number of the open hand (once over: the last hand played)
    stacks     {player: chips behind, not in the pot}
    carried    chips in the pot carried over from tied hands (0 when none)
    deck       {"number": k (the k-th shuffle), "cards": [undealt cards, in deal order]}
    cards      {player: card} of the open hand (None once the match is over)
    betting    the betting round of the open hand (see referee.games.betting; None once over)
    history    [record of every finished hand, see _Hand.settle: cards, betting, winner, pot, penalty, stacks;
               "forfeit": the forfeiter, in the record of the hand a forfeit ended]
    transfers  chip movements (currency MATCH_CHIPS), see referee.games.base.transfer
    result     None while the match runs, else the fields of Result
    forfeit    only once a player forfeited: {"player", "hand"} (ruling 25)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games import betting
from referee.games.base import (
    MATCH_CHIPS,
    Applied,
    GameError,
    Move,
    State,
    Step,
    check_forfeit,
    clone,
    opponent,
    rejected,
    result_record,
    transfer,
)
from referee.games.indian_poker.rules import (
    POT,
    STARTING_CHIPS,
    TEN,
    TEN_FOLD_PENALTY,
    first_to_act,
    hand_ante,
    is_out,
    showdown_winner,
    shuffled_deck,
    step_key,
    ten_fold_penalty,
    turn_title,
)

# --------------------------------------------------------------------------- hands


class _Hand:
    """Plays a state forward on its private copy: settles the open hand once its betting
    has ended, deals the next ones, until a player must act or the match is over."""

    def __init__(self, state: State):
        self.s = state

    def move(self, frm: str, to: str, amount: int, reason: str) -> None:
        transfer(self.s, frm, to, amount, reason, f"hand-{self.s['hand']}", currency=MATCH_CHIPS)

    def deal(self) -> dict[str, int]:
        """Rule text 2: without replacement; a new shuffle when the deck is empty (20 cards
        and 2 per hand: exactly every 10 hands, never in the middle of a deal)."""
        deck = self.s["deck"]
        if len(deck["cards"]) < len(self.s["players"]):
            deck["number"] += 1
            deck["cards"] = shuffled_deck(self.s["seed"], deck["number"])
        return {p: deck["cards"].pop(0) for p in self.s["players"]}

    def start(self) -> None:
        """Rule text 3: antes first, then the deal; then the betting of the new hand."""
        s = self.s
        previous = s["history"][-1] if s["history"] else None
        s["hand"] = len(s["history"]) + 1
        ante = hand_ante(s["hand"], previous)
        first = first_to_act(s["dmo"], previous)
        rnd = betting.open_round(s["players"], s["stacks"], ante, first, s["carried"])
        for p in s["players"]:
            self.move(p, POT, rnd["antes"][p], "ante")
        s["stacks"] = dict(rnd["stacks"])
        s["betting"] = rnd
        s["cards"] = self.deal()

    def after_action(self) -> None:
        """Keep the stacks in step with the betting; settle and deal on while no one is to act."""
        s = self.s
        rnd = s["betting"]
        entry = rnd["actions"][-1]
        if entry["put"]:
            self.move(entry["seat"], POT, entry["put"], entry["command"])
        if entry["returned"]:
            self.move(POT, opponent(s, entry["seat"]), entry["returned"], "excess over a short call returned")
        s["stacks"] = dict(rnd["stacks"])
        self.run()

    def run(self) -> None:
        while self.s["result"] is None and betting.is_over(self.s["betting"]):
            self.settle()
            if self.s["result"] is None:
                self.start()

    def settle(self) -> None:
        s = self.s
        rnd, cards = s["betting"], s["cards"]
        pot = betting.pot(rnd)
        carried_in = s["carried"]
        penalty = None
        # a forfeit of the match ends the hand as a fold by the forfeiter, without the
        # penalty for folding a 10 (ruling 25)
        forfeited = rnd["folder"] if rnd["actions"] and rnd["actions"][-1].get("forfeit") else None
        if rnd["end"] == "fold":
            loser = rnd["folder"]
            winner: str | None = opponent(s, loser)
        else:
            winner = showdown_winner(cards)
            loser = None if winner is None else opponent(s, winner)
        if winner is None:
            s["carried"] = pot  # rule text 6: the pot is set aside for the next hand
        else:
            assert loser is not None
            self.move(POT, winner, pot, "pot" if not carried_in else "pot, with the pot carried over")
            s["stacks"][winner] += pot
            s["carried"] = 0
            if rnd["end"] == "fold" and forfeited is None:
                owed = TEN_FOLD_PENALTY if cards[loser] == TEN else 0
                paid = ten_fold_penalty(cards[loser], s["stacks"][loser])
                if owed:
                    self.move(loser, winner, paid, "folded a 10")
                    s["stacks"][loser] -= paid
                    s["stacks"][winner] += paid
                    penalty = {"from": loser, "to": winner, "owed": owed, "paid": paid}
        record: dict[str, Any] = {
            "hand": s["hand"],
            "deck": s["deck"]["number"],
            "ante": rnd["ante"],
            "antes": dict(rnd["antes"]),
            "first": rnd["first"],
            "cards": dict(cards),
            "actions": clone(rnd["actions"]),
            "bets": dict(rnd["bets"]),
            "end": rnd["end"],
            "folder": rnd["folder"],
            "tie": winner is None,
            "winner": winner,
            "loser": loser,
            "carried_in": carried_in,
            "pot": pot,
            "carried_out": s["carried"],
            "penalty": penalty,
            "stacks": dict(s["stacks"]),
        }
        if forfeited is not None:
            record["forfeit"] = forfeited
        s["history"].append(record)
        s["betting"] = None
        s["cards"] = None
        scores = {"stacks": dict(s["stacks"]), "hands": s["hand"]}
        if forfeited is not None:
            winner_of_match = opponent(s, forfeited)
            s["forfeit"] = {"player": forfeited, "hand": s["hand"]}
            s["result"] = result_record(
                {winner_of_match: "win", forfeited: "loss"},
                f"{winner_of_match} wins: {forfeited} forfeited the match in hand {s['hand']}.",
                scores,
            )
            return
        out = [p for p in s["players"] if is_out(s["stacks"][p], s["carried"])]
        if out:
            (loser_of_match,) = out  # 50 chips, none carried: only one player can be out
            winner_of_match = opponent(s, loser_of_match)
            s["result"] = result_record(
                {winner_of_match: "win", loser_of_match: "loss"},
                f"{winner_of_match} wins: {loser_of_match} has no chips left after hand {s['hand']}.",
                scores,
            )


# --------------------------------------------------------------------------- the match


def initial_state(seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
    """Ruling 1: the match option ``dmo`` (a player key) names the player chosen for the
    death match, who acts first in hand 1; without it, the first player. Other options
    are not read."""
    if len(players) != 2 or players[0] == players[1]:
        raise GameError("Indian Poker needs two different players.")
    dmo = options.get("dmo", players[0]) if isinstance(options, dict) else players[0]
    if dmo not in players:
        raise GameError(f"The DMO must be one of the players ({players[0]}, {players[1]}); got {dmo!r}.")
    state: State = {
        "players": list(players),
        "seed": seed,
        "dmo": dmo,
        "hand": 0,
        "stacks": {p: STARTING_CHIPS for p in players},
        "carried": 0,
        "deck": {"number": 0, "cards": []},
        "cards": None,
        "betting": None,
        "history": [],
        "transfers": [],
        "result": None,
    }
    hand = _Hand(state)
    hand.start()
    hand.run()
    return state


def step(state: State) -> Step | None:
    if state["result"] is not None:
        return None
    rnd = state["betting"]
    action_no = len(rnd["actions"]) + 1
    return Step(
        key=step_key(state["hand"], action_no),
        kind="turn",
        players=(rnd["to_act"],),
        simultaneous=False,
        title=turn_title(state["hand"], action_no),
    )


def apply_move(state: State, player: str, move: Move) -> Applied:
    if state["result"] is not None:
        return rejected(state, "The match is over; no more actions are accepted.")
    if player not in state["players"]:
        return rejected(state, f"{player} is not playing in this match.")
    now = step(state)
    assert now is not None
    rnd = state["betting"]
    to_act = rnd["to_act"]
    if not isinstance(move, dict):
        return rejected(state, betting.action_problem(move) or "A move is a betting action.")
    turn = move.get("turn")
    if turn is not None and turn != betting.turn_reference(now.title):
        shown = turn if isinstance(turn, str) else repr(turn)
        if player == to_act:
            return rejected(
                state,
                f"Your mail answers an earlier turn ({shown}), which is over; now it is {now.title} and "
                f"your turn again. {betting.describe_legal(rnd, player)} Send your command again, "
                f"with the line 'Step: {now.title}'.",
            )
        return rejected(
            state,
            f"Your mail answers an earlier turn ({shown}), which is over; now it is {now.title} and "
            f"{to_act}'s turn: you have nothing to send until {to_act} has acted.",
        )
    if player != to_act:
        return rejected(
            state,
            f"It is not your turn: {now.title} is {to_act}'s to act. You have nothing to send "
            f"now; you will get a mail when it is your turn.",
        )
    action = {k: v for k, v in move.items() if k != "turn"}
    problem = betting.action_problem(action)
    if problem is not None:
        return rejected(state, f"{problem} {betting.describe_legal(rnd, player)}")
    try:
        new_round = betting.act(rnd, player, action)
    except betting.IllegalAction as illegal:
        return rejected(state, illegal.reason)
    new = clone(state)
    new["betting"] = new_round
    new_round["actions"][-1]["timeout"] = False
    _Hand(new).after_action()
    return Applied(new, True)


def apply_timeout(state: State, key: str | None = None) -> State:
    """Ruling "Timeout": with nothing to call, CALL (the showdown on equal bets); facing a
    raise, FOLD; the penalty for folding a 10 still applies."""
    if state["result"] is not None:
        raise GameError("The match is over; there is no turn to close.")
    rnd = state["betting"]
    player = rnd["to_act"]
    new = clone(state)
    new["betting"] = betting.act(rnd, player, betting.default_action(rnd))
    new["betting"]["actions"][-1]["timeout"] = True
    _Hand(new).after_action()
    return new


def forfeit(state: State, player: str) -> State:
    """``player`` forfeits the match (RULINGS, "Seasons": a loss, with the chips as they
    stand; ruling 25): the open hand ends as a fold by ``player``, whoever's turn it was
    (an entry ``FORFEIT`` in its betting): the opponent takes the pot (and any pot carried
    over from a tie), no penalty for folding a 10 is paid, both cards are shown as after
    every hand; then the match ends, the opponent winning. The hand's record and
    ``state["forfeit"]`` say it (the views show it)."""
    check_forfeit(state, player)
    new = clone(state)
    new["betting"] = betting.forfeit(new["betting"], player)
    new["betting"]["actions"][-1]["timeout"] = False
    _Hand(new).settle()
    return new
