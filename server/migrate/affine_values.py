"""Legacy ``nisa.affine_select(pred, on_true_tile, on_false_value)`` and ``nisa.iota(expr, dtype)`` -> the 0.7
operands (isa.md §4.1-4.2: ``iota(dst, pattern, offset, channel_multiplier)``, ``affine_select(dst, pattern,
channel_multiplier, on_true_tile, on_false_value, cmp_op, offset)``; both compute ``offset + c * channel_multiplier
+ f * step`` at partition c, free position f).

The legacy operands are index-tile expressions [v2.26.1 nki.isa.affine_select, nki.isa.iota]: with ``i_p =
nl.arange(P)[:, None]`` and ``i_f = nl.arange(F)[None, :]``, ``q0 + i_p >= k0 + i_f`` holds at element (p, f)
exactly when ``(q0 - k0) + p * 1 + f * -1 >= 0``: the difference of the two sides, affine in the indices, gives the
partition multiplier, the free step (``pattern=[[step, F]]``, F the free tile's size) and the offset; the
comparison is ``cmp_op``. ``iota``'s expression gives them directly, its result shape is the tiles' (P, F), a
missing axis 1 (the legacy simulator's rule). This pass rewrites the operands in place (the call still returns
its value; ``iota`` gets a ``shape=``); ``isa_results`` then allocates the result and passes it as ``dst=``.
Predicates held in names and other forms stay manual steps. An ``on_true_tile`` the function allocated in PSUM
(flash attention's ``qk_psum``: the legacy call read it there) is read through ``nl.copy`` (SBUF, same dtype:
exact), since 0.7 takes ``on_true_tile`` in SBUF only (isa.md §4.2).
"""

from __future__ import annotations

import ast

from nki_studio.core.findings import Fix
from nki_studio.core.text_edits import apply_fixes_listed
from nki_studio.migrate import isa_operands, isa_results
from nki_studio.migrate.index_patterns import Grid, GridTile, Linear, sum_of
from nki_studio.migrate.matmul_accumulate import psum_names
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import ISA, LANGUAGE, Source, functions

_COMPARISONS = {
    ast.Gt: "greater",
    ast.GtE: "greater_equal",
    ast.Lt: "less",
    ast.LtE: "less_equal",
    ast.Eq: "equal",
    ast.NotEq: "not_equal",
}
_ORDER = {
    "affine_select": ("pattern", "channel_multiplier", "on_true_tile", "on_false_value", "cmp_op", "offset"),
    "iota": ("shape", "pattern", "offset", "channel_multiplier"),
}
_LEGACY = {"affine_select": ("pred", "on_true_tile", "on_false_value"), "iota": ("expr", "dtype")}


def run(src: Source) -> PassResult:
    """Rewrite the operands of every legacy ``affine_select`` / ``iota`` whose index expression is affine; delete
    the predicates held in names that no other code reads any more."""
    out = PassResult()
    rewrites = _rewrites(src)
    for call, new in rewrites:
        out.change(
            src.replace(call, new),
            call.lineno,
            "nisa.affine_select pred",
            "pattern, channel_multiplier, offset",
        )
    for definition in _unread_predicates(src, [call for call, _ in rewrites]):
        edit = src.delete_lines(definition)
        if edit is not None:
            out.change(
                edit, definition.lineno, "affine_select predicate", "deleted: now in the call's operands"
            )
    return out


def rewritten_calls(src: Source) -> set[int]:
    """The legacy calls (by ``id``) whose rewritten form ``isa_results`` (or ``isa_operands``, for a value used in
    an expression) turns into an allocation and ``dst=`` call."""
    if not _rewrites(src):
        return set()
    text, _ = apply_fixes_listed(src.text, [Fix("affine values", (e,)) for e in run(src).edits])
    after = Source(text)
    done = isa_results.rewritten_calls(after) | isa_operands.rewritten_calls(after)
    # the rewrite keeps every call, in the same order (its lines may join)
    return {id(old) for old, new in zip(_calls(src), _calls(after), strict=True) if id(new) in done}


