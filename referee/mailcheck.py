"""``referee check-mail``: does the configured mail set-up work? One line per check.

Inbound: the Maildir's folders, or the IMAP login, folder and processed folder. Outbound:
the outbox Maildir, or the SMTP connection and login; with ``--send-to``, a test mail sent
through the configured transport (to the organizer, say), and the server's answer."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from referee.config import ServiceConfig
from referee.mail.compose import compose, make_message_id
from referee.mail.transport import OutboundMail, TransportError

__all__ = ["check_mail"]


async def check_mail(config: ServiceConfig, send_to: str | None = None) -> list[tuple[bool, str]]:
    """``(ok, what)`` per check, in order; never raises for what the servers answer."""
    mail = config.mail
    results: list[tuple[bool, str]] = []
    if mail.transport == "imap":
        from referee.mail.imap import ImapSource

        assert mail.imap is not None
        if mail.imap.password_missing:  # no login can be tried: what to set
            results.append((False, f"IMAP {mail.imap.host}:{mail.imap.port}: {mail.imap.password_missing}"))
        else:
            source = ImapSource(mail.imap)
            try:
                results.append((True, await source.check()))
            except TransportError as exc:
                results.append((False, f"IMAP {mail.imap.host}:{mail.imap.port}: {exc}"))
            finally:
                await source.close()
    else:
        results.append(_folders("inbox", mail.inbox))
    sender = None
    if mail.outbound == "smtp":
        from referee.mail.smtp import SmtpSender

        assert mail.smtp is not None
        sender = SmtpSender(mail.smtp)
        try:
            if mail.smtp.password_missing:  # no login can be tried: what to set
                raise TransportError(mail.smtp.password_missing)
            results.append((True, await sender.check()))
        except TransportError as exc:  # said in words already (a TLS certificate not accepted, ...)
            results.append((False, f"SMTP {mail.smtp.host}:{mail.smtp.port}: {exc}"))
            sender = None
        except Exception as exc:  # whatever the connection says, it is the answer to give
            results.append((False, f"SMTP {mail.smtp.host}:{mail.smtp.port}: {type(exc).__name__}: {exc}"))
            sender = None
    else:
        results.append(_folders("outbox", mail.outbox, maildir=not mail.per_address))
    if send_to:
        results.append(await _send_test(config, send_to, sender))
    if sender is not None:
        await sender.close()
    return results


def _folders(what: str, path: Path | None, *, maildir: bool = True) -> tuple[bool, str]:
    if path is None:
        return False, f"{what}: no folder configured"
    folders = [path / sub for sub in ("new", "cur", "tmp")] if maildir else [path]
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        return False, f"{what} Maildir {path}: missing {', '.join(missing)} (`referee init` makes them)"
    unwritable = [str(f) for f in folders if not os.access(f, os.W_OK | os.X_OK)]
    if unwritable:
        return False, f"{what} Maildir {path}: not writable by this user: {', '.join(unwritable)}"
    return True, f"{what} Maildir {path}: ready"


async def _send_test(config: ServiceConfig, to: str, sender) -> tuple[bool, str]:
    now = datetime.now(timezone.utc)
    key = f"check-mail:{now:%Y%m%dT%H%M%S}:{to}"
    data = compose(
        from_addr=config.mail.address,
        from_name=config.mail.name,
        to_addr=to,
        to_name="",
        reply_to=None,
        subject="referee check-mail: a test mail",
        text="This is a test mail from `referee check-mail`: the referee's outgoing mail works.\n",
        message_id=make_message_id(key, config.mail.domain),
        date=now,
        loop_value=config.mail.domain,
    )
    mail = OutboundMail(key, config.mail.address, (to,), data)
    signed = ""
    if config.dkim is not None:  # signed as the outbox signs: the receiver's verdict checks the DNS record too
        from referee.mail.dkim import DkimSigner

        mail = DkimSigner.from_settings(config.dkim).sign_mail(mail)
        signed = f" (DKIM-signed: d={config.dkim.domain}, s={config.dkim.selector})"
    if sender is None:
        if config.mail.outbound == "smtp":
            return False, f"test mail to {to}: not sent (SMTP is not reachable)"
        from referee.mail.maildir import MaildirOutbox, MaildirSender

        assert config.mail.outbox is not None
        sender = MaildirSender(MaildirOutbox(config.mail.outbox, per_address=config.mail.per_address))
    result = await sender.send(mail)
    await sender.sync()
    if result.outcome == "sent":
        reply = result.recipients[to][1]
        return True, f"test mail to {to}{signed}: {'accepted: ' + reply if reply else 'written to the outbox'}"
    return False, f"test mail to {to}: {result.outcome} failure: {result.detail}"
