"""Replies to a mail of ours written by real mail clients.

Each shape in CLIENTS is a real run of a real program (Debian's mutt 2.2, neomutt,
s-nail 14.9): the original is put in a temporary Maildir, the client opens it and replies
to it, its draft is handed to ``edit`` exactly as the client opened it in $EDITOR, and the
mail it then hands to "sendmail" is captured and returned. Nothing here writes a reply by
hand: the quoting, attribution, signature, headers and encoding are the client's own.

Everything a run touches is under a fresh directory in ``tmp``: HOME, the Maildir, the
config, the editor and sendmail stand-ins. No user or system config is read (mutt and
neomutt run with ``-n -F <our rc>``, s-nail with ``-:/``), no network, no real terminal
(mutt and neomutt run in a pseudo-terminal; s-nail in batch mode on a pipe).

Environment: TZ=UTC, LC_ALL=C.UTF-8, TERM=vt100 on a 24x80 pseudo-terminal.

What each shape's draft looks like (the text ``edit`` receives: the client's own, seen in
runs here) for an original from "Referee <referee@example.test>" dated
Wed, 01 May 2024 12:00:00 +0000 whose body is "Hello Bob,", "", "Tomás bet ...", ...,
"-- ", "The referee" (trailing spaces shown as ␠, a tab as →)::

    mutt, neomutt      On Wed, May 01, 2024 at 12:00:00PM +0000, Referee wrote:
                       >␠Hello Bob,
                       >␠                       (an empty line: the prefix, space included)
                       >␠Tomás bet on black last round.
                       ...
                       >␠--␠                    (the original's signature is quoted too)
                       >␠The referee

    mutt-bar           On Wed, May 01, 2024 at 12:00:00PM +0000, Referee wrote:
                       |␠Hello Bob,
                       |␠
                       |␠Tomás bet on black last round.

    mutt-sig-on-top    (an empty line)
                       --␠
                       Bob
                       On Wed, May 01, 2024 at 12:00:00PM +0000, Referee wrote:
                       >␠Hello Bob,
                       ...

    mutt-flowed        On Wed, May 01, 2024 at 12:00:00PM +0000, Referee wrote:
                       >Hello Bob,              (RFC 3676 quoting: ">" with no space)
                       >
                       >Tomás bet on black last round.
                       sent as text/plain; charset=utf-8; format=flowed

    s-nail             Referee <referee@example.test> wrote:      (quote-inject-head "%f wrote:\n\n")
                       (an empty line)
                       >␠Hello Bob,             (indentprefix "> ", as Debian's /etc/s-nail.rc sets it)
                       >␠
                       >␠Tomás bet on black last round.

    s-nail-tab         Referee <referee@example.test> wrote:
                       (an empty line)
                       →Hello Bob,              (indentprefix unset: the POSIX default, a tab)
                       →
                       →Tomás bet on black last round.

No client rewraps the quote (a long line stays one line), and the original's signature is
quoted like the rest. mutt and neomutt send 8bit UTF-8; s-nail quoted-printable UTF-8.
All of them reply to the Reply-To address, with In-Reply-To and References set to the
original's Message-ID, and Subject "Re: <subject>".

The Date: and Message-ID: headers are the run's: the time and a random id (mutt and
neomutt have no way to pin the clock; s-nail's reproducible mode, SOURCE_DATE_EPOCH, would,
but it also sets "User-Agent: s-nail reproducible_build" and gives every reply with the
same date the same Message-ID, which no player's mail would). Everything else (addresses,
In-Reply-To/References, subject, body, encoding) is the same from run to run.

Each run takes about 0.05 s (s-nail), 0.06-0.08 s (mutt), 0.1 s (neomutt).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["CLIENTS", "ClientError", "available", "reply_with"]

CLIENTS: tuple[str, ...] = (
    "mutt",
    "mutt-bar",
    "mutt-sig-on-top",
    "mutt-flowed",
    "neomutt",
    "s-nail",
    "s-nail-tab",
)

PROGRAMS = {
    "mutt": "mutt",
    "mutt-bar": "mutt",
    "mutt-sig-on-top": "mutt",
    "mutt-flowed": "mutt",
    "neomutt": "neomutt",
    "s-nail": "s-nail",
    "s-nail-tab": "s-nail",
}

# Every wait is for a condition, and must hold on a machine ten times slower than a
# developer's; a normal run takes a fraction of a second.
TIMEOUT = float(os.environ.get("REFEREE_CLIENT_TIMEOUT", "60"))
# once the reply is captured, how long the client gets to quit by itself before it is killed
QUIT_GRACE = 5.0
POLL = 0.002

# Paths end up in the clients' command lines (mutt splits $sendmail on spaces, runs $editor
# through sh): they are kept plain rather than quoted for three different parsers.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_./+@%,=:-]+")

_EDITOR_PY = r"""
import os, sys, time
work, timeout, draft = sys.argv[1], float(sys.argv[2]), sys.argv[-1]
with open(draft, "rb") as f:
    data = f.read()
