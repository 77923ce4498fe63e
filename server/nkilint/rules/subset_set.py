"""NKI106: sets in kernel code (0.2-0.6)."""

import ast

from nki_studio.core.findings import Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis
from nki_studio.nkilint.ruleutil import construct_rule


def _is_set(ctx: LintContext, node: ast.AST) -> bool:
    if isinstance(node, (ast.Set, ast.SetComp)):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("set", "frozenset")
        and node.func.id not in ctx.aliases.bindings
    )


construct_rule(
    code="NKI106",
    name="set-in-kernel",
    node_types=(ast.Set, ast.SetComp, ast.Call),
    accept=_is_set,
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    message="sets are not among NKI's container types before NKI 0.7 (tuples, lists, string-keyed dicts); "
    "use a tuple or list",
    summary="A set literal, set comprehension or `set()`/`frozenset()` call in kernel code.",
    why="The NKI language guide lists the supported containers explicitly: tuples, lists, dicts with string "
    "keys and simple classes. Sets are not among them, so the 0.2-0.6 specialiser is not expected to "
    "accept them (inferred). Off for NKI 0.7 (Python tracing).",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n    dims = {x.shape[0], "
    "x.shape[1]}\n    out = nl.ndarray((128, len(dims)), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n    n = 1 if x.shape[0] == "
    "x.shape[1] else 2\n    out = nl.ndarray((128, n), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    return out\n",
    sources="python-subset.md §2 (sets: I)",
)
