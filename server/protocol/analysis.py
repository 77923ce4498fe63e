"""The JSON shape of bounds and investigations (``Bounds.to_dict``, ``Investigation.to_dict``), declared once.

``profile analyze --json``, the MCP tools, the heatmap payload's kernel summary and the ``estimate`` section of
a simulation result (``nki_studio.protocol.simulation.Estimate``) all carry these objects unchanged, so a CI script
and an agent read the same field names; the result schema and its TypeScript types are generated from here.
Keys are the dataclasses' own (snake_case), as every one of those outputs has always written them.
"""

from __future__ import annotations

from typing import Annotated, TypedDict

DetailValue = (
    int | float | str | list[int]
)  # one number behind a finding: counts, bytes, ns, shares, line lists


class BoundJson(TypedDict):
    """One bound of a family: its time, the gap from the previous bound and the speedup of reaching it."""

    name: Annotated[str, "the technical name (bounds.md), a stable key"]
    label: Annotated[str, "the plain name shown to people"]
    ns: Annotated[float | None, "null: the profile lacks what the bound needs (see missing)"]
    gap_ns: float | None
    gap_means: Annotated[str, "the overhead the gap to this bound stands for"]
    speedup: Annotated[float | None, "bottleneck-aware; null where the family is not the bottleneck's"]
    missing: str


class FamilyJson(TypedDict):
    """A family of bounds (memory, compute, pipeline), from the total time down."""

    name: str
    bounds: list[BoundJson]


class PeaksJson(TypedDict):
    """Per-core peaks the bounds divide by, with where each came from."""

    dma_bytes_per_s: float
    dma_source: str
    te_flops_per_s: float
    te_source: str


class BoundsJson(TypedDict):
    """The bound families of one core (profile-formats/bounds.md §2); ``other_cores`` holds the rest."""

    provenance: Annotated[str, "measured or estimated"]
    core: int
    window: Annotated[list[int], "[first, last] ns of the kernel DMA window"]
    window_source: str
    total_ns: int
    engines: Annotated[dict[str, int], "engine -> busy ns in the window; DMA: the union of kernel DMA"]
    bottleneck: str
    families: list[FamilyJson]
    dma_bytes: int
    necessary_bytes: int | None
    hardware_flops: int | None
    transpose_flops: int | None
    peaks: PeaksJson
    notes: list[str]
    other_cores: list[BoundsJson]


class _FindingKeys(TypedDict):
    code: Annotated[str, "NKI7xx"]
    file: Annotated[str, "as recorded in the profile"]
    line: Annotated[int, "1-based"]
    message: str
    numbers: dict[str, DetailValue]


class FindingJson(_FindingKeys, total=False):
    """One investigation finding on one source line, with the numbers behind it."""

    local: Annotated[
        str | None, "the workspace file the recorded one maps to (null: not found), where mapped"
    ]


class InvestigationJson(TypedDict):
    """The outcome of one line-level investigation (profile-formats/bounds.md §3)."""

    kind: Annotated[str, "dma-efficiency, redundant-dma, tensor-engine or transposes"]
    title: str
    status: Annotated[str, "found, nothing found, or unavailable (summary names the missing prerequisite)"]
    summary: str
    findings: list[FindingJson]
    lines: Annotated[list[dict[str, DetailValue]], "every line (or tensor) examined, with its numbers"]


class AnalysisJson(TypedDict):
    """A profile's bounds and investigations (``profile analyze --json``; findings carry ``local``)."""

    bounds: Annotated[BoundsJson | None, "null: the profile has no instructions"]
    investigations: list[InvestigationJson]
