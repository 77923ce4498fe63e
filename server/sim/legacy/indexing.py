"""Indexing tensors the legacy way: index tiles as subscripts (``t[i_p, i_f]``) and block dimensions.

``t[i_p + 128 * k, i_f]`` follows NumPy advanced indexing over the view's elements (ints, slices and index tiles
mixed; the result takes the broadcast shape of the index tiles) [v2.26.1 nki.language.arange: "t[i_p, i_f]"
examples]; the NumPy rules for the mixed cases are inferred. Elements an index tile puts outside the tensor are
kept as out-of-bounds positions: reading or writing them fails unless a ``mask=`` excludes them (``masks``).

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
from nki_studio.sim.legacy.index_tiles import IndexTile
from nki_studio.sim.tensor import NkiTensor, Storage

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


def handles(tensor: NkiTensor, keys: tuple[object, ...]) -> bool:
    """Whether ``tensor[keys]`` is legacy indexing (an index tile in the key, or a block-dimension tensor)."""
    return tensor.storage in _BLOCKED or any(isinstance(k, IndexTile) for k in keys)


def _positions(tensor: NkiTensor) -> np.ndarray:
    if tensor._index is not None:
        return tensor._index
    return tensor._positions(tensor.shape, tensor.strides, tensor.offset)


def index(tensor: NkiTensor, keys: tuple[object, ...]) -> NkiTensor:
    """``tensor[keys]`` with legacy semantics: a gather view; elements outside the tensor are marked -1."""
    if any(k is Ellipsis for k in keys):
        at = next(i for i, k in enumerate(keys) if k is Ellipsis)
        keys = keys[:at] + (slice(None),) * (tensor.ndim - len(keys) + 1) + keys[at + 1 :]
    if len(keys) > tensor.ndim:
        raise SimulationError(f"too many indices ({len(keys)}) for tensor of shape {list(tensor.shape)}")
    outside: np.ndarray | bool = False
    subscripts: list[Any] = []
    for d, k in enumerate(keys):
        n = tensor.shape[d]
        if isinstance(k, IndexTile):
            values = k.values
            bad = (values < 0) | (values >= n)
            if bad.any():
                outside = outside | bad
                values = np.clip(values, 0, n - 1)
            subscripts.append(values)
        elif isinstance(k, (slice, int, np.integer)) and not isinstance(k, bool):
            subscripts.append(k)
        elif hasattr(k, "sim_value"):
            subscripts.append(k.sim_value())
        else:
            raise SimulationError(
                f"legacy indexing: subscript {k!r} (dim {d}) must be an int, a slice or an nl.arange/nl.mgrid tile"
            )
    positions = _positions(tensor)
    try:
        gathered = positions[tuple(subscripts)]
    except IndexError as exc:
        raise SimulationError(f"legacy indexing of tensor {list(tensor.shape)}: {exc}") from None
    if isinstance(outside, np.ndarray):
        # The index tiles broadcast together, so their out-of-range mask broadcasts onto the result (inferred
        # for index tiles that are not adjacent, where NumPy moves their axes in front).
        mask = np.broadcast_to(outside, gathered.shape) if outside.ndim <= gathered.ndim else outside
        gathered = np.where(mask, -1, gathered)
    if gathered.ndim == 0:
        gathered = gathered.reshape(1)
    return tensor._derive(tuple(gathered.shape), (), 0, index=gathered)
