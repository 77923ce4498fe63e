"""The texts and JSON the command line prints of results and profiles: a simulation's report and exit
code, a profile's kernel summary, annotated listing, bounds, investigations and comparison. Each renderer
lives with what it renders (``verify.report``, ``profile.report_text``, ``profile.bounds_text``); the profile
ones pull NumPy, so each is imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nki_studio.profile.analyze import ProfileReport
    from nki_studio.protocol.analysis import BoundsJson, InvestigationJson
    from nki_studio.protocol.outputs import ProfileReportJson
    from nki_studio.protocol.profile import Comparison
    from nki_studio.protocol.simulation import Estimate, OracleMetric


def simulation_text(result: Mapping[str, Any]) -> str:
    """A simulation result as the CLI's readable report."""
    from nki_studio.verify.report import format_text

    return format_text(result)


def estimate_range_text(estimate: Estimate) -> str:
    """An estimate's time with its likely range in words: "≈ 170 µs, likely 140–210 µs; calibrated on N
    public measurements (...)", or that its generation has no calibration."""
    from nki_studio.verify.report import range_text

    return range_text(estimate)


def simulation_exit_code(result: Mapping[str, Any]) -> int:
    """0 when the kernel ran and the oracle passed, else 1."""
    from nki_studio.verify.report import exit_code

    return exit_code(result)


def kernel_text(report: ProfileReport) -> list[str]:
    """A profile's kernel summary."""
    from nki_studio.profile.report_text import kernel_text as text

    return text(report)


def listing_text(report: ProfileReport, metric: str = "busy", color: bool = False) -> list[str]:
    """Each mapped source file with a heat bar per line (``metric``: busy, instr, wait or dma)."""
    from nki_studio.profile.report_text import listing_text as text

    return text(report, metric, color)


def report_json(report: ProfileReport) -> ProfileReportJson:
    """A profile's summary, files and lines as JSON."""
    from nki_studio.profile.report_text import report_json as as_json

    return as_json(report)


def bounds_text(bounds: BoundsJson | None) -> list[str]:
    """The bound families, gaps and speedups as a table."""
    from nki_studio.profile.bounds_text import bounds_text as text

    return text(bounds)


def investigations_text(
    provenance: str, investigations: Sequence[InvestigationJson], local: Callable[[str], str | None]
) -> list[str]:
    """Each investigation with its findings as ``file:line: CODE message`` (``local``: the workspace file of a
    recorded path, None when it maps to none)."""
    from nki_studio.profile.bounds_text import investigations_text as text

    return text(provenance, investigations, local)


def compare_text(comparison: Comparison, top: int = 15) -> list[str]:
    """A comparison (``service.profiles.compare``) as a table."""
    from nki_studio.profile.bounds_text import compare_text as text

    return text(comparison, top)


def metric_text(metric: OracleMetric) -> str:
    """``allclose 3 (needs 0 mismatches of ...)``: an oracle metric's value, then the threshold it was held to."""
    from nki_studio.verify.oracle import describe

    return describe(metric)
