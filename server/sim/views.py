"""View methods of ``NkiTensor`` (language.md §5.2-§5.4): indexing, slice/select, permute, reshape,
rearrange, reinterpretation, ``.ap()`` access patterns and tensor indirection.

All return a new view sharing storage. Bounds are checked (NKI rejects out-of-range slices at compile
time; NumPy would clamp silently). Strided views keep (offset, shape, strides); runtime gathers keep an
array of flat positions.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from nki_studio.sim import context, dtypes, legacy_hooks
from nki_studio.sim.access import read, write
from nki_studio.sim.errors import HardwareLimitError, NotImplementedInSimulator, SimulationError
from nki_studio.sim.scalars import index_value
from nki_studio.sim.tensor_base import TensorBase

if TYPE_CHECKING:
    from nki_studio.sim.tensor import NkiTensor

_INDIRECT_GROUP = 16  # offsets per index column for Vector/Scalar/GpSimd (isa.md §0.8); Tensor uses 32


class ViewMixin(TensorBase):
    """View operations; mixed into ``NkiTensor``."""

    __slots__ = ()

    def _derive(
        self,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        index: np.ndarray | None = None,
        *,
        data: np.ndarray | None = None,
        dtype: np.dtype[Any] | None = None,
    ) -> NkiTensor:
        """Another view of the same storage (``data``/``dtype``: reinterpreted, else this view's)."""
        tensor = cast(
            "type[NkiTensor]", type(self)
        )  # the class this is mixed into, not imported: tensor imports us
        return tensor(
            self._st,
            shape,
            strides,
            offset,
            data=self._data if data is None else data,
            dtype=self.dtype if dtype is None else dtype,
            index=index,
            name=self.name,
        )

    # ----- helpers --------------------------------------------------------------------------------
    def _on_chip(self) -> bool:
        return self._st.region.on_chip

    def _dim(self, dim: int) -> int:
        nd = len(self.shape)
        d = dim + nd if dim < 0 else dim
        if not 0 <= d < nd:
            raise SimulationError(f"dimension {dim} out of range for shape {list(self.shape)}")
        return d

    def _no_free_only(self, dim: int, method: str) -> None:
        if self._on_chip() and dim == 0:
            raise HardwareLimitError(
                f"{method}: cannot change the partition dimension (dim 0) of an on-chip tensor"
            )

    def _need_strided(self, method: str) -> None:
        if self._index is not None:
            raise NotImplementedInSimulator(f"NkiTensor.{method}", "after a runtime gather view")

    # ----- indexing ---------------------------------------------------------------------------------
    def __getitem__(self, key: object) -> NkiTensor:
        keys = key if isinstance(key, tuple) else (key,)
        legacy = legacy_hooks.indexing
        if legacy is not None and legacy.handles(self, keys):  # type: ignore[arg-type]
            return legacy.index(self, keys)  # type: ignore[arg-type]  # nl.arange tiles, block dims
        nd = len(self.shape)
        if any(k is Ellipsis for k in keys):
            at = next(i for i, k in enumerate(keys) if k is Ellipsis)
            fill = nd - (len(keys) - 1)
            keys = keys[:at] + (slice(None),) * fill + keys[at + 1 :]
        if len(keys) > nd:
            raise SimulationError(f"too many indices ({len(keys)}) for tensor of shape {list(self.shape)}")
        keys = keys + (slice(None),) * (nd - len(keys))
        starts, sizes, steps, is_int = [], [], [], []
        for d, k in enumerate(keys):
            n = self.shape[d]
            if isinstance(k, slice):
                step = 1 if k.step is None else index_value(k.step)
                if step <= 0:
                    raise SimulationError(f"slice step must be positive, got {step} (dim {d})")
                start = 0 if k.start is None else index_value(k.start)
                stop = n if k.stop is None else index_value(k.stop)
                start += n if start < 0 else 0
                stop += n if stop < 0 else 0
                if not 0 <= start <= n or stop > n:
                    raise SimulationError(
                        f"slice {start}:{stop} out of bounds for dim {d} of size {n} "
                        f"(shape {list(self.shape)})"
                    )
                size = max(0, -(-(stop - start) // step))
                starts.append(start)
                sizes.append(size)
                steps.append(step)
                is_int.append(False)
            elif (
                hasattr(k, "size") and hasattr(k, "step") and hasattr(k, "start") and not hasattr(k, "shape")
            ):
                start, size, step = index_value(k.start), int(k.size), int(k.step)  # nl.ds
                if start < 0 or size < 0 or (size and start + (size - 1) * step >= n):
                    raise SimulationError(
                        f"nl.ds({start}, {size}) out of bounds for dim {d} of size {n} "
                        f"(shape {list(self.shape)})"
                    )
                starts.append(start)
                sizes.append(size)
                steps.append(step)
                is_int.append(False)
            else:
                try:
                    i = index_value(k)
                except TypeError:
                    raise NotImplementedInSimulator(
                        "NkiTensor indexing",
                        f"index {k!r} (legacy nl.arange/mgrid index tensors are not supported)",
                    ) from None
                i += n if i < 0 else 0
                if not 0 <= i < n:
                    raise SimulationError(
                        f"index {i} out of bounds for dim {d} of size {n} (shape {list(self.shape)})"
                    )
                starts.append(i)
                sizes.append(1)
                steps.append(1)
                is_int.append(True)
        keep = [not is_int[d] for d in range(nd)]
        if self._on_chip():
            keep[0] = True
            if sum(keep) < 2 and nd >= 2:
                keep[max(d for d in range(1, nd) if is_int[d])] = True
        elif not any(keep) and nd:
            keep[max(range(nd))] = True
        shape = tuple(sizes[d] for d in range(nd) if keep[d])
        if self._index is not None:
            sub = self._index[
                tuple(
                    slice(s, s + (z - 1) * st + 1, st) for s, z, st in zip(starts, sizes, steps, strict=False)
                )
            ]
            return self._derive(shape, (), 0, index=sub.reshape(shape))
        offset = self.offset + sum(s * st for s, st in zip(starts, self.strides, strict=False))
        strides = tuple(self.strides[d] * steps[d] for d in range(nd) if keep[d])
        return self._derive(shape, strides, offset)

    def __setitem__(self, key: object, value: object) -> None:
        view = self[key]
        if not context.untaken():  # an untaken nl.if_else branch writes nothing
            if legacy_hooks.results is not None and legacy_hooks.results.assign(view, value):
                return
            # a tensor (every TensorBase is an NkiTensor): its values
            write(view, read(cast("NkiTensor", value)) if isinstance(value, TensorBase) else value)

    # ----- view methods (language.md §5.3) ---------------------------------------------------------
    def slice(self, dim: int, start: int, end: int, step: int = 1) -> NkiTensor:
        """Elements ``start..end-1`` (step ``step``) of ``dim``."""
        d = self._dim(dim)
        if not (0 <= start < end <= self.shape[d]) or step < 1:
            raise SimulationError(
                f"slice(dim={dim}, {start}, {end}, {step}) invalid for shape {list(self.shape)}"
            )
        key: list[object] = [slice(None)] * len(self.shape)
        key[d] = slice(start, end, step)
        return self[tuple(key)]

    def select(self, dim: int, index: object) -> NkiTensor:
        """Remove ``dim`` keeping element ``index`` (int, register or (1,1) int tile); on-chip results
        keep two dims like integer indexing does."""
        d = self._dim(dim)
        if self._on_chip() and d == 0:
            raise HardwareLimitError("select: cannot select on the partition dimension of an on-chip tensor")
        key: list[object] = [slice(None)] * len(self.shape)
        key[d] = index_value(index)
        return self[tuple(key)]

    def vector_select(self, dim: int, vector_offset: NkiTensor) -> NkiTensor:
        """Per-partition row gather on an HBM tensor: row ``p`` of the result is row ``vector_offset[p]``."""

        if dim != 0:
            raise HardwareLimitError("vector_select: dim must be 0")
        if self._on_chip():
            raise HardwareLimitError("vector_select: only HBM tensors can be vector-selected")
        self._need_strided("vector_select")
        rows = read(vector_offset, raw=True).reshape(-1).astype(np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= self.shape[0]):
            raise SimulationError(f"vector_select: row index out of range [0, {self.shape[0]})")
        rest = self._positions(self.shape[1:], self.strides[1:], 0)
        index = self.offset + rows.reshape((-1,) + (1,) * len(rest.shape)) * self.strides[0] + rest
        return self._derive((rows.size, *self.shape[1:]), (), 0, index=index)

    def permute(self, dims: object) -> NkiTensor:
        """Reorder dimensions; on-chip tensors keep the partition dim first."""
        order = tuple(index_value(d) for d in dims)  # type: ignore[attr-defined]
        if sorted(order) != list(range(len(self.shape))):
            raise SimulationError(f"permute: {list(order)} is not a permutation of {len(self.shape)} dims")
        if self._on_chip() and order[0] != 0:
            raise HardwareLimitError("permute: the partition dimension of an on-chip tensor must stay first")
        shape = tuple(self.shape[d] for d in order)
        if self._index is not None:
            return self._derive(shape, (), 0, index=self._index.transpose(order))
        return self._derive(shape, tuple(self.strides[d] for d in order), self.offset)

    def broadcast(self, dim: int, size: int) -> NkiTensor:
        """Repeat a size-1 dim ``size`` times (stride 0)."""
        d = self._dim(dim)
        self._need_strided("broadcast")
        self._no_free_only(d, "broadcast")
        if self.shape[d] != 1:
            raise SimulationError(f"broadcast: dim {d} has size {self.shape[d]}, not 1")
        shape = (*self.shape[:d], int(size), *self.shape[d + 1 :])
        return self._derive(shape, (*self.strides[:d], 0, *self.strides[d + 1 :]), self.offset)

    def expand_dim(self, dim: int) -> NkiTensor:
        """Insert a size-1 dim at ``dim``."""
        self._need_strided("expand_dim")
        d = dim + len(self.shape) + 1 if dim < 0 else dim
        self._no_free_only(d, "expand_dim")
        return self._derive(
            (*self.shape[:d], 1, *self.shape[d:]), (*self.strides[:d], 0, *self.strides[d:]), self.offset
        )

    def squeeze_dim(self, dim: int) -> NkiTensor:
        """Drop a size-1 dim."""
        d = self._dim(dim)
        self._need_strided("squeeze_dim")
        self._no_free_only(d, "squeeze_dim")
        if self.shape[d] != 1:
            raise SimulationError(f"squeeze_dim: dim {d} has size {self.shape[d]}, not 1")
        return self._derive(
            self.shape[:d] + self.shape[d + 1 :], self.strides[:d] + self.strides[d + 1 :], self.offset
        )

    def reshape_dim(self, dim: int, shape: object) -> NkiTensor:
        """Split one dim into several (one -1 allowed)."""
        d = self._dim(dim)
        self._need_strided("reshape_dim")
        parts = [int(x) for x in shape]  # type: ignore[attr-defined]
        if parts.count(-1) == 1:
            known = math.prod(p for p in parts if p != -1)
            parts[parts.index(-1)] = self.shape[d] // known if known else 0
        if math.prod(parts) != self.shape[d]:
            raise SimulationError(f"reshape_dim: {parts} does not multiply to {self.shape[d]}")
        if self._on_chip() and d == 0 and len(parts) != 1:
            raise HardwareLimitError("reshape_dim: cannot split the partition dimension of an on-chip tensor")
        sub = [self.strides[d] * math.prod(parts[k + 1 :]) for k in range(len(parts))]
        return self._derive(
            self.shape[:d] + tuple(parts) + self.shape[d + 1 :],
            self.strides[:d] + tuple(sub) + self.strides[d + 1 :],
            self.offset,
        )

    def flatten_dims(self, start_dim: int, end_dim: int) -> NkiTensor:
        """Merge dims ``start_dim..end_dim`` (inclusive); they must be contiguous in memory."""
        a, b = self._dim(start_dim), self._dim(end_dim)
        self._need_strided("flatten_dims")
        if self._on_chip() and a == 0 and b > 0:
            raise HardwareLimitError(
                "flatten_dims: cannot merge the partition dimension of an on-chip tensor"
            )
        for k in range(a, b):
            if (
                self.shape[k + 1] != 1
                and self.shape[k] != 1
                and self.strides[k] != self.strides[k + 1] * self.shape[k + 1]
            ):
                raise SimulationError(
                    f"flatten_dims({start_dim}, {end_dim}): dims are not contiguous in memory"
                )
        merged = math.prod(self.shape[a : b + 1])
        return self._derive(
            (*self.shape[:a], merged, *self.shape[b + 1 :]),
            (*self.strides[:a], self.strides[b], *self.strides[b + 1 :]),
            self.offset,
        )

    def reshape(self, *shape: object, **keyword: object) -> NkiTensor:
        """Same elements, new shape; the layout must allow it without a copy (language.md §5.3). Legacy code
        passes it by keyword, ``t.reshape(shape=(n, m))``."""
        if "shape" in keyword:
            shape = (keyword.pop("shape"),)
        if keyword:
            raise SimulationError(f"reshape: unexpected arguments {sorted(keyword)}")
        dims = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        new = [index_value(x) for x in dims]
        if new.count(-1) == 1:
            known = math.prod(p for p in new if p != -1)
            new[new.index(-1)] = self.size // known if known else 0
        new_shape = tuple(new)
        if math.prod(new_shape) != self.size:
            raise SimulationError(f"reshape: cannot reshape {list(self.shape)} into {list(new_shape)}")
        if self._index is not None:
            return self._derive(new_shape, (), 0, index=self._index.reshape(new_shape))
        on_chip = self._on_chip()
        if on_chip and (not new_shape or new_shape[0] != self.shape[0]):
            raise HardwareLimitError(
                f"reshape: an on-chip tensor must keep its partition dim {self.shape[0]}"
            )
        first = 1 if on_chip else 0
        if not self._dense_from(first):
            raise SimulationError(
                f"reshape of a non-contiguous view {list(self.shape)} (strides "
                f"{list(self.strides)}) is not supported; copy it first"
            )
        unit = self.strides[-1] if self.shape and self.shape[-1] != 1 else 1
        strides = [0] * len(new_shape)
        acc = unit
        for k in range(len(new_shape) - 1, first - 1, -1):
            strides[k] = acc
            acc *= new_shape[k]
        if on_chip:
            strides[0] = self.strides[0]
        return self._derive(new_shape, tuple(strides), self.offset)

    def _dense_from(self, first: int) -> bool:
        expect = None
        for k in range(len(self.shape) - 1, first - 1, -1):
            if self.shape[k] == 1:
                continue
            if expect is not None and self.strides[k] != expect:
                return False
            expect = self.strides[k] * self.shape[k]
        return True

    def is_contiguous(self) -> bool:
        """Dense row-major over the free dims (partition dim ignored on-chip)."""
        if self._index is not None:
            return False
        first = 1 if self._on_chip() else 0
        free = [(n, s) for n, s in zip(self.shape[first:], self.strides[first:], strict=False) if n != 1]
        return self._dense_from(first) and (not free or free[-1][1] == 1)

    def get_pattern(self) -> list[list[int]]:
        """The view as ``.ap()`` pairs ``[[stride, count], ...]``."""
        self._need_strided("get_pattern")
        return [[s, n] for s, n in zip(self.strides, self.shape, strict=False)]

    def is_indirect(self) -> bool:
        """True for views resolved with runtime offsets (gathers)."""
        return self._index is not None

    def rearrange(
        self, src_pattern: object, dst_pattern: object, fixed_sizes: dict[str, int] | None = None
    ) -> NkiTensor:
        """einops-style split / permute / merge, e.g. ``(('b', ('h','w')), ('b','w','h'), {'h': 4})``."""
        sizes = dict(fixed_sizes or {})
        src = [g if isinstance(g, (tuple, list)) else (g,) for g in src_pattern]  # type: ignore[attr-defined]
        dst = [g if isinstance(g, (tuple, list)) else (g,) for g in dst_pattern]  # type: ignore[attr-defined]
        if len(src) != len(self.shape):
            raise SimulationError(
                f"rearrange: pattern {src_pattern} has {len(src)} dims, tensor has {len(self.shape)}"
            )
        view = cast("NkiTensor", self)  # the mixin is only ever part of an NkiTensor
        names: list[str] = []
        pos = 0
        for group, n in zip(src, self.shape, strict=False):
            unknown = [x for x in group if x not in sizes]
            if len(unknown) > 1:
                raise SimulationError(f"rearrange: sizes of {unknown} are ambiguous; pass fixed_sizes")
            if unknown:
                sizes[unknown[0]] = n // math.prod(sizes[x] for x in group if x in sizes)
            if len(group) > 1:
                view = view.reshape_dim(pos, [sizes[x] for x in group])
            names.extend(group)
            pos += len(group)
        flat_dst = [x for g in dst for x in g]
        if sorted(flat_dst) != sorted(names):
            raise SimulationError(f"rearrange: {dst_pattern} does not use the same names as {src_pattern}")
        view = view.permute([names.index(x) for x in flat_dst])
        pos = 0
        for g in dst:
            if len(g) > 1:
                view = view.flatten_dims(pos, pos + len(g) - 1)
            pos += 1
        return view

    def view(self, dtype: object) -> NkiTensor:
        """Reinterpret the bits as ``dtype``; the last dim scales by the size ratio (alias ``reinterpret_cast``)."""
        self._need_strided("view")
        new = dtypes.to_dtype(dtype)
        data = self._reinterpreted(new)
        old_size = self._data.dtype.itemsize
        new_size = data.dtype.itemsize
        if self.shape and self.shape[-1] != 1 and self.strides[-1] != 1:
            raise SimulationError("view(dtype): the last dim must be contiguous")
        last = self.shape[-1] if self.shape else 1
        if (last * old_size) % new_size or (self.offset * old_size) % new_size:
            raise SimulationError(
                f"view({dtypes.dtype_name(new)}): last dim of {last} elements does not divide"
            )
        ratio_num, ratio_den = old_size, new_size
        shape = (*self.shape[:-1], last * ratio_num // ratio_den)
        strides = (*tuple(s * ratio_num // ratio_den for s in self.strides[:-1]), 1)
        return self._derive(shape, strides, self.offset * ratio_num // ratio_den, data=data, dtype=new)

    reinterpret_cast = view

    def _reinterpreted(self, new: np.dtype[Any]) -> np.ndarray:
        if not self._st.precise and dtypes.is_float(self._st.dtype) and self._st.dtype.itemsize < 4:
            raise NotImplementedInSimulator(
                "reinterpreting a low-precision float tensor", "needs precise mode (NKI_PRECISE_FP=1)"
            )
        store = dtypes.storage_dtype(new, True)
        base = self._st.data
        if (base.size * base.itemsize) % store.itemsize:
            raise SimulationError(
                f"cannot reinterpret {base.size * base.itemsize} bytes as {dtypes.dtype_name(new)}"
            )
        return base.view(store)

    def ap(
        self,
        pattern: object,
        offset: object = None,
        scalar_offset: object = None,
        vector_offset: NkiTensor | None = None,
        indirect_dim: int = 0,
        dtype: object = None,
    ) -> NkiTensor:
        """Raw access pattern over the storage (language.md §5.4): ``[[step, num], ...]``, outermost first.

        ``offset=None`` keeps this view's storage offset; an int is added to it (AMBIGUOUS in the docs,
        see docs/simulator.md). ``scalar_offset`` adds ``value * prod(self.shape[indirect_dim+1:])``;
        ``vector_offset`` starts row ``w`` at ``vector_offset[w] * prod(self.shape[1:])``. Elements
        outside the storage fail when an instruction accesses them, not here.
        """

        self._need_strided("ap")
        pairs = [(index_value(p[0]), index_value(p[1])) for p in pattern]  # type: ignore[attr-defined]
        data = self._data
        new_dtype = self.dtype
        ratio = 1.0
        if dtype is not None:
            new_dtype = dtypes.to_dtype(dtype)
            data = self._reinterpreted(new_dtype)
            ratio = self._data.dtype.itemsize / data.dtype.itemsize
        base = int(self.offset * ratio)
        start = base if offset is None else base + index_value(offset)
        if scalar_offset is not None and vector_offset is not None:
            raise SimulationError(".ap(): scalar_offset and vector_offset are mutually exclusive")
        if scalar_offset is not None:
            start += index_value(scalar_offset) * int(math.prod(self.shape[indirect_dim + 1 :]) * ratio)
        shape = tuple(n for _, n in pairs)
        strides = tuple(s for s, _ in pairs)
        if self._on_chip() and pairs:
            row = int(self._st.data.size // max(self._st.shape[0], 1) * ratio)
            if pairs[0][0] != row and pairs[0][1] > 1:
                raise HardwareLimitError(
                    f".ap(): the first pair of an on-chip access pattern must be [{row}, partitions] "
                    f"(partition stride = free elements of the storage), got {list(pairs[0])}"
                )
        index = None
        if vector_offset is not None:
            if indirect_dim != 0:
                raise SimulationError(".ap(): vector_offset needs indirect_dim=0")
            rows = read(vector_offset, raw=True).reshape(-1).astype(np.int64)
            if rows.size != shape[0]:
                raise SimulationError(f".ap(): vector_offset has {rows.size} rows, pattern has {shape[0]}")
            rest = self._positions(shape[1:], strides[1:], 0)
            row_elems = int(math.prod(self.shape[1:]) * ratio)
            index = start + rows.reshape((-1,) + (1,) * len(rest.shape)) * row_elems + rest
        if index is None:
            lo, hi = self._extent(start, shape, strides)
        else:
            lo, hi = int(index.min(initial=0)), int(index.max(initial=0))
        if shape and 0 not in shape and (lo < 0 or hi >= data.size):
            # A view reaching past the storage is legal until an instruction touches it (the compiler only
            # checks accesses: kernels build such views before a bounds guard, or only use their .shape);
            # runtime offsets likewise (oob_mode, isa.md §5.1). Keep the view, with -1 marking the
            # out-of-bounds elements, so reads and writes of them raise (see access.out_of_bounds).
            if index is None:
                index = self._positions(shape, strides, start)
            index = np.where((index < 0) | (index >= data.size), -1, index)
        return self._derive(
            shape,
            strides if index is None else (),
            start if index is None else 0,
            index=index,
            data=data,
            dtype=new_dtype,
        )

    @staticmethod
    def _extent(start: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int]:
        lo = hi = start
        for n, s in zip(shape, strides, strict=False):
            if n > 0:
                lo += min(0, s * (n - 1))
                hi += max(0, s * (n - 1))
        return lo, hi

    @staticmethod
    def _positions(shape: tuple[int, ...], strides: tuple[int, ...], start: int) -> np.ndarray:
        pos = np.full(shape, start, np.int64)
        for k, (n, s) in enumerate(zip(shape, strides, strict=False)):
            pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(
                (1,) * k + (n,) + (1,) * (len(shape) - k - 1)
            )
        return pos

    def indirect(self, index: NkiTensor, num_elem: int | None = None) -> NkiTensor:
        """Tensor-indirection view ``(P, num_elem)``: ``[p, i] = self[p, index[i % 16, i // 16]]`` (v4+).

        The group size 16 is the Vector/Scalar/GpSimd one; the Tensor engine regroups the view by 32
        (:meth:`regrouped`).
        """

        self._need_strided("indirect")
        idx = read(index, raw=True).astype(np.int64)
        n = idx.size if num_elem is None else int(num_elem)
        # An index shaped for the Tensor engine's 32-offset groups does not fit 16-offset groups: the view
        # starts grouped by 32 then; each engine regroups it as it reads (``regrouped``).
        fits = (
            idx.ndim != 2
            or not n
            or (idx.shape[0] >= _INDIRECT_GROUP and n <= _INDIRECT_GROUP * idx.shape[1])
        )
        view = self._gathered(idx, n, _INDIRECT_GROUP if fits else 2 * _INDIRECT_GROUP)
        view._indirect = (cast("NkiTensor", self), idx, n, _INDIRECT_GROUP if fits else 2 * _INDIRECT_GROUP)
        return view

    def regrouped(self, group: int) -> NkiTensor | None:
        """This ``.indirect()`` view with offset ``i`` read from ``index[i % group, i // group]`` instead (the
        Tensor engine's 32-offset groups, isa.md §0.8); None for a view not made by ``.indirect()`` itself."""
        recipe = getattr(self, "_indirect", None)
        if recipe is None:
            return None
        base, idx, n, current = recipe
        if current == group:
            return cast("NkiTensor", self)
        view = base._gathered(idx, n, group)
        view._indirect = (base, idx, n, group)
        return view

    def _gathered(self, idx: np.ndarray, n: int, g: int) -> NkiTensor:
        if idx.ndim == 2 and n and (idx.shape[0] < g or n > g * idx.shape[1]):
            raise SimulationError(
                f"indirect(): an index {list(idx.shape)} read in groups of {g} offsets holds fewer than "
                f"num_elem={n} (it needs at least {g} partitions and {-(-n // g)} columns)"
            )
        flat = (
            np.array([idx[i % g, i // g] for i in range(n)], np.int64)
            if idx.ndim == 2
            else idx.reshape(-1)[:n]
        )
        cols = self.size // self.shape[0] if self.shape else 0
        if flat.size and (flat.min() < 0 or flat.max() >= cols):
            raise SimulationError(f"indirect(): offset out of range [0, {cols})")
        rows = self._positions((self.shape[0],), (self.strides[0],), self.offset)
        free = self.reshape((self.shape[0], cols)) if len(self.shape) != 2 else self
        positions = rows[:, None] + flat[None, :] * free.strides[1]
        return self._derive((self.shape[0], n), (), 0, index=positions)
