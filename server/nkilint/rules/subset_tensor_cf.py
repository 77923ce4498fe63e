"""NKI111: Python control flow (if/while/bool/not/and/or) on an NKI tensor."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.kernels import FunctionInfo
from nki_studio.model.kinds import Kind, may_be_tensor
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import TRUTH_TESTING, kinds, own_calls, own_of_type, truth_tested


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
        tested = [expr for expr in _truth_tested(ctx, func, bool_calls) if may_be_tensor(expr)]
        if not tested:
            continue  # nothing tested can be a tensor (`if i % 2 == 0:`): the name kinds are not needed
        k = kinds(ctx, func)
        if Kind.TENSOR not in k.kinds.values():
            continue
        for expr in tested:
            if k.of(expr) is Kind.TENSOR:
                yield ctx.report(
                    expr,
                    f"Python truth test on NKI tensor `{ctx.text(expr)}`: tensor "
                    "values are unknown at compile time; use nl.where / "
                    "nl.while_loop or test a shape instead",
                )


def _truth_tested(ctx: LintContext, func: FunctionInfo, bool_calls: bool) -> list[ast.expr]:
    """The expressions whose truth value the function's own code tests, read from discovery's grouping of its
    nodes by type (only calls of ``bool`` among calls, looked at when the file has one). Grouped, not in source
    order: findings are sorted by position, and no two of these expressions start at one position (each is
    tested by its parent; those that can be tensors are names, subscripts, attributes or view calls)."""
    out = [expr for kind in TRUTH_TESTING for node in own_of_type(func, kind) for expr in truth_tested(node)]
    if bool_calls:
        out += [arg for call in own_calls(ctx, func) if _is_bool_call(call) for arg in call.args[:1]]
    return out


def _is_bool_call(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == "bool"
