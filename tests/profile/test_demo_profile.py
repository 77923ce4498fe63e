"""``scripts/demo-profile.sh`` (run by ``scripts/demo.sh``): the synthetic profile the README promises, labelled as
generated, read back and painted on the example's lines."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_prints_a_synthetic_profile_on_the_example() -> None:
    run = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo-profile.sh"), "examples/tensor_add.py"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "synthetic profile of examples/tensor_add.py (GENERATED" in out and "not measured" in out
    assert re.search(r"Latency: [\d.]+ [µm]?s", out), out
    # the report paints the kernel's source lines: some line of the example carries time
    painted = [ln for ln in out.splitlines() if re.match(r"\s*\d+ [^│]*\d[\d.]* [nµm]?s [^│]*│", ln)]
    assert painted, out
    assert "bash scripts/demo-profile.sh" in (ROOT / "scripts" / "demo.sh").read_text(encoding="utf-8")
