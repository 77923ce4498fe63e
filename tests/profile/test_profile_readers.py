"""Every reader gives the same per-line result for the same synthetic profile, including the Perfetto
encoding variants (inline names, incremental-state resets that re-use interned ids, default tracks)."""

from __future__ import annotations

from pathlib import Path

import fixturegen
import numpy as np
import pytest
from fixturewriters import write_pftrace
from hypothesis import given, settings
from hypothesis import strategies as st
from nki_studio.profile.metrics import compute_metrics
from nki_studio.profile.readers.common import parse_locations
from nki_studio.profile.readers.detect import detect_format, load_profile
from nki_studio.profile.readers.perfetto import pair_slices


def per_line(path: Path) -> list[tuple[object, ...]]:
    m = compute_metrics(load_profile(path))
    return [
        (
            ln.file,
            ln.line,
            ln.instr,
            ln.work_instr,
            ln.busy_ns,
            ln.wait_ns,
            ln.dma_overlap_ns,
            ln.fused_instr,
            tuple(sorted(ln.engines.items())),
            round(ln.share, 9),
        )
        for ln in m.lines
    ]


@pytest.mark.parametrize("fmt", ["json", "perfetto", "csv"])
def test_readers_agree_with_parquet_per_line(kernel_files: dict[str, Path], fmt: str) -> None:
    expected = per_line(kernel_files["parquet"])
    assert expected and any(row[7] for row in expected)  # the fixture has fused rows
    assert per_line(kernel_files[fmt]) == expected


def test_summary_json_agrees_on_kernel_totals(kernel_files: dict[str, Path]) -> None:
    full = compute_metrics(load_profile(kernel_files["parquet"])).kernel
    summ = compute_metrics(load_profile(kernel_files["summary-json"])).kernel
    assert summ.latency_ns == full.latency_ns and summ.latency_source == "Summary.total_exec_time"
    assert summ.dma_union_ns == full.dma_union_ns and "Summary.dma_active_time" in summ.dma_union_source
    assert summ.engines == full.engines
    assert summ.dma_bytes == full.dma_bytes


@pytest.mark.parametrize(
    "variant",
    [
        {"interned": False},
        {"reset_every": 37},
        {"default_track": True},
        {"reset_every": 50, "default_track": True},
    ],
)
def test_perfetto_encodings_decode_to_the_same_lines(
    kernel_files: dict[str, Path],
    kernel_timeline: fixturegen.Timeline,
    tmp_path: Path,
    variant: dict[str, object],
) -> None:
    path = write_pftrace(kernel_timeline, tmp_path / "v.pftrace", **variant)  # type: ignore[arg-type]
    assert per_line(path) == per_line(kernel_files["parquet"])


def test_perfetto_small_blocks_split_records_anywhere(kernel_files: dict[str, Path]) -> None:
    from nki_studio.profile.model import sort_by_start
    from nki_studio.profile.readers.perfetto import read_pftrace

    whole = compute_metrics(load_profile(kernel_files["perfetto"]))
    for block in (7, 64, 1000):  # smaller than one packet, a few packets, many
        tiny = compute_metrics(sort_by_start(read_pftrace(kernel_files["perfetto"], block_size=block)))
        assert [(ln.line, ln.busy_ns, ln.instr) for ln in tiny.lines] == [
            (ln.line, ln.busy_ns, ln.instr) for ln in whole.lines
        ]


