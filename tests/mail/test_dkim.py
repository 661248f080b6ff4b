"""DKIM signing (referee.mail.dkim) and its configuration ([dkim] in referee.toml): a signed
mail verifies against the public key, relaxed/relaxed survives rewrapping on the way, a key
that cannot sign is refused at load with one line."""

from __future__ import annotations

import base64
from pathlib import Path

import dkim
import pytest
from dkim.crypto import parse_pem_private_key

from referee.config import ConfigError, load_service_config
from referee.mail.dkim import DkimError, DkimSigner, check_headers, load_private_key

KEYS = Path(__file__).parent / "dkim_keys"
KEY = KEYS / "dkim-test-key.pem"  # PKCS#8, as openssl genrsa writes it
KEY_PKCS1 = KEYS / "dkim-test-key-pkcs1.pem"
KEY_512 = KEYS / "dkim-test-key-512.pem"

MESSAGE = (
    b"From: Referee <referee@example.org>\r\n"
    b"To: alice@example.test\r\n"
    b"Subject: [Stationary Roulette m1] Round 1 is open\r\n"
    b"Date: Tue, 01 Dec 2026 18:00:00 +0000\r\n"
    b"Message-ID: <step.m1.1@example.org>\r\n"
    b"MIME-Version: 1.0\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"Content-Transfer-Encoding: 7bit\r\n"
    b"Auto-Submitted: auto-generated\r\n"
    b"\r\n"
    b"Dear Alice,\r\n\r\nRound 1 is open.\r\n"
)


