"""The docs say only what is true (issue 25, item 5): read over README.md, docs/**/*.md and
deploy/ (its Markdown, its .toml examples, the systemd unit and the Containerfile):

1. Every ```toml block loads, applied as the text says. A block whose top-level names are
   all the service file's (what :func:`load_service_config` accepts: [mail], [imap],
   [smtp], [dkim], [archive], [service], database, secret ...) is set into the file
   ``referee init`` writes (a table of the block sets those keys of that table; a table
   ``init`` has not, such as [imap], is added) and must load. A block whose names are all a
   season file's ([season], [games.X], [[players]], [[matches]]) must load as
   ``referee season load --check`` loads it when it is a whole season (a [season] id and
   [[players]]), else merged into BASE_SEASON (keys set as above; [[players]] and
   [[matches]] entries by their id: the same id replaced, a new one added). Each
   ``# key = value`` line of a block (an optional key, shown commented out) is tried
   switched on as well. Files a block names (ca_file, private_key_file, password_file,
   secret_file) are made in the test's folder, an absolute path under a stand-in root there.
   Untagged, ```text and ```ini blocks hold no TOML in these docs (mails, logs, listings):
   they are not read as TOML. A block may be marked, on the line right above its fence,
   ``<!-- docs-truth: refused -->`` (shown to be refused: the test asserts it is) or
   ``<!-- docs-truth: skip (the reason) -->`` (not checked; the reason is required).
2. Every ``referee`` command line parses with the CLI's own parser
   (:func:`referee.cli.parse`), running nothing: each line of ```sh blocks and of README's
   indented code blocks, each ``$ `` line of ```console (and other non-TOML) blocks, the
   Exec lines of the systemd unit and the Containerfile's CMD, and each inline code span
   that starts with ``referee `` (or a path to it). Shell words are split as the shell
   would (quotes, ``#`` comments); only the referee parts of ``a && b; c | d`` are checked
   (``sudo``, ``env``, ``exec``, ``VAR=value`` in front skipped). A synopsis is expanded:
   ``[X]`` is tried without and with X, ``a|b`` (``a \\| b`` in a table) each way, the
   placeholder ``N`` as 1. An inline span may name a command without its arguments
   (```referee forfeit```, ```referee tick --now```): it must name a command and only
   options it has. A line the shell could not split (unbalanced quotes) is listed with
   its reason and skipped. NOT_COMMANDS lists the spans that start with ``referee `` but
   quote a log line.
3. Every relative link (``[text](path)``, ``[text](path#anchor)``, ``[text](#anchor)``,
   images and reference definitions too) names a file that exists and, for an anchor, a
   heading of that file as GitHub makes anchors of them. http(s) links are not fetched.
4. Every key a season file may use (the season reader's own lists: SEASON_KEYS,
   FRAME_KEYS, MATCH_KEYS, and the players' and games' keys, asked of the reader itself)
   appears as ```key``` in docs/organizer-guide.md.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import json
import re
import shlex
import shutil
import subprocess
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from referee.cli import build_parser, main, parse
from referee.config import FRAME_KEYS, MATCH_KEYS, SEASON_KEYS, ConfigError, load_season, load_service_config

from tests.test_init_mail import follow_the_comments

ROOT = Path(__file__).resolve().parent.parent
DKIM_KEY = ROOT / "tests" / "mail" / "dkim_keys" / "dkim-test-key.pem"
GUIDE = ROOT / "docs" / "organizer-guide.md"


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "deploy").rglob("*.md"))]


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# ---------------------------------------------------------------------------- reading Markdown

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)")  # in a list item too
MARK = re.compile(r"^\s*<!--\s*docs-truth:\s*(.*?)\s*-->\s*$")
ANY_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the fence (of the first line, for an indented block)
    lang: str  # the fence's info string; "indented" for an indented code block
    body: list[str]  # its lines, without the fence's indentation
    mark: str | None  # what a <!-- docs-truth: ... --> right above it says

    @property
    def where(self) -> str:
        return f"{rel(self.path)}:{self.line}"


def read_mark(lines: list[str], fence: int) -> str | None:
    """The docs-truth mark among the HTML comments right above line ``fence`` (0-based)."""
    i = fence - 1
    while i >= 0 and ANY_COMMENT.match(lines[i]):
        m = MARK.match(lines[i])
        if m:
            return m.group(1)
        i -= 1
    return None


def blocks(text: str, path: Path = ROOT / "x.md") -> list[Block]:
    """The fenced code blocks of a Markdown text, and its indented code blocks at the top
    level (after a blank line that follows a paragraph or heading, not a list item)."""
    lines = text.splitlines()
    found = []
    i = 0
    last_text = ""  # the last non-blank line outside code blocks
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            indent, fence, lang = len(m.group(1)), m.group(2), m.group(3)
            j = i + 1
            close = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
            while j < len(lines) and not close.match(lines[j]):
                j += 1
            body = [line[min(indent, len(line) - len(line.lstrip(" "))) :] for line in lines[i + 1 : j]]
            found.append(Block(path, i + 1, lang.lower(), body, read_mark(lines, i)))
            i, last_text = j + 1, ""
            continue
        if (
            lines[i].startswith("    ")
            and i > 0
            and not lines[i - 1].strip()
            and last_text
            and not last_text.startswith((" ", "\t"))
            and not LIST_ITEM.match(last_text)
        ):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            body = [line[4:] for line in lines[i:j]]
            while body and not body[-1].strip():
                body.pop()
            found.append(Block(path, i + 1, "indented", body, read_mark(lines, i - 1)))
            i, last_text = j, ""
            continue
        if lines[i].strip():
            last_text = lines[i]
        i += 1
    return found


def prose(text: str) -> str:
    """The text with code blocks blanked (same lines, so line numbers hold)."""
    lines = text.splitlines()
    for block in blocks(text):
        fenced = block.lang != "indented"
        last = block.line - 1 + len(block.body) + (1 if fenced else -1)  # the closing fence, or the last line
        for k in range(block.line - 1, min(last + 1, len(lines))):
            lines[k] = ""
    return "\n".join(lines) + "\n"


CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def code_spans(text: str) -> Iterator[tuple[int, str]]:
    """(line, content) of each inline code span outside code blocks; a span may go on over a
    line break (read as a space), never over an empty line."""
    plain = prose(text)
    for m in CODE_SPAN.finditer(plain):
        if "\n\n" in m.group(2):
            continue
        yield plain.count("\n", 0, m.start()) + 1, " ".join(m.group(2).split())


# ---------------------------------------------------------------------------- 1. TOML snippets


def _allowed(error: str) -> set[str]:
    m = re.search(r"\(allowed: ([^)]*)\)", error)
    assert m, error
    return set(m.group(1).split(", "))


def asked_keys() -> dict[str, set[str]]:
    """The keys the readers accept where a list of them is not importable: asked of the
    readers themselves, by giving each an unknown key and reading the list it answers."""
    from referee.config import parse_season

    found = {}
    for name, data in {
        "season file": {"zz_unknown": 1},
        "players": {"season": {"id": "x"}, "players": [{"id": "a", "zz_unknown": 1}]},
        "games": {"season": {"id": "x"}, "games": {"stationary-roulette": {"zz_unknown": 1}}},
    }.items():
        with pytest.raises(ConfigError) as info:
            parse_season(data, "probe")
        found[name] = _allowed(str(info.value))
    return found


def service_top_keys(tmp: Path) -> set[str]:
    (tmp / "probe.toml").write_text("zz_unknown = 1\n")
    with pytest.raises(ConfigError) as info:
        load_service_config(tmp / "probe.toml")
    return _allowed(str(info.value))


def classify(data: dict[str, Any], service_keys: set[str], season_keys: set[str]) -> str | None:
    """ "service" or "season" by the block's top-level names; None when it mixes both, or
    names something neither file knows."""
    names = set(data)
    if names and names <= service_keys:
        return "service"
    if names and names <= season_keys:
        return "season"
    return None


def whole_season(data: dict[str, Any]) -> bool:
    return "id" in data.get("season", {}) and bool(data.get("players"))


def merge(base: dict[str, Any], snippet: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """``snippet`` set into ``base`` as an edit of the file would: a table's keys set (tables
    and their sub-tables, [games.X]), any other value replaced whole (an inline table too);
    [[x]] entries with an id by it (the same id replaced, a new one added)."""
    out = copy.deepcopy(base)
    for key, value in snippet.items():
        old = out.get(key)
        if isinstance(value, dict) and isinstance(old, dict) and depth < 2:
            out[key] = merge(old, value, depth + 1)
        elif _table_array(value) and _table_array(old) and all("id" in e for e in value + old):
            entries = {e["id"]: e for e in old}
            entries.update({e["id"]: copy.deepcopy(e) for e in value})
            out[key] = list(entries.values())
        else:
            out[key] = copy.deepcopy(value)
    return out


def _table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(e, dict) for e in value)


def dump_toml(data: dict[str, Any]) -> str:
    """TOML text of ``data`` (what tomllib reads back equal): top-level tables as [x],
    arrays of tables as [[x]], every table deeper inline."""
    out = [f"{_key(k)} = {_value(v)}" for k, v in data.items() if not isinstance(v, dict) and not _table_array(v)]
    for key, value in data.items():
        entries = [value] if isinstance(value, dict) else value if _table_array(value) else []
        header = f"[{_key(key)}]" if isinstance(value, dict) else f"[[{_key(key)}]]"
        for entry in entries:
            out += ["", header, *(f"{_key(k)} = {_value(v)}" for k, v in entry.items())]
    return "\n".join(out) + "\n"


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    raise TypeError(f"no TOML for {value!r}")


# a season the fragments of the docs are set into: enough players (and two without an
# address) for the frame of docs/season.md, whose Betting Minority death match needs ten
# live players or silent participants besides the EC and the DMO
BASE_SEASON = (
    '[season]\nid = "docs-base"\nstart = 2030-03-01T18:00:00Z\n'
    + "".join(
        f'\n[[players]]\nid = "{p}"\nname = "{p.title()}"\nemail = "{p}@example.org"\n'
        for p in ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy")
    )
    + '\n[[players]]\nid = "s01"\nname = "Silent One"\n\n[[players]]\nid = "s02"\nname = "Silent Two"\n'
)

# an optional key shown commented out in a block: "# key = value", maybe indented
OPTIONAL = re.compile(r"^(\s*)# ([a-z_]+ = .*)$")


@dataclass(frozen=True)
class Snippet:
    where: str  # file:line of the fence (or the file), and which optional key is on
    text: str
    whole_file: bool  # a deploy example: the file as it is, not set into another
    mark: str | None


def snippets() -> list[Snippet]:
    found = []
    for path in markdown_files():
        for block in blocks(path.read_text(), path):
            if block.lang != "toml":
                continue
            text = "\n".join(block.body) + "\n"
            found.append(Snippet(block.where, text, False, block.mark))
            for i, line in enumerate(block.body):
                m = OPTIONAL.match(line)
                if m:
                    on = [*block.body[:i], m.group(1) + m.group(2), *block.body[i + 1 :]]
                    key = m.group(2).split(" =")[0]
                    found.append(
                        Snippet(
                            f"{block.where} ({key} on, line {block.line + 1 + i})",
                            "\n".join(on) + "\n",
                            False,
                            block.mark,
                        )
                    )
    for path in sorted((ROOT / "deploy").glob("*.toml")):  # their commented keys: tests/test_examples.py
        found.append(Snippet(rel(path), path.read_text(), True, None))
    return found


SNIPPETS = snippets()
REFUSED, SKIP = "refused", re.compile(r"^skip \((.+)\)$")


@pytest.fixture(scope="module")
def readers(tmp_path_factory) -> dict[str, Any]:
    """What the snippets are set into and checked with: the file ``referee init`` writes
    (run once, in an empty folder, with no REFEREE_* set), the readers' key lists, a folder
    for what the snippets share (a CA)."""
    folder = tmp_path_factory.mktemp("init")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        for variable in ENV:
            mp.delenv(variable, raising=False)
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["init"]) == 0
    asked = asked_keys()
    return {
        "init": (folder / "referee.toml").read_text(),
        "service": service_top_keys(folder),
        "season": asked["season file"],
        "folder": tmp_path_factory.mktemp("files"),
    }


ENV = ("REFEREE_CONFIG", "REFEREE_SECRET", "REFEREE_MAIL_PASSWORD", "REFEREE_IMAP_PASSWORD", "REFEREE_SMTP_PASSWORD")
FILE_KEYS = ("ca_file", "private_key_file", "password_file", "secret_file")


def a_ca(folder: Path) -> Path:
    """A CA certificate (PEM), made once with the openssl command."""
    pem = folder / "ca.pem"
    if not pem.exists():
        if shutil.which("openssl") is None:
            pytest.skip("the openssl command is not installed (a ca_file to check with)")
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            + ["-keyout", str(folder / "ca.key"), "-out", str(pem), "-days", "2", "-subj", "/CN=docs-truth CA"],
            check=True,
            capture_output=True,
        )
    return pem


def provide_files(data: dict[str, Any], folder: Path, shared: Path) -> dict[str, Any]:
    """Each file a table of ``data`` names made in ``folder`` (an absolute path under
    ``folder``/root, and the value changed to it): a CA, a DKIM key, a secret."""
    data = copy.deepcopy(data)
    for table in [data, *(v for v in data.values() if isinstance(v, dict))]:
        for key in FILE_KEYS:
            if not isinstance(table.get(key), str):
                continue
            named = Path(table[key])
            target = folder / "root" / named.relative_to("/") if named.is_absolute() else folder / named
            target.parent.mkdir(parents=True, exist_ok=True)
            if key == "ca_file":
                shutil.copyfile(a_ca(shared), target)
            elif key == "private_key_file":
                shutil.copyfile(DKIM_KEY, target)
            else:
                target.write_text("a-stand-in-secret-of-more-than-16-characters\n")
            if named.is_absolute():
                table[key] = str(target)
    return data


def passwords(data: dict[str, Any], mp: pytest.MonkeyPatch) -> None:
    """The variables the [imap] and [smtp] of ``data`` read their password from, set."""
    for name, default in (("imap", "REFEREE_IMAP_PASSWORD"), ("smtp", "REFEREE_SMTP_PASSWORD")):
        table = data.get(name)
        if isinstance(table, dict):
            mp.setenv(table.get("password_env", default), "an-app-password")


def check_service(data: dict[str, Any], readers: dict[str, Any], folder: Path, whole_file: bool) -> None:
    merged = data if whole_file else merge(tomllib.loads(readers["init"]), data)
    merged = provide_files(merged, folder, readers["folder"])
    (folder / "referee.toml").write_text(dump_toml(merged))
    with pytest.MonkeyPatch.context() as mp:
        for variable in ENV:
            mp.delenv(variable, raising=False)
        passwords(merged, mp)
        load_service_config(folder / "referee.toml")


def check_season(data: dict[str, Any], folder: Path, store: Any) -> None:
    """As ``referee season load --check`` would: the file read and checked, its starts not
    in the past, its plan; and loaded (rolled back) into a new database. The clock: a day
    before its first start (the docs' dates pass; what a past start does is its own text)."""
    from referee.seasons import check_past_starts, season_plan
    from referee.seasons import load_season as load_into_store

    merged = data if whole_season(data) else merge(tomllib.loads(BASE_SEASON), data)
    (folder / "season.toml").write_text(dump_toml(merged))
    spec = load_season(folder / "season.toml")
    starts = [m.starts_at for m in spec.matches]
    now = min(starts) - timedelta(days=1) if starts else datetime(2030, 1, 1, tzinfo=timezone.utc)
    check_past_starts(spec.matches, now)
    assert season_plan(spec, now) is not None
    load_into_store(store, spec, now, dry_run=True)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.where for s in SNIPPETS])
