from __future__ import annotations

import errno
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from referee.mail import maildir
from referee.mail.maildir import InboxItem, MaildirInbox, MaildirOutbox, deliver_to_maildir
from tests.composed import referee_mail

T0 = datetime(2024, 3, 12, 10, 0, tzinfo=timezone.utc)


def files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# --------------------------------------------------------------------------- inbox


def test_inbox_creates_maildir(tmp_path: Path) -> None:
    MaildirInbox(tmp_path / "inbox")
    assert files(tmp_path / "inbox") == ["cur", "new", "tmp"]


def test_pending_sorted_by_delivery_time_then_name(tmp_path: Path) -> None:
    inbox = MaildirInbox(tmp_path)
    late = deliver_to_maildir(tmp_path, b"late", T0 + timedelta(minutes=5))
    early = deliver_to_maildir(tmp_path, b"early", T0)
    same_a = deliver_to_maildir(tmp_path, b"same-a", T0 + timedelta(minutes=1))
    same_b = deliver_to_maildir(tmp_path, b"same-b", T0 + timedelta(minutes=1))
    pending = inbox.pending()
    expected_same = sorted([same_a, same_b], key=lambda p: p.name)
    assert [item.path for item in pending] == [early, *expected_same, late]
    assert [inbox.read(item) for item in pending][0] == b"early"
    assert pending[0].delivered_at == T0
    assert pending[0].delivered_at.tzinfo is not None
    assert pending[-1].delivered_at == T0 + timedelta(minutes=5)
    assert pending[0].key == early.name


def test_pending_skips_dotfiles_and_directories(tmp_path: Path) -> None:
    inbox = MaildirInbox(tmp_path)
    (tmp_path / "new" / ".hidden").write_bytes(b"x")
    (tmp_path / "new" / "subdir").mkdir()
    (tmp_path / "tmp" / "in-progress").write_bytes(b"partial")
    delivered = deliver_to_maildir(tmp_path, b"mail", T0)
    assert [item.path for item in inbox.pending()] == [delivered]


def test_mark_processed_moves_to_cur_with_seen_flag(tmp_path: Path) -> None:
    inbox = MaildirInbox(tmp_path)
    deliver_to_maildir(tmp_path, b"mail", T0)
    (item,) = inbox.pending()
    inbox.mark_processed(item)
    target = tmp_path / "cur" / f"{item.key}:2,S"
    assert files(tmp_path / "cur") == [target.name]
    assert target.read_bytes() == b"mail"
    assert inbox.pending() == []
    assert files(tmp_path / "new") == []


def test_mark_processed_is_idempotent(tmp_path: Path) -> None:
    inbox = MaildirInbox(tmp_path)
    deliver_to_maildir(tmp_path, b"mail", T0)
    (item,) = inbox.pending()
    inbox.mark_processed(item)
    inbox.mark_processed(item)
    first = tmp_path / "cur" / f"{item.key}:2,S"
    assert files(tmp_path / "cur") == [first.name]
    # A reader changed the flags meanwhile: still found, nothing raised.
    flagged = first.with_name(f"{item.key}:2,RS")
    first.rename(flagged)
    inbox.mark_processed(item)
    assert files(tmp_path / "cur") == [flagged.name]


def test_mark_processed_of_a_vanished_message_raises(tmp_path: Path) -> None:
    inbox = MaildirInbox(tmp_path)
    ghost = InboxItem(key="nope", path=tmp_path / "new" / "nope", delivered_at=T0)
    with pytest.raises(FileNotFoundError):
        inbox.mark_processed(ghost)


def test_deliver_to_maildir_defaults_to_now(tmp_path: Path) -> None:
    before = datetime.now(timezone.utc) - timedelta(seconds=2)
    deliver_to_maildir(tmp_path, b"mail")
    (item,) = MaildirInbox(tmp_path).pending()
    assert item.delivered_at >= before


