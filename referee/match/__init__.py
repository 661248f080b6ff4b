"""Matches: the book (start, apply, close; events, states, the season ledger) and the notices
(who is told what)."""
