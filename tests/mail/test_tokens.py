from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.mail.tokens import (
    make_token,
    reply_address,
    split_token,
    token_from_addresses,
    verify_token,
)

SECRET = b"0123456789abcdef0123456789abcdef"
MATCH = "m-17"
PLAYER = "alice"


def test_shape_lowercase_letters_and_digits() -> None:
    token = make_token(SECRET, 1234, MATCH, PLAYER)
    assert re.fullmatch(r"[0-9a-z]+x[a-z2-7]{13}", token)
    assert token.startswith("ya")  # 1234 in base 36
    assert token == make_token(SECRET, 1234, MATCH, PLAYER)


def test_genuine_token_verifies() -> None:
    token = make_token(SECRET, 7, MATCH, PLAYER)
    assert verify_token(SECRET, token, MATCH, PLAYER)


def test_uppercase_survives() -> None:
    token = make_token(SECRET, 7, MATCH, PLAYER)
    assert verify_token(SECRET, token.upper(), MATCH, PLAYER)
    assert split_token(token.upper()) == split_token(token)


def test_tampered_signature_fails() -> None:
    token = make_token(SECRET, 7, MATCH, PLAYER)
    last = "a" if token[-1] != "a" else "b"
    assert not verify_token(SECRET, token[:-1] + last, MATCH, PLAYER)


def test_other_seat_fails() -> None:
    token = make_token(SECRET, 7, MATCH, PLAYER)
    forged = "8" + token[1:]  # same signature, seat 8
    assert split_token(forged) is not None
    assert not verify_token(SECRET, forged, MATCH, PLAYER)


def test_other_match_or_player_fails() -> None:
    token = make_token(SECRET, 7, MATCH, PLAYER)
    assert not verify_token(SECRET, token, "m-18", PLAYER)
    assert not verify_token(SECRET, token, MATCH, "bob")


def test_fields_are_separated_unambiguously() -> None:
    # "m-1" + "7" must not sign the same as "m-17" + "".
    assert make_token(SECRET, 1, "m-1", "7alice") != make_token(SECRET, 1, "m-17", "alice")


def test_wrong_secret_fails() -> None:
    token = make_token(SECRET, 7, MATCH, PLAYER)
    assert not verify_token(b"another secret", token, MATCH, PLAYER)


def test_seat_ids_containing_x_in_base36_split_correctly() -> None:
    for seat in (33, 33 * 36 + 33, 36**3 - 1, 0):
        token = make_token(SECRET, seat, MATCH, PLAYER)
        assert split_token(token) == (seat, token[-13:])
        assert verify_token(SECRET, token, MATCH, PLAYER)


@pytest.mark.parametrize(
    "token",
    [
        "", "x", "abc", "7", "7xabc", "7yaaaaaaaaaaaaa", "xaaaaaaaaaaaaa", "07xaaaaaaaaaaaaa",
        "7xaaaaaaaaaaaa1", "7xaaaaaaaaaaaa8", "7-xaaaaaaaaaaaaa", "7\nxaaaaaaaaaaaaa",
        "éxaaaaaaaaaaaaa", "7xaaaaaaaaaaaaaa", "1" * 20 + "xaaaaaaaaaaaaa",
    ],
)
def test_malformed_tokens(token: str) -> None:
    assert split_token(token) is None
    assert not verify_token(SECRET, token, MATCH, PLAYER)


def test_negative_seat_is_rejected() -> None:
    with pytest.raises(ValueError):
        make_token(SECRET, -1, MATCH, PLAYER)


@given(st.integers(min_value=0, max_value=10**9))
def test_round_trip_and_local_part_fits(seat: int) -> None:
    token = make_token(SECRET, seat, MATCH, PLAYER)
    assert split_token(token) == (seat, token[-13:])
    address = reply_address("referee", "pbem.example.org", token)
    local = address.rsplit("@", 1)[0]
    assert len(local) <= 64


def test_local_part_for_largest_seat() -> None:
    token = make_token(SECRET, 10**9, MATCH, PLAYER)
    assert len(token) == 6 + 1 + 13
    assert reply_address("referee", "pbem.example.org", token) == (
        f"referee+{token}@pbem.example.org"
    )


def test_reply_address_rejects_overlong_local_part() -> None:
    with pytest.raises(ValueError):
        reply_address("r" * 50, "pbem.example.org", make_token(SECRET, 10**9, MATCH, PLAYER))


def test_token_from_addresses() -> None:
    token = make_token(SECRET, 7, MATCH, PLAYER)
    other = make_token(SECRET, 8, MATCH, "bob")
    addrs = [
        "someone@else.example",
        "referee@pbem.example.org",
        "referee+notatoken@pbem.example.org",
        f"referee+{token}@other.example",
        f"REFEREE+{token.upper()}@PBEM.Example.ORG",
        f"referee+{other}@pbem.example.org",
    ]
    assert token_from_addresses(addrs, "referee", "pbem.example.org") == token
    assert token_from_addresses(addrs[:4], "referee", "pbem.example.org") is None
    assert token_from_addresses([], "referee", "pbem.example.org") is None


def test_token_from_addresses_needs_exact_local_part() -> None:
    token = make_token(SECRET, 7, MATCH, PLAYER)
    assert token_from_addresses([f"xreferee+{token}@d.example"], "referee", "d.example") is None
    assert token_from_addresses([f"<referee+{token}@d.example>"], "referee", "d.example") == token
