"""Seeded, dtype-aware input generation for a :class:`~nki_studio.verify.spec.SimSpec`.

Floating tensors are drawn from a standard normal distribution (float32; float64 for float64 tensors) and
rounded once to their dtype
(bfloat16 and FP8 through ml_dtypes); integer tensors are uniform in a small range so products stay exact;
booleans are fair coin flips. The same spec and seed always give the same bytes.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from nki_studio.verify.spec import ArgValue, InstanceSpec, SimSpec, TensorSpec

_ML_DTYPES = ("bfloat16", "float8_e4m3", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu")


def as_numpy_dtype(name: str) -> np.dtype[Any]:
    """The NumPy dtype for a canonical name; ``tfloat32`` is stored as float32 (language.md §2)."""
    if name in _ML_DTYPES:
        return np.dtype(getattr(ml_dtypes, name))
    if name == "tfloat32":
        return np.dtype(np.float32)
    return np.dtype(name)


def make_tensor(spec: TensorSpec, rng: np.random.Generator) -> np.ndarray:
    """One random tensor for ``spec`` drawn from ``rng``."""
    dtype = as_numpy_dtype(spec.dtype)
    if spec.dtype == "bool":
        return rng.integers(0, 2, size=spec.shape).astype(np.bool_)
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -8
        return rng.integers(low, 8, size=spec.shape).astype(dtype)
    # float32 draws are faster and exact enough for every type up to float32 (one rounding to the dtype)
    values = rng.standard_normal(size=spec.shape, dtype=np.float64 if spec.dtype == "float64" else np.float32)
    if spec.dtype == "float8_e8m0fnu":  # a power-of-two scale type: keep it positive
        values = np.exp2(np.round(values * 2))
    return values.astype(dtype)


def make_value(value: ArgValue, rng: np.random.Generator, module: Any = None) -> Any:
    """A concrete argument: a random array for a tensor spec, an instance of ``module``'s class for an instance
    spec, the scalar itself otherwise."""
    if isinstance(value, TensorSpec):
        return make_tensor(value, rng)
    if isinstance(value, InstanceSpec):
        cls = getattr(module, value.cls, None)
        if not isinstance(cls, type):
            raise ValueError(f"{value}: the kernel's module defines no class {value.cls!r}")
        return cls(**dict(value.fields))
    return value


def make_inputs(spec: SimSpec, module: Any = None) -> list[Any]:
    """Arguments in call order, generated from ``spec.seed`` (one generator, arguments drawn in order); the
    classes of instance arguments are ``module``'s (the kernel's)."""
    rng = np.random.default_rng(spec.seed)
    return [make_value(value, rng, module) for _, value in spec.args]
