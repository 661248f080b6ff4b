"""Seals: commitments to sealed moves, so a player can check the referee kept their move.

A move in a simultaneous step (a roulette's winning colour, a bet) stays secret until the
step closes. Its receipt carries a *commitment*: the SHA-256 of one line of text,

    <match> <step> <player> <move> <nonce>

where ``<move>`` is the move as the referee recorded it (JSON, keys sorted, no spaces) and
``<nonce>`` the 32 hex digits kept in the move's event (:func:`referee.archive.chain.move_nonce`:
a keyed hash no player can compute, so the commitment says nothing about the move). The
mail that closes the step gives each player the lines of their own sealed moves, nonce
included, and the command that checks one:

    printf '%s' '<line>' | sha256sum

prints the commitment of the receipt if, and only if, the line -- the move as revealed -- is
what was sealed. After the match the archive shows every event's payload, nonces
included, so anyone holding a receipt can check it.
"""

from __future__ import annotations

import hashlib
import shlex
from typing import Any

from referee.archive.chain import canonical

__all__ = ["move_text", "seal", "sealed_line"]


def move_text(move: dict[str, Any]) -> str:
    """A move as the seal line writes it: JSON with sorted keys and no spaces."""
    return canonical(move)


def sealed_line(match_key: str, step: str, player: str, move: dict[str, Any], nonce: str) -> str:
    return f"{match_key} {step} {player} {move_text(move)} {nonce}"


def seal(match_key: str, step: str, player: str, move: dict[str, Any], nonce: str, seq: int) -> dict[str, Any]:
    """The seal of one recorded move: what the receipt shows (``commitment``) and what the
    reveal gives (``line``, ``check``: the shell command that prints the commitment)."""
    line = sealed_line(match_key, step, player, move, nonce)
    return {
        "seq": seq,
        "step": step,
        "player": player,
        "move": move_text(move),
        "nonce": nonce,
        "line": line,
        "commitment": hashlib.sha256(line.encode()).hexdigest(),
        "check": f"printf '%s' {shlex.quote(line)} | sha256sum",
    }
