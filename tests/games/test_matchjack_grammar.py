"""MatchJack's mail grammar (``referee.games.matchjack.grammar``, ruling 18): every command,
its variants, the Step line, the guess line, and the mistakes that are errors."""

from __future__ import annotations

import time

import pytest

from referee.games.base import NoMoves, ParseError
from referee.games.matchjack.engine import GAME as G
from referee.games.matchjack.grammar import command_text, read_mail, reference
from tests.games.test_matchjack_helpers import PLAYERS, fresh, stay

STAYING = fresh()  # the stay step is open: FOLD is a stay choice
BETTING = stay(fresh(), {p: "stay" for p in PLAYERS})  # a betting round: FOLD is a betting fold


def moves(text: str, state=STAYING, player: str = "ann") -> list[dict]:
    return G.parse(state, player, text).moves


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("STAY", {"stay": "stay"}),
        ("stay", {"stay": "stay"}),
        ("- Stay", {"stay": "stay"}),
        ("**STAY**", {"stay": "stay"}),
        ("Stay, good luck", {"stay": "stay"}),
        ("FOLD", {"stay": "fold"}),
        ("fold.", {"stay": "fold"}),
        ("FOLD STAYSET", {"stay": "stayset"}),
        ("fold stay set", {"stay": "stayset"}),
        ("Fold Stay-Set", {"stay": "stayset"}),
        ("STAYSET", {"stay": "stayset"}),
    ],
)
def test_ruling_18_the_stay_commands(text: str, move: dict) -> None:
    assert moves(text) == [move]


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("CHECK", {"bet": "check"}),
        ("call", {"bet": "call"}),
        ("FOLD", {"bet": "fold"}),
        ("ALL IN", {"bet": "all-in"}),
        ("all-in", {"bet": "all-in"}),
        ("Allin!", {"bet": "all-in"}),
        ("BET 3", {"bet": "bet", "amount": 3}),
        ("bet 3 chips", {"bet": "bet", "amount": 3}),
        ("Bet: 4", {"bet": "bet", "amount": 4}),
        ("RAISE 2", {"bet": "raise", "by": 2}),
        ("raise by 2 chips", {"bet": "raise", "by": 2}),
        ("RAISE TO 6", {"bet": "raise-to", "to": 6}),
        ("Raise to 6 chips, I feel lucky", {"bet": "raise-to", "to": 6}),
    ],
)
def test_ruling_18_the_betting_commands(text: str, move: dict) -> None:
    assert moves(text, BETTING) == [move]


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("HIT", {"action": "hit"}),
        ("Hit me", {"action": "hit"}),
        ("hit me, please", {"action": "hit"}),
        ("SWAP UP", {"action": "swap", "card": "up"}),
        ("swap down", {"action": "swap", "card": "down"}),
        ("Swap face-down", {"action": "swap", "card": "down"}),
        ("swap face up card", {"action": "swap", "card": "up"}),
        ("swap my down card", {"action": "swap", "card": "down"}),
        ("DRAW 2", {"action": "draw", "position": 2}),
        ("draw card 1", {"action": "draw", "position": 1}),
        ("DRAW #2", {"action": "draw", "position": 2}),
        ("draw position 1.", {"action": "draw", "position": 1}),
        ("NEW", {"action": "new"}),
        ("New card", {"action": "new"}),
    ],
)
def test_ruling_18_the_action_commands(text: str, move: dict) -> None:
    assert moves(text, BETTING) == [move]


@pytest.mark.parametrize("text", ["NOMINATE Bob Ray", "nominate bob", "NOMINATE", "NOMINATE Zed", "Nominate *Bob_Ray*"])
def test_ruling_18_nominate_is_no_command_of_the_match(text: str) -> None:
    """The nomination of the DMO is the season's step, not the match's: NOMINATE is read like
    any other text that is not a command, ignored and listed (alone in a mail: no moves)."""
    with pytest.raises(NoMoves) as err:
        moves(text)
    assert "NOMINATE" not in err.value.reason
    for state in (STAYING, BETTING):
        parsed = G.parse(state, "ann", f"{text}\nGUESS Alpha odd-hitter")
        assert parsed.moves == [{"guess": {"bot": "Alpha", "rule": "odd-hitter"}}] and parsed.ignored == [text]


