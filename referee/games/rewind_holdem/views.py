"""What a player of Rewind Hold'em (or the public, the archive) sees: the view every mail is
rendered from, and the organizers' standings built from the public view."""

from __future__ import annotations

from typing import Any

from referee.games import betting, cards
from referee.games.base import State, clone, opponent, plural, require_player
from referee.games.rewind_holdem.play import choices_text, dealt_cards
from referee.games.rewind_holdem.rules import (
    COPIES,
    NAME,
    VALUES,
    hand_of,
    hand_record,
    pair_text,
    rewind_problem,
    turn_title,
)


def view(state: State, player: str | None) -> dict[str, Any]:
    """What ``player`` may know (None: the public archive). During a round a player
    sees the opponent's hidden card, never their own; the public sees neither. Every
    round's hidden cards are revealed to all when it ends, by a showdown or a fold
    (ruling R6). The stored Rewind Cards are public (ruling R9)."""
    if player is not None:
        require_player(state, player)
    over = state["result"] is not None
    table = state["table"]
    viewer = None if over else player
    other = None if player is None else opponent(state, player)
    history = state["history"]
    every = [r["actions"] for r in history] + ([table["actions"]] if table is not None else [])
    last_action = next((actions[-1] for actions in reversed(every) if actions), None)
    view = {
        "game": NAME,
        "over": over,
        "players": list(state["players"]),
        "you": player,
        "opponent": other,
        "dmo": state["dmo"],
        "round": state["round"],
        "turn": None if table is None else table["turn"],
        "title": "Final result" if table is None else turn_title(table["round"], table["turn"]),
        "stacks": state["chips"],
        "pot": state["pot"],
        "deck": {
            "number": state["shoe"]["deck"] + 1,
            "left": cards.left(state["shoe"], values=VALUES, copies=COPIES),
            "unseen": unseen(state, player),
        },
        "table": None if table is None else table_view(state, player),
        "rewind_cards": state["rewind_cards"],
        "choices": None if viewer is None else choices(state, viewer),
        "waiting": None if viewer is None else waiting(state, viewer),
        "last_action": last_action,
        "last_rounds": [r for r in history if r["closed_by"] == state["last_event"]],
        "history": history,
        "final": state["result"],
    }
    if state.get("forfeit") is not None:  # only once a player forfeited (ruling 24)
        view["forfeit"] = state["forfeit"]
    return clone(view)  # built from references into the state: nothing shared leaves


def table_view(state: State, player: str | None) -> dict[str, Any]:
    table = state["table"]
    rnd = table["betting"]
    seen = [] if player is None else [opponent(state, player)]  # never the viewer's own card
    return {
        "round": table["round"],
        "turn": table["turn"],
        "first": table["first"],
        "to_act": rnd["to_act"],
        "open": table["open"],
        "dealt": table["dealt"],
        "rewound": table["rewind"],
        "cards": {p: table["hidden"][p] for p in seen},
        "hands": {p: hand_record(hand_of(table, p)) for p in seen},
        "antes": rnd["antes"],
        "carried": rnd["carried"],
        "bets": rnd["bets"],
        "pot": betting.pot(rnd),
        "actions": table["actions"],
        "fresh_decks": table["fresh_decks"],
    }


def choices(state: State, player: str) -> dict[str, Any] | None:
    rnd = state["table"]["betting"]
    legal = betting.legal_actions(rnd, player)
    if legal is None:
        return None
    why_not = rewind_problem(state, player)
    return {
        **legal,
        "text": choices_text(state, player),
        "rewind": None if why_not is not None else {"cards": state["rewind_cards"]["cards"], "pot": betting.pot(rnd)},
        "rewind_why_not": why_not if rnd["first"] == player and not rnd["actions"] else None,
        "timeout": betting.command_text(betting.default_action(rnd)),
    }


def waiting(state: State, player: str) -> dict[str, Any] | None:
    rnd = state["table"]["betting"]
    if rnd["to_act"] == player:
        return None
    return {"player": rnd["to_act"], "timeout": betting.command_text(betting.default_action(rnd))}


def standings(state: State) -> list[str]:
    """One line per player for organizers, from the public view only."""
    public = view(state, None)
    stored = public["rewind_cards"]
    lines = []
    for p in public["players"]:
        line = f"{p}: {plural(public['stacks'][p], 'chip')}"
        if public["table"] is not None:
            line += f", {public['table']['bets'][p]} in the pot of round {public['round']}"
        if stored is not None and stored["owner"] == p:
            line += f", holds the Rewind Cards {pair_text(stored['cards'])}"
        lines.append(line)
    return lines


def unseen(state: State, viewer: str | None) -> list[int]:
    """Ruling R5: how many cards of each value (index 0 for the 1s) of the deck in use
    ``viewer`` has not seen: the deck's 4 of each value, less every card dealt from it
    that ``viewer`` has seen (cards of finished rounds, open cards, the opponent's card).
    The viewer's own card of the round in play is among the unseen (the public sees
    neither hidden card of the round in play)."""
    dealt = dealt_cards(state)
    in_play = state["table"] is not None
    current = dealt[len(dealt) - state["shoe"]["drawn"] :] if state["shoe"]["drawn"] else []
    hidden_now = len(dealt) - 4 if in_play else len(dealt)  # where the round in play's cards begin
    seen = [0] * VALUES
    for i, (card, owner) in enumerate(current, start=len(dealt) - len(current)):
        if i >= hidden_now and owner is not None and (viewer is None or owner == viewer):
            continue  # a hidden card of the round in play the viewer cannot see
        seen[card - 1] += 1
    return [COPIES - n for n in seen]
