"""NKI512: a tile/block grid allocation or view (``nl.alloc_tiles``, ``nl.alloc_blocks``, ``nl.tiles``,
``nl.blocks``) or a selection from one whose shapes break the documented constraints."""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.kernels import FunctionInfo
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import NOT_LITERAL, V07, literal_value, own_nodes

_NL = "nki.language."
_ALLOCATORS = ("alloc_tiles", "alloc_blocks")
_VIEWS = ("tiles", "blocks")
_SHAPES = ("tile_shape", "block_shape", "element_shape")
_ON_CHIP = {"nki.language.sbuf", "nki.language.psum"}
_PARTITIONS = 128  # SBUF/PSUM partitions (hardware.md §1)

Shape = tuple[object, ...]  # entries: int, or the offending constant / None for a non-literal


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def _shape(node: ast.expr | None, names: dict[str, ast.expr]) -> Shape | None:
    """A literal tuple/list shape (a name bound once in the function to one included); entries that are not
    int literals are kept as their constant value, or as None when not a literal at all."""
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    return tuple(_constant(elt) for elt in node.elts)


def _constant(node: ast.expr) -> object:
    """A literal's value (``-3`` included), None for anything else."""
    value = literal_value(node)
    return None if value is NOT_LITERAL else value


def _single_bindings(ctx: LintContext, func: FunctionInfo) -> dict[str, ast.expr]:
    """Names stored exactly once in the function, by a plain ``name = value``: name -> value."""
    stores: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    for node in own_nodes(ctx, func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
    return {k: v for k, v in values.items() if stores.get(k) == 1}


def _entry_problems(what: str, shape: Shape) -> list[str]:
    problems = []
    bad_types = [v for v in shape if v is not None and (type(v) is not int)]
    if bad_types:
        problems.append(f"{what} entries must be Python ints, not {bad_types[0]!r} (TypeError)")
    non_positive = [v for v in shape if type(v) is int and v <= 0]
    if non_positive:
        problems.append(f"{what} entries must be positive, got {non_positive[0]} (ValueError)")
    return problems


def _positive_ints(shape: Shape | None) -> tuple[int, ...] | None:
    """The shape when every entry is a positive int literal, else None."""
    if shape is None or not all(type(v) is int and v > 0 for v in shape):
        return None
    return tuple(v for v in shape if isinstance(v, int))


def _grid_shape(
    tile: tuple[int, ...], element: tuple[int, ...], block: tuple[int, ...] | None
) -> tuple[int, ...] | None:
    """Tiles (blocks) per dim of an allocation with literal shapes: untiled leading dims count their elements,
    tiled dims count ceil(extent / tile) (remainders are kept, clamped), blocks group ``block`` tiles."""
    lead = len(element) - len(tile)
    if len(tile) < 2 or lead < 0 or (block is not None and len(block) != len(tile)):
        return None
    counts = list(element[:lead])
    for k, (e, t) in enumerate(zip(element[lead:], tile, strict=True)):
        n = math.ceil(e / t)
        counts.append(math.ceil(n / block[k]) if block else n)
    return tuple(counts)


def _allocation_problems(ctx: LintContext, call: ast.Call, api: str, names: dict[str, ast.expr]) -> list[str]:
    problems = []
    if call.args:
        problems.append(f"nl.{api} takes keyword arguments only (its signature starts with `*`)")
    tile = _shape(_keyword(call, "tile_shape"), names)
    element = _shape(_keyword(call, "element_shape"), names)
    block = _shape(_keyword(call, "block_shape"), names) if api == "alloc_blocks" else None
    for what, shape in (("tile_shape", tile), ("element_shape", element), ("block_shape", block)):
        if shape is not None:
            problems += _entry_problems(what, shape)
    if tile is not None:
        if len(tile) < 2:
            problems.append(f"tile_shape {tile} must have at least 2 dims (ValueError)")
        elif element is not None and len(tile) > len(element):
            problems.append(
                f"tile_shape {tile} has more dims than element_shape {element} (ValueError: at most its rank)"
            )
        if block is not None and len(block) != len(tile):
            problems.append(f"block_shape {block} must have the rank of tile_shape {tile} (ValueError)")
        buffer = _keyword(call, "buffer")
        on_chip = buffer is not None and ctx.aliases.canonical(buffer) in _ON_CHIP
        if on_chip and tile and type(tile[0]) is int and tile[0] > _PARTITIONS:
            problems.append(
                f"tile_shape {tile}: an SBUF/PSUM tile spans tile_shape[0] = {tile[0]} partitions, at most "
                f"{_PARTITIONS}"
            )
    return problems


def _view_problems(call: ast.Call, api: str, names: dict[str, ast.expr]) -> list[str]:
    problems = []
    tile = _shape(_keyword(call, "tile_shape"), names)
    block = _shape(_keyword(call, "block_shape"), names) if api == "blocks" else None
    for what, shape in (("tile_shape", tile), ("block_shape", block)):
        if shape is not None:
            problems += _entry_problems(what, shape)
    if tile is not None and len(tile) < 2:
        problems.append(f"tile_shape {tile} must have at least 2 dims")
    if tile is not None and block is not None and len(block) != len(tile):
        problems.append(f"block_shape {block} must have the rank of tile_shape {tile}")
    return problems


def _selection_problems(sub: ast.Subscript, shape: tuple[int, ...]) -> list[str]:
    keys = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    if len(keys) > len(shape):
        return [f"{len(keys)} indices for a grid of shape {shape}"]
    problems = []
    for key, n in zip(keys, shape, strict=False):
        if isinstance(key, ast.Slice):
            step = _constant(key.step) if key.step is not None else None
            if isinstance(step, int) and not isinstance(step, bool) and step <= 0:
                problems.append(f"grid slices take a positive step, got {step}")
            continue
        index = _constant(key)
        if isinstance(index, int) and not isinstance(index, bool) and not -n <= index < n:
            problems.append(f"grid index {index} is out of range for a grid dim of {n} (shape {shape})")
    return problems


@rule(
    code="NKI512",
    name="grid-shape",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    summary="A tile/block grid (`nl.alloc_tiles`, `nl.alloc_blocks`, `nl.tiles`, `nl.blocks`) or a selection "
    "from one whose shapes break the documented constraints (non-int or non-positive entries, `tile_shape` "
    "rank below 2 or above `element_shape`'s, `block_shape` rank unlike `tile_shape`'s, an on-chip tile over "
    "128 partitions, a literal index past the grid).",
    bad=kernel_example(
        "x",
        """
buf = nl.alloc_tiles(tile_shape=(128,), element_shape=(128, 512), buffer=nl.sbuf, dtype=x.dtype)
return x
""",
    ),
    good=kernel_example(
        "x",
        """
buf = nl.alloc_tiles(tile_shape=(128, 128), element_shape=(128, 512), buffer=nl.sbuf, dtype=x.dtype)
return x
""",
    ),
    sources="nki-0.7.md §2.6 ([GRID] `nl.alloc_tiles`/`nl.alloc_blocks`: keyword-only; `tile_shape` at least 2 "
    "dims of exact positive Python ints over the trailing dims of `element_shape`; TypeError for non-int "
    "shapes, ValueError for non-positive entries or a rank below 2 or above `element_shape`'s; `block_shape` "
    "rank equals `tile_shape` rank; grids count tiles/blocks, partial edge tiles clamped), hardware.md §1 "
    "(128 SBUF/PSUM partitions)",
    scope_note="NKI 0.7 and later (grids are 0.7 APIs). Checked when the shapes are literal tuples or lists "
    "(or names assigned one once in the function). A `tile_shape` that does not divide the shape is fine: "
    "the docs keep and clamp partial edge tiles. The on-chip partition limit uses the allocation's "
    "`tile_shape[0]` partitions of the dense rank-2 layout the page describes (*inferred* placement). Indices "
    "are checked on grids from `nl.alloc_tiles`/`nl.alloc_blocks` with literal shapes, selected directly "
    "from the name they were assigned to; a slice step must be positive (the empty_like page speaks of "
    "positive-step grid slices; *inferred* that others are refused).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """`nl.alloc_tiles(*, tile_shape, element_shape, buffer, dtype, ...)` and `nl.alloc_blocks(..., block_shape,
    ...)` organise new storage as tiles: `tile_shape` has at least two dims, exact positive Python ints, and
    applies to the trailing dims of `element_shape`; `block_shape` counts tiles per block and has the rank of
    `tile_shape`. On SBUF/PSUM a tile spans `tile_shape[0]` partitions, at most 128. A grid's shape counts
    tiles (blocks), partial edge tiles included, so an index must lie within it."""
    if not any(ctx.kernel_calls_to(_NL + api) for api in (*_ALLOCATORS, *_VIEWS)):
        return
    for func in ctx.kernel_code():
        names = _single_bindings(ctx, func)
        grids: dict[str, tuple[int, ...]] = {}
        for node in own_nodes(ctx, func):
            if isinstance(node, ast.Call):
                api = (ctx.aliases.canonical(node.func) or "").removeprefix(_NL)
                if api in _ALLOCATORS:
                    problems = _allocation_problems(ctx, node, api, names)
                elif api in _VIEWS:
                    problems = _view_problems(node, api, names)
                else:
                    continue
                for problem in problems:
                    yield ctx.report(node, f"nl.{api}: {problem}")
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)
                and (ctx.aliases.canonical(node.value.func) or "").removeprefix(_NL) in _ALLOCATORS
                and names.get(node.targets[0].id) is node.value
            ):
                call = node.value
                tile = _positive_ints(_shape(_keyword(call, "tile_shape"), names))
                element = _positive_ints(_shape(_keyword(call, "element_shape"), names))
                has_blocks = _keyword(call, "block_shape") is not None
                block = _positive_ints(_shape(_keyword(call, "block_shape"), names)) if has_blocks else None
                shape = (
                    _grid_shape(tile, element, block)
                    if tile and element and (block is not None or not has_blocks)
                    else None
                )
                if shape:
                    grids[node.targets[0].id] = shape
            elif (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and node.value.id in grids
            ):
                if not isinstance(node.ctx, ast.Load):
                    continue
                for problem in _selection_problems(node, grids[node.value.id]):
                    yield ctx.report(node, problem)
