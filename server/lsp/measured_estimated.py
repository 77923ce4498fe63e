"""The language server's pairing of a loaded profile with the estimates of the same documents: the profile
feature says what it loaded, the simulate feature what it estimated, and each heat payload either sends
carries ``measured_vs_estimated`` when both exist (the kernel panel shows it). The comparison is the
service's (``service.measured_estimated.of_profile``); this only remembers the two sides."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nki_studio.lsp.uris import ByUri, canonical
from nki_studio.service import measured_estimated

if TYPE_CHECKING:
    from nki_studio.protocol.heatmap import HeatmapParams
    from nki_studio.protocol.profile import MeasuredVsEstimated
    from nki_studio.protocol.simulation import Estimate
    from nki_studio.service.profiles import ProfileReport

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Estimated:
    path: str
    kernel: str
    estimate: Estimate
    text: str  # the document as simulated


class MeasuredAndEstimated:
    """The loaded (measured) profile and, per document, its last estimate. Event loop only."""

    def __init__(self) -> None:
        self._measured: tuple[ProfileReport, str, set[str]] | None = None
        self._estimates: ByUri[_Estimated] = ByUri()

    def measured(
        self, report: ProfileReport | None, profile: str = "", uris: list[str] | None = None
    ) -> None:
        """The profile just loaded from ``profile``, painted on documents ``uris`` (None: cleared). A profile
        that is itself an estimate is not a measurement to compare with."""
        real = report is not None and report.profile.provenance != "estimated"
        self._measured = (report, profile, {canonical(u) for u in uris or ()}) if real and report else None

    def estimated(self, uri: str, path: str, kernel: str, estimate: Estimate, text: str) -> None:
        """The last estimate of a kernel of document ``uri`` (simulated from ``text``)."""
        self._estimates[uri] = _Estimated(path, kernel, estimate, text)

    def comparison(self, uri: str) -> MeasuredVsEstimated | None:
        """Measured vs estimated for document ``uri`` when the profile maps to it and it has an estimate."""
        got = self._estimates.get(uri)
        if self._measured is None or got is None:
            return None
        report, profile, painted = self._measured
        if canonical(uri) not in painted:
            return None  # the profile is of another file: no ratio to draw
        return measured_estimated.of_profile(report, profile, got.estimate, got.path, got.kernel, got.text)

    def attach(self, payload: HeatmapParams) -> HeatmapParams:
        """``payload`` with the comparison of its document, when there is one."""
        both = self.comparison(payload["uri"])
        return payload if both is None else {**payload, "measured_vs_estimated": both}