with open(os.path.join(work, "draft.in.part"), "wb") as f:
    f.write(data)
os.replace(os.path.join(work, "draft.in.part"), os.path.join(work, "draft.in"))
out = os.path.join(work, "draft.out")
deadline = time.monotonic() + timeout
while not os.path.exists(out):
    if time.monotonic() > deadline:
        sys.exit("editor stand-in: no edited text came back")
    time.sleep(0.002)
with open(out, "rb") as f:
    data = f.read()
before = os.stat(draft)
with open(draft, "wb") as f:
    f.write(data)
# A person edits for seconds; this stand-in within the same second, so the draft's time
# is set as each client needs it. s-nail takes a draft whose size and modification time
# are unchanged for an untouched one (an edit of equal length, STAY -> FOLD, was dropped):
# for it the time moves on, as it would for a person. mutt stamps the draft when the
# editor returns and, at "send", asks "Attachment #1 modified. Update encoding?" of a
# draft newer than its stamp (a write and a stamp in one clock tick now and then look so):
# for mutt the draft keeps the time it had when the editor started.
if os.environ.get("EDITOR_STAND_IN_TOUCH") == "1":
    later = max(before.st_mtime, time.time()) + 2
    os.utime(draft, (later, later))
else:
    os.utime(draft, ns=(before.st_atime_ns, before.st_mtime_ns))
