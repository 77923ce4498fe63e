"""NKI112: Python ``if``/``bool()``/``int()``/``range()`` on a runtime register or NkiScalar."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.kinds import Kind
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, Example, kernel_example, rule
from nki_studio.nkilint.ruleutil import TRUTH_TESTING, kinds, may_hold_registers, own_nodes, truth_tested

_CANDIDATES = TRUTH_TESTING | {ast.Call, ast.Assert}

# Builtins that need a Python value of their arguments (min/max compare them). Loop bounds are NKI127's.
_CONVERTERS = frozenset({"bool", "int", "float", "min", "max"})


def _message(ctx: LintContext, expr: ast.expr, where: str) -> str:
    what = f"`{ctx.text(expr)}` is a runtime register (VirtualRegister/NkiScalar)"
    if isinstance(expr, ast.Compare):
        what = f"`{ctx.text(expr)}` compares a runtime register: the comparison is traced but its result"
        return (
            f"{what} cannot drive Python {where}; use nl.while_loop, fori_loop bounds or a compile-time value"
        )
    return f"{what}: Python {where} cannot use its value; use nl.fori_loop / nl.while_loop"


@rule(
    code="NKI112",
    name="register-python-control-flow",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="Python `if`/`while`/`assert`/`bool()`/`int()` on a `VirtualRegister` or `NkiScalar` "
    "(runtime value), its arithmetic or a comparison of it.",
    bad=(
        "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, flag_sb):\n"
        "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    reg = nisa.register_alloc()\n"
        "    nisa.register_load(reg, flag_sb)\n    if reg:\n        nisa.dma_copy(dst=out, src=x)\n    return out\n",
        kernel_example(
            "x, count_sb",
            """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
n = nisa.scalar_load(count_sb)
m = n * 2
if m > 128:
    nisa.dma_copy(dst=out, src=x)
return out
""",
        ),
        kernel_example(
            "x, count_sb",
            """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
n = nisa.scalar_load(count_sb)

def body(i):
    if i > 0:
        nisa.dma_copy(dst=out, src=x)

nl.fori_loop(0, n, body)
return out
""",
        ),
        Example(
            kernel_example(
                "x, n",
                """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
for i in nl.dynamic_range(n):
    if i > 0:
        nisa.dma_copy(dst=out, src=x)
return out
""",
            ),
            nki_version="0.6",
        ),
    ),
    good=(
        "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, count_sb):\n"
        "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    n = nisa.register_alloc()\n"
        "    nisa.register_load(n, count_sb)\n\n    def body(i):\n        nisa.dma_copy(dst=out, src=x)\n\n"
        "    nl.fori_loop(0, n, body)\n    return out\n",
        kernel_example(
            "x, count_sb",
            """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
n = nisa.scalar_load(count_sb)

def body(i):
    nisa.dma_copy(dst=out, src=x)

nl.fori_loop(1, n + 1, body)
return out
""",
        ),
    ),
    sources="python-subset.md §3 (VirtualRegister note: S [ISA]), nki-0.7.md §2.1 (TypeError under the tracer), "
    "§2.4 ([NKS]: NkiScalar arithmetic is traced, comparisons are traced but their result cannot be used)",
    scope_note="Every version. Registers are recognised from `nisa.register_alloc()`/`nisa.scalar_load()` in the "
    "same function, `nl.dynamic_range` loop variables, the parameter of a `nl.fori_loop`/`nl.while_loop` body "
    "and arithmetic or comparisons of those. `while reg:` itself is reported by NKI203 (deprecated 0.6, removed "
    "0.7); a register as the bound of a Python `range` is NKI127.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """A `VirtualRegister` (or 0.7 `NkiScalar`) holds a value computed on the device; it has no value while the
    kernel is built, so Python control flow on it raises `TypeError` under the tracer (VirtualRegister note).
    NkiScalar arithmetic (`n + 1`) is traced and yields another NkiScalar, and a comparison (`i > 0`) is traced
    but its result cannot be used, so neither gives Python a value either. The loop variable of a
    `nl.fori_loop`/`nl.while_loop` body and of a 0.6 `nl.dynamic_range` loop is such a register. Use
    `nl.fori_loop` with the register as a bound, or `nl.while_loop`; a first or last iteration that differs is
    peeled off by changing the bounds."""
    if not may_hold_registers(ctx):
        return
    for func in ctx.kernel_code():
        k = kinds(ctx, func)
        if Kind.REGISTER not in k.kinds.values():
            continue
        for node in own_nodes(ctx, func):
            if type(node) not in _CANDIDATES:
                continue
            if isinstance(node, ast.Call):
                if not (isinstance(node.func, ast.Name) and node.func.id in _CONVERTERS):
                    continue
                where, tested = f"`{node.func.id}()`", list(node.args)
            elif isinstance(node, ast.Assert):
                where, tested = "`assert`", [node.test]
            elif isinstance(node, ast.While):
                # `while reg:` itself is NKI203's (deprecated/removed syntax with its own fix).
                where, tested = "`while`", [] if isinstance(node.test, ast.Name) else [node.test]
            else:
                where, tested = "control flow", truth_tested(node)
            for expr in tested:
                if k.of(expr) is Kind.REGISTER:
                    yield ctx.report(expr, _message(ctx, expr, where))
