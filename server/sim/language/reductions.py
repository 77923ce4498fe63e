"""Reductions and normalisation helpers (language.md §9): sum, max, min, mean, prod, var, all, softmax,
rms_norm. Axes must be trailing free dims; results are new SBUF tiles computed in float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from nki_studio.model.nki_api import LANGUAGE_REDUCTIONS
from nki_studio.sim import alu, context, untaken
from nki_studio.sim.access import read, write
from nki_studio.sim.language._ops import new_tile, normalise_axis, reduced_shape, result_dtype, tile_arg
from nki_studio.sim.tensor import NkiTensor

_REDUCERS: dict[str, Callable[[np.ndarray, tuple[int, ...]], Any]] = {
    "sum": lambda v, a: np.sum(v, axis=a, dtype=np.float32),
    "max": lambda v, a: np.max(v, axis=a),
    "min": lambda v, a: np.min(v, axis=a),
    "mean": lambda v, a: np.mean(v, axis=a, dtype=np.float32),
    "prod": lambda v, a: np.prod(v, axis=a, dtype=np.float32),
    "var": lambda v, a: np.var(v, axis=a, dtype=np.float32),  # population variance (inferred, NumPy default)
    "all": lambda v, a: np.all(v != 0, axis=a).astype(np.float32),
}


@untaken.tile_instruction
def _reduce(
    name: str, x: NkiTensor, axis: object, dtype: object, keepdims: bool, trailing: bool = True
) -> NkiTensor:
    t = tile_arg(name, x)
    axes = normalise_axis(name, t, axis, trailing)
    out = new_tile(reduced_shape(t.shape, axes, keepdims or name == "var"), result_dtype(name, [t], dtype))
    context.issue(f"nl.{name}", "vector", reads={"x": t}, writes={"dst": out}, flops=t.size)
    write(out, _REDUCERS[name](read(t), axes))
    return out


def _make(name: str, trailing: bool = True) -> Callable[..., NkiTensor]:
    def fn(
        x: NkiTensor, axis: object, dtype: object = None, keepdims: bool = False, **_: object
    ) -> NkiTensor:
        return _reduce(name, x, axis, dtype, keepdims, trailing)

    fn.__name__ = fn.__qualname__ = name
    axes = "trailing free axes" if trailing else "any free axes"
    fn.__doc__ = f"``nl.{name}(x, axis, dtype=None, keepdims=False)``: {name}-reduction over {axes}."
    return fn


def any_free_axes(name: str) -> Callable[..., NkiTensor]:
    """The legacy ``nl.<name>`` reduction: any free axes, not only trailing ones (the kept dims in order). The
    legacy page says "can only be the last contiguous dim(s)" [v2.26.1 nki.language.sum], but the legacy
    AveragePool2D tutorial (nki-samples' average_pool2d, its doc page "reducing on axes F2 and F4") reduces
    ``axis=[2, 4]`` of a 5-D tile and checks the result against NumPy: the legacy compiler accepted a gap
    (inferred from that tutorial)."""
    return _make(name, trailing=False)


# The names are the stubs' (the generated ``nki_api``); tests/sim/test_language.py checks every one has a reducer.
REDUCTIONS: dict[str, Callable[..., Any]] = {n: _make(n) for n in LANGUAGE_REDUCTIONS}


@untaken.tile_instruction
def softmax(x: NkiTensor, axis: object = -1, dtype: object = None, **_: object) -> NkiTensor:
    """``exp(x - max) / sum(exp(x - max))`` over the trailing free axes (max-subtracted, float32)."""
    t = tile_arg("softmax", x)
    axes = normalise_axis("softmax", t, axis)
    out = new_tile(t.shape, result_dtype("softmax", [t], dtype))
    # Lowered to max-reduce, exp activation with bias, sum-reduce and a scaled multiply: recorded as one step.
    context.issue("nl.softmax", "scalar", reads={"x": t}, writes={"dst": out}, flops=4 * t.size)
    v = read(t)
    e = np.exp(v - np.max(v, axis=axes, keepdims=True))
    write(out, e / np.sum(e, axis=axes, keepdims=True, dtype=np.float32))
    return out


@untaken.tile_instruction
def rms_norm(
    x: NkiTensor,
    w: object,
    axis: object,
    n: int,
    epsilon: float = 1e-6,
    dtype: object = None,
    compute_dtype: object = None,
    **_: object,
) -> NkiTensor:
    """``x / sqrt(sum(x^2)/n + epsilon) * w`` over ``axis`` (formula inferred, language.md §9)."""
    t = tile_arg("rms_norm", x)
    axes = normalise_axis("rms_norm", t, axis)
    out = new_tile(t.shape, result_dtype("rms_norm", [t], dtype))
    context.issue("nl.rms_norm", "scalar", reads={"x": t, "w": w}, writes={"dst": out}, flops=4 * t.size)
    v = read(t)
    weight = read(tile_arg("rms_norm", w)) if isinstance(w, NkiTensor) else np.float32(w)  # type: ignore[arg-type]
    ms = np.sum(v * v, axis=axes, keepdims=True, dtype=np.float32) / np.float32(n)
    rsqrt = alu.alu_op("rsqrt")
    scale = rsqrt.fn(ms + np.float32(epsilon)) if rsqrt is not None else 1 / np.sqrt(ms + np.float32(epsilon))
    write(out, v * scale * weight)
    return out
