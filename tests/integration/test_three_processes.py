"""Three referee processes on one PostgreSQL database and one IMAP mailbox, against the
loopback Dovecot and Postfix: every mail applied once, every deadline closed once, every
outbound mail sent once, and the season ends as it does with one process.

Each instant of the test's clock is one ``referee tick --now T`` in three processes started
together: they race to list, read and store the same IMAP folder, to decide (one at a time:
referee.store.lease) and to send the same outbox by SMTP (claims). The players' mails are put
into the referee's mailbox with IMAP APPEND, dated by the test's clock as the server would
have stamped them on arrival, so the season's days pass in seconds and both runs see the same
arrival times (test_full_match sends players' mails by SMTP, in real time). The players read
the referee's mail by IMAP, from the mailbox Postfix delivers it to.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import imaplib
import random
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from referee.config import load_service_config, parse_season
from referee.games.stationary_roulette.demo import ScriptedPlayer
from referee.mail.client import Received, ScriptedClient
from referee.seasons import load_season
from referee.service import Referee
from referee.store.db import Store
from referee.store.models import Event, Inbound, Match, Outbox

from ..conftest import _drop_pg_database, _fresh_pg_database
from .conftest import MailStack, StackControl

pytestmark = pytest.mark.postgres

# the test's clock: in the past, as Dovecot gives an APPEND dated in the future the time of its arrival
START = datetime(2021, 3, 3, 9, 0, tzinfo=timezone.utc)
ROUND = timedelta(hours=24)
MATCHES = 4
PROCESS_TIMEOUT = 600  # seconds for one `referee tick`; generous for a slow machine
DELIVERY_TIMEOUT = 120.0  # seconds for Postfix to hand every sent mail to Dovecot
REFEREE = Path(sys.executable).with_name("referee")


class Run:
    """One season played on its own database and its own folder of the referee's mailbox;
    the players' mailboxes are ``alice+<prefix><n>@``: all in alice's INBOX, told apart by To."""

    def __init__(self, stack: MailStack, db_url: str, folder: Path, prefix: str, processes: int):
        self.stack = stack
        self.db_url = db_url
        self.folder = folder
        self.processes = processes
        self.keys = [f"p{n}" for n in range(2 * MATCHES)]
        self.inbox = f"three-processes-{prefix}-{uuid.uuid4().hex[:8]}"
        self.addresses = {key: f"alice+{prefix}{key}@{stack.domain}" for key in self.keys}
        folder.mkdir(parents=True)
        self.config = folder / "referee.toml"
        self.config.write_text(
            f'database = "{db_url}"\nsecret = "three-processes-secret-0123456789"\n'
            f'[mail]\naddress = "{stack.address("referee")}"\ninbound = "imap"\noutbound = "smtp"\n'
            f'[imap]\nhost = "{stack.host}"\nport = {stack.imap_port}\nsecurity = "none"\n'
            f'username = "{stack.address("referee")}"\npassword = "{stack.password}"\n'
            f'folder = "{self.inbox}"\nprocessed_folder = "{self.inbox}-processed"\n'
            f'[smtp]\nhost = "{stack.host}"\nport = {stack.smtp_port}\nsecurity = "none"\nconcurrency = 4\n'
        )
        self.store = Store(db_url)
        self.store.migrate()
        season = {
            "season": {"id": "three", "name": "Three processes", "starting_chips": 200},
            "players": [{"id": key, "name": key.upper(), "email": self.addresses[key]} for key in self.keys],
            "matches": [
                {
                    "id": f"m{n}",
                    "game": "stationary-roulette",
                    "players": [f"p{2 * n}", f"p{2 * n + 1}"],
                    "start": START.isoformat(),
                    "seed": 100 + n,
                    "reminders": ["2h"],
                }
                for n in range(MATCHES)
            ],
        }
        load_season(self.store, parse_season(season, "three-process season"), START - ROUND)
        self.players_box = self._login("alice", "INBOX")
        self.referee_box = self._login("referee", self.inbox, create=True)
        self.seen: dict[str, list[Received]] = {address: [] for address in self.addresses.values()}
        self.last_uid = 0
        self.players = {
            key: ScriptedPlayer(
                key, AppendingClient(self, self.addresses[key], key.upper()), random.Random(f"seed:{key}")
            )
            for key in self.keys
        }

    def _login(self, user: str, folder: str, *, create: bool = False) -> imaplib.IMAP4:
        box = imaplib.IMAP4(self.stack.host, self.stack.imap_port, timeout=60)
        box.login(self.stack.address(user), self.stack.password)
        if create:
            status, data = box.create(folder)
            assert status == "OK", data
        status, data = box.select(folder)
        assert status == "OK", data
        return box

    def close(self) -> None:
        for box in (self.players_box, self.referee_box):
            try:
                box.logout()
            except (imaplib.IMAP4.error, OSError):
                pass
        self.store.dispose()

    # ------------------------------------------------------------------ the referee

    def tick(self, at: datetime) -> list[str]:
        """``referee tick --now at`` in every process at once; their outputs. One process is
        this one (the same tick, without starting an interpreter per instant)."""
        if self.processes == 1:
            referee = Referee.configured(self.store, load_service_config(self.config))
            outputs = [referee.tick(at).summary()]
            self.wait_delivered()
            return outputs
        command = [str(REFEREE), "--config", str(self.config), "tick", "--now", at.isoformat()]
        running = [
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=self.folder)
            for _ in range(self.processes)
        ]
        outputs = []
        for process in running:
            out, _ = process.communicate(timeout=PROCESS_TIMEOUT)
            assert process.returncode == 0, out
            assert "Traceback" not in out, out
            outputs.append(out)
        self.wait_delivered()
        return outputs

    def wait_delivered(self) -> None:
        """Until every mail the referee sent is in its player's mailbox; none twice."""
        with self.store.unit_of_work() as session:
            sent = dict(
                session.execute(
                    select(Outbox.to_addr, func.count()).where(Outbox.status == "sent").group_by(Outbox.to_addr)
                ).all()
            )
        deadline = time.monotonic() + DELIVERY_TIMEOUT
        pause = 0.005  # delivery on loopback takes milliseconds: polled soon, then less often
        while True:
            self._fetch()
            counts = {address: len(mails) for address, mails in self.seen.items()}
            if all(counts[address] >= sent.get(address, 0) for address in counts):
                break
            if time.monotonic() > deadline:
                logs = self.stack.logs()
                raise AssertionError(f"not delivered in time: sent {sent}, in the mailbox {counts}\n{logs}")
            time.sleep(pause)  # a poll interval, not a wait for delivery
            pause = min(2 * pause, 0.1)
        assert counts == {address: sent.get(address, 0) for address in counts}, "a mail was delivered twice"

    def _fetch(self) -> None:
        self.players_box.noop()
        status, data = self.players_box.uid("search", None, f"UID {self.last_uid + 1}:*")
        assert status == "OK", data
        for uid in (int(u) for u in data[0].split()):
            if uid <= self.last_uid:
                continue  # n:* always holds the last message
            status, fetched = self.players_box.uid("fetch", str(uid), "(BODY.PEEK[])")
            assert status == "OK", fetched
            message = email.message_from_bytes(fetched[0][1], policy=email.policy.default)
            to = email.utils.parseaddr(str(message["To"]))[1].lower()
            if to in self.seen:
                self.seen[to].append(Received(Path(f"imap-{uid}"), message))
            self.last_uid = uid

    def append(self, raw: bytes, at: datetime) -> None:
        """A player's mail, arrived at ``at`` (its INTERNALDATE)."""
        status, data = self.referee_box.append(self.inbox, None, imaplib.Time2Internaldate(at), raw)
        assert status == "OK", data

    # ------------------------------------------------------------------ the season

    def play(self) -> None:
        """The demo's players, four matches at once: a mail each per round, a correction now
        and then, a round missed, a mail after its deadline."""
        self.tick(START)
        for round_no in range(11):
            opened = START + round_no * ROUND
            for n, key in enumerate(self.keys):
                player = self.players[key]
                if (n + round_no) % 7 == 3:
                    continue  # this round is missed: the inactivity rules apply
                before = dict(player.uses)
                player.send(round_no, opened + timedelta(hours=1 + n, minutes=round_no))
                if (n * 3 + round_no) % 5 == 0:  # a second thought: the later mail counts
                    player.uses = before
                    player.send(round_no, opened + timedelta(hours=10 + n))
            if round_no % 2:
                self.tick(opened + timedelta(hours=18))  # receipts (else they go with the deadline's tick)
            late = self.players[self.keys[round_no % len(self.keys)]]
            before = dict(late.uses)
            late.send(round_no, opened + ROUND + timedelta(minutes=30))  # after the deadline: too late for it
            late.uses = before
            self.tick(opened + ROUND)  # the deadline (the late mail is not there yet)
            if self.finished():
                break
        self.tick(START + 12 * ROUND)

    def finished(self) -> bool:
        with self.store.unit_of_work() as session:
            return session.scalar(select(func.count()).select_from(Match).where(Match.status != "finished")) == 0

    def outcome(self) -> dict[str, Any]:
        """What the season came to, without what differs between runs (ids, addresses)."""
        with self.store.unit_of_work() as session:
            matches = {}
            for match in session.scalars(select(Match).order_by(Match.key)):
                events = session.execute(
                    select(Event.seq, Event.kind, Event.step_key, Event.player, Event.payload, Event.at)
                    .where(Event.match_id == match.id)
                    .order_by(Event.seq)
                ).all()
                matches[match.key] = {
                    "status": match.status,
                    "result": match.result,
                    "state": match.state,
                    "events": [tuple(event) for event in events],
                }
            inbound = {
                f"{status}:{rule or ''}": count
                for status, rule, count in session.execute(
                    select(Inbound.status, Inbound.rule, func.count()).group_by(Inbound.status, Inbound.rule)
                )
            }
            kinds = dict(session.execute(select(Outbox.kind, func.count()).group_by(Outbox.kind)).all())
        return {"matches": matches, "inbound": inbound, "outbox": kinds}


