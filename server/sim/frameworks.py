"""Framework tensors at the kernel boundary: torch tensors and JAX arrays in, the same kind out.

A kernel launched on torch tensors or JAX arrays (``nki.jit``, the legacy ``nki_jit``/``baremetal`` ..., as a
PyTorch or JAX script calls it) runs on NumPy copies of them; what it returns comes back as the first such
argument's type, dtype kept (bfloat16 and the float8 types through their ml_dtypes bit patterns) and on that
argument's device, and an argument tensor the kernel wrote is written back (torch; JAX arrays are immutable, so
a JAX kernel returns its outputs). On the SDK such calls run on the Neuron device, torch's XLA device
(``torch_xla``) or JAX's Neuron backend; here the XLA device stands in as the CPU (``sim.xla``).

A bridge is chosen by the top-level module of the value's type, so torch and jax are never imported here: a
value of theirs exists only once its library is loaded. The ``Bridge`` protocol is what a framework needs to
provide, which lets the tests check the boundary with an array type of their own (torch and jax are not
dependencies of nki-studio); the real bridges are checked by tests that skip without torch/jax and by the corpus
benchmark's PyTorch and JAX scripts (``benchmarks/legacy_sim_corpus.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import ml_dtypes
import numpy as np


class Bridge(Protocol):
    """One framework's tensors to and from NumPy."""

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is a tensor of the framework (not a dtype, device ... of its module)."""

    def to_numpy(self, value: Any) -> np.ndarray:
        """The tensor's values on the host, with its dtype."""

    def from_numpy(self, array: np.ndarray, like: Any) -> Any:
        """``array`` as a tensor of the framework, with its dtype, where ``like`` lives."""

    def write_back(self, target: Any, array: np.ndarray) -> None:
        """Store ``array`` (the kernel's writes) into the argument ``target``."""


# The integer type carrying a 2- or 1-byte ml_dtypes value's bit pattern (a name torch and NumPy share).
_CARRIERS = {2: "int16", 1: "uint8"}


def _ml_dtype(name: str) -> np.dtype[Any] | None:
    """The ml_dtypes type called ``name`` (bfloat16, float8_e4m3fn ...), None for NumPy's own types."""
    kind = getattr(ml_dtypes, name, None)
    return np.dtype(kind) if kind is not None and not hasattr(np, name) else None


class _Torch:
    """torch tensors: bfloat16/float8 travel as their bit patterns (NumPy has no such types, ml_dtypes does)."""

    def accepts(self, value: object) -> bool:
        torch = sys.modules.get("torch")
        return torch is not None and isinstance(value, torch.Tensor)

    def to_numpy(self, value: Any) -> np.ndarray:
        torch = sys.modules["torch"]
        tensor = value.detach().cpu().contiguous()
        special = _ml_dtype(str(tensor.dtype).removeprefix("torch."))
        if special is None:
            return np.asarray(tensor.numpy())
        carrier = getattr(torch, _CARRIERS[special.itemsize])
        return np.asarray(tensor.view(carrier).numpy()).view(special)

    def from_numpy(self, array: np.ndarray, like: Any) -> Any:
        torch = sys.modules["torch"]
        array = np.ascontiguousarray(array)
        if _ml_dtype(array.dtype.name) is None:
            tensor = torch.from_numpy(array)
        else:
            bits = array.view(_CARRIERS[array.dtype.itemsize]).copy()
            tensor = torch.from_numpy(bits).view(getattr(torch, array.dtype.name))
        return tensor.to(like.device)

    def write_back(self, target: Any, array: np.ndarray) -> None:
        target.copy_(self.from_numpy(array.reshape(tuple(target.shape)), target))


class _Jax:
    """JAX arrays: NumPy views them directly (JAX's bfloat16/float8 are the ml_dtypes types)."""

    def accepts(self, value: object) -> bool:
        jax = sys.modules.get("jax")
        return jax is not None and isinstance(value, jax.Array)

    def to_numpy(self, value: Any) -> np.ndarray:
        return np.asarray(value)

    def from_numpy(self, array: np.ndarray, like: Any) -> Any:
        jax = sys.modules["jax"]
        return jax.device_put(array, next(iter(like.devices())))

    def write_back(self, target: Any, array: np.ndarray) -> None:
        """Nothing: a JAX array cannot change, so a write to an argument stays in the simulation."""


# By the top-level module of the tensor's type (JAX arrays' type lives in jaxlib).
BRIDGES: dict[str, Bridge] = {"torch": _Torch(), "jax": _Jax(), "jaxlib": _Jax()}


@dataclass(frozen=True)
class Converted:
    """A framework tensor passed to a kernel: its NumPy values, and the way back to its framework."""

    array: np.ndarray
    back: Callable[[np.ndarray], Any]  # a result array as a tensor like the argument
    write_back: Callable[[np.ndarray], None]  # the kernel's writes to the argument, into it


def converted(value: object) -> Converted | None:
    """``value`` as NumPy when it is a framework tensor (None for anything else, NumPy arrays included)."""
    bridge = BRIDGES.get(type(value).__module__.split(".")[0])
    if bridge is None or not bridge.accepts(value):
        return None
    return Converted(
        bridge.to_numpy(value),
        lambda array: bridge.from_numpy(array, value),
        lambda array: bridge.write_back(value, array),
    )
