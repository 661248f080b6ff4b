"""The press (referee.match.press): a batch's mails made together before it commits, a
large batch shared with a worker process, and what a failure costs."""

from __future__ import annotations

import logging
import os
import pickle
import signal
import time
from datetime import timedelta

import pytest
from sqlalchemy import select

from referee.mail.client import ScriptedClient
from referee.mail.compose import LATE_SUBJECT
from referee.match import notices as notices_module
from referee.match import press as press_module
from referee.match.press import JobBatch, MailSpec, Press, make
from referee.pipeline.judge import Judge
from referee.pipeline.prereading import Prereading
from referee.store.models import Inbound, Match, Outbox
from tests.service.harness import DAY, START, World

ROULETTE = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0"
ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC", "Australia/Adelaide", "America/Sao_Paulo")


def _season(matches: int) -> dict:
    players = [
        {
            "id": f"p{i:02}",
            # a name that can turn a line around: isolated in every mail but the form's lines
            "name": "Bob \u202eevil" if i == 3 else f"Player {i}",
            "email": f"p{i:02}@example.test",
            "timezone": ZONES[i % len(ZONES)],
        }
        for i in range(2 * matches)
    ]
    return {
        "season": {"id": "test", "name": "Test season", "starting_chips": 200},
        "players": players,
        "matches": [
            {
                "id": f"m{n}",
                "game": "stationary-roulette",
                "players": [f"p{2 * n:02}", f"p{2 * n + 1:02}"],
                "start": START.isoformat(),
                "seed": n,
                "reminders": ["2h"],
            }
            for n in range(matches)
        ],
    }


def _mails(world: World) -> dict[str, tuple[bytes, str | None]]:
    """Every mail of the outbox, and the shown text kept with it, by its key."""
    with world.store.unit_of_work() as session:
        return {row.dedupe_key: (row.message, row.shown) for row in session.scalars(select(Outbox))}


def _clients(world: World, keys) -> None:
    for key in keys:
        world.clients[key] = ScriptedClient(
            f"{key}@example.test", key, world.config.mail.outbox / f"{key}@example.test", world.config.mail.inbox
        )


