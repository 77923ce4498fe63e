"""NKI134: an int64 ``NkiScalar`` as the condition of ``nl.if_else`` (the condition must be 32-bit)."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07
from nki_studio.nkilint.scalars import argument, scalar_facts

_IF_ELSE = "nki.language.if_else"


def _example(dtype: str) -> str:
    return kernel_example(
        "x, flag",
        f"""
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
flag_sb = nl.ndarray((1, 1), dtype=nl.{dtype}, buffer=nl.sbuf)
nisa.dma_copy(dst=flag_sb, src=flag)
enabled = nisa.scalar_load(flag_sb)

def copy():
    nisa.dma_copy(dst=out, src=x)

nl.if_else(enabled, copy)
return out
""",
    )


@rule(
    code="NKI134",
    name="if-else-int64-condition",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    summary="An `nl.int64` NkiScalar as the condition of `nl.if_else` (the condition must be a 32-bit NkiScalar).",
    bad=_example("int64"),
    good=_example("int32"),
    sources="the `latest` nki.language.if_else page (cond: a Python bool or int, or a 32-bit NkiScalar) and the "
    "nki.isa.NkiScalar page (at 64 bits only +, - and * exist)",
    scope_note="NKI 0.7 and later (NkiScalar is a 0.7 API). The scalar is recognised as for NKI129: "
    "`nisa.scalar_load` of a tensor allocated in kernel code with an int64 dtype, or arithmetic of one.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """`nl.if_else` branches on a scalar every engine sequencer evaluates; the API page takes a Python bool/int
    or a 32-bit NkiScalar, and a 64-bit scalar has no compare-with-zero. Load the flag from an `nl.int32` tile
    (comparisons of a 32-bit scalar, `n > 0`, are accepted too)."""
    facts = scalar_facts(ctx)
    if facts is None:
        return
    for call in ctx.kernel_calls_to(_IF_ELSE):
        cond = argument(call, 0, "cond")
        if cond is not None and facts.dtype(cond) == "int64":
            yield ctx.report(
                cond,
                f"if_else condition `{ctx.text(cond)}` is an int64 NkiScalar; the condition must be a 32-bit "
                "NkiScalar (or a Python bool/int): load it from an nl.int32 tile",
            )
