#!/usr/bin/env bash
# The box test (npm run test:box): EMS installed from its release tarball on a real Debian box with systemd as PID 1.
# Not part of npm test: it needs root, debootstrap and systemd-nspawn (Debian packages debootstrap, systemd-container),
# ~300 MB of disk and a few minutes.
#
#   sudo test/box/run.sh [--base DIR] [--work DIR] [--keep]
#     --base DIR   the debootstrap root to copy (made once and reused; default /var/tmp/ems-box/base)
#     --work DIR   where the release and the box's root go (default: a new temp dir, deleted at the end unless --keep)
#     --keep       keep the work dir (the box's root, its journal, the release tarballs)
#
# The base is a minimal Debian (the release this machine runs, from the mirror its apt uses) with systemd, jq,
# openssl and curl, and no Node.js at all: the release brings its own (runtime/bin/node). The box boots with
# `systemd-nspawn -b` on a private network (only loopback: nothing here can clash with a port of this machine); on a
# cgroup-v1 host with --register=no --keep-unit. debootstrap and systemd-container are installed when missing.
#
# Checked, in order: no node in the box; install from the tarball; /api/health; the service's JSON lines in the
# journal through the documented jq filter; emsctl (status, role list and its time, user add); restart after kill -9;
# upgrade to a newer release with its backup; a reinstall of the same version keeps /opt/ems.previous; rollback; an
# upgrade to a deliberately broken release (a migration that fails on the box's data, not on an empty database) rolls
# itself back to the installed version and its data, and says so in the journal and in emsctl status; TLS with a
# self-signed certificate verified against the name the installer prints; systemd-analyze security; uninstall,
# install on the kept data, uninstall --purge. Every step prints PASS or FAIL.
# Commands for the box are single-quoted on purpose (they expand inside it); pass/fail never fail.
# shellcheck disable=SC2015,SC2016,SC1091
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BASE=/var/tmp/ems-box/base
WORK=""
KEEP=no
while [ $# -gt 0 ]; do
  case "$1" in
    --base) BASE=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --keep) KEEP=yes; shift ;;
    -h | --help) sed -n '2,20s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "box: unknown option $1" >&2; exit 2 ;;
  esac
done

