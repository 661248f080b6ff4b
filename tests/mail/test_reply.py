"""A reply read against the mail it answers (``referee.mail.reply``): the player's part is
what is not a copy of our mail, wherever it stands; a form section left as we sent it is
never read, an edited one is read whole. The shapes are those of issue 20: a move typed
above the quote (A), below it (B), the form edited inside it (C), chat only (D), the
quote confirmed unchanged (E), with the prefixes, wrappings and mis-decodings of real
clients."""

from __future__ import annotations

import textwrap
import unicodedata

from referee.mail.reply import read_against, words

FORM = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0\n\nBET\nGold: 20\nSilver: 20\nBlack: 0\n"

SIG = "\nThe referee (an automated service; replies to this address are read by the program)\n"
SENT = f"""Dear Tomás Silva,

This is the referee of your Stationary Roulette match demo-1 against Alice (Demo season).

=== Now: Round 5 of 10 ===

* Prepare a roulette for Alice to bet on in round 6.
  Choose its winning colour (you may still choose Gold 3, Silver 2, Black 5 more times)
  and place exactly 40 points: Gold at least 25, Silver at least 5, Black 0.

* Bet on the roulette Alice prepared in round 4.
  Its points: Gold 26, Silver 14, Black 0. Its winning colour stays secret until this round closes.

Deadline: Sat 5 Dec 2026, 10:00 EST (15:00 UTC).

To answer, reply to this mail and keep the lines below, changing only the colour and the numbers:

ROULETTE
Winning colour: Gold
Gold: 30
Silver: 10
Black: 0

BET
Gold: 20
Silver: 20
Black: 0

How scoring works, in short: on a Gold or Silver roulette both players earn their points
on the winning colour.

-- {SIG}"""

DUEL_FORM = "CALL\nTurn: Hand 3, turn 2\n"
DUEL = f"""Dear Bob Ray,

Alice Lee raised: RAISE 2. There is 1 chip to call.

Your choices now:
  CALL      put in the 1 chip to call
  RAISE n   your bet becomes the current bet + n, at most 5
  FOLD      give up the hand

Two commands, 'FOLD' and 'NEW', end the hand early.

CALL
Turn: Hand 3, turn 2

-- {SIG}"""

ATTRIBUTION = "On Thu, 3 Dec 2026 at 10:00, Referee <referee@demo.test> wrote:"


def quoted(text: str, prefix: str = "> ") -> str:
    return "\n".join(prefix + line if line else prefix.rstrip() for line in text.split("\n"))


def test_a_form_section_edited_inside_the_quote_is_read_whole_and_the_untouched_one_never() -> None:
    """C, and issue 20's wrong move (1): only BET is edited; the quoted example ROULETTE is
    not read (it would replace the roulette the player sent earlier)."""
    reply = "\n".join([ATTRIBUTION, quoted(SENT).replace("> Gold: 20\n> Silver: 20", "> Gold: 35\n> Silver: 5")])
    got = read_against(reply, SENT, FORM)
    assert got is not None and got.text == "BET\nGold: 35\nSilver: 5\nBlack: 0"
    assert got.form_changed and got.own == ("Gold: 35", "Silver: 5")


def test_a_move_above_the_quote_is_the_players_and_the_quoted_form_is_not() -> None:
    got = read_against(f"BET\nGold: 40\n\n{ATTRIBUTION}\n{quoted(SENT)}", SENT, FORM)
    assert got is not None and got.text == "BET\nGold: 40" and got.form_untouched


def test_a_move_below_the_quote_counts_even_when_it_repeats_the_forms_values() -> None:
    """B: typed below the quote, unprefixed, the same values as the form's example: the
    player's (a quoted copy's lines carry the prefix)."""
    reply = f"{ATTRIBUTION}\n{quoted(SENT)}\n\nBET\nGold: 20\nSilver: 20\nBlack: 0\n\n-- \nBob"
    got = read_against(reply, SENT, FORM)
    assert got is not None and got.text == "BET\nGold: 20\nSilver: 20\nBlack: 0"


