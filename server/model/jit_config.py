"""The NKI 0.7 per-kernel configuration of ``@nki.jit`` (``nki.compiler``), declared once for the linter and the
simulator: option names and their documented types (nki-0.7.md §2.8, [JIT]/[CFG]: the v2.33.1 ``nki.compiler``
page and its ``_modules`` source), and the LNC degrees ``nki.jit`` documents.
"""

from __future__ import annotations

# option -> documented type ("bool", or the name of the nki.compiler enum it takes)
COMPILE_CONFIG_OPTIONS: dict[str, str] = {
    "address_rotation": "AddressRotation",
    "non_ssa_legalization": "bool",
    "dead_code_elim": "bool",
    "barrier_check": "bool",
    "prefetch_auto": "bool",
    "nki_alloc_fallback": "bool",
}
SPECIALIZATION_CONFIG_OPTIONS: dict[str, str] = {"allow_nested_config_override": "bool"}
CONFIG_CLASSES: dict[str, dict[str, str]] = {
    "CompileConfig": COMPILE_CONFIG_OPTIONS,
    "SpecializationConfig": SPECIALIZATION_CONFIG_OPTIONS,
}
# which nki.jit keyword takes which class
JIT_CONFIG_KEYWORDS: dict[str, str] = {
    "compile_config": "CompileConfig",
    "specialization_config": "SpecializationConfig",
}
# ``prefetch_auto`` and a manual prefetch ring are mutually exclusive ([CFG])
PREFETCH_RING_VARIABLE = "NKI_PREFETCH_RING_SIZE"
# [JIT] (2.33.1): "set NEURON_LOGICAL_NC_CONFIG to 1 or 2"; the bracket launch takes the same degrees
LNC_VARIABLE = "NEURON_LOGICAL_NC_CONFIG"
LNC_DEGREES = (1, 2)

__all__ = [
    "COMPILE_CONFIG_OPTIONS",
    "CONFIG_CLASSES",
    "JIT_CONFIG_KEYWORDS",
    "LNC_DEGREES",
    "LNC_VARIABLE",
    "PREFETCH_RING_VARIABLE",
    "SPECIALIZATION_CONFIG_OPTIONS",
]
