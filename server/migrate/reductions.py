"""Reductions over free axes that are not contiguous (``nl.sum(x, axis=[2, 4])``, nki-samples' average_pool2d).
0.7 reduces trailing contiguous free dims only (language.md §9, isa.md §3.4 for ``tensor_reduce``); the legacy API
took any free axes (inferred: the tutorial ran on hardware). When the operand is a subscript by grid index tiles
(``t[i0, 2 * i1 + i2, 2 * i3 + i4]``, an ``.ap()`` view once ``index_patterns`` has run, of the grid's rank), its
dims are reordered by ``.permute`` (language.md §5.3: a view; on-chip the partition dim stays first) so the reduced
ones come last, in order, and those trailing axes are reduced: ``nl.sum(t[...].permute((0, 1, 3, 2, 4)),
axis=[3, 4])``. The kept dims keep their order, so the result is the legacy one (without ``keepdims``, whose
size-1 dims would land elsewhere). Other such reductions (a rank not known here, ``keepdims``, ``tensor_reduce``)
are listed. Only a literal axis list with a gap is certain to be refused (without the rank, ``axis=[1]`` may or may
not be trailing: the proof checks those).
"""

from __future__ import annotations

import ast

from nki_studio.migrate import index_patterns
from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import ISA, LANGUAGE, Source

_REDUCTIONS = frozenset(
    {f"{LANGUAGE}.{n}" for n in ("sum", "max", "min", "mean", "prod", "all", "var")}
    | {f"{ISA}.tensor_reduce"}
)
RECIPE = (
    "0.7 reduces trailing contiguous free dims only: lay the reduced dims out last (e.g. reorder the [step, size] "
    "pairs of the operand's .ap() pattern, or x.permute(...)) and reduce those"
)


def run(src: Source) -> PassResult:
    """Reduce the grid-indexed operand's reduced dims moved last by ``.permute`` (see the module docstring)."""
    out = PassResult()
    ranks = index_patterns.pattern_ranks(src)
    for call, operand, axis, axes in _gapped(src):
        rank = _rank(call, operand, axes, ranks)
        if rank is None or operand is None:
            continue
        order = [d for d in range(rank) if d not in axes] + axes
        trailing = ", ".join(str(d) for d in range(rank - len(axes), rank))
        opened, closed = ("[", "]") if isinstance(axis, ast.List) else ("(", ")")
        dims = f"({', '.join(str(d) for d in order)})"
        out.change(src.replace(operand, f"{src.text_of(operand)}.permute({dims})"), call.lineno, *_CHANGE)
        out.change(src.replace(axis, f"{opened}{trailing}{closed}"), call.lineno, *_CHANGE)
    return out


_CHANGE = ("nl reduction over axes with a gap", "the reduced dims permuted last, the trailing axes reduced")


def listed(src: Source) -> list[ManualStep]:
    """Each reduction whose literal ``axis`` list has a gap and that ``run`` does not rewrite."""
    ranks = index_patterns.pattern_ranks(src)
    found = []
    for call, operand, _, axes in _gapped(src):
        if _rank(call, operand, axes, ranks) is None:
            name = (src.canonical(call.func) or "").rpartition(".")[2]
            module = "nisa" if name == "tensor_reduce" else "nl"
            found.append(ManualStep(call.lineno, f"{module}.{name} axes not contiguous", RECIPE))
    return found


def _gapped(src: Source) -> list[tuple[ast.Call, ast.expr | None, ast.expr, list[int]]]:
    """Each reduction call whose literal ``axis`` list has a gap: the call, its data operand, the axis node and the
    axes sorted."""
    found = []
    for node in ast.walk(src.tree):
        if not (isinstance(node, ast.Call) and src.canonical(node.func) in _REDUCTIONS):
            continue
        isa = src.canonical(node.func) == f"{ISA}.tensor_reduce"
        position = 2 if isa else 1  # (op, data, axis) / (x, axis)
        axis = next((k.value for k in node.keywords if k.arg == "axis"), None)
        if axis is None and len(node.args) > position:
            axis = node.args[position]
        items = axis.elts if isinstance(axis, (ast.Tuple, ast.List)) else []
        axes = sorted(a.value for a in items if isinstance(a, ast.Constant) and type(a.value) is int)
        if axis is not None and len(axes) == len(items) > 1 and axes != list(range(axes[0], axes[-1] + 1)):
            data = "data" if isa else "x"
            operand = next((k.value for k in node.keywords if k.arg == data), None)
            if operand is None and len(node.args) > position - 1:
                operand = node.args[position - 1]
            found.append((node, None if isa else operand, axis, axes))
    return found


def _rank(call: ast.Call, operand: ast.expr | None, axes: list[int], ranks: dict[int, int]) -> int | None:
    """The rank of an ``nl`` reduction's operand when ``run`` rewrites the call (a subscript ``index_patterns``
    makes an ``.ap()`` view of, free axes within it, no ``keepdims``), else None."""
    rank = ranks.get(id(operand)) if operand is not None else None
    if rank is None or axes[0] < 1 or axes[-1] >= rank or len(set(axes)) != len(axes):
        return None
    keepdims = next((k.value for k in call.keywords if k.arg == "keepdims"), None)
    kept = keepdims is not None and not (isinstance(keepdims, ast.Constant) and keepdims.value is False)
    return None if kept or len(call.args) > 3 else rank  # a 4th positional argument is keepdims
