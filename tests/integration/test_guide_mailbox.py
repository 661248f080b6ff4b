"""docs/operations.md, "Your first real mailbox", run as written on the loopback mail stack.

The steps are read from the guide itself (tests/docsteps.py reads them as
tests/test_organizer_walkthrough.py reads the organizer guide's), so the guide cannot drift
from the code: in an empty folder, every command runs in the guide's order and must end with
the exit status and print the lines the guide shows; ``referee run`` is left running (a real
process) and must log what the guide shows; where the guide shows a mail in a player's
mailbox, the test waits for it there (by IMAP, as the player's mail program would); where
it shows the player's reply, the test sends it from the player's address by SMTP, an answer
to that mail (to its Reply-To, the form typed on top of the quoted mail). At the end: the
reply was read by IMAP (it is in the referee's Processed folder), the mails reached the
player through the SMTP server, and ``referee status`` shows the move.

What the test changes in the guide's text, and why (:func:`stack_facts`, :func:`shift`):

============================================  =================================================
the guide says                                the test runs
============================================  =================================================
``read -rs REFEREE_MAIL_PASSWORD && ...``     ``export REFEREE_MAIL_PASSWORD=<the stack's>``:
                                              what the reader types
``imap.example.org`` (port 993, TLS)          127.0.0.1 and the stack's IMAPS port
``smtp.example.org`` (port 587, STARTTLS)     127.0.0.1 and the stack's SMTP port (STARTTLS);
                                              ``--smtp-host`` also gets ``--ca-file`` with the
                                              stack's private CA (a provider's certificate is
                                              signed by a CA the system trusts)
``...@example.org``                           ``...@example.test``, the stack's mailboxes
every instant (``2027-03-01T18:00:00Z``,      moved by one amount, so that the season's start
``2027-03-01 18:00 UTC``)                     is a second after the file is written
============================================  =================================================

The branch taken is the guide's ``path no-login``: the stack's Postfix offers no SMTP login
(a provider's does), so ``init``'s check says to remove ``username`` from ``[smtp]``.

``referee season load`` runs on a clock of its own, as many minutes before the start as
the guide's ``--check`` output says (``(in 4 minutes)``), so that its output is the guide's
and a slow machine cannot let the start pass between writing the file and loading it;
every other command, and ``referee run``, runs on the real clock. The stack is the test's own
(``own_mailstack``): fresh mailboxes, as the guide's "0 message(s) waiting" has it.
"""

from __future__ import annotations

import re
import shlex
import time
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from referee import commands
from referee.config import load_service_config
from referee.mail.client import ImapClient, Received

from ..docsteps import Runner, assert_shown, line_pattern, section, walkthrough_steps
from .conftest import MailStack, StackControl

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
SECTION = "## Your first real mailbox"
PATH = "no-login"  # the guide's branch for an SMTP server without a login, as the stack's
TIMEOUT = 120.0  # seconds, for anything the test waits for: generous for a machine ten times slower
LEAD = re.compile(r"\(in (\d+) minutes?\)")
INSTANT = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}:\d{2})Z| (\d{2}:\d{2}) UTC)\b")
# what the walkthrough must run, at the least (so that a parsing slip cannot pass as an empty run)
MUST_RUN = {"init", "check-mail", "season load --check", "season load", "run", "status"}


def stack_facts(stack: MailStack) -> list[tuple[str, str]]:
    """The guide's placeholders and the stack's facts, replaced in this order."""
    imap, smtp = f"{stack.host}:{stack.imaps_port}", f"{stack.host}:{stack.smtp_port}"
    return [
        (
            "read -rs REFEREE_MAIL_PASSWORD && export REFEREE_MAIL_PASSWORD",
            f"export REFEREE_MAIL_PASSWORD={stack.password}",
        ),
        ("imap.example.org:993", imap),
        ("smtp.example.org:587", smtp),
        ("--imap-host imap.example.org", f"--imap-host {imap}"),
        ("--smtp-host smtp.example.org", f"--smtp-host {smtp} --ca-file {shlex.quote(str(stack.ca_file))}"),
        ("@example.org", f"@{stack.domain}"),
    ]


def shift(text: str, delta: timedelta) -> str:
    """Every instant in ``text`` (ISO ``...T18:00:00Z`` or ``... 18:00 UTC``) moved by ``delta``,
    written the same way (a minute's form cut to the minute, as the referee prints it)."""

    def moved(m: re.Match[str]) -> str:
        at = datetime.fromisoformat(f"{m.group(1)}T{m.group(2) or m.group(3)}+00:00") + delta
        return f"{at:%Y-%m-%dT%H:%M:%SZ}" if m.group(2) else f"{at:%Y-%m-%d %H:%M} UTC"

    return INSTANT.sub(moved, text)


def what(command: str) -> str:
    """``season load --check`` for ``referee season load --check season.toml``, and so on."""
    argv = shlex.split(command)
    if argv[0] != "referee":
        return argv[0]
    words = [w for w in argv[1:] if not w.startswith("-") or w == "--check"]
    if words[:2] == ["season", "load"]:
        return "season load --check" if "--check" in argv else "season load"
    return words[0]