log() { printf 'box: %s\n' "$*"; }
die() { printf 'box: error: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap and systemd-nspawn need it)"
if ! command -v debootstrap >/dev/null || ! command -v systemd-nspawn >/dev/null; then
  log "installing debootstrap and systemd-container (apt-get)"
  apt-get install -y debootstrap systemd-container >/dev/null || die "needs debootstrap and systemd-nspawn (apt-get install debootstrap systemd-container)"
fi

FAILED=0
PASSED=0
pass() { PASSED=$((PASSED + 1)); printf 'box: PASS %s\n' "$*"; }
fail() { FAILED=$((FAILED + 1)); printf 'box: FAIL %s\n' "$*"; }
# check "what" command...: PASS when the command succeeds.
check() {
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

# --- The Debian base (made once) ---------------------------------------------------------------------

# The mirror this machine's apt uses for its own release (deb822 .sources or one-line sources.list).
apt_mirror() {
  local uri
  uri=$(grep -h -A3 '^Types: deb' /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk '/^URIs:/ { uri = $2 } /^Suites:/ && uri != "" { for (i = 2; i <= NF; i++) if ($i !~ /-/) { print uri; exit } }')
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $3 !~ /-/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
  printf '%s' "${uri:-http://deb.debian.org/debian}"
}
SUITE=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-bookworm}")
if [ ! -x "$BASE/usr/bin/jq" ]; then
  MIRROR=$(apt_mirror)
  log "making the Debian base $BASE ($SUITE from $MIRROR; several minutes)"
  rm -rf "$BASE.tmp"
  mkdir -p "$(dirname "$BASE")"
  debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,jq,openssl,ca-certificates,procps,iproute2,curl,passwd \
    "$SUITE" "$BASE.tmp" "$MIRROR" >"$(dirname "$BASE")/debootstrap.log" 2>&1 || die "debootstrap failed: $(dirname "$BASE")/debootstrap.log"
  mv "$BASE.tmp" "$BASE"
fi

# --- The releases: this checkout's, and the same program as a newer version for the upgrade ------------

if [ -z "$WORK" ]; then WORK=$(mktemp -d /var/tmp/ems-box-run.XXXXXX); fi
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
ROOT="$WORK/root"
NSPAWN_PID=""
cleanup() {
  if [ -n "$NSPAWN_PID" ] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
    kill "$NSPAWN_PID" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$NSPAWN_PID" 2>/dev/null || break; sleep 1; done
    kill -9 "$NSPAWN_PID" 2>/dev/null || true
  fi
  if [ "$KEEP" = no ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}
trap cleanup EXIT

log "packaging the release (npm run package)"
(cd "$REPO" && bash installer/package.sh --out "$WORK/release") >"$WORK/package.log" 2>&1 || die "npm run package failed: $WORK/package.log"
TARBALL=$(ls "$WORK"/release/ems-*.tar.gz)
V1=$(tar -xzOf "$TARBALL" ems/package.json | sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' | head -n 1)
V2="$V1-box.1"
# The same program marked as a newer version: what an upgrade sees (a new version, a backup first, a rollback target).
mkdir -p "$WORK/v2"
tar -xzf "$TARBALL" -C "$WORK/v2"
sed -i "0,/\"version\": \"$V1\"/s//\"version\": \"$V2\"/" "$WORK/v2/ems/package.json" "$WORK/v2/ems/ems-release.json"
TARBALL2="$WORK/release/ems-$V2.tar.gz"
tar -czf "$TARBALL2" -C "$WORK/v2" ems
rm -rf "$WORK/v2"
# A broken release: version V3 with a migration that fails on a database that has users (the box's), while the
# installer's runtime check (an empty database) passes it. Its upgrade must roll itself back.
V3="$V1-box.3"
mkdir -p "$WORK/v3"
tar -xzf "$TARBALL" -C "$WORK/v3"
sed -i "0,/\"version\": \"$V1\"/s//\"version\": \"$V3\"/" "$WORK/v3/ems/package.json" "$WORK/v3/ems/ems-release.json"
MIGRATIONS=$(dirname "$(dirname "$(find "$WORK/v3/ems/src" -path '*/migrations/meta/_journal.json' | head -n 1)")")
printf 'CREATE TABLE box_broken (users INTEGER NOT NULL CHECK (users = 0));\n--> statement-breakpoint\nINSERT INTO box_broken SELECT count(*) FROM users;\n' \
  >"$MIGRATIONS/9999_box_broken.sql"
jq '.entries += [{ idx: 9999, version: "6", when: 4102444800000, tag: "9999_box_broken", breakpoints: true }]' \
  "$MIGRATIONS/meta/_journal.json" >"$WORK/journal.json" && mv "$WORK/journal.json" "$MIGRATIONS/meta/_journal.json"
TARBALL3="$WORK/release/ems-$V3.tar.gz"
tar -czf "$TARBALL3" -C "$WORK/v3" ems
rm -rf "$WORK/v3"
log "releases: $(basename "$TARBALL") ($V1, $(du -h "$TARBALL" | cut -f1)), $(basename "$TARBALL2") ($V2) and $(basename "$TARBALL3") ($V3, broken)"

# --- The box ------------------------------------------------------------------------------------------

log "copying the base into $ROOT"
cp -a "$BASE" "$ROOT"
echo emsbox >"$ROOT/etc/hostname"
mkdir -p "$ROOT/root/releases"
cp "$TARBALL" "$TARBALL2" "$TARBALL3" "$ROOT/root/releases/"
B1=/root/releases/$(basename "$TARBALL")
B2=/root/releases/$(basename "$TARBALL2")
B3=/root/releases/$(basename "$TARBALL3")

# /mnt/ems-backup: a file system of its own (EMS_BACKUP_TARGET must not be on the data dir's).
nspawn_args=(-D "$ROOT" -b --private-network -M emsbox --tmpfs=/mnt/ems-backup:mode=0755)
# On a cgroup-v1 host (or without systemd as PID 1 here) nspawn cannot register with machined.
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] || [ ! -d /run/systemd/system ]; then nspawn_args+=(--register=no --keep-unit); fi
log "booting: systemd-nspawn ${nspawn_args[*]}"
systemd-nspawn "${nspawn_args[@]}" </dev/null >"$WORK/console.log" 2>&1 &
NSPAWN_PID=$!

# The box's PID 1 (systemd): a descendant of the nspawn process.
leader() {
  local pid
  for pid in $(pgrep -P "$NSPAWN_PID" 2>/dev/null) $(for p in $(pgrep -P "$NSPAWN_PID" 2>/dev/null); do pgrep -P "$p"; done); do
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = systemd ]; then printf '%s' "$pid"; return 0; fi
  done
  return 1
}
LEADER=""
for _ in $(seq 1 120); do
  LEADER=$(leader || true)
  [ -n "$LEADER" ] && break
  kill -0 "$NSPAWN_PID" 2>/dev/null || die "systemd-nspawn ended: $(tail -n 20 "$WORK/console.log")"
  sleep 1
done
[ -n "$LEADER" ] || die "no systemd in the box after 120 s"

# box COMMAND: runs a shell command as root inside the box (all its namespaces), with a clean environment.
box() {
  nsenter -t "$LEADER" -a env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 bash -o pipefail -c "$1"
}
state=""
for _ in $(seq 1 180); do
  state=$(box 'systemctl is-system-running 2>/dev/null' || true)
  case "$state" in running | degraded) break ;; esac
  sleep 1
