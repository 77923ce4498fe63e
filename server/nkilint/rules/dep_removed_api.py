"""NKI209: APIs that no longer exist in the ``nki`` namespace (legacy language features, old launchers)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V02, V04, resolved_refs

_LEGACY_LANGUAGE = "removed from nki.language in NKI 0.2 (legacy neuronxcc.nki feature)"
# canonical name -> (advice, renamed-to or None)
_REMOVED: dict[str, tuple[str, str | None]] = {
    "nki.simulate_kernel": ("removed in the nki namespace; use nki.simulate(kernel)(*args)", None),
    "nki.baremetal": ("removed in the nki namespace; use @nki.jit (NumPy inputs run standalone)", None),
    "nki.benchmark": ("removed in the nki namespace; use @nki.jit and profile with neuron-explorer", None),
    "nki.profile": ("removed in the nki namespace; use @nki.jit and `neuron-explorer capture`", None),
    "nki.trace": ("a legacy alias; use nki.jit", "jit"),
    "nki.tensor": ("moved to nki.meta.tensor in Neuron 2.28", "meta.tensor"),
    "nki.isa.tensor_copy_dynamic_src": (
        "removed in NKI 0.4; use nisa.tensor_copy with src=t.ap(..., scalar_offset=...)",
        None,
    ),
    "nki.isa.tensor_copy_dynamic_dst": (
        "removed in NKI 0.4; use nisa.tensor_copy with dst=t.ap(..., scalar_offset=...)",
        None,
    ),
    "nki.language.par_dim": (
        f"{_LEGACY_LANGUAGE}: fold block dims into the free dims, partition dim first",
        None,
    ),
    "nki.language.arange": (f"{_LEGACY_LANGUAGE}: index with integer slices or nl.ds(start, size)", None),
    "nki.language.mgrid": (f"{_LEGACY_LANGUAGE}: index with integer slices", None),
    "nki.language.static_cast": (
        f"{_LEGACY_LANGUAGE}: copy into a tile of the target dtype "
        "(nisa.tensor_copy) or .view() to reinterpret",
        None,
    ),
    "nki.language.loop_reduce": (f"{_LEGACY_LANGUAGE}: accumulate with nisa.tensor_tensor", None),
    "nki.language.atomic_rmw": (f"{_LEGACY_LANGUAGE}: use nisa.dma_compute", None),
    "nki.language.all_reduce": (f"{_LEGACY_LANGUAGE}: use nki.collectives.all_reduce", None),
    "nki.language.spmd_dim": (
        f"{_LEGACY_LANGUAGE}: launch with kernel[lnc] / NEURON_LOGICAL_NC_CONFIG",
        None,
    ),
    "nki.language.nc": (f"{_LEGACY_LANGUAGE}: launch with kernel[lnc] / NEURON_LOGICAL_NC_CONFIG", None),
    "nki.language.gemm_grid": (f"{_LEGACY_LANGUAGE}", None),
    "nki.language.gemm_stationary_grid": (f"{_LEGACY_LANGUAGE}", None),
    "nki.language.fp32": (f"{_LEGACY_LANGUAGE}: write -3.4028235e+38 for fp32.min", None),
}
_SINCE = {"nki.isa.tensor_copy_dynamic_src": V04, "nki.isa.tensor_copy_dynamic_dst": V04}


@rule(
    code="NKI209",
    name="removed-api",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V02,
    deprecated=True,
    fixable=True,
    summary="An API that no longer exists in the `nki` namespace (`nl.arange`, `nl.par_dim`, `nki.simulate_kernel`, "
    "`nisa.tensor_copy_dynamic_src` ...).",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)\n"
    "    nisa.memset(dst=t, value=nl.fp32.min)\n"
    "    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=t)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)\n"
    "    nisa.memset(dst=t, value=-3.4028235e+38)\n"
    "    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=t)\n    return out\n",
    sources="deprecations.md §C (tensor_copy_dynamic_*), §D (launchers, nki.tensor), §E (legacy language features)",
    scope_note="Only names reached through the `nki` namespace are reported; legacy `neuronxcc.nki` code is "
    "NKI208's business.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """These names existed in the legacy `neuronxcc.nki` API or in older `nki` releases and are gone from the
    current `nki` package, so the kernel fails with an attribute error. Renames (`nki.trace` -> `nki.jit`,
    `nki.tensor` -> `nki.meta.tensor`, `nl.fp32.min` -> the literal) are fixed automatically."""
    for node, name in resolved_refs(ctx, _REMOVED):
        if ctx.target.nki_version < _SINCE.get(name, V02):
            continue
        advice, renamed = _REMOVED[name]
        fix = None
        target: ast.AST = node
        if renamed and isinstance(node, ast.Attribute):
            fix = Fix(f"Replace with {renamed}", (ctx.replace(node, f"{ctx.text(node.value)}.{renamed}"),))
        call = ctx.call_of.get(node)
        if (
            name == "nki.simulate_kernel"
            and isinstance(node, ast.Attribute)
            and call is not None
            and call.args
            and not isinstance(call.args[0], ast.Starred)
        ):
            rest = ", ".join([ctx.text(a) for a in call.args[1:]] + [ctx.text(k) for k in call.keywords])
            new = f"{ctx.text(node.value)}.simulate({ctx.text(call.args[0])})({rest})"
            fix = Fix("Replace with nki.simulate(kernel)(...)", (ctx.replace(call, new),))
        parent = ctx.parent(node) if name == "nki.language.fp32" else None
        if name == "nki.language.fp32" and isinstance(parent, ast.Attribute) and parent.attr == "min":
            target = parent
            fix = Fix("Replace with -3.4028235e+38", (ctx.replace(parent, "-3.4028235e+38"),))
        yield ctx.report(target, f"{ctx.text(target)} is {advice}", fix=fix)
