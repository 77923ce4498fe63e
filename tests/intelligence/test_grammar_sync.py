"""The committed TextMate grammar is what ``syntaxes/build_grammar.py`` generates from the current stubs and the
legacy declaration."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

from nki_studio.model.legacy_api_generate import legacy_only

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


def test_every_legacy_only_name_of_the_declaration_gets_a_legacy_scope() -> None:
    """The legacy patterns name exactly what ``legacy_api_generate.legacy_only`` derives from the declaration."""
    patterns = _builder().legacy()["patterns"]  # type: ignore[attr-defined]
    scoped = {
        name
        for p in patterns
        if "legacy" in p["captures"].get("3", {}).get("name", "")
        for name in re.search(r"\(([^()]*)\)\\b$", p["match"]).group(1).split("|")  # type: ignore[union-attr]
    }
    assert scoped == {name for names in legacy_only().values() for name in names}
    assert {"arange", "mgrid", "par_dim", "baremetal"} <= scoped
