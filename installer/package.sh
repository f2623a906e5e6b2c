#!/usr/bin/env bash
# Builds the release tarball (npm run package): compiled code (no TypeScript, no source maps), the data files the
# service reads from src/ (migrations, message catalogues, the wallboard's page), the docs the README links to, the unit
# and installer, the release's own Node (installer/runtime.json: an LTS from the npm registry, in runtime/bin/node) and the
# production node_modules installed for that Node, so `install.sh --from-tarball FILE` needs no Node, no compiler and
# no registry on the box. Needs the npm registry here (the Node and the modules are fetched once, then cached).
#
#   npm run package [-- --out DIR]      writes DIR/ems-<version>-<platform>-<arch>.tar.gz (default DIR: release/)
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

cd "$REPO"

VERSION=$(node -p 'require("./package.json").version')
NODE_DIR=$(bash "$REPO/installer/runtime.sh" node)
RUNTIME_NODE="$NODE_DIR/bin/node"
PLATFORM=$("$RUNTIME_NODE" -p 'process.platform')
ARCH=$("$RUNTIME_NODE" -p 'process.arch')
ABI=$("$RUNTIME_NODE" -p 'process.versions.modules')
RUNTIME_VERSION=$("$RUNTIME_NODE" -p 'process.versions.node')
NAME="ems-$VERSION-$PLATFORM-$ARCH"

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/ems-package.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
TREE="$STAGE/ems"
mkdir -p "$TREE"

if [ "$BUILD" = yes ]; then
  [ -d "$REPO/node_modules" ] || die "no node_modules in $REPO: run npm ci first (the TypeScript compiler is one)"
  log "compiling the service and building the staff app (npm run build)"
  rm -rf dist
  npm run build --silent >/dev/null
fi
if [ ! -f dist/src/main.js ] || [ ! -f dist/cli/emsctl.js ]; then die "no compiled dist/ (run without --no-build)"; fi
# The staff app ships built (npm run build runs build:web): nothing is built on the box.
if [ ! -f dist/web/index.html ]; then die "no staff app in dist/web (run without --no-build, or npm run build:web)"; fi
# A release runs compiled code only: what it takes from src/ and cli/ is what the compiled code reads there (the
# migrations, message catalogues, the wallboard's static page; the emsctl launcher, which finds no emsctl.ts and so
# runs dist/cli/emsctl.js whatever NODE_ENV says). The staff app's sources are built into dist/web.
for item in package.json package-lock.json README.md docs dist systemd installer; do
  cp -R "$item" "$TREE/"
done
mkdir -p "$TREE/cli"
cp cli/emsctl.js "$TREE/cli/"
tar -cf - --exclude='*.ts' --exclude='*.tsx' --exclude='src/web' src | tar -C "$TREE" -xf -
find "$TREE/dist" -name '*.map' -delete

log "the runtime: node $RUNTIME_VERSION (ABI $ABI) into runtime/bin/node"
mkdir -p "$TREE/runtime/bin"
cp "$RUNTIME_NODE" "$TREE/runtime/bin/node"
cp "$NODE_DIR/LICENSE" "$TREE/runtime/LICENSE"
# The npm build of Node carries its debug information and symbol table (126 MB, 42.6 MiB of the tarball): stripped as
# Debian strips its nodejs, 108 MB (−4 MiB compressed). Native frames in a core dump lose their names; JavaScript stack
# traces are unchanged.
if command -v strip >/dev/null; then
  strip "$TREE/runtime/bin/node"
  "$TREE/runtime/bin/node" -e '' || die "the stripped node does not run"
else
  log "no strip (binutils) here: the runtime ships with its debug information"
fi

