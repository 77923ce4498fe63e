"""NKI214: ``VirtualRegister`` APIs have an announced replacement, ``NkiScalar`` (NKI 0.7 hint)."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V07, resolved_refs

_REGISTER_APIS = (
    "nki.isa.register_alloc",
    "nki.isa.register_move",
    "nki.isa.register_load",
    "nki.isa.register_store",
    "nki.isa.VirtualRegister",
)


@rule(
    code="NKI214",
    name="virtual-register-hint",
    severity=Severity.INFO,
    basis=Basis.STATED,
    min_version=V07,
    summary="`nisa.register_*` / `VirtualRegister`: NKI 0.7 announces `NkiScalar` as their future replacement.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, idx_sb):\n"
    "    r = nisa.register_alloc()\n    nisa.register_load(r, idx_sb)\n"
    "    out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=x.ap([[512, 128], [1, 512]], scalar_offset=r, indirect_dim=0))\n"
    "    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, idx_sb):\n"
    "    i = nisa.scalar_load(idx_sb)\n"
    "    out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=x.ap([[512, 128], [1, 512]], scalar_offset=i, indirect_dim=0))\n"
    "    return out\n",
    sources='nki-0.7.md §2.4 ([MIG7] "future replacement", [SLD], [SST]), deprecations.md §A',
    scope_note="Info only: the register APIs still exist in 0.7. `scalar_load`/`scalar_store` need the tracer "
    "front end (not `NKI_COMPILER_FRONTEND=custom`).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The 0.7 migration guide introduces `nki.isa.NkiScalar` (`nisa.scalar_load` / traced arithmetic /
    `nisa.scalar_store`) as the future replacement of `VirtualRegister` and the `register_*` calls, which remain
    available for now. NkiScalars also allow Python arithmetic that registers do not."""
    for node, name in resolved_refs(ctx, _REGISTER_APIS):
        short = name.rsplit(".", 1)[1]
        yield ctx.report(
            node,
            f"nisa.{short}: NKI 0.7 announces NkiScalar (nisa.scalar_load / "
            "scalar_store) as the replacement of VirtualRegister",
        )
