#!/usr/bin/env bash
# Installs or upgrades EMS on a systemd box: user ems, program in /opt/ems, data in /var/lib/ems,
# settings in /etc/ems/ems.env, unit ems.service, /usr/local/bin/emsctl. Upgrade = run it again.
#
#   tar -xzf FILE && sudo ems/installer/install.sh --from-tarball FILE
#                                                   install/upgrade from a release tarball (npm run package): no compiler, no registry
#   sudo installer/install.sh                       install/upgrade from this checkout (npm ci, build, prune: needs npm and a compiler)
#   sudo installer/install.sh --from-build DIR      use a tree that already holds dist/ and production node_modules/
#   sudo installer/install.sh --rollback            put the previous version back (kept in /opt/ems.previous by each upgrade)
#   --tls-self-signed [--tls-name NAME]             also create a self-signed certificate for NAME (default: this host's name)
#                                                   in /etc/ems/tls/ and point EMS_TLS_CERT/EMS_TLS_KEY at it
#   --dry-run                                       run every check, print what would be done, change nothing
#   --root DIR                                      stage everything under DIR: no user, no chown, no systemctl
set -euo pipefail

readonly MIN_NODE=20.18.0
readonly APP_DIR=/opt/ems
readonly DATA_DIR=/var/lib/ems
readonly CONF_DIR=/etc/ems
readonly ENV_FILE=/etc/ems/ems.env
readonly TLS_DIR=/etc/ems/tls
readonly UNIT_FILE=/etc/systemd/system/ems.service
readonly DROPIN_DIR=/etc/systemd/system/ems.service.d
readonly WRAPPER=/usr/local/bin/emsctl
readonly SERVICE_USER=ems
readonly SERVICE=ems
# Room the program needs beside the one it replaces (a release unpacks to ~212 MB with its Node; npm ci with dev tools ~600 MB).
readonly NEED_PROGRAM_MB_RELEASE=400
readonly NEED_PROGRAM_MB_SOURCE=1200
# How long to wait for /api/health after starting (migrations on a large database take a while); an upgrade whose
# new version is not healthy by then (or stops, or is restarted by systemd, before) is rolled back by itself.
readonly HEALTH_WAIT_SEC=${EMS_INSTALL_HEALTH_WAIT_SEC:-90}

SOURCE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=""
FROM_BUILD=""
FROM_TARBALL=""
DRY_RUN=no
ROLLBACK=no
TLS_SELF_SIGNED=no
TLS_NAME=""
UNPACKED=""

usage() {
  sed -n '2,14s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

log() { printf 'ems-install: %s\n' "$*"; }
die() {
  printf 'ems-install: error: %s\n' "$*" >&2
  exit 1
}
DISCARD=""
cleanup() {
  if [ -n "$UNPACKED" ]; then rm -rf "$UNPACKED"; fi
  # Program folders set aside while the service was down are deleted once it runs again (deleting 300 MB of small
  # files took 30 s of a rollback's downtime on a busy box).
  if [ -n "$DISCARD" ]; then rm -rf "$DISCARD"; fi
}
trap cleanup EXIT

while [ $# -gt 0 ]; do
  case "$1" in
    --root)
      [ $# -ge 2 ] || die "--root needs a directory"
      ROOT=$(mkdir -p "$2" && cd "$2" && pwd)
      shift 2
      ;;
    --from-build)
      [ $# -ge 2 ] || die "--from-build needs a directory"
      FROM_BUILD=$(cd "$2" && pwd) || die "--from-build: no such directory: $2"
      shift 2
      ;;
    --from-tarball)
      [ $# -ge 2 ] || die "--from-tarball needs a file"
      [ -f "$2" ] || die "--from-tarball: no such file: $2"
      FROM_TARBALL=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
      shift 2
      ;;
    --rollback)
      ROLLBACK=yes
      shift
      ;;
    --tls-self-signed)
      TLS_SELF_SIGNED=yes
      shift
      ;;
    --tls-name)
      [ $# -ge 2 ] || die "--tls-name needs a host name"
      TLS_NAME=$2
      shift 2
      ;;
    --dry-run)
      DRY_RUN=yes
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done

staged() { [ -n "$ROOT" ]; }
dry() { [ "$DRY_RUN" = yes ]; }

[ -z "$FROM_BUILD" ] || [ -z "$FROM_TARBALL" ] || die "give --from-build or --from-tarball, not both"
if [ "$ROLLBACK" = yes ] && { [ -n "$FROM_BUILD" ] || [ -n "$FROM_TARBALL" ] || [ "$TLS_SELF_SIGNED" = yes ]; }; then
  die "--rollback takes no other source or option (besides --root and --dry-run)"
fi
if [ -n "$TLS_NAME" ] && [ "$TLS_SELF_SIGNED" != yes ]; then die "--tls-name goes with --tls-self-signed"; fi
if [ -n "$TLS_NAME" ] && ! [[ "$TLS_NAME" =~ ^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$ ]]; then
  die "--tls-name: \"$TLS_NAME\" is not a host name"
fi

# --- Checks: all of them before anything is changed ---------------------------------------------------

version_at_least() {
  # $1 >= $2, both "major.minor.patch"
  local IFS=.
  local -a have want
  read -r -a have <<<"$1"
  read -r -a want <<<"$2"
  local i
  for i in 0 1 2; do
    if ((${have[i]:-0} > ${want[i]:-0})); then return 0; fi
    if ((${have[i]:-0} < ${want[i]:-0})); then return 1; fi
  done
  return 0
}

