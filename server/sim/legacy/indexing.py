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
kernel sees the ``(B, P, F)`` view; indexing a block drops it, as for any other axis. The storage records the
elements per partition of one block (``Storage.block_elements``, and so the trace's ``Operand.block_bytes``): the
compiler allocates each block's tile on its own, from its first write to its last read, so the blocks need not be
live together ("the physical tiles may not be alive in the memory simultaneously", MIG "What are block
dimensions?"), which the estimate's spill model follows (``estimate.spills``).
"""

from __future__ import annotations

import math
import sys

import numpy as np
from nki_studio.sim.access import read
from nki_studio.sim.errors import NotImplementedInSimulator, SimulationError
from nki_studio.sim.legacy.detect import legacy_semantics
from nki_studio.sim.legacy.index_tiles import IndexTile, Predicate, predicate_values
from nki_studio.sim.legacy_hooks import register
from nki_studio.sim.scalars import index_value
from nki_studio.sim.tensor import DynSlice, NkiTensor


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


def blocked(tensor: NkiTensor, axis: int, blocks: tuple[int, ...] = ()) -> NkiTensor:
    """The kernel's view of a partition-first storage whose partition axis belongs at ``axis``.

    ``blocks`` (the kernel's block counts) may exceed the storage's: a modular allocation (``ncc.sbuf.mod_alloc(...,
    num_free_tiles=(n,))``) rotates block ``b`` onto physical tile ``b % n`` [v2.26.1 nki.compiler.sbuf.mod_alloc],
    so the view gathers each block from its physical tile."""
    if axis == 0:
        return tensor
    # at least 1: the mark of a block tensor (its views index NumPy-style), also when a free dim is empty
    tensor.storage.block_elements = max(math.prod(tensor.shape[axis + 1 :]), 1)
    order = [*range(1, axis + 1), 0, *range(axis + 1, tensor.ndim)]
    shape = tuple(tensor.shape[d] for d in order)
    strides = tuple(tensor.strides[d] for d in order)
    view = tensor._derive(shape, strides, tensor.offset)
    if not blocks or tuple(blocks) == shape[:axis]:
        return view
    rotation = np.ix_(*(np.arange(b) % n for b, n in zip(blocks, shape[:axis], strict=True)))
    positions = view._positions(shape, strides, tensor.offset)[rotation]
    return tensor._derive(tuple(positions.shape), (), 0, index=positions)


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
        tensor.storage.block_elements > 0
        or any(isinstance(k, (IndexTile, Predicate)) or _tile_index(k) for k in keys)
        or _overruns(tensor, keys)
    )


def _masked_operand(tensor: NkiTensor, mask: Predicate) -> NkiTensor:
    """``t[i_p, i_f][mask]``: an operand view subscripted by a predicate (nki-samples' rmsnorm_quant bounds a
    matmul's moving operand so). No page documents the form; that it limits the elements the instruction reads,
    like ``mask=`` for that operand alone, is inferred. A mask holding on the whole view selects it whole; one
    excluding elements is not simulated (what the instruction reads there is not known), never guessed."""
    try:
        holds = np.broadcast_to(predicate_values(mask), tensor.shape)
    except ValueError:
        raise SimulationError(
            f"legacy operand mask: a mask of shape {list(predicate_values(mask).shape)} does not cover a view of "
            f"shape {list(tensor.shape)}"
        ) from None
    if not holds.all():
        raise NotImplementedInSimulator(
            "t[...][mask] excluding elements",
            "an operand subscripted by a mask that does not hold on all of it; bound the view by a slice instead",
        )
    return tensor


def affine_view(tensor: NkiTensor, gathered: np.ndarray) -> NkiTensor:
    """The view of ``tensor``'s storage at flat positions ``gathered``: a strided view when they are affine (what
    ``t[i_p, i_f]`` over a plain tile gives), so every instruction treats it as the slice it is; else a gather
    view."""
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


def _subscript(tensor: NkiTensor, d: int, k: object) -> tuple[bool, np.ndarray]:
    """Dimension ``d``'s subscript as (advanced?, the indices it selects); out-of-range indices are kept."""
    n = tensor.shape[d]
    if isinstance(k, IndexTile):
        return True, k.values
    if _tile_index(k):
        # A tile of indices is read now, as the DMA that uses the view reads it (inferred timing).
        return True, read(k, raw=True).astype(np.int64)  # type: ignore[arg-type]
    if isinstance(k, slice):
        step = 1 if k.step is None else int(k.step)
        start = 0 if k.start is None else int(k.start)
        stop = n if k.stop is None else int(k.stop)
        start, stop = start + n if start < 0 else start, stop + n if stop < 0 else stop
        return False, np.arange(start, stop, step, dtype=np.int64)
    if isinstance(k, DynSlice):
        start = index_value(k.start)
        return False, np.arange(start, start + k.size * k.step, k.step, dtype=np.int64)
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
        return True, np.asarray(int(k) + n if k < 0 else int(k), dtype=np.int64)
    if hasattr(k, "sim_value"):
        return True, np.asarray(k.sim_value(), dtype=np.int64)
    raise SimulationError(
        f"legacy indexing: subscript {k!r} (dim {d}) must be an int, a slice or an nl.arange/nl.mgrid tile"
    )


def index(tensor: NkiTensor, keys: tuple[object, ...]) -> NkiTensor:
    """``tensor[keys]`` with legacy semantics: a view whose elements outside the tensor are marked -1.

    NumPy's advanced-indexing layout: the index tiles (and ints) broadcast together; their axes stand where
    they are when adjacent, in front otherwise; slices keep their axes. Only the selected positions are computed.
    """
    if len(keys) == 1 and isinstance(keys[0], Predicate):
        return _masked_operand(tensor, keys[0])
    if any(k is Ellipsis for k in keys):
        at = next(i for i, k in enumerate(keys) if k is Ellipsis)
        keys = keys[:at] + (slice(None),) * (tensor.ndim - len(keys) + 1) + keys[at + 1 :]
    if len(keys) > tensor.ndim:
        raise SimulationError(f"too many indices ({len(keys)}) for tensor of shape {list(tensor.shape)}")
    keys = keys + (slice(None),) * (tensor.ndim - len(keys))
    subs = [_subscript(tensor, d, k) for d, k in enumerate(keys)]
    advanced = [d for d, (adv, _) in enumerate(subs) if adv]
    try:
        block = np.broadcast_shapes(*(subs[d][1].shape for d in advanced))
    except ValueError:
        raise SimulationError(
            f"legacy indexing: index tiles of shapes {[list(subs[d][1].shape) for d in advanced]} do not broadcast"
        ) from None
    in_place = not advanced or advanced == list(range(advanced[0], advanced[-1] + 1))
    before = [d for d in range(advanced[0] if advanced else 0) if in_place]
    after = [d for d in range(tensor.ndim) if not subs[d][0] and d not in before]
    shape = (*(len(subs[d][1]) for d in before), *block, *(len(subs[d][1]) for d in after))
    position = np.zeros((1,) * len(shape), np.int64) + (0 if tensor._index is not None else tensor.offset)
    valid = np.ones((1,) * len(shape), np.bool_)
    picks: list[np.ndarray] = []
    for d, (adv, values) in enumerate(subs):
        if adv:
            placed = values.reshape((1,) * (len(block) - values.ndim) + values.shape)
            placed = placed.reshape((1,) * len(before) + placed.shape + (1,) * len(after))
        else:
            axis = before.index(d) if d in before else len(before) + len(block) + after.index(d)
            placed = values.reshape(tuple(len(values) if a == axis else 1 for a in range(len(shape))))
        inside = (placed >= 0) & (placed < tensor.shape[d])
        valid = valid & inside
        placed = np.where(inside, placed, 0)
        if tensor._index is None:
            position = position + placed * tensor.strides[d]
        picks.append(placed)
    if tensor._index is not None:
        position = tensor._index[tuple(picks)]
    gathered = np.where(valid, position, -1)
    gathered = np.broadcast_to(gathered, shape).copy() if gathered.shape != shape else gathered
    if gathered.ndim == 0:
        gathered = gathered.reshape(1)
    if gathered.ndim == 1 and tensor.buffer.on_chip:
        gathered = gathered.reshape(-1, 1)  # on-chip tiles keep a free dim: m_buffer[:, 0] is (128, 1)
    return affine_view(tensor, gathered)


register(index_hook=sys.modules[__name__])
