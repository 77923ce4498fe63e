"""NKI114: keyword-only parameters (``*``) in a kernel signature."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V03, V07


@rule(
    code="NKI114",
    name="kwonly-kernel-args",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V03,
    summary="A `@nki.jit` kernel signature uses the keyword-only separator `*`.",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, *, scale=1.0):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, scale=1.0):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources="python-subset.md §4 ([MIG] Language restrictions 0.3.0: S), nki-0.7.md §3.1",
    scope_note="Error for 0.3-0.6; warning on 0.7 (no 0.7 statement found either way).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The 0.3.0 migration guide: keyword-only arguments are not supported in kernel signatures; move the
    defaulted parameters to the end instead. Helpers may use them."""
    severity = Severity.WARNING if ctx.target.nki_version >= V07 else None
    for kernel in ctx.discovery.kernels:
        args = kernel.node.args
        if args.kwonlyargs:
            first: ast.AST = args.kwonlyargs[0]
            yield ctx.report(
                first,
                f"kernel `{kernel.qualname}` has keyword-only parameters "
                f"({', '.join(a.arg for a in args.kwonlyargs)}); NKI kernels do not "
                "support the `*` separator: make them ordinary defaulted parameters",
                severity=severity,
            )
