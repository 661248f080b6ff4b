"""The ``referee.toml`` that ``referee init`` writes (:func:`init_config_text`): Maildirs
both ways with the [imap] and [smtp] tables commented out, or a provider's servers in
force. Read back by :mod:`.service_file` like any other service file."""

from __future__ import annotations

import json

from referee.config.common import ConfigError

EXAMPLE_CONFIG = """\
# referee service configuration (deploy/example-referee.toml explains every option;
# docs/operations.md, "Mail set-up", the two ways of handling mail)
database = {database}
secret = "{secret}"          # signs players' reply addresses: keep it private

[mail]
address = "{address}"   # our address; players reply to referee+<token>@{domain}
name = "Referee"
{mail_lines}
[service]
poll_seconds = 30
{server_tables}"""

# [mail]'s transport keys: Maildirs on this machine (what `referee init` writes by default)
MAILDIR_LINES = """\
# Mail in and out. As written, Maildirs on this machine: your mail server delivers into
# inbox, and a relay sends on what is written into outbox (docs/operations.md, "Incoming
# mail", "Outgoing mail"). For a mailbox at a provider instead (IMAP in, SMTP out): change
# the next two lines to inbound = "imap" and outbound = "smtp", uncomment the [imap] and
# [smtp] tables at the end of this file, and run `referee check-mail`.
inbound = "maildir"                # "maildir", or "imap": read by IMAP ([imap] below)
outbound = "maildir"               # "maildir", or "smtp": sent by SMTP ([smtp] below)
inbox = "mail/inbox"               # the Maildir that receives the referee's mail (inbound = "maildir")
outbox = "mail/outbox"             # outbound mail is written here (outbound = "maildir")
per_address = true                 # one Maildir per recipient under outbox/
"""

# the same, for a mailbox at a provider (`referee init --imap-host ... --smtp-host ...`)
HOSTED_LINES = """\
# Mail in and out: {how}
# (docs/operations.md, "Mail set-up"). `referee check-mail` checks it.
inbound = "{inbound}"{inbound_pad}# "imap": read by IMAP ([imap] below); "maildir": from inbox
outbound = "{outbound}"{outbound_pad}# "smtp": sent by SMTP ([smtp] below); "maildir": into outbox
inbox = "mail/inbox"               # the Maildir mail is read from (inbound = "maildir" only)
outbox = "mail/outbox"             # the Maildirs mail is written into (outbound = "maildir" only)
per_address = true                 # one Maildir per recipient under outbox/
"""

IMAP_TABLE = """\
[imap]
host = "{host}"{host_pad}# the provider's IMAP server
{port}security = "{security}"{security_pad}# "tls": port 993; "starttls": port 143 (upgraded before the login)
username = "{user}"{user_pad}# the login, as a rule the mailbox's address
password_env = "{password_env}"  # the password is read from this environment variable
folder = "INBOX"                   # where mail arrives: nothing else may read or move it
processed_folder = "Processed"     # where mail is moved once stored (made when missing)
{ca_file}"""

SMTP_TABLE = """\
[smtp]
host = "{host}"{host_pad}# the provider's submission server
{port}security = "{security}"{security_pad}# "starttls": port 587; "tls": port 465
username = "{user}"{user_pad}# the login; remove this line for a server that asks for none (no SMTP AUTH)
password_env = "{password_env}"  # the password is read from this environment variable
{ca_file}"""

COMMENTED_TABLES = """\

# Reading by IMAP (with inbound = "imap"): remove the "# " in front of each line from
# [imap] to the next empty line, and put your provider's values in.
{imap}

# Sending by SMTP (with outbound = "smtp"): the same, from [smtp] to the next empty line.
# The password of both: set REFEREE_MAIL_PASSWORD in the environment (an app password).
{smtp}"""

PASSWORD_ENV = "REFEREE_MAIL_PASSWORD"  # where the tables `referee init` writes read the password


def _pad(value: str, width: int) -> str:
    """Spaces that line the comment after ``key = "value"`` up with the others (one at least)."""
    return " " * max(1, width - len(value))


