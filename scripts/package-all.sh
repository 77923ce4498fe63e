#!/usr/bin/env bash
# Every .vsix: one per VS Code target (its compiled wheels fetched with pip download, nothing built from source)
# plus the platform-neutral one, into dist/; prints each package's size. Downloaded wheels stay in .cache/wheels
# (and pip's own cache), so a second run downloads nothing. Targets to build: arguments, default all.
#   bash scripts/package-all.sh                 # all six
#   bash scripts/package-all.sh darwin-arm64    # one
set -euo pipefail
cd "$(dirname "$0")/.."
# The packager bundles the extension with esbuild from node_modules: a fresh clone has none yet.
if [ ! -d node_modules/esbuild ]; then
  echo "package-all.sh: the extension's npm dependencies are not installed (no node_modules/esbuild)." >&2
  echo "Run 'npm ci' (or 'bash scripts/setup-extension.sh --no-e2e') first, then run this again." >&2
  exit 2
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 universal)
mkdir -p dist
version=$(node -p 'require("./package.json").version')
for t in "${targets[@]}"; do
  echo "== package $t"
  NKI_STUDIO_TARGET="$t" node extension/scripts/package.mjs
done
echo "== sizes (limit 100 MB each)"
status=0
for t in "${targets[@]}"; do
  f="dist/nki-studio-$t-$version.vsix"
  bytes=$(stat -c %s "$f")
  printf '%-14s %7.1f MB  %s\n' "$t" "$(echo "$bytes / 1000000" | bc -l)" "$f"
  [ "$bytes" -le 100000000 ] || { echo "  over 100 MB"; status=1; }
done
exit $status