# The production modules installed for that Node with runtime.json's versions, cached by what decides them (the lock
# file, runtime.json, the Node, and this script's trimming): a second package of the same sources copies them
# (seconds, no registry).
KEY=$(cat package-lock.json installer/runtime.json installer/package.sh | sha256sum | cut -c1-16)
MODULES_CACHE="${EMS_RUNTIME_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ems-runtime}/modules-$RUNTIME_VERSION-$KEY"
if [ ! -d "$MODULES_CACHE/node_modules" ]; then
  log "production node_modules for node $RUNTIME_VERSION (npm install --omit=dev; cached in $MODULES_CACHE)"
  WORK="$STAGE/modules"
  mkdir -p "$WORK"
  cp package.json package-lock.json "$WORK/"
  bash "$REPO/installer/runtime.sh" modules "$WORK" --omit=dev
  # Build leftovers and what no release runs: sources of native modules, other platforms' prebuilt binaries.
  (
    cd "$WORK/node_modules"
    rm -rf better-sqlite3/deps better-sqlite3/src better-sqlite3/build/Release/obj.target better-sqlite3/build/Release/test_extension.node
    # prebuilds/<platform>-<arch>/*.node (bcrypt) and prebuilds/<platform>-<arch>.node (better-sqlite3 13).
    find . -type d -path '*/prebuilds/*' ! -path '*/prebuilds/*/*' ! -name "$PLATFORM-$ARCH" -prune -exec rm -rf {} +
    find . -type f -path '*/prebuilds/*.node' ! -path '*/prebuilds/*/*' ! -name "$PLATFORM-$ARCH.node" -delete
    # Nothing at run time reads type declarations, source maps or the packages' own docs (licenses stay), nor
    # exceljs's browser bundles (node loads its lib/): ~80 of 220 MB.
    find . -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.md' -o -name '*.markdown' \) \
      ! -iname 'licen[cs]e*' ! -iname 'notice*' -delete
    rm -rf exceljs/dist
    # Packages' own tests and examples: nothing requires them (~6 MB).
    find . -type d \( -name test -o -name tests -o -name __tests__ -o -name example -o -name examples \) -prune -exec rm -rf {} +
    # The PDF fonts: the reports and statements use each script's Regular and Bold only (src/reporting/reports/pdfText.ts,
    # src/billing/documents.ts); the other 16 Latin and 3 Chinese weights are 35 MB (~25 MiB compressed).
    find @embedpdf/*/fonts -type f ! -name '*-Regular.*' ! -name '*-Bold.*' -delete
  )
  rm -rf "$MODULES_CACHE.tmp"
  mkdir -p "$MODULES_CACHE.tmp"
  mv "$WORK/node_modules" "$WORK/package.json" "$WORK/package-lock.json" "$MODULES_CACHE.tmp/"
  mv "$MODULES_CACHE.tmp" "$MODULES_CACHE"
fi
cp -a "$MODULES_CACHE/node_modules" "$TREE/node_modules"
# package.json and the lock file as installed: they name the versions that ship (better-sqlite3 for the runtime).
cp "$MODULES_CACHE/package.json" "$MODULES_CACHE/package-lock.json" "$TREE/"

# The check the installer repeats on the box: the database used as the service uses it, under forced GC, on the
# release's own Node.
(cd "$TREE" && runtime/bin/node --expose-gc installer/check-runtime.mjs) >&2 ||
  die "the packaged tree fails its runtime check (installer/check-runtime.mjs) on node $RUNTIME_VERSION"

COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
cat >"$TREE/ems-release.json" <<JSON
{
  "name": "ems",
  "version": "$VERSION",
  "commit": "$COMMIT",
  "platform": "$PLATFORM",
  "arch": "$ARCH",
  "nodeAbi": "$ABI",
  "runtime": "node $RUNTIME_VERSION",
  "builtWith": "v$RUNTIME_VERSION",
  "builtAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
JSON

mkdir -p "$OUT"
# ems-release.json first: the installer's dry run and its checks read it and stop there instead of decompressing the
# whole archive (tar --occurrence).
tar -cf "$STAGE/$NAME.tar" -C "$STAGE" ems/ems-release.json
tar -rf "$STAGE/$NAME.tar" -C "$STAGE" --exclude=ems/ems-release.json ems
gzip -c "$STAGE/$NAME.tar" >"$OUT/$NAME.tar.gz"
log "wrote $OUT/$NAME.tar.gz ($(du -h "$OUT/$NAME.tar.gz" | cut -f1); installs with: tar -xzf $NAME.tar.gz && sudo ems/installer/install.sh --from-tarball $NAME.tar.gz)"
