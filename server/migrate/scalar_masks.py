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

A call whose result is bound to a name (``x = nl.add(a, b, mask=c)``) would leave the name unbound under ``if`` when
the mask is off, where the legacy call still returned a tile (its elements unspecified): ``masked_values`` binds
an element-wise call's to an allocation of the operands' broadcast shape then (a pass before this one), this pass
an ``nl.load``'s to one of its view's shape (``unwritten_tile``); one neither can allocate (a matmul, a reduction,
an operand not known as a tile) is listed. Masks on
index tiles are ``index_tiles``' (bounded slices); ``&`` of both kinds leaves the scalar part here.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from nki_studio.migrate import isa_results
from nki_studio.migrate.operators import Tiles
from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import LANGUAGE, Source, functions

RECIPE = (
    "a mask that does not depend on the element runs the whole instruction or none of it: allocate the result "
    "before (x = nl.ndarray(...)) and write it under `if cond:`"
)

# language.md §8: unary, activation and binary element-wise functions (their result has the operands' shape)
ELEMENTWISE = frozenset(
    {
        "abs", "negative", "sign", "square", "sqrt", "rsqrt", "reciprocal", "exp", "log", "sin", "cos", "tan",
        "arctan", "tanh", "ceil", "floor", "trunc", "invert", "logical_not", "relu", "sigmoid", "silu", "gelu",
        "mish", "softplus", "erf", "add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "bitwise_and", "bitwise_or",
        "bitwise_xor", "logical_and", "logical_or", "logical_xor", "copy",
    }
)  # fmt: skip


NESTED_RECIPE = (
    "a call nested in another has a mask of its own that the statement's does not repeat: compute it into its own "
    "tile first (x = nl.ndarray(...); under `if cond:` write x), then pass x"
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
            used = _used_as_scalars(src, func) | _configurations(func)
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


def _configurations(func: ast.AST) -> set[str]:
    """Names the function only reads attributes of, never calling, subscripting or passing those (``cfg.tile_size``
    in a condition): a configuration object's fields, not a tile's (a tile is subscripted, passed or has its methods
    called; ``.shape``/``.dtype`` aside). Inferred from how legacy kernels take their settings (nki-samples'
    ``flash_config``); the proof checks the outcome."""
    parents = {id(child): node for node in ast.walk(func) for child in ast.iter_child_nodes(node)}
    reads: dict[str, bool] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            parent = parents.get(id(node))
            field = isinstance(parent, ast.Attribute) and parent.attr not in _METADATA | {"T"}
            used = parents.get(id(parent)) if field else None
            plain = field and not isinstance(used, (ast.Call, ast.Subscript))
            reads[node.id] = reads.get(node.id, True) and plain
    return {name for name, plain in reads.items() if plain}


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


def listed(src: Source, rewritten: frozenset[int] = frozenset()) -> list[ManualStep]:
    """The calls with a scalar mask (or a scalar part of one) whose result is bound to a name, on ``src``'s lines
    (``manual.py`` lists them from the original text), but the assignments ``rewritten`` (by ``id``: another pass
    rewrites them)."""
    steps = []
    allocated = isa_results.rewritten_calls(src)  # their results are allocated before the call: not listed
    for func in functions(src.tree):
        scalars = Scalars(src, func)
        for stmt in ast.walk(func):
            if not (
                isinstance(stmt, ast.Assign)
                and id(stmt) not in rewritten
                and id(stmt.value) not in allocated
                and isinstance(stmt.value, ast.Call)
                and any(isinstance(t, ast.Name) for t in stmt.targets)
            ):
                continue
            mask = next((k.value for k in stmt.value.keywords if k.arg == "mask"), None)
            parts = conjuncts_of(mask) if mask is not None else []
            bound = (  # bound to an unwritten tile when off
                mask is not None
                and scalars.mask(mask) is not None
                and _nested(src, scalars, stmt.value) is not None
                and unwritten_tile(src, stmt, scalars.scalar) is not None
            )
            if not bound and any(scalars.mask(p) is not None for p in parts):
                steps.append(ManualStep(stmt.lineno, "mask=", RECIPE))
        for node in ast.walk(func):
            if (
                isinstance(node, ast.stmt)
                and (value := _value(node))
                and _nested(src, scalars, value) is None
            ):
                steps.append(ManualStep(node.lineno, "mask=", NESTED_RECIPE))
    return steps


def _value(stmt: ast.stmt) -> ast.Call | None:
    """The outermost call of a simple statement."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign)) else None
    return value if isinstance(value, ast.Call) else None


def _nested(src: Source, scalars: Scalars, call: ast.Call) -> list[tuple[ast.Call, ast.keyword]] | None:
    """The calls nested in ``call`` with a scalar mask, each the same condition as ``call``'s own (under the
    statement's ``if`` it holds, so theirs go with it); None when one has another mask (or ``call`` none)."""
    own = next((k for k in call.keywords if k.arg == "mask"), None)
    cond = scalars.mask(own.value) if own is not None else None
    found = []
    for node in ast.walk(call):
        if not isinstance(node, ast.Call) or node is call:
            continue
        keyword = next((k for k in node.keywords if k.arg == "mask"), None)
        if keyword is None or scalars.mask(keyword.value) is None:
            continue
        if cond is None or scalars.mask(keyword.value) != cond:
            return None
        found.append((node, keyword))
    return found


def conjuncts_of(mask: ast.expr) -> list[ast.expr]:
    """The ``&``-joined conditions of a mask."""
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.BitAnd):
        return [*conjuncts_of(mask.left), *conjuncts_of(mask.right)]
    return [mask]


