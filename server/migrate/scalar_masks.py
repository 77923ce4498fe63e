"""Masks that do not depend on the element -> a Python ``if`` around the instruction.

A legacy ``mask=`` is "a compile-time constant predicate that controls whether/how this instruction is executed"
(v2.26.1 NKI API Masking). When it names no index tile and no tile (``mask=((2 * i + g) * 128 < seqlen)``, a flag
computed from loop indices and shapes, or a name bound only to such values) it is one boolean for the whole call:
the instruction runs on every element or on none, and masked off it writes nothing. In 0.7 the loops are Python
``range`` loops resolved at specialization (nki-0.7.md: static iterators "default to Python range"), so the same
predicate is a Python condition: ``if cond: nl.store(...)`` on the statement's own line (line numbers stay), or
``(call if cond else None)`` for a call sharing its line with another statement (what the value-returning rewrite
leaves: ``x = nl.ndarray(...); nisa.op(dst=x, ..., mask=c)``). A mask bound to a name that may be ``None`` (no
mask) keeps that meaning: ``if m is None or m:``.

A call whose result is bound to a name (``x = nl.add(a, b, mask=c)``) is listed: under ``if`` the name would be
unbound when the mask is off, where the legacy call still returned a tile (its elements unspecified). Masks on
index tiles are ``index_tiles``' (bounded slices); ``&`` of both kinds leaves the scalar part here.
"""

from __future__ import annotations

import ast

from nki_studio.migrate import isa_results
from nki_studio.migrate.operators import Tiles
from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import LANGUAGE, Source, functions

RECIPE = (
    "a mask that does not depend on the element runs the whole instruction or none of it: allocate the result "
    "before (x = nl.ndarray(...)) and write it under `if cond:`"
)


_METADATA = frozenset({"shape", "dtype", "ndim"})
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
_INDEX_TILES = frozenset({f"{LANGUAGE}.arange", f"{LANGUAGE}.mgrid"})


class Scalars:
    """Which expressions of one function are element-independent (no index tile, no tile, no name bound to one)."""

    def __init__(self, src: Source, func: ast.AST) -> None:
        self.src = src
        self.tiles = Tiles(src, func)
        self.values: dict[str, list[ast.expr]] = {}
        # A parameter may be a tensor: it counts as a scalar only where the function uses it as one (inferred).
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = func.args
            used = _used_as_scalars(src, func)
            for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                if a.arg not in used:
                    self.values[a.arg] = [ast.Name("?", ast.Load())]
        for node in ast.walk(func):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(target, node.value)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and isinstance(
                node.target, ast.Name
            ):
                self.values.setdefault(node.target.id, []).append(ast.Name("?", ast.Load()))

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        """Record what each name of an assignment target is bound to: ``a, b = (x, y)`` element-wise; other
        unpacking (``_, n, d = x.shape``) binds each name to the whole value (a scalar when the whole is)."""
        if (
            isinstance(target, ast.Tuple)
            and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
        ):
            for t, v in zip(target.elts, value.elts, strict=True):
                self._bind(t, v)
            return
        for name in ast.walk(target):
            if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                self.values.setdefault(name.id, []).append(value)

    def scalar(self, node: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``node`` is the same for every element of a tile (names followed through their assignments;
        ``x.shape`` / ``x.dtype`` are, whatever ``x`` is)."""
        if isinstance(node, ast.Attribute) and node.attr in _METADATA:
            return True
        if isinstance(node, ast.Call):
            name = self.src.canonical(node.func) or ""
            if name in _INDEX_TILES or self.tiles.is_tile(node):
                return False
        elif isinstance(node, ast.Subscript) and self.src.canonical(node.value) in _INDEX_TILES:
            return False
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id == "?" or node.id in self.tiles.names:
                return False
            if node.id in self.values and node.id not in seen:
                return all(self.scalar(v, seen | {node.id}) for v in self.values[node.id])
        return all(self.scalar(child, seen) for child in ast.iter_child_nodes(node))

    def mask(self, node: ast.expr) -> str | None:
        """The ``if`` condition of a scalar mask (None: not scalar). A bare name must be bound in the function (a
        parameter could be a tile); one bound to ``None`` somewhere keeps "no mask" as "run"."""
        if isinstance(node, ast.Name):
            values = self.values.get(node.id)
            if not values or not self.scalar(node):
                return None
            if any(isinstance(n, ast.Constant) and n.value is None for v in values for n in ast.walk(v)):
                return f"{node.id} is None or {node.id}"
            return node.id
        if not self.scalar(node):
            return None
        text = self.src.text_of(node)
        return text[1:-1] if _parenthesised(text) else text


def _used_as_scalars(src: Source, func: ast.AST) -> set[str]:
    """Names the function uses as a tensor cannot be: inside a subscript's key, an ``if``/``assert`` test, a
    loop iterator's bounds, or an operand of arithmetic (a legacy kernel computes on tiles it loaded, never on its
    HBM tensors)."""
    places: list[ast.AST] = []
    for node in ast.walk(func):
        if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
            places.extend(n for n in (node.left, node.right) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Subscript):
            places.append(node.slice)
        elif isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)):
            places.append(node.test)
        elif isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            places.extend(node.iter.args)
    return {n.id for p in places for n in ast.walk(p) if isinstance(n, ast.Name)}


def _parenthesised(text: str) -> bool:
    """``(…)`` wrapping the whole text (not ``(a) < (b)``)."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for i, c in enumerate(text):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0 and i < len(text) - 1:
            return False
    return True


