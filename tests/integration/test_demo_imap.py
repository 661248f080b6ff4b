"""`referee demo --transport imap`: the demo over real mail, on a loopback stack of its own
(started and removed by the demo; the session's `mailstack` fixture only says whether a
stack can run here: root and the packages, else the tests skip)."""

from __future__ import annotations

import email
import email.policy
import hashlib
import io
import re
import subprocess
from pathlib import Path

import pytest

from referee.cli import main
from referee.demo import run_demo

from ..demo_runs import shared_demo
from .conftest import MailStack

DUELS = ("indian-poker", "rewind-holdem")


def _summary(text: str) -> list[str]:
    """The rounds and the standings, as the demo prints them."""
    return [line for line in text.splitlines() if line.startswith("  ") or re.match(r"^[A-Z][^:]*:$", line)]


def _stack_dir(text: str) -> Path:
    return Path(re.search(r"in (/tmp/mailstack-\S+), for this demo only", text).group(1))


def _gone(stack_dir: Path) -> bool:
    """The directory removed, and no Dovecot process of that stack left (by its instance name)."""
    instance = "mailstack-" + hashlib.md5(f"{stack_dir}\n".encode()).hexdigest()[:8]
    running = subprocess.run(["pgrep", "-f", f"^dovecot-{instance}/"], capture_output=True, check=False)
    return not stack_dir.exists() and running.returncode == 1


def test_the_demo_over_real_mail_plays_the_match_it_plays_on_maildirs(
    mailstack: MailStack, tmp_path, tmp_path_factory, monkeypatch, capsys
) -> None:
    # on Maildirs: the run the other tests read (tests/demo_runs.py)
    on_disk, by_mail = shared_demo(tmp_path_factory, "--seed", "7", "--dir", "{dir}"), io.StringIO()
    assert on_disk.code == 0, on_disk.out + on_disk.err
    assert run_demo(tmp_path / "imap", seed=7, transport="imap", out=by_mail) == 0
    text = by_mail.getvalue()
    assert _summary(text) == _summary(on_disk.out)
    assert "Round 10 of 10:" in text and "-> Black" in text and "rejected by mail: Problem:" in text
    assert "bob missed the deadline" in text
    assert re.search(r"^\d+ mails from the referee went out by SMTP", text, re.MULTILINE)
    assert re.search(r"^22 replies from the players were read by IMAP", text, re.MULTILINE)
    assert _gone(_stack_dir(text))  # stopped and removed at the end
    copies = tmp_path / "imap" / "mail"
    assert len(list((copies / "bob@example.test" / "new").iterdir())) >= 11 + 10 + 1  # prompts, receipts, error
    assert sum(1 for p in (copies / "referee@example.test" / ".Processed").rglob("*") if p.is_file()) == 22
    monkeypatch.chdir(tmp_path / "imap")
    capsys.readouterr()
    assert main(["status"]) == 0
    assert "demo-1" in (status := capsys.readouterr().out) and "finished" in status


@pytest.mark.parametrize("game", DUELS)
def test_a_duel_over_real_mail(mailstack: MailStack, tmp_path, capsys, game) -> None:
    assert main(["demo", "--transport", "imap", "--game", game, "--dir", str(tmp_path / "duel"), "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "RAISE 999: refused by mail (Problem: RAISE 999 is too much" in out
    assert "no answer from bob by the deadline: the default applies" in out
    assert "Final standings:" in out and " 0 chips" in out and " 50 chips" in out
    assert out.count("refused by mail") == 1
    assert _gone(_stack_dir(out))


def test_betting_minority_over_real_mail_plays_as_on_maildirs(mailstack: MailStack, tmp_path, tmp_path_factory) -> None:
    """The 8-round match over real mail: the same play as on Maildirs, and the participants
    with an address have each one mail, their list, in their own IMAP mailbox."""
    # on Maildirs: the run the other tests read (tests/demo_runs.py)
    on_disk = shared_demo(tmp_path_factory, "--game", "betting-minority", "--seed", "5", "--dir", "{dir}")
    assert on_disk.code == 0, on_disk.out + on_disk.err
    by_mail = io.StringIO()
    assert run_demo(tmp_path / "imap", seed=5, game="betting-minority", transport="imap", out=by_mail) == 0
    text = by_mail.getvalue()
    assert _summary(text) == _summary(on_disk.out)
    assert "Round 8 paid out" in text and "could be any of 2 participants" in text
    assert "hold one mail each, their list" in text
    assert _gone(_stack_dir(text))
    copies = tmp_path / "imap" / "mail"
    for participant in ("jose", "annlee", "chen", "ngozi"):
        (mail,) = (copies / f"{participant}@example.test" / "new").iterdir()
        message = email.message_from_bytes(mail.read_bytes(), policy=email.policy.default)
        assert "=== Your list ===" in message.get_body(("plain",)).get_content()


def test_the_stack_is_removed_when_the_demo_fails(mailstack: MailStack, tmp_path, monkeypatch) -> None:
    import referee.games.stationary_roulette.demo as roulette_demo

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the middle of the match")

    monkeypatch.setattr(roulette_demo, "round_summary", broken)
    out = io.StringIO()
    with pytest.raises(RuntimeError, match="a bug"):
        run_demo(tmp_path / "d", seed=7, transport="imap", out=out)
    assert _gone(_stack_dir(out.getvalue()))