# Free megabytes on the file system that holds $1 (or its nearest existing parent).
free_mb() {
  local dir=$1
  while [ ! -e "$dir" ]; do dir=$(dirname "$dir"); done
  df -Pk "$dir" | awk 'NR == 2 { print int($4 / 1024) }'
}

if ! staged && [ "$(id -u)" -ne 0 ]; then
  die "run as root (sudo $0), or stage into a directory with --root DIR"
fi

# systemd must be running (not just installed): the service, its restarts and its logs depend on it.
if ! staged && [ ! -d /run/systemd/system ]; then
  die "systemd is not running on this box (PID 1 is $(ps -p 1 -o comm= 2>/dev/null || echo unknown)); EMS runs as a systemd service. Nothing was changed (use --root DIR to stage the files)"
fi

# The Node that runs the service. A release tarball brings its own (runtime/bin/node, installer/runtime.json): the
# box needs none. A checkout or a --from-build tree runs on the box's Node, which must be system-wide and new enough.
BUNDLED=no
if [ -n "$FROM_TARBALL" ]; then
  tar --occurrence=1 -xzOf "$FROM_TARBALL" ems/ems-release.json 2>/dev/null | grep -q '"runtime": *"node ' && BUNDLED=yes
elif [ "$ROLLBACK" = yes ] && [ -x "$ROOT$APP_DIR.previous/runtime/bin/node" ]; then
  BUNDLED=yes
fi
BOX_ARCH=$(uname -m)
case "$BOX_ARCH" in
  x86_64) BOX_ARCH=x64 ;;
  aarch64) BOX_ARCH=arm64 ;;
esac
BOX_PLATFORM="$(uname -s | tr '[:upper:]' '[:lower:]')-$BOX_ARCH"
NODE_BIN=""
if [ "$BUNDLED" = no ]; then
  NODE_BIN=$(command -v node || true)
  [ -n "$NODE_BIN" ] || die "Node.js >= $MIN_NODE is required and 'node' is not on PATH"
  # The file the service would execute: /usr/local/bin/node may be a link into /root/.nvm/... (readlink -f follows
  # every link), and what counts is where the binary really is.
  NODE_REAL=$(readlink -f "$NODE_BIN" 2>/dev/null || printf '%s' "$NODE_BIN")
  case "$NODE_REAL" in
    /home/* | /root/* | /run/user/*)
      # The unit's ProtectHome=yes hides home directories from the service (nvm and similar install there): it would
      # fail with 203/EXEC on every start.
      where="node at $NODE_BIN"
      [ "$NODE_REAL" = "$NODE_BIN" ] || where="$where (a link to $NODE_REAL)"
      if staged; then
        log "warning: $where lives in a home directory, which the service on a real box cannot see (ProtectHome=yes)"
      else
        die "$where lives in a home directory, which the service cannot see (ProtectHome=yes); install Node.js system-wide (e.g. /usr/bin/node from a Debian or NodeSource package). Nothing was changed"
      fi
      ;;
  esac
  NODE_VERSION=$("$NODE_BIN" -p 'process.versions.node')
  version_at_least "$NODE_VERSION" "$MIN_NODE" || die "Node.js >= $MIN_NODE is required, found $NODE_VERSION at $NODE_BIN"
  NODE_ABI=$("$NODE_BIN" -p 'process.versions.modules')
  NODE_PLATFORM=$("$NODE_BIN" -p 'process.platform + "-" + process.arch')
fi

TARGET="$ROOT$APP_DIR"
PREVIOUS="$TARGET.previous"
# The database copied when the installed version stops for an upgrade: an automatic rollback restores it.
UPGRADE_COPY="$ROOT$DATA_DIR/.upgrade-rollback"
# discard DIR: moves DIR out of the way at once (a rename); the exit deletes it.
discard() {
  DISCARD="$TARGET.discard"
  mkdir -p "$DISCARD"
  mv "$1" "$(mktemp -d "$DISCARD/$(basename "$1").XXXXXX")/"
}
# UPGRADE: another version is installed (it is kept in /opt/ems.previous for --rollback). REINSTALL: the same
# version again (e.g. to pick up EMS_BACKUP_TARGET): the program is replaced, /opt/ems.previous stays as it is.
UPGRADE=no
REINSTALL=no
# Data left by an earlier install (kept by uninstall.sh): no new admin, no initial password.
KEPT_DATA=no
[ -f "$ROOT$DATA_DIR/ems.db" ] && KEPT_DATA=yes

# json_field FILE NAME: a top-level string field of a small JSON file (package.json, ems-release.json), or nothing.
json_field() {
  [ -f "$1" ] || return 0
  sed -n "s/^ *\"$2\": *\"\([^\"]*\)\".*/\1/p" "$1" | head -n 1
}
# A version as "0.4.0" or, for a release (ems-release.json names its commit), "0.4.0 (commit abc1234)".
version_of_tree() {
  local version commit
  version=$(json_field "$1/package.json" version)
  commit=$(json_field "$1/ems-release.json" commit)
  printf '%s%s' "$version" "${commit:+ (commit $commit)}"
}
INSTALLED_VERSION=""
[ -f "$TARGET/package.json" ] && INSTALLED_VERSION=$(version_of_tree "$TARGET")

