"""Stationary Roulette mail grammar: what a mail may hold around and inside the form.

Rulings 20 and 22-25 of ``docs/games/stationary-roulette.md``: a section is complete
when it has what its move needs; once complete, what is not an entry of the section is
ignored and listed in ``Parsed.ignored``; a number may be followed by prose without
digits; several entries may share a line (format=flowed joins lines); a section is read
for at most MAX_SECTION_LINES lines; a number has at most MAX_DIGITS digits. Reading is
total (a Parsed or a ParseError, for any text) and linear in the length of the text.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games.base import Move, NoMoves, ParseError, Parsed, State
from referee.games.stationary_roulette import COLOURS, MAX_DIGITS, MAX_SECTION_LINES
from tests.timing import growth
from tests.games.test_stationary_roulette import A, B, G, bet, play, roulette, round_10, start, submit

R_GOLD = roulette("Gold")
ROULETTE_FORM = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0\n"
BET_FORM = "BET\nGold: 20\nSilver: 20\nBlack: 0\n"
SPLIT = bet(gold=20, silver=20)


def bet_round() -> State:
    """Round 1: both players may prepare and bet."""
    return play([{A: [roulette()], B: [roulette()]}])


def read(text: str) -> Parsed:
    parsed = G.parse(bet_round(), A, text)
    assert isinstance(parsed, Parsed)
    return parsed


# --------------------------------------------------------------------------- accepted

ACCEPTED: list[tuple[str, str, list[Move], list[str]]] = [
    # a signature without "-- " after a complete section
    ("tel-after-bet", BET_FORM + "Tel: +49 30 1234567\n", [SPLIT], ["Tel: +49 30 1234567"]),
    ("mobile-after-bet", BET_FORM + "Mobile: 0171 2345678\n", [SPLIT], ["Mobile: 0171 2345678"]),
    ("fax-after-bet", BET_FORM + "Fax: ...\n", [SPLIT], ["Fax: ..."]),
    ("fax-number-after-bet", BET_FORM + "Fax: +49 30 7654321\n", [SPLIT], ["Fax: +49 30 7654321"]),
    (
        "signature-after-roulette",
        ROULETTE_FORM + "Bob Miller\nTel: +49 30 1234567\nMobile: 0171 2345678\n",
        [R_GOLD],
        ["Bob Miller", "Tel: +49 30 1234567", "Mobile: 0171 2345678"],
    ),
    (
        "signature-between-sections",
        ROULETTE_FORM + "Tel: 030 1234567\n" + BET_FORM + "Tel: 030 1234567\n",
        [R_GOLD, SPLIT],
        ["Tel: 030 1234567", "Tel: 030 1234567"],
    ),
    # prose after a complete section
    ("ps-after-bet", BET_FORM + "PS: 2 more rounds to go!\n", [SPLIT], ["PS: 2 more rounds to go!"]),
    ("round-3-was-fun", BET_FORM + "Round 3 was fun\n", [SPLIT], ["Round 3 was fun"]),
    ("good-luck-bob", BET_FORM + "Good luck, Bob!\n", [SPLIT], ["Good luck, Bob!"]),
    ("2-more-rounds", ROULETTE_FORM + "2 more rounds to go\n", [R_GOLD], ["2 more rounds to go"]),
    ("go-bob-is-no-gold-line", "BET\nSilver: 40\nGo Bob!\n", [bet(silver=40)], ["Go Bob!"]),
    ("unknown-key-once-complete", "BET\nGold: 40\nPurple: 5\n", [bet(gold=40)], ["Purple: 5"]),
    ("colour-line-in-signature", "BET\nGold: 40\nColour: blue\n", [bet(gold=40)], ["Colour: blue"]),
    ("misspelt-colour-once-complete", "BET\nGold: 20\nSilvr: 20\n", [bet(gold=20)], ["Silvr: 20"]),
    (
        "greeting-and-closing",
        "Hi Alice,\nhere is my bet.\n\nBET\nGold: 40\n\nCheers\nB\n",
        [bet(gold=40)],
        ["Hi Alice,", "here is my bet.", "Cheers", "B"],
    ),
    # prose after the number of an entry line
    ("number-then-parenthesis", "BET\nGold: 20 (feeling lucky)\n", [bet(gold=20)], ["(feeling lucky)"]),
    ("unit-then-prose", "BET\nSilver: 20 points, that's it\n", [bet(silver=20)], ["that's it"]),
    ("dash-then-prose", "BET\nGold: 40\nBlack: 0 - never again\n", [bet(gold=40)], ["- never again"]),
    ("prose-completing-a-roulette", ROULETTE_FORM.replace("Black: 0", "Black: 0 - never"), [R_GOLD], ["- never"]),
    ("punctuation-is-not-listed", "BET\nGold: 20!\nSilver: 20;\n", [SPLIT], []),
    # entries later in a section, after prose: nothing is dropped
    ("entry-after-thanks", "BET\nGold: 20\n\nThanks\nSilver: 20\n", [SPLIT], ["Thanks"]),
    ("prose-inside-an-incomplete-section", "BET\nmy bet this time:\nGold: 40\n", [bet(gold=40)], ["my bet this time:"]),
    (
        "prose-inside-an-incomplete-roulette",
        "ROULETTE\nWinning colour: Gold\nGold: 30\nI think\nSilver: 10\nBlack: 0\n",
        [R_GOLD],
        ["I think"],
    ),
    # format=flowed: a header and entries, or several entries, on one line
    ("bet-header-and-entry", "BET Gold: 20\n", [bet(gold=20)], []),
    ("bet-header-colon-and-entries", "BET: Gold: 20 Silver: 20 Black: 0\n", [SPLIT], []),
    ("two-entries-on-a-line", "BET\nGold: 20 Silver: 20\n", [SPLIT], []),
    ("comma-between-entries", "BET\nGold: 30, Silver: 10\n", [bet(gold=30, silver=10)], []),
    ("header-and-number-without-separator", "Bets g 25 sil: 15\n", [bet(gold=25, silver=15)], []),
    ("roulette-on-one-line", "ROULETTE Winning colour: Gold Gold: 30 Silver: 10 Black: 0\n", [R_GOLD], []),
    (
        "roulette-winning-colour-without-separator",
        "ROULETTE Winning colour Black Gold: 30 Silver: 10 Black: 0\n",
        [roulette("Black")],
        [],
    ),
    (
        "both-sections-flowed",
        "ROULETTE Winning colour: Silver Gold: 25 Silver: 15 Black: 0\nBET Gold: 40\n",
        [roulette("Silver", gold=25, silver=15), bet(gold=40)],
        [],
    ),
    ("flowed-signature", "BET Gold: 20 Silver: 20 Black: 0 Tel: +49 30 1234567\n", [SPLIT], ["Tel: +49 30 1234567"]),
    ("flowed-prose", "BET\nGold: 20 Silver: 20 Thanks!\n", [SPLIT], ["Thanks!"]),
    ("flowed-fax", "BET\nGold: 40 Fax: ...\n", [bet(gold=40)], ["Fax: ..."]),
    ("bullets-and-flowed", "- BET Gold: 20\n* Silver: 20 (as always)\n", [SPLIT], ["(as always)"]),
    # limits
    (
        "section-read-for-its-first-lines-only",
        BET_FORM + "blah\n" * (MAX_SECTION_LINES - 3) + "Gold: 5\n",
        [SPLIT],
        ["blah"] * (MAX_SECTION_LINES - 3) + ["Gold: 5"],
    ),
    ("six-digits", "BET\nGold: 999999\n", [bet(gold=999999)], []),
    ("leading-zeros-within-six-digits", "BET\nGold: 000020\n", [bet(gold=20)], []),
]


@pytest.mark.parametrize(("text", "moves", "ignored"), [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_accepted_with_the_extra_lines_listed(text: str, moves: list[Move], ignored: list[str]) -> None:
    assert read(text) == Parsed(moves, ignored)
    for item in ignored:
        assert item in text


# --------------------------------------------------------------------------- rejected

LONG = "1" * 4300

REJECTED: list[tuple[str, str, str, str | None]] = [
    # two numbers, or a number glued to letters, stay errors quoting the line
    (
        "two-numbers",
        "BET\nGold: 20 30\n",
        "I could not read '20 30' as a whole number of points for Gold",
        "Gold: 20 30",
    ),
    ("letter-o-for-zero", "BET\nGold: 2O\n", "I could not read '2O' as a whole number of points for Gold", "Gold: 2O"),
    ("letters-glued-to-the-number", "BET\nGold: 20px\n", "I could not read '20px' as a whole number", "Gold: 20px"),
    ("fraction", "BET\nGold: 20.5\n", "I could not read '20.5' as a whole number of points for Gold", "Gold: 20.5"),
    # an underscore inside a number is no emphasis (ruling 27): never read as 20
    (
        "underscore-in-points",
        "BET\nGold 2_0\n",
        "I could not read '2_0' as a whole number of points for Gold",
        "Gold 2_0",
    ),
    (
        "underscore-thousands-in-a-roulette",
        "ROULETTE\nWinning colour: Gold\nGold: 3_0\nSilver: 10\nBlack: 0\n",
        "I could not read '3_0' as a whole number of points for Gold",
        "Gold: 3_0",
    ),
    (
        "emphasised-underscore-number",
        "BET\n*Silver:* *2_000*\n",
        "I could not read '2_000' as a whole number of points for Silver",
        "*Silver:* *2_000*",
    ),
    (
        "digits-in-the-prose",
        "BET\nGold: 20 (2nd try)\n",
        "I could not read '20 (2nd try)' as a whole number of points for Gold",
        "Gold: 20 (2nd try)",
    ),
    (
        "bad-value-on-a-flowed-line",
        "BET Gold: 20 Silver: lots\n",
        "I could not read 'lots' as a whole number of points for Silver",
        "BET Gold: 20 Silver: lots",
    ),
    # too many digits: a ParseError, never another exception
    (
        "seven-digits",
        "BET\nGold: 1234567\n",
        f"I could not read '1234567' as a number of points for Gold: it has more than {MAX_DIGITS} digits",
        "Gold: 1234567",
    ),
    (
        "4300-digits",
        f"BET\nGold: {LONG}\n",
        f"I could not read '{'1' * 37}...' as a number of points for Gold: it has more than {MAX_DIGITS} digits",
        f"Gold: {LONG}",
    ),
    (
        "negative-4300-digits-in-a-roulette",
        f"ROULETTE\nWinning colour: Gold\nGold: -{LONG}\n",
        f"it has more than {MAX_DIGITS} digits",
        f"Gold: -{LONG}",
    ),
    # an unknown key inside an incomplete section stays an error
    (
        "tel-inside-an-incomplete-roulette",
        "ROULETTE\nWinning colour: Gold\nGold: 30\nTel: +49 30 1234567\nSilver: 10\nBlack: 0\n",
        "I do not understand 'Tel'; a ROULETTE has the lines Winning colour, Gold, Silver and Black",
        "Tel: +49 30 1234567",
    ),
    (
        "ps-before-the-first-colour",
        "BET\nPS: 2 more rounds\nGold: 20\n",
        "I do not understand 'PS'; a BET has the lines Gold, Silver and Black",
        "PS: 2 more rounds",
    ),
    (
        "unknown-key-on-a-flowed-incomplete-line",
        "ROULETTE Winning colour: Gold Purple: 5 Gold: 30 Silver: 10 Black: 0\n",
        "I do not understand 'Purple'; a ROULETTE has the lines Winning colour, Gold, Silver and Black",
        "ROULETTE Winning colour: Gold Purple: 5 Gold: 30 Silver: 10 Black: 0",
    ),
    # a colour twice, even after completion, even in prose
    (
        "second-gold-in-prose",
        "BET\nGold: 20\nSilver: 20\nThanks\nGold: 5 next time\n",
        "Gold appears twice in your BET section, first 20 and then 5",
        "Gold: 5 next time",
    ),
    ("same-value-twice", "BET\nGold: 20\ngold: 20\n", "Gold appears twice in your BET section", "gold: 20"),
    (
        "second-colour-on-a-flowed-line",
        "BET Gold: 20 Silver: 20 Gold: 0\n",
        "Gold appears twice in your BET section, first 20 and then 0",
        "BET Gold: 20 Silver: 20 Gold: 0",
    ),
    (
        "second-winning-colour",
        ROULETTE_FORM + "Winning colour: Silver\n",
        "The winning colour appears twice in your ROULETTE section, first Gold and then Silver",
        "Winning colour: Silver",
    ),
    (
        "winning-colour-in-a-complete-bet",
        "BET\nGold: 20\nWinning colour: Gold\n",
        "A BET has no winning colour; only the ROULETTE you prepare has one",
        "Winning colour: Gold",
    ),
    # a section is read for its first MAX_SECTION_LINES lines only
    (
        "incomplete-within-the-lines-read",
        "BET\n" + "blah\n" * MAX_SECTION_LINES + "Gold: 20\n",
        'Your BET section has no colour lines (write lines like "Gold: 20"); '
        f"I read only the first {MAX_SECTION_LINES} lines of a section",
        "BET",
    ),
    (
        "roulette-incomplete-within-the-lines-read",
        "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\n" + "blah\n" * (MAX_SECTION_LINES - 3) + "Black: 0\n",
        'Black is missing from your ROULETTE section (add a line like "Black: 0"); '
        f"I read only the first {MAX_SECTION_LINES} lines of a section",
        "ROULETTE",
    ),
    (
        "two-bet-sections-flowed",
        "BET Gold: 20\nBET Silver: 20\n",
        "Your mail has two BET sections; send only one",
        "BET Silver: 20",
    ),
]


@pytest.mark.parametrize(("text", "reason", "line"), [c[1:] for c in REJECTED], ids=[c[0] for c in REJECTED])
def test_rejected_quoting_the_line(text: str, reason: str, line: str | None) -> None:
    with pytest.raises(ParseError) as error:
        read(text)
    assert reason in error.value.reason
    assert error.value.line == line
    assert not isinstance(error.value, NoMoves)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "Gold: 20\nSilver: 20\n",
        "BET is what I always do\n",
        "Bet on gold!\n",
        "Roulette: Gold\n",
        "x" * 100,
    ],
    ids=[
        "empty",
        "blank",
        "entries-without-header",
        "header-word-in-prose",
        "bet-on-gold",
        "header-and-bare-colour",
        "x",
    ],
)
def test_no_section_at_all_is_no_moves(text: str) -> None:
    with pytest.raises(NoMoves) as error:
        read(text)
    assert error.value.reason == "I found no ROULETTE or BET section in your mail"
    assert error.value.line is None


def test_a_section_with_a_mistake_is_not_no_moves() -> None:
    for text in ("BET\n", "ROULETTE\nWinning colour: Gold\n", "Hi\nBET\nthanks\n"):
        with pytest.raises(ParseError) as error:
            read(text)
        assert not isinstance(error.value, NoMoves)


# --------------------------------------------------------------------------- the forms we send

SIGNATURE = ["Thanks!", "Bob Miller", "Tel: +49 30 1234567", "Mobile: 0171 2345678", "PS: 2 more rounds to go!"]


def form_states() -> list[tuple[State, str]]:
    state = bet_round()
    revised = submit(submit(state, A, roulette("Black", gold=26, silver=14)), A, bet(silver=7, black=33))
    return [(start(), A), (state, A), (revised, A), (round_10(9, 9), B), (play([{A: [roulette("Gold")]}] * 5), A)]


def flowed(form: str) -> str:
    """The form as format=flowed may deliver it: each section's lines joined by spaces."""
    return "\n\n".join(" ".join(section.splitlines()) for section in form.strip().split("\n\n")) + "\n"


