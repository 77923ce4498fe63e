"""NKI122: a ``nl.fori_loop`` body function returns a value."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import own_nodes


@rule(
    code="NKI122",
    name="fori-body-returns-value",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="The body function passed to `nl.fori_loop` returns a value.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, n):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n\n    def body(i):\n"
    "        nisa.dma_copy(dst=out, src=x)\n        return out\n\n    nl.fori_loop(0, n, body)\n"
    "    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, n):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n\n    def body(i):\n"
    "        nisa.dma_copy(dst=out, src=x)\n\n    nl.fori_loop(0, n, body)\n    return out\n",
    sources="python-subset.md §3 ([MIG] Rules for migrated loops: S), nki-0.7.md §2.3 ([FORI])",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The 0.6 migration rules and the 0.7 `fori_loop` page: the body returns nothing (`fori_loop` returns
    None; loop state lives in SBUF/HBM). Checked for body functions passed by name and resolved locally."""
    for node in ctx.kernel_calls_to("nki.language.fori_loop"):
        body_arg = (
            node.args[2]
            if len(node.args) > 2
            else next((kw.value for kw in node.keywords if kw.arg == "body_fun"), None)
        )
        if not isinstance(body_arg, ast.Name):
            continue
        for func in ctx.kernel_code():
            if func.node.name != body_arg.id:
                continue
            for inner in own_nodes(ctx, func):
                if (
                    isinstance(inner, ast.Return)
                    and inner.value is not None
                    and not (isinstance(inner.value, ast.Constant) and inner.value.value is None)
                ):
                    yield ctx.report(
                        inner,
                        f"fori_loop body `{func.node.name}` returns a value; the body "
                        "must return nothing (keep loop state in SBUF/HBM tensors)",
                    )
