"""Kernels the real toolchain compiles and runs are not refused by the simulator (issue 14, part 2).

Each kernel here is our own, written the way production NKI libraries write such code (module-level
constants, keyword arguments, explicit buffers), to reproduce a pattern the simulator used to refuse.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from nki_studio.sim import simulate
from nki_studio.sim.errors import SimulationError


def _kernel_file(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(source))
    return path


MASKED_ROW_MAX = """\
import nki
import nki.isa as nisa
import nki.language as nl

NEG_INF_F32 = -3.4028235e38  # written as a float literal: a float64 that rounds to FP32_MIN


@nki.jit
def masked_row_max(x, lo, hi):
    rows, cols = x.shape
    out = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    x_sb = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    lo_sb = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    hi_sb = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x)
    nisa.dma_copy(dst=lo_sb, src=lo)
    nisa.dma_copy(dst=hi_sb, src=hi)
    masked = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    row_max = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.range_select(
        dst=masked,
        on_true_tile=x_sb,
        comp_op0=nl.greater_equal,
        comp_op1=nl.less,
        bound0=lo_sb,
        bound1=hi_sb,
        reduce_cmd=nisa.reduce_cmd.reset_reduce,
        reduce_res=row_max,
        reduce_op=nl.maximum,
        range_start=0,
        on_false_value=NEG_INF_F32,
    )
    nisa.dma_copy(dst=out, src=row_max)
    return out
"""


def test_range_select_accepts_the_fp32_min_literal(tmp_path: Path) -> None:
    """``-3.4028235e38`` is not the double ``float(np.finfo(np.float32).min)`` but is FP32_MIN in FP32."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    lo = np.array([[0.0], [2.0], [5.0], [8.0]], np.float32)
    hi = np.array([[16.0], [9.0], [6.0], [15.0]], np.float32)
    result = simulate(_kernel_file(tmp_path, MASKED_ROW_MAX), x, lo, hi)
    idx = np.arange(16)
    expect = np.array([x[r, (idx >= lo[r, 0]) & (idx < hi[r, 0])].max() for r in range(4)])
    np.testing.assert_array_equal(result.output[:, 0], expect)


ZERO_INIT_INDICES = """\
import nki
import nki.isa as nisa
import nki.language as nl

P_MAX = 128


@nki.jit
def zero_init_indices(x):
    out = nl.ndarray((P_MAX, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    idx_sb = nl.ndarray((P_MAX, 8), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.memset(dst=idx_sb, value=0.0)
    nisa.dma_copy(dst=out, src=idx_sb)
    return out
"""


def test_memset_float_zero_into_uint32(tmp_path: Path) -> None:
    """A float 0.0 into an integer tile is exact: accepted without a warning, stored as 0."""
    result = simulate(_kernel_file(tmp_path, ZERO_INIT_INDICES), np.zeros((1, 1), np.float32))
    assert result.output.dtype == np.uint32 and not result.output.any()
    assert not [w for w in result.report.warnings if "memset" in w]


TAIL_COPY = """\
import nki
import nki.isa as nisa
import nki.language as nl

TILE = 8


@nki.jit
def tail_copy(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    n_tiles = (cols + TILE - 1) // TILE
    for t in nl.affine_range(n_tiles):
        # The full-width window of the last tile reaches past the tensor; only its shape is used
        # when the tile is partial, and it is accessed only when it fits.
        window = x.ap(pattern=[[cols, rows], [1, TILE]], offset=t * TILE)
        width = min(TILE, cols - t * TILE)
        buf = nl.ndarray((rows, window.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
        if width == TILE:
            nisa.dma_copy(dst=buf, src=window)
        else:
            nisa.dma_copy(dst=buf[:, 0:width], src=x[:, t * TILE : t * TILE + width])
        nisa.dma_copy(dst=out[:, t * TILE : t * TILE + width], src=buf[:, 0:width])
    return out
"""


def test_ap_view_past_the_storage_fails_only_when_accessed(tmp_path: Path) -> None:
    x = np.arange(4 * 12, dtype=np.float32).reshape(4, 12)
    result = simulate(_kernel_file(tmp_path, TAIL_COPY), x)
    np.testing.assert_array_equal(result.output, x)


