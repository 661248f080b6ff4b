"""A golden transcript of one seeded MatchJack match (``matchjack_golden.txt``).

A scripted set of players (a seeded policy, ``SCRIPT``) plays a whole match through the engine
as the service would: every mail is read with ``parse`` and its moves applied with
``apply_move`` on the state that knows the live garnets (``with_holdings``, the garnets of a
season ledger simulated here: the starting garnets plus the match's garnet transfers), all
or nothing; a deadline closes one of the open steps (``apply_timeout(state, key)`` after
``with_balances`` and ``with_holdings``), as ``MatchBook.close_step`` does.

The transcript has one line per event and per thing it did:

* ``> ann: STAY / GUESS Alpha odd-hitter``: a mail (its lines joined by `` / ``);
  ``> deadline h3-main-bet1-2 (missing: bob)``: a step's deadline;
  ``> ledger: fay spends 3 garnets elsewhere in the season``: the season's garnets move
  outside the match (once: a FOLD STAYSET chosen with 5 garnets then counts as FOLD);
* ``  refused: ...`` / ``  unreadable: ...``: a mail that changed nothing;
* ``  [to ann] ...``: what only that player is told (the answer to a guess, a FOLD STAYSET
  that counted as FOLD);
* every other line is read from the PUBLIC view (``view(state, None)``): the stay results
  once the stay step closes, each bet, each action (no cards), the showdowns, the hands'
  ends, the set moves, who left the match, the rewards, the open steps, the end.

A table's last event may also finish the hand (and deal the next): its table-level lines
are read from the public view of the state with the end of the hand held back (the engine's
``_after_tables`` made a no-op for that one call), so the table's last actions and its
showdown are in the transcript before the hand's end.

``MATCHJACK_GOLDEN=write pytest tests/games/test_matchjack_golden.py`` rewrites the file
after a deliberate change (read the difference). The coverage test checks that the match
goes through every step kind, every move kind and the cases the transcript is there to pin
down; the replay test rebuilds the final state from the seed and the logged events with
``referee.match.book.replay`` (stand-in rows, as ``test_conformance.py`` does).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from referee.games import GAMES
from referee.games.base import GameError, ParseError, State, open_steps, time_out
from referee.games.matchjack import engine
from referee.games.matchjack.engine import GAME as G
from referee.match.book import replay
from tests.games.test_matchjack_helpers import NAMES, PLAYERS

GOLDEN = Path(__file__).with_name("matchjack_golden.txt")
SEED = 226  # 38 before the pots were amended (RULINGS, "Pots"): with dead antes its match ended after hand 11
SCRIPT = "matchjack golden 1"  # the scripted players' own random stream
# the garnets each holds in the season ledger when the match starts
GARNETS = {"ann": 12, "bob": 5, "cat": 0, "dan": 3, "eve": 0, "fay": 7}
SEASON_CHIPS = dict.fromkeys(PLAYERS, 200)  # MatchJack plays with its own chips: checked, never used
OPTIONS = {"names": dict(NAMES), "holdings": {"garnets": dict(GARNETS)}}
# how the scripted players play: the reckless ones go all in now and then
RECKLESS = {"cat": 0.35, "eve": 0.2}
STAYSET_SHORT = 4  # what the player who spends garnets elsewhere is left with: too few for FOLD STAYSET


def as_json(data: Any) -> Any:
    return json.loads(json.dumps(data))


# --------------------------------------------------------------------------- the simulated season


def holdings(state: State, outside: dict[str, int]) -> dict[str, dict[str, int]]:
    """The live garnets as the season ledger holds them: the start, plus what moved outside
    this match (``outside``), plus the match's garnet transfers (what ``MatchBook.holdings``
    reads)."""
    net = {p: GARNETS[p] + outside.get(p, 0) for p in PLAYERS}
    for t in state["transfers"]:
        if t.get("currency") == "garnets":
            if t["from"] in net:
                net[t["from"]] -= t["amount"]
            if t["to"] in net:
                net[t["to"]] += t["amount"]
    return {"garnets": net}


@contextlib.contextmanager
def hand_end_held_back() -> Iterator[None]:
    """The engine with the end of a hand held back (both tables done, nothing dealt yet)."""
    real = engine._after_tables
    engine._after_tables = lambda s: None
    try:
        yield
    finally:
        engine._after_tables = real


# --------------------------------------------------------------------------- the scripted players


def alive(state: State) -> list[str]:
    """The players still in the match, in seat order of the season file."""
    out = {e["player"] for e in G.view(state, None)["eliminated"]}
    return [p for p in PLAYERS if p not in out]


def may_guess(state: State, player: str) -> bool:
    return G.view(state, player)["guess"]["allowed"]


def _bet_text(rnd: random.Random, state: State, player: str) -> str | None:
    """A betting command (None: the player lets the deadline pass)."""
    view = G.view(state, player)
    legal = view["legal"]
    if rnd.random() < 0.07:
        return None
    roll = rnd.random()
    reckless = RECKLESS.get(player, 0.04)
    if roll < reckless:
        return "ALL IN"
    roll = rnd.random()
    if roll < 0.08:
        return "FOLD"
    if roll < 0.32 and legal["bet"] is not None:
        b = legal["bet"]
        return f"BET {rnd.randint(b['min'], min(b['max'], b['min'] + 3))}"
    if roll < 0.45 and legal["raise"] is not None:
        r = legal["raise"]
        if rnd.random() < 0.5:
            return f"RAISE {rnd.randint(r['min'], min(r['max'], 2))}"
        return f"RAISE TO {rnd.randint(r['to_min'], min(r['to_max'], r['to_min'] + 2))}"
    return "CHECK" if legal["check"] else "CALL"


def _action_text(rnd: random.Random, state: State, player: str) -> str | None:
    if rnd.random() < 0.06:
        return None
    size = len(G.view(state, player)["your_cards"])
    if rnd.random() < 0.03:
        return "DRAW a card"  # unreadable: DRAW needs a position
    return rnd.choice(["HIT", "SWAP UP", "SWAP DOWN", f"DRAW {rnd.randint(1, size)}", "NEW", "NEW CARD", "HIT me"])


def _stay_text(rnd: random.Random, state: State, player: str) -> str | None:
    roll = rnd.random()
    if roll < 0.1:
        return None
    if roll < 0.2:
        return "FOLD"
    if roll < 0.3:
        return "FOLD STAYSET"  # refused when the player holds fewer than 5 garnets
    return "STAY"


def _guess_line(rnd: random.Random, state: State, player: str) -> str:
    """Now and then a GUESS line: right about half the time (the script knows the rules)."""
    if not may_guess(state, player) or rnd.random() >= 0.12:
        return ""
    bot = rnd.choice(engine.ALL_BOTS)
    rule = state["rules"][bot] if rnd.random() < 0.5 else rnd.choice(engine.RULE_IDS)
    return f"\nGUESS {bot} {rule}"


def _with_step(rnd: random.Random, state: State, player: str, text: str) -> str:
    """The form's Step line now and then; rarely the Step line of an earlier mail (refused)."""
    step = G.view(state, player)["step"]
    roll = rnd.random()
    if step is not None and roll < 0.3:
        text += f"\nStep: {step['title']}"
    elif step is not None and roll < 0.33 and state["hand"] > 1:
        text += f"\nStep: Hand {state['hand'] - 1}, stay or fold"
    return text


