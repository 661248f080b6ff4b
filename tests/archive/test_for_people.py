"""The archive is written for people (issue 22): for every game, every page of the built
site shows names, never ids (player keys, step keys); dates as the mails write them, never
ISO instants; no raw dictionary or JSON (but ``chain.json`` and the sealed moves' check
commands, which must be the exact committed line); silent participants named in their
match, never as its players; a right-to-left override in a name isolated."""

from __future__ import annotations

import html
import random
import re
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.archive.pages import FSI, PDI, named, step_title, when
from referee.bidi import isolate_names as isolate
from referee.archive.site import build
from referee.games import GAMES
from referee.store.models import Event, LedgerEntry

from .league import START, League, load, match_dict
from .test_leaks import PARTICIPANTS, season_of, seats

RLO_NAME = "Eve \u202ekciR"  # a right-to-left override, never closed


def visible(page: str) -> str:
    """What a reader sees of a page: no scripts, styles or tags (attributes such as a
    <time datetime> or an id are for machines), and no sealed move's check command."""
    page = re.sub(r'<script.*?</script>|<style.*?</style>|<code class="check">.*?</code>', " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def built(store, tmp_path: Path, game: str) -> tuple[Path, dict[str, str]]:
    """A season of ``game``: one finished match, one running, one not started."""
    matches = [match_dict(f"m{seed}", game, seats(game), seed=seed) for seed in range(3)]
    load(store, season_of(game, matches))
    league = League(store)
    league.play("m0", random.Random(game))
    league.play("m1", random.Random(game + "1"), events=6)
    out = tmp_path / "site"
    build(store, out, now=START, full=True)
    pages = {p.relative_to(out).as_posix(): p.read_text() for p in sorted(out.rglob("*.html"))}
    return out, pages


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_page_shows_names_dates_and_words_not_internals(store, tmp_path, game):
    _, pages = built(store, tmp_path, game)
    with store.unit_of_work() as session:
        steps = {k for (k,) in session.execute(select(Event.step_key).distinct()) if k}
        steps |= {k for (k,) in session.execute(select(LedgerEntry.step_key).distinct()) if k}
    # the step keys a reader could take for a word ("marker", "start") are words: the ids
    # are those with a digit or a dash
    ids = sorted((k for k in steps if re.search(r"[\d-]", k)), key=len, reverse=True)
    keys = ["alice", "bob", "dave"] + [p["id"] for p in PARTICIPANTS]  # carol's name is HTML
    step_pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, ids)) + r")(?![\w-])")
    key_pattern = re.compile(r"(?<![\w@./-])(" + "|".join(keys) + r")(?![\w@-])")
    assert any("/matches/m0/" in path for path in pages)
    for path, page in pages.items():
        text = visible(page)
        for raw in ("{'", '":', "': "):
            assert raw not in text, (path, raw, text[max(0, text.find(raw) - 80) : text.find(raw) + 80])
        iso = re.search(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d", text)
        assert iso is None, (path, text[max(0, iso.start() - 80) : iso.end() + 20])
        step = step_pattern.search(text) if ids else None
        assert step is None, (path, text[max(0, step.start() - 80) : step.end() + 20])
        key = key_pattern.search(text)
        assert key is None, (path, text[max(0, key.start() - 80) : key.end() + 20])
        for account in ("pot-main", "pot-lost", "Total in match", "cols awarded", "garnets awarded"):
            assert account not in text, (path, account)


def test_a_finished_matchjack_words_its_result(store, tmp_path):
    _, pages = built(store, tmp_path, "matchjack")
    text = visible(pages["seasons/s1/matches/m0/index.html"])
    assert "CoLs awarded" in text and "Chips at the end" in text and "Left the match" in text
    assert "The EC (elimination candidate):" in text
    assert re.search(r"Place Chips at the end Left the match CoLs awarded", text)


def test_silent_participants_are_named_in_their_match_never_as_players(store, tmp_path):
    _, pages = built(store, tmp_path, "betting-minority")
    schedule = visible(pages["seasons/s1/schedule/page-1.html"])
    assert "Alice v Bob and 10 participants" in schedule
    assert "Participant 1 " not in schedule and "v Participant" not in schedule
    match = visible(pages["seasons/s1/matches/m0/index.html"])
    assert re.search(r"Alice v Bob ?; participants: Participant 1 ?, Participant 2", match)
    index = visible(pages["index.html"])
    silent = sum("email" not in p for p in PARTICIPANTS)
    assert re.search(rf"Test season\s+{4 + len(PARTICIPANTS) - silent}\s", index)
    part = visible(pages["seasons/s1/players/part1.html"])
    assert "is a participant, not a player of the season" in part


def test_a_right_to_left_override_in_a_name_is_isolated(store, tmp_path):
    data = season_of("stationary-roulette", [match_dict("m0", "stationary-roulette", ["alice", "bob"], seed=1)])
    data["players"][0]["name"] = RLO_NAME
    load(store, data)
    League(store).play("m0", random.Random(1))
    out = tmp_path / "site"
    build(store, out, now=START, full=True)
    escaped = html.escape(RLO_NAME, quote=False)
    pages = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*.html")}
    shown = 0
    for path, page in pages.items():
        # wherever the name is on a page, it is inside <bdi>...</bdi>, or in a chart between
        # the Unicode isolates (or in an attribute or the <title>, which end at their quote or tag)
        for found in re.finditer(re.escape(escaped), page):
            before = page[: found.start()]
            if before.rfind("<title>") > before.rfind("</title>") or re.search(r'="[^"]*$', before[-200:]):
                continue
            if before.rfind("<svg") > before.rfind("</svg>"):  # a chart's text: no markup, the isolates
                assert before.endswith(FSI) and page[found.end() :].startswith(PDI), (path, before[-100:])
            else:
                assert before.endswith("<bdi>"), (path, page[found.start() - 100 : found.end() + 20])
            shown += 1
    assert shown > 10
    feed = (out / "seasons/s1/matches/m0/feed.atom").read_text()
    assert RLO_NAME in feed
    assert RLO_NAME not in feed.replace(FSI + RLO_NAME + PDI, "")


def test_every_step_a_game_opens_is_titled_as_its_mails_title_it():
    """The archive names a step by its key alone (the ledger, the events): each game's
    ``GameType.step_titles`` gives the title its mails use, for every step the conformance
    playouts open (MatchJack's waiting steps add what they wait for)."""
    from referee.games.base import open_steps
    from tests.games.test_conformance import playouts

    for name in GAMES:
        seen = 0
        for out in playouts(name, first=3):
            for state in out.states:
                for step in open_steps(out.game, state):
                    title = step_title(step.key, name)
                    assert title == step.title or step.waiting and step.title.startswith(title + ":"), (
                        name,
                        step.key,
                        step.title,
                        title,
                    )
                    seen += 1
            # ... and every step a transfer or a deadline names (the ledger's and the events' keys)
            keys = {t["step"] for t in out.states[-1]["transfers"] if t.get("step")}
            keys |= {e.step_key for e in out.events if e.step_key}
            assert all(step_title(key, name) != "a step of the match" for key in keys), (name, keys)
        assert seen, name


def test_the_helpers():
    assert str(when("2026-12-09T18:00:00.000000Z")).endswith(">Wed 9 Dec 2026, 18:00 UTC</time>")
    assert str(when(START)).endswith(">Tue 1 Dec 2026, 18:00 UTC</time>")
    assert step_title("h3-main-bet1-2", "matchjack") == "Hand 3, Main table, betting round 1, turn 2"
    assert step_title("hand-1-1", "indian-poker") == "Hand 1, action 1"
    assert step_title("h1-stay", "matchjack") == "Hand 1, stay or fold"
    assert step_title("r2-send-4", "betting-minority") == "Round 2, placement 4"
    assert step_title("round-0", "stationary-roulette") == "Preparation phase"
    assert step_title("round-3", "stationary-roulette") == "Round 3 of 10"
    assert step_title("round-3-turn-2", "rewind-holdem") == "Round 3, turn 2"
    assert step_title("col-2", "nomination") == "Certificate of life"
    assert step_title("start", "matchjack") == "The start"
    assert step_title("something-odd-7", "matchjack") == "a step of the match"
    assert step_title("h3-main-bet1-2", "stationary-roulette") == "a step of the match"  # another game's key
    assert step_title(None, "matchjack") == ""
    names = {"alice": "Alice <A>", "bob": "Bob"}
    assert str(named("alice wins 12 chips from bob.", names)) == (
        "<bdi>Alice &lt;A&gt;</bdi> wins 12 chips from <bdi>Bob</bdi>."
    )
    assert str(named("alice@example.test is no player", names)) == "alice@example.test is no player"
    assert isolate("Bob beats Alice", ["Bob", "Alice"]) == "Bob beats Alice"  # nothing to turn around
    assert isolate(f"{RLO_NAME} wins", [RLO_NAME]) == f"{FSI}{RLO_NAME}{PDI} wins"
