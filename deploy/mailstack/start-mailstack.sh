#!/bin/bash
# start-mailstack.sh DIR  -- start a loopback-only Dovecot (IMAP+LMTP) + Postfix (SMTP) test stack
#   (plain text and TLS: STARTTLS on the IMAP and SMTP ports, implicit TLS on IMAPS_PORT and
#   SMTPS_PORT, a certificate for 127.0.0.1/localhost from a throwaway CA: DIR/tls/ca.pem)
# stop-mailstack.sh  DIR  -- (same file, invoked as stop-mailstack.sh or with "stop" as $2) stop it
# start-mailstack.sh DIR stop-dovecot  -- stop Dovecot alone (Postfix queues what arrives meanwhile);
#   START_POSTFIX=0 start-mailstack.sh DIR  starts it again on the same ports
# Needs (Debian 12): dovecot-imapd dovecot-lmtpd postfix (deploy/mailstack/install-mailstack.sh);
# must run as root (Postfix master needs root). Every config, log, queue and mailbox lives under DIR;
# nothing in /etc is read or changed, and mail only goes to @MAIL_DOMAIN (nothing leaves the machine).
# Env overrides: IMAP_PORT LMTP_PORT SMTP_PORT IMAPS_PORT SMTPS_PORT MAIL_DOMAIN MAIL_USERS MAIL_PASSWORD
#   VMAIL_UID START_POSTFIX
# Exit status of start: 0 up, 1 failed, 2 cannot run here (not root / packages missing).
set -euo pipefail
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin   # dovecot, postfix live in sbin (not on a user's PATH)

DIR=${1:?usage: $0 DIR [start|stop]}
ACTION=${2:-start}
case "$(basename "$0")" in stop-mailstack*) ACTION=stop ;; esac
mkdir -p "$DIR"; DIR=$(cd "$DIR" && pwd)

IMAP_PORT=${IMAP_PORT:-10143}
LMTP_PORT=${LMTP_PORT:-10024}
SMTP_PORT=${SMTP_PORT:-10025}
IMAPS_PORT=${IMAPS_PORT:-10993}       # IMAP over implicit TLS
SMTPS_PORT=${SMTPS_PORT:-10465}       # SMTP over implicit TLS (submissions, "wrappermode")
TLS=$DIR/tls                          # ca.pem (what clients trust), server.pem, server.key
MAIL_DOMAIN=${MAIL_DOMAIN:-example.test}
MAIL_USERS=${MAIL_USERS:-"referee alice bob"}
MAIL_PASSWORD=${MAIL_PASSWORD:-secret}
VMAIL_UID=${VMAIL_UID:-5000}          # Dovecot refuses mail access as root; any non-root uid works
START_POSTFIX=${START_POSTFIX:-1}
DOVECOT_PID=$DIR/run/master.pid
POSTFIX_PID=$DIR/postfix-queue/pid/master.pid

