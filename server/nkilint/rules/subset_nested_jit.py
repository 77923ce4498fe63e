"""NKI113: a kernel (or its helper) calls another ``@nki.jit`` function."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Related, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V02, V07


@rule(
    code="NKI113",
    name="nested-jit-call",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V02,
    summary="Kernel code calls a function that is itself decorated with `@nki.jit`.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef copy_tile(dst, src):\n"
    "    nisa.dma_copy(dst=dst, src=src)\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    copy_tile(out, x)\n"
    "    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\ndef copy_tile(dst, src):\n"
    "    nisa.dma_copy(dst=dst, src=src)\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    copy_tile(out, x)\n"
    "    return out\n",
    sources="python-subset.md §4 ([MIG] Remove nki.jit decorator on sub-kernels: S), nki-0.7.md §2.8/§3.1",
    scope_note="Warning for NKI 0.2-0.6, although the migration guide states an error: nki-library (written "
    "for NKI >= 0.3) calls nested `@nki.jit` kernels 31 times and even passes the compiler flag "
    "`skip-non-top-level-shared-hbm-check`, so the compiler evidently accepts them in many cases. "
    "Info on 0.7, which inlines nested `@nki.jit` functions (their config must agree unless "
    "`allow_nested_config_override=True`).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The migration guide: remove the `@nki.jit` decorator from sub-kernels called by a kernel, and apply
    `nki.jit(f)` at the call site when `f` is also launched on its own. NKI 0.7 accepts and inlines nested
    jit functions, so there the finding is only informational."""
    severity = Severity.INFO if ctx.target.nki_version >= V07 else None
    for site in ctx.discovery.call_sites:
        if site.callee.is_kernel and site.caller.module is ctx.discovery.module:
            decorator = site.callee.kernel_decorator
            related: tuple[Related, ...] = ()
            if decorator is not None and site.callee.module is ctx.discovery.module:
                related = (
                    Related(ctx.path, ctx.span(decorator), f"{site.callee.qualname} is decorated here"),
                )
            yield ctx.report(
                site.call.func,
                f"`{site.callee.qualname}` is an @nki.jit kernel called from kernel code "
                f"(`{site.caller.qualname}`); remove the decorator from the sub-kernel"
                + (" (NKI 0.7 inlines it)" if severity else ""),
                severity=severity,
                related=related,
            )