@pytest.mark.parametrize("index", range(5))
def test_the_form_parses_to_exactly_what_it_says(index: int) -> None:
    state, player = form_states()[index]
    form = G.form(state, player)
    parsed = G.parse(state, player, form)
    assert parsed.ignored == []
    pending = state["pending"][player]
    for move in parsed.moves:
        assert G.apply_move(state, player, move).accepted
        if move["type"] == "roulette" and pending["roulette"] is not None:
            assert {"winning": move["winning"], "points": move["points"]} == pending["roulette"]
        if move["type"] == "bet" and pending["bet"] is not None:
            assert move["bets"] == pending["bet"]
    assert G.parse(state, player, flowed(form)) == parsed
    assert G.parse(state, player, "Hi,\n\n" + form + "\n" + "\n".join(SIGNATURE)) == Parsed(
        parsed.moves, ["Hi,", *SIGNATURE]
    )


@settings(max_examples=100, deadline=None)
@given(
    winning=st.sampled_from(COLOURS),
    gold=st.integers(25, 35),
    amounts=st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40)),
    extra=st.lists(st.sampled_from(SIGNATURE + ["Round 3 was fun", "Good luck, Bob!", "cheers"]), max_size=4),
)
def test_any_prefilled_form_round_trips_also_flowed_and_signed(
    winning: str, gold: int, amounts: tuple[int, int, int], extra: list[str]
) -> None:
    state = submit(bet_round(), A, roulette(winning, gold, 40 - gold))
    pending_bet = dict(zip(COLOURS, amounts, strict=True))
    state["pending"][A]["bet"] = pending_bet  # any numbers: the grammar does not judge the rules
    form = G.form(state, A)
    # issue 20: the form begins with its Step line, which every move of the reply carries
    step = {"step": "round 1 of 10"}
    expected = [
        {"type": "roulette", **state["pending"][A]["roulette"], **step},
        {"type": "bet", "bets": pending_bet, **step},
    ]
    for text in (form, flowed(form)):
        assert G.parse(state, A, text).moves == expected
        signed = text + "\n".join(extra)
        assert G.parse(state, A, signed) == Parsed(expected, extra)