def header_lines(mail: Received) -> list[str]:
    return [f"{name}: {' '.join(str(value).split())}" for name, value in mail.message.items()]


def shows(mail: Received, shown: list[str]) -> bool:
    """Each shown line is one of the mail's header lines (``...``: any text)."""
    lines = header_lines(mail)
    return all(any(line_pattern(want).match(have) for have in lines) for want in shown if want.strip())


class Mailboxes:
    """The stack's mailboxes, read and sent from as their owners' mail programs would."""

    def __init__(self, stack: MailStack, names: dict[str, str]):
        self.stack, self.names = stack, names
        self.clients: dict[str, ImapClient] = {}

    def client(self, address: str) -> ImapClient:
        if address not in self.clients:
            self.clients[address] = ImapClient(
                address,
                self.names.get(address, ""),
                host=self.stack.host,
                imap_port=self.stack.imap_port,
                smtp_port=self.stack.smtp_port,
                password=self.stack.password,
            )
        return self.clients[address]

    def wait_for(self, address: str, shown: list[str], timeout: float) -> Received:
        """Until a mail in the mailbox's INBOX shows the lines; the newest such mail."""
        deadline = time.monotonic() + timeout
        while True:
            mails = self.client(address).all()
            if found := [mail for mail in mails if shows(mail, shown)]:
                return found[-1]
            if time.monotonic() > deadline:
                have = "\n\n".join("\n".join(header_lines(mail)) for mail in mails) or "(no mail)"
                raise AssertionError(
                    f"no mail in {address}'s mailbox showing\n" + "\n".join(shown) + f"\nwithin {timeout:.0f} s; "
                    f"it holds:\n{have}\n\n{self.stack.logs()}"
                )
            time.sleep(0.2)  # a poll interval, not a wait for the mail