def run(src: Source) -> PassResult:
    """Put every call with a scalar mask under ``if`` (or a conditional expression); list named results."""
    out = PassResult()
    for func in functions(src.tree):
        if any(
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(func) if n is not func
        ):
            continue  # nested functions: the innermost is rewritten on its own, the outer would overlap it
        scalars = Scalars(src, func)
        for stmt in ast.walk(func):
            if isinstance(stmt, ast.stmt) and not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                _statement(src, scalars, stmt, out)
    return out


def listed(src: Source) -> list[ManualStep]:
    """The calls with a scalar mask (or a scalar part of one) whose result is bound to a name, on ``src``'s lines
    (``manual.py`` lists them from the original text)."""
    steps = []
    allocated = isa_results.rewritten_calls(src)  # their results are allocated before the call: not listed
    for func in functions(src.tree):
        scalars = Scalars(src, func)
        for stmt in ast.walk(func):
            if not (
                isinstance(stmt, ast.Assign)
                and id(stmt.value) not in allocated
                and isinstance(stmt.value, ast.Call)
                and any(isinstance(t, ast.Name) for t in stmt.targets)
            ):
                continue
            mask = next((k.value for k in stmt.value.keywords if k.arg == "mask"), None)
            parts = conjuncts_of(mask) if mask is not None else []
            if any(scalars.mask(p) is not None for p in parts):
                steps.append(ManualStep(stmt.lineno, "mask=", RECIPE))
    return steps


def conjuncts_of(mask: ast.expr) -> list[ast.expr]:
    """The ``&``-joined conditions of a mask."""
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.BitAnd):
        return [*conjuncts_of(mask.left), *conjuncts_of(mask.right)]
    return [mask]


def _statement(src: Source, scalars: Scalars, stmt: ast.stmt, out: PassResult) -> None:
    """Rewrite one simple statement whose outermost call has a scalar mask."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign)) else None
    if not isinstance(value, ast.Call):
        return
    keyword = next((k for k in value.keywords if k.arg == "mask"), None)
    cond = scalars.mask(keyword.value) if keyword is not None else None
    if keyword is None or cond is None:
        return
    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) for t in stmt.targets):
        return  # listed by ``listed`` from the original text (this pass runs after lines were deleted)
    cut = src.keyword_cut(value, keyword)
    if cut is None:
        out.manual.append(ManualStep(stmt.lineno, "mask=", RECIPE))
        return
    start, end = src.bounds(stmt)
    text = src.text[start : cut[0]] + src.text[cut[1] : end]
    if src.delete_lines(stmt) is not None:
        new = f"if {cond}: {text}"
    elif isinstance(stmt, ast.Expr):
        new = f"{text} if {cond} else None"
    else:
        out.manual.append(ManualStep(stmt.lineno, "mask=", RECIPE))
        return
    out.change(src.replace(stmt, new), stmt.lineno, "mask", "whole-instruction condition: if")