# --------------------------------------------------------------------------- totality


def check_total(text: str) -> None:
    """Any text gives a Parsed or a ParseError; what is parsed is well formed."""
    state = bet_round()
    try:
        parsed = G.parse(state, A, text)
    except ParseError as error:
        assert isinstance(error.reason, str) and error.reason
        assert error.line is None or error.line in text
        return
    assert isinstance(parsed, Parsed) and parsed.moves
    for move in parsed.moves:
        values = move["points"] if move["type"] == "roulette" else move["bets"]
        assert set(values) == set(COLOURS)
        assert all(type(n) is int and abs(n) < 10**MAX_DIGITS for n in values.values())
        assert move["type"] == "bet" or move["winning"] in COLOURS
        G.apply_move(state, A, move)  # accepted or rejected with a reason, never a crash
    for item in parsed.ignored:
        assert item and item in text


TOTALITY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

FRAGMENTS = [
    "ROULETTE", "BET", "Bets:", "roulette:", "Winning colour", "Winning", "Colour", "Gold", "Silver", "Black",
    "g", "sil", "b", "Go", "Gx", "colour", "color", "Purple", "Tel", "PS", ":", "=", " ", "  ", "\t", "\n",
    "\n\n", "\r\n", "\u2028", "- ", "* ", "\u2022 ", "0", "5", "20", "40", "-5", "+49", "1234567", "2O", "20.5",
    "\u0663\u0660", "\u00b2", "\uff12", "\u0130", "points", "pts", "p", ".", ",", "!", "(feeling lucky)",
    "-", "\u2013", "Thanks", "x", "1" * 4301, "_", "2_0", "*20*",
]  # fmt: skip