if [ "$ROLLBACK" = yes ]; then
  [ -f "$PREVIOUS/package.json" ] || die "no previous version to roll back to ($APP_DIR.previous is missing: it is kept by an upgrade)"
  [ -f "$TARGET/package.json" ] || die "EMS is not installed in $APP_DIR"
elif [ -n "$FROM_TARBALL" ]; then
  # The release's platform and Node ABI must match this box: its native modules are compiled for them.
  RELEASE=$(tar --occurrence=1 -xzOf "$FROM_TARBALL" ems/ems-release.json 2>/dev/null) || die "--from-tarball: $FROM_TARBALL is not an EMS release (no ems/ems-release.json; build one with npm run package)"
  field() { printf '%s' "$RELEASE" | sed -n "s/^ *\"$1\": *\"\([^\"]*\)\".*/\1/p"; }
  RELEASE_VERSION=$(field version)
  RELEASE_COMMIT=$(field commit)
  NEW_VERSION="$RELEASE_VERSION${RELEASE_COMMIT:+ (commit $RELEASE_COMMIT)}"
  [ "$(field platform)-$(field arch)" = "${NODE_PLATFORM:-$BOX_PLATFORM}" ] ||
    die "--from-tarball: the release is built for $(field platform)-$(field arch), this box is ${NODE_PLATFORM:-$BOX_PLATFORM}"
  # A release without its own runtime (built before the release carried one) runs on the box's Node: its ABI must match.
  if [ "$BUNDLED" = no ]; then
    [ "$(field nodeAbi)" = "$NODE_ABI" ] ||
      die "--from-tarball: the release is built for Node ABI $(field nodeAbi) ($(field builtWith)), this node $NODE_VERSION has ABI $NODE_ABI: install that Node major version, or package on a box with this one"
  fi
  RELEASE_RUNTIME=$(field runtime)
elif [ -n "$FROM_BUILD" ]; then
  [ -f "$FROM_BUILD/dist/src/main.js" ] || die "--from-build: $FROM_BUILD/dist/src/main.js is missing (run npm run build there)"
  [ -e "$FROM_BUILD/node_modules" ] || die "--from-build: $FROM_BUILD/node_modules is missing (npm ci --omit=dev there)"
  NEW_VERSION=$(version_of_tree "$FROM_BUILD")
else
  command -v npm >/dev/null || die "npm is required to build EMS from a checkout (or use a release: --from-tarball FILE)"
  NEW_VERSION=$(version_of_tree "$SOURCE_DIR")
fi
if [ "$ROLLBACK" = no ] && [ -n "$INSTALLED_VERSION" ]; then
  if [ "$INSTALLED_VERSION" = "$NEW_VERSION" ]; then REINSTALL=yes; else UPGRADE=yes; fi
fi

if [ "$TLS_SELF_SIGNED" = yes ]; then
  command -v openssl >/dev/null || die "--tls-self-signed needs openssl (apt-get install openssl)"
  [ -n "$TLS_NAME" ] || TLS_NAME=$(hostname -f 2>/dev/null || hostname)
fi

# Free space: the new program beside the old one, and a pre-upgrade backup the size of the database.
if [ "$ROLLBACK" = no ]; then
  need_program=$NEED_PROGRAM_MB_RELEASE
  if [ -z "$FROM_BUILD" ] && [ -z "$FROM_TARBALL" ]; then need_program=$NEED_PROGRAM_MB_SOURCE; fi
  have_program=$(free_mb "$(dirname "$TARGET")")
  ((have_program >= need_program)) || die "not enough free space for the program: $(dirname "$APP_DIR") has ${have_program} MB free, ${need_program} MB needed"
  db_mb=0
  if [ -f "$ROOT$DATA_DIR/ems.db" ]; then db_mb=$(($(wc -c <"$ROOT$DATA_DIR/ems.db") / 1048576)); fi
  need_data=$((db_mb * 2 + 100))
  have_data=$(free_mb "$ROOT$DATA_DIR")
  ((have_data >= need_data)) || die "not enough free space for the data: $DATA_DIR has ${have_data} MB free, ${need_data} MB needed (database ${db_mb} MB, a backup before the upgrade)"
fi

SOURCE_TEXT=${FROM_TARBALL:-${FROM_BUILD:-$SOURCE_DIR (npm ci, build, prune)}}
if [ "$ROLLBACK" = yes ]; then
  ACTION="roll back from version $INSTALLED_VERSION to version $(version_of_tree "$PREVIOUS") (kept in $APP_DIR.previous)"
elif [ "$UPGRADE" = yes ]; then
  ACTION="upgrade version $INSTALLED_VERSION to version $NEW_VERSION from $SOURCE_TEXT"
elif [ "$REINSTALL" = yes ]; then
  ACTION="reinstall version $NEW_VERSION (the version installed) from $SOURCE_TEXT"
else
  ACTION="install version $NEW_VERSION from $SOURCE_TEXT"
fi
if [ "$BUNDLED" = yes ]; then
  if [ "$ROLLBACK" = yes ]; then RUNS_ON="the node in $APP_DIR.previous/runtime"; else RUNS_ON="the release's own $RELEASE_RUNTIME"; fi
  log "checks passed: $BOX_PLATFORM; the service runs on $RUNS_ON (no Node needed on the box)${ROOT:+; staging root $ROOT}"