MX_FORMAT_TABLE = """\
import nki
import nki.isa as nisa
import nki.language as nl

# Per-format constants keyed by the packed dtype, as MX kernels keep them.
_MX_MAX_EXP = {nl.float8_e5m2_x4: 15, nl.float8_e4m3fn_x4: 8, nl.float4_e2m1fn_x4: 2}


@nki.jit
def mx_max_exp(x):
    out = nl.ndarray((1, 3), dtype=nl.int32, buffer=nl.shared_hbm)
    table = nl.ndarray((1, 3), dtype=nl.int32, buffer=nl.sbuf)
    formats = (nl.float8_e5m2_x4, nl.float8_e4m3fn_x4, nl.float4_e2m1fn_x4)
    for i, fmt in enumerate(formats):
        packed = nl.ndarray((1, 4), dtype=fmt, buffer=nl.sbuf)
        nisa.memset(dst=table[:, i : i + 1], value=_MX_MAX_EXP[packed.dtype])
    nisa.dma_copy(dst=out, src=table)
    return out
"""


def test_packed_mx_dtypes_key_dicts_apart(tmp_path: Path) -> None:
    result = simulate(_kernel_file(tmp_path, MX_FORMAT_TABLE), np.zeros((1, 1), np.float32))
    assert result.output.tolist() == [[15, 8, 2]]


NC_VERSION_PROBE = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def nc_version_probe(x):
    out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    v = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=v, value=4 if nisa.get_nc_version() == nisa.nc_version.gen4 else 3)
    nisa.dma_copy(dst=out, src=v)
    return out
"""


def test_nki_nc_version_names_the_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness sets ``NKI_NC_VERSION`` to an ``nc_version`` name; it wins over the machine-wide override."""
    path = _kernel_file(tmp_path, NC_VERSION_PROBE)
    x = np.zeros((1, 1), np.float32)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    monkeypatch.setenv("NKI_NC_VERSION", "gen4")
    result = simulate(path, x)
    assert result.report.target == "trn3" and result.output.tolist() == [[4]]
    monkeypatch.delenv("NKI_NC_VERSION")
    assert simulate(path, x).report.target == "trn2"


ADD_ROW_BIAS = """\
import nki
import nki.isa as nisa
import nki.language as nl

P = 128
FREE = 8192  # above the 4K elements of a dense PSUM operand


@nki.jit
def add_row_bias(x, bias):
    out = nl.ndarray((P, FREE), dtype=nl.float32, buffer=nl.shared_hbm)
    x_sb = nl.ndarray((P, FREE), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x)
    bias_sb = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=bias_sb, src=bias)
    bias_ps = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.psum)
    nisa.tensor_copy(dst=bias_ps, src=bias_sb)
    # Step 0 repeats the one PSUM column along the free dim.
    nisa.tensor_tensor(dst=x_sb, data1=x_sb, data2=bias_ps.ap(pattern=[[1, P], [0, FREE]]), op=nl.add)
    nisa.dma_copy(dst=out, src=x_sb)
    return out
"""


def test_stride0_psum_operand_is_not_held_to_the_dense_free_limit(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 8192)).astype(np.float32)
    bias = rng.standard_normal((128, 1)).astype(np.float32)
    result = simulate(_kernel_file(tmp_path, ADD_ROW_BIAS), x, bias)
    np.testing.assert_array_equal(result.output, x + bias)
    assert any("stride-0" in w for w in result.report.warnings)


RUNTIME_TRIP_COUNT = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def accumulate_trips(x, trips):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    x_sb = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x)
    nisa.memset(dst=acc, value=0.0)
    trips_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=trips_sb, src=trips)
    trip_reg = nisa.register_alloc()
    nisa.register_load(trip_reg, trips_sb)
    for _ in nl.dynamic_range(0, trip_reg, 1):
        nisa.tensor_tensor(dst=acc, data1=acc, data2=x_sb, op=nl.add)
    nisa.dma_copy(dst=out, src=acc)
    return out
"""


def test_nki_version_is_inferred_from_0_6_only_code(tmp_path: Path) -> None:
    """Code using ``nl.dynamic_range`` is 0.6 code: with no version named it runs with 0.6 semantics, and the
    result says why; naming 0.7 keeps 0.7's refusal."""
    path = _kernel_file(tmp_path, RUNTIME_TRIP_COUNT)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    trips = np.array([[3]], np.int32)
    result = simulate(path, x, trips)
    np.testing.assert_array_equal(result.output, 3 * x)
    assert result.report.nki_version == "0.6"
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "nl.dynamic_range" in t)
    assert f"NKI version 0.6 inferred from nl.dynamic_range at {path}:{line}" in result.warnings[0]
    with pytest.raises(SimulationError, match=r"removed in NKI 0\.7"):
        simulate(path, x, trips, nki_version="0.7")


