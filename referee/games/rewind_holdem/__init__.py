"""Rewind Hold'em: three-card hold'em with one hidden card each and a rewind.

Rule text: ``seeds/rewind-holdem.txt``; the authoritative reading is the "Rewind
Hold'em" section of ``RULINGS.md`` (betting "as in Indian Poker": the "Indian Poker"
section); decisions of our own are listed, numbered, under "Rulings" in
``docs/games/rewind-holdem.md``. The betting round itself (RAISE n, RAISE TO n, CALL,
CHECK, FOLD, ALL IN, the raise cap, the all-in ante, the timeout default, the mail
grammar of one command) is :mod:`referee.games.betting`; this module adds the cards,
the hands, the fold penalties, the Rewind Cards, the chips and the mail of the game.

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

import random
from collections.abc import Sequence
from typing import Any

from referee.games import betting, cards
from referee.games.base import (
    MATCH_CHIPS,
    SEQUENTIAL,
    Applied,
    GameError,
    GameType,
    Move,
    Parsed,
    ParseError,
    Result,
    State,
    Step,
    check_balances,
    clone,
    plural,
    stored_result,
    transfer,
)
from referee.games.base import ranked_by_outcome as ranking

# SETUP: "a 40 card deck of 4 of each 1-10"; "each player has 25 chips".
VALUES = 10
COPIES = 4
DECK_SIZE = VALUES * COPIES
STARTING_CHIPS = 25
# ROUND: "each player bets 1 chip as ante" (ruling R2: every round, the ante never rises).
ANTE = 1
# ROUND: "1 card along with 2 open cards shared by both players".
OPEN_CARDS = 2
# BETTING: "30 seconds"; the common rulings make live seconds hours.
TURN_HOURS = 30.0
POT = "pot"  # the account of the chips in the pot
VICTORY_POINTS = {"win": 1.0, "loss": 0.0}


# --------------------------------------------------------------------------- hands
#
# HANDS: a hand is the player's own card and the two open cards. Classes, high to low:
# Triple, Straight, Double, High card.

TRIPLE, STRAIGHT, DOUBLE, HIGH_CARD = 3, 2, 1, 0
CLASS_NAMES = {TRIPLE: "Triple", STRAIGHT: "Straight", DOUBLE: "Double", HIGH_CARD: "High card"}


def straight_run(cards: Sequence[int]) -> tuple[int, int, int] | None:
    """The three cards in run order when they form a Straight, else None: three
    consecutive values in the cycle 1..10 where 10 and 1 are adjacent (ruling: 9-10-1
    and 10-1-2 are Straights; 8-9-10 too, and 1-2-3)."""
    values = set(cards)
    if len(values) != 3 or len(cards) != 3:
        return None
    for low in range(1, VALUES + 1):
        run = (low, low % VALUES + 1, (low + 1) % VALUES + 1)
        if values == set(run):
            return run
    return None


def hand_class(cards: Sequence[int]) -> int:
    """HANDS: Triple (3 of the same card), Straight, Double (2 of the 3 the same),
    else High card."""
    distinct = len(set(cards))
    if distinct == 1:
        return TRIPLE
    if straight_run(cards) is not None:
        return STRAIGHT
    if distinct == 2:
        return DOUBLE
    return HIGH_CARD


def hand_key(cards: Sequence[int]) -> tuple[int, ...]:
    """What a hand is compared by, greater is better: the class, then (ruling) "the
    higher card forming the hand", 1 being the lowest value: a Triple by its value; a
    Double by the paired value, then the third card; a Straight and a High card by
    their cards compared from highest to lowest (so 8-9-10 > 9-10-1 > 10-1-2 > 7-8-9
    > ... > 1-2-3)."""
    cls = hand_class(cards)
    if cls == DOUBLE:
        pair = next(v for v in cards if list(cards).count(v) == 2)
        third = next(v for v in cards if v != pair)
        return (cls, pair, third)
    return (cls, *sorted(cards, reverse=True))


def compare_hands(first: Sequence[int], second: Sequence[int]) -> int:
    """1 when ``first`` wins, -1 when ``second`` wins, 0 for an exact tie."""
    a, b = hand_key(first), hand_key(second)
    return (a > b) - (a < b)


def hand_cards(cards: Sequence[int]) -> str:
    """The cards of a hand as players read them: a Straight in run order (9-10-1),
    a Double pair first (3-3-2), otherwise from the highest down (9-5-2)."""
    run = straight_run(cards)
    if run is not None:
        return "-".join(map(str, run))
    key = hand_key(cards)
    if key[0] == DOUBLE:
        return f"{key[1]}-{key[1]}-{key[2]}"
    return "-".join(map(str, key[1:]))


def describe_hand(cards: Sequence[int]) -> str:
    """``Straight 9-10-1``, ``Double 3-3-2``, ``High card 9-5-2``, ``Triple 7-7-7``."""
    return f"{CLASS_NAMES[hand_class(cards)]} {hand_cards(cards)}"


# FOLD: "If a player folds while they have a triple or a straight, they must forfeit an
# extra 10 chips to their opponent; if they fold with a double, they must forfeit 5."
FOLD_PENALTY = {TRIPLE: 10, STRAIGHT: 10, DOUBLE: 5, HIGH_CARD: 0}
REWIND = "rewind"  # the extra command word read beside the betting command


def fold_penalty(hand: Sequence[int]) -> int:
    """The extra chips a folder owes the opponent for the hand folded (before the cap
    at what the folder holds)."""
    return FOLD_PENALTY[hand_class(hand)]


def hand_of(table: dict[str, Any], player: str) -> list[int]:
    """HANDS: the player's own card and the open cards now on the table."""
    return [table["hidden"][player], *table["open"]]