else
  log "checks passed: node $NODE_VERSION ($NODE_PLATFORM, ABI $NODE_ABI) at $NODE_BIN${ROOT:+; staging root $ROOT}"
fi

if dry; then
  log "dry run: nothing is changed. Would:"
  log "  $ACTION"
  if [ "$ROLLBACK" = yes ]; then
    log "  stop $SERVICE, swap $APP_DIR and $APP_DIR.previous (nothing is downloaded or built), start $SERVICE, wait for /api/health"
    log "  leave the data in $DATA_DIR and the settings in $ENV_FILE as they are"
  else
    log "  run the runtime check on the Node that will run the new program (refusing it if the check fails)"
    if [ "$UPGRADE" = yes ]; then
      log "  take a backup with the installed emsctl (refusing the upgrade if it fails), stop $SERVICE, copy its database"
      log "  keep the installed version in $APP_DIR.previous (for --rollback)"
    elif [ "$REINSTALL" = yes ]; then
      log "  stop $SERVICE and replace the program; $APP_DIR.previous stays as it is (the same version needs no backup)"
    elif [ "$KEPT_DATA" = yes ]; then
      log "  use the data kept in $DATA_DIR (its users, settings and history; no new admin password)"
    else
      log "  create the system user $SERVICE_USER, $DATA_DIR (0750) and $ENV_FILE (0640)"
    fi
    log "  put the new program in $APP_DIR, write $UNIT_FILE and $WRAPPER"
    if [ "$TLS_SELF_SIGNED" = yes ]; then log "  create a self-signed certificate for $TLS_NAME in $TLS_DIR and set EMS_TLS_CERT/EMS_TLS_KEY"; fi
    log "  enable and start $SERVICE, wait for /api/health"
    if [ "$UPGRADE" = yes ]; then log "  should it not be healthy within ${HEALTH_WAIT_SEC} s (or stop at start): roll back to version $INSTALLED_VERSION and its database"; fi
  fi
  exit 0
fi

log "$ACTION"

# own OWNER:GROUP MODE PATH...: ownership only on a real install; the mode always.
own() {
  local owner=$1 mode=$2
  shift 2
  if ! staged; then chown "$owner" "$@"; fi
  chmod "$mode" "$@"
}

# The port and scheme the service listens on, from the env file (the wrapper and the unit read the same file).
env_value() {
  sed -n "s/^$1=//p" "$ROOT$ENV_FILE" 2>/dev/null | tail -n 1
}

# The box's Node, for a program without its own (a release from before they carried one, rolled back to).
box_node() {
  printf '%s' "${NODE_BIN:-$(command -v node || printf /usr/bin/node)}"
}
# node_of DIR: the Node that runs the program in DIR (its own runtime/bin/node, or the box's).
node_of() {
  if [ -x "$1/runtime/bin/node" ]; then printf '%s' "$1/runtime/bin/node"; else box_node; fi
}
# The same as the unit and the wrapper name it (the path on the box, without --root's prefix).
service_node_of() {
  if [ -x "$1/runtime/bin/node" ]; then printf '%s' "$APP_DIR/runtime/bin/node"; else box_node; fi
}

# What the last wait_for_health saw when it failed (a sentence for the journal and emsctl status).
WAIT_REASON=""
# wait_for_health [RESTARTS_BEFORE]: until /api/health answers 200 (HTTPS without verifying: it is this box's own,
# maybe self-signed, certificate). Returns 1 as soon as the service stopped, failed or was restarted by systemd
# (it crashed at start, or failed its migrations: exit 3), or when HEALTH_WAIT_SEC passed without a healthy answer.
wait_for_health() {
  local port scheme url node restarts_before=${1:-0} deadline state restarts status
  port=$(env_value EMS_PORT)
  scheme=http
  if [ -n "$(env_value EMS_TLS_CERT)" ]; then scheme=https; fi
  url="$scheme://127.0.0.1:${port:-3000}/api/health"
  node=$(node_of "$TARGET")
  log "waiting for $url (up to ${HEALTH_WAIT_SEC} s)"
  deadline=$((SECONDS + HEALTH_WAIT_SEC))
  for (( ; ; )); do
    if "$node" -e '
      const url = process.argv[1];
      const client = require(url.startsWith("https") ? "node:https" : "node:http");
      const request = client.get(url, { rejectUnauthorized: false, timeout: 2000 }, (response) => {
        response.resume();
        process.exit(response.statusCode === 200 ? 0 : 1);
      });
      request.on("error", () => process.exit(1));
      request.on("timeout", () => request.destroy());
    ' "$url"; then
      return 0
    fi
    if ! staged; then
      state=$(systemctl show -p ActiveState --value "$SERVICE")
      restarts=$(systemctl show -p NRestarts --value "$SERVICE")
      if [ "$state" = failed ] || [ "$state" = inactive ] || [ "${restarts:-0}" -gt "$restarts_before" ]; then
        status=$(systemctl show -p ExecMainStatus --value "$SERVICE")
        WAIT_REASON="exited at start (status ${status:-?}$([ "$status" = 3 ] && printf ': database or migrations'))"
        return 1
      fi
    fi
    if ((SECONDS >= deadline)); then
      WAIT_REASON="did not answer $url healthy within ${HEALTH_WAIT_SEC} s"
      return 1
    fi
    sleep 1
  done
}

