"""The hash chain of a match's event log: tamper evidence for the archive.

Every event (a start, an accepted or penalised move, a deadline's close) carries two
hashes, written with it in the same transaction:

* ``digest`` = SHA-256 of the event's canonical body (:func:`event_body`: the match key,
  seq, kind, step, player, instant and payload as JSON with sorted keys and no spaces);
* ``hash`` = SHA-256 of the previous event's ``hash`` followed by this ``digest`` (64 hex
  digits each; the first event's previous hash is :data:`GENESIS`, 64 zeros).

Changing, removing or reordering any event changes every hash after it, so the last hash
of a match (shown on its archive page and in its mails' archive) vouches for the whole
log. A move's payload carries a nonce (a keyed hash the players cannot compute), so the
digest of a sealed move published before its reveal says nothing about the move.

The archive shows each event's digest and hash as soon as its step has closed, and its
payload once the match has finished (:func:`public_events`); ``referee archive verify``
recomputes the chain from the database and from a built site (:func:`first_break`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

__all__ = [
    "GENESIS",
    "Break",
    "canonical",
    "event_body",
    "event_digest",
    "first_break",
    "link",
    "move_nonce",
    "public_events",
    "stamp",
]

GENESIS = "0" * 64


def instant(at: datetime) -> str:
    """An instant as the chain writes it: UTC, microseconds, ``Z``."""
    return at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical(value: Any) -> str:
    """Plain data as the chain and the seals hash it: JSON, keys sorted, no spaces, ASCII
    only (so the same text in any terminal or shell)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def event_body(
    match_key: str, seq: int, kind: str, step: str | None, player: str | None, at: datetime | str, payload: Any
) -> bytes:
    """The canonical bytes of one event (what its digest is of)."""
    body = {
        "match": match_key,
        "seq": seq,
        "kind": kind,
        "step": step,
        "player": player,
        "at": at if isinstance(at, str) else instant(at),
        "payload": payload,
    }
    return canonical(body).encode()


def event_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def link(previous: str, digest: str) -> str:
    """The chain hash of an event: SHA-256 of the previous hash and this event's digest."""
    return hashlib.sha256(f"{previous}{digest}".encode()).hexdigest()


def stamp(previous: str, match_key: str, row: Mapping[str, Any]) -> tuple[str, str]:
    """(digest, hash) of an event row about to be written after ``previous``."""
    digest = event_digest(
        event_body(match_key, row["seq"], row["kind"], row["step_key"], row["player"], row["at"], row["payload"])
    )
    return digest, link(previous, digest)


def move_nonce(secret: bytes, match_key: str, seq: int) -> str:
    """The nonce of a move's event: a keyed hash of the match and the event's place, so it is
    the same however often the move is judged (replays and several processes agree) and no
    player can compute it. 32 hex digits (128 bits)."""
    return hmac.new(secret, f"nonce:{match_key}:{seq}".encode(), hashlib.sha256).hexdigest()[:32]


@dataclass(frozen=True)
class Break:
    """The first event where a chain does not hold, and why."""

    seq: int
    reason: str

    def __str__(self) -> str:
        return f"event {self.seq}: {self.reason}"


def first_break(match_key: str, records: Iterable[Mapping[str, Any]], *, start: str = GENESIS) -> Break | None:
    """Recompute a chain: each record has ``seq``, ``digest``, ``hash`` and, when it can be
    checked, the event itself (``kind``, ``step``, ``player``, ``at`` (datetime or the ISO
    text :func:`instant` writes), ``payload``; a ``payload`` of None is a record whose
    content is not shown, whose digest is taken as given). Returns the first record that
    does not hold, or None."""
    previous = start
    expected_seq = 1
    for record in records:
        seq = record["seq"]
        if seq != expected_seq:
            return Break(seq, f"expected event {expected_seq} here (an event is missing or out of order)")
        digest = record["digest"]
        if record.get("payload") is not None:
            body = event_body(
                match_key, seq, record["kind"], record["step"], record["player"], record["at"], record["payload"]
            )
            if event_digest(body) != digest:
                return Break(seq, "its content does not match its digest (the event was changed)")
        if link(previous, digest) != record["hash"]:
            return Break(seq, "its hash does not follow from the previous hash and its digest")
        previous = record["hash"]
        expected_seq += 1
    return None


def public_events(match: Any, events: Sequence[Any]) -> list[dict[str, Any]]:
    """The chain records the archive may show for ``match`` (a Match row) and its events in
    seq order: every event up to the last one of a closed step -- a running match's open
    step may hold sealed moves, whose existence is secret too -- with its digest and hash;
    the payloads once the match has finished (before, a payload may be a sealed move not
    yet revealed)."""
    finished = match.status == "finished"
    still_open = {entry["key"] for entry in (match.open_steps or [])} | {match.step_key}
    shown: list[dict[str, Any]] = []
    for ev in events:
        if not finished and ev.step_key in still_open and ev.kind == "move":
            break
        shown.append(
            {
                "seq": ev.seq,
                "kind": ev.kind,
                "step": ev.step_key,
                "player": ev.player,
                "at": instant(ev.at),
                "digest": ev.digest,
                "hash": ev.hash,
                "payload": ev.payload if finished else None,
            }
        )
    return shown
