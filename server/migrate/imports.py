"""Imports: the legacy ``neuronxcc.nki`` namespace -> ``nki`` / ``nki.language`` / ``nki.isa`` (NKI208's rewrite,
``model.imports.current_import``); torch-neuronx's ``nki_jit`` import is dropped once the entry-point pass made
its uses ``nki.jit`` (``import nki`` added when nothing else binds it), and ``nki.isa`` is imported when a
rewrite introduced ``nisa`` calls into a file that had no such import.
"""

from __future__ import annotations

import ast

from nki_studio.core.findings import Span, TextEdit
from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import ISA, Source
from nki_studio.model.api_version import is_legacy_binding
from nki_studio.model.imports import current_import, is_legacy


def run(src: Source) -> PassResult:
    """Rewrite the legacy imports; add the imports rewrites need."""
    out = PassResult()
    statements = {id(r.node): r.node for r in src.aliases.records if is_legacy_binding(r.target)}
    binds_nki = any(r.target == "nki" or r.target.startswith("nki.") for r in src.aliases.records)
    for stmt in statements.values():
        assert isinstance(stmt, (ast.Import, ast.ImportFrom))
        names = [a.name if isinstance(stmt, ast.Import) else f"{stmt.module}.{a.name}" for a in stmt.names]
        if not any(is_legacy(n) for n in names):  # torch_neuronx's nki_jit: its uses are nki.jit now
            deleted = src.delete_lines(stmt) if binds_nki else src.replace(stmt, "import nki")
            if deleted is not None:
                out.change(deleted, stmt.lineno, "torch_neuronx.nki_jit", "nki.jit")
                binds_nki = True
            continue
        new = current_import(stmt)
        if new is None:
            out.manual.append(
                ManualStep(
                    stmt.lineno,
                    "legacy import",
                    "binds legacy and other names in one statement: split it, then import the NKI names from nki",
                )
            )
            continue
        out.change(src.replace(stmt, new), stmt.lineno, "legacy import", new)
        binds_nki = True
    _missing_isa(src, out)
    return out


def _missing_isa(src: Source, out: PassResult) -> None:
    """``import nki.isa as nisa`` after the last import when a rewrite used ``nisa`` and nothing binds it."""
    if src.aliases.locals_for(ISA) or "nisa" in src.aliases.bindings:
        return
    if not any(isinstance(n, ast.Name) and n.id == "nisa" for n in ast.walk(src.tree)):
        return
    last = max(
        (s for s in src.tree.body if isinstance(s, (ast.Import, ast.ImportFrom))),
        key=lambda s: s.end_lineno or s.lineno,
        default=None,
    )
    line = (last.end_lineno or last.lineno) + 1 if last is not None else 1
    out.change(
        TextEdit(Span(line, 1, line, 1), "import nki.isa as nisa\n"), line, "import", "import nki.isa as nisa"
    )
