#!/usr/bin/env bash
# The main job on the bundled examples, from a fresh clone: set up, then lint every example kernel.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"

echo "== nki-studio lint examples/"
nki-studio lint examples/
