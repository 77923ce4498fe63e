"""Pruning by lint: partition > 128, PSUM bank and SBUF overflows are refused before any simulation, new
findings only (the kernel as written sets the baseline)."""

from __future__ import annotations

from pathlib import Path

from nki_studio.model.targets import Generation
from nki_studio.tune.prune import blocking, lint_config, prune_finding
from nki_studio.tune.substitute import substitute

KERNELS = Path(__file__).parent / "kernels"
EXAMPLES = Path(__file__).parents[2] / "examples"


def reason(
    name: str, kernel: str, values: dict[str, int], baseline: frozenset[str] = frozenset()
) -> str | None:
    file = KERNELS / name if (KERNELS / name).exists() else EXAMPLES / name
    path = str(file)
    source = substitute(file.read_text(), kernel, values)
    finding = prune_finding(source, path, lint_config(path, Generation.GEN3), baseline)
    return finding.code if finding else None


def test_partition_psum_and_sbuf_overflows_are_pruned() -> None:
    assert reason("tiled_matmul.py", "tiled_matmul_kernel", {"TILE_K": 256}) == "NKI301"
    assert reason("tiled_matmul.py", "tiled_matmul_kernel", {"TILE_N": 1024}) == "NKI403"
    assert reason("tiled_matmul.py", "tiled_matmul_kernel", {"TILE_K": 128, "TILE_N": 512}) is None
    assert reason("sbuf_limited.py", "sbuf_limited_kernel", {"ROWS_F": 16384, "BUFS": 2}) == "NKI401"
    assert reason("sbuf_limited.py", "sbuf_limited_kernel", {"ROWS_F": 16384, "BUFS": 1}) is None


def test_findings_the_baseline_has_do_not_prune() -> None:
    assert (
        reason("tiled_matmul.py", "tiled_matmul_kernel", {"TILE_K": 256}, frozenset({"NKI301", "NKI501"}))
        is None
    )


def test_the_baseline_kernels_are_clean() -> None:
    for file in (EXAMPLES / "tiled_matmul.py", KERNELS / "sbuf_limited.py", KERNELS / "stream_scale.py"):
        path = str(file)
        assert blocking(file.read_text(), path, lint_config(path, Generation.GEN3)) == []
