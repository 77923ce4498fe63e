"""Heat follows the bottleneck: one ranking of lines for every view (``profile.line_rank``)."""

from __future__ import annotations

from nki_studio.profile.heatmap import HeatLine, build_payload, inlay_label
from nki_studio.profile.line_rank import default_metric, line_time_ns, ranked

# (line, busy ns, DMA ns issued): two compute lines and two dma_copy lines
LINES = [(10, 3_000, 0), (11, 2_500, 400), (20, 0, 5_900), (21, 0, 1_200)]


def _rank(bottleneck: str | None) -> list[int]:
    return [ln for ln, _, _ in ranked(LINES, lambda r: r[1], lambda r: r[2], bottleneck, lambda r: r[0])]


def test_a_dma_bound_kernel_ranks_its_dma_lines_first() -> None:
    assert _rank("DMA") == [20, 21, 11, 10]
    assert default_metric("DMA") == "dma_time"


def test_other_kernels_rank_by_time_including_the_dma_a_line_issues() -> None:
    assert _rank("Vector") == [20, 10, 11, 21]  # 5.9 µs of DMA beats 3.0 µs of compute
    assert _rank(None) == _rank("Tensor")
    assert default_metric("Tensor") == default_metric(None) == "time"
    assert line_time_ns(2_500, 400) == 2_900


def test_ties_keep_line_order() -> None:
    same = [(3, 100, 0), (1, 100, 0), (2, 100, 0)]
    assert [r[0] for r in ranked(same, lambda r: r[1], lambda r: r[2], None, lambda r: r[0])] == [1, 2, 3]


def test_payload_default_metric_and_inlay_follow_the_bottleneck() -> None:
    lines = [
        HeatLine(line=4, busy_ns=0, dma_ns=5_900, engines={}),
        HeatLine(line=6, busy_ns=300, engines={"Vector": 300}),
    ]
    kernel = {"latency_ns": 7_500, "bounds": {"bottleneck": "DMA"}}
    payload = build_payload("file:///k.py", "estimate", {"label": "e"}, lines, kernel)  # type: ignore[arg-type]
    assert payload["default_metric"] == "dma_time"
    dma_line = payload["lines"][0]
    # the dma_copy line says its DMA time, not "0 ns, 0 %"
    assert inlay_label(dma_line, "estimate", payload["default_metric"], 7_500) == "⏱ est. 5.9 µs · 79% · DMA"
