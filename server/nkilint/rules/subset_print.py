"""NKI120: ``print()`` in kernel code runs at compile time only."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V07, enclosing_function, loop_body_api, runtime_if_else_callback


@rule(
    code="NKI120",
    name="print-at-compile-time",
    severity=Severity.INFO,
    basis=Basis.STATED,
    summary="`print()` in kernel code prints once, while the kernel is compiled, not on the device.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    nisa.dma_copy(dst=out, src=x)\n"
    "    print(out)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    nisa.dma_copy(dst=out, src=x)\n"
    '    nl.device_print("out", out)\n    return out\n',
    sources="python-subset.md §6 (print: S [LG] intro), language.md §12 (device_print)",
    scope_note="From NKI 0.7 a `print()` in a `fori_loop`/`while_loop` body is reported by NKI132 instead, and "
    "one in a callback of an `nl.if_else` with a runtime condition by NKI133.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The language guide: `print` runs at compile (specialisation/trace) time and prints once; to see tensor
    values at run time use `nl.device_print(prefix, tensor)`. Printing shapes for debugging is fine, hence info."""
    if not ctx.calls_headed_by(("print",)):
        return  # no print() call anywhere in the file (most files): no pass over kernel code's calls
    tracing = ctx.target.nki_version >= V07
    for node in ctx.kernel_nodes_of((ast.Call,)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "print"
            and "print" not in ctx.aliases.bindings
        ):
            func = enclosing_function(ctx, node) if tracing else None
            if func is not None and (
                loop_body_api(ctx, func) is not None or runtime_if_else_callback(ctx, func)
            ):
                continue  # NKI132's (a loop body: once per trace) or NKI133's (an if_else callback: both branches)
            yield ctx.report(
                node,
                "print() runs once at compile time, not on the device; use "
                "nl.device_print(prefix, tensor) for run-time values",
            )
