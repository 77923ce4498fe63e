"""NKI (Neuron Kernel Interface): write kernels for AWS Trainium NeuronCores in Python.

Stubs written by nki-studio (API of NKI 0.6.0; 0.7.0 changes marked "0.7"). Conventional imports:
``import nki``, ``import nki.language as nl``, ``import nki.isa as nisa``, ``import nki.collectives as ncc``.
"""

from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar

from . import collectives as collectives
from . import compiler as compiler
from . import isa as isa
from . import language as language

# ``nki.dtype`` annotates dtype parameters in real kernels (``dtype: nki.dtype = nl.bfloat16``): any value a
# ``dtype=`` parameter accepts. (A renaming ``from`` import would not be re-exported from a stub.)
dtype: TypeAlias = language.DTypeLike

_F = TypeVar("_F", bound=Callable[..., Any])

def jit(
    fn: _F | None = None, *, compile_config: Any = None, specialization_config: Any = None, **kwargs: Any
) -> _F:
    """Mark a function as an NKI kernel: the compiler specialises it for its argument shapes/dtypes.

    Call it with framework tensors (PyTorch/JAX) or NumPy arrays; ``kernel[2](...)`` launches it on two
    cores (LNC=2; the bracket form is being deprecated in 0.7 — set ``NEURON_LOGICAL_NC_CONFIG`` instead).
    0.6: ``jit(fn=None, **kwargs)``. 0.7 adds ``compile_config=`` (``nki.compiler.CompileConfig``) and
    ``specialization_config=``. Removed since 0.3: ``mode=...`` (ignored) and ``platform_target=`` (error;
    use ``NEURON_PLATFORM_TARGET_OVERRIDE``). Outputs must be allocated in ``nl.shared_hbm`` and returned.
    """

def simulate(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """Return a callable that runs ``kernel`` on the CPU simulator (NumPy/torch in, same type out).

    Experimental since 0.3.0; ``nki.simulate(kernel[2])`` simulates LNC=2. ``NKI_SIMULATOR=1`` routes every
    ``@nki.jit`` call to the simulator instead. Replaces the legacy ``nki.simulate_kernel(kernel, *args)``.
    """
