"""``service.migration`` on the nki-samples forms of issue 28's miscellaneous kernels (our own kernels written
like them): a value written back into the name it reads, a reduction over free axes with a gap, an integer tile
divided by a Python int, each rewritten and proven by simulating both versions."""

from __future__ import annotations

from collections.abc import Callable

# ``y = nisa.activation(..., data=y)``: the migrated form must not allocate ``y`` before the call reads it.
REBOUND = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,64]
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    y = nl.load(a)
    y = nisa.activation(nl.exp, data=y, scale=0.5)
    y = nisa.tensor_copy(y, dtype=nl.bfloat16)
    nl.store(out, value=y)
    return out
"""


def test_a_value_written_back_into_the_name_it_reads_is_proven(proven: Callable[[str], str]) -> None:
    migrated = proven(REBOUND)
    assert (
        "activation_value = nl.ndarray(y.shape, dtype=y.dtype, buffer=nl.sbuf); "
        "nisa.activation(dst=activation_value, op=nl.exp, data=y, scale=0.5); y = activation_value"
    ) in migrated


# A reduction over free axes with a gap, of a tile indexed by an nl.mgrid grid (the average_pool2d tutorial's
# form, here a 3x2 max pool): the reduced dims are permuted last.
POOLED = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[64,6,8]
@nki.jit
def k(a):
    C, H, W = a.shape
    out = nl.ndarray((C, H // 3, W // 2), dtype=a.dtype, buffer=nl.shared_hbm)
    i0, i1, i2, i3, i4 = nl.mgrid[0:C, 0:H // 3, 0:3, 0:W // 2, 0:2]
    t = nl.load(a)
    pooled = nl.max(t[i0, 3 * i1 + i2, 2 * i3 + i4], axis=[2, 4])
    nl.store(out, value=pooled)
    return out
"""


def test_a_reduction_over_axes_with_a_gap_is_permuted_and_proven(proven: Callable[[str], str]) -> None:
    migrated = proven(POOLED)
    assert ".permute((0, 1, 3, 2, 4)), axis=[3, 4])" in migrated


# An integer tile divided by a shape's dim and floored (the resize-nearest kernel's flat position -> row): the
# legacy simulator truncated the int32 quotient, 0.7 rounds it; positions from -64 cover negative quotients too.
DIVIDED = """\
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[128,38]
@nki.jit
def k(a):
    rows, w = a.shape
    out = nl.ndarray((128, 2), dtype=nl.int32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(1)[None, :]
    pos = nisa.iota(i_p - 64, dtype=nl.int32)
    nl.store(out[i_p, i_f], value=nl.floor(pos / w, dtype=nl.int32))
    nl.store(out[i_p, i_f + 1], value=pos / 4)
    return out
"""


def test_an_integer_tile_divided_by_a_dim_keeps_the_truncated_quotient_and_is_proven(
    proven: Callable[[str], str],
) -> None:
    migrated = proven(DIVIDED)
    assert (
        "nl.floor(nl.trunc(nl.divide(pos, w, dtype=nl.float32), dtype=nl.int32), dtype=nl.int32)" in migrated
    )
    assert "value=nl.trunc(nl.divide(pos, 4, dtype=nl.float32), dtype=nl.int32))" in migrated
