"""Issue 22, one-tap answers: the step mails' HTML part.

Each game's first step mails, as the real service writes them (``tests/service/harness.py``),
are ``multipart/alternative``: the text part first, unchanged, then an HTML part that a
strict HTML5 parser accepts, without scripts, remote images or style sheets, with a
``mailto:`` button per common answer: to the player's personal address, "Re: " and the
subject, and a body the game's parser reads and the rules accept. The nomination (a step of
the season frame) is checked on its engine, with the same builder.
"""

from __future__ import annotations

import email
import email.policy
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import html5lib
import pytest
from sqlalchemy import select

from referee.games import GAMES
from referee.games.quick import answers_of
from referee.mail.html_mail import to_html
from referee.bidi import isolate
from referee.store.models import Match, Outbox
from tests.replies import corpus as C
from tests.migrated import migrated_sqlite
from tests.service.harness import START, World

GAMES_BY_MAIL = ("indian-poker", "rewind-holdem", "matchjack", "stationary-roulette", "betting-minority")
# what each game's buttons must offer (labels), for the player who acts first
EXPECTED = {
    "indian-poker": {"FOLD"},
    "rewind-holdem": {"FOLD"},
    "matchjack": {"STAY", "FOLD"},
    "stationary-roulette": {"Reply with the form"},
    "betting-minority": {"Reply with the form"},
}


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self.tags: list[str] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.tags.append(tag)
        if tag == "a":
            self._href, self._text = dict(attrs).get("href"), []

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag == "a" and self._href is not None:
            self.links.append((self._href, "".join(self._text)))
            self._href = None


def _check_html(html: str) -> _Links:
    html5lib.HTMLParser(strict=True).parse(html)  # raises on any parse error
    links = _Links()
    links.feed(html)
    assert not {"script", "img", "link", "style", "iframe", "object", "form"} & set(links.tags)
    assert "javascript:" not in html.lower() and "http://" not in html and "src=" not in html
    return links


def _mailto(href: str) -> tuple[str, str, str]:
    parts = urlsplit(href)
    assert parts.scheme == "mailto"
    query = parse_qs(parts.query, keep_blank_values=True)
    return unquote(parts.path), query["subject"][0], query["body"][0].replace("\r\n", "\n")


def _step_mails(world: World) -> list[tuple[Outbox, email.message.EmailMessage]]:
    with world.store.unit_of_work() as session:
        rows = list(session.scalars(select(Outbox).where(Outbox.kind == "step").order_by(Outbox.id)))
    return [(row, email.message_from_bytes(row.message, policy=email.policy.default)) for row in rows]


@pytest.fixture(scope="module", params=GAMES_BY_MAIL)
def played(request, tmp_path_factory):
    """A match of the game started through the real service: its step mails and state."""
    game = request.param
    root: Path = tmp_path_factory.mktemp(game)
    url = migrated_sqlite(root / "referee.db")
    world = World(root / "world", url, C._names(C.SPECS[game].season(), "NFC"))
    world.tick(START)
    with world.store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == "m1"))
        players = {seat.player.email: seat.player.key for seat in match.seats if seat.player.email}
        state = match.state
    yield game, _step_mails(world), state, players
    world.store.dispose()


def test_a_step_mail_is_text_then_html_and_the_text_part_is_unchanged(played):
    game, mails, _state, _players = played
    assert mails, game
    for row, msg in mails:
        body = msg.get_body(preferencelist=("plain",))
        assert body is not None
        text = body.get_content().replace("\r\n", "\n")
        html_part = msg.get_body(preferencelist=("html",))
        assert html_part is not None, (game, row.to_addr)
        alternative = next(p for p in msg.walk() if p.get_content_type() == "multipart/alternative")
        kinds = [p.get_content_type() for p in alternative.iter_parts()]
        assert kinds == ["text/plain", "text/html"]
        if row.form:  # the form stands in the text as it always did
            assert row.form.strip() in text


def test_the_html_part_parses_strictly_and_every_button_is_an_answer_the_game_accepts(played):
    game, mails, state, players = played
    engine = GAMES[game]
    buttons_seen: set[str] = set()
    for row, msg in mails:
        html = msg.get_body(preferencelist=("html",)).get_content()
        links = _check_html(html)
        buttons = [(href, label) for href, label in links.links if href.startswith("mailto:")]
        player = players[row.to_addr]
        if not row.form:
            assert not buttons, (game, row.to_addr)
            continue
        assert buttons, (game, row.to_addr)
        for href, label in buttons:
            address, subject, body = _mailto(href)
            assert address == str(msg["Reply-To"]).strip("<>")
            assert subject == "Re: " + str(msg["Subject"])
            parsed = engine.parse(state, player, body)
            assert parsed.moves, (game, label, body)
            for move in parsed.moves:
                assert engine.apply_move(state, player, move).accepted, (game, label, body)
            buttons_seen.add(label)
        # the text form (the player's current submission) is among the buttons or has its command
        first_line = row.form.strip().split("\n")[0]
        assert any(first_line in _mailto(href)[2] for href, _ in buttons), (game, first_line)
    assert EXPECTED[game] <= buttons_seen, (game, buttons_seen)


