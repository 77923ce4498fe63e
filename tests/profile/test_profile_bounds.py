"""Bounds (bounds.md §2) and investigations (§3): on estimated profiles of purpose-built kernels, against the
same quantities computed from the simulator trace, through a Parquet round trip, and on measured fixtures."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import perf_kernels as pk
import pytest
from fixturegen import Timeline, profile_timeline
from fixturewriters import write_parquet
from nki_studio.estimate.execution import LEAD_NS, TAIL_NS, kernel_ns
from nki_studio.estimate.profile import estimate_profile
from nki_studio.estimate.schedule import schedule
from nki_studio.model.targets import Target
from nki_studio.profile.bounds import compute_bounds
from nki_studio.profile.heatmap import heat_line_from_metrics
from nki_studio.profile.intervals import union_length
from nki_studio.profile.investigations import investigate
from nki_studio.profile.metrics import compute_metrics
from nki_studio.profile.model import Profile
from nki_studio.profile.readers.detect import load_profile

EXPECTED = {  # variant -> (investigation kind, code, marker of the line it must fire on)
    "narrow_rows": ("dma-efficiency", "NKI701", "load-b"),
    "reload": ("redundant-dma", "NKI703", "load-b"),
    "undersized": ("tensor-engine", "NKI705", "matmul"),
    "transpose": ("transposes", "NKI706", "transpose"),
}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("perf_kernels"))


def _estimated(variant: str, directory: str) -> tuple[Path, Profile]:
    path, trace = pk.trace(variant, directory)
    return path, estimate_profile(trace, Target())


def test_the_clean_kernel_has_nothing_to_report(kernels: str) -> None:
    _, p = _estimated("clean", kernels)
    found = investigate(p)
    assert [i.kind for i in found] == ["dma-efficiency", "redundant-dma", "tensor-engine", "transposes"]
    assert all(i.status == "nothing found" and not i.findings for i in found), [i.summary for i in found]
    assert all(i.summary for i in found)  # "nothing found" is reported with what was examined


@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_each_investigation_fires_on_the_line_at_fault_only(kernels: str, variant: str) -> None:
    path, p = _estimated(variant, kernels)
    kind, code, marker = EXPECTED[variant]
    line = pk.marker_line(path.read_text(), marker)
    by_kind = {i.kind: i for i in investigate(p)}
    hit = by_kind.pop(kind)
    assert hit.status == "found"
    assert {(f.code, f.line) for f in hit.findings} == {(code, line)}
    assert all(f.file == str(path) and f.numbers for f in hit.findings)
    assert all(not i.findings for i in by_kind.values()), {k: i.findings for k, i in by_kind.items()}


def test_undersized_tiles_and_transposes_carry_their_numbers(kernels: str) -> None:
    _, p = _estimated("undersized", kernels)
    (f,) = next(i for i in investigate(p) if i.kind == "tensor-engine").findings
    assert (f.numbers["K"], f.numbers["M"], f.numbers["N"]) == (32, 128, 512)
    assert f.numbers["count"] == 16 * 4 and f.numbers["share"] == 1.0
    _, p = _estimated("transpose", kernels)
    (f,) = next(i for i in investigate(p) if i.kind == "transposes").findings
    assert f.numbers["count"] == 64 and f.numbers["share"] == 1.0


@pytest.mark.parametrize("variant", ["clean", "transpose", "reload"])
def test_bounds_of_an_estimate_equal_the_trace_quantities(kernels: str, variant: str) -> None:
    _, trace = pk.trace(variant, kernels)
    target = Target()
    b = compute_bounds(estimate_profile(trace, target))
    sched = schedule(trace, target.limits)
    dma = [i for i, e in enumerate(trace) if e.engine == "dma"]
    moved = sum(max(sum(trace[i].bytes_read.values()), sum(trace[i].bytes_written.values())) for i in dma)
    assert b.dma_bytes == moved
    # the estimate's window: its instructions (the first one LEAD_NS after the start) and the fixed cost
    shift = LEAD_NS - int(np.floor(sched.start.min()))
    s = np.floor(sched.start[dma]).astype(np.int64) + shift
    e = np.maximum(np.ceil(sched.end[dma]).astype(np.int64) + shift, s + 1)
    assert b.bound("memory_bound").ns == union_length(s, e)
    last = int(np.ceil(sched.end).max()) + shift
    assert b.window == (0, round(kernel_ns(last - LEAD_NS))) == (0, last + TAIL_NS)
    # inputs a_t, b (bf16) and the fp32 output, each counted once
    assert b.necessary_bytes == 2 * (128 * 2048 * 2) + 2048 * 2048 * 4
    matmul_flops = sum(e.flops for e in trace if e.op == "nisa.nc_matmul")
    assert b.hardware_flops - b.transpose_flops == matmul_flops == 2 * 128 * 2048 * 2048
    peak = 128 * 128 * 2 * target.limits.clock_ghz["tensor"] * 1e9
    assert b.bound("compute_bound_ideal_useful_flops").ns == pytest.approx(matmul_flops / peak * 1e9)
    tensor = [i for i, e in enumerate(trace) if e.engine == "tensor"]
    ts = np.floor(sched.start[tensor]).astype(np.int64) + shift
    te = np.maximum(np.ceil(sched.end[tensor]).astype(np.int64) + shift, ts + 1)
    assert b.engines["Tensor"] == union_length(ts, te)
    assert b.bound("perfect_pipeline").ns == max(b.engines.values())
    assert b.bottleneck == max(b.engines, key=lambda k: b.engines[k])
    reloads = b.bound("memory_bound_ideal_no_reloads")
    assert (reloads.gap_ns > 0) == (variant == "reload")


def _timeline(p: Profile) -> Timeline:
    """The fixture timeline of a profile (instructions, locations, DMA, its execution window) with the bounds
    columns."""
    ins, dma = p.instructions, p.dma
    kmn = ins.matmul_kmn
    assert kmn is not None and ins.transpose is not None and dma.source is not None and dma.dest is not None
    return dataclasses.replace(
        profile_timeline(p),
        instr_flops=ins.flops,
        instr_kind=["TRANSPOSE" if t else "REGULAR" for t in ins.transpose],
        instr_operands=[f"K*M={a}*{b} N={c}" if a >= 0 else "" for a, b, c in kmn],
        dma_partitions=dma.partitions,
        dma_source=[dma.source.value(i) or "" for i in range(len(dma))],
        dma_dest=[dma.dest.value(i) or "" for i in range(len(dma))],
        tensors=[(t.name, t.role, t.size) for t in p.tensors],
        metadata={k: v for k, v in p.metadata.items() if k != "target"},
    )


def _comparable(b: dict) -> dict:
    return {k: v for k, v in b.items() if k not in ("provenance", "peaks", "window_source")}


@pytest.mark.parametrize("variant", ["clean", "narrow_rows", "undersized", "transpose"])
def test_a_parquet_round_trip_keeps_heatmap_bounds_and_findings(
    kernels: str, variant: str, tmp_path: Path
) -> None:
    _, p = _estimated(variant, kernels)
    back = load_profile(str(write_parquet(_timeline(p), tmp_path / variant)))

    def heat(profile: Profile) -> list[dict]:
        # iteration labels are not written here (tests/estimate/test_profile.py round-trips them)
        rows = [heat_line_from_metrics(ln).to_dict(0.0) for ln in compute_metrics(profile).lines]
        return [{k: v for k, v in r.items() if k != "iterations"} for r in rows]

    assert heat(back) == heat(p)
    # read back it is a measured profile: its bounds' window is the first to last kernel DMA (an estimate's is
    # its execution window), computed alike from the same columns
    as_measured = dataclasses.replace(p, provenance="measured")
    assert _comparable(compute_bounds(back).to_dict()) == _comparable(compute_bounds(as_measured).to_dict())

    def found(profile: Profile) -> list[tuple[str, str, int]]:
        return [(f.code, f.file, f.line) for i in investigate(profile) for f in i.findings]

    assert found(back) == found(p)


# ---- measured fixtures --------------------------------------------------------------------------------------


def _measured(**extra: object) -> Timeline:
    """A measured-style timeline: a matmul line with K=32 tiles, a transpose line, a reloaded input and a spill."""
    rows = [  # engine, opcode, line, start, end, flops, kind, operands
        ("Tensor", "MATMUL", 10, 1000, 2000, 2 * 32 * 128 * 512, "REGULAR", "K*M=32*128 N=512"),
        ("Tensor", "MATMUL", 11, 2000, 2600, 2 * 128 * 128 * 128, "TRANSPOSE", ""),
        ("Vector", "TENSOR_TENSOR", 12, 2600, 4000, 0, None, ""),
        ("Sync", "DMA_TRIGGER", 13, 0, 10, 0, None, ""),  # loads x, twice
        ("Sync", "DMA_TRIGGER", 13, 4000, 4010, 0, None, ""),
        ("Sync", "DMA_TRIGGER", 12, 4100, 4110, 0, None, ""),  # the spill of line 12's output
    ]
    n = len(rows)
    tl = Timeline(
        start=np.array([r[3] for r in rows], np.int64),
        end=np.array([r[4] for r in rows], np.int64),
        engine=[r[0] for r in rows],
        track=[r[0] for r in rows],
        opcode=[r[1] for r in rows],
        location=[f"/home/ubuntu/k.py:{r[2]}" for r in rows],
        pcore=np.zeros(n, np.int64),
        iteration=[None] * n,
        dma_start=np.array([20, 4020, 4120, 4300], np.int64),
        dma_end=np.array([900, 4900, 4500, 4700], np.int64),
        dma_bytes=np.array([1 << 20, 1 << 20, 65536, 65536], np.int64),
        dma_queue=["qSyncIO0", "qSyncIO0", "qSpill", "qSpill"],
        dma_tensor=["x", "x", "spill0", "spill0"],
        dma_trigger=np.array([3, 4, 5, 5], np.int64),
        total_exec_time_s=5000e-9,
        instr_flops=np.array([r[5] for r in rows], np.int64),
        instr_kind=[r[6] for r in rows],
        instr_operands=[r[7] for r in rows],
        dma_partitions=np.array([128, 128, 128, 128], np.int32),
        dma_source=["[[INPUT]]", "[[INPUT]]", "[SB]", "VIRTUAL_0"],
        dma_dest=["[SB]", "[SB]", "VIRTUAL_0", "[SB]"],
        tensors=[("x", "IN", 1 << 20), ("out", "OUT", 1 << 16)],
    )
    return dataclasses.replace(tl, **extra)  # type: ignore[arg-type]


def test_measured_investigations_on_a_fixture_profile(tmp_path: Path) -> None:
    p = load_profile(str(write_parquet(_measured(), tmp_path / "m")))
    found = {i.kind: i for i in investigate(p)}
    lines = {k: sorted((f.code, f.line) for f in i.findings) for k, i in found.items()}
    assert lines["tensor-engine"] == [("NKI705", 10)]
    assert lines["transposes"] == [("NKI706", 11)]
    assert lines["redundant-dma"] == [("NKI703", 13), ("NKI704", 12)]
    assert lines["dma-efficiency"] == [("NKI701", 12)]  # the spills' 512 B rows; x moves 8 KiB per row
    spill = next(f for f in found["redundant-dma"].findings if f.code == "NKI704")
    assert spill.numbers["cost_bytes"] == 2 * 65536
    b = compute_bounds(p)
    assert b.necessary_bytes == (1 << 20) + (1 << 16)
    assert b.transpose_flops == 2 * 128 * 128 * 128
    ideal = b.dma_bytes / 435e9 * 1e9
    busy = b.bound("memory_bound").ns
    assert busy is not None
    if ideal <= busy:
        assert b.bound("memory_bound_ideal").ns == pytest.approx(ideal, rel=1e-6)
    else:  # the fixture's transfers move faster than the peak: the ideal bound would exceed the busy time
        assert b.bound("memory_bound_ideal").ns is None
        assert "contradict the measured times" in b.bound("memory_bound_ideal").missing


def test_a_bound_above_the_time_it_bounds_is_withheld() -> None:
    from nki_studio.profile.bounds import _family

    fam = _family(
        100.0,
        ["memory_bound", "memory_bound_ideal", "memory_bound_ideal_no_reloads"],
        [80.0, 90.0, 50.0],
        [None] * 3,
    )
    assert [b.ns for b in fam.bounds] == [80.0, None, 50.0]
    assert [b.gap_ns for b in fam.bounds] == [
        20.0,
        None,
        30.0,
    ]  # the next bound's gap is to the last sound one
    assert "exceeds the memory_bound" in fam.bounds[1].missing


def test_missing_prerequisites_are_named_with_the_fix(tmp_path: Path) -> None:
    bare = _measured(instr_flops=None, instr_kind=None, tensors=[], dma_trigger=np.full(4, -1, np.int64))
    p = load_profile(str(write_parquet(bare, tmp_path / "bare")))
    found = {i.kind: i for i in investigate(p)}
    assert all(i.status == "unavailable" for i in found.values())
    assert "NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1" in found["dma-efficiency"].summary
    assert "TensorInfo" in found["redundant-dma"].summary
    assert "adjusted_flops" in found["tensor-engine"].summary
    b = compute_bounds(p)
    assert b.bound("compute_bound_ideal_flops").ns is None and b.bound("compute_bound_ideal_flops").missing
    nolines = _measured(location=[None] * 6)
    p = load_profile(str(write_parquet(nolines, tmp_path / "nolines", kernel_instructions=False)))
    assert "NEURON_FRAMEWORK_DEBUG=1" in investigate(p)[0].summary


# ---- command line ---------------------------------------------------------------------------------------------


def _parquet_of(variant: str, kernels: str, directory: Path) -> Path:
    _, p = _estimated(variant, kernels)
    return write_parquet(_timeline(p), directory / variant)


def test_cli_analyze_text_and_json(kernels: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from nki_studio.cli.main import main

    prof = _parquet_of("transpose", kernels, tmp_path)
    assert main(["profile", "analyze", str(prof), "--root", kernels]) == 0
    text = capsys.readouterr().out
    line = pk.marker_line(pk.source("transpose"), "transpose")
    assert "bottleneck" in text and "compute_bound_ideal_useful_flops" in text
    assert f"perf_transpose.py:{line}: NKI706" in text
    assert text.count("nothing found") == 3
    assert main(["profile", "analyze", str(prof), "--root", kernels, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["bounds"]["bottleneck"] in data["bounds"]["engines"]
    (found,) = [f for i in data["investigations"] for f in i["findings"]]
    assert (
        found["code"] == "NKI706" and found["line"] == line and found["local"].endswith("perf_transpose.py")
    )


def test_cli_compare_shows_bounds_side_by_side_and_line_deltas(
    kernels: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from nki_studio.cli.main import main

    before, after = _parquet_of("transpose", kernels, tmp_path), _parquet_of("clean", kernels, tmp_path)
    assert main(["profile", "compare", str(before), str(after), "--root", kernels, "--json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    rows = {r["name"]: r for r in cmp["bounds"]}
    assert rows["compute_bound"]["b"] < rows["compute_bound"]["a"]  # the transposes are gone
    assert rows["compute_bound_ideal_useful_flops"]["delta"] == 0  # the useful work is the same
    assert cmp["findings"]["gone"] == [
        {"code": "NKI706", "file": "", "line": pk.marker_line(pk.source("transpose"), "transpose")}
    ]
    assert cmp["findings"]["new"] == []
    assert any(r["delta_ns"] < 0 for r in cmp["lines"])
    assert main(["profile", "compare", str(before), str(after), "--root", kernels]) == 0
    assert "Findings gone: NKI706" in capsys.readouterr().out
    assert main(["profile", "compare", str(before), str(tmp_path / "missing")]) == 2


def test_cli_simulate_analyze_reports_the_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from nki_studio.cli.main import main

    kernel = tmp_path / "reload.py"
    kernel.write_text(pk.source("reload"))
    inputs = ["--inputs", "a_t=bfloat16[128,2048] b=bfloat16[128,2048]"]
    assert main(["simulate", str(kernel), *inputs, "--analyze"]) == 0
    text = capsys.readouterr().out
    line = pk.marker_line(pk.source("reload"), "load-b")
    assert "Bounds (estimated" in text and "Investigations (estimated)" in text
    assert f"reload.py:{line}: NKI703" in text
    assert main(["simulate", str(kernel), *inputs, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    estimate = result["estimate"]  # the one documented section: no "analysis" beside it
    assert result["status"] == "no_reference" and "analysis" not in result  # ran, no reference given
    assert estimate["label"] == "estimated" and estimate["bounds"]["provenance"] == "estimated"
    (reload,) = [i for i in estimate["investigations"] if i["kind"] == "redundant-dma"]
    assert [(f["code"], f["line"]) for f in reload["findings"]] == [("NKI703", line)]
    assert "input `b`" in reload["findings"][0]["message"]  # the parameter's name, not arg1
    assert main(["simulate", str(kernel), *inputs, "--analyze", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["estimate"]["investigations"] == estimate["investigations"]


def test_lnc2_cores_are_bounded_separately_with_their_own_necessary_bytes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from nki_studio.cli.main import main

    kernel = Path(__file__).resolve().parents[2] / "examples" / "lnc2_add.py"
    assert main(["simulate", str(kernel), "--json"]) == 0
    analysis = json.loads(capsys.readouterr().out)["estimate"]
    head = analysis["bounds"]
    cores = [head, *head["other_cores"]]
    assert sorted(c["core"] for c in cores) == [0, 1]
    inputs_outputs = sum(
        r["size"] for i in analysis["investigations"] if i["kind"] == "redundant-dma" for r in i["lines"]
    )
    assert inputs_outputs > 0
    assert sum(c["necessary_bytes"] for c in cores) == sum(c["dma_bytes"] for c in cores)  # nothing reloaded
    for c in cores:
        gaps = [b["gap_ns"] for f in c["families"] for b in f["bounds"] if b["gap_ns"] is not None]
        assert all(g >= 0 for g in gaps), c


def test_kmn_are_read_defensively_from_operands_of_tensor_rows() -> None:
    import pyarrow as pa
    from nki_studio.profile.readers.detail_columns import instruction_details

    texts = ["K*M=32*128 N=512", "K*M = 64 * 128", "data=0xd size=4,4", None, "K*M=128*128 N=256"]
    table = pa.table({"operands": texts, "adjusted_flops": [1, 2, 3, 4, 5]})
    _, transpose, kmn = instruction_details(table, np.array([True, True, True, True, False]))
    assert transpose is None
    assert kmn is not None
    assert kmn.tolist() == [[32, 128, 512], [64, 128, -1], [-1, -1, -1], [-1, -1, -1], [-1, -1, -1]]


def test_measured_kmn_are_labelled_inferred_and_estimated_ones_are_not(kernels: str, tmp_path: Path) -> None:
    from nki_studio.profile.investigations import INFERRED_KMN

    p = load_profile(str(write_parquet(_measured(), tmp_path / "m")))
    te = next(i for i in investigate(p) if i.kind == "tensor-engine")
    (f,) = te.findings
    assert INFERRED_KMN in te.summary and INFERRED_KMN in f.message
    assert (f.numbers["K"], f.numbers["M"], f.numbers["N"]) == (32, 128, 512)  # the inferred format, read
    assert INFERRED_KMN in f.numbers["kmn_source"]
    _, est = _estimated("undersized", kernels)
    te = next(i for i in investigate(est) if i.kind == "tensor-engine")
    assert te.findings and INFERRED_KMN not in te.summary
    assert all(
        INFERRED_KMN not in f.message and f.numbers["kmn_source"] == "simulator operand shapes"
        for f in te.findings
    )
