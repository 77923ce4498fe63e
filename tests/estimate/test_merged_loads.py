"""The legacy compiler's merging of repeated loads (issue 27 item 2, ``estimate.merged_loads``): a legacy kernel
that reloads an unchanged HBM region pays one transfer; a reload after a write to the region is a transfer again;
the same kernel under the current API (0.7) is priced as written. The trace carries the simulated version."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
from nki_studio.estimate.merged_loads import as_compiled, merged_loads
from nki_studio.estimate.section import estimate_section
from nki_studio.model.targets import LEGACY, Generation, parse_nki_version
from nki_studio.sim.api import simulate
from nki_studio.sim.trace import Operand, TraceEvent
from nki_studio.sim.trace_columns import CompactTrace, TraceBuilder

# W loaded once per row tile of x: four loads of the same [128, 512] region
REPEATED_W = """
import {package} as nki
import {package}.language as nl


@nki.jit
def kernel(x, w):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        xt = nl.load(x[i * 128:(i + 1) * 128, :])
        wt = nl.load(w)
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(xt, wt))
    return out
"""

# the region is written between the two loads of it: the second load reads new bytes
RELOAD_AFTER_WRITE = """
import {package} as nki
import {package}.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x)
    nl.store(out, value=nl.add(a, a))
    b = nl.load(out)
    nl.store(out, value=nl.add(b, b))
    c = nl.load(out)
    nl.store(out, value=nl.add(c, a))
    return out
"""


def _trace(tmp_path: Path, source: str, package: str, *args: Any) -> CompactTrace:
    path = tmp_path / f"k_{package.replace('.', '_')}.py"
    path.write_text(textwrap.dedent(source).format(package=package), encoding="utf-8")
    trace = simulate(str(path), *args, target="trn1", trace=True).trace
    assert isinstance(trace, CompactTrace)
    return trace


def _loads(trace: CompactTrace) -> int:
    return sum(1 for e in trace if e.engine == "dma" and "hbm" in e.bytes_read)


def test_the_trace_carries_the_simulated_version(tmp_path: Path) -> None:
    x, w = np.ones((512, 512), np.float32), np.ones((128, 512), np.float32)
    assert _trace(tmp_path, REPEATED_W, "neuronxcc.nki", x, w).nki_version == LEGACY
    assert _trace(tmp_path, REPEATED_W, "nki", x, w).nki_version == parse_nki_version("0.7")


def test_a_legacy_kernel_loads_a_repeated_weight_once(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x, w = rng.random((512, 512), np.float32), rng.random((128, 512), np.float32)
    trace = _trace(tmp_path, REPEATED_W, "neuronxcc.nki", x, w)
    assert _loads(trace) == 8
    assert int(merged_loads(trace).sum()) == 3  # the 2nd-4th loads of w
    compiled = as_compiled(trace)
    assert _loads(compiled) == 5 and compiled.nki_version == LEGACY
    section = estimate_section(trace, Generation("trn1"))
    tile = 128 * 512 * 4
    # x and w once each in, out written: the transfers the compiler keeps
    assert section["dmaBytes"] == 4 * tile + tile + 4 * tile


def test_a_reload_after_a_write_is_not_merged(tmp_path: Path) -> None:
    x = np.ones((128, 512), np.float32)
    trace = _trace(tmp_path, RELOAD_AFTER_WRITE, "neuronxcc.nki", x)
    assert not merged_loads(trace).any()
    assert as_compiled(trace) is trace


def test_the_current_api_prices_every_load(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x, w = rng.random((512, 512), np.float32), rng.random((128, 512), np.float32)
    trace = _trace(tmp_path, REPEATED_W, "nki", x, w)
    assert int(merged_loads(trace).sum()) == 3  # the same loads repeat ...
    assert as_compiled(trace) is trace  # ... and 0.7 runs them as written
    tile = 128 * 512 * 4
    assert estimate_section(trace, Generation("trn1"))["dmaBytes"] == 4 * tile + 4 * tile + 4 * tile


def _load(seq: int, src: int, dst: int) -> TraceEvent:
    """A [128, 512] FP32 load of HBM tensor ``src`` into SBUF tile ``dst``."""
    return TraceEvent(
        seq,
        "nl.load",
        "dma",
        "k.py",
        seq + 1,
        operands=(
            Operand("dst", (128, 512), "float32", "sbuf", dst, 0, 128, 0, 2048, 2048),
            Operand("src", (128, 512), "float32", "hbm", src, 0, 0, 0, 262144, 2048),
        ),
        partitions=128,
        free_elements=512,
        bytes_read={"hbm": 262144},
        bytes_written={"sbuf": 262144},
    )


def _legacy(events: list[TraceEvent]) -> CompactTrace:
    builder = TraceBuilder(LEGACY)
    builder.extend(events)
    return builder.build()


def test_a_reload_into_an_overwritten_tile_is_not_merged() -> None:
    # x into tile 10, y over it, x again: no tile holds x any more (the legacy simulator records a tile assigned
    # by ``t[...] = nl.load(x)`` as a copy it does not trace, so this trace is built from records)
    assert not merged_loads(_legacy([_load(0, 1, 10), _load(1, 2, 10), _load(2, 1, 11)])).any()
    # x into tile 10, y into tile 11, x again: tile 10 still holds it
    assert merged_loads(_legacy([_load(0, 1, 10), _load(1, 2, 11), _load(2, 1, 12)])).tolist() == [
        False,
        False,
        True,
    ]
