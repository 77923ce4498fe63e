"""The ``calibrate`` tool: ``service.calibration.calibrate`` on profiles and a kernel inside the roots."""

from __future__ import annotations

from typing import Any

from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.workspace import Workspace
from nki_studio.service import calibration
from nki_studio.service.calibration import CalibrateOptions
from nki_studio.service.profiles import LoadOptions
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import Refused


def calibrate(ws: Workspace, settings: Settings, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Fit and store the calibration; the answer is the service's result, its text the summary lines."""
    profiles = [
        str(ws.resolve(p, kind="any", argument=f"profiles[{i}]")) for i, p in enumerate(args["profiles"])
    ]
    kernel = args.get("kernel")
    if kernel:
        path, _, name = str(kernel).partition("::")
        kernel = (
            f"{ws.resolve(path, argument='kernel')}::{name}"
            if name
            else str(ws.resolve(path, argument="kernel"))
        )
    try:
        result = calibration.calibrate(
            profiles,
            settings,
            CalibrateOptions(
                kernel=kernel, target=args.get("target"), load=LoadOptions(roots=list(ws.roots))
            ),
        )
    except Refused as exc:
        raise ToolFailure("refused", str(exc)) from exc
    return dict(result), "\n".join(calibration.text(result))