@TOTALITY
@given(st.text())
def test_any_text_gives_parsed_or_parse_error(text: str) -> None:
    check_total(text)


@TOTALITY
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join))
def test_any_form_like_text_gives_parsed_or_parse_error(text: str) -> None:
    check_total(text)


@TOTALITY
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=5)), max_size=60).map("".join))
def test_any_mixed_text_gives_parsed_or_parse_error(text: str) -> None:
    check_total(text)


# --------------------------------------------------------------------------- linear time

N = 10_000  # the large inputs (4 N) hold the reproduced case: x, 80 KB or more of spaces, y

INPUTS: dict[str, Callable[[int], str]] = {
    # the reproduced case: x, 80 KB of spaces, y (in a section, in a value, before any header)
    "x-spaces-y-in-a-section": lambda n: BET_FORM + "x" + " " * (4 * n) + "y\n",
    "x-spaces-y-as-a-value": lambda n: "BET\nGold: x" + " " * (4 * n) + "y\n",
    "x-spaces-y-before-any-header": lambda n: "x" + " " * (4 * n) + "y\n",
    "x-spaces-y-on-a-header-line": lambda n: "BET Gold: 20" + " " * (4 * n) + "y\n",
    # many words on one line
    "many-words-after-a-number": lambda n: "BET\nGold: 20 " + "word " * n + "\n",
    "many-words-incomplete": lambda n: "BET\n" + "word " * n + "\n",
    "many-colour-words": lambda n: "BET\nGold " + "Gold " * n + "\n",
    "many-key-words-without-separator": lambda n: "ROULETTE\n" + "Winning colour " * n + "\n",
    "many-unknown-entries-on-a-line": lambda n: "BET Gold: 20 " + "Tel: 1 " * (n // 2) + "\n",
    "many-colons": lambda n: "BET" + ":" * (4 * n) + " Gold: 20\n",
    "many-digits": lambda n: "BET\nGold: " + "1" * (4 * n) + "\n",
    # many lines
    "many-lines-after-a-section": lambda n: BET_FORM + "Tel: +49 30 1234567\n" * (n // 4),
    "many-lines-before-a-section": lambda n: "hello there\n" * (n // 4) + BET_FORM,
    "many-blank-lines": lambda n: "BET\n" + "\n" * (4 * n) + "Gold: 20\n",
    "many-sections": lambda n: "BET\nGold: 1\n" * (n // 2),
}


def parsing(text: str) -> Callable[[], None]:
    """The parse of ``text``, to be timed (tests/timing.py: the thread's own CPU time, the
    garbage collector held off, the best of 3 runs)."""
    state = bet_round()

    def parse() -> None:
        try:
            G.parse(state, A, text)
        except ParseError:
            pass

    return parse


@pytest.mark.parametrize("make", INPUTS.values(), ids=INPUTS.keys())
def test_parse_time_is_linear_in_the_text(make: Callable[[int], str]) -> None:
    small, large = growth(parsing(make(N)), parsing(make(4 * N)), 12, floor=1e-4)  # measured again if over
    assert large < 12 * max(small, 1e-4), (small, large)
    assert large < 2.0


@pytest.mark.parametrize(
    "text",
    [
        "ROULETTE\n*Winning colour:* Silver\n*Gold:* 28\n*Silver:* 12\n*Black:* 0",
        "ROULETTE\n\u00b7 Winning colour: Silver\n\u00b7 Gold: 28\n\u25e6 Silver: 12\n\u25aa Black: 0",
        "ROULETTE\n_Winning colour:_ Silver\n- Gold: 28\n- Silver: 12\n- Black: 0",
        "**ROULETTE**\n__Winning colour__: *Silver*\n**Gold**: 28\nSilver: _12_\n*Black: 0*",
        "_ROULETTE_\nWinning colour: **Silver**.\nGold: *28* points\n__Silver 12__\nBlack: -",
    ],
    ids=["gmail-bold", "middle-dots", "underscores", "emphasis-around-words-and-numbers", "emphasis-with-units"],
)
def test_emphasis_marks_and_other_bullets_are_not_part_of_the_form(text: str) -> None:
    assert read(text).moves == [
        {"type": "roulette", "winning": "Silver", "points": {"Gold": 28, "Silver": 12, "Black": 0}}
    ]


def test_a_long_line_after_a_complete_section_is_ignored_without_being_read() -> None:
    junk = "g: " * 100_000
    parsed = read("BET\nGold: 40\n" + junk)
    assert parsed.moves == [{"type": "bet", "bets": {"Gold": 40, "Silver": 0, "Black": 0}}]
    assert len(parsed.ignored) == 1 and len(parsed.ignored[0]) <= 40
