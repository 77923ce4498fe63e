"""NKI127: a runtime register or NkiScalar as a bound of a Python ``range`` (or a static ``nl`` iterator)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.kinds import Kind
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.loop_rewrite import range_to_fori_fix
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import (
    PYTHON_RANGES,
    V06,
    enclosing_function,
    kinds,
    loop_bound_args,
    loop_calls,
    may_hold_registers,
)


@rule(
    code="NKI127",
    name="register-python-loop-bound",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    fixable=True,
    summary="A `VirtualRegister`/`NkiScalar` (or arithmetic of one) as a bound of Python `range` or "
    "`nl.affine_range`/`sequential_range`/`static_range`.",
    bad=kernel_example(
        "x, count_sb",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
n = nisa.scalar_load(count_sb)
for j in range(n + 1):
    nisa.dma_copy(dst=out, src=x)
return out
""",
    ),
    good=kernel_example(
        "x, count_sb",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
n = nisa.scalar_load(count_sb)

def body(j):
    nisa.dma_copy(dst=out, src=x)

nl.fori_loop(0, n + 1, body)
return out
""",
    ),
    sources="python-subset.md §3 (VirtualRegister note: S [ISA]), language.md §9 (static iterators are Python "
    "`range`), nki-0.7.md §2.3-§2.4 ([FORI]: fori_loop bounds may be NkiScalar arithmetic)",
    scope_note="Every version. Registers as in NKI112. The quick fix (NKI 0.6 and later) turns the loop into a "
    "body function plus `nl.fori_loop(lo, hi, body, step)` when the body can move into a function (no "
    "break/continue/return, no names it binds used elsewhere).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """A Python `range` (and the static `nl` iterators, which are `range` in 0.7 and fully unrolled before) needs
    its bounds as Python ints while the kernel is built; a register's value exists only on the device, so the
    tracer raises `TypeError`. A loop with a runtime trip count is `nl.fori_loop`, whose bounds may be a
    register or NkiScalar arithmetic (`n + 1`)."""
    if not may_hold_registers(ctx):
        return
    for call, kind in loop_calls(ctx):
        if kind != "range" and kind not in PYTHON_RANGES:
            continue
        func = enclosing_function(ctx, call)
        if func is None:
            continue
        k = kinds(ctx, func)
        registers = [a for a in loop_bound_args(call, kind) if k.of(a) is Kind.REGISTER]
        if not registers:
            continue
        loop = ctx.parent(call)
        fix = None
        if ctx.target.nki_version >= V06 and isinstance(loop, ast.For) and loop.iter is call:
            fix = range_to_fori_fix(ctx, loop, call)
        replacement = "nl.fori_loop(lo, hi, body)" if ctx.target.nki_version >= V06 else "nl.dynamic_range"
        for arg in registers:
            yield ctx.report(
                arg,
                f"`{ctx.text(arg)}` is a runtime register (VirtualRegister/NkiScalar): a Python loop "
                f"needs compile-time int bounds; use {replacement} for a runtime trip count",
                fix=fix,
            )
