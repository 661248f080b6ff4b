"""tests/replies/real_clients.py: each shape is a real run of mutt, neomutt or s-nail that
replies to a mail of the referee's, to its Reply-To address, with the original quoted the
client's way and the player's edit kept.

Without the programs the tests skip, or fail when REFEREE_REQUIRE_CLIENTS or CI is set
(.ci/run installs them).
"""

from __future__ import annotations

import email
import email.policy
import time
from email.message import EmailMessage
from pathlib import Path

import pytest

from ..conftest import unavailable
from .real_clients import CLIENTS, PROGRAMS, available, reply_with

REPLY_TO = "referee+m1.bob.k3x9@example.test"
MESSAGE_ID = "<m1.r3.bob.k3x9@example.test>"
BODY_LINES = [
    "Hello Bob,",
    "",
    "Tomás bet on black last round and lost 20 chips.",
    "Place your bet below the form line, or edit it:",
    "",
    "ROULETTE",
    "red 1 2 3",
    "",
    "-- ",
    "The referee",
]
# the lines of ours checked in the quote (the original's signature is quoted as well, but
# format=flowed makes ">-- " a soft break there; it is not what these tests are about)
CHECKED = BODY_LINES[: BODY_LINES.index("-- ")]

PREFIX = {
    "mutt": "> ",
    "mutt-bar": "| ",
    "mutt-sig-on-top": "> ",
    "mutt-flowed": ">",  # RFC 3676 quoting
    "neomutt": "> ",
    "s-nail": "> ",
    "s-nail-tab": "\t",
}
MUTT_ATTRIBUTION = "On Wed, May 01, 2024 at 12:00:00PM +0000, Referee wrote:"
SNAIL_ATTRIBUTION = "Referee <referee@example.test> wrote:"
# the first lines of each client's draft, as it opened it in $EDITOR
DRAFT_START = {
    "mutt": [MUTT_ATTRIBUTION, "> Hello Bob,", "> "],
    "mutt-bar": [MUTT_ATTRIBUTION, "| Hello Bob,", "| "],
    "mutt-sig-on-top": ["", "-- ", "Bob", MUTT_ATTRIBUTION, "> Hello Bob,"],
    "mutt-flowed": [MUTT_ATTRIBUTION, ">Hello Bob,", ">"],
    "neomutt": [MUTT_ATTRIBUTION, "> Hello Bob,", "> "],
    "s-nail": [SNAIL_ATTRIBUTION, "", "> Hello Bob,", "> "],
    "s-nail-tab": [SNAIL_ATTRIBUTION, "", "\tHello Bob,", "\t"],
}

assert set(PREFIX) == set(DRAFT_START) == set(CLIENTS)


def original(cte: str = "quoted-printable") -> bytes:
    msg = EmailMessage()
    msg["From"] = "Referee <referee@example.test>"
    msg["To"] = "Bob <bob@example.test>"
    msg["Reply-To"] = REPLY_TO
    msg["Subject"] = "Round 3"
    msg["Date"] = "Wed, 01 May 2024 12:00:00 +0000"
    msg["Message-ID"] = MESSAGE_ID
    msg.set_content("\n".join(BODY_LINES) + "\n", cte=cte)
    return msg.as_bytes()


def need(client: str) -> None:
    if not available(client):
        program = PROGRAMS[client]
        unavailable(
            "REFEREE_REQUIRE_CLIENTS",
            f"{program} is required here but is not installed or does not run (apt-get install {program})",
            f"{program} not installed",
        )


def parsed(raw: bytes) -> tuple[EmailMessage, str]:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    return msg, msg.get_body(("plain",)).get_content()


def typed_above(draft: str) -> str:
    """The player types the bet above the quote (with sig_on_top: above the signature too)."""
    return "BET red 5\n\n" + draft


@pytest.mark.parametrize("client", CLIENTS)
def test_reply_above_the_quote(client: str, tmp_path: Path) -> None:
    need(client)
    drafts: list[str] = []

    def edit(draft: str) -> str:
        drafts.append(draft)
        return typed_above(draft)

    raw = reply_with(client, original(), edit, tmp=tmp_path)

    assert len(drafts) == 1
    assert drafts[0].split("\n")[: len(DRAFT_START[client])] == DRAFT_START[client]
    msg, body = parsed(raw)
    assert [a.addr_spec for a in msg["To"].addresses] == [REPLY_TO]
    assert msg["Cc"] is None
    assert msg["From"].addresses[0].addr_spec == "bob@example.test"
    assert msg["From"].addresses[0].display_name == "Bob"
    assert msg["In-Reply-To"] == MESSAGE_ID
    assert MESSAGE_ID in msg["References"]
    assert msg["Subject"] == "Re: Round 3"
    assert msg.get_content_charset() == "utf-8"
    assert (msg.get_param("format") == "flowed") == (client == "mutt-flowed")

    lines = body.split("\n")
    assert lines[0] == "BET red 5"
    assert "Tomás" in body
    prefix = PREFIX[client]
    # the whole form, quoted in order (an empty line as the bare prefix, space and all)
    quoted = [prefix + line for line in CHECKED]
    start = lines.index(quoted[0])
    assert lines[start : start + len(quoted)] == quoted
    if client == "mutt-sig-on-top":
        assert lines[1:5] == ["", "", "-- ", "Bob"]  # the signature sits above the quote


@pytest.mark.parametrize("client", CLIENTS)
def test_an_edit_inside_the_quote_is_kept(client: str, tmp_path: Path) -> None:
    """The player replaces the quoted form line with their own (unquoted) bet."""
    need(client)
    prefix = PREFIX[client]

    def edit(draft: str) -> str:
        assert draft.count(f"\n{prefix}red 1 2 3\n") == 1
        return draft.replace(f"\n{prefix}red 1 2 3\n", "\nred 5\n")

    _, body = parsed(reply_with(client, original(cte="8bit"), edit, tmp=tmp_path))

    lines = body.split("\n")
    at = lines.index("red 5")
    assert lines[at - 1] == prefix + "ROULETTE"
    assert f"{prefix}red 1 2 3" not in lines
    assert f"{prefix}Tomás bet on black last round and lost 20 chips." in lines


@pytest.mark.parametrize("client", CLIENTS)
def test_the_same_reply_every_run_but_date_and_message_id(client: str, tmp_path: Path) -> None:
    need(client)
    runs = []
    for _ in range(2):
        started = time.monotonic()
        raw = reply_with(client, original(), typed_above, tmp=tmp_path)
        runs.append((raw, time.monotonic() - started))
    (first, _), (second, took) = runs
    assert took < 10  # about 0.1 s here; generous for a loaded machine

    def fixed(raw: bytes) -> bytes:
        return b"\n".join(line for line in raw.split(b"\n") if not line.startswith((b"Date: ", b"Message-ID: ")))

    assert fixed(first) == fixed(second)
    assert first != second  # a new Message-ID each run


def test_an_edit_that_fails_stops_the_client(tmp_path: Path) -> None:
    need("mutt")

    def edit(draft: str) -> str:
        raise LookupError("no bet")

    with pytest.raises(LookupError):
        reply_with("mutt", original(), edit, tmp=tmp_path)
    assert not list(tmp_path.glob("*/sent.eml"))


def test_unknown_client(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown client"):
        reply_with("pine", original(), typed_above, tmp=tmp_path)