def snippet_problem(snippet: Snippet, readers: dict[str, Any], folder: Path, store: Any) -> str | None:
    """What is wrong with a block, said with its file and line; None when it loads (or, when
    marked refused, when it is refused)."""
    where = snippet.where
    if snippet.mark not in (None, REFUSED):
        return f"{where}: unknown docs-truth mark {snippet.mark!r} (refused, or skip (why))"
    try:
        data = tomllib.loads(snippet.text)
    except tomllib.TOMLDecodeError as exc:
        return None if snippet.mark == REFUSED else f"{where}: not valid TOML: {exc}"
    kind = classify(data, readers["service"], readers["season"])
    if kind is None:
        return (
            f"{where}: neither a service file's nor a season file's block (top-level names {sorted(data)}; "
            f"service: {sorted(readers['service'])}; season: {sorted(readers['season'])})"
        )
    try:
        if kind == "service":
            check_service(data, readers, folder, snippet.whole_file)
        else:
            check_season(data, folder, store)
    except ConfigError as exc:
        return (
            None if snippet.mark == REFUSED else f"{where}: this {kind} block does not load as the docs apply it: {exc}"
        )
    return f"{where}: marked refused, but this {kind} block loads" if snippet.mark == REFUSED else None


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.where for s in SNIPPETS])
def test_toml_snippet_loads(snippet, readers, tmp_path, sqlite_store):
    if snippet.mark is not None and SKIP.match(snippet.mark):
        pytest.skip(f"{snippet.where}: {snippet.mark}")
    problem = snippet_problem(snippet, readers, tmp_path, sqlite_store)
    assert problem is None, problem