alive() {  # pid alive and not a zombie
  [ -n "${1:-}" ] && [ -d "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

stop_pidfile() {  # stop_pidfile NAME FILE  -- TERM the pid in FILE, wait, then KILL
  local name=$1 f=$2 pid i
  [ -f "$f" ] || { echo "$name: no pid file"; return 0; }
  pid=$(tr -dc 0-9 < "$f")
  if alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do alive "$pid" || break; sleep 0.05; done
    if alive "$pid"; then echo "$name: pid $pid ignored TERM, sending KILL"; kill -KILL "$pid" 2>/dev/null || true; fi
    echo "$name: stopped pid $pid"
  else
    echo "$name: pid $pid not running"
  fi
  rm -f "$f"
}

wait_port() {  # wait_port PORT NAME  -- until a TCP connect to 127.0.0.1:PORT succeeds (max 10 s)
  local i
  for i in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "$2 did not open 127.0.0.1:$1" >&2; return 1
}

make_tls() {  # a throwaway CA and a server certificate for 127.0.0.1 and localhost, made once per DIR
  [ -s "$TLS/ca.pem" ] && [ -s "$TLS/server.pem" ] && [ -s "$TLS/server.key" ] && return 0
  command -v openssl >/dev/null || { echo "missing: openssl (apt-get install openssl)" >&2; return 2; }
  mkdir -p "$TLS"; chmod 0755 "$TLS"
  # a config of our own: nothing from /etc/ssl/openssl.cnf decides what the certificates hold
  cat > "$TLS/openssl.cnf" <<CNF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = placeholder
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
CNF
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  (
    umask 077   # the private keys: root only (dovecot and postfix read them as root at start)
    openssl req -config "$TLS/openssl.cnf" -x509 "${ec[@]}" -keyout "$TLS/ca.key" -out "$TLS/ca.pem" \
      -days 30 -subj "/CN=mailstack throwaway test CA $(date -u +%Y%m%dT%H%M%S)" -extensions ca &&
    openssl req -config "$TLS/openssl.cnf" -new "${ec[@]}" -keyout "$TLS/server.key" -out "$TLS/server.csr" \
      -subj "/CN=localhost" &&
    openssl x509 -req -in "$TLS/server.csr" -CA "$TLS/ca.pem" -CAkey "$TLS/ca.key" \
      -set_serial "0x$(openssl rand -hex 8)" -days 30 -extfile "$TLS/openssl.cnf" -extensions server \
      -out "$TLS/server.pem"
  ) >"$DIR/log/tls.log" 2>&1 || { cat "$DIR/log/tls.log" >&2; return 1; }
  chmod 0644 "$TLS/ca.pem" "$TLS/server.pem"
  rm -f "$TLS/server.csr" "$TLS/ca.key"   # nothing more is ever signed with it
}

INSTANCE=mailstack-$(echo "$DIR" | md5sum | cut -c1-8)   # dovecot's instance_name: its processes' titles

stop_clients() {  # the IMAP sessions dovecot's master leaves running after it exits: a restart
  local i       # must drop every client's connection, as a real server restart does
  pkill -TERM -f "^dovecot-$INSTANCE/" 2>/dev/null || true
  for i in $(seq 1 100); do pgrep -f "^dovecot-$INSTANCE/" >/dev/null || return 0; sleep 0.05; done
  pkill -KILL -f "^dovecot-$INSTANCE/" 2>/dev/null || true
}

stop_all() {  # postfix first (it delivers into dovecot's LMTP), whatever START_POSTFIX says now
  stop_pidfile postfix "$POSTFIX_PID"
  stop_pidfile dovecot "$DOVECOT_PID"
  stop_clients
}

if [ "$ACTION" = stop ]; then
  stop_all
  exit 0
fi
if [ "$ACTION" = stop-dovecot ]; then  # an IMAP server restart, half one: every IMAP client cut off
  stop_pidfile dovecot "$DOVECOT_PID"
  stop_clients
  exit 0
fi
[ "$ACTION" = start ] || { echo "usage: $0 DIR [start|stop|stop-dovecot]" >&2; exit 2; }

[ "$(id -u)" = 0 ] || { echo "must run as root (postfix master; dovecot privilege drop)" >&2; exit 2; }
missing=""
for b in dovecot postfix; do command -v "$b" >/dev/null || missing="$missing $b"; done
[ -x /usr/lib/dovecot/lmtp ] || missing="$missing dovecot-lmtpd"
[ -z "$missing" ] || { echo "missing:$missing; install with: bash deploy/mailstack/install-mailstack.sh" >&2; exit 2; }
# mail uid and the postfix user must be able to traverse DIR and every parent (pytest tmp_path /
# mktemp -d are 0700 -> fails). Use a dir like /tmp/mailstack-XXXX.
p=$DIR; chmod 0755 "$DIR"
while [ "$p" != / ]; do p=$(dirname "$p"); [ -x "$p" ] && [ "$(( 0$(stat -c %a "$p") & 01 ))" != 0 ] ||
  { echo "parent dir $p is not world-traversable (o+x); choose another DIR" >&2; exit 1; }; done
alive "$(cat "$DOVECOT_PID" 2>/dev/null || true)" && { echo "already running in $DIR" >&2; exit 1; }

T0=$(date +%s.%N)
# a start that fails half-way stops what it already started (dovecot up, postfix failed, ...)
trap 'rc=$?; if [ $rc != 0 ]; then echo "start failed (exit $rc); stopping what was started" >&2; stop_all >&2; fi' EXIT
mkdir -p "$DIR/run" "$DIR/state" "$DIR/mail" "$DIR/log" "$DIR/postfix" "$DIR/postfix-queue" "$DIR/postfix-data"
chown "$VMAIL_UID:$VMAIL_UID" "$DIR/mail"
make_tls
rm -f "$DOVECOT_PID"

: > "$DIR/users"; : > "$DIR/postfix/vmailbox"
for u in $MAIL_USERS; do
  echo "$u@$MAIL_DOMAIN:{PLAIN}$MAIL_PASSWORD::::::" >> "$DIR/users"
  echo "$u@$MAIL_DOMAIN OK" >> "$DIR/postfix/vmailbox"
done
# lost@ Postfix accepts (250 at RCPT) but Dovecot has no such user: its LMTP refuses it later
# (550 5.1.1), and Postfix sends the sender a delivery report (DSN): a bounce
echo "lost@$MAIL_DOMAIN OK" >> "$DIR/postfix/vmailbox"
printf '%s\n' "busy@$MAIL_DOMAIN 450 4.2.1 mailbox busy, try again later" \
  "gone@$MAIL_DOMAIN 550 5.1.1 no such user here" > "$DIR/postfix/recipient_access"
chgrp dovecot "$DIR/users"; chmod 0640 "$DIR/users"   # auth process runs as user dovecot

cat > "$DIR/dovecot.conf" <<EOF
# standalone: no !include of /etc/dovecot/conf.d
instance_name = $INSTANCE
base_dir = $DIR/run
state_dir = $DIR/state
log_path = $DIR/log/dovecot.log
protocols = imap lmtp
listen = 127.0.0.1
# TLS: STARTTLS on the imap port, implicit TLS on imaps; plaintext logins stay allowed (tests)
ssl = yes
ssl_cert = <$TLS/server.pem
ssl_key = <$TLS/server.key
ssl_min_protocol = TLSv1.2
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_uid = $VMAIL_UID
mail_gid = $VMAIL_UID
mail_location = maildir:$DIR/mail/%d/%n/Maildir
mailbox_idle_check_interval = 1 secs
recipient_delimiter = +
namespace inbox {
  inbox = yes
  separator = /
}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $DIR/users
}
userdb {
  driver = passwd-file
  args = username_format=%u $DIR/users
  default_fields = home=$DIR/mail/%d/%n
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $IMAP_PORT
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = $IMAPS_PORT
    ssl = yes
  }
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = $LMTP_PORT
  }
  unix_listener lmtp {
    mode = 0666
  }
}
EOF
# daemonizes; pid -> $DIR/run/master.pid. Redirect stdio: daemons otherwise keep the caller's
# stdout/stderr pipe open and subprocess.run(capture_output=True) hangs until they exit.
dovecot -c "$DIR/dovecot.conf" </dev/null >>"$DIR/log/dovecot-start.err" 2>&1 ||
  { cat "$DIR/log/dovecot-start.err" >&2; exit 1; }

