"""The ``neuronxcc`` package as legacy kernels import it: ``from neuronxcc import nki``."""

from nki_studio.sim.legacy import entry as nki

__all__ = ["nki"]