def test_marked_blocks_are_held_to_their_mark(readers, tmp_path, sqlite_store):
    def problem(text: str, mark: str | None = None) -> str | None:
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        folder.mkdir()
        return snippet_problem(Snippet("x.md:3", text, False, mark), readers, folder, sqlite_store)

    service_bad, service_good = "[mail]\nbogus = 1\n", '[mail]\norganizer = "o@example.org"\n'
    season_bad, season_good = '[[matches]]\nid = "m"\ngame = "chess"\n', '[season]\nphase_length = "12h"\n'
    assert problem(service_good) is None and problem(season_good) is None
    for bad, why in (
        (service_bad, "unknown key 'bogus'"),
        (season_bad, "unknown game 'chess'"),
        ("[mail", "not valid"),
    ):
        found = problem(bad)
        assert found and found.startswith("x.md:3: ") and why in found, found
        assert problem(bad, REFUSED) is None
    assert "marked refused, but this service block loads" in problem(service_good, REFUSED)
    assert "neither a service file's nor a season file's" in problem('[mail]\n[season]\nid = "s"\n')
    assert "unknown docs-truth mark" in problem(service_good, "maybe")


def test_enough_toml_snippets_are_found_and_marks_carry_reasons():
    docs = [s for s in SNIPPETS if not s.whole_file and "on, line" not in s.where]
    assert len(docs) >= 11, [s.where for s in docs]
    assert sum("on, line" in s.where for s in SNIPPETS) >= 3  # optional keys switched on
    assert len(SNIPPETS) - len(docs) >= 6
    for path in markdown_files():
        lines = path.read_text().splitlines()
        for n, line in enumerate(lines, 1):
            m = MARK.match(line)
            if m:
                assert m.group(1) == REFUSED or SKIP.match(m.group(1)), (
                    f"{rel(path)}:{n}: a docs-truth mark is 'refused' or 'skip (why)', got {m.group(1)!r}"
                )
                fence = next((line for line in lines[n:] if not ANY_COMMENT.match(line)), "")
                assert FENCE.match(fence.lstrip()), f"{rel(path)}:{n}: a docs-truth mark stands right above a fence"