if [ "$START_POSTFIX" = 1 ]; then
  PF=$DIR/postfix
  chown postfix:postfix "$DIR/postfix-data"
  cat > "$PF/main.cf" <<EOF
compatibility_level = 3.6
queue_directory = $DIR/postfix-queue
data_directory = $DIR/postfix-data
maillog_file = $DIR/log/postfix.log
maillog_file_prefixes = $DIR
mail_owner = postfix
setgid_group = postdrop
myhostname = mailstack.localhost
mydomain = localhost
myorigin = \$myhostname
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
# addresses that answer as real servers sometimes do, for tests of the referee's outbox:
# busy@ a temporary failure (450), gone@ a permanent one (550)
smtpd_recipient_restrictions = check_recipient_access texthash:$PF/recipient_access, permit_mynetworks, reject_unauth_destination
virtual_mailbox_domains = $MAIL_DOMAIN
# referee+<token>@ is the referee's mailbox (its personal reply addresses)
recipient_delimiter = +
virtual_mailbox_maps = texthash:$PF/vmailbox
virtual_transport = lmtp:inet:127.0.0.1:$LMTP_PORT
default_transport = error:outbound mail disabled in test stack
relay_transport = error:outbound mail disabled in test stack
local_transport = error:local delivery disabled in test stack
alias_maps =
alias_database =
biff = no
smtpd_banner = \$myhostname ESMTP mailstack
smtp_dns_support_level = disabled
smtpd_peername_lookup = no
# STARTTLS offered on the smtpd port (may: plain text still accepted), implicit TLS on smtps
smtpd_tls_security_level = may
smtpd_tls_cert_file = $TLS/server.pem
smtpd_tls_key_file = $TLS/server.key
smtpd_tls_protocols = >=TLSv1.2
smtpd_tls_mandatory_protocols = >=TLSv1.2
smtpd_tls_loglevel = 1
smtp_tls_security_level = none
message_size_limit = 52428800
smtpd_client_connection_rate_limit = 0
smtpd_client_message_rate_limit = 0
lmtp_destination_concurrency_limit = 20
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 5s
EOF
  cat > "$PF/master.cf" <<EOF
