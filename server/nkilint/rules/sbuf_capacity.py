"""NKI401: the SBUF tensors live at one point need more bytes per partition than the target has."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.capacity import capacity_share, sbuf_bytes
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.value_findings import format_bytes, live_summary, peak_over, roots

BAD = kernel_example(
    "a",
    """
out = nl.ndarray((128, 24576), dtype=nl.float32, buffer=nl.shared_hbm)
x = nl.ndarray((128, 24576), dtype=nl.float32, buffer=nl.sbuf)
y = nl.ndarray((128, 24576), dtype=nl.float32, buffer=nl.sbuf)
z = nl.ndarray((128, 24576), dtype=nl.float32, buffer=nl.sbuf)
nisa.dma_copy(dst=x, src=a)
nisa.tensor_copy(dst=y, src=x)
nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
nisa.dma_copy(dst=out, src=z)
return out
""",
)

GOOD = kernel_example(
    "a",
    """
out = nl.ndarray((128, 24576), dtype=nl.float32, buffer=nl.shared_hbm)
for i in range(3):
    x = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.sbuf)
    y = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a[:, i * 8192:(i + 1) * 8192])
    nisa.tensor_tensor(dst=y, data1=x, data2=x, op=nl.add)
    nisa.dma_copy(dst=out[:, i * 8192:(i + 1) * 8192], src=y)
return out
""",
)


@rule(
    code="NKI401",
    name="sbuf-capacity-exceeded",
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    summary="SBUF tensors live at the same time need more bytes per partition than the target's SBUF "
    "(192/224/256 KiB on trn1/trn2/trn3).",
    bad=BAD,
    good=GOOD,
    sources="hardware.md §1 (SBUF per partition), §5 linter guidance (per-partition budgets, reserved "
    "margin; the usable size is not published)",
    scope_note="The budget is 192 / 224 / 256 KiB per partition on trn1 / trn2 / trn3 minus "
    "`sbuf-reserved-bytes` (default 0) from `[tool.nki-studio]`: the usable size "
    "(`nl.tile_size.sbuf_fmax_bytes`) is not published, so reserve what your runtime keeps back.\n\n"
    "Warning: the budget and the liveness model (allocation to last use) are inferred; the "
    "compiler may spill. Unknown sizes count as zero, so the reported use is a lower bound.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Every SBUF tensor live at the same time takes bytes in every partition it spans. When the tensors live at
    one point need more than the per-partition SBUF, the compiler has to spill to HBM (slow) or fails to
    allocate. The finding sits on the allocation where the peak is reached and lists what is live there (also
    as related locations). Liveness runs from allocation to the last use as an instruction operand or view; an
    allocation inside an unrolled loop counts once per iteration only while it is still referenced (for
    example kept in a list and used after the loop)."""
    limits = ctx.target.limits
    reserved = ctx.config.sbuf_reserved_bytes
    budget = limits.sbuf_bytes_per_partition - reserved
    for root in roots(ctx):
        found = peak_over(ctx, root, "sbuf", sbuf_bytes, budget)
        if found is None:
            continue
        top, span, related = found
        margin = (
            f" ({format_bytes(limits.sbuf_bytes_per_partition)} minus {format_bytes(reserved)} reserved)"
            if reserved
            else ""
        )
        message = (
            f"SBUF use reaches at least {format_bytes(top.amount)} per partition here in "
            f"'{root.name}' ({capacity_share(top.amount, limits.sbuf_bytes_per_partition, 'sbuf')}), over the {format_bytes(budget)} of {ctx.target.generation.value}{margin}; "
            f"live: {live_summary(top.live)}"
        )
        yield ctx.report(span, message, related=related)
