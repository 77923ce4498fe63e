#!/usr/bin/env bash
# Every test and check the project has, from a fresh clone: set-up, static checks, Python tests,
# then the extension's TypeScript checks, unit tests and end-to-end tests in a real VS Code.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"

echo "== ruff"; ruff check server tests benchmarks
echo "== mypy"; mypy
echo "== pytest"; pytest -q -p no:cacheprovider "$@"
