"""Searches through the service with the real sandboxed runner on the purpose-built kernels: tune finds the
variant the estimate and its bounds predict, never ranks a failing or pruned one, reruns from the cache, and
a candidate that hangs or eats memory is killed, reported, and the search goes on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from nki_studio.protocol.tune import TuneReport
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import Refused
from nki_studio.service.tune import TuneError, TuneOptions, apply_winner, tune


def run(path: Path, **options: object) -> TuneReport:
    settings = Settings(trusted_workspace=True)  # the declared limits (60 s, 4 GiB)
    return tune(str(path), path.read_text(), settings, TuneOptions(workers=2, **options))  # type: ignore[arg-type]


def check_invariants(report: TuneReport) -> None:
    """Only passing candidates are ranked, in estimate order; the winner is rank 1."""
    ranked = [r for r in report["candidates"] if r["rank"] is not None]
    assert all(r["verdict"] == "ranked" and not r["reason"] for r in ranked)
    assert [r["rank"] for r in ranked] == list(range(1, len(ranked) + 1))
    assert [r["estimatedNs"] for r in ranked] == sorted(r["estimatedNs"] or 0 for r in ranked)
    assert all(r["rank"] is None for r in report["candidates"] if r["verdict"] != "ranked")
    assert report["winner"] is ranked[0] if ranked else report["winner"] is None


def test_streamed_kernel_cache_rerun_and_widened_space(project: Path) -> None:
    path = project / "stream_scale.py"
    space = "TILE_F=512,1024,1536 BUFS=1,2"
    first = run(path, space=space)
    check_invariants(first)
    # DMA-bound (the estimate's roofline and bounds): the largest tile that divides the row, double-buffered
    # so the next load overlaps the compute, is the variant they predict
    winner = first["winner"]
    assert winner is not None and winner["values"] == {"TILE_F": 1024, "BUFS": 2}
    assert winner["bound"] == "memory" and winner["bottleneck"] == "DMA"
    failed = [r for r in first["candidates"] if r["values"]["TILE_F"] == 1536]
    assert len(failed) == 2 and all(
        r["verdict"] == "failed" and r["reason"].startswith("out:") for r in failed
    )
    base = first["baseline"]
    assert base is not None and base["values"] == {"TILE_F": 256, "BUFS": 1} and base["rank"] is None
    assert winner["speedup"] is not None and winner["speedup"] > 1
    assert first["evaluated"] == 7 and first["cacheHits"] == 0  # 6 points and the baseline outside the space
    assert "+TILE_F = 1024" in first["diff"] and "+BUFS = 2" in first["diff"]

    rerun = run(path, space=space)
    assert rerun["evaluated"] == 0 and rerun["cacheHits"] == 7
    assert rerun["winner"] is not None and rerun["winner"]["values"] == winner["values"]

    widened = run(path, space="TILE_F=512,1024,1536,2048 BUFS=1,2")
    assert widened["evaluated"] == 2 and widened["cacheHits"] == 7  # only TILE_F=2048 is new
    check_invariants(widened)

    assert apply_winner(str(path), path.read_text(), widened)
    assert widened["winner"] is not None
    applied = path.read_text()
    assert f"TILE_F = {widened['winner']['values']['TILE_F']}" in applied
    assert not apply_winner(str(path), "an older text", widened)  # the file changed: untouched
    assert path.read_text() == applied


def test_tiled_matmul_prunes_illegal_tiles_and_picks_the_largest_legal(project: Path) -> None:
    # K 256, N 512 (examples/tiled_matmul.py): the largest legal tiles issue the fewest, largest matmuls and
    # DMAs; the example already has them, so tune confirms it (speed-up 1 over the baseline)
    report = run(project / "tiled_matmul.py", space="TILE_K=32,64,128,256 TILE_N=128,256,512,1024")
    check_invariants(report)
    assert report["spaceSize"] == 16
    assert set(report["pruned"]) == {"NKI301", "NKI403"}  # TILE_K > 128 partitions, TILE_N > one PSUM bank
    pruned = [r for r in report["candidates"] if r["verdict"] == "pruned"]
    assert len(pruned) == sum(report["pruned"].values()) == 7
    assert all(r["values"]["TILE_K"] == 256 or r["values"]["TILE_N"] == 1024 for r in pruned)
    assert report["evaluated"] == 9  # the baseline (TILE_K=128, TILE_N=512) is one of the points
    winner = report["winner"]
    assert winner is not None and winner["values"] == {"TILE_K": 128, "TILE_N": 512}
    assert winner["speedup"] == 1.0 and report["diff"] == ""
    slowest = [r for r in report["candidates"] if r["verdict"] == "ranked"][-1]
    assert slowest["values"] == {"TILE_K": 32, "TILE_N": 128}


def test_sbuf_limits_the_best_variant(project: Path) -> None:
    report = run(project / "sbuf_limited.py")
    check_invariants(report)
    assert report["pruned"] == {"NKI401": 1}
    winner = report["winner"]
    assert winner is not None and winner["values"] == {"ROWS_F": 16384}
    ranked = [r for r in report["candidates"] if r["verdict"] == "ranked"]
    # the winner is the variant that uses the most SBUF that still fits: its peak is the largest ranked one
    assert winner["sbufPeakBytes"] == max(r["sbufPeakBytes"] or 0 for r in ranked)


def test_hanging_and_memory_eating_candidates_are_killed_and_the_search_goes_on(
    project: Path, settings: Callable[..., Settings]
) -> None:
    path = project / "misbehaving.py"
    report = tune(str(path), path.read_text(), settings(timeout_s=8, memory_mb=1024), TuneOptions(workers=2))
    check_invariants(report)
    by_mode = {r["values"]["MODE"]: r for r in report["candidates"]}
    assert by_mode[1]["verdict"] == "failed" and by_mode[1]["reason"].startswith("timeout:")
    assert by_mode[2]["verdict"] == "failed" and by_mode[2]["reason"].startswith("memory_limit:")
    assert by_mode[0]["rank"] == 1
    assert (
        not (project / ".nki-studio" / "tune-cache").exists()
        or len(list((project / ".nki-studio" / "tune-cache").glob("*.json"))) == 1
    )  # killed candidates are not cached: only MODE=0


def test_large_space_without_budget_is_refused_with_its_size(project: Path) -> None:
    path = project / "stream_scale.py"
    with pytest.raises(TuneError, match="1,000,000 points"):
        run(path, space="TILE_F=1..1000 BUFS=1..1000")


def test_tpe_within_a_budget(project: Path) -> None:
    path = project / "stream_scale.py"
    report = run(path, space="TILE_F=128,256,512,1024,1536 BUFS=1..3", budget=6, seed=1)
    assert report["strategy"] == "tpe"
    tried = [r for r in report["candidates"]]
    assert len(tried) <= 6  # the budget counts points tried, the baseline among them
    check_invariants(report)


def test_untrusted_workspace_is_refused(project: Path) -> None:
    path = project / "stream_scale.py"
    with pytest.raises(Refused):
        tune(str(path), path.read_text(), Settings(trusted_workspace=False), TuneOptions())
