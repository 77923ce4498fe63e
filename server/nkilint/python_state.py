"""Python state a kernel callback changes (NKI132's loop bodies, NKI133's ``nl.if_else`` callbacks): under NKI
0.7 tracing such a callback's Python runs as often as it is traced, not as often as the device runs it."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.model.kernels import FunctionInfo
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.ruleutil import own_nodes

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


def python_state_changes(ctx: LintContext, func: FunctionInfo, part: str) -> Iterator[tuple[ast.AST, str]]:
    """Where a callback ``func`` (the ``part`` of a construct: "body", "callback") changes Python state the
    code around it shares, each with the start of a sentence ("`log.append(...)` changes Python state"):
    ``print()``, in-place methods on outer containers or outer objects' attributes, assignments to names it
    declares ``nonlocal``/``global``, to outer objects' attributes and to items of outer Python containers."""
    local = _stored(ctx, func)
    declared = _declared(ctx, func)
    containers = _containers(ctx, func) - (local - declared)
    outer = declared | containers  # Python state the callback shares with the code around it

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
                yield node, "print() runs"
            elif isinstance(f, ast.Attribute) and f.attr in _MUTATORS:
                root = _root(f.value)
                shared = root is not None and (
                    root.id in outer or (root.id not in local and isinstance(f.value, ast.Attribute))
                )
                if shared and root is not None and ctx.aliases.canonical(root) is None:
                    yield node, f"`{ctx.text(f)}(...)` changes Python state"
        elif isinstance(node, (ast.AugAssign, ast.Assign)):
            targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets
            for target in targets:
                name = foreign(target)
                if name is not None:
                    what = "incremented" if isinstance(node, ast.AugAssign) else "assigned"
                    yield target, f"`{ctx.text(target)}` ({name} lives outside the {part}) is {what}"
