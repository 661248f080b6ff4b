"""The reply corpus of issue 20: replies to the REAL mails the referee sent, of five kinds,
in the shapes of real clients, for all five games, judged by the whole service.

Kinds: ``A`` the move typed above the quote, ``B`` below it, ``C`` the form edited inside
the quote, ``D`` chat only, ``E`` the form confirmed unchanged ("OK, same as below").

Each game gets one :class:`Season` per name form (the acting player is "Tomás Silva", in
NFC or NFD): a World advanced to a step where that player must act, with three of our
mails to answer (the step mail, its reminder, a receipt). Each case is judged on a fresh
copy of that moment (the SQLite file and the Maildirs are put back after each case), so
the cases are independent and cheap. The outcome compares the moves the engine stored
for the reply (Event rows) with the moves the player meant (the game's own parse of what
they typed or edited).

``python -m tests.replies.report`` prints the table.
"""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select

from referee.games import GAMES
from referee.mail.maildir import deliver_to_maildir
from referee.mail.parse import parse_body
from referee.pipeline import judge as judge_module
from referee.pipeline.seat_mail import UNCHANGED_FORM
from referee.store.models import Event, Inbound, Match, Outbox
from tests.migrated import migrated_sqlite
from tests.service.harness import SEASON, START, World

from . import shapes as shape_module

KINDS = ("A", "B", "C", "D", "E")
MOVE_KINDS = ("A", "B", "C")
MAIL_KINDS = ("step", "reminder", "receipt")
NAME_FORMS = ("NFC", "NFD")
GAME_NAMES = ("stationary-roulette", "indian-poker", "rewind-holdem", "betting-minority", "matchjack")
ACTOR_NAME = "Tomás Silva"
OTHER_NAME = "Zoë Ångström"
CHAT = "Thanks for the update! I will think about it tonight and write again."
CONFIRM = "OK, same as below."
HOUR = timedelta(hours=1)

RIGHT, NOTHING, REFUSED, WRONG, ANSWERED_WRONGLY = (
    "right move recorded",
    "nothing recorded, as expected",
    "right move refused",
    "WRONG MOVE RECORDED",
    "answered wrongly",
)
CLIENT_DROPPED = "client dropped the edit"  # a harness failure (real_clients.py), not the reader's
OUTCOMES = (RIGHT, NOTHING, REFUSED, WRONG, ANSWERED_WRONGLY, CLIENT_DROPPED)


# ---------------------------------------------------------------------- the games


def _names(season: dict, form: str) -> dict:
    season = copy.deepcopy(season)
    for player in season["players"]:
        if player["id"] == "alice":
            player["name"] = unicodedata.normalize(form, ACTOR_NAME)
        elif player["id"] == "bob":
            player["name"] = unicodedata.normalize(form, OTHER_NAME)
        elif player.get("name") == OTHER_NAME:  # Betting Minority's participant of that name
            player["name"] = "Zoe Lind"
    for match in season["matches"]:
        match["reminders"] = ["2h"]
    return season


def _duel(game: str) -> dict:
    return {
        **SEASON,
        "matches": [
            {
                "id": "m1",
                "game": game,
                "players": ["alice", "bob"],
                "start": START.isoformat(),
                "seed": 7,
                "options": {"dmo": "alice"},
            }
        ],
    }


def _betting_minority() -> dict:
    from tests.service.test_betting_minority_service import bm_season

    season = bm_season()
    # the actor is the one who acts first (the DMO gives the starting marker): alice here
    season["matches"][0]["players"] = ["bob", "alice", *season["matches"][0]["players"][2:]]
    return season


def _matchjack() -> dict:
    from tests.service.test_matchjack_service import mj_season

    return mj_season()


