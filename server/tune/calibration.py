"""The calibration a tune result depends on, as one opaque key for the cache.

Today that is the residual table of the likely range (``estimate.likely_range``: its ``source`` names the suite
and the model commit it was measured against) and the estimate's constants (``estimate.constants.TABLE``),
which change while the version number does not. When a user calibration overlay
exists, this is the one function to extend: every cached outcome keyed by the old key is then simply not
found (the estimate changed), never wrong.
"""

from __future__ import annotations

import hashlib

from nki_studio.estimate.constants import TABLE
from nki_studio.estimate.likely_range import load_residuals


def calibration_key() -> str:
    """A short hash of the calibration the estimate uses now."""
    text = load_residuals().source + "\n" + repr(sorted(TABLE.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
