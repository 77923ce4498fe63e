#!/usr/bin/env bash
# Idempotent set-up for the VS Code extension's build and tests, from a fresh clone:
#   1. Debian packages the end-to-end tests need (chromium, ripgrep, libkrb5-dev for code-server's kerberos module);
#   2. the extension's npm dependencies (npm ci from package-lock.json);
#   3. code-server (a real VS Code build published on npm) into .cache/e2e/, offline-safe: its ripgrep
#      postinstall is fed Debian's rg through the cache folder @vscode/ripgrep looks in first.
# Usage: scripts/setup-extension.sh [--no-e2e]   (--no-e2e: only step 2)
set -euo pipefail
cd "$(dirname "$0")/.."

CODE_SERVER_VERSION=4.100.3   # VS Code 1.100.3; the last line that runs on Node 20
RIPGREP_PKG_VERSION=1.15.11   # the @vscode/ripgrep version code-server 4.100.3 pins
E2E_DIR=.cache/e2e

want_e2e=1
[ "${1:-}" = "--no-e2e" ] && want_e2e=0

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup-extension: Node.js 20+ and npm are required (apt-get install nodejs npm, or nodesource)." >&2
  exit 2
fi

# 2. npm dependencies (before the slow steps so build/lint/unit tests can run even when e2e set-up fails).
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
[ "$want_e2e" = 1 ] || exit 0

# 1. Debian packages.
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v rg >/dev/null || missing+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup-extension: installing ${missing[*]} with apt-get"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 3. code-server.
installed=""
[ -f "$E2E_DIR/node_modules/code-server/package.json" ] &&
  installed=$(node -p "require('./$E2E_DIR/node_modules/code-server/package.json').version")
if [ "$installed" != "$CODE_SERVER_VERSION" ]; then
  case "$(uname -m)" in
    x86_64) rg_arch=x86_64-unknown-linux-musl ;;
    aarch64) rg_arch=aarch64-unknown-linux-musl ;;
    *) echo "setup-extension: no ripgrep asset name known for $(uname -m)" >&2; exit 2 ;;
  esac
  cache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-$RIPGREP_PKG_VERSION"
  mkdir -p "$cache/x"
  cp "$(command -v rg)" "$cache/x/rg"
  tar czf "$cache/ripgrep-v13.0.0-10-$rg_arch.tar.gz" -C "$cache/x" rg
  mkdir -p "$E2E_DIR"
  [ -f "$E2E_DIR/package.json" ] || echo '{"private": true}' > "$E2E_DIR/package.json"
  echo "setup-extension: installing code-server@$CODE_SERVER_VERSION (a few minutes)"
  # code-server's postinstall runs nested npm installs of VS Code's own native modules (kerberos,
  # node-pty, ripgrep…); npm >= 11.10 skips dependency install scripts unless allowed, and the nested
  # installs have no allowScripts of their own, so scripts are allowed for this pinned install only.
  # npx (node-gyp) must be allowed to fetch from the registry without a prompt; the postinstall refuses
  # to run as root unless npm_config_unsafe_perm is set (npm 11 warns about the key but passes it on).
  rm -rf "$E2E_DIR/node_modules"
  (cd "$E2E_DIR" && npm_config_yes=true npm_config_unsafe_perm=true npm_config_dangerously_allow_all_scripts=true \
    npm install --no-audit --no-fund --no-save "code-server@$CODE_SERVER_VERSION" >/dev/null)
  # The postinstall's last steps: the asar symlink and the built-in extensions' dependencies.
  test -L "$E2E_DIR/node_modules/code-server/lib/vscode/node_modules.asar" &&
    test -d "$E2E_DIR/node_modules/code-server/lib/vscode/extensions/node_modules" ||
    { echo "setup-extension: code-server's postinstall did not complete" >&2; exit 2; }
fi