def test_nki_version_inferred_through_the_drop_in_launch(tmp_path: Path) -> None:
    """Harnesses that launch ``kernel[lnc](...)`` themselves (no simulate() call) get the same inference."""
    from nki_studio.sim import load_kernel_module

    module = load_kernel_module(str(_kernel_file(tmp_path, RUNTIME_TRIP_COUNT)))
    x = np.ones((2, 4), np.float32)
    out = module.accumulate_trips[1](x, np.array([[2]], np.int32))
    np.testing.assert_array_equal(out, 2 * x)


TWO_PHASE_SCRATCH = """\
import nki
import nki.isa as nisa
import nki.language as nl

SCRATCH_FREE = 40 * 1024  # 160 KiB per partition in fp32: one scratch fits the SBUF, two do not


class Buffers:
    # Scratch tiles kept together for the whole kernel, as buffer-holder classes do.

    def __init__(self, rows):
        self.phase1 = nl.ndarray((rows, SCRATCH_FREE), dtype=nl.float32, buffer=nl.sbuf)
        self.phase2 = nl.ndarray((rows, SCRATCH_FREE), dtype=nl.float32, buffer=nl.sbuf)


@nki.jit
def two_phase(x):
    rows = x.shape[0]
    out = nl.ndarray((rows, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    result = nl.ndarray((rows, 2), dtype=nl.float32, buffer=nl.sbuf)
    bufs = Buffers(rows)
    nisa.memset(dst=bufs.phase1, value=1.0)
    nisa.tensor_reduce(dst=result[:, 0:1], data=bufs.phase1, op=nl.add, axis=1)
    # phase1 is never touched again: the compiler reuses its bytes for phase2.
    nisa.memset(dst=bufs.phase2, value=2.0)
    nisa.tensor_reduce(dst=result[:, 1:2], data=bufs.phase2, op=nl.add, axis=1)
    nisa.dma_copy(dst=out, src=result)
    return out
"""


def test_capacity_comes_from_liveness_not_from_python_references(tmp_path: Path) -> None:
    result = simulate(
        _kernel_file(tmp_path, TWO_PHASE_SCRATCH), np.zeros((128, 1), np.float32), target="trn2"
    )
    assert result.output[0].tolist() == [40 * 1024, 80 * 1024]
    sbuf = result.report.sbuf
    assert sbuf is not None and sbuf.peak_bytes == 160 * 1024 + 8  # one scratch and the result tile
    assert sorted(a.bytes_per_partition for a in sbuf.live_at_peak) == [8, 160 * 1024]


ZERO_FILL_THEN_WRITE = """\
import nki
import nki.isa as nisa
import nki.language as nl


def _zero_fill(out, barrier):
    rows, cols = out.shape
    zeros = nl.ndarray((rows, cols), dtype=out.dtype, buffer=nl.sbuf)
    nisa.memset(dst=zeros, value=0.0)
    nisa.dma_copy(dst=out, src=zeros)  # every core clears the whole output
    if barrier:
        nisa.core_barrier(out, (0, 1))


@nki.jit
def half_rows(x, barrier=False):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    _zero_fill(out, barrier)
    half = rows // nl.num_programs(0)
    first = nl.program_id(0) * half
    tile = nl.ndarray((half, cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=x[first : first + half, :])
    nisa.dma_copy(dst=out[first : first + half, :], src=tile)
    return out
"""


def test_lnc2_cores_writing_the_same_bytes_without_a_barrier_warn_on_both_lines(tmp_path: Path) -> None:
    path = _kernel_file(tmp_path, ZERO_FILL_THEN_WRITE)
    lines = path.read_text().splitlines()
    fill = next(i for i, t in enumerate(lines, 1) if "every core clears" in t)
    copy = next(i for i, t in enumerate(lines, 1) if "dst=out[first" in t)
    x = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)
    result = simulate(path, x, lnc=2, target="trn2")
    races = [w for w in result.warnings if "LNC race" in w]
    assert f"{path}:{fill}: LNC race: cores 0 and 1" in "\n".join(races)
    assert any(w.startswith(f"{path}:{copy}:") for w in races)  # one core's copy vs the other's zero-fill
    fenced = simulate(path, x, lnc=2, target="trn2", kernel_kwargs={"barrier": True})
    np.testing.assert_array_equal(fenced.output, x)
    assert not [w for w in fenced.warnings if "LNC race" in w]
