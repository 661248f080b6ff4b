"""Indian Poker: each player sees the opponent's card, never their own, and bets on it.

Rule text: ``seeds/indian-poker.txt``; the authoritative reading is the "Indian Poker"
section of ``RULINGS.md``; decisions of our own are listed under "Rulings" in
``docs/games/indian-poker.md`` (numbered; each names its test). The betting itself
(RAISE n, RAISE TO n, CALL, CHECK, FOLD, ALL IN, the raise cap, the all-in ante, the
timeout default, the mail grammar) is :mod:`referee.games.betting`.

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

import random
from collections.abc import Sequence
from typing import Any

from referee.games import betting
from referee.games.base import (
    MATCH_CHIPS,
    SEQUENTIAL,
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
from referee.games.base import ranked_by_outcome as ranking

# Rule text 2 / ruling: two players with 25 chips each.
STARTING_CHIPS = 25
# Rule text 2: a 20-card deck, each value 1..10 twice; dealt without replacement,
# reshuffled when all 20 cards have been played.
CARD_VALUES = tuple(range(1, 11))
COPIES = 2
DECK = tuple(sorted(CARD_VALUES * COPIES))
# Rule text 3 and 10: an ante of 1 chip each, raised by 1 every 10 hands.
FIRST_ANTE = 1
HANDS_PER_ANTE = 10
# Rule text 9: folding while holding a 10 costs 10 chips to the opponent.
TEN = 10
TEN_FOLD_PENALTY = 10
# Ruling 10: a turn lasts 24 hours by default (the organizer configures it per kind).
TURN_HOURS = 24.0
POT = "pot"  # the pot's account in the transfers
VICTORY_POINTS = {"win": 1.0, "loss": 0.0}


# --------------------------------------------------------------------------- rules


def ante_for(hand_no: int) -> int:
    """Rule text 10: 1 chip in hands 1-10, 2 in hands 11-20, and so on. Ruling: hands
    without an ante (after a tie) still count toward these steps."""
    return FIRST_ANTE + (hand_no - 1) // HANDS_PER_ANTE


def last_hand_of_ante(hand_no: int) -> int:
    """The last hand played at the ante of ``hand_no`` (10, 20, ...)."""
    return ((hand_no - 1) // HANDS_PER_ANTE + 1) * HANDS_PER_ANTE


def hand_ante(hand_no: int, previous: dict[str, Any] | None) -> int:
    """Rule text 6: after a tied showdown the next hand has no ante."""
    if previous is not None and previous["tie"]:
        return 0
    return ante_for(hand_no)


def first_to_act(dmo: str, previous: dict[str, Any] | None) -> str:
    """Rule text 7: hand 1 the DMO; afterwards the previous hand's loser; ruling: after a
    tie, the same player as in the tied hand."""
    if previous is None:
        return dmo
    return str(previous["first"] if previous["tie"] else previous["loser"])


def showdown_winner(cards: dict[str, int]) -> str | None:
    """Rule text 5: the higher card wins; equal cards tie (None)."""
    (a, card_a), (b, card_b) = cards.items()
    if card_a == card_b:
        return None
    return a if card_a > card_b else b


def ten_fold_penalty(card: int, stack: int) -> int:
    """Rule text 9: folding a 10 pays 10 chips to the opponent; ruling: or all the folder
    holds (behind, after the fold), when that is less."""
    return min(TEN_FOLD_PENALTY, stack) if card == TEN else 0


def is_out(stack: int, carried: int) -> bool:
    """Rule text 11: a player with no chips loses; ruling: a player with 0 chips behind
    but chips in a pot carried over from a tie is not out."""
    return stack == 0 and carried == 0


def shuffled_deck(seed: int, number: int) -> list[int]:
    """The ``number``-th shuffle of the 20 cards (1, 2, ...), from the match seed."""
    cards = list(DECK)
    rng(seed, "deck", number).shuffle(cards)
    return cards


def step_key(hand_no: int, action_no: int) -> str:
    return f"hand-{hand_no}-{action_no}"


def turn_title(hand_no: int, action_no: int) -> str:
    return f"Hand {hand_no}, action {action_no}"


def _opponent(state: State, player: str) -> str:
    a, b = state["players"]
    return str(b if player == a else a)


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
            self.move(POT, _opponent(s, entry["seat"]), entry["returned"], "excess over a short call returned")
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
            winner: str | None = _opponent(s, loser)
        else:
            winner = showdown_winner(cards)
            loser = None if winner is None else _opponent(s, winner)
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
        if forfeited is not None:
            winner_of_match = _opponent(s, forfeited)
            s["forfeit"] = {"player": forfeited, "hand": s["hand"]}
            s["result"] = {
                "outcome": {winner_of_match: "win", forfeited: "loss"},
                "victory_points": {winner_of_match: VICTORY_POINTS["win"], forfeited: VICTORY_POINTS["loss"]},
                "reason": f"{winner_of_match} wins: {forfeited} forfeited the match in hand {s['hand']}.",
                "scores": {"stacks": dict(s["stacks"]), "hands": s["hand"]},
            }
            return
        out = [p for p in s["players"] if is_out(s["stacks"][p], s["carried"])]
        if out:
            (loser_of_match,) = out  # 50 chips, none carried: only one player can be out
            winner_of_match = _opponent(s, loser_of_match)
            s["result"] = {
                "outcome": {winner_of_match: "win", loser_of_match: "loss"},
                "victory_points": {winner_of_match: 1.0, loser_of_match: 0.0},
                "reason": f"{winner_of_match} wins: {loser_of_match} has no chips left after hand {s['hand']}.",
                "scores": {"stacks": dict(s["stacks"]), "hands": s["hand"]},
            }


# --------------------------------------------------------------------------- the game


class IndianPoker:
    name = "indian-poker"
    title = "Indian Poker"
    min_players = 2
    max_players = 2

    def __init__(self) -> None:
        # One player acts per step; the chips are the match's own stacks (never the season's).
        self.game_type = GameType(
            dynamics=SEQUENTIAL,
            roles=("player", "player"),
            currencies=(MATCH_CHIPS,),
            step_kinds={"turn": TURN_HOURS},
            options={
                "dmo": "the player chosen for the death match, who acts first in hand 1 (default: the first player)"
            },
            chance=True,
            ranked=True,
            death_match=True,  # the first seat is the EC's, the second the DMO's (RULINGS, "Seasons")
            abandon_after=5,  # RULINGS, "Seasons": a timeout costs little, so 5 missed steps forfeit
        )
        self.step_kinds: dict[str, float] = self.game_type.step_kinds

    def initial_state(self, seed: int, players: Sequence[str], options: dict[str, Any]) -> State:
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

    # ----------------------------------------------------------------- steps

    def step(self, state: State) -> Step | None:
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

    def awaiting(self, state: State) -> tuple[str, ...]:
        step = self.step(state)
        return () if step is None else step.players

    # ----------------------------------------------------------------- mail text

    def parse(self, state: State, player: str, text: str) -> Parsed:
        """One command (see referee.games.betting, "Mail grammar"), and the ``Step:`` line
        of the form when the mail keeps it (ruling 8; ``Turn:``, the line of forms mailed
        before issue 20, is read the same way)."""
        reading = betting.read_action(text)
        assert reading.action is not None  # no extra commands in this game
        move: Move = dict(reading.action)
        if reading.turn is not None:
            move["turn"] = reading.turn
        return Parsed([move], reading.ignored)

    def form(self, state: State, player: str) -> str:
        """For the player to act: CALL (or CHECK, with nothing to call) and the Step line;
        for anyone else, nothing (ruling 8)."""
        step = self.step(state)
        if step is None or player not in step.players:
            return ""
        command = "CHECK" if betting.to_call(state["betting"], player) == 0 else "CALL"
        return f"{command}\nStep: {step.title}\n"

    def quick_answers(self, state: State, player: str) -> list[tuple[str, str]]:
        """The step mail's one-tap answers (referee.games.quick): CALL (or CHECK), FOLD, RAISE 2."""
        from referee.games.quick import betting_answers

        form = self.form(state, player)
        return betting_answers(form, betting.legal_actions(state["betting"], player) if form else None)

    # ----------------------------------------------------------------- moves

    def apply_move(self, state: State, player: str, move: Move) -> Applied:
        def reject(reason: str) -> Applied:
            return Applied(state, False, reason, changed=False)

        if state["result"] is not None:
            return reject("The match is over; no more actions are accepted.")
        if player not in state["players"]:
            return reject(f"{player} is not playing in this match.")
        step = self.step(state)
        assert step is not None
        rnd = state["betting"]
        to_act = rnd["to_act"]
        if not isinstance(move, dict):
            return reject(betting.action_problem(move) or "A move is a betting action.")
        turn = move.get("turn")
        if turn is not None and turn != betting.turn_reference(step.title):
            shown = turn if isinstance(turn, str) else repr(turn)
            if player == to_act:
                return reject(
                    f"Your mail answers an earlier turn ({shown}), which is over; now it is {step.title} and "
                    f"your turn again. {betting.describe_legal(rnd, player)} Send your command again, "
                    f"with the line 'Step: {step.title}'."
                )
            return reject(
                f"Your mail answers an earlier turn ({shown}), which is over; now it is {step.title} and "
                f"{to_act}'s turn: you have nothing to send until {to_act} has acted."
            )
        if player != to_act:
            return reject(
                f"It is not your turn: {step.title} is {to_act}'s to act. You have nothing to send "
                f"now; you will get a mail when it is your turn."
            )
        action = {k: v for k, v in move.items() if k != "turn"}
        problem = betting.action_problem(action)
        if problem is not None:
            return reject(f"{problem} {betting.describe_legal(rnd, player)}")
        try:
            new_round = betting.act(rnd, player, action)
        except betting.IllegalAction as illegal:
            return reject(illegal.reason)
        new = clone(state)
        new["betting"] = new_round
        new_round["actions"][-1]["timeout"] = False
        _Hand(new).after_action()
        return Applied(new, True)

    def apply_timeout(self, state: State, key: str | None = None) -> State:
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

    def forfeit(self, state: State, player: str) -> State:
        """``player`` forfeits the match (RULINGS, "Seasons": a loss, with the chips as they
        stand; ruling 25): the open hand ends as a fold by ``player``, whoever's turn it was
        (an entry ``FORFEIT`` in its betting): the opponent takes the pot (and any pot carried
        over from a tie), no penalty for folding a 10 is paid, both cards are shown as after
        every hand; then the match ends, the opponent winning. The hand's record and
        ``state["forfeit"]`` say it (the views show it)."""
        betting.check_forfeit(state, player)
        new = clone(state)
        new["betting"] = betting.forfeit(new["betting"], player)
        new["betting"]["actions"][-1]["timeout"] = False
        _Hand(new).settle()
        return new

    def with_balances(self, state: State, balances: dict[str, int]) -> State:
        """Ruling 9: the duel is played with its own chips; the season balances are checked
        for shape but change nothing."""
        check_balances(state, balances)
        return clone(state)

    # ----------------------------------------------------------------- views

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        """What ``player`` may know (None: the public archive): the opponent's card of the
        open hand (never their own), the cards of every finished hand, stacks, pot, antes,
        the betting so far, whose turn, and their choices when it is theirs. The public
        view has no card of the open hand."""
        if player is not None and player not in state["players"]:
            raise GameError(f"{player} is not playing in this match.")
        over = state["result"] is not None
        rnd = state["betting"]
        viewer = None if over else player
        hand_no = state["hand"]
        opponent = None if player is None else _opponent(state, player)
        step = self.step(state)
        to_act = None if over else rnd["to_act"]
        legal = None
        choices = None
        if viewer is not None and viewer == to_act:
            legal = betting.legal_actions(rnd, viewer)
            choices = betting.describe_legal(rnd, viewer)
        open_hand = None
        if not over:
            open_hand = {
                "hand": hand_no,
                "ante": rnd["ante"],
                "antes": rnd["antes"],
                "carried": rnd["carried"],
                "first": rnd["first"],
                "bets": rnd["bets"],
                "actions": rnd["actions"],
                "pot": betting.pot(rnd),
                "to_act": to_act,
                "to_call": None if to_act is None else betting.to_call(rnd, to_act),
            }
        history = state["history"]
        recent: list[dict[str, Any]] = []
        if over or not rnd["actions"]:
            # the hands finished since the last action: the hand it ended, and any hand
            # played out after it without a decision (an all-in ante, a carried pot)
            decided = [i for i, h in enumerate(history) if h["actions"]]
            recent = history[decided[-1] if decided else 0 :]
        last_action = None
        if not over and rnd["actions"]:
            last_action = {"hand": hand_no, **rnd["actions"][-1]}
        elif recent and recent[0]["actions"]:
            last_action = {"hand": recent[0]["hand"], **recent[0]["actions"][-1]}
        return clone(
            {
                "game": self.name,
                "hand": hand_no,
                "title": f"Hand {hand_no}",
                "step_title": None if step is None else step.title,
                "over": over,
                "players": state["players"],
                "you": player,
                "opponent": opponent,
                "dmo": state["dmo"],
                "stacks": state["stacks"],
                "pot": 0 if over else betting.pot(rnd),
                "carried": state["carried"],
                "ante": {
                    "now": ante_for(max(hand_no, 1)),
                    "until_hand": last_hand_of_ante(max(hand_no, 1)),
                    "next": ante_for(max(hand_no, 1)) + 1,
                },
                "hand_open": open_hand,
                "opponent_card": None if viewer is None else state["cards"][opponent],
                "unseen": None if viewer is None else self._unseen(state, viewer),
                "deck": {"number": state["deck"]["number"], "left": len(state["deck"]["cards"])},
                "your_turn": viewer is not None and viewer == to_act,
                "legal": legal,
                "choices": choices,
                "last_hand": history[-1] if history else None,
                "recent_hands": recent,
                "last_action": last_action,
                "history": history,
                "final": state["result"],
            }
            # only once a player forfeited (ruling 25)
            | ({"forfeit": state["forfeit"]} if state.get("forfeit") is not None else {})
        )

    @staticmethod
    def _unseen(state: State, player: str) -> list[int]:
        """The cards of the current deck ``player`` has not seen: the 20 cards less those of
        the finished hands of this shuffle and the opponent's card. Their own card is one of
        them; the view never says which (it does not depend on it)."""
        left = list(DECK)
        seen = [h["cards"][p] for h in state["history"] if h["deck"] == state["deck"]["number"] for p in h["cards"]]
        seen.append(state["cards"][_opponent(state, player)])
        for card in seen:
            left.remove(card)
        return left

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        """Every player is told of every step (and of the end)."""
        return tuple(state["players"])

    def standings(self, state: State) -> list[str]:
        """One line per player for organizers, from the public view only."""
        public = self.view(state, None)
        lines = []
        for p in public["players"]:
            won = sum(1 for h in public["history"] if h["winner"] == p)
            lost = sum(1 for h in public["history"] if h["loser"] == p)
            line = f"{p}: {plural(public['stacks'][p], 'chip')}"
            hand = public["hand_open"]
            if hand is not None:
                line += f", {hand['bets'][p]} bet in hand {hand['hand']}"
                if hand["to_act"] == p:
                    line += " (to act)"
            line += f"; hands won {won}, lost {lost}"
            if public["carried"]:
                line += f"; {plural(public['carried'], 'chip')} carried over from a tie"
            lines.append(line)
        return lines

    def result(self, state: State) -> Result | None:
        result = stored_result(state)
        if result is not None:
            result.ranking = ranking(state, result.outcome, state["stacks"])
        return result

    # ----------------------------------------------------------------- for tests and bots

    def sample_moves(self, state: State, player: str, rnd: random.Random) -> list[Move]:
        """A few legal moves of the player to act: CHECK or CALL (with nothing to call
        both), FOLD, RAISE n and RAISE TO n with random legal amounts, ALL IN; now and
        then with the ``Step:`` line of the form. [] for anyone else and once over."""
        step = self.step(state)
        if step is None or player not in step.players:
            return []
        legal = betting.legal_actions(state["betting"], player)
        assert legal is not None
        actions: list[betting.Action] = [{"action": "call"}, {"action": "fold"}, {"action": "all-in"}]
        if legal["check"]:
            actions.append({"action": "check"})
        if legal["raise"] is not None:
            r = legal["raise"]
            actions.append({"action": "raise", "by": rnd.randint(r["min"], r["max"])})
            actions.append({"action": "raise", "to": rnd.randint(r["to_min"], r["to_max"])})
        turn = betting.turn_reference(step.title)
        return [{**a, "turn": turn} if rnd.random() < 0.5 else a for a in actions]

    def hidden_variants(self, state: State, player: str, rnd: random.Random) -> list[State]:
        """A few states that differ from ``state`` only in what ``player`` may not know
        yet: their own card of the open hand, each time a value of the cards of this
        deck they have not seen (ruling 3, the view's ``unseen``), and the order of the
        undealt cards, which nobody knows. A new own card swaps values with an undealt
        card holding it, so the deck keeps its 20 cards, each value twice. Nothing else
        is hidden from a player; once the match is over, nothing at all."""
        if player not in state["players"]:
            raise GameError(f"{player} is not playing in this match.")
        if state["result"] is not None:
            return []
        own = state["cards"][player]
        # the values of the view's "unseen": the own card and the undealt cards
        values = sorted({own, *state["deck"]["cards"]})
        variants = []
        for value in rnd.sample(values, min(3, len(values))):
            new = clone(state)
            cards = new["deck"]["cards"]
            if value != own:
                i = rnd.choice([k for k, card in enumerate(cards) if card == value])
                cards[i], new["cards"][player] = own, value
            rnd.shuffle(cards)
            if new != state:
                variants.append(new)
        return variants


GAME = IndianPoker()