127.0.0.1:$SMTP_PORT inet n - n - - smtpd
127.0.0.1:$SMTPS_PORT inet n - n - - smtpd -o smtpd_tls_wrappermode=yes -o smtpd_tls_security_level=encrypt
tlsmgr    unix  - - n 1000? 1 tlsmgr
pickup    unix  n - n 60 1 pickup
cleanup   unix  n - n - 0 cleanup
qmgr      unix  n - n 300 1 qmgr
rewrite   unix  - - n - - trivial-rewrite
bounce    unix  - - n - 0 bounce
defer     unix  - - n - 0 bounce
trace     unix  - - n - 0 bounce
verify    unix  - - n - 1 verify
flush     unix  n - n 1000? 0 flush
proxymap  unix  - - n - - proxymap
proxywrite unix - - n - 1 proxymap
smtp      unix  - - n - - smtp
relay     unix  - - n - - smtp
showq     unix  n - n - - showq
error     unix  - - n - - error
retry     unix  - - n - - error
discard   unix  - - n - - discard
lmtp      unix  - - n - - lmtp
anvil     unix  - - n - 1 anvil
scache    unix  - - n - 1 scache
postlog   unix-dgram n - n - 1 postlogd
EOF
  # "postfix start" creates the queue tree (post-install create-missing), checks, and daemonizes
  # master; pid -> $DIR/postfix-queue/pid/master.pid. Its messages go to syslog/tty only -> keep stderr.
  postfix -c "$PF" start </dev/null >"$DIR/log/postfix-start.err" 2>&1 ||
    { cat "$DIR/log/postfix-start.err" "$DIR/log/postfix.log" >&2; exit 1; }
fi

wait_port "$IMAP_PORT" dovecot-imap
wait_port "$IMAPS_PORT" dovecot-imaps
wait_port "$LMTP_PORT" dovecot-lmtp
[ "$START_POSTFIX" = 1 ] && wait_port "$SMTP_PORT" postfix-smtpd
[ "$START_POSTFIX" = 1 ] && wait_port "$SMTPS_PORT" postfix-smtps
T1=$(date +%s.%N)
echo "mailstack up in $(awk "BEGIN{printf \"%.2f\", $T1-$T0}")s: IMAP 127.0.0.1:$IMAP_PORT (STARTTLS)" \
     "IMAPS 127.0.0.1:$IMAPS_PORT LMTP 127.0.0.1:$LMTP_PORT$([ "$START_POSTFIX" = 1 ] &&
     echo " SMTP 127.0.0.1:$SMTP_PORT (STARTTLS) SMTPS 127.0.0.1:$SMTPS_PORT")" "CA $TLS/ca.pem" \
     "dovecot pid $(cat "$DOVECOT_PID")$([ "$START_POSTFIX" = 1 ] && echo ", postfix pid $(tr -dc 0-9 < "$POSTFIX_PID")")"
