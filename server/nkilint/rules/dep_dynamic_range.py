"""NKI202: ``nl.dynamic_range`` loops are deprecated (0.6) and removed (0.7): use ``nl.fori_loop``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.loop_rewrite import range_to_fori_fix
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V06, V07, resolved_refs


@rule(
    code="NKI202",
    name="dynamic-range-removed",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V06,
    deprecated=True,
    fixable=True,
    summary="`for i in nl.dynamic_range(...)`: deprecated in NKI 0.6, removed in 0.7; use `nl.fori_loop`.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, n):\n"
    "    out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    for i in nl.dynamic_range(n):\n"
    "        nisa.dma_copy(dst=out, src=x.ap([[512, 128], [1, 512]], scalar_offset=i, indirect_dim=0))\n"
    "    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, n):\n"
    "    out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)\n\n    def body(i):\n"
    "        nisa.dma_copy(dst=out, src=x.ap([[512, 128], [1, 512]], scalar_offset=i, indirect_dim=0))\n\n"
    "    nl.fori_loop(0, n, body)\n    return out\n",
    sources="deprecations.md §A and §H, nki-0.7.md §2.2 ([RN33], [ANN])",
    scope_note="Warning (deprecated) on NKI 0.6, error on 0.7 and later (removed). Not reported before 0.6. When "
    "no setting or installed toolchain names the NKI version, a file that uses `nl.dynamic_range` and no 0.7-only "
    "API is linted as NKI 0.6 code (the message says so); name the version to get the 0.7 error.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """`nl.dynamic_range` was deprecated in 0.6.0 (it emits a warning) and removed in 0.7.0, whose tracer
    runs Python once per kernel. The replacement is `nl.fori_loop(lo, hi, body, step)` with the loop body as a
    function that returns nothing; loop state lives in SBUF/HBM. The quick fix performs that conversion when it
    is safe (no break/continue/return in the body, no names it binds used elsewhere)."""
    removed = ctx.target.nki_version >= V07
    severity = Severity.ERROR if removed else None
    what = "removed in NKI 0.7" if removed else "deprecated since NKI 0.6 (removed in 0.7)"
    for node, _ in resolved_refs(ctx, ("nki.language.dynamic_range",)):
        call = ctx.call_of.get(node)
        loop = ctx.parent(call) if call is not None else None
        fix = None
        where: ast.AST = node
        if isinstance(call, ast.Call) and isinstance(loop, ast.For) and loop.iter is call:
            fix = range_to_fori_fix(ctx, loop, call)
            where = call
        yield ctx.report(
            where,
            f"nl.dynamic_range is {what}; use nl.fori_loop(lo, hi, body, step) "
            "with the loop body as a function",
            severity=severity,
            fix=fix,
        )