def test_chat_only_and_an_unchanged_quote_are_no_move() -> None:
    """D and E: nothing but chat, the form untouched."""
    for chat in ("Thanks, good game!", "OK, same as below."):
        got = read_against(f"{chat}\n\n{ATTRIBUTION}\n{quoted(SENT)}", SENT, FORM)
        assert got is not None and got.text == chat and got.form_untouched and got.own == (chat,)


def test_an_unprefixed_copy_under_a_header_block_in_any_language() -> None:
    """Outlook (here in German) copies our mail without quote marks under a header block:
    a move typed above it, or the form edited inside it."""
    head = (
        "\n________________________________\nVon: Referee <referee@demo.test>\nGesendet: Donnerstag\n"
        "An: Tomás\nBetreff: Round 5\n\n"
    )
    got = read_against("BET\nSilver: 40\n" + head + SENT, SENT, FORM)
    assert got is not None and got.text == "BET\nSilver: 40" and got.form_untouched
    got = read_against(head + SENT.replace("Winning colour: Gold", "Winning colour: Black"), SENT, FORM)
    assert got is not None and got.text == "ROULETTE\nWinning colour: Black\nGold: 30\nSilver: 10\nBlack: 0"


def test_the_greeting_in_nfd_or_mis_decoded_is_still_ours() -> None:
    """Issue 20's wrong move (3): a chat-only reply whose copy of our mail is unprefixed and
    whose greeting came back decomposed (NFD) or mis-decoded (UTF-8 read as Latin-1) still
    holds only the chat; the example form is never read."""
    for copy in (unicodedata.normalize("NFD", SENT), SENT.encode("utf-8").decode("latin-1")):
        got = read_against("Thanks!\n\n" + copy, SENT, FORM)
        assert got is not None and got.text == "Thanks!" and got.form_untouched
    nfd = unicodedata.normalize("NFD", "Dear Tomás Silva,")
    assert words("Dear TomÃ¡s Silva,") == words("Dear Tomás Silva,") == words(nfd) == ("dear", "tomás", "silva")


def test_other_prefixes_and_a_rewrapped_copy() -> None:
    """mutt's "| ", s-nail's tab, a double "> > " quote re-wrapped at 50 columns."""
    got = read_against(
        quoted(SENT, "| ").replace("| Gold: 30", "| Gold: 25").replace("| Silver: 10", "| Silver: 15"), SENT, FORM
    )
    assert got is not None and got.text == "ROULETTE\nWinning colour: Gold\nGold: 25\nSilver: 15\nBlack: 0"
    got = read_against("BET Gold 40\n" + quoted(SENT, "\t"), SENT, FORM)
    assert got is not None and got.text == "BET Gold 40"
    rewrapped = "\n".join("\n".join(textwrap.wrap(line, 50)) if line.strip() else "" for line in SENT.split("\n"))
    got = read_against(f"BET\nBlack: 40\n\n{ATTRIBUTION}\n{quoted(rewrapped, '> > ')}", SENT, FORM)
    assert got is not None and got.text == "BET\nBlack: 40" and got.copied > 20


def test_a_signature_above_the_quote_and_the_form_below_it() -> None:
    """mutt's sig_on_top: the player's signature above the quote, the move below it."""
    reply = f"-- \nBob\n\n{ATTRIBUTION}\n{quoted(SENT)}\n\nBET\nSilver: 40\n"
    got = read_against(reply, SENT, FORM)
    assert got is not None and got.text == "BET\nSilver: 40"


def test_our_instruction_lines_are_never_read_and_the_step_line_comes_with_the_edit() -> None:
    """The duel's form edited inside the quote: the command and its Turn line are read; our
    instruction lines ("RAISE n your bet becomes ...", "Two commands, 'FOLD' and 'NEW'")
    never are."""
    got = read_against(f"{ATTRIBUTION}\n{quoted(DUEL).replace('> CALL', '> RAISE 3', 1)}", DUEL, DUEL_FORM)
    assert got is not None
    assert got.text.count("RAISE") == 1  # the instruction line "  RAISE n ..." was aligned, not read
    reply = f"{ATTRIBUTION}\n" + quoted(DUEL).replace("> CALL\n> Turn", "> RAISE 3\n> Turn")
    got = read_against(reply, DUEL, DUEL_FORM)
    assert got is not None and got.text == "RAISE 3\nTurn: Hand 3, turn 2" and got.own == ("RAISE 3",)


