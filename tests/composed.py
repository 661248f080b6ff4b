"""A mail of the referee's as :func:`referee.mail.compose.compose` writes it, with the
arguments a test does not care about filled in: for tests of what is done with such a mail
(written to a Maildir, an mbox, encoded), not of composing it."""

from __future__ import annotations

from datetime import datetime, timezone

from referee.mail.compose import compose

__all__ = ["referee_mail"]


def referee_mail(
    text: str,
    *,
    domain: str = "example.test",
    to_addr: str = "bob@example.test",
    to_name: str = "Bob",
    subject: str = "Round 1",
    message_id: str | None = None,
    date: datetime = datetime(2026, 12, 1, 18, 0, tzinfo=timezone.utc),
) -> bytes:
    """Raw bytes of a mail from ``Referee <referee@domain>`` with ``text`` as its body."""
    return compose(
        from_addr=f"referee@{domain}",
        from_name="Referee",
        to_addr=to_addr,
        to_name=to_name,
        reply_to=None,
        subject=subject,
        text=text,
        message_id=message_id or f"m1@{domain}",
        date=date,
        loop_value=domain,
    )
