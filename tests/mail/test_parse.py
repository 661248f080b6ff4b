from __future__ import annotations

import hashlib
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.mail.parse import (
    decode_bytes,
    extract_text,
    html_to_text,
    parse_message,
    strip_quoted,
    unflow,
)

FIXTURES = Path(__file__).parent / "fixtures"
ORIGINAL_ID = "20240312101500.m17-r3-seat3.5c1e0a9b@pbem.example.org"


def load(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


# --------------------------------------------------------------------------- real-world replies


@pytest.mark.parametrize(
    ("fixture", "body"),
    [
        ("gmail_reply.eml", "BET: 40\nCALL: red\n\nBonne chance à tous !"),
        (
            "outlook_reply.eml",
            "BET: 25\nCALL: black\n\nI’m travelling on Thursday – please count this as final."
            "\n\nSeán",
        ),
        ("outlook_html_only.eml", "BET: 60\nCALL: red\n\nRegards,\nRenée Löfgren"),
        (
            "apple_mail_reply.eml",
            "BET: 10\nCALL: green\n\nIf the round gets extended I would like to keep exactly "
            "this bet and call, please do not apply the default action to my seat.",
        ),
        ("iphone_reply.eml", "BET: 5\nCALL: black"),
        ("thunderbird_reply.eml", "BET: 15\nCALL: red\n\nGrüße aus Köln"),
        ("base64_utf8.eml", "BET: 30\nCALL: red\n\nУдачи всем! ✓"),
        ("latin1_qp.eml", "BET: 20\nCALL: black\n\nMerci beaucoup, à bientôt.\nFrançois"),
        ("html_only.eml", 'BET: 35\nCALL: red\n\nTom & Jerry say "hi" <3 — see you\nnext round'),
        ("iso2022jp.eml", "BET: 50\nCALL: red\n\nよろしくお願いします。"),
        (
            "attachment.eml",
            "BET: 45\nCALL: black\n\nMy strategy notes are attached, for the archive.",
        ),
    ],
)
def test_body_is_what_the_player_wrote(fixture: str, body: str) -> None:
    inbound = parse_message(load(fixture))
    assert inbound.body == body
    assert "BET:\n" not in inbound.body + "\n"  # never the quoted blank form


def test_gmail_reply_fields() -> None:
    inbound = parse_message(load("gmail_reply.eml"))
    assert inbound.message_id == "CAF3x9Qk2pZ+Vd7wG4Z1h8y0sB6nXqLr5tYb1mF7uJ2c0wQ@mail.gmail.com"
    assert inbound.from_addr == "alice.martin@gmail.com"
    assert inbound.from_name == "Alice Martin"
    assert inbound.to_addrs == ("referee+3x4kqz7mfw2hbpd@pbem.example.org",)
    assert inbound.subject == "Re: [m-17] Round 3 of 10 — your move"
    assert inbound.in_reply_to == ORIGINAL_ID
    assert inbound.references == (ORIGINAL_ID,)


def test_gmail_raw_body_keeps_the_quote_for_error_replies() -> None:
    inbound = parse_message(load("gmail_reply.eml"))
    assert "> BET:" in inbound.raw_body
    assert "\u202f" not in inbound.raw_body  # Gmail's narrow no-break space before "AM"
    assert "10:15 AM Referee <" in inbound.raw_body


def test_outlook_windows_1252_headers_and_crlf() -> None:
    inbound = parse_message(load("outlook_reply.eml"))
    assert inbound.from_name == "O'Brien, Seán"
    assert inbound.from_addr == "sean.obrien@contoso.com"
    assert inbound.subject == "RE: [m-17] Round 3 of 10 – your move"
    assert "\r" not in inbound.raw_body
    assert inbound.message_id.endswith("@DB9PR07MB7771.eurprd07.prod.outlook.com")


def test_thunderbird_bottom_post_keeps_answer_below_quote() -> None:
    inbound = parse_message(load("thunderbird_reply.eml"))
    assert inbound.from_name == "Jürgen Weiß"
    assert inbound.raw_body.startswith("Am 12.03.24 um 10:15 schrieb Referee:\n> Round 3")
    assert "Jürgen Weiß\nhttps://" in inbound.raw_body  # signature only stripped from body


def test_recipients_come_from_to_cc_and_delivery_headers_without_duplicates() -> None:
    inbound = parse_message(load("base64_utf8.eml"))
    assert inbound.to_addrs == ("referee+ax3m9q2kzd7wbte@pbem.example.org", "d.petrov@yandex.ru")
    assert inbound.from_name == "Дмитрий Петров"
    assert inbound.subject == "Re: [m-17] Раунд 3"

    gmail = parse_message(load("gmail_reply.eml"))  # To and Delivered-To name the same address
    assert gmail.to_addrs == ("referee+3x4kqz7mfw2hbpd@pbem.example.org",)


def test_recipient_order_is_to_cc_delivered_to_x_original_to() -> None:
    raw = (
        b"X-Original-To: d@example.org\nDelivered-To: c@example.org\n"
        b"Cc: B@Example.org\nTo: Someone <a@example.org>, b@example.org\n"
        b"From: p@example.net\n\nhi\n"
    )
    assert parse_message(raw).to_addrs == (
        "a@example.org", "b@example.org", "c@example.org", "d@example.org",
    )


def test_iso_2022_jp_headers() -> None:
    inbound = parse_message(load("iso2022jp.eml"))
    assert inbound.from_name == "山田 太郎"
    assert inbound.subject == "Re: [m-17] 第3ラウンド"


def test_latin1_without_in_reply_to_still_has_references() -> None:
    inbound = parse_message(load("latin1_qp.eml"))
    assert inbound.from_name == "François Lefèvre"
    assert inbound.from_addr == "f.lefevre@orange.example"
    assert inbound.in_reply_to is None
    assert inbound.references == (ORIGINAL_ID,)


def test_attachments_and_attached_messages_are_ignored() -> None:
    inbound = parse_message(load("attachment.eml"))
    assert "999" not in inbound.raw_body
    assert "7777" not in inbound.raw_body


def test_text_attachments_before_the_body_are_skipped() -> None:
    raw = (
        b'Content-Type: multipart/mixed; boundary="b"\n\n'
        b"--b\nContent-Type: text/plain\n"
        b'Content-Disposition: attachment; filename="first.txt"\n\nBET: 999\n'
        b'--b\nContent-Type: text/plain; name="named.txt"\n\nBET: 888\n'
        b"--b\nContent-Type: text/plain\nContent-Disposition: inline\n\nBET: 5\n"
        b"--b--\n"
    )
    assert parse_message(raw).body == "BET: 5"


def test_html_is_used_only_without_a_plain_part() -> None:
    msg = EmailMessage()
    msg.set_content("plain version\n")
    msg.add_alternative("<p>html version</p>", subtype="html")
    assert extract_text(msg) == "plain version\n"


def test_blank_plain_part_falls_back_to_html() -> None:
    msg = EmailMessage()
    msg.set_content(" \n\n")
    msg.add_alternative("<p>BET: 5</p>", subtype="html")
    assert extract_text(msg) == "BET: 5"


# --------------------------------------------------------------------------- message ids


def test_missing_message_id_gets_a_stable_synthetic_one() -> None:
    raw = b"From: p@example.net\nSubject: hi\n\nBET: 1\n"
    expected = f"sha256-{hashlib.sha256(raw).hexdigest()}@referee.invalid"
    assert parse_message(raw).message_id == expected
    assert parse_message(raw).message_id == expected
    assert parse_message(raw + b"\n").message_id != expected


def test_message_id_brackets_and_comments() -> None:
    raw = (
        b"Message-ID:\n <abc.123@host.example> (generated)\n"
        b"In-Reply-To: <x@y> (Referee's message of Tue)\n"
        b"References: <r1@y>\n\t<r2@y> <r1@y>\n\n"
    )
    inbound = parse_message(raw)
    assert inbound.message_id == "abc.123@host.example"
    assert inbound.in_reply_to == "x@y"
    assert inbound.references == ("r1@y", "r2@y")


def test_message_id_without_brackets() -> None:
    assert parse_message(b"Message-ID: bare@host\n\n").message_id == "bare@host"


# --------------------------------------------------------------------------- garbage in


def test_garbage_fixture_gives_empty_fields() -> None:
    inbound = parse_message(load("garbage.eml"))
    assert inbound.message_id.startswith("sha256-")
    assert inbound.from_addr == ""
    assert inbound.in_reply_to is None
    assert inbound.body == ""


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\n\n\n",
        b"\xff\xfe\x00\x01" * 50,
        b"From nobody Tue Mar 12 10:00:00 2024\nnot a header\n\nbody",
        b"From:\nTo:\nMessage-ID: <>\nSubject: =?utf-8?b?????=\n\n",
        b"Content-Type: text/plain; charset=\"\"\n\ncaf\xe9",
        b"Content-Type: multipart/alternative\n\nno boundary at all\n",
        b"Content-Type: text/plain\nContent-Transfer-Encoding: base64\n\n!!!not base64===\n",
        b"Content-Type: text/plain; charset=utf-16\n\n\x00a\x00",
        b"Content-Type: message/rfc822\n\nFrom: x\n\ny",
        b"From: " + b"<" * 5000 + b"\n\n",
        b"Content-Type: multipart/mixed; boundary=b\n\n"
        + b"--b\nContent-Type: multipart/mixed; boundary=b\n\n" * 300,
    ],
)
def test_never_raises_on_broken_input(raw: bytes) -> None:
    inbound = parse_message(raw)
    assert isinstance(inbound.body, str)
    assert inbound.message_id


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_random_bytes(raw: bytes) -> None:
    parse_message(raw)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from([
            b"From: ", b"To: ", b"Subject: ", b"Message-ID: ", b"Content-Type: ",
            b"multipart/mixed; boundary=x", b"text/html", b"charset=", b"=?utf-8?q?", b"?=",
            b"<", b">", b"@", b"\n", b"\r\n", b"\n\n", b"--x\n", b"\xe9", b"\xff", b"\x00",
            b"<blockquote>", b"<br>", b"> ", b"On 1 Jan, X wrote:", b"-- \n", b"&#0;", b"&nbsp;",
        ]),
        max_size=60,
    )
)
def test_never_raises_on_mail_shaped_noise(chunks: list[bytes]) -> None:
    parse_message(b"".join(chunks))


