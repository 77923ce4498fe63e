"""One call from a profile path to everything the front ends show: read → metrics → source mapping → heat.

The CLI and the language server both use ``analyze``; neither computes anything itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

from nki_studio.profile.bounds import Bounds, compute_bounds
from nki_studio.profile.heatmap import FileHeat, build_payload, group_by_file, kernel_summary
from nki_studio.profile.invariants import check_metrics, check_payload
from nki_studio.profile.investigations import Investigation, investigate
from nki_studio.profile.mapping import MappedFile, map_sources
from nki_studio.profile.metrics import NO_SOURCE_HELP, MetricOptions, ProfileMetrics, compute_metrics
from nki_studio.profile.model import Profile
from nki_studio.profile.readers.detect import load_profile
from nki_studio.profile.roofline import TraceFlops
from nki_studio.protocol.analysis import AnalysisJson, InvestigationJson
from nki_studio.protocol.heatmap import HeatFinding, HeatmapParams, MeasuredKernel
from nki_studio.protocol.profile import ProfileInfo


@dataclass
class ProfileReport:
    """A read and analysed profile with its source mapping. Bounds and investigations are computed on first
    access: a caller that shows only the heat (a plain ``profile`` listing, most MCP views) does not pay for
    them (+58-73% of the load time of a 1M-instruction profile)."""

    profile: Profile
    metrics: ProfileMetrics
    mapping: dict[str, MappedFile]
    files: dict[str, FileHeat]  # local path → heat
    unmapped: list[MappedFile]
    unmapped_busy_ns: int
    generation: str = "trn2"  # the target the bounds' peaks are taken for

    @cached_property
    def bounds(self) -> Bounds | None:
        """The bound families (bounds.md §2); None for summary-only profiles (no instructions)."""
        return compute_bounds(self.profile, self.generation) if self.profile.has_instructions else None

    @cached_property
    def investigations(self) -> list[Investigation]:
        """The four investigations (bounds.md §3); none for summary-only profiles."""
        return investigate(self.profile, self.generation) if self.profile.has_instructions else []

    def local_path(self, recorded: str) -> str | None:
        """The workspace file a recorded source path maps to, if any."""
        mapped = self.mapping.get(recorded)
        return str(mapped.local) if mapped is not None and mapped.local is not None else None

    def analysis(self) -> AnalysisJson:
        """Bounds and investigations as JSON (findings carry the local path when the file maps)."""
        invs: list[InvestigationJson] = []
        for inv in self.investigations:
            d = inv.to_dict()
            invs.append(
                {**d, "findings": [{**f, "local": self.local_path(f["file"])} for f in d["findings"]]}
            )
        return {"bounds": self.bounds.to_dict() if self.bounds else None, "investigations": invs}

    def problem(self) -> str | None:
        """Why no line can be painted, with the fix; None when at least one file has heat."""
        if self.files:
            return None
        if not self.profile.has_instructions:
            return (
                f"{self.profile.path}: {self.profile.format} holds kernel totals only, no instructions, so "
                "there is nothing to put on source lines. Use the Parquet output (`neuron-explorer view ... "
                "--ingest-only`) for per-line heat."
            )
        if not self.metrics.lines:
            return NO_SOURCE_HELP
        lines = [
            f"  {m.recorded}: {m.how}" + (f" ({', '.join(m.candidates)})" if m.candidates else "")
            for m in self.unmapped
        ]
        return (
            "None of the source paths recorded in the profile maps to a file here:\n"
            + "\n".join(lines)
            + "\nAdd a path mapping (setting nki-studio.pathMappings, CLI --path-map REMOTE=LOCAL) or "
            "name the kernel file (--source FILE)."
        )

    def profile_info(self, mapped: MappedFile | None = None) -> ProfileInfo:
        """The ``profile`` object of a payload."""
        p = self.profile
        info: ProfileInfo = {
            "label": f"{Path(p.path).name} ({p.format}, {p.provenance})",
            "path": p.path,
            "format": p.format,
            "provenance": p.provenance,
            "schema_version": p.schema_version,
            "location_source": p.locations.source,
            "notes": list(self.metrics.kernel.notes),
        }
        if mapped is not None:
            info["mapping"] = mapped.to_dict()
        return info

    def kernel(self) -> MeasuredKernel:
        """The payloads' ``kernel`` object: the kernel metrics, the unmapped files and the analysis."""
        return {**kernel_summary(self.metrics, self.unmapped, self.unmapped_busy_ns), **self.analysis()}

    def payloads(self, uri_of: Callable[[str], str]) -> list[HeatmapParams]:
        """One ``nki/heatmap`` payload per mapped file; heat normalised across all of them."""
        kernel = self.kernel()
        top = max((ln.busy_ns for fh in self.files.values() for ln in fh.lines), default=0)
        source: Literal["estimate", "measured"] = (
            "estimate" if self.profile.provenance == "estimated" else "measured"
        )  # the heatmap's vocabulary
        findings = self.findings_by_file()
        return [
            {
                **check_payload(
                    build_payload(
                        uri_of(local),
                        source,
                        self.profile_info(fh.mapping),
                        fh.lines,
                        kernel,
                        max_busy_ns=top,
                    )
                ),
                "findings": findings.get(local, []),
            }
            for local, fh in sorted(self.files.items())
        ]

    def findings_by_file(self) -> dict[str, list[HeatFinding]]:
        """Investigation findings per local file, as payload entries (0-based ``line``, like heat lines)."""
        out: dict[str, list[HeatFinding]] = {}
        for inv in self.investigations:
            for f in inv.findings:
                local = self.local_path(f.file)
                if local is not None:
                    out.setdefault(local, []).append(
                        {"line": f.line - 1, "code": f.code, "kind": inv.kind, "message": f.message}
                    )
        return out


def analyze(
    path: str | Path,
    *,
    fmt: str | None = None,
    roots: Sequence[Path] = (),
    mappings: Mapping[str, str] | None = None,
    explicit: Sequence[Path] = (),
    options: MetricOptions | None = None,
    trace: TraceFlops | None = None,
    ignore_schema_version: bool = False,
) -> ProfileReport:
    """Read, measure and map a profile. Raises ``ProfileError`` (clear message) on unreadable input, and when
    a result fails its invariants (``invariants``) rather than returning a wrong number."""
    profile = load_profile(path, fmt, ignore_schema_version=ignore_schema_version)
    return analyze_profile(
        profile, roots=roots, mappings=mappings, explicit=explicit, options=options, trace=trace
    )


def analyze_profile(
    profile: Profile,
    *,
    roots: Sequence[Path] = (),
    mappings: Mapping[str, str] | None = None,
    explicit: Sequence[Path] = (),
    options: MetricOptions | None = None,
    trace: TraceFlops | None = None,
) -> ProfileReport:
    """Measure and map a profile already in memory (a read one, or an estimate): metrics and source mapping; bounds and findings when first read.
    Raises ``ProfileError`` when a result fails its invariants (``invariants``) rather than returning a wrong
    number."""
    metrics = check_metrics(compute_metrics(profile, options, trace))
    mapping = map_sources({m.file for m in metrics.lines}, roots, mappings, explicit)
    files, unmapped, unmapped_busy = group_by_file(metrics, mapping)
    generation = (options or MetricOptions()).roofline.generation
    return ProfileReport(profile, metrics, mapping, files, unmapped, unmapped_busy, generation)
