"""NKI102: ``with`` other than ``nl.no_reorder()`` in kernel code (0.2-0.6)."""

import ast

from nki_studio.core.findings import Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis
from nki_studio.nkilint.ruleutil import construct_rule


def _not_no_reorder(ctx: LintContext, node: ast.AST) -> bool:
    assert isinstance(node, (ast.With, ast.AsyncWith))
    return not all(
        isinstance(item.context_expr, ast.Call)
        and ctx.aliases.canonical(item.context_expr.func) == "nki.language.no_reorder"
        for item in node.items
    )


construct_rule(
    code="NKI102",
    name="with-in-kernel",
    node_types=(ast.With, ast.AsyncWith),
    accept=_not_no_reorder,
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    message="only `with nl.no_reorder():` is documented inside NKI kernels (before NKI 0.7)",
    summary="A `with` statement other than `with nl.no_reorder():` in kernel code.",
    why="The only documented context manager in NKI kernels is `nl.no_reorder()` (stated); other context "
    "managers are outside the documented subset of the 0.2-0.6 specialiser (inferred). Off for NKI 0.7, "
    "which traces the kernel with Python.",
    bad="import contextlib\n\nimport nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\n"
    "def kernel(x):\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    with contextlib.suppress(Exception):\n        nisa.dma_copy(dst=out, src=x)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    with nl.no_reorder():\n"
    "        nisa.dma_copy(dst=out, src=x)\n    return out\n",
    sources="python-subset.md §6 (with), language.md §10 (no_reorder)",
)
