"""NKI132: Python-level side effects in a ``nl.fori_loop`` / ``nl.while_loop`` body, which tracing runs once."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.kernels import FunctionInfo
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07, loop_body_api, own_nodes

# Methods that change a list/dict/set/deque in place.
_MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "update", "add", "discard", "setdefault",
     "popitem", "appendleft", "extendleft", "sort", "reverse"}
)  # fmt: skip
_CONTAINER_CALLS = frozenset({"list", "dict", "set", "collections.deque", "collections.defaultdict"})
_CONTAINER_NODES = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)


def _stored(ctx: LintContext, func: FunctionInfo) -> set[str]:
    """Names local to a function: its parameters and every name it stores (nested defs excluded)."""
    args = func.node.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in own_nodes(ctx, func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
    return names


def _declared(ctx: LintContext, func: FunctionInfo) -> set[str]:
    out: set[str] = set()
    for node in own_nodes(ctx, func):
        if isinstance(node, (ast.Nonlocal, ast.Global)):
            out.update(node.names)
    return out


def _containers(ctx: LintContext, func: FunctionInfo) -> set[str]:
    """Names the enclosing functions (or the module) bind to a Python list/dict/set."""
    scopes: list[ast.AST] = []
    parent = func.parent
    while parent is not None:
        scopes.append(parent.node)
        parent = parent.parent
    scopes.append(ctx.tree)
    out: set[str] = set()
    for scope in scopes:  # nested functions' bindings count too: a local name of the body is subtracted later
        for stmt in ast.walk(scope):
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(stmt, ast.Assign):
                targets, value = stmt.targets, stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets, value = [stmt.target], stmt.value
            if value is not None and _is_container(ctx, value):
                out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def _is_container(ctx: LintContext, value: ast.expr) -> bool:
    if isinstance(value, _CONTAINER_NODES):
        return True
    if isinstance(value, ast.Call):
        name = ctx.aliases.resolve(value.func) or (
            value.func.id if isinstance(value.func, ast.Name) else None
        )
        return name in _CONTAINER_CALLS
    return False


def _root(node: ast.expr) -> ast.Name | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _side_effects(ctx: LintContext, func: FunctionInfo) -> Iterator[tuple[ast.AST, str]]:
    local = _stored(ctx, func)
    declared = _declared(ctx, func)
    containers = _containers(ctx, func) - (local - declared)
    outer = declared | containers  # Python state the body shares with the code around the loop

    def foreign(target: ast.expr) -> str | None:
        root = _root(target)
        if root is None or ctx.aliases.canonical(root) is not None:
            return None  # not a name, or an nki module
        if isinstance(target, ast.Name):
            return root.id if root.id in declared else None
        if isinstance(target, ast.Subscript) and not isinstance(target.value, ast.Attribute):
            return root.id if root.id in outer else None  # a tensor view assignment is not Python state
        return root.id if root.id not in local or root.id in declared else None

    for node in own_nodes(ctx, func):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "print" and "print" not in ctx.aliases.bindings:
                yield node, "print() runs once, while the body is traced, not once per iteration"
            elif isinstance(f, ast.Attribute) and f.attr in _MUTATORS:
                root = _root(f.value)
                shared = root is not None and (
                    root.id in outer or (root.id not in local and isinstance(f.value, ast.Attribute))
                )
                if shared and root is not None and ctx.aliases.canonical(root) is None:
                    yield (
                        node,
                        (
                            f"`{ctx.text(f)}(...)` changes Python state once, while the body is traced, not "
                            "once per iteration"
                        ),
                    )
        elif isinstance(node, (ast.AugAssign, ast.Assign)):
            targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets
            for target in targets:
                name = foreign(target)
                if name is not None:
                    what = "incremented" if isinstance(node, ast.AugAssign) else "assigned"
                    yield (
                        target,
                        (
                            f"`{ctx.text(target)}` ({name} lives outside the body) is {what} once, while the body "
                            "is traced, not once per iteration"
                        ),
                    )


@rule(
    code="NKI132",
    name="loop-body-side-effect",
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    min_version=V07,
    summary="A `nl.fori_loop`/`nl.while_loop` body changes Python state (appends to an outer list, increments "
    "an outer counter, prints): tracing runs the body once, not once per iteration.",
    bad=kernel_example(
        "x, n",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
steps = []

def body(i):
    nisa.dma_copy(dst=out, src=x)
    steps.append(i)

nl.fori_loop(0, n, body)
return out
""",
    ),
    good=kernel_example(
        "x, n",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)

def body(i):
    nisa.dma_copy(dst=out, src=x)

nl.fori_loop(0, n, body)
return out
""",
    ),
    sources="nki-0.7.md §2.1 (loop bodies passed to `fori_loop`/`while_loop` are traced once, one IR region: "
    "S [AGD]; Python side effects therefore happen once at trace time: I), §2.3 ([FORI]: body side effects on "
    "tensors persist)",
    scope_note="NKI 0.7 and later (tracing). A body is a function passed by name to `nl.fori_loop`/"
    "`nl.while_loop`. Reported: `print()`; in-place methods (`append`, `update`, `pop`, ...) on a list, dict "
    "or set the enclosing code created, or on an attribute of an outer object; assignments to names the "
    "body declares `nonlocal`/`global`, to attributes of outer objects and to items of outer Python "
    "containers. Tensor writes (`nisa.*`, views) are device work and persist per iteration, so they are not "
    "reported. In the body, `print()` is this rule's (NKI120 covers the rest of the kernel).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Under NKI 0.7 the kernel is executed by Python once and every NKI call records an operation. A
    `fori_loop`/`while_loop` body becomes one compiled loop region: its Python runs once while it is traced,
    whatever the trip count, and the device repeats only the recorded operations. A list that grows per
    iteration, a counter, or a print inside the body therefore happen once; keep such bookkeeping outside the
    loop, or keep the state in SBUF/HBM tensors."""
    if not any(ctx.kernel_calls_to(api) for api in ("nki.language.fori_loop", "nki.language.while_loop")):
        return
    for func in ctx.kernel_code():
        if loop_body_api(ctx, func) is None:
            continue
        for node, message in _side_effects(ctx, func):
            yield ctx.report(node, message)
