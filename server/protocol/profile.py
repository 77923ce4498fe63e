"""The JSON shape of a profile's figures (``nki_studio.profile``), declared once: where a recorded source path
was found, the roofline point, the kernel-level metrics, a profile's identity, and the comparison of two
profiles.

``profile --json``, ``profile compare --json``, the heatmap payload (``nki_studio.protocol.heatmap``) and the
``nki-studio.loadProfile`` answer carry these objects; keys are the dataclasses' own (snake_case), as those
outputs have always written them. The JSON Schema and TypeScript are generated from here
(``nki_studio.protocol.schema``).
"""

from __future__ import annotations

from typing import Annotated, TypedDict

from nki_studio.protocol.simulation import EngineTrack, Roofline


class _MappingKeys(TypedDict):
    recorded: Annotated[str, "the source path as recorded in the profile"]
    local: Annotated[str | None, "the workspace file it maps to (null: not found)"]
    how: Annotated[str, "how it was mapped, or why not"]


class MappingJson(_MappingKeys, total=False):
    """Where a recorded source path was found in the workspace (``MappedFile.to_dict``)."""

    candidates: Annotated[list[str], "several workspace files that could be meant"]


class KernelMetricsJson(TypedDict):
    """Kernel-level decomposition of a profile (``profile.metrics.KernelMetrics``; metrics.md §2, §4, §5)."""

    latency_ns: int
    latency_source: Annotated[str, "which denominator, e.g. Summary.total_exec_time"]
    dma_union_ns: int
    dma_union_source: str
    compute_union_ns: int
    intersection_ns: Annotated[int | None, "null: the profile has no DMA rows"]
    dma_or_compute_ns: int | None
    idle_ns: int | None
    engines: Annotated[dict[str, int], "engine -> busy union ns (work only)"]
    perfect_pipeline_ns: int
    serialization_gap_ns: int
    instr: int
    work_instr: int
    dma_bytes: int
    dma_bytes_source: str
    effective_dma_gbps: Annotated[float | None, "bytes / DMA union"]
    end_to_end_dma_gbps: Annotated[float | None, "bytes / latency"]
    unattributed_instr: int
    unattributed_work_instr: int
    unattributed_busy_ns: int
    unattributed_wait_ns: int
    location_source: str
    cores: list[int]
    execution: int | None
    roofline: Roofline | None
    wait_opcodes: list[str]
    notes: list[str]
    timeline: Annotated[list[EngineTrack], "per-engine busy intervals from the kernel start"]


class ProfileInfo(TypedDict, total=False):
    """Where heat came from: the profile file (or the simulator trace of an estimate) and its mapping."""

    label: str
    path: str
    format: str
    provenance: Annotated[str, "measured or estimated"]
    schema_version: str
    location_source: str
    notes: list[str]
    mapping: Annotated[MappingJson, "how the recorded source path was mapped to the workspace file"]


class TopOpcodeJson(TypedDict):
    """One instruction kind of a line: how many, and their summed durations."""

    opcode: str
    count: int
    sum_ns: int


class IterationJson(TypedDict):
    """A line's busy time for one loop-iteration value (KernelIterationVariables)."""

    label: Annotated[str, "e.g. k=3"]
    busy_ns: int
    instr: int


class ProfileSide(TypedDict):
    """One of two compared profiles."""

    path: str
    provenance: str


class BottleneckPair(TypedDict):
    """The bottleneck of each compared profile (null: no bounds)."""

    a: str | None
    b: str | None


class BoundDelta(TypedDict):
    """One bound in both profiles."""

    name: str
    a: float | None
    b: float | None
    delta: Annotated[float | None, "b - a"]
    ratio: Annotated[float | None, "b / a"]


class LineDelta(TypedDict):
    """One source line's time (compute plus the DMA it issues, ``profile.line_rank``) in both profiles
    (``profile.line_align``)."""

    file: str
    line: Annotated[int, "where the line is now (B), or was (A) when it went away"]
    line_a: int | None
    line_b: int | None
    a_ns: int
    b_ns: int
    delta_ns: int
    text: Annotated[str | None, "the line's source text, when a snapshot is known"]


class LineDeltas(TypedDict):
    """Per-line deltas of one file between two versions."""

    matched_by: str
    matched: list[LineDelta]
    removed: list[LineDelta]
    added: list[LineDelta]


class LineComparison(TypedDict):
    """Per-line deltas of two profiles: matched lines (largest change first), lines only in A or only in B."""

    lines_matched_by: str
    lines: list[LineDelta]
    removed_lines: list[LineDelta]
    added_lines: list[LineDelta]


class FindingKey(TypedDict):
    """A finding that appeared or went away between two profiles."""

    code: str
    file: str
    line: int


class FindingChanges(TypedDict):
    """Findings of A that B no longer has (A's lines), and B's new ones (B's lines)."""

    gone: list[FindingKey]
    new: list[FindingKey]


class Comparison(LineComparison):
    """Two profiles side by side (``profile compare --json``, ``profile.bounds_text.compare``)."""

    a: ProfileSide
    b: ProfileSide
    bottleneck: BottleneckPair
    bounds: list[BoundDelta]
    findings: FindingChanges


class EstimateRatio(TypedDict):
    """One time measured and estimated for the same kernel (an engine's busy time, the kernel's latency)."""

    measured_ns: int
    estimated_ns: int
    ratio: Annotated[float | None, "estimated / measured (null: nothing measured)"]


class LineEstimate(EstimateRatio):
    """One source line's time (compute plus the DMA it issues) measured and estimated, followed across an edit
    when both texts are known."""

    file: str
    line: Annotated[int, "where the line is in the estimated kernel (or was, in the measured one)"]
    line_measured: int | None
    line_estimated: int | None
    text: Annotated[str | None, "the line's source text, when a snapshot is known"]


class MeasuredVsEstimated(TypedDict):
    """A measured profile and the estimate of the same kernel: per engine, per line (hottest first) and the
    kernel's latency, measured, estimated and their ratio (``profile compare PROFILE --estimate``, the MCP
    ``compare`` tool when one side is measured, the kernel panel)."""

    measured: Annotated[str, "where the measured numbers came from (the profile)"]
    estimated: Annotated[
        str, "what was estimated (the simulated kernel); every estimated number is an estimate"
    ]
    kernel: EstimateRatio
    engines: dict[str, EstimateRatio]
    lines: list[LineEstimate]
    lines_matched_by: str
