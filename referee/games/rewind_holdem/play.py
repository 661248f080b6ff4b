"""Rewind Hold'em as it is played: the state, the rounds and their turns, the moves, the
deadlines, the forfeit.

A match is a run of rounds. Each round both players ante 1, each gets one hidden card
(a player sees only the opponent's) and two open cards are shared; then one betting
round, one turn per step (``Step(kind="turn", simultaneous=False)``, key
``round-<r>-turn-<t>``). A round ends by a FOLD or by a showdown (a CALL, or no betting
at all after an all-in ante) and is settled at once; the next round is dealt in the
same breath, so after the first every step is opened by the move or timeout that
closed the one before.

State (plain JSON data)::

    players        [a, b]
    seed           the match seed; deck n is shuffled by rng(seed, "deck", n)
    dmo            the player who starts round 1 (match option "dmo", default a)
    round          the round in play (once over: the last round played)
    initial_chips  {player: 25}
    chips          {player: chips behind, not in the pot}
    pot            chips in the "pot" account (this round's bets and any carried chip)
    shoe           {"deck": n, "drawn": k}: where the deal stands (see cards.py)
    table          the round in play (None once the match is over):
                   round, first, hidden {player: card}, dealt [x, y] (the open cards
                   dealt), open [x, y] (the open cards now), rewind (None or
                   {"by", "pot", "replaced", "cards"}), betting (a betting.py round),
                   turn (the number of the open turn), actions (the betting so far,
                   with round, turn, step, rewind and timeout), fresh_decks (decks
                   begun in its deal), ante_all_in (players whose ante took all they had)
    rewind_cards   None or {"owner": player, "cards": [x, y], "round": r}: the one stored pair
    last_event     the step key of the last move or timeout ("start" before any)
    history        one record per finished round (see _Play.settle): the cards, the
                   rewind, the betting, the hands, winner or tie, the payments, the
                   Rewind Cards stored and discarded, the chips after it, who starts
                   next, and closed_by (the step whose move or timeout ended it)
    transfers      movements of MATCH_CHIPS between the players and "pot"
    result         None while the match runs, else the fields of :class:`Result`
    forfeit        only once a player forfeited: {"player", "round"} (ruling 24); the
                   record of the round it ended has "forfeit": the forfeiter

A move is a betting action of :mod:`referee.games.betting` (``{"action": "raise",
"by": 3}``, ``{"action": "call"}``...) with two more keys: ``rewind`` (bool: REWIND in
the same mail) and ``turn`` (the normalised ``Step:`` line of the mail, or None; the
``Turn:`` line of forms mailed before issue 20 is read the same way).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games import betting, cards
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
from referee.games.rewind_holdem.rules import (
    ANTE,
    COPIES,
    OPEN_CARDS,
    POT,
    STARTING_CHIPS,
    VALUES,
    compare_hands,
    fold_penalty,
    hand_of,
    hand_record,
    pair_text,
    rewind_problem,
    step_key,
    turn_title,
)

# --------------------------------------------------------------------------- playing a round


class _Play:
    """Moves on a private copy of the state: one action (a move or a timeout default),
    the settlement of a round that ends, the deal of the next rounds (settling at once
    those that go straight to the showdown) and the end of the match."""

    def __init__(self, state: State, key: str):
        self.s = state
        self.key = key  # the step whose move or timeout makes these movements

    # ----------------------------------------------------------------- chips

    def move_chips(self, frm: str, to: str, amount: int, reason: str) -> None:
        """Move match chips between the players and the pot, with their transfer."""
        if amount <= 0:
            return
        for account, delta in ((frm, -amount), (to, amount)):
            if account == POT:
                self.s["pot"] += delta
            else:
                self.s["chips"][account] += delta
        transfer(self.s, frm, to, amount, reason, self.key, currency=MATCH_CHIPS)

    def pay(self, kind: str, frm: str, to: str, owed: int, record: dict[str, Any]) -> int:
        """Pay ``owed`` chips of a penalty (``kind`` "fold penalty" or "rewind"), or all
        ``frm`` holds when that is less (both are capped at what the payer holds);
        returns what was paid."""
        if owed <= 0:
            return 0
        paid = min(owed, self.s["chips"][frm])
        reason = f"{kind}, round {record['round']}"
        self.move_chips(frm, to, paid, reason)
        record["payments"].append({"kind": kind, "from": frm, "to": to, "owed": owed, "paid": paid, "reason": reason})
        return paid

    # ----------------------------------------------------------------- rounds

    def deal_round(self, round_no: int, first: str) -> None:
        """ROUND: ante 1 each (betting.open_round: a player holding the ante or less antes
        all they have and the round goes straight to the showdown), then the deal, in the
        order of ruling R5: the hidden card of the first seat (players[0]), that of the
        second, then the two open cards; a deck that runs out mid-deal goes on from a
        fresh shuffled deck (a round draws 4 cards, so in fact every deck lasts exactly
        10 rounds)."""
        s = self.s
        a, b = s["players"]
        rnd = betting.open_round(s["players"], s["chips"], ANTE, first, carried=s["pot"])
        for p in s["players"]:
            self.move_chips(p, POT, rnd["antes"][p], f"ante, round {round_no}")
        drawn, s["shoe"], fresh = cards.draw(s["seed"], s["shoe"], 2 + OPEN_CARDS, values=VALUES, copies=COPIES)
        s["round"] = round_no
        s["table"] = {
            "round": round_no,
            "first": first,
            "hidden": {a: drawn[0], b: drawn[1]},
            "dealt": drawn[2:],
            "open": drawn[2:],
            "rewind": None,
            "betting": rnd,
            "turn": 1,
            "actions": [],
            "fresh_decks": fresh,
            "ante_all_in": [p for p in s["players"] if rnd["end"] == "all-in" and rnd["stacks"][p] == 0],
        }

    def act(self, player: str, action: betting.Action, *, rewind: bool, timeout: bool) -> None:
        """One betting action by the player to act (already judged legal), after the
        REWIND that comes with it."""
        s = self.s
        table = s["table"]
        if rewind:
            stored = s["rewind_cards"]
            table["rewind"] = {
                "by": player,
                "pot": betting.pot(table["betting"]),
                "replaced": list(table["open"]),
                "cards": list(stored["cards"]),
            }
            table["open"] = list(stored["cards"])  # the replaced cards are discarded
            s["rewind_cards"] = None  # the Rewind Cards are used up
        before = table["betting"]
        table["betting"] = betting.act(before, player, action)
        done = table["betting"]["actions"][-1]
        self.move_chips(player, POT, done["put"], f"{done['action']}, round {table['round']}")
        self.move_chips(POT, opponent(s, player), done["returned"], f"excess returned, round {table['round']}")
        table["actions"].append(self.entry(player, done, rewind=rewind, timeout=timeout))
        table["turn"] += 1
        s["last_event"] = self.key
        self.play_on()

    def entry(
        self, player: str, done: dict[str, Any], *, rewind: bool = False, timeout: bool = False
    ) -> dict[str, Any]:
        """The public record of an action of the open turn (``done``: the betting's last entry)."""
        table = self.s["table"]
        return {
            "round": table["round"],
            "turn": table["turn"],
            "step": self.key,
            "player": player,
            "command": done["command"],
            "action": done["action"],
            "put": done["put"],
            "returned": done["returned"],
            "total": done["total"],
            "all_in": done["all_in"],
            "rewind": rewind,
            "timeout": timeout,
        }

    def forfeit(self, player: str) -> None:
        """``player`` forfeits the match in the open turn (ruling 24): the round ends as a fold
        by ``player``, whoever's turn it was (an entry ``FORFEIT``), and is settled; the match
        is over."""
        s = self.s
        table = s["table"]
        table["betting"] = betting.forfeit(table["betting"], player)
        done = table["betting"]["actions"][-1]
        table["actions"].append({**self.entry(player, done), "put": 0, "returned": 0, "forfeit": True})
        s["last_event"] = self.key
        self.settle()
        s["table"] = None

    def play_on(self) -> None:
        """Settle every round whose betting is over and deal the next, until a round
        waits for a player or the match is over."""
        s = self.s
        while s["table"] is not None and betting.is_over(s["table"]["betting"]):
            following = self.settle()
            if s["result"] is None:
                self.deal_round(s["round"] + 1, following)
            else:
                s["table"] = None

    def settle(self) -> str:
        """Settle the finished round; returns who starts the next one."""
        s = self.s
        table = s["table"]
        rnd = table["betting"]
        a, b = s["players"]
        record: dict[str, Any] = {
            "round": table["round"],
            "first": table["first"],
            "hidden": dict(table["hidden"]),
            "dealt": list(table["dealt"]),
            "open": list(table["open"]),
            "rewind": table["rewind"],
            "fresh_decks": table["fresh_decks"],
            "ante_all_in": table["ante_all_in"],
            "antes": dict(rnd["antes"]),
            "carried": rnd["carried"],
            "bets": dict(rnd["bets"]),
            "actions": table["actions"],
            "end": rnd["end"],
            "folder": rnd["folder"],
            "hands": {p: hand_record(hand_of(table, p)) for p in s["players"]},
            "pot": betting.pot(rnd),
            "winner": None,
            "loser": None,
            "tie": False,
            "won": {p: 0 for p in s["players"]},
            "carry_out": 0,
            "payments": [],
            "stored": None,
            "discarded": None,
            "closed_by": self.key,
        }
        forfeited = rnd["folder"] if rnd["actions"] and rnd["actions"][-1].get("forfeit") else None
        if forfeited is not None:
            # a forfeit of the match (ruling 24): a fold by the forfeiter, settled without the
            # fold penalty and without storing Rewind Cards: the match ends with this round
            winner, loser = opponent(s, forfeited), forfeited
            self.take_pot(winner, record)
            record["forfeit"] = forfeited
            following = loser
        elif rnd["end"] == "fold":
            loser = rnd["folder"]
            winner = opponent(s, loser)
            self.take_pot(winner, record)
            self.pay("fold penalty", loser, winner, fold_penalty(hand_of(table, loser)), record)
            # FOLD: the open cards on the table (after a rewind: the Rewind Cards) become
            # the folder's Rewind Cards; any stored pair is discarded (one pair at a time).
            record["discarded"] = s["rewind_cards"]
            s["rewind_cards"] = {"owner": loser, "cards": list(table["open"]), "round": table["round"]}
            record["stored"] = s["rewind_cards"]
            following = loser
        else:
            outcome = compare_hands(hand_of(table, a), hand_of(table, b))
            if outcome == 0:
                record["tie"] = True
                self.split_pot(record)
                following = table["first"]  # after a tie, the same player starts
            else:
                winner, loser = (a, b) if outcome > 0 else (b, a)
                self.take_pot(winner, record)
                if table["rewind"] is not None and rnd["end"] == "call":
                    self.pay("rewind", loser, winner, table["rewind"]["pot"], record)
                following = loser
        if not record["tie"]:
            record["winner"], record["loser"] = winner, loser
        record["chips"] = dict(s["chips"])
        record["next_first"] = following
        s["history"].append(record)
        if forfeited is not None:
            self.finish(forfeited, record, forfeit=True)
            return following
        broke = [p for p in s["players"] if s["chips"][p] == 0]
        if broke:
            self.finish(broke[0], record)
        return following

    def take_pot(self, winner: str, record: dict[str, Any]) -> None:
        record["won"][winner] = self.s["pot"]
        self.move_chips(POT, winner, self.s["pot"], f"pot, round {record['round']}")

    def split_pot(self, record: dict[str, Any]) -> None:
        """An exact tie splits the pot; an odd chip stays in the pot for the next round."""
        share = self.s["pot"] // 2
        for p in self.s["players"]:
            record["won"][p] = share
            self.move_chips(POT, p, share, f"split pot, round {record['round']}")
        record["carry_out"] = self.s["pot"]

    def finish(self, loser: str, record: dict[str, Any], *, forfeit: bool = False) -> None:
        """END: the match ends when a player has no chips (or forfeits, ruling 24)."""
        winner = opponent(self.s, loser)
        if forfeit:
            reason = f"{loser} forfeited the match in round {record['round']}: {winner} wins the match."
            self.s["forfeit"] = {"player": loser, "round": record["round"]}
        else:
            reason = f"{loser} has no chips left after round {record['round']}: {winner} wins the match."
        self.s["result"] = result_record(
            {winner: "win", loser: "loss"}, reason, {"chips": dict(self.s["chips"]), "rounds": record["round"]}
        )


# --------------------------------------------------------------------------- moves


def _current_reference(state: State) -> str:
    table = state["table"]
    return betting.turn_reference(turn_title(table["round"], table["turn"]))


def _move_problem(move: Any) -> str | None:
    """Why a move is not well formed (None when it is)."""
    if not isinstance(move, dict):
        return "A move is a betting command: RAISE n, RAISE TO n, CALL, CHECK, FOLD or ALL IN."
    problem = betting.action_problem(_action_of(move))
    if problem is not None:
        return problem
    if not isinstance(move.get("rewind", False), bool):
        return "REWIND is either in the mail or not."
    if move.get("turn") is not None and not isinstance(move["turn"], str):
        return "The turn a mail answers is a text like 'Round 3, turn 2'."
    return None


def _action_of(move: Move) -> betting.Action:
    """The betting action of a move (without REWIND and the turn reference)."""
    return {k: v for k, v in move.items() if k in ("action", "by", "to")}


# --------------------------------------------------------------------------- the match


def initial_state(seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
    if len(players) != 2 or players[0] == players[1]:
        raise GameError("Rewind Hold'em needs two different players.")
    dmo = options.get("dmo", players[0])
    if dmo not in players:
        raise GameError(f"The DMO must be one of the players ({players[0]} or {players[1]}); got {dmo!r}.")
    state: State = {
        "players": list(players),
        "seed": seed,
        "dmo": dmo,
        "round": 0,
        "initial_chips": {p: STARTING_CHIPS for p in players},
        "chips": {p: STARTING_CHIPS for p in players},
        "pot": 0,
        "shoe": cards.new_shoe(),
        "table": None,
        "rewind_cards": None,
        "last_event": "start",
        "history": [],
        "transfers": [],
        "result": None,
    }
    play = _Play(state, "start")
    play.deal_round(1, dmo)  # ROUND: the DMO starts round 1
    play.play_on()
    return state


def step(state: State) -> Step | None:
    if state["result"] is not None:
        return None
    table = state["table"]
    return Step(
        key=step_key(table["round"], table["turn"]),
        kind="turn",
        players=(table["betting"]["to_act"],),
        simultaneous=False,
        title=turn_title(table["round"], table["turn"]),
    )


def choices_text(state: State, player: str) -> str:
    """The legal choices of ``player`` now, in words (rejections end with it)."""
    if state["result"] is not None:
        return "The match is over."
    table = state["table"]
    to_act = table["betting"]["to_act"]
    if to_act != player:
        return (
            f"It is {to_act}'s turn ({turn_title(table['round'], table['turn'])}); "
            "you will get a mail when it is yours."
        )
    text = betting.describe_legal(table["betting"], player)
    if rewind_problem(state, player) is None:
        text += (
            f" You may also REWIND (your Rewind Cards {pair_text(state['rewind_cards']['cards'])} replace the "
            "open cards), on a line of its own in the same mail as your command."
        )
    return text


def apply_move(state: State, player: str, move: Move) -> Applied:
    if state["result"] is not None:
        return rejected(state, "The match is over; no more moves are accepted.")
    if player not in state["players"]:
        return rejected(state, f"{player} is not playing in this match.")
    problem = _move_problem(move)
    if problem is not None:
        return rejected(state, f"{problem} {choices_text(state, player)}")
    table = state["table"]
    now = turn_title(table["round"], table["turn"])
    answered = move.get("turn")
    if answered is not None and answered != _current_reference(state):
        return rejected(
            state,
            f"Your mail answers the turn {answered!r}, which is over; nothing in it was recorded. "
            f"Now it is {now}. {choices_text(state, player)}",
        )
    if table["betting"]["to_act"] != player:
        return rejected(state, f"It is not your turn. {choices_text(state, player)}")
    rewind = bool(move.get("rewind", False))
    if rewind:
        why = rewind_problem(state, player)
        if why is not None:
            legal = betting.describe_legal(table["betting"], player)
            return rejected(state, f"{why} {legal} (without REWIND)")
    action = _action_of(move)
    try:
        betting.resolve(table["betting"], player, action)
    except betting.IllegalAction as illegal:
        reason = illegal.reason
        if rewind_problem(state, player) is None:
            reason += " REWIND may come with any of them."
        return rejected(state, reason)
    new = clone(state)
    _Play(new, step_key(table["round"], table["turn"])).act(player, action, rewind=rewind, timeout=False)
    return Applied(new, True)


def apply_timeout(state: State, key: str | None = None) -> State:
    """TIMEOUT (as in Indian Poker): with nothing to call, CALL (on equal bets the
    showdown); facing a raise, FOLD. Penalties still apply; no REWIND."""
    if state["result"] is not None:
        raise GameError("The match is over; there is no turn to close.")
    new = clone(state)
    table = new["table"]
    player = table["betting"]["to_act"]
    action = betting.default_action(table["betting"])
    _Play(new, step_key(table["round"], table["turn"])).act(player, action, rewind=False, timeout=True)
    return new


def forfeit(state: State, player: str) -> State:
    """``player`` forfeits the match (RULINGS, "Seasons": a loss, with the chips as they
    stand; ruling 24): the open round ends as a fold by ``player``, whoever's turn it was:
    the opponent takes the pot (any odd chip carried from a tie included), no fold
    penalty is paid, no Rewind Cards are stored, both hidden cards are shown as at the
    end of every round; the match ends, the opponent winning. The round's record and
    ``state["forfeit"]`` say it (the views show it)."""
    check_forfeit(state, player)
    new = clone(state)
    table = new["table"]
    _Play(new, step_key(table["round"], table["turn"])).forfeit(player)
    return new


def dealt_cards(state: State) -> list[tuple[int, str | None]]:
    """Every card dealt in the match, in deal order, each with whose hidden card it was
    (None for an open card)."""
    a, b = state["players"]
    out: list[tuple[int, str | None]] = []
    for r in [*state["history"], *([state["table"]] if state["table"] is not None else [])]:
        out += [(r["hidden"][a], a), (r["hidden"][b], b), *((card, None) for card in r["dealt"])]
    return out
