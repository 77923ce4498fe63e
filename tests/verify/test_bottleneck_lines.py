"""Heat follows the bottleneck (issue 29 item 2): the DMA-bound ``examples/rmsnorm_residual_fused.py`` lists its
four ``dma_copy`` lines first in the estimate section (``simulate --json``), the CLI's text (``simulate``/``--analyze``)
and the MCP ``estimate`` tool's view, because all three read one ranking (``profile.line_rank``)."""

from __future__ import annotations

import re
from pathlib import Path

from nki_studio.service.views import estimate_view
from nki_studio.verify.job import Job
from nki_studio.verify.report import format_text
from nki_studio.verify.runner import run_job
from nki_studio.verify.spec import resolve

KERNEL = Path(__file__).resolve().parents[2] / "examples" / "rmsnorm_residual_fused.py"


def test_dma_bound_kernel_lists_its_dma_lines_first_everywhere() -> None:
    text = KERNEL.read_text()
    res = resolve(text, str(KERNEL))
    assert res.spec is not None, res.problems
    result = run_job(Job(path=str(KERNEL), spec=res.spec.to_json()), timeout_s=300)
    estimate = result["estimate"]
    assert estimate["bounds"]["bottleneck"] == "DMA"
    dma_lines = {i for i, line in enumerate(text.splitlines(), 1) if "nisa.dma_copy(" in line}
    assert len(dma_lines) == 4
    # JSON: the section's lines, hottest first
    assert {ln["line"] for ln in estimate["lines"][:4]} == dma_lines
    assert all(ln["dmaNs"] > 0 for ln in estimate["lines"][:4])
    # the CLI's text: the first four listed lines are the DMA lines, labelled DMA with their transfer time
    listed = [int(m) for m in re.findall(r"^\s+line\s+(\d+): estimated", format_text(result), re.M)]
    assert set(listed[:4]) == dma_lines
    # the MCP estimate tool's view: the same order as the section
    view = estimate_view(estimate, str)
    assert [ln["line"] for ln in view["lines"]] == [ln["line"] for ln in estimate["lines"]][
        : len(view["lines"])
    ]
    assert view["lines"][0]["time_ns"] == estimate["lines"][0]["busyNs"] + estimate["lines"][0]["dmaNs"]
