"""Metrics against the walkthrough oracle (metrics.md §6) and per-line attribution rules."""

from __future__ import annotations

from pathlib import Path

import fixturegen
import numpy as np
import pytest
from fixturewriters import write_parquet
from nki_studio.estimate.roofline import flops_from_trace
from nki_studio.profile.metrics import MetricOptions, compute_metrics
from nki_studio.profile.model import ProfileError
from nki_studio.profile.readers.detect import load_profile
from nki_studio.profile.roofline import RooflineOptions
from nki_studio.sim.trace import TraceEvent, write_jsonl

ORACLE = fixturegen.oracle_expectations()


@pytest.mark.parametrize("fmt", ["parquet", "json", "perfetto", "csv"])
def test_walkthrough_kernel_numbers(walkthrough_files: dict[str, Path], fmt: str) -> None:
    k = compute_metrics(load_profile(walkthrough_files[fmt])).kernel
    assert k.latency_ns == ORACLE["latency_ns"]
    assert k.dma_union_ns == ORACLE["dma_union_ns"] == 69841
    assert k.compute_union_ns == ORACLE["useful_compute_union_ns"] == 190251
    assert k.intersection_ns == ORACLE["dma_compute_intersection_ns"] == 56336
    assert k.dma_or_compute_ns == ORACLE["dma_or_compute_union_ns"]
    assert k.idle_ns == ORACLE["idle_ns"]
    assert k.engines == ORACLE["per_engine"]
    assert k.dma_bytes == ORACLE["dma_total_bytes"]
    assert k.effective_dma_gbps == pytest.approx(30.02752, rel=1e-6)
    assert k.end_to_end_dma_gbps == pytest.approx(9.590663, rel=1e-6)
    # Unattributed bucket: the two Sync semaphore waits with no source line, kept and shown.
    assert (k.unattributed_instr, k.unattributed_work_instr, k.unattributed_busy_ns) == (2, 0, 0)
    assert k.unattributed_wait_ns == 3000 + 3666


def test_walkthrough_per_line(walkthrough_files: dict[str, Path]) -> None:
    m = compute_metrics(load_profile(walkthrough_files["parquet"]))
    by_line = {ln.line: ln for ln in m.lines}
    for line, (count, work, busy, wait, overlap) in ORACLE["per_line"].items():
        got = by_line[int(line)]
        assert (got.instr, got.work_instr, got.busy_ns, got.wait_ns, got.dma_overlap_ns) == (
            count,
            work,
            busy,
            wait,
            overlap,
        )
    assert by_line[41].share == pytest.approx(0.459582, abs=1e-6)
    assert by_line[41].share_of_compute == pytest.approx(0.528223, abs=1e-6)
    assert by_line[47].share == pytest.approx(0.319007, abs=1e-6)
    assert [ln.line for ln in m.lines] == [41, 47, 44]  # hottest first
    # Exclusive time (metrics.md §3): [19505,100000) 41 alone, [100000,120000) 41+44, [120000,140000) 44,
    # [140000,150000) 44+47, [150000,209756) 47 alone — additive, sums to the compute union.
    assert {ln.line: ln.exclusive_ns for ln in m.lines} == {41: 90495, 44: 35000, 47: 64756}
    assert sum(ln.exclusive_ns for ln in m.lines) == m.kernel.compute_union_ns
    assert m.kernel.latency_source == "Summary.total_exec_time"


def test_walkthrough_roofline_with_dma_ceiling_setting(walkthrough_files: dict[str, Path]) -> None:
    opts = MetricOptions(roofline=RooflineOptions(dma_ceiling_gbps=368.0))
    roof = compute_metrics(load_profile(walkthrough_files["parquet"]), opts).kernel.roofline
    assert roof is not None
    assert roof.memory_floor_ns == pytest.approx(5698.783, abs=1e-3)
    assert roof.efficiency == pytest.approx(0.026061, abs=1e-5)  # floor / latency
    assert (
        roof.flops is None and "simulator trace" in roof.flops_source
    )  # never the profile's zero model_flops


def test_roofline_uses_simulator_trace_flops(walkthrough_files: dict[str, Path], tmp_path: Path) -> None:
    events = [
        TraceEvent(seq=i, op="nl.add", engine="vector", file="/ws/rmsnorm.py", line=41, flops=1_000_000)
        for i in range(5)
    ]
    trace = tmp_path / "trace.jsonl"
    with open(trace, "w", encoding="utf-8") as fh:
        write_jsonl(events, fh)
    tf = flops_from_trace(trace)
    assert tf.total == 5_000_000 and tf.by_line[("/ws/rmsnorm.py", 41)] == 5_000_000
    opts = MetricOptions(roofline=RooflineOptions(dma_ceiling_gbps=368.0))
    roof = compute_metrics(load_profile(walkthrough_files["parquet"]), opts, tf).kernel.roofline
    assert roof is not None and roof.flops == 5_000_000
    assert roof.peak_tflops == 1.0 and roof.ridge == pytest.approx(2.717391, rel=1e-6)
    assert roof.intensity == pytest.approx(5_000_000 / 2_097_152)
    assert roof.bound == "memory"


def test_fused_rows_count_for_every_line_and_unattributed_rows_are_kept(tmp_path: Path) -> None:
    tl = fixturegen.walkthrough_timeline()
    tl.location[1] = "/k/rmsnorm.py:41, /k/rmsnorm.py:60"  # fused: one instruction, two lines
    m = compute_metrics(load_profile(write_parquet(tl, tmp_path / "p")))
    by_line = {ln.line: ln for ln in m.lines}
    assert by_line[41].busy_ns == by_line[60].busy_ns == 100495
    assert by_line[41].fused_instr == by_line[60].fused_instr == 1
    assert by_line[44].fused_instr == 0
    # Shares of different lines do not sum to 100 %: fused time counts on both lines.
    assert sum(ln.busy_ns for ln in m.lines) > m.kernel.compute_union_ns
    assert m.kernel.unattributed_instr == 2


