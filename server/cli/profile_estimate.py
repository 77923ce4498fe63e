"""``nki-studio profile compare PROFILE --estimate FILE::KERNEL``: the measured profile against the estimate of
the same kernel (simulated here with its spec): per engine, per line and for the kernel, measured, estimated
and the ratio. The comparison is ``service.measured_estimated``'s; this module reads and runs."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from nki_studio.protocol.simulation import RAN
from nki_studio.service import measured_estimated, simulation
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import Simulator

if TYPE_CHECKING:
    from nki_studio.protocol.profile import MeasuredVsEstimated
    from nki_studio.protocol.simulation import Estimate
    from nki_studio.service.profiles import ProfileReport, SourceText


def _estimate(target: str, inputs: str | None) -> tuple[Estimate, str, str, str]:
    """Simulate FILE[::KERNEL] with its spec: the result's estimate section, the file, the kernel and its
    text. ValueError (SpecProblem, ConfigError too) says why there is no estimate."""
    path, _, kernel = target.partition("::")
    if not os.path.isfile(path):
        raise ValueError(f"--estimate: no such file: {path}")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    settings = Settings(trusted_workspace=True)  # running the command is the user's trust decision
    prepared = simulation.prepare(
        path, source, settings, kernel=kernel or None, override=simulation.overrides(inputs)
    )
    result = Simulator().run(prepared, settings, warm=False)
    section = result.get("estimate")
    if result["status"] not in RAN or not section:
        raise ValueError(
            f"--estimate: cannot estimate {prepared.spec.kernel}: the simulation did not finish: "
            f"{result['status']}: {result.get('message', '')}"
        )
    return section, path, prepared.spec.kernel, source


def compare(
    args: argparse.Namespace, report: ProfileReport, measured_texts: dict[str, SourceText]
) -> MeasuredVsEstimated:
    """Estimate ``args.estimate`` (with ``args.inputs``) and compare it with the measured ``report``
    (``measured_texts``: ``--text-a`` files, over the profile's snapshot). Raises ValueError (a usage error)
    when no estimate can be made."""
    section, path, kernel, source = _estimate(args.estimate, args.inputs)
    return measured_estimated.of_profile(
        report, args.profile, section, path, kernel, source, local=os.path.relpath, texts=measured_texts
    )