class AppendingClient(ScriptedClient):
    """The demo's scripted client on real mail: reads its mail by IMAP (its own among the shared
    mailbox's, by To), answers by APPEND dated by the test's clock."""

    def __init__(self, run: Run, address: str, name: str):
        super().__init__(address, name, Path("/nonexistent"), Path("/nonexistent"))
        self.run = run

    def all(self) -> list[Received]:
        """In the order the referee wrote them (Postfix does not keep the order of sending, and
        the mails of one tick share their Date: a receipt and the next round's form)."""
        self.run._fetch()
        mails = self.run.seen[self.address]
        with self.run.store.unit_of_work() as session:
            written = dict(
                session.execute(
                    select(Outbox.message_id, Outbox.id).where(
                        Outbox.message_id.in_([_bare(m.message_id) for m in mails])
                    )
                ).all()
            )
        return sorted(mails, key=lambda m: written[_bare(m.message_id)])

    def reply(self, original: Received, text: str, at: datetime, **options: Any) -> Path:
        self.run.append(self.compose_reply(original, text, at, **options), at)
        return Path("appended")


def _bare(message_id: str) -> str:
    return message_id.strip().removeprefix("<").removesuffix(">")


@pytest.fixture
def two_databases(pg_admin):
    made = [_fresh_pg_database(pg_admin) for _ in range(2)]
    try:
        yield [url for _, url in made]
    finally:
        for name, _ in made:
            _drop_pg_database(pg_admin, name)


