"""Shared set-ups for the MatchJack tests (no tests here): a match with the seats, chips, garnets, bots'
rules and cards a test chooses (the test knows what the players may not), and short
ways to play a hand through."""

from __future__ import annotations

from typing import Any

from referee.games.base import Applied, Move, State, clone
from referee.games.matchjack import engine
from referee.games.matchjack.engine import GAME as G

PLAYERS = ["ann", "bob", "cat", "dan", "eve", "fay"]
NAMES = {
    "ann": "Ann Lee",
    "bob": "Bob Ray",
    "cat": "Cat Núñez",
    "dan": "Dan Ek",
    "eve": "Eve Holt",
    "fay": "Fay Sund",
}
NEVER = "never-moves"


def fresh(
    seed: int = 1,
    main: tuple[str, ...] = ("ann", "bob", "cat"),
    lost: tuple[str, ...] = ("dan", "eve", "fay"),
    *,
    chips: dict[str, int] | None = None,
    garnets: dict[str, int] | None = None,
    rules: dict[str, str] | None = None,
    hand: int = 1,
) -> State:
    """A match whose hand ``hand`` is dealt with these seats (in seat order 1, 2, 3 ...),
    chips before the antes (20 each unless given) and bots' rules (all ``never-moves``
    unless given: they only turn a new pile card)."""
    s = G.initial_state(seed, PLAYERS, {"names": NAMES, "holdings": {"garnets": garnets or {}}})
    s["transfers"] = []
    s["chips"] = {p: 20 for p in PLAYERS} | (chips or {})
    s["chips_after"] = [dict(s["chips"])]
    for name, seated in (("Main", main), ("Lost", lost)):
        for i, p in enumerate(seated):
            s["sets"][p], s["seats"][p] = name, i + 1
    s["rules"] = {"Alpha": NEVER, "Beta": NEVER, "Gamma": NEVER, "Delta": NEVER} | (rules or {})
    engine._start_hand(s, hand)
    return s


def deal(s: State, name: str, cards: dict[str, str], pile: str | None = None) -> State:
    """Give seats (players or bots) their cards: ``"R5 B6"`` is R5 face up, B6 face down
    (a third card and more face up); ``pile`` the undealt cards, top first."""
    s = clone(s)
    t = s["tables"][name]
    for who, text in cards.items():
        t["hands"][who] = [[card, i != 1] for i, card in enumerate(text.split())]
    if pile is not None:
        t["pile"] = pile.split()
    return s


def ok(s: State, player: str, move: Move) -> State:
    applied = G.apply_move(s, player, move)
    assert applied.accepted and applied.changed, (player, move, applied.reason)
    return applied.state


def refused(s: State, player: str, move: Move) -> Applied:
    applied = G.apply_move(s, player, move)
    assert not applied.accepted and not applied.changed and applied.state is s, (player, move)
    return applied


def stay(s: State, choices: dict[str, str]) -> State:
    """Everyone named makes their stay choice; then the stay step's deadline passes (the
    others fold)."""
    for p, choice in choices.items():
        s = ok(s, p, {"stay": choice})
    return G.apply_timeout(s, f"h{s['hand']}-stay")


def table_step(s: State, name: str):
    key = f"h{s['hand']}-{engine.KEYS[name]}-"
    found = [step for step in G.steps(s) if step.key.startswith(key)]
    assert len(found) == 1, G.steps(s)
    return found[0]


def to_act(s: State, name: str) -> str:
    step = table_step(s, name)
    assert len(step.players) == 1, step
    return step.players[0]


def bet(s: State, player: str, kind: str, **amount: int) -> State:
    return ok(s, player, {"bet": kind, **amount})


def act(s: State, player: str, kind: str, **extra: Any) -> State:
    return ok(s, player, {"action": kind, **extra})


def checks_round(s: State, name: str) -> State:
    """Everyone to act at the table checks until its betting round ends."""
    t = s["tables"][name]
    while t["status"] == "bet":
        s = bet(s, to_act(s, name), "check")
        t = s["tables"][name]
    return s


def news(s: State, name: str) -> State:
    """Every human to act at the table takes NEW until its action phase ends."""
    while s["tables"][name]["status"] == "action":
        s = act(s, to_act(s, name), "new")
    return s


def play_out(s: State, name: str) -> State:
    """The table plays to the showdown: checks, NEW, checks."""
    while s["tables"][name]["status"] in ("bet", "action") and s["phase"] == "play":
        s = checks_round(s, name) if s["tables"][name]["status"] == "bet" else news(s, name)
    return s


def net(s: State, account: str, currency: str = "stack") -> int:
    return sum(
        t["amount"] * ((t["to"] == account) - (t["from"] == account))
        for t in s["transfers"]
        if t.get("currency", "chips") == currency
    )


def timeout_all(s: State, hands: int) -> State:
    """Let every deadline pass for ``hands`` hand ends (breaks included), stopping at the
    end of the match."""
    done = len(s["history"])
    while len(s["history"]) < done + hands and s["phase"] != "over":
        step = next(step for step in G.steps(s) if not step.waiting)
        s = G.apply_timeout(s, step.key)
    return s
