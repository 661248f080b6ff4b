"""The loopback mail stack for tests, benchmarks and demos: Dovecot (IMAP + LMTP) and
Postfix (SMTP) on free loopback ports, every file under one directory, mail only to
@example.test; started and stopped through ``deploy/mailstack/start-mailstack.sh`` of the
checkout (root and the Debian packages needed: ``deploy/mailstack/install-mailstack.sh``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MailStack", "MailStackUnavailable", "StackControl"]


class MailStackUnavailable(Exception):
    """The stack cannot start here (not root, packages missing, the script failed)."""


ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "deploy" / "mailstack" / "start-mailstack.sh"
SCRIPT_TIMEOUT = 60  # seconds; a start takes about 2 s


@dataclass(frozen=True)
class MailStack:
    dir: Path
    imap_port: int
    smtp_port: int
    lmtp_port: int
    host: str = "127.0.0.1"
    domain: str = "example.test"
    password: str = "secret"
    users: tuple[str, ...] = ("referee", "alice", "bob")

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
    return subprocess.run(
        ["bash", str(SCRIPT), str(directory), action],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
        check=False,
    )


class StackControl:
    """Starts and stops one stack in one directory (the same ports every time, so a restart
    brings the same servers back with the mail they held)."""

    def __init__(self) -> None:
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
            imap_port, lmtp_port, smtp_port = _free_ports(3)
            stack = MailStack(dir=self.directory, imap_port=imap_port, smtp_port=smtp_port, lmtp_port=lmtp_port)
            self.env = {
                **os.environ,
                "IMAP_PORT": str(imap_port),
                "LMTP_PORT": str(lmtp_port),
                "SMTP_PORT": str(smtp_port),
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

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
