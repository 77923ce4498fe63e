"""NKI123: kernel code mutates a module-level list/dict/set (kernels must be pure; results are cached)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import own_nodes

_MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "setdefault",
        "add",
        "discard",
        "popitem",
        "sort",
        "reverse",
    }
)
_CONTAINER_CALLS = frozenset({"list", "dict", "set"})


def _mutable_globals(tree: ast.Module) -> set[str]:
    out: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            value = stmt.value
            mutable = isinstance(
                value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
            ) or (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id in _CONTAINER_CALLS
            )
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if mutable:
                out.update(t.id for t in targets if isinstance(t, ast.Name))
    return out


@rule(
    code="NKI123",
    name="mutates-module-state",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    summary="Kernel code mutates a module-level list, dict or set.",
    bad="import nki\nimport nki.language as nl\n\nSEEN_SHAPES = []\n\n\n@nki.jit\ndef kernel(x):\n"
    "    SEEN_SHAPES.append(x.shape)\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    return out\n",
    good="import nki\nimport nki.language as nl\n\nSUPPORTED = (nl.bfloat16, nl.float32)\n\n\n@nki.jit\n"
    "def kernel(x):\n    assert x.dtype in SUPPORTED\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources="python-subset.md §1 (Kernel Caching: S), §8 nki-impure-global; nki-0.7.md §3.1 (kept for 0.7)",
    scope_note="Every version: the 0.7 tracer also caches per specialisation. Reading module constants is fine "
    "and not reported.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The language guide (Kernel Caching): kernels must be pure functions of their arguments; side effects on
    globals give stale cached results (undefined behaviour), because a kernel is specialised once per argument
    signature and then reused. Mutating module-level containers from kernel code is such a side effect."""
    names = _mutable_globals(ctx.tree)
    if not names:
        return
    for func in ctx.kernel_code():
        nodes = own_nodes(ctx, func)
        local = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        watched = names - local
        for node in nodes:
            target: ast.expr | None = None
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _MUTATORS
            ):
                target = node.func.value
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                for t in node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]:
                    if isinstance(t, ast.Subscript):
                        target = t.value
            if isinstance(target, ast.Name) and target.id in watched:
                yield ctx.report(
                    node,
                    f"kernel code mutates module-level `{target.id}`; kernels must be "
                    "pure functions of their arguments (compiled kernels are cached)",
                )
