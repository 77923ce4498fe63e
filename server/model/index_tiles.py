"""Legacy ``neuronxcc.nki`` indexing in the value interpreter: ``nl.arange``/``nl.mgrid`` index tiles, what a
tensor indexed with them selects, and the blocks of a block tensor, so the partition and capacity rules see
legacy accesses.

Semantics as the legacy API pages state them (Neuron <= 2.26, ``neuronxcc.nki.language``):

* ``nl.arange(n)`` is a 1-D index vector; ``[:, None]`` makes it a partition index tile of shape ``(n, 1)``,
  ``[None, :]`` a free index tile ``(1, n)``; a tensor indexed with a 1-D arange is an error
  (``err_1d_arange_not_supported``, nki.errors page of /en/v2.21.0.beta/).
* ``nl.mgrid[0:P, 0:F]`` is NumPy's ``mgrid``: unpacked to ``i_p, i_f`` or read as ``grid.p``/``grid.x``
  (nki.language.mgrid page, whose examples import ``neuronxcc.nki.language``).
* ``t[i_p, i_f]`` selects the broadcast of its index tiles (NumPy advanced indexing, which the legacy
  tutorials' shapes follow: nki-samples 0898a77, tutorials/tensor_addition and matrix_multiplication), so
  ``nl.load(a[i_p, i_f])`` is a tile of that shape with its partition dim first. Arithmetic on index tiles
  (``i_p + 128 * k``) keeps the shape. Mixing index tiles with slices is left unknown (inferred: the legacy
  pages never show it).
* ``mask=`` on a call: "a compile-time constant predicate that controls whether/how this instruction is executed"
  [v2.26.1 nki.isa.* pages, NKI API Masking]; only the elements where it holds are accessed, so an access
  masked with ``i_p < 128`` spans 128 partitions however long ``i_p`` is. A comparison of an index tile whose
  first value is known (``nl.arange(n)`` and its sums with constants) with a constant keeps a known count of
  indices along the tile's one long dim (``IndexMask``); ``&`` keeps the smaller count per dim. Any other
  predicate is unknown and leaves the access whole.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nki_studio.model.arithmetic import binop
from nki_studio.model.values import UNKNOWN, Const, Seq, SliceVal, TensorVal, Value, const_int


@dataclass(frozen=True, eq=False)
class IndexTile(Value):
    """An index tile: its shape (each dim a ``Const`` with its derivation, or UNKNOWN) and, per dim, its first
    index value when known (values step by 1 along a dim; () when unknown)."""

    shape: tuple[Value, ...]
    starts: tuple[int | None, ...] = ()

    def start(self, dim: int) -> int | None:
        """The first index value along ``dim``, or None."""
        return self.starts[dim] if dim < len(self.starts) else None


@dataclass(frozen=True, eq=False)
class IndexMask(Value):
    """A ``mask=`` predicate on index tiles: per dim, how many indices it keeps (None: all of them)."""

    counts: tuple[int | None, ...]


@dataclass(frozen=True, eq=False)
class IndexGrid(Seq):
    """``nl.mgrid[...]``: its index tiles, one per indexed dim (unpacks like a tuple; ``.p``/``.x`` name the
    first two)."""


_GRID_FIELDS = {"p": 0, "x": 1}


def _span_size(start: Value, stop: Value, step: Value) -> Value:
    """Elements of ``range(start, stop, step)`` with the derivation of ``stop - start`` for unit steps."""
    lo, hi, by = const_int(start), const_int(stop), const_int(step)
    if lo is None or hi is None or not by:
        return UNKNOWN
    size = len(range(lo, hi, by))
    if by != 1:
        return Const(size)
    if lo == 0 and isinstance(stop, Const):
        return Const(size, stop.expr, stop.binds)
    derived = binop(ast.Sub(), stop, start, "stop", "start")
    return derived if const_int(derived) == size else Const(size)


def arange(args: list[Value]) -> Value:
    """``nl.arange(stop)`` / ``nl.arange(start, stop[, step])``: a 1-D index tile."""
    if len(args) == 1:
        return IndexTile((_span_size(Const(0), args[0], Const(1)),), (0,))
    if len(args) in (2, 3):
        step = args[2] if len(args) == 3 else Const(1)
        start = const_int(args[0]) if const_int(step) == 1 else None
        return IndexTile((_span_size(args[0], args[1], step),), (start,))
    return UNKNOWN


def mgrid(key: Value) -> Value:
    """``nl.mgrid[a:b, c:d, ...]``: one index tile per slice, each spanning its own dim."""
    keys = key.items if isinstance(key, Seq) and key.exact else [key]
    sizes: list[Value] = []
    starts: list[int | None] = []
    for item in keys:
        if not isinstance(item, SliceVal):
            return UNKNOWN
        start = Const(0) if _is_none(item.start) else item.start
        step = Const(1) if _is_none(item.step) else item.step
        sizes.append(_span_size(start, item.stop, step))
        starts.append(const_int(start) if const_int(step) == 1 else None)
    tiles: list[Value] = [
        IndexTile(
            tuple(size if i == axis else Const(1) for i in range(len(sizes))),
            tuple(first if i == axis else 0 for i in range(len(sizes))),
        )
        for axis, (size, first) in enumerate(zip(sizes, starts, strict=True))
    ]
    return IndexGrid(tiles)


def grid_attribute(grid: IndexGrid, attr: str) -> Value:
    """``grid.p`` / ``grid.x``: the partition and the first free index tile."""
    at = _GRID_FIELDS.get(attr)
    return grid.items[at] if at is not None and at < len(grid.items) else UNKNOWN


def tile_subscript(tile: IndexTile, key: Value) -> Value:
    """``i[:, None]`` / ``i[None, :]``: new axes around the index tile's dims (full slices keep a dim)."""
    keys = key.items if isinstance(key, Seq) and key.exact else [key]
    dims = iter(enumerate(tile.shape))
    shape: list[Value] = []
    starts: list[int | None] = []
    for item in keys:
        if _is_none(item):
            shape.append(Const(1))
            starts.append(0)
        elif (
            isinstance(item, SliceVal)
            and _is_none(item.start)
            and _is_none(item.stop)
            and (_is_none(item.step) or const_int(item.step) == 1)
        ):
            at, dim = next(dims, (-1, UNKNOWN))
            shape.append(dim)
            starts.append(tile.start(at) if at >= 0 else None)
        else:
            return UNKNOWN
    for at, dim in dims:
        shape.append(dim)
        starts.append(tile.start(at))
    return IndexTile(tuple(shape), tuple(starts))


