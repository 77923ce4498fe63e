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

A call this does not cover stays listed by ``scalar_masks`` (a call nested in it with a mask of its own, no tile
operand, an operation that is not element-wise), but ``x = nl.load(view, mask=c)``, which ``scalar_masks`` binds to
an unwritten tile of the view's shape. nki-samples' flash-attention backward computes ``dq_local``, ``dZ_sink`` and
the logit-bias ``intermediate`` this way under its causal-tile mask.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nki_studio.migrate.operators import Tiles
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.scalar_masks import ELEMENTWISE, Scalars
from nki_studio.migrate.source import LANGUAGE, Source, functions


@dataclass(frozen=True)
class _Masked:
    statement: ast.Assign
    call: ast.Call
    masks: list[
        tuple[ast.Call, ast.keyword]
    ]  # the call's mask and the same mask repeated on calls nested in it
    condition: str
    shape: str
    dtype: str


def run(src: Source) -> PassResult:
    """Rewrite each covered call (see the module docstring)."""
    out = PassResult()
    language = src.alias_of(LANGUAGE, "nl")
    for found in _covered(src):
        cuts = [src.keyword_cut(c, k) for c, k in found.masks]
        if any(cut is None for cut in cuts):
            continue
        start, end = src.bounds(found.call)
        call, at = "", start
        for cut in sorted(c for c in cuts if c is not None):
            call, at = call + src.text[at : cut[0]], cut[1]
        call += src.text[at:end]
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
            nested = [
                (n, k)
                for n in ast.walk(call)
                if isinstance(n, ast.Call) and n is not call
                for k in n.keywords
                if k.arg == "mask"
            ]
            # the same mask repeated on a nested call goes with it (as in ``scalar_masks``); another one is listed
            if condition is None or any(
                src.text_of(k.value) != src.text_of(keyword.value) for _, k in nested
            ):
                continue
            # without a known tile, a parameter's subscript (``seed_local[0, 0]``: a number is not subscripted)
            operands = _tile_operands(src, tiles, call) or _tile_operands(src, tiles, call, _parameters(func))
            if not operands:
                continue
            if len(set(operands)) == 1:
                shape = f"{operands[0]}.shape"
            elif numpy:
                shape = (
                    f"{numpy[0]}.broadcast_shapes({', '.join(f'{o}.shape' for o in dict.fromkeys(operands))})"
                )
            else:
                continue
            given = next((k.value for k in call.keywords if k.arg == "dtype"), None)
            dtype = src.text_of(given) if given is not None else f"{operands[0]}.dtype"
            found.append(_Masked(stmt, call, [(call, keyword), *nested], condition, shape, dtype))
    return found


def _tile_operands(
    src: Source, tiles: Tiles, call: ast.Call, parameters: frozenset[str] = frozenset()
) -> list[str]:
    """The tiles an element-wise call's result is broadcast from: its tile operands, and those of the element-wise
    ``nl`` calls nested in it (their results have their operands' broadcast shape, language.md §8); with
    ``parameters``, their subscripts too (a tile or tensor the caller passed: inferred, a number has none)."""
    out = []
    for a in call.args:
        if isinstance(a, ast.Call):
            module, _, leaf = (src.canonical(a.func) or "").rpartition(".")
            if module == LANGUAGE and leaf in ELEMENTWISE:
                out.extend(_tile_operands(src, tiles, a, parameters))
            elif tiles.is_tile(a):
                return []  # another call's result: its shape is not known here
        elif tiles.is_tile(a) or (
            isinstance(a, ast.Subscript) and isinstance(a.value, ast.Name) and a.value.id in parameters
        ):
            out.append(src.text_of(a))
    return out


def _parameters(func: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The parameter names of ``func``."""
    a = func.args
    return frozenset(p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs])
