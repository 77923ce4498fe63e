"""NKI208: the legacy ``neuronxcc.nki`` namespace (deprecated; a compile error inside kernels since 0.4)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.model.imports import LEGACY_PREFIX, is_legacy, to_canonical
from nki_studio.nkilint.context import LintContext
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


@rule(
    code="NKI208",
    name="legacy-namespace",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V02,
    deprecated=True,
    fixable=True,
    summary="Imports from the legacy `neuronxcc.nki` namespace (an error when kernel code uses them, NKI >= 0.4).",
    bad="import neuronxcc.nki as nki\nimport neuronxcc.nki.isa as nisa\nimport neuronxcc.nki.language as nl\n\n\n"
    "@nki.jit\ndef kernel(x):\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=x)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"
    "@nki.jit\ndef kernel(x):\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=x)\n    return out\n",
    sources="deprecations.md §D (namespace deprecated 2.27; inside kernels an error since 0.4.0), "
    "python-subset.md §6",
    scope_note="A warning at every legacy import. On NKI >= 0.4 also an error where each kernel (or helper) "
    "first uses a legacy name, decorator included: that is what fails to compile. Not reported when "
    "the target is `legacy`. The fix (on both) rewrites the import; legacy APIs in the body "
    "(nl.arange, masks, value-returning ISA calls) still need migrating by hand.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The `neuronxcc.nki` namespace was deprecated in Neuron 2.27 when `nki` became its own package, and using
    it inside kernels is a compile error since NKI 0.4.0. The quick fix rewrites the import to `nki`,
    `nki.language`, `nki.isa`. The import's finding does not depend on the kernels (so the editor can check
    each kernel on its own); the error is reported at the use in kernel code."""
    fixes: dict[str, Fix | None] = {}  # local name -> the fix rewriting the import that binds it
    for rec_stmt in {id(r.node): r.node for r in ctx.aliases.uses_legacy()}.values():
        if not isinstance(rec_stmt, (ast.Import, ast.ImportFrom)):
            continue
        new = _rewrite(rec_stmt)
        fix = Fix(f"Replace with `{new}`", (ctx.replace(rec_stmt, new),)) if new else None
        for a in rec_stmt.names:
            fixes.setdefault(a.asname or a.name.split(".")[0], fix)
        yield ctx.report(
            rec_stmt,
            f"legacy namespace {LEGACY_PREFIX} imported; import from nki / nki.language / nki.isa instead",
            fix=fix,
        )
    if ctx.target.nki_version < V04:
        return
    for node in _first_legacy_uses(ctx):
        yield ctx.report(
            node,
            f"`{node.id}` comes from the legacy namespace {LEGACY_PREFIX}: using it in "
            "kernel code is a compile error since NKI 0.4; import from nki / "
            "nki.language / nki.isa instead",
            severity=Severity.ERROR,
            fix=fixes.get(node.id),
        )


def _first_legacy_uses(ctx: LintContext) -> list[ast.Name]:
    """In each kernel and helper of this file, the first read of each name bound to a legacy module (a legacy
    kernel decorator included)."""
    legacy_locals = {r.local for r in ctx.aliases.uses_legacy()}
    if not legacy_locals:
        return []
    own = ctx.discovery.module.own_nodes
    out: list[ast.Name] = []
    for func in ctx.kernel_code():
        # Parameter/return annotations are evaluated by Python when the def runs, not specialised as kernel
        # code, so an annotation-only use (``x: nt.tensor``) stays the import's warning.
        in_annotations: set[int] = set()
        a = func.node.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
            if arg is not None and arg.annotation is not None:
                in_annotations.update(id(n) for n in ast.walk(arg.annotation))
        if func.node.returns is not None:
            in_annotations.update(id(n) for n in ast.walk(func.node.returns))
        decorators = [n for d in func.node.decorator_list for n in ast.walk(d)] if func.kernel_legacy else []
        seen: set[str] = set()
        for node in [*decorators, *own.get(id(func.node), ())]:
            if (
                isinstance(node, ast.Name)
                and node.id in legacy_locals
                and node.id not in seen
                and id(node) not in in_annotations
            ):
                seen.add(node.id)
                out.append(node)
    return out