def test_a_line_added_beside_the_form_changes_no_section() -> None:
    """A comment typed inside the quote just above the form is the player's line, but the
    form's sections, untouched, are not read with it."""
    reply = quoted(SENT).replace("> ROULETTE", "> \nHere is my move:\n> ROULETTE")
    got = read_against(reply, SENT, FORM)
    assert got is not None and got.text == "Here is my move:" and got.form_untouched


def test_no_copy_of_our_mail_is_none() -> None:
    assert read_against("CALL\n\n> something else entirely\n> and more", DUEL, DUEL_FORM) is None
    assert read_against("", DUEL, DUEL_FORM) is None


def test_the_forms_lines_typed_without_our_prose_are_the_players() -> None:
    """A mail that holds only the form's lines as we show them (typed, or pasted without
    quote marks) is the player's move, not a copy of our mail."""
    assert read_against("ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0", SENT, FORM) is None
    assert read_against("CALL\nTurn: Hand 3, turn 2", DUEL, DUEL_FORM) is None


def test_an_edit_on_the_last_line_of_a_trimmed_quote_still_changes_its_section() -> None:
    """The player cut the quote after the form and edited its last line: that line stands
    where our form's last line was, so the section is read whole."""
    trimmed = SENT.split("\n\nHow scoring works")[0]
    reply = quoted(trimmed).replace("> Gold: 20\n> Silver: 20\n> Black: 0", "> Gold: 15\n> Silver: 20\n> Black: 5")
    got = read_against(f"{ATTRIBUTION}\n{reply}", SENT, FORM)
    assert got is not None and got.text == "BET\nGold: 15\nSilver: 20\nBlack: 5"


def test_an_nfd_copy_read_as_latin1_is_still_ours() -> None:
    """Corpus, rewind-holdem/mojibake-unquoted/D/NFD: an NFD name ("Zoe" + U+0308) whose
    UTF-8 was read as Latin-1 comes back as "ZoeÌ\\x88": the combining accent's lead byte
    (Ì) marks a mis-decoding too, so the line is repaired, found in our mail, and our
    instruction line "FOLD: Zoë ... takes the pot" is never read as the player's FOLD."""
    sent = SENT.replace("against Alice", "against Zoë Ångström").replace(
        "How scoring works", "FOLD: Zoë Ångström takes the pot.\n\nHow scoring works"
    )
    copy = unicodedata.normalize("NFD", sent).encode("utf-8").decode("latin-1")
    assert words(copy.split("\n")[2]) == words(sent.split("\n")[2])
    got = read_against("Thanks!\n\n" + copy, sent, FORM)
    assert got is not None and got.text == "Thanks!" and got.form_untouched


def test_a_forms_check_line_is_read_with_every_section_the_player_changed():
    """Stationary Roulette's form opens with its check line, a paragraph of its own
    (``Step: Round 5 of 10``). A BET edited inside the quote is read with that line, so the
    game can tell a reply to an old round from one to the round open now; the untouched
    ROULETTE is still never read."""
    form = "Step: Round 5 of 10\n\n" + FORM
    sent = SENT.replace("ROULETTE\nWinning colour", "Step: Round 5 of 10\n\nROULETTE\nWinning colour", 1)
    quoted = "\n".join(f"> {line}" if line else ">" for line in sent.split("\n"))
    reply = "See below.\n\n" + quoted.replace("> BET\n> Gold: 20\n> Silver: 20", "> BET\n> Gold: 35\n> Silver: 5")
    got = read_against(reply, sent, form)
    assert got is not None and got.form_changed
    assert "Step: Round 5 of 10" in got.text and "Gold: 35" in got.text
    assert "ROULETTE" not in got.text and "Winning colour" not in got.text
    untouched = read_against("OK\n\n" + quoted, sent, form)
    assert untouched is not None and untouched.form_untouched and "Step:" not in untouched.text
