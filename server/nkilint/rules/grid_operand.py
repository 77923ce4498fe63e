"""NKI507: a tile/block grid (``nl.tiles``/``nl.blocks``/``nl.alloc_tiles``/``nl.alloc_blocks``) passed where an
``NkiTensor`` operand is needed."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.model.kinds import Kind
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07, kinds, own_nodes

# The nki.language functions that take a grid (nki-0.7.md §2.6: views of grids, empty_like of a grid); every other
# nki.language/nki.isa/nki.collectives function takes tensors.
_GRID_ACCEPTING = frozenset(
    {
        "nki.language.tiles",
        "nki.language.blocks",
        "nki.language.empty_like",
        "nki.language.alloc_tiles",
        "nki.language.alloc_blocks",
    }
)
_GRID_SOURCES = (
    "nki.language.tiles",
    "nki.language.blocks",
    "nki.language.alloc_tiles",
    "nki.language.alloc_blocks",
)
_TENSOR_APIS = ("nki.isa.", "nki.language.", "nki.collectives.")


def _operands(call: ast.Call) -> Iterator[ast.expr]:
    """Arguments of a call, with the elements of list/tuple arguments (collectives take lists of tensors)."""
    for value in [*call.args, *(kw.value for kw in call.keywords)]:
        if isinstance(value, (ast.List, ast.Tuple)):
            yield from value.elts
        elif not isinstance(value, ast.Starred):
            yield value


@rule(
    code="NKI507",
    name="grid-operand",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    fixable=True,
    summary="A tile/block grid (`nl.tiles`, `nl.blocks`, `nl.alloc_tiles`, `nl.alloc_blocks`, or a tile selected "
    "from one) passed as an NKI operand instead of its `.data` tensor.",
    bad=kernel_example(
        "x",
        """
out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
src_t = nl.tiles(x, tile_shape=(128, 512))
t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=src_t[0, 0])
nisa.dma_copy(dst=out, src=t)
return out
""",
    ),
    good=kernel_example(
        "x",
        """
out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
src_t = nl.tiles(x, tile_shape=(128, 512))
t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=src_t[0, 0].data)
nisa.dma_copy(dst=out, src=t)
return out
""",
    ),
    sources="nki-0.7.md §2.6 ([GRID]: indexing a grid returns a grid, not an NkiTensor -- pass `.data` to ISA "
    "instructions; `NkiGrid.data` is the whole selection as one NkiTensor operand)",
    scope_note="NKI 0.7 and later (grids are 0.7 APIs). Reported for arguments of `nki.isa`, `nki.language` "
    "(except `tiles`, `blocks`, `empty_like`) and `nki.collectives` calls, list elements included, when the "
    "grid comes from a grid API in the same function. The quick fix appends `.data`; on a whole grid or block "
    "that one access pattern cannot express (`is_data_representable` is False), `.data` raises and the "
    "operand must be split into tiles instead.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """An `NkiTileGrid`/`NkiBlockGrid` is a view that organises a tensor (or new storage) into tiles: it has no
    access pattern of its own, and selecting a tile (`grid[i, j]`) gives a one-tile grid, not an `NkiTensor`.
    Instructions take tensors; a grid's `.data` is its selection as one `NkiTensor` operand."""
    if not any(ctx.kernel_calls_to(api) for api in _GRID_SOURCES):
        return  # no grid is made in kernel code
    for func in ctx.kernel_code():
        k = kinds(ctx, func)
        if Kind.GRID not in k.kinds.values():
            continue
        for node in own_nodes(ctx, func):
            if not isinstance(node, ast.Call):
                continue
            api = ctx.aliases.canonical(node.func)
            if api is None or not api.startswith(_TENSOR_APIS) or api in _GRID_ACCEPTING:
                continue
            for operand in _operands(node):
                if k.of(operand) is not Kind.GRID:
                    continue
                text = ctx.text(operand)
                fix = Fix("Pass the grid's tensor (.data)", (ctx.replace(operand, f"{text}.data"),))
                yield ctx.report(
                    operand,
                    f"`{text}` is a tile/block grid, not an NkiTensor: {api.rsplit('.', 1)[1]} needs a tensor "
                    f"operand; pass `{text}.data`",
                    fix=fix,
                )