def test_format_detection(kernel_files: dict[str, Path], tmp_path: Path) -> None:
    assert detect_format(kernel_files["parquet"]) == "parquet"
    assert detect_format(kernel_files["csv"]) == "csv"
    assert detect_format(kernel_files["perfetto"]) == "perfetto"
    assert detect_format(kernel_files["json"]) == "json"
    # A workspace directory holding profiles/global/<name>@latest is found too.
    nested = tmp_path / "ws" / "profiles" / "global" / "k@latest"
    nested.mkdir(parents=True)
    for f in kernel_files["parquet"].iterdir():
        (nested / f.name).write_bytes(f.read_bytes())
    assert len(load_profile(tmp_path / "ws").instructions) == len(
        load_profile(kernel_files["parquet"]).instructions
    )
    # summary-json with log lines before the JSON (it goes to stdout).
    text = kernel_files["summary-json"].read_text()
    noisy = tmp_path / "noisy.json"
    noisy.write_text("INFO: processing\nWARN: x\n" + text)
    assert load_profile(noisy).format == "summary-json"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/home/ubuntu/k.py:42", (("/home/ubuntu/k.py", 42),)),
        ("['/a/k.py:3', '/a/k.py:7']", (("/a/k.py", 3), ("/a/k.py", 7))),
        ("k.py:3;k.py:9", (("k.py", 3), ("k.py", 9))),
        ("C:\\work\\k.py:12", (("C:\\work\\k.py", 12),)),
        ("/a/k.py:5:17", (("/a/k.py", 5),)),
        ("", ()),
        (None, ()),
        ("garbage", ()),
        ("/a/k.py:0", ()),
    ],
)
def test_parse_locations(text: str | None, expected: tuple[tuple[str, int], ...]) -> None:
    assert parse_locations(text) == expected


def _stack_pairs(track: list[int], kind: list[int]) -> set[tuple[int, int]]:
    stacks: dict[int, list[int]] = {}
    out = set()
    for i, (t, k) in enumerate(zip(track, kind, strict=True)):
        if k > 0:
            stacks.setdefault(t, []).append(i)
        elif stacks.get(t):
            out.add((stacks[t].pop(), i))
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from([1, -1])), max_size=40))
def test_pair_slices_matches_a_stack_per_track(events: list[tuple[int, int]]) -> None:
    track = [t for t, _ in events]
    kind = [k for _, k in events]
    b, e, open_count = pair_slices(np.array(track, np.int64), np.array(kind, np.int8))
    got = set(zip(b.tolist(), e.tolist(), strict=True))
    assert got == _stack_pairs(track, kind)
    assert open_count == sum(1 for k in kind if k > 0) - len(got)


# The only real Neuron profile output found publicly: a summary-json excerpt of an NKI Vector-Engine kernel on
# trn1 (trnsci/trnblas, docs/design/mp2_energy_profile_findings.md, Apache-2.0; profile-formats/samples/).
# Its *_percent values are fractions and its times are seconds.
REAL_SUMMARY_EXCERPT = {
    "vector_engine_active_time_percent": 0.9645396092701302,
    "tensor_engine_active_time_percent": 2.2616407562047187e-06,
    "scalar_engine_active_time_percent": 0.03673315592245759,
    "gpsimd_engine_active_time_percent": 1.0491756505262174e-04,
    "dma_active_time_percent": 0.26416618715491547,
    "hbm_read_bytes": 6582249472,
    "hbm_write_bytes": 1835008,
    "vector_engine_instruction_count": 403039,
    "vector_engine_instruction_time": 0.224051265651,
    "tensor_engine_instruction_count": 21,
    "tensor_engine_active_time": 4.83557e-07,
    "scalar_engine_instruction_count": 16407,
    "sync_engine_instruction_count": 52223,
    "total_time": 0.213808050051,
    "total_active_time": 0.20825356317,
    "total_active_time_percent": 0.9740211517776104,
    "neuroncore_cycle_count": 299331264,
    "dma_transfer_total_bytes": 3288352768,
    "dma_transfer_count": 18935,
    "instance_type": "trn1.2xlarge",
    "compiler_version": "2.24.5133.0+58f8de22",
    "runtime_version": "2.31.24 (0b044)",
    "profiler_version": "2.29.18.0%kaena-tools/2.29@d5fe7ba",
}


