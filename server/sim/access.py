"""Reading and writing the elements of a tensor view: :func:`read`, :func:`write`, :func:`out_of_bounds`.

Every instruction uses two functions:

* :func:`read` — the view's values as float32 (``raw=True``: the stored values, e.g. exact int32) as a
  read-only array (it may share memory with the tensor; copy before modifying). In strict mode, reading
  an element that was never written raises ``UninitializedReadError`` naming the kernel line.
* :func:`write` — stores values into the view with the dtype's rounding (``dtypes.cast``), optionally
  accumulating (PSUM), and marks the elements written.

Below ``views`` and ``tensor`` (which import them), so view methods that read an index operand need no import of
``tensor``; ``tensor`` re-exports both.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from nki_studio.sim import context, dtypes, races
from nki_studio.sim.errors import SimulationError, UninitializedReadError
from nki_studio.sim.memory import MemoryRegion

if TYPE_CHECKING:
    from nki_studio.sim.tensor import NkiTensor


def out_of_bounds(t: NkiTensor) -> np.ndarray | None:
    """Boolean mask of elements an ``.ap()`` pattern or runtime offset (``scalar_offset``,
    ``vector_offset``) put outside the storage, or None when every element is in range. Instructions honouring
    ``oob_mode=skip`` leave those elements alone: ``write(dst, read(src, oob_fill=0), where=~mask)``."""
    if t._index is None:
        return None
    mask = t._index < 0
    return mask if mask.any() else None


def _oob_error(t: NkiTensor, mask: np.ndarray) -> SimulationError:
    first = [int(i) for i in np.argwhere(mask)[0]]
    return SimulationError(
        f"out-of-bounds access: element {first} of the {t.name or 'tensor'} view {list(t.shape)} lies outside its "
        f"{t.buffer.value} storage (its access pattern or runtime offset reaches outside the storage; "
        "oob_mode=skip skips such elements)"
    )


def touch(t: NkiTensor) -> None:
    """Record an access of ``t``'s on-chip storage now (its live range); of a legacy block tensor the compiler
    allocates block by block, the blocks ``t`` reaches (``memory.MemoryTracker.by_block``)."""
    live = t._st.live
    if live is None:
        return
    if not live.block_bytes:
        live.touch()
        return
    st = t._st
    # partition-first storage (P, B..., F): a position's block is its offset within the partition over a block
    per_partition = st.data.size // st.shape[0]
    if t._index is not None:
        positions = t._index[t._index >= 0]  # out-of-bounds elements reach no block
    else:  # a dim stepping whole partitions reaches no other block: left out (the partition dim's 128 rows)
        kept = [d for d, step in enumerate(t.strides) if step % per_partition]
        positions = t._positions(tuple(t.shape[d] for d in kept), tuple(t.strides[d] for d in kept), t.offset)
    reached = np.zeros(per_partition // st.block_elements, np.bool_)
    reached[positions % per_partition // st.block_elements] = True
    live.touch(np.flatnonzero(reached).tolist())


def read(t: NkiTensor, *, raw: bool = False, oob_fill: float | None = None) -> np.ndarray:
    """The values of view ``t``: float32, or the stored dtype with ``raw=True``. Read-only; may alias.

    Out-of-bounds elements of a runtime-offset view raise, unless ``oob_fill`` gives their value. In an
    untaken ``nl.if_else`` branch (operand values an instruction reads while it is validated) nothing is
    accessed: no run-time check raises (out-of-bounds elements read as 0) and no live range grows.
    """
    untaken = context.untaken()
    if not untaken:
        touch(t)
    oob = out_of_bounds(t)
    if oob is not None:
        if oob_fill is None and not untaken:
            raise _oob_error(t, oob)
        safe = t._derive(t.shape, (), 0, index=np.where(oob, 0, t._index))  # type: ignore[arg-type]
        vals = read(safe, raw=raw)
        return np.where(oob, np.asarray(oob_fill or 0, dtype=vals.dtype), vals)
    arr = t._np()
    mask = t._mask_view()
    if mask is not None and not untaken and not mask.all():
        first = tuple(int(i) for i in np.argwhere(~mask)[0])
        raise UninitializedReadError(
            f"read of never-written memory: {t.name or 'tensor'} {list(t.shape)} ({t.buffer.value}) element "
            f"{list(first)} was never written"
        )
    if not raw:
        arr = dtypes.compute_values(arr)
    if arr.flags.writeable and arr.base is not None:
        arr = arr.view()
        arr.flags.writeable = False
    return arr


def _fit(values: np.ndarray, shape: tuple[int, ...], name: str) -> np.ndarray:
    if values.shape == shape:
        return values
    if values.size == math.prod(shape) and values.ndim > 0:
        return values.reshape(shape)  # same element count: row-major re-layout (isa.md §0.2)
    try:
        return np.broadcast_to(values, shape)
    except ValueError:
        raise SimulationError(
            f"cannot write values of shape {list(values.shape)} into {name} {list(shape)}"
        ) from None


def write(
    dst: NkiTensor, values: object, *, accumulate: bool = False, where: np.ndarray | None = None
) -> None:
    """Store ``values`` (array or scalar) into view ``dst`` with the dtype's rounding.

    Values whose shape differs but whose element count matches are laid out row-major; otherwise NumPy
    broadcasting applies. ``accumulate=True`` adds to the current contents in float32 first (PSUM).
    ``where`` (boolean, ``dst``'s shape) writes only the selected elements; out-of-bounds elements of a
    runtime-offset ``dst`` must be excluded by it, else the write raises.
    """
    touch(dst)
    vals = np.asarray(values)
    vals = _fit(vals, dst.shape, dst.name or "tensor")
    oob = out_of_bounds(dst)
    if where is not None or oob is not None:
        keep = (
            np.ones(dst.shape, np.bool_)
            if where is None
            else np.broadcast_to(np.asarray(where, np.bool_), dst.shape)
        )
        if oob is not None and (keep & oob).any():
            raise _oob_error(dst, keep & oob)
        if not keep.all():
            index = (
                dst._index if dst._index is not None else dst._positions(dst.shape, dst.strides, dst.offset)
            )
            sub = dst._derive((int(keep.sum()),), (), 0, index=index[keep])
            write(
                sub,
                vals[keep] if vals.shape == dst.shape else np.broadcast_to(vals, dst.shape)[keep],
                accumulate=accumulate,
            )
            return
    if accumulate:
        vals = dtypes.compute_values(dst._np()) + vals
    st = dst._st
    st.dirty = True
    if dst._data is st.data:
        out = dtypes.cast(vals, dst.dtype, st.precise)
    else:
        out = dtypes.cast(vals, dst._data.dtype, True)
    ctx = context.current_or_none() if st.region is MemoryRegion.shared_hbm else None
    # Both cores see this storage; accumulating writes (DMA accumulate) commute, so only plain writes race.
    if ctx is not None and ctx.options.lnc > 1 and dst.size and not accumulate:
        positions = (
            dst._index if dst._index is not None else dst._positions(dst.shape, dst.strides, dst.offset)
        )
        races.record_write(dst, positions, out)
    if dst._index is not None:
        dst._data[dst._index] = out
    elif dst.size:
        dst._np()[...] = out
    if st.written is not None and dst._data is st.data:
        if dst._index is not None:
            st.written[dst._index] = True
        elif dst.size:
            np.ndarray(dst.shape, np.bool_, buffer=st.written, offset=dst.offset, strides=dst.strides)[
                ...
            ] = True