def test_the_duels_offer_call_fold_and_raise():
    game = GAMES["indian-poker"]
    state = game.initial_state(3, ["a", "b"], {})
    to_act = game.step(state).players[0]
    labels = [label for label, _ in answers_of(game, state, to_act)]
    assert "FOLD" in labels and any(lbl.startswith("RAISE") for lbl in labels)
    assert labels[0] in ("CALL", "CHECK")
    other = next(p for p in ("a", "b") if p != to_act)
    assert answers_of(game, state, other) == []


def test_the_nomination_offers_one_button_per_eligible_player():
    game = GAMES["nomination"]
    names = {"ec": "Eve Cole", "b": "Bo\u202eb Reversed", "c": "Chloé Dubois", "d": "Dana"}
    state = game.initial_state(5, ["ec", "b", "c", "d"], {"names": names})
    answers = answers_of(game, state, "ec")
    assert len(answers) == 3
    html = to_html(
        "Dear Eve,\n\nNominate a DMO.\n\n" + game.form(state, "ec") + "\n-- \nThe referee",
        subject="[Nomination n1] Nominate",
        reply_to="referee+tok@example.test",
        answers=answers,
        form=game.form(state, "ec"),
    )
    links = _check_html(html)
    nominated = set()
    for href, _label in links.links:
        _address, _subject, body = _mailto(href)
        (move,) = game.parse(state, "ec", body).moves
        assert game.apply_move(state, "ec", move).accepted
        nominated.add(move["nominate"])
    assert nominated == {"b", "c", "d"}


def test_html_escapes_everything_taken_from_the_text():
    html = to_html(
        "Dear <b>Bob</b> & co,\n\n<script>alert(1)</script>\n\n  a | b\n  1 | 2\n-- \nThe referee",
        subject="Hi <there>",
        reply_to="r+x@example.test",
        answers=[("FOLD & go", "FOLD\nStep: Hand 1")],
    )
    links = _check_html(html)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<pre" in html  # the indented table kept as laid out
    ((href, label),) = links.links
    assert label == "FOLD & go"
    assert _mailto(href) == ("r+x@example.test", "Re: Hi <there>", "FOLD\nStep: Hand 1")


def test_a_bulleted_list_with_hanging_indents_is_a_list_whose_wrapped_lines_reflow():
    """The templates' lists ("* " and a hanging indent; a line of its own inside an item at
    the item's text, its wrapped lines deeper): an HTML list on a phone, not a box of
    preformatted text that scrolls sideways."""
    text = (
        "=== Now: Preparation phase ===\n\n"
        "* Prepare a roulette for Bob to bet on in round 1.\n"
        "  Choose its winning colour (you may still choose Gold 5, Silver 5,\n"
        "    Black 5 more times) and place exactly 40 points.\n"
        "  Bob will see the points but not the winning colour.\n"
        "* There is nothing to bet on in the preparation phase; betting starts in\n"
        "  round 1.\n\n"
        "Your choices:\n- CALL\n- FOLD\n\n"
        "  a | b\n  1 | 2\n"
    )
    html = to_html(text, subject="s")
    _check_html(html)
    items = re.findall(r"<li[^>]*>(.*?)</li>", html, re.S)
    assert items == [
        "Prepare a roulette for Bob to bet on in round 1.<br>\nChoose its winning colour (you may still choose "
        "Gold 5, Silver 5, Black 5 more times) and place exactly 40 points.<br>\n"
        "Bob will see the points but not the winning colour.",
        "There is nothing to bet on in the preparation phase; betting starts in round 1.",
        "CALL",
        "FOLD",
    ]
    assert re.search(r"<p[^>]*>Your choices:</p>\s*<ul", html)
    assert html.count("<pre") == 1 and "a | b" in html  # a table stays laid out


def test_a_right_to_left_override_in_a_name_is_isolated():
    assert isolate("Alice Martin") == "Alice Martin"  # nothing to isolate in left-to-right text
    evil = "Bob \u202eevil"
    assert isolate(evil) == "\u2068" + evil + "\u2069"
    assert isolate("\u05d3\u05e0\u05d4") == "\u2068\u05d3\u05e0\u05d4\u2069"
    assert isolate("x\u2069\u202e") == "\u2068x\u202e\u2069"  # a stray PDI cannot close the isolate early
    assert re.fullmatch("\u2068[^\u2068\u2069]*\u2069", isolate("\u202eabc"))