def _server_table(template: str, host: str, port: int | None, security: str, user: str, ca_file: str | None) -> str:
    return template.format(
        host=host,
        host_pad=_pad(f'host = "{host}"', 35),
        port=f"port = {port}\n" if port is not None else "",
        security=security,
        security_pad=_pad(f'security = "{security}"', 35),
        user=user,
        user_pad=_pad(f'username = "{user}"', 35),
        password_env=PASSWORD_ENV,
        ca_file=f"ca_file = {json.dumps(ca_file)}           # the CA that signed the server's certificate\n"
        if ca_file
        else "",
    )


def _split_host(value: str, option: str, default_port: int) -> tuple[str, int | None]:
    """``HOST`` or ``HOST:PORT``: the port None when it is the default one."""
    host, colon, port = value.rpartition(":") if ":" in value else (value, "", "")
    if not colon:
        return value, None
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{option} {value!r}: give HOST or HOST:PORT, e.g. mail.example.org:587")
    return host, None if int(port) == default_port else int(port)


def init_config_text(
    database: str,
    secret: str,
    *,
    address: str | None = None,
    imap_host: str | None = None,
    smtp_host: str | None = None,
    user: str | None = None,
    ca_file: str | None = None,
    smtp_login: bool = True,
) -> str:
    """The ``referee.toml`` that ``referee init`` writes: Maildirs both ways with the [imap]
    and [smtp] tables commented out, ready to fill in; or, given an IMAP and/or an SMTP
    server, those tables in force (the password from ``$REFEREE_MAIL_PASSWORD``; with
    ``smtp_login`` false, an SMTP relay that takes mail without a login: no username).
    Security follows the port: IMAP TLS (993) unless the port is 143 (STARTTLS); SMTP
    STARTTLS (587) unless it is 465 (TLS)."""
    address = address or "referee@example.test"
    user = user or address
    database = json.dumps(database)  # a TOML basic string
    if imap_host is None and smtp_host is None:
        imap = _server_table(IMAP_TABLE, "imap.example.org", None, "tls", user, None)
        smtp = _server_table(SMTP_TABLE, "smtp.example.org", None, "starttls", user, None)
        tables = COMMENTED_TABLES.format(
            imap="\n".join(f"# {line}" for line in imap.splitlines()),
            smtp="\n".join(f"# {line}" for line in smtp.splitlines()) + "\n",
        )
        return EXAMPLE_CONFIG.format(
            database=database,
            secret=secret,
            address=address,
            domain=address.split("@")[-1],
            mail_lines=MAILDIR_LINES,
            server_tables=tables,
        )
    tables = ""
    if imap_host is not None:
        host, port = _split_host(imap_host, "--imap-host", 993)
        security = "starttls" if port == 143 else "tls"
        tables += "\n" + _server_table(IMAP_TABLE, host, port, security, user, ca_file)
    if smtp_host is not None:
        host, port = _split_host(smtp_host, "--smtp-host", 587)
        security = "tls" if port == 465 else "starttls"
        table = _server_table(SMTP_TABLE, host, port, security, user, ca_file)
        if not smtp_login:
            kept = [line for line in table.splitlines() if not line.startswith(("username = ", "password_env = "))]
            kept.insert(3, "# no username: the server takes mail without a login (no SMTP AUTH)")
            table = "\n".join(kept) + "\n"
        tables += "\n" + table
    inbound = "imap" if imap_host is not None else "maildir"
    outbound = "smtp" if smtp_host is not None else "maildir"
    how = {
        ("imap", "smtp"): "a mailbox at a provider, read by IMAP and sent from by SMTP",
        ("imap", "maildir"): "read by IMAP; written into Maildirs for a relay to send",
        ("maildir", "smtp"): "read from a Maildir your mail server delivers into; sent by SMTP",
    }[inbound, outbound]
    return EXAMPLE_CONFIG.format(
        database=database,
        secret=secret,
        address=address,
        domain=address.split("@")[-1],
        mail_lines=HOSTED_LINES.format(
            how=how,
            inbound=inbound,
            inbound_pad=_pad(f'inbound = "{inbound}"', 35),
            outbound=outbound,
            outbound_pad=_pad(f'outbound = "{outbound}"', 35),
        ),
        server_tables=tables,
    )
