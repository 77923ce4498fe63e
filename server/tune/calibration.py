"""The calibration a tune result depends on, as one opaque key for the cache.

The residual table of the likely range (``estimate.likely_range``: its ``source`` names the suite and the model
commit it was measured against), the estimate's constants (``estimate.constants.TABLE``), which change while the
version number does not, and the user's calibration the job prices with (``service.calibration_file``). A
changed calibration leaves every outcome keyed by the old key simply not found (the estimate changed), never
wrong.
"""

from __future__ import annotations

import hashlib
import json

from nki_studio.estimate.constants import TABLE
from nki_studio.estimate.likely_range import load_residuals
from nki_studio.protocol.calibration import CalibrationTable


def calibration_key(user: CalibrationTable | None = None) -> str:
    """A short hash of the calibration the estimate uses now (``user``: the user's calibration table, if any)."""
    text = (
        load_residuals().source + "\n" + repr(sorted(TABLE.items())) + "\n" + json.dumps(user, sort_keys=True)
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
