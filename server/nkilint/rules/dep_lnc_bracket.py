"""NKI211: ``kernel[lnc](...)`` launch-grid syntax is being deprecated (NKI 0.7)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V07, bracket_lnc_kernels


@rule(
    code="NKI211",
    name="lnc-launch-bracket",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V07,
    deprecated=True,
    summary="A kernel launched with the bracket grid syntax `kernel[2](...)`.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    nisa.dma_copy(dst=out, src=x)\n"
    "    return out\n\n\ndef run(x):\n    return kernel[2](x)\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    nisa.dma_copy(dst=out, src=x)\n"
    "    return out\n\n\ndef run(x):\n    # NEURON_LOGICAL_NC_CONFIG=2 is set in the environment\n"
    "    return kernel(x)\n",
    sources="nki-0.7.md §2.5 ([EVRF066], [MIG7]), deprecations.md §H",
    scope_note="NKI 0.7 and later. No automatic fix: the LNC degree must move to NEURON_LOGICAL_NC_CONFIG.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The 0.7 docs describe the bracket syntax as "being deprecated" and make an LNC disagreement with the
    graph's `--lnc` a compile error (NCC_EVRF066). Set `NEURON_LOGICAL_NC_CONFIG` to the degree and call the
    kernel plainly."""
    kernels = bracket_lnc_kernels(ctx)
    for node in ctx.calls_headed_by(kernels):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Subscript)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in kernels
        ):
            yield ctx.report(
                node.func,
                f"{ctx.text(node.func)}(...) launch syntax is being deprecated "
                "(NKI 0.7); set NEURON_LOGICAL_NC_CONFIG and call the kernel "
                "directly (a mismatch with --lnc is error NCC_EVRF066)",
            )
