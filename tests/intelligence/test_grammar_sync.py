"""The committed TextMate grammar is what ``syntaxes/build_grammar.py`` generates from the current stubs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _builder() -> object:
    spec = importlib.util.spec_from_file_location("build_grammar", ROOT / "syntaxes" / "build_grammar.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_grammar_matches_stubs() -> None:
    builder = _builder()
    committed = (ROOT / "syntaxes" / "nki.injection.tmLanguage.json").read_text()
    assert committed == builder.render(), "run: python syntaxes/build_grammar.py"  # type: ignore[attr-defined]


def test_grammar_is_registered_in_package_json() -> None:
    manifest = json.loads((ROOT / "package.json").read_text())
    entries = manifest["contributes"]["grammars"]
    assert {
        "scopeName": "source.python.nki",
        "path": "./syntaxes/nki.injection.tmLanguage.json",
        "injectTo": ["source.python"],
    } in entries
