"""NKI509: an int64 ``NkiScalar`` as ``scalar_offset`` of an SBUF/PSUM access pattern (on-chip offsets are int32)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07
from nki_studio.nkilint.scalars import scalar_facts


@rule(
    code="NKI509",
    name="scalar-int64-onchip-offset",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    summary="An `nl.int64` NkiScalar as `scalar_offset` of an access pattern on an SBUF or PSUM tensor (on-chip "
    "offsets must be `nl.int32`).",
    bad=kernel_example(
        "x, row",
        """
table = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.dma_copy(dst=table, src=x)
row_sb = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
nisa.dma_copy(dst=row_sb, src=row)
r = nisa.scalar_load(row_sb)
out = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_copy(dst=out, src=table.ap([[512, 1], [1, 512]], scalar_offset=r, indirect_dim=0))
return x
""",
    ),
    good=kernel_example(
        "x, row",
        """
table = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.dma_copy(dst=table, src=x)
row_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
nisa.dma_copy(dst=row_sb, src=row)
r = nisa.scalar_load(row_sb)
out = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_copy(dst=out, src=table.ap([[512, 1], [1, 512]], scalar_offset=r, indirect_dim=0))
return x
""",
    ),
    sources="nki-0.7.md §2.4 ([SLD] `nki.isa.scalar_load`: on an SBUF or PSUM operand the offset must be nl.int32; "
    "a 64-bit offset there is rejected rather than silently narrowed)",
    scope_note="NKI 0.7 and later (NkiScalar is a 0.7 API). Recognised for `t.ap(..., scalar_offset=s)` where `t` "
    "was allocated in SBUF or PSUM in kernel code (`nl.ndarray` without `buffer=` is SBUF) and `s` is "
    "`nisa.scalar_load` of an `nl.int64` tensor allocated in kernel code, or arithmetic of one. HBM access "
    "patterns may take int64 offsets.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """On-chip buffers are megabytes, so an SBUF or PSUM access pattern takes only an `nl.int32` scalar as
    `scalar_offset`; a 64-bit scalar there is rejected, not narrowed. int64 offsets exist for HBM, whose tensors
    reach beyond the 4 GB of a 32-bit byte offset. Load an on-chip offset from an `nl.int32` tile."""
    facts = scalar_facts(ctx)
    if facts is None:
        return
    for node in ctx.kernel_nodes_of((ast.Call,)):
        assert isinstance(node, ast.Call)
        if not isinstance(node.func, ast.Attribute) or node.func.attr != "ap":
            continue
        offset = next((kw.value for kw in node.keywords if kw.arg == "scalar_offset"), None)
        if offset is None or facts.dtype(offset) != "int64":
            continue
        tensor = facts.tensor_of(node.func.value)
        if tensor is None or not tensor.on_chip:
            continue
        yield ctx.report(
            offset,
            f"scalar_offset `{ctx.text(offset)}` is an int64 NkiScalar on the {str(tensor.buffer).upper()} tensor "
            f"`{ctx.text(node.func.value)}`; on-chip access patterns take only int32 offsets (a 64-bit offset is "
            "rejected, not narrowed); load the offset from an nl.int32 tile (int64 offsets are for HBM)",
        )