@dataclass(frozen=True)
class GameSpec:
    """What the corpus needs of a game: its season, the form section the player edits and
    the values they may put there (the first that means another legal move is used)."""

    name: str
    season: Callable[[], dict]
    section: Callable[[list[str]], bool]  # which paragraph of the form the player changes
    alternatives: tuple[str, ...]  # its first line(s) as the player may write them
    warmup: tuple[str, ...] = ()  # moves to reach a step worth answering: "player: form" (the form's default)
    receipt_moves: tuple[str, ...] = ()  # the actor's moves tried to get a receipt that carries a form


def _command_section(paragraph: list[str]) -> bool:
    return True


def _bet_section(paragraph: list[str]) -> bool:
    return paragraph[0].strip().upper() == "BET"


SPECS = {
    "stationary-roulette": GameSpec(
        "stationary-roulette",
        lambda: SEASON,
        _bet_section,
        ("BET\nGold: 40\nSilver: 0\nBlack: 0", "BET\nGold: 5\nSilver: 30\nBlack: 5"),
        warmup=("alice", "bob", "tick"),
    ),
    "indian-poker": GameSpec(
        "indian-poker", lambda: _duel("indian-poker"), _command_section, ("RAISE 2", "FOLD", "CHECK", "CALL"),
        receipt_moves=("FOLD", "RAISE 1"),
    ),
    "rewind-holdem": GameSpec(
        "rewind-holdem", lambda: _duel("rewind-holdem"), _command_section, ("RAISE 2", "FOLD", "CHECK", "CALL"),
        receipt_moves=("FOLD", "RAISE 1", "CALL", "CHECK"),
    ),
    "betting-minority": GameSpec(
        "betting-minority",
        _betting_minority,
        _command_section,
        ("MARKER OPPONENT", "MARKER ME", "SEND P1 TO Dos", "SEND P2 TO Tres"),
        receipt_moves=("MARKER ME", "MARKER OPPONENT"),
    ),
    "matchjack": GameSpec("matchjack", _matchjack, _command_section, ("FOLD", "STAY")),
}


# ---------------------------------------------------------------------- a season at a moment


def paragraphs(form: str) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for line in form.split("\n"):
        if line.strip():
            out[-1].append(line)
        elif out[-1]:
            out.append([])
    return [p for p in out if p]


@dataclass
class Mail:
    """One of our mails to the actor, at the moment a case answers it."""

    kind: str  # step | reminder | receipt
    raw: bytes
    form: str
    moment: str  # the snapshot to restore before answering it
    at: datetime  # when the reply arrives
    state: Any  # the match state then


