"""The loopback mail stack (Dovecot IMAP+LMTP, Postfix SMTP), started once per test session
(:mod:`referee.mailstack`: every config file, log, queue and mailbox under one directory,
127.0.0.1 only, mail only to @example.test, free ports so that two test runs at once do not
collide). Without root or without the Debian packages (deploy/mailstack/install-mailstack.sh)
the tests skip, or fail when REFEREE_REQUIRE_MAILSTACK or CI is set.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NoReturn

import pytest

from referee.mailstack import MailStack, MailStackUnavailable, StackControl

from ..conftest import mark_users, unavailable

__all__ = ["MailStack", "StackControl"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the stack carries the marker (select or deselect with -m mailstack)."""
    mark_users(items, "mailstack", {"mailstack", "own_mailstack"})


def _unavailable(reason: str) -> NoReturn:
    unavailable(
        "REFEREE_REQUIRE_MAILSTACK",
        f"the loopback mail stack is required here but did not start:\n{reason}",
        f"loopback mail stack not available: {reason}",
    )


def _started(control: StackControl) -> MailStack:
    try:
        return control.start()
    except MailStackUnavailable as exc:
        control.remove()
        _unavailable(str(exc))
        raise


@pytest.fixture(scope="session")
def mailstack() -> Iterator[MailStack]:
    """The stack all the integration tests share (use distinct Message-IDs and match ids)."""
    control = StackControl()
    try:
        yield _started(control)
    finally:
        # Runs when a test failed too, and after a failed start (the script stops by pid file only
        # what it started; with nothing started it just says "no pid file").
        control.remove()


@pytest.fixture
def own_mailstack() -> Iterator[StackControl]:
    """A stack of the test's own, to stop and start again (outages), started; removed after."""
    control = StackControl()
    try:
        _started(control)
        yield control
    finally:
        control.remove()
