"""The official backend: the Neuron SDK's ``nki.simulate`` (simulator.md §1-§3), used when importable.

The SDK cannot be installed in this project's environments; tests exercise this path with a test double
package that follows the documented API (``nki.simulate(kernel)(*arrays)``, ``kernel[lnc]``, the
``NEURON_PLATFORM_TARGET_OVERRIDE`` / ``NKI_PRECISE_FP`` environment variables).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from nki_studio.model.targets import Target
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.fresh_source import FreshSourceLoader, fresh_sources
from nki_studio.sim.launch import find_kernel


def _real_nki() -> Any | None:
    mod = sys.modules.get("nki")
    if mod is not None:
        # Our drop-in may be active: never mistake it for the SDK.
        return None if mod.__name__ == "nki_studio.sim.nki_module" else mod
    if importlib.util.find_spec("nki") is None:
        return None
    try:
        return importlib.import_module("nki")
    except Exception:  # a broken SDK install counts as unavailable
        return None


def available() -> bool:
    """True when a real ``nki`` package with ``simulate`` is importable."""
    mod = _real_nki()
    return mod is not None and callable(getattr(mod, "simulate", None))


@contextmanager
def _environment(target: Target, precise: bool) -> Iterator[None]:
    changes = {
        "NEURON_PLATFORM_TARGET_OVERRIDE": target.generation.value,
        "NKI_PRECISE_FP": "1" if precise else "0",
    }
    saved = {k: os.environ.get(k) for k in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def load_module(path: str) -> Any:
    """Execute a kernel file against the real SDK (plain import machinery, no aliasing)."""
    name = "nki_studio_official_kernel"
    spec = importlib.util.spec_from_file_location(name, path, loader=FreshSourceLoader(name, path))
    if spec is None or spec.loader is None:
        raise SimulationError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    with fresh_sources():
        spec.loader.exec_module(module)
    return module


def run(
    kernel_or_path: object,
    args: tuple[Any, ...],
    *,
    kernel_name: str | None,
    target: Target,
    precise: bool,
    lnc: int | None,
    kernel_kwargs: dict[str, Any],
) -> Any:
    """Run through the SDK's ``nki.simulate`` and return its outputs unchanged."""
    nki = _real_nki()
    if nki is None or not callable(getattr(nki, "simulate", None)):
        raise SimulationError(
            "backend 'official' requested but the Neuron SDK's nki.simulate is not importable"
        )
    kernel: Any = kernel_or_path
    if isinstance(kernel_or_path, str):
        kernel = find_kernel(load_module(kernel_or_path), kernel_name, kernel_or_path)
    if lnc and lnc > 1:
        kernel = kernel[lnc]
    with _environment(target, precise):
        return nki.simulate(kernel)(*args, **kernel_kwargs)
