#!/usr/bin/env bash
# Every test and check the project has, from a fresh clone: set-up, static checks, Python tests,
# then the extension's TypeScript checks, unit tests and end-to-end tests in a real VS Code.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/setup-ssh.sh  # OpenSSH server/client for tests/remote (real sshd on loopback)
bash scripts/setup-editors.sh  # Neovim (Debian's and >= 0.11), Emacs + eglot for tests/editors
export PATH="$PWD/.venv/bin:$PATH"

echo "== ruff"; ruff check server tests benchmarks
echo "== ruff format"; ruff format --check server tests benchmarks
echo "== mypy"; mypy
echo "== pytest"; pytest -q -p no:cacheprovider "$@"
# The simulate tests again with the job process spawned (a fresh interpreter), the path macOS and Windows
# take (nki_studio.verify.start_method); ~4 min on 2 busy cores, most of it worker start-ups.
echo "== pytest: simulate with spawn"
NKI_STUDIO_SIM_START_METHOD=spawn pytest -q -p no:cacheprovider tests/verify tests/fuzz/test_process_escape.py

# The VS Code extension (package.json at the root; scripts/setup-extension.sh installs Node deps, Chromium,
# ripgrep and code-server). Build/lint/unit tests, then the .vsix with the bundled Python server, a test of
# that .vsix on a clean Python, and end-to-end tests in a real VS Code (code-server + headless Chromium).
echo "== extension: set-up"; bash scripts/setup-extension.sh
echo "== extension: typecheck"; npm run --silent typecheck
echo "== extension: eslint"; npm run --silent lint
echo "== extension: prettier"; npm run --silent format:check
echo "== extension: unit tests"; npm run --silent test:unit
echo "== extension: package"; npm run --silent package
# One foreign target too (its wheels from pip download, cached in .cache/wheels) and the platform-neutral one:
# the packaging test checks the packages' compiled files against their targets (ELF/Mach-O headers); the
# linux-x64 one also runs, and the neutral one runs on a private environment made by the
# "NKI: Create Server Environment" steps (pins from the registry or pip's cache).
echo "== extension: package darwin-arm64, universal"; bash scripts/package-all.sh darwin-arm64 universal
version=$(node -p 'require("./package.json").version')
echo "== extension: packaging test"
NKI_STUDIO_VSIXES="nki-studio-$version.vsix dist/nki-studio-darwin-arm64-$version.vsix dist/nki-studio-universal-$version.vsix" \
  npm run --silent test:package
echo "== extension: end-to-end"; npm run --silent test:e2e
# Agent mode's MCP registration needs VS Code >= 1.101: its own code-server (4.103.2 on Node 22 from PyPI,
# installed by setup-extension.sh), after the main suite; about 2 minutes (two workbenches).
echo "== extension: end-to-end, MCP in VS Code 1.103"; npm run --silent test:e2e:mcp
