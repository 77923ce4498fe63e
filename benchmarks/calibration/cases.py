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


def _transpose_on_device(s: dict[str, int], rng: np.random.Generator) -> Case:
    a, rhs = _normal(rng, s["M"], s["K"], dtype=BF16), _normal(rng, s["K"], s["N"], dtype=BF16)
    # A [M, K] untransposed: the kernel transposes its tiles on the Tensor engine
    return Case((a, rhs), (a.T, rhs), _matmul_t, 1e-2)


def _repeated_matmul(count: int) -> Callable[[dict[str, int], np.random.Generator], Case]:
    """Inputs of a kernel that accumulates ``count`` identical matmuls into its stored result (``nc_matmul``'s
    default ``accumulate=None`` adds every write after the first into the same PSUM tile)."""

    def build(s: dict[str, int], rng: np.random.Generator) -> Case:
        case = _ladder(s, rng)
        return Case(case.kernel_args, case.reference_args, lambda a, b: count * _matmul_t(a, b), 1e-2)

    return build


def _rmsnorm_residual(s: dict[str, int], rng: np.random.Generator) -> Case:
    x, r = _normal(rng, s["N"], s["D"], dtype=BF16), _normal(rng, s["N"], s["D"], dtype=BF16)
    w = _normal(rng, s["D"], dtype=BF16)
    return Case((x, r, w), (), None, 0.0)


def _selective_scan(
    delta: np.ndarray, u: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray
) -> np.ndarray:
    """FP32 reference of the Mamba-v1 SSM as the fused Mamba tutorial defines it (its ``mamba_torch.py``):
    per batch, state and channel, ``h_t = exp(delta_t * A) * h_(t-1) + delta_t * u_t * B_t`` and
    ``out_t = sum over states of h_t * C_t``."""
    batch, _, seq_len = delta.shape
    out = np.empty_like(delta)
    for i in range(batch):
        h = np.zeros(a.shape, dtype=F32)  # [channels, states]; one step at a time keeps the memory small
        for t in range(seq_len):
            h = (
                np.exp(delta[i, :, t, None] * a) * h
                + (delta[i, :, t] * u[i, :, t])[:, None] * b[i, None, :, t]
            )
            out[i, :, t] = h @ c[i][:, t]
    return out


def _vector_add(s: dict[str, int], rng: np.random.Generator) -> Case:
    # the assignment's run_benchmark.py inputs: np.random.rand(n) in FP32
    a, b = rng.random(s["n"], dtype=F32), rng.random(s["n"], dtype=F32)
    return Case((a, b), (a, b), np.add, 1e-6)


def _fused_mamba(s: dict[str, int], rng: np.random.Generator) -> Case:
    # the tutorial's layouts: delta, u [batch, channels, seq_len]; A [channels, states]; B, C [batch, states,
    # seq_len]; small positive delta and negative A keep the scan bounded (the values do not change the estimate)
    b, d, n, length = s["batch"], s["channels"], s["state_size"], s["seq_len"]
    delta = rng.uniform(0.0, 0.1, (b, d, length)).astype(F32)
    u, bm, cm = _normal(rng, b, d, length), _normal(rng, b, n, length), _normal(rng, b, n, length)
    a = -rng.uniform(0.5, 1.5, (d, n)).astype(F32)
    args = (delta, u, a, bm, cm)
    return Case(args, args, _selective_scan, 1e-4)


BUILDERS: dict[str, Callable[[dict[str, int], np.random.Generator], Case]] = {
    "ladder_v0": _ladder,
    "ladder_v1": _ladder,
    "ladder_v2": _ladder,
    "rmsnorm_residual": _rmsnorm_residual,
    "rmsnorm_residual_fused": _rmsnorm_residual,
    "matmul_with_transpose": _transpose_on_device,
    "te_tiles_v0": _repeated_matmul(512),  # its peak-tile section: 512 matmuls
    "te_tiles_v1": _repeated_matmul(2048),
    "vector_add": _vector_add,  # the CS149 vector adds at each measured tile size
    "fused_mamba": _fused_mamba,  # the fused Mamba tutorial's mamba_v1-v3 at each measured shape
}
