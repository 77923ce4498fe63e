"""NKI502: nc_matmul destination dtype the target's PSUM accumulation does not support."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.values import Const, TensorVal
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.value_findings import api_calls

BAD = kernel_example(
    "a, b",
    """
out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
lhs = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
rhs = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
nisa.dma_copy(dst=lhs, src=a)
nisa.dma_copy(dst=rhs, src=b)
acc = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.psum)
nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs)
res = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
nisa.tensor_copy(dst=res, src=acc)
nisa.dma_copy(dst=out, src=res)
return out
""",
)

GOOD = BAD.replace(
    "acc = nl.ndarray((128, 512), dtype=nl.bfloat16", "acc = nl.ndarray((128, 512), dtype=nl.float32"
)


@rule(
    code="NKI502",
    name="matmul-dst-dtype",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="nc_matmul writes PSUM in float32 only (float32 or bfloat16 on trn3); other dst dtypes are "
    "rejected.",
    bad=BAD,
    good=GOOD,
    sources="isa.md §1.1 (dst dtype float32 on v2/v3, float32 or bfloat16 on v4), hardware.md §1 "
    "(matmul output dtype)",
    scope_note="Per generation; transpose mode (is_transpose=True) may write fp16/bf16 and is not checked.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """nc_matmul accumulates in fp32 into PSUM. On trn1/trn2 the destination must be float32; trn3 also allows
    bfloat16. Other destination dtypes are rejected; cast when copying the result out of PSUM."""
    allowed = ctx.target.limits.psum_dst_dtypes
    for call, span, related in api_calls(ctx, {"nc_matmul"}):
        transpose = call.operands.get("is_transpose")
        if transpose is not None and not (isinstance(transpose, Const) and not transpose.value):
            continue
        dst = call.operands.get("dst")
        if not isinstance(dst, TensorVal) or dst.dtype is None or dst.dtype.name in allowed:
            continue
        message = (
            f"nc_matmul dst dtype is {dst.dtype.name}; on {ctx.target.generation.value} the matmul "
            f"output in PSUM must be {' or '.join(allowed)} (cast when copying out of PSUM instead)"
        )
        yield ctx.report(span, message, related=related)
