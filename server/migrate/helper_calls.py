"""Helper calls on index tiles -> the expression they compute, inlined (issue 28: masks whose predicate comes from a
helper, nki-samples' rmsnorm_quant ``tile_info.outer_dim_tile.get_tile_mask(n, p_idx, max_exclusive=size)``).

A legacy kernel may build its masks and index expressions in plain Python helpers, in the file or in another module
of its package (``TiledDimInfo.get_tile_mask`` returns ``self.get_tile_indices(n, offset) < max_exclusive``, that
one ``n * self.tile_size + offset``). Which index the mask bounds is not visible at the call, so ``index_tiles``
could only list it. When an argument of such a call is an index tile and the callee is a function of the file or of
the package's other modules (``helpers``: their texts) whose body only binds names, tests what it was given
(``x is not None``) and returns an expression free of calls (index arithmetic and comparisons: an argument used
twice is then only read twice), the call is replaced by that expression with the call's arguments
(and ``self``/``cls``: the receiver) in place of the parameters; the mask and index passes then see ``n * size +
p_idx < bound``. The callee is found by name (one definition of that name among the file and the helpers, else the
call is left alone); a parameter given anything but ``None`` is taken as not ``None`` (inferred: what a helper's
``is not None`` tests are for). The proof checks the outcome. Lines are kept: a call spanning several lines leaves
its line breaks inside the parentheses of its replacement.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Sequence

from nki_studio.migrate.index_tiles import index_tile_names
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import Source, functions

_DEPTH = 8  # helpers calling helpers: deeper is taken as recursion and left alone


class _Helpers:
    """Every function definition of the file and the helper modules, by name (a name defined twice: none)."""

    def __init__(self, src: Source, helpers: Sequence[str]) -> None:
        found: dict[str, list[ast.FunctionDef]] = {}
        for tree in [src.tree, *(_parsed(text) for text in helpers)]:
            for f in functions(tree):
                if isinstance(f, ast.FunctionDef):
                    found.setdefault(f.name, []).append(f)
        self.defs = {name: fs[0] for name, fs in found.items() if len(fs) == 1}

    def callee(self, call: ast.Call) -> tuple[ast.FunctionDef, ast.expr | None] | None:
        """The definition a call names and its receiver (``a.b`` in ``a.b.f(...)``; None for a plain ``f(...)``)."""
        if isinstance(call.func, ast.Name):
            found = self.defs.get(call.func.id)
            return (found, None) if found is not None and not _is_method(found) else None
        if isinstance(call.func, ast.Attribute):
            found = self.defs.get(call.func.attr)
            return (found, call.func.value) if found is not None and _is_method(found) else None
        return None


def _parsed(text: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def _is_method(f: ast.FunctionDef) -> bool:
    """A function whose first parameter is its receiver (``self``/``cls``, or any name under ``classmethod``)."""
    first = f.args.args[0].arg if f.args.args else None
    decorated = any(isinstance(d, ast.Name) and d.id == "classmethod" for d in f.decorator_list)
    return first in ("self", "cls") or (decorated and first is not None)


class _Inline(ast.NodeTransformer):
    """Replace the parameters' names by the expressions bound to them."""

    def __init__(self, env: dict[str, ast.expr]) -> None:
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return copy.deepcopy(self.env[node.id]) if node.id in self.env else node


def _bind(f: ast.FunctionDef, call: ast.Call, receiver: ast.expr | None) -> dict[str, ast.expr] | None:
    """The parameters of ``f`` bound to ``call``'s arguments (defaults for the rest); None when they do not fit."""
    arguments = f.args
    if arguments.vararg or arguments.kwarg or arguments.posonlyargs:
        return None
    params = [a.arg for a in arguments.args]
    defaults = dict(zip(params[len(params) - len(arguments.defaults) :], arguments.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d})
    env: dict[str, ast.expr] = {}
    if receiver is not None:
        env[params.pop(0)] = receiver
    if len(call.args) > len(params) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    env.update(zip(params, call.args, strict=False))
    for k in call.keywords:
        if k.arg is None or k.arg in env:
            return None
        env[k.arg] = k.value
    for name in [*params, *(a.arg for a in arguments.kwonlyargs)]:
        if name not in env:
            if name not in defaults:
                return None
            env[name] = defaults[name]
    return env


