"""A golden transcript of one seeded Rewind Hold'em match (``rewind_holdem_golden.txt``).

The fixture is its own input: its ``>`` lines are the mails the players sent (their
lines joined by `` / ``) and the deadlines that closed a turn; every other line is what
the referee made of them: the deals, each action with the chips it moved, the
showdowns, folds, penalties, Rewind Cards and the result. The test replays the inputs
through ``parse`` and ``apply_move`` / ``apply_timeout`` and must write the fixture
again, byte for byte. After a deliberate change of the rules, rewrite it with
``REWIND_HOLDEM_GOLDEN=write pytest tests/games/test_rewind_holdem_golden.py`` and
read the difference.

This match (seed 126, bob the DMO, 29 rounds) holds rewinds paid and unpaid, folds
after a rewind (one by the rewinder, who stores the same pair again), fold penalties
(one capped at what the folder held), a tie, timeouts of both kinds, fresh decks (a
round draws 4 cards, so each deck lasts exactly 10 rounds) and an all-in ante settled
without a turn.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from referee.games.base import State
from tests.games.test_rewind_holdem import A, B, G

FIXTURE = Path(__file__).with_name("rewind_holdem_golden.txt")
SEED, DMO = 126, B


def _pair(cards: list[int]) -> str:
    return f"{cards[0]} {cards[1]}"


def _deal(r: dict[str, Any]) -> str:
    """The deal of a round, from the table in play or from the record of a finished round."""
    rnd = r.get("betting", r)
    fresh = "".join(f"; fresh deck {f['deck'] + 1} begun after card {f['after']}" for f in r["fresh_decks"])
    carried = f", {rnd['carried']} carried" if rnd["carried"] else ""
    pot = rnd["carried"] + rnd["antes"][A] + rnd["antes"][B]
    return (
        f"round {r['round']}: deal {A} {r['hidden'][A]}, {B} {r['hidden'][B]}, open {_pair(r['dealt'])}{fresh}; "
        f"antes {rnd['antes'][A]} + {rnd['antes'][B]}{carried}; pot {pot}; {r['first']} starts"
    )


def _action(a: dict[str, Any]) -> str:
    what = "folds" if a["action"] == "fold" else f"puts in {a['put']}, total {a['total']}"
    flags = "".join([" (timeout)" if a["timeout"] else "", " (all in)" if a["all_in"] else ""])
    back = f"; {a['returned']} returned" if a["returned"] else ""
    return f"  {a['player']}{' REWIND +' if a['rewind'] else ''} {a['command']}{flags}: {what}{back}"


def _record(r: dict[str, Any]) -> list[str]:
    lines = []
    if r["rewind"] is not None:
        w = r["rewind"]
        lines.append(f"  rewind by {w['by']}: open {_pair(w['replaced'])} -> {_pair(w['cards'])}, pot then {w['pot']}")
    hands = f"{A} {r['hands'][A]['text']}, {B} {r['hands'][B]['text']}"
    if r["end"] == "fold":
        lines.append(f"  {r['folder']} folds ({hands}): {r['winner']} takes {r['pot']}")
    elif r["tie"]:
        lines.append(
            f"  showdown{' (all-in ante)' if r['end'] == 'all-in' else ''}: {hands}: tie, {r['won'][A]} each"
            f", {r['carry_out']} carried"
        )
    else:
        lines.append(
            f"  showdown{' (all-in ante)' if r['end'] == 'all-in' else ''}: {hands}: {r['winner']} takes {r['pot']}"
        )
    for p in r["payments"]:
        lines.append(f"  {p['kind']}: {p['from']} owes {p['to']} {p['owed']}, pays {p['paid']}")
    if r["stored"] is not None:
        lines.append(f"  rewind cards: {r['stored']['owner']} {_pair(r['stored']['cards'])}")
    lines.append(f"  after round {r['round']}: {A} {r['chips'][A]}, {B} {r['chips'][B]}")
    return lines


def _new_lines(before: State | None, after: State) -> list[str]:
    """What the last event did: the rest of a round's actions, the rounds it settled,
    the deal of the round now in play, or the result."""
    lines: list[str] = []
    done = 0 if before is None else len(before["history"])
    in_play = None if before is None or before["table"] is None else before["table"]["round"]
    seen = 0 if before is None or before["table"] is None else len(before["table"]["actions"])
    for r in after["history"][done:]:
        if r["round"] != in_play:  # a round dealt and settled by this event: an all-in ante
            lines.append(_deal(r))
        lines += [_action(a) for a in r["actions"][seen:]]
        lines += _record(r)
        seen = 0
    if after["table"] is not None:
        if after["table"]["round"] != in_play:
            lines.append(_deal(after["table"]))
        lines += [_action(a) for a in after["table"]["actions"][seen:]]
    result = G.result(after)
    if result is not None:
        lines.append(f"result: {result.reason} {result.outcome}")
    return lines


def transcript(inputs: list[str]) -> str:
    state = G.initial_state(SEED, [A, B], {"dmo": DMO})
    lines = [f"# Rewind Hold'em, seed {SEED}, players {A} {B}, dmo {DMO}", *_new_lines(None, state)]
    for line in inputs:
        lines.append(line)
        body = line[2:]
        if body.startswith("timeout "):
            assert G.step(state) is not None and G.step(state).players == (body.split()[1],)  # type: ignore[union-attr]
            after = G.apply_timeout(state)
        else:
            player, _, mail = body.partition(": ")
            after = state
            for move in G.parse(state, player, mail.replace(" / ", "\n")).moves:
                applied = G.apply_move(after, player, move)
                assert applied.accepted, applied.reason
                after = applied.state
        lines += _new_lines(state, after)
        state = after
    assert G.result(state) is not None
    return "\n".join(lines) + "\n"


def inputs_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("> ")]


def test_the_golden_match_replays_to_its_transcript() -> None:
    expected = FIXTURE.read_text()
    got = transcript(inputs_of(expected))
    if os.environ.get("REWIND_HOLDEM_GOLDEN") == "write":
        FIXTURE.write_text(got)
    assert got == expected
