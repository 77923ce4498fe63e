"""NKI208: the legacy ``neuronxcc.nki`` namespace (deprecated; a compile error inside kernels since 0.4)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.model.imports import LEGACY_PREFIX, is_legacy, to_canonical
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.findings import Finding, Fix, Severity
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V02, V04


def _rewrite(stmt: ast.Import | ast.ImportFrom) -> str | None:
    """The import statement in the ``nki`` namespace, when every name it binds is legacy."""
    if isinstance(stmt, ast.Import):
        if not all(is_legacy(a.name) for a in stmt.names):
            return None
        parts = []
        for a in stmt.names:
            new = to_canonical(a.name)
            parts.append(new if a.asname in (None, new) else f"{new} as {a.asname}")
        return "import " + ", ".join(parts)
    if stmt.level or not stmt.module:
        return None
    if stmt.module == "neuronxcc" and all(a.name == "nki" for a in stmt.names):
        return "import nki" + ("" if stmt.names[0].asname in (None, "nki") else f" as {stmt.names[0].asname}")
    if not is_legacy(stmt.module):
        return None
    names = ", ".join(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in stmt.names)
    return f"from {to_canonical(stmt.module)} import {names}"


@rule(code="NKI208", name="legacy-namespace", severity=Severity.WARNING, basis=Basis.STATED, min_version=V02,
      deprecated=True, fixable=True,
      summary="Imports from the legacy `neuronxcc.nki` namespace (an error when kernel code uses them, NKI >= 0.4).",
      bad="import neuronxcc.nki as nki\nimport neuronxcc.nki.isa as nisa\nimport neuronxcc.nki.language as nl\n\n\n"
          "@nki.jit\ndef kernel(x):\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
          "    nisa.dma_copy(dst=out, src=x)\n    return out\n",
      good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"
           "@nki.jit\ndef kernel(x):\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
           "    nisa.dma_copy(dst=out, src=x)\n    return out\n",
      sources="deprecations.md §D (namespace deprecated 2.27; inside kernels an error since 0.4.0), "
              "python-subset.md §6",
      scope_note="Warning for imports that kernel code does not use; error on NKI >= 0.4 when a kernel uses the "
                 "legacy names (0.2-0.3: warning). Not reported when the target is `legacy`. The fix rewrites "
                 "the import; legacy APIs in the body (nl.arange, masks, value-returning ISA calls) still need "
                 "migrating by hand.")
def check(ctx: LintContext) -> Iterator[Finding]:
    """The `neuronxcc.nki` namespace was deprecated in Neuron 2.27 when `nki` became its own package, and using
    it inside kernels is a compile error since NKI 0.4.0. The quick fix rewrites the import to `nki`,
    `nki.language`, `nki.isa`."""
    used_in_kernels = _legacy_names_in_kernel_code(ctx)
    for rec_stmt in {id(r.node): r.node for r in ctx.aliases.uses_legacy()}.values():
        if not isinstance(rec_stmt, (ast.Import, ast.ImportFrom)):
            continue
        bound = [a.asname or a.name.split(".")[0] for a in rec_stmt.names]
        in_kernel = sorted(set(bound) & used_in_kernels)
        severity = Severity.ERROR if in_kernel and ctx.target.nki_version >= V04 else None
        new = _rewrite(rec_stmt)
        fix = Fix(f"Replace with `{new}`", (ctx.replace(rec_stmt, new),)) if new else None
        where = f" and used in kernel code ({', '.join(in_kernel)})" if in_kernel else ""
        yield ctx.finding("NKI208", rec_stmt, f"legacy namespace {LEGACY_PREFIX} imported{where}; import from "
                                              "nki / nki.language / nki.isa instead", severity=severity, fix=fix)


def _legacy_names_in_kernel_code(ctx: LintContext) -> set[str]:
    """Local names bound to legacy modules that kernel code (or a kernel decorator) reads."""
    legacy_locals = {r.local for r in ctx.aliases.uses_legacy()}
    used: set[str] = set()
    for func in ctx.discovery.kernels:
        if func.kernel_legacy and func.module is ctx.discovery.module:
            for dec in func.node.decorator_list:
                used |= {n.id for n in ast.walk(dec) if isinstance(n, ast.Name)} & legacy_locals
    # Parameter/return annotations are evaluated by Python when the def runs, not specialised as kernel code,
    # so an annotation-only use (``x: nt.tensor``) stays a warning.
    in_annotations: set[int] = set()
    for func in ctx.kernel_code():
        a = func.node.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
            if arg is not None and arg.annotation is not None:
                in_annotations.update(id(n) for n in ast.walk(arg.annotation))
        if func.node.returns is not None:
            in_annotations.update(id(n) for n in ast.walk(func.node.returns))
    for node in ctx.kernel_nodes_of((ast.Name,)):
        if isinstance(node, ast.Name) and node.id in legacy_locals and id(node) not in in_annotations:
            used.add(node.id)
    return used
