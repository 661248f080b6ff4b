#!/bin/bash
# install-mailstack.sh -- install the Debian packages the loopback test mail stack needs
# (dovecot-imapd dovecot-lmtpd postfix) when they are missing. Idempotent: exits 0 at once when
# they are already installed. Non-interactive (debconf preseed, DEBIAN_FRONTEND=noninteractive).
# Needs root (apt) only when something must be installed.
#
# The distribution's own daemons are never left running: a policy-rc.d keeps apt from starting
# them during the install, and afterwards they are stopped and disabled, so only the stack that
# start-mailstack.sh starts (on its own ports, with its own config under DIR) runs.
# An installation that was already there is left alone (it may be a developer's real mail setup).
set -euo pipefail
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

PACKAGES=(dovecot-imapd dovecot-lmtpd postfix)

installed() {  # all packages installed and the binaries start-mailstack.sh calls are present
  local p
  for p in "${PACKAGES[@]}"; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" = installed ] || return 1
  done
  command -v dovecot >/dev/null && command -v postfix >/dev/null && [ -x /usr/lib/dovecot/lmtp ]
}

if installed; then
  echo "mailstack packages already installed: ${PACKAGES[*]}"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  echo "install-mailstack.sh: ${PACKAGES[*]} missing and not running as root;" \
       "run as root: sudo bash $0" >&2
  exit 1
fi
command -v apt-get >/dev/null || { echo "install-mailstack.sh: apt-get not found (Debian/Ubuntu only)" >&2; exit 1; }

# Keep apt from starting dovecot (143/993) and postfix (25) during the install.
POLICY=/usr/sbin/policy-rc.d
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$POLICY"; chmod 0755 "$POLICY"
  trap 'rm -f "$POLICY"' EXIT
fi

echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
echo "postfix postfix/mailname string localhost" | debconf-set-selections
export DEBIAN_FRONTEND=noninteractive
apt_install() { apt-get install -y --no-install-recommends "${PACKAGES[@]}"; }
if ! apt_install; then
  echo "install-mailstack.sh: apt-get install failed; retrying after apt-get update" >&2
  apt-get update || { echo "install-mailstack.sh: apt-get update failed" >&2; exit 1; }
  apt_install || { echo "install-mailstack.sh: apt-get install ${PACKAGES[*]} failed" >&2; exit 1; }
fi
installed || { echo "install-mailstack.sh: packages installed but dovecot/postfix/lmtp not found" >&2; exit 1; }

# Stop and disable the distribution's own daemons (in case something started them anyway).
for svc in dovecot postfix; do
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
    systemctl disable --now "$svc" >/dev/null 2>&1 || true
  else
    [ -x "/etc/init.d/$svc" ] && "/etc/init.d/$svc" stop >/dev/null 2>&1 || true
    command -v update-rc.d >/dev/null && update-rc.d "$svc" disable >/dev/null 2>&1 || true
  fi
done
# Still running from the system config? (By pid file: the command line of our stack's postfix
# master is the same "/usr/lib/postfix/sbin/master -w" as the system's.)
for f in /run/dovecot/master.pid /var/spool/postfix/pid/master.pid; do
  pid=$(tr -dc 0-9 < "$f" 2>/dev/null || true)
  if [ -n "$pid" ] && [ -d "/proc/$pid" ]; then
    echo "install-mailstack.sh: warning: system daemon still running (pid $pid from $f)" >&2
  fi
done
echo "mailstack packages installed: ${PACKAGES[*]} (system daemons stopped and disabled)"
