"""The ``estimate`` section and its heatmap: the estimated profile's own metrics, carried unchanged to the
payload the editor paints (the same fields a measured profile's payload has), labelled estimated."""

from __future__ import annotations

from nki_studio.estimate.heat import estimate_payload
from nki_studio.estimate.likely_range import kernel_class, load_residuals
from nki_studio.estimate.profile import estimate_profile
from nki_studio.estimate.section import estimate_section
from nki_studio.model.targets import Generation, Target
from nki_studio.profile.metrics import compute_metrics
from nki_studio.sim.trace import Operand, TraceEvent


def _tile(role: str, storage: int, nbytes: int = 4096, buffer: str = "sbuf") -> Operand:
    return Operand(role, (128, nbytes // 2), "bfloat16", buffer, storage, 0, 128, 0, nbytes, nbytes)


def _trace() -> list[TraceEvent]:
    hbm = Operand("src", (128 * 2048,), "bfloat16", "hbm", 0, 0, 0, 0, 128 * 4096, 4096, "x")
    reads, writes = {"hbm": 128 * 4096}, {"sbuf": 128 * 4096}
    return [
        TraceEvent(
            0, "nisa.dma_copy", "dma", "/k.py", 5, (), (_tile("dst", 1), hbm), 128, 2048, reads, writes
        ),
        TraceEvent(
            1, "nisa.activation", "scalar", "/k.py", 7, (), (_tile("dst", 2), _tile("data", 1)), 128, 2048
        ),
        TraceEvent(
            2, "nisa.tensor_copy", "vector", "/k.py", 8, (), (_tile("dst", 3), _tile("src", 2)), 128, 2048
        ),
        TraceEvent(3, "nisa.iota", "gpsimd", "/helper.py", 3, (), (_tile("dst", 4),), 128, 8),
    ]


def test_the_section_is_the_estimated_profiles_metrics() -> None:
    trace = _trace()
    section = estimate_section(trace, Generation.GEN3)
    metrics = compute_metrics(estimate_profile(trace, Target(Generation.GEN3)))
    assert section["label"] == "estimated" and section["target"] == "trn2"
    assert section["totalNs"] == metrics.kernel.latency_ns > 0
    assert section["engineNs"] == metrics.kernel.engines
    by_line = {(ln["path"], ln["line"]): ln for ln in section["lines"]}
    for m in metrics.lines:
        assert by_line[(m.file, m.line)]["busyNs"] == m.busy_ns
    assert by_line[("/k.py", 5)]["dmaBytes"] == 128 * 4096
    # the activation waits for the load, the copy for the activation: nothing overlaps the DMA's consumers
    assert by_line[("/k.py", 8)]["dmaOverlapNs"] == 0
    assert {t["name"] for t in section["timeline"]} >= {"DMA", "Scalar", "Vector"}


def test_the_payload_paints_the_estimate_with_the_profile_schema() -> None:
    section = estimate_section(_trace(), Generation.GEN3)
    payload = estimate_payload("file:///k.py", "/k.py", "k", section)
    assert payload["source"] == "estimate" and payload["profile"]["provenance"] == "estimated"
    assert "estimated" in payload["profile"]["label"]
    lines = {ln["line"]: ln for ln in payload["lines"]}
    assert set(lines) == {4, 6, 7}  # 0-based; the helper file's line is not painted on this document
    assert lines[4]["dma_bytes"] == 128 * 4096 and lines[4]["dma_ns"] > 0
    assert lines[6]["engines"].keys() == {"Scalar"} and lines[6]["busy_ns"] > 0
    kernel = payload["kernel"]
    assert kernel["estimated"] and kernel["latency_ns"] == section["totalNs"]
    assert kernel["timeline"] == section["timeline"] and kernel["dma_union_ns"] == section["dmaNs"]
    assert max(ln["heat"] for ln in payload["lines"]) == 1.0


def test_the_section_carries_the_bounds_and_investigations_of_the_same_profile() -> None:
    """One documented section: bounds and investigations are those of the estimated profile the metrics came
    from (what ``profile analyze`` would say of it), and the tensors are named by the kernel's parameters."""
    from nki_studio.estimate.section import with_argument_names
    from nki_studio.profile.analyze import analyze_profile

    trace = _trace()
    section = estimate_section(trace, Generation.GEN3, ["x"])
    profile = with_argument_names(estimate_profile(trace, Target(Generation.GEN3)), ["x"])
    report = analyze_profile(profile)
    assert report.bounds is not None and section["bounds"] == report.bounds.to_dict()
    assert section["bounds"]["provenance"] == "estimated" and section["bounds"]["total_ns"] > 0
    assert section["investigations"] == [i.to_dict() for i in report.investigations]
    assert [i["kind"] for i in section["investigations"]] == [
        "dma-efficiency",
        "redundant-dma",
        "tensor-engine",
        "transposes",
    ]
    assert section["perfectPipelineNs"] <= section["totalNs"]
    assert section["serializationGapNs"] == section["totalNs"] - section["perfectPipelineNs"]
    payload = estimate_payload("file:///k.py", "/k.py", "k", section)
    assert payload["kernel"]["bounds"] == section["bounds"]  # the panel's waterfall, for an estimate too


def test_the_section_carries_its_likely_range_from_the_residuals_of_its_generation() -> None:
    """The range is the committed residuals' spread for the section's generation, scaled by its total; the
    payload carries the same object; a generation with no calibration point has none."""
    table = load_residuals()
    section = estimate_section(_trace(), Generation.GEN3)
    rng = section["range"]
    assert rng is not None and rng["generation"] == "trn2" and rng["source"] == table.source
    ratios = [p.ratio for p in table.points if p.generation == "trn2"]
    assert rng["kernelClass"] in ("all", kernel_class(section["roofline"]))
    assert min(ratios) * section["totalNs"] - 1 <= rng["lowNs"] <= rng["highNs"]
    assert rng["highNs"] <= max(ratios) * section["totalNs"] + 1
    assert dict(estimate_payload("u", "/k.py", "k", section)["kernel"])["latency_range"] == rng
    if not any(p.generation == "trn3" for p in table.points):
        assert estimate_section(_trace(), Generation.GEN4)["range"] is None
