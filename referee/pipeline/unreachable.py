"""The key of the organizer's mail about an unreachable address (the unreachable rule of
:mod:`referee.pipeline.bounce_book`, which writes that mail once per player and address):
here, apart from the bounce book, so that ``referee status``, which asks whether the mail
was written, imports neither the mail parser nor SQLAlchemy."""

from __future__ import annotations

__all__ = ["unreachable_key"]


def unreachable_key(player_id: int, address: str) -> str:
    """The outbox dedupe key of the organizer's mail about this player's address."""
    return f"unreachable:{player_id}:{address}"
