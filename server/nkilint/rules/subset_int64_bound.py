"""NKI129: an int64 ``NkiScalar`` as a bound of ``nl.fori_loop`` (bounds must be 32-bit)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07, loop_bound_args, own_nodes

_INT64 = "nki.language.int64"
_FORI = "nki.language.fori_loop"


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


class _Int64Scalars:
    """Names holding an int64 NkiScalar at the current point of a function walked in source order:
    ``nisa.scalar_load`` of a tensor allocated with ``dtype=nl.int64`` in it, and arithmetic of such scalars (a
    scalar's width is fixed for life: nki-0.7.md §2.4)."""

    def __init__(self, ctx: LintContext) -> None:
        self.ctx = ctx
        self.tensors: set[str] = set()
        self.scalars: set[str] = set()

    def holds(self, value: ast.expr) -> bool:
        """Whether ``value`` is an int64 scalar here."""
        if isinstance(value, ast.Name):
            return value.id in self.scalars
        if isinstance(value, ast.BinOp):
            return self.holds(value.left) or self.holds(value.right)
        if isinstance(value, ast.UnaryOp):
            return self.holds(value.operand)
        if isinstance(value, ast.Call) and self.ctx.aliases.canonical(value.func) == "nki.isa.scalar_load":
            src = value.args[0] if value.args else _keyword(value, "src")
            return isinstance(src, ast.Name) and src.id in self.tensors
        return False

    def assign(self, node: ast.Assign) -> None:
        """Follow one assignment (other bindings of these names are rare and not followed)."""
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return
        name, value = node.targets[0].id, node.value
        dtype = _keyword(value, "dtype") if isinstance(value, ast.Call) else None
        is_tensor = dtype is not None and self.ctx.aliases.canonical(dtype) == _INT64
        is_scalar = not is_tensor and self.holds(value)
        self.tensors.discard(name)
        self.scalars.discard(name)
        if is_tensor:
            self.tensors.add(name)
        elif is_scalar:
            self.scalars.add(name)


@rule(
    code="NKI129",
    name="fori-int64-bound",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    summary="An `nl.int64` NkiScalar as a bound of `nl.fori_loop` (loop bounds must be 32-bit).",
    bad=kernel_example(
        "x, count",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
count_sb = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
nisa.dma_copy(dst=count_sb, src=count)
n = nisa.scalar_load(count_sb)

def body(i):
    nisa.dma_copy(dst=out, src=x)

nl.fori_loop(0, n, body)
return out
""",
    ),
    good=kernel_example(
        "x, count",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
count_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
nisa.dma_copy(dst=count_sb, src=count)
n = nisa.scalar_load(count_sb)

def body(i):
    nisa.dma_copy(dst=out, src=x)

nl.fori_loop(0, n, body)
return out
""",
    ),
    sources="nki-0.7.md §2.3 ([FORI]: a bound must be 32-bit, the compare-and-branch has no 64-bit form) and "
    "§2.4 ([NKS]: int64 scalars are not a fori_loop bound)",
    scope_note="NKI 0.7 and later (NkiScalar is a 0.7 API). Recognised when the scalar is `nisa.scalar_load` of a "
    "tensor allocated with `dtype=nl.int64` in the same function, or arithmetic of one.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """`nl.fori_loop` compiles into a compare-and-branch on the trip count, which has no 64-bit form, so its
    bounds must be 32-bit: an `nl.int64` NkiScalar is rejected. Load the bound from an `nl.int32` tile (a 64-bit
    scalar may still be computed inside the body and used as an HBM offset)."""
    if not ctx.kernel_calls_to(_FORI):
        return
    for func in ctx.kernel_code():
        nodes = own_nodes(ctx, func)
        if not any(isinstance(n, ast.Call) and ctx.aliases.canonical(n.func) == _FORI for n in nodes):
            continue
        known = _Int64Scalars(ctx)
        for node in nodes:
            if isinstance(node, ast.Assign):
                known.assign(node)
            elif isinstance(node, ast.Call) and ctx.aliases.canonical(node.func) == _FORI:
                for bound in loop_bound_args(node, _FORI):
                    if known.holds(bound):
                        yield ctx.report(
                            bound,
                            f"fori_loop bound `{ctx.text(bound)}` is an int64 NkiScalar; loop bounds must be "
                            "32-bit (no 64-bit compare-and-branch); load the bound from an nl.int32 tile",
                        )