@pytest.mark.parametrize(
    ("text", "guess"),
    [
        ("GUESS Alpha odd-hitter", {"bot": "Alpha", "rule": "odd-hitter"}),
        ("guess alpha Odd Hitter", {"bot": "Alpha", "rule": "odd-hitter"}),
        ("GUESS Beta is hit-under-15", {"bot": "Beta", "rule": "hit-under-15"}),
        ("guess GAMMA hit under 15 (a hunch)", {"bot": "Gamma", "rule": "hit-under-15"}),
        ("Guess Delta: twenty one hunter", {"bot": "Delta", "rule": "twenty-one-hunter"}),
    ],
)
def test_ruling_16_the_guess_line(text: str, guess: dict) -> None:
    assert moves(text) == [{"guess": guess}]


def test_ruling_18_a_play_command_and_a_guess_in_any_order() -> None:
    assert moves("GUESS Beta never-moves\nSTAY") == [
        {"guess": {"bot": "Beta", "rule": "never-moves"}},
        {"stay": "stay"},
    ]
    assert moves("STAY\nGUESS Beta never-moves") == [
        {"stay": "stay"},
        {"guess": {"bot": "Beta", "rule": "never-moves"}},
    ]


def test_ruling_18_the_step_line_goes_with_the_play_command() -> None:
    parsed = G.parse(STAYING, "ann", "Hi!\nSTAY\nStep: Hand 1, stay or fold\nGUESS Alpha low-drawer")
    assert parsed.moves == [
        {"stay": "stay", "step": "hand 1 stay or fold"},
        {"guess": {"bot": "Alpha", "rule": "low-drawer"}},
    ]
    assert parsed.ignored == ["Hi!"]
    assert reference("Hand 1, stay or fold") == "hand 1 stay or fold"


@pytest.mark.parametrize(
    ("text", "ignored"),
    [
        ("Stay tuned for more\nFOLD", ["Stay tuned for more"]),
        ("Call me tomorrow\nCHECK", ["Call me tomorrow"]),
        ("New idea: hmm\nHIT", ["New idea: hmm"]),
        ("> STAY\nCHECK", ["> STAY"]),
        ("STAY - I hope\n", ["I hope"]),
        ("Bet you cannot\nCALL", ["Bet you cannot"]),
    ],
)
def test_ruling_18_prose_and_quoted_lines_are_ignored_and_listed(text: str, ignored: list[str]) -> None:
    assert len(G.parse(BETTING, "ann", text).moves) == 1
    assert G.parse(BETTING, "ann", text).ignored == ignored


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("RAISE five", "RAISE five"),
        ("CALL 3", "CALL 3"),
        ("STAY 2", "STAY 2"),
        ("BET", "BET"),
        ("DRAW a card", "DRAW a card"),
        ("DRAW 1 2", "DRAW 1 2"),
        ("SWAP sideways", "SWAP sideways"),
        ("GUESS Zeta odd-hitter", "GUESS Zeta odd-hitter"),
        ("GUESS Alpha nonsense", "GUESS Alpha nonsense"),
        ("GUESS", "GUESS"),
        ("STAY\nFOLD", "FOLD"),
        ("GUESS Alpha odd-hitter\nGUESS Beta odd-hitter", "GUESS Beta odd-hitter"),
        ("STAY\nStep: Hand 1, stay or fold\nStep: Hand 2, stay or fold", "Step: Hand 2, stay or fold"),
    ],
)
def test_ruling_18_mistakes_are_errors_quoting_the_line(text: str, line: str) -> None:
    with pytest.raises(ParseError) as err:
        moves(text)
    assert not isinstance(err.value, NoMoves) and err.value.line == line


