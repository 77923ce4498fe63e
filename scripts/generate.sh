#!/usr/bin/env bash
# Rewrite every artefact generated from a single declaration in the code (CONTRIBUTING.md lists them, in this order).
# Each generator has a test that fails when its artefact is stale; run this after changing a declaration.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
"$PY" -m nki_studio.model.nki_api_generate
"$PY" -m nki_studio.model.legacy_api_generate
"$PY" -m nki_studio.nkilint.rule_docs
"$PY" -m nki_studio.settings.generate
"$PY" -m nki_studio.protocol.schema
"$PY" -m nki_studio.estimate.constants_doc
"$PY" syntaxes/build_grammar.py
