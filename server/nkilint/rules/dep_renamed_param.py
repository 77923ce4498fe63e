"""NKI206: removed or renamed ``nki.isa`` keyword parameters."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity, TextEdit
from nki_studio.model.imports import is_legacy, to_canonical
from nki_studio.model.targets import NkiVersion
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V02, V03, remove_keyword

# (api, keyword) -> (since, new keyword or None to drop or "" for manual, advice)
_CHANGES: dict[tuple[str, str], tuple[NkiVersion, str | None, str]] = {
    ("nki.isa.nc_matmul", "is_moving_zero"): (V02, "is_moving_onezero", "renamed in Neuron 2.28"),
    ("nki.isa.nc_matmul", "psumAccumulateFlag"): (
        V02,
        None,
        "removed in Neuron 2.28 (it had no effect); use accumulate=",
    ),
    ("nki.isa.register_move", "imm"): (V03, "src", "renamed in NKI 0.3.0"),
    ("nki.isa.sendrecv", "use_gpsimd_dma"): (
        V03,
        "",
        "replaced in NKI 0.3.0 by dma_engine=nisa.dma_engine.*",
    ),
    ("nki.isa.dma_copy", "dst_rmw_op"): (
        V03,
        "",
        "removed in NKI 0.3.0; use nisa.dma_compute(dst, [src, dst], reduce_op=...)",
    ),
}


def _sendrecv_fix(ctx: LintContext, call: ast.Call, kw: ast.keyword) -> Fix | None:
    if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool)):
        return None
    isa = ctx.text(call.func.value) if isinstance(call.func, ast.Attribute) else None
    if isa is None:
        return None
    engine = "gpsimd_dma" if kw.value.value else "dma"
    return Fix("Use dma_engine=", (ctx.replace(kw, f"dma_engine={isa}.dma_engine.{engine}"),))


# Parameters removed from every nki.isa call (destination-passing API, NKI 0.2.0) and from nki.language calls.
_REMOVED_EVERYWHERE = {
    ("nki.isa.", "dtype"): "removed from ISA calls in NKI 0.2 (the output dtype is dst.dtype)",
    ("nki.isa.", "mask"): "removed in NKI 0.2; compute in-bounds slices with min() instead",
    ("nki.language.", "mask"): "removed in NKI 0.2; compute in-bounds slices with min() instead",
}

_KEYWORDS = frozenset({name for _, name in _CHANGES} | {name for _, name in _REMOVED_EVERYWHERE})


def _reported_keywords(raw: str) -> frozenset[str]:
    """The keywords :func:`check` reports on a call of ``raw`` (a callee's dotted name as imported): none for
    legacy ``neuronxcc.nki`` code (NKI208's business) or outside ``nki.isa``/``nki.language``. Computed once per
    callee, so the many calls passing a keyword only other APIs lost (``nl.ndarray(dtype=...)``) cost a lookup."""
    if is_legacy(raw):
        return frozenset()
    api = to_canonical(raw)
    if not api.startswith(("nki.isa.", "nki.language.")):
        return frozenset()
    removed = {name for prefix, name in _REMOVED_EVERYWHERE if api.startswith(prefix)}
    return frozenset(removed | {name for changed, name in _CHANGES if changed == api})


@rule(
    code="NKI206",
    name="removed-isa-parameter",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V02,
    deprecated=True,
    fixable=True,
    summary="A removed or renamed `nki.isa`/`nki.language` keyword (`is_moving_zero`, `psumAccumulateFlag`, "
    "`imm`, `use_gpsimd_dma`, `dst_rmw_op`, `dtype=` on ISA calls, `mask=`).",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(a, b):\n"
    "    psum = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)\n"
    "    nisa.nc_matmul(dst=psum, stationary=a, moving=b, is_moving_zero=True)\n"
    "    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(a, b):\n"
    "    psum = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)\n"
    "    nisa.nc_matmul(dst=psum, stationary=a, moving=b, is_moving_onezero=True)\n"
    "    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)\n    return out\n",
    sources="deprecations.md §C (nc_matmul 2.28, register_move/sendrecv/dma_copy 0.3.0), isa.md §0.1 (no dtype=/mask=)",
    scope_note="`dtype=` on ISA calls and `mask=` are warnings: the 0.6 docs say they were removed in 0.2, but "
    "nki-library (written for NKI >= 0.3) still passes `dtype=` to `nisa.scalar_tensor_tensor`.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """These keywords no longer exist in `nki.isa`, so the call fails. Renames are fixed automatically
    (`is_moving_zero` -> `is_moving_onezero`, `imm` -> `src`, `use_gpsimd_dma=True` -> `dma_engine=...`);
    `psumAccumulateFlag` is dropped; `dst_rmw_op` needs a manual move to `nisa.dma_compute`."""
    reported_of: dict[str, frozenset[str]] = {}  # callee (as imported) -> the keywords reported on it
    for keyword in _KEYWORDS:
        for node in ctx.calls_passing(
            (keyword,)
        ):  # most calls pass none: skipped before resolving the callee
            raw = ctx.resolved(node.func)
            if raw is None:
                continue
            reported = reported_of.get(raw)
            if reported is None:
                reported = reported_of[raw] = _reported_keywords(raw)
            if keyword in reported:  # not e.g. nl.ndarray(dtype=...): dtype= is removed from ISA calls only
                api = to_canonical(raw)
                for kw in node.keywords:
                    if kw.arg == keyword:  # once, unless repeated (which parses; the call then fails)
                        yield from _findings(ctx, node, kw, api)


def _findings(ctx: LintContext, node: ast.Call, kw: ast.keyword, api: str) -> Iterator[Finding]:
    """What ``api(kw=...)`` at ``node`` reports: a keyword removed from its namespace, renamed or dropped."""
    for (prefix, name), advice in _REMOVED_EVERYWHERE.items():
        if kw.arg == name and api.startswith(prefix):
            # Warning, not error: nki-library (NKI >= 0.3) still passes dtype= to
            # nisa.scalar_tensor_tensor in moe_cte_utils.py, so the removal is not certain in practice.
            yield ctx.report(
                kw,
                f"{api.rsplit('.', 1)[1]}({name}=...): {advice}",
                severity=Severity.WARNING,
            )
    change = _CHANGES.get((api, kw.arg or ""))
    if change is None:
        return
    since, new, advice = change
    if ctx.target.nki_version < since:
        return
    fix = None
    if new:
        fix = Fix(f"Rename to {new}=", (TextEdit(ctx.span(kw), f"{new}={ctx.text(kw.value)}"),))
    elif new is None:
        fix = Fix(f"Remove {kw.arg}=", (remove_keyword(ctx, node, kw),))
    elif kw.arg == "use_gpsimd_dma":
        fix = _sendrecv_fix(ctx, node, kw)
    yield ctx.report(kw, f"{api.rsplit('.', 1)[1]}({kw.arg}=...) is {advice}", fix=fix)