# --------------------------------------------------------------------------- charsets


@pytest.mark.parametrize(
    ("data", "charset", "text"),
    [
        ("Grüße".encode("utf-8"), "utf-8", "Grüße"),
        ("Grüße".encode("latin-1"), "iso-8859-1", "Grüße"),
        ("l’été – 5€".encode("cp1252"), "windows-1252", "l’été – 5€"),
        ("l’été".encode("cp1252"), "iso-8859-1", "l’été"),  # declared Latin-1, sent cp1252
        ("Привет".encode("koi8-r"), "koi8-r", "Привет"),
        ("こんにちは".encode("iso2022_jp"), "iso-2022-jp", "こんにちは"),
        ("Grüße".encode("utf-8"), "x-no-such-charset", "Grüße"),  # unknown: UTF-8
        ("Grüße".encode("cp1252"), "utf-8", "Grüße"),  # wrong: falls back
        ("Grüße".encode("cp1252"), None, "Grüße"),
        (b"\x81\x8d\x8f\x90\x9d", "utf-8", "\x81\x8d\x8f\x90\x9d"),  # Latin-1 takes anything
        (b"a\\nb", "unicode_escape", "a\\nb"),  # never interpret escapes
    ],
)
def test_decode_bytes(data: bytes, charset: str | None, text: str) -> None:
    assert decode_bytes(data, charset) == text


