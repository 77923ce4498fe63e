"""NKI105: dict with non-string keys in kernel code (0.2-0.6)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V02, V06


def _non_string_literal(key: ast.expr | None) -> bool:
    """A key that is certainly not a string (a literal number/tuple/None/bool); names stay unknown."""
    if isinstance(key, ast.Constant):
        return not isinstance(key.value, str)
    return isinstance(key, (ast.Tuple, ast.List))


@rule(
    code="NKI105",
    name="dict-non-string-key",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V02,
    max_version=V06,
    summary="A dict literal or comprehension in kernel code with a key that is not a string.",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n    widths = {0: 64, 1: 128}\n"
    "    out = nl.ndarray((128, widths[0]), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    '    widths = {"small": 64, "large": 128}\n'
    '    out = nl.ndarray((128, widths["small"]), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n',
    sources="python-subset.md §2 (dict keys: S, [LG] NKI Values, [MIG] 0.3.0)",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """NKI dicts support only string keys (language guide "NKI Values"; migration guide 0.3.0). Only keys
    that are literally not strings are reported; a key held in a variable is not guessed. Off for 0.7."""
    for node in ctx.kernel_nodes_of((ast.Dict, ast.DictComp)):
        keys: list[ast.expr | None] = []
        if isinstance(node, ast.Dict):
            keys = list(node.keys)
        elif isinstance(node, ast.DictComp):
            keys = [node.key]
        for key in keys:
            if key is not None and _non_string_literal(key):
                yield ctx.report(
                    key,
                    f"dict key {ast.unparse(key)} is not a string; NKI dicts "
                    "support only string keys before NKI 0.7",
                )
