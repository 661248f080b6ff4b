"""``referee archive mbox``: the referee's mail as an mbox file, for any mail program.

Two exports:

* **The mail as sent** (the default): every outbox mail that went out (``sent_at`` set:
  sent, or sent and bounced later), the stored bytes of each, in the order they were sent.
  This is the organizer's record of what each player was told, so it holds the players'
  private views and addresses: it is not for publication.
* **The public round mails** (``public_only``): instead of the personal mails, one mail per
  closed round or hand of each match, told as the archive's feeds tell it
  (:func:`referee.archive.texts.round_text`, from the public view alone), dated when the
  round closed, threaded per match. They are addressed to ``undisclosed-recipients:;``
  (RFC 5322's empty group, which mail programs show as such), so no address but the
  referee's own appears.

Either export can be narrowed to one match (``match_key``) or one season (``season_key``:
its matches' mail). Mail that belongs to no match (the organizer's notices) is in the
full export only.

The file is written with the standard library's :mod:`mailbox` (mboxo: a body line
starting with ``From `` is written ``>From ``, which every mbox reader expects), with one
``From `` line per message: the envelope sender (the message's From address) and the
instant it was sent (or its round closed), in UTC. It is written beside *path* and moved
into place when complete, so an export that fails leaves no half file behind.
"""

from __future__ import annotations

import mailbox
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parseaddr
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload
from sqlalchemy.sql import Select

from referee.archive.rounds import Round, match_rounds, public_view
from referee.archive.site import reading
from referee.archive.texts import round_text
from referee.games import GAMES
from referee.mail.compose import compose, make_message_id
from referee.store.db import Store
from referee.store.models import Event, Match, Outbox, Seat, Season

__all__ = ["PUBLIC_RECIPIENTS", "export"]

PUBLIC_RECIPIENTS = "undisclosed-recipients:;"


@dataclass(frozen=True)
class _Mail:
    """One message of the export: its bytes and the instant its ``From `` line carries."""

    at: datetime
    raw: bytes


def export(
    store: Store,
    path: str | os.PathLike[str],
    *,
    match_key: str | None = None,
    season_key: str | None = None,
    public_only: bool = False,
    from_addr: str | None = None,
    from_name: str = "Referee",
) -> int:
    """Write the mbox at *path* (replacing it) and return the number of messages.

    *from_addr* and *from_name* (the configured ``[mail] address`` and ``name``) sign the
    public round mails and are needed for them only. An unknown *match_key* or
    *season_key* raises LookupError: a typo should not look like a season without mail.
    """
    if public_only and not from_addr:
        raise ValueError("the public round mails need the referee's address (from_addr)")
    with reading(store) as session:  # no write lock: the service goes on meanwhile
        _check_keys(session, match_key, season_key)
        mails: Iterable[_Mail]
        if public_only and from_addr:
            mails = _round_mails(session, match_key, season_key, from_addr, from_name)
        else:
            mails = _sent_mails(session, match_key, season_key)
        return _write(Path(path), mails)


def _check_keys(session: Session, match_key: str | None, season_key: str | None) -> None:
    if match_key is not None and session.scalar(select(Match.id).where(Match.key == match_key)) is None:
        raise LookupError(f"no match {match_key!r}")
    if season_key is not None and session.scalar(select(Season.id).where(Season.key == season_key)) is None:
        raise LookupError(f"no season {season_key!r}")


def _selected(query: Select[Any], match_key: str | None, season_key: str | None) -> Select[Any]:
    """*query* (over matches) narrowed to the match and/or the season asked for."""
    if match_key is not None:
        query = query.where(Match.key == match_key)
    if season_key is not None:
        query = query.join(Season, Match.season_id == Season.id).where(Season.key == season_key)
    return query


# --------------------------------------------------------------------------- as sent


