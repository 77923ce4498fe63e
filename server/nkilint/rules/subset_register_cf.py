"""NKI112: Python ``if``/``bool()``/``int()``/``range()`` on a runtime register or NkiScalar."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.kinds import Kind
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import TRUTH_TESTING, kinds, own_nodes, truth_tested

_CANDIDATES = TRUTH_TESTING | {ast.Call}

_CONVERTERS = ("bool", "int", "range", "float")


@rule(
    code="NKI112",
    name="register-python-control-flow",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="Python `if`/`bool()`/`int()`/`range()` on a `VirtualRegister` or `NkiScalar` (runtime value).",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, flag_sb):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    reg = nisa.register_alloc()\n"
    "    nisa.register_load(reg, flag_sb)\n    if reg:\n        nisa.dma_copy(dst=out, src=x)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, count_sb):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    n = nisa.register_alloc()\n"
    "    nisa.register_load(n, count_sb)\n\n    def body(i):\n        nisa.dma_copy(dst=out, src=x)\n\n"
    "    nl.fori_loop(0, n, body)\n    return out\n",
    sources="python-subset.md §3 (VirtualRegister note: S [ISA]), nki-0.7.md §2.1 (TypeError under the tracer)",
    scope_note="`while reg:` is reported by NKI203 instead (deprecated 0.6, removed 0.7).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """A `VirtualRegister` (or 0.7 `NkiScalar`) holds a value computed on the device; it has no value while the
    kernel is built, so Python control flow on it raises `TypeError` under the tracer (VirtualRegister note).
    Use `nl.fori_loop` with the register as a bound, or `nl.while_loop`."""
    for func in ctx.kernel_code():
        k = kinds(ctx, func)
        if Kind.REGISTER not in k.kinds.values():
            continue
        for node in own_nodes(ctx, func):
            if type(node) not in _CANDIDATES:
                continue
            tested = [] if isinstance(node, ast.While) else truth_tested(node)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CONVERTERS:
                tested = list(node.args)
            for expr in tested:
                if k.of(expr) is Kind.REGISTER:
                    yield ctx.report(
                        expr,
                        f"`{ctx.text(expr)}` is a runtime register: Python control "
                        "flow cannot use its value; use nl.fori_loop / nl.while_loop",
                    )
