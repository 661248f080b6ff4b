"""The loopback mail stack for tests, benchmarks and demos: Dovecot (IMAP + LMTP) and
Postfix (SMTP) on free loopback ports, every file under one directory, mail only to
@example.test; started and stopped through ``deploy/mailstack/start-mailstack.sh`` of the
checkout, or the copy an installed wheel carries (root and the Debian packages needed:
``deploy/mailstack/install-mailstack.sh``, :data:`INSTALL_SCRIPT`).
Plain text, STARTTLS and implicit TLS, with a throwaway CA (:attr:`MailStack.ca_file`).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MailStack", "MailStackUnavailable", "StackControl"]


class MailStackUnavailable(Exception):
    """The stack cannot start here (not root, packages missing, the script failed)."""


ROOT = Path(__file__).resolve().parents[1]


def _scripts_dir() -> Path:
    """The scripts' folder: the copy an installed wheel carries (``referee/mailstack_scripts``,
    see pyproject.toml), else ``deploy/mailstack`` of the checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "mailstack_scripts", ROOT / "deploy" / "mailstack"):
        if (candidate / "start-mailstack.sh").is_file():
            return candidate
    return ROOT / "deploy" / "mailstack"  # not there: running it says which file is missing


SCRIPTS = _scripts_dir()
SCRIPT = SCRIPTS / "start-mailstack.sh"
INSTALL_SCRIPT = SCRIPTS / "install-mailstack.sh"  # the Debian packages, when missing (needs root)
SCRIPT_TIMEOUT = 60  # seconds; a start takes about 2 s


@dataclass(frozen=True)
class MailStack:
    """One running stack. Plain text and TLS: ``imap_port`` and ``smtp_port`` take plain text
    and offer STARTTLS; ``imaps_port`` and ``smtps_port`` are TLS from the first byte. The
    servers' certificate (for 127.0.0.1 and localhost) is signed by a throwaway CA made at
    the first start: :attr:`ca_file`."""

    dir: Path
    imap_port: int
    smtp_port: int
    lmtp_port: int
    imaps_port: int = 10993
    smtps_port: int = 10465
    host: str = "127.0.0.1"
    domain: str = "example.test"
    password: str = "secret"
    users: tuple[str, ...] = ("referee", "alice", "bob")

    @property
    def ca_file(self) -> Path:
        """The CA certificate (PEM) the servers' certificate is signed by: what a client
        verifies the stack's TLS against (``ca_file`` in [imap] and [smtp])."""
        return self.dir / "tls" / "ca.pem"

    def address(self, user: str) -> str:
        """alice -> alice@example.test (the IMAP login name is the full address)."""
        if user not in self.users:
            raise ValueError(f"{user!r} is not a mailbox of the stack {self.users}")
        return f"{user}@{self.domain}"

    def logs(self) -> str:
        """The daemons' logs, for assertion messages."""
        parts = []
        for name in ("dovecot.log", "postfix.log"):
            path = self.dir / "log" / name
            text = path.read_text(errors="replace") if path.exists() else "(missing)"
            parts.append(f"--- {name} ---\n{text}")
        return "\n".join(parts)