def test_real_summary_json_sample_units(tmp_path: Path) -> None:
    import json

    path = tmp_path / "s.json"
    path.write_text(json.dumps({"n_" + "0" * 40: REAL_SUMMARY_EXCERPT}))
    prof = load_profile(path)
    k = compute_metrics(prof).kernel
    assert prof.format == "summary-json" and prof.metadata["instance_type"] == "trn1.2xlarge"
    assert k.latency_ns == 213_808_050 and k.latency_source == "Summary.total_time"  # seconds → ns
    assert k.engines["Tensor"] == 484  # seconds field wins over the percent
    assert k.engines["Vector"] == round(0.9645396092701302 * 0.213808050051 * 1e9)  # fraction × total_time
    assert k.dma_union_ns == round(0.26416618715491547 * 0.213808050051 * 1e9)
    assert k.dma_bytes == 3288352768 and k.roofline is not None and k.roofline.bytes == 6582249472 + 1835008


def test_lnc2_profiles_agree_across_formats(tmp_path: Path, kernel_file: Path) -> None:
    """Two physical cores: Parquet pcore_idx, legacy JSON subgraph sgNN, CSV pcore_idx and one Perfetto
    parent track per core all give the same per-core unions."""
    tl = fixturegen.kernel_file_timeline(kernel_file, n_instructions=300, seed=4, cores=2)
    files = fixturegen.write_all(tl, tmp_path, "lnc2")

    def per_core(path: Path) -> list[tuple[object, ...]]:
        m = compute_metrics(load_profile(path))
        assert m.kernel.cores == [0, 1]
        return [(ln.line, ln.busy_ns, tuple(sorted(ln.per_core_busy_ns.items()))) for ln in m.lines]

    expected = per_core(files["parquet"])
    assert any(len(row[2]) == 2 and all(v for _, v in row[2]) for row in expected)
    for fmt in ("json", "csv", "perfetto"):
        assert per_core(files[fmt]) == expected, fmt


def test_arrow_columns_to_numpy_across_chunks_nulls_and_dictionaries() -> None:
    import pyarrow as pa
    from nki_studio.profile.readers.common import codes_of, filled_numpy

    big = 2**62 + 1  # not representable as float64: nulls must not take a float detour
    col = pa.chunked_array(
        [
            pa.array([1, None, big], pa.int64()).slice(1),
            pa.array([None, None], pa.int64()),
            pa.array([7], pa.int64()),
        ]
    )
    assert filled_numpy(col, -1, np.int64).tolist() == [-1, big, -1, -1, 7]
    # Chunks with different dictionaries (and a null) map to one code table.
    d1 = pa.DictionaryArray.from_arrays(pa.array([0, 1, None], pa.int32()), pa.array(["a", "b"]))
    d2 = pa.DictionaryArray.from_arrays(pa.array([1, 0], pa.int32()), pa.array(["c", "a"]))
    codes = codes_of(pa.chunked_array([d1, d2]))
    assert [codes.value(i) for i in range(5)] == ["a", "b", None, "a", "c"]
    plain = codes_of(pa.chunked_array([pa.array(["x", None, "x"])]))
    assert [plain.value(i) for i in range(3)] == ["x", None, "x"]


def test_all_null_optional_columns_are_not_read(tmp_path: Path) -> None:
    import pyarrow.parquet as pq
    from fixturewriters import write_parquet
    from nki_studio.profile.readers.parquet import _all_null

    tl = fixturegen.walkthrough_timeline()
    tl.location = [None] * tl.n
    path = write_parquet(tl, tmp_path / "p", kernel_instructions=False)
    pf = pq.ParquetFile(path / "Instruction.parquet")
    assert _all_null(pf, "nki_source_location", pf.schema_arrow) and not _all_null(
        pf, "opcode", pf.schema_arrow
    )
    prof = load_profile(path)
    assert prof.locations.instr.size == 0 and len(prof.instructions) == tl.n