def test_step_mails_link_the_match_page_when_the_archive_has_a_base_url(played):
    import dataclasses

    from referee.config import ArchiveSettings
    from referee.match.notices import Notices
    from referee.match.press import ARCHIVE_LINE, last_line

    game, mails, _state, _players = played
    assert all(ARCHIVE_LINE not in msg.get_body(("plain",)).get_content() for _, msg in mails)  # no base_url: no line
    base = "https://example.org/archive-of-a-rather-long-name/for-a-season-of-players/"
    config = _config()
    config = dataclasses.replace(config, archive=ArchiveSettings(dir=Path("site"), base_url=base))
    notices = Notices(config)

    class _Season:
        key = "test"

    class _Match:
        key = "m1"
        season = _Season()

    text = "Dear Ann,\n\nNews.\n\n-- \nThe referee (an automated service)\n"
    url = base + "seasons/test/matches/m1/"
    assert notices.match_url(_Match()) == url  # type: ignore[arg-type]
    linked = last_line(text, ARCHIVE_LINE, url)
    assert url in linked and ARCHIVE_LINE in linked
    assert linked.index(url) < linked.index("\n-- \n")  # near the end, before the signature
    assert all(len(line) <= 78 or len(line.split()) == 1 for line in linked.split("\n"))


def _config():  # type: ignore[no-untyped-def]
    import tempfile

    from referee.config import load_service_config

    folder = Path(tempfile.mkdtemp())
    (folder / "referee.toml").write_text(
        'database = "sqlite://"\nsecret = "test-secret-0123456789abcdef"\n'
        '[mail]\naddress = "referee@example.test"\ninbox = "inbox"\noutbox = "outbox"\n'
    )
    return load_service_config(folder / "referee.toml")


def test_other_mails_link_the_archive_s_page_for_players_when_it_has_a_base_url():
    import dataclasses

    from referee.config import ArchiveSettings
    from referee.match.notices import Notices
    from referee.match.press import GUIDE_LINE, last_line

    text = "Dear Ann,\n\nNews.\n\n-- \nThe referee (an automated service)\n"
    assert Notices(_config())._guide_url() is None  # no base_url: no line
    config = dataclasses.replace(_config(), archive=ArchiveSettings(dir=Path("site"), base_url="https://e.org/a/"))
    url = Notices(config)._guide_url()
    assert url == "https://e.org/a/players.html"
    linked = last_line(text, GUIDE_LINE, url)
    assert f"{GUIDE_LINE} https://e.org/a/players.html\n\n-- \n" in linked


def test_every_name_a_game_s_view_writes_is_isolated_too_but_in_the_form():
    """A game's own view (MatchJack's, Betting Minority's, the nomination's) names players as
    they are: the mail isolates every occurrence of a name that can turn a line around, once,
    and leaves the form's lines (which the player sends back) as written."""
    from referee.bidi import FSI, PDI, isolate_names
    from referee.match.press import _isolated

    evil = "Bob \u202eevil"
    text = f"Dear Ann,\n\n{evil} stays; {FSI}{evil}{PDI} too.\nNOMINATE {evil}\n"
    out, subject = _isolated(text, f"{evil}'s turn", ["Ann", evil], form=f"NOMINATE {evil}\n")
    assert out.count(FSI + evil + PDI) == 2 and FSI + FSI not in out
    assert out.endswith(f"\nNOMINATE {evil}\n")  # the form's line as written
    assert subject == f"{FSI}{evil}{PDI}'s turn"
    assert isolate_names("Ann and Dana", ["Ann", "Dana"]) == "Ann and Dana"  # left-to-right: unchanged


def test_a_text_read_once_gives_every_player_their_own_answers():
    """Stationary Roulette's parse reads the text alone: quick answers read a form text once
    and keep its moves; each state still decides what it accepts, and each caller gets moves
    of its own."""
    from referee.games import quick

    game = GAMES["stationary-roulette"]
    quick._READ.clear()
    state = game.initial_state(7, ["a", "b"], {})
    first = answers_of(game, state, "a")
    assert [label for label, _ in first] == ["Reply with the form"]
    text = first[0][1]
    assert (game.name, text) in quick._READ  # read once, kept
    assert answers_of(game, state, "a") == first  # the kept reading answers the same
    # the same text, in a state where its ROULETTE is no longer allowed (the preparation
    # round is over): the kept moves are tried on that state, and refused there
    later = state
    for player in ("a", "b"):
        (move,) = [m for m in game.parse(later, player, game.form(later, player)).moves if m["type"] == "roulette"]
        later = game.apply_move(later, player, move).state
    later = game.apply_timeout(later)
    assert not quick._accepted(game, later, "a", text)
    # a caller that changes its moves changes nobody else's
    moves = quick._moves(game, state, "a", text)
    moves[0]["points"]["Gold"] = 999
    assert quick._moves(game, state, "a", text)[0]["points"]["Gold"] != 999