def _statement(src: Source, scalars: Scalars, stmt: ast.stmt, out: PassResult) -> None:
    """Rewrite one simple statement whose outermost call has a scalar mask."""
    value = _value(stmt)
    if value is None:
        return
    keyword = next((k for k in value.keywords if k.arg == "mask"), None)
    cond = scalars.mask(keyword.value) if keyword is not None else None
    nested = _nested(src, scalars, value)
    if keyword is None or cond is None or nested is None:
        return  # a nested call's other mask: listed by ``listed``
    otherwise = unwritten_tile(src, stmt, scalars.scalar)
    if (
        otherwise is None
        and isinstance(stmt, ast.Assign)
        and any(isinstance(t, ast.Name) for t in stmt.targets)
    ):
        return  # listed by ``listed`` from the original text (this pass runs after lines were deleted)
    cuts = [src.keyword_cut(c, k) for c, k in [(value, keyword), *nested]]
    if any(cut is None for cut in cuts):
        out.manual.append(ManualStep(stmt.lineno, "mask=", RECIPE))
        return
    start, end = src.bounds(stmt)
    text, at = "", start
    for cut in sorted(c for c in cuts if c is not None):
        text, at = text + src.text[at : cut[0]], cut[1]
    text += src.text[at:end]
    if otherwise is not None:
        new = f"{text} if {cond} else {otherwise}"
    elif src.delete_lines(stmt) is not None:
        new = f"if {cond}: {text}"
    elif isinstance(stmt, ast.Expr):
        new = f"{text} if {cond} else None"
    else:
        out.manual.append(ManualStep(stmt.lineno, "mask=", RECIPE))
        return
    out.change(src.replace(stmt, new), stmt.lineno, "mask", "whole-instruction condition: if")


def unwritten_tile(src: Source, stmt: ast.stmt, is_scalar: Callable[[ast.expr], bool]) -> str | None:
    """The allocation binding ``stmt``'s name when its mask is off, for ``name = nl.load(src_view, mask=c)`` (the
    loaded tile has the view's shape), or None (``is_scalar``: whether an expression is element-independent).
    Element-wise calls are ``masked_values``'; other calls (a matmul's or a reduction's result is not shaped as an
    operand) stay listed."""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and src.canonical(stmt.value.func) == f"{LANGUAGE}.load"
        and stmt.value.args
    ):
        return None
    call = stmt.value
    view = call.args[0]
    if not isa_results.cheap(view) or is_scalar(view):
        return None
    nl = src.alias_of(LANGUAGE, "nl")
    dtype = next(
        (src.text_of(k.value) for k in call.keywords if k.arg == "dtype"), f"{src.text_of(view)}.dtype"
    )
    return f"{nl}.ndarray({src.text_of(view)}.shape, dtype={dtype}, buffer={nl}.sbuf)"