def _calls(src: Source) -> list[ast.Call]:
    """The ``affine_select`` and ``iota`` calls of ``src`` in text order."""
    names = {f"{ISA}.{leaf}" for leaf in _LEGACY}
    calls = [n for n in ast.walk(src.tree) if isinstance(n, ast.Call) and src.canonical(n.func) in names]
    return sorted(calls, key=lambda n: (n.lineno, n.col_offset))


def _rewrites(src: Source) -> list[tuple[ast.Call, str]]:
    nl = src.alias_of(LANGUAGE, "nl")
    owner = _owners(src)
    grids: dict[int, Grid] = {}
    found: list[tuple[ast.Call, str]] = []
    for call in _calls(src):
        where = owner.get(id(call))
        if where is None:
            continue
        grid = grids.setdefault(id(where), Grid(src, where, min_rank=2))
        new = _rewrite(src, grid, call, nl, where)
        if new is not None:
            found.append((call, new))
    return found


def _arguments(src: Source, call: ast.Call) -> dict[str, ast.expr] | None:
    """A legacy call's operands by name (its legacy positional order), or None (``**kwargs``, too many)."""
    legacy = _LEGACY[(src.canonical(call.func) or "").rpartition(".")[2]]
    if len(call.args) > len(legacy) or any(k.arg is None for k in call.keywords):
        return None
    return {**dict(zip(legacy, call.args, strict=False)), **{str(k.arg): k.value for k in call.keywords}}


def _held(where: ast.AST, name: ast.Name) -> ast.Assign | None:
    """The one ``name = <comparison>`` of the function that binds ``name`` (before ``name`` is read), if so:
    ``pred = q_pos >= k_pos`` read as ``affine_select(pred=pred, ...)`` (the nki-samples flash attention)."""
    binds = [
        n
        for n in ast.walk(where)
        if isinstance(n, (ast.Name, ast.arg))
        and (n.arg if isinstance(n, ast.arg) else n.id) == name.id
        and not (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    ]
    assignments = [
        n
        for n in ast.walk(where)
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and n.targets[0] in binds
    ]
    if len(binds) != 1 or len(assignments) != 1:
        return None
    (assignment,) = assignments
    before = (assignment.end_lineno or assignment.lineno) < name.lineno
    return assignment if before and isinstance(assignment.value, ast.Compare) else None


def _unread_predicates(src: Source, rewritten: list[ast.Call]) -> list[ast.Assign]:
    """The definitions of predicates held in names that only rewritten calls read."""
    owner = _owners(src)
    read_by_rewrites: dict[int, tuple[ast.Assign, set[int]]] = {}
    for call in rewritten:
        args = _arguments(src, call) or {}
        pred = args.get("pred")
        where = owner.get(id(call))
        definition = _held(where, pred) if isinstance(pred, ast.Name) and where is not None else None
        if definition is not None and isinstance(pred, ast.Name):
            read_by_rewrites.setdefault(id(definition), (definition, set()))[1].add(id(pred))
    found = []
    for definition, reads in read_by_rewrites.values():
        name = definition.targets[0]
        where = owner.get(id(definition))
        loads = {
            id(n)
            for n in ast.walk(where or src.tree)
            if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)
            and isinstance(name, ast.Name)
            and n.id == name.id
        }
        if loads == reads:
            found.append(definition)
    return found


def _owners(src: Source) -> dict[int, ast.AST]:
    """Node ``id`` -> the innermost function holding it."""
    owner: dict[int, ast.AST] = {}
    for func in functions(src.tree):  # outer functions first: a node's innermost function wins
        owner.update((id(n), func) for n in ast.walk(func))
    return owner


