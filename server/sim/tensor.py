"""``NkiTensor``: a storage (NumPy buffer in a memory region) plus a strided view (language.md §5).

Element ``(i0, ..., in-1)`` of a view lives at ``storage.flat[offset + sum(strides[k] * i_k)]``. Views made
by runtime gathers (``.ap(vector_offset=)``, ``vector_select``, ``indirect``) hold an explicit array of flat
positions instead of strides; they support indexing, ``permute`` and ``reshape``.

Every instruction uses two functions:

* :func:`read` — the view's values as float32 (``raw=True``: the stored values, e.g. exact int32) as a
  read-only array (it may share memory with the tensor; copy before modifying). In strict mode, reading
  an element that was never written raises ``UninitializedReadError`` naming the kernel line.
* :func:`write` — stores values into the view with the dtype's rounding (``dtypes.cast``), optionally
  accumulating (PSUM), and marks the elements written.

View methods and their checks live in ``views.py`` (mixed into ``NkiTensor``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from nki_studio.sim import context, dtypes, races
from nki_studio.sim.errors import SimulationError, UninitializedReadError
from nki_studio.sim.legacy.operators import TileOperators
from nki_studio.sim.memory import LiveRange, MemoryRegion
from nki_studio.sim.views import ViewMixin


class Storage:
    """One allocation: a flat NumPy buffer in a memory region, plus a written-mask in strict mode."""

    __slots__ = (
        "__weakref__",
        "data",
        "dirty",
        "dtype",
        "live",
        "name",
        "precise",
        "region",
        "shape",
        "written",
    )

    def __init__(
        self,
        data: np.ndarray,
        dtype: np.dtype[Any],
        region: MemoryRegion,
        name: str,
        shape: tuple[int, ...],
        precise: bool,
        written: np.ndarray | None,
    ) -> None:
        self.data = data  # 1-D, storage dtype
        self.dtype = dtype  # the declared NKI dtype
        self.region = region
        self.name = name
        self.shape = shape
        self.precise = precise
        self.written = written  # bool per element, strict mode only
        self.dirty = False  # set by every write (tells which kernel arguments were modified)
        # On-chip storages: touched by every read and write (capacity comes from liveness).
        self.live: LiveRange | None = None


class DynSlice:
    """``nl.ds(start, size, step=1)``: the slice ``start : start + size*step : step`` (start may be a register)."""

    __slots__ = ("size", "start", "step")

    def __init__(self, start: object, size: int, step: int = 1) -> None:
        self.start = start
        self.size = int(size)
        self.step = int(step)

    def __repr__(self) -> str:
        return f"ds({self.start!r}, {self.size})"


def ds(start: object, size: int, step: int = 1) -> DynSlice:
    """``nl.ds``: a slice of ``size`` elements from ``start``."""
    return DynSlice(start, size, step)


def _dense_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    return tuple(strides)


class NkiTensor(ViewMixin, TileOperators):
    """A view over a storage. Attributes as language.md §5.1: shape, strides, offset, name, dtype, buffer."""

    __slots__ = (
        "__weakref__",
        "_data",
        "_index",
        "_indirect",
        "_size",
        "_st",
        "dtype",
        "name",
        "offset",
        "shape",
        "strides",
    )

    def __init__(
        self,
        storage: Storage,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        *,
        data: np.ndarray | None = None,
        dtype: np.dtype[Any] | None = None,
        index: np.ndarray | None = None,
        name: str | None = None,
    ) -> None:
        self._st = storage
        self._data = storage.data if data is None else data  # storage buffer, possibly reinterpreted
        self.dtype = storage.dtype if dtype is None else dtype
        self.shape = tuple(map(int, shape))
        self.strides = tuple(map(int, strides))
        self.offset = int(offset)
        self._size = math.prod(self.shape)  # views are immutable; every operand check asks for the size
        self._index = index
        self.name = storage.name if name is None else name
        # ``.indirect()`` views keep (base view, index values, num_elem) so an engine can regroup them.
        self._indirect: tuple[NkiTensor, np.ndarray, int, int] | None = None  # ... and the current group

    # ----- attributes -------------------------------------------------------------------------------
    @property
    def buffer(self) -> MemoryRegion:
        """The memory region of the storage."""
        return self._st.region

    @property
    def data(self) -> NkiTensor:
        """The tensor itself: the 0.7 API pages write ``t.data`` for any operand, tensor or grid (inferred
        from the ``nl.NkiTileGrid`` example, which passes ``nl.ndarray(...).data`` to ``nisa.dma_copy``)."""
        return self

    @property
    def ndim(self) -> int:
        """Number of view dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements in the view."""
        return self._size

    @property
    def dtype_name(self) -> str:
        """NKI name of the dtype."""
        return dtypes.dtype_name(self.dtype)

    @property
    def storage(self) -> Storage:
        """The underlying allocation."""
        return self._st

    def __repr__(self) -> str:
        return f"NkiTensor(name={self.name!r}, shape={self.shape}, dtype={self.dtype_name}, buffer={self.buffer!r})"

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 0

    def sim_value(self) -> int:
        """Value of a 1-element integer tile used as a runtime index (dynamic ``select``/``ds``)."""
        if self.size != 1:
            raise SimulationError(f"a tensor used as an index must have one element, not shape {self.shape}")
        return int(read(self, raw=True).reshape(-1)[0])

    def _derive(
        self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int, index: np.ndarray | None = None
    ) -> NkiTensor:
        return NkiTensor(
            self._st, shape, strides, offset, data=self._data, dtype=self.dtype, index=index, name=self.name
        )

    # ----- NumPy access -----------------------------------------------------------------------------
    def _np(self) -> np.ndarray:
        """A NumPy view of the elements (strided views) or a gathered copy (index views)."""
        d = self._data
        if self._index is not None:
            return d[self._index]
        if self.size == 0:
            return np.empty(self.shape, d.dtype)
        isz = d.itemsize
        return np.ndarray(
            self.shape,
            d.dtype,
            buffer=d,
            offset=self.offset * isz,
            strides=tuple(s * isz for s in self.strides),
        )

    def _mask_view(self) -> np.ndarray | None:
        written = self._st.written
        if written is None or self._data is not self._st.data:
            return None  # strict tracking covers the storage's own dtype only
        if self._index is not None:
            return written[self._index]
        if self.size == 0:
            return None
        return np.ndarray(self.shape, np.bool_, buffer=written, offset=self.offset, strides=self.strides)


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


def read(t: NkiTensor, *, raw: bool = False, oob_fill: float | None = None) -> np.ndarray:
    """The values of view ``t``: float32, or the stored dtype with ``raw=True``. Read-only; may alias.

    Out-of-bounds elements of a runtime-offset view raise, unless ``oob_fill`` gives their value. In an
    untaken ``nl.if_else`` branch (operand values an instruction reads while it is validated) nothing is
    accessed: no run-time check raises (out-of-bounds elements read as 0) and no live range grows.
    """
    untaken = context.untaken()
    if t._st.live is not None and not untaken:
        t._st.live.touch()
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
    if dst._st.live is not None:
        dst._st.live.touch()
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


def allocate(
    shape: object,
    dtype: object,
    buffer: MemoryRegion = MemoryRegion.sbuf,
    name: str = "",
    fill: float | None = None,
    address: tuple[int, int] | None = None,
) -> NkiTensor:
    """Create a tensor (``nl.ndarray`` and friends); on-chip ones are accounted against capacity.

    ``fill=None`` fills with the official sentinels (NaN / 4) and leaves it unwritten for strict mode.
    """
    if isinstance(shape, int):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise SimulationError(f"shape must be a tuple of ints, not {shape!r}")
    shp = tuple(int(d) for d in shape)
    if any(d < 0 for d in shp):
        raise SimulationError(f"negative dimension in shape {list(shp)}")
    dt = dtypes.to_dtype(dtype)
    if not isinstance(buffer, MemoryRegion):
        raise SimulationError(f"buffer must be nl.sbuf, nl.psum, nl.hbm or nl.shared_hbm, not {buffer!r}")
    ctx = context.current()
    core = context.current_core()
    if buffer is MemoryRegion.shared_hbm and core.num_cores > 1:
        return _shared_allocation(ctx, core, shp, dt, name, fill)
    return NkiTensor(
        _new_storage(ctx, core, shp, dt, buffer, name, fill, address), shp, _dense_strides(shp), 0
    )


def _shared_allocation(
    ctx: context.SimContext,
    core: context.CoreState,
    shp: tuple[int, ...],
    dt: np.dtype[Any],
    name: str,
    fill: float | None,
) -> NkiTensor:
    """Under LNC>1 the n-th shared_hbm allocation of every core is one tensor (identical control flow)."""
    key = (core.rank, core.shared_hbm_allocations)
    core.shared_hbm_allocations += 1
    st = ctx.shared_hbm.get(key)
    if st is None:
        st = _new_storage(ctx, core, shp, dt, MemoryRegion.shared_hbm, name, fill)
        ctx.shared_hbm[key] = st
    if st.shape != shp or st.dtype != dt:
        raise SimulationError(
            f"LNC cores allocated different shared_hbm tensors ({list(st.shape)} {dtypes.dtype_name(st.dtype)} vs "
            f"{list(shp)} {dtypes.dtype_name(dt)}): both cores must run the same control flow"
        )
    return NkiTensor(st, shp, _dense_strides(shp), 0)


def _new_storage(
    ctx: context.SimContext,
    core: context.CoreState,
    shp: tuple[int, ...],
    dt: np.dtype[Any],
    buffer: MemoryRegion,
    name: str,
    fill: float | None,
    address: tuple[int, int] | None = None,
) -> Storage:
    precise = ctx.options.precise
    store = dtypes.storage_dtype(dt, precise)
    n = math.prod(shp)
    data = np.empty(n, store)
    if fill is None:
        data.fill(dtypes.sentinel(dt))
    else:
        data[...] = dtypes.cast(
            np.asarray(fill, dtype=np.float32 if dtypes.is_float(dt) else np.float64), dt, precise
        )
    written = None
    if ctx.options.strict:
        written = np.full(n, fill is not None, np.bool_)
    st = Storage(data, dt, buffer, name, shp, precise, written)
    st.live = core.memory.allocate(st, buffer, shp, dtypes.dtype_name(dt), dt.itemsize, name, address)
    if fill is not None and st.live is not None:
        st.live.created_with_contents()  # nl.zeros ...: written by definition, by no issued instruction
    return st


def from_array(
    array: np.ndarray, buffer: MemoryRegion = MemoryRegion.shared_hbm, name: str = "", precise: bool = True
) -> tuple[NkiTensor, bool]:
    """Wrap a kernel argument. Returns ``(tensor, copied)``; when not copied, writes land in ``array``.

    Memory is shared when the array is C-contiguous and its dtype is its own storage dtype.
    """
    dt = array.dtype
    store = dtypes.storage_dtype(dt, precise)
    if array.flags.c_contiguous and store == dt and array.flags.writeable:
        data = array.reshape(-1)
        copied = False
    else:
        data = np.ascontiguousarray(array).reshape(-1).astype(store)
        copied = True
    st = Storage(data, dt, buffer, name, tuple(array.shape), precise, None)
    ctx = context.current_or_none()
    if ctx is not None and ctx.options.strict:
        st.written = np.ones(data.size, np.bool_)
    return NkiTensor(st, tuple(array.shape), _dense_strides(tuple(array.shape)), 0), copied


def to_array(t: NkiTensor) -> np.ndarray:
    """A NumPy copy of view ``t`` in its storage dtype (declared dtype in precise mode)."""
    return np.array(t._np(), copy=True)
