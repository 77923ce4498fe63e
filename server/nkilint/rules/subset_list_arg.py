"""NKI115: lists as kernel arguments (defaults or literal arguments at a call site)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V03, V07


def _tuple_fix(ctx: LintContext, node: ast.List) -> Fix:
    inner = ", ".join(ctx.text(e) for e in node.elts)
    text = f"({inner},)" if len(node.elts) == 1 else f"({inner})"
    return Fix("Pass a tuple instead of a list", (ctx.replace(node, text),))


@rule(
    code="NKI115",
    name="list-kernel-arg",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V03,
    fixable=True,
    summary="A list is passed to a kernel (list default in its signature or list literal at a call site).",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, dims=[128, 64]):\n"
    "    out = nl.ndarray((dims[0], dims[1]), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, dims=(128, 64)):\n"
    "    out = nl.ndarray((dims[0], dims[1]), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources="python-subset.md §4 ([MIG] Replace list kernel arguments with tuples 0.3.0: S)",
    scope_note="Error for 0.3-0.6; warning on 0.7 (argument marshalling is not meta-programming).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The 0.3.0 migration guide: kernel arguments may not be lists; pass tuples. Checked on kernel defaults
    and on list literals passed to kernels called in this file."""
    severity = Severity.WARNING if ctx.target.nki_version >= V07 else None
    kernels = {k.node.name: k for k in ctx.discovery.kernels}
    for kernel in kernels.values():
        for default in [*kernel.node.args.defaults, *kernel.node.args.kw_defaults]:
            if isinstance(default, ast.List):
                yield ctx.report(
                    default,
                    f"list default for a parameter of kernel `{kernel.qualname}`; "
                    "kernels take tuples, not lists",
                    fix=_tuple_fix(ctx, default),
                    severity=severity,
                )
    for node in ctx.calls_headed_by(kernels):
        if not isinstance(node, ast.Call):
            continue
        callee = node.func.value if isinstance(node.func, ast.Subscript) else node.func  # kernel[2](...)
        if isinstance(callee, ast.Name) and callee.id in kernels:
            for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                if isinstance(arg, ast.List):
                    yield ctx.report(
                        arg,
                        f"list passed to kernel `{callee.id}`; kernels take tuples",
                        fix=_tuple_fix(ctx, arg),
                        severity=severity,
                    )