def tile_binop(op: ast.operator, left: Value, right: Value) -> Value:
    """Arithmetic with an index tile (``i_p + 128 * k``, ``nl.program_id(0) * 128 + i_p``; any operator): the
    broadcast of the operands' shapes. An operand the interpreter does not know is taken as a scalar (an
    SPMD program id, a loop index: what legacy index expressions add, inferred from the legacy tutorials).
    The first values stay known through adding or subtracting a known integer; ``&`` of two masks keeps what
    both keep."""
    if isinstance(op, ast.BitAnd) and isinstance(left, IndexMask) and isinstance(right, IndexMask):
        return _both(left, right)
    if not all(isinstance(v, (IndexTile, Const)) or not v.known for v in (left, right)):
        return UNKNOWN
    shape = broadcast([v.shape if isinstance(v, IndexTile) else () for v in (left, right)])
    if shape is None:
        return UNKNOWN
    tile, other = (left, right) if isinstance(left, IndexTile) else (right, left)
    offset = const_int(other) if isinstance(other, Const) else None
    if (
        isinstance(tile, IndexTile)
        and offset is not None
        and len(tile.shape) == len(shape)
        and (isinstance(op, ast.Add) or (isinstance(op, ast.Sub) and tile is left))
    ):
        sign = 1 if isinstance(op, ast.Add) else -1
        return IndexTile(shape, tuple(None if s is None else s + sign * offset for s in tile.starts))
    return IndexTile(shape)


def _both(a: IndexMask, b: IndexMask) -> IndexMask:
    rank = max(len(a.counts), len(b.counts))
    pad_a = (None,) * (rank - len(a.counts)) + a.counts
    pad_b = (None,) * (rank - len(b.counts)) + b.counts
    return IndexMask(
        tuple(x if y is None else y if x is None else min(x, y) for x, y in zip(pad_a, pad_b, strict=True))
    )


_FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
}