def step_key(round_no: int, turn: int) -> str:
    return f"round-{round_no}-turn-{turn}"


def turn_title(round_no: int, turn: int) -> str:
    return f"Round {round_no}, turn {turn}"


def rewind_problem(state: State, player: str) -> str | None:
    """Why ``player`` may not REWIND now (None: they may). Ruling: only the player who
    starts the betting of the round, only before their first action of the round, and
    only holding the stored Rewind Cards (the pair belongs to the most recent folder)."""
    table = state["table"]
    stored = state["rewind_cards"]
    if table is None or table["betting"]["to_act"] != player:
        return "You may REWIND only on your own turn."
    if table["first"] != player:
        return f"Only {table['first']}, who starts the betting of round {table['round']}, may REWIND."
    if table["betting"]["actions"]:
        return "REWIND is allowed only before your first action of the round, and you have acted already."
    if stored is None:
        return "There are no Rewind Cards: a pair is stored only when somebody folds."
    if stored["owner"] != player:
        return (
            f"The Rewind Cards {_pair(stored['cards'])} are {stored['owner']}'s (stored when they folded in "
            f"round {stored['round']}); you may REWIND only with Rewind Cards of your own."
        )
    return None


def _pair(pair: Sequence[int]) -> str:
    return f"{pair[0]} and {pair[1]}"


# --------------------------------------------------------------------------- playing a round


def _other(state: State, player: str) -> str:
    a, b = state["players"]
    return str(b if player == a else a)


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
        self.move_chips(POT, _other(s, player), done["returned"], f"excess returned, round {table['round']}")
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
            "hands": {p: _hand_record(hand_of(table, p)) for p in s["players"]},
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
            winner, loser = _other(s, forfeited), forfeited
            self.take_pot(winner, record)
            record["forfeit"] = forfeited
            following = loser
        elif rnd["end"] == "fold":
            loser = rnd["folder"]
            winner = _other(s, loser)
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
        winner = _other(self.s, loser)
        if forfeit:
            reason = f"{loser} forfeited the match in round {record['round']}: {winner} wins the match."
            self.s["forfeit"] = {"player": loser, "round": record["round"]}
        else:
            reason = f"{loser} has no chips left after round {record['round']}: {winner} wins the match."
        self.s["result"] = {
            "outcome": {winner: "win", loser: "loss"},
            "victory_points": {winner: VICTORY_POINTS["win"], loser: VICTORY_POINTS["loss"]},
            "reason": reason,
            "scores": {"chips": dict(self.s["chips"]), "rounds": record["round"]},
        }


def _hand_record(hand: list[int]) -> dict[str, Any]:
    return {"cards": hand, "class": CLASS_NAMES[hand_class(hand)], "text": describe_hand(hand)}


# --------------------------------------------------------------------------- the game


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


