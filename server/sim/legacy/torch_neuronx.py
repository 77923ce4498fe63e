"""``torch_neuronx`` as legacy kernels and their scripts import it: ``from torch_neuronx import nki_jit`` [v2.26.1
nki.trace: ``nki_jit`` was the PyTorch integration's name for it; deprecations.md C], and ``torch_neuronx.trace``,
which compiles a PyTorch function for Neuron [v2.28.1 torch_neuronx.trace] (the rotary tutorial's reference)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nki_studio.sim.legacy.entry import trace as nki_jit


def trace(
    func: Callable[..., Any], example_inputs: object, *_: object, **options: object
) -> Callable[..., Any]:
    """``torch_neuronx.trace(func, example_inputs, ...)``: ``func`` itself, which torch runs eagerly on the host
    (the drop-in's XLA device is the CPU, ``sim.xla``); compiler options are ignored."""
    return func


__all__ = ["nki_jit", "trace"]
