"""Legacy ``neuronxcc.nki.language`` (``nl``): the current ``nl`` plus what the legacy API had.

Every function takes the legacy ``mask=`` (``masks``); allocations take ``nl.par_dim`` block shapes
(``indexing``) and, inside a launch grid, share ``shared_hbm`` outputs across programs (``spmd``). Legacy-only
names: ``arange``/``mgrid`` (``index_tiles``), ``par_dim``, ``program_id``/``num_programs``/``program_ndim``/
``spmd_dim``/``nc`` (``spmd``), ``static_cast``, ``loop_reduce``, ``fp32``, ``finfo``; ``load`` also takes 1-D
sources, ``matmul`` and ``store`` PSUM operands. The loop iterators are the current
ones: ``affine_range``, ``sequential_range`` and ``static_range`` iterate like ``range`` [v2.26.1
nki.language.affine_range ...], which is how they execute on one core (their difference is what the compiler may
reorder, not the values); they also take the legacy ``directives=`` (``ncc.no_reorder()``, a schedule constraint).
"""

from __future__ import annotations

import builtins
import functools
import inspect
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
from nki_studio.model.nki_api import LANGUAGE_REDUCTIONS
from nki_studio.sim import context, dtypes
from nki_studio.sim import language as _current
from nki_studio.sim.access import read, write
from nki_studio.sim.isa._common import alu_op
from nki_studio.sim.language import reductions
from nki_studio.sim.legacy import operators  # noqa: F401  # registers the tile operators (legacy_hooks)
from nki_studio.sim.legacy.assignment import fresh, reduction
from nki_studio.sim.legacy.compiler import LoopDirective, Rotation
from nki_studio.sim.legacy.index_tiles import arange, mgrid
from nki_studio.sim.legacy.indexing import blocked, par_dim, partition_axis
from nki_studio.sim.legacy.isa import in_sbuf
from nki_studio.sim.legacy.masks import with_mask
from nki_studio.sim.legacy.spmd import nc, num_programs, program_id, program_ndim, shared_output, spmd_dim
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.tensor import NkiTensor
from nki_studio.sim.userframe import user_location

_ALLOCATORS = ("ndarray", "zeros", "ones", "full", "rand")


def _allocator(fn: Callable[..., NkiTensor]) -> Callable[..., NkiTensor]:
    """``fn(shape, ...)`` accepting ``nl.par_dim`` block shapes and sharing ``shared_hbm`` outputs in a grid."""
    signature = inspect.signature(fn)

    def allocate(*args: Any, lazy_initialization: object = None, **kwargs: Any) -> NkiTensor:
        # lazy_initialization= chose when the compiler fills the tile, not its values (inferred; nki-samples'
        # attention kernels pass it to nl.full).
        bound = signature.bind(*args, **kwargs)
        shape = bound.arguments["shape"]
        axis = partition_axis(shape)
        dims = [int(d) for d in shape] if isinstance(shape, (tuple, list)) else [int(shape)]
        tiles: tuple[int, ...] = ()
        placement = bound.arguments.get("buffer")
        if isinstance(placement, Rotation):
            bound.arguments["buffer"] = placement.region
            tiles = placement.tiles[:axis] + tuple(dims[len(placement.tiles) : axis])
        physical = (
            [builtins.min(n, t) for n, t in zip(dims[:axis], tiles, strict=True)] if tiles else dims[:axis]
        )
        bound.arguments["shape"] = (dims[axis], *physical, *dims[axis + 1 :]) if axis else tuple(dims)

        def make() -> NkiTensor:
            tensor = blocked(fn(*bound.args, **bound.kwargs), axis, tuple(dims[:axis]))
            live = tensor.storage.live
            if axis and not tiles and live is not None and live.tracker is not None:
                # the compiler allocates each block's tile on its own (memory.py); a modular allocation places them
                live.tracker.by_block(live, tensor.storage.block_elements * tensor.storage.dtype.itemsize)
            return tensor

        if bound.arguments.get("buffer") is MemoryRegion.shared_hbm:
            return shared_output(make)
        return make()

    allocate.__name__ = allocate.__qualname__ = fn.__name__
    allocate.__doc__ = fn.__doc__
    return allocate


def static_cast(x: object, dtype: object) -> Any:
    """``nl.static_cast(x, dtype)``: ``x`` converted to ``dtype`` with the hardware rounding; a NumPy array
    outside a kernel (the legacy tests prepare bfloat16 inputs with it), a new tile inside [v2.26.1
    nki.language.static_cast; rounding as the simulator's casts, inferred]."""
    if isinstance(x, NkiTensor):
        return _current.copy(x, dtype=dtype)
    target = dtypes.to_dtype(dtype)
    return dtypes.cast(np.asarray(x, dtype=np.float32 if dtypes.is_float(target) else None), target, True)


