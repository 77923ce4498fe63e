"""The MCP ``compare`` tool follows a source line across an edit when both sides are kernels it estimates (their
texts are known), and says the lines were matched by number when a side's text is not."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "profile"))
import fixturegen
import moved_kernels as mk
from mcp_harness import EXAMPLES, mcp_session, structured
from nki_studio.profile.line_align import BY_NUMBER, BY_TEXT

_INPUTS = "x=float32[128,512]"


async def test_compare_follows_the_moved_line_of_two_estimated_versions(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    fixturegen.main([str(EXAMPLES / "rmsnorm_residual.py"), str(profiles)])
    parquet = next(profiles.glob("*_parquet"))
    (tmp_path / "kernel.py").write_text(mk.B)
    a = {"source": mk.A, "path": "kernel_old.py", "inputs": _INPUTS}
    async with mcp_session("--root", str(tmp_path)) as s:
        result = await s.call_tool("compare", {"a": a, "b": {"file": "kernel.py", "inputs": _INPUTS}})
        both = structured(result)
        assert both["lines_matched_by"].startswith(BY_TEXT) and BY_TEXT in result.content[0].text
        hot_a, hot_b = mk.marker_line(mk.A, "hot"), mk.marker_line(mk.B, "hot")
        (row,) = [r for r in both["lines"] if r["line_a"] == hot_a]
        assert row["line_b"] == hot_b and row["file"] == "kernel.py"
        assert row["b_ns"] > row["a_ns"] > 0 and row["delta_ns"] == row["b_ns"] - row["a_ns"]
        assert [r["line_a"] for r in both["removed_lines"]] == [mk.marker_line(mk.A, "removed")]
        assert [r["line_b"] for r in both["added_lines"]] == [mk.marker_line(mk.B, "added")]
        assert all(r["a_ns"] > 0 for r in both["removed_lines"])
        assert all(r["b_ns"] > 0 for r in both["added_lines"])

        # a measured profile without a stored source snapshot: matched by number, and said so
        mixed = structured(await s.call_tool("compare", {"a": {"profile": str(parquet)}, "b": a}))
        assert mixed["lines_matched_by"].startswith(BY_NUMBER)
        assert mixed["removed_lines"] == mixed["added_lines"] == []
