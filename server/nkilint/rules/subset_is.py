"""NKI107: ``is``/``is not`` other than against ``None`` (0.3-0.6)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V03, V06


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


@rule(
    code="NKI107",
    name="is-operator",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V03,
    max_version=V06,
    fixable=True,
    summary="`is` / `is not` in kernel code, except against `None`.",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, flag):\n    if flag is True:\n"
    "        width = 64\n    else:\n        width = 128\n"
    "    out = nl.ndarray((128, width), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, flag, bias=None):\n"
    "    width = 64 if flag else 128\n    if bias is not None:\n        width = width * 2\n"
    "    out = nl.ndarray((128, width), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources="python-subset.md §5 (is/is not: S [MIG] 0.3.0; `is None` accepted in practice: P)",
    scope_note="Comparisons against the `None` literal are not reported: nki-library kernels use them 318 times. "
    "A warning rather than an error although the 0.3.0 migration guide states it: nki-library's own "
    "test kernels compare objects with `is` (test_tensor_view.py), so the rule is contradicted in "
    "practice beyond `None`.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The 0.3.0 migration guide: replace `is`/`is not` with `==`/`!=`. Comparisons with the `None` literal
    are accepted in practice (every one of nki-library's 318 uses), so they are not reported. Off for 0.7,
    where identity is ordinary Python at trace time."""
    for node in ctx.kernel_nodes_of((ast.Compare,)):
        assert isinstance(node, ast.Compare)
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, (ast.Is, ast.IsNot)) and not (_is_none(left) or _is_none(right)):
                fix = None
                if len(node.ops) == 1:
                    new = f"{ctx.text(left)} {'==' if isinstance(op, ast.Is) else '!='} {ctx.text(right)}"
                    fix = Fix(
                        f"Replace with {'==' if isinstance(op, ast.Is) else '!='}", (ctx.replace(node, new),)
                    )
                word = "is" if isinstance(op, ast.Is) else "is not"
                yield ctx.report(
                    node,
                    f"`{word}` is not supported in NKI kernels (0.3-0.6); use "
                    f"{'==' if isinstance(op, ast.Is) else '!='}",
                    fix=fix,
                )
            left = right
