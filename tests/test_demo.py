"""`referee demo`: a whole match by mail with a Black round, a rejected bet and a missed deadline."""

from __future__ import annotations

import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from referee.cli import main
from referee.demo import run_demo
from tests.archive.match_files import match_html
from tests.demo_runs import shared_demo


def test_demo_plays_a_full_match_by_mail(tmp_path, monkeypatch, capsys):
    out = io.StringIO()
    assert run_demo(tmp_path / "demo", seed=7, out=out) == 0
    text = out.getvalue()
    assert "Preparation phase:" in text and "Round 10 of 10:" in text
    assert "-> Black" in text and "(Black take)" in text
    assert "rejected by mail: Problem:" in text
    assert "bob missed the deadline" in text and "inactivity fee" in text
    assert "Final standings:" in text
    outbox = tmp_path / "demo" / "mail" / "outbox"
    assert len(list((outbox / "bob@demo.test" / "new").iterdir())) >= 11 + 10 + 1  # prompts, receipts, error
    # it ends by building the archive of its season and saying where to open it
    site = tmp_path / "demo" / "archive"
    assert f"open {(site / 'index.html').as_uri()}" in text
    match_page = site / "seasons" / "demo" / "matches" / "demo-1" / "index.html"
    assert match_page.is_file() and "Round 10" in match_page.read_text()
    # the folder works for later commands
    monkeypatch.chdir(tmp_path / "demo")
    capsys.readouterr()
    assert main(["status"]) == 0
    status = capsys.readouterr().out
    assert "demo-1" in status and "finished" in status
    assert main(["tick"]) == 0
    # and the archive commands work on it as printed: verify, replay, an incremental build
    assert main(["archive", "verify", "--site", "archive"]) == 0
    assert main(["replay", "demo-1"]) == 0
    capsys.readouterr()
    assert main(["archive", "build"]) == 0
    assert "0 written" in capsys.readouterr().out


def test_demo_refuses_a_folder_that_is_not_a_demo(tmp_path, capsys):
    (tmp_path / "precious.txt").write_text("keep me")
    assert main(["demo", "--dir", str(tmp_path)]) == 2
    assert "not a demo folder" in capsys.readouterr().err
    assert (tmp_path / "precious.txt").exists()


@pytest.mark.parametrize("seed", [1, 2])
def test_demo_runs_again_in_the_same_folder_and_with_other_seeds(tmp_path, seed):
    assert run_demo(tmp_path / "d", seed=seed, out=io.StringIO()) == 0
    assert run_demo(tmp_path / "d", seed=seed, out=io.StringIO()) == 0


def try_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith("Try: ")]
    assert len(lines) == 1, text
    return lines[0][len("Try: ") :]