def next_event(
    rnd: random.Random, state: State, sent: set[tuple[str, str]], outside: dict[str, int]
) -> tuple[str, str, str]:
    """The next event of the script: ("mail", player, text), ("deadline", "", step key), or
    ("ledger", player, "") when a player who chose FOLD STAYSET spends garnets in the season
    before the stay step closes (once in the match: then it counts as FOLD). ``sent``: the
    (player, step key) pairs that already had their mail in a simultaneous step."""
    timed = [s for s in G.steps(state) if not s.waiting]
    step = rnd.choice(timed)
    if step.kind == "stay":
        for p in [p for p in step.players if (p, step.key) not in sent]:
            sent.add((p, step.key))
            text = _stay_text(rnd, state, p)
            if text is None:  # no choice from p: the deadline folds them (a guess alone now and then)
                line = _guess_line(rnd, state, p)
                if line:
                    return "mail", p, line.strip()
                continue
            if text == "STAY" and rnd.random() < 0.08:  # a revision: first a fold, STAY follows later
                sent.discard((p, step.key))
                text = "FOLD"
            return "mail", p, _with_step(rnd, state, p, text) + _guess_line(rnd, state, p)
        chosen = [p for p, c in state["stay"].items() if c == "stayset"]
        if chosen and not outside and state["hand"] >= 3:
            return "ledger", chosen[0], ""
        return "deadline", "", step.key
    if step.kind == "break":
        (p,) = rnd.sample(alive(state), 1)
        if may_guess(state, p) and rnd.random() < 0.5:
            bot = rnd.choice(engine.ALL_BOTS)
            rule = state["rules"][bot] if rnd.random() < 0.5 else rnd.choice(engine.RULE_IDS)
            return "mail", p, f"GUESS {bot} {rule}"
        return "deadline", "", step.key
    (p,) = step.players
    text = _bet_text(rnd, state, p) if step.kind == "bet" else _action_text(rnd, state, p)
    if text is None:
        return "deadline", "", step.key
    return "mail", p, _with_step(rnd, state, p, text) + _guess_line(rnd, state, p)