def loop_reduce(
    x: NkiTensor, op: object, loop_indices: object, *, dtype: object = None, **_: object
) -> NkiTensor:
    """``nl.loop_reduce(x, op, loop_indices)``: ``op`` of the call's destination and ``x``.

    The page's equivalent is ``b = nisa.tensor_tensor(data1=b, data2=x, op=op)`` over the loop, with ``b`` the
    call's own destination [v2.26.1 nki.language.loop_reduce]. Assigned into a tensor (``t[...] = nl.loop_reduce(
    ...)``), that tensor is the destination (``assignment``). Bound to a name, the destination is this call site's
    previous result; it starts over (at ``x``) when every reduction loop index is 0 (inferred from the example).
    """
    from nki_studio.sim.isa import tensor_tensor

    indices = loop_indices if isinstance(loop_indices, (list, tuple)) else (loop_indices,)
    site = user_location()
    key = f"legacy.loop_reduce:{site.file}:{site.line}"
    ctx = context.current()
    out_dtype = dtypes.to_dtype(dtype) if dtype is not None else x.dtype
    previous = ctx.shared.get(key)
    first = builtins.all(int(i) == 0 for i in indices)
    result = reduction(
        _current.ndarray(x.shape, out_dtype, buffer=MemoryRegion.sbuf),
        x,
        alu_op("nl.loop_reduce", "op", op),
        first,
    )
    if previous is None or first:
        write(result, read(x))
    else:
        tensor_tensor(result, previous, x, op)
    ctx.shared[key] = result
    return result


def load(src: NkiTensor, dtype: object = None, **kwargs: Any) -> NkiTensor:
    """``nl.load``: a 1-D source (``A[c0:c0 + 128, i]``) loads as a ``(P, 1)`` column, the partition axis
    first (inferred from nki-samples' Mamba tutorial, which uses such a load as a per-partition ``scale``)."""
    if isinstance(src, NkiTensor) and src.ndim == 1:
        if src._index is not None:
            src = src._derive((src.shape[0], 1), (), 0, index=src._index.reshape(-1, 1))
        else:
            src = src._derive((src.shape[0], 1), (src.strides[0], 1), src.offset)
    return _current.load(src, dtype, **kwargs)


def matmul(x: NkiTensor, y: NkiTensor, transpose_x: bool = False, **kwargs: Any) -> NkiTensor:
    """``nl.matmul``, taking PSUM operands too."""
    return _current.matmul(in_sbuf(x), in_sbuf(y), transpose_x, **kwargs)


def store(dst: NkiTensor, value: NkiTensor, **kwargs: Any) -> None:
    """``nl.store``, taking a PSUM value too."""
    _current.store(dst, in_sbuf(value), **kwargs)


class _Finfo:
    """``nl.finfo(dtype)``: the limits of a float dtype (``min``, ``max``, ``eps``, ``tiny``, ``bits``), as NumPy's
    ``finfo`` (ml_dtypes' for the low-precision types) [v2.26.1 nki.language.finfo; values inferred to match]."""

    def __init__(self, dtype: object) -> None:
        info = ml_dtypes.finfo(dtypes.to_dtype(dtype))
        self.min, self.max = float(info.min), float(info.max)
        self.eps, self.tiny, self.bits = float(info.eps), float(info.tiny), int(info.bits)


finfo = _Finfo


class _Fp32:
    """``nl.fp32``: ``nl.fp32.min`` is the lowest FP32 value, bit pattern 0xff7fffff (language.md §2)."""

    min = float(np.finfo(np.float32).min)


fp32 = _Fp32()


def _iterator(current: Callable[..., range]) -> Callable[..., range]:
    """A loop iterator that also takes the legacy ``directives=`` (scheduling only: ignored)."""

    @functools.wraps(current)
    def legacy(*args: Any, directives: LoopDirective | None = None, **kwargs: Any) -> range:
        return current(*args, **kwargs)

    return legacy


_LEGACY_ONLY: dict[str, Any] = {
    "affine_range": _iterator(_current.affine_range),
    "sequential_range": _iterator(_current.sequential_range),
    "static_range": _iterator(_current.static_range),
    "arange": arange,
    "mgrid": mgrid,
    "par_dim": par_dim,
    "program_id": program_id,
    "num_programs": num_programs,
    "program_ndim": program_ndim,
    "spmd_dim": spmd_dim,
    "nc": nc,
    "static_cast": static_cast,
    "loop_reduce": loop_reduce,
    "fp32": fp32,
    "finfo": finfo,
    "load": load,
    "matmul": matmul,
    "store": store,
    **{n: reductions.any_free_axes(n) for n in LANGUAGE_REDUCTIONS},
}


def _returning(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` whose on-chip result, when the instruction just issued created it, is a value-returning call's
    result tile: ``t[...] = nl.load(...)`` writes into ``t`` as ``t[...] = nisa.<call>(...)`` does
    (``assignment``; the same legacy value-returning form, inferred to compile alike)."""

    @functools.wraps(fn)  # the signature stays fn's (inspect follows __wrapped__)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        live = result.storage.live if isinstance(result, NkiTensor) else None
        if live is not None and live.first == live.last == live.clock():
            fresh(result)
        return result

    return call


def _legacy(name: str, value: Any) -> Any:
    if name in _ALLOCATORS:
        return with_mask(f"nl.{name}", _allocator(value))
    if inspect.isfunction(value):
        return with_mask(f"nl.{name}", _returning(value))
    return value


# The module's names are nl's, so nl.all, nl.max, nl.bool ... shadow the builtins below this line (hence builtins.all).
globals().update(
    {
        n: _legacy(n, v)
        for n, v in {**{n: getattr(_current, n) for n in _current.__all__}, **_LEGACY_ONLY}.items()
    }
)


def __getattr__(name: str) -> Any:
    value = getattr(_current, name)  # raises with the current module's reason for unknown/unsimulated names
    if name.startswith("__"):
        raise AttributeError(name)
    return value


__all__ = [*_current.__all__, *(n for n in _LEGACY_ONLY if n not in _current.__all__)]