class RewindHoldem:
    name = "rewind-holdem"
    title = "Rewind Hold'em"
    min_players = 2
    max_players = 2

    def __init__(self) -> None:
        # One player acts per step; the chips are the match's own stacks (never the season's).
        self.game_type = GameType(
            dynamics=SEQUENTIAL,
            roles=("player", "player"),
            currencies=(MATCH_CHIPS,),
            step_kinds={"turn": TURN_HOURS},
            options={"dmo": "the player who starts the betting of round 1 (default: the first player)"},
            chance=True,
            ranked=True,
            death_match=True,  # the first seat is the EC's, the second the DMO's (RULINGS, "Seasons")
            abandon_after=5,  # RULINGS, "Seasons": a timeout costs little, so 5 missed steps forfeit
        )
        self.step_kinds: dict[str, float] = self.game_type.step_kinds

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
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

    def step(self, state: State) -> Step | None:
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

    def awaiting(self, state: State) -> tuple[str, ...]:
        if state["result"] is not None:
            return ()
        return (state["table"]["betting"]["to_act"],)

    # ----------------------------------------------------------------- mail text

    def parse(self, state: State, player: str, text: str) -> Parsed:
        """One betting command (the grammar of :func:`betting.read_action`), an optional
        REWIND alone on a line, and an optional ``Step:`` line naming the turn answered
        (``Turn:``, the line of forms mailed before issue 20, is read the same way)."""
        reading = betting.read_action(text, extra_commands=(REWIND,))
        if reading.action is None:
            raise ParseError(
                "REWIND comes together with your betting command in the same mail: "
                "add RAISE n, RAISE TO n, CALL, CHECK, FOLD or ALL IN on a line of its own",
                None,
            )
        move: Move = {**reading.action, "rewind": REWIND in reading.extras, "turn": reading.turn}
        return Parsed([move], list(reading.ignored))

    def form(self, state: State, player: str) -> str:
        """A command and the Step line (the convention of every game's form), for the player
        to act; empty for anyone else."""
        if state["result"] is not None or state["table"]["betting"]["to_act"] != player:
            return ""
        table = state["table"]
        return f"CALL\nStep: {turn_title(table['round'], table['turn'])}\n"

    def quick_answers(self, state: State, player: str) -> list[tuple[str, str]]:
        """The step mail's one-tap answers (referee.games.quick): CALL (or CHECK), FOLD, RAISE 2."""
        from referee.games.quick import betting_answers

        form = self.form(state, player)
        legal = betting.legal_actions(state["table"]["betting"], player) if form else None
        return betting_answers(form, legal)

    # ----------------------------------------------------------------- moves

    def choices_text(self, state: State, player: str) -> str:
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
                f" You may also REWIND (your Rewind Cards {_pair(state['rewind_cards']['cards'])} replace the "
                "open cards), on a line of its own in the same mail as your command."
            )
        return text

    def apply_move(self, state: State, player: str, move: Move) -> Applied:
        if state["result"] is not None:
            return Applied(state, False, "The match is over; no more moves are accepted.", changed=False)
        if player not in state["players"]:
            return Applied(state, False, f"{player} is not playing in this match.", changed=False)
        problem = _move_problem(move)
        if problem is not None:
            return Applied(state, False, f"{problem} {self.choices_text(state, player)}", changed=False)
        table = state["table"]
        now = turn_title(table["round"], table["turn"])
        answered = move.get("turn")
        if answered is not None and answered != _current_reference(state):
            return Applied(
                state,
                False,
                f"Your mail answers the turn {answered!r}, which is over; nothing in it was recorded. "
                f"Now it is {now}. {self.choices_text(state, player)}",
                changed=False,
            )
        if table["betting"]["to_act"] != player:
            return Applied(state, False, f"It is not your turn. {self.choices_text(state, player)}", changed=False)
        rewind = bool(move.get("rewind", False))
        if rewind:
            why = rewind_problem(state, player)
            if why is not None:
                legal = betting.describe_legal(table["betting"], player)
                return Applied(state, False, f"{why} {legal} (without REWIND)", changed=False)
        action = _action_of(move)
        try:
            betting.resolve(table["betting"], player, action)
        except betting.IllegalAction as illegal:
            reason = illegal.reason
            if rewind_problem(state, player) is None:
                reason += " REWIND may come with any of them."
            return Applied(state, False, reason, changed=False)
        new = clone(state)
        _Play(new, step_key(table["round"], table["turn"])).act(player, action, rewind=rewind, timeout=False)
        return Applied(new, True)

    def apply_timeout(self, state: State, key: str | None = None) -> State:
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

    def forfeit(self, state: State, player: str) -> State:
        """``player`` forfeits the match (RULINGS, "Seasons": a loss, with the chips as they
        stand; ruling 24): the open round ends as a fold by ``player``, whoever's turn it was:
        the opponent takes the pot (any odd chip carried from a tie included), no fold
        penalty is paid, no Rewind Cards are stored, both hidden cards are shown as at the
        end of every round; the match ends, the opponent winning. The round's record and
        ``state["forfeit"]`` say it (the views show it)."""
        betting.check_forfeit(state, player)
        new = clone(state)
        table = new["table"]
        _Play(new, step_key(table["round"], table["turn"])).forfeit(player)
        return new

    def with_balances(self, state: State, balances: dict[str, int]) -> State:
        """Ruling R13: the chips of this game are the match's own (MATCH_CHIPS), so the
        live season balances, checked for shape, change nothing."""
        check_balances(state, balances)
        return clone(state)

    # ----------------------------------------------------------------- views

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        """What ``player`` may know (None: the public archive). During a round a player
        sees the opponent's hidden card, never their own; the public sees neither. Every
        round's hidden cards are revealed to all when it ends, by a showdown or a fold
        (ruling R6). The stored Rewind Cards are public (ruling R9)."""
        if player is not None and player not in state["players"]:
            raise GameError(f"{player} is not playing in this match.")
        over = state["result"] is not None
        table = state["table"]
        viewer = None if over else player
        opponent = None if player is None else _other(state, player)
        history = state["history"]
        every = [r["actions"] for r in history] + ([table["actions"]] if table is not None else [])
        last_action = next((actions[-1] for actions in reversed(every) if actions), None)
        view = {
            "game": self.name,
            "over": over,
            "players": list(state["players"]),
            "you": player,
            "opponent": opponent,
            "dmo": state["dmo"],
            "round": state["round"],
            "turn": None if table is None else table["turn"],
            "title": "Final result" if table is None else turn_title(table["round"], table["turn"]),
            "stacks": state["chips"],
            "pot": state["pot"],
            "deck": {
                "number": state["shoe"]["deck"] + 1,
                "left": cards.left(state["shoe"], values=VALUES, copies=COPIES),
                "unseen": _unseen(state, player),
            },
            "table": None if table is None else self._table_view(state, player),
            "rewind_cards": state["rewind_cards"],
            "choices": None if viewer is None else self._choices(state, viewer),
            "waiting": None if viewer is None else self._waiting(state, viewer),
            "last_action": last_action,
            "last_rounds": [r for r in history if r["closed_by"] == state["last_event"]],
            "history": history,
            "final": state["result"],
        }
        if state.get("forfeit") is not None:  # only once a player forfeited (ruling 24)
            view["forfeit"] = state["forfeit"]
        return clone(view)  # built from references into the state: nothing shared leaves

    @staticmethod
    def _table_view(state: State, player: str | None) -> dict[str, Any]:
        table = state["table"]
        rnd = table["betting"]
        seen = [] if player is None else [_other(state, player)]  # never the viewer's own card
        return {
            "round": table["round"],
            "turn": table["turn"],
            "first": table["first"],
            "to_act": rnd["to_act"],
            "open": table["open"],
            "dealt": table["dealt"],
            "rewound": table["rewind"],
            "cards": {p: table["hidden"][p] for p in seen},
            "hands": {p: _hand_record(hand_of(table, p)) for p in seen},
            "antes": rnd["antes"],
            "carried": rnd["carried"],
            "bets": rnd["bets"],
            "pot": betting.pot(rnd),
            "actions": table["actions"],
            "fresh_decks": table["fresh_decks"],
        }

    def _choices(self, state: State, player: str) -> dict[str, Any] | None:
        rnd = state["table"]["betting"]
        legal = betting.legal_actions(rnd, player)
        if legal is None:
            return None
        why_not = rewind_problem(state, player)
        return {
            **legal,
            "text": self.choices_text(state, player),
            "rewind": None
            if why_not is not None
            else {"cards": state["rewind_cards"]["cards"], "pot": betting.pot(rnd)},
            "rewind_why_not": why_not if rnd["first"] == player and not rnd["actions"] else None,
            "timeout": betting.command_text(betting.default_action(rnd)),
        }

    @staticmethod
    def _waiting(state: State, player: str) -> dict[str, Any] | None:
        rnd = state["table"]["betting"]
        if rnd["to_act"] == player:
            return None
        return {"player": rnd["to_act"], "timeout": betting.command_text(betting.default_action(rnd))}

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        """Every player is told of every step (and of the end)."""
        return tuple(state["players"])

    def standings(self, state: State) -> list[str]:
        """One line per player for organizers, from the public view only."""
        public = self.view(state, None)
        stored = public["rewind_cards"]
        lines = []
        for p in public["players"]:
            line = f"{p}: {plural(public['stacks'][p], 'chip')}"
            if public["table"] is not None:
                line += f", {public['table']['bets'][p]} in the pot of round {public['round']}"
            if stored is not None and stored["owner"] == p:
                line += f", holds the Rewind Cards {_pair(stored['cards'])}"
            lines.append(line)
        return lines

    def result(self, state: State) -> Result | None:
        result = stored_result(state)
        if result is not None:
            result.ranking = ranking(state, result.outcome, state["chips"])
        return result

    # ----------------------------------------------------------------- for tests and bots

    def sample_moves(self, state: State, player: str, rnd: random.Random) -> list[Move]:
        """A few legal moves of the player to act (each with REWIND now and then, when it
        is allowed); [] for anyone else and once the match is over."""
        if state["result"] is not None or state["table"]["betting"]["to_act"] != player:
            return []
        legal = betting.legal_actions(state["table"]["betting"], player)
        assert legal is not None
        actions: list[betting.Action] = [{"action": "check" if legal["check"] else "call"}, {"action": "fold"}]
        if legal["raise"] is not None:
            r = legal["raise"]
            actions.append({"action": "raise", "by": rnd.randint(r["min"], r["max"])})
            actions.append({"action": "raise", "to": rnd.randint(r["to_min"], r["to_max"])})
        actions.append({"action": "all-in"})
        may_rewind = rewind_problem(state, player) is None
        return [{**a, "rewind": may_rewind and rnd.random() < 0.5, "turn": None} for a in actions]

    def hidden_variants(self, state: State, player: str, rnd: random.Random) -> list[State]:
        """A few states that differ from ``state`` only in what ``player`` may not know
        yet: their own card of the round in play, each time a value the deck it was
        dealt from could still have held (every other card dealt from that deck counted).
        Nothing else is hidden from a player; once the match is over, nothing at all."""
        if player not in state["players"]:
            raise GameError(f"{player} is not playing in this match.")
        if state["table"] is None:
            return []
        possible = [v for v in _possible_own_cards(state, player) if v != state["table"]["hidden"][player]]
        variants = []
        for value in rnd.sample(possible, min(3, len(possible))):
            new = clone(state)
            new["table"]["hidden"][player] = value
            variants.append(new)
        return variants