# journal MESSAGE: a line in the journal that `journalctl -u ems` shows (among systemd's own lines about the unit).
journal() {
  if staged; then return 0; fi
  logger --journald <<EOF || logger -t ems-install -p daemon.err "$1" || true
MESSAGE=ems-install: $1
PRIORITY=3
SYSLOG_IDENTIFIER=ems-install
OBJECT_SYSTEMD_UNIT=$SERVICE.service
EOF
}

# record_upgrade RESULT REASON: the last upgrade, as emsctl status shows it (in the data dir, readable by the service).
record_upgrade() {
  local file="$ROOT$DATA_DIR/last-upgrade.json"
  printf '{\n  "result": "%s",\n  "at": "%s",\n  "from": "%s",\n  "to": "%s",\n  "reason": "%s"\n}\n' \
    "$1" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$INSTALLED_VERSION" "$NEW_VERSION" "${2//\"/\'}" >"$file.tmp"
  own "root:$SERVICE_USER" 0644 "$file.tmp"
  mv "$file.tmp" "$file"
}

start_service() {
  if staged; then
    log "staging: systemctl not run (on the box: systemctl daemon-reload && systemctl enable --now $SERVICE)"
    return 0
  fi
  local restarts
  systemctl daemon-reload
  systemctl reset-failed "$SERVICE" 2>/dev/null || true
  systemctl enable "$SERVICE" >/dev/null
  restarts=$(systemctl show -p NRestarts --value "$SERVICE")
  systemctl restart "$SERVICE"
  if wait_for_health "${restarts:-0}"; then return 0; fi
  log "the service $WAIT_REASON; see: journalctl -u $SERVICE -n 50"
  if [ "$UPGRADE" = yes ] && [ "$ROLLBACK" = no ]; then auto_rollback; fi
  exit 1
}

# An upgrade whose new version does not come up healthy: the installed version and the data as it stopped go back,
# without a person, and the journal and emsctl status say so.
auto_rollback() {
  local reason="version $NEW_VERSION $WAIT_REASON" restarts began=$SECONDS
  log "rolling back: $reason; putting version $INSTALLED_VERSION and its data back"
  journal "upgrade to version $NEW_VERSION failed: it $WAIT_REASON; rolling back to version $INSTALLED_VERSION and the data as it stopped"
  systemctl stop "$SERVICE" || true
  # The data: the copy of the database taken when the installed version stopped (the new one's migrations undone).
  if [ -d "$UPGRADE_COPY" ]; then
    rm -f "$ROOT$DATA_DIR/ems.db" "$ROOT$DATA_DIR/ems.db-wal" "$ROOT$DATA_DIR/ems.db-shm"
    cp -a "$UPGRADE_COPY/." "$ROOT$DATA_DIR/"
    rm -rf "$UPGRADE_COPY"
  fi
  discard "$TARGET"
  mv "$PREVIOUS" "$TARGET"
  write_unit_and_wrapper
  record_upgrade rolled-back "$reason"
  ROLLBACK=yes
  systemctl daemon-reload
  systemctl reset-failed "$SERVICE" 2>/dev/null || true
  restarts=$(systemctl show -p NRestarts --value "$SERVICE")
  systemctl restart "$SERVICE"
  if wait_for_health "${restarts:-0}"; then
    journal "rolled back to version $INSTALLED_VERSION after the failed upgrade to $NEW_VERSION; it answers /api/health"
    log "rolled back: version $INSTALLED_VERSION runs again on its data, healthy $((SECONDS - began)) s after the failure was seen; the failed release was removed (emsctl status shows the last upgrade)"
  else
    journal "rolled back to version $INSTALLED_VERSION after the failed upgrade to $NEW_VERSION, but it $WAIT_REASON too"
    log "rolled back to version $INSTALLED_VERSION, but it $WAIT_REASON too: see journalctl -u $SERVICE -n 50"
  fi
  exit 1
}

stop_service() {
  if ! staged && systemctl is-active --quiet "$SERVICE"; then
    log "stopping $SERVICE"
    systemctl stop "$SERVICE"
  fi
}

# This box's addresses (IPv4 and IPv6, without link-local), space-separated.
box_addresses() {
  # A box without an address (only loopback) lists none: grep then finds nothing, which is no error here.
  { hostname -I 2>/dev/null || true; } | tr ' ' '\n' | { grep -v -e '^fe80:' -e '^$' || true; } | tr '\n' ' ' | sed 's/ $//'
}

# The URL a browser uses. With a certificate, the host is the first name it carries (a browser refuses any other);
# without one, this box's first address.
box_url() {
  local port scheme host="" cert
  port=$(env_value EMS_PORT)
  scheme=http
  cert=$(env_value EMS_TLS_CERT)
  if [ -n "$cert" ]; then
    scheme=https
    if command -v openssl >/dev/null && [ -r "$ROOT$cert" ]; then
      host=$(openssl x509 -in "$ROOT$cert" -noout -ext subjectAltName 2>/dev/null | grep -o 'DNS:[^,]*' | grep -v '^DNS:localhost$' | head -n 1 | cut -d: -f2 || true)
    fi
  fi
  [ -n "$host" ] || host=$(box_addresses | awk '{ print $1 }')
  case "$host" in *:*) host="[$host]" ;; esac
  printf '%s://%s:%s/' "$scheme" "${host:-$(hostname)}" "${port:-3000}"
}

