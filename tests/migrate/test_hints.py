"""Every name the legacy stubs declare that NKI 0.7 does not have comes with what ``nki-studio migrate`` does
with it (the hover and the agents' docs show it); names 0.7 keeps have none."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from nki_studio.migrate.hints import migration_hint

STUBS = Path(__file__).resolve().parents[2] / "server" / "stubs"
NOT_CALLED = {"IndexTile"}  # the type of an index tile (arange/mgrid carry the hint)
REWRITTEN_ARGUMENTS = {"jit"}  # kept by 0.7, but migrate drops legacy options: said in its hint


def _declared(path: Path) -> set[str]:
    """Public names a stub declares itself (re-exports of the current API excluded)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


@pytest.mark.parametrize("module", ["", "language", "isa", "compiler"])
def test_names_removed_in_0_7_have_a_hint_and_kept_ones_none(module: str) -> None:
    legacy = _declared(STUBS / "neuronxcc" / "nki" / module / "__init__.pyi")
    current = _declared(STUBS / "nki" / module / "__init__.pyi")
    # an ISA instruction the legacy stubs declare is its value-returning form, which 0.7 removed
    removed = legacy - NOT_CALLED if module == "isa" else legacy - current - NOT_CALLED
    assert removed and all(migration_hint(module, n) for n in removed), [
        n for n in removed if not migration_hint(module, n)
    ]
    if module != "isa":
        assert [n for n in legacy & current - REWRITTEN_ARGUMENTS if migration_hint(module, n)] == []