def _der(tag: int, body: bytes) -> bytes:
    size = len(body)
    length = (
        bytes([size])
        if size < 128
        else bytes([0x80 | (size.bit_length() + 7) // 8]) + size.to_bytes((size.bit_length() + 7) // 8, "big")
    )
    return bytes([tag]) + length + body


def dns_record(key_file: Path) -> bytes:
    """The TXT record of the key's public half (what <selector>._domainkey.<domain> publishes):
    the RSAPublicKey (modulus, exponent) in DER, as openssl rsa -RSAPublicKey_out writes it."""
    private = parse_pem_private_key(key_file.read_bytes())
    numbers = (private["modulus"], private["publicExponent"])
    public = _der(0x30, b"".join(_der(0x02, n.to_bytes(n.bit_length() // 8 + 1, "big")) for n in numbers))
    return b"v=DKIM1; k=rsa; p=" + base64.b64encode(public)


def dnsfunc_for(key_file: Path, name: bytes = b"s1._domainkey.example.org."):
    record = dns_record(key_file)

    def lookup(query: bytes, timeout: float = 5) -> bytes | None:
        return record if query == name else None

    return lookup


def signer(key_file: Path = KEY, **kwargs) -> DkimSigner:
    return DkimSigner("s1", "example.org", load_private_key(key_file), **kwargs)


@pytest.mark.parametrize("key_file", [KEY, KEY_PKCS1], ids=["pkcs8", "pkcs1"])
def test_a_signed_mail_verifies_against_the_public_key(key_file):
    signed = signer(key_file).sign(MESSAGE)
    assert signed.startswith(b"DKIM-Signature: ") and signed.endswith(MESSAGE)
    assert dkim.verify(signed, dnsfunc=dnsfunc_for(key_file))
    head = signed.split(b"\r\n\r\n", 1)[0]
    assert b"a=rsa-sha256" in head and b"c=relaxed/relaxed" in head and b"d=example.org" in head
    assert b"s=s1" in head
    assert all(len(line) <= 998 for line in signed.split(b"\r\n"))


def test_the_signature_survives_what_relays_do_and_not_a_changed_mail():
    signed = signer().sign(MESSAGE)
    lookup = dnsfunc_for(KEY)
    # a relay prepends trace headers, refolds a header and adds trailing whitespace: relaxed holds
    relayed = b"Received: from mx by relay; Tue, 1 Dec 2026 18:00:01 +0000\r\nReturn-Path: <b@example.org>\r\n" + (
        signed.replace(b"Subject: [Stationary", b"Subject:  [Stationary").replace(b"is open.\r\n", b"is open.  \r\n")
    )
    assert dkim.verify(relayed, dnsfunc=lookup)
    assert not dkim.verify(signed.replace(b"Round 1 is open.", b"Round 2 is open."), dnsfunc=lookup)
    assert not dkim.verify(signed.replace(b"alice@example.test", b"eve@example.test"), dnsfunc=lookup)
    # From is signed twice: a second From added on the way breaks the signature
    assert not dkim.verify(b"From: eve@evil.test\r\n" + signed, dnsfunc=lookup)
    # it names its selector and domain: a key published under another name is not it
    assert not dkim.verify(signed, dnsfunc=dnsfunc_for(KEY, name=b"s2._domainkey.example.org."))


def test_signing_leaves_the_message_as_it_was_and_a_copy_of_the_mail_is_signed():
    from referee.mail.transport import OutboundMail

    original = bytes(MESSAGE)
    mail = OutboundMail("step:1:round-1:alice", "referee@example.org", ("alice@example.test",), MESSAGE)
    signed = signer().sign_mail(mail)
    assert MESSAGE == original and mail.data is MESSAGE
    assert signed.data.endswith(MESSAGE) and signed.data.startswith(b"DKIM-Signature:")
    assert (signed.key, signed.sender, signed.recipients) == (mail.key, mail.sender, mail.recipients)


def test_the_headers_to_sign_may_be_chosen():
    signed = signer(headers=check_headers(["From", "Subject", "Date"])).sign(MESSAGE)
    head = signed.split(b"\r\n\r\n", 1)[0].replace(b"\r\n ", b" ")
    assert b"h=from : subject : date;" in head
    lookup = dnsfunc_for(KEY)
    assert dkim.verify(signed, dnsfunc=lookup)
    assert dkim.verify(signed.replace(b"alice@example.test", b"bob@example.test"), dnsfunc=lookup)  # To unsigned


@pytest.mark.parametrize(
    "names, message",
    [
        (["Subject"], 'must include "From"'),
        (["From", "Received"], '"received" changes on the way'),
        (["From", "Bad Name"], "is not a header name"),
        (["From", "X:Y"], "is not a header name"),
    ],
)
def test_a_wrong_list_of_headers_is_refused(names, message):
    with pytest.raises(DkimError, match=message):
        check_headers(names)


# ---------------------------------------------------------------------------- configuration


def write_config(tmp_path: Path, dkim_table: str, key: Path | None = KEY) -> Path:
    if key is not None:
        (tmp_path / "keys").mkdir(exist_ok=True)
        (tmp_path / "keys" / "dkim.pem").write_bytes(key.read_bytes())
    path = tmp_path / "referee.toml"
    path.write_text('secret = "test-secret-0123456789abcdef"\n[mail]\naddress = "referee@example.org"\n' + dkim_table)
    return path


def test_the_dkim_table_is_read_with_paths_relative_to_the_file(tmp_path):
    config = load_service_config(
        write_config(tmp_path, '[dkim]\nselector = "s1"\nprivate_key_file = "keys/dkim.pem"\n')
    )
    assert config.dkim is not None
    assert (config.dkim.selector, config.dkim.domain, config.dkim.headers) == ("s1", "example.org", None)
    assert config.dkim.key_file == (tmp_path / "keys" / "dkim.pem").resolve()
    assert b"PRIVATE KEY" not in repr(config.dkim).encode()  # the key is never shown
    signed = DkimSigner.from_settings(config.dkim).sign(MESSAGE)
    assert dkim.verify(signed, dnsfunc=dnsfunc_for(KEY))


def test_without_a_dkim_table_nothing_is_signed(tmp_path):
    assert load_service_config(write_config(tmp_path, "", key=None)).dkim is None


def test_domain_and_headers_may_be_set(tmp_path):
    table = (
        '[dkim]\nselector = "mail2026"\ndomain = "Mail.Example.ORG"\nprivate_key_file = "keys/dkim.pem"\n'
        'headers = ["From", "To", "Subject", "Date", "Message-ID"]\n'
    )
    config = load_service_config(write_config(tmp_path, table))
    assert config.dkim.domain == "mail.example.org"
    assert config.dkim.headers == ("from", "to", "subject", "date", "message-id")


@pytest.mark.parametrize(
    "table, key, message",
    [
        ('selector = "s1"\n', KEY, "missing required key 'private_key_file'"),
        ('private_key_file = "keys/dkim.pem"\n', KEY, "missing required key 'selector'"),
        ('selector = "s1"\nprivate_key_file = "keys/nope.pem"\n', KEY, r"keys/nope.pem: no such file"),
        ('selector = "s1"\nprivate_key_file = "keys"\n', KEY, r"private_key_file .*keys: "),
        ('selector = "s 1"\nprivate_key_file = "keys/dkim.pem"\n', KEY, "selector 's 1' must be DNS labels"),
        ('selector = "s1"\ndomain = "not a domain"\nprivate_key_file = "keys/dkim.pem"\n', KEY, "is not a domain"),
        ('selector = "s1"\nprivate_key_file = "keys/dkim.pem"\nheaders = ["To"]\n', KEY, 'must include "From"'),
        ('selector = "s1"\nprivate_key_file = "keys/dkim.pem"\nheaders = []\n', KEY, "must be a list"),
        ('selector = "s1"\nprivate_key_file = "keys/dkim.pem"\nkey = "x"\n', KEY, "unknown key 'key'"),
        ('selector = "s1"\nprivate_key_file = "keys/dkim.pem"\n', KEY_512, "has 512 bits"),
    ],
)
def test_a_dkim_table_that_cannot_sign_is_one_config_error(tmp_path, table, key, message):
    with pytest.raises(ConfigError, match=message) as info:
        load_service_config(write_config(tmp_path, "[dkim]\n" + table, key=key))
    assert str(info.value).startswith(str(tmp_path / "referee.toml"))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "no -----BEGIN line"),
        (b"just some text\n", "no -----BEGIN line"),
        (b"-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n", "not an RSA private key"),
        (b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n", "is encrypted"),
        (b"-----BEGIN PRIVATE KEY-----\n" + b"A" * 70000 + b"\n", "larger than"),
    ],
    ids=["empty", "text", "garbage", "encrypted", "huge"],
)
def test_a_key_file_that_is_no_key_is_said_so(tmp_path, content, message):
    path = write_config(tmp_path, '[dkim]\nselector = "s1"\nprivate_key_file = "keys/dkim.pem"\n')
    (tmp_path / "keys" / "dkim.pem").write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        load_service_config(path)


def test_a_key_with_crlf_line_ends_is_read(tmp_path):
    path = write_config(tmp_path, '[dkim]\nselector = "s1"\nprivate_key_file = "keys/dkim.pem"\n')
    (tmp_path / "keys" / "dkim.pem").write_bytes(KEY.read_bytes().replace(b"\n", b"\r\n"))
    config = load_service_config(path)
    assert dkim.verify(DkimSigner.from_settings(config.dkim).sign(MESSAGE), dnsfunc=dnsfunc_for(KEY))


def test_check_mail_signs_its_test_mail(tmp_path):
    import asyncio

    from referee.mailcheck import check_mail

    config = load_service_config(
        write_config(tmp_path, '[dkim]\nselector = "s1"\nprivate_key_file = "keys/dkim.pem"\n')
    )
    results = asyncio.run(check_mail(config, "you@example.net"))
    assert any(ok and "DKIM-signed: d=example.org, s=s1" in text for ok, text in results), results
    [path] = list((config.mail.outbox / "you@example.net" / "new").iterdir())
    assert dkim.verify(path.read_bytes(), dnsfunc=dnsfunc_for(KEY))


def test_the_dkim_example_in_example_referee_toml_loads(tmp_path, monkeypatch):
    """The commented [dkim] block of deploy/example-referee.toml, switched on, with its key."""
    monkeypatch.delenv("REFEREE_SECRET", raising=False)
    text = (Path(__file__).resolve().parents[2] / "deploy" / "example-referee.toml").read_text()
    lines = text.splitlines()
    start = lines.index("#   [dkim]")
    block = []
    for line in lines[start:]:
        if not line.startswith("#   "):
            break
        block.append(line[4:])
    (tmp_path / "dkim.pem").write_bytes(KEY.read_bytes())
    (tmp_path / "referee.toml").write_text(text + "\n" + "\n".join(block) + "\n")
    config = load_service_config(tmp_path / "referee.toml")
    assert (config.dkim.selector, config.dkim.domain) == ("referee2026", "example.org")
    assert config.dkim.key_file == (tmp_path / "dkim.pem").resolve()
    assert config.mails_per_sender_hour == 60