def _sent_mails(session: Session, match_key: str | None, season_key: str | None) -> Iterator[_Mail]:
    """The outbox mail that went out, oldest first (rows sent in the same instant by id)."""
    query = select(Outbox.sent_at, Outbox.message).where(Outbox.sent_at.is_not(None))
    if match_key is not None or season_key is not None:
        query = _selected(query.join(Match, Outbox.match_id == Match.id), match_key, season_key)
    query = query.order_by(Outbox.sent_at, Outbox.id).execution_options(yield_per=200)
    for sent_at, message in session.execute(query):
        yield _Mail(sent_at, bytes(message))


# --------------------------------------------------------------------------- public


def _round_mails(
    session: Session, match_key: str | None, season_key: str | None, from_addr: str, from_name: str
) -> list[_Mail]:
    """One mail per closed round of each selected match, every match's in time order."""
    query = _selected(select(Match), match_key, season_key).options(
        selectinload(Match.seats).selectinload(Seat.player), selectinload(Match.season)
    )
    dated: list[tuple[datetime, str, int, bytes]] = []
    for match in session.scalars(query.order_by(Match.id)):
        if match.state is None:
            continue  # not started: nothing has happened yet
        for round, raw in _match_round_mails(session, match, from_addr, from_name):
            dated.append((round.closed_at, match.key, round.number, raw))
    dated.sort(key=lambda mail: mail[:3])
    return [_Mail(at, raw) for at, _, _, raw in dated]


def _match_round_mails(session: Session, match: Match, from_addr: str, from_name: str) -> Iterator[tuple[Round, bytes]]:
    """A match's closed rounds, each as a mail in the match's thread (every one answers
    the first, so a mail program shows the match as one conversation)."""
    game = GAMES[match.game]
    events = list(session.scalars(select(Event).where(Event.match_id == match.id).order_by(Event.seq)))
    view = public_view(game, match)
    context = {
        "match": {"id": match.key, "title": game.title, "game": game.name, "season": match.season.name},
        "players": [{"id": seat.player.key, "name": seat.player.name} for seat in match.seats],
        "view": view,
    }
    domain = from_addr.rpartition("@")[2]
    thread_root = make_message_id(f"archive:{match.key}:round:1", domain)
    for round in match_rounds(game, match, events, view):
        title, text = round_text(game.name, context, round)
        message_id = make_message_id(f"archive:{match.key}:round:{round.number}", domain)
        first = round.number == 1
        raw = compose(
            from_addr=from_addr,
            from_name=from_name,
            to_addr=PUBLIC_RECIPIENTS,
            to_name="",
            reply_to=None,
            subject=title,
            text=text + "\n",
            message_id=message_id,
            date=round.closed_at,
            in_reply_to=None if first else thread_root,
            references=() if first else (thread_root,),
            loop_value=domain,
        )
        yield round, raw


# --------------------------------------------------------------------------- the file


def _write(path: Path, mails: Iterable[_Mail]) -> int:
    """Write *mails* as an mbox at *path*, through a file beside it that replaces *path*
    only once complete; the count."""
    partial = path.with_name(f".{path.name}.partial")
    partial.unlink(missing_ok=True)
    box = mailbox.mbox(partial, create=True)
    count, complete = 0, False
    try:
        for mail in mails:
            box.add(_mbox_message(mail))
            count += 1
        complete = True
    finally:
        box.close()
        if not complete:
            partial.unlink(missing_ok=True)
    os.replace(partial, path)
    return count


def _mbox_message(mail: _Mail) -> mailbox.mboxMessage:
    """The message with its ``From `` line: the envelope sender, as the From header names
    it, and the instant in UTC (``asctime``, as mbox readers parse it)."""
    message = mailbox.mboxMessage(mail.raw)
    sender = parseaddr(message.get("From", ""))[1] or "MAILER-DAEMON"
    message.set_from("".join(sender.split()), mail.at.astimezone(timezone.utc).timetuple())
    return message
