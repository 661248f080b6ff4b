"""Mail through real servers: outbound mails per second through Postfix, inbound messages per
second from Dovecot's IMAP into committed inbound rows.

Starts the loopback mail stack (``referee.mailstack``; root and the Debian packages needed:
``deploy/mailstack/install-mailstack.sh``), and in the same run:

* outbound: N mails through the referee's SMTP transport (``SmtpSender``: connections
  reused, ``--concurrency`` at once), against one new connection per mail (connect, EHLO,
  MAIL, RCPT, DATA, QUIT each time), mails/s each and the ratio;
* inbound: N mails put in the referee's mailbox (by SMTP, not timed; waited for), then the
  referee's ingest timed: list the folder (UID, INTERNALDATE, size), read each message,
  store and commit them in batches, move each to the processed folder.

Goals (issue 7): outbound >= 200 mails/s and >= 3x the one-connection-per-mail figure;
inbound >= 500 messages/s. Reported as met / not met, never asserted.

    .venv/bin/python bench/bench_mail.py [--mails 1000] [--concurrency 4] [--security none|starttls|tls]

``--security``: how the referee's side talks to the servers, as ``security`` in [imap] and
[smtp]: ``none`` (plain text, the default), ``starttls`` (the plain ports, upgraded with
STARTTLS: every new connection pays a TLS handshake), ``tls`` (the implicit-TLS ports);
certificates verified against the stack's CA. The mails put in the mailbox for the inbound
part go in plain text (not timed).
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import common  # noqa: F401  (puts the checkout on sys.path)
from common import table

import aiosmtplib

from referee.config import ImapSettings, SmtpSettings
from referee.mail.imap import ImapSource
from referee.mail.smtp import SmtpSender
from referee.mail.tls import client_context
from referee.mail.transport import OutboundMail
from referee.mailstack import MailStack, MailStackUnavailable, StackControl


def message(stack: MailStack, to: str, i: int) -> tuple[str, bytes]:
    message_id = f"<{uuid.uuid4().hex}.{i}@referee.test>"
    body = "ROULETTE\r\nWinning colour: Gold\r\nGold: 30\r\nSilver: 10\r\nBlack: 0\r\n" + "x" * 60 + "\r\n"
    head = (
        f"From: {stack.address('referee')}\r\nTo: {to}\r\nSubject: bench {i}\r\n"
        f"Message-ID: {message_id}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
    )
    return message_id, (head + "\r\n" + body * 20).encode()


def ports(stack: MailStack, security: str) -> tuple[int, int]:
    """(IMAP port, SMTP port) for a ``security``: implicit TLS has ports of its own."""
    return (stack.imaps_port, stack.smtps_port) if security == "tls" else (stack.imap_port, stack.smtp_port)


def ca_file(stack: MailStack, security: str) -> Path | None:
    return stack.ca_file if security != "none" else None


async def outbound_reused(stack: MailStack, n: int, concurrency: int, security: str) -> tuple[float, int]:
    settings = SmtpSettings(
        stack.host,
        ports(stack, security)[1],
        security,
        concurrency=concurrency,
        timeout=60.0,
        ca_file=ca_file(stack, security),
    )
    sender = SmtpSender(settings)
    mails = [
        OutboundMail(
            f"k{i}", stack.address("referee"), (stack.address(("alice", "bob")[i % 2]),), message(stack, "", i)[1]
        )
        for i in range(n)
    ]
    gate = asyncio.Semaphore(concurrency)

    async def one(mail: OutboundMail) -> str:
        async with gate:
            return (await sender.send(mail)).outcome

    t0 = time.perf_counter()
    outcomes = await asyncio.gather(*(one(mail) for mail in mails))
    elapsed = time.perf_counter() - t0
    await sender.close()
    assert outcomes.count("sent") == n, {o: outcomes.count(o) for o in set(outcomes)}
    return elapsed, sender.connections_opened


async def outbound_one_connection_each(stack: MailStack, n: int, security: str) -> float:
    # one context for all (as SmtpSender keeps one): what is timed is the connection, not loading the CA
    context = client_context(ca_file(stack, security)) if security != "none" else None
    tls = {"use_tls": security == "tls", "start_tls": security == "starttls", "tls_context": context}
    port = ports(stack, security)[1]
    t0 = time.perf_counter()
    for i in range(n):
        raw = message(stack, "", i)[1]
        async with aiosmtplib.SMTP(hostname=stack.host, port=port, timeout=60, **tls) as smtp:
            await smtp.sendmail(stack.address("referee"), [stack.address(("alice", "bob")[i % 2])], raw)
    return time.perf_counter() - t0


async def inbound(stack: MailStack, n: int, folder: Path, security: str) -> tuple[float, int]:
    sys.path.insert(0, str(common.ROOT))
    from referee.service import Referee
    from tests.service.harness import World

    world = World(folder, f"sqlite:///{folder / 'r.db'}")
    source = ImapSource(
        ImapSettings(
            stack.host,
            ports(stack, security)[0],
            security,
            stack.address("referee"),
            stack.password,
            timeout=60.0,
            ca_file=ca_file(stack, security),
        )
    )
    async with aiosmtplib.SMTP(hostname=stack.host, port=stack.smtp_port, start_tls=False, timeout=60) as smtp:
        for i in range(n):
            await smtp.sendmail(stack.address("alice"), [stack.address("referee")], message(stack, "", i)[1])
    deadline = time.monotonic() + 300
    while len(await source.pending()) < n:  # Postfix answers 250 before Dovecot has the mail
        if time.monotonic() > deadline:
            raise SystemExit("the mails did not all arrive within 5 minutes")
        await asyncio.sleep(0.2)
    await source.close()  # the timed part starts with a connection of its own
    referee = Referee(world.store, world.config, inbox=source, outbox=world.outbox)
    t0 = time.perf_counter()
    stored = await referee.aingest(datetime.now(timezone.utc) + timedelta(seconds=5))
    elapsed = time.perf_counter() - t0
    await referee.close_transports()
    world.store.dispose()
    assert stored == n, stored
    return elapsed, stored


async def run(n: int, concurrency: int, security: str) -> None:
    control = StackControl()
    try:
        stack = control.start()
    except MailStackUnavailable as exc:
        raise SystemExit(f"bench_mail: the loopback mail stack cannot start here:\n{exc}") from None
    try:
        print(
            f"bench_mail: {n:,} mails each way, loopback Postfix + Dovecot, security {security} "
            f"({common.machine()}, {ssl.OPENSSL_VERSION})"
        )
        reused, connections = await outbound_reused(stack, n, concurrency, security)
        single = await outbound_one_connection_each(stack, n, security)
        with tempfile.TemporaryDirectory() as folder:
            seconds, stored = await inbound(stack, n, Path(folder), security)
        out_rate, single_rate, in_rate = n / reused, n / single, stored / seconds
        rows = [
            (f"outbound, SmtpSender (concurrency {concurrency}, {connections} connections)", n, reused, out_rate),
            (f"outbound, one new connection per mail ({security})", n, single, single_rate),
            (f"inbound, IMAP ({security}) -> committed rows (list, read, store, move)", stored, seconds, in_rate),
        ]
        print(table(rows, ("what", "mails", "s", "mails/s")))
        met = lambda ok: "met" if ok else "NOT met"  # noqa: E731
        print(
            f"outbound: {out_rate:,.0f} mails/s (goal >= 200: {met(out_rate >= 200)}); "
            f"{out_rate / single_rate:.1f}x one connection per mail (goal >= 3x: {met(out_rate >= 3 * single_rate)})"
        )
        print(f"inbound: {in_rate:,.0f} messages/s (goal >= 500: {met(in_rate >= 500)})")
    finally:
        control.remove()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mails", type=int, default=1000, help="mails each way (default 1000)")
    parser.add_argument("--concurrency", type=int, default=4, help="SMTP connections at once (default 4)")
    parser.add_argument(
        "--security",
        choices=("none", "starttls", "tls"),
        default="none",
        help="plain text (default), STARTTLS on the plain ports, or implicit TLS; verified against the stack's CA",
    )
    args = parser.parse_args()
    asyncio.run(run(args.mails, args.concurrency, args.security))
    return 0


if __name__ == "__main__":
    sys.exit(main())
