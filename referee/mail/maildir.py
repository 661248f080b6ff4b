"""The embedded Maildir transport: an inbox to read from, an outbox to deliver to.

Crash safety follows the Maildir rules: a message is written and fsynced in
``tmp/``, then renamed or linked into ``new/`` (atomic on POSIX), and the
directory is fsynced, so ``new/`` never shows a partial file. Processing moves a
message from ``new/`` to ``cur/`` with the ``:2,S`` (seen) info suffix; a message
that was read but not yet marked stays in ``new/`` and is offered again, so the
caller must process idempotently (it does, by Message-ID).

The delivery time of an inbox message is the modification time of its file: the
delivering agent writes the file once and never touches it again, and the rename
into ``new/`` keeps the time (the same convention as Dovecot's received date).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import hashlib
import itertools
import os
import re
import socket
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import parseaddr
from pathlib import Path
from typing import Any

from referee.mail.transport import OutboundMail, Outcome, SendResult

__all__ = ["InboxItem", "MaildirInbox", "MaildirOutbox", "MaildirSender", "MaildirSource", "deliver_to_maildir"]

SEEN_INFO = ":2,S"
TMP_MAX_AGE = timedelta(days=1)  # a file left in tmp/ this long is an interrupted delivery
# the outbox's file system failing as a whole (full, out of quota, read-only, failing): the
# cause "disk" of a failed delivery (referee.mail.transport), not one mail's nor one address's
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EFBIG})

_counter = itertools.count(1)
_PLAIN_PATH = re.compile(r"[!-;=?-~]{1,320}")  # an envelope sender fit for a Return-Path line (no <, >, spaces)


@dataclass(frozen=True)
class InboxItem:
    key: str  # unique part of the file name (without the ":2," info)
    path: Path  # where the file was found, in new/
    delivered_at: datetime  # aware UTC: the file's mtime, i.e. the Maildir delivery time


class MaildirInbox:
    """Messages delivered to a Maildir, read oldest first."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        _ensure_maildir(self.path)

    def pending(self) -> list[InboxItem]:
        """Unprocessed messages in ``new/``, by delivery time then name. Dotfiles skipped."""
        found: list[tuple[int, str, InboxItem]] = []
        with os.scandir(self.path / "new") as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    if not entry.is_file(follow_symlinks=False):
                        continue
                    stat = entry.stat(follow_symlinks=False)
                except FileNotFoundError:  # processed meanwhile
                    continue
                item = InboxItem(
                    key=_key(entry.name),
                    path=Path(entry.path),
                    delivered_at=datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc),
                )
                found.append((stat.st_mtime_ns, entry.name, item))
        found.sort(key=lambda t: (t[0], t[1]))
        return [item for _, _, item in found]

    def read(self, item: InboxItem) -> bytes:
        return item.path.read_bytes()

    def clean_tmp(self, now: datetime) -> int:
        """Remove files older than a day from ``tmp/``; returns how many."""
        return _clean_tmp(self.path, now)

    def mark_processed(self, item: InboxItem) -> None:
        """Move the message to ``cur/`` as seen (``<key>:2,S``).

        Idempotent: a message already in ``cur/`` (whatever its flags) is left alone.
        Raises FileNotFoundError if the message is in neither ``new/`` nor ``cur/``.
        """
        target = self.path / "cur" / f"{item.key}{SEEN_INFO}"
        try:
            os.rename(item.path, target)
        except FileNotFoundError:
            if _find(self.path / "cur", item.key) is None:
                raise
        # No fsync: the caller has committed the message first, so a rename lost in a
        # power cut only offers the message again, and the caller skips it by Message-ID.


