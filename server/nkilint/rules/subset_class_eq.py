"""NKI125: ``==``/``!=`` between instances of a plain user class changes meaning in NKI 0.7."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V07, own_nodes


def _dataclass_eq(decorator: ast.expr) -> bool:
    """``@dataclass`` / ``@dataclasses.dataclass(...)`` that generates ``__eq__`` (``eq=False`` does not)."""
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call is not None else decorator
    name = (
        target.attr
        if isinstance(target, ast.Attribute)
        else target.id
        if isinstance(target, ast.Name)
        else ""
    )
    if name != "dataclass":
        return False
    eq = next((kw.value for kw in call.keywords if kw.arg == "eq"), None) if call is not None else None
    return not (isinstance(eq, ast.Constant) and eq.value is False)


def _identity_eq_classes(ctx: LintContext) -> set[str]:
    """Module classes whose ``==`` is Python identity: no ``__eq__`` and no ``@dataclass`` (with eq) on the class
    or a base of this module, and every base is ``object``, ``NKIObject`` or such a class (any other base, e.g.
    ``Enum``, ``NamedTuple`` or an imported class, may define ``==``)."""
    classes = ctx.discovery.module.classes
    verdict: dict[str, bool] = {}

    def identity(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in verdict:
            return verdict[name]
        cls = classes[name]
        own = not any(_dataclass_eq(d) for d in cls.decorator_list) and not any(
            isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == "__eq__" for st in cls.body
        )
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
                own = own and identity(base.id, seen | {name})
            elif isinstance(base, ast.Name) and base.id == "object":
                continue
            else:
                own = own and (
                    isinstance(base, (ast.Name, ast.Attribute)) and ctx.text(base).endswith("NKIObject")
                )
        verdict[name] = own
        return own

    return {name for name in classes if identity(name)}


def _instance_of(node: ast.expr, instances: dict[str, str], classes: set[str]) -> str | None:
    """The identity-``==`` class ``node`` is an instance of: a known instance name or a constructor call."""
    if isinstance(node, ast.Name):
        return instances.get(node.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in classes:
        return node.func.id
    return None


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
    scope_note="NKI 0.7 and later. Classes of this file without `__eq__`/`@dataclass` (also on their local bases) "
    "whose bases are `object`, `NKIObject` or such classes; instances created in the same function, parameters "
    "annotated with the class, or a constructor call in the comparison; `==`, `!=` and `in`/`not in` a literal "
    "list or tuple of instances.",
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
        for arg in [*func.node.args.posonlyargs, *func.node.args.args, *func.node.args.kwonlyargs]:
            if isinstance(arg.annotation, ast.Name) and arg.annotation.id in classes:
                instances[arg.arg] = arg.annotation.id

        for node in nodes:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                cls = _instance_of(node.value, instances, classes)
                if cls is not None and not isinstance(node.value, ast.Name):
                    instances[node.targets[0].id] = cls
                else:
                    instances.pop(node.targets[0].id, None)
                continue
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
                continue
            left, right, op = node.left, node.comparators[0], node.ops[0]
            if isinstance(op, (ast.Eq, ast.NotEq)):
                others = [right]
            elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.List, ast.Tuple, ast.Set)):
                others = list(right.elts)  # `a in (b, c)` compares with ==
            else:
                continue
            cls = _instance_of(left, instances, classes)
            if cls is None or not any(_instance_of(o, instances, classes) is not None for o in others):
                continue
            yield ctx.report(
                node,
                f"`{ctx.text(node)}` compares {cls} instances with ==: NKI 0.6 compared them field by field, "
                "NKI 0.7 runs plain Python, where distinct instances of a class without __eq__ are never equal; "
                "compare the fields, or give the class @dataclass or __eq__",
            )
