"""The scripted player on real mail (``referee.mail.client.ImapClient``), which the demo over
real mail and the integration tests wait with: one login for all its reads, a wait that reads
the header of new messages only, mail followed as it moves between folders, and a server
restart survived."""

from __future__ import annotations

import imaplib
import smtplib
import uuid
from collections import Counter

import pytest

from referee.mail.client import ImapClient

from .conftest import MailStack, StackControl


def _client(stack: MailStack, user: str) -> ImapClient:
    return ImapClient(
        stack.address(user),
        user.title(),
        host=stack.host,
        imap_port=stack.imap_port,
        smtp_port=stack.smtp_port,
        password=stack.password,
    )


def _mail(stack: MailStack, to: str, subject: str) -> tuple[str, bytes]:
    message_id = f"<{uuid.uuid4().hex}@client-test.{stack.domain}>"
    raw = (
        f"From: Bob <{stack.address('bob')}>\r\nTo: {to}\r\nSubject: {subject}\r\n"
        f"Message-ID: {message_id}\r\n\r\nhello\r\n"
    ).encode()
    return message_id, raw


def _send(stack: MailStack, to: str, raw: bytes) -> None:
    with smtplib.SMTP(stack.host, stack.smtp_port, local_hostname="localhost", timeout=60) as smtp:
        assert smtp.sendmail(stack.address("bob"), [to], raw) == {}


def _logins(monkeypatch: pytest.MonkeyPatch) -> Counter:
    made: Counter = Counter()
    real = imaplib.IMAP4.login

    def login(self, user, password):
        made[user] += 1
        return real(self, user, password)

    monkeypatch.setattr(imaplib.IMAP4, "login", login)
    return made


def test_waits_read_each_header_once_on_one_connection(mailstack: MailStack, monkeypatch) -> None:
    logins = _logins(monkeypatch)
    alice = _client(mailstack, "alice")
    to = mailstack.address("alice")
    try:
        first, raw = _mail(mailstack, to, "first")
        _send(mailstack, to, raw)
        _send(mailstack, to, raw)  # the same mail twice: a wait for it twice needs both
        alice.wait_for([first, first], timeout=60)
        second, raw = _mail(mailstack, to, "second")
        _send(mailstack, to, raw)
        alice.wait_for([second.strip("<>")], timeout=60)  # brackets or none
        fetched = []
        real_uid = imaplib.IMAP4.uid
        monkeypatch.setattr(imaplib.IMAP4, "uid", lambda self, *args: fetched.append(args) or real_uid(self, *args))
        alice.wait_for([first, second], timeout=60)  # all there: no header fetched again
        assert not [args for args in fetched if args[0] == "FETCH"]
        with pytest.raises(TimeoutError, match="did not arrive"):
            alice.wait_for([first, first, first], timeout=0.2)  # only two came
        subjects = [mail.subject for mail in alice.all()]
        assert subjects.count("first") == 2 and subjects.count("second") == 1
        assert logins == {to: 1}  # one login for every read above
    finally:
        alice.close()


def test_a_wait_follows_mail_moved_to_another_folder(mailstack: MailStack) -> None:
    referee = _client(mailstack, "referee")
    to = mailstack.address("referee")
    folder = f"client-test-{uuid.uuid4().hex[:8]}"
    mover = imaplib.IMAP4(mailstack.host, mailstack.imap_port, timeout=60)
    try:
        mover.login(to, mailstack.password)
        assert mover.create(folder)[0] == "OK"
        message_id, raw = _mail(mailstack, to, "moved")
        _send(mailstack, to, raw)
        referee.wait_for([message_id], folders=("INBOX", folder), timeout=60)
        assert mover.select("INBOX")[0] == "OK"
        status, found = mover.uid("SEARCH", None, f'HEADER Message-ID "{message_id}"')
        assert status == "OK" and found[0].split()
        assert mover.uid("MOVE", found[0].split()[0], folder)[0] == "OK"
        referee.wait_for([message_id], folders=("INBOX", folder), timeout=60)  # in the other folder now
        with pytest.raises(TimeoutError):
            referee.wait_for([message_id], folders=("INBOX",), timeout=0.2)  # and no longer in INBOX
    finally:
        referee.close()
        mover.logout()


def test_the_client_logs_in_again_after_the_server_restarts(own_mailstack: StackControl) -> None:
    stack = own_mailstack.stack
    assert stack is not None
    alice = _client(stack, "alice")
    to = stack.address("alice")
    try:
        before, raw = _mail(stack, to, "before")
        _send(stack, to, raw)
        alice.wait_for([before], timeout=60)
        own_mailstack.restart_dovecot()  # the client's connection is cut
        after, raw = _mail(stack, to, "after")
        _send(stack, to, raw)
        alice.wait_for([before, after], timeout=120)
        assert [mail.subject for mail in alice.all()] == ["before", "after"]
    finally:
        alice.close()
