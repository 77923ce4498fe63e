"""Legacy ``neuronxcc.nki.isa`` (``nisa``): instructions that *return* their result tile.

Legacy calls have no ``dst``: ``acc = nisa.nc_matmul(a, b)`` returns a new PSUM tile, ``x = nisa.activation(op,
data)`` a new SBUF tile, with ``dtype=`` choosing the result type [v2.26.1 nki.isa.* pages: signatures without
``dst``, "returns the resulting tile"]. Each wrapper allocates the result the page describes and runs the current
instruction into it, so the checks and the maths are the current simulator's. A call that passes ``dst=`` runs
the current form unchanged. A result assigned at once (``t[...] = nisa.nc_matmul(a, b)``) is no tile of its own:
the instruction writes straight into ``t`` (``assignment``). Legacy forms with other operands: ``iota(expr,
dtype)`` (an index-tile expression) and ``affine_select(pred, on_true_tile, on_false_value)`` (an index-tile predicate) [v2.26.1 nki.isa.iota,
nki.isa.affine_select], ``memset(shape, value, dtype)`` [v2.26.1 nki.isa.memset].
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from nki_studio.model.legacy_values import LEGACY_OPERAND_VALUES
from nki_studio.sim import context, dtypes, untaken
from nki_studio.sim import isa as _current
from nki_studio.sim.access import read, write
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.language._ops import reduced_shape
from nki_studio.sim.legacy.assignment import fresh
from nki_studio.sim.legacy.index_tiles import IndexTile, predicate_values
from nki_studio.sim.legacy.masks import with_mask
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.tensor import NkiTensor, allocate

_SBUF, _PSUM = MemoryRegion.sbuf, MemoryRegion.psum
Result = tuple[tuple[int, ...], Any, MemoryRegion]


def _like(role: str) -> Callable[[dict[str, Any], Any], Result]:
    def rule(a: dict[str, Any], dtype: Any) -> Result:
        t = a[role]
        return t.shape, dtype if dtype is not None else t.dtype, _SBUF

    return rule


def _matmul(a: dict[str, Any], dtype: Any) -> Result:
    st, mv = a["stationary"], a["moving"]
    if a.get("is_transpose"):
        return (st.shape[-1], st.shape[0]), dtype or st.dtype, _PSUM
    return (
        (st.shape[-1], mv.shape[-1]),
        dtypes.FLOAT32,
        _PSUM,
    )  # "accumulation and results are always in float32"


def _transpose(a: dict[str, Any], dtype: Any) -> Result:
    x = a["data"]
    # Engine left unknown: Vector for tiles up to 32x32, else Tensor (into PSUM) [v2.26.1 nki.isa.nc_transpose].
    eng = a.get("engine", _current.engine.unknown)
    small = x.shape[0] <= 32 and x.size // x.shape[0] <= 32
    vector = eng == _current.engine.vector or (eng == _current.engine.unknown and small)
    return (x.size // x.shape[0], x.shape[0]), x.dtype, _SBUF if vector else _PSUM


def _reduce(a: dict[str, Any], dtype: Any) -> Result:
    x = a["data"]
    axis = a["axis"]
    axes = tuple(d % x.ndim for d in ((axis,) if isinstance(axis, int) else axis))
    return reduced_shape(x.shape, axes, bool(a.get("keepdims", False))), dtype or x.dtype, _SBUF


def _partition_reduce(a: dict[str, Any], dtype: Any) -> Result:
    x = a["data"]
    return (1, *x.shape[1:]), dtype or x.dtype, _SBUF


def _dma_transpose(a: dict[str, Any], dtype: Any) -> Result:
    x = a["src"]
    axes = a.get("axes") or tuple(reversed(range(x.ndim)))
    return tuple(x.shape[d] for d in axes), x.dtype, _SBUF


def _statistics(count: int) -> Callable[[dict[str, Any], Any], Result]:
    """``bn_stats`` (6 values per partition) and ``bn_aggr`` (mean and variance): without ``dtype=`` the FP32
    results are cast back to the data's dtype [v2.26.1 nki.isa.bn_stats, nki.isa.bn_aggr]."""

    def rule(a: dict[str, Any], dtype: Any) -> Result:
        x = a["data"]
        return (x.shape[0], count), dtype or x.dtype, _SBUF

    return rule


_RESULTS: dict[str, Callable[[dict[str, Any], Any], Result]] = {
    "nc_matmul": _matmul,
    "nc_transpose": _transpose,
    "activation": _like("data"),
    "activation_reduce": _like("data"),
    "tensor_tensor": _like("data1"),
    "tensor_scalar": _like("data"),
    "scalar_tensor_tensor": _like("data"),
    "tensor_scalar_reduce": _like("data"),
    "tensor_tensor_scan": _like("data0"),
    "tensor_copy": _like("src"),
    "dropout": _like("data"),
    "reciprocal": _like("data"),
    "tensor_reduce": _reduce,
    "tensor_partition_reduce": _partition_reduce,
    "dma_transpose": _dma_transpose,
    "bn_stats": _statistics(6),
    "bn_aggr": _statistics(2),
}


