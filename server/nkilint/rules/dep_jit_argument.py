"""NKI207: removed ``@nki.jit`` arguments (``mode=``, ``platform_target=``)."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V03, remove_keyword


@rule(
    code="NKI207",
    name="removed-jit-argument",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V03,
    deprecated=True,
    fixable=True,
    summary="`@nki.jit(mode=...)` (ignored since 0.3.0) or `@nki.jit(platform_target=...)` (an error).",
    bad='import nki\nimport nki.language as nl\n\n\n@nki.jit(mode="simulation")\ndef kernel(x):\n'
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources="deprecations.md §D (mode deprecated & ignored 0.3.0; platform_target error since 0.3.0)",
    scope_note="`mode=` is a warning (ignored), `platform_target=` an error; both are removed by the fix.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Since 0.3.0 `nki.jit` ignores `mode=` (simulate with `nki.simulate(kernel)(...)` or `NKI_SIMULATOR=1`)
    and rejects `platform_target=` (set `NEURON_PLATFORM_TARGET_OVERRIDE` instead)."""
    for node in ctx.calls_to("nki.jit"):
        if ctx.aliases.resolve(node.func) != "nki.jit":
            continue  # legacy neuronxcc.nki.jit
        for kw in node.keywords:
            if kw.arg == "mode":
                yield ctx.report(
                    kw,
                    "nki.jit(mode=...) is ignored since NKI 0.3.0; remove it (simulate "
                    "with nki.simulate(kernel)(...) or NKI_SIMULATOR=1)",
                    fix=Fix("Remove mode=", (remove_keyword(ctx, node, kw),)),
                )
            elif kw.arg == "platform_target":
                yield ctx.report(
                    kw,
                    "nki.jit(platform_target=...) is an error since NKI 0.3.0; set "
                    "NEURON_PLATFORM_TARGET_OVERRIDE instead",
                    severity=Severity.ERROR,
                    fix=Fix("Remove platform_target=", (remove_keyword(ctx, node, kw),)),
                )
