"""NKI111: Python control flow (if/while/bool/not/and/or) on an NKI tensor."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.kinds import Kind
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import TRUTH_TESTING, kinds, may_own, own_calls, own_nodes, truth_tested


@rule(
    code="NKI111",
    name="tensor-python-control-flow",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="Python `if`/`while`/`bool()`/`not`/`and`/`or` on the value of an NKI tensor.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    t = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.sbuf)\n    nisa.dma_copy(dst=t, src=x)\n"
    "    out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)\n    if t:\n"
    "        nisa.dma_copy(dst=out, src=t)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    t = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.sbuf)\n    nisa.dma_copy(dst=t, src=x)\n"
    "    out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    if t.shape[0] == 128:\n        nisa.dma_copy(dst=out, src=t)\n    return out\n",
    sources="python-subset.md §3 (tensor values: S [LG]; `if tile:` error: I), nki-0.7.md §3.2",
    scope_note="Every version. Only tensors the linter is sure of are checked (not kernel parameters, which "
    "may be Python values).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Tensor contents are unknown while the kernel is specialised (0.2-0.6) or traced (0.7), so Python control
    flow cannot depend on them (language guide, Tensor Values note); data-dependent control flow needs
    `nl.while_loop`, and data-dependent selection needs `nl.where`/`nisa.select`-style operations."""
    bool_calls = bool(ctx.calls_headed_by(("bool",)))
    for func in ctx.kernel_code():
        if not may_own(func, TRUTH_TESTING) and not (
            bool_calls and any(_is_bool_call(c) for c in own_calls(ctx, func))
        ):
            continue  # nothing tests a truth value: the name kinds are not needed
        k = kinds(ctx, func)
        if Kind.TENSOR not in k.kinds.values():
            continue
        for node in own_nodes(ctx, func):
            kind = type(node)
            if kind is ast.Call:  # most candidates: only bool(x) tests anything
                if not _is_bool_call(node):  # type: ignore[arg-type]
                    continue
                tested = list(node.args[:1])  # type: ignore[attr-defined]
            elif kind in TRUTH_TESTING:
                tested = truth_tested(node)
            else:
                continue
            for expr in tested:
                if k.of(expr) is Kind.TENSOR:
                    yield ctx.report(
                        expr,
                        f"Python truth test on NKI tensor `{ctx.text(expr)}`: tensor "
                        "values are unknown at compile time; use nl.where / "
                        "nl.while_loop or test a shape instead",
                    )


def _is_bool_call(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == "bool"