def test_the_first_real_mailbox_runs_as_the_guide_shows_it(own_mailstack: StackControl, tmp_path, monkeypatch):
    stack = own_mailstack.stack
    assert stack is not None
    for variable in ("REFEREE_CONFIG", "REFEREE_SECRET", "REFEREE_MAIL_PASSWORD", "REFEREE_IMAP_PASSWORD"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("REFEREE_SMTP_PASSWORD", raising=False)

    steps = walkthrough_steps(section(GUIDE.read_text(encoding="utf-8"), SECTION), paths={PATH})
    facts = stack_facts(stack)
    for step in steps:
        for placeholder, fact in facts:
            step.text = step.text.replace(placeholder, fact)
            step.body = step.body.replace(placeholder, fact)
            step.shown = [line.replace(placeholder, fact) for line in step.shown]
        left = [s for s in (step.text, step.body, *step.shown) if "example.org" in s]
        assert not left, f"the guide names example.org where the test's table maps nothing: {left}"

    commands_run = [s for s in steps if s.kind == "command"]
    ran = {what(s.text) for s in commands_run}
    assert MUST_RUN <= ran, f"the walkthrough does not run {sorted(MUST_RUN - ran)}"
    assert [s.text for s in commands_run if s.background] == ["referee run"], "the guide leaves `referee run` running"
    seasons = [s for s in steps if s.kind == "file" and s.text.endswith(".toml")]
    assert len(seasons) == 1, "the walkthrough shows one season file (<!-- walkthrough file: NAME.toml -->)"
    replies = [i for i, s in enumerate(steps) if s.kind == "reply"]
    assert replies, "the walkthrough shows no player's reply (<!-- walkthrough reply: ADDRESS -->)"
    assert any(s.kind == "inbox" for s in steps[replies[-1] :]), "the walkthrough shows no receipt after the reply"
    assert {s.kind for s in steps} <= {"file", "command", "output", "inbox", "reply"}, {s.kind for s in steps}

    players = tomllib.loads(seasons[0].body)["players"]
    mailboxes = Mailboxes(stack, {p["email"]: p["name"] for p in players})
    check = next(s for s in commands_run if what(s.text) == "season load --check")
    lead = timedelta(minutes=int(m.group(1))) if (m := LEAD.search("\n".join(check.shown))) else timedelta(minutes=5)

    runner = Runner(tmp_path, monkeypatch)
    delta: timedelta | None = None  # how far the guide's instants move: known once the season file is written
    start: datetime | None = None
    seen: dict[str, Received] = {}  # the latest mail each inbox step waited for, by address
    sent: list[tuple[str, str]] = []  # (the player's address, the Message-ID of the reply)
    try:
        for step in steps:
            if delta is not None:
                step.text, step.body = shift(step.text, delta), shift(step.body, delta)
                step.shown = [shift(line, delta) for line in step.shown]
            if step.kind == "file":
                if step is seasons[0]:
                    first = min(m["start"] for m in tomllib.loads(step.body)["matches"])
                    start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
                    delta = start - first
                    step.body = shift(step.body, delta)
                    step.shown = [shift(line, delta) for line in step.shown]
                (runner.cwd / step.text).write_text(step.body, encoding="utf-8")
            elif step.kind == "command" and step.background:
                job = runner.start(step.text)
                job.wait_shown(step.shown, TIMEOUT)
            elif step.kind == "command":
                with monkeypatch.context() as clock:
                    if what(step.text).startswith("season load"):
                        assert start is not None, "the guide loads a season before writing it"
                        clock.setattr(commands, "datetime", frozen_clock(start - lead))
                    code, output = runner.run(step.text)
                assert code == step.exits, f"`{step.text}` exited {code}, not {step.exits}:\n{output}"
                assert_shown(step.shown, output, step.text)
            elif step.kind == "output":  # more of what a command left running shows
                (job,) = [job for job in runner.background if job.command == step.text]
                job.wait_shown(step.shown, TIMEOUT)
            elif step.kind == "inbox":
                seen[step.text] = mailboxes.wait_for(step.text, step.shown, TIMEOUT)
            elif step.kind == "reply":
                original = seen.get(step.text)
                assert original is not None, f"the guide has {step.text} reply before showing a mail to answer"
                message_id = mailboxes.client(step.text).reply(original, step.body, datetime.now(UTC))
                sent.append((step.text, message_id))

        config = load_service_config(runner.cwd / "referee.toml")
        assert (config.mail.transport, config.mail.outbound) == ("imap", "smtp"), "read by IMAP, sent by SMTP"
        # every reply was read by IMAP: moved to the Processed folder once stored
        referee = mailboxes.client(config.mail.address)
        referee.wait_for([mid for _, mid in sent], folders=("Processed",), timeout=TIMEOUT)
        assert not [m for m in referee.all() if m.message_id in {mid for _, mid in sent}], "left in INBOX"
        # the mails the player waited for came through the stack's Postfix (the referee's SMTP)
        for address, mail in seen.items():
            received = " ".join(str(v) for v in mail.message.get_all("Received", []))
            assert "(Postfix)" in received and "ESMTPS" in received, (address, received)
        # and the status shows each move
        code, output = runner.run("referee status")
        assert code == 0, output
        ids = {p["email"].replace("@example.org", f"@{stack.domain}"): p["id"] for p in players}
        for address, _ in sent:
            assert re.search(rf"^  submitted: .*\b{re.escape(ids[address])}\b.*;", output, re.MULTILINE), output

        # Ctrl-C stops the service, cleanly
        (job,) = runner.background
        assert job.stop(TIMEOUT) == 0, job.output()
        assert "referee stopped" in job.output(), job.output()
    finally:
        runner.stop_all()


def frozen_clock(instant: datetime) -> type[datetime]:
    class Clock(datetime):
        @classmethod
        def now(cls, tz=None):
            return instant.astimezone(tz or UTC)

    return Clock


def test_the_reader_takes_paths_exit_statuses_and_marked_blocks():
    """tests/docsteps.py's marks, as this guide uses them (no mail stack needed)."""
    text = (
        "<!-- walkthrough: path login -->\n```console\n$ referee init --x\nok\n```\n\n"
        "<!-- walkthrough: path no-login; exits 1 -->\n```console\n$ referee init --x\nFAILED: no\n```\n\n"
        "<!-- walkthrough: path no-login -->\n```sh\nsed -i s/a/b/ f\n```\n\n"
        "<!-- walkthrough: background -->\n```console\n$ referee run\n... started\n```\n\n"
        "<!-- walkthrough inbox: a@example.org -->\n```text\nSubject: Hello\n```\n\n"
        "<!-- walkthrough output: referee run -->\n```console\n... sent 1\n```\n\n"
        "<!-- walkthrough reply: a@example.org -->\n```text\nStep: one\n\nBET\n```\n"
    )
    steps = walkthrough_steps(text, paths={"no-login"})
    assert [(s.kind, s.text, s.exits, s.background) for s in steps] == [
        ("command", "referee init --x", 1, False),
        ("command", "sed -i s/a/b/ f", 0, False),
        ("command", "referee run", 0, True),
        ("inbox", "a@example.org", 0, False),
        ("output", "referee run", 0, False),
        ("reply", "a@example.org", 0, False),
    ]
    assert steps[0].shown == ["FAILED: no"] and steps[2].shown == ["... started"]
    assert steps[3].shown == ["Subject: Hello"] and steps[4].shown == ["... sent 1"]
    assert steps[5].body == "Step: one\n\nBET\n"
    assert [s.text for s in walkthrough_steps(text, paths={"login"}) if s.kind == "command"][:1] == ["referee init --x"]
    assert walkthrough_steps(text, paths={"login"})[0].shown == ["ok"]
    with pytest.raises(ValueError, match="unknown option"):
        walkthrough_steps("<!-- walkthrough: sometimes -->\n```sh\nls\n```\n")
    assert shift("start = 2027-03-01T18:00:00Z; 2027-03-02 18:00 UTC", timedelta(minutes=90, seconds=7)) == (
        "start = 2027-03-01T19:30:07Z; 2027-03-02 19:30 UTC"
    )
