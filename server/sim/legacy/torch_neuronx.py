"""``torch_neuronx`` as legacy kernels import it: ``from torch_neuronx import nki_jit`` [v2.26.1
nki.trace: ``nki_jit`` was the PyTorch integration's name for it; deprecations.md C]."""

from __future__ import annotations

from nki_studio.sim.legacy.entry import trace as nki_jit

__all__ = ["nki_jit"]
