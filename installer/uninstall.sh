#!/usr/bin/env bash
# Removes EMS from a systemd box: the unit, /opt/ems (and the version kept for rollback) and /usr/local/bin/emsctl. The data in /var/lib/ems,
# the settings in /etc/ems and the user ems are kept unless --purge is given.
#
#   sudo installer/uninstall.sh               remove the program, keep data and settings
#   sudo installer/uninstall.sh --purge       also delete /var/lib/ems (database, uploads, backups), /etc/ems and user ems
#   installer/uninstall.sh --root DIR [...]   act on a staging root made by install.sh --root: no systemctl, no userdel
set -euo pipefail

readonly APP_DIR=/opt/ems
readonly DATA_DIR=/var/lib/ems
readonly CONF_DIR=/etc/ems
readonly UNIT_FILE=/etc/systemd/system/ems.service
readonly DROPIN_DIR=/etc/systemd/system/ems.service.d
readonly WRAPPER=/usr/local/bin/emsctl
readonly SERVICE_USER=ems
readonly SERVICE=ems

ROOT=""
PURGE=no

log() { printf 'ems-uninstall: %s\n' "$*"; }
die() {
  printf 'ems-uninstall: error: %s\n' "$*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --root)
      [ $# -ge 2 ] || die "--root needs a directory"
      [ -d "$2" ] || die "--root: no such directory: $2"
      ROOT=$(cd "$2" && pwd)
      shift 2
      ;;
    --purge)
      PURGE=yes
      shift
      ;;
    -h | --help)
      sed -n '2,8s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done

staged() { [ -n "$ROOT" ]; }

if ! staged && [ "$(id -u)" -ne 0 ]; then
  die "run as root (sudo $0), or act on a staging root with --root DIR"
fi

# Without a running systemd (a container, a rescue shell) there is no service to stop: remove the files anyway.
SYSTEMD=yes
if staged; then
  SYSTEMD=no
  log "staging root $ROOT: systemctl not run"
elif [ ! -d /run/systemd/system ]; then
  SYSTEMD=no
  log "warning: systemd is not running on this box; no service to stop, removing the files only"
elif [ -f "$UNIT_FILE" ]; then
  systemctl disable --now "$SERVICE" >/dev/null 2>&1 || true
  log "stopped and disabled $SERVICE"
fi

rm -f "$ROOT$UNIT_FILE"
rm -rf "$ROOT$DROPIN_DIR"
if [ "$SYSTEMD" = yes ]; then systemctl daemon-reload || log "warning: systemctl daemon-reload failed"; fi
rm -rf "$ROOT$APP_DIR" "$ROOT$APP_DIR.new" "$ROOT$APP_DIR.old" "$ROOT$APP_DIR.discard" "$ROOT$APP_DIR.previous"
rm -f "$ROOT$WRAPPER"
log "removed $APP_DIR, $WRAPPER and $UNIT_FILE"

if [ "$PURGE" = yes ]; then
  rm -rf "$ROOT$DATA_DIR" "$ROOT$CONF_DIR"
  log "purged $DATA_DIR (database, uploads, backups) and $CONF_DIR"
  if ! staged && id -u "$SERVICE_USER" >/dev/null 2>&1; then
    userdel "$SERVICE_USER"
    log "removed user $SERVICE_USER"
  fi
else
  log "kept $DATA_DIR (database, uploads, backups) and $CONF_DIR; run again with --purge to delete them"
fi
