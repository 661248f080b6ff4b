"""The nomination of the DMO, the season's step after a main match (RULINGS, "Seasons";
referee.games.nomination): NOMINATE by name or id, a nominee's CoL, the lot at the
deadline, and the Step line of the form."""

from __future__ import annotations

import pytest

from referee.games.base import GameError, NoMoves, ParseError
from referee.games.nomination import GAME

NAMES = {"ec": "Ann Lee", "b": "Bob Ray", "c": "Chen Wei", "d": "Dana Ruiz", "w": "Winnie"}


def start(cols: dict[str, int] | None = None, col: bool = True) -> dict:
    options = {
        "names": {k: v for k, v in NAMES.items() if k != "w"},
        "holdings": {"cols": cols or {}},
        "winner": "w",
        "winner_name": "Winnie",
        "main": "MatchJack match mj1",
        "col": col,
    }
    return GAME.initial_state(5, ["ec", "b", "c", "d"], options)


def test_the_ec_nominates_by_name_first_name_or_id_and_it_is_final():
    state = start()
    assert GAME.step(state).players == ("ec",)
    for written in ("Chen Wei", "chen", "c", "CHEN  WEI"):
        (move,) = GAME.parse(state, "ec", f"NOMINATE {written}").moves
        assert move == {"nominate": "c"}
    applied = GAME.apply_move(state, "ec", {"nominate": "c"})
    assert applied.accepted and GAME.step(applied.state) is None
    result = GAME.result(applied.state)
    assert result.scores == {"ec": "ec", "dmo": "c", "by": "ec", "winner": "w"}
    assert result.outcome == {"ec": "EC", "b": "spared", "c": "DMO", "d": "spared"}
    assert set(GAME.audience(applied.state)) == {"ec", "c"}


def test_the_winner_and_the_ec_cannot_be_nominated():
    state = start()
    with pytest.raises(ParseError, match="No player you may nominate"):
        GAME.parse(state, "ec", "NOMINATE Winnie")
    assert not GAME.apply_move(state, "ec", {"nominate": "ec"}).accepted
    assert not GAME.apply_move(state, "b", {"nominate": "c"}).accepted  # only the EC nominates


def test_a_mail_without_a_command_holds_no_moves_and_two_commands_are_refused():
    state = start()
    with pytest.raises(NoMoves):
        GAME.parse(state, "ec", "Hello, I will think about it")
    with pytest.raises(ParseError, match="one command"):
        GAME.parse(state, "ec", "NOMINATE Bob\nNOMINATE Chen")


def test_a_nominee_with_a_col_may_void_the_nomination_and_the_ec_nominates_again():
    state = start(cols={"b": 1})
    state = GAME.apply_move(state, "ec", {"nominate": "b"}).state
    step = GAME.step(state)
    assert step.kind == "col" and step.players == ("b",)
    assert GAME.form(state, "b") == "USE COL\nStep: Certificate of life\n"
    (move,) = GAME.parse(state, "b", GAME.form(state, "b")).moves
    assert move == {"col": True, "step": "certificate of life"}
    applied = GAME.apply_move(state, "b", move)
    assert applied.accepted
    state = applied.state
    assert state["transfers"] == [
        {"from": "b", "to": "SEASON", "amount": 1, "reason": "CoL used", "step": "col-1", "currency": "cols"}
    ]
    assert GAME.step(state).key == "nominate-2" and GAME.open_to(state) == ["c", "d"]
    # an answer to the first nomination's mail no longer counts
    stale = GAME.apply_move(state, "ec", {"nominate": "c", "step": "nomination of the dmo"})
    assert not stale.accepted and "earlier step" in stale.reason
    state = GAME.apply_move(state, "ec", {"nominate": "c", "step": "nomination of the dmo round 2"}).state
    assert GAME.result(state).scores["dmo"] == "c"
    assert [h["col"] for h in GAME.view(state, None)["history"]] == ["used", None]


def test_no_col_or_silence_lets_the_nomination_stand():
    state = GAME.apply_move(start(cols={"b": 2}), "ec", {"nominate": "b"}).state
    assert GAME.result(GAME.apply_move(state, "b", {"col": False}).state).scores["dmo"] == "b"
    timed = GAME.apply_timeout(state)
    assert GAME.result(timed).scores == {"ec": "ec", "dmo": "b", "by": "ec", "winner": "w"}
    assert timed["transfers"] == []


def test_cols_off_or_no_col_held_means_no_col_step():
    assert GAME.step(GAME.apply_move(start(cols={"b": 1}, col=False), "ec", {"nominate": "b"}).state) is None
    assert GAME.step(GAME.apply_move(start(cols={"c": 1}), "ec", {"nominate": "b"}).state) is None


def test_use_col_is_refused_when_it_would_leave_nobody_to_nominate():
    state = GAME.initial_state(1, ["ec", "b", "c"], {"holdings": {"cols": {"b": 1, "c": 1}}})
    state = GAME.apply_move(state, "ec", {"nominate": "b"}).state
    state = GAME.apply_move(state, "b", {"col": True}).state  # c is left
    state = GAME.apply_move(state, "ec", {"nominate": "c"}).state
    assert GAME.step(state) is None  # c holds a CoL, but using it would leave nobody: no col step
    assert GAME.result(state).scores["dmo"] == "c"


def test_the_deadline_draws_the_dmo_by_lot_from_the_seed_and_it_is_final():
    picks = set()
    for seed in range(12):
        state = GAME.initial_state(seed, ["ec", "b", "c", "d"], {"holdings": {"cols": {"b": 1, "c": 1, "d": 1}}})
        timed = GAME.apply_timeout(state)
        again = GAME.apply_timeout(state)
        assert GAME.result(timed).scores == GAME.result(again).scores
        assert GAME.result(timed).scores["by"] == "lot" and GAME.step(timed) is None  # no CoL answers a lot
        picks.add(GAME.result(timed).scores["dmo"])
    assert picks == {"b", "c", "d"}


def test_a_nomination_cannot_be_forfeited_by_anyone_at_any_step():
    """The season handles an EC or a nominee who leaves (RULINGS, "Seasons"): no forfeit."""
    state = start(cols={"b": 1})
    col_step = GAME.apply_move(state, "ec", {"nominate": "b"}).state
    over = GAME.apply_move(col_step, "b", {"col": False}).state
    for s in (state, col_step, over):
        for p in ("ec", "b", "c", "w", "stranger"):
            with pytest.raises(GameError, match="A nomination cannot be forfeited: "):
                GAME.forfeit(s, p)
