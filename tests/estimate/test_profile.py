"""The estimated profile of real examples: the profile views work on it unchanged, it survives a Parquet round
trip, and the fused RMSNorm kernel is estimated faster than the plain one (ranking only, never tuned)."""

from __future__ import annotations

import dataclasses
import sys
from functools import cache
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from nki_studio.estimate.profile import estimate_profile
from nki_studio.model.targets import Target
from nki_studio.profile.heatmap import build_payload, heat_line_from_metrics
from nki_studio.profile.metrics import compute_metrics
from nki_studio.profile.model import Profile
from nki_studio.profile.readers.detect import load_profile
from nki_studio.sim.api import simulate
from nki_studio.sim.trace import TraceEvent

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "profile"))

import fixturegen  # noqa: E402
import fixturewriters  # noqa: E402

EXAMPLES = ROOT / "examples"
PLAIN, FUSED = EXAMPLES / "rmsnorm_residual.py", EXAMPLES / "rmsnorm_residual_fused.py"


@cache
def _rmsnorm_trace(path: Path, n: int = 512, d: int = 2048) -> tuple[TraceEvent, ...]:
    rng = np.random.default_rng(7)
    bf = ml_dtypes.bfloat16
    x, r, w = (rng.standard_normal(s).astype(bf) for s in ((n, d), (n, d), (d,)))
    result = simulate(str(path), x, r, w, trace=True)
    assert result.trace is not None
    return tuple(result.trace)


def _profile() -> Profile:
    return estimate_profile(_rmsnorm_trace(FUSED), Target())


def test_the_estimated_profile_is_labelled_and_complete() -> None:
    p = _profile()
    assert p.provenance == "estimated"
    assert len(p.instructions) and len(p.dma)
    assert set(p.instructions.engine.values) <= {"Vector", "Scalar", "Sync"}
    assert p.dma.partitions is not None and int(p.dma.partitions.max()) == 128
    assert p.dma.direction is not None and set(p.dma.direction.values) == {"hbm->sbuf", "sbuf->hbm"}
    assert {(t.role, t.size) for t in p.tensors} >= {("IN", 512 * 2048 * 2), ("OUT", 512 * 2048 * 2)}
    assert p.metadata["dma_ddr_bandwidth"] > 0
    assert all(v.startswith("iteration=") for v in p.locations.iteration.values)


def test_line_metrics_heatmap_and_timeline_work_on_an_estimate() -> None:
    p = _profile()
    m = compute_metrics(p)
    lines = {ln.line: ln for ln in m.lines}
    source = FUSED.read_text().splitlines()
    hot = max(m.lines, key=lambda ln: ln.busy_ns)
    assert (
        "nisa." in source[hot.line - 1]
    )  # time sits on instruction lines, never on `assert` or `n, d = ...`
    dma_lines = [no for no, text in enumerate(source, 1) if "dma_copy" in text]
    assert all(lines[no].dma_bytes > 0 for no in dma_lines)
    assert m.kernel.timeline and {t["name"] for t in m.kernel.timeline} >= {"DMA", "Vector", "Scalar"}
    heat = [heat_line_from_metrics(ln) for ln in m.lines]
    payload = build_payload("file:///k.py", "estimate", {"label": "estimated"}, heat, {})
    assert payload["lines"] and max(ln["heat"] for ln in payload["lines"]) == 1.0


def _timeline(p: Profile) -> fixturegen.Timeline:
    """The fixture timeline of a profile with its iteration labels."""
    loc = p.locations
    iteration: list[dict[str, int] | None] = [None] * len(p.instructions)
    for k in range(loc.instr.size):
        var, _, value = (loc.iteration.value(k) or "").partition("=")
        iteration[int(loc.instr[k])] = {var: int(value)}
    return dataclasses.replace(fixturegen.profile_timeline(p), iteration=iteration)


def test_a_parquet_round_trip_keeps_the_per_line_metrics(tmp_path: Path) -> None:
    p = _profile()
    out = fixturewriters.write_parquet(_timeline(p), tmp_path / "estimate")
    back = load_profile(str(out))
    key = ("line", "instr", "busy_ns", "engines", "dma_bytes", "dma_ns", "dma_overlap_ns", "iterations")

    def rows(profile: Profile) -> dict[int, tuple[object, ...]]:
        return {ln.line: tuple(getattr(ln, k) for k in key) for ln in compute_metrics(profile).lines}

    assert rows(back) == rows(p)


@pytest.mark.skipif(not (PLAIN.is_file() and FUSED.is_file()), reason="RMSNorm examples not in examples/")
def test_fused_rmsnorm_is_estimated_faster_than_plain() -> None:
    plain = compute_metrics(estimate_profile(_rmsnorm_trace(PLAIN), Target())).kernel.latency_ns
    fused = compute_metrics(estimate_profile(_rmsnorm_trace(FUSED), Target())).kernel.latency_ns
    print(f"estimated timeline: plain {plain / 1e3:.1f} us, fused {fused / 1e3:.1f} us")
    assert fused < plain
