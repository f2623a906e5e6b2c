#!/usr/bin/env bash
# Installs or upgrades EMS on a systemd box: user ems, program in /opt/ems, data in /var/lib/ems,
# settings in /etc/ems/ems.env, unit ems.service, /usr/local/bin/emsctl. Upgrade = run it again.
#
#   sudo installer/install.sh                      install/upgrade from this checkout (npm ci, build, prune)
#   sudo installer/install.sh --from-build DIR     use a tree that already holds dist/ and production node_modules/
#   installer/install.sh --root DIR [...]          stage everything under DIR: no user, no chown, no systemctl
set -euo pipefail

readonly MIN_NODE=20.18.0
readonly APP_DIR=/opt/ems
readonly DATA_DIR=/var/lib/ems
readonly CONF_DIR=/etc/ems
readonly ENV_FILE=/etc/ems/ems.env
readonly UNIT_FILE=/etc/systemd/system/ems.service
readonly WRAPPER=/usr/local/bin/emsctl
readonly SERVICE_USER=ems
readonly SERVICE=ems

SOURCE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=""
FROM_BUILD=""

usage() {
  sed -n '2,8s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

log() { printf 'ems-install: %s\n' "$*"; }
die() {
  printf 'ems-install: error: %s\n' "$*" >&2
  exit 1
}

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
    -h | --help)
      usage
      exit 0
      ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done

staged() { [ -n "$ROOT" ]; }

# --- Checks ------------------------------------------------------------------------------------------

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

NODE_BIN=$(command -v node || true)
[ -n "$NODE_BIN" ] || die "Node.js >= $MIN_NODE is required and 'node' is not on PATH"
case "$NODE_BIN" in
  /home/* | /root/*)
    # The unit's ProtectHome=yes hides home directories from the service (nvm and similar install there).
    staged || die "node at $NODE_BIN lives in a home directory, which the service cannot see; install Node.js system-wide (e.g. /usr/bin/node)"
    ;;
esac
NODE_VERSION=$("$NODE_BIN" -p 'process.versions.node')
version_at_least "$NODE_VERSION" "$MIN_NODE" || die "Node.js >= $MIN_NODE is required, found $NODE_VERSION at $NODE_BIN"

if ! staged && [ "$(id -u)" -ne 0 ]; then
  die "run as root (sudo $0), or stage into a directory with --root DIR"
fi
if [ -n "$FROM_BUILD" ]; then
  [ -f "$FROM_BUILD/dist/src/main.js" ] || die "--from-build: $FROM_BUILD/dist/src/main.js is missing (run npm run build there)"
  [ -e "$FROM_BUILD/node_modules" ] || die "--from-build: $FROM_BUILD/node_modules is missing (npm ci --omit=dev there)"
else
  command -v npm >/dev/null || die "npm is required to build EMS (or pass --from-build DIR)"
fi

UPGRADE=no
[ -f "$ROOT$APP_DIR/package.json" ] && UPGRADE=yes
log "installing EMS from ${FROM_BUILD:-$SOURCE_DIR} (node $NODE_VERSION at $NODE_BIN)${ROOT:+ into staging root $ROOT}"

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

# own OWNER:GROUP MODE PATH...: ownership only on a real install; the mode always.
own() {
  local owner=$1 mode=$2
  shift 2
  if ! staged; then chown "$owner" "$@"; fi
  chmod "$mode" "$@"
}

# --- Program: built in a staging folder beside the target, swapped in at the end ----------------------

TARGET="$ROOT$APP_DIR"
NEW="$TARGET.new"
rm -rf "$NEW"
mkdir -p "$NEW"
FROM="${FROM_BUILD:-$SOURCE_DIR}"
for item in package.json package-lock.json tsconfig.json tsconfig.build.json README.md src cli systemd installer; do
  if [ -e "$FROM/$item" ]; then cp -R "$FROM/$item" "$NEW/"; fi
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
[ -f "$NEW/dist/src/main.js" ] || die "the build produced no dist/src/main.js"
[ -f "$NEW/dist/cli/emsctl.js" ] || die "the build produced no dist/cli/emsctl.js"

if [ "$UPGRADE" = yes ] && ! staged; then
  # A safety copy before the new version migrates the database on its first start.
  if [ -x "$WRAPPER" ] && [ -f "$DATA_DIR/ems.db" ]; then
    log "taking a backup before the upgrade"
    "$WRAPPER" backup run || log "warning: the pre-upgrade backup failed; continuing"
  fi
  if systemctl is-active --quiet "$SERVICE"; then
    log "stopping $SERVICE"
    systemctl stop "$SERVICE"
  fi
fi

mkdir -p "$(dirname "$TARGET")"
rm -rf "$TARGET.old"
if [ -e "$TARGET" ]; then mv "$TARGET" "$TARGET.old"; fi
mv "$NEW" "$TARGET"
rm -rf "$TARGET.old"
# Root owns the program; the service can read it, never change it.
if ! staged; then chown -R root:root "$TARGET"; fi
chmod -R u=rwX,go=rX "$TARGET"
log "program installed in $APP_DIR"

# --- Data and settings -----------------------------------------------------------------------------

mkdir -p "$ROOT$DATA_DIR" "$ROOT$CONF_DIR"
own "$SERVICE_USER:$SERVICE_USER" 0750 "$ROOT$DATA_DIR"
own "root:$SERVICE_USER" 0750 "$ROOT$CONF_DIR"
if [ -e "$ROOT$ENV_FILE" ]; then
  log "kept the existing settings in $ENV_FILE"
else
  install -m 0640 "$SOURCE_DIR/installer/ems.env" "$ROOT$ENV_FILE"
  own "root:$SERVICE_USER" 0640 "$ROOT$ENV_FILE"
  log "wrote $ENV_FILE (every setting documented there)"
fi

# --- systemd unit and the emsctl wrapper -------------------------------------------------------------

mkdir -p "$(dirname "$ROOT$UNIT_FILE")"
sed "s#^ExecStart=/usr/bin/node #ExecStart=$NODE_BIN #" "$SOURCE_DIR/systemd/ems.service" >"$ROOT$UNIT_FILE"
chmod 0644 "$ROOT$UNIT_FILE"

mkdir -p "$(dirname "$ROOT$WRAPPER")"
cat >"$ROOT$WRAPPER" <<EOF
#!/bin/sh
# emsctl: administer the EMS service on this box (written by the EMS installer).
# Runs the CLI as user $SERVICE_USER with the service's settings, so what it writes stays the service's.
set -eu
NODE=$NODE_BIN
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

# --- Start -------------------------------------------------------------------------------------------

if staged; then
  log "staging: systemctl not run (on the box: systemctl daemon-reload && systemctl enable --now $SERVICE)"
else
  systemctl daemon-reload
  systemctl enable "$SERVICE" >/dev/null
  systemctl restart "$SERVICE"
  log "$SERVICE enabled and started; migrations are applied on start (journalctl -u $SERVICE -f)"
fi

if [ "$UPGRADE" = yes ]; then
  log "upgrade done: data in $DATA_DIR and settings in $ENV_FILE were kept"
else
  log "first install: on its first start the service creates the user 'admin' with a random password,"
  log "  written to $DATA_DIR/initial-admin-password (mode 0600): sudo cat $DATA_DIR/initial-admin-password"
  log "  sign in, change it, then delete that file"
fi