def test_deliver_to_maildir_rejects_naive_time(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        deliver_to_maildir(tmp_path, b"mail", datetime(2024, 3, 12))
    assert not (tmp_path / "new").exists() or files(tmp_path / "new") == []


def test_unique_names_follow_maildir_convention(tmp_path: Path) -> None:
    names = {deliver_to_maildir(tmp_path, b"x").name for _ in range(50)}
    assert len(names) == 50
    for name in names:
        seconds, middle, host = name.split(".", 2)
        assert seconds.isdigit() and middle.startswith("M") and f"P{os.getpid()}Q" in middle
        assert "/" not in host and ":" not in host


# --------------------------------------------------------------------------- outbox


def test_outbox_delivers_into_new(tmp_path: Path) -> None:
    outbox = MaildirOutbox(tmp_path / "out")
    path = outbox.deliver("Alice <alice@example.org>", b"hello", key="m-17/r3/seat-1/form")
    assert path.parent == tmp_path / "out" / "new"
    assert path.read_bytes() == b"hello"
    assert files(tmp_path / "out" / "tmp") == []
    assert path.name.startswith("m-17-r3-seat-1-form.")


def test_outbox_is_idempotent_per_key(tmp_path: Path) -> None:
    outbox = MaildirOutbox(tmp_path)
    first = outbox.deliver("alice@example.org", b"v1", key="k1")
    again = outbox.deliver("alice@example.org", b"v2", key="k1")
    other = outbox.deliver("alice@example.org", b"v1", key="k2")
    assert again == first and first.read_bytes() == b"v1"
    assert other != first
    assert len(files(tmp_path / "new")) == 2


def test_outbox_idempotent_after_reader_moved_it_to_cur(tmp_path: Path) -> None:
    outbox = MaildirOutbox(tmp_path)
    first = outbox.deliver("alice@example.org", b"v1", key="k1")
    seen = tmp_path / "cur" / f"{first.name}:2,S"
    first.rename(seen)
    assert outbox.deliver("alice@example.org", b"v1", key="k1") == seen
    assert files(tmp_path / "new") == []


def test_outbox_keys_that_look_alike_stay_distinct(tmp_path: Path) -> None:
    outbox = MaildirOutbox(tmp_path)
    a = outbox.deliver("x@example.org", b"a", key="round 3")
    b = outbox.deliver("x@example.org", b"b", key="round/3")
    assert a != b and a.read_bytes() == b"a" and b.read_bytes() == b"b"


def test_outbox_per_address_layout(tmp_path: Path) -> None:
    outbox = MaildirOutbox(tmp_path, per_address=True)
    alice = outbox.deliver("Alice Martin <Alice.Martin@Example.org>", b"a", key="k")
    bob = outbox.deliver("bob+pbem@example.org", b"b", key="k")
    assert alice.parent == tmp_path / "alice.martin@example.org" / "new"
    assert bob.parent == tmp_path / "bob+pbem@example.org" / "new"
    for box in ("alice.martin@example.org", "bob+pbem@example.org"):
        assert files(tmp_path / box) == ["cur", "new", "tmp"]
    # Same key, other recipient: a separate message, and idempotent per Maildir.
    assert outbox.deliver("alice.martin@example.org", b"a", key="k") == alice


@pytest.mark.parametrize("recipient", ["../../etc/passwd", "..", "a/b@c", ".hidden@example.org"])
def test_outbox_per_address_names_are_filesystem_safe(tmp_path: Path, recipient: str) -> None:
    outbox = MaildirOutbox(tmp_path / "out", per_address=True)
    try:
        path = outbox.deliver(recipient, b"x", key="k")
    except ValueError:
        return
    box = path.parent.parent
    assert box.parent == tmp_path / "out"
    assert not box.name.startswith(".")


def test_outbox_never_shows_a_partial_file_in_new(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outbox = MaildirOutbox(tmp_path)
    seen_in_new_during_write: list[list[str]] = []
    real_fsync = os.fsync

    def spying_fsync(fd: int) -> None:
        seen_in_new_during_write.append(files(tmp_path / "new"))
        real_fsync(fd)

    monkeypatch.setattr(maildir.os, "fsync", spying_fsync)
    path = outbox.deliver("a@example.org", b"x" * 100_000, key="big")
    assert seen_in_new_during_write[0] == []  # first fsync is the data file, still in tmp/
    assert path.read_bytes() == b"x" * 100_000


def test_outbox_failed_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outbox = MaildirOutbox(tmp_path)

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "disk on fire")

    monkeypatch.setattr(maildir.os, "fsync", failing_fsync)
    with pytest.raises(OSError):
        outbox.deliver("a@example.org", b"x", key="k")
    assert files(tmp_path / "tmp") == [] and files(tmp_path / "new") == []


def test_outbox_without_hard_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: object, dst: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(maildir.os, "link", no_links)
    outbox = MaildirOutbox(tmp_path)
    path = outbox.deliver("a@example.org", b"x", key="k")
    assert path.read_bytes() == b"x"
    assert files(tmp_path / "tmp") == []
    assert outbox.deliver("a@example.org", b"y", key="k") == path


def test_outbox_output_is_readable_by_an_inbox(tmp_path: Path) -> None:
    outbox = MaildirOutbox(tmp_path)
    outbox.deliver("a@example.org", b"one", key="k1")
    outbox.deliver("a@example.org", b"two", key="k2")
    inbox = MaildirInbox(tmp_path)
    assert sorted(inbox.read(item) for item in inbox.pending()) == [b"one", b"two"]


def test_batched_deliveries_are_durable_after_sync(tmp_path: Path) -> None:
    outbox = MaildirOutbox(tmp_path / "out", per_address=True)
    paths = [
        outbox.deliver(f"p{i}@example.test", b"Subject: x\r\n\r\nhi\r\n", f"k{i}", durable=False) for i in range(3)
    ]
    assert all(p.read_bytes().endswith(b"hi\r\n") for p in paths)
    outbox.sync()
    assert outbox._unsynced == []
    # idempotent per key after a reader marked it seen
    seen = paths[0].parent.parent / "cur" / (paths[0].name + ":2,S")
    paths[0].rename(seen)
    assert outbox.deliver("p0@example.test", b"other", "k0") == seen


def test_the_outbox_writes_local_line_ends_that_a_mail_reader_parses() -> None:
    """Issue 20: a Maildir file ends its lines in LF (s-nail reported "headers and body not
    separated" on CRLF files); the mail as composed (CRLF) is otherwise unchanged."""
    import asyncio
    import email
    import email.policy
    import tempfile

    from referee.mail.maildir import MaildirSender
    from referee.mail.transport import OutboundMail

    data = referee_mail("Dear Bob,\n\nYour move.\n")
    assert b"\r\n" in data
    with tempfile.TemporaryDirectory() as tmp:
        outbox = maildir.MaildirOutbox(Path(tmp), per_address=True)
        mail = OutboundMail(key="k1", sender="bounce@example.test", recipients=("bob@example.test",), data=data)
        asyncio.run(MaildirSender(outbox).send(mail))
        [written] = list((Path(tmp) / "bob@example.test" / "new").iterdir())
        raw = written.read_bytes()
    assert b"\r" not in raw and raw.endswith(data.replace(b"\r\n", b"\n"))
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg["Subject"] == "Round 1" and "Your move." in msg.get_content()
