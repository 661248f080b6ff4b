"""A minimal scripted mail user agent on Maildirs, for the demo and the tests.

It reads the mail the referee delivered to one address (the per-address outbox
Maildir) and answers like a real client would: ``Re:`` subject, In-Reply-To and
References, the typed text on top and the original quoted below with an attribution
line, delivered into the referee's inbox with a chosen delivery time.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from referee.mail.maildir import deliver_to_maildir


@dataclass
class Received:
    path: Path
    message: EmailMessage

    @property
    def subject(self) -> str:
        return str(self.message.get("Subject", ""))

    @property
    def message_id(self) -> str:
        return str(self.message.get("Message-ID", "")).strip()

    @property
    def reply_address(self) -> str:
        return str(self.message.get("Reply-To") or self.message.get("From"))

    @property
    def text(self) -> str:
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

    def all(self) -> list[Received]:
        found = []
        for sub in ("new", "cur"):
            folder = self.mailbox / sub
            if folder.is_dir():
                found.extend(p for p in folder.iterdir() if not p.name.startswith("."))
        found.sort(key=lambda p: (p.stat().st_mtime, p.name))
        return [Received(p, email.message_from_bytes(p.read_bytes(), policy=email.policy.default)) for p in found]

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
            refs = str(original.message.get("References", "")).split()
            msg["References"] = " ".join([*refs, original.message_id])
        for name, value in (extra_headers or {}).items():
            msg[name] = value
        body = text.rstrip() + "\n"
        if quote:
            sender = email.utils.parseaddr(str(original.message.get("From")))[0] or "Referee"
            when = original.message.get("Date", "")
            body += f"\nOn {when}, {sender} wrote:\n"
            body += "".join(f"> {line}\n" if line else ">\n" for line in original.text.splitlines())
        msg.set_content(body)
        return bytes(msg)
