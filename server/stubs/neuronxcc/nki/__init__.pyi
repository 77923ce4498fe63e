"""``neuronxcc.nki``: the legacy NKI API (NKI 0.1, "Beta 1", Neuron 2.20-2.26; deprecated by the ``nki`` namespace
of Neuron 2.27, a compile error inside kernels since NKI 0.4).

Stubs written by nki-studio from the Neuron v2.26.1 API pages (``/en/v2.26.1/nki/api/generated/nki.*.html``; the
v2.26.0 pages are the same API) and its reference notes (deprecations.md §D, §E). Conventional imports:
``from neuronxcc import nki``, ``import neuronxcc.nki.language as nl``, ``import neuronxcc.nki.isa as nisa``.
Every entry point here became ``nki.jit`` (or ``nki.simulate``) in the current API: ``nki-studio migrate``
rewrites them.
"""

from collections.abc import Callable
from typing import Any

from . import compiler as compiler
from . import isa as isa
from . import language as language

# The decorators return ``Any``: a legacy kernel is called, launched on a grid (``kernel[2, 2](...)``) and given
# attributes (``benchmark_result``), which a precise type would refuse.

def jit(func: Callable[..., Any] | None = None, mode: str = "auto", **kwargs: Any) -> Any:
    """Compile a kernel for the framework it is called from (PyTorch, JAX) or run it standalone [v2.26.1 nki.jit].

    ``mode=`` chose the runner: ``"auto"`` (from the arguments' type), ``"baremetal"``, ``"benchmark"``,
    ``"simulation"``, ``"jax"``, ``"torchxla"``; ignored since NKI 0.3. ``kernel[a, b](...)`` launches a 2-D SPMD
    grid of programs (``nl.program_id``).
    """

def trace(func: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """The framework-tracing decorator (``torch_neuronx.nki_jit`` is the same) [v2.26.1 nki.trace]."""

def baremetal(kernel: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """Compile and run a kernel on a NeuronDevice with NumPy arrays in and out, no framework [v2.26.1 nki.baremetal].

    Options: ``save_neff_name=``, ``save_trace_name=`` (an execution trace for the profiler),
    ``additional_compile_opt=``, ``artifacts_dir=``.
    """

def benchmark(kernel: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """Compile a kernel, run it ``warmup=`` + ``iters=`` times on a NeuronDevice and keep its latency statistics
    in ``kernel.benchmark_result.nc_latency.get_latency_percentile(p)`` [v2.26.1 nki.benchmark]."""

def profile(func: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """Profile a kernel on a NeuronDevice: NEFF and NTFF in ``working_directory=`` (an absolute path), with
    ``save_neff_name=``, ``save_trace_name=``, ``overwrite=``, ``profile_nth=`` [v2.26.1 nki.profile]."""

def simulate_kernel(kernel: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a kernel (or a launched grid, ``kernel[2, 2]``) on the compiler's CPU simulator with NumPy arrays and
    return its outputs [v2.26.1 nki.simulate_kernel]."""