def run_printed(command: str, cwd, env) -> subprocess.CompletedProcess:
    return subprocess.run(shlex.split(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_printed_status_command_works_as_printed_without_referee_on_path(tmp_path):
    """`referee demo` run by its full path, as the README does: the hint names that path."""
    script = Path(sys.executable).with_name("referee")
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != script.parent)
    env = {**os.environ, "PATH": path}
    env.pop("REFEREE_CONFIG", None)
    demo = subprocess.run([str(script), "demo"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert demo.returncode == 0, demo.stderr
    command = try_line(demo.stdout)
    assert command == f"{script} --config ./referee-demo/referee.toml status"
    status = run_printed(command, tmp_path, env)
    assert status.returncode == 0, status.stderr
    assert "demo-1" in status.stdout and "finished" in status.stdout


def test_the_printed_status_command_works_with_referee_on_path(tmp_path, monkeypatch):
    script = Path(sys.executable).with_name("referee")
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("REFEREE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert run_demo(tmp_path / "my demo", seed=3, out=out) == 0
    command = try_line(out.getvalue())
    assert command == "referee --config './my demo/referee.toml' status"
    status = run_printed(command, tmp_path, dict(os.environ))
    assert status.returncode == 0, status.stderr
    assert "demo-1" in status.stdout


def test_the_printed_status_command_uses_an_absolute_path_outside_the_current_folder(tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    out = io.StringIO()
    assert run_demo(tmp_path / "elsewhere", seed=3, out=out) == 0
    command = try_line(out.getvalue())
    assert f" --config {tmp_path / 'elsewhere' / 'referee.toml'} status" in command
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_CONFIG"}
    status = run_printed(command, here, env)
    assert status.returncode == 0, status.stderr


@pytest.mark.parametrize("game", ["indian-poker", "rewind-holdem"])
def test_demo_plays_a_whole_duel_by_mail(tmp_path_factory, monkeypatch, capsys, game):
    """`referee demo --game ...`: a duel to its end, with a refused command and a missed turn."""
    # played once by the CLI for this test and the browser's (tests/demo_runs.py)
    run = shared_demo(tmp_path_factory, "--game", game, "--seed", "5", "--dir", "{dir}")
    out = run.out
    assert run.code == 0, out + run.err
    assert "RAISE 999: refused by mail (Problem: RAISE 999 is too much" in out
    assert "no answer from bob by the deadline: the default applies" in out
    assert "Final standings:" in out and " 0 chips" in out and " 50 chips" in out
    assert out.count("refused by mail") == 1  # every other command answered the right mail
    monkeypatch.chdir(run.folder)
    assert main(["status"]) == 0
    status = capsys.readouterr().out
    assert "demo-1" in status and "finished" in status


def test_demo_plays_a_whole_betting_minority_match_by_mail(tmp_path_factory, monkeypatch, capsys):
    """`referee demo --game betting-minority`: 8 rounds by mail, with an ambiguous name, a send
    to two rooms, a bet over the cap and a missed betting turn; each participant with an
    address holds one mail, their list, and nothing of anyone else's."""
    from referee.games.betting_minority.demo import PARTICIPANTS
    from referee.games import GAMES
    from referee.mail.client import ScriptedClient
    from referee.store.db import Store
    from referee.store.models import Match

    # played once by the CLI for this test, the browser's and the IMAP one's (tests/demo_runs.py)
    run = shared_demo(tmp_path_factory, "--game", "betting-minority", "--seed", "5", "--dir", "{dir}")
    folder, out = run.folder, run.out
    assert run.code == 0, out + run.err
    assert "Betting Minority, alice (EC) vs bob (DMO), 10 participants (4 with an address), seed 5" in out
    assert "Round 1 paid out" in out and "Round 8 paid out" in out
    # the result, the archive and the status command
    assert "Final standings:" in out and "rounds finished: 8 of 8" in out
    assert "The archive of the season (" in out
    assert len([line for line in out.splitlines() if line.startswith("Try: ")]) == 1
    # the script: "Ann" names two participants (an error, then the whole name), the same
    # participant sent to two rooms goes to the third, a bet over the cap costs a chip, a
    # missed betting turn is extended and answered in the extension
    assert "bob SEND Ann TO " in out and "'Ann' could be any of 2 participants: P2 Ann Lee, P3 Ann Smith" in out
    corrected = r"^  Round 1, placement 1: alice SEND P\d+ TO \w+; bob SEND Ann (Lee|Smith) TO "
    assert re.search(corrected, out, re.MULTILINE)
    clash = next(line for line in out.splitlines() if line.startswith("  Round 1, placement 3: "))
    assert clash.endswith("(sent to two rooms: the third)")
    assert "refused by mail: it costs the penalty chip (Problem: Your bet totals" in out
    assert "Round 3, betting turn" in out and "no bet from bob by the deadline: a missed betting turn" in out
    assert "the turn is extended by 16 hours" in out and re.search(r"\(extended\): bob (CALL|RAISE) ", out)
    assert "bob loses " in out and " for the missed turn" in out
    assert out.count("refused by mail") == 2  # every other command was recorded
    # names: by short id (alice), by name without its accents (bob)
    assert re.search(r"alice SEND P\d+ TO", out)
    assert re.search(r"bob SEND (Jose Nunez|Francois Dupre|Zoe Angstrom|Bjorn Larsson|Siobhan Kelly)", out)
    assert "hold one mail each, their list; the 6 participants without an address were never mailed" in out

    # the participants' mailboxes: one mail each, their own list, no one else's entries
    store = Store(f"sqlite:///{folder / 'referee.db'}")
    with store.unit_of_work() as session:
        match = session.query(Match).filter_by(key="demo-1").one()
        state, status, result = match.state, match.status, match.result
    store.dispose()
    assert status == "finished" and len(state["history"]) == 8
    assert f"\n  {result['reason']}\n" in out and re.match(r"(Alice|Bob) wins: ", result["reason"])
    outbox = folder / "mail" / "outbox"
    names = {"EC": "Alice", "DMO": "Bob"}
    for key, (name, _tz, address) in PARTICIPANTS.items():
        mailbox = outbox / f"{key}@demo.test"
        if not address:
            assert not mailbox.exists(), f"{key} has no address and was mailed"
            continue
        [mail] = ScriptedClient(f"{key}@demo.test", name, mailbox, folder / "mail" / "inbox").all()
        short = f"P{state['participants'].index(key) + 1}"
        assert mail.subject.endswith(f"Your list: you are {short} in this match")
        entries = re.findall(r"^  Round (\d): (Alice|Bob) \((EC|DMO)\)$", mail.text, re.MULTILINE)
        assert [(int(r), n, role) for r, n, role in entries] == [
            (i + 1, names[role], role) for i, role in enumerate(state["lists"][key])
        ]
        others = [n for k, (n, _, _) in PARTICIPANTS.items() if k != key]
        assert not [n for n in others if n in mail.text], "a participant's mail names another participant"
    public = GAMES["betting-minority"].view(state, None)
    assert {p["short"] for p in public["participants"]} == {f"P{i}" for i in range(1, 11)}

    # the folder works for later commands: status, archive verify --site, replay
    monkeypatch.chdir(folder)
    capsys.readouterr()
    assert main(["status"]) == 0
    status_text = capsys.readouterr().out
    assert "demo-1" in status_text and "finished" in status_text
    assert "no address (never mailed): annsmith, bjorn, francois, siobhan, martins, zoe" in status_text
    assert main(["archive", "verify", "--site", "archive"]) == 0
    assert main(["replay", "demo-1"]) == 0
    page = match_html(folder / "archive", "demo", "demo-1")  # the match's page and its rounds' pages
    assert "Rooms of round 8" in page and "José Núñez" in page and 'id="chips-chart-title"' in page


@pytest.mark.parametrize("seed", [1, 7])
def test_the_betting_minority_demo_plays_its_whole_script_with_other_seeds(tmp_path, seed):
    out = io.StringIO()
    assert run_demo(tmp_path / "bm", seed=seed, game="betting-minority", out=out) == 0
    text = out.getvalue()
    assert "Round 8 paid out" in text and text.count("refused by mail") == 2
    assert "could be any of 2 participants" in text and "it costs the penalty chip" in text
    assert "no bet from bob by the deadline" in text and "hold one mail each, their list" in text


# ---------------------------------------------------------------------------- over real mail
# (the demo itself over IMAP and SMTP: tests/integration/test_demo_imap.py)


def test_the_demo_over_real_mail_without_root_says_to_use_sudo(tmp_path, monkeypatch, capsys):
    from referee.demo import mail as demo_mail

    monkeypatch.setattr(demo_mail, "missing_programs", lambda: [])
    monkeypatch.setattr(demo_mail, "_is_root", lambda: False)
    assert main(["demo", "--transport", "imap", "--dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "must be started as root" in err and "sudo" in err and "referee demo --transport imap" in err
    assert not (tmp_path / "d").exists()  # nothing was made


def test_the_demo_over_real_mail_says_what_to_run_when_dovecot_and_postfix_are_missing(tmp_path, monkeypatch, capsys):
    from referee.demo import mail as demo_mail
    from referee.mailstack import INSTALL_SCRIPT

    monkeypatch.setattr(demo_mail, "missing_programs", lambda: ["dovecot", "postfix"])
    assert main(["demo", "--transport", "imap", "--dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "dovecot, postfix is not installed" in err
    assert f"sudo bash {INSTALL_SCRIPT}" in err and "--transport imap --install" in err
    marker = tmp_path / "installed"
    _fake_installer(tmp_path, monkeypatch, f"touch {marker}\n")
    assert main(["demo", "--transport", "imap", "--dir", str(tmp_path / "d")]) == 2
    assert not marker.exists()  # without --install nothing is installed


def test_install_is_only_for_the_demo_over_real_mail(tmp_path, capsys):
    assert main(["demo", "--install", "--dir", str(tmp_path / "d")]) == 2
    assert "add --transport imap" in capsys.readouterr().err


def _fake_installer(tmp_path, monkeypatch, body: str) -> Path:
    from referee.demo import mail as demo_mail

    script = tmp_path / "install-mailstack.sh"
    script.write_text(body)
    monkeypatch.setattr(demo_mail, "INSTALL_SCRIPT", script)
    monkeypatch.setattr(demo_mail, "_is_root", lambda: True)
    return script


def test_install_runs_the_install_script_and_checks_again(tmp_path, monkeypatch):
    from referee.demo import mail as demo_mail

    marker = tmp_path / "installed"
    _fake_installer(tmp_path, monkeypatch, f"echo apt output\ntouch {marker}\necho 'mailstack packages installed'\n")
    monkeypatch.setattr(demo_mail, "missing_programs", lambda: [] if marker.exists() else ["postfix"])
    out = io.StringIO()
    demo_mail.ensure_packages(install=True, out=out)
    assert marker.exists()
    assert "installing Dovecot and Postfix (postfix missing)" in out.getvalue()
    assert out.getvalue().rstrip().endswith("mailstack packages installed")


def test_an_install_that_fails_says_why(tmp_path, monkeypatch):
    from referee.demo import mail as demo_mail
    from referee.config import ConfigError

    _fake_installer(tmp_path, monkeypatch, "echo 'E: Unable to locate package dovecot-imapd' >&2\nexit 1\n")
    monkeypatch.setattr(demo_mail, "missing_programs", lambda: ["dovecot"])
    with pytest.raises(ConfigError, match="exit 1") as failed:
        demo_mail.ensure_packages(install=True, out=io.StringIO())
    assert "Unable to locate package dovecot-imapd" in str(failed.value)


def test_the_mail_stack_scripts_are_found():
    from referee.mailstack import INSTALL_SCRIPT, SCRIPT

    assert SCRIPT.is_file() and INSTALL_SCRIPT.is_file() and SCRIPT.parent == INSTALL_SCRIPT.parent


def test_the_demo_writes_a_configuration_for_imap_and_smtp_on_the_stack(tmp_path):
    from datetime import datetime, timezone

    from referee.config import load_service_config
    from referee.demo.files import write_files
    from referee.mailstack import MailStack

    stack = MailStack(dir=tmp_path / "stack", imap_port=10143, smtp_port=10025, lmtp_port=10024)
    write_files(tmp_path, datetime(2026, 12, 1, 18, tzinfo=timezone.utc), 7, stack=stack)
    config = load_service_config(tmp_path / "referee.toml")
    assert (config.mail.transport, config.mail.outbound) == ("imap", "smtp")
    assert config.mail.address == "referee@example.test"
    assert (config.mail.imap.host, config.mail.imap.port, config.mail.imap.security) == ("127.0.0.1", 10143, "none")
    assert (config.mail.imap.username, config.mail.imap.password) == ("referee@example.test", "secret")
    assert (config.mail.smtp.port, config.mail.smtp.security, config.mail.smtp.username) == (10025, "none", None)
    season = (tmp_path / "season.toml").read_text()
    assert 'email = "alice@example.test"' in season and 'email = "bob@example.test"' in season


class FakeNow:
    def __init__(self, at):
        self.at = at

    def __call__(self):
        return self.at


def test_the_demo_clock_runs_at_real_speed_and_skips_ahead_never_back():
    from datetime import datetime, timedelta, timezone

    from referee.demo.mail import DemoClock

    real = FakeNow(datetime(2026, 12, 1, 16, 30, 0, 250000, tzinfo=timezone.utc))
    start = datetime(2026, 12, 1, 16, tzinfo=timezone.utc)
    clock = DemoClock(start, real=real)
    real.at += timedelta(seconds=2)
    assert clock.now() == start + timedelta(seconds=2)
    clock.skip_to(start + timedelta(hours=3))
    assert clock.now() == start + timedelta(hours=3)
    real.at += timedelta(seconds=1)
    assert clock.now() == start + timedelta(hours=3, seconds=1)
    clock.skip_to(start + timedelta(hours=1))  # behind: nothing changes
    assert clock.now() == start + timedelta(hours=3, seconds=1)


def test_the_demo_clock_reads_a_mails_arrival_by_the_skip_it_came_after():
    from datetime import datetime, timedelta, timezone

    from referee.demo.mail import DemoClock

    t0 = datetime(2026, 12, 1, 16, 30, 0, 600000, tzinfo=timezone.utc)
    real = FakeNow(t0)
    start = datetime(2026, 12, 1, 16, tzinfo=timezone.utc)
    clock = DemoClock(start, real=real)
    early = t0.replace(microsecond=0) + timedelta(seconds=1)  # INTERNALDATE: whole seconds
    real.at = t0 + timedelta(seconds=5)
    clock.skip_to(start + timedelta(hours=3))  # skipped at t0 + 5.6 s
    assert clock.arrival(early) == start + timedelta(seconds=0.4)  # came before the skip
    # came right after the skip: its INTERNALDATE (t0 + 5 s) is before it, but not the skip before
    assert clock.arrival(t0.replace(microsecond=0) + timedelta(seconds=5)) == start + timedelta(hours=3)
    assert clock.arrival(t0.replace(microsecond=0) + timedelta(seconds=8)) == start + timedelta(hours=3, seconds=2.4)


async def test_the_shifted_source_dates_mail_on_the_demo_clock_and_leaves_the_rest_to_its_source():
    from dataclasses import dataclass
    from datetime import datetime, timedelta, timezone

    from referee.demo.mail import DemoClock, ShiftedSource

    @dataclass(frozen=True)
    class Item:
        key: str
        delivered_at: datetime

    class Source:
        path = "imap://referee@127.0.0.1:1/INBOX"

        def __init__(self):
            self.calls = []

        async def pending(self):
            return [Item("imap:INBOX:1:7", real.at.replace(microsecond=0))]

        async def read(self, item):
            self.calls.append(("read", item.key))
            return b"raw"

        async def mark_processed(self, item):
            self.calls.append(("mark", item.key))

        async def close(self):
            self.calls.append(("close",))

    real = FakeNow(datetime(2026, 12, 1, 16, 30, 5, tzinfo=timezone.utc))
    start = datetime(2026, 12, 1, 16, tzinfo=timezone.utc)
    inner = Source()
    source = ShiftedSource(inner, DemoClock(start, real=real))
    [item] = await source.pending()
    assert item == Item("imap:INBOX:1:7", start) and source.path == inner.path
    assert await source.read(item) == b"raw"
    await source.mark_processed(item)
    await source.close()
    assert inner.calls == [("read", "imap:INBOX:1:7"), ("mark", "imap:INBOX:1:7"), ("close",)]
    real.at += timedelta(minutes=1)
    assert [i.delivered_at for i in await source.pending()] == [start + timedelta(minutes=1)]


def test_the_demo_over_real_mail_refuses_a_folder_that_is_not_a_demo_before_starting_anything(
    tmp_path, monkeypatch, capsys
):
    from referee.demo import mail as demo_mail

    started = []
    monkeypatch.setattr(demo_mail, "ensure_packages", lambda **kwargs: started.append(kwargs))
    (tmp_path / "precious.txt").write_text("keep me")
    assert main(["demo", "--transport", "imap", "--dir", str(tmp_path)]) == 2
    assert "not a demo folder" in capsys.readouterr().err
    assert started == [] and (tmp_path / "precious.txt").exists()
