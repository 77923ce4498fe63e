"""NKI511: ``nl.empty_like(..., transpose_axes=...)`` with an order ``nisa.dma_transpose`` does not support."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07

_API = "nki.language.empty_like"
# The tiled-dim orders the v2.33.0 empty_like page allows (nki-0.7.md §2.6 [EL]).
_ORDERS = ((1, 0), (2, 1, 0), (3, 1, 2, 0))


def _literal_order(node: ast.expr) -> tuple[int, ...] | None:
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    out = []
    for elt in node.elts:
        if not isinstance(elt, ast.Constant) or type(elt.value) is not int:
            return None
        out.append(elt.value)
    return tuple(out)


@rule(
    code="NKI511",
    name="empty-like-transpose-axes",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    fixable=True,
    summary="`nl.empty_like(..., transpose_axes=...)` with an order other than `(1, 0)`, `(2, 1, 0)` or "
    "`(3, 1, 2, 0)`.",
    bad=kernel_example(
        "x",
        """
t = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
tt = nl.empty_like(t, buffer=nl.sbuf, transpose_axes=(0, 1))
nisa.dma_transpose(dst=tt, src=t)
return x
""",
    ),
    good=kernel_example(
        "x",
        """
t = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
tt = nl.empty_like(t, buffer=nl.sbuf, transpose_axes=(1, 0))
nisa.dma_transpose(dst=tt, src=t)
return x
""",
    ),
    sources="nki-0.7.md §2.6 ([EL] the v2.33.0 `nki.language.empty_like` page: allowed tiled-dim orders (1,0), "
    "(2,1,0), (3,1,2,0))",
    scope_note="NKI 0.7 and later (`transpose_axes` is new in the 0.7 signature). Checked when `transpose_axes` is "
    "a literal tuple or list of ints. Each rank has one allowed order, so the quick fix writes it. The 128-partition limit on the new partition extent is not checked.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """`transpose_axes` shapes an SBUF destination for a later `nisa.dma_transpose`, and only the tiled-dim
    orders that DMA transpose performs are accepted: `(1, 0)` for 2-D, `(2, 1, 0)` for 3-D and `(3, 1, 2, 0)`
    for 4-D. Any other order (the identity included) is rejected; use the one for the tensor's rank."""
    for call in ctx.kernel_calls_to(_API):
        axes = next((kw.value for kw in call.keywords if kw.arg == "transpose_axes"), None)
        order = _literal_order(axes) if axes is not None else None
        if axes is None or order is None or order in _ORDERS:
            continue
        allowed = next((o for o in _ORDERS if len(o) == len(order)), None)
        hint = (
            f"for rank {len(order)} use {allowed}"
            if allowed
            else "allowed orders are (1, 0), (2, 1, 0), (3, 1, 2, 0)"
        )
        fix = (
            Fix(f"Use the rank-{len(order)} order {allowed}", (ctx.replace(axes, str(allowed)),))
            if allowed
            else None
        )
        yield ctx.report(
            axes,
            f"empty_like transpose_axes {order} is not an order dma_transpose supports; {hint}",
            fix=fix,
        )
