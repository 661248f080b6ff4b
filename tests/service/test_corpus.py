"""The inbound mail corpus (``tests/corpus``) delivered to a whole referee, on SQLite and PostgreSQL.

One world per backend: the match starts, bob sends his round-0 roulette through the scripted
client, then every round-0 corpus mail is delivered at START + 10 min + i * 2 min (its
header placeholders substituted, see ``tests/corpus/make_corpus.py``), followed by a tick at
that instant, and checked right away against ``tests/corpus/index.toml``:

* its Inbound row (``source`` = the delivered file's Maildir key) and ``status``; its
  ``rule`` (always given for an ignored mail, sometimes for a rejected one);
* its replies (Outbox rows whose ``inbound_id`` is the row's id): as many as ``reply`` says
  (0 or 1, never more), each to a registered player and naming no other address in its
  To, Cc or Bcc, each under 200 KB; for a rejected mail the reply's text holds ``phrase``
  (and ``shows``);
* for an accepted mail, the player's pending move in the match state equals ``move``; a
  rejected or ignored mail changes no pending move.

Then alice's valid roulette closes round 0 (sent through the scripted client), the round-0
deadline passes, the round-1 mails go the same way, bob's valid roulette closes round 1
(scripted client), round 1 closes; the mails marked ``after = "round-1"`` go the same way
during round 2; the remaining deadlines pass until the match has ended, and the mails marked
``after = "match"`` follow. At the end: every file left the inbox's new/, every file has
exactly one Inbound row with a final status, the ledger is conserved (no account but SEASON
negative), and no mail went to an unregistered address.

Mismatches are collected, not raised one by one: the test fails once per backend with the
whole table. A tick that raises or runs over TICK_BUDGET seconds is a mismatch too; the test
then parks what is left pending (marks it failed) so the rest of the corpus is still judged.
"""

from __future__ import annotations

import copy
import email
import email.policy
import email.utils
import functools
import importlib.util
import os
import re
import signal
import sys
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.parser import BytesHeaderParser
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import MetaData, Table, func, select, update

from referee.store.models import LedgerEntry, Match

from . import harness
from .harness import DAY, START, World

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
INDEX_FILE = CORPUS / "index.toml"
REGISTERED = {"alice": "alice@example.test", "bob": "bob@example.test"}
REFEREE_ADDRESS = "referee@example.test"
OUTCOMES = {"accepted", "rejected", "ignored", "quarantined"}
MAX_REPLY_BYTES = 200 * 1024
# A hang detector, not a performance goal (bench/ measures those): a tick takes well under a
# second here, so this holds on a machine a hundred times slower.
TICK_BUDGET = 120.0  # seconds one tick may take before it counts as hung
ROUNDS = 10  # the harness's match: rounds 1..10 after the preparation phase; round r closes at START + (r+1) days
PLACEHOLDER = re.compile(rb"\{\{[A-Z0-9_]+\}\}")
GENERATED = ("big-body", "big-line", "corpus")
AFTER = ("round-1", "match")  # later deliveries: once round 1 closed; once the match ended


def load_index() -> list[dict[str, Any]]:
    return tomllib.loads(INDEX_FILE.read_text(encoding="utf-8"))["mail"]


# ---------------------------------------------------------------------------- the index itself


def test_corpus_index_is_well_formed():
    index = load_index()
    assert len(index) >= 170
    files = [m["file"] for m in index]
    assert len(set(files)) == len(files), "a file is listed twice"
    on_disk = {p.name for p in CORPUS.glob("*.eml")}
    listed = {m["file"] for m in index if "generate" not in m}
    assert on_disk == listed, f"not listed: {sorted(on_disk - listed)}; missing: {sorted(listed - on_disk)}"
    seen: set[str] = set()
    for m in index:
        where = m["file"]
        assert m["round"] in (0, 1), where
        assert m.get("after") in (None, *AFTER), where
        assert "after" not in m or m["round"] == 1, f"{where}: a later delivery has round = 1"
        assert m["expect"] in OUTCOMES, where
        assert isinstance(m.get("reply"), bool), where
        assert m.get("note"), where
        if m["expect"] == "accepted":
            moves = m["move"] if isinstance(m["move"], list) else [m["move"]]
            assert all(mv["type"] in ("roulette", "bet") for mv in moves), where
            assert m["round"] == 1 or all(mv["type"] == "roulette" for mv in moves), f"{where}: a bet in round 0"
        if m["expect"] == "rejected":
            assert m.get("phrase"), where
        if m["expect"] == "ignored":
            assert m.get("rule") and m["reply"] is False, where
        if "same_as" in m:
            assert m["same_as"] in seen, f"{where}: same_as must name an earlier file"
        if "generate" in m:
            assert m["generate"].split(":")[0] in GENERATED, where
        else:
            raw = (CORPUS / where).read_bytes()
            head, body = split_head(raw)
            assert not PLACEHOLDER.search(body), f"{where}: placeholders belong in headers only"
        seen.add(where)


