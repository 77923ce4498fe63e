"""The MCP ``compare`` tool with one side measured and the other estimated adds ``measured_vs_estimated``: the
kernel latency, each engine and the hottest lines measured, estimated and estimated / measured, each side
saying where it came from; two estimates have no such section."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "profile"))
import fixturegen
import moved_kernels as mk
from fixturewriters import write_parquet
from mcp_harness import mcp_session, structured
from nki_studio.profile.line_align import BY_TEXT, write_snapshot

_INPUTS = "x=float32[128,512]"


async def test_compare_measured_with_estimated_gives_the_ratios(tmp_path: Path) -> None:
    kernel = tmp_path / "kernel.py"
    kernel.write_text(mk.B)
    tl = fixturegen.kernel_timeline(
        "/home/ubuntu/kernels/kernel.py", fixturegen.kernel_body_lines(mk.A), seed=5
    )
    prof = write_parquet(tl, tmp_path / "measured_parquet")
    write_snapshot(prof, {str(kernel): mk.A})
    measured, estimated = {"profile": "measured_parquet"}, {"file": "kernel.py", "inputs": _INPUTS}
    async with mcp_session("--root", str(tmp_path)) as s:
        result = await s.call_tool("compare", {"a": measured, "b": estimated})
        got = structured(result)
        mve = got["measured_vs_estimated"]
        assert mve["measured"] == "measured: Neuron Explorer profile measured_parquet"
        assert (
            mve["estimated"].startswith("estimated: kernel in kernel.py")
            and "not a measurement" in mve["estimated"]
        )
        k = mve["kernel"]
        assert (k["measured_ns"], k["estimated_ns"]) == (
            got["totals"]["latency_ns"]["a"],
            got["totals"]["latency_ns"]["b"],
        )
        assert k["ratio"] == k["estimated_ns"] / k["measured_ns"]
        assert f"estimated/measured latency {k['ratio']:.2f}x" in result.content[0].text
        assert {e: (r["measured_ns"], r["estimated_ns"]) for e, r in mve["engines"].items()} == {
            e: (t["a"], t["b"]) for e, t in got["engines"].items()
        }
        assert mve["lines_matched_by"].startswith(BY_TEXT)
        (hot,) = [r for r in mve["lines"] if r["line_measured"] == mk.marker_line(mk.A, "hot")]
        assert hot["line_estimated"] == mk.marker_line(mk.B, "hot") and hot["file"] == "kernel.py"
        assert hot["ratio"] == hot["estimated_ns"] / hot["measured_ns"]

        swapped = structured(await s.call_tool("compare", {"a": estimated, "b": measured}))
        assert swapped["measured_vs_estimated"] == mve

        two = structured(
            await s.call_tool(
                "compare", {"a": {"source": mk.A, "path": "old.py", "inputs": _INPUTS}, "b": estimated}
            )
        )
        assert "measured_vs_estimated" not in two