# The unit (its ExecStart on the Node that runs the program in /opt/ems), the drop-in for the backup target, and the
# emsctl wrapper: written for whatever program is in /opt/ems (an install, a --rollback, an automatic rollback).
write_unit_and_wrapper() {
  local service_node backup_target
  service_node=$(service_node_of "$TARGET")
  mkdir -p "$(dirname "$ROOT$UNIT_FILE")"
  sed "s#^ExecStart=/usr/bin/node #ExecStart=$service_node #" "$TARGET/systemd/ems.service" >"$ROOT$UNIT_FILE"
  chmod 0644 "$ROOT$UNIT_FILE"

  # ProtectSystem=strict leaves the service only its data dir: a backup target needs its own writable path.
  backup_target=$(env_value EMS_BACKUP_TARGET)
  if [ -n "$backup_target" ]; then
    mkdir -p "$ROOT$DROPIN_DIR"
    printf '# Written by the EMS installer from EMS_BACKUP_TARGET in %s.\n[Service]\nReadWritePaths=-%s\n' "$ENV_FILE" "$backup_target" >"$ROOT$DROPIN_DIR/backup-target.conf"
    chmod 0644 "$ROOT$DROPIN_DIR/backup-target.conf"
    log "the service may write to the backup target $backup_target ($DROPIN_DIR/backup-target.conf)"
  else
    rm -f "$ROOT$DROPIN_DIR/backup-target.conf"
  fi

  mkdir -p "$(dirname "$ROOT$WRAPPER")"
  cat >"$ROOT$WRAPPER" <<EOF
#!/bin/sh
# emsctl: administer the EMS service on this box (written by the EMS installer).
# Runs the CLI as user $SERVICE_USER with the service's settings, so what it writes stays the service's.
set -eu
NODE=$service_node
APP_DIR=$APP_DIR
ENV_FILE=$ENV_FILE
SERVICE_USER=$SERVICE_USER

if [ "\$(id -un)" != "\$SERVICE_USER" ]; then
  if [ "\$(id -u)" -ne 0 ]; then
    echo "emsctl: run it as root (sudo emsctl ...) or as user \$SERVICE_USER" >&2
    exit 1
  fi
  exec runuser -u "\$SERVICE_USER" -- "\$0" "\$@"
fi
if [ ! -r "\$ENV_FILE" ]; then
  echo "emsctl: cannot read \$ENV_FILE" >&2
  exit 1
fi
cd "\$APP_DIR"
exec env NODE_ENV=production "\$NODE" --env-file="\$ENV_FILE" "\$APP_DIR/cli/emsctl.js" "\$@"
EOF
  chmod 0755 "$ROOT$WRAPPER"
  log "installed $WRAPPER and the unit $UNIT_FILE"
}

# --- Rollback: swap the program folders back ----------------------------------------------------------

if [ "$ROLLBACK" = yes ]; then
  stop_service
  mv "$TARGET" "$TARGET.rollback"
  mv "$PREVIOUS" "$TARGET"
  # The version rolled back from becomes the previous one: --rollback again rolls forward.
  mv "$TARGET.rollback" "$PREVIOUS"
  log "program in $APP_DIR is version $(version_of_tree "$TARGET") again; $APP_DIR.previous holds the one rolled back from"
  # The unit and the wrapper name the Node of the version now in place (a release's own, or the box's).
  write_unit_and_wrapper
  start_service
  if [ -f "$TARGET/.pre-upgrade-backup" ]; then
    log "the data stays as the newer version left it (its migrations only add); should this version not cope with it,"
    log "  restore the backup taken before the upgrade: sudo systemctl stop $SERVICE && sudo emsctl backup restore $(cat "$TARGET/.pre-upgrade-backup") && sudo systemctl start $SERVICE"
  fi
  if ! staged; then log "EMS answers at $(box_url)"; fi
  exit 0
fi

# --- Service user ------------------------------------------------------------------------------------

if staged; then
  log "staging: not creating user $SERVICE_USER, not changing ownership"
elif id -u "$SERVICE_USER" >/dev/null 2>&1; then
  log "user $SERVICE_USER exists"
else
  useradd --system --user-group --home-dir "$DATA_DIR" --no-create-home --shell /usr/sbin/nologin \
    --comment "EMS energy-management service" "$SERVICE_USER"
  log "created system user $SERVICE_USER"
fi

# --- Program: prepared in a folder beside the target, swapped in at the end ---------------------------

NEW="$TARGET.new"
rm -rf "$NEW"
mkdir -p "$(dirname "$TARGET")"
if [ -n "$FROM_TARBALL" ]; then
  # Unpacked beside the target (same file system, so the final move is a rename).
  UNPACKED=$(mktemp -d "$(dirname "$TARGET")/.ems-unpack.XXXXXX")
  tar -xzf "$FROM_TARBALL" -C "$UNPACKED"
  mv "$UNPACKED/ems" "$NEW"
else
  mkdir -p "$NEW"
  FROM="${FROM_BUILD:-$SOURCE_DIR}"
  for item in package.json package-lock.json tsconfig.json tsconfig.build.json README.md src cli systemd installer; do
    if [ -e "$FROM/$item" ]; then cp -R "$FROM/$item" "$NEW/"; fi
  done
  # A build tree may lack the unit and the installer: this installer's own go with it.
  for item in systemd installer; do
    if [ ! -e "$NEW/$item" ]; then cp -R "$SOURCE_DIR/$item" "$NEW/"; fi
  done
  if [ -n "$FROM_BUILD" ]; then
    cp -R "$FROM_BUILD/dist" "$FROM_BUILD/node_modules" "$NEW/"
  else
    log "npm ci (with dev dependencies: the TypeScript compiler is one)"
    (cd "$NEW" && npm ci --no-audit --no-fund)
    log "npm run build"
    (cd "$NEW" && npm run build)
    log "npm prune --omit=dev"
    (cd "$NEW" && npm prune --omit=dev --no-audit --no-fund)
  fi
