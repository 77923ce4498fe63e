"""NKI121: dynamic loops inside ``with nl.no_reorder():``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule

_DYNAMIC = ("nki.language.fori_loop", "nki.language.while_loop", "nki.language.dynamic_range")


@rule(
    code="NKI121",
    name="dynamic-loop-in-no-reorder",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="`nl.fori_loop`, `nl.while_loop` or `nl.dynamic_range` inside a `with nl.no_reorder():` block.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, n):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n\n    def body(i):\n"
    "        nisa.dma_copy(dst=out, src=x)\n\n    with nl.no_reorder():\n        nl.fori_loop(0, n, body)\n"
    "    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, n):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n\n    def body(i):\n"
    "        with nl.no_reorder():\n            nisa.dma_copy(dst=out, src=x)\n\n"
    "    nl.fori_loop(0, n, body)\n    return out\n",
    sources="python-subset.md §3 ([DYN] Interaction with no_reorder: S), language.md §10",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The dynamic-loops deep dive and the `no_reorder` stub: static loops are allowed inside `no_reorder`,
    dynamic loops (`fori_loop`, `while_loop`, `dynamic_range`) are not. Checked lexically inside the block."""
    for node in ctx.kernel_nodes_of((ast.With,)):
        if not isinstance(node, ast.With) or not any(
            isinstance(i.context_expr, ast.Call)
            and ctx.aliases.canonical(i.context_expr.func) == "nki.language.no_reorder"
            for i in node.items
        ):
            continue
        for stmt in node.body:
            for inner in ast.walk(stmt):
                if isinstance(inner, ast.Call) and ctx.aliases.canonical(inner.func) in _DYNAMIC:
                    name = ast.unparse(inner.func)
                    yield ctx.report(
                        inner.func,
                        f"{name} inside `with nl.no_reorder():` is not "
                        "supported; move the dynamic loop out of the block",
                    )
