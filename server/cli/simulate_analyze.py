"""``nki-studio simulate --analyze``: the bounds and investigations of the simulation's *estimated* profile, as
text.

The worker computes them with the rest of the ``estimate`` section (``estimate.section``), so
``--json`` carries them there whatever the flag; this only renders that section, and every heading says
"estimated".
"""

from __future__ import annotations

from nki_studio.protocol.simulation import SimulationResult
from nki_studio.service.reports import bounds_text, investigations_text


def analysis_text(result: SimulationResult) -> str:
    """The text block printed after the simulation report."""
    estimate = result.get("estimate")
    if not estimate:
        return "Analysis: no instruction trace (the kernel did not run), so there is nothing to estimate."
    return "\n".join(
        [
            "Estimated profile (nki-studio scheduler, not a measurement):",
            *bounds_text(estimate["bounds"]),
            "",
            *investigations_text("estimated", estimate["investigations"], lambda recorded: recorded),
        ]
    )