def _decide(test: ast.expr, env: dict[str, ast.expr]) -> bool | None:
    """A helper's test of what it was given (``x is None``, ``x is not None``, ``and``/``or``/``not`` of those):
    its value at this call, or None when it depends on more."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        left, right = test.left, test.comparators[0]
        if (
            isinstance(left, ast.Name)
            and left.id in env
            and isinstance(right, ast.Constant)
            and right.value is None
        ):
            bound = env[left.id]
            none = isinstance(bound, ast.Constant) and bound.value is None
            return none if isinstance(test.ops[0], ast.Is) else not none
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decide(test.operand, env)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [_decide(v, env) for v in test.values]
        if any(v is None for v in values):
            return None
        return all(values) if isinstance(test.op, ast.And) else any(values)
    return None


def _value(body: list[ast.stmt], env: dict[str, ast.expr], helpers: _Helpers, depth: int) -> ast.expr | None:
    """What ``body`` returns with ``env`` bound, as one expression (None: a statement other than a binding, a
    decidable ``if``, an ``assert`` or a ``return``)."""
    for stmt in body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # a docstring
        if isinstance(stmt, ast.Assert):
            continue  # checks the caller's values; the legacy run made it
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = _expression(stmt.value, env, helpers, depth)
            if value is None:
                return None
            env = {**env, stmt.targets[0].id: value}
        elif isinstance(stmt, ast.If):
            taken = _decide(stmt.test, env)
            if taken is None:
                return None
            result = _value(stmt.body if taken else stmt.orelse, env, helpers, depth)
            if result is not None or (stmt.body if taken else stmt.orelse):
                return result  # every branch of the helpers followed returns
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            return _expression(stmt.value, env, helpers, depth)
        else:
            return None
    return None


def _expression(node: ast.expr, env: dict[str, ast.expr], helpers: _Helpers, depth: int) -> ast.expr | None:
    """``node`` with the parameters in ``env`` replaced and the helper calls in it inlined in turn."""
    bound = _Inline(env).visit(copy.deepcopy(node))
    for call in [n for n in ast.walk(bound) if isinstance(n, ast.Call)]:
        inlined = _inlined(call, helpers, depth + 1)
        if inlined is not None:
            bound = _Replace(call, inlined).visit(bound)
    return bound


class _Replace(ast.NodeTransformer):
    def __init__(self, old: ast.AST, new: ast.expr) -> None:
        self.old, self.new = old, new

    def generic_visit(self, node: ast.AST) -> ast.AST:
        return self.new if node is self.old else super().generic_visit(node)


def _inlined(call: ast.Call, helpers: _Helpers, depth: int) -> ast.expr | None:
    """The expression a helper call computes, or None when its callee is not a helper this pass can follow."""
    found = helpers.callee(call) if depth <= _DEPTH else None
    if found is None:
        return None
    f, receiver = found
    env = _bind(f, call, receiver)
    return _value(f.body, env, helpers, depth) if env is not None else None


def run(src: Source, helpers: Sequence[str] = ()) -> PassResult:
    """Inline each helper call that takes an index tile (the file's functions and ``helpers``' modules')."""
    out = PassResult()
    known = _Helpers(src, helpers)
    done: set[int] = set()
    for func in functions(src.tree):
        tiles = index_tile_names(src, func)
        if not tiles:
            continue
        for node in ast.walk(func):
            if not isinstance(node, ast.Call) or id(node) in done or src.canonical(node.func) is not None:
                continue
            if not any(
                isinstance(n, ast.Name) and n.id in tiles for a in _operands(node) for n in ast.walk(a)
            ):
                continue
            inlined = _inlined(node, known, 0)
            if inlined is None or any(isinstance(n, ast.Call) for n in ast.walk(inlined)):
                continue  # only index arithmetic is inlined: a call (an instruction, a load) keeps its helper
            done.update(id(n) for n in ast.walk(node))
            breaks = "\n" * ((node.end_lineno or node.lineno) - node.lineno)
            out.change(
                src.replace(node, f"({ast.unparse(inlined)}{breaks})"),
                node.lineno,
                "helper call",
                f"inlined ({src.text_of(node.func).rsplit('.', 1)[-1]}: the index expression it computes)",
            )
    return out


def _operands(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]
