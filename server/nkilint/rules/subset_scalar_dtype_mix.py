"""NKI131: NkiScalar arithmetic mixing ``nl.int32`` and ``nl.int64``, or ``nisa.scalar_store`` of a scalar into a
tile of the other width."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07
from nki_studio.nkilint.scalars import SCALAR_DTYPES, SCALAR_STORE, argument, scalar_facts


@rule(
    code="NKI131",
    name="scalar-dtype-mix",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    summary="Arithmetic between an `nl.int32` and an `nl.int64` NkiScalar, or `nisa.scalar_store` of a scalar "
    "into a tile of the other width.",
    bad=kernel_example(
        "x, base, index",
        """
base_sb = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
index_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
nisa.dma_copy(dst=base_sb, src=base)
nisa.dma_copy(dst=index_sb, src=index)
offset = nisa.scalar_load(base_sb) + nisa.scalar_load(index_sb) * 512
out_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
nisa.scalar_store(out_sb, offset)
return x
""",
    ),
    good=kernel_example(
        "x, base, index",
        """
base_sb = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
index_sb = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
nisa.dma_copy(dst=base_sb, src=base)
nisa.dma_copy(dst=index_sb, src=index)
offset = nisa.scalar_load(base_sb) + nisa.scalar_load(index_sb) * 512
out_sb = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
nisa.scalar_store(out_sb, offset)
return x
""",
    ),
    sources="nki-0.7.md §2.4 ([NKS]: the other operand may be a Python int or an NkiScalar of the same dtype; "
    "[SST] `nki.isa.scalar_store`: dst must have the same width as value)",
    scope_note="NKI 0.7 and later (NkiScalar is a 0.7 API). Recognised when each scalar is `nisa.scalar_load` of a "
    "tensor allocated with a literal `dtype` in kernel code, or arithmetic of one, and the store destination is "
    "such a tensor.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """A scalar's width is fixed when `nisa.scalar_load` reads it and never converts: the other operand of
    scalar arithmetic must be a Python int or a scalar of the same dtype, and `nisa.scalar_store` writes a
    32-bit scalar only into an `nl.int32` tile and a 64-bit one only into an `nl.int64` tile. Load every scalar
    of one computation from tiles of the same dtype (int64 when the value needs the range), and store at the
    scalar's own width (convert in memory if needed)."""
    facts = scalar_facts(ctx)
    if facts is None:
        return
    for node in ctx.kernel_nodes_of((ast.BinOp, ast.AugAssign)):
        if isinstance(node, ast.BinOp):
            left, right = node.left, node.right
        else:
            assert isinstance(node, ast.AugAssign)
            left, right = node.target, node.value
        a, b = facts.dtype(left), facts.dtype(right)
        if a is not None and b is not None and a != b:
            yield ctx.report(
                node,
                f"`{ctx.text(node)}` mixes the {a} NkiScalar `{ctx.text(left)}` with the {b} NkiScalar "
                f"`{ctx.text(right)}`; scalar operands must have the same dtype (widths never convert); load "
                "both from tiles of the same dtype (nl.int64 when the value needs the range)",
            )
    for call in ctx.kernel_calls_to(SCALAR_STORE):
        dst, value = argument(call, 0, "dst"), argument(call, 1, "value")
        tile, width = facts.tensor_of(dst), facts.dtype(value)
        if tile is None or width is None or tile.dtype not in SCALAR_DTYPES or tile.dtype == width:
            continue
        assert dst is not None and value is not None
        yield ctx.report(
            call,
            f"scalar_store writes the {width} NkiScalar `{ctx.text(value)}` into the nl.{tile.dtype} tile "
            f"`{ctx.text(dst)}`; the tile must have the scalar's width; store into an nl.{width} tile (and "
            "convert in memory if needed)",
        )