def test_quoted_printable_with_wrong_charset_label() -> None:
    raw = (
        b"Content-Type: text/plain; charset=\"x-user-defined-bogus\"\n"
        b"Content-Transfer-Encoding: quoted-printable\n\nBET: 5 =E2=82=AC\n"
    )
    assert parse_message(raw).body == "BET: 5 €"


def test_invisible_characters_are_normalised() -> None:
    raw = (
        "Content-Type: text/plain; charset=utf-8\n\n"
        "\ufeffBET:\u00a020\u200b\r\nCALL: r\u200ded\r\n"
    )
    assert parse_message(raw.encode("utf-8")).body == "BET: 20\nCALL: red"


# --------------------------------------------------------------------------- format=flowed


def test_unflow_joins_soft_breaks_and_keeps_quote_depth() -> None:
    text = "a long \nline\n> quoted \n> continued\n>> deeper\n-- \nsig"
    assert unflow(text) == "a long line\n> quoted continued\n>> deeper\n-- \nsig"


def test_unflow_delsp_and_space_stuffing() -> None:
    assert unflow("abc \ndef", delsp=True) == "abcdef"
    assert unflow(" From the start") == "From the start"
    assert unflow("> a \n>> b") == "> a \n>> b"  # depth changed: not joined


# --------------------------------------------------------------------------- HTML