class Season:
    """A World of one game, the actor named in one Unicode form, with snapshots of the
    moments the cases answer."""

    def __init__(self, spec: GameSpec, name_form: str, root: Path):
        self.spec, self.name_form = spec, name_form
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.db = root / "referee.db"
        url = migrated_sqlite(self.db)
        self.world = World(root / "world", url, _names(spec.season(), name_form))
        self.game = GAMES[spec.name]
        self.snapshots: dict[str, tuple[Path, set[Path]]] = {}
        self.mails: dict[str, Mail] = {}
        self.notices: list[tuple[int, str, dict]] = []
        self._prepare()

    # -- the world

    def match(self) -> Match:
        with self.world.store.unit_of_work() as session:
            return session.scalar(select(Match).where(Match.key == "m1"))

    def rows(self, **where: Any) -> list[Outbox]:
        with self.world.store.unit_of_work() as session:
            query = select(Outbox).order_by(Outbox.id)
            for key, value in where.items():
                query = query.where(getattr(Outbox, key) == value)
            return list(session.scalars(query))

    def address(self, key: str) -> str:
        return f"{key}@example.test"

    def deliver(self, raw: bytes, at: datetime) -> None:
        deliver_to_maildir(self.world.config.mail.inbox, raw, delivered_at=at)

    def send_form(self, key: str, at: datetime, text: str | None = None) -> None:
        """``key`` answers their latest mail with a form, typing ``text`` (default: the form
        as it stands) above a quote, and the referee runs."""
        row = [r for r in self.rows(to_addr=self.address(key)) if r.form][-1]
        typed = row.form if text is None else text
        raw = shape_module.build(
            shape_module.BY_NAME["gmail-web-plain"],
            row.message,
            lambda editor: typed + "\n\n" + editor,
            from_addr=self.address(key),
            name=key.title(),
            at=at,
        )
        self.deliver(raw, at)
        self.world.tick(at)

    # -- snapshots

    def _files(self) -> set[Path]:
        mail = self.world.dir / "inbox", self.world.dir / "outbox"
        return {p for d in mail if d.exists() for p in d.rglob("*") if p.is_file()}

    def snapshot(self, name: str) -> None:
        self.world.store.dispose()
        copy_path = self.root / f"{name}.db"
        shutil.copyfile(self.db, copy_path)
        self.snapshots[name] = (copy_path, self._files())

    def restore(self, name: str) -> None:
        copy_path, files = self.snapshots[name]
        self.world.store.dispose()
        for suffix in ("-wal", "-shm"):
            Path(f"{self.db}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(copy_path, self.db)
        for path in self._files() - files:
            path.unlink()

    # -- the moments

    def _prepare(self) -> None:
        at = START
        self.world.tick(at)
        for step in self.spec.warmup:  # e.g. both roulettes sent, then the round closes
            if step == "tick":
                at = self.match().deadline
                self.world.tick(at)
            else:
                at += HOUR
                self.send_form(step, at)
        match = self.match()
        deadline = match.deadline
        reminder_at = deadline - 2 * HOUR + timedelta(minutes=1)
        self.world.tick(reminder_at)
        reply_at = deadline - HOUR
        self.snapshot("open")
        state = self.match().state
        for kind in ("step", "reminder"):
            row = [r for r in self.rows(to_addr=self.address("alice")) if r.form and r.kind == kind][-1]
            self.mails[kind] = Mail(kind, row.message, row.form, "open", reply_at, state)
        self._prepare_receipt(reminder_at + timedelta(minutes=5), reply_at)

    def _prepare_receipt(self, sent_at: datetime, reply_at: datetime) -> None:
        """The actor sends a move and gets a receipt that carries a form for a step they may
        still act in (their submission to revise, or their turn again)."""
        for text in (None, *self.spec.receipt_moves):
            self.restore("open")
            self.send_form("alice", sent_at, text if text is None else self._with_step(text))
            receipts = [r for r in self.rows(to_addr=self.address("alice"), kind="receipt") if r.form]
            if receipts and self._may_act(receipts[-1].step_key):
                self.snapshot("receipt")
                row = receipts[-1]
                self.mails["receipt"] = Mail("receipt", row.message, row.form, "receipt", reply_at, self.match().state)
                return
        raise AssertionError(f"{self.spec.name}: no receipt with a form the actor may answer")

    def _with_step(self, command: str) -> str:
        form = self.mails["step"].form
        rest = form.split("\n", 1)[1] if "\n" in form else ""
        return command + "\n" + rest

    def _may_act(self, step_key: str | None) -> bool:
        from referee.games.base import open_steps

        match = self.match()
        return match.status == "running" and any(
            s.key == step_key and "alice" in s.players for s in open_steps(self.game, match.state)
        )

    # -- a case

    def judge(self, mail: Mail, raw: bytes) -> tuple[str, list[Any], list[dict]]:
        """The reply judged at ``mail.at`` on the moment it answers: (status, moves stored,
        the error replies written for it)."""
        self.restore(mail.moment)
        self.deliver(raw, mail.at)
        self.notices.clear()
        self.world.tick(mail.at)
        with self.world.store.unit_of_work() as session:
            row = session.scalars(select(Inbound).order_by(Inbound.id.desc())).first()
            assert row is not None
            moves = [
                e.payload.get("move")
                for e in session.scalars(
                    select(Event).where(Event.inbound_id == row.id, Event.kind == "move").order_by(Event.seq)
                )
            ]
            errors = [extra for rid, kind, extra in self.notices if rid == row.id and kind == "error"]
            return row.status, moves, errors

    def close(self) -> None:
        self.world.store.dispose()


@contextmanager
def recording_notices(seasons: list[Season]) -> Iterator[None]:
    """Every reply the judge writes (its kind and content) recorded for the season judging."""
    original = judge_module.Judge.notice
    current: dict[str, Season | None] = {"season": None}

    def notice(self, session, row, limiter, now, kind, match, player, **kw):  # type: ignore[no-untyped-def]
        season = current["season"]
        if season is not None:
            season.notices.append((row.id, kind, kw.get("extra", {})))
        return original(self, session, row, limiter, now, kind, match, player, **kw)

    judge_module.Judge.notice = notice  # type: ignore[method-assign]
    try:
        yield current  # type: ignore[misc]
    finally:
        judge_module.Judge.notice = original  # type: ignore[method-assign]


# ---------------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Case:
    game: str
    shape: str
    kind: str
    name_form: str
    mail_kind: str
    real: bool = False  # a real client program (real_clients.py)

    @property
    def id(self) -> str:
        return f"{self.game}/{self.shape}/{self.kind}/{self.name_form}/{self.mail_kind}"


@dataclass
class Result:
    case: Case
    outcome: str
    detail: str = ""
    status: str = ""
    got: list[Any] = field(default_factory=list)
    expected: list[Any] = field(default_factory=list)
    ours_quoted: list[str] = field(default_factory=list)  # lines of our mail an error quoted as the player's


def real_clients() -> tuple[str, ...]:
    """The real client programs available here (none when real_clients.py is not ready)."""
    try:
        from . import real_clients as rc
    except Exception:  # the module is being written by another engineer
        return ()
    clients = getattr(rc, "CLIENTS", ())
    available = getattr(rc, "available", lambda _c: False)
    return tuple(c for c in clients if available(c))


def cases() -> list[Case]:
    """game x shape x kind, each with a name form and a mail kind in rotation (so that every
    pair of them occurs in every game), and the real clients the same way."""
    out: list[Case] = []
    reals = real_clients()
    for g, game in enumerate(GAME_NAMES):
        shapes = [(s.name, False) for s in shape_module.SHAPES] + [(c, True) for c in reals]
        for i, (shape, real) in enumerate(shapes):
            for k, kind in enumerate(KINDS):
                n = i * len(KINDS) + k + g
                out.append(Case(game, shape, kind, NAME_FORMS[n % 2], MAIL_KINDS[(n // 2) % 3], real))
    return out


# ---------------------------------------------------------------------- edits


def _split(line: str) -> tuple[str, str]:
    """A line's quote prefix (marks, spaces, tabs) and its content."""
    i = 0
    while i < len(line) and line[i] in " \t>|":
        i += 1
    return line[:i], line[i:]


def edit_inside(old: list[str], new: list[str]) -> Callable[[str], str]:
    """Replace, inside the copy, the run of lines showing ``old`` with ``new`` (each keeping
    its line's quote prefix): the player's edit of a form section."""
    old_c = [" ".join(x.split()) for x in old]

    def edit(text: str) -> str:
        lines = text.split("\n")
        contents = [" ".join(_split(line)[1].split()) for line in lines]
        for i in range(len(lines) - len(old) + 1):
            if contents[i : i + len(old)] == old_c:
                for j, value in enumerate(new):
                    prefix = _split(lines[i + j])[0]
                    if prefix and not prefix.endswith((" ", "\t")) and prefix.strip():
                        prefix += " "
                    lines[i + j] = prefix + value
                return "\n".join(lines)
        raise AssertionError(f"the form section {old!r} is not in the editor text")

    return edit


def plan(case: Case, season: Season, mail: Mail) -> tuple[Callable[[str], str], str | None, str]:
    """The edit the player makes, the text whose moves they mean (None: no move), and the
    lines they wrote themselves."""
    spec = season.spec
    paras = paragraphs(mail.form)
    section = next(p for p in paras if spec.section(p))
    new = _alternative(season, mail, section)
    typed = "\n".join(new)
    if case.kind in ("A", "B") and len(section) == 2 and sum(map(ord, case.shape)) % 2:
        typed = new[0]  # the command alone, without its Step line, as players often write it
    if case.kind == "A":
        return (lambda t: typed + "\n\n" + t), typed, typed
    if case.kind == "B":
        return (lambda t: t.rstrip("\n") + "\n\n" + typed + "\n"), typed, typed
    if case.kind == "C":
        return edit_inside(section, new), typed, typed
    chat = CHAT if case.kind == "D" else CONFIRM
    return (lambda t: chat + "\n\n" + t), None, chat


def _alternative(season: Season, mail: Mail, section: list[str]) -> list[str]:
    """The section as the player changes it: the first alternative that means another legal
    move than the section as we sent it."""
    game = season.game
    base = _moves(game, mail.state, "\n".join(section))
    for alt in season.spec.alternatives:
        lines = alt.split("\n")
        new = lines + section[len(lines) :] if len(lines) < len(section) else lines
        moves = _moves(game, mail.state, "\n".join(new))
        if moves and moves != base and _legal(game, mail.state, moves):
            return new
    raise AssertionError(f"{season.spec.name}: no alternative move for {section!r}")


def _moves(game: Any, state: Any, text: str) -> list[Any]:
    try:
        return _canon(game.parse(state, "alice", text).moves)
    except Exception:
        return []


def _legal(game: Any, state: Any, moves: list[Any]) -> bool:
    for move in moves:
        applied = game.apply_move(state, "alice", move)
        if not applied.accepted:
            return False
        state = applied.state
    return True


def _canon(value: Any) -> Any:
    """Moves as compared: plain JSON, without the ``step`` a move carries when the reply held
    the form's check line (Stationary Roulette's ``Step: Round 3 of 10``, read with any
    section the player changed inside the quote): it names the round answered, no part of
    the move itself (a wrong one is refused, never recorded)."""
    moves = json.loads(json.dumps(value, default=str))
    if isinstance(moves, list):
        return [{k: v for k, v in m.items() if k != "step"} if isinstance(m, dict) else m for m in moves]
    return moves


def _norm(line: str) -> str:
    line = _split(line)[1]
    try:
        if any(m in line for m in ("\u00c3", "\u00c2", "\u00e2\u20ac")):
            line = line.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        pass
    return " ".join(unicodedata.normalize("NFKC", line).casefold().split())


def run_case(case: Case, season: Season, build: Callable[..., bytes]) -> Result:
    mail = season.mails[case.mail_kind]
    edit, meant, own = plan(case, season, mail)
    made: list[tuple[str, str]] = []

    def recorded(draft: str) -> str:
        made.append((draft, edit(draft)))
        return made[-1][1]

    raw = build(case, mail.raw, recorded)
    if not _sent_as_edited(raw, made):
        return Result(case, CLIENT_DROPPED, "the client sent the draft without the player's edit")
    status, got, errors = season.judge(mail, raw)
    got = _canon(got)
    expected = _moves(season.game, mail.state, meant) if meant is not None else []
    ours = _our_lines(mail.raw, own)
    quoted = [
        line
        for extra in errors
        for line in [*extra.get("quoted", {}).get("lines", []), (extra.get("error") or {}).get("line") or ""]
        if line and _norm(line) in ours
    ]
    reasons = [(extra.get("error") or {}).get("reason", "") for extra in errors]
    result = Result(case, "", status=status, got=got, expected=expected, ours_quoted=quoted)
    if meant is not None:
        if got == expected:
            result.outcome = RIGHT
        elif got:
            result.outcome, result.detail = WRONG, f"recorded {got}, meant {expected}"
        else:
            result.outcome, result.detail = REFUSED, "; ".join(reasons) or status
    elif got:
        result.outcome, result.detail = WRONG, f"recorded {got} from a reply without a move"
    elif case.kind == "E" and errors and reasons != [UNCHANGED_FORM]:
        result.outcome, result.detail = ANSWERED_WRONGLY, "; ".join(reasons)
    elif quoted:
        result.outcome, result.detail = ANSWERED_WRONGLY, f"quoted our lines {quoted[:3]}"
    else:
        result.outcome = NOTHING
    if quoted and result.outcome not in (WRONG, ANSWERED_WRONGLY):
        result.detail = (result.detail + f"; quoted our lines {quoted[:3]}").strip("; ")
    return result


def _sent_as_edited(raw: bytes, made: list[tuple[str, str]]) -> bool:
    """Does the reply hold every line the player's edit added to the draft? (A real client
    driven by real_clients.py may fail to take the edited draft back.)"""
    if not made:
        return False
    draft, edited = made[-1]
    added = {_norm(line) for line in edited.split("\n")} - {_norm(line) for line in draft.split("\n")}
    sent = {_norm(line) for line in parse_body(raw).shown.split("\n")}
    return not (added - sent - {""})


def _our_lines(raw: bytes, own: str) -> set[str]:
    """The lines of our mail, as compared, less those the player wrote too."""
    text = shape_module.original_text(raw).text
    mine = {_norm(line) for line in own.split("\n")}
    return {n for n in (_norm(line) for line in text.split("\n")) if n and n not in mine}


def _build(case: Case, original: bytes, edit: Callable[[str], str], name: str) -> bytes:
    if case.real:
        from . import real_clients as rc

        with tempfile.TemporaryDirectory() as tmp:
            return rc.reply_with(case.shape, original, edit, tmp=Path(tmp), from_addr="alice@example.test", name=name)
    return shape_module.build(
        shape_module.BY_NAME[case.shape], original, edit, from_addr="alice@example.test", name=name
    )


def run(selected: list[Case] | None = None, *, games: tuple[str, ...] = GAME_NAMES) -> list[Result]:
    """Judge the cases (default: all) of the given games; one Season per game and name form."""
    todo = [c for c in (selected if selected is not None else cases()) if c.game in games]
    results: list[Result] = []
    # on a RAM disk where there is one: the service syncs every commit and every delivered mail
    scratch = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="replies-", dir=scratch) as tmp, recording_notices([]) as current:
        for game in games:
            for form in NAME_FORMS:
                mine = [c for c in todo if c.game == game and c.name_form == form]
                if not mine:
                    continue
                season = Season(SPECS[game], form, Path(tmp) / f"{game}-{form}")
                current["season"] = season
                name = unicodedata.normalize(form, ACTOR_NAME)
                try:
                    for case in mine:
                        results.append(run_case(case, season, lambda c, o, e, name=name: _build(c, o, e, name)))
                finally:
                    season.close()
    return results


# ---------------------------------------------------------------------- the report


def table(results: list[Result]) -> str:
    """Counts by game x kind x outcome, then the failures."""
    counts = Counter((r.case.game, r.case.kind, r.outcome) for r in results)
    short = {
        RIGHT: "right", NOTHING: "nothing", REFUSED: "refused", WRONG: "WRONG",
        ANSWERED_WRONGLY: "answered-wrongly", CLIENT_DROPPED: "client-dropped",
    }
    head = f"{'game':22} {'kind':4} " + " ".join(f"{short[o]:>15}" for o in OUTCOMES)
    lines = [head, "-" * len(head)]
    for game in GAME_NAMES:
        for kind in KINDS:
            if any(counts[(game, kind, o)] for o in OUTCOMES):
                lines.append(f"{game:22} {kind:4} " + " ".join(f"{counts[(game, kind, o)]:>15}" for o in OUTCOMES))
    total = Counter(r.outcome for r in results)
    lines.append("-" * len(head))
    lines.append(f"{'all':22} {'':4} " + " ".join(f"{total[o]:>15}" for o in OUTCOMES))
    moves = sum(1 for r in results if r.case.kind in MOVE_KINDS and r.outcome != CLIENT_DROPPED)
    lines.append(f"replies: {len(results)}; carrying a move: {moves}; refused: {total[REFUSED]}"
                 f" ({100 * total[REFUSED] / max(1, moves):.1f}%)")
    bad = [r for r in results if r.outcome not in (RIGHT, NOTHING) or r.ours_quoted]
    if bad:
        lines.append("")
        lines.append("failures:")
        for r in bad:
            lines.append(f"  {r.outcome}: {r.case.id}{' (real)' if r.case.real else ''}: {r.detail}")
    return "\n".join(lines)


# ---------------------------------------------------------------------- one-tap answers (issue 22)


def button_replies(raw: bytes, *, from_addr: str, name: str, at: datetime) -> list[tuple[str, str, bytes]]:
    """The replies the HTML part's ``mailto:`` buttons of our mail ``raw`` produce, as a mail
    client sends them: to the button's address, with its subject, the body exactly the
    button's text (no quote, no In-Reply-To: a new mail): (label, text, raw reply) each."""
    import email as email_module
    import email.policy as email_policy
    import re as re_module
    from email.message import EmailMessage
    from email.utils import format_datetime, formataddr, make_msgid
    from html import unescape
    from urllib.parse import parse_qs, unquote, urlsplit

    msg = email_module.message_from_bytes(raw, policy=email_policy.default)
    part = msg.get_body(preferencelist=("html",))
    if part is None:
        return []
    out = []
    for href, label in re_module.findall(r'<a href="(mailto:[^"]+)"[^>]*>([^<]*)</a>', part.get_content()):
        url = urlsplit(unescape(href))
        query = parse_qs(url.query, keep_blank_values=True)
        text = query["body"][0].replace("\r\n", "\n")
        reply = EmailMessage()
        reply["From"] = formataddr((name, from_addr))
        reply["To"] = unquote(url.path)
        reply["Subject"] = query["subject"][0]
        reply["Date"] = format_datetime(at)
        reply["Message-ID"] = make_msgid(domain="example.test")
        reply.set_content(text)
        out.append((unescape(label), text, reply.as_bytes()))
    return out


def run_buttons(games: tuple[str, ...] = GAME_NAMES) -> list[Result]:
    """Every button of the actor's step mail, in every game, sent as its reply and judged:
    the move the button's text means must be recorded."""
    results: list[Result] = []
    scratch = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="buttons-", dir=scratch) as tmp:
        for game in games:
            season = Season(SPECS[game], "NFC", Path(tmp) / game)
            try:
                for mail_kind in ("step",):
                    mail = season.mails[mail_kind]
                    replies = button_replies(mail.raw, from_addr="alice@example.test", name=ACTOR_NAME, at=mail.at)
                    if not replies:
                        results.append(Result(Case(game, "mailto-button", "A", "NFC", mail_kind), REFUSED, "no button"))
                    for label, text, raw in replies:
                        case = Case(game, f"mailto-button:{label}", "A", "NFC", mail_kind)
                        status, got, _errors = season.judge(mail, raw)
                        got = _canon(got)
                        expected = _moves(season.game, mail.state, text)
                        if got and got == expected:
                            outcome, detail = RIGHT, ""
                        elif got:
                            outcome, detail = WRONG, f"recorded {got}, meant {expected}"
                        else:
                            outcome, detail = REFUSED, status
                        results.append(Result(case, outcome, detail, status=status, got=got, expected=expected))
            finally:
                season.close()
    return results
