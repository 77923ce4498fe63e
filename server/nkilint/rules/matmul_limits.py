"""NKI501: nc_matmul operand sizes beyond the Tensor Engine limits of the target generation."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.values import ApiRef, Const, TensorVal, const_int
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, Example, kernel_example, rule
from nki_studio.nkilint.value_findings import api_calls, explain

BAD = kernel_example(
    "a, b",
    """
out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
lhs = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
rhs = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
nisa.dma_copy(dst=lhs, src=a)
nisa.dma_copy(dst=rhs, src=b)
acc = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs)
res = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_copy(dst=res, src=acc)
nisa.dma_copy(dst=out, src=res)
return out
""",
)

GOOD = kernel_example(
    "a, b",
    """
out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
lhs = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
rhs = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
nisa.dma_copy(dst=lhs, src=a)
nisa.dma_copy(dst=rhs, src=b)
res = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
for j in range(2):
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs[:, j * 512:(j + 1) * 512])
    nisa.tensor_copy(dst=res[:, j * 512:(j + 1) * 512], src=acc)
nisa.dma_copy(dst=out, src=res)
return out
""",
)


# Legacy code: nc_matmul returns its PSUM result; a moving tile of 1024 columns is past one matmul's N <= 512.
_LEGACY = """import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b):
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    i_k, i_m = nl.mgrid[0:128, 0:128]
    j_k, j_n = nl.mgrid[0:128, 0:{n}]
    lhs = nl.load(a[i_k, i_m])
    for j in nl.affine_range({tiles}):
        rhs = nl.load(b[j_k, j * {n} + j_n])
        res = nisa.nc_matmul(lhs, rhs)
        nl.store(out[i_m, j * {n} + j_n], value=nl.copy(res, dtype=np.float32))
    return out
"""
LEGACY_BAD = _LEGACY.format(n=1024, tiles=1)
LEGACY_GOOD = _LEGACY.format(n=512, tiles=2)


def _free_size(t: TensorVal) -> int | None:
    """Free size of a 2-D operand; how 3-D+ operands map onto M/N is inferred only, so they are skipped."""
    if t.shape is None or len(t.shape) != 2:
        return None
    return t.free_elems()


def _special_mode(operands: Mapping[str, object]) -> bool:
    """double_row (FP8, K split over a size-2 dim) and transpose mode have other shape rules."""
    perf = operands.get("perf_mode")
    if isinstance(perf, Const) and perf.value not in (None, "none"):
        return True
    if isinstance(perf, ApiRef) and not perf.qualname.endswith(".none"):
        return True
    transpose = operands.get("is_transpose")
    if isinstance(transpose, Const) and transpose.value:
        return True
    return not (transpose is None or isinstance(transpose, Const))


@rule(
    code="NKI501",
    name="matmul-size-limit",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="nc_matmul contraction K > 128, stationary free size M > 128, moving free size N above the "
    "generation's limit (512 on trn1/trn2; 4096 fp32 / 8192 bf16 dst on trn3), or K differs.",
    bad=[BAD, Example(LEGACY_BAD, nki_version="legacy")],
    good=[GOOD, Example(LEGACY_GOOD, nki_version="legacy")],
    sources="isa.md §1.1 (nc_matmul limits per generation), language.md §7 (nl.matmul: x free <= 128, "
    "y free <= 512), hardware.md §1 (Tensor Engine 128x128, moving free size)",
    scope_note="Per generation. perf_mode=double_row and is_transpose=True calls are not checked; M and N are "
    "checked on 2-D operands only (how 3-D+ operands map onto M/N is not documented). Legacy `neuronxcc.nki` "
    "calls that return their result (`res = nisa.nc_matmul(stationary, moving)`) are checked alike.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The Tensor Engine is a 128x128 systolic array: the contraction dim K (partition dim of both inputs) and
    the stationary free size M are at most 128, and the moving free size N is at most one PSUM bank of fp32
    (512) on trn1/trn2; trn3 accepts up to 4096 (fp32 dst) or 8192 (bf16 dst). Larger operands do not compile.
    `nl.matmul(x, y, transpose_x)` is checked too: x free size <= 128, y free size <= 512, and the contraction
    dims of x and y must match."""
    limits = ctx.target.limits
    for call, span, related in api_calls(ctx, {"nc_matmul"}):
        ops = call.operands
        if _special_mode(ops):
            continue
        stationary, moving, dst = ops.get("stationary"), ops.get("moving"), ops.get("dst")
        problems: list[str] = []
        k_values = []
        for role, t in (("stationary", stationary), ("moving", moving)):
            if isinstance(t, TensorVal):
                k = const_int(t.dim(0))
                if k is not None:
                    k_values.append(k)
                    if k > limits.matmul_contraction_max:
                        problems.append(
                            f"{role} partition (contraction K) {explain(t.dim(0))} > "
                            f"{limits.matmul_contraction_max}"
                        )
        if len(k_values) == 2 and k_values[0] != k_values[1]:
            problems.append(f"stationary K={k_values[0]} and moving K={k_values[1]} differ")
        if isinstance(stationary, TensorVal):
            m = _free_size(stationary)
            if m is not None and m > limits.matmul_stationary_free_max:
                problems.append(f"stationary free size M={m} > {limits.matmul_stationary_free_max}")
        if isinstance(moving, TensorVal):
            n = _free_size(moving)
            bf16_dst = isinstance(dst, TensorVal) and dst.dtype is not None and dst.dtype.name == "bfloat16"
            n_max = limits.matmul_moving_free_max_bf16 if bf16_dst else limits.matmul_moving_free_max_fp32
            if n is not None and n > n_max:
                problems.append(
                    f"moving free size N={n} > {n_max} on {ctx.target.generation.value}"
                    f"{' with a bf16 dst' if bf16_dst else ''}"
                )
        if problems:
            yield ctx.report(span, "nc_matmul: " + "; ".join(problems), related=related)
    yield from _check_nl_matmul(ctx)


def _check_nl_matmul(ctx: LintContext) -> Iterator[Finding]:
    """``nl.matmul(x, y, transpose_x)``: x free size <= 128, y free size <= 512, contraction dims equal
    (language.md §7)."""
    limits = ctx.target.limits
    for call, span, related in api_calls(ctx, {"matmul"}, namespace="language"):
        x, y, transpose = call.operands.get("x"), call.operands.get("y"), call.operands.get("transpose_x")
        if not isinstance(x, TensorVal) or not isinstance(y, TensorVal):
            continue
        if transpose is not None and not isinstance(transpose, Const):
            continue
        transposed = bool(transpose.value) if isinstance(transpose, Const) else False
        problems: list[str] = []
        x_free, y_free = _free_size(x), _free_size(y)
        if x_free is not None and x_free > limits.matmul_stationary_free_max:
            problems.append(f"x free size {x_free} > {limits.matmul_stationary_free_max}")
        if y_free is not None and y_free > 512:
            problems.append(f"y free size {y_free} > 512")
        contraction = const_int(x.dim(0)) if transposed else x_free
        y_k = const_int(y.dim(0))
        if contraction is not None and y_k is not None and contraction != y_k:
            side = "partition dim" if transposed else "free size"
            problems.append(f"contraction differs: x {side} {contraction}, y partition dim {y_k}")
        if problems:
            yield ctx.report(span, "nl.matmul: " + "; ".join(problems), related=related)