def test_html_to_text_blocks_breaks_entities_and_skipped_elements() -> None:
    html = (
        "<html><head><title>t</title><style>p{x:1}</style></head><body>"
        "<script>alert(1)</script><p>BET:&nbsp;&nbsp;20</p><div>CALL:   <b>red</b></div>"
        "<div><br></div><div>a&amp;b &lt;c&gt; &eacute;&#233;&#x2713;</div>"
        "<blockquote>quoted <div>form</div></blockquote><ul><li>one</li><li>two</li></ul>"
        "<table><tr><td>x</td><td>y</td></tr></table><pre>keep\nlines</pre></body></html>"
    )
    assert html_to_text(html) == "BET: 20\nCALL: red\n\na&b <c> éé✓\none\ntwo\nx y\nkeep\nlines"


def test_html_head_never_closed_is_not_swallowing_the_body() -> None:
    assert html_to_text("<head><meta charset=utf-8><body><p>BET: 3</p>") == "BET: 3"


def test_html_outlook_empty_paragraphs_are_blank_lines() -> None:
    html = "<p class=MsoNormal>A<o:p></o:p></p><p class=MsoNormal><o:p>&nbsp;</o:p></p><p>B</p>"
    assert html_to_text(html) == "A\n\nB"


def test_html_broken_markup_does_not_raise() -> None:
    assert html_to_text("<div <p>BET: 1</p><!-- unclosed").startswith("BET: 1\n")
    assert "BET: 2" in html_to_text("<![CDATA[ x <div>BET: 2")
    assert html_to_text("</div></blockquote></p><br/>BET: 3<//>") == "BET: 3"


# --------------------------------------------------------------------------- quote stripping


def test_strip_quoted_lines_any_nesting() -> None:
    text = "BET: 5\n> quoted\n  > indented\n>> nested\n> > spaced\nCALL: red"
    assert strip_quoted(text) == "BET: 5\nCALL: red"


@pytest.mark.parametrize(
    "attribution",
    [
        "On Tue, Mar 12, 2024 at 10:15 AM Referee <referee@pbem.example.org> wrote:",
        "On Tue, Mar 12, 2024 at 10:15 AM Referee <\nreferee@pbem.example.org> wrote:",
        "On Tue, Mar 12, 2024 at 10:15 AM A Very Long Display Name Of The Referee\n"
        "<referee@pbem.example.org> wrote:",
        "On 12 Mar 2024, at 10:15, Referee <referee@pbem.example.org> wrote:",
        "On 12/03/2024 10:15, Referee wrote:",
        "Am 12.03.2024 um 10:15 schrieb Referee <referee@pbem.example.org>:",
        "Am Di., 12. März 2024 um 10:15 Uhr schrieb Referee <\nreferee@pbem.example.org>:",
        "Le mar. 12 mars 2024 à 10:15, Referee <referee@pbem.example.org> a écrit :",
        "El mar, 12 mar 2024 a las 10:15, Referee (<referee@pbem.example.org>) escribió:",
    ],
)
def test_strip_attribution_followed_by_quote(attribution: str) -> None:
    text = f"BET: 5\n\n{attribution}\n\n> BET:\n> CALL:\n"
    assert strip_quoted(text) == "BET: 5"


def test_attribution_at_the_end_without_quote_is_stripped() -> None:
    # What HTML conversion leaves after dropping the <blockquote>.
    text = "BET: 5\n\nOn Tue, Mar 12, 2024 at 10:15 AM Referee <r@pbem.example.org> wrote:\n"
    assert strip_quoted(text) == "BET: 5"


def test_wrote_mid_text_is_kept() -> None:
    text = "As I wrote: BET 5\nOn reflection I wrote: nothing\nOn Monday I wrote:\nBET: 5"
    assert strip_quoted(text) == text


