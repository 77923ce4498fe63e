"""The ``tune`` tool through the real ``mcp`` client: a budgeted search returns the ranked table, every
candidate and the winner's diff without changing the file; a malformed space or an unsafe constraint is a
structured error."""

from __future__ import annotations

import shutil
from pathlib import Path

from mcp_harness import error_of, mcp_session, structured

KERNEL = Path(__file__).resolve().parents[1] / "tune" / "kernels" / "stream_scale.py"


async def test_tune_returns_the_table_and_the_winners_diff(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.nki-studio]\n")
    shutil.copy(KERNEL, tmp_path / KERNEL.name)
    before = (tmp_path / KERNEL.name).read_text()
    async with mcp_session("--root", str(tmp_path)) as s:
        result = structured(
            await s.call_tool("tune", {"file": KERNEL.name, "space": "TILE_F=1024,1536 BUFS=2", "budget": 4})
        )
        assert result["winner"]["values"] == {"TILE_F": 1024, "BUFS": 2}
        assert "+TILE_F = 1024" in result["diff"] and "rank" in result["table"]
        assert [c["verdict"] for c in result["candidates"]] == ["ranked", "failed"]
        assert result["baseline"]["values"] == {"TILE_F": 256, "BUFS": 1}  # outside the space: not ranked
        assert result["path"] == KERNEL.name
        malformed = error_of(await s.call_tool("tune", {"file": KERNEL.name, "space": "TILE_F"}))
        assert malformed["kind"] == "invalid_arguments" and "NAME=values" in malformed["message"]
        unsafe = error_of(await s.call_tool("tune", {"file": KERNEL.name, "constraints": ["open('x')"]}))
        assert unsafe["kind"] == "invalid_arguments"
    assert (tmp_path / KERNEL.name).read_text() == before


async def test_confirm_remote_is_refused_before_the_search_without_a_host(tmp_path: Path) -> None:
    shutil.copy(KERNEL, tmp_path / KERNEL.name)
    async with mcp_session("--root", str(tmp_path)) as s:
        refused = error_of(
            await s.call_tool(
                "tune", {"file": KERNEL.name, "space": "TILE_F=1024 BUFS=2", "confirm_remote": 1}
            )
        )
        assert refused["kind"] == "refused" and "remote profiling is not configured" in refused["message"]
    assert not (tmp_path / ".nki-studio").exists()  # refused before the search: nothing simulated or cached
