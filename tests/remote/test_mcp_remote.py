"""``profile_remote`` through the MCP server (real client SDK) against the real sshd on loopback with the
stand-in Neuron tools: configured and enabled, it returns the measured profile on the kernel's lines."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import BODY_LINES
from helpers import ALIAS, mcp_settings
from sshd import LoopbackHost

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
from mcp_harness import error_of, mcp_session, structured


async def test_profile_remote_tool_round_trip(host: LoopbackHost, kernel: Path, tmp_path: Path) -> None:
    settings = mcp_settings(host, tmp_path / "remote", tmp_path / "cache")
    async with mcp_session("--root", str(kernel.parent), "--settings", json.dumps(settings)) as s:
        assert "profile_remote" in {t.name for t in (await s.list_tools()).tools}
        result = await s.call_tool("profile_remote", {"file": kernel.name, "kernel": "add_act_kernel"})
        view = structured(result)
        assert view["label"] == "measured" and view["host"] == ALIAS
        assert sorted({ln["line"] for ln in view["lines"] if ln["file"] == kernel.name}) == list(BODY_LINES)
        assert Path(view["downloaded"]).is_relative_to(tmp_path / "cache")
        assert any("[capture]" in line for line in view["log"])
        missing = error_of(await s.call_tool("profile_remote", {"file": "nope.py"}))
        assert missing["kind"] == "not_found"
