"""Ingest: delivered mail -> stored inbound rows, committed before the transport forgets it.

The commit comes first: a crash in between leaves the file in ``new/``; the next ingest
finds its content already stored (same digest, same source) and only moves it.

Nothing a single file or mail does can stop ingest, nor what comes after it in a tick:
* a file that cannot be read or moved is skipped, logged and recorded as an inbox
  problem (``referee status`` shows it) until it can;
* a mail is stored whatever its content: values taken from it are cut to their columns
  (the raw mail is kept whole), so no column can be overflowed;
* a batch that the database refuses is stored again mail by mail, so one refusal costs
  only its own mail (recorded as a problem, retried next tick).

Duplicates: a delivery whose content (without trace headers) is already stored is the
same mail again; it is recorded as ``ignored`` by the rule ``duplicate`` and never
processed. A Message-ID shared with different content is a collision, not a duplicate:
the mail is stored and processed like any other (and the collision logged).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from referee.pipeline import BATCH
from referee.mail.identity import bounded, content_digest
from referee.mail.parse import parse_headers
from referee.mail.transport import MailGone, MailSource, TransportError
from referee.store.db import Store
from referee.store.models import InboxProblem, Inbound

log = logging.getLogger("referee.ingest")


@dataclass
class IngestReport:
    stored: int = 0
    duplicates: int = 0
    problems: int = 0
    sources_with_problems: set[str] = field(default_factory=set)


@dataclass
class _Mail:
    item: Any
    raw: bytes
    digest: str
    message_id: str | None
    sender: str | None
    size: int = 0  # the whole mail's size, when the source read only a part of it (too large)


TOO_LARGE = "too-large"  # the rule of a mail the source read only in part: answered with an error


class Ingest:
    """Reads from a :class:`~referee.mail.transport.MailSource` on the event loop; the
    database work of each batch runs in a worker thread."""

    def __init__(self, store: Store, source: MailSource, *, listed: Callable[[int], None] | None = None):
        self.store = store
        self.source = source
        self.listed = listed  # told how many mails wait, before any is read (the service warms the press)

    async def run(self, now: datetime) -> IngestReport:
        report = IngestReport()
        try:
            items = [item for item in await self.source.pending() if item.delivered_at <= now]
        except (OSError, TransportError) as exc:
            where = getattr(self.source, "path", "inbox")
            await asyncio.to_thread(self._problem, report, where, f"cannot list the inbox: {_os_error(exc)}", now)
            await asyncio.to_thread(self._forget_solved, report)
            return report
        if self.listed is not None and items:
            self.listed(len(items))
        for start in range(0, len(items), BATCH):
            chunk = items[start : start + BATCH]
            mails = [mail for mail in await self._read_all(chunk, report, now) if mail is not None]
            stored = await asyncio.to_thread(self._store_or_each, mails, report, now)
            for _mail, duplicate in stored:
                report.stored += not duplicate
                report.duplicates += duplicate
            await self._mark_all([mail for mail, _ in stored], report, now)
        await asyncio.to_thread(self._forget_solved, report)
        return report

    async def _read_all(self, items: list[Any], report: IngestReport, now: datetime) -> list[_Mail | None]:
        """Read a batch: at once where the source can (IMAP: one FETCH for many messages),
        else, or when that fails, one by one (a failure then costs only its own mail)."""
        read_many = getattr(self.source, "read_many", None)
        if read_many is not None and len(items) > 1:
            try:
                raws = await read_many(items)
            except (OSError, TransportError) as exc:
                log.warning("ingest: reading %d mails at once failed (%s); one by one", len(items), _os_error(exc))
            else:
                gone = [item.key for item, raw in zip(items, raws, strict=True) if raw is None]
                if gone:
                    log.info("ingest: %d mail(s) no longer at the source (taken by another process?)", len(gone))
                return [self._mail(item, raw) for item, raw in zip(items, raws, strict=True) if raw is not None]
        return [await self._read(item, report, now) for item in items]

    async def _mark_all(self, mails: list[_Mail], report: IngestReport, now: datetime) -> None:
        """Mark a stored batch processed: at once where the source can, else one by one."""
        mark_many = getattr(self.source, "mark_many", None)
        if mark_many is not None and len(mails) > 1:
            try:
                await mark_many([mail.item for mail in mails])
                return
            except MailGone:  # some were moved by another process: the rest one by one
                log.info("ingest: of %d mails, some were moved by another process; the rest one by one", len(mails))
            except (OSError, TransportError) as exc:
                log.warning("ingest: marking %d mails at once failed (%s); one by one", len(mails), _os_error(exc))
        for mail in mails:
            await self._mark(mail, report, now)

    # ------------------------------------------------------------------ steps

    def _store_or_each(self, mails: list[_Mail], report: IngestReport, now: datetime) -> list[tuple[_Mail, bool]]:
        """The batch in one transaction; refused, its mails one by one (a refusal costs
        only its own mail, recorded as a problem and retried next tick).

        Another process on the same mailbox may store some of the same mails at the same
        moment (their content is unique): the batch is then refused, and stored once more,
        finding those already stored (and only marking them processed)."""
        try:
            return self._store(mails, now)
        except IntegrityError:
            log.info("ingest: some of %d mails were stored meanwhile by another process; storing again", len(mails))
            try:
                return self._store(mails, now)
            except SQLAlchemyError:
                log.exception("ingest: a batch of %d mails was refused; storing them one by one", len(mails))
        except SQLAlchemyError:
            log.exception("ingest: a batch of %d mails was refused; storing them one by one", len(mails))
        stored: list[tuple[_Mail, bool]] = []
        for mail in mails:
            try:
                stored += self._store([mail], now)
            except SQLAlchemyError as exc:
                log.exception("ingest: %s could not be stored", mail.item.key)
                self._problem(report, mail.item.key, f"the database refused it: {type(exc).__name__}", now)
        return stored

    async def _read(self, item: Any, report: IngestReport, now: datetime) -> _Mail | None:
        try:
            raw = await self.source.read(item)
        except MailGone as exc:
            log.info("ingest: %s is no longer at the source (%s); nothing to do", item.key, exc)
            return None
        except (OSError, TransportError) as exc:
            log.warning("ingest: cannot read %s (%s); skipped, tried again next tick", item.key, _os_error(exc))
            await asyncio.to_thread(self._problem, report, item.key, f"cannot read the mail: {_os_error(exc)}", now)
            return None
        return self._mail(item, raw)

    @staticmethod
    def _mail(item: Any, raw: bytes) -> _Mail:
        headers = parse_headers(raw)
        size = getattr(item, "size", 0) or 0
        return _Mail(
            item=item,
            raw=raw,
            digest=content_digest(raw),
            message_id=bounded(headers.message_id, 255),
            sender=bounded(headers.from_addr, 320) or None,
            size=size if size > len(raw) else 0,
        )

    def _store(self, mails: list[_Mail], now: datetime) -> list[tuple[_Mail, bool]]:
        """Store a batch in one transaction; ``(mail, is_duplicate)`` for each mail stored.

        Plain INSERTs sent together (one executemany for the new mails, one for the
        duplicates), in the order of the batch, so the ids follow arrival order."""
        if not mails:
            return []
        done: list[tuple[_Mail, bool]] = []
        with self.store.unit_of_work(autoflush=False) as session:
            known = {
                digest: (row_id, source)
                for row_id, digest, source in session.execute(
                    select(Inbound.id, Inbound.dedupe_key, Inbound.source).where(
                        Inbound.dedupe_key.in_({m.digest for m in mails})
                    )
                )
            }
            self._log_collisions(session, mails, known)
            originals: list[dict[str, Any]] = []
            in_batch: set[str] = set()
            duplicates: list[tuple[_Mail, int | str]] = []  # the original's id, or its digest (this batch)
            for mail in mails:
                if mail.digest in known:
                    row_id, source = known[mail.digest]
                    if source == bounded(mail.item.key, 500):
                        done.append((mail, False))  # stored before a crash; only the move is left
                    else:
                        duplicates.append((mail, row_id))
                elif mail.digest in in_batch:
                    duplicates.append((mail, mail.digest))
                else:
                    originals.append(
                        {
                            "dedupe_key": mail.digest,
                            "message_id": mail.message_id,
                            "source": bounded(mail.item.key, 500),
                            "raw": mail.raw,
                            "received_at": mail.item.delivered_at,
                            "status": "pending",
                            "attempts": 0,
                            "sender": mail.sender,
                            # a mail read only in part is judged on its headers and answered
                            "rule": TOO_LARGE if mail.size else None,
                            "note": f"{mail.size} bytes; the first {len(mail.raw)} stored" if mail.size else None,
                        }
                    )
                    in_batch.add(mail.digest)
                    done.append((mail, False))
            connection = session.connection()
            if originals:
                connection.execute(insert(Inbound.__table__), originals)
            if not duplicates:
                return done
            ids = {}
            pending_digests = {original for _, original in duplicates if isinstance(original, str)}
            if pending_digests:  # the originals of this batch have their ids now
                ids = dict(
                    session.execute(
                        select(Inbound.dedupe_key, Inbound.id).where(Inbound.dedupe_key.in_(pending_digests))
                    ).all()
                )
            rows = []
            for mail, original in duplicates:
                original_id = ids[original] if isinstance(original, str) else original
                log.info("ingest: %s is a duplicate of inbound %s; not processed again", mail.item.key, original_id)
                rows.append(
                    {
                        "dedupe_key": None,
                        "duplicate_of": original_id,
                        "message_id": mail.message_id,
                        "source": bounded(mail.item.key, 500),
                        "raw": b"",  # the original holds the content
                        "received_at": mail.item.delivered_at,
                        "status": "ignored",
                        "rule": "duplicate",
                        "note": f"duplicate: the same mail as inbound {original_id}, delivered again; not processed",
                        "attempts": 0,
                        "sender": mail.sender,
                        "processed_at": now,
                    }
                )
                done.append((mail, True))
            connection.execute(insert(Inbound.__table__), rows)
        return done

    @staticmethod
    def _log_collisions(session: Any, mails: list[_Mail], known: dict[str, Any]) -> None:
        ids = {m.message_id for m in mails if m.message_id and m.digest not in known}
        if not ids:
            return
        for (message_id,) in session.execute(select(Inbound.message_id).where(Inbound.message_id.in_(ids)).limit(50)):
            log.warning(
                "ingest: Message-ID %s was seen before with different content: a collision, processed as a new mail",
                message_id,
            )

    async def _mark(self, mail: _Mail, report: IngestReport, now: datetime) -> None:
        try:
            await self.source.mark_processed(mail.item)
        except MailGone:  # another process on the mailbox stored it too, and moved it first
            log.info("ingest: %s was moved out of the inbox by another process", mail.item.key)
        except (OSError, TransportError) as exc:
            log.warning("ingest: %s is stored but could not be marked processed (%s)", mail.item.key, _os_error(exc))
            reason = f"stored, but cannot be moved out of the inbox (new/ or the IMAP folder): {_os_error(exc)}"
            await asyncio.to_thread(self._problem, report, mail.item.key, reason, now)

    # ------------------------------------------------------------------ problems

    def _problem(self, report: IngestReport, source: Any, reason: str, now: datetime) -> None:
        """Record (or refresh) an inbox problem; never raises."""
        source = bounded(str(source), 500) or "?"
        report.problems += 1
        report.sources_with_problems.add(source)
        for attempt in (1, 2):
            try:
                with self.store.unit_of_work() as session:
                    row = session.scalar(select(InboxProblem).where(InboxProblem.source == source))
                    if row is None:
                        session.add(InboxProblem(source=source, reason=reason, first_seen=now, last_seen=now, count=1))
                    else:
                        row.reason, row.last_seen, row.count = reason, now, row.count + 1
                return
            except IntegrityError:
                # another process recorded the same source between our read and our insert
                # (two `referee tick` processes meeting the same mail): refresh its row instead
                if attempt == 2:
                    log.exception("ingest: could not record the problem with %s", source)
            except SQLAlchemyError:
                log.exception("ingest: could not record the problem with %s", source)
                return

    def _forget_solved(self, report: IngestReport) -> None:
        """Problems not met again in this run are solved (the file was read, moved or removed)."""
        try:
            with self.store.unit_of_work() as session:
                if not report.sources_with_problems and session.scalar(select(InboxProblem.id).limit(1)) is None:
                    return  # none recorded: nothing written
                query = delete(InboxProblem)
                if report.sources_with_problems:
                    query = query.where(InboxProblem.source.not_in(report.sources_with_problems))
                session.execute(query)
        except SQLAlchemyError:
            log.exception("ingest: could not clear solved inbox problems")


def _os_error(exc: Exception) -> str:
    if not isinstance(exc, OSError):
        return f"{type(exc).__name__}: {exc}"
    return f"{exc.strerror or type(exc).__name__}" + (f": {exc.filename}" if exc.filename else "")