class MaildirOutbox:
    """Delivers outbound mail into a Maildir (or one Maildir per recipient)."""

    def __init__(self, path: str | os.PathLike[str], per_address: bool = False) -> None:
        self.path = Path(path)
        self.per_address = per_address
        self._known: set[str] = set()  # Maildirs made sure of
        self._unsynced: list[str] = []  # paths delivered with durable=False, not yet synced
        if not per_address:
            _ensure_maildir(self.path)
        else:
            self.path.mkdir(parents=True, exist_ok=True)

    def clean_tmp(self, now: datetime) -> int:
        """Remove files older than a day from every ``tmp/`` of the outbox; returns how many."""
        if not self.per_address:
            return _clean_tmp(self.path, now)
        removed = 0
        with os.scandir(self.path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and os.path.isdir(os.path.join(entry.path, "tmp")):
                    removed += _clean_tmp(Path(entry.path), now)
        return removed

    def maildir_for(self, recipient: str) -> Path:
        """The Maildir that *recipient*'s mail goes to."""
        if not self.per_address:
            return self.path
        return self.path / _address_dirname(recipient)

    def deliver(self, recipient: str, data: bytes, key: str, *, durable: bool = True) -> Path:
        """Deliver *data* once per *key* and Maildir; returns the message's path.

        The file name is derived from *key*, so delivering the same key again
        returns the existing message (in ``new/``, or in ``cur/`` as seen by a
        reader) instead of writing a duplicate. With ``durable=False`` nothing is
        fsynced until :meth:`sync`, which makes a whole batch durable at once.
        """
        maildir = str(self.path) if not self.per_address else os.path.join(self.path, _address_dirname(recipient))
        if maildir not in self._known:
            _ensure_maildir(maildir)
            self._known.add(maildir)
        name = _key_filename(key)
        target = os.path.join(maildir, "new", name)
        seen = os.path.join(maildir, "cur", name)
        for existing in (target, seen + SEEN_INFO, seen):
            if os.path.exists(existing):
                return Path(existing)
        tmp = _write_tmp(maildir, data, None, fsync=durable)
        try:
            _publish(tmp, target)
        finally:
            _unlink(tmp)
        if durable:
            _fsync_dir(os.path.join(maildir, "new"))
        else:
            self._unsynced.append(target)
        return Path(target)

    def sync(self) -> None:
        """Make every delivery made with ``durable=False`` durable: one ``syncfs`` of the
        outbox's filesystem where the platform has it, else an fsync per file and folder."""
        if not self._unsynced:
            return
        if not _syncfs(self.path):
            for path in self._unsynced:
                _fsync_file(path)
            for folder in {os.path.dirname(path) for path in self._unsynced}:
                _fsync_dir(folder)
        self._unsynced.clear()


class MaildirSource:
    """Ingest's transport on a :class:`MaildirInbox` (or anything with its ``pending``,
    ``read`` and ``mark_processed``): local files, read as they are asked for."""

    def __init__(self, inbox: Any) -> None:
        self.inbox = inbox

    @property
    def path(self) -> Any:
        return getattr(self.inbox, "path", "inbox")

    async def pending(self) -> list[Any]:
        return list(self.inbox.pending())

    async def read(self, item: Any) -> bytes:
        return bytes(self.inbox.read(item))

    async def mark_processed(self, item: Any) -> None:
        self.inbox.mark_processed(item)

    async def close(self) -> None:
        return None


class MaildirSender:
    """The outbox's transport on a :class:`MaildirOutbox` (or anything with its ``deliver``
    and ``sync``): a file written is sent; an error of the file system is temporary (a full
    disk, a folder not writable yet), an address no folder can be made for is permanent.

    Each file starts with a ``Return-Path:`` line naming the mail's envelope sender (its
    signed bounce address), as a Maildir file delivered by an MTA does: the relay that sends
    the file on takes its envelope sender from there (``sendmail -f``), so that bounces come
    back to it. Its lines end in LF, the local convention of Maildir files that mail readers
    (mutt, s-nail) expect; the mail is composed with CRLF, which SMTP keeps."""

    concurrency = 1  # local files: one at a time is as fast, and keeps the order

    def __init__(self, outbox: Any) -> None:
        self.outbox = outbox

    async def send(self, mail: OutboundMail) -> SendResult:
        results: dict[str, tuple[Outcome, str]] = {}
        cause = ""
        data = mail.data.replace(b"\r\n", b"\n")
        if mail.sender and _PLAIN_PATH.fullmatch(mail.sender) and not data.startswith(b"Return-Path:"):
            data = b"Return-Path: <" + mail.sender.encode("ascii") + b">\n" + data
        for recipient in mail.recipients:
            try:
                self.outbox.deliver(recipient, data, mail.key, durable=False)
            except ValueError as exc:  # no usable address in it
                results[recipient] = ("permanent", f"{type(exc).__name__}: {exc}")
            except OSError as exc:
                results[recipient] = ("temporary", f"{type(exc).__name__}: {exc}")
                if exc.errno in DISK_ERRNOS:  # the file system, not this mail nor its address
                    cause = "disk"
            else:
                results[recipient] = ("sent", "")
        return SendResult(results, cause)

    async def sync(self) -> None:
        self.outbox.sync()

    async def close(self) -> None:
        return None


def deliver_to_maildir(path: str | os.PathLike[str], data: bytes, delivered_at: datetime | None = None) -> Path:
    """Drop a message into the Maildir at *path* as an MTA would (tmp/ then new/).

    *delivered_at* (aware) becomes the file's mtime, which the inbox reads as the
    delivery time; by default the time is now.
    """
    if delivered_at is not None and delivered_at.utcoffset() is None:
        raise ValueError("delivered_at must be timezone-aware")
    maildir = Path(path)
    _ensure_maildir(maildir)
    tmp = _write_tmp(str(maildir), data, delivered_at)
    target = maildir / "new" / os.path.basename(tmp)
    os.rename(tmp, target)
    _fsync_dir(maildir / "new")
    return target


# --------------------------------------------------------------------------- helpers


def _clean_tmp(maildir: Path, now: datetime) -> int:
    """Maildir's rule: a file in ``tmp/`` untouched for a day is a delivery that never finished."""
    cutoff = (now - TMP_MAX_AGE).timestamp()
    removed = 0
    try:
        entries = list(os.scandir(maildir / "tmp"))
    except FileNotFoundError:
        return 0
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
        except FileNotFoundError:
            continue
    return removed


def _ensure_maildir(path: Path | str) -> None:
    for sub in ("tmp", "new", "cur"):
        folder = os.path.join(path, sub)
        if not os.path.isdir(folder):  # one stat where the Maildir is there (as a rule)
            os.makedirs(folder, exist_ok=True)


def _unique_name() -> str:
    """``time.MusecPpidQcounter.host``, the usual Maildir unique name."""
    now = time.time_ns()
    seconds, nanos = divmod(now, 1_000_000_000)
    return f"{seconds}.M{nanos // 1000}P{os.getpid()}Q{next(_counter)}.{_host()}"


@functools.lru_cache(maxsize=1)
def _host() -> str:
    """This host's name as a Maildir name part (asked once: it is the same for every file)."""
    return socket.gethostname().replace("/", r"\057").replace(":", r"\072") or "localhost"


def _write_tmp(maildir: str, data: bytes, mtime: datetime | None, *, fsync: bool = True) -> str:
    """Write *data* to a new file in ``tmp/`` of *maildir*; returns its path."""
    tmp = os.path.join(maildir, "tmp", _unique_name())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if mtime is not None:
            stamp = mtime.timestamp()
            os.utime(tmp, (stamp, stamp))
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _publish(tmp: str, target: str) -> None:
    """Make *tmp* visible as *target* without replacing an existing *target*."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        return  # delivered concurrently under the same key
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        if not os.path.exists(target):  # no hard links on this filesystem
            os.replace(tmp, target)


def _key(name: str) -> str:
    return name.split(":", 1)[0]


def _find(directory: Path, key: str) -> Path | None:
    """The file in *directory* whose unique part is *key*, whatever its info suffix."""
    exact = directory / key
    if exact.exists():
        return exact
    with os.scandir(directory) as entries:
        for entry in entries:
            if _key(entry.name) == key:
                return Path(entry.path)
    return None


def _key_filename(key: str) -> str:
    """A file name for a delivery key: readable prefix plus a hash of the whole key."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    readable = re.sub(r"[^A-Za-z0-9_-]+", "-", key).strip("-")[:80].rstrip("-")
    return f"{readable}.{digest}" if readable else digest


@functools.lru_cache(maxsize=16384)
def _address_dirname(recipient: str) -> str:
    """The bare address, lowercased, made safe as one path component."""
    address = (parseaddr(recipient)[1] or recipient).strip().lower()
    safe = re.sub(r"[^a-z0-9@._+-]", "_", address)
    if not safe.strip("."):
        raise ValueError(f"no usable address in {recipient!r}")
    if safe.startswith("."):
        safe = "_" + safe[1:]
    if len(safe) > 200:
        safe = f"{safe[:160]}.{hashlib.sha256(safe.encode()).hexdigest()[:32]}"
    return safe


def _fsync_file(path: str | Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _syncfs(path: Path) -> bool:
    """``syncfs(2)`` on the filesystem holding *path*; False where unavailable."""
    function = getattr(_libc(), "syncfs", None)
    if function is None:
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        return bool(function(fd) == 0)
    finally:
        os.close(fd)


@functools.cache
def _libc() -> object:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _fsync_dir(path: str | Path) -> None:
    """Make a rename in *path* durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