done
log "the box is up: systemd says \"$state\""
check "systemd runs as PID 1 in the box" box '[ "$(cat /proc/1/comm)" = systemd ] && [ -d /run/systemd/system ]'
check "the box has no Node.js at all" box '! command -v node && ! command -v nodejs && ! ls /usr/bin/node* /usr/local/bin/node* >/dev/null 2>&1'

# health VERSION: /api/health answers 200 with that version (polling: a start takes a few seconds).
health() {
  box "for i in \$(seq 1 120); do v=\$(curl -fsS http://127.0.0.1:3000/api/health 2>/dev/null | jq -r .version) && [ \"\$v\" = '$1' ] && exit 0; sleep 1; done; exit 1"
}

# --- Install ------------------------------------------------------------------------------------------
log "install: tar -xzf $(basename "$B1") && ems/installer/install.sh --from-tarball $(basename "$B1")"
started=$SECONDS
box "cd /root/releases && tar -xzf $B1 && ems/installer/install.sh --from-tarball $B1" >"$WORK/install.log" 2>&1 && pass "install from the tarball" || { fail "install from the tarball"; cat "$WORK/install.log"; }
log "install took $((SECONDS - started)) s (unpacking, the runtime check, the first start until /api/health)"
sed 's/^/    /' "$WORK/install.log"
check "the service runs on the release's own Node" box 'systemctl show -p ExecStart --value ems | grep -q "path=/opt/ems/runtime/bin/node" && grep -q "^NODE=/opt/ems/runtime/bin/node$" /usr/local/bin/emsctl'
check "the installer ran the runtime check on that Node" grep -q 'check-runtime: ok on node' "$WORK/install.log"
check "the service is active and /api/health answers $V1" health "$V1"
check "the installer printed the tarball, the URL and the journal command" grep -q "jq -R 'fromjson?'" "$WORK/install.log"
check "an initial admin password was written" box 'test -s /var/lib/ems/initial-admin-password'

# --- Journal ------------------------------------------------------------------------------------------
box "journalctl -u ems -o cat --no-pager | jq -c -R 'fromjson?'" >"$WORK/journal.jsonl" 2>"$WORK/journal.err" || true
check "journalctl -u ems -o cat | jq -R 'fromjson?' gives the service's JSON lines (EMS started among them)" \
  grep -q '"msg":"EMS started"' "$WORK/journal.jsonl"
if box 'journalctl -u ems -o cat --no-pager | jq . >/dev/null 2>&1'; then
  log "note: journalctl -u ems -o cat | jq . passed here too"