def _dealt(state: State) -> list[tuple[int, str | None]]:
    """Every card dealt in the match, in deal order, each with whose hidden card it was
    (None for an open card)."""
    a, b = state["players"]
    out: list[tuple[int, str | None]] = []
    for r in [*state["history"], *([state["table"]] if state["table"] is not None else [])]:
        out += [(r["hidden"][a], a), (r["hidden"][b], b), *((card, None) for card in r["dealt"])]
    return out


def _unseen(state: State, viewer: str | None) -> list[int]:
    """Ruling R5: how many cards of each value (index 0 for the 1s) of the deck in use
    ``viewer`` has not seen: the deck's 4 of each value, less every card dealt from it
    that ``viewer`` has seen (cards of finished rounds, open cards, the opponent's card).
    The viewer's own card of the round in play is among the unseen (the public sees
    neither hidden card of the round in play)."""
    dealt = _dealt(state)
    in_play = state["table"] is not None
    current = dealt[len(dealt) - state["shoe"]["drawn"] :] if state["shoe"]["drawn"] else []
    hidden_now = len(dealt) - 4 if in_play else len(dealt)  # where the round in play's cards begin
    seen = [0] * VALUES
    for i, (card, owner) in enumerate(current, start=len(dealt) - len(current)):
        if i >= hidden_now and owner is not None and (viewer is None or owner == viewer):
            continue  # a hidden card of the round in play the viewer cannot see
        seen[card - 1] += 1
    return [COPIES - n for n in seen]


def _possible_own_cards(state: State, player: str) -> list[int]:
    """The values ``player``'s card of the round in play could have, as far as the cards
    dealt tell: those the deck it came from still held a copy of."""
    dealt = [card for card, _ in _dealt(state)]
    own = len(dealt) - 4 + state["players"].index(player)
    start = len(dealt) - state["shoe"]["drawn"]  # where the deck in use began
    while start > own:
        start -= DECK_SIZE
    deck = dealt[max(start, 0) : start + DECK_SIZE]
    deck.pop(own - max(start, 0))
    return [v for v in range(1, VALUES + 1) if deck.count(v) < COPIES]


GAME = RewindHoldem()
