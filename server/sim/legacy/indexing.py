"""Indexing tensors the legacy way: index tiles as subscripts (``t[i_p, i_f]``) and block dimensions.

``t[i_p + 128 * k, i_f]`` follows NumPy advanced indexing over the view's elements (ints, slices and index tiles
mixed; the result takes the broadcast shape of the index tiles) [v2.26.1 nki.language.arange: "t[i_p, i_f]"
examples]; the NumPy rules for the mixed cases are inferred. A tile of integers in the key gathers by its values
(``data[b, idx_tile, i_f]``, nki-samples' resize kernel). Regular results are strided views, like slices. Elements an index tile (or, in a legacy kernel, a
slice) puts outside the tensor are kept as out-of-bounds positions: reading or writing them fails unless a
``mask=`` excludes them (``masks``); legacy kernels slice past the end and mask the tail (nki-samples' vision
kernels), so that is inferred to be legal there.

Block dimensions: ``nl.ndarray((B, nl.par_dim(P), F))`` has its partition axis at position 1; the leading axes
are blocks, each a separate (P, F) tile [v2.26.1 nki.language.par_dim; MIG "Removing block dimensions"]. The
storage is allocated partition-first, ``(P, B, F)``, so capacity is counted per partition (B*F elements), and the
kernel sees the ``(B, P, F)`` view; indexing a block drops it, as for any other axis.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.legacy.detect import legacy_semantics
from nki_studio.sim.legacy.index_tiles import IndexTile
from nki_studio.sim.tensor import NkiTensor, Storage, read

# Storages laid out with block dimensions in front of the partition axis (their views index NumPy-style).
_BLOCKED: weakref.WeakSet[Storage] = weakref.WeakSet()


class ParDim(int):
    """``nl.par_dim(n)``: marks the partition axis of an allocation shape."""

    def __repr__(self) -> str:
        return f"par_dim({int(self)})"


def par_dim(n: int) -> ParDim:
    """``nl.par_dim(n)``: the partition axis of size ``n`` in an ``nl.ndarray`` shape [v2.26.1 nki.language.par_dim]."""
    return ParDim(int(n))


def partition_axis(shape: object) -> int:
    """Where ``nl.par_dim`` sits in an allocation shape (0 when it is absent)."""
    if isinstance(shape, (tuple, list)):
        marked = [i for i, d in enumerate(shape) if isinstance(d, ParDim)]
        if len(marked) > 1:
            raise SimulationError(
                f"nl.par_dim appears {len(marked)} times in shape {list(shape)}; one partition axis"
            )
        return marked[0] if marked else 0
    return 0


def blocked(tensor: NkiTensor, axis: int) -> NkiTensor:
    """The kernel's view of a partition-first storage whose partition axis belongs at ``axis``."""
    if axis == 0:
        return tensor
    _BLOCKED.add(tensor.storage)
    order = [*range(1, axis + 1), 0, *range(axis + 1, tensor.ndim)]
    shape = tuple(tensor.shape[d] for d in order)
    strides = tuple(tensor.strides[d] for d in order)
    return tensor._derive(shape, strides, tensor.offset)


def _overruns(tensor: NkiTensor, keys: tuple[object, ...]) -> bool:
    """A slice reaching past its dimension: legacy code masks such tails, current NKI rejects them."""
    for d, k in enumerate(keys[: tensor.ndim]):
        if isinstance(k, slice) and isinstance(k.stop, int) and k.stop > tensor.shape[d]:
            return legacy_semantics()
    return False


def _tile_index(k: object) -> bool:
    """A tile of several integers used as a subscript: a legacy gather (``data[b, idx_tile, i_f]``)."""
    return isinstance(k, NkiTensor) and k.size > 1


def handles(tensor: NkiTensor, keys: tuple[object, ...]) -> bool:
    """Whether ``tensor[keys]`` is legacy indexing: an index tile (or a tile of indices) in the key, a
    block-dimension tensor, or (legacy kernels only) a slice past the end."""
    return (
        tensor.storage in _BLOCKED
        or any(isinstance(k, IndexTile) or _tile_index(k) for k in keys)
        or _overruns(tensor, keys)
    )


def _strided(tensor: NkiTensor, gathered: np.ndarray) -> NkiTensor:
    """The gather as a strided view when its positions are affine (what ``t[i_p, i_f]`` over a plain tile gives),
    so every instruction treats it as the slice it is; else a gather view."""
    if gathered.size and gathered.min() >= 0:
        first = int(gathered.flat[0])
        steps = tuple(
            int(gathered[(0,) * k + (1,) + (0,) * (gathered.ndim - k - 1)]) - first if n > 1 else 0
            for k, n in enumerate(gathered.shape)
        )
        if min(steps, default=0) >= 0 and np.array_equal(
            tensor._positions(gathered.shape, steps, first), gathered
        ):
            return tensor._derive(tuple(gathered.shape), steps, first)
    return tensor._derive(tuple(gathered.shape), (), 0, index=gathered)


def _positions(tensor: NkiTensor) -> np.ndarray:
    if tensor._index is not None:
        return tensor._index
    return tensor._positions(tensor.shape, tensor.strides, tensor.offset)


def index(tensor: NkiTensor, keys: tuple[object, ...]) -> NkiTensor:
    """``tensor[keys]`` with legacy semantics: a gather view whose elements outside the tensor are marked -1.

    The positions are padded with -1 past each dimension's end as far as the key reaches (negative index-tile
    values land in the padding too), so NumPy indexing of the padded positions gives exactly the out-of-bounds
    elements."""
    if any(k is Ellipsis for k in keys):
        at = next(i for i, k in enumerate(keys) if k is Ellipsis)
        keys = keys[:at] + (slice(None),) * (tensor.ndim - len(keys) + 1) + keys[at + 1 :]
    if len(keys) > tensor.ndim:
        raise SimulationError(f"too many indices ({len(keys)}) for tensor of shape {list(tensor.shape)}")
    pad = [0] * tensor.ndim
    subscripts: list[Any] = []
    for d, k in enumerate(keys):
        n = tensor.shape[d]
        if isinstance(k, IndexTile) or _tile_index(k):
            # A tile of indices is read now, as the DMA that uses the view reads it (inferred timing).
            values = k.values if isinstance(k, IndexTile) else read(k, raw=True).astype(np.int64)  # type: ignore[arg-type]
            if values.size and (values.min() < 0 or values.max() >= n):
                pad[d] = max(int(values.max()) + 1, n + 1) - n
                values = np.where(values < 0, n + pad[d] - 1, values)
            subscripts.append(values)
        elif isinstance(k, slice):
            if isinstance(k.stop, int) and k.stop > n:
                pad[d] = k.stop - n
            subscripts.append(k)
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            subscripts.append(k)
        elif hasattr(k, "sim_value"):
            subscripts.append(k.sim_value())
        else:
            raise SimulationError(
                f"legacy indexing: subscript {k!r} (dim {d}) must be an int, a slice or an nl.arange/nl.mgrid tile"
            )
    positions = _positions(tensor)
    if any(pad):
        positions = np.pad(positions, [(0, p) for p in pad], constant_values=-1)
    try:
        gathered = positions[tuple(subscripts)]
    except IndexError as exc:
        raise SimulationError(f"legacy indexing of tensor {list(tensor.shape)}: {exc}") from None
    if gathered.ndim == 0:
        gathered = gathered.reshape(1)
    return _strided(tensor, gathered)
