"""Live season balances within one unit of work.

A player's chips are one balance per season, shared by all their matches, and every
settlement is judged against it as it stands at that moment (RULINGS.md). The ledger is
the truth: a balance is what came in minus what went out, in one currency: the season's
chips by default (rows of other currencies, a duel's own stacks or a result's awards, never
count toward it), or another season currency a game reads (``GameType.reads``, e.g.
garnets). Inside a batch, whose writes go to the database only at commit, :class:`Balances`
keeps the balances of the batch's players in memory: loaded for all of them in two grouped
queries, then moved by every ledger entry the batch adds (:meth:`post`). A balance it was
not asked to preload is read from the database after flushing what the batch has added;
the balances a batch only :meth:`expect` are read together when the first of them is needed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from referee.games.base import MATCH_CHIPS, SEASON_CHIPS
from referee.store.models import LedgerEntry

__all__ = ["Balances", "balances_of", "season_balances"]


class Balances:
    def __init__(self, session: Session):
        self.session = session
        self._known: dict[tuple[int, str, str], int] = {}
        self._unflushed = False  # entries added since the last flush
        self._expected: set[tuple[int, str]] = set()  # to read with the first balance asked for

    def expect(self, pairs: Iterable[tuple[int, str]]) -> None:
        """These balances (in the season's chips) will likely be asked for: read them all at
        once with the first one that is (a batch of mails may ask for none: then nothing is read)."""
        self._expected.update(pairs)

    def preload(self, pairs: Iterable[tuple[int, str]], currency: str = SEASON_CHIPS) -> None:
        """Read the balances of these (season, account) pairs, in two queries per season."""
        by_season: dict[int, set[str]] = {}
        for season_id, account in pairs:
            if (season_id, account, currency) not in self._known:
                by_season.setdefault(season_id, set()).add(account)
        if by_season and self._unflushed:
            self.session.flush()
            self._unflushed = False
        for season_id, accounts in by_season.items():
            found = balances_of(self.session, season_id, accounts, currency)
            self._known.update(((season_id, a, currency), v) for a, v in found.items())

    def get(self, season_id: int, account: str, currency: str = SEASON_CHIPS) -> int:
        if (season_id, account, currency) not in self._known:
            expected: set[tuple[int, str]] = set()
            if currency == SEASON_CHIPS:
                expected, self._expected = self._expected, set()
            self.preload([(season_id, account), *expected], currency)
        return self._known[(season_id, account, currency)]

    def post(self, entry: LedgerEntry) -> None:
        """Account for an entry just added to the session."""
        self._unflushed = True
        currency = entry.currency or SEASON_CHIPS
        for account, sign in ((entry.from_account, -1), (entry.to_account, 1)):
            key = (entry.season_id, account, currency)
            if key in self._known:
                self._known[key] += sign * entry.amount


def balances_of(
    session: Session, season_id: int, accounts: Iterable[str], currency: str = SEASON_CHIPS
) -> dict[str, int]:
    """The season balances of ``accounts`` in ``currency`` (the season's chips unless named;
    0 for an account without entries), from the database: what came in minus what went out,
    in two grouped queries."""
    accounts = sorted(set(accounts))
    totals = dict.fromkeys(accounts, 0)
    for start in range(0, len(accounts), 500):
        chunk = accounts[start : start + 500]
        for column, sign in ((LedgerEntry.to_account, 1), (LedgerEntry.from_account, -1)):
            rows = session.execute(
                select(column, func.sum(LedgerEntry.amount))
                .where(LedgerEntry.season_id == season_id, LedgerEntry.currency == currency, column.in_(chunk))
                .group_by(column)
            )
            for account, amount in rows:
                totals[account] += sign * int(amount)
    return totals


def season_balances(session: Session, season_id: int) -> dict[tuple[str, str], int]:
    """(account, currency) -> what came in minus what went out, for the season's currencies
    (a duel's own stacks left out): two grouped queries."""
    totals: dict[tuple[str, str], int] = defaultdict(int)
    for column, sign in ((LedgerEntry.to_account, 1), (LedgerEntry.from_account, -1)):
        for account, currency, amount in session.execute(
            select(column, LedgerEntry.currency, func.sum(LedgerEntry.amount))
            .where(LedgerEntry.season_id == season_id, LedgerEntry.currency != MATCH_CHIPS)
            .group_by(column, LedgerEntry.currency)
        ):
            totals[(account, currency)] += sign * int(amount)
    return dict(totals)
