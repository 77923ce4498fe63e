"""What the editor shows of a simulation (``service.simulation``): spec problems wait while the file does not
parse, memory peaks are hover notes rather than problems, and every kernel gets a spec comment to start from."""

from __future__ import annotations

import textwrap
from typing import Any

from nki_studio.protocol.simulation import AnyResult
from nki_studio.service import simulation

KERNEL = textwrap.dedent("""\
    import nki
    import nki.language as nl

    # nki-studio: simulate a=float32[128,64] b=float32[4]
    @nki.jit
    def k(a):
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        return a
    """)


def _peak(path: str, line: int) -> dict[str, Any]:
    alloc = {"file": path, "line": line, "bytesPerPartition": 256, "name": "t"}
    return {"sbuf": {"peakBytes": 256, "capacityBytes": 196608, "live": [alloc]}}


def test_spec_problems_wait_while_the_file_does_not_parse() -> None:
    [f] = simulation.spec_findings(KERNEL, "k.py") or []
    assert f.code == "NKI601" and "has no parameter 'b'" in f.message
    half_typed = KERNEL.replace("return a", "return a +")
    assert simulation.spec_findings(half_typed, "k.py") is None  # not: "spec not above a kernel"
    assert not simulation.parses(half_typed, "k.py")


def test_peaks_are_hover_notes_not_problems(tmp_path: Any) -> None:
    path = str(tmp_path / "k.py")
    result: AnyResult = {"status": "passed", "kernel": "k", "message": "ok", "peak": _peak(path, 7)}  # type: ignore[typeddict-item]
    assert [f.code for f in simulation.result_findings(result, path, None)] == [
        "NKI630"
    ]  # CLI and MCP list it
    assert simulation.findings(KERNEL, path, {"k": result}) == []
    notes = simulation.peak_notes({"k": result}, path)
    assert list(notes) == [7] and notes[7][0].startswith(
        "SBUF peak 0.2 KiB/192 KiB per partition (simulated)"
    )


def test_every_kernel_gets_a_spec_comment_to_start_from() -> None:
    src = KERNEL.replace("# nki-studio: simulate a=float32[128,64] b=float32[4]\n", "")
    assert simulation.inferred_spec_comment(src, "k.py", "k") is None  # nothing pins a's shape
    [kernel] = simulation.kernels(src, "k.py")
    assert (
        simulation.template_spec_comment(src, "k.py", kernel) == "# nki-studio: simulate a=float32[128,512]"
    )