# --------------------------------------------------------------------------- the transcript


def _chips_line(stacks: dict[str, int]) -> str:
    return ", ".join(f"{p} {stacks[p]}" for p in PLAYERS)


def _deal_lines(view: dict[str, Any]) -> list[str]:
    h = view["hand"]
    parts = []
    for name in engine.SETS:
        t = view["tables"][name]
        seats = " ".join(f"{s['seat']}:{s['player']}" for s in t["seats"]) or "-"
        parts.append(f"{name} {seats} + {' '.join(t['bots'])}")
    return [f"hand {h} (ante {view['ante']}): {'; '.join(parts)}; chips {_chips_line(view['stacks'])}"]


def _bet_line(name: str, number: int, a: dict[str, Any]) -> str:
    flags = "".join([" (timeout)" if a["timeout"] else "", " (all in)" if a["all_in"] else ""])
    return f"  {name} round {number}: {a['player']} {a['command']}{flags}: puts in {a['put']}, bet {a['total']}"


def _action_line(name: str, e: dict[str, Any]) -> str:
    who = e["who"] if e["bot"] else f"seat {e['seat']} {e['who']}"
    if e["action"] == "fold":
        return f"  {name} action: {who} missed the turn: folds (timeout)"
    what = e["action"].upper()
    if e["action"] == "swap":
        what += f" {e['card'].upper()}"
    if e["action"] == "draw":
        what += f" {e['position']}"
    flags = "".join([" (nothing to take)" if e["noop"] else "", " (pile refilled)" if e["refill"] else ""])
    return f"  {name} action: {who} {what}{flags}"


def _showdown_lines(name: str, sd: dict[str, Any]) -> list[str]:
    lines = [f"  {name} showdown: " + "; ".join(f"{x} {sd['described'][x]}" for x in sd["described"])]
    for i, pot in enumerate(sd["pots"]):
        among, winners = " ".join(pot["eligible"]), " ".join(pot["winners"])
        lines.append(f"  {name} pot {i + 1}: {pot['amount']} among {among}, won by {winners}")
    back = "".join(f", {p} takes back {n}, a bet nobody called" for p, n in sd["returned"].items())
    won = ", ".join(f"{p} +{n}" for p, n in sd["won"].items()) or "no human"
    credited = sd["credited_seat"]
    lines.append(
        f"  {name} pays: {won}; discarded {sd['discarded']}{back}; "
        f"credited seat {credited if credited is not None else '-'}"
    )
    return lines


def _round_lines(name: str, old: dict[str, Any] | None, rnd: dict[str, Any]) -> list[str]:
    lines = []
    if old is None:
        lines.append(f"  {name} round {rnd['number']} opens: {' '.join(rnd['order']) or 'nobody'}")
    seen = len(old["actions"]) if old else 0
    lines += [_bet_line(name, rnd["number"], x) for x in rnd["actions"][seen:]]
    if rnd["end"] is not None and (old is None or old["end"] is None):
        lines.append(f"  {name} round {rnd['number']} ends: {rnd['end']}")
    return lines


