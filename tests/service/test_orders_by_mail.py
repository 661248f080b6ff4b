"""The organizer's controls by mail (docs/organizer-mail.md) through the real service: a mail
to the organizer's command address from the organizer's address, authenticated as a player's
mail is, whose lines are the commands (referee.season.orders), done all together or not at
all in the judge's unit of work and answered to the organizer. Forged, misaddressed and
quoted commands are never done. On SQLite and on PostgreSQL; the parser's own tests last."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from referee.store.balances import season_balances
from referee.mail import tokens
from referee.mail.auth import authenticate
from referee.mail.parse import parse_headers, shown_text
from referee.season.controls import Controls
from referee.season.orders import MAX_ORDERS, MAX_PROBLEMS, read_orders
from referee.status import status_text
from referee.store.models import Event, Inbound, Match, Outbox, SeasonEvent

from ..timing import growth
from .harness import SEASON, START, World, outbox_rows
from .test_mail_safety import ROULETTE, deliver, inbound_rows, raw_mail, reply_address

HOUR = timedelta(hours=1)
T1 = START + HOUR
BOSS = "boss@example.test"


def season() -> dict:
    data = copy.deepcopy(SEASON)
    data["players"].append({"id": "carol", "name": "Carol", "email": "carol@example.test", "timezone": "UTC"})
    return data


@pytest.fixture
def world(tmp_path, db_url):
    w = World(tmp_path, db_url, season())
    w.config.mail.organizer = BOSS  # the referee holds this very configuration
    for key in ("carol", "boss"):
        w.clients[key] = w.clients["alice"].__class__(
            f"{key}@example.test", key.title(), w.config.mail.outbox / f"{key}@example.test", w.config.mail.inbox
        )
    w.tick(START)
    yield w
    w.store.dispose()


def command_address(world: World, organizer: str = BOSS) -> str:
    return tokens.organizer_address(world.config.secret, "referee", "example.test", organizer)


_sent = iter(range(10**6))


def order(
    world: World, text: str, at=T1, *, frm: str = f"Boss <{BOSS}>", to: str | None = None, extra: str = ""
) -> str:
    """The organizer's mail (by default) with ``text``, to the command address, arriving ``at``;
    its Message-ID."""
    message_id = f"<o{next(_sent)}@example.test>"
    deliver(
        world, raw_mail(frm=frm, to=to or command_address(world), body=text, message_id=message_id, extra=extra), at
    )
    return message_id


def answer(world: World):
    return world.client("boss").latest()


def match(world: World) -> Match:
    with world.store.unit_of_work() as session:
        return session.scalar(select(Match).where(Match.key == "m1"))


def events(world: World) -> list[str]:
    with world.store.unit_of_work() as session:
        return list(session.scalars(select(Event.kind).order_by(Event.match_id, Event.seq)))


def mails(world: World, key: str, subject: str) -> list:
    return [m for m in world.client(key).all() if subject in m.subject]


def flat(text: str) -> str:
    return " ".join(text.split())


def last_row(world: World) -> Inbound:
    return inbound_rows(world)[-1]


def assert_readable(mail) -> None:
    assert all(len(line) <= 78 for line in mail.text.splitlines()), mail.text


# ---------------------------------------------------------------------- the address


def test_the_command_address_is_signed_for_the_organizer_and_shown_by_status(world):
    address = command_address(world)
    token = address.split("+", 1)[1].split("@")[0]
    assert tokens.split_token(token)[0] == 0  # seat id 0: no seat has it
    assert tokens.is_organizer_token(world.config.secret, token, BOSS)
    assert not tokens.is_organizer_token(world.config.secret, token, "eve@example.test")
    assert not tokens.is_organizer_token(b"another secret", token, BOSS)
    text = status_text(world.store, T1, mail=world.config.mail, secret=world.config.secret)
    assert f"organizer commands by mail: {address}" in text.splitlines()
    world.config.mail.organizer = None
    assert "organizer commands" not in status_text(world.store, T1, mail=world.config.mail, secret=world.config.secret)


# ---------------------------------------------------------------------- each command


def test_extend_by_mail_moves_the_deadline_tells_the_players_and_answers_the_organizer(world):
    before = match(world).deadline
    sent = order(world, "EXTEND m1 12h")
    world.tick(T1)
    assert match(world).deadline == before + 12 * HOUR
    row = last_row(world)
    assert (row.status, row.rule) == ("accepted", "organizer")
    assert row.match_id is None and row.player_id is None
    with world.store.unit_of_work() as session:
        extended = session.scalar(select(Event).where(Event.kind == "extend"))
        assert extended.at == T1  # the mail's arrival
    for key in ("alice", "bob"):
        (told,) = mails(world, key, "More time")
        assert "12 hours more time" in flat(told.text)
    mail = answer(world)
    assert mail.subject == "Done: 1 command of your mail"
    assert "1. EXTEND m1 12h" in mail.text
    assert "match m1:" in mail.text and "extended by 12 hours" in flat(mail.text)
    assert mail.message["In-Reply-To"] == sent  # threaded under the organizer's mail
    assert mail.message["Reply-To"] == command_address(world)
    assert mail.message["Auto-Submitted"] == "auto-replied"
    assert_readable(mail)
    [reply] = outbox_rows(world, kind="orders")
    assert reply.inbound_id == row.id and reply.to_addr == BOSS
    # kept with the text a reader sees of it, as every mail of ours (a reply is read against it)
    assert reply.shown and reply.shown == shown_text(reply.message)


def test_pause_then_resume_by_replying_to_the_answer(world):
    deadline = match(world).deadline
    order(world, "PAUSE m1: a holiday")
    world.tick(T1)
    assert match(world).status == "paused"
    assert mails(world, "alice", "The match is paused") and mails(world, "bob", "The match is paused")
    assert "paused" in flat(answer(world).text)
    # the organizer replies to the answer (which quotes the command back): only the new text is done
    world.client("boss").reply(answer(world), "RESUME m1", START + 11 * HOUR)
    world.tick(START + 11 * HOUR)
    assert match(world).status == "running" and match(world).deadline == deadline + 10 * HOUR
    (told,) = mails(world, "bob", "The match goes on")
    assert "moved on by 10 hours" in flat(told.text)
    assert [k for k in events(world) if k in ("pause", "resume")] == ["pause", "resume"]
    assert "resumed; its deadlines moved on by 10 hours" in flat(answer(world).text)


def test_pause_and_resume_a_whole_season(world):
    order(world, "pause season: the holidays")
    world.tick(T1)
    assert match(world).status == "paused"
    order(world, "Resume Season test", T1 + HOUR)
    world.tick(T1 + HOUR)
    assert match(world).status == "running"


def test_cancel_by_mail(world):
    order(world, "CANCEL m1 both players left the club")
    world.tick(T1)
    assert match(world).status == "cancelled"
    for key in ("alice", "bob"):
        (told,) = mails(world, key, "The match is cancelled")
        assert "both players left the club" in told.text


def test_forfeit_by_mail(world):
    order(world, "FORFEIT m1 bob: moved abroad")
    world.tick(T1)
    found = match(world)
    assert found.status == "finished" and found.result["outcome"] == {"alice": "win", "bob": "loss"}
    assert mails(world, "alice", "Bob forfeits the match") and mails(world, "bob", "You forfeit the match")
    assert "bob forfeits (moved abroad); the match is over" in flat(answer(world).text)


def test_substitute_by_mail(world):
    order(world, "SUBSTITUTE m1 bob carol Bob moved abroad")
    world.tick(T1)
    with world.store.unit_of_work() as session:
        seated = [seat.player.key for seat in session.scalar(select(Match).where(Match.key == "m1")).seats]
    assert seated == ["alice", "carol"]
    assert world.client("carol").all()  # the handover mail
    assert "carol takes over bob's seat" in flat(answer(world).text)


def test_adjust_announce_standings_and_status_in_one_mail(world):
    text = (
        "ADJUST alice cols +2 won the quiz\n"
        "announce season\n"
        "The final is on Sunday.\n"
        "\n"
        "Good luck!\n"
        "END\n"
        "ANNOUNCE m1\n"
        "To the match only.\n"
        "end\n"
        "STANDINGS\n"
        "STATUS\n"
    )
    order(world, text)
    world.tick(T1)
    assert last_row(world).status == "accepted"
    with world.store.unit_of_work() as session:
        assert season_balances(session, match(world).season_id)[("alice", "cols")] == 2
        assert list(session.scalars(select(SeasonEvent.kind).order_by(SeasonEvent.seq))) == ["adjust", "announce"]
    (adjusted,) = mails(world, "alice", "Your cols were adjusted")
    assert "won the quiz" in adjusted.text
    for key in ("alice", "bob", "carol"):
        (told,) = [m for m in mails(world, key, "An announcement") if "Sunday" in m.text]
        assert "The final is on Sunday.\n\nGood luck!" in told.text
        assert "END" not in told.text
    assert len([m for m in mails(world, "bob", "An announcement") if "match only" in m.text]) == 1
    assert not [m for m in mails(world, "carol", "An announcement") if "match only" in m.text]
    mail = answer(world)
    assert mail.subject == "Done: 5 commands of your mail"
    body = mail.text
    assert "player alice: cols 0 -> 2 (won the quiz)" in flat(body)
    assert "| The final is on Sunday." in body  # the text that went out, shown back
    assert "Standings of Test season" in body and "Alice (alice)" in body
    assert "m1  Stationary Roulette" in body  # the status, as `referee status` prints it
    assert "The organizer's record of Test season" in body  # ... with what this very mail did
    assert_readable(mail)


# ---------------------------------------------------------------------- never obeyed


NOT_THE_ORGANIZER = {
    "forged-from": {"frm": "Alice <alice@example.test>"},
    "stranger": {"frm": "eve@evil.test"},
    "name-only": {"frm": f'"{BOSS}" <eve@evil.test>'},
    "group": {"frm": f"bosses: {BOSS};"},
    "two-froms": {"frm": f"{BOSS}, eve@evil.test"},
    "dmarc-fail": {"extra": "Authentication-Results: mx.example.test; dmarc=fail header.from=example.test\r\n"},
}


@pytest.mark.parametrize("case", sorted(NOT_THE_ORGANIZER))
def test_a_mail_to_the_command_address_not_from_the_organizer_is_never_obeyed_nor_answered(world, case, caplog):
    kwargs = NOT_THE_ORGANIZER[case]
    before = len(outbox_rows(world))
    order(world, "CANCEL m1 forged", **kwargs)
    world.tick(T1)
    row = last_row(world)
    assert (row.status, row.rule) == ("ignored", "not-organizer")
    assert match(world).status == "running" and "cancel" not in events(world)
    assert len(outbox_rows(world)) == before  # nobody is answered: the From may be forged
    assert any("command address" in r.getMessage() and r.levelname == "WARNING" for r in caplog.records)


def test_an_unconfirmed_organizer_mail_is_not_obeyed_with_a_trusted_server(world):
    world.config.mail.trusted_authserv_id = ("mx.example.test",)
    order(world, "CANCEL m1 unconfirmed")
    order(
        world,
        "EXTEND m1 1h",
        T1 + HOUR,
        extra="Authentication-Results: mx.example.test; dmarc=pass header.from=example.test\r\n",
    )
    world.tick(T1 + HOUR)
    assert [(r.status, r.rule) for r in inbound_rows(world)] == [
        ("ignored", "not-organizer"),
        ("accepted", "organizer"),
    ]
    assert match(world).status == "running" and "extend" in events(world)


@pytest.mark.parametrize("how", ["tampered", "another-organizer", "general-address"])
def test_a_wrong_token_or_the_general_address_is_not_the_organizers(world, how):
    address = command_address(world)
    if how == "tampered":
        local, _, domain = address.partition("@")
        address = f"{local[:-1]}{'a' if local[-1] != 'a' else 'b'}@{domain}"
    elif how == "another-organizer":
        address = command_address(world, "eve@example.test")
    else:
        address = "referee@example.test"
    before = len(outbox_rows(world))
    order(world, "CANCEL m1 wrong address", to=address)
    world.tick(T1)
    row = last_row(world)
    assert row.status == "ignored" and row.rule == "unknown-sender"  # the normal treatment: a stranger
    assert match(world).status == "running"
    assert len(outbox_rows(world)) == before


def test_a_players_mail_cc_to_the_command_address_is_never_obeyed(world):
    """Alice writes to her own reply address and copies the command address (she saw it in a
    mail the organizer forwarded): neither her move nor the command is taken, and nobody is
    answered."""
    to = f"{reply_address(world, 'alice')}, {command_address(world)}"
    raw = raw_mail(frm="Alice <alice@example.test>", to=to, body="CANCEL m1 I am bored\n" + ROULETTE)
    deliver(world, raw, T1)
    world.tick(T1)
    assert (last_row(world).status, last_row(world).rule) == ("ignored", "not-organizer")
    assert match(world).status == "running" and "cancel" not in events(world)
    assert not outbox_rows(world, kind="error") and not outbox_rows(world, kind="orders")


def test_mail_forged_in_the_organizers_name_does_not_use_up_the_organizers_allowance(world):
    world.config.mails_per_sender_hour = 2
    for i in range(3):  # to the general address, in the organizer's name: a stranger's mail
        order(world, "CANCEL m1 forged", T1 + timedelta(minutes=i), to="referee@example.test")
    world.tick(T1 + timedelta(minutes=5))
    for i in range(3):
        order(world, f"EXTEND m1 {i + 1}h", T1 + timedelta(minutes=10 + i))
    world.tick(T1 + timedelta(minutes=15))
    assert [(r.status, r.rule) for r in inbound_rows(world)] == [
        ("ignored", "unknown-sender"),
        ("ignored", "unknown-sender"),
        ("ignored", "rate-limited"),
        ("accepted", "organizer"),
        ("accepted", "organizer"),
        ("ignored", "rate-limited"),  # the organizer's own allowance is bounded too
    ]
    assert events(world).count("extend") == 2


def test_the_organizer_may_copy_a_player_and_is_still_obeyed(world):
    to = f"{command_address(world)}, Alice <alice@example.test>"
    order(world, "EXTEND m1 2h", to=to)
    world.tick(T1)
    assert last_row(world).status == "accepted" and "extend" in events(world)


def test_commands_inside_a_quote_are_never_done(world):
    quoted = "\n\nOn Tue, 1 Dec 2026, Boss <boss@example.test> wrote:\n> CANCEL m1 quoted\n> EXTEND m1 99h\n"
    order(world, "STATUS" + quoted)
    order(world, quoted.strip() + "\n", T1 + timedelta(minutes=1))  # only the quote
    order(world, "STATUS\n\nDear organizer,\n\nCANCEL m1 an unmarked copy\n", T1 + timedelta(minutes=2))
    world.tick(T1 + timedelta(minutes=5))
    assert [r.status for r in inbound_rows(world)] == ["accepted", "rejected", "accepted"]
    assert match(world).status == "running"
    assert not {"cancel", "extend"} & set(events(world))
    assert "I found no command in your mail" in flat(
        [m for m in world.client("boss").all() if "Nothing done" in m.subject][0].text
    )


def test_an_html_mail_is_read_without_its_blockquote(world):
    raw = raw_mail(
        frm=f"Boss <{BOSS}>",
        to=command_address(world),
        body="<html><body><p>EXTEND m1 1h</p><div>On Tue, 1 Dec 2026 at 19:00, Referee "
        "&lt;referee@example.test&gt; wrote:</div><blockquote><p>CANCEL m1 quoted</p></blockquote></body></html>",
        message_id="<html@example.test>",
    ).replace(b"text/plain", b"text/html")
    deliver(world, raw, T1)
    world.tick(T1)
    assert last_row(world).status == "accepted"
    assert "extend" in events(world) and match(world).status == "running"


def test_a_reply_to_the_answer_quoting_it_does_only_the_new_commands(world):
    order(world, "EXTEND m1 1h")
    world.tick(T1)
    world.client("boss").reply(answer(world), "STATUS m1", T1 + HOUR)  # the answer quoted below
    world.tick(T1 + HOUR)
    assert events(world).count("extend") == 1
    assert answer(world).subject == "Done: 1 command of your mail"


def test_a_reply_quoting_or_copying_our_answer_does_nothing_of_what_it_echoes(world):
    """Our answer to a refused mail echoes its commands; a reply that quotes it, or pastes it
    without quote marks, does none of them."""
    order(world, "CANCEL m1 too early\nEXTEND m9 1h")
    world.tick(T1)
    refusal = answer(world)
    assert "line 1: CANCEL m1 too early" in refusal.text
    boss = world.client("boss")
    boss.reply(refusal, "", T1 + HOUR)  # the quote alone
    boss.reply(refusal, "STATUS", T1 + 2 * HOUR)  # a command above the quote
    boss.reply(refusal, "STATUS\n\n" + refusal.text, T1 + 3 * HOUR, quote=False)  # pasted, unmarked
    world.tick(T1 + 3 * HOUR)
    assert [r.status for r in inbound_rows(world)] == ["rejected", "rejected", "accepted", "accepted"]
    assert match(world).status == "running" and "cancel" not in events(world)


# ---------------------------------------------------------------------- refused: all or nothing


def test_a_refused_command_undoes_the_ones_before_it_and_is_quoted_back(world):
    deadline = match(world).deadline
    players_before = len([r for r in outbox_rows(world) if r.to_addr != BOSS])
    order(world, "EXTEND m1 12h\nADJUST alice cols +1 quiz\nCANCEL m9 a typo")
    world.send("alice", ROULETTE, T1 + timedelta(minutes=1))  # judged in the same batch, after it
    world.tick(T1 + timedelta(minutes=5))
    found = match(world)
    assert found.status == "running" and found.deadline == deadline  # the extension undone
    assert "extend" not in events(world)
    with world.store.unit_of_work() as session:  # and the adjustment
        assert ("alice", "cols") not in season_balances(session, found.season_id)
        assert not session.scalar(select(func.count()).select_from(SeasonEvent))
    rows = inbound_rows(world)
    assert [(r.status, r.rule) for r in rows] == [("rejected", "organizer"), ("accepted", None)]
    assert "no match 'm9'" in rows[0].note
    # the players heard of nothing but alice's receipt
    assert [r.kind for r in outbox_rows(world) if r.to_addr != BOSS][players_before:] == ["receipt"]
    mail = answer(world)
    assert mail.subject.startswith("Nothing done")
    text = mail.text
    assert "The command refused (line 3 of your mail):" in text
    assert "    | CANCEL m9 a typo" in text and "Why: no match 'm9'" in text
    assert "line 3: CANCEL m9 a typo   <- refused" in text
    assert "EXTEND <match> [STEP <step>] <duration>" in text  # the reference
    assert_readable(mail)


def test_a_command_refused_by_the_state_left_by_an_earlier_one_undoes_it(world):
    order(world, "PAUSE m1: a holiday\nEXTEND m1 2h")  # a paused match has no deadline to extend
    world.tick(T1)
    assert match(world).status == "running" and "pause" not in events(world)
    assert not mails(world, "alice", "paused")
    assert "only a running match has a deadline to extend" in flat(answer(world).text)


def test_a_line_not_understood_changes_nothing_and_is_answered_once(world):
    text = "Hi referee,\nEXTEND m1 12h\nthanks"
    order(world, text)
    world.tick(T1)
    assert "extend" not in events(world)
    mail = answer(world)
    body = mail.text
    assert "line 1: Hi referee," in body and "line 3: thanks" in body
    assert "not a command" in body
    assert "line 2: EXTEND m1 12h" in body  # what was read
    # the same text again (an autoresponder's loop): refused again, not answered again
    order(world, text, T1 + HOUR)
    world.tick(T1 + HOUR)
    assert [r.status for r in inbound_rows(world)] == ["rejected", "rejected"]
    assert len(outbox_rows(world, kind="orders")) == 1


def test_a_mail_with_too_many_commands_does_nothing(world):
    order(world, "\n".join(["EXTEND m1 1h"] * (MAX_ORDERS + 5)))
    world.tick(T1)
    assert "extend" not in events(world)
    assert f"more than {MAX_ORDERS} commands in one mail" in flat(answer(world).text)
    order(world, "\n".join(["EXTEND m1 1h"] * MAX_ORDERS), T1 + HOUR)
    world.tick(T1 + HOUR)
    assert events(world).count("extend") == MAX_ORDERS


def test_several_seasons_need_the_season_named(world):
    order(world, "ADJUST SEASON nope alice cols +1 quiz")
    world.tick(T1)
    assert "no season 'nope' is loaded" in flat(answer(world).text)


# ---------------------------------------------------------------------- time and crashes


def test_a_command_never_goes_back_before_the_matchs_latest_event(world):
    """A mail that arrived at T1 but is judged after a control given at T1 + 2h (say, by
    the command line while the mail waited unread): its command takes effect at T1 + 2h."""
    order(world, "EXTEND m1 1h", T1)  # delivered at T1, not yet read
    Controls(world.store, world.referee.book, world.referee.notices).extend("m1", None, HOUR, T1 + 2 * HOUR)
    world.tick(T1 + 3 * HOUR)
    with world.store.unit_of_work() as session:
        times = list(session.scalars(select(Event.at).where(Event.kind == "extend").order_by(Event.seq)))
    assert times == [T1 + 2 * HOUR, T1 + 2 * HOUR]


def test_a_crash_after_the_commands_redoes_them_with_the_decision(world, monkeypatch):
    notices = world.referee.notices
    real = notices.mail_organizer
    calls = []

    def crash_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the disk is full")
        return real(*args, **kwargs)

    monkeypatch.setattr(notices, "mail_organizer", crash_once)
    deadline = match(world).deadline
    order(world, "EXTEND m1 12h")
    world.tick(T1)
    assert len(calls) == 2  # rolled back whole, then judged again on its own
    assert match(world).deadline == deadline + 12 * HOUR  # once
    assert events(world).count("extend") == 1
    assert last_row(world).status == "accepted"
    with world.store.unit_of_work() as session:
        told = session.scalar(select(func.count()).select_from(Outbox).where(Outbox.kind == "organizer"))
    assert told == 2  # each player once


# ---------------------------------------------------------------------- authentication, unit


def test_authenticate_claims_the_organizer_only_for_the_signed_address_and_its_from():
    secret, organizer = b"s" * 32, "boss@example.org"
    address = tokens.organizer_address(secret, "referee", "example.org", organizer)

    def claim(frm: str, to: str = address, extra: str = "", **kwargs):
        raw = (f"{extra}From: {frm}\r\nTo: {to}\r\nSubject: x\r\n\r\nSTATUS\r\n").encode()
        return authenticate(
            parse_headers(raw),
            secret=secret,
            local="referee",
            domain="example.org",
            find_seat=lambda seat_id: pytest.fail(f"no seat is looked up ({seat_id})"),
            organizer=organizer,
            **kwargs,
        ).kind

    assert claim(organizer) == "organizer"
    assert claim(f"The Boss <{organizer.upper()}>") == "organizer"
    assert claim("eve@example.org") == "not-organizer"
    assert claim(organizer, extra="Authentication-Results: mx; dmarc=fail\r\n") == "not-organizer"
    assert claim(organizer, trusted_authserv_id=("mx.example.org",)) == "not-organizer"
    passed = "Authentication-Results: mx.example.org; dmarc=pass header.from=example.org\r\n"
    assert claim(organizer, extra=passed, trusted_authserv_id=("mx.example.org",)) == "organizer"
    assert claim(organizer, to="referee@example.org") == "general"
    other = tokens.organizer_address(secret, "referee", "example.org", "eve@example.org")
    assert claim(organizer, to=other) == "damaged"
    raw = f"From: {organizer}\r\nTo: {address}\r\n\r\n".encode()
    unset = authenticate(
        parse_headers(raw), secret=secret, local="referee", domain="example.org", find_seat=lambda _: None
    )
    assert unset.kind == "damaged"  # no organizer configured: no command address is genuine


# ---------------------------------------------------------------------- the parser, unit


def test_the_parser_reads_every_command():
    read = read_orders(
        "extend m1 STEP round-2 1d12h\n"
        "PAUSE m1 m2 : snow storm\n"
        "PAUSE SEASON s1: holidays\n"
        "RESUME m1 m2\n"
        "resume season\n"
        "CANCEL m1: both left\n"
        "FORFEIT m1 bob moved abroad\n"
        "SUBSTITUTE m1 bob carol moved\n"
        "ADJUST SEASON s1 alice chips -15 late fee\n"
        "ANNOUNCE SEASON\nLine one.\n\nLine two.\nEND\n"
        "STANDINGS s1\n"
        "STATUS\n"
        "-- \n"
        "CANCEL m1 below the signature\n"
    )
    assert not read.problems
    verbs = [o.verb for o in read.orders]
    assert verbs == [
        "extend",
        "pause",
        "pause",
        "resume",
        "resume",
        "cancel",
        "forfeit",
        "substitute",
        "adjust",
        "announce",
        "standings",
        "status",
    ]
    extend, pause, season_pause = read.orders[:3]
    assert (extend.match, extend.step, extend.duration) == ("m1", "round-2", timedelta(days=1, hours=12))
    assert (pause.matches, pause.reason) == (("m1", "m2"), "snow storm")
    assert (season_pause.whole_season, season_pause.season, season_pause.reason) == (True, "s1", "holidays")
    adjust = read.orders[8]
    assert (adjust.season, adjust.player, adjust.currency, adjust.amount) == ("s1", "alice", "chips", -15)
    assert read.orders[9].text == "Line one.\n\nLine two."


@pytest.mark.parametrize(
    "line, says",
    [
        ("Hello", "not a command"),
        ("EXTEND m1", "EXTEND <match>"),
        ("EXTEND m1 soon", "is not a duration"),
        ("PAUSE m1 a holiday", "after a colon"),
        ("RESUME SEASON s1 m1", "not both"),
        ("CANCEL m1", "a reason is told"),
        ("ADJUST alice gold +1 found it", "not a currency"),
        ("ADJUST alice cols lots found it", "not an amount"),
        ("ADJUST alice cols 1" + "0" * 20 + " x", "not an amount"),
        ("FORFEIT m/1 bob x", "is not a match id"),
        ("STATUS m1 m2", "STATUS <match>"),
        ("ANNOUNCE m1 hello everyone", "alone on its line"),
        ("ANNOUNCE m1", "the announcement is empty"),
    ],
)
def test_the_parser_refuses_a_line_saying_why(line, says):
    read = read_orders(line)
    assert not read.orders
    [problem] = read.problems
    assert problem.number == 1 and problem.line == line and says in problem.reason


def test_the_parser_is_linear_on_long_lines():
    def texts(n: int) -> list[str]:
        return [
            "PAUSE " + "m1 " * n + ": x",
            "ANNOUNCE SEASON\n" + "word " * n + "\nEND",
            "EXTEND " + "a" * (5 * n) + " 1h",
            "CANCEL m1 " + ":" * (5 * n),
            "x" * (5 * n),
            ("STATUS\n" * n),
        ]

    def reading(n: int):
        return lambda: [read_orders(text) for text in texts(n)]

    reading(1000)()  # warm up
    small, large = growth(reading(20_000), reading(160_000), 8 * 2.5)  # tests/timing.py
    assert large < 8 * small * 2.5, (small, large)  # 8 times the text, about 8 times the time
    read = read_orders("STATUS\n" * 100_000)  # bounded: reading stops at the first command too many
    assert len(read.orders) == MAX_ORDERS and len(read.problems) == 1
    read = read_orders("Hello\n" * 100_000)  # ... and after a few lines not understood
    assert len(read.problems) == MAX_PROBLEMS and read.stopped