fi
[ -f "$NEW/dist/src/main.js" ] || { rm -rf "$NEW"; die "the new program has no dist/src/main.js"; }
[ -f "$NEW/dist/cli/emsctl.js" ] || { rm -rf "$NEW"; die "the new program has no dist/cli/emsctl.js"; }

# The runtime check, before anything else changes: the Node that will run the new program uses its database modules
# as the service does (the shipped migrations, thousands of statements prepared and dropped, forced garbage
# collection) and bcrypt. A release that would crash (e.g. better-sqlite3 12 on Node >= 24.19 aborts when the
# collector frees a statement) is refused here, and the installed version keeps running.
NEW_NODE=$(node_of "$NEW")
if [ ! -f "$NEW/installer/check-runtime.mjs" ]; then
  mkdir -p "$NEW/installer"
  cp "$SOURCE_DIR/installer/check-runtime.mjs" "$NEW/installer/"
fi
log "runtime check on node $("$NEW_NODE" -p process.versions.node) ($NEW_NODE)"
# With the V8 flags the unit runs the service with (its ExecStart line): a 1 MiB semi-space collects far more often.
read -r -a service_flags <<<"$(sed -n 's#^ExecStart=/usr/bin/node \(.*\) /opt/ems/dist/src/main.js$#\1#p' "$NEW/systemd/ems.service" 2>/dev/null | head -n 1)"
set +e
check_out=$(cd "$NEW" && "$NEW_NODE" --expose-gc "${service_flags[@]}" installer/check-runtime.mjs 2>&1)
check_status=$?
set -e
if [ "$check_status" -ne 0 ]; then
  rm -rf "$NEW"
  printf '%s\n' "$check_out" | tail -n 5 | sed 's/^/    /' >&2
  how="exit status $check_status"
  if [ "$check_status" -gt 128 ]; then how="killed by signal $(kill -l $((check_status - 128)) 2>/dev/null || echo $((check_status - 128)))"; fi
  die "refusing version $NEW_VERSION: its runtime check failed on the Node that would run it ($how; output above). Nothing was changed${INSTALLED_VERSION:+: version $INSTALLED_VERSION stays installed and running}"
fi
log "${check_out##*$'\n'}"

PRE_UPGRADE_BACKUP=""
if [ "$UPGRADE" = yes ] && [ -f "$ROOT$DATA_DIR/ems.db" ]; then
  # A safety copy before the new version migrates the database on its first start, taken by the installed
  # version (it wrote the data). No backup, no upgrade: the installed version keeps running untouched.
  log "taking a backup before the upgrade"
  if staged; then
    backup_cmd=(env NODE_ENV=production "$(node_of "$TARGET")" --env-file="$ROOT$ENV_FILE" "$TARGET/cli/emsctl.js" --data-dir "$ROOT$DATA_DIR" --json backup run)
  else
    backup_cmd=("$WRAPPER" --json backup run)
  fi
  if ! backup_out=$("${backup_cmd[@]}"); then
    rm -rf "$NEW"
    die "refusing to upgrade: the backup before the upgrade failed (see the emsctl line above); the installed version is unchanged and still running"
  fi
  PRE_UPGRADE_BACKUP=$(printf '%s' "$backup_out" | "$NEW_NODE" -e 'let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => console.log(JSON.parse(s).name))')
  log "backup taken: $PRE_UPGRADE_BACKUP"
fi

if [ "$UPGRADE" = yes ] || [ "$REINSTALL" = yes ]; then stop_service; fi
if [ "$UPGRADE" = yes ] && [ -f "$ROOT$DATA_DIR/ems.db" ]; then
  # The database as the installed version left it when it stopped (nothing written after the backup is missing):
  # what an automatic rollback puts back should the new version not come up. Deleted once it is healthy.
  rm -rf "$UPGRADE_COPY"
  mkdir -p "$UPGRADE_COPY"
  for file in ems.db ems.db-wal ems.db-shm; do
    if [ -f "$ROOT$DATA_DIR/$file" ]; then cp -a "$ROOT$DATA_DIR/$file" "$UPGRADE_COPY/"; fi
  done
  log "kept a copy of the stopped database for an automatic rollback ($(du -sh "$UPGRADE_COPY" | cut -f1))"
fi

if [ "$UPGRADE" = yes ]; then
  # The installed version is kept for --rollback; only the one before it is deleted.
  if [ -e "$PREVIOUS" ]; then discard "$PREVIOUS"; fi
  mv "$TARGET" "$PREVIOUS"
  if [ -n "$PRE_UPGRADE_BACKUP" ]; then printf '%s\n' "$PRE_UPGRADE_BACKUP" >"$PREVIOUS/.pre-upgrade-backup"; fi
elif [ -e "$TARGET" ]; then
  # A reinstall (or a half-removed program): the same version goes; the rollback target stays what it was.
  discard "$TARGET"
