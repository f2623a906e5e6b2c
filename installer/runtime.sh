#!/usr/bin/env bash
# The runtime a release carries (installer/runtime.json): an LTS Node from the npm registry (package node-linux-<arch>,
# the binaries the `node` package installs) and the dependencies built for it. Used by npm run package and by CI's
# second run (.ci/run); a checkout itself runs on the Node on PATH (README, "Runtime").
#
#   installer/runtime.sh node                 prints the directory of the release's Node (bin/node, include/node),
#                                             fetched once with `npm pack` into the cache (EMS_RUNTIME_CACHE,
#                                             default ~/.cache/ems-runtime) and reused
#   installer/runtime.sh modules DIR [--omit=dev]
#                                             installs DIR's dependencies (DIR holds package.json and package-lock.json)
#                                             with that Node, with runtime.json's versions in place of package.json's
#                                             (package.json and package-lock.json in DIR are rewritten to say so);
#                                             native modules compile against its headers (no download)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SPEC="$HERE/runtime.json"
CACHE=${EMS_RUNTIME_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ems-runtime}

log() { printf 'ems-runtime: %s\n' "$*" >&2; }
die() {
  printf 'ems-runtime: error: %s\n' "$*" >&2
  exit 1
}

# runtime.json's "node" (one line: "node": "24.21.0").
NODE_VERSION=$(sed -n 's/^ *"node": *"\([0-9.]*\)".*/\1/p' "$SPEC" | head -n 1)
[ -n "$NODE_VERSION" ] || die "no \"node\" version in $SPEC"

case "$(uname -m)" in
  x86_64) ARCH=x64 ;;
  aarch64) ARCH=arm64 ;;
  armv7l) ARCH=armv7l ;;
  *) die "no Node build for $(uname -m) in the npm registry's node-linux-* packages" ;;
esac
[ "$(uname -s)" = Linux ] || die "releases are built on Linux"

# The Node directory, fetched when missing: npm pack checks the registry's integrity hash.
runtime_node() {
  local dir="$CACHE/node-v$NODE_VERSION-linux-$ARCH"
  if [ ! -x "$dir/bin/node" ]; then
    command -v npm >/dev/null || die "npm is needed to fetch node-linux-$ARCH@$NODE_VERSION"
    mkdir -p "$CACHE"
    local work
    work=$(mktemp -d "$CACHE/.fetch.XXXXXX")
    log "fetching node-linux-$ARCH@$NODE_VERSION from the npm registry"
    (cd "$work" && npm pack "node-linux-$ARCH@$NODE_VERSION" --silent >/dev/null) || {
      rm -rf "$work"
      die "npm pack node-linux-$ARCH@$NODE_VERSION failed"
    }
    mkdir "$work/unpacked"
    tar -xzf "$work"/node-linux-"$ARCH"-"$NODE_VERSION".tgz -C "$work/unpacked"
    [ -x "$work/unpacked/package/bin/node" ] || die "node-linux-$ARCH@$NODE_VERSION holds no bin/node"
    rm -rf "$dir"
    mv "$work/unpacked/package" "$dir"
    rm -rf "$work"
  fi
  [ "$("$dir/bin/node" -p process.versions.node)" = "$NODE_VERSION" ] || die "$dir/bin/node is not Node $NODE_VERSION"
  printf '%s\n' "$dir"
}

modules() {
  local target=$1
  shift
  { [ -f "$target/package.json" ] && [ -f "$target/package-lock.json" ]; } || die "$target has no package.json and package-lock.json"
  local node_dir
  node_dir=$(runtime_node)
  # runtime.json's dependency versions into DIR's package.json (exact versions: the lock file then says what shipped),
  # and its Node as the engine.
  # shellcheck disable=SC2016
  "$node_dir/bin/node" -e '
    const fs = require("node:fs");
    const [spec, file] = process.argv.slice(1);
    const wanted = JSON.parse(fs.readFileSync(spec, "utf8")).dependencies ?? {};
    const manifest = JSON.parse(fs.readFileSync(file, "utf8"));
    for (const [name, version] of Object.entries(wanted)) {
      if (!manifest.dependencies?.[name]) throw new Error(`runtime.json names ${name}, which package.json does not depend on`);
      manifest.dependencies[name] = version;
    }
    // The checkout says Node 20 or 22 (better-sqlite3 12); this tree runs on the release'"'"'s Node alone.
    manifest.engines = { node: process.versions.node };
    fs.writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  ' "$SPEC" "$target/package.json"
  log "npm install in $target on node $NODE_VERSION ($*)"
  # npm and node-gyp run on the release's Node (first on PATH) and compile against its headers (nodedir): the
  # binaries are for its ABI, and nothing is downloaded besides the registry's packages.
  (cd "$target" && PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" npm install --no-audit --no-fund "$@" >&2)
  (cd "$target" && "$node_dir/bin/node" -e 'require("better-sqlite3")(":memory:").close(); require("bcrypt").hashSync("x", 4)') ||
    die "the native modules in $target do not load on node $NODE_VERSION"
}

case "${1:-}" in
  node) runtime_node ;;
  modules)
    [ $# -ge 2 ] || die "modules needs a directory"
    dir=$(cd "$2" && pwd)
    shift 2
    modules "$dir" "$@"
    ;;
  version) printf '%s\n' "$NODE_VERSION" ;;
  -h | --help | "") sed -n '2,13s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" ;;
  *) die "unknown command: $1 (see --help)" ;;
esac
