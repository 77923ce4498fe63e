"""The top-level ``nki`` module seen by kernels run in the embedded simulator (installed by ``dropin``).

``nki.jit``, ``nki.simulate(kernel)(*arrays)``, ``kernel[lnc]``; submodules ``nki.language``, ``nki.isa``,
``nki.collectives``, ``nki.compiler``. Removed legacy entry points (``baremetal``, ``benchmark``, ``profile``) raise with
their replacement, as the SDK does since 2.27/2.28; ``simulate_kernel`` (legacy) still runs the kernel.
"""

from __future__ import annotations

import importlib
from typing import Any

from nki_studio.sim.errors import MissingName, SimulationError
from nki_studio.sim.launch import JitKernel, LaunchedKernel, jit, jit_options, run_kernel, unwrap
from nki_studio.sim.lnc_config import configured_lnc
from nki_studio.sim.nki_compiler import surfaces_allocation_oom

__all__ = ["JitKernel", "LaunchedKernel", "jit", "simulate", "simulate_kernel"]

_SUBMODULES = {
    "language": "nki_studio.sim.language",
    "isa": "nki_studio.sim.isa",
    "collectives": "nki_studio.sim.collectives",
    "compiler": "nki_studio.sim.nki_compiler",
    "dtype": "nki_studio.sim.nki_dtype",
    "typing": "nki_studio.sim.nki_typing",  # legacy neuronxcc.nki.typing
}
_REMOVED = {
    "baremetal": "removed from nki; use nki.simulate or run on a Neuron device",
    "benchmark": "removed from nki; profile with Neuron Explorer",
    "profile": "removed from nki; profile with Neuron Explorer",
}


def simulate(kernel: object) -> Any:
    """``nki.simulate(kernel)``: a callable running the kernel on NumPy (or torch) arguments."""
    func, lnc = unwrap(kernel)

    def run(*args: Any, **kwargs: Any) -> Any:
        from nki_studio.sim.dropin import default_options

        degree = lnc or configured_lnc()  # the bracket, else NEURON_LOGICAL_NC_CONFIG (NKI 0.7)
        opts = default_options(degree or 1, func)
        opts.program_order_capacity = surfaces_allocation_oom(jit_options(kernel))
        return run_kernel(func, args, kwargs, opts, grid=degree is not None).output

    return run


def simulate_kernel(kernel: object, *args: Any, **kwargs: Any) -> Any:
    """Legacy ``neuronxcc.nki.simulate_kernel(kernel, *args)``."""
    return simulate(kernel)(*args, **kwargs)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name])
    if name in _REMOVED:
        raise SimulationError(f"nki.{name}: {_REMOVED[name]}")
    if name.startswith("__"):
        raise AttributeError(name)
    raise MissingName(f"nki.{name}", "not a documented nki name")