def in_sbuf(t: object) -> Any:
    """A PSUM tile copied to SBUF (other values unchanged): the move the legacy compiler inserted where a call
    takes a PSUM tile but the instruction reads SBUF (inferred from nki-samples: its attention tutorial multiplies
    by an ``nl.transpose`` result and stores an ``nl.matmul`` result directly; its flash-attention backward feeds an
    ``nc_transpose`` result to ``nc_matmul``; all ran on hardware)."""
    if isinstance(t, NkiTensor) and t.buffer is MemoryRegion.psum:
        copy = allocate(t.shape, t.dtype, _SBUF)
        _current.tensor_copy(copy, t)
        return copy
    return t


_SBUF_OPERANDS = {"nc_matmul": ("stationary", "moving")}


def _current_value(name: str, operand: str, value: object) -> object:
    """A legacy string operand value as the current one (``perf_mode="double_row_gen3"``: ``"double_row"``)."""
    renamed = LEGACY_OPERAND_VALUES.get((name, operand), {}).get(value) if isinstance(value, str) else None
    return renamed[1] if renamed is not None else value


def _result(shape: object, dtype: object, buffer: MemoryRegion) -> NkiTensor:
    """A new result tile of a value-returning call (``t[...] = call(...)`` writes into ``t``: ``assignment``)."""
    return fresh(allocate(shape, dtype, buffer))


def _value_returning(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(dst, ...)`` callable the legacy way, ``fn(...)`` returning a new result tile."""
    params = list(inspect.signature(fn).parameters.values())[1:]  # the legacy signature: no dst
    legacy = inspect.Signature(params)
    result = _RESULTS[name]

    def call(*args: Any, dtype: Any = None, **kwargs: Any) -> Any:
        kwargs = {k: _current_value(name, k, v) for k, v in kwargs.items()}
        if "dst" in kwargs:
            return fn(*args, **kwargs)
        try:
            bound = legacy.bind(*args, **kwargs)
        except TypeError as exc:
            raise SimulationError(f"nisa.{name}: {exc} (legacy form: nisa.{name}{legacy})") from None
        for role in _SBUF_OPERANDS.get(name, ()):
            if role in bound.arguments:
                bound.arguments[role] = in_sbuf(bound.arguments[role])
        shape, out_dtype, buffer = result(
            bound.arguments, dtypes.to_dtype(dtype) if dtype is not None else None
        )
        dst = _result(shape, out_dtype, buffer)
        fn(dst, *bound.args, **bound.kwargs)
        return dst

    call.__name__ = call.__qualname__ = name
    call.__doc__ = (
        f"Legacy ``nisa.{name}(...)`` returning its result tile (current form: ``nisa.{name}(dst, ...)``)."
    )
    return call


@untaken.tile_instruction
def iota(expr: object, dtype: object, **_: object) -> NkiTensor:
    """``nisa.iota(expr, dtype)``: a tile holding the values of an index-tile expression (GpSimd)."""
    if not isinstance(expr, IndexTile):
        raise SimulationError("nisa.iota(expr, dtype): expr must be an nl.arange/nl.mgrid expression")
    values = expr.values if expr.values.ndim >= 2 else expr.values.reshape(-1, 1)
    dst = _result(values.shape, dtype, _SBUF)
    context.issue("nisa.iota", "gpsimd", writes={"dst": dst})
    write(dst, values)
    return dst


@untaken.tile_instruction
def affine_select(
    pred: object, on_true_tile: NkiTensor, on_false_value: object, dtype: object = None, **_: object
) -> NkiTensor:
    """``nisa.affine_select(pred, on_true_tile, on_false_value)``: ``on_true_tile`` where the index predicate
    holds, else the value (GpSimd)."""
    keep = np.broadcast_to(predicate_values(pred), on_true_tile.shape)
    dst = _result(on_true_tile.shape, dtype if dtype is not None else on_true_tile.dtype, _SBUF)
    context.issue("nisa.affine_select", "gpsimd", reads={"on_true_tile": on_true_tile}, writes={"dst": dst})
    write(dst, np.where(keep, read(on_true_tile), np.float32(on_false_value)))  # type: ignore[arg-type]
    return dst


def memset(shape: object, value: object, dtype: object, **kwargs: Any) -> NkiTensor:
    """``nisa.memset(shape, value, dtype)``: a new tile filled with ``value``."""
    dst = _result(shape, dtype, _SBUF)
    _current.memset(dst, value, **{k: v for k, v in kwargs.items() if k == "engine"})
    return dst


_LEGACY_FORMS: dict[str, Callable[..., Any]] = {
    "iota": iota,
    "affine_select": affine_select,
    "memset": memset,
}


def _legacy(name: str, value: Any) -> Any:
    if name in _LEGACY_FORMS:
        return with_mask(f"nisa.{name}", _LEGACY_FORMS[name])
    if name in _RESULTS:
        return with_mask(f"nisa.{name}", _value_returning(name, value))
    if inspect.isfunction(value):
        return with_mask(f"nisa.{name}", value)
    return value


globals().update({n: _legacy(n, getattr(_current, n)) for n in _current.__all__})


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_current, name)


__all__ = list(_current.__all__)
