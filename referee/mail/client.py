"""A minimal scripted mail user agent on Maildirs, for the demo and the tests.

It reads the mail the referee delivered to one address (the per-address outbox
Maildir) and answers like a real client would: ``Re:`` subject, In-Reply-To and
References, the typed text on top and the original quoted below with an attribution
line, delivered into the referee's inbox with a chosen delivery time.

:class:`ImapClient` is the same player on a real mail server: it reads its mailbox by
IMAP and sends its answers by SMTP (the demo over real mail, the integration tests).
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import functools
import imaplib
import re
import smtplib
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from pathlib import Path
from typing import Any

from referee.mail.maildir import deliver_to_maildir


class Received:
    """A mail as delivered: its fields are read once (the message does not change, and a
    script reads a whole match's mailbox again before every answer). Made from the file's
    bytes, it is parsed only as far as it is read: the header fields from the header block
    alone, the whole MIME tree (an HTML part, a calendar) on the first use of
    :attr:`message` or :attr:`text` (a script reads the text of its latest mails, not of
    every mail in the box)."""

    __slots__ = ("path", "_message", "_raw", "__dict__")

    def __init__(self, path: Path, message: EmailMessage | None = None, *, raw: bytes | None = None):
        if message is None and raw is None:
            raise TypeError("Received needs the message or its bytes")
        self.path = path
        self._message = message
        self._raw = raw

    def __repr__(self) -> str:
        return f"Received(path={self.path!r}, subject={self.subject!r})"

    @property
    def message(self) -> EmailMessage:
        if self._message is None:
            assert self._raw is not None
            self._message = email.message_from_bytes(self._raw, policy=email.policy.default)  # type: ignore[assignment]
            self._raw = None
        return self._message

    @functools.cached_property
    def _head(self) -> EmailMessage:
        """The header fields, from the header block alone while the whole is not parsed."""
        if self._message is not None:
            return self._message
        assert self._raw is not None
        return BytesHeaderParser(policy=email.policy.default).parsebytes(self._raw)  # type: ignore[return-value]

    @functools.cached_property
    def subject(self) -> str:
        return str(self._head.get("Subject", ""))

    @functools.cached_property
    def message_id(self) -> str:
        return str(self._head.get("Message-ID", "")).strip()

    @functools.cached_property
    def reply_address(self) -> str:
        return str(self._head.get("Reply-To") or self._head.get("From"))

    @functools.cached_property
    def text(self) -> str:
        """The plain text part, decoded. From the bytes, read with the stdlib's compat32
        policy and decoded by its charset (the same text as ``get_content`` of the default
        policy gives, about six times quicker: its header objects are not made)."""
        if self._raw is not None:
            quick = email.message_from_bytes(self._raw, _class=EmailMessage, policy=email.policy.compat32)
            part = quick.get_body(preferencelist=("plain",))
            if part is None:
                return ""
            data = part.get_payload(decode=True)
            data = data if isinstance(data, bytes) else b""
            try:
                text = data.decode(str(part.get_param("charset", "ascii")), "replace")
            except LookupError:  # a charset Python does not know
                text = data.decode("utf-8", "replace")
            return text.replace("\r\n", "\n")
        part = self.message.get_body(preferencelist=("plain",))
        return part.get_content().replace("\r\n", "\n") if part is not None else ""


class ScriptedClient:
    def __init__(self, address: str, name: str, mailbox: Path, referee_inbox: Path):
        self.address = address
        self.name = name
        self.mailbox = mailbox  # the Maildir the referee delivers this player's mail to
        self.referee_inbox = referee_inbox
        self._seen: set[str] = set()
        self._counter = 0
        # each file read once: (path, size, mtime) -> the mail (a Maildir file never
        # changes; a whole match's mailbox is read again before every answer)
        self._parsed: dict[tuple[Path, int, int], Received] = {}

    def all(self) -> list[Received]:
        """Every mail in the mailbox, oldest first (by delivery time, then name)."""
        found = []
        for sub in ("new", "cur"):
            folder = self.mailbox / sub
            if folder.is_dir():
                for p in folder.iterdir():
                    if not p.name.startswith("."):
                        st = p.stat()
                        found.append((st.st_mtime, p.name, p, st.st_size, st.st_mtime_ns))
        found.sort(key=lambda f: (f[0], f[1]))
        return [self._received(p, size, mtime) for _, _, p, size, mtime in found]

    def _received(self, path: Path, size: int, mtime: int) -> Received:
        key = (path, size, mtime)
        mail = self._parsed.get(key)
        if mail is None:
            mail = self._parsed[key] = Received(path, raw=path.read_bytes())
        return mail

    def unread(self) -> list[Received]:
        fresh = [m for m in self.all() if m.path.name not in self._seen]
        self._seen.update(m.path.name for m in fresh)
        return fresh

    def latest(self) -> Received:
        mails = self.all()
        if not mails:
            raise LookupError(f"no mail for {self.address}")
        return mails[-1]

    def reply(self, original: Received, text: str, at: datetime, **options: Any) -> Path:
        """Answer ``original`` with ``text`` typed on top; the mail reaches the referee at ``at``
        (the options are :meth:`compose_reply`'s)."""
        raw = self.compose_reply(original, text, at, **options)
        return deliver_to_maildir(self.referee_inbox, raw, delivered_at=at)

    def compose_reply(
        self,
        original: Received,
        text: str,
        at: datetime,
        *,
        from_addr: str | None = None,
        to_addr: str | None = None,
        quote: bool = True,
        thread: bool = True,
        extra_headers: dict[str, str] | None = None,
    ) -> bytes:
        """The answer to ``original`` with ``text`` typed on top, dated ``at``: the mail
        :meth:`reply` delivers, or one to send some other way (by SMTP).

        ``thread=False`` writes a new mail to the reply address instead (no In-Reply-To).
        """
        self._counter += 1
        msg = EmailMessage()
        msg["From"] = email.utils.formataddr((self.name, from_addr or self.address))
        msg["To"] = to_addr or original.reply_address
        subject = original.subject
        msg["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
        msg["Date"] = email.utils.format_datetime(at)
        domain = (from_addr or self.address).split("@", 1)[1]
        msg["Message-ID"] = f"<{at:%Y%m%d%H%M%S}.{self._counter}.{self.address.split('@')[0]}@{domain}>"
        if thread and original.message_id:
            msg["In-Reply-To"] = original.message_id
            refs = str(original._head.get("References", "")).split()
            msg["References"] = " ".join([*refs, original.message_id])
        for name, value in (extra_headers or {}).items():
            msg[name] = value
        body = text.rstrip() + "\n"
        if quote:
            sender = email.utils.parseaddr(str(original._head.get("From")))[0] or "Referee"
            when = original._head.get("Date", "")
            body += f"\nOn {when}, {sender} wrote:\n"
            body += "".join(f"> {line}\n" if line else ">\n" for line in original.text.splitlines())
        msg.set_content(body)
        return bytes(msg)


_UID = re.compile(rb"\bUID (\d+)")


class ImapClient(ScriptedClient):
    """A scripted player on a real mail server: its mailbox read by IMAP, its mail sent by
    SMTP to the server the referee reads from (Python's own ``imaplib`` and ``smtplib``, not
    the referee's transports; plain text, for a loopback server).

    The mail a :class:`Received` holds is not a file here: its ``path`` is ``<folder>/<UID>``,
    a name for the message. Mail is listed in UID order, the order the server stored it in.
    Every mail sent is kept in :attr:`sent` (Message-ID, raw bytes), e.g. to send it again.
    """

    def __init__(
        self,
        address: str,
        name: str,
        *,
        host: str,
        imap_port: int,
        smtp_port: int,
        password: str,
        username: str | None = None,
        timeout: float = 30.0,
    ):
        self.address = address
        self.name = name
        self.host, self.imap_port, self.smtp_port = host, imap_port, smtp_port
        self.username = username or address
        self.password = password
        self.timeout = timeout
        self.sent: list[tuple[str, bytes]] = []
        self._seen: set[str] = set()
        self._counter = 0
        self._cache: dict[tuple[str, bytes | None, int], Received] = {}  # (folder, UIDVALIDITY, UID)
        # the Message-ID of each message seen, by (folder, UIDVALIDITY, UID): a wait reads the
        # header of the new messages only (a SEARCH HEADER per id and poll read every message)
        self._ids: dict[tuple[str, bytes | None, int], str] = {}
        self._imap: imaplib.IMAP4 | None = None  # one connection, kept: a login per poll cost most of a wait

    def close(self) -> None:
        """Log out of the server (the next read logs in again)."""
        imap, self._imap = self._imap, None
        if imap is not None:
            try:
                imap.logout()
            except (imaplib.IMAP4.error, OSError):
                pass

    # ------------------------------------------------------------------ reading

    def all(self, folder: str = "INBOX") -> list[Received]:
        with self._session(folder) as imap:
            validity, uids = self._uids(imap)
            missing = [uid for uid in uids if (folder, validity, uid) not in self._cache]
            if missing:
                for part in _ok(imap.uid("FETCH", ",".join(map(str, missing)), "(UID BODY.PEEK[])")):
                    if isinstance(part, tuple) and (uid := _UID.search(part[0])):
                        number = int(uid.group(1))
                        self._cache[(folder, validity, number)] = Received(Path(folder) / str(number), raw=part[1])
        return [self._cache[(folder, validity, uid)] for uid in uids]

    def wait_for(
        self, message_ids: Iterable[str], *, folders: Iterable[str] = ("INBOX",), timeout: float = 30.0
    ) -> None:
        """Wait until every one of ``message_ids`` is in the mailbox (in one of ``folders``; a
        Message-ID named twice, twice): a server answers an SMTP sender before it has stored
        the mail. Raises TimeoutError naming what did not come."""
        wanted = Counter(_bracketed(message_id) for message_id in message_ids)
        deadline = time.monotonic() + timeout
        folders = tuple(folders)
        pause = 0.005  # polls soon after a send (delivery takes milliseconds on loopback), then less often
        while wanted:
            found: Counter[str] = Counter()
            for folder in folders:
                found.update(self._message_ids(folder))
            wanted = Counter({m: n for m, n in wanted.items() if found[m] < n})
            if wanted and time.monotonic() > deadline:
                raise TimeoutError(
                    f"{sum(wanted.values())} mail(s) for {self.address} did not arrive within {timeout:.0f} s: "
                    + ", ".join(sorted(wanted)[:3])
                )
            if wanted:
                time.sleep(pause)  # a poll interval, not a wait for delivery
                pause = min(2 * pause, 0.05)

    def _message_ids(self, folder: str) -> list[str]:
        """The Message-ID of every message in ``folder`` now (bracketed; "" for none): the
        header fetched once per message."""
        with self._session(folder) as imap:
            validity, uids = self._uids(imap)
            missing = [uid for uid in uids if (folder, validity, uid) not in self._ids]
            if missing:
                fetched = imap.uid("FETCH", ",".join(map(str, missing)), "(UID BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
                for part in _ok(fetched):
                    if isinstance(part, tuple) and (uid := _UID.search(part[0])):
                        head = BytesHeaderParser(policy=email.policy.default).parsebytes(part[1])
                        value = str(head.get("Message-ID", "")).strip()
                        self._ids[(folder, validity, int(uid.group(1)))] = _bracketed(value) if value else ""
        return [self._ids.get((folder, validity, uid), "") for uid in uids]

    @staticmethod
    def _uids(imap: imaplib.IMAP4) -> tuple[bytes | None, list[int]]:
        """The selected folder's UIDVALIDITY and its messages' UIDs, in order."""
        validity = (imap.response("UIDVALIDITY")[1] or [None])[0]
        return validity, sorted(int(uid) for uid in _ok(imap.uid("SEARCH", "ALL"))[0].split())

    @contextmanager
    def _session(self, folder: str) -> Iterator[imaplib.IMAP4]:
        """The client's connection, logged in, with ``folder`` selected read-only (selected
        again at every use: the server then shows what came and went since). A connection
        the server closed (a restart) is made again once; one that fails in use is dropped,
        so that the next use makes a new one."""
        for attempt in (1, 2):
            try:
                if self._imap is None:
                    imap = imaplib.IMAP4(self.host, self.imap_port, timeout=self.timeout)
                    try:
                        imap.login(self.username, self.password)
                    except BaseException:
                        imap.shutdown()
                        raise
                    self._imap = imap
                _ok(self._imap.select(f'"{folder}"', readonly=True))
                break
            except (imaplib.IMAP4.abort, OSError):
                self._drop()
                if attempt == 2:
                    raise
        try:
            yield self._imap
        except (imaplib.IMAP4.abort, OSError):
            self._drop()
            raise

    def _drop(self) -> None:
        imap, self._imap = self._imap, None
        if imap is not None:
            try:
                imap.shutdown()
            except OSError:
                pass

    # ------------------------------------------------------------------ writing

    def reply(self, original: Received, text: str, at: datetime, **options: Any) -> str:  # type: ignore[override]
        """Answer ``original`` with ``text`` typed on top (the options are :meth:`compose_reply`'s),
        sent by SMTP now (``at`` is its Date); its Message-ID."""
        return self.send(self.compose_reply(original, text, at, **options))

    def send(self, raw: bytes) -> str:
        """Submit ``raw`` by SMTP to the addresses in its To and Cc; its Message-ID. Raises
        ``smtplib.SMTPRecipientsRefused`` if the server refuses any of them."""
        message = email.message_from_bytes(raw, policy=email.policy.default)
        fields = [str(value) for name in ("To", "Cc") for value in message.get_all(name, [])]
        recipients = [address for _, address in email.utils.getaddresses(fields)]
        data = raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        with smtplib.SMTP(self.host, self.smtp_port, local_hostname="localhost", timeout=self.timeout) as smtp:
            refused = smtp.sendmail(self.address, recipients, data)
        if refused:
            raise smtplib.SMTPRecipientsRefused(refused)
        message_id = str(message.get("Message-ID", "")).strip()
        self.sent.append((message_id, raw))
        return message_id


def _bracketed(message_id: str) -> str:
    return f"<{message_id.strip().strip('<>')}>"


def _ok(answer: tuple[str, list[Any]]) -> list[Any]:
    kind, data = answer
    if kind != "OK":
        raise imaplib.IMAP4.error(f"IMAP answered {kind}: {data!r}")
    return data
