"""The legacy compiler's merging of repeated loads (issue 27 item 2, ``estimate.merged_loads``): a legacy kernel
that reloads an unchanged HBM region pays one transfer; a reload after a write to the region is a transfer again;
the same kernel under the current API (0.7) is priced as written. The trace carries the simulated version, also
through JSON Lines. The kept copy is live until the dropped copy's last read: where that does not fit in SBUF the
estimate pays the spill traffic."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
from nki_studio.estimate.estimated_schedule import as_run
from nki_studio.estimate.merged_loads import as_compiled, merged_loads
from nki_studio.estimate.section import estimate_section
from nki_studio.estimate.spills import spill_transfers
from nki_studio.model.targets import LEGACY, Generation, Target, parse_nki_version
from nki_studio.sim.api import simulate
from nki_studio.sim.trace import Operand, TraceEvent, read_jsonl, write_jsonl
from nki_studio.sim.trace_columns import CompactTrace, TraceBuilder, as_compact

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


def test_the_version_survives_a_json_lines_round_trip(tmp_path: Path) -> None:
    x, w = np.ones((512, 512), np.float32), np.ones((128, 512), np.float32)
    trace = _trace(tmp_path, REPEATED_W, "neuronxcc.nki", x, w)
    stream = io.StringIO()
    write_jsonl(trace, stream)
    stream.seek(0)
    read = as_compact(list(read_jsonl(stream)))
    assert read.nki_version == LEGACY
    # so a path that reads the trace back (calibrate) merges the same loads and gets the same estimate
    assert int(merged_loads(read).sum()) == 3 and _loads(as_compiled(read)) == 5
    gen = Generation("trn1")
    assert estimate_section(read, gen)["totalNs"] == estimate_section(trace, gen)["totalNs"]
    # a record written before the field existed reads as unversioned
    assert (
        TraceEvent.from_json('{"seq":0,"op":"nl.load","engine":"dma","file":"k.py","line":1}').nki_version
        == ""
    )


# w loaded and used, ``count`` tiles of x loaded and summed (all of them live at the first add), then w loaded
# again: merged, the first copy of w stays live across the sum
HELD_ACROSS = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w):
    out = nl.ndarray(w.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(w)
    acc = nl.add(a, a)
    tiles = [nl.load(x[i * 128:(i + 1) * 128, :]) for i in range(x.shape[0] // 128)]
    s = tiles[0]
    for t in tiles[1:]:
        s = nl.add(s, t)
    b = nl.load(w)
    nl.store(out, value=nl.add(nl.add(acc, b), s))
    return out
"""
BIG_TILE = (
    128 * 8192 * 4
)  # bytes of one [128, 8192] FP32 tile: 32 KiB per partition, 6 of them fill trn1's SBUF


def _held_across(tmp_path: Path, count: int) -> CompactTrace:
    path = tmp_path / "held.py"
    path.write_text(textwrap.dedent(HELD_ACROSS), encoding="utf-8")
    x, w = np.ones((count * 128, 8192), np.float32), np.ones((128, 8192), np.float32)
    trace = simulate(str(path), x, w, target="trn1", trace=True, capacity="warn").trace
    assert isinstance(trace, CompactTrace) and int(merged_loads(trace).sum()) == 1
    return trace


def test_a_merged_copy_that_fits_stays_merged(tmp_path: Path) -> None:
    # 3 tiles of x: acc, x's tiles and the first sum live at once (5 tiles), plus the kept copy of w: 6 fit
    trace = _held_across(tmp_path, 3)
    limits = Target(Generation("trn1")).limits
    compiled = as_compiled(trace)
    # the dropped load's readers read the kept copy
    kept = next(e for e in compiled if e.engine == "dma" and "hbm" in e.bytes_read).operands[0].storage
    users = [i for i, e in enumerate(compiled) if any(o.storage == kept for o in e.operands)]
    assert len(users) == 3 and users[-1] == len(compiled) - 3  # the load, acc and the add before the last two
    assert spill_transfers(as_run(trace, limits), limits)[0] == []
    assert estimate_section(trace, Generation("trn1"))["dmaBytes"] == (1 + 3 + 1) * BIG_TILE


def test_a_merged_copy_that_does_not_fit_costs_the_reload_again(tmp_path: Path) -> None:
    # 4 tiles of x: 6 tiles live as written (they fit), 7 with the kept copy of w held across the sum
    trace = _held_across(tmp_path, 4)
    limits = Target(Generation("trn1")).limits
    assert spill_transfers(trace, limits)[0] == []  # unmerged, nothing spills
    transfers, _ = spill_transfers(as_compiled(trace), limits)
    assert any(t.save for t in transfers) and any(not t.save for t in transfers)
    saved = sum(t.nbytes for t in transfers if t.save) * 128
    merged_bytes = (1 + 4 + 1) * BIG_TILE  # w once, x, the store
    section = estimate_section(trace, Generation("trn1"))
    assert saved >= BIG_TILE and section["dmaBytes"] == merged_bytes + 2 * saved
