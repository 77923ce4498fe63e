"""``NkiTensor``: a storage (NumPy buffer in a memory region) plus a strided view (language.md §5).

Element ``(i0, ..., in-1)`` of a view lives at ``storage.flat[offset + sum(strides[k] * i_k)]``. Views made
by runtime gathers (``.ap(vector_offset=)``, ``vector_select``, ``indirect``) hold an explicit array of flat
positions instead of strides; they support indexing, ``permute`` and ``reshape``.

Every instruction reads and writes views with :func:`read` and :func:`write` (``access.py``, re-exported here).
View methods and their checks live in ``views.py`` (mixed into ``NkiTensor``); the storage and the attributes
the lower modules see, in ``tensor_base.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from nki_studio.sim import context, dtypes
from nki_studio.sim.access import read
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.legacy_hooks import TileOperators
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.tensor_base import Storage
from nki_studio.sim.views import ViewMixin


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