def test_three_processes_apply_every_mail_once_and_end_as_one_does(
    own_mailstack: StackControl, two_databases, tmp_path
):
    # a stack of its own: its players' mail would be in the way of the other tests' players
    mailstack = own_mailstack.stack
    assert mailstack is not None
    many = Run(mailstack, two_databases[0], tmp_path / "three", "a", processes=3)
    one = Run(mailstack, two_databases[1], tmp_path / "one", "b", processes=1)
    try:
        many.play()
        one.play()
        assert many.finished() and one.finished()
        together, alone = many.outcome(), one.outcome()

        # every mail applied once: one move event per accepted mail, none stored twice
        for run, outcome in ((many, together), (one, alone)):
            with run.store.unit_of_work() as session:
                accepted = session.scalar(select(func.count()).select_from(Inbound).where(Inbound.status == "accepted"))
                # (a mail may hold two moves, a roulette and a bet: one event each, at one seq apart)
                moves = session.scalar(select(func.count(func.distinct(Event.inbound_id))).where(Event.kind == "move"))
                applied = session.execute(
                    select(Event.inbound_id, Event.step_key, Event.player, func.count())
                    .where(Event.kind == "move")
                    .group_by(Event.inbound_id, Event.step_key, Event.player)
                ).all()
                sources = session.execute(select(Inbound.source, func.count()).group_by(Inbound.source)).all()
                unsent = session.scalar(select(func.count()).select_from(Outbox).where(Outbox.status != "sent"))
            assert accepted == moves > 0
            assert all(count <= 2 for *_, count in applied), "a mail was applied twice"
            assert all(count == 1 for _, count in sources), "a mail was stored twice"
            assert "pending:" not in outcome["inbound"] and unsent == 0
            # every deadline closed once: one timeout per step of a match
            for match in outcome["matches"].values():
                closes = [event[2] for event in match["events"] if event[1] == "timeout"]
                assert len(closes) == len(set(closes)) == 11
            # the referee's folder is empty: every mail was moved once it was stored
            run.referee_box.noop()  # this session's view of the folder brought up to date
            status, data = run.referee_box.uid("search", None, "ALL")
            assert status == "OK" and data[0].split() == []

        for key, match in together["matches"].items():  # the first event that differs, if one does
            for a, b in zip(match["events"], alone["matches"][key]["events"], strict=False):
                assert a == b, (key, a, b)
        assert together == alone
    finally:
        many.close()
        one.close()