@pytest.mark.parametrize(
    "text",
    ["On 3 occasions I wrote:\nBET: 5", "On 12 March at 10:15 the referee wrote:\nBET: 5"],
)
def test_attribution_like_line_followed_by_own_text_is_kept(text: str) -> None:
    assert strip_quoted(text) == text


def test_attribution_before_an_unprefixed_quote_cuts() -> None:
    # Yahoo Mail's text part: the original is indented, not ">"-quoted.
    text = (
        "BET: 5\nCALL: red\n\n"
        "    On Tuesday, March 12, 2024 at 10:15:03 AM GMT+1, Referee"
        " <referee@pbem.example.org> wrote:\n\n"
        " Round 3 of 10\n\n BET:\n CALL:\n"
    )
    assert strip_quoted(text) == "BET: 5\nCALL: red"


def test_inline_answers_between_quotes_are_kept() -> None:
    text = (
        "On 12/03/2024 10:15, Referee wrote:\n> BET:\nBET: 10\n> CALL:\nCALL: red\n"
        "> Deadline: Wed\n"
    )
    assert strip_quoted(text) == "BET: 10\nCALL: red"


@pytest.mark.parametrize(
    "separator",
    [
        "-----Original Message-----",
        "----- Original Message -----",
        "-----Ursprüngliche Nachricht-----",
        "---------- Forwarded message ---------",
        "Begin forwarded message:",
        "________________________________\nFrom: Referee <r@pbem.example.org>",
        "From: Referee <r@pbem.example.org>\nSent: Tuesday, March 12, 2024 10:15 AM\n"
        "To: Player <p@example.net>\nSubject: Round 3",
        "*From:* Referee <r@pbem.example.org>\n*Date:* Tuesday, March 12, 2024\n"
        "*To:* Player\n*Subject:* Round 3",
        "Von: Referee <r@pbem.example.org>\nGesendet: Dienstag, 12. März 2024 10:15\n"
        "An: Spieler\nBetreff: Runde 3",
        "-- ",
        "--",
    ],
)
def test_cut_markers_drop_everything_after(separator: str) -> None:
    text = f"BET: 5\nCALL: red\n\n{separator}\nBET:\nCALL:\nwhatever follows\n"
    assert strip_quoted(text) == "BET: 5\nCALL: red"


def test_underscores_without_from_are_kept() -> None:
    text = "BET: 5\n________________________________\nCALL: red"
    assert strip_quoted(text) == text


def test_from_line_alone_is_kept() -> None:
    text = "From: my heart\nBET: 5"
    assert strip_quoted(text) == text


def test_double_dash_inside_a_line_is_kept() -> None:
    text = "BET: 5 -- final\n---\nCALL: red"
    assert strip_quoted(text) == text


@pytest.mark.parametrize(
    "footer",
    [
        "Sent from my iPhone",
        "Sent from my iPad",
        "Sent from my Android",
        "Get Outlook for iOS<https://aka.ms/o0ukef>",
        "Get Outlook for Android",
    ],
)
def test_mobile_footers_as_whole_lines(footer: str) -> None:
    assert strip_quoted(f"BET: 5\n\n{footer}\n") == "BET: 5"


def test_mobile_footer_words_inside_a_line_are_kept() -> None:
    text = "BET: 5 (Sent from my iPhone, sorry for typos)"
    assert strip_quoted(text) == text


def test_strip_quoted_trims_blank_runs() -> None:
    assert strip_quoted("\n\nBET: 5\n\n\n\nCALL: red  \n\n> q\n\n") == "BET: 5\n\nCALL: red"


def test_inbound_keeps_the_parsed_message() -> None:
    inbound = parse_message(load("gmail_reply.eml"))
    assert inbound.message.get_content_type() == "multipart/alternative"
    reparsed = message_from_bytes(load("gmail_reply.eml"), policy=policy.default)
    assert inbound.message["Message-ID"] == reparsed["Message-ID"]


@pytest.mark.parametrize("raw", [
    b"Message-ID: <abc@x.test>\r\nFrom: a@b.test\r\n\r\nbody",
    b"From: a@b.test\r\n\r\nno id here",
    b"\x00\xff garbage",
    b"",
], ids=["with-id", "without-id", "garbage", "empty"])
def test_message_id_of_matches_parse_message(raw):
    from referee.mail.parse import message_id_of
    assert message_id_of(raw) == parse_message(raw).message_id
