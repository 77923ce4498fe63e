"""NKI201: ``nl.affine_range`` / ``nl.sequential_range`` / ``nl.static_range`` are deprecated: use ``range``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V03, V06, resolved_refs

_SINCE = {
    "nki.language.affine_range": V03,
    "nki.language.sequential_range": V03,
    "nki.language.static_range": V06,
}


@rule(
    code="NKI201",
    name="deprecated-range-iterator",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V03,
    deprecated=True,
    fixable=True,
    summary="`nl.affine_range`, `nl.sequential_range` and `nl.static_range` are deprecated aliases of `range`.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    for i in nl.affine_range(x.shape[0] // 128):\n"
    "        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=x[i * 128:(i + 1) * 128, :])\n"
    "    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    for i in range(x.shape[0] // 128):\n"
    "        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=x[i * 128:(i + 1) * 128, :])\n"
    "    return out\n",
    sources="deprecations.md §A (affine/sequential_range deprecated 0.3.0, static_range 0.6.0), nki-0.7.md §2.2",
    scope_note="`affine_range`/`sequential_range` from NKI 0.3, `static_range` from 0.6 (it was the recommended "
    "iterator in 0.3-0.5). Legacy `neuronxcc.nki` code is not rewritten: there `affine_range` meant "
    "a non-unrolled parallel loop.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Since the new compiler fully unrolls these iterators they are plain aliases of Python's `range()`
    (0.6.0 stub: "Prefer range()"); NKI 0.7 keeps them deprecated. The quick fix renames the call to `range`
    with the same arguments."""
    for node, name in resolved_refs(ctx, _SINCE):
        if ctx.target.nki_version < _SINCE[name]:
            continue
        call = ctx.call_of.get(node)
        fix = None
        if (
            isinstance(call, ast.Call)
            and call.func is node
            and not call.keywords
            and "range" not in ctx.aliases.bindings
        ):
            fix = Fix("Replace with range()", (ctx.replace(node, "range"),))
        short = name.rsplit(".", 1)[1]
        yield ctx.report(node, f"nl.{short} is deprecated (alias of range()); use range()", fix=fix)
