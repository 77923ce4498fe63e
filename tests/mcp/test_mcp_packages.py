"""MCP ``simulate`` on a kernel inside a package (relative imports), saved and as unsaved source text."""

from __future__ import annotations

from pathlib import Path

from mcp_harness import ROOT, mcp_session, structured

PACKAGES = ROOT / "tests" / "verify" / "data"
KERNEL = "kpkg/kernels/k.py"


async def test_simulate_kernel_in_a_package() -> None:
    async with mcp_session("--root", str(PACKAGES)) as s:
        saved = structured(await s.call_tool("simulate", {"file": KERNEL}))
        assert saved["passed"] and saved["status"] == "passed", saved
        source = Path(PACKAGES / KERNEL).read_text().replace("nl.add(t, t)", "nl.multiply(t, 3.0)")
        draft = structured(await s.call_tool("simulate", {"source": source, "path": KERNEL}))
        # the draft ran with its package (the relative import resolved) and the oracle caught the change
        assert draft["status"] == "failed" and draft["failedMetrics"], draft
