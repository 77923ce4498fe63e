"""NKI503: element-wise ISA operands that do not span the same partitions / elements per partition."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.api_signatures import SAME_PARTITION_OPERANDS, SAME_SHAPE_OPERANDS
from nki_studio.model.values import const_int
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.value_findings import api_calls, describe_tensor, explain, on_chip_tensor

BAD = kernel_example(
    "a, b",
    """
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
y = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.dma_copy(dst=x, src=a)
nisa.dma_copy(dst=y, src=b)
z = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
nisa.dma_copy(dst=out, src=z)
return out
""",
)

GOOD = BAD.replace("y = nl.ndarray((64, 512)", "y = nl.ndarray((128, 512)")


@rule(
    code="NKI503",
    name="operand-shape-mismatch",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="tensor_tensor, tensor_copy, activation, tensor_scalar and friends need every tensor operand "
    "to span the same partitions and the same number of elements per partition (reductions such as "
    "tensor_reduce, bn_stats, max8: the same partitions).",
    bad=BAD,
    good=GOOD,
    sources="isa.md §0.2 (same partition count and elements per partition), §2.1-§2.2, §3.1-§3.14, "
    "§3.16-§3.17, §3.21; hardware.md §4 rule 3",
    scope_note="Only SBUF/PSUM operands whose shapes the interpreter computed are compared; no "
    "broadcasting exists for these instructions (use tensor_scalar with a (P, 1) operand).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Element-wise instructions (tensor_tensor, tensor_copy, activation, activation_reduce, tensor_scalar,
    tensor_scalar_reduce, tensor_scalar_cumulative, scalar_tensor_tensor, reciprocal, tensor_copy_predicated,
    select_reduce, exponential, dropout) move partition p of each input to partition p of the output and walk
    the same number of free elements in each operand; there is no broadcasting. Mismatched operands fail
    verification. Reductions and statistics (tensor_reduce, bn_stats, bn_aggr, max8, nc_find_index8) write
    fewer elements per partition than they read, so only their partition dims are compared."""
    roles = {**SAME_SHAPE_OPERANDS, **SAME_PARTITION_OPERANDS}
    for call, span, related in api_calls(ctx, roles):
        tensors = [(role, on_chip_tensor(call.operands.get(role))) for role in roles[call.api]]
        known = [(role, t) for role, t in tensors if t is not None]
        problems: list[str] = []
        parts = [(role, t) for role, t in known if const_int(t.dim(0)) is not None]
        if len({const_int(t.dim(0)) for _, t in parts}) > 1:
            problems.append(
                "partition dims differ: " + ", ".join(f"{role} {explain(t.dim(0))}" for role, t in parts)
            )
        frees = [(role, t.free_elems()) for role, t in known if t.free_elems() is not None]
        if call.api in SAME_SHAPE_OPERANDS and len({n for _, n in frees}) > 1:
            problems.append("elements per partition differ: " + ", ".join(f"{role} {n}" for role, n in frees))
        if problems:
            shapes = ", ".join(f"{role} {describe_tensor(t)}" for role, t in known)
            yield ctx.report(span, f"{call.api}: {'; '.join(problems)} ({shapes})", related=related)
