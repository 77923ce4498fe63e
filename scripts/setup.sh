#!/usr/bin/env bash
# Idempotent set-up from a fresh clone: a virtual environment in .venv with nki-studio (editable)
# and its development tools. Every install step the project needs lives here or is called from here.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.nki-studio-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ setup.py -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[dev]"
  touch "$stamp"
fi
# Byte-compile our own package, as a wheel install would: an editable install never writes .pyc files when
# PYTHONDONTWRITEBYTECODE is set (as on CI machines), and compiling ~150 modules from source on every server
# start costs a few hundred ms of its start-up budget. Up-to-date files are skipped.
.venv/bin/python -m compileall -q server
