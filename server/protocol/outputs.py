"""What the ``nki-studio`` command line prints with ``--json``, declared once (for scripts and CI).

``nki_studio.protocol.schema`` exports each under ``x-cliOutputs`` in ``protocol.schema.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, TypedDict

from nki_studio.protocol.analysis import AnalysisJson
from nki_studio.protocol.heatmap import HeatmapParams, MeasuredKernel
from nki_studio.protocol.migration import MigrationResult
from nki_studio.protocol.profile import (
    Comparison,
    KernelMetricsJson,
    MappingJson,
    MeasuredVsEstimated,
    ProfileInfo,
)
from nki_studio.protocol.simulation import AnyResult
from nki_studio.protocol.tune import TuneReport


class ProfileReportJson(TypedDict):
    """``profile report --json``: the profile, its kernel object and the payloads the language server would send."""

    profile: ProfileInfo
    kernel: MeasuredKernel
    files: Annotated[list[HeatmapParams], "one nki/heatmap payload per mapped file"]
    mapping: list[MappingJson]


class RemoteReportJson(ProfileReportJson):
    """``profile remote --json``: the report of the downloaded profile and where it was cached."""

    downloaded: str


class ProfileSummaryJson(TypedDict):
    """``profile summary --json``: the profile and its kernel metrics."""

    profile: ProfileInfo
    kernel: KernelMetricsJson


class ProfileAnalysisJson(AnalysisJson):
    """``profile analyze --json``: the profile, its bounds and its investigations."""

    profile: ProfileInfo


@dataclass(frozen=True)
class Output:
    """One ``--json`` output: the command line that prints it and its type."""

    command: str
    type: object


OUTPUTS = (
    Output("nki-studio simulate --json", AnyResult | list[AnyResult]),
    Output("nki-studio profile report --json", ProfileReportJson),
    Output("nki-studio profile summary --json", ProfileSummaryJson),
    Output("nki-studio profile analyze --json", ProfileAnalysisJson),
    Output("nki-studio profile compare --json", Comparison),
    Output("nki-studio profile compare --estimate --json", MeasuredVsEstimated),
    Output("nki-studio profile remote --json", RemoteReportJson),
    Output("nki-studio tune --json", TuneReport),
    Output("nki-studio migrate --json", MigrationResult),
)