class _Recording(Press):
    """A press that keeps the specs it was given."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.specs: list[MailSpec] = []

    def batch(self):
        batch = super().batch()
        add = batch.add

        def recorded(spec: MailSpec) -> None:
            self.specs.append(spec)
            add(spec)

        batch.add = recorded  # type: ignore[method-assign]
        return batch


def _make_all(press: Press, specs: list[MailSpec]) -> list:
    """Every spec's mail, in order, as a batch of the service makes them: a batch of
    ``parallel`` mails or more starts the workers and shares them."""
    if len(specs) >= press.parallel:
        press.warm()
    batch = press.batch()
    for spec in specs:
        batch.add(spec)
    return batch.finish()


def _first_specs(tmp_path, sqlite_template, matches: int) -> list[MailSpec]:
    """The specs of the first mails of a season of ``matches`` matches (two a match), made
    by a referee whose press made them all itself."""
    (tmp_path / "w.db").write_bytes(sqlite_template.read_bytes())
    world = World(tmp_path / "w", f"sqlite:///{tmp_path / 'w.db'}", season=_season(matches))
    recording = _Recording(1, parallel=10**6)  # the mails deferred, all made here
    world.referee.notices.press = recording
    world.tick(START)
    return recording.specs


def _two_worlds(tmp_path, sqlite_template) -> tuple[World, World]:
    """The same season of six matches twice: one referee without a worker (``here``), one
    with a worker that takes every large batch (``shared``: its press not started yet)."""
    worlds = []
    for name in ("here", "shared"):
        (tmp_path / f"{name}.db").write_bytes(sqlite_template.read_bytes())
        worlds.append(World(tmp_path / name, f"sqlite:///{tmp_path / f'{name}.db'}", season=_season(6)))
    here, shared = worlds
    here.referee.notices.press = Press(0)
    shared.referee.notices.press = Press(1, parallel=4, chunk=2)
    return here, shared


def test_mails_made_by_a_worker_are_the_mails_made_here(tmp_path, sqlite_template):
    """A close's mails, and the answers to a batch of replies, made by a worker process
    are, byte for byte, the mails the referee makes itself: the same template, wrapping,
    names isolated, HTML part and calendar, and the same shown text kept with them."""
    here, shared = _two_worlds(tmp_path, sqlite_template)
    try:
        assert shared.referee.notices.press.start()
        players = [f"p{i:02}" for i in range(12)]
        for world in (here, shared):
            _clients(world, players)
            world.tick(START)  # the first mails: 12
            for i, key in enumerate(players):  # a batch of replies: a receipt each (in one order)
                world.send(key, ROULETTE, START + timedelta(hours=1, minutes=i))
            before = world.referee.notices.press.by_workers
            world.tick(START + timedelta(hours=2))
            if world is shared:
                assert world.referee.notices.press.by_workers > before  # receipts by the worker
            world.tick(START + 2 * DAY)  # the preparation phase and round 1 close: results, steps
        mails = _mails(here)
        assert len(mails) >= 48 and sum(1 for key in mails if "receipt" in key) == 12, sorted(mails)
        # (a mail delivered after its deadline, with the late note, is read from its new bytes)
        late = {k for k, (message, _shown) in mails.items() if f"Subject: {LATE_SUBJECT}".encode() in message}
        assert all(shown for k, (_message, shown) in mails.items() if k not in late)
        assert _mails(shared) == mails
        # the worker took the chunks it was handed first (from the batch's end) at least
        assert shared.referee.notices.press.by_workers >= 4
        assert here.referee.notices.press.by_workers == 0
    finally:
        shared.referee.notices.close()


def _inbound(world: World) -> list[tuple[str, str | None, str | None]]:
    with world.store.unit_of_work() as session:
        return [(row.status, row.rule, row.note) for row in session.scalars(select(Inbound).order_by(Inbound.id))]


def _states(world: World) -> dict[str, object]:
    with world.store.unit_of_work() as session:
        return {match.key: match.state for match in session.scalars(select(Match))}


def _replies(world: World, at) -> None:
    """A batch of replies written the ways players write them, good and bad."""
    form = world.last_text("p02")
    inside = "\n".join(
        "> " + ("Winning colour: Silver" if line.startswith("Winning colour:") else line) if line else ">"
        for line in form.splitlines()
    )
    ways = {
        "p00": (ROULETTE, {}),  # on top of the quote
        "p01": (ROULETTE, {"quote": False}),  # no quote
        "p02": ("On Tuesday, the referee wrote:\n" + inside, {"quote": False}),  # the form changed in the quote
        "p03": ("", {}),  # the quote alone, unchanged
        "p04": (ROULETTE.replace("Gold: 30", "Gold: 9999"), {}),  # a move the rules refuse
        "p05": (ROULETTE, {"from_addr": "p06@example.test"}),  # another player's address
        "p06": ("HELP", {}),  # a command
        "p07": ("Cheers!", {}),  # nothing to read
    }
    for i, key in enumerate(f"p{i:02}" for i in range(12)):
        text, options = ways.get(
            key,
            (ROULETTE.replace("Gold: 30", f"Gold: {25 + i % 3}").replace("Silver: 10", f"Silver: {15 - i % 3}"), {}),
        )
        world.send(key, text, at + timedelta(minutes=i), **options)


def test_replies_a_worker_read_ahead_are_judged_as_replies_read_here(tmp_path, sqlite_template, monkeypatch):
    """With a worker ready, a batch's replies are read by it while the referee judges the
    batch (referee.pipeline.prereading): every reply gets the decision, the answer and the
    recorded move it gets when the referee reads it itself. (Here the referee waits for each
    of the worker's readings, so that every reading it may take is the worker's.)"""
    here, shared = _two_worlds(tmp_path, sqlite_template)
    taken: list[int] = []

    def waiting(self: JobBatch, index: int):
        if index < self.handed and index not in self.answers:
            self.press._collect(wait=True)
        return self.answers.get(index)

    def get(self: Prereading, inbound_id: int):
        first = Prereading.get.__wrapped__(self, inbound_id)
        if first is not None:
            taken.append(inbound_id)
        return first

    get.__wrapped__ = Prereading.get  # type: ignore[attr-defined]
    monkeypatch.setattr(JobBatch, "answer", waiting)
    monkeypatch.setattr(Prereading, "get", get)
    try:
        assert shared.referee.notices.press.start()
        players = [f"p{i:02}" for i in range(12)]
        for world in (here, shared):
            _clients(world, players)
            world.tick(START)
            _replies(world, START + timedelta(hours=1))
            world.tick(START + timedelta(hours=2))
        # every reply from its seat's address, to one of our mails (all but p05's)
        assert len(taken) == 11 and shared.referee.notices.press.jobs_by_workers == 11
        assert here.referee.notices.press.jobs_by_workers == 0
        decisions = _inbound(here)
        # seven moves and the command; the unchanged quotes (twice), the refused move, the spoof
        assert [status for status, _rule, _note in decisions].count("accepted") == 8, decisions
        assert _inbound(shared) == decisions
        assert _mails(shared) == _mails(here)
        assert _states(shared) == _states(here)
    finally:
        shared.referee.notices.close()


def test_a_mail_the_sender_limit_refuses_is_not_read_ahead(tmp_path, sqlite_template):
    """The per-sender limit refuses a mail before its body is read: the worker does not read
    it ahead either (each mail is tried against a copy of the limit before it is handed out)."""
    _here, shared = _two_worlds(tmp_path, sqlite_template)
    shared.config.mails_per_sender_hour = 2
    try:
        assert shared.referee.notices.press.start()
        players = [f"p{i:02}" for i in range(12)]
        _clients(shared, players)
        shared.tick(START)
        at = START + timedelta(hours=1)
        for i in range(5):  # p00: five replies within the hour, two of them judged
            shared.send(
                "p00",
                ROULETTE.replace("Gold: 30", f"Gold: {26 + i}").replace("Silver: 10", f"Silver: {14 - i}"),
                at + timedelta(minutes=i),
            )
        for i, key in enumerate(players[1:]):
            shared.send(key, ROULETTE, at + timedelta(minutes=10 + i))
        shared.tick(START + timedelta(hours=2))
        decisions = [(status, rule) for status, rule, _note in _inbound(shared)]
        assert decisions[:5] == [("accepted", None)] * 2 + [("ignored", "rate-limited")] * 3
        assert decisions[5:] == [("accepted", None)] * 11
        assert shared.referee.notices.press.jobs_by_workers == 2 + 11  # none of the three refused
    finally:
        shared.referee.notices.close()


def test_many_mails_waiting_start_the_worker_while_they_are_stored(tmp_path, sqlite_template, monkeypatch):
    """A tick that finds ``parallel`` mails or more in the inbox starts the press's workers
    as it begins to store them, not at the first batch it judges (a worker takes about a
    second to be ready, and until then the judge reads and answers every mail itself); a
    few mails start nothing."""
    _here, shared = _two_worlds(tmp_path, sqlite_template)
    press = shared.referee.notices.press
    seen: list[str] = []
    monkeypatch.setattr(press, "warm", lambda: seen.append("warm"))
    judge = Judge.process
    monkeypatch.setattr(Judge, "process", lambda self, *a, **k: (seen.append("judge"), judge(self, *a, **k))[1])
    players = [f"p{i:02}" for i in range(12)]
    _clients(shared, players)
    shared.tick(START)
    at = START + timedelta(hours=1)
    for i, key in enumerate(players[: press.parallel - 1]):  # fewer than parallel: nothing started
        shared.send(key, ROULETTE, at + timedelta(minutes=i))
    seen.clear()
    shared.tick(at + timedelta(hours=1))
    assert seen[0] == "judge", seen
    for i, key in enumerate(players):  # parallel or more
        shared.send(
            key,
            ROULETTE.replace("Gold: 30", "Gold: 29").replace("Silver: 10", "Silver: 11"),
            at + timedelta(hours=1, minutes=i),
        )
    seen.clear()
    shared.tick(at + timedelta(hours=2))
    assert seen[:2] == ["warm", "judge"], seen
    assert [status for status, _rule, _note in _inbound(shared)].count("accepted") == press.parallel - 1 + 12


def test_a_batch_of_mails_waits_for_its_own_mails_not_for_jobs_handed_before(tmp_path, sqlite_template):
    """A batch whose mails were all made here commits at once, whatever the worker still
    does for others (a batch's replies read ahead, handed to it before): it never waits
    for answers it does not need."""
    specs = _first_specs(tmp_path, sqlite_template, 1)
    assert len(specs) == 2
    press = Press(1, chunk=100)  # the batch below is one chunk, kept and made here
    try:
        assert press.start()
        busy = press.jobs([press_module.Job(time.sleep, (120,))])  # the worker is busy for two minutes
        assert busy.handed == 1
        batch = press.batch()
        began = time.monotonic()
        for spec in specs:
            batch.add(spec)
        assert batch.finish() == [make(spec) for spec in specs]
        assert time.monotonic() - began < 60  # long before the worker is free
        assert busy.answer(0) is None  # still busy: the caller works it out itself
    finally:
        for worker in press._workers:
            worker.process.kill()
        press.close()


def test_a_worker_killed_costs_only_time(tmp_path, sqlite_template):
    """A worker that dies (killed, out of memory) loses no mail: the batch's mails are made
    here, the same, and the next large batch starts a new worker."""
    specs = _first_specs(tmp_path, sqlite_template, 4)
    assert len(specs) == 8
    wanted = [make(spec) for spec in specs]

    press = Press(1, parallel=2, chunk=1)
    try:
        assert press.start()
        for worker in press._workers:
            os.kill(worker.process.pid, signal.SIGKILL)
        assert _make_all(press, specs) == wanted  # made here
        assert not press.start()  # none started at once after a worker died (RESTART_AFTER)
        press._failed_at -= press_module.RESTART_AFTER
        assert press.start()  # then a new worker (the next large batch would start it)
        assert _make_all(press, specs) == wanted
        assert press.by_workers >= 1
    finally:
        press.close()


def test_a_spec_a_worker_cannot_make_is_made_here():
    """A worker answers None for a mail it failed to make; the mail is made here (where the
    error, if it is one, is raised with its traceback)."""
    spec = MailSpec(
        game="common",
        kind="no-such-template",
        context={},
        envelope={},
    )
    assert press_module._make_chunk([pickle.dumps(spec)]) == [None]
    with pytest.raises(press_module.PressError, match="no-such-template"):
        _make_all(Press(1, parallel=1), [spec, spec])  # one chunk stays here, one goes to the worker


def test_a_mail_that_cannot_be_made_leaves_its_match_as_it_was(tmp_path, sqlite_template, monkeypatch, caplog):
    """A close whose mail for one match cannot be made (a template's bug) leaves that match
    as it was, logged by its key, and closes the others of the batch."""
    (tmp_path / "w.db").write_bytes(sqlite_template.read_bytes())
    world = World(tmp_path / "w", f"sqlite:///{tmp_path / 'w.db'}", season=_season(3))
    world.referee.notices.press = Press(1)  # the batch's mails made together (too few for the worker)
    world.tick(START)

    def failing(spec):
        if spec.match_key == "m1":
            raise RuntimeError("a template's bug")
        return make(spec)

    monkeypatch.setattr(press_module, "make", failing)
    with caplog.at_level(logging.ERROR, logger="referee"):
        world.tick(START + DAY + timedelta(minutes=1))
    with world.store.unit_of_work() as session:
        steps = {m.key: m.step_key for m in session.scalars(select(Match))}
        late = {r.match_id for r in session.scalars(select(Outbox).where(Outbox.kind == "step"))}
    assert steps["m0"] != "round-0" and steps["m2"] != "round-0"
    assert steps["m1"] == "round-0"  # left as it was
    assert any("match m1" in r.getMessage() and "could not be made" in r.getMessage() for r in caplog.records)
    assert late  # the others' mails are there


def test_an_answer_that_cannot_be_made_fails_only_the_mail_it_answers(tmp_path, sqlite_template, monkeypatch, caplog):
    """The answers of a batch of replies are made together; one that cannot be made (a
    template's bug) rolls the batch back, which is judged again with each answer made as it
    is written: the other players' moves are recorded and answered, and the mail whose
    answer fails is counted, then quarantined as any mail whose judging fails."""
    from referee.store.models import Event, Inbound

    (tmp_path / "w.db").write_bytes(sqlite_template.read_bytes())
    world = World(tmp_path / "w", f"sqlite:///{tmp_path / 'w.db'}", season=_season(3))
    world.referee.notices.press = Press(1)  # the batch's answers made together (too few for the worker)
    _clients(world, ("p00", "p02", "p04"))  # one player of each match
    world.tick(START)
    for key in ("p00", "p02", "p04"):
        world.send(key, ROULETTE, START + timedelta(hours=1))

    def failing(spec):
        if spec.kind == "receipt" and spec.match_key == "m1":
            raise RuntimeError("a template's bug")
        return make(spec)

    monkeypatch.setattr(press_module, "make", failing)  # made together
    monkeypatch.setattr(notices_module, "make", failing)  # made as it is written
    with caplog.at_level(logging.WARNING, logger="referee"):
        world.tick(START + timedelta(hours=2))
    with world.store.unit_of_work() as session:
        status = {row.sender: row.status for row in session.scalars(select(Inbound))}
        moved = {session.get(Match, e.match_id).key for e in session.scalars(select(Event).where(Event.kind == "move"))}
        receipts = {
            session.get(Match, r.match_id).key for r in session.scalars(select(Outbox).where(Outbox.kind == "receipt"))
        }
    assert status == {"p00@example.test": "accepted", "p02@example.test": "quarantined", "p04@example.test": "accepted"}
    assert moved == receipts == {"m0", "m2"}  # m1's move is not recorded without its answer
    assert any("judged again, one by one" in r.getMessage() for r in caplog.records)


def test_a_worker_ends_when_the_referee_is_killed(tmp_path):
    """A referee killed (kill -9: it cannot stop its workers) leaves no worker behind."""
    import subprocess
    import sys
    import time

    script = tmp_path / "killed.py"
    script.write_text(
        "import os, signal\n"
        "from referee.match.press import Press\n"
        "if __name__ == '__main__':\n"
        "    press = Press(1)\n"
        "    assert press.start()\n"
        "    print(*(w.process.pid for w in press._workers), flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode == -signal.SIGKILL, run.stderr
    (pid,) = map(int, run.stdout.split())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)
    pytest.fail(f"the worker {pid} outlived the referee's process by a minute")


def test_one_worker_by_default_where_the_referee_may_use_two_cores(monkeypatch):
    """A worker beside the referee only where it may run on another core (a container's
    cpuset of one core: none); ``[service] mail_workers`` overrides it."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    assert press_module.default_workers() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {3}, raising=False)
    assert press_module.default_workers() == 0


def test_mail_workers_is_read_from_the_service_file(tmp_path):
    from referee.config import ConfigError, load_service_config
    from referee.match.notices import Notices

    base = 'secret = "0123456789abcdef0123"\n[mail]\naddress = "referee@example.org"\n'
    path = tmp_path / "referee.toml"
    path.write_text(base)
    config = load_service_config(path)
    assert config.mail_workers is None  # the machine decides
    assert Notices(config).press.workers == press_module.default_workers()
    path.write_text(base + "[service]\nmail_workers = 0\n")
    assert Notices(load_service_config(path)).press.workers == 0
    for wrong in ("-1", "9", "true", '"one"', "1.5"):
        path.write_text(base + f"[service]\nmail_workers = {wrong}\n")
        with pytest.raises(ConfigError, match="mail_workers must be a whole number from 0 to 8"):
            load_service_config(path)


class Answers:
    """A batch that keeps what a worker answers to it."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, list[object]]] = []

    def receive(self, index: int, answers: list[object]) -> None:
        self.answers.append((index, answers))


def test_a_worker_leaves_ctrl_c_to_the_referee():
    """Ctrl-C in a terminal reaches the whole process group: the worker goes on (no
    traceback of its own) and ends when the referee stops it."""
    spec = MailSpec(game="common", kind="no-such-template", context={}, envelope={})
    press = Press(1, parallel=1, chunk=1)
    try:
        assert press.start()
        (worker,) = press._workers
        os.kill(worker.process.pid, signal.SIGINT)
        got = Answers()
        worker.send(got, 0, [pickle.dumps(spec)])
        worker.collect(wait=True)
        assert got.answers == [(0, [None])]  # it answers still
        assert worker.process.is_alive()
    finally:
        press.close()
    assert worker.process.exitcode == 0
