"""Column loads: ``nl.load(A[c0:c1, i])`` -> ``nl.load(A[c0:c1, i:i + 1])``.

Integers in a subscript drop their dimension (basic indexing, the same in legacy NKI and 0.7 [v2.28.0 "Tensor
Indexing on NKI"]), so ``A[c0:c1, i]`` of a 2-D tensor is a 1-D access. The legacy ``nl.load`` made such a source
a ``(P, 1)`` column, the partition axis first; 0.7 refuses a 1-D source. That legacy rule is inferred, as in the
legacy simulator (``sim.legacy.language.load``), from nki-samples' fused Mamba tutorial, which loads
``A[c0:c1, i_state]`` and uses it as ``activation``'s per-partition ``scale``. The access keeps the legacy shape
when its last integer subscript becomes a one-element slice.

Only where the legacy load kept the dim: one slice (or ``nl.ds``; ``index_tiles`` runs first, so an index tile
next to an integer, ``s[t * 128 + i_p, 0]``, has become one) followed by integers, and as many subscripts as the
tensor has dims -- known from an unpacking of its ``.shape`` in the function (``_, n = A.shape``), the tensor's
name bound nowhere else there. A subscript that omits dims keeps them whole (a 2-D load), and a rank not known is
left as it was (the proof's 0.7 run then names the 1-D source).
"""

from __future__ import annotations

import ast

from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import LANGUAGE, Source, functions

# Operands that can be followed by `:` ... ` + 1` without parentheses.
_ATOMS = (ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.Call)


def _shape_ranks(func: ast.AST) -> dict[str, int]:
    """The rank of each name whose ``.shape`` the function unpacks (``a, b = x.shape`` -> ``{"x": 2}``), for names
    it does not bind otherwise (a rebound name may hold a tensor of another rank)."""
    ranks: dict[str, int] = {}
    bound: dict[str, int] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound[node.id] = bound.get(node.id, 0) + 1
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], (ast.Tuple, ast.List))
            and not any(isinstance(e, ast.Starred) for e in node.targets[0].elts)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape"
            and isinstance(node.value.value, ast.Name)
        ):
            ranks[node.value.value.id] = len(node.targets[0].elts)
    return {name: rank for name, rank in ranks.items() if name not in bound}


def _integer(node: ast.expr) -> bool:
    """An expression that is an integer at trace time: int literals, names, attributes, ``.shape[k]`` and
    arithmetic on them (the index tiles that could also be names are gone by now; a tile of indices held in a name
    would not be, and the proof would then differ)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return True
    if isinstance(node, ast.BinOp):
        return _integer(node.left) and _integer(node.right)
    if isinstance(node, ast.UnaryOp):
        # a negative literal counts from the end: `-1:-1 + 1` would be empty, so it is left as it is
        return not isinstance(node.op, ast.USub) and _integer(node.operand)
    return False


def _slice(src: Source, node: ast.expr) -> bool:
    """A slice subscript (``a:b`` or ``nl.ds(start, size)``)."""
    return isinstance(node, ast.Slice) or (
        isinstance(node, ast.Call) and src.canonical(node.func) == f"{LANGUAGE}.ds"
    )


def _dropped(src: Source, access: ast.expr, ranks: dict[str, int]) -> ast.expr | None:
    """The integer subscript of ``access`` whose dim the legacy load kept (the last one), or None."""
    if not (isinstance(access, ast.Subscript) and isinstance(access.value, ast.Name)):
        return None
    keys = access.slice.elts if isinstance(access.slice, ast.Tuple) else [access.slice]
    slices = [k for k, key in enumerate(keys) if _slice(src, key)]
    if len(keys) != ranks.get(access.value.id) or len(slices) != 1 or slices[0] == len(keys) - 1:
        return None
    others = [key for k, key in enumerate(keys) if k != slices[0]]
    return keys[-1] if all(_integer(key) for key in others) else None


def run(src: Source) -> PassResult:
    """Turn the last integer subscript of each 1-D ``nl.load`` source into a one-element slice."""
    out = PassResult()
    done: set[int] = set()
    for func in functions(src.tree):
        ranks = _shape_ranks(func)
        for node in ast.walk(func):
            if (
                id(node) in done
                or not isinstance(node, ast.Call)
                or src.canonical(node.func) != f"{LANGUAGE}.load"
            ):
                continue
            access = (
                node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "src"), None)
            )
            key = _dropped(src, access, ranks) if access is not None else None
            if key is None:
                continue
            done.add(id(node))
            text = src.text_of(key)
            literal = key.value if isinstance(key, ast.Constant) else None
            if isinstance(literal, int):  # an int literal by `_integer`
                end = str(literal + 1)
            else:
                end = f"{text} + 1" if isinstance(key, _ATOMS) else f"({text}) + 1"
            out.change(src.replace(key, f"{text}:{end}"), key.lineno, "1-D nl.load source", f"{text}:{end}")
    return out
