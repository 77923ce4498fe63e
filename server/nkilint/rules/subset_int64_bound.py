"""NKI129: an int64 ``NkiScalar`` as a bound of ``nl.fori_loop`` (bounds must be 32-bit)."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07, loop_bound_args
from nki_studio.nkilint.scalars import scalar_facts

_FORI = "nki.language.fori_loop"


@rule(
    code="NKI129",
    name="fori-int64-bound",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    summary="An `nl.int64` NkiScalar as a bound of `nl.fori_loop` (loop bounds must be 32-bit).",
    bad=kernel_example(
        "x, count",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
count_sb = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
nisa.dma_copy(dst=count_sb, src=count)
n = nisa.scalar_load(count_sb)

def body(i):
    nisa.dma_copy(dst=out, src=x)

nl.fori_loop(0, n, body)
return out
""",
    ),
    good=kernel_example(
        "x, count",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
count_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
nisa.dma_copy(dst=count_sb, src=count)
n = nisa.scalar_load(count_sb)

def body(i):
    nisa.dma_copy(dst=out, src=x)

nl.fori_loop(0, n, body)
return out
""",
    ),
    sources="nki-0.7.md §2.3 ([FORI]: a bound must be 32-bit, the compare-and-branch has no 64-bit form) and "
    "§2.4 ([NKS]: int64 scalars are not a fori_loop bound)",
    scope_note="NKI 0.7 and later (NkiScalar is a 0.7 API). Recognised when the scalar is `nisa.scalar_load` of a "
    'tensor allocated with `dtype=nl.int64` (or `"int64"`, or a module constant bound once to either) in kernel '
    "code (the same function or an enclosing one), or arithmetic of one. A scalar loaded from a kernel argument "
    "has the dtype of the caller's array, unknown to lint; the simulator refuses it (loop bounds must be 32-bit).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """`nl.fori_loop` compiles into a compare-and-branch on the trip count, which has no 64-bit form, so its
    bounds must be 32-bit: an `nl.int64` NkiScalar is rejected. Load the bound from an `nl.int32` tile (a 64-bit
    scalar may still be computed inside the body and used as an HBM offset)."""
    facts = scalar_facts(ctx)
    if facts is None:
        return
    for call in ctx.kernel_calls_to(_FORI):
        for bound in loop_bound_args(call, _FORI):
            if facts.dtype(bound) == "int64":
                yield ctx.report(
                    bound,
                    f"fori_loop bound `{ctx.text(bound)}` is an int64 NkiScalar; loop bounds must be "
                    "32-bit (no 64-bit compare-and-branch); load the bound from an nl.int32 tile",
                )