def tile_compare(op: ast.cmpop, left: Value, right: Value) -> Value:
    """``i_p < n`` (``<``, ``<=``, ``>``, ``>=``; either side the tile): an ``IndexMask`` when the tile has one
    dim longer than 1, of known size and first value, and ``n`` is a known integer; else UNKNOWN."""
    kind = type(op)
    if isinstance(right, IndexTile) and not isinstance(left, IndexTile):
        left, right, kind = right, left, _FLIPPED.get(kind, kind)
    bound = const_int(right)
    if not isinstance(left, IndexTile) or bound is None or kind not in _FLIPPED:
        return UNKNOWN
    long = [d for d, size in enumerate(left.shape) if const_int(size) != 1]
    if len(long) != 1:
        return UNKNOWN
    dim = long[0]
    size, first = const_int(left.shape[dim]), left.start(dim)
    if size is None or first is None:
        return UNKNOWN
    below = min(max(bound - first + (kind is ast.LtE), 0), size)  # indices < bound (<= bound for LtE)
    above = min(max(bound - first + (kind is ast.Gt), 0), size)  # indices <= bound for Gt, < bound for GtE
    kept = below if kind in (ast.Lt, ast.LtE) else size - above
    return IndexMask(tuple(kept if d == dim else None for d in range(len(left.shape))))


def masked_shape(shape: tuple[Value, ...], mask: IndexMask) -> tuple[Value, ...]:
    """An index-tile access ``shape`` (the broadcast of its index tiles first) reduced to what ``mask`` keeps."""
    out = list(shape)
    for d, kept in enumerate(mask.counts[: len(out)]):
        size = const_int(out[d])
        if kept is not None and (size is None or kept < size):
            out[d] = Const(kept)
    return tuple(out)


def broadcast(shapes: list[tuple[Value, ...]]) -> tuple[Value, ...] | None:
    """NumPy broadcasting of known shapes (a dim of 1 stretches); None when two sizes disagree."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[Value] = []
    for i in range(rank):
        dim: Value = Const(1)
        for shape in shapes:
            at = i - (rank - len(shape))
            if at < 0:
                continue
            here = shape[at]
            if const_int(here) == 1:
                continue
            if const_int(dim) == 1:
                dim = here
            elif const_int(here) is None or const_int(dim) is None:
                dim = UNKNOWN
            elif const_int(here) != const_int(dim):
                return None
        out.append(dim)
    return tuple(out)


def indexed_shape(shape: tuple[Value, ...] | None, keys: list[Value]) -> tuple[Value, ...] | None:
    """The shape ``t[keys]`` selects when some key is an index tile: the broadcast of the index tiles (ints
    count as scalars) followed by the dims no key indexes; None when it is not known (slices among the keys,
    more keys than dims, a 1-D arange: that is the error ``err_1d_arange_not_supported``). A tensor of unknown
    shape (a kernel argument) is taken to be indexed in every dim, as the legacy tutorials do (inferred): the
    index tiles alone then give the shape."""
    if shape is not None and len(keys) > len(shape):
        return None
    tiles: list[tuple[Value, ...]] = []
    for key in keys:
        if isinstance(key, IndexTile):
            if len(key.shape) < 2:
                return None
            tiles.append(key.shape)
        elif isinstance(key, Const) and isinstance(key.value, int) and not isinstance(key.value, bool):
            tiles.append(())
        else:
            return None
    selected = broadcast(tiles)
    if selected is None:
        return None
    return (*selected, *(shape or ())[len(keys) :])


def block_tile(t: TensorVal, keys: list[Value]) -> tuple[TensorVal, list[Value]] | None:
    """For ``t[keys]`` on a legacy block tensor whose leading keys pick one block (scalars, known or not): the
    block's tile ``(P, F...)`` and the keys left to index it; None otherwise."""
    storage = t.storage
    if t.shape is not None or storage is None or not storage.block_dims or storage.shape is None:
        return None
    blocks = storage.block_dims
    if len(keys) < blocks or any(isinstance(k, (SliceVal, IndexTile, TensorVal)) for k in keys[:blocks]):
        return None
    tile_shape = (storage.shape[0], *storage.shape[1 + blocks :])
    return TensorVal(tile_shape, t.dtype, t.buffer, storage), keys[blocks:]


def _is_none(value: Value) -> bool:
    return isinstance(value, Const) and value.value is None
