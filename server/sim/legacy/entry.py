"""The legacy top-level ``neuronxcc.nki`` module: ``jit``, ``baremetal``, ``benchmark``, ``profile``, ``trace``,
``simulate_kernel`` as the simulator's own entry points.

On the SDK these compiled the kernel and ran it on a device (``baremetal``), measured it (``benchmark``,
``profile``), traced it for a framework (``trace``, ``jit``) or ran it on the compiler's CPU simulator
(``simulate_kernel``) [v2.26.1 nki.baremetal, nki.benchmark, nki.profile, nki.trace, nki.jit,
nki.simulate_kernel; simulator.md §8]. Here every one of them wraps the kernel for the embedded simulator, so a
test that calls ``baremetal(kernel)(*arrays)`` or ``simulate_kernel(kernel[grid], *arrays)`` runs it. A
``benchmark`` kernel's ``benchmark_result`` reports no latency (nothing ran on a device): reading a percentile
raises, naming the estimate the simulator offers instead.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from nki_studio.sim.errors import MissingName, SimulationError
from nki_studio.sim.launch import JitKernel
from nki_studio.sim.legacy.spmd import GridLaunch, LegacyKernel

_SUBMODULES = {
    "language": "nki_studio.sim.legacy.language",
    "isa": "nki_studio.sim.legacy.isa",
    "compiler": "nki_studio.sim.legacy.compiler",
    "typing": "nki_studio.sim.nki_typing",
}


def _kernel(fn: object, options: dict[str, Any]) -> LegacyKernel:
    if isinstance(fn, LegacyKernel):
        return fn
    if isinstance(fn, JitKernel):
        return LegacyKernel(fn.func, **{**fn.options, **options})
    if not callable(fn):
        raise SimulationError(f"not a kernel: {fn!r}")
    return LegacyKernel(fn, **options)


def _decorator(fn: Callable[..., Any] | None, options: dict[str, Any]) -> Any:
    if fn is None:
        return lambda f: _kernel(f, options)
    return _kernel(fn, options)


def jit(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``@nki.jit`` / ``@nki.jit(mode=..., platform_target=...)``: a legacy kernel (options recorded)."""
    return _decorator(fn, options)


def trace(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``@nki.trace``: the framework-tracing decorator; simulated like ``jit``."""
    return _decorator(fn, options)


def baremetal(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``@nki.baremetal(save_neff_name=..., ...)``: run on NumPy arrays; here, in the simulator."""
    return _decorator(fn, options)


class _NoDeviceLatency:
    """``benchmark_result.nc_latency`` of a simulated run: there is no device latency to report."""

    def get_latency_percentile(self, percentile: int) -> float:
        raise SimulationError(
            f"nki.benchmark latency (p{percentile}) needs a Neuron device; the simulator gives an estimate "
            "instead (nki-studio estimate, or Profile on Remote Trn2)"
        )


class _BenchmarkResult:
    nc_latency = _NoDeviceLatency()


def benchmark(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``@nki.benchmark(warmup=, iters=, ...)``: runs the kernel once in the simulator (no device latency)."""

    def wrap(f: Callable[..., Any]) -> LegacyKernel:
        kernel = _kernel(f, options)
        kernel.benchmark_result = _BenchmarkResult()  # type: ignore[attr-defined]
        return kernel

    return wrap if fn is None else wrap(fn)


profile = benchmark  # ``@nki.profile(working_directory=...)``: same wrapper, no profile files are written


def simulate_kernel(kernel: object, *args: Any, **kwargs: Any) -> Any:
    """``nki.simulate_kernel(kernel, *arrays)``: run the kernel (or a launched grid) on NumPy arrays."""
    launch = kernel if isinstance(kernel, GridLaunch) else _kernel(kernel, {})
    return launch(*args, **kwargs)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name])
    if name.startswith("__"):
        raise AttributeError(name)
    raise MissingName(f"nki.{name}", "not a legacy neuronxcc.nki name the simulator knows")


__all__ = ["baremetal", "benchmark", "jit", "profile", "simulate_kernel", "trace"]
