"""NKI125: ``==``/``!=`` between instances of a plain user class changes meaning in NKI 0.7."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V07, own_nodes


def _identity_eq_classes(ctx: LintContext) -> set[str]:
    """Module classes whose ``==`` is Python identity: no ``__eq__``, not a dataclass, not an Enum."""
    out = set()
    for name, cls in ctx.discovery.module.classes.items():
        decorated = any("dataclass" in ast.unparse(d) for d in cls.decorator_list)
        defines_eq = any(isinstance(s, ast.FunctionDef) and s.name == "__eq__" for s in cls.body)
        enum_base = any("Enum" in ast.unparse(b) for b in cls.bases)
        if not (decorated or defines_eq or enum_base):
            out.add(name)
    return out


@rule(
    code="NKI125",
    name="user-class-equality",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V07,
    summary="`==`/`!=` between two instances of a user class without `__eq__` (structural in 0.6, identity in "
    "0.7).",
    bad="import nki\nimport nki.language as nl\n\n\nclass Tile(nl.NKIObject):\n    def __init__(self, rows):\n"
    "        self.rows = rows\n\n\n@nki.jit\ndef kernel(x):\n    a = Tile(128)\n    b = Tile(128)\n"
    "    rows = 128 if a == b else 64\n"
    "    out = nl.ndarray((rows, 4), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\nclass Tile(nl.NKIObject):\n    def __init__(self, rows):\n"
    "        self.rows = rows\n\n\n@nki.jit\ndef kernel(x):\n    a = Tile(128)\n    b = Tile(128)\n"
    "    rows = 128 if a.rows == b.rows else 64\n"
    "    out = nl.ndarray((rows, 4), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources='nki-0.7.md §2.1 and §3.3 nki07-user-class-eq ([ANN]: "can behave differently"; mechanics inferred)',
    scope_note="NKI 0.7 and later. Only instances created in the same function from a class of this file are "
    "recognised.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """NKI 0.6 compared NKIObject instances structurally; the 0.7 tracer runs standard Python, where two
    separately built instances of a class without `__eq__` are never equal (identity). Compare fields, or add
    `@dataclass` / `__eq__`."""
    classes = _identity_eq_classes(ctx)
    if not classes:
        return
    for func in ctx.kernel_code():
        nodes = own_nodes(ctx, func)
        instances: dict[str, str] = {}
        for node in nodes:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)
                and node.value.func.id in classes
            ):
                instances[node.targets[0].id] = node.value.func.id
        if len(instances) < 2:
            continue
        for node in nodes:
            if (
                isinstance(node, ast.Compare)
                and len(node.ops) == 1
                and isinstance(node.ops[0], (ast.Eq, ast.NotEq))
            ):
                left, right = node.left, node.comparators[0]
                if (
                    isinstance(left, ast.Name)
                    and isinstance(right, ast.Name)
                    and left.id in instances
                    and right.id in instances
                ):
                    yield ctx.report(
                        node,
                        f"`{ctx.text(node)}` compares two {instances[left.id]} "
                        "instances: NKI 0.6 compared them field by field, NKI 0.7 "
                        "compares identity; compare fields or define __eq__",
                    )