# ---------------------------------------------------------------------------- mail plumbing


def split_head(raw: bytes) -> tuple[bytes, bytes]:
    """``(header block, rest)`` at the first empty line (CRLF, LF or CR line ends)."""
    found = [(i, sep) for sep in (b"\r\n\r\n", b"\n\n", b"\r\r") if (i := raw.find(sep)) >= 0]
    if not found:
        return raw, b""
    i, _ = min(found)
    return raw[:i], raw[i:]


def substitute(raw: bytes, values: dict[bytes, bytes]) -> bytes:
    head, rest = split_head(raw)
    head = PLACEHOLDER.sub(lambda m: values.get(m.group(0), m.group(0)), head)
    return head + rest


@functools.cache
def built_cases() -> dict[str, bytes]:
    """The cases make_corpus.py builds but does not store (over its STORED_LIMIT)."""
    spec = importlib.util.spec_from_file_location("make_corpus", CORPUS / "make_corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_corpus", module)  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return {
        case.file: case.raw for case in module.build() if case.raw is not None and len(case.raw) > module.STORED_LIMIT
    }


def generated_mail(spec: str, rnd: int) -> bytes:
    """A big mail from alice to her reply address: ``big-body:N`` (a form, then filler lines
    up to N bytes) or ``big-line:N`` (a body of one line of N bytes)."""
    kind, _, size_text = spec.partition(":")
    size = int(size_text)
    head = (
        b"From: Alice Martin <{{ALICE}}>\nTo: Referee <{{REPLY_ALICE}}>\n"
        b"Subject: Re: [Stationary Roulette m1] my move, with a lot attached\nDate: {{DATE}}\n"
        b"Message-ID: <generated." + kind.encode() + b"." + size_text.encode() + b"@example.net>\n"
        b"In-Reply-To: {{INREPLYTO_ALICE}}\nReferences: {{INREPLYTO_ALICE}}\nMIME-Version: 1.0\n"
        b"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n"
    )
    if kind == "big-body":
        form = (
            b"ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0\n"
            if rnd == 0
            else (b"BET\nGold: 20\nSilver: 20\nBlack: 0\n")
        )
        line = b"filler filler filler filler filler filler filler filler filler\n"
        body = form + b"\nthe rest is filler:\n\n" + line * ((size - len(head)) // len(line) + 1)
    elif kind == "big-line":
        piece = b"lorem ipsum dolor sit amet "
        body = (piece * (size // len(piece) + 1))[:size] + b"\n"
    else:
        raise ValueError(f"unknown generate kind {spec!r}")
    return head + body


def deliver(inbox: Path, data: bytes, at: datetime, stem: str, seq: int) -> str:
    """Drop ``data`` into the Maildir ``inbox`` as an MTA would; returns its Maildir key."""
    key = f"{int(at.timestamp())}.M{seq:06d}P{os.getpid()}Q{seq}.corpus-{stem}"
    tmp = inbox / "tmp" / key
    tmp.write_bytes(data)
    os.utime(tmp, (at.timestamp(), at.timestamp()))
    os.rename(tmp, inbox / "new" / key)
    return key


def reply_text(data: bytes) -> str:
    try:
        msg = email.message_from_bytes(data, policy=email.policy.default)
        part = msg.get_body(preferencelist=("plain",))
        if part is not None:
            return part.get_content()
    except Exception:
        pass
    return data.decode("utf-8", "replace")


class TickTimeout(BaseException):
    """A tick ran over its budget (raised by the watchdog's alarm). A BaseException, so that
    the service's own handlers for its bugs do not take a hang for one of them."""


@contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    if not hasattr(signal, "setitimer"):
        yield
        return

    def fire(signum, frame):
        raise TickTimeout(f"tick still running after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# ---------------------------------------------------------------------------- the world


LIMITS = "replies_per_hour = 1000\nnotices_per_hour = 1000"


class CorpusWorld(World):
    """The harness's world with ``[service] replies_per_hour`` and ``notices_per_hour`` at
    1000, so that reply throttling never decides a corpus case."""

    def __init__(self, tmp: Path, db_url: str):
        super().__init__(tmp, db_url)
        self.problems: list[str] = []
        path = tmp / "referee.toml"
        base = path.read_text()
        if "[service]" in base:
            text = base.replace("[service]", f"[service]\n{LIMITS}", 1)
        else:
            text = base.rstrip("\n") + f"\n[service]\n{LIMITS}\n"
        path.write_text(text)
        self.config = harness.load_service_config(path)
        self.referee = type(self.referee)(self.store, self.config, inbox=self.inbox, outbox=self.outbox)
        meta = MetaData()
        self.inbound = Table("inbound", meta, autoload_with=self.store.engine)
        self.outbox_table = Table("outbox", meta, autoload_with=self.store.engine)
        self._headers: dict[Path, tuple[int, Any]] = {}
        self._step_ids: dict[int, str] = {}

    # ---- what the players have received

    def mails_to(self, address: str) -> list[Any]:
        maildir_for = getattr(self.outbox, "maildir_for", None)
        folder = maildir_for(address) if maildir_for else self.config.mail.outbox / address
        found = []
        for sub in ("new", "cur"):
            d = folder / sub
            if not d.is_dir():
                continue
            for p in d.iterdir():
                if p.name.startswith("."):
                    continue
                mtime = p.stat().st_mtime_ns
                cached = self._headers.get(p)
                if cached is None or cached[0] != mtime:
                    with open(p, "rb") as fh:
                        cached = (mtime, BytesHeaderParser(policy=email.policy.compat32).parse(fh))
                    self._headers[p] = cached
                found.append((mtime, p.name, cached[1]))
        found.sort(key=lambda t: (t[0], t[1]))
        return [h for _, _, h in found]

    def placeholders(self, at: datetime) -> dict[bytes, bytes]:
        values = {
            "ALICE": REGISTERED["alice"],
            "BOB": REGISTERED["bob"],
            "REFEREE": REFEREE_ADDRESS,
            "DATE": email.utils.format_datetime(at),
        }
        for key, address in REGISTERED.items():
            mails = self.mails_to(address)
            reply = next((m["Reply-To"] for m in reversed(mails) if m["Reply-To"]), None)
            reply = email.utils.parseaddr(str(reply))[1] if reply else f"referee+missing-{key}@example.test"
            values[f"REPLY_{key.upper()}"] = reply
            latest = str(mails[-1]["Message-ID"] or "").strip() if mails else ""
            values[f"INREPLYTO_{key.upper()}"] = latest or f"<no-mail-yet.{key}@example.test>"
        local, _, domain = values["REPLY_ALICE"].partition("@")
        token = local.partition("+")[2]
        values["REPLY_ALICE_CUT"] = f"referee+{token[:-4]}@{domain}"
        values["REPLY_ALICE_PLUS"] = f"referee+{token}q@{domain}"
        values["REPLY_ALICE_NONASCII"] = f"referee+{token[:3]}\u00e9{token[4:]}@{domain}"
        values["REPLY_ALICE_UPPER"] = values["REPLY_ALICE"].upper()
        for key, address in REGISTERED.items():
            for n, message_id in enumerate(self.step_message_ids(address)):
                values[f"STEP{n}_{key.upper()}"] = message_id
        return {b"{{" + k.encode() + b"}}": v.encode("utf-8") for k, v in values.items()}

    def step_message_ids(self, address: str) -> list[str]:
        """The Message-IDs of the step mails to ``address`` (round 0's first), from the outbox."""
        t = self.outbox_table
        query = select(t.c.id, t.c.message).where(t.c.kind == "step", func.lower(t.c.to_addr) == address)
        with self.store.engine.connect() as conn:
            rows = list(conn.execute(query.order_by(t.c.id)))
        found = []
        for row in rows:
            if row.id not in self._step_ids:
                head = BytesHeaderParser(policy=email.policy.compat32).parsebytes(bytes(row.message))
                self._step_ids[row.id] = str(head["Message-ID"] or "").strip()
            found.append(self._step_ids[row.id])
        return found

    # ---- what the referee recorded

    def state(self) -> dict[str, Any]:
        with self.store.unit_of_work() as session:
            match = session.scalar(select(Match).where(Match.key == "m1"))
            return copy.deepcopy(match.state) if match and match.state else {}

    def inbound_rows(self, source: str | None = None) -> list[Any]:
        t = self.inbound
        cols = [t.c.id, t.c.source, t.c.status, t.c.note]
        cols.append(t.c.rule)
        query = select(*cols).order_by(t.c.id)
        if source is not None:
            query = query.where(t.c.source == source)
        with self.store.engine.connect() as conn:
            return list(conn.execute(query))

    def replies_to(self, row: Any) -> list[Any]:
        t = self.outbox_table
        query = select(t.c.id, t.c.kind, t.c.to_addr, t.c.message, t.c.dedupe_key)
        query = query.where(t.c.inbound_id == row.id)
        with self.store.engine.connect() as conn:
            return list(conn.execute(query.order_by(t.c.id)))

    def park(self, now: datetime) -> list[str]:
        """After a tick raised: mark what it left pending as failed, so later ticks go on."""
        done = []
        with self.store.engine.begin() as conn:
            n = conn.execute(
                update(self.inbound)
                .where(self.inbound.c.status == "pending")
                .values(status="failed", note="parked by test_corpus: the tick that should process it raised")
            ).rowcount
            if n:
                done.append(f"{n} pending inbound row(s) parked as failed")
            t = self.outbox_table
            n = conn.execute(
                update(t).where(t.c.status == "pending", t.c.next_attempt_at <= now).values(status="failed")
            ).rowcount
            if n:
                done.append(f"{n} due outbox row(s) parked as failed")
        new = self.config.mail.inbox / "new"
        for p in list(new.iterdir()):
            if p.name.startswith("."):
                continue
            os.rename(p, self.config.mail.inbox / "cur" / f"{p.name.split(':')[0]}:2,S")
            done.append(f"{p.name} moved out of new/ by the test")
        return done


# ---------------------------------------------------------------------------- the run


@dataclass
class Run:
    world: CorpusWorld
    backend: str
    mismatches: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)  # corpus file -> Maildir key
    values_used: dict[str, dict[bytes, bytes]] = field(default_factory=dict)
    slow: list[tuple[float, str]] = field(default_factory=list)
    seq: int = 0

    def miss(self, m: dict[str, Any], got: str, problem: str) -> None:
        expected = m["expect"] + (f" ({m['rule']})" if m.get("rule") else "")
        problem = " ".join(problem.split())
        if len(problem) > 300:
            problem = problem[:299] + "\u2026"
        self.mismatches.append((m["file"], str(m["round"]), expected, got, problem))

    def tick(self, at: datetime, what: str) -> str | None:
        """Tick at ``at``; None when it went well, else what went wrong (after parking)."""
        t0 = time.monotonic()
        error = None
        try:
            with watchdog(TICK_BUDGET):
                self.world.tick(at)
        except (Exception, TickTimeout) as exc:
            error = f"tick raised {type(exc).__name__}: {str(exc)[:200]}"
        took = time.monotonic() - t0
        self.slow.append((took, what))
        if error is None and took > TICK_BUDGET:
            error = f"tick took {took:.1f} s (budget {TICK_BUDGET:g} s)"
        if error is not None:
            parked = self.world.park(at)
            if parked:
                error += "; " + "; ".join(parked)
        return error

    def send_form(self, key: str, text: str, at: datetime, what: str) -> None:
        """A submission through the scripted client (not a corpus case), to the player's reply
        address (the latest mail may be one without a Reply-To, which a client answers at From)."""
        reply = self.world.placeholders(at)[b"{{REPLY_" + key.upper().encode() + b"}}"].decode()
        try:
            self.world.send(key, text, at, to_addr=reply)
        except Exception as exc:
            self.setup.append(f"{what}: the scripted client could not send: {exc!r}")
            return
        error = self.tick(at, what)
        if error:
            self.setup.append(f"{what}: {error}")

    def deliver_case(self, m: dict[str, Any], at: datetime) -> None:
        world = self.world
        if "same_as" in m and m["same_as"] in self.values_used:
            values = self.values_used[m["same_as"]]
        else:
            values = world.placeholders(at)
        self.values_used[m["file"]] = values
        if m.get("generate") == "corpus":  # a large case, built by make_corpus.py instead of stored
            raw = built_cases()[m["file"]]
        elif "generate" in m:
            raw = generated_mail(m["generate"], m["round"])
        else:
            raw = (CORPUS / m["file"]).read_bytes()
        data = substitute(raw, values)
        left = PLACEHOLDER.findall(split_head(data)[0])
        if left:
            self.miss(m, "-", f"unknown placeholders {sorted(set(left))}")
        before = world.state().get("pending", {})
        self.seq += 1
        key = deliver(world.config.mail.inbox, data, at, m["file"][:-4], self.seq)
        self.keys[m["file"]] = key
        error = self.tick(at, m["file"])
        if error:
            self.miss(m, "-", error)
        self.check(m, key, before, values)

    def check(self, m: dict[str, Any], key: str, before: dict[str, Any], values: dict[bytes, bytes]) -> None:
        world = self.world
        rows = world.inbound_rows(key)
        if len(rows) != 1:
            self.miss(m, f"{len(rows)} inbound rows", "expected exactly one Inbound row for the delivered file")
            if not rows:
                return
        row = rows[0]
        rule = getattr(row, "rule", None)
        got = row.status + (f" ({rule})" if rule else "")
        note = (row.note or "")[:160]
        if row.status != m["expect"]:
            self.miss(m, got, f"status {row.status}; note: {note}")
        elif m.get("rule") and rule != m["rule"]:
            self.miss(m, got, f"rule {rule!r}, expected {m['rule']!r}; note: {note}")

        replies = world.replies_to(row)
        want = 1 if m["reply"] else 0
        if len(replies) != want:
            kinds = ", ".join(f"{r.kind} to {r.to_addr}" for r in replies) or "none"
            self.miss(m, got, f"{len(replies)} replies ({kinds}), expected {want}")
        player = m.get("player")
        for r in replies:
            if r.to_addr.lower() not in REGISTERED.values():
                self.miss(m, got, f"a reply to an unregistered address: {r.to_addr}")
            elif player and want and r.to_addr.lower() != REGISTERED[player]:
                self.miss(m, got, f"the reply went to {r.to_addr}, expected {REGISTERED[player]}")
            if len(r.message) >= MAX_REPLY_BYTES:
                self.miss(m, got, f"a reply of {len(r.message)} bytes (limit {MAX_REPLY_BYTES})")
            head = BytesHeaderParser(policy=email.policy.compat32).parsebytes(bytes(r.message))
            named = email.utils.getaddresses([str(v) for f in ("To", "Cc", "Bcc") for v in head.get_all(f, [])])
            stray = sorted({a.lower() for _, a in named if a} - set(REGISTERED.values()))
            if stray:
                self.miss(m, got, f"the reply's To/Cc/Bcc name unregistered addresses: {stray}")
        if m.get("shows") and replies:
            shown = substitute(m["shows"].encode(), values).decode("utf-8")
            if " ".join(shown.lower().split()) not in " ".join(reply_text(replies[0].message).lower().split()):
                self.miss(m, got, f"reply does not show {shown}")
        if m["expect"] == "rejected" and replies:
            text = reply_text(replies[0].message)
            if " ".join(m["phrase"].lower().split()) not in " ".join(text.lower().split()):  # wrapped anywhere
                reason = next((ln.strip() for ln in text.splitlines() if ln.startswith("Problem:")), "")
                self.miss(m, got, f"reply lacks {m['phrase']!r}: {reason[:200] or ' '.join(text.split())[:200]}")

        pending = world.state().get("pending", {})
        if m["expect"] == "accepted" and row.status == "accepted":
            moves = m["move"] if isinstance(m["move"], list) else [m["move"]]
            mine = pending.get(player or "alice", {})
            for mv in moves:
                if mv["type"] == "roulette":
                    want_move, have = {"winning": mv["winning"], "points": mv["points"]}, mine.get("roulette")
                else:
                    want_move, have = mv["bets"], mine.get("bet")
                if have != want_move:
                    self.miss(m, got, f"pending {mv['type']} is {have}, expected {want_move}")
        elif m["expect"] in ("rejected", "ignored") and pending != before:
            self.miss(m, got, f"pending moves changed: {before} -> {pending}")

    # ---- the end

    def final_checks(self, index: list[dict[str, Any]]) -> None:
        world = self.world
        new = {p.name.split(":")[0] for p in (world.config.mail.inbox / "new").iterdir()}
        cur = {p.name.split(":")[0] for p in (world.config.mail.inbox / "cur").iterdir()}
        rows: dict[str, list[Any]] = {}
        for row in world.inbound_rows():
            rows.setdefault(row.source, []).append(row)
        flagged = {file for file, *_ in self.mismatches}
        for m in index:
            key = self.keys.get(m["file"])
            if m["file"] in flagged:
                continue  # already in the table; the end state adds nothing new for it
            if key is None:
                self.miss(m, "-", "never delivered")
                continue
            if key in new or key not in cur:
                self.miss(m, "-", "the file was not moved out of the inbox's new/ into cur/")
            found = rows.get(key, [])
            if len(found) != 1 or found[0].status not in OUTCOMES:
                statuses = ", ".join(r.status for r in found) or "no row"
                self.miss(m, statuses, "at the end: expected exactly one Inbound row with a final status")
        with world.store.unit_of_work() as session:
            balances: dict[str, int] = {}
            total = 0
            for e in session.scalars(select(LedgerEntry)):
                balances[e.from_account] = balances.get(e.from_account, 0) - e.amount
                balances[e.to_account] = balances.get(e.to_account, 0) + e.amount
                total += e.amount
            if sum(balances.values()) != 0:
                self.setup.append(f"ledger: balances sum to {sum(balances.values())}, not 0: {balances}")
            negative = {a: b for a, b in balances.items() if b < 0 and a != "SEASON"}
            if negative:
                self.setup.append(f"ledger: negative balances {negative}")
            if total <= 0:
                self.setup.append("ledger: empty (the season grants are missing)")
        t = world.outbox_table
        with world.store.engine.connect() as conn:
            stray = list(
                conn.execute(
                    select(t.c.id, t.c.kind, t.c.to_addr).where(
                        func.lower(t.c.to_addr).not_in(list(REGISTERED.values()))
                    )
                )
            )
        for r in stray:
            self.setup.append(f"outbox {r.id} ({r.kind}) goes to an unregistered address {r.to_addr}")

    def report(self, elapsed: float) -> str:
        lines = []
        if self.mismatches:
            width = max(len(f) for f, *_ in self.mismatches)
            gwidth = max(len(g) for *_, g, _ in self.mismatches)
            lines.append(
                f"{len(self.mismatches)} mismatch(es) in {len({m[0] for m in self.mismatches})} corpus "
                f"mail(s) on {self.backend}:"
            )
            lines.append(f"{'file':{width}}  rd  {'expected':28}  {'got':{gwidth}}  problem")
            for file, rnd, expected, got, problem in self.mismatches:
                lines.append(f"{file:{width}}  {rnd:2}  {expected:28}  {got:{gwidth}}  {problem}")
        if self.setup:
            lines.append("")
            lines.append("setup and whole-run problems:")
            lines.extend(f"  - {p}" for p in self.setup)
        slowest = sorted(self.slow, reverse=True)[:5]
        lines.append("")
        lines.append(
            f"corpus run on {self.backend}: {elapsed:.1f} s; slowest ticks: "
            + ", ".join(f"{what} {took:.2f} s" for took, what in slowest)
        )
        return "\n".join(lines)


def match_status(world: CorpusWorld) -> str | None:
    with world.store.unit_of_work() as session:
        match = session.scalar(select(Match).where(Match.key == "m1"))
        return match.status if match else None


def test_the_corpus_gets_the_outcomes_of_its_index(tmp_path, db_url):
    index = load_index()
    backend = "postgresql" if db_url.startswith("postgresql") else "sqlite"
    started = time.monotonic()
    world = CorpusWorld(tmp_path / "world", db_url)
    run = Run(world, backend)
    run.setup.extend(world.problems)
    try:
        error = run.tick(START, "match start")
        if error:
            run.setup.append(f"match start: {error}")
        run.send_form(
            "bob",
            "ROULETTE\nWinning colour: Silver\nGold: 30\nSilver: 10\nBlack: 0",
            START + timedelta(minutes=5),
            "bob's round-0 roulette (scripted client)",
        )

        by_round = {r: [m for m in index if m["round"] == r and "after" not in m] for r in (0, 1)}
        later = {a: [m for m in index if m.get("after") == a] for a in AFTER}
        at = START
        for i, m in enumerate(by_round[0]):
            at = START + timedelta(minutes=10 + 2 * i)
            run.deliver_case(m, at)
        # alice's roulette that stands when round 0 closes, so bob has something to bet on
        run.send_form(
            "alice",
            "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0",
            at + timedelta(minutes=2),
            "alice's closing round-0 roulette (scripted client)",
        )
        state = world.state()
        if (state.get("pending", {}).get("alice", {}) or {}).get("roulette") is None:
            run.setup.append("alice has no pending roulette at the end of round 0")

        error = run.tick(START + DAY + timedelta(seconds=1), "round-0 deadline")
        if error:
            run.setup.append(f"round-0 deadline: {error}")
        state = world.state()
        if state.get("round") != 1:
            run.setup.append(f"after the round-0 deadline the match is in round {state.get('round')}, not 1")
        elif not all(state["history"][0].get("prepared", {}).values()):
            run.setup.append(f"round 0 closed with {state['history'][0].get('prepared')}")

        at = START + DAY
        for i, m in enumerate(by_round[1]):
            at = START + DAY + timedelta(minutes=10 + 2 * i)
            run.deliver_case(m, at)
        # bob's roulette that stands when round 1 closes, so alice has something to bet on in round 2
        run.send_form(
            "bob",
            "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0",
            at + timedelta(minutes=2),
            "bob's closing round-1 roulette (scripted client)",
        )
        error = run.tick(START + 2 * DAY + timedelta(seconds=1), "round-1 deadline")
        if error:
            run.setup.append(f"round-1 deadline: {error}")
        state = world.state()
        if state.get("round") != 2:
            run.setup.append(f"after the round-1 deadline the match is in round {state.get('round')}, not 2")

        # once round 1 closed: the mails of index entries with after = "round-1", during round 2
        for i, m in enumerate(later["round-1"]):
            run.deliver_case(m, START + 2 * DAY + timedelta(minutes=10 + 2 * i))
        # the remaining deadlines, until the match ends; then the mails with after = "match"
        day = 2
        while match_status(world) == "running" and day <= ROUNDS:
            day += 1
            error = run.tick(START + day * DAY + timedelta(seconds=1), f"deadline {day}")
            if error:
                run.setup.append(f"deadline {day}: {error}")
        if match_status(world) == "running":
            run.setup.append(f"the match is still running after {day} deadlines")
        for i, m in enumerate(later["match"]):
            run.deliver_case(m, START + day * DAY + timedelta(minutes=10 + 2 * i))
        run.final_checks(index)
    finally:
        world.store.dispose()
    elapsed = time.monotonic() - started
    report = run.report(elapsed)
    (tmp_path / f"corpus-report-{backend}.txt").write_text(report)
    if run.mismatches or run.setup:
        pytest.fail(report, pytrace=False)
