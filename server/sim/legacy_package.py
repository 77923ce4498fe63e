"""The ``neuronxcc`` package as legacy kernels import it: ``from neuronxcc import nki``."""

from nki_studio.sim import nki_module as nki

__all__ = ["nki"]