else
  log "as reported: journalctl -u ems -o cat | jq . fails on systemd's own lines ($(box 'journalctl -u ems -o cat --no-pager | grep -v "^{" | head -n 1'))"
fi

# --- emsctl -------------------------------------------------------------------------------------------
check "emsctl status says running" box 'emsctl --json status | jq -e ".service.state == \"running\"" >/dev/null'
check "emsctl role list" box 'emsctl role list | grep -q admin'
check "emsctl user add" box 'emsctl --json user add operator1 --email op@example.lan --role operator | jq -e ".user.username == \"operator1\" or .username == \"operator1\"" >/dev/null'
check "emsctl user add without arguments names what is missing" box 'out=$(emsctl user add 2>&1); echo "$out" | grep -q username && echo "$out" | grep -q -- --email'
times=$(box 'for i in 1 2 3 4 5; do s=$(date +%s%N); emsctl role list >/dev/null; e=$(date +%s%N); echo $(((e - s) / 1000000)); done' | tr '\n' ' ')
log "emsctl role list as installed (runuser, env file, compiled), 5 calls in ms: $times"
times=$(box 'for i in 1 2 3 4 5; do s=$(date +%s%N); emsctl status >/dev/null; e=$(date +%s%N); echo $(((e - s) / 1000000)); done' | tr '\n' ' ')
log "emsctl status as installed, 5 calls in ms: $times"

# --- Restart after kill -9 ----------------------------------------------------------------------------
pid_before=$(box 'systemctl show -p MainPID --value ems' || true)
# MainPID 0 (no service running): kill -9 0 would end this script's own process group, nspawn with it.
if [[ "$pid_before" =~ ^[1-9][0-9]*$ ]]; then
  box "kill -9 $pid_before"
  check "after kill -9 of $pid_before systemd starts it again and it answers" \
    box "for i in \$(seq 1 60); do p=\$(systemctl show -p MainPID --value ems); [ \"\$p\" != 0 ] && [ \"\$p\" != $pid_before ] && curl -fsS http://127.0.0.1:3000/api/health >/dev/null 2>&1 && exit 0; sleep 1; done; exit 1"
else
  fail "kill -9 of the service: it has no main process (MainPID \"$pid_before\")"
fi
log "restarts counted by systemd: $(box 'systemctl show -p NRestarts --value ems')"

# --- Upgrade, reinstall, rollback ---------------------------------------------------------------------
box "cd /root/releases && rm -rf ems && tar -xzf $B2 && ems/installer/install.sh --from-tarball $B2" >"$WORK/upgrade.log" 2>&1 && pass "upgrade to $V2" || fail "upgrade to $V2"
sed 's/^/    /' "$WORK/upgrade.log"
check "the upgrade took a backup first" grep -q 'backup taken: ems-' "$WORK/upgrade.log"
check "/api/health answers $V2" health "$V2"
check "/opt/ems.previous holds $V1" box "jq -e '.version == \"$V1\"' /opt/ems.previous/package.json >/dev/null"
box 'chown ems:ems /mnt/ems-backup && sed -i "s|^#EMS_BACKUP_TARGET=.*|EMS_BACKUP_TARGET=/mnt/ems-backup|" /etc/ems/ems.env'
box "cd /root/releases && ems/installer/install.sh --from-tarball $B2" >"$WORK/reinstall.log" 2>&1 && pass "re-run after setting EMS_BACKUP_TARGET" || fail "re-run after setting EMS_BACKUP_TARGET"
sed 's/^/    /' "$WORK/reinstall.log"
check "the re-run is a reinstall and keeps $V1 in /opt/ems.previous" box "jq -e '.version == \"$V1\"' /opt/ems.previous/package.json >/dev/null"
check "the backup target drop-in is in place and a backup reaches the target" box 'test -f /etc/systemd/system/ems.service.d/backup-target.conf && emsctl --json backup run >/dev/null && ls /mnt/ems-backup | grep -q "^ems-"'
box "/opt/ems/installer/install.sh --rollback --dry-run" >"$WORK/rollback-dry.log" 2>&1 || true
check "rollback --dry-run names both versions, no npm" bash -c "grep -q 'roll back from version $V2' '$WORK/rollback-dry.log' && ! grep -q npm '$WORK/rollback-dry.log'"
box "/opt/ems/installer/install.sh --rollback" >"$WORK/rollback.log" 2>&1 && pass "rollback" || fail "rollback"
sed 's/^/    /' "$WORK/rollback.log"
check "/api/health answers $V1 after the rollback" health "$V1"

# --- A broken upgrade rolls itself back ----------------------------------------------------------------
migrations_before=$(box 'emsctl --json status | jq .migrations' || true)
box 'emsctl --json user add broken-upgrade-probe --email probe@example.lan --role viewer >/dev/null' || true
started=$SECONDS
box "cd /root/releases && rm -rf ems && tar -xzf $B3 && ems/installer/install.sh --from-tarball $B3" >"$WORK/broken.log" 2>&1 &&
  fail "the upgrade to the broken $V3 says it failed (exit 1)" || pass "the upgrade to the broken $V3 says it failed (exit 1)"
log "the broken upgrade and its rollback took $((SECONDS - started)) s"
sed 's/^/    /' "$WORK/broken.log"
check "it was rolled back without a person: /api/health answers $V1" health "$V1"
check "the installer said why and that it rolled back" bash -c "grep -q 'rolling back: version $V3 .*exited at start (status 3: database or migrations)' '$WORK/broken.log' && grep -q 'rolled back: version $V1 .*runs again on its data' '$WORK/broken.log'"
check "the journal of the unit says so (journalctl -u ems)" box "journalctl -u ems --no-pager -o cat | grep -q 'ems-install: upgrade to version $V3 .*failed: it exited at start' && journalctl -u ems --no-pager -o cat | grep -q 'ems-install: rolled back to version $V1 .*it answers /api/health'"
check "emsctl status says so" box "emsctl status | grep -q '^last upgrade .*ROLLED BACK: version $V3 .*exited at start' && emsctl --json status | jq -e '.lastUpgrade.result == \"rolled-back\"' >/dev/null"
check "the data is as it was before the upgrade (its migrations undone, the user added before it kept)" \
  box "[ \"\$(emsctl --json status | jq .migrations)\" = '$migrations_before' ] && emsctl --json user list | jq -e '[.. | objects | select(.username? == \"broken-upgrade-probe\")] | length == 1' >/dev/null"
check "the service runs on the rolled-back program's Node and nothing of the broken one is left" box '! test -e /opt/ems.discard && ! test -e /var/lib/ems/.upgrade-rollback && systemctl show -p ExecStart --value ems | grep -q "path=/opt/ems/runtime/bin/node"'

# --- TLS ----------------------------------------------------------------------------------------------
box "cd /root/releases && ems/installer/install.sh --from-tarball $B1 --tls-self-signed --tls-name ems-box.plant.lan" >"$WORK/tls.log" 2>&1 && pass "install with --tls-self-signed" || fail "install with --tls-self-signed"
sed 's/^/    /' "$WORK/tls.log"
check "the URL printed is the certificate's name" grep -q 'https://ems-box.plant.lan:3000/' "$WORK/tls.log"
check "curl verifies the certificate for https://ems-box.plant.lan:3000/ (name resolved to loopback)" \
  box 'curl -fsS --cacert /etc/ems/tls/ems.crt --resolve ems-box.plant.lan:3000:127.0.0.1 https://ems-box.plant.lan:3000/api/health | jq -e .version >/dev/null'
check "systemctl kill -s HUP ems keeps it serving" box 'systemctl kill -s HUP ems && sleep 2 && systemctl is-active --quiet ems && curl -fsSk https://127.0.0.1:3000/api/health >/dev/null'
check "emsctl status reads https and the port from /etc/ems/ems.env" box 'emsctl --json status | jq -e ".service.healthUrl | startswith(\"https://\")" >/dev/null'

# --- systemd-analyze security ---------------------------------------------------------------------------
log "systemd-analyze security ems: $(box 'systemd-analyze security ems --no-pager 2>/dev/null | tail -n 1')"

# --- Uninstall, install on the kept data, purge ---------------------------------------------------------
box "/opt/ems/installer/uninstall.sh" >"$WORK/uninstall.log" 2>&1 && pass "uninstall" || fail "uninstall"
check "after uninstall the unit is gone and nothing answers" box '! systemctl cat ems >/dev/null 2>&1 && ! curl -fsS -k https://127.0.0.1:3000/api/health >/dev/null 2>&1 && test -f /var/lib/ems/ems.db'
box "cd /root/releases && ems/installer/install.sh --from-tarball $B1" >"$WORK/kept.log" 2>&1 && pass "install on the kept data" || fail "install on the kept data"
check "it says it uses the kept data (no first-install text)" bash -c "grep -q 'installed on the data kept' '$WORK/kept.log' && ! grep -q 'first install' '$WORK/kept.log'"
check "the user added before the uninstall is still there" box 'emsctl --json user list | jq -e "[.. | objects | select(.username? == \"operator1\")] | length == 1" >/dev/null'
box "/opt/ems/installer/uninstall.sh --purge" >"$WORK/purge.log" 2>&1 && pass "uninstall --purge" || fail "uninstall --purge"
check "after --purge no data, settings or user remain" box '! test -e /var/lib/ems && ! test -e /etc/ems && ! id ems >/dev/null 2>&1'

box 'journalctl --no-pager -b' >"$WORK/box-journal.log" 2>&1 || true
log "done: $PASSED passed, $FAILED failed (logs in $WORK$([ "$KEEP" = yes ] || printf ', deleted; --keep keeps them'))"
[ "$FAILED" -eq 0 ]
