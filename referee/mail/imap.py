"""Inbound mail from an IMAP mailbox (aioimaplib): ingest's transport for a provider's mailbox.

* Every message in the configured folder is waiting; its arrival time is the server's
  INTERNALDATE (what timeliness is judged by), fetched with its UID and size.
* A message is read whole with ``BODY.PEEK[]`` (the \\Seen flag is left alone), a message
  larger than ``max_message_bytes`` only that far (``BODY.PEEK[]<0.N>``): never whole
  into memory.
* Once ingest has committed a message it is moved to the processed folder: ``UID MOVE``
  where the server has MOVE, else ``UID COPY``, ``UID STORE +FLAGS (\\Deleted)`` and
  ``UID EXPUNGE`` (UIDPLUS) or ``EXPUNGE``. A message seen again (a crash between the
  commit and the move) is stored once: ingest knows it by its content.
* The items carry the folder's UIDVALIDITY: when it changes (the folder was rebuilt) the
  UIDs of an older listing mean nothing, and nothing is moved by them.
* Any failure of the connection (refused, dropped, timed out, a login refused) is a
  :class:`~referee.mail.transport.TransportError`: ingest records an inbox problem and
  tries again at the next tick, on a new connection.
* TLS (``security``): ``"tls"`` from the first byte (port 993); ``"starttls"``: a plain
  connection upgraded in place (RFC 3501 STARTTLS, then the TLS handshake on the same
  socket, then CAPABILITY asked again: nothing the server said in clear counts), refused
  before any login when the server does not offer STARTTLS; ``"none"``: no TLS. The
  certificate is verified (against ``ca_file``'s CAs when set, else the system's); one that
  is not accepted is a TransportError that says so.

The password comes from the configuration or the environment and is never logged, and it
is sent over a plain connection only with ``security = "none"``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import aioimaplib

from referee.config import ImapSettings
from referee.mail.tls import certificate_failure, is_encrypted, settings_context
from referee.mail.transport import MailGone, TransportError

__all__ = ["ImapItem", "ImapSource", "parse_internaldate"]

log = logging.getLogger("referee.imap")

FETCH_CHUNK = 500  # UIDs per FETCH of the listing


@dataclass(frozen=True)
class ImapItem:
    key: str  # "imap:<folder>:<uidvalidity>:<uid>"
    uid: str
    uidvalidity: str
    delivered_at: datetime  # INTERNALDATE, in UTC
    size: int  # RFC822.SIZE


_MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}
_INTERNALDATE = re.compile(r"\s?(\d{1,2})-([A-Z][a-z]{2})-(\d{4}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})")
_FETCH_LINE = re.compile(rb"^\d+ FETCH \((.*)\)$")
_UID = re.compile(rb"\bUID (\d+)")
_DATE = re.compile(rb'\bINTERNALDATE "([^"]*)"')
_SIZE = re.compile(rb"\bRFC822\.SIZE (\d+)")
_UIDVALIDITY = re.compile(rb"\[UIDVALIDITY (\d+)\]")


def parse_internaldate(value: str) -> datetime:
    """RFC 3501's date-time (``01-Dec-2026 14:05:00 +0100``, the day may be space-padded) as
    an aware datetime in UTC. Read by hand: ``strptime``'s month names follow the locale."""
    m = _INTERNALDATE.fullmatch(value)
    if m is None or m.group(2) not in _MONTHS:
        raise ValueError(f"not an IMAP INTERNALDATE: {value!r}")
    day, month, year, hh, mm, ss, sign, tzh, tzm = m.groups()
    offset = timedelta(hours=int(tzh), minutes=int(tzm)) * (-1 if sign == "-" else 1)
    local = datetime(int(year), _MONTHS[month], int(day), int(hh), int(mm), int(ss), tzinfo=timezone(offset))
    return local.astimezone(timezone.utc)


