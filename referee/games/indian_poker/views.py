"""What a player of Indian Poker (or the public, the archive) sees: the view every mail is
rendered from, and the organizers' standings built from the public view."""

from __future__ import annotations

from typing import Any

from referee.games import betting
from referee.games.base import State, clone, opponent, plural, require_player
from referee.games.indian_poker.play import step
from referee.games.indian_poker.rules import DECK, NAME, ante_for, last_hand_of_ante


def view(state: State, player: str | None) -> dict[str, Any]:
    """What ``player`` may know (None: the public archive): the opponent's card of the
    open hand (never their own), the cards of every finished hand, stacks, pot, antes,
    the betting so far, whose turn, and their choices when it is theirs. The public
    view has no card of the open hand."""
    if player is not None:
        require_player(state, player)
    over = state["result"] is not None
    rnd = state["betting"]
    viewer = None if over else player
    hand_no = state["hand"]
    other = None if player is None else opponent(state, player)
    now = step(state)
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
            "game": NAME,
            "hand": hand_no,
            "title": f"Hand {hand_no}",
            "step_title": None if now is None else now.title,
            "over": over,
            "players": state["players"],
            "you": player,
            "opponent": other,
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
            "opponent_card": None if viewer is None else state["cards"][other],
            "unseen": None if viewer is None else unseen(state, viewer),
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


def unseen(state: State, player: str) -> list[int]:
    """The cards of the current deck ``player`` has not seen: the 20 cards less those of
    the finished hands of this shuffle and the opponent's card. Their own card is one of
    them; the view never says which (it does not depend on it)."""
    left = list(DECK)
    seen = [h["cards"][p] for h in state["history"] if h["deck"] == state["deck"]["number"] for p in h["cards"]]
    seen.append(state["cards"][opponent(state, player)])
    for card in seen:
        left.remove(card)
    return left


def standings(state: State) -> list[str]:
    """One line per player for organizers, from the public view only."""
    public = view(state, None)
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
