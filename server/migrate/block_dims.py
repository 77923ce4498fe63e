"""Legacy block dimensions -> folded free dims (deprecations.md §C: "``nl.ndarray((B, nl.par_dim(128), F))`` ->
fold B into the free dims ``(128, B, F)``"; 0.7 has no ``nl.par_dim``, the partition dim is always dim 0).

``t = nl.ndarray((B, nl.par_dim(P), F), ...)`` (any ``nl`` allocator whose shape tuple marks one dim with
``nl.par_dim``) becomes ``nl.ndarray((P, B, F), ...)``; every subscript of ``t`` moves its partition index to the
front (``t[b, i_p, i_f]`` -> ``t[i_p, b, i_f]``) and a subscript naming only block indices selects all partitions
(``t[b]`` -> ``t[:, b]``). The element ``t[b, p, f]`` of the legacy tile is then ``t[p, b, f]`` of the folded one,
so every access reads and writes the same elements (the proof checks the kernel's outputs). A tile used other than
by subscripts (passed on, ``.shape``, ``t[...]``) keeps its block dims and is listed with the recipe; without a
block dim (``(nl.par_dim(P), F)``) the layout is unchanged and only the marker goes.
"""

from __future__ import annotations

import ast

from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import LANGUAGE, Source, functions

RECIPE = (
    "block dimensions are gone: fold the block into the free dims ((128, B, F)) and index t[p, b, f], keep a "
    "list of tiles, or allocate the tile inside the loop"
)


def run(src: Source) -> PassResult:
    """Fold the block dims of every tile whose uses are all subscripts; list the others."""
    out = PassResult()
    understood: set[int] = set()
    for node in ast.walk(src.tree):
        shape = _shape(src, node) if isinstance(node, ast.Call) else None
        if shape is not None and _par_dim(src, shape) == 0:
            # no block dim (``(nl.par_dim(P), F)``): the layout is unchanged, so is every use; the marker goes
            par = shape.elts[0]
            assert isinstance(par, ast.Call)
            out.change(src.replace(par, src.text_of(par.args[0])), par.lineno, "nl.par_dim", "plain dim")
            understood.add(id(par))
    for func in functions(src.tree):
        if any(
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(func) if n is not func
        ):
            continue  # nested functions: the innermost is rewritten on its own, the outer would overlap it
        for name, (allocations, blocks) in _allocations(src, func).items():
            uses = [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name]
            targets = {id(t) for a in allocations for t in a.targets}
            subscripts = {id(n.value): n for n in ast.walk(func) if isinstance(n, ast.Subscript)}
            accesses = [subscripts.get(id(u)) for u in uses if id(u) not in targets]
            news = [_access(src, s, blocks) if s is not None else None for s in accesses]
            if any(new is None for new in news):
                continue  # listed below (its par_dim call is not understood)
            for allocation in allocations:
                shape = _shape(src, allocation.value)
                assert shape is not None
                dims = [src.text_of(e) for e in shape.elts]
                par = shape.elts[blocks]
                assert isinstance(par, ast.Call)
                dims[blocks] = src.text_of(par.args[0])
                folded = [dims[blocks], *dims[:blocks], *dims[blocks + 1 :]]
                out.change(
                    src.replace(shape, f"({', '.join(folded)})"),
                    shape.lineno,
                    "nl.par_dim",
                    "folded free dims",
                )
                understood.add(id(par))
            for access, new in zip(accesses, news, strict=True):
                assert access is not None and new is not None
                out.change(src.replace(access, new), access.lineno, "nl.par_dim", "partition index first")
    for call, name in src.calls_to(LANGUAGE):
        if name == "par_dim" and id(call) not in understood:
            out.manual.append(ManualStep(call.lineno, "nl.par_dim", RECIPE))
    return out


def _shape(src: Source, value: ast.expr) -> ast.Tuple | None:
    """The shape tuple of an ``nl`` allocator call (first argument or ``shape=``)."""
    if not isinstance(value, ast.Call) or (src.canonical(value.func) or "").rpartition(".")[0] != LANGUAGE:
        return None
    shape = value.args[0] if value.args else next((k.value for k in value.keywords if k.arg == "shape"), None)
    return shape if isinstance(shape, ast.Tuple) else None


def _par_dim(src: Source, shape: ast.Tuple) -> int | None:
    """The position of the one ``nl.par_dim(P)`` dim of a shape."""
    found = [
        i
        for i, e in enumerate(shape.elts)
        if isinstance(e, ast.Call) and src.canonical(e.func) == f"{LANGUAGE}.par_dim"
    ]
    if len(found) != 1:
        return None
    par = shape.elts[found[0]]
    assert isinstance(par, ast.Call)
    return found[0] if len(par.args) == 1 and not par.keywords else None


def _allocations(src: Source, func: ast.AST) -> dict[str, tuple[list[ast.Assign], int]]:
    """Each name every assignment of which is an allocation with a block-dim shape, the same block count in all."""
    found: dict[str, tuple[list[ast.Assign], int]] = {}
    other: set[str] = set()
    for node in ast.walk(func):
        names: list[str] = []
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr, ast.comprehension)):
            names = [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            names = [n.id for n in ast.walk(node.optional_vars) if isinstance(n, ast.Name)]
        shape = _shape(src, node.value) if isinstance(node, ast.Assign) else None
        blocks = _par_dim(src, shape) if shape is not None else None
        if blocks == 0:
            continue  # no block dim: rewritten wherever it is
        for name in names:
            if blocks is None or len(node.targets) != 1:  # type: ignore[attr-defined]
                other.add(name)
            elif name in found and found[name][1] != blocks:
                other.add(name)
            else:
                assert isinstance(node, ast.Assign)
                found.setdefault(name, ([], blocks))[0].append(node)
    return {name: v for name, v in found.items() if name not in other}


def _access(src: Source, node: ast.Subscript, blocks: int) -> str | None:
    """``t[b.., p, f..]`` -> ``t[p, b.., f..]``; ``t[b..]`` -> ``t[:, b..]``; None for other keys."""
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elts):
        return None
    parts = [src.text_of(e) for e in elts]
    if len(parts) <= blocks:
        return f"{src.text_of(node.value)}[{', '.join([':', *parts])}]"
    return f"{src.text_of(node.value)}[{', '.join([parts[blocks], *parts[:blocks], *parts[blocks + 1 :]])}]"
