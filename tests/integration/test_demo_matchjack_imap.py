"""`referee demo --game matchjack --transport imap`: the six-player MatchJack demo over real
mail, on a loopback stack of its own (the session's `mailstack` fixture only says whether a
stack can run here), plays the match it plays on Maildirs."""

from __future__ import annotations

import io

from referee.cli import main
from referee.demo import run_demo

from ..demo_runs import shared_demo
from .conftest import MailStack
from .test_demo_imap import _gone, _stack_dir, _summary

SIX = ("alice", "bob", "chiara", "kenji", "priya", "tomas")


def test_matchjack_over_real_mail_plays_as_on_maildirs(
    mailstack: MailStack, tmp_path, tmp_path_factory, monkeypatch, capsys
) -> None:
    # on Maildirs: the run the other tests read (tests/demo_runs.py)
    on_disk = shared_demo(tmp_path_factory, "--game", "matchjack", "--seed", "5", "--dir", "{dir}")
    assert on_disk.code == 0, on_disk.out + on_disk.err
    by_mail = io.StringIO()
    assert run_demo(tmp_path / "imap", seed=5, game="matchjack", transport="imap", out=by_mail) == 0
    text = by_mail.getvalue()
    assert _summary(text) == _summary(on_disk.out)  # every event, hand and standing alike
    assert "Hand 1 (ante 1):" in text and " is the EC\n  ranking, best first: " in text
    assert "NOMINATE" not in text  # the match ends with its last hand: the nomination is the season's
    assert text.count("refused by mail") == 1 and "Every player's mailbox holds their mail" in text
    assert _gone(_stack_dir(text))
    copies = tmp_path / "imap" / "mail"
    for key in SIX:  # a mailbox each on the stack, copied into the demo folder
        assert len(list((copies / f"{key}@example.test" / "new").iterdir())) >= 15, key
    monkeypatch.chdir(tmp_path / "imap")
    capsys.readouterr()
    assert main(["status"]) == 0
    assert "demo-1" in (status := capsys.readouterr().out) and "finished" in status
