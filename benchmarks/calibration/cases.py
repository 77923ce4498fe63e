"""Inputs for each calibration kernel at a given shape, in the kernel's layout and in its NumPy reference's.

The layouts are those of the measured benchmark (AccelOpt's ``transform_to_nki_inputs`` reshapes, the ladder's
pre-transposed ``lhsT``), so a kernel runs on what was measured. ``reference`` is the NumPy function the output
is checked against when the table names no fetched one (``None``: the kernel is checked by its own spec
elsewhere, as the project's examples are by their ``# nki-studio: simulate`` lines).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

F32 = np.float32
BF16 = ml_dtypes.bfloat16
P = 128


@dataclass(frozen=True)
class Case:
    """Kernel arguments, reference arguments, a local reference (if any) and the output dtype's tolerance."""

    kernel_args: tuple[np.ndarray, ...]
    reference_args: tuple[Any, ...]
    reference: Callable[..., np.ndarray] | None
    tolerance: float  # max |out - ref| / max |ref|


def _normal(rng: np.random.Generator, *shape: int, dtype: type = F32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _matmul_t(lhs_t: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """FP32 reference of ``lhsT.T @ rhs``."""
    return lhs_t.astype(F32).T @ rhs.astype(F32)


def _ladder(s: dict[str, int], rng: np.random.Generator) -> Case:
    lhs_t, rhs = _normal(rng, s["K"], s["M"], dtype=BF16), _normal(rng, s["K"], s["N"], dtype=BF16)
    # BF16 output: one rounding of an FP32 result
    return Case((lhs_t, rhs), (lhs_t, rhs), _matmul_t, 1e-2)


def _rmsnorm_residual(s: dict[str, int], rng: np.random.Generator) -> Case:
    x, r = _normal(rng, s["N"], s["D"], dtype=BF16), _normal(rng, s["N"], s["D"], dtype=BF16)
    w = _normal(rng, s["D"], dtype=BF16)
    return Case((x, r, w), (), None, 0.0)


BUILDERS: dict[str, Callable[[dict[str, int], np.random.Generator], Case]] = {
    "ladder_v0": _ladder,
    "ladder_v1": _ladder,
    "ladder_v2": _ladder,
    "rmsnorm_residual": _rmsnorm_residual,
    "rmsnorm_residual_fused": _rmsnorm_residual,
}
