"""NKI504: an ISA operand in a memory its engine cannot access (PSUM for DMA/GpSimd, matmul buffers)."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.api_signatures import GPSIMD_ONLY, ISA_OUTPUTS, ISA_PARAMS, ONE_PSUM_INPUT
from nki_studio.model.tensors import ApiCall
from nki_studio.model.values import ApiRef, TensorVal
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.value_findings import api_calls

BAD = kernel_example(
    "a, b",
    """
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
lhs = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
rhs = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
nisa.dma_copy(dst=lhs, src=a)
nisa.dma_copy(dst=rhs, src=b)
acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs)
nisa.dma_copy(dst=out, src=acc)
return out
""",
)

GOOD = BAD.replace(
    "    nisa.dma_copy(dst=out, src=acc)\n",
    """    res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
""",
)

_DMA = frozenset({"dma_copy", "dma_transpose", "dma_compute"})
_GPSIMD_ENGINES = ("nki.isa.engine.gpsimd", "nki.isa.gpsimd_engine")


def _buffer(value: object) -> str | None:
    return value.buffer if isinstance(value, TensorVal) else None


def _problems(call: ApiCall) -> list[str]:
    ops = call.operands
    tensors = {
        role: ops[role] for role in ISA_PARAMS.get(call.api, ()) if isinstance(ops.get(role), TensorVal)
    }
    out: list[str] = []
    if call.api in _DMA:
        out += [
            f"{role} is in PSUM; DMA cannot read PSUM (copy to SBUF with tensor_copy first)"
            for role, t in tensors.items()
            if role not in ISA_OUTPUTS and _buffer(t) == "psum"
        ]
    if call.api in ("nc_matmul", "nc_matmul_mx"):
        out += [
            f"{role} is in {_buffer(t)}; the Tensor Engine reads its inputs from SBUF"
            for role, t in tensors.items()
            if role not in ISA_OUTPUTS and _buffer(t) == "psum"
        ]
        dst_buffer = _buffer(ops.get("dst"))
        if dst_buffer is not None and dst_buffer != "psum" and dst_buffer != "hbm":
            out.append(f"dst is in {dst_buffer}; the Tensor Engine writes its result to PSUM")
    engine = ops.get("engine")
    on_gpsimd = call.api in GPSIMD_ONLY or (isinstance(engine, ApiRef) and engine.qualname in _GPSIMD_ENGINES)
    if on_gpsimd:
        out += [
            f"{role} is in PSUM; GpSimd cannot access PSUM"
            for role, t in tensors.items()
            if _buffer(t) == "psum"
        ]
    pair = ONE_PSUM_INPUT.get(call.api)
    if pair and all(_buffer(ops.get(role)) == "psum" for role in pair):
        out.append(f"both {pair[0]} and {pair[1]} are in PSUM; at most one input may be")
    return out


@rule(
    code="NKI504",
    name="operand-buffer",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="An ISA operand lives in a memory the instruction's engine cannot access: DMA and GpSimd never "
    "touch PSUM, nc_matmul reads SBUF and writes PSUM, two-input Vector ops take at most one PSUM "
    "input.",
    bad=BAD,
    good=GOOD,
    sources="isa.md §0.3 (buffers each engine may touch; dma_copy may not read PSUM since NKI 0.3.0), §1.1, "
    "§3.1; hardware.md §3 engine table",
    scope_note="No version or generation exceptions. A DMA *writing* PSUM is reported as a warning: the docs "
    "state that DMA may not read PSUM (since NKI 0.3.0) and are silent on writes, so that part is inferred.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Each engine reaches only some memories: DMA cannot read PSUM (since NKI 0.3.0) and GpSimd has no PSUM
    access at all; the Tensor Engine reads SBUF and writes PSUM; two-input Vector instructions take at most
    one PSUM input. An operand in the wrong memory does not compile."""
    for call, span, related in api_calls(ctx, ISA_PARAMS):
        problems = _problems(call)
        if problems:
            yield ctx.report(span, f"{call.api}: " + "; ".join(problems), related=related)
        elif call.api in _DMA and _buffer(call.operands.get("dst")) == "psum":
            yield ctx.report(
                span,
                f"{call.api}: dst is in PSUM; DMA writes to PSUM are not "
                "documented (inferred: move data into PSUM with an engine instruction)",
                severity=Severity.WARNING,
                related=related,
            )
