"""Neuron Explorer profiles for every front end: load one with the size and format checks (a profile that
cannot fit in the memory available is refused before it is read, in the editor, the CLI and the MCP server
alike), analyse it (``nki_studio.profile.analyze``), and compare two (profile vs profile; a profile vs a
simulation's estimate is compared on the views the MCP server builds, with ``compare_lines``).

The profile stack pulls NumPy and pyarrow: every function imports it on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nki_studio.protocol.heatmap import EstimatedKernel, HeatmapParams
from nki_studio.protocol.profile import Comparison, LineComparison
from nki_studio.protocol.simulation import Estimate

if TYPE_CHECKING:
    from nki_studio.profile.analyze import ProfileReport
    from nki_studio.profile.line_align import SourceText

__all__ = [
    "LoadOptions",
    "ProfileError",
    "ProfileReport",
    "SourceText",
    "compare",
    "compare_lines",
    "estimate_summary",
    "formats",
    "load",
    "payloads",
    "snapshot",
    "snapshot_name",
    "source_text",
]


class ProfileError(ValueError):
    """A profile (or its companion trace) that cannot be loaded: the message says why, in one line."""


@dataclass(frozen=True)
class LoadOptions:
    """How to read and map one profile."""

    fmt: str | None = None  # skip detection and use this reader
    roots: Sequence[Path] = ()  # folders searched for the kernel files
    mappings: Mapping[str, str] = field(default_factory=dict)  # compile-host path prefix -> local prefix
    explicit: Sequence[Path] = ()  # kernel files searched before the roots
    execution: int | None = None  # ExecutionInfo execution_index (None: the first)
    trace: str | None = None  # simulator trace of the same kernel: FLOPs for the roofline
    dma_ceiling_gbps: float | None = None  # None: the profile's Metadata
    vector_peak_tflops: float | None = None  # None: the declared default
    generation: str = "trn2"  # ceilings missing from the profile
    ignore_schema_version: bool = False  # read a Parquet profile of another MAJOR version by column names


def formats() -> tuple[str, ...]:
    """The readers' format names (``--input-format``)."""
    from nki_studio.profile.readers.detect import FORMATS

    return tuple(FORMATS)


def load(path: str | Path, options: LoadOptions | None = None) -> ProfileReport:
    """Read, measure and map the profile at ``path``. Raises ``ProfileError`` (one line) for a profile too
    large for the memory available, an unreadable profile or trace, or a number out of range."""
    from nki_studio.estimate.roofline import flops_from_trace
    from nki_studio.profile.analyze import analyze
    from nki_studio.profile.metrics import MetricOptions
    from nki_studio.profile.model import ProfileError as ReaderError
    from nki_studio.profile.readers.detect import available_memory, memory_estimate, memory_refusal
    from nki_studio.profile.roofline import RooflineOptions

    opts = options or LoadOptions()
    refusal = memory_refusal(memory_estimate(path, opts.fmt), available_memory())
    if refusal:
        raise ProfileError(refusal)
    try:
        trace = flops_from_trace(opts.trace) if opts.trace else None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ProfileError(f"simulator trace {opts.trace}: not readable ({exc})") from exc
    peak = {} if opts.vector_peak_tflops is None else {"vector_peak_tflops": opts.vector_peak_tflops}
    roofline = RooflineOptions(dma_ceiling_gbps=opts.dma_ceiling_gbps, generation=opts.generation, **peak)
    try:
        return analyze(
            path,
            fmt=opts.fmt,
            roots=opts.roots,
            mappings=opts.mappings,
            explicit=opts.explicit,
            options=MetricOptions(execution=opts.execution, roofline=roofline),
            trace=trace,
            ignore_schema_version=opts.ignore_schema_version,
        )
    except ReaderError as exc:
        raise ProfileError(str(exc)) from exc
    except OverflowError as exc:  # the readers locate what they check; this is any number they do not
        raise ProfileError(f"{path}: a number in the profile is out of range ({exc})") from exc


def payloads(report: ProfileReport, uri_of: Callable[[str], str]) -> list[HeatmapParams]:
    """One ``nki/heatmap`` payload per mapped file (``uri_of``: a local path's document URI). Raises
    ``ProfileError`` when a payload fails its invariants."""
    from nki_studio.profile.model import ProfileError as ReaderError

    try:
        return report.payloads(uri_of)
    except ReaderError as exc:
        raise ProfileError(str(exc)) from exc


def estimate_summary(estimate: Estimate) -> EstimatedKernel:
    """A simulation's estimated timeline summarised under a profile's kernel keys (``KernelMetrics.to_dict``),
    so an estimate and a measured profile are viewed and compared alike."""
    from nki_studio.estimate.section import kernel_summary

    return kernel_summary(estimate, "")


def snapshot_name() -> str:
    """The name of the kernel-source snapshot stored with a profile."""
    from nki_studio.profile.line_align import SNAPSHOT_NAME

    return SNAPSHOT_NAME


def snapshot(profile: str | Path) -> dict[str, SourceText]:
    """The kernel sources stored with a profile (path -> text; none: lines are matched by number)."""
    from nki_studio.profile.line_align import read_snapshot

    return read_snapshot(profile)


def source_text(path: str | Path | None = None, *, text: str | None = None) -> SourceText:
    """A kernel version for line matching: the file at ``path``, or ``text`` (unsaved). Raises OSError,
    UnicodeDecodeError for an unreadable file."""
    from nki_studio.profile.line_align import SourceText

    if text is not None:
        return SourceText.of(text)
    assert path is not None, "source_text needs a path or a text"
    return SourceText.read(path)


def compare(a: ProfileReport, b: ProfileReport, *sources: Mapping[str, SourceText]) -> Comparison:
    """Two analysed profiles: bounds side by side, per-line deltas (lines followed across the edit when both
    texts, ``sources`` of A then of B, are known), the findings that appeared or went away."""
    from nki_studio.profile.bounds_text import compare as compare_reports

    return compare_reports(a, b, *sources)


def compare_lines(
    times_a: Mapping[str, Mapping[int, int]],
    times_b: Mapping[str, Mapping[int, int]],
    sources_a: Mapping[str, SourceText],
    sources_b: Mapping[str, SourceText],
    only: tuple[str, str] | None,
) -> LineComparison:
    """Per-line busy-time deltas of two views (file -> line -> ns), each line followed across the edit when
    both texts are known (``profile.line_align``)."""
    from nki_studio.profile.line_align import compare_lines as compare_times

    return compare_times(times_a, times_b, sources_a, sources_b, only)
