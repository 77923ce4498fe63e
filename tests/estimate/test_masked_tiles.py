"""A legacy masked partial tile costs what the equivalent slice does (issue 27, calibration gap 3): the trace
records the rectangle the mask selects (exact bytes, the tensor's own storage, contiguous rows), not a gather of a
scratch copy; an access through a tile of indices stays a gather."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
from nki_studio.estimate.profile import estimate_profile
from nki_studio.model.targets import Target
from nki_studio.profile.metrics import compute_metrics
from nki_studio.sim.api import simulate
from nki_studio.sim.trace import TraceEvent

ROWS, COLS = 1000, 512  # 7 full row tiles and a tail of 104 rows

LEGACY = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


"""

MASKED = """
@nki.jit
def kernel(x):
    n, m = x.shape
    out = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:m]
    for i in nl.affine_range((n + 127) // 128):
        t = nl.load(x[i * 128 + i_p, i_f], mask=(i * 128 + i_p < n))
        e = nl.exp(t, mask=(i * 128 + i_p < n))
        nl.store(out[i * 128 + i_p, i_f], value=e, mask=(i * 128 + i_p < n))
    return out
"""

SLICED = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x):
    n, m = x.shape
    out = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range((n + 127) // 128):
        rows = min(128, n - i * 128)
        t = nl.ndarray((rows, m), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128 : i * 128 + rows, 0:m])
        e = nl.ndarray((rows, m), dtype=x.dtype, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=t)
        nisa.dma_copy(dst=out[i * 128 : i * 128 + rows, 0:m], src=e)
    return out
"""

# row p of each tile reads row (p // 2) of the tile's rows: indices computed on chip, not an affine tile
GATHER = MASKED.replace(
    "        t = nl.load(x[i * 128 + i_p, i_f],",
    """        src = nl.floor(nl.multiply(nisa.iota(i_p, dtype=nl.int32), 0.5, dtype=nl.float32), dtype=nl.int32)
        rows = nl.add(src, i * 128, dtype=nl.int32)
        t = nl.load(x[rows, i_f],""",
)


def _trace(tmp_path: Path, source: str) -> tuple[list[TraceEvent], np.ndarray, np.ndarray]:
    path = tmp_path / "k.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    x = np.random.default_rng(27).random((ROWS, COLS), np.float32)
    result = simulate(str(path), x, target="trn1", trace=True)
    assert result.trace is not None
    return list(result.trace), x, result.outputs[0]


def _dma(events: list[TraceEvent]) -> tuple[float, int]:
    """Estimated DMA time (ns, the union of the queues' busy time) and bytes."""
    kernel = compute_metrics(estimate_profile(events, Target())).kernel
    return kernel.dma_union_ns, kernel.dma_bytes


def _shapes(events: list[TraceEvent]) -> list[tuple[object, ...]]:
    """Each transfer's and each exp's operands as the estimate reads them (allocation numbers aside)."""
    return [
        (
            e.engine,
            e.partitions,
            e.free_elements,
            tuple(
                (
                    o.shape,
                    o.buffer,
                    o.part_start,
                    o.part_end,
                    o.byte_start,
                    o.byte_end,
                    o.row_bytes,
                    o.row_pitch,
                )
                for o in e.operands
            ),
        )
        for e in events
        if e.engine == "dma" or e.function == "exp"
    ]


def test_a_masked_tail_tile_is_recorded_and_priced_as_the_sliced_tail(tmp_path: Path) -> None:
    masked, x, out = _trace(tmp_path, LEGACY + MASKED)
    sliced, _, _ = _trace(tmp_path, SLICED)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
    assert _shapes(masked) == _shapes(sliced)
    tail = [e for e in masked if e.engine == "dma"][-1]
    assert tail.partitions == ROWS % 128 and tail.bytes_written == {"hbm": (ROWS % 128) * COLS * 4}
    # the tail writes the output itself (its allocation), not a scratch copy: later readers depend on it
    assert len({o.storage for e in masked if e.engine == "dma" for o in e.operands if o.buffer == "hbm"}) == 2
    assert _dma(masked) == _dma(sliced)
    assert _dma(masked)[1] == 2 * ROWS * COLS * 4


def test_a_load_through_a_tile_of_indices_stays_a_gather(tmp_path: Path) -> None:
    gather, x, out = _trace(tmp_path, LEGACY + GATHER)
    masked, _, _ = _trace(tmp_path, LEGACY + MASKED)
    starts = np.arange(ROWS) // 128 * 128
    np.testing.assert_allclose(out, np.exp(x[starts + (np.arange(ROWS) - starts) // 2]), rtol=1e-6)
    loads = [e for e in gather if e.engine == "dma" and "sbuf" in e.bytes_written]
    # element by element: each descriptor moves one element (its row is one FP32)
    assert all(o.row_bytes == 4 for e in loads for o in e.operands if o.role == "src")
    # the mask still cuts the tail tile's rows, as for the affine tile
    assert loads[-1].partitions == ROWS % 128
    gather_ns, gather_bytes = _dma(gather)
    masked_ns, masked_bytes = _dma(masked)
    assert gather_bytes == masked_bytes
    assert gather_ns > 2 * masked_ns
