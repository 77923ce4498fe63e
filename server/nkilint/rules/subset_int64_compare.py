"""NKI130: a comparison on an int64 ``NkiScalar`` (64-bit scalars have only ``+``, ``-`` and ``*``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07
from nki_studio.nkilint.scalars import scalar_facts

# The operators NkiScalar overloads (is/in stay Python identity and containment).
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


@rule(
    code="NKI130",
    name="scalar-int64-compare",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    summary="A comparison (`<`, `<=`, `>`, `>=`, `==`, `!=`) on an `nl.int64` NkiScalar (rejected at compile time).",
    bad=kernel_example(
        "x, offsets",
        """
off_sb = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
nisa.dma_copy(dst=off_sb, src=offsets)
off = nisa.scalar_load(off_sb)
past_end = off >= 4096
return x
""",
    ),
    good=kernel_example(
        "x, offsets",
        """
off_sb = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
nisa.dma_copy(dst=off_sb, src=offsets)
off = nisa.scalar_load(off_sb)
next_off = off + 4096
return x
""",
    ),
    sources="nki-0.7.md §2.4 ([NKS], the `nki.isa.NkiScalar` page: at 64 bits only addition, subtraction and "
    "multiplication exist; comparisons are rejected at compile time)",
    scope_note="NKI 0.7 and later (NkiScalar is a 0.7 API). Recognised when an operand is `nisa.scalar_load` of a "
    "tensor allocated with `dtype=nl.int64` in kernel code, or arithmetic of one. int32 comparisons are traced "
    "but their result cannot drive Python control flow either (NKI112).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """An `nl.int64` NkiScalar supports only `+`, `-` (binary and unary) and `*`: the device has no 64-bit
    compare, so `<`, `<=`, `>`, `>=`, `==` and `!=` on one are rejected when the kernel compiles. Load the value
    from an `nl.int32` tile when it fits 32 bits (int32 comparisons are traced, though their result still
    cannot steer Python control flow)."""
    facts = scalar_facts(ctx)
    if facts is None:
        return
    for node in ctx.kernel_nodes_of((ast.Compare,)):
        assert isinstance(node, ast.Compare)
        if not all(isinstance(op, _COMPARISONS) for op in node.ops):
            continue
        wide = next((o for o in (node.left, *node.comparators) if facts.dtype(o) == "int64"), None)
        if wide is not None:
            yield ctx.report(
                node,
                f"`{ctx.text(node)}` compares the int64 NkiScalar `{ctx.text(wide)}`; 64-bit scalars have only "
                "+, - and * (comparisons are rejected at compile time); load the value from an nl.int32 tile "
                "if it fits 32 bits",
            )
