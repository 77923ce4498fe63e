"""NKI 0.7 tile/block grids (``nl.tiles``, ``nl.blocks``, ``nl.alloc_tiles``, ``nl.alloc_blocks``; nki-0.7.md §2.6).

A grid is a view in tile (or block) coordinates over existing storage: indexing moves no data and emits no
instruction; ``.data`` is the selection as one ``NkiTensor`` operand (a plain strided view, so capacity,
trace operands and races see it like any other view).

Model (*inferred* from the API pages, which give the behaviour, not an implementation): every source dimension
maps element index ``e`` to a flat storage position ``g_d(e)`` and the position of an element is the sum over
dims (true for strided views and for the tile-major layout of on-chip ``alloc_tiles``). ``.data`` exists
exactly when every ``g_d`` is affine over the selected elements (``is_data_representable``). Leading source
dims beyond ``tile_shape``'s rank are untiled: one grid step is one slab, and an integer index drops the dim.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np
from nki_studio.sim import context
from nki_studio.sim.errors import HardwareLimitError, SimulationError
from nki_studio.sim.language.creation import ndarray
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.scalars import index_value
from nki_studio.sim.tensor import NkiTensor

_PARTITIONS = 128
Positions = Callable[[np.ndarray], np.ndarray]


def _affine(offset: int, stride: int) -> Positions:
    return lambda e: offset + e * stride


def _shifted(pos: Positions, first: int) -> Positions:
    return lambda e: pos(e + first)


def _gathered(pos: Positions, selected: np.ndarray) -> Positions:
    """Dense element numbers of a gapped selection -> the storage positions of the selected elements."""
    return lambda e: pos(selected[np.asarray(e, np.int64)])


def _tiled(tile: int, tile_stride: int, inner: int) -> Positions:
    """Tile-major on-chip layout: tile number ``e // tile`` times the tile stride, plus the in-tile offset."""
    return lambda e: (e // tile) * tile_stride + (e % tile) * inner


@dataclass(frozen=True)
class _Dim:
    """One source dimension: its element extent, how an element maps to storage, and the grid selection."""

    extent: int  # elements of the source along this dim
    pos: Positions  # element indices -> flat storage positions (summed over dims)
    unit: int  # elements per grid step (1: untiled leading dim; tile; tile * block)
    tiled: bool
    start: int = 0  # selection, in grid steps
    count: int = -1  # -1: every step from start
    step: int = 1
    consumed: bool = False  # an integer index took this grid coordinate

    @property
    def steps(self) -> int:
        return -(-self.extent // self.unit)

    @property
    def n(self) -> int:
        return self.steps - self.start if self.count < 0 else self.count

    def cells(self) -> list[int]:
        return [self.start + i * self.step for i in range(self.n)]

    def elements(self) -> np.ndarray:
        """Selected element indices (boundary cells clamped to the extent)."""
        parts = [np.arange(c * self.unit, min((c + 1) * self.unit, self.extent)) for c in self.cells()]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    @property
    def remainder(self) -> bool:
        return bool(self.n) and (self.cells()[-1] + 1) * self.unit > self.extent

    @property
    def kept(self) -> bool:
        """Whether the dim is part of ``element_shape``/``data`` (an indexed slab is dropped)."""
        return self.tiled or not self.consumed


def _shape_tuple(value: object, what: str) -> tuple[int, ...]:
    if not isinstance(value, tuple) or not all(type(v) is int for v in value):
        raise TypeError(f"{what} must be a tuple of Python ints, not {value!r}")
    if any(v <= 0 for v in value):
        raise ValueError(f"{what} entries must be positive, got {value!r}")
    return value


class GridIndexError(SimulationError, IndexError):
    """A grid coordinate past the grid; also an ``IndexError``, so ``for cell in grid`` stops like a sequence."""


class NkiGrid:
    """Base of ``NkiTileGrid`` and ``NkiBlockGrid``: a selection of tiles/blocks over one storage."""

    def __init__(self, base: NkiTensor, dims: tuple[_Dim, ...], tile_shape: tuple[int, ...]) -> None:
        self._base = base  # any view of the storage; ``data`` derives from it
        self._dims = dims
        self._tile_shape = tile_shape

    # ----- documented attributes -------------------------------------------------------------------
    @property
    def buffer(self) -> MemoryRegion:
        """Memory region of the backing storage."""
        return self._base.buffer

    @property
    def dtype(self) -> Any:
        """Element dtype of the backing storage."""
        return self._base.dtype

    @property
    def tile_shape(self) -> tuple[int, ...]:
        """Nominal element shape of one tile."""
        return self._tile_shape

    @property
    def shape(self) -> tuple[int, ...]:
        """Tiles (blocks) selected along each remaining grid dim."""
        return tuple(d.n for d in self._dims if not d.consumed)

    @property
    def element_shape(self) -> tuple[int, ...]:
        """Selected elements along each source dim (an integer-indexed untiled dim is dropped)."""
        return tuple(len(d.elements()) for d in self._dims if d.kept)

    @property
    def index_step_elements(self) -> tuple[int, ...]:
        """Source elements one step of each remaining grid coordinate moves."""
        return tuple(d.unit * d.step for d in self._dims if not d.consumed)

    @property
    def is_remainder(self) -> bool:
        """Whether a selected tile/block is clamped at the source boundary."""
        return any(d.remainder for d in self._dims)

    @property
    def is_data_representable(self) -> bool:
        """Whether one strided access pattern expresses the selection exactly."""
        return self._strided() is not None

    @property
    def data(self) -> NkiTensor:
        """The whole selection as one ``NkiTensor`` operand."""
        found = self._strided()
        if found is None:
            raise SimulationError(
                f"{type(self).__name__}.data: the selection (element shape {list(self.element_shape)}) is not "
                "one access pattern (gaps between selected tiles, or tiles laid out apart); select one "
                "tile/block, or a step-1 range along the free dims"
            )
        offset, strides = found
        return self._base._derive(self.element_shape, strides, offset)

    # ----- indexing ---------------------------------------------------------------------------------
    def __getitem__(self, key: object) -> Any:
        keys = key if isinstance(key, tuple) else (key,)
        open_dims = [i for i, d in enumerate(self._dims) if not d.consumed]
        if len(keys) > len(open_dims):
            raise SimulationError(f"too many indices ({len(keys)}) for a grid of shape {list(self.shape)}")
        dims = list(self._dims)
        for i, k in zip(open_dims, keys, strict=False):
            d = dims[i]
            if isinstance(k, slice):
                start, stop, step = k.indices(d.n)
                if step <= 0:
                    raise SimulationError(f"grid slice step must be positive, got {step}")
                cells = d.cells()[start:stop:step]
                dims[i] = replace(
                    d, start=cells[0] if cells else d.start, count=len(cells), step=d.step * step
                )
            else:
                j = index_value(k)
                j += d.n if j < 0 else 0
                if not 0 <= j < d.n:
                    raise GridIndexError(f"grid index {j} out of range for a grid dim of {d.n}")
                dims[i] = replace(d, start=d.cells()[j], count=1, step=1, consumed=True)
        return self._like(tuple(dims))

    def _like(self, dims: tuple[_Dim, ...]) -> NkiGrid:
        return type(self)(self._base, dims, self._tile_shape)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={self.shape}, element_shape={self.element_shape})"

    # ----- internals --------------------------------------------------------------------------------
    def _strided(self) -> tuple[int, tuple[int, ...]] | None:
        offset, strides = 0, []
        for d in self._dims:
            pos = d.pos(d.elements()).astype(np.int64)
            if not pos.size:
                return None
            offset += int(pos[0])
            if not d.kept:
                continue
            stride = int(pos[1] - pos[0]) if pos.size > 1 else 0
            if not np.array_equal(pos, pos[0] + stride * np.arange(pos.size)):
                return None
            strides.append(stride)
        return offset, tuple(strides)

    def _region_dims(self) -> tuple[_Dim, ...]:
        """The selection as fresh source dims (for ``tiles``/``blocks`` over a grid)."""
        out = []
        for d in self._dims:
            first = d.cells()[0] * d.unit if d.n else 0
            if d.consumed and not d.tiled:
                fixed = int(d.pos(np.array([first]))[0])
                out.append(_Dim(1, _affine(fixed, 0), 1, False, consumed=True))
                continue
            selected = d.elements()
            if d.step != 1 and d.n > 1:
                # A gapped selection: the new grid numbers the selected elements densely and maps each one to
                # where it lives (the cells keep their storage; only the numbering is packed).
                out.append(_Dim(len(selected), _gathered(d.pos, selected), 1, False))
                continue
            out.append(_Dim(len(selected), _shifted(d.pos, first), 1, False))
        return tuple(out)


class NkiTileGrid(NkiGrid):
    """A view navigated in tile coordinates (``nl.tiles``, ``nl.alloc_tiles``)."""


class NkiBlockGrid(NkiGrid):
    """A view navigated in block coordinates; each block groups ``block_shape`` tiles (``nl.blocks``)."""

    def __init__(
        self,
        base: NkiTensor,
        dims: tuple[_Dim, ...],
        tile_shape: tuple[int, ...],
        block_shape: tuple[int, ...] = (),
    ) -> None:
        super().__init__(base, dims, tile_shape)
        self._block_shape = block_shape

    @property
    def block_shape(self) -> tuple[int, ...]:
        """Tiles per block along each tiled dim."""
        return self._block_shape

    def _like(self, dims: tuple[_Dim, ...]) -> NkiGrid:
        return NkiBlockGrid(self._base, dims, self._tile_shape, self._block_shape)


def _tensor_dims(t: NkiTensor) -> tuple[_Dim, ...]:
    if t._index is not None:
        raise SimulationError("nl.tiles/nl.blocks over a runtime gather view (.ap(vector_offset=)/indirect)")
    return tuple(
        _Dim(n, _affine(t.offset if k == 0 else 0, s), 1, False)
        for k, (n, s) in enumerate(zip(t.shape, t.strides, strict=True))
    )


def _source(source: object) -> tuple[NkiTensor, tuple[_Dim, ...], NkiGrid | None]:
    if isinstance(source, NkiGrid):
        return source._base, source._region_dims(), source
    if isinstance(source, NkiTensor):
        return source, _tensor_dims(source), None
    raise TypeError(
        f"nl.tiles/nl.blocks: source must be an NkiTensor, NkiTileGrid or NkiBlockGrid, not {source!r}"
    )


def _tile(
    dims: tuple[_Dim, ...], tile_shape: tuple[int, ...], block_shape: tuple[int, ...] | None
) -> tuple[_Dim, ...]:
    open_dims = [i for i, d in enumerate(dims) if not d.consumed]
    if len(tile_shape) < 2 or len(tile_shape) > len(open_dims):
        raise ValueError(
            f"tile_shape {tile_shape} must have at least 2 dims and at most the source's {len(open_dims)}"
        )
    if block_shape is not None and len(block_shape) != len(tile_shape):
        raise ValueError(f"block_shape {block_shape} must have the rank of tile_shape {tile_shape}")
    tiled = open_dims[len(open_dims) - len(tile_shape) :]
    out = list(dims)
    for k, i in enumerate(tiled):
        unit = tile_shape[k] * (block_shape[k] if block_shape else 1)
        out[i] = _Dim(dims[i].extent, dims[i].pos, unit, True)
    return tuple(out)


def tiles(source: object, *, tile_shape: tuple[int, ...] | None = None) -> NkiTileGrid:
    """``nl.tiles``: ``source`` (a tensor or grid) as a grid of ``tile_shape`` tiles; no storage, no instruction."""
    base, dims, grid = _source(source)
    if tile_shape is None:
        if grid is None:
            raise TypeError("nl.tiles: tile_shape is required when the source is a tensor")
        tile_shape = grid.tile_shape
    shape = _shape_tuple(tile_shape, "tile_shape")
    return NkiTileGrid(base, _tile(dims, shape, None), shape)


def blocks(
    source: object, *, tile_shape: tuple[int, ...] | None = None, block_shape: tuple[int, ...]
) -> NkiBlockGrid:
    """``nl.blocks``: ``source`` as a grid of blocks of ``block_shape`` tiles of ``tile_shape`` elements."""
    base, dims, grid = _source(source)
    if tile_shape is None:
        if grid is None:
            raise TypeError("nl.blocks: tile_shape is required when the source is a tensor")
        tile_shape = grid.tile_shape
    shape = _shape_tuple(tile_shape, "tile_shape")
    per_block = _shape_tuple(block_shape, "block_shape")
    return NkiBlockGrid(base, _tile(dims, shape, per_block), shape, per_block)


def _allocate(
    tile_shape: object, element_shape: object, buffer: object, dtype: object, address: object, name: str
) -> tuple[NkiTensor, tuple[_Dim, ...], tuple[int, ...]]:
    """Storage for a tiled allocation: HBM is the dense logical extent; on chip, tiles sit side by side along
    the free axis of ``tile_shape[0]`` partitions (the "dense rank-2 capacity layout" of the API page)."""
    tshape = _shape_tuple(tile_shape, "tile_shape")
    eshape = _shape_tuple(element_shape, "element_shape")
    if not isinstance(buffer, MemoryRegion):
        raise TypeError(
            f"buffer must be an NKI MemoryRegion (nl.sbuf, nl.psum, nl.shared_hbm ...), not {buffer!r}"
        )
    if len(tshape) < 2 or len(tshape) > len(eshape):
        raise ValueError(
            f"tile_shape {tshape} must have at least 2 dims and at most element_shape's {len(eshape)}"
        )
    if not buffer.on_chip:
        base = ndarray(eshape, dtype, buffer, name, address)
        return base, _tensor_dims(base), tshape
    if tshape[0] > _PARTITIONS:
        raise HardwareLimitError(
            f"tile_shape {tshape}: an on-chip tile spans at most {_PARTITIONS} partitions"
        )
    lead = len(eshape) - len(tshape)
    counts = eshape[:lead] + tuple(-(-e // t) for e, t in zip(eshape[lead:], tshape, strict=True))
    tile_free = math.prod(tshape[1:])
    row = math.prod(counts) * tile_free
    base = ndarray((tshape[0], row), dtype, buffer, name, address)
    # tile-major order: the flat tile number of (lead..., tile coords...) in row-major order.
    tile_strides = [math.prod(counts[k + 1 :]) * tile_free for k in range(len(counts))]
    dims = []
    for k, extent in enumerate(eshape):
        if k < lead:
            dims.append(_Dim(extent, _affine(0, tile_strides[k]), 1, False))
            continue
        inner = row if k == lead else math.prod(tshape[k - lead + 1 :])
        dims.append(_Dim(extent, _tiled(tshape[k - lead], tile_strides[k], inner), 1, False))
    return base, tuple(dims), tshape


def alloc_tiles(
    *,
    tile_shape: tuple[int, ...],
    element_shape: tuple[int, ...],
    buffer: MemoryRegion,
    dtype: object,
    address: tuple[int, int] | None = None,
    name: str = "",
) -> NkiTileGrid:
    """``nl.alloc_tiles``: new uninitialised storage of ``element_shape`` elements organised as tiles."""
    base, dims, tshape = _allocate(tile_shape, element_shape, buffer, dtype, address, name)
    return NkiTileGrid(base, _tile(dims, tshape, None), tshape)


def alloc_blocks(
    *,
    tile_shape: tuple[int, ...],
    block_shape: tuple[int, ...],
    element_shape: tuple[int, ...],
    buffer: MemoryRegion,
    dtype: object,
    address: tuple[int, int] | None = None,
    name: str = "",
) -> NkiBlockGrid:
    """``nl.alloc_blocks``: like ``alloc_tiles`` plus a block level (grouping changes no physical layout)."""
    per_block = _shape_tuple(block_shape, "block_shape")
    base, dims, tshape = _allocate(tile_shape, element_shape, buffer, dtype, address, name)
    return NkiBlockGrid(base, _tile(dims, tshape, per_block), tshape, per_block)


# The tiled-dim orders the v2.33.0 empty_like page allows, one per tile rank (nki-0.7.md §2.6 [EL]).
TRANSPOSE_ORDERS = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def _transpose_order(x: NkiGrid, transpose_axes: object) -> tuple[int, ...]:
    """``transpose_axes`` checked against the grid's tile rank and the 128-partition limit of the result."""
    if not isinstance(transpose_axes, (tuple, list)) or not all(type(a) is int for a in transpose_axes):
        raise TypeError(f"nl.empty_like: transpose_axes must be a tuple of ints, not {transpose_axes!r}")
    order = tuple(transpose_axes)
    rank = len(x.tile_shape)
    if TRANSPOSE_ORDERS.get(rank) != order:
        allowed = TRANSPOSE_ORDERS.get(rank)
        raise ValueError(
            f"nl.empty_like: transpose_axes {order} for a rank-{rank} tile; the supported order is {allowed}"
            if allowed
            else f"nl.empty_like: transpose_axes for a rank-{rank} tile; supported ranks are 2 to 4"
        )
    lead = len(x.element_shape) - rank
    extent = min(x.element_shape[lead + order[0]], x.tile_shape[order[0]])
    if extent > _PARTITIONS:  # "the source free extent that becomes the destination partition extent"
        raise HardwareLimitError(
            f"nl.empty_like: transpose_axes {order} makes a source extent of {extent} the partition dim; "
            f"at most {_PARTITIONS}"
        )
    return order


def empty_like_grid(
    x: NkiGrid, dtype: object, buffer: object, name: str, address: object, transpose_axes: object = None
) -> NkiGrid:
    """``nl.empty_like`` of a grid: fresh storage for the selection (gaps packed densely), same grid type,
    tile/block shapes and remainder extents.

    ``transpose_axes`` (a destination for ``nisa.dma_transpose``) permutes the tiled dims of every tile, so
    ``.data`` of a cell is its source tile transposed with partitions first. The grid's dims (navigation
    shape, tile/block shapes, extents) are permuted with them *(inferred: the page states the allowed orders
    and the partition limit, not how the navigation of a transposed grid is ordered)*.
    """
    region = x.buffer if buffer is None else buffer
    dt = x.dtype if dtype is None else dtype
    kept = [d for d in x._dims if d.kept]
    tshape, eshape, bshape = x.tile_shape, x.element_shape, getattr(x, "block_shape", None)
    if transpose_axes is not None:
        order = _transpose_order(x, transpose_axes)
        lead = len(kept) - len(order)
        tshape = tuple(tshape[a] for a in order)
        eshape = eshape[:lead] + tuple(eshape[lead + a] for a in order)
        bshape = None if bshape is None else tuple(bshape[a] for a in order)
        kept = kept[:lead] + [kept[lead + a] for a in order]
        if region is not MemoryRegion.sbuf:
            context.current().warn(
                "nl.empty_like(transpose_axes=...) prepares an SBUF destination for nisa.dma_transpose; "
                f"this one is in {region}"
            )
    base, dims, tshape = _allocate(tshape, eshape, region, dt, address, name)
    new: NkiGrid
    if isinstance(x, NkiBlockGrid):
        assert bshape is not None
        new = NkiBlockGrid(base, _tile(dims, tshape, bshape), tshape, bshape)
    else:
        new = NkiTileGrid(base, _tile(dims, tshape, None), tshape)
    # A tiled dim the source indexed is one tile here: index it too, so the navigation shape matches.
    if any(d.consumed for d in kept):
        return cast(NkiGrid, new[tuple(0 if d.consumed else slice(None) for d in kept)])
    return new


def empty_like(
    x: object,
    dtype: object = None,
    buffer: object = None,
    name: str = "",
    *,
    transpose_axes: object = None,
    address: object = None,
) -> Any:
    """Uninitialised tensor like ``x`` (dtype and buffer default to ``x``'s); a tile/block grid gives a grid
    over fresh storage (nki-0.7.md §2.6)."""
    if isinstance(x, NkiGrid):
        return empty_like_grid(x, dtype, buffer, name, address, transpose_axes)
    if not isinstance(x, NkiTensor):
        raise SimulationError(f"nl.empty_like: x must be a tensor or a tile/block grid, not {x!r}")
    shape = x.shape
    if transpose_axes is not None:
        order = tuple(int(a) for a in transpose_axes)  # type: ignore[attr-defined]
        shape = tuple(x.shape[a] for a in order)
    return ndarray(
        shape, x.dtype if dtype is None else dtype, x.buffer if buffer is None else buffer, name, address
    )


__all__ = [
    "TRANSPOSE_ORDERS",
    "NkiBlockGrid",
    "NkiGrid",
    "NkiTileGrid",
    "alloc_blocks",
    "alloc_tiles",
    "blocks",
    "empty_like",
    "empty_like_grid",
    "tiles",
]