def _rewrite(src: Source, grid: Grid, call: ast.Call, nl: str, where: ast.AST) -> str | None:
    leaf = (src.canonical(call.func) or "").rpartition(".")[2]
    legacy = _LEGACY[leaf]
    args = _arguments(src, call)
    if args is None:
        return None
    expression = args.pop(legacy[0], None)
    if isinstance(expression, ast.Name) and leaf == "affine_select":
        held = _held(where, expression)
        expression = held.value if held is not None else None
    if expression is None:
        return None
    if leaf == "iota":
        operands = _iota(grid, expression) if "dtype" in args else None
    else:
        operands = (
            _select(grid, expression, nl) if "on_true_tile" in args and "on_false_value" in args else None
        )
    if operands is None:
        return None
    keywords = {**operands, **{k: src.text_of(v) for k, v in args.items()}}
    tile = args.get("on_true_tile")
    if isinstance(tile, ast.Name) and tile.id in psum_names(src, where):
        keywords["on_true_tile"] = f"{nl}.copy({tile.id})"
    order = _ORDER[leaf]  # the 0.7 signature's order, then the rest (dtype=, mask=) as they were
    keywords = dict(
        sorted(keywords.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
    )
    return f"{src.text_of(call.func)}({', '.join(f'{k}={v}' for k, v in keywords.items())})"


def _affine(grid: Grid, node: ast.expr, rank: int | None = 2) -> tuple[Linear, dict[int, str], int] | None:
    """``node`` as an affine form of index tiles of one rank (``rank``, or any), with the size of each axis it uses
    and that rank."""
    tiles: dict[str, GridTile] = {}
    form = grid.linear(node, tiles)
    sizes: dict[int, set[str]] = {}
    for t in tiles.values():
        sizes.setdefault(t.axis, set()).add(t.size)
    ranks = {t.rank for t in tiles.values()}
    if (
        form is None
        or len(ranks) > 1
        or (rank is not None and ranks - {rank})
        or any(len(s) != 1 for s in sizes.values())
    ):
        return None
    return form, {axis: s.pop() for axis, s in sizes.items()}, ranks.pop() if ranks else 2


def _operands(form: Linear, free: str) -> dict[str, str]:
    return {
        "pattern": f"[[{sum_of(list(form.coefficients.get(1, ())))}, {free}]]",
        "channel_multiplier": sum_of(list(form.coefficients.get(0, ()))),
        "offset": sum_of(list(form.constants)),
    }


def _select(grid: Grid, pred: ast.expr, nl: str) -> dict[str, str] | None:
    """``affine_select``'s pattern, multiplier, offset and ``cmp_op`` from ``pred`` (a free tile needed: F)."""
    if not (isinstance(pred, ast.Compare) and len(pred.ops) == 1 and type(pred.ops[0]) in _COMPARISONS):
        return None
    left, right = _affine(grid, pred.left), _affine(grid, pred.comparators[0])
    if left is None or right is None:
        return None
    free = {left[1].get(1), right[1].get(1)} - {None}
    value = left[0].plus(right[0], "-")
    if len(free) != 1 or set(value.coefficients) - {0, 1}:
        return None
    return {**_operands(value, str(free.pop())), "cmp_op": f"{nl}.{_COMPARISONS[type(pred.ops[0])]}"}


def _iota(grid: Grid, expression: ast.expr) -> dict[str, str] | None:
    """``iota``'s result shape, pattern, offset and multiplier from an index expression (tiles of two or more dims:
    one ``[step, size]`` pair per free axis, nki-samples' select_and_scatter takes a 4-D grid's)."""
    found = _affine(grid, expression, rank=None)
    if found is None or not found[1]:
        return None
    form, sizes, rank = found
    dims = [sizes.get(axis, "1") for axis in range(rank)]
    pattern = ", ".join(f"[{sum_of(list(form.coefficients.get(a, ())))}, {dims[a]}]" for a in range(1, rank))
    return {
        "shape": f"({', '.join(dims)})",
        "pattern": f"[{pattern}]",
        "offset": sum_of(list(form.constants)),
        "channel_multiplier": sum_of(list(form.coefficients.get(0, ()))),
    }
