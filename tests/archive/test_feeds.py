"""The season feed's latest rounds (a lazy merge over matches, latest change first), the
cache of told rounds, and the feeds as Atom documents."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from datetime import timedelta

import pytest

from referee.archive import feeds
from referee.archive.feeds import RoundCache, ToldRound
from referee.archive.model import MatchStamp
from referee.archive.pages import Paths, round_page
from referee.archive.site import build

from .league import START, League, load, match_dict, season_dict

ATOM = "{http://www.w3.org/2005/Atom}"


def stamp(i: int, last_change) -> MatchStamp:
    return MatchStamp(i, f"m{i}", 1, "g", "finished", 1, 1, START, last_change, None, ("a", "b"))


def season(n: int, seed: int) -> tuple[list[MatchStamp], dict[str, list[ToldRound]]]:
    """``n`` matches with random rounds; each match's last change is its last round's close
    (or later)."""
    rnd = random.Random(seed)
    stamps, rounds = [], {}
    for i in range(n):
        times = sorted(START + timedelta(hours=rnd.randint(0, 50)) for _ in range(rnd.randint(0, 6)))
        rounds[f"m{i}"] = [ToldRound(f"m{i}", k + 1, at, f"t{k}", "x") for k, at in enumerate(times)]
        last = (times[-1] if times else START) + timedelta(hours=rnd.choice([0, 0, 3]))
        stamps.append(stamp(i, last))
    return stamps, rounds


@pytest.mark.parametrize("seed", range(20))
def test_the_latest_rounds_are_those_of_a_full_sort_reading_few_matches(seed):
    stamps, rounds = season(120, seed)
    asked: list[str] = []

    def rounds_of(chunk):
        asked.extend(s.key for s in chunk)
        return {s.key: rounds[s.key] for s in chunk}

    got = feeds.latest(stamps, rounds_of, 25)
    order = {s.key: i for i, s in enumerate(feeds.candidates(stamps))}
    everything = sorted(
        (r for rs in rounds.values() for r in rs), key=lambda r: (r.closed_at, -order[r.match], r.number), reverse=True
    )
    assert got == everything[:25]
    assert len(asked) == len(set(asked)) and len(asked) < len(stamps)  # each asked once, not all


def test_a_tie_goes_to_the_match_read_first_wherever_the_chunks_fall():
    at = START + timedelta(hours=5)
    stamps = [stamp(i, at) for i in range(45)]
    rounds = {s.key: [ToldRound(s.key, 1, at, "t", "x")] for s in stamps}
    got = feeds.latest(stamps, lambda chunk: {s.key: rounds[s.key] for s in chunk}, 30)
    assert [r.match for r in got] == [f"m{i}" for i in range(44, 14, -1)]  # the later id first


def test_no_rounds_no_entries():
    assert feeds.latest([stamp(1, None)], lambda chunk: pytest.fail("nothing to read"), 10) == []


def test_the_cache_gives_back_rounds_only_for_the_same_fingerprint():
    told = [ToldRound("m1", 1, START, "Round 1", "text <b>")]
    cache = RoundCache()
    cache.put("m1", "fp1", told)
    again = RoundCache(cache.stored(["m1", "gone"]))
    assert again.get("m1", "fp1") == told
    assert again.get("m1", "fp2") is None and again.get("gone", "fp1") is None
    assert RoundCache({"m1": {"fingerprint": "fp1", "rounds": [["x"]]}}).get("m1", "fp1") is None  # damaged


def test_the_feeds_are_atom_with_ids_and_links_of_the_site(store, tmp_path):
    load(store, season_dict([match_dict("m1", "indian-poker", ["alice", "bob"], seed=3)]))
    League(store).play("m1", random.Random(3))
    out = tmp_path / "site"
    build(store, out, now=START, base_url="https://example.org/archive/")
    season_feed = ET.parse(out / Paths.season_feed("s1")).getroot()
    match_feed = ET.parse(out / Paths.match_feed("s1", "m1")).getroot()
    season_ids = [e.findtext(f"{ATOM}id") for e in season_feed.iter(f"{ATOM}entry")]
    match_ids = [e.findtext(f"{ATOM}id") for e in match_feed.iter(f"{ATOM}entry")]
    assert season_ids and season_ids == match_ids  # one match: the same rounds, newest first
    assert season_ids[0].startswith("tag:example.org,") and season_ids[0].endswith(f"/m1/round-{len(match_ids)}")
    links = [e.find(f"{ATOM}link").get("href") for e in match_feed.iter(f"{ATOM}entry")]
    page, fragment = Paths.round("s1", "m1", "indian-poker", len(match_ids))  # the round on its page of the match
    assert page.endswith(f"/rounds-{round_page('indian-poker', len(match_ids))}.html")
    assert links[0] == f"https://example.org/archive/{page}#{fragment}"
    [self_link] = [link for link in match_feed.findall(f"{ATOM}link") if link.get("rel") == "self"]
    assert self_link.get("href") == "https://example.org/archive/seasons/s1/matches/m1/feed.atom"
    # without a base_url the links are relative to the feed itself
    build(store, tmp_path / "plain", now=START, full=True)
    plain = ET.parse(tmp_path / "plain" / Paths.season_feed("s1")).getroot()
    assert plain.find(f"{ATOM}entry/{ATOM}link").get("href").startswith("matches/m1/rounds-")
