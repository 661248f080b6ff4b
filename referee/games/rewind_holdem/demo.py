"""Rewind Hold'em's demo (``referee demo --game rewind-holdem``): a whole duel by mail
between alice and bob, bob the DMO, played as Indian Poker's demo plays its duel
(:mod:`referee.games.indian_poker.demo`): the same scripted player answers each turn's mail,
and adds REWIND now and then when the mail offers it; one command asks for more than the
rules allow (refused by mail, then corrected) and one turn is missed (its default applies).
"""

from __future__ import annotations

from referee.games.indian_poker.demo import DEMO, DuelPlayer, DuelScript

__all__ = ["DEMO", "DuelPlayer", "DuelScript"]