def _free_ports(n: int) -> list[int]:
    """n distinct free TCP ports on 127.0.0.1 (all bound at once, so they differ)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _run_script(directory: Path, action: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # The script redirects the daemons' stdio itself; capture_output cannot hang on them.
    # A session of its own: a Ctrl-C at the terminal must not cut the script off half-way (a
    # daemon it was starting would be left running, its pid file not yet written).
    return subprocess.run(
        ["bash", str(SCRIPT), str(directory), action],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
        check=False,
        start_new_session=True,
    )


class StackControl:
    """Starts and stops one stack in one directory (the same ports every time, so a restart
    brings the same servers back with the mail they held)."""

    def __init__(self, users: Sequence[str] = ()) -> None:
        # mailboxes beyond the stack's own (referee, alice, bob): the Betting Minority demo's participants
        self.users = (*MailStack.users, *(u for u in users if u not in MailStack.users))
        # Not tmp_path: it is 0700, and the mail uid and the postfix user must traverse the directory.
        self.directory = Path(tempfile.mkdtemp(prefix="mailstack-", dir="/tmp"))
        self.directory.chmod(0o755)
        self.env: dict[str, str] = {}
        self.stack: MailStack | None = None

    def start(self) -> MailStack:
        """Start on free ports (the first time) or on the same ports (after :meth:`stop`)."""
        if self.stack is not None:
            result = _run_script(self.directory, "start", self.env)
            if result.returncode != 0:
                raise MailStackUnavailable(f"restarting the mail stack failed:\n{result.stdout}{result.stderr}")
            return self.stack
        failure = ""
        for _attempt in range(3):  # a free port can be taken by someone else before the daemons bind it
            imap_port, lmtp_port, smtp_port, imaps_port, smtps_port = _free_ports(5)
            stack = MailStack(
                dir=self.directory,
                imap_port=imap_port,
                smtp_port=smtp_port,
                lmtp_port=lmtp_port,
                imaps_port=imaps_port,
                smtps_port=smtps_port,
                users=self.users,
            )
            self.env = {
                **os.environ,
                "IMAP_PORT": str(imap_port),
                "LMTP_PORT": str(lmtp_port),
                "SMTP_PORT": str(smtp_port),
                "IMAPS_PORT": str(imaps_port),
                "SMTPS_PORT": str(smtps_port),
                "MAIL_DOMAIN": stack.domain,
                "MAIL_USERS": " ".join(stack.users),
                "MAIL_PASSWORD": stack.password,
            }
            try:
                result = _run_script(self.directory, "start", self.env)
            except subprocess.TimeoutExpired as exc:
                # exc.stdout/stderr are bytes (even with text=True) or None
                output = "".join(
                    o.decode(errors="replace") if isinstance(o, bytes) else o or "" for o in (exc.stdout, exc.stderr)
                )
                failure = f"{SCRIPT} did not finish within {SCRIPT_TIMEOUT} s:\n{output}"
                break
            if result.returncode == 0:
                self.stack = stack
                return stack
            failure = f"{SCRIPT} exited {result.returncode}:\n{result.stdout}{result.stderr}"
            # 2: cannot run here (not root, packages missing); only a port taken meanwhile is worth a retry
            if result.returncode == 2 or "Address already in use" not in result.stdout + result.stderr:
                break
        raise MailStackUnavailable(failure)

    def stop(self) -> None:
        """Stop the daemons (the mail and the queue stay in the directory)."""
        if not self.env:
            return
        try:
            stop = _run_script(self.directory, "stop", self.env)
            if stop.returncode != 0:
                print(f"stopping the mail stack failed:\n{stop.stdout}{stop.stderr}")
        except subprocess.TimeoutExpired:
            print(f"stopping the mail stack in {self.directory} took over {SCRIPT_TIMEOUT} s")

    def stop_dovecot(self) -> None:
        """Stop Dovecot alone, cutting off every IMAP client; Postfix goes on taking mail and
        keeps it queued (its LMTP deliveries deferred) until :meth:`start_dovecot`."""
        result = _run_script(self.directory, "stop-dovecot", self.env)
        if result.returncode != 0:
            raise MailStackUnavailable(f"stopping Dovecot failed:\n{result.stdout}{result.stderr}")

    def start_dovecot(self) -> None:
        """Start Dovecot again on the same ports with the mail it held (Postfix left as it is)."""
        result = _run_script(self.directory, "start", {**self.env, "START_POSTFIX": "0"})
        if result.returncode != 0:
            raise MailStackUnavailable(f"starting Dovecot again failed:\n{result.stdout}{result.stderr}")

    def restart_dovecot(self) -> None:
        self.stop_dovecot()
        self.start_dovecot()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
