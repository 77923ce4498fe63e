"""NKI506: ``nisa.scalar_store`` of a Python number (its ``value`` must be an ``NkiScalar``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07

_API = "nki.isa.scalar_store"


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((kw.value for kw in call.keywords if kw.arg == keyword), None)


def _is_number(node: ast.expr) -> bool:
    """A numeric literal, possibly signed (``5``, ``-1``, ``0.0``); ``True``/``False`` count too (bool is int)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex))


def _fix(ctx: LintContext, call: ast.Call, dst: ast.expr, value: ast.expr) -> Fix | None:
    # Only the plain `nisa.scalar_store(dst, value)` spelling is rewritten: another keyword (name=) has no
    # counterpart we can vouch for on memset.
    if not isinstance(call.func, ast.Attribute) or len(call.args) + len(call.keywords) != 2:
        return None
    if any(kw.arg not in ("dst", "value") for kw in call.keywords):
        return None
    new = f"{ctx.text(call.func.value)}.memset(dst={ctx.text(dst)}, value={ctx.text(value)})"
    return Fix("Store the constant with nisa.memset", (ctx.replace(call, new),))


@rule(
    code="NKI506",
    name="scalar-store-python-number",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    fixable=True,
    summary="`nisa.scalar_store(dst, value)` with a Python number as `value` (it must be an `NkiScalar`).",
    bad=kernel_example(
        "x",
        """
flag = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
nisa.scalar_store(flag, 1)
return x
""",
    ),
    good=kernel_example(
        "x",
        """
flag = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
nisa.memset(dst=flag, value=1)
return x
""",
    ),
    sources="nki-0.7.md §2.4 ([SST]: `value` must be an NkiScalar, a Python int is rejected; use nisa.memset "
    "for constants)",
    scope_note="NKI 0.7 and later (`scalar_store` is a 0.7 tracer API). Reported for numeric literals; the "
    "quick fix rewrites `nisa.scalar_store(dst, n)` to `nisa.memset(dst=dst, value=n)`.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """`nisa.scalar_store(dst, value)` writes an `NkiScalar` (a value computed on the device by
    `nisa.scalar_load` and traced arithmetic) back to a 1x1 tensor. A Python number is rejected: the tracer
    used to store nothing for it, and only `nki.simulate` made it look fine. A constant goes into the tensor
    with `nisa.memset(dst=..., value=...)`."""
    for node in ctx.kernel_calls_to(_API):
        dst, value = _argument(node, 0, "dst"), _argument(node, 1, "value")
        if value is None or not _is_number(value):
            continue
        fix = _fix(ctx, node, dst, value) if dst is not None else None
        yield ctx.report(
            value,
            f"scalar_store needs an NkiScalar value, not the Python number {ctx.text(value)}; "
            "store a constant with nisa.memset(dst=..., value=...)",
            fix=fix,
        )