def test_three_referee_run_processes_close_every_deadline_once(own_mailstack: StackControl, pg_admin, tmp_path):
    """The long-running service itself, three times over, on the real clock: two matches of
    3-second phases nobody plays (every step closes by its deadline, with the inactivity
    rules), each deadline closed once and each mail sent once; a stop ends each cleanly.
    Lateness on a slow machine only makes a deadline close later, never twice."""
    stack = own_mailstack.stack
    assert stack is not None
    name, url = _fresh_pg_database(pg_admin)
    processes: list[subprocess.Popen] = []
    store = Store(url)
    try:
        store.migrate()
        config = tmp_path / "referee.toml"
        config.write_text(
            f'database = "{url}"\nsecret = "three-processes-secret-0123456789"\n'
            f'[mail]\naddress = "{stack.address("referee")}"\ninbound = "imap"\noutbound = "smtp"\n'
            f'[imap]\nhost = "{stack.host}"\nport = {stack.imap_port}\nsecurity = "none"\n'
            f'username = "{stack.address("referee")}"\npassword = "{stack.password}"\n'
            f'[smtp]\nhost = "{stack.host}"\nport = {stack.smtp_port}\nsecurity = "none"\n'
            "[service]\npoll_seconds = 2\narrival_grace_seconds = 1\n"
        )
        now = datetime.now(timezone.utc).replace(microsecond=0)
        season = {
            "season": {"id": "run", "name": "Run", "starting_chips": 200},
            "players": [{"id": f"r{i}", "name": f"R{i}", "email": f"alice+r{i}@{stack.domain}"} for i in range(4)],
            "matches": [
                {
                    "id": f"run{n}",
                    "game": "stationary-roulette",
                    "players": [f"r{2 * n}", f"r{2 * n + 1}"],
                    "start": (now + timedelta(seconds=5)).isoformat(),
                    "seed": n,
                    "phase_length": "3s",
                    "reminders": [],
                }
                for n in range(2)
            ],
        }
        load_season(store, parse_season(season, "run season"), now)
        logs = [tmp_path / f"run{i}.log" for i in range(3)]
        for log in logs:
            with open(log, "w") as out:
                command = [str(REFEREE), "--config", str(config), "run"]
                processes.append(subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path))
        deadline = time.monotonic() + PROCESS_TIMEOUT
        while True:
            with store.unit_of_work() as session:
                open_matches = session.scalar(select(func.count()).select_from(Match).where(Match.status != "finished"))
                unsent = session.scalar(select(func.count()).select_from(Outbox).where(Outbox.status != "sent"))
            if open_matches == 0 and unsent == 0:
                break
            assert time.monotonic() < deadline, "the season did not end in time"
            time.sleep(0.5)  # a poll interval, not a wait for the service
        for process in processes:
            process.terminate()
        for process, log in zip(processes, logs, strict=True):
            assert process.wait(PROCESS_TIMEOUT) == 0, log.read_text()
            text = log.read_text()
            assert "ERROR" not in text and "Traceback" not in text, text
        with store.unit_of_work() as session:
            closes = session.execute(
                select(Event.match_id, Event.step_key, func.count())
                .where(Event.kind == "timeout")
                .group_by(Event.match_id, Event.step_key)
            ).all()
            sent = set(session.scalars(select(Outbox.message_id)))
        assert len(closes) == 22 and all(count == 1 for *_, count in closes)
        # every mail sent once: each Message-ID once in the players' mailbox
        box = imaplib.IMAP4(stack.host, stack.imap_port, timeout=60)
        box.login(stack.address("alice"), stack.password)
        box.select("INBOX")
        wait_until = time.monotonic() + DELIVERY_TIMEOUT
        pause = 0.005
        while True:
            box.noop()
            _, data = box.uid("fetch", "1:*", "(BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
            found = [
                _bare(email.message_from_bytes(part[1])["Message-ID"] or "") for part in data if isinstance(part, tuple)
            ]
            if len(found) >= len(sent) or time.monotonic() > wait_until:
                break
            time.sleep(pause)  # a poll interval, not a wait for delivery
            pause = min(2 * pause, 0.1)
        box.logout()
        assert sorted(found) == sorted(sent)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
        store.dispose()
        _drop_pg_database(pg_admin, name)
