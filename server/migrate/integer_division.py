"""An integer tile divided by a Python int (``pos / w``, ``nl.divide(pos, w)``; nki-samples' resize-nearest
kernel) -> ``nl.trunc(nl.divide(pos, w, dtype=nl.float32), dtype=<pos's dtype>)``.

Both versions divide in FP32 and cast the quotient to the result dtype, the integer tile's ((int, int) -> the
tile's integer type, legacy weak typing: a Python int is an int32; language.md §2 [OLD]). The cast changed: the
legacy simulator truncated (NumPy's cast), and since the 0.6.0 simulator FP32 -> integer casts round to nearest
even (simulator.md §7, 0.6.0 release notes). So ``nl.floor(pos / w, dtype=nl.int32)``, the floor of a truncated
integer quotient in legacy code, would round the quotient in 0.7 (37 / 38 -> 1, not 0). The quotient is
therefore kept in FP32 and truncated explicitly (``nl.trunc``, toward zero, language.md §8), which is the legacy
value whatever its sign. The legacy semantics taken are the legacy simulator's (that its truncation was also the
legacy hardware's is inferred: the kernels' unit tests, checked in that simulator, expect it).

Only certain cases are rewritten: the dividend a name the function binds once to a call with a literal integer
``dtype=`` (``nisa.iota(..., dtype=nl.int32)``), the divisor an int literal or a name bound only by unpacking a
shape or a parameter (``_, h, w, _ = out_shape``: the dims of a shape are ints). Other divisions keep their form
(the proof shows a difference).
"""

from __future__ import annotations

import ast
import collections

from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import LANGUAGE, Source, functions

_INTEGERS = frozenset({"int8", "int16", "int32", "uint8", "uint16", "uint32"})


def run(src: Source) -> PassResult:
    """Rewrite each ``nl.divide(tile, n)`` of an integer tile by a Python int (see the module docstring)."""
    out = PassResult()
    nl = src.alias_of(LANGUAGE, "nl")
    for func in functions(src.tree):
        dtypes, ints = _integer_tiles(src, func), _python_ints(func)
        for node in ast.walk(func):
            if not (
                isinstance(node, ast.Call)
                and src.canonical(node.func) == f"{LANGUAGE}.divide"
                and len(node.args) == 2
                and not node.keywords
            ):
                continue
            tile, divisor = node.args
            dtype = dtypes.get(tile.id) if isinstance(tile, ast.Name) else None
            whole = (isinstance(divisor, ast.Constant) and type(divisor.value) is int) or (
                isinstance(divisor, ast.Name) and divisor.id in ints
            )
            if dtype is None or not whole:
                continue
            quotient = f"{nl}.divide({src.text_of(tile)}, {src.text_of(divisor)}, dtype={nl}.float32)"
            new = f"{nl}.trunc({quotient}, dtype={dtype})"
            out.change(src.replace(node, new), node.lineno, "integer tile divided", "FP32 quotient truncated")
    return out


def _integer_tiles(src: Source, func: ast.AST) -> dict[str, str]:
    """The names ``func`` binds once, to a call with a literal integer ``dtype=``: name -> the dtype's text."""
    stores = collections.Counter(
        n.id for n in ast.walk(func) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    )
    found = {}
    for node in ast.walk(func):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and stores[node.targets[0].id] == 1
            and isinstance(node.value, ast.Call)
        ):
            continue
        dtype = next((k.value for k in node.value.keywords if k.arg == "dtype"), None)
        name = src.canonical(dtype) if dtype is not None else None
        if name is not None and name.rpartition(".")[2] in _INTEGERS:
            found[node.targets[0].id] = src.text_of(dtype)  # type: ignore[arg-type]
    return found


def _python_ints(func: ast.AST) -> set[str]:
    """The names ``func`` binds only by unpacking a name or a ``.shape`` (``_, h, w, _ = out_shape``): dims."""
    unpacked: set[str] = set()
    other: set[str] = set()
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Tuple)
            and (
                isinstance(node.value, ast.Name)
                or (isinstance(node.value, ast.Attribute) and node.value.attr == "shape")
            )
        ):
            unpacked |= {e.id for e in node.targets[0].elts if isinstance(e, ast.Name)}
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            other |= {
                n.id
                for t in targets
                for n in ast.walk(t)
                if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
            }
    return unpacked - other
