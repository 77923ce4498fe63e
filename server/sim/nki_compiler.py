"""``nki.compiler`` for the embedded simulator: the NKI 0.7 per-kernel configuration of ``@nki.jit``
(``compile_config=CompileConfig(...)``, ``specialization_config=SpecializationConfig(...)``; nki-0.7.md §2.8).

The configuration is accepted and recorded. None of the documented options changes the values a kernel
computes: they steer the backend's allocation, scheduling and checking passes, which the simulator does not
run. :func:`ignored_options` says so per option, and the simulation result lists it (``ignoredConfig``).
One is honoured: ``nki_alloc_fallback=False`` makes the SBUF/PSUM program-order peak an error
(:func:`surfaces_allocation_oom`, ``sim/memory.py``).
Sources: ``/en/v2.33.1/nki/api/nki.compiler.html`` and ``/en/v2.33.1/_modules/nki/compiler.html`` (attribute
names, defaults written ``...``); the ``AddressRotation`` members come from the ``latest`` API page.
"""

from __future__ import annotations

import enum
import os
from typing import Any, ClassVar

from nki_studio.model.jit_config import (
    COMPILE_CONFIG_OPTIONS,
    PREFETCH_RING_VARIABLE,
    SPECIALIZATION_CONFIG_OPTIONS,
)
from nki_studio.sim.unimplemented import module_getattr


class AddressRotation(enum.Enum):
    """Whether the backend may rotate a memory location's address for a better layout."""

    AUTO = "auto"
    ENABLE = "enable"
    DISABLE = "disable"


class _Config:
    """Keyword construction over documented attributes; unset ones read as ``...`` (as in the SDK's source)."""

    OPTIONS: ClassVar[dict[str, str]] = {}  # attribute -> why the simulation does not depend on it

    def __init__(self, **options: Any) -> None:
        # Options newer releases document (the ``latest`` pages list more) are kept, not refused: the 0.7 pages
        # do not say the constructor rejects unknown names (*inferred*; reported as "not an NKI 0.7 option").
        self.unknown = {k: v for k, v in options.items() if k not in self.OPTIONS}
        for name in self.OPTIONS:
            setattr(self, name, options.get(name, ...))

    def given(self) -> dict[str, Any]:
        """The documented options the kernel set."""
        return {name: getattr(self, name) for name in self.OPTIONS if getattr(self, name) is not ...}

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.given().items())
        return f"{type(self).__name__}({inner})"


_BACKEND = "a backend pass the simulator does not run; values are unchanged"


class CompileConfig(_Config):
    """Per-kernel compile configuration, ``@nki.jit(compile_config=...)``."""

    address_rotation: Any
    non_ssa_legalization: Any
    dead_code_elim: Any
    barrier_check: Any
    prefetch_auto: Any
    nki_alloc_fallback: Any

    OPTIONS: ClassVar[dict[str, str]] = {
        "address_rotation": "address rotation only moves allocations; the simulator's addresses are symbolic",
        "non_ssa_legalization": _BACKEND,
        "dead_code_elim": _BACKEND + " (every instruction is simulated)",
        "barrier_check": "the LNC barrier checker is a compile pass; the simulator always reports unsynchronised"
        " overlapping writes of LNC cores as warnings",
        "prefetch_auto": "DMA prefetch placement changes timing, not values",
        "nki_alloc_fallback": "honoured: False makes a program-order SBUF/PSUM peak over capacity an error",
    }
    assert set(OPTIONS) == set(COMPILE_CONFIG_OPTIONS)  # the names are declared in model.jit_config


class SpecializationConfig(_Config):
    """Per-kernel specialization configuration, ``@nki.jit(specialization_config=...)``."""

    allow_nested_config_override: Any

    OPTIONS: ClassVar[dict[str, str]] = {
        "allow_nested_config_override": "nested @nki.jit kernels always run inlined in the simulator",
    }
    assert set(OPTIONS) == set(SPECIALIZATION_CONFIG_OPTIONS)


#: Options the simulation honours (never listed as ignored).
HONOURED = frozenset({"nki_alloc_fallback"})


def surfaces_allocation_oom(jit_options: dict[str, Any]) -> bool:
    """True when the kernel sets ``CompileConfig(nki_alloc_fallback=False)``: NKI's program-order allocation
    then reports SBUF/PSUM OOM instead of falling back to neuronx-cc's (nki-0.7.md §2.8)."""
    config = jit_options.get("compile_config")
    return isinstance(config, CompileConfig) and config.nki_alloc_fallback is False


def _show(value: object) -> str:
    return f"{type(value).__name__}.{value.name}" if isinstance(value, enum.Enum) else repr(value)


def ignored_options(jit_options: dict[str, Any]) -> list[str]:
    """One line per configuration option a kernel set that the simulation does not honour, with the reason
    (plus a line when ``prefetch_auto`` meets a manual ``NKI_PREFETCH_RING_SIZE``: mutually exclusive)."""
    notes: list[str] = []
    for key in ("compile_config", "specialization_config"):
        config = jit_options.get(key)
        if config is None:
            continue
        if not isinstance(config, _Config):
            notes.append(f"{key}={config!r}: not an nki.compiler config object; ignored")
            continue
        for name, value in config.given().items():
            if name in HONOURED:
                continue
            notes.append(f"{type(config).__name__}.{name}={_show(value)}: ignored ({config.OPTIONS[name]})")
        for name, value in config.unknown.items():
            notes.append(f"{type(config).__name__}.{name}={_show(value)}: not an NKI 0.7 option; ignored")
        ring = os.environ.get(PREFETCH_RING_VARIABLE)
        if isinstance(config, CompileConfig) and config.prefetch_auto is True and ring:
            notes.append(
                f"CompileConfig.prefetch_auto=True with NKI_PREFETCH_RING_SIZE={ring}: the API page calls them "
                "mutually exclusive (the compiler may reject this kernel)"
            )
    return notes


__getattr__ = module_getattr("nki.compiler", {}, "not an NKI 0.7 nki.compiler name")

__all__ = ["AddressRotation", "CompileConfig", "SpecializationConfig"]
