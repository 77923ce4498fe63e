"""NKI302: legacy code indexing a tensor with a 1-D ``nl.arange`` (no partition axis)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, Example, rule
from nki_studio.nkilint.ruleutil import own_nodes

_ARANGE = "nki.language.arange"
_KERNEL = (
    "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n@nki.jit\ndef kernel(a):\n"
    "    out = nl.ndarray((64, 1), dtype=a.dtype, buffer=nl.shared_hbm)\n"
    "    i = {index}\n    nl.store(out[i, 0], value=nl.load(a[i, 0]))\n    return out\n"
)


@rule(
    code="NKI302",
    name="legacy-1d-arange-index",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="Legacy code indexes a tensor with a 1-D `nl.arange` (index tiles need a partition axis: "
    "`nl.arange(n)[:, None]`).",
    bad=Example(_KERNEL.format(index="nl.arange(64)"), nki_version="legacy"),
    good=Example(_KERNEL.format(index="nl.arange(64)[:, None]"), nki_version="legacy"),
    sources="legacy NKI API errors page, `err_1d_arange_not_supported` (Neuron /en/v2.21.0.beta/ "
    'general/nki/api/nki.errors: "Indexing a NKI tensor with 1D arange is not supported")',
    scope_note="Legacy `neuronxcc.nki` code only: the target `legacy`, or legacy kernels when no setting names "
    "the version (the `nki` namespace has no `nl.arange`: NKI209). Reported where an index is `nl.arange(...)` "
    "itself or a name the function assigns once from it.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Legacy NKI maps index tiles onto on-chip memory, which has a partition axis: an index built with
    `nl.arange` must have at least two dimensions (`nl.arange(n)[:, None]` for the partition axis,
    `nl.arange(n)[None, :]` for a free axis, or `nl.mgrid`). A 1-D arange index is the compile error
    `err_1d_arange_not_supported`."""
    for func in ctx.kernel_code():
        if not ctx.legacy_code(func):
            continue
        nodes = own_nodes(ctx, func)
        vectors = _one_d_names(ctx, nodes)
        for node in nodes:
            if not isinstance(node, ast.Subscript) or not isinstance(node.ctx, (ast.Load, ast.Store)):
                continue
            keys = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for key in keys:
                if _is_arange(ctx, key) or (isinstance(key, ast.Name) and key.id in vectors):
                    yield ctx.report(
                        key,
                        f"`{ctx.text(key)}` is a 1-D nl.arange: a tensor index needs a partition axis; "
                        "use nl.arange(n)[:, None] (partition) or nl.arange(n)[None, :] (free), or nl.mgrid",
                    )


def _is_arange(ctx: LintContext, node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and ctx.aliases.canonical(node.func) == _ARANGE


def _one_d_names(ctx: LintContext, nodes: list[ast.AST]) -> set[str]:
    """Names the function assigns exactly once, from a bare ``nl.arange(...)`` call."""
    assigned: dict[str, list[ast.expr]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)) and isinstance(node.target, ast.Name):
            assigned.setdefault(node.target.id, []).append(node.target)
    return {name for name, values in assigned.items() if len(values) == 1 and _is_arange(ctx, values[0])}
