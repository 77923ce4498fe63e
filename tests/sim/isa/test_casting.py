"""Every instruction result is computed in FP32 and cast to ``dst.dtype``: RNE for floats (ml_dtypes),
RNE then saturation for integers (isa.md §0.4, 0.6.0 rule) — checked across dtype pairs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from isa_tiles import new, raw, tile
from nki_studio.sim import isa as nisa
from nki_studio.sim import language as nl

RNG = np.random.default_rng(9)
FLOATS = [
    np.float32,
    np.float16,
    ml_dtypes.bfloat16,
    ml_dtypes.float8_e4m3,
    ml_dtypes.float8_e5m2,
    ml_dtypes.float8_e4m3fn,
]
INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32]


def oracle_cast(values: np.ndarray, dtype: object) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.clip(np.rint(values.astype(np.float64)), info.min, info.max).astype(dt)
    return values.astype(np.float32).astype(dt)


@pytest.mark.parametrize("dst_dtype", FLOATS + INTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize(
    "src_dtype", [np.float32, ml_dtypes.bfloat16, np.int16], ids=lambda d: np.dtype(d).name
)
def test_tensor_tensor_multiply_casts_like_hardware(sim, src_dtype, dst_dtype):
    a = (RNG.standard_normal((8, 64)) * 300).astype(src_dtype)
    b = (RNG.standard_normal((8, 64)) * 0.5).astype(np.float32)
    dst = new((8, 64), dst_dtype)
    nisa.tensor_tensor(dst, tile(a, src_dtype), tile(b), op=nl.multiply)
    expect = oracle_cast(a.astype(np.float32) * b, dst_dtype)
    np.testing.assert_array_equal(raw(dst).astype(np.float64), expect.astype(np.float64))


@pytest.mark.parametrize("dst_dtype", FLOATS + INTS, ids=lambda d: np.dtype(d).name)
def test_tensor_copy_and_dma_casts_agree(sim, dst_dtype):
    x = (
        np.concatenate([RNG.standard_normal(60) * 1000, [0.5, 1.5, 2.5, -2.5]])
        .astype(np.float32)
        .reshape(4, 16)
    )
    via_copy, via_dma = new((4, 16), dst_dtype), new((4, 16), dst_dtype)
    nisa.tensor_copy(via_copy, tile(x))
    nisa.dma_copy(via_dma, tile(x))
    expect = oracle_cast(x, dst_dtype)
    for got in (raw(via_copy), raw(via_dma)):
        np.testing.assert_array_equal(got.astype(np.float64), expect.astype(np.float64))