@pytest.mark.parametrize(
    ("text", "quoted"),
    [("BET 1_0", "'1_0'"), ("RAISE 2_000", "'2_000'"), ("raise to *1_0* chips", "'1_0'"), ("DRAW 1_0", "'1_0'")],
)
def test_ruling_18_a_number_with_an_underscore_is_an_error_quoting_it(text: str, quoted: str) -> None:
    """Not 10, nor 1 then 0: an underscore inside a word is no emphasis."""
    with pytest.raises(ParseError) as err:
        moves(text, BETTING)
    assert not isinstance(err.value, NoMoves)
    assert err.value.reason.startswith(f"I could not read {quoted} as a whole number")


@pytest.mark.parametrize(
    ("text", "move", "state"),
    [
        ("*RAISE 3*", {"bet": "raise", "by": 3}, BETTING),
        ("RAISE *3*", {"bet": "raise", "by": 3}, BETTING),
        ("__BET 2__", {"bet": "bet", "amount": 2}, BETTING),
        ("**Bet**: 4", {"bet": "bet", "amount": 4}, BETTING),
        ("**CALL**", {"bet": "call"}, BETTING),
        ("_FOLD_", {"bet": "fold"}, BETTING),
        ("*ALL_IN*", {"bet": "all-in"}, BETTING),
        ("_HIT ME_", {"action": "hit"}, BETTING),
        ("DRAW *2*", {"action": "draw", "position": 2}, BETTING),
        ("SWAP *face_down*", {"action": "swap", "card": "down"}, BETTING),
        ("**FOLD STAYSET**", {"stay": "stayset"}, STAYING),
        ("FOLD STAY_SET", {"stay": "stayset"}, STAYING),
        ("FOLD_STAYSET", {"stay": "stayset"}, STAYING),  # between letters an _ separates words, as before
        ("HIT_ME", {"action": "hit"}, BETTING),
        ("GUESS *Alpha* _odd-hitter_", {"guess": {"bot": "Alpha", "rule": "odd-hitter"}}, STAYING),
        ("GUESS_Alpha odd-hitter", {"guess": {"bot": "Alpha", "rule": "odd-hitter"}}, STAYING),  # an inner _ too
    ],
)
def test_ruling_18_emphasis_around_words_is_still_read(text: str, move: dict, state) -> None:
    assert moves(text, state) == [move]


def test_ruling_18_a_mail_without_a_command_is_no_moves() -> None:
    with pytest.raises(NoMoves):
        moves("Hello there,\nsee you at the table!\n> STAY")
    with pytest.raises(NoMoves):
        moves("")


def test_ruling_18_reading_is_linear() -> None:
    text = "a line of prose that is not a command\n" * 50_000 + "STAY\n" + "x" * 400 + "\n"
    start = time.perf_counter()
    assert moves(text) == [{"stay": "stay"}]
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize(
    "move",
    [
        {"stay": "stay"},
        {"stay": "fold"},
        {"stay": "stayset"},
        {"bet": "check"},
        {"bet": "call"},
        {"bet": "all-in"},
        {"bet": "bet", "amount": 3},
        {"bet": "raise", "by": 2},
        {"bet": "raise-to", "to": 7},
        {"action": "hit"},
        {"action": "swap", "card": "up"},
        {"action": "swap", "card": "down"},
        {"action": "draw", "position": 2},
        {"action": "new"},
        {"guess": {"bot": "Gamma", "rule": "bust-drawer"}},
    ],
)
def test_ruling_18_every_command_written_back_reads_as_itself(move: dict) -> None:
    text = command_text(move)
    state = STAYING if "stay" in move else BETTING
    assert G.parse(state, "ann", text).moves == [move]


def test_read_mail_takes_the_bots_and_rules_it_is_given() -> None:
    parsed = read_mail("GUESS Omega r1", fold_means="bet", bots=["Omega"], rules=["r1"])
    assert parsed.moves == [{"guess": {"bot": "Omega", "rule": "r1"}}]
