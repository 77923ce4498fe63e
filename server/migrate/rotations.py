"""Legacy modular PSUM allocations -> a tensor of the rotated tiles only, indexed modulo their count.

``t = nl.ndarray((B, nl.par_dim(P), F), buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(n,)))`` put block
``b`` on physical tile ``b % n`` (v2.26.1 nki.compiler.psum.mod_alloc / sbuf.mod_alloc ``num_free_tiles``): the
kernel owns ``n`` tiles, not ``B``. ``allocation`` then gives the tensor to the compiler (``buffer=nl.psum``), and at
its full size ``B`` it may not fit where the legacy one did (an attention tutorial's 32 blocks of a PSUM bank on 8
rotating banks). So the shape keeps ``n`` blocks per rotated dim and every subscript indexes block ``b % n``
(``t[i]`` -> ``t[(i) % n]``): the same tile holds the same data as in the legacy kernel, including a block that
reads a rotated alias of an earlier one. Runs before ``block_dims``, which folds the (now ``n``) blocks as usual.
PSUM only: its 16 KiB a partition is what a full-size tensor exceeds; an SBUF ``mod_alloc`` (``num_free_tiles``,
192 KiB a partition) stays full size, which fits, and the proof catches a kernel reading a rotated alias.
Only when the tensor is used, and every use in its function (nested ones included) is a subscript naming each
rotated block index; otherwise the tensor is left at full size for the proof to judge.
"""

from __future__ import annotations

import ast

from nki_studio.core.findings import Span, TextEdit
from nki_studio.migrate.allocation import allocator
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import ISA, LANGUAGE, Source


def run(src: Source) -> PassResult:
    """Shrink every rotated modular allocation to its tiles and index its blocks modulo their count."""
    out = PassResult()
    for top in src.tree.body:
        if not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(top):
            rotated = _rotated(src, node)
            if rotated is None:
                continue
            name, shape, counts = rotated
            subscripts = _subscripts(top, name, len(counts))
            if not subscripts:
                continue  # used otherwise (left at full size), or not at all (nothing to rotate)
            for dim, n in zip(shape, counts, strict=True):
                out.change(src.replace(dim, str(n)), dim.lineno, "mod_alloc tiles", f"{n} rotating tiles")
            for index in subscripts:
                for expr, n in zip(index, counts, strict=True):
                    new = "0" if n == 1 else f"({src.text_of(expr)}) % {n}"
                    out.change(src.replace(expr, new), expr.lineno, "mod_alloc block", f"block index % {n}")
            for product in _overwriting_products(src, top, name):
                end = src.bounds(product)[1] - 1  # the call's closing parenthesis
                comma = "" if src.text[:end].rstrip().endswith(",") else ","
                edit = TextEdit(Span(*src.position(end), *src.position(end)), f"{comma} accumulate=False")
                out.change(edit, product.lineno, "mod_alloc block", "nc_matmul overwriting its reused tile")
    return out


def _overwriting_products(src: Source, top: ast.AST, name: str) -> list[ast.Call]:
    """``name[...] = nisa.nc_matmul(...)``: a legacy assignment overwrote the block. 0.7's default
    ``accumulate=None`` adds into a PSUM location a matmul wrote before (isa.md §nc_matmul), which a rotated tile
    was, so the product says ``accumulate=False``."""
    return [
        node.value
        for node in ast.walk(top)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Subscript)
        and isinstance(node.targets[0].value, ast.Name)
        and node.targets[0].value.id == name
        and isinstance(node.value, ast.Call)
        and src.canonical(node.value.func) == f"{ISA}.nc_matmul"
        and not any(k.arg == "accumulate" for k in node.value.keywords)
    ]


def _rotated(src: Source, node: ast.AST) -> tuple[str, list[ast.expr], tuple[int, ...]] | None:
    """``name = nl.ndarray(shape, ..., buffer=<mod_alloc with fewer tiles than blocks>)``: the name, the rotated
    block dims and the tile count of each."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and src.canonical(node.value.func) == f"{LANGUAGE}.ndarray"
    ):
        return None
    call = node.value
    shape = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "shape"), None)
    buffer = next((k.value for k in call.keywords if k.arg == "buffer"), None)
    if not isinstance(shape, ast.Tuple) or not isinstance(buffer, ast.Call):
        return None
    if allocator(src, buffer.func) != ("psum", "mod_alloc"):
        return None
    counts = _counts(buffer)
    par = next((i for i, e in enumerate(shape.elts) if _is_par_dim(src, e)), None)
    if counts is None or par is None or len(counts) > par:
        return None  # the tile counts apply to the block dims, those before the partition dim
    dims = shape.elts[: len(counts)]
    if all(
        isinstance(d, ast.Constant) and isinstance(d.value, int) and d.value <= n
        for d, n in zip(dims, counts, strict=True)
    ):
        return None  # no more blocks than tiles: nothing rotates
    return node.targets[0].id, dims, counts


def _counts(call: ast.Call) -> tuple[int, ...] | None:
    """The literal ``num_bank_tiles=(n, ...)`` of a ``psum.mod_alloc`` call."""
    value = next((k.value for k in call.keywords if k.arg == "num_bank_tiles"), None)
    if not isinstance(value, ast.Tuple) or not value.elts:
        return None
    counts = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, int)]
    return tuple(counts) if len(counts) == len(value.elts) and all(n > 0 for n in counts) else None


def _is_par_dim(src: Source, node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and src.canonical(node.func) == f"{LANGUAGE}.par_dim"


def _subscripts(top: ast.AST, name: str, k: int) -> list[list[ast.expr]] | None:
    """The first ``k`` indices of every subscript of ``name`` in ``top``, or None when ``name`` is used otherwise
    (passed on, sliced in a block dim, bound again)."""
    parents = {id(c): p for p in ast.walk(top) for c in ast.iter_child_nodes(p)}
    found: list[list[ast.expr]] = []
    stores = 0
    for node in ast.walk(top):
        if isinstance(node, ast.arg) and node.arg == name:
            return None
        if not isinstance(node, ast.Name) or node.id != name:
            continue
        if not isinstance(node.ctx, ast.Load):
            stores += 1
            continue
        parent = parents.get(id(node))
        if not isinstance(parent, ast.Subscript) or parent.value is not node:
            return None
        index = parent.slice.elts if isinstance(parent.slice, ast.Tuple) else [parent.slice]
        blocks = index[:k]
        if len(blocks) < k or any(
            isinstance(e, (ast.Slice, ast.Starred)) or (isinstance(e, ast.Constant) and e.value is Ellipsis)
            for e in blocks
        ):
            return None
        found.append(blocks)
    return found if stores == 1 else None