# A MOVE (or COPY, STORE) refused because the message was expunged meanwhile: another
# process on the same mailbox stored and moved it (Dovecot: "NO [EXPUNGEISSUED] Some of the
# requested messages no longer exist"); RFC 5530's response codes say so
_GONE = re.compile(r"\[(?:EXPUNGEISSUED|NONEXISTENT)\]", re.IGNORECASE)
_GONE_COMMANDS = frozenset({"MOVE", "COPY", "STORE"})


class ImapSource:
    """A :class:`~referee.mail.transport.MailSource` on an IMAP folder."""

    def __init__(self, settings: ImapSettings, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self.settings = settings
        self.ssl_context = ssl_context
        self._imap: aioimaplib.IMAP4 | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._uidvalidity: str | None = None
        self._can_move = False
        self._lost: asyncio.Future[None] | None = None  # done when the server closes the connection
        self._watcher: ImapSource | None = None  # a connection of its own for IDLE
        self.connections_opened = 0

    @property
    def path(self) -> str:
        """How the source is named in inbox problems and logs."""
        s = self.settings
        return f"imap://{s.username}@{s.host}:{s.port}/{s.folder}"

    # ------------------------------------------------------------------ the source

    async def pending(self) -> list[ImapItem]:
        imap = await self._session()
        # NOOP first: a session selected earlier learns of mail that arrived since (the server
        # tells it "n EXISTS"); a SEARCH alone may answer from the session's older view
        await self._ok(imap.noop(), "NOOP")
        found = await self._ok(imap.uid_search("ALL", charset=None), "SEARCH")
        uids = [uid for line in found.lines[:-1] for uid in line.decode("ascii", "replace").split() if uid.isdigit()]
        items: list[ImapItem] = []
        folder, validity = self.settings.folder, self._uidvalidity or "0"
        for start in range(0, len(uids), FETCH_CHUNK):
            chunk = ",".join(uids[start : start + FETCH_CHUNK])
            fetched = await self._ok(imap.uid("fetch", chunk, "(UID INTERNALDATE RFC822.SIZE)"), "FETCH")
            for line in fetched.lines:
                m = _FETCH_LINE.match(line) if isinstance(line, (bytes, bytearray)) else None
                if m is None:
                    continue
                uid, date, size = _UID.search(m.group(1)), _DATE.search(m.group(1)), _SIZE.search(m.group(1))
                if uid is None or date is None:
                    continue
                try:
                    arrived = parse_internaldate(date.group(1).decode("ascii"))
                except ValueError:
                    log.warning("imap: UID %s has an unreadable INTERNALDATE %r; skipped", uid.group(1), date.group(1))
                    continue
                number, octets = uid.group(1).decode(), int(size.group(1)) if size else 0
                items.append(ImapItem(f"imap:{folder}:{validity}:{number}", number, validity, arrived, octets))
        items.sort(key=lambda item: (item.delivered_at, int(item.uid)))
        return items

    async def read(self, item: ImapItem) -> bytes:
        imap = await self._session()
        self._same_folder(item)
        limit = self.settings.max_message_bytes
        part = "BODY.PEEK[]" if item.size <= limit else f"BODY.PEEK[]<0.{limit}>"
        if item.size > limit:
            log.warning("imap: UID %s is %d bytes; only its first %d are read", item.uid, item.size, limit)
        fetched = await self._ok(imap.uid("fetch", item.uid, f"({part})"), "FETCH")
        literals = [bytes(line) for line in fetched.lines if isinstance(line, bytearray)]
        if not literals:
            raise MailGone(f"UID {item.uid} is no longer in {self.settings.folder}")
        return literals[0]

    async def read_many(self, items: list[ImapItem]) -> list[bytes | None]:
        """Several messages in one ``UID FETCH`` (those within ``max_message_bytes``; a larger
        one is read on its own, only that far), in the order of ``items``; None for a message
        the answer did not hold (no longer in the folder: another process on this mailbox
        took it)."""
        imap = await self._session()
        for item in items:
            self._same_folder(item)
        limit = self.settings.max_message_bytes
        small = [item for item in items if item.size <= limit]
        found: dict[str, bytes] = {}
        for start in range(0, len(small), FETCH_CHUNK):
            uids = ",".join(item.uid for item in small[start : start + FETCH_CHUNK])
            fetched = await self._ok(imap.uid("fetch", uids, "(UID BODY.PEEK[])"), "FETCH")
            head: bytes | None = None
            for line in fetched.lines:
                if isinstance(line, bytearray) and head is not None:
                    uid = _UID.search(head)
                    if uid is not None:
                        found[uid.group(1).decode()] = bytes(line)
                    head = None
                elif isinstance(line, bytes):
                    head = line
        raws: list[bytes | None] = []
        for item in items:
            if item.size > limit:  # on its own, only its first max_message_bytes
                try:
                    raws.append(await self.read(item))
                except MailGone:
                    raws.append(None)
            else:
                raws.append(found.get(item.uid))
        return raws

    async def mark_many(self, items: list[ImapItem]) -> None:
        """Move several messages with one command (``UID MOVE 1,2,3``)."""
        imap = await self._session()
        for item in items:
            self._same_folder(item)
        uids = ",".join(item.uid for item in items)
        target = self.settings.processed_folder
        if self._can_move:
            await self._ok(imap.uid("move", uids, target), "MOVE")
            return
        for item in items:
            await self.mark_processed(item)

    async def mark_processed(self, item: ImapItem) -> None:
        imap = await self._session()
        self._same_folder(item)
        target = self.settings.processed_folder
        if self._can_move:
            await self._ok(imap.uid("move", item.uid, target), "MOVE")
            return
        await self._ok(imap.uid("copy", item.uid, target), "COPY")
        await self._ok(imap.uid("store", item.uid, "+FLAGS.SILENT", r"(\Deleted)"), "STORE")
        if imap.has_capability("UIDPLUS"):
            await self._ok(imap.uid("expunge", item.uid), "EXPUNGE")
        else:
            await self._ok(imap.expunge(), "EXPUNGE")

    async def check(self) -> str:
        """Log in, select the folder, make sure of the processed folder: what an organizer
        asks of a new set-up (``referee check-mail``). Raises TransportError."""
        waiting = await self.pending()
        s = self.settings
        return (
            f"IMAP {s.host}:{s.port} ({s.security}): logged in as {s.username}; {s.folder}: {len(waiting)} "
            f"message(s) waiting; {s.processed_folder} ready; MOVE {'yes' if self._can_move else 'no (COPY + EXPUNGE)'}"
        )

    async def wait_for_mail(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for new mail in the folder: IMAP IDLE on a connection
        of its own (the listing and reading go on on the first). True when the server says
        mail arrived, False when the time is up; a server without IDLE is simply waited on
        for the whole time (the poll finds its mail). Raises TransportError."""
        if self._watcher is None:
            self._watcher = ImapSource(self.settings, ssl_context=self.ssl_context)
        watcher = self._watcher
        imap = await watcher._session()
        if not imap.has_capability("IDLE"):
            await asyncio.sleep(timeout)
            return False
        try:
            idle = await imap.idle_start(timeout=timeout + self.settings.timeout)
            push = asyncio.ensure_future(imap.wait_server_push(timeout=timeout))
            try:
                waiting = {push} if watcher._lost is None else {push, watcher._lost}
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if not push.done():
                    raise ConnectionResetError("the server closed the connection")
                try:
                    lines = push.result()
                except asyncio.TimeoutError:
                    return False
                return any(b"EXISTS" in line for line in lines if isinstance(line, (bytes, bytearray)))
            finally:
                push.cancel()
                if imap.has_pending_idle():
                    imap.idle_done()
                    await asyncio.wait_for(idle, self.settings.timeout)
        except (aioimaplib.Abort, aioimaplib.Error, OSError, asyncio.TimeoutError) as exc:
            watcher._imap = None
            raise TransportError(f"IDLE failed on {self.settings.host}: {type(exc).__name__}: {exc}") from exc

    async def close(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            await watcher.close()
        imap, self._imap = self._imap, None
        if imap is None or self._loop is not asyncio.get_running_loop():
            return
        try:
            await asyncio.wait_for(imap.logout(), self.settings.timeout)
        except (aioimaplib.Abort, aioimaplib.Error, OSError, asyncio.TimeoutError):
            pass

    # ------------------------------------------------------------------ the connection

    async def _session(self) -> aioimaplib.IMAP4:
        loop = asyncio.get_running_loop()
        if self._lost is not None and self._lost.done():
            self._imap = None  # the server closed it
        if self._loop is not loop:  # a connection of another (finished) loop cannot be used here
            self._imap, self._loop = None, loop
        if self._imap is not None and self._imap.get_state() == "SELECTED" and _open(self._imap):
            return self._imap
        self._imap = None
        s = self.settings
        imap: aioimaplib.IMAP4 | None = None
        try:
            context = self._tls_context() if s.security in ("tls", "starttls") else None
            if s.security == "tls":
                imap = aioimaplib.IMAP4_SSL(host=s.host, port=s.port, timeout=s.timeout, ssl_context=context)
            else:
                imap = aioimaplib.IMAP4(host=s.host, port=s.port, timeout=s.timeout)
            lost: asyncio.Future[None] = loop.create_future()
            imap.protocol.conn_lost_cb = lambda _exc: lost.done() or lost.set_result(None)
            self._lost = lost
            await imap.wait_hello_from_server()
            if s.security == "starttls":
                assert context is not None
                await _starttls(imap, context, s)
            if s.security != "none" and not is_encrypted(imap.protocol.transport):  # never sent in clear
                raise TransportError(f"{s.host}:{s.port}: the connection is not encrypted; not logging in")
            login = await imap.login(s.username, s.password or "")
            if login.result != "OK":  # aioimaplib does not raise for a refused login
                raise TransportError(f"{s.host}:{s.port} refused the login of {s.username}: {_text(login.lines)}")
            selected = await imap.select(s.folder)
            if selected.result != "OK":
                raise TransportError(f"cannot select {s.folder}: {_text(selected.lines)}")
            validity = next((m.group(1).decode() for line in selected.lines if (m := _UIDVALIDITY.search(line))), None)
            if self._uidvalidity is not None and validity != self._uidvalidity:
                log.warning("imap: UIDVALIDITY of %s changed (%s -> %s)", s.folder, self._uidvalidity, validity)
            self._uidvalidity = validity
            created = await imap.create(s.processed_folder)  # NO [ALREADYEXISTS] when it is there
            if created.result == "OK":
                log.info("imap: created the folder %s", s.processed_folder)
            self._can_move = imap.has_capability("MOVE")
        except TransportError:
            _abandon(imap)
            raise
        except (aioimaplib.Abort, aioimaplib.Error, OSError, asyncio.TimeoutError) as exc:
            _abandon(imap)
            failure = certificate_failure(exc, f"{s.host}:{s.port}", s.ca_file)
            if failure is not None:
                raise TransportError(failure) from exc
            raise TransportError(f"cannot reach {s.host}:{s.port}: {type(exc).__name__}: {exc}") from exc
        self._imap = imap
        self.connections_opened += 1
        log.debug("imap: connected to %s (%d opened so far)", self.path, self.connections_opened)
        return imap

    def _tls_context(self) -> ssl.SSLContext:
        """The TLS context (made once: loading the CAs takes a while): the one given, else
        certificates verified against ``ca_file`` or the system's CAs."""
        if self.ssl_context is None:
            self.ssl_context = settings_context(self.settings)
        return self.ssl_context

    async def _ok(self, command, name: str) -> aioimaplib.Response:
        """Await an IMAP command; a failure of any kind drops the connection (the next call
        makes a new one) and is a TransportError. A connection the server closes fails the
        command at once (aioimaplib itself would wait for its timeout)."""
        task = asyncio.ensure_future(command)
        lost = self._lost
        try:
            if lost is not None:
                await asyncio.wait({task, lost}, return_when=asyncio.FIRST_COMPLETED)
                if not task.done():
                    task.cancel()
                    raise ConnectionResetError("the server closed the connection")
            response = await task
        except (aioimaplib.Abort, aioimaplib.Error, OSError, asyncio.TimeoutError, asyncio.CancelledError) as exc:
            if isinstance(exc, asyncio.CancelledError) and not task.cancelled():
                raise
            self._imap = None
            raise TransportError(f"{name} failed on {self.settings.host}: {type(exc).__name__}: {exc}") from exc
        if response.result != "OK":
            text = _text(response.lines)
            if name in _GONE_COMMANDS and _GONE.search(text):  # RFC 5530's codes: gone meanwhile
                raise MailGone(f"{name} on {self.settings.host}: the mail is gone: {text}")
            raise TransportError(f"{name} refused by {self.settings.host}: {text}")
        return response

    def _same_folder(self, item: ImapItem) -> None:
        if item.uidvalidity != (self._uidvalidity or "0"):
            raise TransportError(
                f"UIDVALIDITY of {self.settings.folder} changed since UID {item.uid} was listed; listed again next tick"
            )


async def _starttls(imap: aioimaplib.IMAP4, context: ssl.SSLContext, settings: ImapSettings) -> None:
    """Upgrade the plain connection in place (RFC 3501 6.2.1; aioimaplib has no STARTTLS of its
    own): STARTTLS, the TLS handshake on the same socket (asyncio's ``loop.start_tls`` on
    aioimaplib's transport, its protocol kept), then CAPABILITY again. Refused, before any
    login, when the server does not offer STARTTLS. Raises TransportError, or OSError
    (ssl.SSLCertVerificationError for a certificate not accepted)."""
    s, protocol = settings, imap.protocol
    where = f"{s.host}:{s.port}"
    if imap.get_state() != aioimaplib.NONAUTH:  # PREAUTH: logged in before any TLS
        raise TransportError(f"{where} greeted in state {imap.get_state()}; STARTTLS is no longer possible")
    if not imap.has_capability("STARTTLS"):
        offered = " ".join(sorted(protocol.capabilities)) or "nothing"
        raise TransportError(
            f"{where} does not offer STARTTLS (CAPABILITY: {offered}); not logging in over a plain connection: "
            f'use security = "tls" (port 993) if the server has it'
        )
    command = aioimaplib.Command("STARTTLS", protocol.new_tag(), loop=protocol.loop)
    response = await asyncio.wait_for(protocol.execute(command), s.timeout)
    if response.result != "OK":
        raise TransportError(f"{where} refused STARTTLS: {_text(response.lines)}")
    # whatever else came in clear is not to be believed (an injection before the handshake)
    protocol.incomplete_line, protocol.capabilities = b"", set()
    transport = await asyncio.get_running_loop().start_tls(
        protocol.transport, protocol, context, server_hostname=s.host, ssl_handshake_timeout=s.timeout
    )
    protocol.transport = transport  # aioimaplib writes to protocol.transport: now the TLS one
    await asyncio.wait_for(protocol.capability(), s.timeout)  # what the server says under TLS


def _abandon(imap: aioimaplib.IMAP4 | None) -> None:
    """Close a connection that failed half-way (no LOGOUT: it may not be logged in)."""
    transport = getattr(imap.protocol, "transport", None) if imap is not None else None
    if transport is not None and not transport.is_closing():
        transport.close()


def _open(imap: aioimaplib.IMAP4) -> bool:
    """Is the connection still there? (aioimaplib keeps its state when the server goes away;
    the transport knows.)"""
    transport = getattr(imap.protocol, "transport", None)
    return transport is not None and not transport.is_closing()


def _text(lines: list) -> str:
    words = (line.decode("utf-8", "replace") if isinstance(line, (bytes, bytearray)) else str(line) for line in lines)
    return " ".join(words)[:500]