TABLE_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.-]+)\s*\]\]?\s*(?:#.*)?$")


def test_toml_is_only_in_toml_blocks(readers):
    """No block of another kind holds a service or season file's table: TOML is tagged so."""
    names = readers["service"] | readers["season"]
    untagged = [
        f"{block.where} ({block.lang or 'untagged'}): {line.strip()}"
        for path in markdown_files()
        for block in blocks(path.read_text(), path)
        if block.lang != "toml"
        for line in block.body
        if (m := TABLE_HEADER.match(line)) and m.group(1).split(".")[0] in names
    ]
    assert not untagged, "TOML in a block not tagged toml:\n" + "\n".join(untagged)


# ---------------------------------------------------------------------------- 2. command lines

SEPARATORS = {"|", "||", "&&", ";", "&"}
PROGRAM = re.compile(r"^(?:\S*/)?referee$")
WRAPPERS = {"sudo", "env", "exec", "nohup", "time", "if", "then", "else", "do", "while", "!"}  # before a program
REFEREE_WORD = re.compile(r"(?:^|[\s/;&|(\"'`$])referee(?=\s|$|[\"';&|)])")
# spans that start with "referee " but quote a log line, not a command
NOT_COMMANDS = {
    "referee running: polling every 30.0s": "the log line of `referee run` at its start",
    "referee stopped": "the log line of `referee run` at its end",
}
SPAN_COMMAND = re.compile(r"^(?:sudo\s+)?(?:\S*/)?referee\s+\S")


class Unsplittable(ValueError):
    """A line the shell could not split into words (unbalanced quotes)."""


def shell_words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError as exc:
        raise Unsplittable(str(exc)) from None


def referee_parts(line: str) -> list[list[str]]:
    """The argument lists of the ``referee`` commands a shell line runs."""
    words = shell_words(line)
    parts, current, depth = [], [], 0
    for word in words:  # split at separators, but not inside a synopsis's [ ... | ... ]
        depth += len(word) - len(word.lstrip("["))
        if depth == 0 and word in SEPARATORS:
            parts.append(current)
            current = []
            continue
        if depth == 0 and word.endswith(";") and word not in SEPARATORS:
            current.append(word[:-1])
            parts.append(current)
            current = []
            continue
        current.append(word)
        depth -= len(word) - len(word.rstrip("]"))
        depth = max(depth, 0)
    parts.append(current)
    found = []
    for part in parts:
        part = drop_redirections(part)
        while part and (part[0] in WRAPPERS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", part[0])):
            wrapper = part.pop(0)
            while wrapper == "sudo" and part and part[0].startswith("-"):
                option = part.pop(0)
                if option in ("-u", "-g", "-C", "-D") and part:
                    part.pop(0)
        if part and PROGRAM.match(part[0]):
            found.append(part[1:])
    return found


def drop_redirections(words: list[str]) -> list[str]:
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif re.fullmatch(r"\d*(?:>>?|<)&?", word):
            skip = True
        elif not re.match(r"^\d*(?:>>?|<)", word):
            out.append(word)
    return out


def synopsis(words: list[str], limit: int = 64) -> list[list[str]]:
    """Each command line a synopsis stands for: ``[X]`` without and with X, ``a|b`` and
    ``[a | b]`` each way, the placeholder N as 1."""
    tokens = []
    for word in words:
        core = word.lstrip("[")
        tokens += ["["] * (len(word) - len(core))
        closing = len(core) - len(core.rstrip("]"))
        core = core.rstrip("]")
        if core:
            tokens.append(core)
        tokens += ["]"] * closing

    def alternatives(i: int) -> tuple[list[list[str]], int]:
        choices, sequence = [], [[]]
        while i < len(tokens) and tokens[i] != "]":
            token = tokens[i]
            if token == "|":
                choices += sequence
                sequence, i = [[]], i + 1
                continue
            if token == "[":
                inner, i = alternatives(i + 1)
                options = [[], *inner]
                i += 1  # the "]"
            else:
                options = [[placeholder(a)] for a in (token.split("|") if "|" in token.strip("|") else [token])]
                i += 1
            sequence = [s + o for s in sequence for o in options][:limit]
        return choices + sequence, i

    return alternatives(0)[0]


def placeholder(word: str) -> str:
    return re.sub(r"^([+-]?)N$", r"\g<1>1", word)


@dataclass(frozen=True)
class Command:
    where: str
    argv: tuple[str, ...]
    span: bool  # an inline code span: may name a command without its arguments


def shell_lines(block: Block) -> Iterator[tuple[int, str]]:
    """(line, text) of the command lines of a block: every line of a shell block (a line
    ending in a backslash goes on), the ``$ `` lines of any other (console output aside)."""
    shell = block.lang in ("sh", "bash", "shell", "indented")
    pending, start = "", 0
    for k, line in enumerate(block.body):
        n = block.line + k + (1 if block.lang != "indented" else 0)
        stripped = line.strip()
        if not shell:
            if stripped.startswith("$ "):
                yield n, stripped[2:]
            continue
        if not pending:
            start = n
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        yield start, pending + stripped
        pending = ""


def deploy_lines() -> Iterator[tuple[str, str]]:
    """The command lines of deploy/'s unit file and Containerfile."""
    for path in sorted((ROOT / "deploy").glob("*.service")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            m = re.match(r"^Exec\w*=[-@:+!]*(.*)$", line)
            if m:
                yield f"{rel(path)}:{n}", m.group(1)
    path = ROOT / "deploy" / "Containerfile"
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = re.match(r"^(?:CMD|ENTRYPOINT)\s+(\[.*\])\s*$", line)
        if m:
            words = json.loads(m.group(1))
            shell = words[2] if words[:2] == ["sh", "-c"] else shlex.join(words)
            yield f"{rel(path)}:{n}", shell


def commands() -> tuple[list[Command], list[str]]:
    """Every referee command line, and the lines skipped (with why)."""
    found, skipped = [], []

    def add(where: str, line: str, span: bool = False) -> None:
        if not REFEREE_WORD.search(line):
            return
        try:
            parts = referee_parts(line)
        except Unsplittable as exc:
            skipped.append(f"{where}: the shell could not split it ({exc}): {line}")
            return
        for k, argv in enumerate(parts):
            found.append(Command(where + (f" #{k + 1}" if len(parts) > 1 else ""), tuple(argv), span))

    for path in markdown_files():
        text = path.read_text()
        for block in blocks(text, path):
            if block.lang == "toml" or (block.mark and SKIP.match(block.mark)):
                continue
            for n, line in shell_lines(block):
                add(f"{rel(path)}:{n}", line)
        for n, span in code_spans(text):
            if SPAN_COMMAND.match(span) and span not in NOT_COMMANDS:
                add(f"{rel(path)}:{n} `{span}`", span.replace("\\|", "|"), span=True)
    for where, line in deploy_lines():
        add(where, line)
    return found, skipped


COMMANDS, SKIPPED_COMMANDS = commands()


def parse_error(argv: list[str]) -> str | None:
    """None when ``argv`` parses (``--help``, ``--version``: exit 0), else argparse's message."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            parse(argv)
        except SystemExit as exc:
            if exc.code not in (0, None):
                return err.getvalue().strip() or f"exit status {exc.code}"
    return None


def command_parser(argv: list[str]):
    """The parser of the command ``argv`` names, and the words after its name."""
    from referee.cli import _first_word

    parser = build_parser(only=_first_word(argv))
    words = list(argv)
    while words and (words[0] in ("--config", "--debug") or words[0].startswith("--config=")):
        words = words[2:] if words[0] == "--config" else words[1:]
    while words:
        subs = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
        if not subs or words[0] not in subs[0].choices:
            break
        parser = subs[0].choices[words.pop(0)]
    return parser, words


def mention_error(argv: list[str], error: str) -> str | None:
    """A span such as ``referee forfeit`` or ``referee tick --now``: it names a command, and
    only options of it, leaving out what it needs. None when it is such a mention."""
    if "the following arguments are required" not in error and "expected one argument" not in error:
        return error
    parser, rest = command_parser(argv)
    if any(a.__class__.__name__ == "_SubParsersAction" for a in parser._actions):
        return error  # no command named, only a group of them (`referee archive`)
    words = [w for w in rest if not w.startswith("-")]
    unknown = [w for w in rest if w.startswith("-") and w.split("=")[0] not in parser._option_string_actions]
    if words or unknown:
        what = f"no option of {parser.prog}: {', '.join(unknown)}" if unknown else f"arguments {words} given in part"
        return f"{error} (a span may name a command and its options without their values, but {what})"
    return None


@pytest.mark.parametrize("command", COMMANDS, ids=[c.where for c in COMMANDS])
def test_referee_command_line_parses(command):
    variants = synopsis(list(command.argv))
    assert variants, command.where
    for argv in variants:
        error = parse_error(argv)
        if error and command.span:
            error = mention_error(argv, error)
        assert error is None, f"{command.where}: `referee {shlex.join(argv)}` does not parse: {error}"


def test_enough_command_lines_are_found_and_skips_say_why():
    assert len(COMMANDS) >= 150, len(COMMANDS)
    assert sum(c.span for c in COMMANDS) >= 80
    assert sum(c.where.startswith("README.md") and not c.span for c in COMMANDS) >= 15
    assert sum(c.where.startswith("deploy/") for c in COMMANDS) >= 3
    assert all(": the shell could not split it (" in line for line in SKIPPED_COMMANDS)
    assert len(SKIPPED_COMMANDS) <= 3, SKIPPED_COMMANDS
    spans = {span for path in markdown_files() for _, span in code_spans(path.read_text())}
    for span, why in NOT_COMMANDS.items():
        assert why and span in spans, f"NOT_COMMANDS: {span!r} is in no doc any more: drop it"


# ---------------------------------------------------------------------------- 3. links

LINK = re.compile(r"!?\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
HTML_ID = re.compile(r"<[a-zA-Z][^>]*\s(?:id|name)=[\"']([^\"']+)[\"']")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text (code kept without backticks, a link's
    text, no HTML), lower case, without punctuation but ``-`` and ``_``, spaces as ``-``."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    # HTML is dropped, but not in code, which shows it as text
    text = "".join(part if k % 2 else re.sub(r"<[^>]+>", "", part) for k, part in enumerate(text.split("`")))
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor of a Markdown text: its headings' (the n-th repeat of one gets -n) and
    the ids of its HTML elements."""
    seen: dict[str, int] = {}
    found = set(HTML_ID.findall(text))
    for line in prose(text).splitlines():
        m = HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


@functools.cache
def file_anchors(path: Path) -> set[str]:
    return anchors(path.read_text())


def links(text: str) -> Iterator[tuple[int, str]]:
    """(line, target) of each link outside code (code spans blanked: a link in one is none)."""
    plain = prose(text)
    plain = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", "x", m.group(0)), plain)
    for m in LINK.finditer(plain):
        yield plain.count("\n", 0, m.start()) + 1, m.group(2)
    for n, line in enumerate(plain.splitlines(), 1):
        m = DEFINITION.match(line)
        if m:
            yield n, m.group(1)


def link_problem(path: Path, target: str) -> str | None:
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http(s), mailto: not fetched
        return None
    file, _, anchor = target.partition("#")
    goal = (path.parent / unquote(file)).resolve() if file else path
    if not goal.exists():
        return f"no file {goal.relative_to(ROOT) if goal.is_relative_to(ROOT) else goal}"
    if anchor and goal.suffix == ".md" and unquote(anchor) not in file_anchors(goal):
        return f"no heading in {rel(goal)} makes the anchor #{anchor}"
    return None


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_links_resolve(path):
    problems = [
        f"{rel(path)}:{n}: ({target}): {why}"
        for n, target in links(path.read_text())
        if (why := link_problem(path, target))
    ]
    assert not problems, "\n".join(problems)


def test_enough_links_are_checked():
    found = [(path, target) for path in markdown_files() for _, target in links(path.read_text())]
    relative = [t for _, t in found if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t)]
    assert len(relative) >= 120, len(relative)
    assert sum(t.startswith("#") for t in relative) >= 60
    assert sum("#" in t and not t.startswith("#") for t in relative) >= 10


# ---------------------------------------------------------------------------- 4. season keys


def test_every_season_key_is_in_the_organizer_guide():
    guide = GUIDE.read_text()
    asked = asked_keys()
    keys = SEASON_KEYS | FRAME_KEYS | MATCH_KEYS | asked["players"] | asked["games"]
    assert len(keys) >= 20 and {"email", "timezone", "abandon_after", "silent_participants"} <= keys
    missing = sorted(k for k in keys if f"`{k}`" not in guide)
    assert not missing, f"{rel(GUIDE)} names no `key` for: {', '.join(missing)}"
    tables = {"season": "`[season]`", "players": "`[[players]]`", "matches": "`[[matches]]`", "games": "`[games."}
    assert set(tables) == asked["season file"]
    assert not [t for t in tables.values() if t not in guide], "a season file's table is not in the guide"


# ---------------------------------------------------------------------------- the helpers


def test_blocks_and_marks_are_read():
    text = (
        "Intro:\n\n    referee init   # indented\n\nText.\n\n"
        "<!-- docs-truth: skip (a demo) -->\n```toml\n[mail]\n```\n\n- item\n\n    continued\n\n"
        "   ```sh\n   referee run\n   ```\n"
    )
    found = blocks(text)
    assert [(b.line, b.lang, b.body, b.mark) for b in found] == [
        (3, "indented", ["referee init   # indented"], None),
        (8, "toml", ["[mail]"], "skip (a demo)"),
        (16, "sh", ["referee run"], None),
    ]
    assert list(code_spans("a `referee demo --game\nmatchjack` b\n\n```\n`x`\n```\n")) == [
        (1, "referee demo --game matchjack")
    ]


def test_classify_and_merge():
    service, season = {"mail", "imap", "database"}, {"season", "players", "matches", "games"}
    assert classify({"mail": {}, "imap": {}}, service, season) == "service"
    assert classify({"games": {"x": {}}}, service, season) == "season"
    assert classify({"mail": {}, "season": {}}, service, season) is None
    assert classify({"scheduler": {}}, service, season) is None
    base = tomllib.loads('[mail]\naddress = "a@x.org"\ninbound = "maildir"\n[[players]]\nid = "a"\nname = "A"\n')
    got = merge(base, tomllib.loads('[mail]\ninbound = "imap"\n[imap]\nhost = "h"\n[[players]]\nid = "b"\n'))
    assert got["mail"] == {"address": "a@x.org", "inbound": "imap"} and got["imap"] == {"host": "h"}
    assert [p["id"] for p in got["players"]] == ["a", "b"]
    assert merge(got, {"players": [{"id": "a", "name": "Ann"}]})["players"][0] == {"id": "a", "name": "Ann"}
    # an inline table is a value: replaced whole, not merged
    assert merge({"games": {"g": {"steps": {"a": 1}}}}, {"games": {"g": {"steps": {"b": 2}}}}) == {
        "games": {"g": {"steps": {"b": 2}}}
    }
    data = tomllib.loads(
        BASE_SEASON + '[games.x]\nsteps = { a = "1h" }\n[[matches]]\nid = "m"\nstart = 2030-01-01T00:00:00Z\n'
    )
    assert tomllib.loads(dump_toml(data)) == data
    assert whole_season(data) and not whole_season({"season": {"id": "x"}})


def test_the_merge_does_what_init_mail_follows_from_init_comments(readers, tmp_path, monkeypatch):
    """The [imap] and [smtp] tables init writes commented out, set in as a block would be,
    load as tests/test_init_mail.py's follow_the_comments makes them."""
    init = readers["init"]
    lines = init.splitlines()

    def uncommented(header: str) -> str:  # from "# [imap]" to the next empty line, without "# "
        start = lines.index(f"# {header}")
        end = lines.index("", start) if "" in lines[start:] else len(lines)
        return "\n".join(line[2:] for line in lines[start:end])

    tables = uncommented("[imap]") + "\n\n" + uncommented("[smtp]") + "\n"
    snippet = '[mail]\ninbound = "imap"\noutbound = "smtp"\n\n' + tables
    for variable in ENV:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("REFEREE_MAIL_PASSWORD", "pw")
    (tmp_path / "a.toml").write_text(dump_toml(merge(tomllib.loads(init), tomllib.loads(snippet))))
    (tmp_path / "b.toml").write_text(follow_the_comments(init))
    a, b = load_service_config(tmp_path / "a.toml"), load_service_config(tmp_path / "b.toml")
    assert a.mail.imap == b.mail.imap and a.mail.smtp == b.mail.smtp and a.mail.imap is not None
    assert (a.mail.transport, a.mail.outbound) == (b.mail.transport, b.mail.outbound) == ("imap", "smtp")


def test_shell_lines_and_synopses_are_read():
    assert referee_parts("cd x && .venv/bin/referee status | less  # see") == [["status"]]
    assert referee_parts("sudo -u referee env A=b /opt/referee/bin/referee --config f run; referee tick") == [
        ["--config", "f", "run"],
        ["tick"],
    ]
    assert referee_parts("systemctl enable --now referee") == []
    assert referee_parts("if referee check-mail; then echo ok; else referee status; fi") == [["check-mail"], ["status"]]
    assert referee_parts("referee status > out.txt 2>/dev/null") == [["status"]]
    with pytest.raises(Unsplittable):
        referee_parts('referee announce "it')
    assert synopsis("archive verify [MATCH] [--site DIR]".split()) == [
        ["archive", "verify"],
        ["archive", "verify", "--site", "DIR"],
        ["archive", "verify", "MATCH"],
        ["archive", "verify", "MATCH", "--site", "DIR"],
    ]
    assert synopsis("announce F [--season S | --match M]".split()) == [
        ["announce", "F"],
        ["announce", "F", "--season", "S"],
        ["announce", "F", "--match", "M"],
    ]
    assert synopsis("adjust P chips|cols +N|-N".split()) == [
        ["adjust", "P", "chips", "+1"],
        ["adjust", "P", "chips", "-1"],
        ["adjust", "P", "cols", "+1"],
        ["adjust", "P", "cols", "-1"],
    ]
    assert referee_parts("referee quarantine [--requeue ID|all] # why") == [["quarantine", "[--requeue", "ID|all]"]]


def test_parse_and_mentions():
    assert parse_error(["status", "--now", "2027-01-01T00:00:00Z"]) is None
    assert parse_error(["--version"]) is None
    assert "invalid choice" in parse_error(["stauts"])
    for mention in (["forfeit"], ["tick", "--now"], ["archive", "mbox", "--public"], ["season", "load"]):
        assert mention_error(mention, parse_error(mention)) is None, mention
    for wrong in (["cancel", "m1", "extra"], ["tick", "--later"], ["archive"]):
        error = parse_error(wrong)
        assert error and mention_error(wrong, error), wrong


def test_anchors_are_made_as_github_makes_them():
    assert slug("Testing a schedule with `referee tick --now`") == "testing-a-schedule-with-referee-tick---now"
    assert slug("6. The organizer's controls") == "6-the-organizers-controls"
    assert slug("### `[games.<game>]`".lstrip("# ")) == "gamesgame"
    assert slug("TLS, security and ca_file") == "tls-security-and-ca_file"
    assert slug("Über [links](x.md) *here*") == "über-links-here"
    assert anchors('# A\n## A\n```\n# A\n```\n### A\n<a id="x"></a>\n') == {"a", "a-1", "a-2", "x"}
    text = "See [a](b.md#c), `[not](a-link.md)`, ![img](i.png) and [d].\n\n[d]: ../e.md\n"
    assert list(links(text)) == [(1, "b.md#c"), (1, "i.png"), (3, "../e.md")]