fi
mv "$NEW" "$TARGET"
# Root owns the program; the service can read it, never change it.
if ! staged; then chown -R root:root "$TARGET"; fi
chmod -R u=rwX,go=rX "$TARGET"
log "program installed in $APP_DIR"
if [ "$UPGRADE" = yes ]; then
  log "the version it replaced is kept in $APP_DIR.previous (sudo $APP_DIR/installer/install.sh --rollback)"
elif [ -f "$PREVIOUS/package.json" ]; then
  log "$APP_DIR.previous (version $(version_of_tree "$PREVIOUS")) is kept as it was: still the target of --rollback"
fi

# --- Data and settings -----------------------------------------------------------------------------

mkdir -p "$ROOT$DATA_DIR" "$ROOT$CONF_DIR"
own "$SERVICE_USER:$SERVICE_USER" 0750 "$ROOT$DATA_DIR"
own "root:$SERVICE_USER" 0750 "$ROOT$CONF_DIR"
if [ -e "$ROOT$ENV_FILE" ]; then
  log "kept the existing settings in $ENV_FILE"
else
  install -m 0640 "$TARGET/installer/ems.env" "$ROOT$ENV_FILE"
  own "root:$SERVICE_USER" 0640 "$ROOT$ENV_FILE"
  log "wrote $ENV_FILE (every setting documented there)"
fi

# set_env NAME VALUE: replaces the NAME= line (or its commented-out default), else appends it.
set_env() {
  local file="$ROOT$ENV_FILE"
  if grep -q "^#\{0,1\}$1=" "$file"; then
    sed -i "0,/^#\{0,1\}$1=.*/s##$1=$2#" "$file"
  else
    printf '%s=%s\n' "$1" "$2" >>"$file"
  fi
}

if [ "$TLS_SELF_SIGNED" = yes ]; then
  mkdir -p "$ROOT$TLS_DIR"
  own "root:$SERVICE_USER" 0750 "$ROOT$TLS_DIR"
  if [ -f "$ROOT$TLS_DIR/ems.crt" ] && [ -f "$ROOT$TLS_DIR/ems.key" ]; then
    log "kept the certificate in $TLS_DIR (delete ems.crt and ems.key there to make a new one)"
  else
    # P-256, valid 825 days (the most browsers accept for a certificate they are told to trust).
    # The name, and every address of this box: a browser pointed at https://<IP>:<port>/ accepts it once trusted.
    TLS_IPS=$(box_addresses)
    san="DNS:$TLS_NAME,DNS:localhost,IP:127.0.0.1"
    for ip in $TLS_IPS; do san="$san,IP:$ip"; done
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 825 \
      -subj "/CN=$TLS_NAME" -addext "subjectAltName=$san" \
      -keyout "$ROOT$TLS_DIR/ems.key" -out "$ROOT$TLS_DIR/ems.crt" 2>/dev/null || die "openssl could not create the certificate"
    own "root:$SERVICE_USER" 0640 "$ROOT$TLS_DIR/ems.key"
    own "root:root" 0644 "$ROOT$TLS_DIR/ems.crt"
    log "created a self-signed certificate for $TLS_NAME${TLS_IPS:+ and ${TLS_IPS// /, }} in $TLS_DIR (browsers warn until it is trusted; replace both files with a CA-signed pair, then: systemctl kill -s HUP $SERVICE)"
  fi
  set_env EMS_TLS_CERT "$TLS_DIR/ems.crt"
  set_env EMS_TLS_KEY "$TLS_DIR/ems.key"
  log "EMS_TLS_CERT and EMS_TLS_KEY set in $ENV_FILE: the service speaks HTTPS"
fi

# --- systemd unit, its drop-in for the backup target, and the emsctl wrapper --------------------------

write_unit_and_wrapper

# --- Start -------------------------------------------------------------------------------------------

start_service
if staged; then
  log "on the box EMS will answer at $(box_url)"
else
  log "$SERVICE is running and healthy: $(box_url) (status: sudo emsctl status)"
fi
# systemd's own lines ("Started ems.service") are not JSON: fromjson? keeps only the service's lines.
log "logs: journalctl -u $SERVICE -f (as JSON: journalctl -u $SERVICE -o cat | jq -R 'fromjson?')"

if [ "$UPGRADE" = yes ]; then
  rm -rf "$UPGRADE_COPY"
  record_upgrade upgraded ""
  log "upgrade done: data in $DATA_DIR and settings in $ENV_FILE were kept"
elif [ "$REINSTALL" = yes ]; then
  log "reinstall done: the same version, with the unit, wrapper and drop-ins written again; data and settings were kept"
elif [ "$KEPT_DATA" = yes ]; then
  log "installed on the data kept in $DATA_DIR: its users, settings and history are as they were"
  log "  sign in with an existing account (no new admin password is made; a forgotten one: sudo emsctl user set-password NAME)"
  log "backups: the schedule stored in the data applies (sudo emsctl backup schedule show)"
else
  log "first install: on its first start the service creates the user 'admin' with a random password,"
  log "  written to $DATA_DIR/initial-admin-password (mode 0600): sudo cat $DATA_DIR/initial-admin-password"
  log "  sign in, change it, then delete that file"
  log "backups run nightly at 03:30 into $DATA_DIR/backups; set EMS_BACKUP_TARGET in $ENV_FILE for a copy on another disk"
fi