def _table_lines(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What happened at each table between two public views of the same hand, in order:
    the stay results, betting round 1, the action phase, betting round 2, the showdown."""
    lines: list[str] = []
    said = {"stayed": "stays", "folded": "folds", "stayset": "folds, keeps the set (5 garnets)"}
    for name in engine.SETS:
        b, a = before["tables"][name], after["tables"][name]
        if b["stay"] is None and a["stay"] is not None:
            choices = ", ".join(
                f"{p} {said[c['choice']]}{' (timeout)' if c['timeout'] else ''}" for p, c in a["stay"].items()
            )
            lines.append(f"  {name} stay: {choices or 'nobody dealt'}; starter seat {a['starter'] or '-'}")
        for i in (0, 1):
            if i < len(a["rounds"]):
                lines += _round_lines(name, b["rounds"][i] if i < len(b["rounds"]) else None, a["rounds"][i])
            if i == 0 and a["turned"] is not None:
                if b["turned"] is None:
                    refill = " (pile refilled)" if a["turned"]["refill"] else ""
                    lines.append(f"  {name} action phase: a pile card turned up{refill}")
                lines += [_action_line(name, e) for e in a["actions"][len(b["actions"]) :]]
        if b["showdown"] is None and a["showdown"] is not None:
            lines += _showdown_lines(name, a["showdown"])
    return lines


def _private_lines(before: State, after: State, player: str | None) -> list[str]:
    """What only one player is told (read from their own view): the answer to their guess,
    their FOLD STAYSET that counted as FOLD when the stay step closed."""
    lines = []
    if player is not None:
        old = G.view(before, player)["guesses"][player]
        for g in G.view(after, player)["guesses"][player][len(old) :]:
            answer = "right" if g["right"] else "wrong"
            paid = ", paid 3 garnets and 6 chips" if g["paid"] else ", already paid for" if g["right"] else ""
            lines.append(f"  [to {player}] guess {g['bot']} {g['rule']} (hand {g['hand']}): {answer}{paid}")
    if before["phase"] == "stay" and (after["phase"] != "stay" or after["hand"] != before["hand"]):
        for p in alive(before):
            if G.view(after, p)["stayset_refused"]:
                lines.append(f"  [to {p}] your FOLD STAYSET counted as FOLD: too few garnets at the close")
    return lines


def _open_line(state: State) -> str:
    waiting = set(G.awaiting(state))
    shown = []
    for s in G.steps(state):
        if s.waiting:
            shown.append(f"{s.key} (waiting)")
        else:
            who = [p for p in s.players if p in waiting]
            shown.append(f"{s.key} ({', '.join(who) or '-'})")
    return "  open: " + ", ".join(shown)


def _effects(before: State, mid: State, after: State, player: str | None) -> list[str]:
    vb, vm, va = G.view(before, None), G.view(mid, None), G.view(after, None)
    lines: list[str] = []
    if vm["hand"] != vb["hand"]:  # a break's deadline dealt the next hand
        lines += [f"  {line}" for line in _deal_lines(vm)]
    else:
        lines += _table_lines(vb, vm)
    for r in vm["rewards"][len(vb["rewards"]) :]:
        lines.append(f"  reward: {r['player']} +{r['chips']} chips, a correct guess (hand {r['hand']})")
    for e in vm["eliminated"][len(vb["eliminated"]) :]:
        lines.append(f"  {e['player']} leaves the match at 0 chips (hand {e['hand']})")
    lines += _private_lines(before, mid, player)
    if len(va["history"]) > len(vm["history"]):
        for rec in va["history"][len(vm["history"]) :]:
            for name in engine.SETS:
                t = rec["tables"][name]
                won = ", ".join(f"{p} +{n}" for p, n in t["won"].items()) or "nobody"
                lines.append(f"  hand {rec['hand']} {name}: pot {t['pot']}: {won}; discarded {t['discarded']}")
            lines.append(f"  hand {rec['hand']} over: chips {_chips_line(vm['stacks'])}")
            moves = ", ".join(f"{m['player']} {m['from']} -> {m['to']} seat {m['seat']}" for m in rec["moves"])
            if moves:
                lines.append(f"  set moves: {moves}")
        if va["phase"] == "break":
            lines.append(f"  break after hand {va['hand']}")
        elif va["final"] is not None and vm["final"] is None:
            f = va["final"]
            lines.append(
                f"  the match is over after hand {f['hands']}: winner {f['winner']} ({f['how']['winner']}), "
                f"EC {f['ec']} ({f['how']['ec']})"
            )
        elif va["hand"] != vm["hand"]:
            lines += [f"  {line}" for line in _deal_lines(va)]
    if va["result"] is not None:
        res = va["result"]
        lines.append(f"  result: {res['reason']}")
        lines.append(f"  outcome: {', '.join(f'{p} {o}' for p, o in res['outcome'].items())}")
        lines.append(f"  ranking, best first: {', '.join(res['ranking'])}")
        lines.append(f"  awards: {res['awards']}")
        for sig in res["signals"]:
            lines.append(f"  signal: {sig}")
        lines.append(f"  rules: {', '.join(f'{b} {r}' for b, r in va['rules'].items())}")
        guesses = [
            f"{p} {g['bot']} {g['rule']} ({'right' if g['right'] else 'wrong'}, hand {g['hand']})"
            for p in PLAYERS
            for g in va["guesses"][p]
        ]
        lines.append(f"  guesses: {'; '.join(guesses) or 'none'}")
    else:
        lines.append(_open_line(after))
    return lines


def _mail(
    state: State, player: str, text: str, outside: dict[str, int]
) -> tuple[list[State], list[dict[str, Any]], str | None]:
    """A mail as the judge takes it: parsed, its moves applied on the state with the live
    garnets, all or nothing. Returns the state after each move, the logged moves and the
    refusal (then nothing changed)."""
    try:
        parsed = G.parse(state, player, text)
    except ParseError as error:
        return [], [], f"unreadable: {error}"
    held = as_json(holdings(state, outside))
    now = G.with_holdings(state, held)
    logged: list[dict[str, Any]] = []
    states: list[State] = []
    for move in parsed.moves:
        applied = G.apply_move(now, player, move)
        assert not (applied.changed and not applied.accepted), "MatchJack has no penalties"
        if not applied.accepted:
            return [], [], f"refused: {applied.reason}"
        now = applied.state
        states.append(now)
        logged.append(as_json({"move": move, "accepted": True, **({} if logged else {"holdings": held})}))
    return states, logged, None


def _deadline(state: State, key: str, outside: dict[str, int]) -> tuple[State, SimpleNamespace]:
    """A step's deadline as ``MatchBook.close_step`` takes it, and its event."""
    step = next(s for s in G.steps(state) if s.key == key)
    missing = [p for p in G.awaiting(state) if p in step.players]
    held = as_json(holdings(state, outside))
    payload = {"missing": missing, "title": step.title, "balances": dict(SEASON_CHIPS), "holdings": held}
    after = time_out(G, G.with_balances(G.with_holdings(state, held), SEASON_CHIPS), key)
    return after, SimpleNamespace(kind="timeout", player=None, payload=payload, step_key=key)


@functools.cache
def golden_match() -> tuple[list[str], list[SimpleNamespace], list[State]]:
    """The scripted match: its transcript lines, its event log (as MatchBook logs it) and
    every state (states[k + 1] after events[k])."""
    rnd = random.Random(SCRIPT)
    state = G.initial_state(SEED, PLAYERS, as_json(OPTIONS))
    view = G.view(state, None)
    lines = [
        f"# MatchJack, seed {SEED}, script {SCRIPT!r}",
        "# players: " + ", ".join(f"{p} ({NAMES[p]})" for p in PLAYERS),
        "# garnets at the start: " + ", ".join(f"{p} {GARNETS[p]}" for p in PLAYERS),
        "# '>' lines: the mails sent (lines joined by ' / ') and the deadlines; '[to x]': told to x only;",
        "# every other line is public",
        *_deal_lines(view),
        _open_line(state),
    ]
    events: list[SimpleNamespace] = []
    states = [state]
    sent: set[tuple[str, str]] = set()
    outside: dict[str, int] = {}  # garnets moved in the season outside this match
    for _ in range(5000):
        if G.result(state) is not None:
            break
        kind, player, what = next_event(rnd, state, sent, outside)
        if kind == "ledger":
            held = holdings(state, outside)["garnets"][player]
            outside[player] = STAYSET_SHORT - held
            lines.append(f"> ledger: {player} spends {held - STAYSET_SHORT} garnets elsewhere in the season")
            continue
        if kind == "deadline":
            step = next(s for s in G.steps(state) if s.key == what)
            missing = [p for p in G.awaiting(state) if p in step.players]
            lines.append(f"> deadline {what}" + (f" (missing: {', '.join(missing)})" if missing else ""))
            after, event = _deadline(state, what, outside)
            with hand_end_held_back():
                mid, _ = _deadline(state, what, outside)
            events.append(event)
        else:
            lines.append(f"> {player}: {what.replace(chr(10), ' / ')}")
            made, logged, refusal = _mail(state, player, what, outside)
            if refusal is not None:
                lines.append(f"  {refusal}")
                continue
            with hand_end_held_back():
                held_back, _, _ = _mail(state, player, what, outside)
            after, mid = made[-1], held_back[-1]
            events += [SimpleNamespace(kind="move", player=player, payload=x, step_key=None) for x in logged]
            states += made[:-1]
        lines += _effects(state, mid, after, player or None)
        state = after
        states.append(state)
    assert G.result(state) is not None, "the scripted match did not end"
    return lines, events, states


# --------------------------------------------------------------------------- the tests


def test_the_golden_match_matches_its_transcript() -> None:
    lines, _, _ = golden_match()
    got = "\n".join(lines) + "\n"
    if os.environ.get("MATCHJACK_GOLDEN") == "write":
        GOLDEN.write_text(got)
    assert got == GOLDEN.read_text()


def _moves(events: list[SimpleNamespace]) -> list[tuple[str, dict[str, Any]]]:
    return [(ev.player, ev.payload["move"]) for ev in events if ev.kind == "move"]


def test_the_golden_match_covers_every_step_and_move_kind() -> None:
    """The scripted match goes through every step kind, every move kind and the cases the
    transcript is there to pin down."""
    lines, events, states = golden_match()
    text = GOLDEN.read_text()
    # every step kind is opened (the waiting step too), and each timed kind also closes at its deadline
    opened = {s.kind for state in states for s in G.steps(state)}
    assert opened == set(G.step_kinds) | {"wait"}, opened
    timed_out = {
        next(s.kind for s in G.steps(states[k]) if s.key == ev.step_key)
        for k, ev in enumerate(events)
        if ev.kind == "timeout"
    }
    assert timed_out == {"stay", "bet", "action", "break"}, timed_out
    for pattern in (
        r"open: h\d+-stay",
        r"h\d+-main-bet1-\d",
        r"h\d+-lost-bet2-\d",
        r"h\d+-(main|lost)-act-\d",
        r"h\d+-(main|lost)-done \(waiting\)",
        r"open: break-5",
        r"open: break-10",
    ):
        assert re.search(pattern, text), pattern
    # every move kind is accepted at least once
    moves = _moves(events)
    stays = {m["stay"] for _, m in moves if "stay" in m}
    bets = {m["bet"] for _, m in moves if "bet" in m}
    actions = {(m["action"], m.get("card")) for _, m in moves if "action" in m}
    assert stays == {"stay", "fold", "stayset"}, stays
    assert bets == {"check", "call", "bet", "raise", "raise-to", "all-in", "fold"}, bets
    assert {a for a, _ in actions} == {"hit", "swap", "draw", "new"} and {("swap", "up"), ("swap", "down")} <= actions
    assert any("guess" in m for _, m in moves) and not any("nominate" in m for _, m in moves)
    assert any("step" in m for _, m in moves), "a form's Step line"
    for seen in (
        "folds, keeps the set (5 garnets)",  # FOLD STAYSET with enough garnets: paid
        "refused: FOLD STAYSET costs 5 garnets and you hold 0",  # ... with too few: refused at no cost
        "> ledger: ",  # ... chosen with enough, spent elsewhere before the close:
        "your FOLD STAYSET counted as FOLD",  # ... counts as FOLD, told to that player only
        "folds (timeout)",  # a stay choice missing at the deadline
        "CHECK (timeout)",  # a betting turn's deadline when checking is free
        "FOLD (timeout)",  # ... and when facing a bet
        "missed the turn: folds (timeout)",  # an action turn's deadline
        "(all in)",
        " pot 2: ",  # a side pot (at a human's all-in level)
        "a bet nobody called",  # the one thing that goes back (antes never do)
        "won by Alpha",  # a bot's win, discarded
        "ends: one-left",
        "ends: skipped",
        "ends: matched",
        "): right, paid 3 garnets and 6 chips",
        "): wrong",
        "reward: ",
        "refused: Your mail answers an earlier step",
        "unreadable: ",
        "leaves the match at 0 chips",
        "set moves: ",
        "break after hand 5",
        "break after hand 10",
        "the match is over after hand 15",
        "ranking, best first: ",
        "awards: {'cols': {",
    ):
        assert seen in text, seen
    for gone in ("NOMINATE", "nominated", "  DMO ", "signal: ", "open: nominate"):  # the season's step now
        assert gone not in text, gone
    # the match ends with its last hand: the line after the hand's end is the result
    i = next(k for k, line in enumerate(lines) if line.startswith("  the match is over after hand 15"))
    assert lines[i - 1].startswith(("  hand 15 over", "  set moves: ")) and lines[i + 1].startswith("  result: ")
    # the ranking: the winner first, the EC last, those who left the match at 0 below the
    # others (here all but the winner and cat), a later batch above an earlier one
    final = states[-1]
    result = G.result(final)
    assert result.ranking[0] == final["final"]["winner"] and result.ranking[-1] == final["final"]["ec"]
    batch = {e["player"]: e["batch"] for e in final["eliminated"] if e["player"] != result.ranking[0]}
    assert set(result.ranking[-len(batch) :]) == set(batch)
    batches = [batch[p] for p in result.ranking if p in batch]
    assert batches == sorted(batches, reverse=True) and len(set(batches)) < len(batches)
    # two players leave the match at the same moment (one batch)
    assert re.search(r"leaves the match at 0 chips \(hand (\d+)\)\n  \w+ leaves the match at 0 chips \(hand \1\)", text)
    assert states[-1]["hand"] == 15 and len(states[-1]["eliminated"]) >= 2
    assert lines == text.splitlines()


def test_the_logged_moves_and_deadlines_replay_the_match() -> None:
    """The seed, the options and the event log (as MatchBook logs them, with the holdings read
    before each mail and deadline) rebuild every state of the match (``book.replay``)."""
    _, events, states = golden_match()
    assert len(states) == len(events) + 1
    seats = [SimpleNamespace(player=SimpleNamespace(key=p)) for p in PLAYERS]
    row = SimpleNamespace(seed=SEED, options=as_json(OPTIONS), seats=seats)
    start = SimpleNamespace(kind="start", player=None, payload={"options": as_json(OPTIONS)}, step_key=None)
    assert replay(G, row, [start, *events]) == states[-1]
    for k in (0, 1, len(events) // 4, len(events) // 2, 3 * len(events) // 4, len(events) - 1):
        assert replay(G, row, [start, *events[:k]]) == states[k]
    assert as_json(states[-1]) == states[-1]
    # the events survive a JSON round trip (as stored), and the replay needs their holdings
    stored = [
        SimpleNamespace(kind=ev.kind, player=ev.player, payload=as_json(ev.payload), step_key=ev.step_key)
        for ev in events
    ]
    assert replay(G, row, [start, *stored]) == states[-1]
    assert GAMES["matchjack"] is G and open_steps(G, states[-1]) == ()
    # without the garnets read at each mail and deadline, the match goes another way
    bare = [
        SimpleNamespace(kind=ev.kind, player=ev.player, payload=without_holdings(ev.payload), step_key=ev.step_key)
        for ev in events
    ]
    with contextlib.suppress(GameError):
        assert replay(G, row, [start, *bare]) != states[-1]


def without_holdings(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != "holdings"}