def test_iterations_and_dma_attribution(
    kernel_files: dict[str, Path], kernel_timeline: fixturegen.Timeline
) -> None:
    m = compute_metrics(load_profile(kernel_files["parquet"]))
    with_iters = [ln for ln in m.lines if ln.iterations]
    assert with_iters, "KernelIterationVariables present, so lines carry per-iteration numbers"
    for ln in with_iters:
        assert {it["label"] for it in ln.iterations or []} <= {f"i={k}" for k in range(4)}
        assert sum(it["instr"] for it in ln.iterations or []) <= ln.instr
    # DMA attributed through Flow equals the bytes each line's instructions triggered.
    expected: dict[int, int] = {}
    for j, i in enumerate(kernel_timeline.dma_trigger):
        for loc in (kernel_timeline.location[i] or "").split(","):
            expected[int(loc.rpartition(":")[2])] = expected.get(int(loc.rpartition(":")[2]), 0) + int(
                kernel_timeline.dma_bytes[j]
            )
    got = {ln.line: ln.dma_bytes for ln in m.lines if ln.dma_bytes}
    assert got == expected and got


def test_lnc2_unions_are_per_core(tmp_path: Path) -> None:
    tl = fixturegen.walkthrough_timeline()
    # Core 1 runs the same line-41 instruction shifted: a union across cores would be wrong.
    tl.start = np.r_[tl.start, 60000]
    tl.end = np.r_[tl.end, 90000]
    for col, v in (
        ("engine", "Vector"),
        ("track", "Vector Engine Row 0"),
        ("opcode", "TENSOR_TENSOR"),
        ("location", tl.location[1]),
    ):
        getattr(tl, col).append(v)
    tl.pcore = np.r_[tl.pcore, 1]
    tl.iteration.append(None)
    m = compute_metrics(load_profile(write_parquet(tl, tmp_path / "p")))
    line41 = next(ln for ln in m.lines if ln.line == 41)
    assert line41.per_core_busy_ns == {0: 100495, 1: 30000}
    assert line41.busy_ns == 100495
    assert m.kernel.cores == [0, 1]


def test_execution_window_selects_rows(tmp_path: Path) -> None:
    tl = fixturegen.walkthrough_timeline()
    tl.executions = [(0, 0, 100000), (1, 100000, 218666)]
    prof = load_profile(write_parquet(tl, tmp_path / "p"))
    assert prof.instructions.execution is not None
    assert prof.instructions.execution.tolist() == [0, 0, 1, 1, 1, 1]  # by start time
    m0 = compute_metrics(prof, MetricOptions(execution=0))
    m1 = compute_metrics(prof, MetricOptions(execution=1))
    assert m0.kernel.latency_ns == 100000 and "ExecutionInfo" in m0.kernel.latency_source
    assert {ln.line for ln in m0.lines} == {41}
    assert {ln.line for ln in m1.lines} == {44, 47}
    with pytest.raises(ProfileError, match="execution 5"):
        compute_metrics(prof, MetricOptions(execution=5))


def test_legacy_json_picosecond_timestamps_are_detected(tmp_path: Path) -> None:
    import json

    from fixturewriters import write_legacy_json

    path = write_legacy_json(fixturegen.walkthrough_timeline(), tmp_path / "p.json")
    doc = json.loads(path.read_text())
    for rec in doc["instruction"] + doc["dma"]:
        rec["timestamp"] *= 1000
        rec["duration"] *= 1000
    path.write_text(json.dumps(doc))
    prof = load_profile(path)
    assert any("picoseconds" in n for n in prof.notes)
    assert compute_metrics(prof).kernel.compute_union_ns == 190251


EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


@pytest.mark.skipif(not EXAMPLES, reason="no example kernels in examples/ yet")
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_synthetic_profiles_of_the_example_kernels_map_back_to_their_lines(
    example: Path, tmp_path: Path
) -> None:
    from nki_studio.profile.analyze import analyze

    tl = fixturegen.kernel_file_timeline(example, n_instructions=150, seed=5)
    report = analyze(write_parquet(tl, tmp_path / "p"), explicit=[example])
    assert report.problem() is None
    (heat,) = report.files.values()
    code = example.read_text().splitlines()
    recorded = {int(loc.rpartition(":")[2]) - 1 for t in tl.location if t for loc in t.split(",")}
    assert {ln.line for ln in heat.lines} == recorded
    body = fixturegen.kernel_body_lines(example.read_text())
    assert all(n + 1 in body and code[n].strip() for n in recorded)


def test_bir_debug_info_is_the_last_fallback(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = write_parquet(fixturegen.walkthrough_timeline(), tmp_path / "p", kernel_instructions=False)
    t = pq.read_table(d / "Instruction.parquet")
    locs = t.column("nki_source_location")
    t = t.set_column(
        t.schema.get_field_index("bir_debug_info_source_location"),
        "bir_debug_info_source_location",
        locs.cast(pa.string()),
    )
    t = t.set_column(
        t.schema.get_field_index("nki_source_location"),
        "nki_source_location",
        pa.nulls(t.num_rows, pa.string()),
    )
    pq.write_table(t, d / "Instruction.parquet")
    m = compute_metrics(load_profile(d))
    assert m.kernel.location_source == "Instruction.bir_debug_info_source_location"
    assert {ln.line: ln.busy_ns for ln in m.lines} == {41: 100495, 44: 50000, 47: 69756}
