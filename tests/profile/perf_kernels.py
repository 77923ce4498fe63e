"""Purpose-built matmul kernels for the bounds and investigations tests (no pytest dependency).

One clean kernel, C = A @ B with A given transposed, whose every DMA moves >= 4 KiB per partition row, whose
matmuls use full 128 x 128 x 512 tiles and which loads each input once; and one variant per investigation that
breaks exactly one of those properties on a known line (``marker`` comments name the lines).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import ml_dtypes
import numpy as np
from nki_studio.sim.api import simulate
from nki_studio.sim.trace import TraceEvent

_TEMPLATE = """import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(a_t, b):
    k, m = a_t.shape
    _, n = b.shape
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((k, m), dtype=a_t.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=a_t)  # marker: load-a
    bt = nl.ndarray((k, n), dtype=b.dtype, buffer=nl.sbuf)
{load_b_outside}
    for mi in range(m // 128):
{load_b_inside}
        res = nl.ndarray((128, n), dtype=nl.float32, buffer=nl.sbuf)
        for ni in range(n // 512):
            lhs = a[:, mi * 128:(mi + 1) * 128]
{transpose}
            acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(dst=acc, stationary=lhs, moving=bt[:, ni * 512:(ni + 1) * 512])  # marker: matmul
            nisa.tensor_copy(dst=res[:, ni * 512:(ni + 1) * 512], src=acc)
        nisa.dma_copy(dst=out[mi * 128:(mi + 1) * 128, :], src=res)  # marker: store
    return out
"""
_LOAD_B = "nisa.dma_copy(dst=bt, src=b)  # marker: load-b"
_NARROW = (
    "for j in range(n // 512):\n"
    "        nisa.dma_copy(dst=bt[:, j * 512:(j + 1) * 512], src=b[:, j * 512:(j + 1) * 512])  # marker: load-b"
)
_TRANSPOSE = (
    "            tp = nl.ndarray((128, 128), dtype=a_t.dtype, buffer=nl.psum)\n"
    "            nisa.nc_transpose(dst=tp, data=lhs)  # marker: transpose\n"
    "            lt = nl.ndarray((128, 128), dtype=a_t.dtype, buffer=nl.sbuf)\n"
    "            nisa.tensor_copy(dst=lt, src=tp)\n"
    "            lhs = lt"
)

VARIANTS = ("clean", "narrow_rows", "undersized", "transpose", "reload")


def source(variant: str) -> str:
    """The kernel text of one variant."""
    outside = "    " + (_NARROW if variant == "narrow_rows" else _LOAD_B) if variant != "reload" else ""
    inside = "        " + _LOAD_B if variant == "reload" else ""
    text = _TEMPLATE.format(
        load_b_outside=outside, load_b_inside=inside, transpose=_TRANSPOSE if variant == "transpose" else ""
    )
    return "\n".join(line for line in text.splitlines() if line.strip()) + "\n"


def marker_line(text: str, marker: str) -> int:
    """1-based line of ``# marker: <marker>``."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.endswith(f"# marker: {marker}"))


@cache
def trace(variant: str, directory: str) -> tuple[Path, tuple[TraceEvent, ...]]:
    """Write the variant to ``directory`` and simulate it: (its path, its trace)."""
    path = Path(directory) / f"perf_{variant}.py"
    path.write_text(source(variant))
    k = 32 if variant == "undersized" else 128
    rng = np.random.default_rng(3)
    a_t = rng.standard_normal((k, 2048)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, 2048)).astype(ml_dtypes.bfloat16)
    result = simulate(str(path), a_t, b, trace=True)
    assert result.trace is not None, result
    return path, tuple(result.trace)
