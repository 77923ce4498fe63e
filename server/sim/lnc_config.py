"""The LNC degree a launch is configured with, and the compiler's LNC validation (``NCC_EVRF066``).

NKI 0.7 (nki.jit page, v2.33.1): ``NEURON_LOGICAL_NC_CONFIG`` (1 or 2) sets a kernel's LNC degree; the
``kernel[k]`` bracket still works but "is being deprecated". The compiler rejects a kernel whose degree differs
from neuronx-cc's ``--lnc`` (error page ``compiler/error-codes/EVRF066``; neuronx-cc takes
``NEURON_LOGICAL_NC_CONFIG`` unless ``NEURON_CC_FLAGS`` overrides ``--lnc``). The simulator runs the kernel's
degree and reports the mismatch as a warning in the compiler's words: a standalone simulation has no graph, so
refusing would be stricter than ``nki.simulate``.
"""

from __future__ import annotations

import os
import re

from nki_studio.sim.errors import SimulationError

_LNC_FLAG = re.compile(r"--lnc(?:=|\s+)(\S+)")


def _degree(text: str, source: str) -> int:
    if text.strip() not in ("1", "2"):
        raise SimulationError(f"{source}={text!r}: the LNC degree must be 1 or 2")
    return int(text)


def configured_lnc() -> int | None:
    """``NEURON_LOGICAL_NC_CONFIG``, or None when unset."""
    value = os.environ.get("NEURON_LOGICAL_NC_CONFIG", "").strip()
    return _degree(value, "NEURON_LOGICAL_NC_CONFIG") if value else None


def compiler_lnc() -> int | None:
    """The degree neuronx-cc would use: ``--lnc`` in ``NEURON_CC_FLAGS``, else ``NEURON_LOGICAL_NC_CONFIG``."""
    m = _LNC_FLAG.search(os.environ.get("NEURON_CC_FLAGS", ""))
    return _degree(m.group(1), "NEURON_CC_FLAGS --lnc") if m else configured_lnc()


def lnc_mismatch(kernel: str, kernel_lnc: int) -> str | None:
    """The ``NCC_EVRF066`` message when the kernel's degree differs from the compiler's, else None."""
    compiler = compiler_lnc()
    if compiler is None or compiler == kernel_lnc:
        return None
    return (
        f"NKI kernel '{kernel}' is configured with LNC={kernel_lnc}, but neuronx-cc is using LNC={compiler} "
        "(the compiler rejects this: NCC_EVRF066; set NEURON_LOGICAL_NC_CONFIG to the degree you want and "
        "launch without kernel[...], which is being deprecated)"
    )
