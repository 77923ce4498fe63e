"""Legacy ``nisa.affine_select(pred, on_true_tile, on_false_value)`` -> the 0.7 operands (isa.md §4.2:
``affine_select(dst, pattern, channel_multiplier, on_true_tile, on_false_value, cmp_op, offset)``, the selected
elements those where ``cmp_op(offset + c * channel_multiplier + f * step, 0)`` holds).

The legacy predicate compares index-tile expressions [v2.26.1 nki.isa.affine_select]: ``q0 + i_p >= k0 + i_f``
with ``i_p = nl.arange(P)[:, None]``, ``i_f = nl.arange(F)[None, :]`` holds at element (p, f) exactly when
``(q0 - k0) + p * 1 + f * -1 >= 0``: the difference of the two sides, affine in the indices, gives the partition
multiplier, the free step (``pattern=[[step, F]]``, F the free tile's size) and the offset; the comparison is
``cmp_op``. This pass rewrites the operands in place (the call still returns its value); ``isa_results`` then
allocates the result and passes it as ``dst=``. Predicates held in names, of other forms, or without a free index
tile stay manual steps.
"""

from __future__ import annotations

import ast

from nki_studio.core.findings import Fix
from nki_studio.core.text_edits import apply_fixes_listed
from nki_studio.migrate import isa_results
from nki_studio.migrate.index_patterns import Grid, GridTile, sum_of
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
_LEGACY = ("pred", "on_true_tile", "on_false_value")


def run(src: Source) -> PassResult:
    """Rewrite the operands of every legacy ``affine_select`` whose predicate is an affine index comparison."""
    out = PassResult()
    for call, new in _rewrites(src):
        out.change(
            src.replace(call, new),
            call.lineno,
            "nisa.affine_select pred",
            "pattern, channel_multiplier, offset",
        )
    return out


def rewritten_calls(src: Source) -> set[int]:
    """The legacy calls (by ``id``) whose rewritten form ``isa_results`` turns into an allocation and ``dst=`` call."""
    if not _rewrites(src):
        return set()
    text, _ = apply_fixes_listed(src.text, [Fix("affine_select", (e,)) for e in run(src).edits])
    after = Source(text)
    done = isa_results.rewritten_calls(after)
    # the rewrite keeps every call, in the same order (its lines may join)
    return {id(old) for old, new in zip(_calls(src), _calls(after), strict=True) if id(new) in done}


def _calls(src: Source) -> list[ast.Call]:
    """The ``affine_select`` calls of ``src`` in text order."""
    calls = [
        n
        for n in ast.walk(src.tree)
        if isinstance(n, ast.Call) and src.canonical(n.func) == f"{ISA}.affine_select"
    ]
    return sorted(calls, key=lambda n: (n.lineno, n.col_offset))


def _rewrites(src: Source) -> list[tuple[ast.Call, str]]:
    nl = src.alias_of(LANGUAGE, "nl")
    owner: dict[int, ast.AST] = {}
    for func in functions(src.tree):  # outer functions first: a call's innermost function wins
        owner.update((id(n), func) for n in ast.walk(func))
    grids: dict[int, Grid] = {}
    found: list[tuple[ast.Call, str]] = []
    for call in _calls(src):
        where = owner.get(id(call))
        if where is None:
            continue
        grid = grids.setdefault(id(where), Grid(src, where, min_rank=2))
        new = _rewrite(src, grid, call, nl)
        if new is not None:
            found.append((call, new))
    return found


def _rewrite(src: Source, grid: Grid, call: ast.Call, nl: str) -> str | None:
    if len(call.args) > len(_LEGACY) or any(k.arg is None for k in call.keywords):
        return None
    args = {**dict(zip(_LEGACY, call.args, strict=False)), **{str(k.arg): k.value for k in call.keywords}}
    pred = args.pop("pred", None)
    if not (
        isinstance(pred, ast.Compare)
        and len(pred.ops) == 1
        and type(pred.ops[0]) in _COMPARISONS
        and "on_true_tile" in args
        and "on_false_value" in args
    ):
        return None
    tiles: dict[str, GridTile] = {}
    left, right = grid.linear(pred.left, tiles), grid.linear(pred.comparators[0], tiles)
    if left is None or right is None or any(t.rank != 2 for t in tiles.values()):
        return None
    value = left.plus(right, "-")
    free = {t.size for t in tiles.values() if t.axis == 1}
    if len(free) != 1 or set(value.coefficients) - {0, 1}:
        return None
    operands = {
        "pattern": f"[[{sum_of(list(value.coefficients.get(1, ())))}, {free.pop()}]]",
        "channel_multiplier": sum_of(list(value.coefficients.get(0, ()))),
        "on_true_tile": src.text_of(args.pop("on_true_tile")),
        "on_false_value": src.text_of(args.pop("on_false_value")),
        "cmp_op": f"{nl}.{_COMPARISONS[type(pred.ops[0])]}",
        "offset": sum_of(list(value.constants)),
        **{k: src.text_of(v) for k, v in args.items()},
    }
    return f"{src.text_of(call.func)}({', '.join(f'{k}={v}' for k, v in operands.items())})"
