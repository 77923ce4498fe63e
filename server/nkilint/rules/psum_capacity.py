"""NKI402: the PSUM tensors live at one point need more 2 KiB banks than PSUM has (8 per partition)."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.capacity import psum_banks
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.value_findings import format_count, live_summary, peak_over, roots

BAD = kernel_example(
    "a",
    """
out = nl.ndarray((128, 4608), dtype=nl.float32, buffer=nl.shared_hbm)
res = nl.ndarray((128, 4608), dtype=nl.float32, buffer=nl.sbuf)
accs = []
for j in range(9):
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.memset(dst=acc, value=0.0)
    accs.append(acc)
for j in range(9):
    nisa.tensor_copy(dst=res[:, j * 512:(j + 1) * 512], src=accs[j])
nisa.dma_copy(dst=out, src=res)
return out
""",
)

GOOD = kernel_example(
    "a",
    """
out = nl.ndarray((128, 4608), dtype=nl.float32, buffer=nl.shared_hbm)
res = nl.ndarray((128, 4608), dtype=nl.float32, buffer=nl.sbuf)
for j in range(9):
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.memset(dst=acc, value=0.0)
    nisa.tensor_copy(dst=res[:, j * 512:(j + 1) * 512], src=acc)
nisa.dma_copy(dst=out, src=res)
return out
""",
)


@rule(
    code="NKI402",
    name="psum-capacity-exceeded",
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    summary="PSUM tensors live at the same time need more than the 8 banks of 2 KiB (16 KiB) per partition.",
    bad=BAD,
    good=GOOD,
    sources="hardware.md §1 (16 KiB PSUM per partition in 8 banks of 2 KiB), §5 linter guidance; "
    "language.md §6 (PSUM allocations start on a bank boundary)",
    scope_note="Warning: counting each PSUM tile as whole banks and the liveness model are inferred. "
    "With NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE=true only 7 banks are usable (not modelled).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """PSUM has 16 KiB per partition in 8 banks of 2 KiB, and every PSUM tile starts on a bank boundary, so each
    live PSUM tile occupies whole banks. More live PSUM tiles than banks cannot be allocated. The finding sits
    where the peak is reached and lists the live tiles. Tiles allocated on different sides of an `if` whose
    condition is not known at compile time are never counted together."""
    limits = ctx.target.limits
    for root in roots(ctx):
        found = peak_over(
            ctx, root, "psum", lambda a: psum_banks(a, limits.psum_bank_bytes), limits.psum_banks
        )
        if found is None:
            continue
        top, span, related = found
        message = (
            f"PSUM use reaches at least {format_count(top.amount)} banks of {limits.psum_bank_bytes} B per partition "
            f"here in '{root.name}', but PSUM has {limits.psum_banks} "
            f"({limits.psum_bytes_per_partition // 1024} KiB); live: {live_summary(top.live)}"
        )
        yield ctx.report(span, message, related=related)
