"""NKI208: the legacy ``neuronxcc.nki`` namespace (deprecated; a compile error inside kernels since 0.4)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.model.imports import LEGACY_PREFIX, current_import
from nki_studio.model.targets import LEGACY
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V04

_MIGRATE = (
    'to run on Neuron 2.27 or later migrate it to NKI 0.7 (`nki-studio migrate FILE` or the "Migrate kernel to '
    'NKI 0.7" action rewrite it and prove the rewrite by simulation): imports from nki / nki.language / '
    "nki.isa, then the legacy constructs (nl.arange/mgrid index tiles, masks, par_dim block dims, "
    "value-returning ISA calls)"
)


@rule(
    code="NKI208",
    name="legacy-namespace",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    deprecated=True,
    fixable=True,
    summary="Imports from the legacy `neuronxcc.nki` namespace (an error when kernel code uses them, NKI >= 0.4).",
    bad="import neuronxcc.nki as nki\nimport neuronxcc.nki.isa as nisa\nimport neuronxcc.nki.language as nl\n\n\n"
    "@nki.jit\ndef kernel(x):\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=x)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"
    "@nki.jit\ndef kernel(x):\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=x)\n    return out\n",
    sources="deprecations.md header (version map: legacy = NKI 0.1, Neuron 2.20-2.26), §D (namespace deprecated "
    "2.27; inside kernels an error since 0.4.0), §E (legacy constructs), python-subset.md §6",
    scope_note="A file whose NKI imports are all legacy is legacy code when no setting names the NKI version: "
    "a warning at each legacy import with the migration hint, never an error (the code ran on the SDK it was "
    "written for), and no quick fix (rewriting the import alone would break legacy code): the editor's "
    '"Migrate kernel to NKI 0.7" action (`nki-studio migrate`) migrates the whole file and proves it. With a version '
    "named (>= 0.4), or in a file importing both namespaces, also an error where each current-API kernel (or "
    "helper) first uses a legacy name, decorator included: that is what fails to compile; legacy kernels of "
    "such a file get the warning only. Not reported when the target is set to `legacy`. The fix (current "
    "code) rewrites the import; legacy APIs in the body still need migrating by hand.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The `neuronxcc.nki` namespace was deprecated in Neuron 2.27 when `nki` became its own package, and using
    it inside kernels is a compile error since NKI 0.4.0. Legacy code (a file importing only `neuronxcc.nki`)
    is linted with the legacy API's meaning and only warned about. The quick fix rewrites the import to `nki`,
    `nki.language`, `nki.isa`. The import's finding does not depend on the kernels (so the editor can check
    each kernel on its own); the error is reported at the use in kernel code."""
    signal = ctx.config.version_signal
    if ctx.target.nki_version == LEGACY:
        if signal is None or signal.version != LEGACY:
            return  # legacy named by a setting: the user chose that API
        for stmt in _legacy_imports(ctx):
            yield ctx.report(stmt, f"legacy API {LEGACY_PREFIX} (deprecated since Neuron 2.27); {_MIGRATE}")
        return
    fixes: dict[str, Fix | None] = {}  # local name -> the fix rewriting the import that binds it
    for rec_stmt in _legacy_imports(ctx):
        new = current_import(rec_stmt)
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


def _legacy_imports(ctx: LintContext) -> list[ast.Import | ast.ImportFrom]:
    """Each import statement binding a legacy ``neuronxcc.nki`` name, once, in source order."""
    stmts = {id(r.node): r.node for r in ctx.aliases.uses_legacy()}.values()
    return [s for s in stmts if isinstance(s, (ast.Import, ast.ImportFrom))]


def _first_legacy_uses(ctx: LintContext) -> list[ast.Name]:
    """In each kernel and helper of this file, the first read of each name bound to a legacy module (a legacy
    kernel decorator included)."""
    legacy_locals = {r.local for r in ctx.aliases.uses_legacy()}
    if not legacy_locals:
        return []
    own = ctx.discovery.module.own_nodes
    out: list[ast.Name] = []
    for func in ctx.kernel_code():
        if ctx.legacy_code(func):
            continue  # a legacy kernel of a file importing both APIs: the import's warning says it
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
