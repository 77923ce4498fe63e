"""The ``nki/heatmap`` notification, declared once: one payload per document for measured profiles and for the
simulator's estimates (``nki_studio.profile.heatmap`` builds it, ``nki_studio.estimate.heat`` for estimates).

All times are integer ns, shares fractions 0-1, ``line`` 0-based (LSP numbering). The extension's
``protocol.generated.ts`` is generated from these TypedDicts (``nki_studio.protocol.schema``).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from nki_studio.protocol.analysis import BoundsJson, InvestigationJson
from nki_studio.protocol.calibration import CalibrationNote
from nki_studio.protocol.profile import (
    IterationJson,
    KernelMetricsJson,
    MappingJson,
    MeasuredVsEstimated,
    ProfileInfo,
    TopOpcodeJson,
)
from nki_studio.protocol.simulation import EngineTrack, EstimateRange, Roofline

HeatSource = Literal["measured", "estimate"]
HeatLayer = Literal["measured", "estimate", "compare"]
"""A layer of a document's heat: the loaded profile, the last simulation's estimate, or the two compared
(measured − estimated per line, and the kernel's estimated / measured)."""
HeatMetric = Literal["time", "busy", "instr", "wait", "dma", "dma_time"]
"""What the editor colours lines by: ``time`` (busy + the DMA the line issues), ``busy``, ``instr``, ``wait``,
``dma`` (bytes), ``dma_time`` (the DMA the line issues); the setting ``heatmapMetric`` adds ``auto`` (the
payload's ``default_metric``)."""


class _HeatLineKeys(TypedDict):
    line: Annotated[int, "0-based, like every LSP position"]
    rank: Annotated[
        int,
        "1 = hottest, by the kernel's bottleneck (profile.line_rank: the order the CLI, JSON and MCP list)",
    ]
    busy_ns: Annotated[int, "union of the line's work-instruction intervals on one core; never a sum"]
    time_ns: Annotated[
        int, "busy_ns + dma_ns: the line's compute and the DMA it issues (an upper bound: they may overlap)"
    ]
    share: Annotated[float, "busy_ns / kernel latency; lines overlap, shares do not sum to 1"]
    share_of_compute: float
    instr: int
    work_instr: int
    wait_ns: int
    engines: Annotated[dict[str, int], "engine -> busy ns"]
    dma_bytes: int
    dma_ns: int
    dma_overlap_ns: int
    exclusive_ns: int
    fused_instr: int
    top_opcodes: list[TopOpcodeJson]
    heat: Annotated[float, "busy_ns as a fraction of the hottest line's (across the documents of one load)"]


class HeatLine(_HeatLineKeys, total=False):
    """One painted source line's figures (an estimate leaves waits and fused instructions 0)."""

    iterations: Annotated[
        list[IterationJson], "busy time per loop-iteration value, when the profile has them"
    ]


class MetricDef(TypedDict):
    """What a payload field means, in plain words for the metric picker and the panel, and its technical
    definition for the hover's detail line."""

    label: Annotated[str, "the plain name"]
    unit: Annotated[str, "ns, fraction, count or bytes"]
    description: Annotated[str, "what it means, in plain words"]
    detail: Annotated[str, "how it is computed, in the profile's terms"]


class HeatFinding(TypedDict):
    """An investigation finding on one of the document's lines."""

    line: Annotated[int, "0-based, like heat lines"]
    code: str
    kind: Annotated[str, "the investigation that found it"]
    message: str


class _MeasuredKernelKeys(KernelMetricsJson):
    unmapped_files: Annotated[list[MappingJson], "recorded source files not found in the workspace"]
    unmapped_busy_ns: int


class MeasuredKernel(_MeasuredKernelKeys, total=False):
    """A measured profile's kernel metrics, the recorded files not found here and the analysis of the profile."""

    bounds: Annotated[BoundsJson | None, "null: no instructions"]
    investigations: list[InvestigationJson]


class EstimatedKernel(TypedDict):
    """An estimate's kernel figures under the keys a measured profile's use, labelled estimated."""

    name: Annotated[str, "the simulated kernel"]
    latency_ns: int
    latency_source: str
    latency_range: Annotated[
        EstimateRange | None, "the estimate's likely range (the estimate section's range)"
    ]
    dma_union_ns: int
    compute_union_ns: int
    intersection_ns: int | None
    idle_ns: int | None
    engines: Annotated[dict[str, int], "engine -> busy ns"]
    instr: int
    dma_bytes: int
    perfect_pipeline_ns: int
    serialization_gap_ns: int
    effective_dma_gbps: float | None
    timeline: list[EngineTrack]
    roofline: Annotated[Roofline | None, "the roofline point"]
    bounds: BoundsJson | None
    investigations: list[InvestigationJson]
    notes: list[str]
    estimated: Literal[True]
    calibration: Annotated[
        CalibrationNote | None, "the user's calibration the estimate used, or why not; null: none"
    ]


class _HeatmapKeys(TypedDict):
    uri: str
    source: Annotated[HeatSource, "estimates are labelled everywhere a user sees them"]
    profile: ProfileInfo
    metric_defs: Annotated[dict[str, MetricDef], "payload field -> what it means"]
    stale: Annotated[bool, "the document was edited after the heat was made"]
    lines: list[HeatLine]
    kernel: MeasuredKernel | EstimatedKernel
    default_metric: Annotated[
        HeatMetric, "the kernel's bottleneck's metric (DMA-bound: dma_time, else time; profile.line_rank)"
    ]


class HeatmapParams(_HeatmapKeys, total=False):
    """The ``nki/heatmap`` notification: the heat of one document."""

    findings: Annotated[list[HeatFinding], "investigation findings on this document's lines"]
    cleared: Annotated[bool, "true: the heat was cleared (lines and findings are empty)"]
    measured_vs_estimated: Annotated[
        MeasuredVsEstimated, "the document has a loaded profile and an estimate: the two side by side"
    ]


class HeatLayerParams(TypedDict):
    """The ``nki/heatLayer`` notification (and ``selectHeatLayer``'s answer): which layer of a document's heat
    bars, legend, hover, inlay hints and the panel show, and which layers it has."""

    uri: str
    layer: Annotated[HeatLayer | None, "the layer shown (null: the document has no heat)"]
    available: Annotated[list[HeatLayer], "the layers the document has, measured first"]
    label: Annotated[str, 'what the shown layer is, as every view names it ("Measured, from …")']
