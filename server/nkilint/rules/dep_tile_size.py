"""NKI205: deprecated ``nl.tile_size`` attributes (``psum_fmax``, ``total_available_sbuf_size``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V04, resolved_refs

_RENAMES = {
    "nki.language.tile_size.psum_fmax": "psum_bank_fmax",
    "nki.language.tile_size.total_available_sbuf_size": "sbuf_fmax_bytes",
}


@rule(
    code="NKI205",
    name="deprecated-tile-size",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V04,
    deprecated=True,
    fixable=True,
    summary="`nl.tile_size.psum_fmax` and `nl.tile_size.total_available_sbuf_size` are deprecated.",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray((128, nl.tile_size.psum_fmax), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray((128, nl.tile_size.psum_bank_fmax), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    return out\n",
    sources="deprecations.md §B (deprecated 0.4.0), language.md §3",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """NKI 0.4.0 renamed `psum_fmax` to `psum_bank_fmax` (same value, 512 FP32 elements per bank) and
    `total_available_sbuf_size` to `sbuf_fmax_bytes` (usable bytes per partition, same value)."""
    for node, name in resolved_refs(ctx, _RENAMES):
        new = _RENAMES[name]
        fix = None
        if isinstance(node, ast.Attribute):
            fix = Fix(f"Replace with {new}", (ctx.replace(node, f"{ctx.text(node.value)}.{new}"),))
        yield ctx.report(
            node,
            f"tile_size.{name.rsplit('.', 1)[1]} is deprecated since NKI 0.4; use tile_size.{new}",
            fix=fix,
        )
