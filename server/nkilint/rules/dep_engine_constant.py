"""NKI204: deprecated ISA engine constants (``nisa.vector_engine`` ...): use ``nisa.engine.*``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V02, resolved_refs

_RENAMES = {f"nki.isa.{e}_engine": e for e in ("tensor", "vector", "scalar", "gpsimd", "unknown")}


@rule(
    code="NKI204",
    name="deprecated-engine-constant",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V02,
    deprecated=True,
    fixable=True,
    summary="`nisa.tensor_engine`/`vector_engine`/`scalar_engine`/`gpsimd_engine`/`unknown_engine` are "
    "deprecated; use `nisa.engine.<name>`.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)\n    nisa.dma_copy(dst=t, src=x)\n"
    "    u = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)\n"
    "    nisa.tensor_copy(dst=u, src=t, engine=nisa.vector_engine)\n"
    "    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=u)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)\n    nisa.dma_copy(dst=t, src=x)\n"
    "    u = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)\n"
    "    nisa.tensor_copy(dst=u, src=t, engine=nisa.engine.vector)\n"
    "    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=u)\n    return out\n",
    sources='deprecations.md §C (engine constants; 0.6.0 stub: "use engine.*")',
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The 0.6.0 `nki.isa` stub marks the module-level engine constants deprecated in favour of the
    `nisa.engine` enum (`nisa.engine.vector` ...). The quick fix rewrites the reference."""
    for node, name in resolved_refs(ctx, _RENAMES):
        new = _RENAMES[name]
        fix = None
        if isinstance(node, ast.Attribute):
            fix = Fix(
                f"Replace with engine.{new}", (ctx.replace(node, f"{ctx.text(node.value)}.engine.{new}"),)
            )
        yield ctx.report(node, f"{ctx.text(node)} is deprecated; use nisa.engine.{new}", fix=fix)
