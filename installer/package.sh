#!/usr/bin/env bash
# Builds the release tarball (npm run package): compiled code, the shipped migrations and sources, the unit and
# installer, and the production node_modules with their native binaries for this platform and Node ABI, so
# `install.sh --from-tarball FILE` needs no compiler and no registry on the box.
#
#   npm run package [-- --out DIR]      writes DIR/ems-<version>-<platform>-<arch>-node<ABI>.tar.gz (default DIR: release/)
#   npm run package -- --no-build       package the dist/ already compiled here
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="$REPO/release"
BUILD=yes

log() { printf 'ems-package: %s\n' "$*"; }
die() {
  printf 'ems-package: error: %s\n' "$*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --out)
      [ $# -ge 2 ] || die "--out needs a directory"
      OUT=$(mkdir -p "$2" && cd "$2" && pwd)
      shift 2
      ;;
    --no-build)
      BUILD=no
      shift
      ;;
    -h | --help)
      sed -n '2,8s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done

[ -d "$REPO/node_modules" ] || die "no node_modules in $REPO: run npm ci first"
cd "$REPO"

VERSION=$(node -p 'require("./package.json").version')
PLATFORM=$(node -p 'process.platform')
ARCH=$(node -p 'process.arch')
ABI=$(node -p 'process.versions.modules')
NAME="ems-$VERSION-$PLATFORM-$ARCH-node$ABI"

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/ems-package.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
TREE="$STAGE/ems"
mkdir -p "$TREE"

if [ "$BUILD" = yes ]; then
  log "compiling the service and building the staff app (npm run build)"
  rm -rf dist
  npm run build --silent >/dev/null
fi
if [ ! -f dist/src/main.js ] || [ ! -f dist/cli/emsctl.js ]; then die "no compiled dist/ (run without --no-build)"; fi
# The staff app ships built (npm run build runs build:web): nothing is built on the box.
if [ ! -f dist/web/index.html ]; then die "no staff app in dist/web (run without --no-build, or npm run build:web)"; fi
for item in package.json package-lock.json README.md dist src cli systemd installer; do
  cp -R "$item" "$TREE/"
done

log "production node_modules (copied from this checkout, dev dependencies pruned offline)"
mkdir "$TREE/node_modules"
# readlink: a checkout whose node_modules is a link to another one's (worktrees) packages the real tree.
cp -a "$(readlink -f node_modules)/." "$TREE/node_modules/"
(cd "$TREE" && npm prune --omit=dev --offline --no-audit --no-fund --silent)
# Build leftovers of the native modules: only the .node binaries are loaded at run time.
rm -rf "$TREE/node_modules/better-sqlite3/deps" "$TREE/node_modules/better-sqlite3/src" \
  "$TREE/node_modules/better-sqlite3/build/Release/obj.target" "$TREE/node_modules/better-sqlite3/build/Release/test_extension.node"
# The binaries must load with this Node: the same check the installer repeats on the box.
(cd "$TREE" && node -e 'require("better-sqlite3")(":memory:").close(); require("bcrypt").hashSync("x", 4)') ||
  die "the native modules do not load from the packaged tree"

COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
cat >"$TREE/ems-release.json" <<JSON
{
  "name": "ems",
  "version": "$VERSION",
  "commit": "$COMMIT",
  "platform": "$PLATFORM",
  "arch": "$ARCH",
  "nodeAbi": "$ABI",
  "builtWith": "$(node -p 'process.version')",
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
JSON

mkdir -p "$OUT"
tar -czf "$OUT/$NAME.tar.gz" -C "$STAGE" ems
log "wrote $OUT/$NAME.tar.gz ($(du -h "$OUT/$NAME.tar.gz" | cut -f1); installs with: tar -xzf $NAME.tar.gz && sudo ems/installer/install.sh --from-tarball $NAME.tar.gz)"
