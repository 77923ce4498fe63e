"""MCP tools on the code people already have: a kernel inside a package (relative imports), saved and as
unsaved source text; legacy ``neuronxcc.nki`` code linted and simulated at the version its imports name."""

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


LEGACY = """import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


def ref(a):
    return a


# nki-studio: simulate a=float32[128,64] reference=ref
@nki.jit
def copy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a))
    return out


def launch(a):
    return copy[2, 2](a)
"""


async def test_legacy_code_is_linted_and_simulated_as_legacy(tmp_path: Path) -> None:
    async with mcp_session("--root", str(tmp_path)) as s:
        lint = structured(await s.call_tool("lint", {"source": LEGACY, "path": "old.py"}))
        assert {(f["code"], f["severity"]) for f in lint["findings"]} == {("NKI208", "warning")}, lint
        assert all("legacy neuronxcc.nki assumed from" in f["message"] for f in lint["findings"])
        sim = structured(await s.call_tool("simulate", {"source": LEGACY, "path": "old.py"}))
        assert sim["passed"], sim
        assert any(w.startswith("NKI version legacy (neuronxcc.nki) inferred from") for w in sim["warnings"])
