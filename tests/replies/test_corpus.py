"""Issue 20's goal on our reply corpus (``tests/replies/corpus.py``): replies to the real
mails of all five games, of five kinds, in the shapes of real clients: no wrong move ever
recorded, at most 1% of the right moves refused, and every refusal quoting only the
player's own lines. One test per game, so that xdist runs them side by side; the table is
printed (``pytest -s``) and is the failure message."""

from __future__ import annotations

import unicodedata

import pytest

from . import corpus as C

REFUSED_SHARE = 0.01


@pytest.fixture(scope="module")
def all_cases() -> list[C.Case]:
    return C.cases()


def test_the_corpus_has_every_game_kind_name_form_mail_and_real_client(all_cases):
    assert len(all_cases) >= 600
    assert {c.game for c in all_cases} == set(C.GAME_NAMES)
    assert {c.kind for c in all_cases} == set(C.KINDS)
    assert {c.name_form for c in all_cases} == set(C.NAME_FORMS)
    assert {c.mail_kind for c in all_cases} == set(C.MAIL_KINDS)
    for game in C.GAME_NAMES:  # every game: both name forms and every mail kind, for every kind
        mine = [c for c in all_cases if c.game == game]
        for kind in C.KINDS:
            assert {(c.name_form, c.mail_kind) for c in mine if c.kind == kind} == {
                (f, m) for f in C.NAME_FORMS for m in C.MAIL_KINDS
            }, (game, kind)
    reals = C.real_clients()
    assert reals, "no real client available (tests/replies/real_clients.py)"
    assert {c.shape for c in all_cases if c.real} == set(reals)
    assert unicodedata.normalize("NFD", C.ACTOR_NAME) != C.ACTOR_NAME  # the NFD form differs indeed


@pytest.mark.parametrize("game", C.GAME_NAMES)
def test_replies_as_people_write_them(all_cases, game):
    results = C.run([c for c in all_cases if c.game == game], games=(game,))
    report = C.table(results)
    print(f"\n{report}")
    wrong = [r for r in results if r.outcome == C.WRONG]
    answered = [r for r in results if r.outcome == C.ANSWERED_WRONGLY]
    ours = [r for r in results if r.ours_quoted]
    moves = [r for r in results if r.case.kind in C.MOVE_KINDS and r.outcome != C.CLIENT_DROPPED]
    refused = [r for r in moves if r.outcome == C.REFUSED]
    assert not wrong, report
    assert not answered, report
    assert not ours, report
    assert len(refused) <= REFUSED_SHARE * len(moves), report


def test_the_real_clients_send_what_the_player_edited(all_cases):
    """Not the reader's test: a real client run (real_clients.py) that sends the draft without
    the player's edit makes its case meaningless; listed here so it is never silent."""
    real = [c for c in all_cases if c.real and c.kind == "C" and c.mail_kind == "receipt"]
    results = C.run(real, games=tuple(dict.fromkeys(c.game for c in real)))
    dropped = [r.case.id for r in results if r.outcome == C.CLIENT_DROPPED]
    assert not dropped, dropped
