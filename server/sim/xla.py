"""``torch_xla`` as PyTorch kernel scripts import it (``from torch_xla.core import xla_model as xm``): in the
drop-in, when torch_xla is not installed, the XLA device stands in as the CPU.

On the SDK a script moves its torch tensors to the Neuron device (``xm.xla_device()``), calls an ``nki.jit``
kernel on them (``mode="auto"`` detects the framework from the arguments: ``"torchxla"`` or ``"jax"`` [nki.jit
page]) and cuts the lazy graph with ``xm.mark_step()``. Here the kernel runs on NumPy copies of the tensors
(``sim.frameworks``) and torch computes the script's reference eagerly, so the device is the CPU:
``xla_device()`` is ``torch.device("cpu")`` and ``mark_step()`` has nothing to do. torch is the user's, imported
only when a script asks for the device. Other ``torch_xla`` names fail naming themselves.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from nki_studio.sim.errors import MissingName


def xla_device(n: int | None = None, devkind: str | None = None) -> Any:
    """``xm.xla_device()``: the CPU (the simulator runs kernels on the host)."""
    return importlib.import_module("torch").device("cpu")


def mark_step(wait: bool = False) -> None:
    """``xm.mark_step()``: nothing to cut, torch ran eagerly."""


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise MissingName(f"torch_xla.{name}", "the simulator stands in for xla_device() and mark_step() only")


# One module for the three names scripts import (``torch_xla``, ``torch_xla.core``, ``torch_xla.core.xla_model``).
core = xla_model = sys.modules[__name__]

__all__ = ["mark_step", "xla_device"]
