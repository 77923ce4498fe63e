"""NKI403: a single PSUM tile larger than one 2 KiB bank per partition (except trn3 matmul outputs)."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.targets import Generation
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, Example, kernel_example, rule
from nki_studio.nkilint.value_findings import format_bytes, place, roots

BAD = kernel_example(
    "a",
    """
acc = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
nisa.memset(dst=acc, value=0.0)
out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
res = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_copy(dst=res, src=acc)
nisa.dma_copy(dst=out, src=res)
return out
""",
)

GOOD = kernel_example(
    "a",
    """
out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
res = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
for j in range(2):
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.memset(dst=acc, value=0.0)
    nisa.tensor_copy(dst=res[:, j * 512:(j + 1) * 512], src=acc)
nisa.dma_copy(dst=out, src=res)
return out
""",
)


# Legacy code: 8 PSUM blocks of one bank each (the block-dimension layout of nki-samples' legacy kernels).
LEGACY_GOOD = """import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b):
    out = nl.ndarray((128, 8, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((8, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.psum)
    for j in nl.affine_range(8):
        acc[j, 0:128, 0:512] += nisa.nc_matmul(a[0:128, 0:128], b[0:128, 0:512])
        nl.store(out[0:128, j, 0:512], value=acc[j, 0:128, 0:512])
    return out
"""


@rule(
    code="NKI403",
    name="psum-tile-exceeds-bank",
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    summary="A PSUM tile needs more than one 2 KiB bank per partition (512 fp32); only trn3 matmul "
    "outputs may span banks.",
    bad=BAD,
    good=[GOOD, Example(LEGACY_GOOD, nki_version="legacy")],
    sources="hardware.md §1 (bank = 2 KiB = 512 fp32), §5 linter guidance; isa.md §1.1 (v4 nc_matmul N up "
    "to 4096/8192 spans all 8 banks)",
    scope_note="Warning (inferred guidance). On trn3 a tile used as an nc_matmul destination is exempt. A "
    "legacy block tensor (`nl.ndarray((B, nl.par_dim(P), F), buffer=nl.psum)`) is checked per block: each block "
    "is a tile of its own.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """A PSUM bank holds 512 fp32 values per partition; matmul accumulation and most PSUM reads work within a
    bank. A larger PSUM tile usually means a free dim that should have been tiled. On trn3 an nc_matmul
    destination may span several banks (moving free size up to 4096 fp32 / 8192 bf16), so those tiles are
    exempt there."""
    limits = ctx.target.limits
    seen: set[tuple[int, int]] = set()
    for root in roots(ctx):
        for alloc in root.allocations:
            size = alloc.min_tile_bytes_per_partition() if alloc.buffer == "psum" else None
            if size is None or size <= limits.psum_bank_bytes:
                continue
            if alloc.is_matmul_dst and ctx.target.generation is Generation.GEN4:
                continue
            where = place(ctx, alloc.path, alloc.span, alloc.call_chain)
            if where is None or (where[0].line, where[0].column) in seen:
                continue
            seen.add((where[0].line, where[0].column))
            message = (
                f"PSUM tile {alloc.shape_text()} {alloc.dtype.name if alloc.dtype else '(dtype unknown)'} needs "
                f"{'' if alloc.dtype else 'at least '}{format_bytes(size)} per partition, more than one {format_bytes(limits.psum_bank_bytes)} "
                f"bank; split the free dim into chunks of at most {limits.psum_bank_bytes} bytes"
            )
            yield ctx.report(where[0], message, related=where[1])
