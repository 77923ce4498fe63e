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
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nki_studio.model.arithmetic import binop
from nki_studio.model.values import UNKNOWN, Const, Seq, SliceVal, TensorVal, Value, const_int


@dataclass(frozen=True, eq=False)
class IndexTile(Value):
    """An index tile: its shape (each dim a ``Const`` with its derivation, or UNKNOWN)."""

    shape: tuple[Value, ...]


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
        return IndexTile((_span_size(Const(0), args[0], Const(1)),))
    if len(args) in (2, 3):
        return IndexTile((_span_size(args[0], args[1], args[2] if len(args) == 3 else Const(1)),))
    return UNKNOWN


def mgrid(key: Value) -> Value:
    """``nl.mgrid[a:b, c:d, ...]``: one index tile per slice, each spanning its own dim."""
    keys = key.items if isinstance(key, Seq) and key.exact else [key]
    sizes: list[Value] = []
    for item in keys:
        if not isinstance(item, SliceVal):
            return UNKNOWN
        start = Const(0) if _is_none(item.start) else item.start
        step = Const(1) if _is_none(item.step) else item.step
        sizes.append(_span_size(start, item.stop, step))
    tiles: list[Value] = [
        IndexTile(tuple(size if i == axis else Const(1) for i in range(len(sizes))))
        for axis, size in enumerate(sizes)
    ]
    return IndexGrid(tiles)


def grid_attribute(grid: IndexGrid, attr: str) -> Value:
    """``grid.p`` / ``grid.x``: the partition and the first free index tile."""
    at = _GRID_FIELDS.get(attr)
    return grid.items[at] if at is not None and at < len(grid.items) else UNKNOWN


def tile_subscript(tile: IndexTile, key: Value) -> Value:
    """``i[:, None]`` / ``i[None, :]``: new axes around the index tile's dims (full slices keep a dim)."""
    keys = key.items if isinstance(key, Seq) and key.exact else [key]
    dims = iter(tile.shape)
    shape: list[Value] = []
    for item in keys:
        if _is_none(item):
            shape.append(Const(1))
        elif (
            isinstance(item, SliceVal)
            and _is_none(item.start)
            and _is_none(item.stop)
            and (_is_none(item.step) or const_int(item.step) == 1)
        ):
            shape.append(next(dims, UNKNOWN))
        else:
            return UNKNOWN
    shape.extend(dims)
    return IndexTile(tuple(shape))


def tile_binop(left: Value, right: Value) -> Value:
    """Arithmetic with an index tile (``i_p + 128 * k``, ``nl.program_id(0) * 128 + i_p``; any operator): the
    broadcast of the operands' shapes. An operand the interpreter does not know is taken as a scalar (an
    SPMD program id, a loop index: what legacy index expressions add, inferred from the legacy tutorials)."""
    if not all(isinstance(v, (IndexTile, Const)) or not v.known for v in (left, right)):
        return UNKNOWN
    shape = broadcast([v.shape if isinstance(v, IndexTile) else () for v in (left, right)])
    return IndexTile(shape) if shape is not None else UNKNOWN


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
