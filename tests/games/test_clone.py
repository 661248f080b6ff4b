"""``referee.games.base.clone``: the deep copy every move, deadline and view makes."""

from __future__ import annotations

import math

from referee.games.base import clone


def _ids(data: object, found: list[int]) -> list[int]:
    """The ids of every dict and list inside ``data``."""
    if isinstance(data, dict):
        found.append(id(data))
        for value in data.values():
            _ids(value, found)
    elif isinstance(data, list):
        found.append(id(data))
        for value in data:
            _ids(value, found)
    return found


def test_a_copy_is_equal_and_shares_no_dict_or_list() -> None:
    state = {
        "players": ["a", "b"],
        "rounds": [{"bets": {"a": 3, "b": None}, "note": "Ünïcode ✓"}],
        "ok": True,
        "ratio": 0.1,
        "big": 2**63 - 1,
        "negative": -(2**63),
        "zero": -0.0,
        "empty": {},
    }
    copy = clone(state)
    assert copy == state
    assert math.copysign(1.0, copy["zero"]) == -1.0
    assert not set(_ids(copy, [])) & set(_ids(state, []))
    copy["rounds"][0]["bets"]["a"] = 4
    assert state["rounds"][0]["bets"]["a"] == 3


def test_a_tuple_comes_back_a_list_as_from_the_store() -> None:
    assert clone({"pair": ("a", 1)}) == {"pair": ["a", 1]}


def test_what_json_cannot_hold_is_copied_exactly() -> None:
    # a key that is not a string, an integer beyond 64 bits: as they were, types and all
    data = {1: ["x"], "huge": 2**70, "nested": {(1, 2): {"k": [1]}}}
    copy = clone(data)
    assert copy == data and 1 in copy and (1, 2) in copy["nested"]
    assert copy[1] is not data[1] and copy["nested"][(1, 2)]["k"] is not data["nested"][(1, 2)]["k"]