"""


class ClientError(RuntimeError):
    """The client did not produce a reply; the message ends with what it last printed."""


@functools.cache
def available(client: str) -> bool:
    """Whether the program behind ``client`` is installed and runs."""
    program = shutil.which(PROGRAMS[client])
    if program is None:
        return False
    try:
        done = subprocess.run(
            [program, "-V" if PROGRAMS[client] == "s-nail" else "-v"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
            env=_base_env(Path(tempfile.gettempdir())),
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def reply_with(
    client: str,
    original: bytes,
    edit: Callable[[str], str],
    *,
    tmp: Path,
    from_addr: str = "bob@example.test",
    name: str = "Bob",
) -> bytes:
    """The raw reply (bytes, as the client would hand it to sendmail) that `client` writes
    to the mail `original` (raw RFC 5322 bytes, as delivered). `edit` gets the draft body
    exactly as the client opened it in $EDITOR (attribution line + quoted copy, maybe a
    signature) and returns the edited body; the client then sends it.

    Each call works in a fresh directory under ``tmp`` (kept, for a look after a failure).
    Raises ClientError when the client does not send within TIMEOUT seconds or fails."""
    if client not in PROGRAMS:
        raise ValueError(f"unknown client {client!r}; one of {CLIENTS}")
    program = shutil.which(PROGRAMS[client])
    if program is None:
        raise ClientError(f"{PROGRAMS[client]} is not installed (Debian: apt-get install {PROGRAMS[client]})")
    for text in (from_addr, name):
        if any(c in text for c in "\"'\\\n\r`$"):
            raise ValueError(f"keep from_addr and name plain: {text!r}")
    Path(tmp).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{client}-", dir=tmp)).resolve()
    for path in (str(work), sys.executable):
        if not _PLAIN_PATH.fullmatch(path):
            raise ValueError(f"path {path!r} has characters the clients' command lines would split on")
    home = work / "home"
    home.mkdir()
    (work / "tmp").mkdir()
    maildir = work / "Maildir"
    for sub in ("cur", "new", "tmp"):
        (maildir / sub).mkdir(parents=True)
    # as delivered to a local Maildir: LF line ends; read (flag S) before the player replies
    (maildir / "cur" / "1714564800.M1P1.referee:2,S").write_bytes(original.replace(b"\r\n", b"\n"))
    _write_helpers(work)
    if PROGRAMS[client] == "s-nail":
        argv, env, stdin = _s_nail(client, program, work, from_addr, name)
        return _drive(argv, env, work, edit, stdin=stdin)
    argv, env = _mutt(client, program, work, from_addr, name)
    return _drive(argv, env, work, edit, stdin=None)


def _base_env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LC_ALL": "C.UTF-8",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "TERM": "vt100",
        "COLUMNS": "80",
        "LINES": "24",
        "USER": _user(),  # s-nail warns when these are not the real user's
        "LOGNAME": _user(),
        "SHELL": "/bin/sh",
    }


@functools.cache
def _user() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return "nobody"


def _write_helpers(work: Path) -> None:
    """The editor stand-in (hands the draft to the parent and waits for the edited text)
    and the sendmail stand-in (keeps its arguments and the mail)."""
    (work / "editor.py").write_text(_EDITOR_PY)
    editor = work / "editor"
    editor.write_text(
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -I -S {shlex.quote(str(work / 'editor.py'))}"
        f' {shlex.quote(str(work))} {TIMEOUT} "$@"\n'
    )
    sendmail = work / "sendmail"
    w = shlex.quote(str(work))
    sendmail.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > {w}/sent.args\ncat > {w}/sent.part && mv {w}/sent.part {w}/sent.eml\n'
    )
    editor.chmod(0o755)
    sendmail.chmod(0o755)


def _mutt(client: str, program: str, work: Path, from_addr: str, name: str) -> tuple[list[str], dict[str, str]]:
    lines = [
        f"set folder='{work}/Maildir'",
        f"set spoolfile='{work}/Maildir'",
        "set mbox_type=Maildir",
        f"set tmpdir='{work}/tmp'",
        f"set editor='{work}/editor'",
        f"set sendmail='{work}/sendmail'",
        "set sendmail_wait=0",
        f"set from='{from_addr}'",
        f"set realname='{name}'",
        "set use_from=yes",
        "set hostname='example.test'",
        "set charset='utf-8'",
        "set send_charset='us-ascii:utf-8'",
        # the reply: straight to the editor with the original quoted, to its Reply-To
        "set fast_reply=yes",
        "set include=yes",
        "set reply_to=yes",
        "set edit_headers=no",
        "set abort_unmodified=no",
        # no copies, no prompts on the way out, no pauses for messages
        "set record=''",
        "set copy=no",
        "set postpone=no",
        "set move=no",
        "set quit=yes",
        "set delete=yes",
        "set confirmappend=no",
        "set sleep_time=0",
        "set wait_key=no",
        "set beep=no",
        "set header_cache=''",
        "set mail_check_stats=no",
        "unset signature",
    ]
    if client == "mutt-bar":
        lines.append("set indent_string='| '")
    elif client == "mutt-sig-on-top":
        (work / "signature").write_text(f"{name}\n")  # mutt puts "-- \n" above it (sig_dashes)
        lines += [f"set signature='{work}/signature'", "set sig_on_top=yes"]
    elif client == "mutt-flowed":
        lines.append("set text_flowed=yes")
    # r: reply (to the message under the cursor, the only one); the editor runs; y: send
    # from the compose menu; q: quit the index
    lines.append("push 'ryq'")
    rc = work / "muttrc"
    rc.write_text("\n".join(lines) + "\n")
    argv = [program, "-n", "-F", str(rc), "-f", f"{work}/Maildir"]
    if shutil.which("setsid"):  # the pseudo-terminal as controlling terminal, as in a real session
        argv = [shutil.which("setsid"), "-c", *argv]
    return argv, _base_env(work / "home")


def _s_nail(
    client: str, program: str, work: Path, from_addr: str, name: str
) -> tuple[list[str], dict[str, str], bytes]:
    settings = [
        "quote",  # include the original in a reply (with no value: body only, no headers)
        "reply-to-honour=yes",
        "fullnames",
        "hold",
        "ttycharset=utf-8",
        "sendcharsets=utf-8",
        f"mta={work}/sendmail",
        f"from={name} <{from_addr}>",
        "hostname=example.test",
    ]
    if client == "s-nail":
        settings.append("indentprefix=> ")  # as Debian's /etc/s-nail.rc sets it
    # (s-nail-tab: indentprefix unset, the POSIX default, a tab)
    argv = [program, "-#", "-:/"]
    for setting in settings:
        argv += ["-S", setting]
    argv += ["-f", f"{work}/Maildir"]
    env = _base_env(work / "home")
    env["EDITOR"] = f"{work}/editor"
    env["VISUAL"] = f"{work}/editor"
    env["EDITOR_STAND_IN_TOUCH"] = "1"  # see _EDITOR_PY
    env["TMPDIR"] = f"{work}/tmp"
    # reply to the first (only) message; ~e: edit the text in $EDITOR; ~.: send
    return argv, env, b"reply 1\n~e\n~.\nquit\n"


def _drive(
    argv: list[str], env: dict[str, str], work: Path, edit: Callable[[str], str], *, stdin: bytes | None
) -> bytes:
    """Runs the client until it sends: in a pseudo-terminal (stdin None) or in batch mode
    with ``stdin`` on a pipe. Hands the draft to ``edit`` when the editor stand-in shows it."""
    transcript = bytearray()
    lock = threading.Lock()

    def pump(fd: int) -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with lock:
                transcript.extend(chunk)

    master = None
    if stdin is None:
        import fcntl
        import termios

        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        # `setsid -c` (see _mutt) makes the client a session leader with the terminal as its
        # controlling terminal; without it, a new session all the same
        proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=work,
            close_fds=True,
            start_new_session=os.path.basename(argv[0]) != "setsid",
        )
        os.close(slave)
        reader = threading.Thread(target=pump, args=(master,), daemon=True)
    else:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=work,
            close_fds=True,
            start_new_session=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
        reader = threading.Thread(target=pump, args=(proc.stdout.fileno(),), daemon=True)
    reader.start()

    def failure(why: str) -> ClientError:
        with lock:
            tail = _printable(bytes(transcript[-3000:]))
        return ClientError(f"{_program(argv)} {why} (work dir {work}); it printed, last:\n{tail}")

    draft_in, draft_out, sent = work / "draft.in", work / "draft.out", work / "sent.eml"
    deadline = time.monotonic() + TIMEOUT
    edited = False
    try:
        while True:
            if not edited and draft_in.exists():
                draft = draft_in.read_bytes().decode("utf-8", "surrogateescape")
                body = edit(draft)
                part = work / "draft.out.part"
                part.write_bytes(body.encode("utf-8", "surrogateescape"))
                os.replace(part, draft_out)
                edited = True
            if sent.exists():
                break
            if proc.poll() is not None:
                time.sleep(0.05)  # the sendmail stand-in may still be renaming its file
                if sent.exists():
                    break
                raise failure(
                    f"exited with status {proc.returncode} without sending"
                    + ("" if edited else " (its editor never ran)")
                )
            if time.monotonic() > deadline:
                raise failure(f"did not send within {TIMEOUT:g} s" + ("" if edited else " (its editor never ran)"))
            time.sleep(POLL)
        try:
            proc.wait(QUIT_GRACE)
        except subprocess.TimeoutExpired:
            pass
        return sent.read_bytes()
    finally:
        if proc.poll() is None:
            _kill(proc)
        if master is not None:
            os.close(master)
        reader.join(5)
        if proc.stdout is not None:
            proc.stdout.close()
        with lock:
            (work / "client.log").write_bytes(bytes(transcript))  # what it showed, for a look after a failure


def _kill(proc: subprocess.Popen) -> None:
    """The client and what it started (its editor, its sendmail): its process group, which
    is its own (a new session); never the caller's."""
    try:
        if os.getpgid(proc.pid) == proc.pid != os.getpgrp():
            os.killpg(proc.pid, 9)
        else:
            proc.kill()
    except ProcessLookupError:
        pass
    proc.wait()


def _program(argv: list[str]) -> str:
    return next((os.path.basename(a) for a in argv if os.path.basename(a) in PROGRAMS.values()), argv[0])


def _printable(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>78]", " ", text)
    return "".join(c if c.isprintable() or c == "\n" else " " for c in text)
