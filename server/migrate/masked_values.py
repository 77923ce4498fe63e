"""A named result of an element-wise ``nl`` call under a whole-instruction mask -> a conditional expression.

``x = nl.add(a, b, dtype=t, mask=cond)`` with ``cond`` the same for every element (``scalar_masks``: a flag from
loop indices and shapes) computed ``x`` when ``cond`` held and otherwise still returned a tile, its elements
unspecified (v2.26.1 NKI API Masking: the predicate "controls whether/how this instruction is executed"). The
0.7 form keeps both: ``x = nl.add(a, b, dtype=t) if cond else nl.ndarray(shape, dtype=t, buffer=nl.sbuf)`` -- an
uninitialised tile of the result's shape where the legacy call left one unwritten (the recipe of ``scalar_masks``:
allocate, write under ``if``, on one line so line numbers hold). The shape is the tile operands' broadcast shape
(language.md §8: element-wise operations; inferred for the legacy API, whose binary operations broadcast ``(P, 1)``
tiles), their first one's when there is one, ``np.broadcast_shapes`` of them otherwise (only where the file
imports NumPy); the dtype is the call's ``dtype=``, else its first tile operand's. Which value the masked-off
tile holds matters only to code that reads unspecified elements; the proof compares the outputs.

A call this pass does not cover (an operation that is not element-wise, an operand ``Tiles`` does not know) is
bound the same way by ``scalar_masks`` through :func:`fallback`, shaped as the call's first tile operand (nki-samples'
flash-attention backward computes ``dq_local``, ``dZ_sink`` and the logit-bias ``intermediate`` so under its
causal-tile mask); what neither covers (a call nested in it with a mask of its own, no tile operand) stays listed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from nki_studio.migrate.isa_results import cheap
from nki_studio.migrate.operators import Tiles
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.scalar_masks import Scalars
from nki_studio.migrate.source import LANGUAGE, Source, functions

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


@dataclass(frozen=True)
class _Masked:
    statement: ast.Assign
    call: ast.Call
    keyword: ast.keyword
    condition: str
    shape: str
    dtype: str


def run(src: Source) -> PassResult:
    """Rewrite each covered call (see the module docstring)."""
    out = PassResult()
    language = src.alias_of(LANGUAGE, "nl")
    for found in _covered(src):
        cut = src.keyword_cut(found.call, found.keyword)
        if cut is None:
            continue
        start, end = src.bounds(found.call)
        call = src.text[start : cut[0]] + src.text[cut[1] : end]
        allocation = f"{language}.ndarray({found.shape}, dtype={found.dtype}, buffer={language}.sbuf)"
        out.change(
            src.replace(found.call, f"{call} if {found.condition} else {allocation}"),
            found.statement.lineno,
            "mask",
            "whole-instruction condition on a named result: the result or an unwritten tile",
        )
    return out


def rewritten(src: Source) -> set[int]:
    """The assignments (by ``id``) this pass rewrites: ``scalar_masks`` does not list them."""
    return {id(found.statement) for found in _covered(src)}


def _covered(src: Source) -> list[_Masked]:
    numpy = src.aliases.locals_for("numpy")
    found = []
    for func in functions(src.tree):
        scalars = Scalars(src, func)
        tiles = Tiles(src, func)
        for stmt in ast.walk(func):
            if not (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Call)
            ):
                continue
            call = stmt.value
            module, _, leaf = (src.canonical(call.func) or "").rpartition(".")
            keyword = next((k for k in call.keywords if k.arg == "mask"), None)
            if module != LANGUAGE or leaf not in ELEMENTWISE or keyword is None:
                continue
            condition = scalars.mask(keyword.value)
            nested = any(
                k.arg == "mask"
                for n in ast.walk(call)
                if isinstance(n, ast.Call) and n is not call
                for k in n.keywords
            )
            operands = [src.text_of(a) for a in call.args if tiles.is_tile(a)]
            if condition is None or nested or not operands:
                continue
            if len(operands) == 1:
                shape = f"{operands[0]}.shape"
            elif numpy:
                shape = f"{numpy[0]}.broadcast_shapes({', '.join(f'{o}.shape' for o in operands)})"
            else:
                continue
            given = next((k.value for k in call.keywords if k.arg == "dtype"), None)
            dtype = src.text_of(given) if given is not None else f"{operands[0]}.dtype"
            found.append(_Masked(stmt, call, keyword, condition, shape, dtype))
    return found


def fallback(src: Source, stmt: ast.stmt, is_scalar: Callable[[ast.expr], bool]) -> str | None:
    """The allocation binding ``stmt``'s name when its mask is off (``name = nl.op(...)``, one name target, an
    ``nl`` call with a tile operand that is a name or a subscript of one), or None (``is_scalar``: whether an
    expression is element-independent, so not a tile)."""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and (src.canonical(stmt.value.func) or "").rpartition(".")[0] == LANGUAGE
    ):
        return None
    call = stmt.value
    operands = [*call.args, *(k.value for k in call.keywords if k.arg not in ("mask", "dtype"))]
    tile = next((o for o in operands if cheap(o) and not is_scalar(o)), None)
    if tile is None:
        return None
    nl = src.alias_of(LANGUAGE, "nl")
    dtype = next(
        (src.text_of(k.value) for k in call.keywords if k.arg == "dtype"), f"{src.text_of(tile)}.dtype"
    )
    return f"{nl}.ndarray({src.text_of(tile)}.shape, dtype={dtype}, buffer={nl}.sbuf)"
